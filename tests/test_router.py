"""Router slot filling, TSA on the sample routing set, LLM router and BFCL harness (fake server)."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from conftest import shared_dataset
from fake_openai import FakeOpenAI

from citewise.core import InputError
from citewise.demo import sample_dir
from citewise.models.chat import ChatConfig, OpenAIChatModel
from citewise.tools.bfcl import args_acceptable, evaluate_bfcl, llm_selector, load_bfcl, to_json_schema
from citewise.tools.registry import build_toolset
from citewise.tools.router import EmbeddingRouter, LLMRouter, RuleRouter, extract_slots, fill_arguments, index_probe
from citewise.tools.tsa import evaluate_router, load_routing_set

TODAY = dt.date(2026, 11, 20)


@pytest.fixture(scope="module")
def toolset(sample_index, tmp_path_factory):
    from citewise.tools.records import build_sample_db

    return build_toolset(str(build_sample_db(tmp_path_factory.mktemp("db"))), index=sample_index, sample_fallback=False)


def test_extract_slots():
    syn = {"overdue": "past_due", "partially refunded": "partially_refunded", "unpaid": "open"}
    s = extract_slots(
        "Is invoice #2017 paid? Overdue since 2026-11-14, in 2025 and this year; $20,000 or 5,000 USD", TODAY, syn
    )
    assert s["dates"] == ["2026-11-14"]
    assert s["years"] == [2025, 2026]  # 2017 is an invoice number, 2026-11-14 a date
    assert s["amounts"] == [20000.0, 5000.0]
    assert s["enums"] == ["past_due"]  # enum values themselves ("paid") are matched per parameter
    assert extract_slots("deposits today and yesterday", TODAY)["dates"] == ["2026-11-20", "2026-11-19"]
    assert extract_slots("partially refunded or unpaid invoices", TODAY, syn)["enums"] == ["partially_refunded", "open"]
    s = extract_slots("contracts above 100k USD in Q3 2025, orders in March and in may 2024; May I?", TODAY)
    assert s["amounts"] == [100000.0] and s["quarters"] == [3] and s["years"] == [2025, 2024]
    assert s["months"] == [3, 5]  # "May I" is not the month


def test_fill_arguments(toolset):
    slots = extract_slots("Which invoices of c-1008 are past due?", TODAY)
    assert fill_arguments(toolset["customer_invoices"], slots) == (
        {"customer_id": "C-1008", "status": "past_due"},
        True,
    )
    assert fill_arguments(toolset["count_invoices"], slots) == ({"status": "past_due"}, False)
    assert fill_arguments(toolset["invoice_status"], extract_slots("status of invoice no. 2041", TODAY)) == (
        {"invoice_id": 2041},
        True,
    )
    # a near-miss (spaces, no number) fails at once: the number's prefix is read one way
    slots = extract_slots("status of invoice" + " " * 1900 + "x", TODAY)
    assert fill_arguments(toolset["invoice_status"], slots) == ({}, False)


def test_tsa_rule_router_beats_embedding_baseline(toolset, sample_index):
    cases = load_routing_set(sample_dir() / "routing.jsonl")
    assert len(cases) >= 40 and {c.kind for c in cases} == {"record", "document", "both", "none"}
    tools = list(toolset.tools.values())
    rule = evaluate_router(RuleRouter(tools, sample_index.embedder, index_probe(sample_index)), cases)
    base = evaluate_router(EmbeddingRouter(tools, sample_index.embedder), cases)
    assert rule.overall["tsa"] >= 0.95, rule.as_dict()["errors"]
    assert rule.overall["arg_accuracy"] >= 0.9, rule.as_dict()["errors"]
    assert base.overall["tsa"] < rule.overall["tsa"] - 0.2
    assert base.per_kind["both"]["tsa"] == 0.0  # the baseline cannot route "both"
    assert set(rule.per_kind) == {"record", "document", "both", "none"}


def test_routing_set_loader_errors(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text(
        '{"id": "a", "kind": "record", "text": "x", "expected_tool": "t"}\n{"id": "b", "kind": "maybe", "text": "y"}\n'
    )
    with pytest.raises(InputError, match=r"r.jsonl:2: kind must be one of record, document, both, live, none"):
        load_routing_set(p)
    p.write_text('{"id": "a", "kind": "none", "text": "x", "expected_tool": "t"}\n')
    with pytest.raises(InputError, match="expected_tool must be null exactly when kind is none"):
        load_routing_set(p)


def test_llm_router_converts_quoted_numbers_to_the_declared_type(toolset):
    """A small model writes an integer argument as a string ("2041"); the router passes the
    integer the tool's schema declares, and leaves a string that is no integer for the check."""
    script = [
        {"tool_calls": [{"name": "invoice_status", "arguments": {"invoice_id": "2041"}}]},
        {"tool_calls": [{"name": "invoice_status", "arguments": {"invoice_id": "INV-2041"}}]},
    ]
    with FakeOpenAI(script) as server:
        router = LLMRouter(OpenAIChatModel(ChatConfig(server.base_url, "m")), list(toolset.tools.values()))
        quoted, named = router.route("invoice 2041?", TODAY), router.route("invoice INV-2041?", TODAY)
    assert quoted.arguments == {"invoice_id": 2041} and isinstance(quoted.arguments["invoice_id"], int)
    assert named.arguments == {"invoice_id": "INV-2041"}
    assert toolset.call("invoice_status", named.arguments)["error"].startswith("argument 'invoice_id' must be integer")


def test_llm_router_reads_native_calls_and_json_routes(toolset):
    script = [
        {"tool_calls": [{"name": "invoice_status", "arguments": {"invoice_id": 2041}}]},
        {
            "tool_calls": [
                {"name": "customer_daily_outgoing", "arguments": {"customer_id": "C-1002", "date": "2026-11-20"}},
                {"name": "vector_search", "arguments": {"query": "daily limit"}},
            ]
        },
        {
            "content": 'Route:\n```json\n{"route": "document", "calls": [{"name": "vector_search", "arguments": {"query": "refunds"}}]}\n```'
        },
        {"content": '{"route": "live", "calls": [{"name": "web_search", "arguments": {"query": "copper price"}}]}'},
        {"content": '{"route": "record", "calls": [{"name": "no_such_tool", "arguments": {}}]}'},
        {"content": '{"route": "none", "calls": []}'},
        {"content": "I am not sure."},
    ]
    with FakeOpenAI(script) as server:
        router = LLMRouter(OpenAIChatModel(ChatConfig(server.base_url, "m")), list(toolset.tools.values()))
        qs = [
            "invoice 2041?",
            "C-1002 over limit?",
            "refunds?",
            "copper today?",
            "how many KYC?",
            "capital of France?",
            "hm",
        ]
        routes = [router.route(q, TODAY) for q in qs]
        sent = server.requests[0]
    assert [(r.kind, r.tool) for r in routes] == [
        ("record", "invoice_status"),
        ("both", "customer_daily_outgoing"),
        ("document", "vector_search"),
        ("live", "web_search"),
        ("record", "sql_query"),
        ("none", None),
        ("none", None),
    ]
    assert routes[1].arguments == {"customer_id": "C-1002", "date": "2026-11-20"}
    assert "no route in the reply" in routes[6].reason
    system = sent["messages"][0]["content"]
    assert "tools" not in sent and "2026-11-20" in system  # the tools are lines of a small prompt
    assert "- invoice_status(invoice_id: integer): Look up one invoice" in system
    assert "- web_search(query: string)" in system and "NOT for" not in system
    assert "Ledgerly" not in system


def test_llm_router_kind_follows_the_calls_where_the_label_contradicts_them(toolset):
    """A small model labels a route "live" or "document" while calling a record tool: the call
    decides. "none" stays none, and "both" with only the record call searches the rule too."""
    script = [
        {"content": '{"route": "live", "calls": [{"name": "invoice_status", "arguments": {"invoice_id": 2041}}]}'},
        {"content": '{"route": "document", "calls": [{"name": "invoice_status", "arguments": {"invoice_id": 7}}]}'},
        {"content": '{"route": "record", "calls": [{"name": "vector_search", "arguments": {"query": "refunds"}}]}'},
        {
            "content": '{"route": "both", "calls": [{"name": "customer_daily_outgoing", '
            '"arguments": {"customer_id": "C-1002", "date": "2026-11-20"}}]}'
        },
        {"content": '{"route": "none", "calls": [{"name": "invoice_status", "arguments": {"invoice_id": 1}}]}'},
    ]
    with FakeOpenAI(script) as server:
        router = LLMRouter(OpenAIChatModel(ChatConfig(server.base_url, "m")), list(toolset.tools.values()))
        qs = ["invoice 2041?", "invoice 7?", "refunds?", "C-1002 over its limit?", "capital of France?"]
        routes = [router.route(q, TODAY) for q in qs]
    assert [(r.kind, r.tool) for r in routes] == [
        ("record", "invoice_status"),
        ("record", "invoice_status"),
        ("document", "vector_search"),
        ("both", "customer_daily_outgoing"),
        ("none", None),
    ]
    assert [c.name for c in routes[3].calls] == ["customer_daily_outgoing", "vector_search"]
    assert routes[3].calls[1].arguments == {"query": "C-1002 over its limit?"}


def test_bfcl_schema_and_arg_checks():
    assert to_json_schema(
        {"type": "dict", "properties": {"x": {"type": "float"}, "t": {"type": "tuple", "items": {"type": "integer"}}}}
    ) == {
        "type": "object",
        "properties": {"x": {"type": "number"}, "t": {"type": "array", "items": {"type": "integer"}}},
    }
    exp = {"side1": [5], "get_area": ["", True], "unit": ["cm", "centimeters"]}
    allowed = {"side1", "get_area", "unit"}
    assert args_acceptable({"side1": 5.0, "unit": "CM"}, exp, allowed)
    assert not args_acceptable({"side1": 5, "unit": "cm", "extra": 1}, exp, allowed)
    assert not args_acceptable({"side1": 5}, exp, allowed)  # unit is required (no "")
    assert not args_acceptable({"side1": 5, "unit": "cm", "get_area": False}, exp, allowed)


def test_bfcl_harness_with_scripted_llm():
    root = shared_dataset("bfcl")
    cases = load_bfcl(root, "multiple", limit=10)
    answers = {c.question: c.expected[0] for c in cases}
    reverse = {c.question: {v: k for k, v in c.names.items()} for c in cases}

    def oracle(body):  # answers with the ground truth's first acceptable values, except case 3: wrong tool
        q = body["messages"][-1]["content"]
        ((name, params),) = answers[q].items()
        if q == cases[3].question:
            other = next(t["function"]["name"] for t in body["tools"] if t["function"]["name"] != reverse[q][name])
            return {"tool_calls": [{"name": other, "arguments": {}}]}
        args = {p: next(v for v in vals if v != "") for p, vals in params.items() if any(v != "" for v in vals)}
        return {"tool_calls": [{"name": reverse[q][name], "arguments": args}]}

    with FakeOpenAI(oracle) as server:
        result = evaluate_bfcl(llm_selector(OpenAIChatModel(ChatConfig(server.base_url, "m"))), cases)
    assert result["cases"] == 10 and result["tsa"] == 0.9 and result["arg_accuracy"] == 0.9
    irr = load_bfcl(root, "irrelevance", limit=5)
    with FakeOpenAI([{"content": "No function fits."}]) as server:
        assert evaluate_bfcl(llm_selector(OpenAIChatModel(ChatConfig(server.base_url, "m"))), irr)["tsa"] == 1.0


def test_bfcl_with_the_llm_routers_json_route():
    from citewise.tools.llm_router import router_selector

    root = shared_dataset("bfcl")
    cases = load_bfcl(root, "parallel_multiple", limit=4)
    reverse = {c.question: {v: k for k, v in c.names.items()} for c in cases}
    answers = {c.question: c.expected for c in cases}

    def oracle(body):  # the ground truth's calls as the router's JSON, in a code fence
        q = body["messages"][-1]["content"]
        calls = [
            {
                "name": reverse[q][name],
                "arguments": {
                    p: next(v for v in vals if v != "") for p, vals in params.items() if any(v != "" for v in vals)
                },
            }
            for e in answers[q]
            for name, params in e.items()
        ]
        return {"content": "```json\n" + json.dumps({"route": "record", "calls": calls}) + "\n```"}

    with FakeOpenAI(oracle) as server:
        result = evaluate_bfcl(router_selector(OpenAIChatModel(ChatConfig(server.base_url, "m"))), cases)
        prompt = server.requests[0]["messages"][0]["content"]
    assert result["cases"] == 4 and result["tsa"] == 1.0 and result["arg_accuracy"] == 1.0
    assert "- web_search(" not in prompt  # BFCL cases offer their own functions only
