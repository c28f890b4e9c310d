"""Decide: context budget, prices, request cost, CAG, adaptive routes, recommend() and the CLI.

Every figure below is worked out by hand in the comment next to it (prices in USD per million tokens).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from citewise.cli import app
from citewise.core import InputError
from citewise.decide import (
    Accuracy,
    ContextBudget,
    Prices,
    Workload,
    adaptive_route_cost,
    cag_cost,
    cost_per_correct_answer,
    count_corpus_tokens,
    load_workload,
    recommend,
    request_cost,
)

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "src" / "citewise" / "sample"
PRICES = Prices(input_per_mtok=2.00, output_per_mtok=8.00, cached_input_per_mtok=0.50)
runner = CliRunner()


def handbook(**changes) -> Workload:
    """Issue 7's acceptance workload: a 60,000-token handbook everyone may read."""
    w = Workload(
        corpus_tokens=60_000,
        requests_per_day=2_000,
        output_tokens=400,
        per_user_permissions=False,
        structured_share=0.1,
        updates_per_day=0,
        rag_context_tokens=5 * 400,
        max_input_tokens_for_slo=100_000,
        daily_budget_usd=150.00,
        budget=ContextBudget(
            context_window=128_000, max_output_tokens=400, system_prompt_tokens=3_000, max_question_tokens=500
        ),  # the default 10% safety margin
        prices=PRICES,
    )
    return replace(w, **changes)


def workload_dict(**changes) -> dict:
    d = {
        "corpus_tokens": 60000,
        "requests_per_day": 2000,
        "output_tokens": 400,
        "per_user_permissions": False,
        "structured_share": 0.1,
        "updates_per_day": 0,
        "rag_context_tokens": 2000,
        "max_input_tokens_for_slo": 100000,
        "daily_budget_usd": 150.0,
        "budget": {
            "context_window": 128000,
            "max_output_tokens": 400,
            "system_prompt_tokens": 3000,
            "max_question_tokens": 500,
        },
        "prices": {"input_per_mtok": 2.0, "output_per_mtok": 8.0, "cached_input_per_mtok": 0.5},
    }
    d.update(changes)
    return d


# --- acceptance figures ----------------------------------------------------------------------


def test_shared_handbook_long_context_is_recommended_at_80_40_per_day():
    rec = recommend(handbook())
    # long context: (60,000 x 0.50 + (3,000 + 500) x 2.00 + 400 x 8.00) / 1e6 x 2,000 = 40,200 x 0.002 = 80.40
    assert rec.long_context_cost_per_day == pytest.approx(80.40, abs=1e-9)
    # RAG: ((3,000 + 2,000 + 500) x 2.00 + 400 x 8.00) / 1e6 x 2,000 = 14,200 x 0.002 = 28.40
    assert rec.rag_cost_per_day == pytest.approx(28.40, abs=1e-9)
    assert rec.primary == "long_context"
    assert rec.add_tools is False
    assert rec.long_context_input_tokens == 63_500 and rec.rag_input_tokens == 5_500
    # default margin 10%: 128,000 - 12,800 - 400 - 3,000 - 500 = 111,300 (the document's
    # int(128,000 x 0.9) - 400 - 3,000 - 500 as well)
    assert rec.tokens_available_for_documents == 111_300 == int(128_000 * 0.9) - 400 - 3_000 - 500
    assert not any("ACL" in r for r in rec.reasons)
    assert any("fits" in r and "80.40/day" in r and "28.40/day" in r for r in rec.reasons)


def test_per_user_permissions_flip_to_rag_at_260_40_with_acl_reason():
    rec = recommend(handbook(per_user_permissions=True))
    # no shared prefix: (63,500 x 2.00 + 400 x 8.00) / 1e6 x 2,000 = 130,200 x 0.002 = 260.40 > 150.00
    assert rec.long_context_cost_per_day == pytest.approx(260.40, abs=1e-9)
    assert rec.rag_cost_per_day == pytest.approx(28.40, abs=1e-9)
    assert rec.primary == "rag"
    assert any("filter by ACL inside the retrieval query" in r for r in rec.reasons)
    assert any("above the daily budget of 150.00" in r for r in rec.reasons)
    assert any("shared cacheable prefix" in r and "80.40/day" in r for r in rec.reasons)


# --- budget, prices, request cost --------------------------------------------------------------


def test_context_budget_available_tokens_and_no_room_error():
    b = ContextBudget(
        context_window=128_000,
        max_output_tokens=4_000,
        system_prompt_tokens=3_000,
        max_question_tokens=500,
        safety_margin_tokens=1_000,
    )
    assert b.available_for_documents == 119_500  # 128,000 - 4,000 - 3,000 - 500 - 1,000
    with pytest.raises(InputError, match="leave no room for documents"):
        ContextBudget(
            context_window=8_000, max_output_tokens=4_000, system_prompt_tokens=3_500, max_question_tokens=500
        )
    with pytest.raises(InputError, match="safety_margin: must be >= 0"):
        ContextBudget(128_000, 400, 3_000, 500, -1)


def test_request_cost_hand_computed():
    # (3,500 x 2.00 + 60,000 x 0.50 + 400 x 8.00) / 1e6 = (7,000 + 30,000 + 3,200) / 1e6
    # called as the decision document calls it: request_cost(input, output, prices, cached)
    assert request_cost(63_500, 400, PRICES, 60_000) == pytest.approx(0.0402, abs=1e-15)
    assert request_cost(63_500, 400, PRICES, cached_input_tokens=60_000) == pytest.approx(0.0402, abs=1e-15)
    assert request_cost(0, 1_000_000, PRICES) == pytest.approx(8.0)
    # earlier calls keep working: the keyword cached_tokens= and the (input, output, cached, prices) order
    assert request_cost(63_500, 400, cached_tokens=60_000, prices=PRICES) == pytest.approx(0.0402, abs=1e-15)
    assert request_cost(63_500, 400, 60_000, PRICES) == pytest.approx(0.0402, abs=1e-15)
    # no cached price: cached tokens pay the input price, (63,500 x 2.00 + 400 x 8.00) / 1e6
    assert request_cost(63_500, 400, Prices(2.0, 8.0), 60_000) == pytest.approx(0.1302, abs=1e-15)


def test_cached_tokens_above_input_tokens_raise_a_clear_error():
    with pytest.raises(
        InputError, match=r"cached_input_tokens: 1,001 cached tokens is more than the 1,000 input tokens"
    ):
        request_cost(1_000, 10, PRICES, 1_001)
    with pytest.raises(InputError, match="input_tokens: must be >= 0"):
        request_cost(-1, 10, PRICES)
    with pytest.raises(InputError, match="prices: must be a Prices, got int"):
        request_cost(1_000, 10, 5)


def test_negative_or_missing_prices_are_rejected():
    with pytest.raises(InputError, match="input_per_mtok: must be >= 0, got -2.0"):
        Prices(input_per_mtok=-2.0, output_per_mtok=8.0, cached_input_per_mtok=0.5)
    with pytest.raises(InputError, match="output_per_mtok: missing"):
        Prices(input_per_mtok=2.0, output_per_mtok=None, cached_input_per_mtok=0.5)
    with pytest.raises(InputError, match="cached_input_per_mtok: must be a number, got 'cheap'"):
        Prices(2.0, 8.0, "cheap")
    with pytest.raises(TypeError):
        Prices(2.0)  # no default prices: input and output are required
    # Prices(input, output, cached=None): no prompt caching, cached reads pay the input price
    assert Prices(2.0, 8.0).cached_input_per_mtok is None and not Prices(2.0, 8.0).has_cache_discount
    assert Prices.from_mapping({"input_per_mtok": 2.0, "output_per_mtok": 8.0}, "w.yaml", "prices.") == Prices(2.0, 8.0)
    with pytest.raises(InputError, match="w.yaml: prices.output_per_mtok: missing key"):
        Prices.from_mapping({"input_per_mtok": 2.0}, "w.yaml", "prices.")
    with pytest.raises(InputError, match="cached_input_per_mtok: 3 is above input_per_mtok 2"):
        Prices(2.0, 8.0, 3.0)


# --- the other rules ----------------------------------------------------------------------------


def test_corpus_that_does_not_fit_goes_to_rag():
    rec = recommend(handbook(corpus_tokens=130_000, max_input_tokens_for_slo=None, daily_budget_usd=None))
    assert rec.primary == "rag"
    assert any("does not fit the 111,300 tokens available" in r for r in rec.reasons)


def test_input_above_the_latency_limit_goes_to_rag():
    # 3,000 + 100,000 + 500 = 103,500 input tokens > 100,000, although it fits 111,300
    rec = recommend(handbook(corpus_tokens=100_000, daily_budget_usd=None))
    assert rec.primary == "rag"
    assert any("103,500 input tokens, above the latency limit of 100,000" in r for r in rec.reasons)
    # at exactly the limit it stays long context: 3,000 + 96,500 + 500 = 100,000
    assert recommend(handbook(corpus_tokens=96_500, daily_budget_usd=None)).primary == "long_context"


def test_updates_with_a_cache_invalidate_the_prefix_and_are_priced():
    rec = recommend(handbook(updates_per_day=2))
    # two cache misses on the 60,000-token corpus: 2 x 60,000 x (2.00 - 0.50) / 1e6 = 0.18
    assert rec.long_context_cost_per_day == pytest.approx(80.58, abs=1e-9)
    assert rec.primary == "long_context"
    assert any("each update invalidates the cached prefix" in r and "+0.18/day" in r for r in rec.reasons)


def test_rag_with_updates_asks_for_incremental_ingestion():
    rec = recommend(handbook(per_user_permissions=True, updates_per_day=5))
    assert rec.primary == "rag"
    assert rec.long_context_cost_per_day == pytest.approx(260.40, abs=1e-9)  # no cache, nothing to invalidate
    assert any("incremental ingestion" in r for r in rec.reasons)
    assert not any("invalidates the cached prefix" in r for r in rec.reasons)


def test_structured_share_from_0_2_adds_tools():
    assert recommend(handbook(structured_share=0.2)).add_tools is True
    assert recommend(handbook(structured_share=0.19)).add_tools is False
    rec = recommend(handbook(structured_share=0.35))
    assert any("35% of questions are about records" in r and "add tools" in r for r in rec.reasons)


def test_over_budget_long_context_stays_when_rag_is_not_cheaper():
    # corpus 1,000 tokens < rag_context 2,000, so RAG sends the whole corpus too: same input, same cost
    rec = recommend(handbook(corpus_tokens=1_000, per_user_permissions=True, daily_budget_usd=1.0))
    # (4,500 x 2.00 + 3,200) / 1e6 x 2,000 = 24.40 on both paths
    assert rec.long_context_cost_per_day == pytest.approx(24.40) and rec.rag_cost_per_day == pytest.approx(24.40)
    assert rec.primary == "long_context"
    assert any("but RAG would cost more" in r for r in rec.reasons)


def test_workload_rejects_bad_fields():
    with pytest.raises(InputError, match="structured_share: must be <= 1"):
        handbook(structured_share=1.5)
    with pytest.raises(InputError, match="output_tokens: 500 is above budget.max_output_tokens 400"):
        handbook(output_tokens=500)
    with pytest.raises(InputError, match="per_user_permissions: must be true or false"):
        handbook(per_user_permissions="yes")


# --- CAG, adaptive routes, cost per correct answer ---------------------------------------------


def test_cag_prefill_plus_cached_queries_and_the_per_query_limit():
    c = cag_cost(prefix_tokens=100_000, queries=10, question_tokens=500, output_tokens=400, prices=PRICES)
    assert c.prefill_usd == pytest.approx(0.2)  # 100,000 x 2.00 / 1e6
    assert c.per_query_usd == pytest.approx(0.0542)  # (100,000 x 0.50 + 500 x 2.00 + 400 x 8.00) / 1e6
    assert c.total_usd == pytest.approx(0.742)  # 0.2 + 10 x 0.0542
    assert c.average_per_query_usd == pytest.approx(0.0742)
    big = cag_cost(100_000, 1_000, 500, 400, PRICES)
    assert big.total_usd == pytest.approx(54.4)  # 0.2 + 1,000 x 0.0542
    assert big.average_per_query_usd == pytest.approx(0.0544)
    # the average falls towards the marginal cost as N grows
    huge = cag_cost(100_000, 10**7, 500, 400, PRICES)
    assert huge.per_query_usd < huge.average_per_query_usd < big.average_per_query_usd < c.average_per_query_usd
    assert huge.average_per_query_usd == pytest.approx(0.0542, abs=1e-7)  # 0.0542 + 0.2 / 1e7
    assert cag_cost(100_000, 0, 500, 400, PRICES).total_usd == pytest.approx(0.2)


def test_adaptive_route_cost_is_initial_plus_rate_times_fallback():
    # RAG first (14,200 / 1e6 = 0.0142 per request), 15% fall back to a shared-prefix long-context
    # request (0.0402): 0.0142 + 0.15 x 0.0402 = 0.0142 + 0.00603 = 0.02023
    assert adaptive_route_cost(0.0142, 0.15, 0.0402) == pytest.approx(0.02023, abs=1e-15)
    assert adaptive_route_cost(0.0142, 0.0, 0.0402) == pytest.approx(0.0142)
    with pytest.raises(InputError, match="fallback_rate: must be <= 1"):
        adaptive_route_cost(0.0142, 1.5, 0.0402)


def test_cost_per_correct_answer():
    assert cost_per_correct_answer(0.0142, 0.8) == pytest.approx(0.01775)  # 0.0142 / 0.8
    with pytest.raises(InputError, match="accuracy: 0 means no answer is correct"):
        cost_per_correct_answer(0.0142, 0.0)
    rec = recommend(handbook(accuracy=Accuracy(long_context=0.95, rag=0.80)))
    assert rec.cost_per_correct_answer["long_context"] == pytest.approx(0.0402 / 0.95)  # 0.042316
    assert rec.cost_per_correct_answer["rag"] == pytest.approx(0.01775)  # 0.0142 / 0.80
    assert any("cost per correctly supported answer" in r for r in rec.reasons)


# --- YAML workloads -------------------------------------------------------------------------------


def test_load_workload_round_trip_and_errors_name_key_and_file(tmp_path):
    good = tmp_path / "w.yaml"
    good.write_text(yaml.safe_dump(workload_dict()), encoding="utf-8")
    assert load_workload(good) == handbook()
    cases = [
        (workload_dict(request_per_day=1), "request_per_day: unknown key"),
        ({k: v for k, v in workload_dict().items() if k != "daily_budget_usd"}, "daily_budget_usd: missing key"),
        (
            workload_dict(prices={"input_per_mtok": -1, "output_per_mtok": 8, "cached_input_per_mtok": 0}),
            "prices.input_per_mtok: must be >= 0",
        ),
        (
            workload_dict(budget={**workload_dict()["budget"], "context_window": "big"}),
            "budget.context_window: must be a whole number",
        ),
        (workload_dict(budget={**workload_dict()["budget"], "window": 1}), "budget.window: unknown key"),
        (workload_dict(corpus_tokens=1.5), "corpus_tokens: must be a whole number"),
    ]
    for i, (data, message) in enumerate(cases):
        bad = tmp_path / f"bad{i}.yaml"
        bad.write_text(yaml.safe_dump(data), encoding="utf-8")
        with pytest.raises(InputError) as e:
            load_workload(bad)
        assert str(e.value).startswith(f"{bad}: {message}"), str(e.value)
        assert "\n" not in str(e.value)


def test_null_limits_mean_no_limit(tmp_path):
    p = tmp_path / "w.yaml"
    p.write_text(
        yaml.safe_dump(workload_dict(max_input_tokens_for_slo=None, daily_budget_usd=None, per_user_permissions=True)),
        encoding="utf-8",
    )
    rec = recommend(load_workload(p))
    assert rec.primary == "long_context"  # 260.40/day, but no budget set
    assert any("build each user's context" in r for r in rec.reasons)


# --- corpus counting and the CLI ----------------------------------------------------------------


def _tiny_corpus(root: Path) -> Path:
    (root / "internal").mkdir(parents=True)
    (root / "public.md").write_text("---\ntitle: Handbook\n---\nPublic handbook text.\n", encoding="utf-8")
    (root / "one.txt").write_text("one two three four five\n", encoding="utf-8")
    (root / "internal" / "matrix.md").write_text(
        "---\npermissions: [finance]\n---\nRefunds are approved by the finance lead.\n", encoding="utf-8"
    )
    (root / "internal" / "runbook.md").write_text(
        "---\npermissions: [support]\n---\nalpha beta gamma\n", encoding="utf-8"
    )
    return root


def test_count_corpus_tokens_per_principal(tmp_path):
    root = _tiny_corpus(tmp_path / "c")
    # o200k_base: "Public handbook text.\n" = 4, "one two three four five\n" = 6,
    # "Refunds are approved by the finance lead.\n" = 9, "alpha beta gamma\n" = 4
    c = count_corpus_tokens(root)
    assert c.tokens == {"public": 10, "finance": 19, "support": 14}
    assert c.documents == {"public": 2, "finance": 3, "support": 3}
    assert c.groups == ("finance", "support") and c.differ and c.max_tokens == 19
    only = count_corpus_tokens(root, ["finance"])
    assert only.tokens == {"public": 10, "finance": 19}
    assert count_corpus_tokens(root, []).differ is False  # one principal: nothing differs


def test_cli_recommend_tiny_corpus_json(tmp_path):
    root = _tiny_corpus(tmp_path / "c")
    wf = tmp_path / "w.yaml"
    wf.write_text(yaml.safe_dump(workload_dict()), encoding="utf-8")
    r = runner.invoke(app, ["recommend", str(wf), "--corpus", str(root), "--as", "finance", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["corpus"]["tokens"] == {"public": 10, "finance": 19}
    assert data["corpus_tokens"] == 19 and data["per_user_permissions"] is True  # groups see different corpora
    # both paths send 3,000 + 19 + 500 = 3,519 tokens uncached: (3,519 x 2.00 + 3,200) / 1e6 x 2,000 = 20.476
    assert data["long_context_cost_per_day"] == pytest.approx(20.476)
    assert data["rag_cost_per_day"] == pytest.approx(20.476)
    assert data["primary"] == "long_context" and data["add_tools"] is False
    assert set(data) >= {"primary", "add_tools", "long_context_cost_per_day", "rag_cost_per_day", "reasons"}


def test_cli_recommend_sample_workload_counts_the_sample_corpus():
    r = runner.invoke(app, ["recommend", str(SAMPLE / "workload.yaml"), "--corpus", str(SAMPLE / "corpus"), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    tokens = data["corpus"]["tokens"]
    assert set(tokens) == {"public", "finance", "security", "support"}
    assert all(tokens[g] > tokens["public"] > 10_000 for g in ("finance", "security", "support"))
    assert data["corpus_tokens"] == max(tokens.values())
    w = load_workload(SAMPLE / "workload.yaml")
    # per-user permissions: no cache; (system + corpus + question) x input + output x output, x requests/day
    lc = (
        (
            (w.budget.system_prompt_tokens + data["corpus_tokens"] + w.budget.max_question_tokens) * 2.0
            + w.output_tokens * 8.0
        )
        / 1e6
        * w.requests_per_day
    )
    assert data["long_context_cost_per_day"] == pytest.approx(lc, abs=1e-6)
    assert data["primary"] == "rag" and data["add_tools"] is True
    assert any("filter by ACL inside the retrieval query" in r for r in data["reasons"])
    assert any("incremental ingestion" in r for r in data["reasons"])

    text = runner.invoke(app, ["recommend", str(SAMPLE / "workload.yaml"), "--corpus", str(SAMPLE / "corpus")])
    assert text.exit_code == 0, text.output
    assert "Recommendation: RAG + tools" in text.output
    assert f"finance {tokens['finance']:,} (" in text.output
    assert text.output.count("\n  - ") == len(data["reasons"])


def test_cli_recommend_bad_workload_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        yaml.safe_dump(workload_dict(prices={"input_per_mtok": 2, "cached_input_per_mtok": 8})), encoding="utf-8"
    )
    p = subprocess.run(
        [sys.executable, "-m", "citewise.cli", "recommend", str(bad)], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 2
    assert p.stderr.strip() == f"error: {bad}: prices.output_per_mtok: missing key"
    assert "Traceback" not in p.stderr


def test_safety_margin_is_a_fraction_of_the_window():
    b = ContextBudget(
        context_window=128_000,
        max_output_tokens=4_000,
        system_prompt_tokens=3_000,
        max_question_tokens=500,
        safety_margin=0.10,
    )
    assert b.margin_tokens == 12_800 and b.available_for_documents == 107_700  # 128,000 - 4,000 - 3,000 - 500 - 12,800
    # rounded up: 10% of 100,001 tokens is 10,000.1 -> 10,001 kept free
    assert ContextBudget(100_001, 0, 0, 0, safety_margin=0.10).margin_tokens == 10_001
    assert ContextBudget(128_000, 400, 3_000, 500, safety_margin=0).margin_tokens == 0
    for bad, message in [
        (
            1.5,
            "safety_margin: 1.5 is ambiguous: safety_margin is a fraction of the context window, 0 <= safety_margin < 1 (0.10 = 10%)",
        ),
        (2000, "safety_margin: 2000 is ambiguous"),
        (1, "safety_margin: 1 is ambiguous"),
        (-0.1, "safety_margin: must be >= 0, got -0.1"),
        ("10%", "safety_margin: must be a fraction of the context window (0.10 = 10%), got '10%'"),
    ]:
        with pytest.raises(InputError) as e:
            ContextBudget(128_000, 400, 3_000, 500, safety_margin=bad)
        assert str(e.value).startswith(f"ContextBudget: {message}"), str(e.value)
    with pytest.raises(InputError, match="write safety_margin_tokens: 2000$"):
        ContextBudget(128_000, 400, 3_000, 500, safety_margin=2000)
    with pytest.raises(InputError, match="give either safety_margin .* or safety_margin_tokens .*, not both"):
        ContextBudget(128_000, 400, 3_000, 500, safety_margin=0.05, safety_margin_tokens=100)
    with pytest.raises(InputError, match="leave no room for documents after 400 output .* 124,160 safety margin"):
        ContextBudget(128_000, 400, 3_000, 500, safety_margin=0.97)  # 128,000 - 3,900 - 124,160 < 0


def test_workload_yaml_safety_margin_forms_and_ambiguity(tmp_path):
    budget = workload_dict()["budget"]
    cases = {
        "frac": ({**budget, "safety_margin": 0.05}, 128_000 - 400 - 3_000 - 500 - 6_400),
        "tokens": (
            {k: v for k, v in budget.items() if k != "safety_margin"} | {"safety_margin_tokens": 2_000},
            128_000 - 400 - 3_000 - 500 - 2_000,
        ),
    }
    for name, (b, available) in cases.items():
        p = tmp_path / f"{name}.yaml"
        p.write_text(yaml.safe_dump(workload_dict(budget=b)), encoding="utf-8")
        assert load_workload(p).budget.available_for_documents == available
    bad = tmp_path / "old.yaml"
    bad.write_text(yaml.safe_dump(workload_dict(budget={**budget, "safety_margin": 2000})), encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_workload(bad)
    assert str(e.value) == (
        f"{bad}: budget.safety_margin: 2000 is ambiguous: safety_margin is a fraction of the context "
        "window, 0 <= safety_margin < 1 (0.10 = 10%); for a number of tokens write safety_margin_tokens: 2000"
    )
    # the bundled sample uses the fraction: 10% of its 128,000-token window
    assert load_workload(SAMPLE / "workload.yaml").budget.margin_tokens == 12_800
