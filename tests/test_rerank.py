"""Rerankers: the HTTP clients against a local server speaking the TEI and Cohere/Jina wire formats,
an ONNX cross-encoder generated in the test (random weights, checked against numpy), the LLM
reranker against the fake chat server, and the fail-closed wrapper."""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from citewise.core import CitewiseError, Hit, Principal
from citewise.models.chat import ChatConfig, OpenAIChatModel
from citewise.retrieval.rerank import (
    HttpReranker,
    LLMReranker,
    OnnxCrossEncoder,
    RerankError,
    RerankingRetriever,
    make_reranker,
)

from fake_openai import FakeOpenAI


class RerankServer:
    """Answers POST requests with ``handler(path, body) -> (status, json)``; keeps the requests."""

    def __init__(self, handler):
        self.requests: list[tuple[str, dict]] = []
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                outer.requests.append((self.path, body))
                status, payload = handler(self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self):
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *a):
        self._server.shutdown()
        self._server.server_close()


def word_score(text: str) -> float:
    """The fake model: how often 'refund' occurs (so the expected order is known)."""
    return float(text.lower().count("refund"))


def tei_handler(path, body):
    if path != "/rerank":
        return 404, {"error": "no route"}
    # TEI returns results sorted by score, not in input order
    res = [{"index": i, "score": word_score(t)} for i, t in enumerate(body["texts"])]
    return 200, sorted(res, key=lambda r: -r["score"])


def cohere_handler(path, body):
    if path != "/v1/rerank":
        return 404, {"error": "no route"}
    res = [
        {"index": i, "relevance_score": word_score(t), "document": {"text": t}} for i, t in enumerate(body["documents"])
    ]
    return 200, {"id": "x", "results": sorted(res, key=lambda r: -r["relevance_score"])}


PASSAGES = ["Invoices are sent monthly.", "A refund takes 5 days; refund requests go to billing.", "Refund policy."]


def test_tei_client_speaks_the_wire_format():
    with RerankServer(tei_handler) as srv:
        rr = HttpReranker(srv.url, "tei")
        assert rr.rerank("refund?", PASSAGES) == [0.0, 2.0, 1.0]
        path, body = srv.requests[0]
        assert path == "/rerank" and body["query"] == "refund?" and body["texts"] == PASSAGES
        assert body["truncate"] is True


@pytest.mark.parametrize("suffix", ["", "/v1"])
def test_cohere_style_client_speaks_the_wire_format(suffix):
    with RerankServer(cohere_handler) as srv:
        rr = make_reranker(f"cohere:{srv.url}{suffix}#jina-reranker-v2")
        assert rr.rerank("refund?", PASSAGES) == [0.0, 2.0, 1.0]
        path, body = srv.requests[0]
        assert path == "/v1/rerank" and body["model"] == "jina-reranker-v2"
        assert body["documents"] == PASSAGES and body["top_n"] == 3


@pytest.mark.parametrize(
    "status, payload, message",
    [
        (500, {"error": "overloaded"}, "HTTP 500"),
        (200, {"results": [{"index": 0, "relevance_score": 1.0}]}, "2 of 3 passages came back without a score"),
        (200, {"results": [{"index": 7, "relevance_score": 1.0}]}, "out of range"),
        (200, {"results": [{"index": 0}]}, "numeric 'relevance_score'"),
        (200, ["not", "an", "object"], "expected an object"),
    ],
)
def test_bad_answers_raise_rerank_error(status, payload, message):
    with RerankServer(lambda p, b: (status, payload)) as srv:
        with pytest.raises(RerankError, match=message):
            HttpReranker(srv.url, "cohere").rerank("q", PASSAGES)


def test_unknown_specs_list_the_valid_ones():
    with pytest.raises(CitewiseError, match="valid: tei:URL, cohere:URL"):
        make_reranker("bge")
    with pytest.raises(CitewiseError, match="valid: tei, cohere"):
        HttpReranker("http://x", "voyage")


# -- the wrapper --------------------------------------------------------------------------------


class ListRetriever:
    """A base retriever returning fixed hits (ranks 1..n)."""

    name = "fixed"

    def __init__(self, ids):
        self.ids = ids
        self.calls = []

    def search(self, query, k=10, *, principal=None, filters=None):
        self.calls.append((query, k, principal))
        return [Hit(c, c.split("#")[0], 1.0 / r, r, "rrf", c) for r, c in enumerate(self.ids[:k], start=1)]


class TextStore:
    def __init__(self, texts):
        self.texts = texts

    def get_chunks(self, ids):
        from citewise.store.base import StoredChunk

        return {
            c: StoredChunk(
                c, c.split("#")[0], "", "", "", "", ("public",), (), self.texts[c], 0, 1, 1, None, None, None
            )
            for c in ids
            if c in self.texts
        }


def test_reranking_retriever_reorders_the_top_depth_and_keeps_the_tail():
    ids = ["a#1", "b#1", "c#1", "d#1"]
    texts = {"a#1": "invoices", "b#1": "refund refund", "c#1": "refund", "d#1": "refund refund refund"}
    with RerankServer(tei_handler) as srv:
        base = ListRetriever(ids)
        r = RerankingRetriever(base, HttpReranker(srv.url), TextStore(texts), depth=3)
        hits = r.search("refund", k=4, principal=Principal("p", ("x",)))
    # top 3 reranked (b: 2, c: 1, a: 0), d stays 4th although it would score 3
    assert [h.chunk_id for h in hits] == ["b#1", "c#1", "a#1", "d#1"]
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    assert [h.stage for h in hits] == ["rerank", "rerank", "rerank", "rrf"]
    assert base.calls == [("refund", 4, Principal("p", ("x",)))]  # the principal reaches the base


def test_reranker_failure_fails_closed_to_the_base_order(caplog):
    ids = ["a#1", "b#1", "c#1"]
    texts = {c: "refund" for c in ids}
    with RerankServer(lambda p, b: (503, {"error": "down"})) as srv:
        r = RerankingRetriever(ListRetriever(ids), HttpReranker(srv.url), TextStore(texts), depth=3)
        with caplog.at_level(logging.WARNING, logger="citewise.rerank"):
            hits = r.search("refund", k=2)
    assert [h.chunk_id for h in hits] == ["a#1", "b#1"] and [h.stage for h in hits] == ["rrf", "rrf"]
    assert "HTTP 503" in r.last_error
    assert any(
        "reranker failed, keeping the fixed order" in rec.message and "HTTP 503" in rec.message
        for rec in caplog.records
    )
    # connection refused (nothing listens on the closed server's port) fails closed too
    r2 = RerankingRetriever(ListRetriever(ids), HttpReranker(srv.url, timeout=2), TextStore(texts), depth=3)
    assert [h.chunk_id for h in r2.search("refund", k=3)] == ids and "ConnectError" in r2.last_error


# -- ONNX cross-encoder -------------------------------------------------------------------------

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "refund", "invoice", "days", "policy", "the", "a", "takes", "5"]


def make_cross_encoder(folder, seed: int = 7):
    """A tokenizer.json (word-level, BERT pair template) and a model.onnx whose logit is
    ``sum_t mask_t * (W[id_t] + T[type_t])`` with random W (vocab x 1) and T (2 x 1)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tok.save(str(folder / "tokenizer.json"))
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(len(VOCAB), 1)).astype(np.float32)
    T = rng.normal(size=(2, 1)).astype(np.float32)
    nodes = [
        helper.make_node("Gather", ["W", "input_ids"], ["e"]),
        helper.make_node("Gather", ["T", "token_type_ids"], ["t"]),
        helper.make_node("Add", ["e", "t"], ["et"]),
        helper.make_node("Squeeze", ["et", "axis2"], ["s"]),
        helper.make_node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["s", "m"], ["sm"]),
        helper.make_node("ReduceSum", ["sm", "axis1"], ["logits"], keepdims=1),
    ]
    ints = lambda name: helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "seq"])  # noqa: E731
    graph = helper.make_graph(
        nodes,
        "tiny-cross-encoder",
        [ints("input_ids"), ints("attention_mask"), ints("token_type_ids")],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[
            numpy_helper.from_array(W, "W"),
            numpy_helper.from_array(T, "T"),
            numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    return W[:, 0], T[:, 0]


def test_onnx_cross_encoder_matches_a_numpy_forward_pass(tmp_path):
    W, T = make_cross_encoder(tmp_path)
    ce = make_reranker(f"onnx:{tmp_path}")
    assert isinstance(ce, OnnxCrossEncoder)
    query = "refund policy"
    passages = ["the refund takes 5 days", "a invoice", "refund refund refund", "unknown words only"]
    got = ce.rerank(query, passages)

    def expected(p):
        q_ids = [VOCAB.index(w) if w in VOCAB else 1 for w in query.split()]
        p_ids = [VOCAB.index(w) if w in VOCAB else 1 for w in p.split()]
        ids = [2] + q_ids + [3] + p_ids + [3]
        types = [0] * (len(q_ids) + 2) + [1] * (len(p_ids) + 1)
        return float(sum(W[i] + T[t] for i, t in zip(ids, types)))

    # padding within the batch (passages of different lengths) must not change a score
    assert got == pytest.approx([expected(p) for p in passages], abs=1e-5)
    ce.batch_size = 1
    assert ce.rerank(query, passages) == pytest.approx(got, abs=1e-5)


def test_onnx_folder_errors_are_clear(tmp_path):
    with pytest.raises(RerankError, match="missing tokenizer.json, model.onnx"):
        OnnxCrossEncoder(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{}")
    (tmp_path / "model.onnx").write_bytes(b"not a model")
    with pytest.raises(RerankError, match="cannot load the cross-encoder"):
        OnnxCrossEncoder(tmp_path)


# -- LLM reranker -------------------------------------------------------------------------------


def test_llm_listwise_reranks_from_a_permutation():
    with FakeOpenAI([{"content": "[3] > [1]"}]) as server:
        rr = LLMReranker(OpenAIChatModel(ChatConfig(server.base_url, "m"), sleep=lambda s: None), "listwise")
        scores = rr.rerank("refund?", ["p1", "p2", "p3"])
        sent = server.requests[0]["messages"][1]["content"]
    # 3 first, then 1, then the unmentioned 2 keeps its place after them
    assert scores == [2.0, 1.0, 3.0]
    assert "[1] <passage>\np1\n</passage>" in sent and "Query: refund?" in sent


def test_llm_pointwise_grades_each_passage():
    with FakeOpenAI(
        lambda body: {
            "content": "8" if "refund" in body["messages"][1]["content"].split("<passage>")[1] else "Grade: 2"
        }
    ) as server:
        rr = LLMReranker(OpenAIChatModel(ChatConfig(server.base_url, "m"), sleep=lambda s: None), "pointwise")
        assert rr.rerank("q", ["a refund", "invoices"]) == [8.0, 2.0]
        assert len(server.requests) == 2


@pytest.mark.parametrize(
    "script, status, message",
    [
        ([{"content": "I cannot rank these."}], 200, "no passage numbers"),
        ([{"content": "x"}], 500, "HTTP 500"),
    ],
)
def test_llm_reranker_errors_are_rerank_errors(script, status, message):
    with FakeOpenAI(script, status=status) as server:
        rr = LLMReranker(OpenAIChatModel(ChatConfig(server.base_url, "m"), sleep=lambda s: None), "listwise")
        with pytest.raises(RerankError, match=message):
            rr.rerank("q", ["a", "b"])


def test_llm_spec_without_endpoint_is_a_clear_error(monkeypatch):
    for var in ("CITEWISE_LLM_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(CitewiseError, match="no LLM endpoint configured"):
        make_reranker("llm")


# -- on a real index: permissions, CLI --------------------------------------------------------


class OverlapReranker:
    """Offline stand-in: scores a passage by the query words it contains (restricted words
    included, so it would surface a leaked chunk if the base let one through)."""

    name = "overlap"

    def rerank(self, query, passages):
        words = set(query.lower().split())
        return [float(sum(w in p.lower() for w in words)) for p in passages]


def test_reranked_search_leaks_nothing_and_keeps_top_k_full(sample_index):
    from test_permissions import ADVERSARIAL, K, _group

    for groups in [(), ("finance",)]:
        for q in ADVERSARIAL:
            hits = sample_index.search(
                q, K, retriever="hybrid", principal=Principal("p", groups), reranker=OverlapReranker(), rerank_depth=20
            )
            assert len(hits) == K, q
            assert [h.chunk_id for h in hits if _group(h.doc_id) and _group(h.doc_id) not in groups] == [], q


def test_cli_search_and_eval_compare_take_a_reranker(sample_index):
    from typer.testing import CliRunner

    from citewise.cli import app
    from citewise.demo import sample_dir

    runner = CliRunner()
    with RerankServer(tei_handler) as srv:
        res = runner.invoke(
            app,
            [
                "search",
                "refund window",
                "--index",
                str(sample_index.path),
                "--k",
                "3",
                "--reranker",
                f"tei:{srv.url}",
                "--rerank-depth",
                "10",
                "--json",
            ],
        )
        assert res.exit_code == 0, res.output
        hits = json.loads(res.output)["hits"]
        assert len(hits) == 3 and {h["stage"] for h in hits} == {"rerank"}
        assert len(srv.requests[0][1]["texts"]) == 10
        res = runner.invoke(
            app,
            [
                "eval",
                "compare",
                str(sample_dir() / "golden.jsonl"),
                "--index",
                str(sample_index.path),
                "--retrievers",
                "hybrid,hybrid+rerank",
                "--reranker",
                f"tei:{srv.url}",
                "--permutations",
                "1000",
                "--json",
            ],
        )
        assert res.exit_code == 0, res.output
        data = json.loads(res.output)
        assert data["arms"] == ["hybrid", "hybrid+rerank"] and "p" in data["deltas"]["hybrid+rerank"]["all"]["ndcg@10"]
    res = runner.invoke(
        app,
        [
            "eval",
            "compare",
            str(sample_dir() / "golden.jsonl"),
            "--index",
            str(sample_index.path),
            "--retrievers",
            "hybrid,hybrid+rerank",
        ],
    )
    assert res.exit_code != 0 and "needs a reranker (--reranker)" in str(res.exception)
