"""Reports (md/json/html) and the eval run / compare / report commands."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from citewise.cli import app
from citewise.core import CitewiseError
from citewise.demo import sample_dir
from citewise.evaluation.compare import Comparison, compare
from citewise.evaluation.gate import Floors, check
from citewise.evaluation.reports import render, write_report

QRELS = {"q1": {"a": 2, "b": 1}, "q2": {"c": 1}, "q3": {"d": 2}}
RUNS = {
    "bm25": {"q1": ["b", "a"], "q2": ["x", "c"], "q3": ["d"]},
    "dense": {"q1": ["a", "b"], "q2": ["c"], "q3": ["y"]},
}
SLICES = {"all": ["q1", "q2", "q3"], "kw": ["q1", "q2"], "para": ["q3"]}


@pytest.fixture(scope="module")
def comparison():
    return compare(
        QRELS, RUNS, slices=SLICES, metrics=["mrr@10", "hit@1"], name="toy", permutations=1000, resamples=1000
    )


def test_comparison_values_and_json_round_trip(comparison):
    # grade >= 1 is relevant: bm25 q1 [b, a] -> rr 1, hit 1; q2 [x, c] -> rr 1/2, hit 0; q3 [d] -> 1, 1
    assert comparison.means["bm25"]["kw"] == {"mrr@10": 0.75, "hit@1": 0.5}
    assert comparison.means["bm25"]["all"] == {"mrr@10": pytest.approx(2.5 / 3), "hit@1": pytest.approx(2 / 3)}
    assert comparison.means["dense"]["all"] == {"mrr@10": pytest.approx(2 / 3), "hit@1": pytest.approx(2 / 3)}
    # kw differences dense - bm25 on hit@1 are (0, +1): every sign flip keeps |mean| = 0.5 -> p = 1;
    # bootstrap means of two values 0 and 1 are 0, 0.5, 1 -> 95% CI [0, 1]
    d = comparison.deltas["dense"]["kw"]["hit@1"]
    assert d == {"delta": 0.5, "ci": [0.0, 1.0], "p": 1.0}
    # para has one query, 1 -> 0: both sign patterns are as extreme -> p = 1 as well
    assert comparison.deltas["dense"]["para"]["mrr@10"] == {"delta": -1.0, "ci": [-1.0, -1.0], "p": 1.0}
    back = Comparison.from_dict(json.loads(render(comparison, "json")))
    assert back.means == comparison.means and back.deltas == comparison.deltas and back.arms == ["bm25", "dense"]
    with pytest.raises(CitewiseError, match="not a comparison"):
        Comparison.from_dict({"name": "x"})


def test_markdown_report(comparison):
    floors = Floors({"kw": {"mrr@10": 0.9}})
    md = render(comparison, "md", floors, check(comparison.means["bm25"], floors))
    assert "## kw (2 queries)" in md and "| arm | mrr@10 | hit@1 |" in md
    assert "| bm25 | 0.750 [0.500, 1.000] | 0.500 [0.000, 1.000] |" in md
    assert "| dense − bm25 | +0.250 [+0.000, +0.500] p=1.000 | +0.500 [+0.000, +1.000] p=1.000 |" in md
    assert "## Gate: FAILED (1 floors breached)" in md and "- kw/mrr@10: 0.750 < floor 0.9" in md


def test_html_report_is_self_contained_with_a_chart_per_slice(comparison, tmp_path):
    path = write_report(tmp_path / "r.html", comparison, floors=Floors({"kw": {"mrr@10": 0.9}}), breaches=[])
    page = path.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 3 and page.count("<h2>") == 3
    for external in ("http://", "https://", "<script", "<link", "src=", "url(", "@import"):
        assert external not in page, external
    assert 'class="floor"' in page and "Gate passed" in page
    assert "<title>dense mrr@10: 0.667" in page
    with pytest.raises(CitewiseError, match="unknown report format 'pdf'"):
        write_report(tmp_path / "r.pdf", comparison)


def test_eval_run_command_json(tmp_path):
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\ta\t2\nq1\tb\t1\nq2\tc\t1\n")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 b 1 2.0 t\nq1 Q0 a 2 1.0 t\nq1 Q0 b 3 0.5 t\nq3 Q0 c 1 1.0 t\n")
    res = CliRunner().invoke(
        app, ["eval", "run", str(qrels), str(run), "--metrics", "ndcg_exp@10,mrr@10,recall@10", "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    l3 = 1.5849625007211563
    assert data["per_query"]["q1"]["ndcg_exp@10"] == pytest.approx((1 + 3 / l3) / (3 + 1 / l3), abs=1e-12)
    assert data["per_query"]["q2"] == {"ndcg_exp@10": 0.0, "mrr@10": 0.0, "recall@10": 0.0}  # not in the run
    assert data["metrics"]["mrr@10"] == 0.5 and data["metrics"]["recall@10"] == 0.5


def test_eval_run_bad_input_is_one_line(tmp_path):
    """Through the console-script entry point: one 'error:' line on stderr, exit status 2."""
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("q1\ta\ttwo\n")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a 1 1.0 t\n")
    res = subprocess.run(
        [sys.executable, "-c", "from citewise.cli import main; main()", "eval", "run", str(qrels), str(run)],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2 and res.stderr.strip() == f"error: {qrels}:1: grade must be an integer, got 'two'"


def test_compare_golden_and_report_commands(sample_index, tmp_path):
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "eval",
            "compare",
            str(sample_dir() / "golden.jsonl"),
            "--index",
            str(sample_index.path),
            "--retrievers",
            "bm25,shipped",
            "--metrics",
            "mrr@10,ndcg@10",
            "--json",
            "--report",
            str(tmp_path / "c.json"),
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["baseline"] == "bm25" and data["slices"] == {
        "all": 40,
        "identifier": 12,
        "keyword": 14,
        "paraphrase": 14,
    }
    assert data["means"]["shipped"]["identifier"]["mrr@10"] == 1.0
    assert data["deltas"]["shipped"]["identifier"]["mrr@10"]["p"] < 0.05
    res = runner.invoke(
        app, ["eval", "report", str(tmp_path / "c.json"), "--format", "html", "--out", str(tmp_path / "c.html")]
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "c.html").read_text().count("<svg") == 4
    res = runner.invoke(
        app,
        [
            "eval",
            "compare",
            str(sample_dir() / "golden.jsonl"),
            "--index",
            str(sample_index.path),
            "--retrievers",
            "bm25,shipped",
            "--metrics",
            "mrr@10",
        ],
    )
    assert res.exit_code == 0 and "p shipped" in res.output and "identifier" in res.output
