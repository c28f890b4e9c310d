"""The LLM-backed evaluation paths on recorded real responses of a local llama.cpp server
(Qwen2.5-Coder-1.5B-Instruct Q4_K_M; tests/record_llm.py records them), replayed through the real
HTTP client: judge agreement on the HR knowledge base's hand labels, RAGAS with noise sensitivity
on HR questions, and golden-set generation from the HR policies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citewise.answer.judges import ClaimJudge, LLMFaithfulnessJudge
from citewise.evaluation.judge_agreement import measure_agreement, read_labels

from llm_replay import LLM_DATA, replay_model

DATA = Path(__file__).parent / "data"


def recorded_verdicts(name: str) -> list[dict]:
    """The judge replies of a recording, parsed (what the test computes its expectations from)."""
    return [
        json.loads(line)["response"]["choices"][0]["message"]["content"]
        for line in (LLM_DATA / name).read_text().splitlines()
        if line.strip()
    ]


def test_judge_agreement_on_hand_labels_matches_scikit_learn():
    from sklearn.metrics import cohen_kappa_score  # here: scikit-learn's import is a second of collection

    model, transport = replay_model("judge_hr.jsonl")
    labels = read_labels(DATA / "judge" / "hr_labels.jsonl")
    ag = measure_agreement(labels, LLMFaithfulnessJudge(model))
    assert transport.calls == len(labels) == ag.n == 34
    truth = [x.faithful for x in labels]
    pred = [i["judge"] for i in ag.items]
    assert ag.kappa == pytest.approx(cohen_kappa_score(truth, pred), abs=1e-6)
    assert ag.accuracy == pytest.approx(sum(t == p for t, p in zip(truth, pred)) / 34, abs=1e-6)
    # what this recording says (docs/benchmarks.md): 30 of 34 agree; the judge passed 3 unfaithful
    # answers (hr16, hr18, hr25) and failed 1 faithful one (hr24)
    assert ag.confusion == {"tp": 18, "fp": 3, "fn": 1, "tn": 12} and ag.judge_errors == 0
    assert ag.accuracy == pytest.approx(30 / 34, abs=1e-6)
    # p_o = 30/34; p_e = (19/34)(21/34) + (15/34)(13/34) = 594/1156; kappa = (p_o - p_e) / (1 - p_e)
    assert (
        ag.kappa == pytest.approx((30 / 34 - 594 / 1156) / (1 - 594 / 1156), abs=1e-6) == pytest.approx(0.758, abs=1e-3)
    )
    wrong = sorted(i["id"] for i in ag.items if i["label"] != i["judge"])
    assert wrong == ["hr16", "hr18", "hr24", "hr25"]


HR_QUESTIONS = ["How many vacation days do I get?", "Can I work from home?", "What is the hotel limit per night?"]


@pytest.fixture(scope="module")
def hr_index(tmp_path_factory):
    """The HR knowledge base (tests/data/hr) in a hashing-embedder index, as tests/record_llm.py builds it."""
    from citewise.index import Index

    idx = Index.open(tmp_path_factory.mktemp("hr") / "hr", embedder="hashing")
    assert not idx.ingest(DATA / "hr").errors
    idx.record_usage = False
    return idx


def test_eval_answers_judge_on_hr_answers(hr_index):
    from citewise.evaluation.answer_judging import judge_answers

    model, transport = replay_model("answers_hr.jsonl")
    asked = {f"q{i}": (q, hr_index.ask(q)) for i, q in enumerate(HR_QUESTIONS, start=1)}
    got = judge_answers(asked, hr_index.store, LLMFaithfulnessJudge(model))
    # the extractive answers quote the policies (the remote-work page answers "work from home"),
    # and the judge finds each faithful: one call per answered question
    assert asked["q2"][1].outcome == "answered" and "work remotely up to 3 days" in asked["q2"][1].text
    assert sorted(got["per_question"]) == ["q1", "q2", "q3"]
    assert (got["judged"], got["faithful"], got["faithful_rate"], got["judge_errors"]) == (3, 3, 1.0, 0)
    assert transport.calls == 3


def test_online_evaluation_with_the_judge_sets_both_gauges(hr_index):
    import numpy as np
    from prometheus_client.parser import text_string_to_metric_families

    from citewise.service.metrics import Metrics
    from citewise.service.online_eval import OnlineEvaluator, sample_of

    model, transport = replay_model("online_hr.jsonl")
    m = Metrics()
    ev = OnlineEvaluator(m, 1.0, ClaimJudge(model))
    q = HR_QUESTIONS[2]
    ev.submit(sample_of(hr_index, q, hr_index.ask(q)))
    ev.drain()
    got = {s.name: s.value for fam in text_string_to_metric_families(m.render().decode()) for s in fam.samples}
    # the judge found one claim ("hotels ... a maximum of $200 per night"), supported by the context
    assert got["citewise_rag_faithfulness_score"] == 1.0
    # relevance: mean cosine of the 3 recorded questions to the question, under the index's embedder
    gen = json.loads(
        json.loads((LLM_DATA / "online_hr.jsonl").read_text().splitlines()[2])["response"]["choices"][0]["message"][
            "content"
        ]
    )["questions"]
    v = hr_index.embedder.embed([q, *gen])
    assert got["citewise_rag_answer_relevance_score"] == pytest.approx(
        float(np.clip(v[1:] @ v[0], 0, 1).mean()), abs=1e-6
    )
    assert got["citewise_rag_answer_relevance_score"] == pytest.approx(
        0.3737, abs=1e-4
    )  # questions drift to "hotels near me"
    assert transport.calls == 3


def test_golden_generate_from_the_hr_policies(hr_index):
    from citewise.evaluation.golden_generate import NOT_ENOUGH, generate

    model, transport = replay_model("golden_hr.jsonl")
    res = generate(hr_index.store, model, seeds=2, per_chunk=3)
    assert res.seeds == 2 and transport.calls == 6 and res.skipped == []
    # seeds: the first documents by id, one chunk each; every kind once per seed
    assert [(r["kind"], r["source_chunks"]) for r in res.rows] == [
        ("easy", ["expenses#expense-reimbursement"]),
        ("multi-hop", ["expenses#expense-reimbursement", "health-benefits#health-benefits"]),
        ("adversarial", ["expenses#expense-reimbursement"]),
        ("easy", ["health-benefits#health-benefits"]),
        ("multi-hop", ["health-benefits#health-benefits", "performance-reviews#performance-reviews"]),
        ("adversarial", ["health-benefits#health-benefits"]),
    ]
    assert res.rows[0]["question"] == "What is the maximum reimbursement for meals while traveling?"
    assert res.rows[0]["ground_truth"] == "$75 per day" and res.rows[0]["relevant"] == {"expenses": 2}
    assert res.rows[1]["relevant"] == {"expenses": 2, "health-benefits": 2}
    assert all(r["ground_truth"] == NOT_ENOUGH and r["relevant"] == {} for r in res.rows if r["kind"] == "adversarial")
    # 15% of 6 rounds to 1 row marked for review; every row waits for a reviewer
    assert sum(r["review"] for r in res.rows) == 1 and {r["status"] for r in res.rows} == {"pending"}
    assert len({r["id"] for r in res.rows}) == 6


def test_ragas_on_an_hr_answer_with_a_made_up_claim():
    """ "How do I expense meals?" answered with the policy's $75/day and an invented "Alcohol is
    reimbursed too", the expenses policy retrieved second after the health plans."""
    from citewise.evaluation.ragas import read_ragas_set, run_ragas
    from citewise.evaluation.ragas_report import render
    from citewise.models.embedders import make_embedder

    model, transport = replay_model("ragas_hr.jsonl")
    rows = read_ragas_set(DATA / "ragas" / "hr.jsonl")
    rep = run_ragas(
        rows[-1:],
        ClaimJudge(model),
        make_embedder("hashing"),
        dataset="hr.jsonl",
        judge_name="qwen2.5-coder-1.5b-instruct",
    ).to_dict()
    assert transport.calls == 6
    j = rep["per_row"][0]["judgments"]
    # the judge split the answer into its 2 claims and found the alcohol one unsupported: 1/2
    assert j["claims"] == ["Meals are reimbursed up to $75 per day during travel.", "Alcohol is reimbursed too."]
    assert j["supported"] == [True, False]
    # only the second context (the expenses policy) is useful: 1 of 2 retrieved; ranked form 1/2 as well
    assert j["relevant"] == [False, True]
    # both ground-truth claims are in the contexts
    assert j["attributed"] == [True, True]
    means = {m: v["mean"] for m, v in rep["means"].items()}
    assert (
        means["faithfulness"],
        means["context_precision"],
        means["context_precision_ranked"],
        means["context_recall"],
    ) == (0.5, 0.5, 0.5, 1.0)
    # relevance: the mean cosine (hashing embedder) of the 3 questions the judge wrote back
    emb = make_embedder("hashing")
    v = emb.embed([rows[-1].question, *j["generated"]])
    assert len(j["generated"]) == 3 and means["answer_relevance"] == pytest.approx(
        float((v[1:] @ v[0]).mean()), abs=1e-5
    )
    assert means["noise_sensitivity"] is None
    assert [(d["metric"], d["range"]) for d in rep["diagnosis"]] == [
        ("faithfulness", "< 0.75"),
        ("context_precision", "< 0.60"),
        ("answer_relevance", "< 0.70"),
    ]
    html = render(rep, "html")
    assert "review the LLM prompt; increase citation instructions; lower the temperature" in html
