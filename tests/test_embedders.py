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
