"""Ingest with forked prepare workers (``Ingestor(workers=N)``, issue 12): the same index as the
serial path, the same report, and the same error lines when a document or a worker fails.

Corpus: 14 Markdown files of 1-3 sections each, written here; ``batch_docs=3`` makes 5 batches,
so the workers prepare several batches ahead while the parent writes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

from citewise.answer.units import ANSWER_UNITS
from citewise.ingest import Ingestor
from citewise.models.embedders import HashingEmbedder
from citewise.store.lance import LanceStore
from citewise.text.chunker import Chunker

from conftest import write_doc

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers run on Linux only")

DIM = 64


class _Small(Chunker):
    """Chunks of at most 30 tokens: a section per chunk, so documents have 1-3 chunks."""

    def __init__(self):
        super().__init__(min_tokens=5, max_tokens=30)


def _corpus(root: Path) -> Path:
    for n in range(14):
        sections = "\n\n".join(
            f"## Part {s}\n\nDocument {n} section {s} explains refund rule R-{100 + n} "
            f"and the {['alpha', 'beta', 'gamma'][s]} procedure in detail."
            for s in range(1 + n % 3)
        )
        write_doc(root, f"d{n:02d}.md", f"Doc {n}", sections, permissions=["staff"] if n % 4 == 0 else ["public"])
    return root


def _rows(store: LanceStore) -> pa.Table:
    tbl = store._scan_table(store._table, None).sort_by("chunk_id")
    return tbl.drop_columns(["indexed_at"])


class _Spy(Ingestor):
    """Records, per written batch, whether a worker prepared it."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.from_worker: list[bool] = []
        self.commits: list[int] = []  # batches per commit
        self.slow_first_commit = False

    def _write(self, group, known, report, progress):
        self.from_worker.extend(prepared.by_worker for _, prepared in group)
        self.commits.append(len(group))
        super()._write(group, known, report, progress)
        if self.slow_first_commit and len(self.commits) == 1:
            time.sleep(1.0)  # the workers get ahead: the next commits take every batch that is ready


def _ingest(tmp: Path, corpus: Path, workers: int, embedder=None, chunker=None, units=ANSWER_UNITS):
    store = LanceStore(tmp, DIM)
    ing = _Spy(
        store, embedder or HashingEmbedder(DIM), chunker=chunker or _Small(), batch_docs=3, units=units, workers=workers
    )
    report = ing.ingest_folder(corpus)
    return store, ing, report


def test_workers_store_what_the_serial_path_stores(tmp_path):
    corpus = _corpus(tmp_path / "docs")
    serial, s_ing, s_rep = _ingest(tmp_path / "serial", corpus, workers=0)
    par, p_ing, p_rep = _ingest(tmp_path / "par", corpus, workers=2)
    assert s_ing.from_worker == [False] * 5
    assert p_ing.from_worker == [True] * 5
    a, b = _rows(serial), _rows(par)
    assert a.num_rows == b.num_rows == 68  # 14 documents of 1-3 sections, 30-token chunks
    assert a.equals(b)
    assert (
        (s_rep.added, s_rep.chunks_embedded, s_rep.units_embedded, s_rep.errors)
        == (p_rep.added, p_rep.chunks_embedded, p_rep.units_embedded, p_rep.errors)
        == (14, 68, s_rep.units_embedded, [])
    )
    assert s_rep.units_embedded == 54  # answer units embedded with the chunks, in the same calls
    # the lexical text a worker computed is the analyzer's: BM25 finds the same chunks
    for q in (["r-105"], ["gamma", "procedur"]):
        assert [h.chunk_id for h in serial.lexical_search(q, 5)] == [h.chunk_id for h in par.lexical_search(q, 5)]
    assert [h.chunk_id for h in par.lexical_search(["r-105"], 5)][0].startswith("d05")


def test_reingest_with_workers_reuses_unchanged_documents(tmp_path):
    corpus = _corpus(tmp_path / "docs")
    store, _, _ = _ingest(tmp_path / "idx", corpus, workers=2)
    write_doc(corpus, "d03.md", "Doc 3", "## Part 0\n\nRewritten: refunds take ten days now.", permissions=["public"])
    ing = _Spy(store, HashingEmbedder(DIM), batch_docs=3, units=ANSWER_UNITS, workers=2)
    report = ing.ingest_folder(corpus)
    assert (report.updated, report.unchanged, report.chunks_embedded) == (1, 13, 1)
    assert ing.from_worker == [False]  # one batch to write: no pool
    assert [h.chunk_id for h in store.lexical_search(["ten", "day"], 1)][0].startswith("d03")


class _FailingChunker(_Small):
    def chunk(self, doc_id, title, text):
        if doc_id == "d07":
            raise ValueError("hostile table")
        return super().chunk(doc_id, title, text)


class _FailingEmbedder(HashingEmbedder):
    cpu_parallel = True

    def embed(self, texts):
        if any("Document 10 " in t for t in texts):
            raise RuntimeError("model server said no")
        return super().embed(texts)


def test_document_and_embedding_failures_in_a_worker_read_as_in_the_serial_path(tmp_path):
    corpus = _corpus(tmp_path / "docs")
    out = {}
    for workers in (0, 2):
        store, ing, rep = _ingest(
            tmp_path / f"w{workers}", corpus, workers, embedder=_FailingEmbedder(DIM), chunker=_FailingChunker()
        )
        out[workers] = (rep.errors, rep.added, _rows(store))
        assert ing.from_worker == [bool(workers)] * 5
    assert out[0][0] == out[2][0]
    assert len(out[2][0]) == 1 + 3  # d07 unchunkable; d09-d11 share the batch whose embedding failed
    assert "d07.md: could not be chunked (ValueError: hostile table); previous version kept" in out[2][0][0]
    assert "embedding failed (RuntimeError: model server said no); previous version kept" in out[2][0][1]
    assert out[0][1] == out[2][1] == 10
    assert out[0][2].equals(out[2][2])


class _DyingEmbedder(HashingEmbedder):
    """Kills the worker process that embeds document 4 (never the parent)."""

    cpu_parallel = True

    def __init__(self, dim, parent):
        super().__init__(dim)
        self.parent = parent

    def embed(self, texts):
        if os.getpid() != self.parent and any("Document 4 " in t for t in texts):
            os._exit(3)
        return super().embed(texts)


def test_a_killed_worker_leaves_its_batches_to_the_parent(tmp_path):
    corpus = _corpus(tmp_path / "docs")
    serial, _, s_rep = _ingest(tmp_path / "serial", corpus, workers=0)
    store, ing, rep = _ingest(tmp_path / "par", corpus, workers=2, embedder=_DyingEmbedder(DIM, os.getpid()))
    assert rep.errors == [] and rep.added == 14
    # batch 2 (d03-d05) is redone here; the broken pool may take batch 1 with it when its result
    # was not collected yet (then the parent redoes that one too), so only batch 2 is certain
    assert ing.from_worker[1] is False
    assert _rows(serial).equals(_rows(store))


WORKERS_OF_KILLED_PARENT = r"""
import sys, time
from citewise.ingest import Ingestor
from citewise.models.embedders import HashingEmbedder
from citewise.store.lance import LanceStore

class Slow(HashingEmbedder):
    cpu_parallel = True
    def embed(self, texts):
        time.sleep(0.5)
        return super().embed(texts)

print("go", flush=True)
Ingestor(LanceStore(sys.argv[1], 64), Slow(64), batch_docs=1, workers=2).ingest_folder(sys.argv[2])
"""


def test_killing_the_ingest_kills_its_workers(tmp_path):
    corpus = _corpus(tmp_path / "docs")
    proc = subprocess.Popen(
        [sys.executable, "-c", WORKERS_OF_KILLED_PARENT, str(tmp_path / "idx"), str(corpus)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "go"
    deadline = time.monotonic() + 60
    children: list[int] = []
    while time.monotonic() < deadline and len(children) < 2:
        children = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
        time.sleep(0.05)
    assert len(children) >= 2, "the ingest started no workers"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    for _ in range(100):
        alive = [
            c for c in children if Path(f"/proc/{c}").exists() and Path(f"/proc/{c}/stat").read_text().split()[2] != "Z"
        ]
        if not alive:
            break
        time.sleep(0.05)
    assert alive == []


LOCK_HELD_AT_FORK = r"""
import os, sys
from citewise.ingest import Ingestor
from citewise.models.embedders import HashingEmbedder
from citewise.store.lance import LanceStore
from citewise.text.chunker import Chunker

embedder = HashingEmbedder(64)
embedder._lock.acquire()  # held "by another thread" for the whole ingest
parent = os.getpid()
ing = Ingestor(LanceStore(sys.argv[1], 64), embedder, chunker=Chunker(min_tokens=5, max_tokens=30), batch_docs=3,
               workers=2)
prepare = ing._prepare

def prepare_in_workers_only(batch, in_worker=False):
    if os.getpid() == parent:
        raise AssertionError("a batch was prepared in the parent")  # it would wait on the lock
    return prepare(batch, in_worker)

ing._prepare = prepare_in_workers_only
report = ing.ingest_folder(sys.argv[2])
print(report.added, len(report.errors))
"""


def test_a_lock_held_by_another_thread_at_the_fork_does_not_hang_the_workers(tmp_path):
    """A service thread embedding a query holds the embedder's memo lock while the ingest forks:
    the workers' copies of that lock would stay locked for ever without ``after_fork``."""
    corpus = _corpus(tmp_path / "docs")
    done = subprocess.run(
        [sys.executable, "-c", LOCK_HELD_AT_FORK, str(tmp_path / "idx"), str(corpus)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["14", "0"]


def test_ready_batches_share_a_commit_up_to_commit_rows(tmp_path, monkeypatch):
    from citewise import ingest

    corpus = _corpus(tmp_path / "docs")
    serial, s_ing, _ = _ingest(tmp_path / "serial", corpus, workers=0)
    assert s_ing.commits == [1] * 5
    store = LanceStore(tmp_path / "grouped", DIM)
    ing = _Spy(store, HashingEmbedder(DIM), chunker=_Small(), batch_docs=3, units=ANSWER_UNITS, workers=2)
    ing.slow_first_commit = True
    report = ing.ingest_folder(corpus)
    assert len(ing.commits) < 5 and sum(ing.commits) == 5  # 68 rows < COMMIT_ROWS: ready batches grouped
    assert report.added == 14 and report.errors == []
    assert _rows(serial).equals(_rows(store))
    monkeypatch.setattr(ingest.write, "COMMIT_ROWS", 1)  # every batch holds a row: one commit each
    store = LanceStore(tmp_path / "one-each", DIM)
    ing = _Spy(store, HashingEmbedder(DIM), chunker=_Small(), batch_docs=3, units=ANSWER_UNITS, workers=2)
    ing.slow_first_commit = True
    ing.ingest_folder(corpus)
    assert ing.commits == [1] * 5
    assert _rows(serial).equals(_rows(store))


CTRL_C_WHILE_WORKERS_START = r"""
import sys
import concurrent.futures.process as cfp
from citewise.ingest import Ingestor
from citewise.models.embedders import HashingEmbedder
from citewise.store.lance import LanceStore

def start_then_interrupt(self):
    # Ctrl-C right after the workers were forked, before the pool's manager thread ran
    if self._executor_manager_thread is None:
        self._launch_processes()
        raise KeyboardInterrupt

cfp.ProcessPoolExecutor._start_executor_manager_thread = start_then_interrupt
try:
    Ingestor(LanceStore(sys.argv[1], 64), HashingEmbedder(64), batch_docs=3, workers=2).ingest_folder(sys.argv[2])
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_ctrl_c_while_the_workers_start_leaves_no_worker_and_exits(tmp_path):
    """A fresh-clone trial's Ctrl-C sometimes hung the ingest for ever: the interrupt landed while
    the pool started its workers, nothing told them to stop, and Python's exit waited for them."""
    corpus = _corpus(tmp_path / "docs")
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C_WHILE_WORKERS_START, str(tmp_path / "idx"), str(corpus)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "interrupted"
