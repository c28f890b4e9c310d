"""Embedders: the real offline MiniLM and the hashing embedder."""

from __future__ import annotations

import numpy as np
import pytest

from citewise.core import CitewiseError
from citewise.models.embedders import HashingEmbedder, make_embedder


def test_minilm_shape_norm_and_meaning(minilm):
    v = minilm.embed(["How do I get my money back?", "Refund policy for customers", "The capital of France is Paris"])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sims = v @ v.T
    assert sims[0, 1] > 0.4 > sims[0, 2]


def test_minilm_is_deterministic_and_order_independent(minilm):
    texts = ["short", "a much longer sentence about invoices and refunds " * 5, "medium length text here"]
    a = minilm.embed(texts)
    b = minilm.embed(texts[::-1])[::-1]
    assert np.allclose(a, b, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


def test_minilm_truncates_long_input(minilm):
    long = "invoice " * 2000
    assert minilm.embed([long]).shape == (1, 384)


def test_hashing_embedder_is_deterministic_and_normalised():
    e = HashingEmbedder(64)
    a = e.embed(["refund the invoice", ""])
    assert np.allclose(a, e.embed(["refund the invoice", ""]))
    assert np.isclose(np.linalg.norm(a[0]), 1.0) and not a[1].any()
    # same analyzed terms -> same vector (plural folding)
    assert np.allclose(e.embed(["refunds invoices"]), e.embed(["refund invoice"]))


def test_make_embedder_names():
    assert make_embedder("hashing").dim == 256
    assert make_embedder("hashing-32").dim == 32
    with pytest.raises(CitewiseError, match="valid: minilm, hashing"):
        make_embedder("bert")


def test_model_checksum_is_verified_once_per_install(tmp_path, monkeypatch):
    import hashlib
    import json

    from citewise.models import embedders

    monkeypatch.setenv("CITEWISE_CACHE", str(tmp_path / "cache"))
    model = tmp_path / "model.onnx"
    model.write_bytes(b"weights v1")
    good = hashlib.sha256(b"weights v1").hexdigest()
    embedders.verify_once(model, good)
    marker = tmp_path / "cache" / "verified" / f"{good}.json"
    assert json.loads(marker.read_text())["size"] == 10

    hashed = []
    real = embedders.hashlib.sha256
    monkeypatch.setattr(embedders.hashlib, "sha256", lambda data: hashed.append(len(data)) or real(data))
    embedders.verify_once(model, good)  # same file: the marker answers, nothing is hashed
    assert hashed == []

    model.write_bytes(b"weights v2, tampered")  # size and mtime change: hashed again, and refused
    with pytest.raises(CitewiseError, match="does not match"):
        embedders.verify_once(model, good)
    assert hashed == [20]
    with pytest.raises(CitewiseError, match="does not match"):  # a failure never writes a marker
        embedders.verify_once(model, good)
    assert hashed == [20, 20]


def test_preload_model_hands_out_the_embedder_it_started(tmp_path, monkeypatch):
    """``citewise search``/``ask`` start the query model from ``index.json`` before importing the
    index module; ``Index.open`` then gets that same embedder from ``make_embedder``. Only the
    MiniLM embedder is preloaded, once; a missing or unreadable ``index.json`` starts nothing."""
    import citewise.models.embedders as E
    from citewise.cli import _preload_model

    monkeypatch.setattr(E, "_PRELOADED", None)
    started = []
    monkeypatch.setattr(E.MiniLMEmbedder, "preload", lambda self: started.append(self))
    E.preload_model("hashing")
    assert started == [] and isinstance(E.make_embedder("hashing"), E.HashingEmbedder)
    _preload_model(tmp_path / "missing")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "index.json").write_text("[1, 2]")
    _preload_model(tmp_path / "bad")
    assert started == []
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / "index.json").write_text('{"embedder": "minilm", "dim": 384}')
    _preload_model(tmp_path / "idx")
    E.preload_model("minilm")
    assert len(started) == 1
    assert E.make_embedder("minilm") is started[0] is E.make_embedder("all-MiniLM-L6-v2-int8")
