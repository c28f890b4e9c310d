"""CAG in the recommendation (the indexing document), ContextBudget.fits under the default 10%
margin, and the ReAct latency model measured from spans (the tool-calling document's figures)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from citewise.core import InputError
from citewise.decide import ContextBudget, Prices, Workload, recommend
from citewise.decide.latency import latency_report

PRICES = Prices(2.00, 8.00, 0.50)


def handbook(**changes) -> Workload:
    w = Workload(
        corpus_tokens=60_000,
        requests_per_day=2_000,
        output_tokens=400,
        per_user_permissions=False,
        structured_share=0.1,
        updates_per_day=0,
        rag_context_tokens=2_000,
        max_input_tokens_for_slo=100_000,
        daily_budget_usd=150.0,
        budget=ContextBudget(128_000, 400, 3_000),
        prices=PRICES,
    )
    return replace(w, **changes)


def test_default_margin_is_ten_percent_and_fits():
    b = ContextBudget(context_window=128_000, max_output_tokens=400, system_prompt_tokens=3_000)
    assert b.safety_margin == 0.10 and b.max_question_tokens == 500
    # int(128,000 x 0.90) - 400 - 3,000 - 500 = 111,300
    assert b.available_for_documents == 111_300
    assert b.fits(111_300) and not b.fits(111_301) and b.fits(60_000)
    # a margin in tokens replaces the default fraction
    t = ContextBudget(128_000, 400, 3_000, safety_margin_tokens=1_000)
    assert t.safety_margin == 0 and t.available_for_documents == 123_100
    with pytest.raises(InputError, match="corpus_tokens: must be >= 0"):
        b.fits(-1)


def test_handbook_costs_under_the_default_margin_and_cag_beside_them():
    rec = recommend(handbook())
    assert rec.long_context_cost_per_day == pytest.approx(80.40, abs=1e-9)
    assert rec.rag_cost_per_day == pytest.approx(28.40, abs=1e-9)
    # CAG: one prefill a day, 60,000 x 2.00 / 1e6 = 0.12, plus 2,000 cached reads of 0.0402 = 80.52
    assert rec.cag_cost_per_day == pytest.approx(80.52, abs=1e-9)
    assert rec.primary == "long_context" and rec.cag
    assert any(r.startswith("serve it as CAG") and "80.52/day" in r and "28.40/day" in r for r in rec.reasons)
    lc_only = recommend(handbook(per_user_permissions=True))
    assert lc_only.long_context_cost_per_day == pytest.approx(260.40, abs=1e-9)
    assert lc_only.primary == "rag" and not lc_only.cag
    # long context wins but users read different documents: no shared corpus to cache
    mixed = recommend(handbook(per_user_permissions=True, daily_budget_usd=None))
    assert mixed.primary == "long_context" and not mixed.cag
    assert any("no one corpus to cache" in r for r in mixed.reasons)


def test_cag_needs_rare_changes_and_high_volume():
    # 100 updates a day: 20 requests per cached prefill; the prefill (0.12) spread over them adds
    # 0.006 to a 0.0402 request: 14.9% > 10%
    busy = recommend(handbook(updates_per_day=100))
    assert not busy.cag and any("changes too often for the volume" in r and "15%" in r for r in busy.reasons)
    # 25 requests a day on a static corpus: 0.12 / 25 = 0.0048 per request, 11.9% > 10%
    quiet = recommend(handbook(requests_per_day=25))
    assert not quiet.cag
    # 40 a day: 0.003 per request, 7.5%: CAG
    assert recommend(handbook(requests_per_day=40)).cag
    # no cache discount: nothing to gain from a cache
    assert not recommend(handbook(prices=Prices(2.0, 8.0))).cag


def _span(trace, sid, parent, name, start_ms, end_ms):
    return {
        "traceId": trace,
        "spanId": sid,
        "parentSpanId": parent,
        "name": name,
        "startTimeUnixNano": str(int(start_ms * 1e6)),
        "endTimeUnixNano": str(int(end_ms * 1e6)),
        "attributes": [],
    }


def _write(path, spans):
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n", encoding="utf-8")


def test_latency_from_spans_reproduces_the_documents_three_step_and_parallel_figures(tmp_path):
    t = "a" * 32
    three = [
        _span(t, "0" * 15 + "1", "", "invoke_agent citewise", 0, 1100),
        _span(t, "0" * 15 + "2", "0" * 15 + "1", "chat m", 0, 150),
        _span(t, "0" * 15 + "3", "0" * 15 + "1", "execute_tool sql_query", 150, 200),
        _span(t, "0" * 15 + "4", "0" * 15 + "1", "chat m", 200, 380),
        _span(t, "0" * 15 + "5", "0" * 15 + "1", "execute_tool vector_search", 380, 400),
        _span(t, "0" * 15 + "6", "0" * 15 + "1", "chat m", 400, 600),
        _span(t, "0" * 15 + "7", "0" * 15 + "1", "execute_tool sql_query", 600, 650),
        _span(t, "0" * 15 + "8", "0" * 15 + "1", "chat m", 650, 1100),
    ]
    p = "b" * 32
    parallel = [
        _span(p, "1" * 16, "", "invoke_agent citewise", 0, 600),
        _span(p, "2" * 16, "1" * 16, "chat m", 0, 150),
        _span(p, "3" * 16, "1" * 16, "execute_tool sql_query", 150, 200),
        _span(p, "4" * 16, "1" * 16, "execute_tool vector_search", 150, 170),
        _span(p, "5" * 16, "1" * 16, "chat m", 200, 600),
    ]
    f = tmp_path / "spans.jsonl"
    _write(f, three + parallel)
    rep = latency_report(f)
    one, three_g = rep["groups"]
    # parallel: 150 + max(50, 20) + 400 = 600; one after the other it would be 150 + 70 + 400 = 620
    assert (one["steps"], one["model_ms_mean"], one["t2_ms_mean"], one["sequential_ms_mean"]) == (1, 600.0, 50.0, 620.0)
    # (150 + 50) + (180 + 20) + (200 + 50) + 450 = 1,100: T1 = 150 each step, T3 = 0, 30, 50 (context growth)
    assert three_g["model_ms_mean"] == pytest.approx(1100.0) and three_g["measured_ms_mean"] == pytest.approx(1100.0)
    assert [(s["t1_ms"], s["t2_ms"], round(s["t3_ms"], 6)) for s in three_g["per_step"]] == [
        (150.0, 50.0, 0.0),
        (150.0, 20.0, 30.0),
        (150.0, 50.0, 50.0),
    ]
    assert three_g["synthesis_ms_mean"] == pytest.approx(450.0)


def test_latency_cli_json_and_bad_file(tmp_path):
    f = tmp_path / "none.jsonl"
    _write(f, [_span("c" * 32, "1" * 16, "", "retrieval shipped", 0, 5)])
    p = subprocess.run(
        [sys.executable, "-m", "citewise.cli", "decide", "latency", str(f)], capture_output=True, text=True
    )
    assert p.returncode == 2 and "no agent run in these spans" in p.stderr and "Traceback" not in p.stderr
    f.write_text("{not json\n")
    p = subprocess.run(
        [sys.executable, "-m", "citewise.cli", "decide", "latency", str(f)], capture_output=True, text=True
    )
    assert p.returncode == 2 and f"{f}:1" in p.stderr and "invalid JSON" in p.stderr


def test_the_hr_knowledge_base_is_a_small_static_corpus_served_as_cag():
    """The indexing document's HR knowledge base (five policies, tests/data/hr): "for small, static
    knowledge bases (under 50K tokens), simply including the full content in context avoids the
    complexity of building and maintaining a retrieval pipeline"; CAG for "corpora that are small
    enough to fit ..., change rarely, and serve high query volume"."""
    from pathlib import Path

    from citewise.decide import count_corpus_tokens

    counted = count_corpus_tokens(Path(__file__).parent / "data" / "hr")
    assert counted.documents == {"public": 5} and not counted.differ
    assert counted.tokens["public"] == 303  # o200k_base tokens of the five policies' text
    w = handbook(corpus_tokens=counted.max_tokens, rag_context_tokens=300, requests_per_day=500)
    rec = recommend(w)
    assert rec.primary == "long_context" and rec.cag
    # per request: cached corpus 303 x 0.50 + (3,000 + 500) x 2.00 + 400 x 8.00 = 10,351.5 micro-USD
    assert rec.long_context_cost_per_day == pytest.approx(500 * 10_351.5 / 1e6)
    # CAG adds one prefill a day: 303 x 2.00 / 1e6
    assert rec.cag_cost_per_day == pytest.approx(500 * 10_351.5 / 1e6 + 606 / 1e6)
    # 500 updates a day leave one request per cached prefill: re-prefilling (5.48/day) costs more than
    # sending the corpus uncached (500 x (3,803 x 2.00 + 400 x 8.00) / 1e6 = 5.40/day)
    churn = recommend(replace(w, updates_per_day=500))
    assert not churn.cag and any("costs more than sending the corpus uncached (5.40/day)" in r for r in churn.reasons)


def test_spans_citewise_records_to_a_file_are_what_decide_latency_reads(tmp_path):
    """FileSpanExporter (CITEWISE_TRACES_FILE) writes OTLP/JSON that read_spans and the latency
    model read back: one agent run, one step with two parallel tool calls, then the synthesis."""
    import threading

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from citewise import telemetry
    from citewise.decide.latency import runs_from_spans
    from citewise.telemetry_file import FileSpanExporter, read_spans

    path = tmp_path / "spans.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    telemetry.use_provider(provider)
    try:
        import contextvars

        with telemetry.operation("invoke_agent", "citewise"):
            with telemetry.operation("chat", "m", **{"gen_ai.usage.input_tokens": 120}):
                pass

            def tool(name):
                with telemetry.operation("execute_tool", name):
                    pass

            # as the agent runs one turn's calls: a thread each, in a copy of the agent's context
            threads = [
                threading.Thread(target=contextvars.copy_context().run, args=(tool, n))
                for n in ("sql_query", "vector_search")
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            with telemetry.operation("chat", "m"):
                pass
    finally:
        telemetry.use_provider(None)
    spans = list(read_spans(path))
    assert sorted(s.name for s in spans) == [
        "chat m",
        "chat m",
        "execute_tool sql_query",
        "execute_tool vector_search",
        "invoke_agent citewise",
    ]
    chat = next(s for s in spans if s.name == "chat m" and s.attributes)
    assert chat.attributes["gen_ai.usage.input_tokens"] == 120 and chat.attributes["gen_ai.operation.name"] == "chat"
    (run,) = runs_from_spans(spans)
    assert len(run.steps) == 1 and run.steps[0].calls == 2
