"""Five-condition evaluation on the bundled payment question set (dev half, hashing embedder)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from citewise.answer.gaps import Requirements
from citewise.cli import app
from citewise.core import InputError
from citewise.decide import Prices, cost_per_correct_answer, request_cost
from citewise.demo import sample_dir
from citewise.evaluation.conditions import CONDITIONS, load_questions, run_conditions, to_html
from citewise.index import Index

PAYMENT = sample_dir() / "payment"


def test_question_set_shape():
    qs = load_questions(PAYMENT / "questions.jsonl")
    assert len(qs) >= 40
    kinds = [q.kind for q in qs]
    assert kinds.count("incomplete") >= 8 and kinds.count("conflict") >= 5
    assert sum(q.lexical_mismatch for q in qs) >= 5 and "stale" in kinds
    assert all(q.expected != "supported" for q in qs if q.kind == "incomplete")
    assert any(len(q.evidence_sets) > 1 for q in qs)  # more than one valid evidence set
    assert {q.split for q in qs} == {"dev", "heldout"}


def test_question_set_errors_name_line_and_field(tmp_path):
    bad = tmp_path / "q.jsonl"
    bad.write_text(
        '{"id": "a", "question": "q?", "kind": "answerable", "expected": "supported", "evidence_sets": []}\n'
    )
    with pytest.raises(InputError, match=r"q\.jsonl:1: evidence_sets: a question expecting 'supported'"):
        load_questions(bad)
    bad.write_text('{"id": "a", "question": "q?", "kind": "answerable", "expected": "maybe"}\n')
    with pytest.raises(InputError, match="expected: 'maybe' is not one of"):
        load_questions(bad)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """Every condition run over the payment corpus's dev questions (~10 s: its tests are marked
    integration)."""
    idx = Index.open(tmp_path_factory.mktemp("cond") / "index", embedder="hashing")
    idx.ingest(PAYMENT / "corpus")
    qs = [q for q in load_questions(PAYMENT / "questions.jsonl") if q.split == "dev"]
    return run_conditions(idx, qs, Requirements.load(PAYMENT / "requirements.yaml"), Prices(2.0, 8.0, 0.5))


@pytest.mark.integration
def test_adaptive_beats_flat_and_never_supports_an_incomplete_packet(report):
    s = report["summary"]
    assert set(s) == set(CONDITIONS)
    assert s["adaptive"]["supported_answer_rate"] >= s["flat_top_k"]["supported_answer_rate"]
    assert s["adaptive"]["supported_answer_rate"] > s["flat_top_k"]["supported_answer_rate"]  # on this set
    for cond in CONDITIONS:
        assert s[cond]["supported_on_incomplete"] == 0, cond
    assert s["adaptive"]["retrieval_calls_per_question"] > s["flat_top_k"]["retrieval_calls_per_question"]
    assert 0 < s["adaptive"]["fallback_rate"] < 1


@pytest.mark.integration
def test_records_log_found_retained_used_and_attribute_failures(report):
    recs = report["records"]
    assert len(recs) == 5 * report["settings"]["questions"]
    for r in recs:
        assert {"found", "retained", "used", "failure", "category"} <= set(r)
        if r["failure"] == "discovery":
            assert not r["found"]
        if r["failure"] == "selection":
            assert r["found"] and not r["retained"]
        if r["correct_supported"]:
            assert r["found"] and r["retained"] and r["used"] and not r["failure"]
    assert {r["category"] for r in recs if r["kind"] == "incomplete"} == {"coverage"}
    # the payment question that needs discovery over the corpus: flat top-k misses the contract
    flat = next(r for r in recs if r["condition"] == "flat_top_k" and r["id"] == "pay-07")
    adaptive = next(r for r in recs if r["condition"] == "adaptive" and r["id"] == "pay-07")
    assert (flat["outcome"], flat["failure"]) == ("gap", "discovery")
    assert adaptive["correct_supported"] and adaptive["rounds"] == 2


@pytest.mark.integration
def test_cost_follows_the_cost_model(report):
    prices = Prices(2.0, 8.0, 0.5)
    rs = [r for r in report["records"] if r["condition"] == "oracle"]
    mean = sum(request_cost(r["tokens_sent"], 150, prices) for r in rs) / len(rs)
    s = report["summary"]["oracle"]
    assert s["cost_per_request_usd"] == pytest.approx(mean, abs=1e-8)
    assert s["cost_per_correctly_supported_usd"] == pytest.approx(
        cost_per_correct_answer(mean, s["supported_answer_rate"]), abs=1e-7
    )


@pytest.mark.integration
def test_position_test_and_html(report):
    pos = report["position_test"]
    assert pos and all({"start", "middle", "end", "changed"} <= set(p) for p in pos)
    # the rule-based answer step reads every sentence: moving the clause changes nothing
    assert not any(p["changed"] for p in pos)
    page = to_html(report)
    assert "<h2>Found / retained / used" in page and page.count("<tr") > len(report["records"])
    assert "<script" not in page


def test_cli_eval_conditions_json(tmp_path):
    html_path = tmp_path / "r.html"
    subset = tmp_path / "q.jsonl"  # three questions keep the test short
    subset.write_text("".join((PAYMENT / "questions.jsonl").read_text().splitlines(keepends=True)[:3]))
    res = CliRunner().invoke(
        app,
        [
            "eval",
            "conditions",
            str(subset),
            "--corpus",
            str(PAYMENT / "corpus"),
            "--requirements",
            str(PAYMENT / "requirements.yaml"),
            "--embedder",
            "hashing",
            "--index",
            str(tmp_path / "idx"),
            "--split",
            "dev",
            "--json",
            "--html",
            str(html_path),
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["settings"]["split"] == "dev" and set(data["summary"]) == set(CONDITIONS)
    assert data["settings"]["questions"] == 2  # pay-01 and pay-03 are dev; pay-02 is held out
    assert html_path.read_text().startswith("<!doctype html>")


def test_the_adaptive_condition_is_the_products_own_ask(tmp_path):
    """The adaptive condition answers through Citewise.ask (the pipeline of every front end) and
    gets the answer a caller of the facade with the same options gets."""
    from citewise.api import AskOptions, Citewise
    from citewise.core import Principal
    from citewise.evaluation.conditions import ConditionsRunner

    class Counting(Citewise):
        calls = 0

        def ask(self, *args, **kwargs):
            Counting.calls += 1
            return super().ask(*args, **kwargs)

    idx = Index.open(tmp_path / "index", embedder="hashing")
    idx.ingest(PAYMENT / "corpus")
    reqs = Requirements.load(PAYMENT / "requirements.yaml")
    runner = ConditionsRunner(idx, reqs, cw=Counting(idx))
    q = next(q for q in load_questions(PAYMENT / "questions.jsonl") if q.id == "pay-07")
    ans, trace, applicable, initial = runner.run_one(q, "adaptive")
    assert Counting.calls == 1 and applicable and len(trace.rounds) == 2 and initial > 0
    direct = Citewise(idx).ask(
        q.question,
        Principal("eval", q.groups),
        AskOptions(k=5, retriever="shipped", scope=tuple(q.scope), max_rounds=2, budget_tokens=4000, requirements=reqs),
    )
    assert (ans.outcome, ans.text, [c.chunk_id for c in ans.citations]) == (
        direct.outcome,
        direct.text,
        [c.chunk_id for c in direct.citations],
    )
    assert ans.outcome == "supported"
