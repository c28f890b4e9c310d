"""Crash safety: SIGKILL an ingest subprocess at random points; every document must stay whole.

Setup: a corpus of 12 documents indexed at version 1 (the template index). Every file is then
rewritten to version 2 with other text and another number of sections, so the re-ingest changes
every document and every chunk set. Each of 20 runs (fixed seed) copies the template index,
starts ``ingest`` in a child process with one document per commit, waits until it reports that
it opened the index, kills it with SIGKILL after a random delay within the measured ingest time, and checks:

* every document's rows all carry one content hash and version, and its chunk ids are exactly
  the old or exactly the new chunking (never a mix, never zero chunks);
* every stored row's answer-unit vectors belong to that row's text (key, spans and count);
* the index still opens and answers lexical and vector searches;
* every 4th run instead kills the first ingest into a new index (table creation and first FTS
  index build): each document is then absent or whole;
* re-running the ingest completes without errors and converges: every document at version 2,
  nothing left out of the lexical index, version-1-only words gone from BM25.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from citewise.answer.units import ANSWER_UNITS
from citewise.core import Filters
from citewise.ingest import Ingestor
from citewise.models.embedders import HashingEmbedder
from citewise.store.lance import LanceStore
from citewise.text.chunker import Chunker
from citewise.text.loaders import load_folder

from conftest import write_doc

N_DOCS = 16
RUNS = int(os.environ.get("CITEWISE_CRASH_RUNS", "12"))  # raise for a longer soak
SEED = int(os.environ.get("CITEWISE_CRASH_SEED", "20260412"))
DIM = 256

#: A small fork server: imports LanceDB, the tokenizer and the embedder once, then for each
#: request line "INDEX<TAB>CORPUS" forks a child that opens the index, prints "go PID" and
#: ingests with one document per commit; the server prints "exit STATUS" when the child ends.
#: The server itself never opens a database, so forking it is safe.
SERVER = r"""
import os, sys, traceback
from citewise.answer.units import ANSWER_UNITS
from citewise.ingest import Ingestor
from citewise.models.embedders import HashingEmbedder
from citewise.store.lance import LanceStore
from citewise.text.tokens import count_tokens
import lancedb, lancedb.index, lancedb.query  # imported (not used) before forking
count_tokens("warm the encoding before forking")
print("ready", flush=True)
for line in sys.stdin:
    index, corpus = line.rstrip("\n").split("\t")
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            store = LanceStore(index, 256)
            # one process, one document per commit: the kill delays are drawn from a measured
            # run, and with forked prepare workers the commits bunched up under load, so too few
            # kills landed mid-ingest (workers never write; tests/test_ingest_parallel.py kills them)
            ingestor = Ingestor(store, HashingEmbedder(256), batch_docs=1, units=ANSWER_UNITS, workers=0)
            print("go", os.getpid(), flush=True)
            ingestor.ingest_folder(corpus)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    print("exit", status, flush=True)
"""


class ForkServer:
    """Drives SERVER: ``start(index, corpus)`` returns the child's pid once it has opened the index."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )
        assert self.proc.stdout.readline().strip() == "ready"

    def start(self, index: Path, corpus: Path) -> tuple[int, float]:
        self.proc.stdin.write(f"{index}\t{corpus}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline().split()
        assert line and line[0] == "go", line
        return int(line[1]), time.monotonic()

    def wait(self) -> int:
        line = self.proc.stdout.readline().split()
        assert line and line[0] == "exit", line
        return int(line[1])

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def _section(doc: int, sec: int, version: int) -> str:
    rng = random.Random(doc * 1000 + sec * 10 + version)
    words = [f"v{version}word{rng.randrange(400)}" for _ in range(330)]
    return f"## Part {sec} of {doc}\n" + " ".join(words) + f" marker{version}x{doc}."


def _write_corpus(root: Path, version: int) -> None:
    for d in range(N_DOCS):
        sections = 2 + (d + version) % 3  # v1 and v2 differ in section count, so in chunk ids
        body = "\n\n".join(_section(d, s, version) for s in range(sections))
        write_doc(root, f"doc{d:02d}.md", f"Document {d}", body, version=str(version))


def _expected(root: Path) -> dict[str, set[tuple[str, str, str]]]:
    chunker = Chunker()
    out = {}
    for doc in load_folder(root):
        assert not isinstance(doc, Exception), doc
        out[doc.doc_id] = {
            (c.chunk_id, doc.content_hash, doc.version) for c in chunker.chunk(doc.doc_id, doc.title, doc.text)
        }
    return out


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    base = tmp_path_factory.mktemp("crash")
    corpus = base / "corpus"
    _write_corpus(corpus, 1)
    old = _expected(corpus)
    template = base / "template"
    report = Ingestor(LanceStore(template, DIM), HashingEmbedder(DIM), batch_docs=2, units=ANSWER_UNITS).ingest_folder(
        corpus
    )
    assert report.added == N_DOCS and not report.errors
    _write_corpus(corpus, 2)
    new = _expected(corpus)
    for d in old:  # the premise: every document changes, and so does its chunk set
        assert {c for c, _, _ in old[d]} != {c for c, _, _ in new[d]}
    server = ForkServer()
    # measure an uninterrupted run to choose kill delays
    probe = base / "probe"
    shutil.copytree(template, probe)
    _, t0 = server.start(probe, corpus)
    assert server.wait() == 0
    duration = time.monotonic() - t0
    assert LanceStore(probe, DIM).chunk_versions() == new
    yield base, corpus, template, old, new, duration, server
    server.close()


def _check_units(store: LanceStore, run: int) -> None:
    """Every row carries unit vectors made from its own title and text (same commit as the row)."""
    ids = [c for rows in store.chunk_versions().values() for c, _, _ in rows]
    chunks, units = store.get_chunks(ids), store.get_units(ids)
    assert set(units) == set(chunks), f"run {run}: rows without unit vectors"
    for cid, c in chunks.items():
        want = ANSWER_UNITS.embedding_units(c.title, c.text)
        u = units[cid]
        assert u.key == ANSWER_UNITS.key(c.title, c.text), f"run {run}: {cid} units of another text"
        assert list(u.spans) == [(s, e) for s, e, _ in want] and len(u.vectors) == len(want), f"run {run}: {cid}"


def test_sigkill_at_random_points_never_leaves_a_mixed_document(setup):
    base, corpus, template, old, new, duration, server = setup
    rng = random.Random(SEED)
    outcomes = []
    estimate = duration  # of an uninterrupted ingest; adapted to where the kills land (load varies)
    for run in range(3 * RUNS):
        index = base / f"run{run:02d}"
        first_ingest = run % 4 == 3  # every 4th run kills the very first ingest of a new index
        if not first_ingest:
            shutil.copytree(template, index)
        pid, t0 = server.start(index, corpus)
        delay = rng.uniform(0.0, estimate * 1.1)
        time.sleep(max(0.0, delay - (time.monotonic() - t0)))
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:  # it had already finished
            pass
        server.wait()

        store = LanceStore(index, DIM)
        rows = store.chunk_versions()
        if first_ingest:  # old version = absent
            assert set(rows) <= set(new), f"run {run}: documents invented"
        else:
            assert set(rows) == set(old), f"run {run}: documents lost or invented"
        n_new = 0
        for doc_id, got in rows.items():
            allowed = (new[doc_id],) if first_ingest else (old[doc_id], new[doc_id])
            assert got in allowed, f"run {run}: {doc_id} is a mix of versions: {sorted(got)}"
            n_new += got == new[doc_id]
        outcomes.append(n_new)
        if n_new == N_DOCS:  # the kill came after the ingest finished: aim earlier
            estimate *= 0.8
        elif n_new == 0:  # before the first commit: aim later
            estimate *= 1.25
        # still readable: both searches answer over whole documents
        if len(rows) >= 5:
            assert store.lexical_search(["marker1x0", "marker2x0"], 5)[0].doc_id == "doc00"
            assert (
                len(store.vector_search(HashingEmbedder(DIM).embed(["marker2x3"])[0], 5, Filters(groups=("public",))))
                == 5
            )

        _check_units(store, run)
        report = Ingestor(store, HashingEmbedder(DIM), batch_docs=2, units=ANSWER_UNITS).ingest_folder(corpus)
        changed = report.added if first_ingest else report.updated
        assert not report.errors and changed == N_DOCS - n_new and report.unchanged == n_new
        assert store.chunk_versions() == new
        assert report.units_refreshed == 0
        _check_units(store, run)
        assert store.unindexed_rows() == 0
        assert store.lexical_search(["marker1x5"], 5) == []
        assert [h.doc_id for h in store.lexical_search(["marker2x5"], 5)] == ["doc05"] * len(
            store.lexical_search(["marker2x5"], 5)
        )
        shutil.rmtree(index)
        if run + 1 >= RUNS and sum(0 < n < N_DOCS for n in outcomes) >= RUNS // 4:
            break
    # the kills really landed mid-ingest in a good share of runs (not all before or after)
    partial = sum(0 < n < N_DOCS for n in outcomes)
    assert partial >= RUNS // 4, outcomes
