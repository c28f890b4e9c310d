"""The gate: floors file, breaches, missing slices, and teeth on the sample corpus."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from citewise.cli import app
from citewise.core import InputError
from citewise.demo import sample_dir
from citewise.evaluation.gate import Floors, check, load_floors
from citewise.evaluation.harness import run_gate

FLOORS = sample_dir() / "floors.yaml"
GOLDEN = sample_dir() / "golden.jsonl"


@pytest.fixture(scope="module")
def gated(sample_index):
    """The bundled floors checked for every retriever (bootstrap kept small: CIs are not gated)."""
    floors = load_floors(FLOORS)
    return {
        name: run_gate(sample_index, floors, GOLDEN, name, resamples=200)
        for name in ("shipped", "bm25", "dense", "hybrid")
    }


def test_bundled_floors_file_names_every_slice_of_the_golden_set():
    floors = load_floors(FLOORS)
    assert floors.golden == GOLDEN and floors.retriever == "shipped"
    assert list(floors.floors) == ["all", "identifier", "paraphrase", "keyword"]
    assert floors.floors["identifier"]["mrr@10"] == 0.99


def test_shipped_passes_and_every_weaker_configuration_fails(gated):
    comparison, breaches = gated["shipped"]
    assert breaches == []
    means = comparison.means["shipped"]
    floors = load_floors(FLOORS).floors
    # floors sit just below the measured values: within 0.01 of every one of them
    for s, per in floors.items():
        for m, f in per.items():
            assert f <= means[s][m] < f + 0.0101, (s, m)
    failed = {name: {f"{b.slice}/{b.metric}" for b in gated[name][1]} for name in ("bm25", "dense", "hybrid")}
    # without identifier pinning, no weaker arm ranks the error page first for every identifier query
    for name in ("bm25", "dense", "hybrid"):
        assert "identifier/mrr@10" in failed[name] and "identifier/hit@1" in failed[name], name
    assert "paraphrase/recall@10" in failed["bm25"]
    assert "paraphrase/ndcg@10" in failed["dense"] and "all/ndcg@10" in failed["dense"]


def test_breach_lines_and_missing_slices():
    floors = Floors({"identifier": {"mrr@10": 0.95, "hit@1": 0.5}, "keyword": {"ndcg@10": 0.8}})
    breaches = check({"identifier": {"mrr@10": 0.743, "hit@1": 0.5}}, floors)
    assert [str(b) for b in breaches] == [
        "identifier/mrr@10: 0.743 < floor 0.95",  # 0.5 == floor passes
        "keyword/ndcg@10: missing from the results (floor 0.8)",
    ]
    assert check({"identifier": {"mrr@10": 0.95, "hit@1": 1.0}, "keyword": {"ndcg@10": 0.8}}, floors) == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("floors: {all: {ndcg: 0.5}}", "needs a cut-off"),
        ("floors: {all: {ndcg@10: 1.5}}", r"floors.all.ndcg@10: floor must be a number in \[0, 1\], got 1.5"),
        ("floors: {all: {ndcg@10: high}}", "floor must be a number"),
        ("golden: x.jsonl\n", "expected a mapping with 'floors"),
        ("floors: {all: [1, 2]}", "floors.all: expected a mapping"),
        ("floors: {all: {ndcg@10: 0.5}\n  bad", "invalid YAML"),
    ],
)
def test_bad_floors_files_fail_naming_the_file(tmp_path, text, message):
    path = tmp_path / "floors.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as e:
        load_floors(path)
    assert e.value.source == str(path)


def test_gate_command_exits_1_and_lists_every_breach(sample_index, tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["gate", "--index", str(sample_index.path), "--retriever", "bm25", "--json"])
    assert res.exit_code == 1, res.output
    data = json.loads(res.stdout)
    assert data["passed"] is False
    assert any(re.fullmatch(r"identifier/mrr@10: 0\.\d{3} < floor 0\.99", b) for b in data["breaches"]), data[
        "breaches"
    ]
    # a slice named in the floors but absent from the golden set fails too
    floors = tmp_path / "floors.yaml"
    floors.write_text("floors:\n  identifier: {mrr@10: 0.5}\n  multi-hop: {ndcg@10: 0.1}\n")
    res = runner.invoke(
        app,
        [
            "gate",
            "--index",
            str(sample_index.path),
            "--floors",
            str(floors),
            "--golden",
            str(GOLDEN),
            "--report",
            str(tmp_path / "gate.md"),
        ],
    )
    assert res.exit_code == 1
    assert "multi-hop/ndcg@10: missing from the results (floor 0.1)" in res.output
    assert "## Gate: FAILED (1 floors breached)" in (tmp_path / "gate.md").read_text()
    res = runner.invoke(app, ["gate", "--index", str(sample_index.path)])
    assert res.exit_code == 0 and "gate passed" in res.output
