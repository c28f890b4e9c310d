"""Learned fusion: nDCG@10 on pools, the fitters, the cross-validated decision against RRF (both the
store and the refuse path), the tuned retriever's permissions and the ``tune`` command."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from citewise.core import CitewiseError, Principal
from citewise.evaluation.tuning import cross_validate
from citewise.retrieval.fusion_learned import (
    FEATURES,
    FusionModel,
    Labeled,
    Pool,
    TunedRetriever,
    fit_linear,
    label_pool,
    model_path,
    ndcg10,
)

J = {f: i for i, f in enumerate(FEATURES)}


def pool(ids, docs, X=None):
    X = np.zeros((len(ids), len(FEATURES))) if X is None else X
    return Pool(list(ids), list(docs), [""] * len(ids), X)


def test_ndcg10_counts_each_document_once_and_uses_all_qrels_for_the_ideal():
    p = pool(["a#1", "a#2", "b#1"], ["a", "a", "b"])
    q = label_pool(p, {"a": 1, "b": 2, "c": 1})
    # ranking a#2 > a#1 > b#1: documents a (gain 1) at rank 1, b (gain 2) at rank 2
    dcg = 1 / math.log2(2) + 2 / math.log2(3)
    idcg = 2 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg10(np.array([0.5, 0.9, 0.1]), q) == pytest.approx(dcg / idcg)
    # ties break by chunk id: a#1 before a#2 (same doc anyway), then b
    assert ndcg10(np.zeros(3), q) == pytest.approx(dcg / idcg)
    assert ndcg10(np.array([0.0, 0.0, 1.0]), q) == pytest.approx((2 + 1 / math.log2(3)) / idcg)
    assert ndcg10(np.zeros(3), label_pool(p, {})) == 0.0


def synthetic(n_queries=60, n_cands=20, signal=True, seed=0) -> list[Labeled]:
    """Queries whose one relevant candidate has title_terms 1 (others: 1 with prob 0.2) and a
    random RRF score; with ``signal=False`` the relevant one is drawn independently of features."""
    rng = np.random.default_rng(seed)
    out = []
    for q in range(n_queries):
        X = rng.random((n_cands, len(FEATURES)))
        X[:, J["title_terms"]] = (rng.random(n_cands) < 0.2).astype(float)
        rel = int(rng.integers(n_cands))
        if signal:
            X[rel, J["title_terms"]] = 1.0
        ids = [f"d{q}-{i}#c" for i in range(n_cands)]
        out.append(label_pool(pool(ids, [i.split("#")[0] for i in ids], X), {ids[rel].split("#")[0]: 1}))
    return out


def test_a_model_that_beats_rrf_significantly_is_stored():
    data = synthetic()
    rep = cross_validate(data, "linear", folds=5, permutations=2000)
    assert rep.stored and rep.p < 0.05 and rep.tuned_mean > rep.rrf_mean + 0.1, rep.reason
    w = dict(zip(FEATURES, rep.model.weights))
    assert w["title_terms"] == max(w.values())  # it found the feature that carries the signal
    assert rep.to_dict()["stored"] is True and "p = " in rep.reason


def test_a_model_that_does_not_beat_rrf_is_refused():
    rep = cross_validate(synthetic(signal=False), "linear", folds=5, permutations=2000)
    assert not rep.stored and rep.model is None
    assert "RRF" in rep.reason and rep.p >= 0.05 or rep.tuned_mean <= rep.rrf_mean


def test_lambdamart_path():
    pytest.importorskip("lightgbm", reason="lightgbm not installed (optional: the 'tune' extra)")
    rep = cross_validate(synthetic(), "lambdamart", folds=3, permutations=2000)
    assert rep.stored and rep.tuned_mean > rep.rrf_mean
    scores = rep.model.score(synthetic(n_queries=1, seed=5)[0].pool.X)
    assert scores.shape == (20,)
    again = FusionModel(**json.loads(json.dumps(rep.model.to_dict())))
    np.testing.assert_allclose(again.score(synthetic(n_queries=1, seed=5)[0].pool.X), scores)


def test_cross_validation_needs_enough_queries():
    with pytest.raises(CitewiseError, match="at least 2 folds and one query per fold"):
        cross_validate(synthetic(n_queries=3), folds=5)


def test_linear_fit_starts_from_rrf():
    # no signal anywhere and one query: nothing improves, the weights stay RRF's
    data = synthetic(n_queries=1, signal=False, seed=3)
    data[0].labels[:] = 0
    m = fit_linear(data)
    assert m.weights == [1.0 if f == "rrf" else 0.0 for f in FEATURES]


def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(CitewiseError, match="run 'citewise tune --golden SET' first"):
        FusionModel.load(tmp_path / "fusion.json")


def test_tuned_retriever_leaks_nothing_and_keeps_top_k_full(sample_index):
    from test_permissions import ADVERSARIAL, K, _group

    # a model that favours title matches strongly (restricted titles match these queries well)
    w = [0.0] * len(FEATURES)
    w[J["rrf"]], w[J["title_terms"]], w[J["body_terms"]] = 1.0, 2.0, 1.0
    model = FusionModel("linear", [0.0] * len(FEATURES), [1.0] * len(FEATURES), w)
    r = TunedRetriever(sample_index.store, sample_index.embedder, model=model)
    for groups in [(), ("support",)]:
        for q in ADVERSARIAL:
            hits = r.search(q, K, principal=Principal("p", groups))
            assert len(hits) == K and [h.rank for h in hits] == list(range(1, K + 1)), q
            assert [h.doc_id for h in hits if _group(h.doc_id) and _group(h.doc_id) not in groups] == [], q


def test_tune_cli_refuses_and_stores_nothing_when_rrf_is_not_beaten(tmp_path):
    from typer.testing import CliRunner

    from citewise.cli import app

    from conftest import topic_index_and_golden

    idx, golden = topic_index_and_golden(tmp_path)
    res = CliRunner().invoke(app, ["tune", "--golden", str(golden), "--index", str(idx.path), "--folds", "2", "--json"])
    # every query is already answered at rank 1 by RRF: nothing to beat, nothing stored
    assert res.exit_code == 1, res.output
    data = json.loads(res.output)
    assert data["stored"] is False and data["rrf_ndcg@10"] == 1.0 and data["path"] is None
    assert not model_path(idx.store).exists()
    res = CliRunner().invoke(app, ["tune", "--golden", str(golden), "--index", str(idx.path), "--model", "boost"])
    assert "unknown model 'boost' (valid: linear, lambdamart, convex)" in str(res.exception)
