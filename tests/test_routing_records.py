"""Routing records and live questions for any records database (issue 33): the design documents'
examples, the no_tool and live outcomes, the both route with a rule's exception, text-to-SQL,
the agent through ask, and the Chinook example's routing set."""

from __future__ import annotations

import datetime as dt
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from citewise.api import AskOptions, Citewise
from citewise.core import InputError, ReasonCode
from citewise.settings import load_settings
from citewise.tools.records import build_sample_db
from citewise.tools.registry import build_toolset
from citewise.tools.router import RuleRouter, index_probe
from citewise.tools.rules import find_exception, find_general_value, find_rule_value
from citewise.tools.tsa import evaluate_router, load_routing_set

from conftest import open_minilm_index

TODAY = dt.date(2026, 11, 20)
CHINOOK = Path(__file__).resolve().parents[1] / "examples" / "chinook"


@pytest.fixture(scope="module")
def sample_router(sample_index, tmp_path_factory):
    ts = build_toolset(str(build_sample_db(tmp_path_factory.mktemp("db"))), index=sample_index, sample_fallback=False)
    return RuleRouter(list(ts.tools.values()), sample_index.embedder, index_probe(sample_index))


@pytest.fixture(scope="module")
def sample_cw(sample_index):
    return Citewise(sample_index)  # the demo's settings: sample records and their named queries


# -- the design documents' example questions ----------------------------------------------------
@pytest.mark.parametrize(
    "question, kind, tool, args, missing",
    [
        # RAG vs tools: the router table's five rows
        ("How many dollars were deposited today?", "record", "daily_deposits", {"date": "2026-11-20"}, []),
        ("What is the daily withdrawal limit rule?", "document", "vector_search", None, []),
        (
            "Has this customer exceeded the limit?",
            "both",
            "customer_daily_outgoing",
            {"date": "2026-11-20"},
            ["customer_id"],
        ),
        ("Why did we make this decision last year?", ("document", "none"), None, None, []),
        ("How many KYC applications are pending?", "record", "sql_query", {}, []),
        # function calling: the tool-selection table's four rows
        ("How many orders in March?", "record", "sql_query", {}, []),
        ("What does the returns policy say?", ("document", "none"), None, None, []),
        ("What is the price of copper today?", "live", "web_search", None, []),
        ("Sum the Q3 contracts", "record", "sql_query", {}, []),
        # and the others
        ("How many contracts above 100k USD did we sign in 2025?", "record", "sql_query", {}, []),
        ("What is the EUR to USD exchange rate today?", "live", "web_search", None, []),
        (
            "Has customer C-1002 exceeded the limit?",
            "both",
            "customer_daily_outgoing",
            {"customer_id": "C-1002", "date": "2026-11-20"},
            [],
        ),
    ],
)
def test_design_document_examples_route_by_kind(sample_router, question, kind, tool, args, missing):
    r = sample_router.route(question, TODAY)
    assert r.kind in (kind if isinstance(kind, tuple) else (kind,)), r
    if tool is not None:
        assert r.tool == tool, r
    else:
        assert r.tool in (None, "vector_search"), r  # never a record tool
    if args is not None:
        assert r.arguments == args
    assert r.missing == missing


def test_copper_kyc_and_contracts_are_never_answered_from_documents(sample_cw):
    copper = sample_cw.ask("What is the price of copper today?")
    assert copper.outcome == "abstained" and copper.reason.code == ReasonCode.LIVE_VALUE and not copper.tool_calls
    for q in (
        "How many KYC applications are pending?",
        "How many contracts above 100k USD did we sign in 2025?",
        "Sum the Q3 contracts",
    ):
        a = sample_cw.ask(q)
        assert a.outcome == "no_tool" and a.reason.code == ReasonCode.NO_TOOL and not a.citations, (q, a.text)
        assert a.text.startswith("This is a question about records; no configured query answers it.")
        assert "records.templates" in a.text and "llm.base_url" in a.text
    who = sample_cw.ask("Has this customer exceeded the limit?")
    assert who.outcome == "abstained" and who.reason.code == ReasonCode.MISSING_ARGUMENT
    assert who.reason.fields == {"tool": "customer_daily_outgoing", "names": "customer_id"}


class _WebSearch:
    """A local search service in the format WebSearchTool expects."""

    def __enter__(self):
        self.queries = []
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                outer.queries.append(self.path)
                body = json.dumps(
                    {
                        "results": [
                            {"title": "Copper spot", "url": "http://127.0.0.1/copper", "snippet": "Copper 4.12 USD/lb"}
                        ]
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/search"
        return self

    def __exit__(self, *exc):
        self.server.shutdown()


def test_live_question_goes_to_the_configured_web_search_not_a_records_tool(sample_index):
    with _WebSearch() as web:
        settings = load_settings(sample_index.path, {"routing.web_search_url": web.url})
        a = Citewise(sample_index, settings).ask("What is the price of copper today?")
    assert a.outcome == "answered" and a.text.endswith("[tool:web_search]") and "Copper 4.12 USD/lb" in a.text
    assert len(web.queries) == 1 and "copper" in web.queries[0].lower()


# -- the both route: limit, exception and value, compared in code --------------------------------
def test_both_route_applies_the_new_account_exception_from_the_passage(sample_cw):
    # C-1013 was verified on 2026-11-10 and sent 3,000 USD on 2026-11-20: the help page halves the
    # Starter limit (5,000 -> 2,500 USD) in the first 30 days after verification
    a = sample_cw.ask("Has customer C-1013 exceeded the limit on 2026-11-20?")
    assert a.outcome == "answered" and a.text.startswith("Yes. ")
    assert "outgoing_usd = 3,000.00 USD, plan Starter [tool:customer_daily_outgoing]" in a.text
    assert (
        "The daily outgoing-payment limit on the Starter plan is 5,000.00 USD [doc:help/billing/daily-transaction-limits]"
        in a.text
    )
    assert (
        "Exception: in the first 30 days after business verification it is 2,500.00 USD (verified_on 2026-11-10, as of 2026-11-20)"
        in a.text
    )
    assert "Computed: 3,000.00 USD > 2,500.00 USD: exceeded by 500.00 USD." in a.text
    assert a.evidence["comparison"]["exception"]["field"] == "verified_on"
    src = (
        Path(__file__).resolve().parents[1] / "src/citewise/sample/corpus/help/billing/daily-transaction-limits.md"
    ).read_text()
    cited = [src[c.start : c.end] for c in a.citations]
    assert cited[0].startswith("| Starter | 5,000 USD |") and cited[1].startswith(
        "- **New accounts.** For the first 30 days"
    )
    old = sample_cw.ask("Is C-1009 over its daily limit on 2026-11-20?")  # verified in 2025: the normal limit
    assert (
        old.text.startswith("No. ")
        and "Computed: 1,250.00 USD <= 5,000.00 USD: 3,750.00 USD remaining (25.0% used)." in old.text
    )
    assert "Exception" not in old.text


PLANS = """| Plan | Daily limit |
|---|---|
| Starter | 5,000 USD |
| Pro | 25,000 USD |

- **New accounts.** For the first 30 days after business verification, every plan has half its normal limit.
"""


def test_rule_reader_on_literal_passages():
    assert find_rule_value(PLANS, "Pro") == (
        25000.0,
        PLANS.index("| Pro"),
        PLANS.index("| Pro") + len("| Pro | 25,000 USD |"),
    )
    row = {"plan": "Pro", "verified_on": "2026-11-01", "date": "2026-11-20"}
    exc = find_exception(
        PLANS,
        key="Pro",
        keys=("Plan", "Starter", "Pro"),
        unit="USD",
        normal=25000.0,
        row=row,
        as_of=dt.date(2026, 11, 20),
    )
    assert (exc.value, exc.days, exc.field, exc.applies) == (12500.0, 30, "verified_on", True)
    assert not find_exception(
        PLANS, key="Pro", keys=(), unit="USD", normal=25000.0, row=row, as_of=dt.date(2026, 12, 1)
    ).applies
    staff = (
        "| Job title | Most customers |\n|---|---|\n| Sales Support Agent | 20 customers |\n\n"
        "In the first 180 days after their hire date, a Sales Support Agent may be assigned at most 10 customers.\n"
    )
    new = {"title": "Sales Support Agent", "hire_date": "2026-10-01", "invoice_date": "2026-01-01"}
    exc = find_exception(staff, key="Sales Support Agent", keys=(), unit="customers", normal=20, row=new, as_of=TODAY)
    assert (exc.value, exc.field, exc.applies) == (10.0, "hire_date", True)
    review = (
        "An order whose total is above **15.00 USD** is held for review.\n\n"
        "During the first 90 days after a customer's first order, every order above 10.00 USD is held for review."
    )
    assert find_general_value(review, "USD").value == 15.0
    order = {"total": 13.86, "invoice_date": "2007-02-11", "first_order_date": "2007-01-01"}
    exc = find_exception(review, key=None, keys=(), unit="USD", normal=15.0, row=order, as_of=dt.date(2007, 2, 11))
    assert (exc.value, exc.field, exc.applies) == (10.0, "first_order_date", True)


# -- a second records setup: Chinook --------------------------------------------------------------
@pytest.fixture(scope="module")
def chinook(tmp_path_factory, monkeypatch_module):
    monkeypatch_module.chdir(CHINOOK.parents[1])  # the example's settings name paths from the repository root
    monkeypatch_module.setenv("CITEWISE_CACHE", str(tmp_path_factory.mktemp("cache")))
    idx = open_minilm_index(tmp_path_factory.mktemp("chinook-index"))
    assert not idx.ingest(CHINOOK / "docs").errors
    settings = load_settings(None, env={"CITEWISE_CONFIG": str(CHINOOK / "citewise.toml")})
    return Citewise(idx, settings)


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_chinook_routing_set_rule_router(chinook):
    cases = load_routing_set(CHINOOK / "routing.jsonl")
    assert len(cases) >= 60 and {c.kind for c in cases} == {"record", "both", "live", "document", "none"}
    ts = chinook._toolset(chinook.records_database())
    router = RuleRouter(
        list(ts.tools.values()),
        chinook.index.question_embedder,
        index_probe(chinook.index),
        catalog=chinook._catalog(chinook.records_database()),
    )
    report = evaluate_router(router, cases)
    assert report.overall["route_accuracy"] >= 0.95, report.as_dict()["errors"]
    assert report.overall["wrong_source"] == 0, report.as_dict()["errors"]
    assert report.per_kind["live"]["route_accuracy"] == 1.0 and report.per_kind["both"]["tsa"] == 1.0


def test_chinook_answers_records_rules_and_no_tool(chinook):
    a = chinook.ask("Did invoice 12 have to be held for review?")  # 13.86 USD, 41 days after the first order
    assert a.text.startswith("Yes. ") and "total = 13.86 USD [tool:invoice_details]" in a.text
    assert "The order review threshold is 15.00 USD [doc:policies/order-review]" in a.text
    assert (
        "Exception: in the first 90 days after a customer's first order it is 10.00 USD (first_order_date 2007-01-01, as of 2007-02-11)"
        in a.text
    )
    assert "Computed: 13.86 USD > 10.00 USD: exceeded by 3.86 USD." in a.text
    jane = chinook.ask("Has Jane Peacock exceeded her customer cap?")
    assert "Computed: 21 customers > 20 customers: exceeded by 1 customers." in jane.text
    sales = chinook.ask("What were total sales in March 2010?")
    assert sales.text == "year: 2010; month: 3; orders: 7; sales_usd: 37.62 [tool:sales_in_period]"
    brazil = chinook.ask("How many customers are in Brazil?")  # sales_by_country counts orders, not customers
    assert brazil.outcome == "no_tool"
    march = chinook.ask("How many orders in March?")
    assert march.reason.code == ReasonCode.MISSING_ARGUMENT and march.reason.fields["names"] == "year"


def test_text_to_sql_through_the_guarded_sql_query(chinook):
    replies = [
        {"content": "```sql\nDELETE FROM customers\n```"},  # refused by the guard: one repair
        {"content": "```sql\nSELECT COUNT(*) AS customers FROM customers WHERE country = 'Brazil';\n```"},
    ]
    with FakeOpenAI(replies) as server:
        settings = load_settings(
            None,
            {"llm.base_url": server.base_url, "llm.model": "m"},
            env={"CITEWISE_CONFIG": str(CHINOOK / "citewise.toml")},
        )
        cw = Citewise(chinook.index, settings)
        a = cw.ask("How many customers are in Brazil?")
        prompt = server.requests[0]["messages"][0]["content"]
        repair = server.requests[1]["messages"][-1]["content"]
    assert a.outcome == "answered"
    assert (
        a.text
        == "customers: 5 [tool:sql_query] (SQL: SELECT COUNT(*) AS customers FROM customers WHERE country = 'Brazil')"
    )
    assert a.tool_calls == [
        {
            "tool": "sql_query",
            "arguments": {"sql": "SELECT COUNT(*) AS customers FROM customers WHERE country = 'Brazil'"},
            "error": None,
            "rows": 1,
        }
    ]
    assert "customers(customer_id INTEGER, first_name TEXT" in prompt and "'Brazil'" in prompt
    assert repair.startswith("That failed: only SELECT statements are allowed, got DELETE")


def test_column_allowlist_is_enforced_by_the_engine(chinook, tmp_path):
    from dataclasses import replace

    from citewise.tools.registry import records_toolset

    records = replace(chinook.settings.records, columns={"customers": ["customer_id", "country"]})
    ts = records_toolset(records)
    assert ts.call(
        "sql_query", {"sql": "SELECT country, COUNT(*) AS n FROM customers GROUP BY country ORDER BY n DESC LIMIT 1"}
    )["rows"] == [{"country": "USA", "n": 13}]
    obs = ts.call("sql_query", {"sql": "SELECT email FROM customers"})
    assert obs["error"].startswith("refused by the read-only engine")
    assert (
        "customers(customer_id, country);" in ts["sql_query"].description
    )  # the schema shown lists allowed columns only


def test_agent_is_reachable_from_ask_and_its_answer_is_citation_checked(chinook):
    def script(body):
        if not any(m["role"] == "tool" for m in body["messages"]):
            return {
                "tool_calls": [
                    {"name": "vector_search", "arguments": {"query": "review threshold"}},
                    {"name": "sql_query", "arguments": {"sql": "SELECT total FROM invoices WHERE invoice_id = 404"}},
                ]
            }
        return {
            "content": "Invoice 404 totals 25.86 USD [tool:sql_query]. Orders above 15.00 USD are held for review "
            "[doc:policies/order-review]. So it was held. It was reviewed by Nancy [doc:made-up]."
        }

    with FakeOpenAI(script) as server:
        settings = load_settings(
            None,
            {"llm.base_url": server.base_url, "llm.model": "m"},
            env={"CITEWISE_CONFIG": str(CHINOOK / "citewise.toml")},
        )
        a = Citewise(chinook.index, settings).ask("Did invoice 404 need review?", options=AskOptions(agent=True))
        first = server.requests[0]
    assert a.generator == "agent" and a.outcome == "answered"
    # the sentence check (citewise.answer.agent_check) writes each kept sentence's marker after it
    assert a.text == (
        "Invoice 404 totals 25.86 USD. [tool:sql_query] Orders above 15.00 USD are held for review. "
        "[doc:policies/order-review]"
    )
    assert a.dropped == ["So it was held.", "It was reviewed by Nancy."] and a.fabricated == ["doc:made-up"]
    assert a.notes == [
        "Withdrawn 2 sentences of the model's answer that no source supports: \u201cSo it was held.\u201d; "
        "\u201cIt was reviewed by Nancy.\u201d.",
        "Ignored citation marker naming no source: [doc:made-up].",
    ]
    assert [c.doc_id for c in a.citations] == ["policies/order-review"] and a.citations[
        0
    ].title == "Order review policy"
    assert {t["tool"] for t in a.tool_calls} == {"vector_search", "sql_query"}
    names = {t["function"]["name"] for t in first["tools"]}
    assert {"vector_search", "sql_query", "invoice_details", "rep_workload"} <= names
    assert "Ledgerly" not in first["messages"][0]["content"]


def test_agent_without_an_llm_is_a_clear_error(chinook):
    from citewise.core import CitewiseError

    with pytest.raises(CitewiseError, match="the agent needs an LLM: set llm.base_url and llm.model"):
        chinook.ask("Did invoice 404 need review?", options=AskOptions(agent=True))


def test_records_settings_entities_and_columns(tmp_path):
    p = tmp_path / "citewise.toml"
    p.write_text(
        "[records]\ndatabase = 'r.db'\n[records.entities]\ncustomer_id = 'C-[0-9]{4}'\n"
        "[records.columns]\ncustomers = ['customer_id', 'plan']\n[routing]\nagent = true\n"
    )
    s = load_settings(None, env={"CITEWISE_CONFIG": str(p)})
    assert s.records.entities == {"customer_id": "C-[0-9]{4}"} and s.records.columns == {
        "customers": ["customer_id", "plan"]
    }
    assert s.routing.agent is True and s.source("records.entities") == str(p)
    p.write_text("[records.columns]\ncustomers = 3\n")
    with pytest.raises(InputError, match="setting 'records.columns': expected a list"):
        load_settings(None, env={"CITEWISE_CONFIG": str(p)})
    from citewise.tools.catalog import RecordsCatalog
    from citewise.tools.question import load_cues

    with pytest.raises(InputError, match=r"records.entities: 'customer_id': not a regular expression"):
        RecordsCatalog([], load_cues(), None, {"customer_id": "C-[0-9"})


def test_cues_file_errors_name_the_key(tmp_path):
    from citewise.tools.question import load_cues

    from citewise.tools.question import DEFAULT_CUES

    p = tmp_path / "cues.yaml"
    p.write_text(DEFAULT_CUES.read_text().replace("listing: [list, list the, show, show me]", "listing: 3"))
    with pytest.raises(InputError, match=r"cues.yaml: 'listing' must be a list of phrases"):
        load_cues(p)


def test_eval_tools_runs_a_routing_set_with_its_settings_file(chinook):
    from typer.testing import CliRunner

    from citewise.cli import app

    res = CliRunner().invoke(
        app,
        [
            "eval",
            "tools",
            "--routing",
            str(CHINOOK / "routing.jsonl"),
            "--index",
            str(chinook.index.path),
            "--config",
            str(CHINOOK / "citewise.toml"),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    routers = {r["router"]: r for r in json.loads(res.stdout)["routers"]}
    assert routers["rule"]["overall"]["route_accuracy"] >= 0.95 and routers["rule"]["overall"]["wrong_source"] == 0
    assert routers["embedding"]["overall"]["wrong_source"] > 0  # the baseline sends live questions to record tools


def test_llm_router_setting_routes_ask_through_the_model(chinook):
    reply = {
        "content": '{"route": "record", "calls": [{"name": "sales_in_period", "arguments": {"year": 2010, "month": 3}}]}'
    }
    with FakeOpenAI([reply]) as server:
        settings = load_settings(
            None,
            {"llm.base_url": server.base_url, "llm.model": "m", "routing.router": "llm", "routing.sql": False},
            env={"CITEWISE_CONFIG": str(CHINOOK / "citewise.toml")},
        )
        a = Citewise(chinook.index, settings).ask("What were total sales in March 2010?")
        prompt = server.requests[0]["messages"][0]["content"]
    assert a.text == "year: 2010; month: 3; orders: 7; sales_usd: 37.62 [tool:sales_in_period]"
    assert "- sales_in_period(year: integer, month: integer): Number of orders and total sales" in prompt
