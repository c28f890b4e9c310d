"""End to end from the CLI: ask routes record/both questions; tools list/call; eval tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


@pytest.fixture(scope="module")
def run(sample_index, tmp_path_factory):
    env = {**os.environ, "CITEWISE_CACHE": str(tmp_path_factory.mktemp("cache"))}
    env.pop("CITEWISE_DB", None)
    env.pop("CITEWISE_WEB_SEARCH_URL", None)

    def _run(*args):
        return subprocess.run(
            [sys.executable, "-m", "citewise.cli", *args], capture_output=True, text=True, env=env, timeout=120
        )

    return _run


def test_ask_daily_limit_end_to_end(run, sample_index):
    p = run(
        "ask",
        "Has customer C-1002 exceeded their daily limit on 2026-11-20?",
        "--index",
        str(sample_index.path),
        "--json",
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["outcome"] == "answered"
    text = out["answer"]
    assert text.startswith("Yes.")
    assert "outgoing_usd = 5,350.00 USD, plan Starter [tool:customer_daily_outgoing]" in text  # number from the tool
    assert (
        "limit on the Starter plan is 5,000.00 USD [doc:help/billing/daily-transaction-limits]" in text
    )  # rule from RAG
    assert "Computed: 5,350.00 USD > 5,000.00 USD: exceeded by 350.00 USD." in text  # comparison in code
    cit = out["citations"][0]
    assert cit["doc_id"] == "help/billing/daily-transaction-limits"
    from citewise.demo import sample_dir

    source = (sample_dir() / "corpus" / "help/billing/daily-transaction-limits.md").read_text()
    assert source[cit["start"] : cit["end"]] == "| Starter | 5,000 USD | 10,000 USD, temporarily for up to 7 days |"
    # the tool call that supplied the number is part of the answer's provenance
    assert out["tool_calls"] == [
        {
            "tool": "customer_daily_outgoing",
            "arguments": {"customer_id": "C-1002", "date": "2026-11-20"},
            "error": None,
            "rows": 1,
        }
    ]


def test_ask_not_exceeded_record_and_document_routes(run, sample_index):
    idx = str(sample_index.path)
    p = run("ask", "Is C-1001 over its daily outgoing-payment limit on 2026-11-20?", "--index", idx)
    assert p.returncode == 0 and p.stdout.startswith("No.") and "6,800.00 USD remaining (72.8% used)" in p.stdout
    p = run("ask", "What is the status of invoice 2041?", "--index", idx)
    assert "status: past_due" in p.stdout and "[tool:invoice_status]" in p.stdout
    assert "[tool:invoice_status] invoice_status(invoice_id=2041) -> 1 row(s)" in p.stdout
    p = run("ask", "How do I dispute an invoice?", "--index", idx, "--json")
    out = json.loads(p.stdout)
    assert out["outcome"] == "answered" and "[tool:" not in out["answer"] and out["citations"]


def test_tools_list_and_call(run):
    p = run("tools", "list", "--json")
    names = [t["function"]["name"] for t in json.loads(p.stdout)["tools"]]
    assert names[:2] == ["sql_query", "invoice_status"] and len(names) == 9
    p = run("tools", "call", "count_invoices", "--args", '{"status": "past_due", "year": 2025}', "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["rows"] == [{"invoices": 6}]
    p = run("tools", "call", "sql_query", "--args", '{"sql": "SELECT 1; DROP TABLE invoices"}', "--json")
    assert p.returncode == 1 and json.loads(p.stdout) == {
        "error": "exactly one statement is allowed, got 2",
        "tool": "sql_query",
    }
    p = run("tools", "call", "sql_query", "--args", "{oops", "--json")  # a tool failure: an observation, exit 1
    assert p.returncode == 1 and json.loads(p.stdout)["error"].startswith("--args: not JSON") and not p.stderr
    p = run("tools", "call", "invoice_status", "--args", "{}", "--db", "/nonexistent/r.db")
    assert p.returncode == 2 and "no such database file" in p.stderr


def test_eval_tools_json(run, sample_index):
    p = run("eval", "tools", "--index", str(sample_index.path), "--json")
    assert p.returncode == 0, p.stderr
    routers = {r["router"]: r for r in json.loads(p.stdout)["routers"]}
    assert routers["rule"]["overall"]["tsa"] >= 0.95 and routers["rule"]["overall"]["arg_accuracy"] >= 0.9
    assert routers["embedding"]["overall"]["tsa"] < routers["rule"]["overall"]["tsa"]
