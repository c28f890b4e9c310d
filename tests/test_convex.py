"""Convex fusion with vector pseudo-relevance feedback (``hybrid-prf``): the formulas by hand, the
retriever against its own parts, the tuned delegate, and ``tune --model convex``'s refusal."""

from __future__ import annotations

import json

import numpy as np
import pytest

from citewise.core import Principal
from citewise.evaluation.tuning import tune_convex
from citewise.retrieval.convex import ConvexRetriever, convex_fusion, feedback_vector, minmax
from citewise.retrieval.fusion_learned import FEATURES, FusionModel, TunedRetriever, model_path
from citewise.store.base import ScoredChunk
from citewise.text.analyzer import analyze


def sc(cid, score, doc=None):
    return ScoredChunk(cid, doc or cid.split("#")[0], "", score)


def test_minmax_by_hand():
    assert minmax([sc("a", 4.0), sc("b", 2.0), sc("c", 3.0), sc("a", 0.0)]) == {"a": 1.0, "b": 0.0, "c": 0.5}
    assert minmax([sc("a", 7.0), sc("b", 7.0)]) == {"a": 1.0, "b": 1.0}
    assert minmax([]) == {}


def test_convex_fusion_by_hand():
    lex = [sc("a", 12.0), sc("b", 8.0), sc("c", 2.0)]  # minmax: a 1, b 0.6, c 0
    vec = [sc("c", 0.8), sc("b", 0.6), sc("d", 0.4)]  # minmax: c 1, b 0.5, d 0
    fused = convex_fusion(lex, vec, alpha=0.3)
    # a: 0.7*1 = 0.7; b: 0.3*0.5 + 0.7*0.6 = 0.57; c: 0.3*1 = 0.3; d: 0
    assert [(c.chunk_id, round(c.score, 6)) for c in fused] == [("a", 0.7), ("b", 0.57), ("c", 0.3), ("d", 0.0)]
    assert [c.chunk_id for c in convex_fusion(lex, vec, alpha=1.0)] == ["c", "b", "a", "d"]  # ties a/d at 0 by id
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\]"):
        convex_fusion(lex, vec, alpha=1.5)


def test_feedback_vector_by_hand():
    q = np.array([3.0, 4.0])  # unit: (0.6, 0.8)
    docs = [np.array([10.0, 0.0]), np.array([0.0, 2.0])]  # unit (1,0), (0,1): mean (0.5, 0.5)
    assert np.allclose(feedback_vector(q, docs, 0.4), [0.6 + 0.2, 0.8 + 0.2])
    assert np.allclose(feedback_vector(q, [], 0.4), [0.6, 0.8])
    assert np.allclose(feedback_vector(q, docs, 0.0), [0.6, 0.8])


def test_retriever_equals_its_parts(sample_index):
    store, emb = sample_index.store, sample_index.embedder
    q = "how long do refunds take"
    f = __import__("citewise.retrieval.retrievers", fromlist=["effective_filters"]).effective_filters(None, None)
    lex = store.lexical_search(analyze(q), 100, f)
    qv = emb.embed([q])[0]
    first = convex_fusion(lex, store.vector_search(qv, 100, f), 0.5)
    plain = ConvexRetriever(store, emb, prf_chunks=0).search(q, 5)
    assert [h.chunk_id for h in plain] == [c.chunk_id for c in first[:5]]
    top = [c.chunk_id for c in first[:3]]
    vecs = store.get_vectors(top)
    second = convex_fusion(lex, store.vector_search(feedback_vector(qv, [vecs[c] for c in top], 0.5), 100, f), 0.5)
    hits = ConvexRetriever(store, emb).search(q, 5)
    assert [h.chunk_id for h in hits] == [c.chunk_id for c in second[:5]]
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5] and hits[0].doc_id.startswith("help/refunds")
    assert ConvexRetriever(store, emb).search("   ", 5) == []


def test_bad_parameters_are_errors(sample_index):
    with pytest.raises(ValueError, match="prf_chunks and prf_beta must be >= 0"):
        ConvexRetriever(sample_index.store, sample_index.embedder, prf_chunks=-1)


def test_tuned_retriever_delegates_to_a_stored_convex_model(sample_index):
    model = FusionModel("convex", [], [], weights=[0.4, 3, 1.0], features=list(FEATURES))
    assert model.params() == {"alpha": 0.4, "prf_chunks": 3, "prf_beta": 1.0}
    tuned = TunedRetriever(sample_index.store, sample_index.embedder, model=model)
    direct = ConvexRetriever(sample_index.store, sample_index.embedder, alpha=0.4, prf_chunks=3, prf_beta=1.0)
    p = Principal("p", ("support",))
    a = tuned.search("refund approval for enterprise plans", 5, principal=p)
    b = direct.search("refund approval for enterprise plans", 5, principal=p)
    assert [(h.chunk_id, h.score) for h in a] == [(h.chunk_id, h.score) for h in b]
    assert {h.stage for h in a} == {"tuned"}


def test_tune_convex_refuses_when_rrf_is_already_perfect(tmp_path):
    from typer.testing import CliRunner

    from citewise.cli import app

    from conftest import TOPICS as topics, topic_index_and_golden

    idx, golden = topic_index_and_golden(tmp_path)
    rep = tune_convex(
        idx.store,
        idx.embedder,
        {f"q{i}": f"who owns the {t}" for i, t in enumerate(topics)},
        {f"q{i}": {t: 2} for i, t in enumerate(topics)},
        folds=2,
        permutations=200,
    )
    assert rep.kind == "convex" and rep.queries == 10 and rep.rrf_mean == 1.0 and rep.tuned_mean == 1.0
    assert rep.stored is False and rep.model is None and "does not beat RRF" in rep.reason
    res = CliRunner().invoke(
        app, ["tune", "--golden", str(golden), "--index", str(idx.path), "--folds", "2", "--model", "convex", "--json"]
    )
    assert res.exit_code == 1, res.output
    assert json.loads(res.output)["stored"] is False and not model_path(idx.store).exists()
