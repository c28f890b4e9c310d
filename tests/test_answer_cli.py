"""``citewise ask`` (JSON shape, --llm) and ``citewise calibrate`` on a small hashing index."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from citewise.cli import app

from conftest import write_doc
from fake_openai import FakeOpenAI

runner = CliRunner()


def make_index(tmp_path):
    root = tmp_path / "docs"
    write_doc(
        root,
        "refunds/pro.md",
        "Refunds on the Pro plan",
        "## The Pro refund rule\n\nOn Pro, you can request a refund within 30 days of the charge.\n\n"
        "## Exceptions\n\nAnnual Pro plans have a 45 day refund window.",
        version="3",
        updated="2026-09-14",
    )
    write_doc(root, "exports/csv.md", "Export data to CSV", "Exports use the ISO 8601 date format.")
    index = tmp_path / "index"
    res = runner.invoke(app, ["ingest", str(root), "--index", str(index), "--embedder", "hashing", "--json"])
    assert res.exit_code == 0, res.output
    return index


def test_ask_json_shape_and_llm_generator(tmp_path, monkeypatch):
    index = make_index(tmp_path)
    res = runner.invoke(app, ["ask", "Pro refund window days", "--index", str(index), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["outcome"] == "answered" and data["generator"] == "extractive"
    assert data["citations"][0] == {
        "doc_id": "refunds/pro",
        "title": "Refunds on the Pro plan",
        "version": "3",
        "updated": "2026-09-14",
        "chunk_id": data["citations"][0]["chunk_id"],
        "start": data["citations"][0]["start"],
        "end": data["citations"][0]["end"],
        "spans": data["citations"][0]["spans"],
    }
    # one span per citing sentence; the citation's own offsets are the first one's
    first = data["citations"][0]["spans"][0]
    assert (first["sentence"], first["start"], first["end"]) == (
        0,
        data["citations"][0]["start"],
        data["citations"][0]["end"],
    )
    assert "[doc:refunds/pro]" in data["answer"] and data["fabricated_citations"] == []
    with FakeOpenAI([{"content": "On Pro the window is 30 days [doc:refunds/pro]. Trust me."}]) as server:
        monkeypatch.setenv("CITEWISE_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("CITEWISE_LLM_MODEL", "local-model")
        res = runner.invoke(app, ["ask", "Pro refund window days", "--index", str(index), "--llm", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert (data["outcome"], data["answer"], data["dropped_sentences"]) == (
        "partial",
        "On Pro the window is 30 days. [doc:refunds/pro]",
        ["Trust me."],
    )
    assert server.requests[0]["model"] == "local-model"


def test_calibrate_reports_and_stores(tmp_path):
    index = make_index(tmp_path)
    gold = tmp_path / "golden.jsonl"
    gold.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"id": "g1", "text": "Pro refund window days", "relevant": {"refunds/pro": 2}},
                {"id": "g2", "text": "annual Pro refund window", "relevant": {"refunds/pro": 2}},
                {"id": "g3", "text": "csv export date format", "relevant": {"exports/csv": 2}},
            ]
        )
        + "\n"
    )
    oos = tmp_path / "oos.jsonl"
    oos.write_text(
        '{"id": "o1", "text": "How do I bake sourdough bread?"}\n{"id": "o2", "text": "capital of Australia"}\n'
    )
    res = runner.invoke(
        app, ["calibrate", "--index", str(index), "--golden", str(gold), "--out-of-scope", str(oos), "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["stored"] and data["fit"] == "train" and data["train"]["questions"] + data["test"]["questions"] == 5
    assert json.loads((index / "index.json").read_text())["abstain_threshold"] == data["threshold"]
    # every out-of-scope question names nothing the corpus knows or shares no terms: score 0
    assert [r["score"] for r in data["scores"] if not r["in_scope"]] == [0.0, 0.0]
    bad = runner.invoke(app, ["calibrate", "--index", str(index), "--golden", str(oos)])
    assert bad.exit_code != 0 and "oos.jsonl:1" in str(bad.exception)
