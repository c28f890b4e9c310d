"""Issue 13 (robustness) for tools: size limits under the timeout, 64-bit integers, deep nesting,
ECMA `$` in patterns, and every failure an error observation (Python and CLI, never a traceback)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from citewise.tools.base import FunctionTool, canonical_args, schema_regex, validate_args
from citewise.tools.registry import ToolSet
from citewise.tools.sql import MAX_VALUE_BYTES, SqlGuard, SqlGuardError, SqliteDatabase, SqlQueryTool

from conftest import RECORD_TABLES as ALLOW, sha256_of as _sha


# A 64 KiB string in 12 doublings, then replace() that doubles it again and again: without a length
# limit the 12th round builds 256 MiB in one VM step, between two progress-handler checks.
GROWTH = (
    "WITH RECURSIVE d(i, s) AS (SELECT 0, 'abababababababab' UNION ALL SELECT i + 1, s || s FROM d WHERE i < 12) "
    "SELECT length(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace("
    "s, 'a', 'aa'), 'a', 'aa'), 'a', 'aa'), 'a', 'aa'), 'a', 'aa'), 'a', 'aa'), 'a', 'aa'), 'a', 'aa'), 'a', 'aa'), "
    "'a', 'aa'), 'a', 'aa'), 'a', 'aa')) AS n FROM d WHERE i = 12"
)


def test_big_string_growth_hits_the_length_limit_fast(db_path, tools):
    before = _sha(db_path)
    t0 = time.monotonic()
    obs = tools.call("sql_query", {"sql": GROWTH})
    assert time.monotonic() - t0 < 2.0
    assert obs == {
        "error": f"a value is larger than the {MAX_VALUE_BYTES:,}-byte limit (string or blob too big)",
        "tool": "sql_query",
    }
    # under the limit the same construction works (four rounds: 64 KiB -> 8 * 32 KiB + 32 KiB = 288 KiB)
    ok = tools.call(
        "sql_query",
        {"sql": GROWTH.replace("replace(" * 12, "replace(" * 4).replace(", 'a', 'aa')" * 12, ", 'a', 'aa')" * 4)},
    )
    assert ok["rows"] == [{"n": 32768 * 16 + 32768}]
    assert _sha(db_path) == before


def test_engine_limits_hold_without_the_static_guard(db_path, monkeypatch):
    """The issue's examples, run with the guard switched off: the engine alone stops them in time."""
    db = SqliteDatabase(db_path, ALLOW, timeout_s=2.0)
    monkeypatch.setattr(SqlGuard, "check", lambda self, sql: None)
    before = _sha(db_path)
    for sql, msg in [
        ("SELECT length(replace(hex(zeroblob(100000000)),'0','ab'))", "refused by the read-only engine"),
        (GROWTH, "byte limit"),
        ("SELECT length(printf('%.*c', 2000000, 'x'))", None),
    ]:
        t0 = time.monotonic()
        if msg is None:  # printf past the limit returns NULL (SQLite's own behaviour), quickly
            assert db.query(sql)["rows"][0] == {"length(printf('%.*c', 2000000, 'x'))": None}
        else:
            with pytest.raises(SqlGuardError, match=msg):
                db.query(sql)
        assert time.monotonic() - t0 < 2.0, sql
    assert _sha(db_path) == before


def test_printf_needs_a_literal_format_with_small_widths(tools):
    cases = {
        "SELECT length(printf('%.*c', 1000000000, 'x'))": "printf: '*' width or precision is not allowed",
        "SELECT printf('%!.999999999c', 'x')": "printf: width or precision 999999999 is above 1000",
        "SELECT format('%5000d', 1)": "format: width or precision 5000 is above 1000",
        "SELECT printf(name || '%d', 1) FROM customers": "printf: the format must be a string literal",
    }
    for sql, message in cases.items():
        t0 = time.monotonic()
        assert tools.call("sql_query", {"sql": sql}) == {"error": message, "tool": "sql_query"}, sql
        assert time.monotonic() - t0 < 1.0
    obs = tools.call("sql_query", {"sql": "SELECT printf('%%5000d|%8.2f|%-4s|', 1234.5678, 'ab') AS s"})
    assert obs["rows"] == [{"s": "%5000d| 1234.57|ab  |"}]


def test_integers_beyond_64_bits_are_error_observations(tools):
    assert tools.call("sql_query", {"sql": "SELECT :n AS n", "params": {"n": 2**64}}) == {
        "error": "parameter 'n' is outside the 64-bit integer range",
        "tool": "sql_query",
    }
    assert tools.call("sql_query", {"sql": "SELECT :n AS n", "params": {"n": -(2**63)}})["rows"] == [{"n": -(2**63)}]
    assert (
        tools.call("sql_query", {"sql": "SELECT :x AS x", "params": {"x": float("inf")}})["error"]
        == "parameter 'x' must be a finite number"
    )
    assert tools.call("invoice_status", {"invoice_id": 10**30}) == {
        "error": "parameter 'invoice_id' is outside the 64-bit integer range",
        "tool": "invoice_status",
    }
    assert tools.call("invoice_status", {"invoice_id": 2**63 - 1})["rows"] == []
    # an integer past Python's 4,300-digit str() limit still gets a message, not a ValueError
    obs = tools.call("customer_profile", {"customer_id": 10**5000})
    assert obs == {"error": "argument 'customer_id' must be string, got int <int>", "tool": "customer_profile"}
    # an infinite value read from SQL is written as JSON-safe text
    assert tools.call("sql_query", {"sql": "SELECT 1e999 AS big, -1e999 AS small"})["rows"] == [
        {"big": "Infinity", "small": "-Infinity"}
    ]


def test_deeply_nested_sql_is_an_error_observation(tools):
    for sql in [
        "SELECT " + "(" * 1900 + "1" + ")" * 1900,
        "SELECT " + "NOT " * 900 + "1",
        "SELECT " + "-(" * 1000 + "1" + ")" * 1000,
    ]:
        obs = tools.call("sql_query", {"sql": sql})
        assert obs == {"error": "query is nested too deeply", "tool": "sql_query"}, obs
    # moderate nesting still runs (sqlglot's parser runs out of Python stack at about 45 levels)
    assert tools.call("sql_query", {"sql": "SELECT " + "(" * 30 + "7" + ")" * 30 + " AS v"})["rows"] == [{"v": 7}]


def test_pattern_dollar_is_end_of_string(tools):
    assert schema_regex("^C-[0-9]{4}$").pattern == r"^C-[0-9]{4}\Z"
    assert schema_regex(r"[$]x\$").pattern == r"[$]x\$"  # in a class or escaped: a literal dollar
    assert schema_regex("[]$]|a$").pattern == r"[]$]|a\Z"
    schema = {"type": "object", "properties": {"c": {"type": "string", "pattern": "^C-[0-9]{4}$"}}}
    assert validate_args({"c": "C-1002"}, schema) is None
    assert validate_args({"c": "C-1002\n"}, schema) == "argument 'c' does not match ^C-[0-9]{4}$: 'C-1002\\n'"
    obs = tools.call("customer_profile", {"customer_id": "C-1002\n"})
    assert obs == {
        "error": "argument 'customer_id' does not match ^C-[0-9]{4}$: 'C-1002\\n'",
        "tool": "customer_profile",
    }
    assert tools.call("customer_profile", {"customer_id": "C-1002"})["row_count"] == 1


def test_validate_args_never_raises_on_bad_schemas_or_values():
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": "x"}, "p": {"type": "string", "pattern": "("}},
    }
    assert validate_args({"n": 3}, schema).startswith(
        "arguments: cannot be checked against the tool's schema (TypeError"
    )
    assert validate_args({"p": "a"}, schema).startswith("argument 'p': the tool's schema pattern '(' is invalid")
    assert validate_args({1: "a"}, schema) == "arguments must have string keys"
    assert canonical_args({"b": 2**70, "a": [float("nan"), 1]}) == '{"a":["nan",1],"b":{"$int":"0x400000000000000000"}}'
    assert canonical_args({"n": 10**5000}).startswith('{"n":{"$int":"0x')


def test_toolset_call_never_raises(tools):
    assert tools.call("nope", {})["error"].startswith("unknown tool 'nope' (valid: sql_query, invoice_status")
    assert tools.call("sql_query", "SELECT 1") == {
        "error": "arguments must be a JSON object, got str",
        "tool": "sql_query",
    }
    assert tools.call("sql_query", {}) == {"error": "missing required argument 'sql'", "tool": "sql_query"}
    assert tools.call("sql_query", {"sql": 5}) == {
        "error": "argument 'sql' must be string, got int 5",
        "tool": "sql_query",
    }
    assert tools.call("sql_query", {"sql": "SELECT :a", "params": [1]}) == {
        "error": "argument 'params' must be object, got list [1]",
        "tool": "sql_query",
    }
    assert tools.call("invoice_status", {"invoice_id": "20x1"}) == {
        "error": "argument 'invoice_id' must be integer, got str \"20x1\"",
        "tool": "invoice_status",
    }
    # a quoted integer (as small models write it) reaches the tool as the integer its schema declares
    quoted, plain = (
        tools.call("invoice_status", {"invoice_id": " 2041"}),
        tools.call("invoice_status", {"invoice_id": 2041}),
    )
    assert quoted == plain and "error" not in plain

    def broken(**kw):
        raise RuntimeError("boom")

    class Rude:  # breaks the seam: raises from call()
        name, description, parameters = "rude", "x", {"type": "object", "properties": {}}

        def call(self, args):
            raise KeyError("k")

    ts = ToolSet([FunctionTool("f", "x", {"type": "object", "properties": {}}, broken), Rude()])
    assert ts.call("f", {}) == {"error": "RuntimeError: boom", "tool": "f", "retryable": True}
    assert ts.call("rude", {}) == {"error": "KeyError: 'k'", "tool": "rude"}


def test_sql_query_direct_python_errors_are_refusals(db_path):
    db = SqliteDatabase(db_path, ALLOW)
    with pytest.raises(SqlGuardError, match="parameters must be an object"):
        db.query("SELECT :a", [1])  # type: ignore[arg-type]
    tool = SqlQueryTool(db)
    assert tool.call({"sql": "SELECT :a AS a", "params": {"a": True}}) == {
        "error": "parameter 'a' must be a string, number or null",
        "tool": "sql_query",
    }


def test_cli_tools_call_failures_exit_1_with_an_observation(db_path, tmp_path):
    env = {**os.environ, "CITEWISE_CACHE": str(tmp_path)}
    env.pop("CITEWISE_WEB_SEARCH_URL", None)

    def call(name, args):
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "citewise.cli",
                "tools",
                "call",
                name,
                "--args",
                args,
                "--db",
                str(db_path),
                "--json",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert p.returncode == 1 and "Traceback" not in p.stderr + p.stdout, (p.stdout, p.stderr)
        return json.loads(p.stdout)

    assert call("sql_query", "{oops") == {
        "error": "--args: not JSON (Expecting property name enclosed in double quotes at column 2)",
        "tool": "sql_query",
    }
    assert call("invoice_status", "[2041]") == {
        "error": "arguments must be a JSON object, got list",
        "tool": "invoice_status",
    }
    assert call("sql_query", json.dumps({"sql": "SELECT :n", "params": {"n": 2**64}})) == {
        "error": "parameter 'n' is outside the 64-bit integer range",
        "tool": "sql_query",
    }
    obs = call("invoice_status", '{"invoice_id": ' + "9" * 5000 + "}")
    assert obs["tool"] == "invoice_status" and obs["error"].startswith(
        "--args: not usable JSON (ValueError: Exceeds the limit"
    )


def test_both_route_with_a_null_record_value_abstains_instead_of_crashing():
    from citewise.tools.pipeline import _answer_from_tool
    from citewise.tools.router import PlannedCall

    class Tools(dict):
        pass

    class Rec:
        policy = {
            "query": "daily limit",
            "key_field": "plan",
            "value_field": "outgoing_usd",
            "rule": "daily outgoing limit",
        }

    call = PlannedCall("customer_daily_outgoing", {"customer_id": "C-1002", "date": "2026-11-20"})
    obs = {
        "tool": call.name,
        "rows": [{"customer_id": "C-1002", "plan": "Starter", "outgoing_usd": None}],
        "row_count": 1,
    }
    ans = _answer_from_tool("both", call, obs, Tools({call.name: Rec()}), index=None)
    assert ans.outcome == "abstained"
    assert ans.text == (
        "The records tool customer_daily_outgoing returned no usable 'plan' and 'outgoing_usd' for "
        "customer_id=C-1002, date=2026-11-20; I cannot check the daily outgoing limit. [tool:customer_daily_outgoing]"
    )


def test_bfcl_loader_names_file_and_line_for_malformed_entries(tmp_path):
    from citewise.core import InputError
    from citewise.tools.bfcl import load_bfcl

    good = {
        "id": "m_0",
        "question": [[{"role": "user", "content": "hi"}]],
        "function": [{"name": "f", "parameters": {"type": "dict", "properties": {}}}],
    }
    bad_funcs = {**good, "id": "m_1", "function": [{"description": "no name"}]}
    (tmp_path / "BFCL_v4_multiple.json").write_text(json.dumps(good) + "\n" + json.dumps(bad_funcs) + "\n")
    with pytest.raises(InputError) as e:
        load_bfcl(tmp_path, "multiple")
    assert str(e.value) == f"{tmp_path / 'BFCL_v4_multiple.json'}:2: not a BFCL entry (KeyError: 'name')"
    (tmp_path / "BFCL_v4_multiple.json").write_text(json.dumps(good) + "\n")
    (tmp_path / "possible_answer").mkdir()
    (tmp_path / "possible_answer" / "BFCL_v4_multiple.json").write_text('{"id": "m_0"}\n')
    with pytest.raises(InputError) as e:
        load_bfcl(tmp_path, "multiple")
    assert (
        str(e.value)
        == f"{tmp_path / 'possible_answer' / 'BFCL_v4_multiple.json'}:1: not a BFCL answer (KeyError: 'ground_truth')"
    )
