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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim and /proc are Linux (glibc) only")
def test_freed_heap_pages_go_back_to_the_system():
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
