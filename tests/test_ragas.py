"""RAGAS as the tool-calling design document defines it: its worked example (0.75 / 0.60 / 1.00 /
0.72), the rank-weighted precision under its own name, noise sensitivity's clean-minus-noisy
definition with the 0.15 flag, the diagnosis table, the dataset reader's errors, and the runner
and CLI without an LLM (they say so and invent nothing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from citewise.core import InputError
from citewise.evaluation.diagnosis import diagnose
from citewise.evaluation.ragas import Judgments, RagasRow, precision_ranked, read_ragas_set, run_ragas, scores_from
from citewise.evaluation.ragas_noise import noisy_contexts
from citewise.evaluation.ragas_report import render

DATA = Path(__file__).parent / "data" / "ragas"


def worked_example() -> Judgments:
    """The judge's decisions of the document's Redis example, step by step."""
    return Judgments(
        claims=[
            "Redis guarantees sub-millisecond latencies for GET on in-RAM datasets",
            "With 10 GB on LAN, P99 < 1 ms",
            "Redis supports horizontal clustering to scale RAM",
            "Redis has included native JSON support since version 7.2",
        ],
        supported=[True, True, True, False],  # claim 4: no chunk supports it
        relevant=[True, True, False, True, False],  # C1, C2, C4 relevant; C3, C5 noise
        truth_claims=[
            "Redis operates in memory, GET < 1 ms",
            "P99 < 1 ms on LAN with 10 GB",
            "Clustering scales beyond the RAM of a single node",
        ],
        attributed=[True, True, True],  # C1, C4, C2
        generated=[
            "What latencies does Redis offer for in-memory reads?",
            "How does Redis scale horizontally?",
            "Which JSON modules does Redis include?",
        ],
        cosines=[0.91, 0.74, 0.52],
    )


def test_worked_example_gives_the_documents_figures():
    s = scores_from(worked_example())
    assert s["faithfulness"] == pytest.approx(0.75)  # 3 / 4
    assert s["context_precision"] == pytest.approx(0.60)  # 3 relevant / 5 retrieved
    assert s["context_recall"] == pytest.approx(1.00)  # 3 / 3
    assert round(s["answer_relevance"], 2) == 0.72  # (0.91 + 0.74 + 0.52) / 3 = 0.7233
    # the rank-weighted form, under its own name: (1/1 + 2/2 + 3/4) / 3
    assert s["context_precision_ranked"] == pytest.approx((1 + 1 + 0.75) / 3) == pytest.approx(0.9167, abs=1e-4)
    # the document's diagnosis of the example: faithfulness 0.75 is in "0.75-0.85"; precision 0.60 is not < 0.60
    rows = diagnose(s)
    assert [(d.metric, d.range) for d in rows] == [("faithfulness", "0.75-0.85")]
    assert rows[0].action == "improve context precision to eliminate contaminating chunks"


def test_precision_forms_differ_only_in_rank_weighting():
    assert precision_ranked([True, False]) == 1.0 and precision_ranked([False, True]) == 0.5
    assert scores_from(Judgments(relevant=[False, True]))["context_precision"] == 0.5
    assert precision_ranked([False, False]) == 0.0


def test_noisy_contexts_come_from_other_rows_interleaved_and_seeded():
    rows = [
        RagasRow("a", "q", "x", ("A1", "A2", "A3")),
        RagasRow("b", "q", "y", ("B1", "B2")),
        RagasRow("c", "q", "z", ("C1", "A1")),
    ]
    got = noisy_contexts(rows[0], rows, 2)
    assert got[0::2][:3] == ["A1", "A2", "A3"][: len(got[0::2][:3])] and got[0] == "A1" and got[2] == "A2"
    noise = [got[1], got[3]]
    assert set(noise) <= {"B1", "B2", "C1"}  # never one of the row's own contexts (A1 is in row c too)
    assert noisy_contexts(rows[0], rows, 2) == got  # same seed, same draw
    assert len(noisy_contexts(rows[1], rows, 10)) == 2 + 4  # at most every other context: A1 A2 A3 C1


def test_noise_flag_is_above_0_15():
    assert [d.metric for d in diagnose({"noise_sensitivity": 0.15})] == []
    assert [d.metric for d in diagnose({"noise_sensitivity": 0.16})] == ["noise_sensitivity"]


def test_without_a_judge_nothing_is_invented(tmp_path):
    rows = read_ragas_set(DATA / "redis.jsonl")
    rep = run_ragas(rows, None, None, dataset="redis.jsonl").to_dict()
    assert all(v["mean"] is None and v["n"] == 0 for v in rep["means"].values())
    assert rep["diagnosis"] == [] and "no LLM judge configured" in rep["notes"][0]
    assert rep["rows"] == 1 and rep["rows_with_ground_truth"] == 1 and rep["mean_contexts"] == 5
    html = render(rep, "html")
    assert html.startswith("<!DOCTYPE html>") and "No metric measured" in html and "<script" not in html


def test_report_renders_the_diagnosis_table():
    from citewise.evaluation.ragas import RagasReport, RowResult

    s = {**scores_from(worked_example()), "noise_sensitivity": 0.2}
    rep = RagasReport(
        "redis.jsonl",
        [RowResult("redis", "q", s, worked_example(), {"delta": 0.2, "flagged": True})],
        "judge-model",
        "minilm",
        with_truth=1,
    ).to_dict()
    assert rep["means"]["context_precision"] == {"mean": 0.6, "n": 1} and rep["noise_flagged"] == ["redis"]
    md = render(rep, "md")
    assert "| faithfulness | 0.75-0.85 | 0.750 | occasional hallucinations on peripheral topics |" in md
    assert "| noise_sensitivity | > 0.15 | 0.200 |" in md
    html = render(rep, "html")
    assert (
        "improve context precision to eliminate contaminating chunks" in html and "Noise sensitivity above 0.15" in html
    )


@pytest.mark.parametrize(
    "line, error",
    [
        (
            {"question": "q", "answer": "a", "contexts": "one"},
            r"set.jsonl:1: field 'contexts': must be a list of strings",
        ),
        ({"question": "q", "answer": "a", "contexts": [], "ground_truth": 3}, "field 'ground_truth': must be a string"),
        ({"question": "", "answer": "a", "contexts": []}, "field 'question': must be a non-empty string"),
        ({"question": "q", "answer": "a", "contexts": [], "reference": "x"}, "unknown field 'reference'"),
    ],
)
def test_dataset_errors_name_file_line_and_field(tmp_path, line, error):
    f = tmp_path / "set.jsonl"
    f.write_text(json.dumps(line) + "\n")
    with pytest.raises(InputError, match=error):
        read_ragas_set(f)


def _no_llm_env():
    return {k: v for k, v in os.environ.items() if not k.startswith(("CITEWISE_LLM", "CITEWISE_JUDGE", "OPENAI_"))}


def test_cli_without_an_llm_says_so_and_writes_the_html_report(tmp_path):
    report = tmp_path / "r.html"
    p = subprocess.run(
        [sys.executable, "-m", "citewise.cli", "eval", "ragas", str(DATA / "redis.jsonl"), "--report", str(report)],
        capture_output=True,
        text=True,
        env=_no_llm_env(),
    )
    assert p.returncode == 0, p.stderr
    assert "no LLM judge configured" in p.stderr and "| faithfulness | — | 0 |" in p.stdout
    assert report.read_text().startswith("<!DOCTYPE html>")
    p = subprocess.run(
        [sys.executable, "-m", "citewise.cli", "golden", "generate", str(tmp_path / "g.jsonl")],
        capture_output=True,
        text=True,
        env=_no_llm_env(),
    )
    assert p.returncode == 2 and "none is configured; nothing was written" in p.stderr
    assert not (tmp_path / "g.jsonl").exists()
