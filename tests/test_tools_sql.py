"""SQL guard, read-only engine, record tools, sample DB, web_search adapter."""

from __future__ import annotations

import json
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from citewise.core import CitewiseError, InputError
from citewise.demo import sample_dir
from citewise.tools.base import validate_args
from citewise.tools.records import build_sample_db, load_record_tools, sample_tools_yaml
from citewise.tools.registry import build_toolset
from citewise.tools.sql import SqlGuard, SqlGuardError, SqliteDatabase, SqlQueryTool, parse_db_url

from conftest import RECORD_TABLES as ALLOW, sha256_of as _sha

SECRET = "sk_live_SECRET"


def _counts(path) -> dict:
    conn = sqlite3.connect(path)
    try:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ALLOW + ["api_keys"]}
    finally:
        conn.close()


def test_sample_db_is_built_once_and_deterministically(tmp_path, db_path):
    a = build_sample_db(tmp_path / "a")
    b = build_sample_db(tmp_path / "b")
    assert a.name == b.name == db_path.name and a.name.startswith("records-")
    assert _sha(a) == _sha(b)
    mtime = a.stat().st_mtime_ns
    assert build_sample_db(tmp_path / "a") == a and a.stat().st_mtime_ns == mtime  # not rebuilt
    assert _counts(a) == {"customers": 13, "contracts": 12, "invoices": 60, "transactions": 23, "api_keys": 2}


def test_record_tools_return_hand_placed_rows(tools):
    inv = tools.call("invoice_status", {"invoice_id": 2041})
    assert inv["rows"] == [
        {
            "invoice_id": 2041,
            "customer_id": "C-1002",
            "status": "past_due",
            "amount_usd": 290.0,
            "issued_on": "2026-10-15",
            "due_on": "2026-11-14",
        }
    ]
    # C-1002 on 2026-11-20: 3200 bill pay + 1500 withdrawal + 650 refund (cancelled still counts);
    # the 2000 tax payment, the 1000 own transfer and the 4100 at 23:59:59 the day before do not count.
    out = tools.call("customer_daily_outgoing", {"customer_id": "C-1002", "date": "2026-11-20"})
    assert out["rows"] == [
        {
            "customer_id": "C-1002",
            "plan": "Starter",
            "verified_on": "2025-01-12",
            "date": "2026-11-20",
            "payments": 3,
            "outgoing_usd": 5350.0,
        }
    ]
    # deposits: 4000 + 2750.25 + 1249.75 (23:59:59Z) = 8000.00; the 500 at 00:00:00Z next day is excluded
    assert tools.call("daily_deposits", {"date": "2026-11-20"})["rows"] == [{"payments": 3, "deposited_usd": 8000.0}]
    assert tools.call("daily_deposits", {"date": "2026-11-19"})["rows"] == [{"payments": 2, "deposited_usd": 4000.5}]
    # optional parameter left out is bound as NULL (all statuses)
    assert [r["invoice_id"] for r in tools.call("customer_invoices", {"customer_id": "C-1002"})["rows"]] == [
        2014,
        2005,
        2024,
        2041,
    ]
    assert tools.call("customer_invoices", {"customer_id": "C-1002", "status": "past_due"})["row_count"] == 1


def test_validate_args_messages():
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1},
            "d": {"type": "string", "format": "date"},
            "s": {"type": "string", "enum": ["a", "b"]},
        },
        "required": ["n"],
    }
    assert validate_args({"n": 3, "d": "2026-01-02", "s": "a"}, schema) is None
    assert validate_args({}, schema) == "missing required argument 'n'"
    assert validate_args({"n": True}, schema).startswith("argument 'n' must be integer")
    assert validate_args({"n": 0}, schema) == "argument 'n' must be >= 1, got 0"
    assert validate_args({"n": 1, "d": "2026-1-2"}, schema) == "argument 'd' must be a date YYYY-MM-DD, got '2026-1-2'"
    assert validate_args({"n": 1, "x": 1}, schema) == "unknown argument 'x' (valid: d, n, s)"
    assert validate_args([1], schema) == "arguments must be a JSON object, got list"


def test_guard_accepts_selects_with_ctes_unions_and_subqueries():
    g = SqlGuard.of(ALLOW)
    g.check("WITH c AS (SELECT customer_id FROM customers) SELECT * FROM c JOIN invoices USING (customer_id)")
    g.check("SELECT name FROM customers UNION SELECT plan FROM contracts")
    g.check("SELECT * FROM main.invoices WHERE customer_id IN (SELECT customer_id FROM customers WHERE plan = :p)")
    g.check("SELECT strftime('%Y', issued_on), count(*), round(sum(amount_usd), 2) FROM invoices GROUP BY 1")


def test_attack_set_no_writes_no_off_allowlist_reads(db_path, tools):
    cases = [json.loads(l) for l in (sample_dir() / "sql_attacks.jsonl").read_text().splitlines() if l.strip()]
    assert len(cases) >= 25
    assert {c["category"] for c in cases} >= {
        "stacked",
        "write",
        "comment",
        "allowlist",
        "function",
        "sleep",
        "parameter",
        "pragma",
        "attach",
    }
    before_hash, before_counts = _sha(db_path), _counts(db_path)
    tools["sql_query"].db.timeout_s = 0.3  # the sleep cases must stop fast
    for c in cases:
        obs = tools.call(c["tool"], c["args"])
        assert set(obs) >= {"error", "tool"} and obs["tool"] == c["tool"], (c["id"], obs)
        assert isinstance(obs["error"], str) and obs["error"], c["id"]
        assert SECRET not in json.dumps(obs), c["id"]
    assert _sha(db_path) == before_hash and _counts(db_path) == before_counts
    assert not (db_path.parent / "loot").exists()


def test_engine_layer_alone_refuses_writes_and_off_allowlist(db_path, monkeypatch):
    """With the static guard switched off, mode=ro + authorizer still refuse (defence in depth)."""
    db = SqliteDatabase(db_path, ALLOW)
    monkeypatch.setattr(SqlGuard, "check", lambda self, sql: None)
    before = _sha(db_path)
    for sql in [
        "SELECT secret FROM api_keys",
        "SELECT sql FROM sqlite_master",
        "SELECT load_extension('x')",
        "SELECT randomblob(10)",
        "DELETE FROM invoices",
        "UPDATE customers SET plan = 'Pro'",
        "DROP TABLE invoices",
        "PRAGMA query_only = OFF",
        "ATTACH DATABASE ':memory:' AS x",
        "SELECT name FROM customers UNION SELECT secret FROM api_keys",
    ]:
        with pytest.raises(SqlGuardError) as e:
            db.query(sql)
        assert SECRET not in str(e.value)
    assert _sha(db_path) == before
    assert db.query("SELECT count(*) AS n FROM customers")["rows"] == [{"n": 13}]


def test_parameters_are_bound_not_interpolated(tools):
    obs = tools.call(
        "sql_query",
        {"sql": "SELECT customer_id FROM customers WHERE customer_id = :id", "params": {"id": "C-1002' OR '1'='1"}},
    )
    assert obs["rows"] == [] and obs["row_count"] == 0
    obs = tools.call(
        "sql_query", {"sql": "SELECT customer_id FROM customers WHERE customer_id = :id", "params": {"id": "C-1002"}}
    )
    assert obs["rows"] == [{"customer_id": "C-1002"}]
    assert "error" in tools.call("sql_query", {"sql": "SELECT * FROM customers WHERE customer_id = :id"})


def test_row_cap_and_timeout(db_path):
    db = SqliteDatabase(db_path, ALLOW, timeout_s=0.2, max_rows=5)
    out = db.query("SELECT invoice_id FROM invoices ORDER BY invoice_id")
    assert out["row_count"] == 5 and out["truncated"] is True and out["rows"][0] == {"invoice_id": 2001}
    tool = SqlQueryTool(db)
    obs = tool.call({"sql": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r"})
    assert obs == {"error": "statement timed out after 0.2s", "tool": "sql_query"}


def test_record_yaml_errors_name_file_and_tool(tmp_path, db_path):
    bad = tmp_path / "tools.yaml"
    bad.write_text(
        "allowlist: [invoices]\ntools:\n  - name: wipe\n    description: x\n"
        "    parameters: {type: object, properties: {}}\n    sql: DELETE FROM invoices\n"
    )
    with pytest.raises(InputError, match=r"tools.yaml: tool 'wipe': SQL refused by the guard: only SELECT"):
        load_record_tools(bad, db_path)
    bad.write_text(
        "allowlist: [invoices]\ntools:\n  - name: q\n    description: x\n"
        "    parameters: {type: object, properties: {}}\n    sql: SELECT * FROM invoices WHERE invoice_id = :id\n"
    )
    with pytest.raises(InputError, match=r"undeclared parameters \['id'\]"):
        load_record_tools(bad, db_path)
    assert len(load_record_tools(sample_tools_yaml(), db_path)) == 8


def test_db_urls():
    assert str(parse_db_url("sqlite:////tmp/x.db")) == "/tmp/x.db"
    assert str(parse_db_url("sqlite:///rel/x.db")) == "rel/x.db"
    assert str(parse_db_url("/tmp/y.db")) == "/tmp/y.db"
    with pytest.raises(CitewiseError, match="only sqlite"):
        parse_db_url("postgresql://u@h/db")
    with pytest.raises(CitewiseError, match="no such database file"):
        SqliteDatabase("/nonexistent/x.db", ALLOW)


class _Search(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        if "fail" in self.path:
            self.send_response(503)
            self.end_headers()
            return
        body = json.dumps(
            {
                "results": [
                    {"title": "T1", "url": "http://a", "snippet": "s1"},
                    {"title": "T2", "url": "http://b", "snippet": "s2"},
                ]
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_web_search_off_unless_configured_and_local_server(monkeypatch, db_path):
    monkeypatch.delenv("CITEWISE_WEB_SEARCH_URL", raising=False)
    assert "web_search" not in build_toolset(str(db_path), sample_fallback=False).names()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Search)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/search"
        monkeypatch.setenv("CITEWISE_WEB_SEARCH_URL", url)
        ts = build_toolset(str(db_path), sample_fallback=False)
        obs = ts.call("web_search", {"query": "ledgerly", "k": 1})
        assert obs == {
            "tool": "web_search",
            "query": "ledgerly",
            "untrusted": True,
            "results": [{"title": "T1", "url": "http://a", "snippet": "s1"}],
        }
        monkeypatch.setenv("CITEWISE_WEB_SEARCH_URL", url + "/fail")
        obs = build_toolset(str(db_path), sample_fallback=False).call("web_search", {"query": "x"})
        assert obs == {"error": f"{url}/fail: HTTP 503", "tool": "web_search", "retryable": True}
    finally:
        server.shutdown()
        server.server_close()
