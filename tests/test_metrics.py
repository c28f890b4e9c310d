"""Metrics equal trec_eval (pytrec_eval) per query; hand-computed values; significance tests."""

from __future__ import annotations

import functools
import math
import time

import numpy as np
import pytest
import pytrec_eval

from citewise.core import CitewiseError
from citewise.evaluation.compare import compare
from citewise.evaluation.metrics import Metric, evaluate, ordered, parse_metrics, slice_means, slices_of
from citewise.evaluation.significance import bootstrap_ci, randomization_test
from citewise.evaluation.trec import ranked_run

from conftest import shared_dataset

L3 = math.log2(3)

# our name -> pytrec_eval measure (mrr@k is recip_rank on the run cut at k, handled separately)
PAIRS = {
    "ndcg@10": "ndcg_cut_10",
    "ndcg@5": "ndcg_cut_5",
    "ndcg@100": "ndcg_cut_100",
    "recall@10": "recall_10",
    "recall@100": "recall_100",
    "recall@5": "recall_5",
    "precision@10": "P_10",
    "precision@5": "P_5",
    "map": "map",
    "map@10": "map_cut_10",
    "map@100": "map_cut_100",
    "hit@1": "success_1",
    "hit@10": "success_10",
    "mrr": "recip_rank",
}
MRR_CUTS = (1, 5, 10)


def trec_order(scored: dict[str, float]) -> list[str]:
    """Reference order, written independently of metrics.ordered: trec_eval's qsort comparator
    (score descending, then strcmp of doc ids descending)."""

    def cmp(x, y):
        if x[1] != y[1]:
            return -1 if x[1] > y[1] else 1
        bx, by = x[0].encode(), y[0].encode()
        return (bx < by) - (bx > by)

    return [d for d, _ in sorted(scored.items(), key=functools.cmp_to_key(cmp))]


def assert_equals_trec_eval(qrels, scored_run):
    """Every metric per query equals pytrec_eval within 1e-9; queries it skips score 0 here."""
    ours = evaluate(qrels, scored_run, list(PAIRS) + [f"mrr@{k}" for k in MRR_CUTS] + ["ndcg_exp@10"])
    ev = pytrec_eval.RelevanceEvaluator({q: dict(v) for q, v in qrels.items()}, set(PAIRS.values()))
    ref = ev.evaluate({q: dict(v) for q, v in scored_run.items()})
    for k in MRR_CUTS:
        cut = {q: {d: run[d] for d in trec_order(run)[:k]} for q, run in scored_run.items() if run}
        rr = pytrec_eval.RelevanceEvaluator({q: dict(v) for q, v in qrels.items()}, {"recip_rank"}).evaluate(cut)
        for q, vals in rr.items():
            assert abs(ours.per_query[q][f"mrr@{k}"] - vals["recip_rank"]) <= 1e-9, (q, k)
    assert ref, "pytrec_eval scored nothing: the comparison would be vacuous"
    binary = all(g <= 1 for v in qrels.values() for g in v.values())
    for q, vals in ref.items():
        for ours_name, trec_name in PAIRS.items():
            assert abs(ours.per_query[q][ours_name] - vals[trec_name]) <= 1e-9, (
                q,
                ours_name,
                ours.per_query[q][ours_name],
                vals[trec_name],
            )
        if binary:  # 2^1 - 1 = 1: the exponential variant equals trec_eval's linear nDCG
            assert abs(ours.per_query[q]["ndcg_exp@10"] - vals["ndcg_cut_10"]) <= 1e-9
    for q in set(qrels) - set(ref):
        assert all(v == 0.0 for v in ours.per_query[q].values()), q
    return ours, ref


# ---------------------------------------------------------------- hand-built tricky set
TRICKY_QRELS = {
    "ties": {"a": 1, "b": 2, "c": 0, "z": 1},
    "graded": {"d1": 2, "d2": 1, "d3": 2, "d4": 0, "d5": 1},
    "short": {"s1": 1, "s2": 2, "s3": 1, "s4": 1},  # run shorter than every k
    "missing": {"m1": 2},  # not in the run at all
    "zeros": {"n1": 0, "n2": 0},  # judged, none relevant
    "unjudged": {"u1": 2},  # run has only unjudged docs
}
TRICKY_RUN = {
    "ties": {"a": 1.0, "z": 1.0, "c": 1.0, "b": 0.5, "y": 0.5, "x": 0.25},
    "graded": {f"x{i}": 10.0 - i for i in range(8)} | {"d2": 2.5, "d1": 1.5, "d5": 1.5, "d3": 0.1, "d4": 5.0},
    "short": {"s2": 3.0, "q": 2.0, "s4": 2.0},
    "zeros": {"n1": 2.0, "n2": 1.0, "other": 0.5},
    "unjudged": {"w": 1.0, "v": 1.0},
    "not-in-qrels": {"a": 1.0},
}


def test_tricky_set_equals_trec_eval():
    ours, ref = assert_equals_trec_eval(TRICKY_QRELS, TRICKY_RUN)
    assert set(ref) == {"ties", "graded", "short", "zeros", "unjudged"}
    assert "not-in-qrels" not in ours.per_query
    # spot values computed by hand: ties sort by doc id descending -> z, c, a, then y, b, then x
    assert ordered(TRICKY_RUN["ties"]) == ["z", "c", "a", "y", "b", "x"]
    assert ours.per_query["ties"]["mrr@10"] == 1.0
    assert ours.per_query["short"]["precision@10"] == pytest.approx(2 / 10)
    assert ours.per_query["short"]["recall@100"] == pytest.approx(2 / 4)


def test_duplicates_first_wins_and_equal_trec_eval_on_the_deduplicated_run():
    qrels = {"q": {"a": 1, "b": 2, "c": 1}}
    ranked = ["x", "b", "x", "b", "a", "b", "y"]
    ours = evaluate(qrels, {"q": ranked}, ["recall@10", "ndcg@10", "precision@10", "map"]).per_query["q"]
    dedup = {"x": 5.0, "b": 4.0, "a": 3.0, "y": 2.0}  # first occurrences, in order
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"recall_10", "ndcg_cut_10", "P_10", "map"}).evaluate({"q": dedup})["q"]
    assert ours["recall@10"] == pytest.approx(ref["recall_10"], abs=1e-12) == pytest.approx(2 / 3)
    assert ours["ndcg@10"] == pytest.approx(ref["ndcg_cut_10"], abs=1e-12)
    assert ours["precision@10"] == pytest.approx(0.2)
    assert ours["map"] == pytest.approx(ref["map"], abs=1e-12) == pytest.approx((1 / 2 + 2 / 3) / 3)


def test_duplicates_never_push_recall_or_ndcg_above_one():
    qrels = {"q": {"a": 1, "b": 1}}
    ev = evaluate(qrels, {"q": ["a"] * 20}, ["recall@10", "ndcg@10", "precision@10", "hit@10"]).per_query["q"]
    assert ev == {"recall@10": 0.5, "ndcg@10": pytest.approx(1 / (1 + 1 / L3)), "precision@10": 0.1, "hit@10": 1.0}


def test_swapped_grades_hand_computed():
    qrels = {"q": {"a": 2, "b": 1}}
    ev = evaluate(qrels, {"q": ["b", "a"]}, ["ndcg_exp@10", "ndcg@10", "mrr@10", "map"]).per_query["q"]
    assert ev["ndcg_exp@10"] == pytest.approx((1 + 3 / L3) / (3 + 1 / L3), abs=1e-12)
    assert ev["ndcg@10"] == pytest.approx((1 + 2 / L3) / (2 + 1 / L3), abs=1e-12)
    assert ev["mrr@10"] == 1.0 and ev["map"] == 1.0
    ideal = evaluate(qrels, {"q": ["a", "b"]}, ["ndcg_exp@10", "ndcg@10"]).per_query["q"]
    assert ideal == {"ndcg_exp@10": 1.0, "ndcg@10": 1.0}


def test_mrr_cut_and_ideal_cut_at_k():
    qrels = {"q": {"r": 1, "s": 2, "t": 2}}
    ev = evaluate(qrels, {"q": ["x1", "x2", "r"]}, ["mrr@2", "mrr@3", "ndcg@1", "hit@2", "hit@3"]).per_query["q"]
    assert ev == {"mrr@2": 0.0, "mrr@3": pytest.approx(1 / 3), "ndcg@1": 0.0, "hit@2": 0.0, "hit@3": 1.0}


def test_query_without_hits_scores_zero_but_an_empty_arm_is_an_error():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    ev = evaluate(qrels, {"q1": ["a"], "q2": []}, ["ndcg@10", "recall@10"])
    assert ev.per_query["q2"] == {"ndcg@10": 0.0, "recall@10": 0.0}
    assert ev.means == {"ndcg@10": 0.5, "recall@10": 0.5}
    with pytest.raises(CitewiseError, match="empty arm"):
        evaluate(qrels, {"q1": [], "other": ["a"]}, ["ndcg@10"])
    assert evaluate(qrels, {}, ["ndcg@10"], allow_empty=True).means == {"ndcg@10": 0.0}


def test_metric_names_parse_and_reject():
    assert parse_metrics("NDCG@10, p@5,mrr@10,ndcg@10") == ["ndcg@10", "precision@5", "mrr@10"]
    assert str(Metric.parse("map")) == "map"
    for bad, msg in [
        ("ndcg", "needs a cut-off"),
        ("foo@3", "unknown metric"),
        ("recall@0", ">= 1"),
        ("", "no metrics"),
    ]:
        with pytest.raises(CitewiseError, match=msg):
            parse_metrics(bad)


def test_slices():
    kinds = {"q1": "a", "q2": "b", "q3": "a"}
    slices = slices_of(kinds)
    assert slices == {"all": ["q1", "q2", "q3"], "a": ["q1", "q3"], "b": ["q2"]}
    per_query = {"q1": {"m": 1.0}, "q2": {"m": 0.0}, "q3": {"m": 0.5}}
    assert slice_means(per_query, slices, ["m"]) == {"all": {"m": 0.5}, "a": {"m": 0.75}, "b": {"m": 0.0}}


# ---------------------------------------------------------------- real BEIR runs (BM25 and hybrid RRF)
@pytest.fixture(scope="module", params=["beir-scifact", "beir-nfcorpus"])
def beir_runs(request, tmp_path_factory):
    from citewise.evaluation.beir import BeirDataset, read_queries, run_queries
    from citewise.evaluation.trec import read_qrels
    from citewise.index import Index
    from citewise.retrieval.retrievers import make_retriever

    ds = BeirDataset(shared_dataset(request.param))
    idx = Index.open(tmp_path_factory.mktemp(request.param), embedder="hashing")
    idx.ingestor(units=False).ingest_documents(ds.documents())  # no answer units: retrieval only
    qrels = read_qrels(ds.qrels_path("test"))
    queries = {q: t for q, t in read_queries(ds.root / "queries.jsonl").items() if q in qrels}
    runs = {r: run_queries(make_retriever(r, idx.store, idx.embedder), queries, depth=100) for r in ("bm25", "hybrid")}
    return request.param, qrels, runs


@pytest.mark.slow
@pytest.mark.parametrize("retriever", ["bm25", "hybrid"])
def test_beir_runs_equal_trec_eval(beir_runs, retriever):
    # hybrid (RRF) runs are full of exact score ties: the hard case for tie-breaking
    name, qrels, runs = beir_runs
    ranked = runs[retriever]
    # 1) the raw BM25 scores, ties included (trec_eval breaks them by doc id descending)
    raw = {q: dict(items) for q, items in ranked.items()}
    ours, ref = assert_equals_trec_eval(qrels, raw)
    assert len(ref) == len(qrels) == {"beir-scifact": 300, "beir-nfcorpus": 323}[name]
    # 2) the retriever's own order, written with strictly decreasing scores, scores the same
    #    whether evaluated as a ranked list or as trec_eval reads the run file
    as_list = evaluate(qrels, {q: [d for d, _ in items] for q, items in ranked.items()}, list(PAIRS))
    assert_equals_trec_eval(qrels, ranked_run(ranked))
    via_file = evaluate(qrels, ranked_run(ranked), list(PAIRS))
    for q in qrels:
        for m in PAIRS:
            assert abs(as_list.per_query[q][m] - via_file.per_query[q][m]) <= 1e-12
    assert 0.2 < ours.means["ndcg@10"] < 0.8  # sanity: SciFact ~0.6-0.7, NFCorpus ~0.3


# ---------------------------------------------------------------- significance
def test_randomization_test_hand_checks():
    a = np.zeros(3)
    # 3 differences of +1: of 8 equally likely sign patterns, 2 reach |mean| = 1 -> p = 0.25
    p = randomization_test(a, np.ones(3), permutations=20_000, seed=1)[0]
    assert abs(p - 0.25) < 0.01
    assert randomization_test(a, np.ones(3), seed=7)[0] == randomization_test(a, np.ones(3), seed=7)[0]
    assert randomization_test(np.ones(5), np.ones(5))[0] == 1.0  # no difference at all
    # 30 queries all better by 0.5: no sign pattern but the observed two is as extreme
    assert randomization_test(np.zeros(30), np.full(30, 0.5), permutations=10_000)[0] == pytest.approx(1 / 10_001)
    with pytest.raises(CitewiseError, match="equal shapes"):
        randomization_test(np.zeros(3), np.zeros(4))


def test_bootstrap_ci_hand_checks():
    assert bootstrap_ci(np.full(10, 0.7)).tolist() == [[pytest.approx(0.7), pytest.approx(0.7)]]
    # two values 0 and 1: resampled means are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4
    lo, hi = bootstrap_ci(np.array([0.0, 1.0]), resamples=10_000)[0]
    assert (lo, hi) == (0.0, 1.0)
    x = np.random.default_rng(0).random((50, 2))
    ci = bootstrap_ci(x)
    assert np.all(ci[:, 0] < x.mean(0)) and np.all(x.mean(0) < ci[:, 1])


def test_compare_is_fast_on_300_queries_times_three_arms_and_rejects_an_empty_arm():
    rng = np.random.default_rng(3)
    qrels = {f"q{i}": {f"d{i}": 1, f"e{i}": 2} for i in range(300)}
    docs = lambda i: [f"d{i}", f"e{i}"] + [f"x{j}" for j in range(30)]  # noqa: E731
    runs = {
        arm: {f"q{i}": [(d, 0.0) for d in rng.permutation(docs(i)).tolist()] for i in range(300)}
        for arm in ("bm25", "dense", "hybrid")
    }
    t0 = time.perf_counter()
    c = compare(qrels, runs)
    assert time.perf_counter() - t0 < 10.0
    assert set(c.deltas) == {"dense", "hybrid"} and 0.0 < c.deltas["dense"]["all"]["ndcg@10"]["p"] <= 1.0
    lo, hi = c.ci["bm25"]["all"]["ndcg@10"]
    assert lo < c.means["bm25"]["all"]["ndcg@10"] < hi
    with pytest.raises(CitewiseError, match="arm 'dense'.*empty arm"):
        compare(qrels, {"bm25": runs["bm25"], "dense": {q: [] for q in qrels}})


def test_scores_compare_in_single_precision_like_trec_eval():
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 1.0 + 1e-12, "b": 1.0}}  # a tie in float32 -> doc id descending: b first
    ours = evaluate(qrels, run, ["mrr"]).per_query["q"]["mrr"]
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)["q"]["recip_rank"]
    assert ours == ref == 0.5


def test_written_run_file_reproduces_the_ranked_order_in_trec_eval(tmp_path):
    from citewise.evaluation.trec import read_run, write_run

    ranked = {"q": [("a", 11.257824897766113), ("b", 11.257824897766113), ("c", 11.257824897766113 - 1e-9), ("d", 3.0)]}
    path = tmp_path / "run.trec"
    write_run(path, ranked)
    back = read_run(path)
    assert ordered(back["q"]) == ["a", "b", "c", "d"]
    qrels = {"q": {"a": 1, "b": 1, "c": 2}}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "recip_rank"}).evaluate(back)["q"]
    ours = evaluate(qrels, {"q": ["a", "b", "c", "d"]}, ["ndcg@10", "mrr"]).per_query["q"]
    assert abs(ref["ndcg_cut_10"] - ours["ndcg@10"]) <= 1e-9 and ref["recip_rank"] == ours["mrr"] == 1.0
    assert abs(ours["ndcg@10"] - (1 + 1 / L3 + 2 / 2) / (2 + 1 / L3 + 1 / 2)) <= 1e-12


def test_read_run_report_counts_duplicates_and_identical_ids(tmp_path):
    from citewise.evaluation.trec import read_run, read_run_report

    path = tmp_path / "dup.trec"
    path.write_text(
        "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d1 3 9.0 t\nq1 Q0 d2 4 0.5 t\n"
        "q2 Q0 q2 1 5.0 t\nq2 Q0 d7 2 4.0 t\nq2 Q0 d7 3 1.0 t\nq3 Q0 d3 1 1.0 t\n"
    )
    got = read_run_report(path)
    assert got.run == {"q1": {"d1": 3.0, "d2": 2.0}, "q2": {"q2": 5.0, "d7": 4.0}, "q3": {"d3": 1.0}}  # first line wins
    assert got.duplicates == {"q1": 2, "q2": 1} and got.identical_ids == {}
    assert read_run(path) == got.run
    got = read_run_report(path, ignore_identical_ids=True)
    assert got.run["q2"] == {"d7": 4.0} and got.identical_ids == {"q2": 1} and got.duplicates == {"q1": 2, "q2": 1}
