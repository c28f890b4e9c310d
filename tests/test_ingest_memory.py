"""Freed memory goes back to the system between ingest stages (issue 37,
:mod:`citewise.ingest.memory`)."""

from __future__ import annotations

import sys

import pytest

from citewise.ingest.memory import release_freed_memory


def _rss_kb() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_without_glibc_nothing_is_released():
    """Off Linux, or on a C library without ``malloc_trim`` (musl), the call is a no-op."""
    from citewise.ingest import memory

    memory._libc.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(sys, "platform", "darwin")
            assert memory._libc() is None and release_freed_memory() is False
    finally:
        memory._libc.cache_clear()


def test_freed_heap_pages_go_back_to_the_system():
    """On this machine's glibc (the CI and development machines are Linux/glibc)."""
    from citewise.ingest import memory

    assert memory._libc() is not None, "no glibc malloc_trim here: this test measures it"
    # 160 MB of 5 KB blocks (malloc, not pymalloc), every 16th kept: the freed runs between the
    # kept blocks hold whole pages, which glibc keeps resident until trimmed
    blocks = [bytes(5000) + i.to_bytes(4, "little") for i in range(32_000)]
    kept = blocks[::16]
    del blocks
    before = _rss_kb()
    released = release_freed_memory()
    after = _rss_kb()
    assert released is True
    assert before - after > 50_000  # > 50 MB of the ~150 MB freed
    assert len(kept) == 2_000


def test_large_commits_trim_before_and_after_their_write(tmp_path, monkeypatch):
    """Every run trims once before its index refresh; a commit trims before and after its write
    only when its chunk text reaches TRIM_MIN_CHARS (a trim costs ~20-30 ms on a large heap)."""
    from citewise.core import Document
    from citewise.ingest import Ingestor
    from citewise.ingest import write as write_mod
    from citewise.models.embedders import HashingEmbedder
    from citewise.store.lance import LanceStore

    calls = []
    monkeypatch.setattr(write_mod, "release_freed_memory", lambda: calls.append(1) or True)

    def run(name: str) -> int:
        calls.clear()
        docs = [
            Document(
                f"{name}{i}",
                f"Doc {i}",
                f"# Doc {i}\n\nrefund window {i} days.",
                f"/s/{name}{i}.md",
                "md",
                content_hash=f"h{i}",
            )
            for i in range(3)
        ]
        store = LanceStore(tmp_path / name, dim=16)
        Ingestor(store, HashingEmbedder(dim=16), batch_docs=2, workers=0).ingest_documents(docs)
        return len(calls)

    assert run("small") == 1  # two commits of a few characters: the refresh's trim only
    monkeypatch.setattr(write_mod, "TRIM_MIN_CHARS", 10)
    assert run("large") == 1 + 2 * 2  # and before and after each of the two commits
