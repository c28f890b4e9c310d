"""``recommend(workload)``: long context or RAG (and tools), with costs and every reason."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from citewise.decide.costs import cag_cost, cost_per_correct_answer, request_cost
from citewise.decide.workload import Workload

#: Share of questions about records (transactions, invoices, accounts) from which tool calls are
#: recommended next to text retrieval (issue 7).
STRUCTURED_SHARE_FOR_TOOLS = 0.2

#: CAG is recommended only when one cached prefill, spread over the requests it serves, adds at
#: most this share to a request's cost: the amortised CAG cost "converges to alpha C_prefill +
#: (C_generate - C_prefill) per query as N grows large" (the indexing document), and 10% is where
#: N is large enough for that limit to be the cost one pays. It is the one threshold behind "the
#: corpus changes rarely" (few versions a day) and "the volume is high" (many requests per version).
CAG_MAX_PREFILL_SHARE = 0.10

Primary = Literal["long_context", "rag"]


@dataclass
class Recommendation:
    """What :func:`recommend` decided and why.

    Attributes:
        primary: ``long_context`` or ``rag``.
        add_tools: also answer record questions with tool calls.
        long_context_cost_per_day, rag_cost_per_day: USD/day of each path for this workload.
        reasons: every rule that fired, in words with its figures.
        long_context_input_tokens, rag_input_tokens: input tokens of one request on each path.
        tokens_available_for_documents: from the :class:`ContextBudget`.
        cost_per_correct_answer: USD per correctly supported answer per path, when accuracy was given.
        cag: serve the long context as cache-augmented generation (prefill the corpus once per
            version, reuse its cache for every request): the corpus fits, everyone reads the same
            corpus, and the prefill is amortised (:data:`CAG_MAX_PREFILL_SHARE`).
        cag_cost_per_day: USD/day of CAG (:meth:`Workload.cag_cost_per_day`), beside the other two.
    """

    primary: Primary
    add_tools: bool
    long_context_cost_per_day: float
    rag_cost_per_day: float
    reasons: list[str]
    long_context_input_tokens: int = 0
    rag_input_tokens: int = 0
    tokens_available_for_documents: int = 0
    cost_per_correct_answer: dict[str, float] = field(default_factory=dict)
    cag: bool = False
    cag_cost_per_day: float = 0.0

    def as_dict(self) -> dict:
        """JSON-ready dict (the ``--json`` output of ``citewise recommend``)."""
        d = {
            "primary": self.primary,
            "add_tools": self.add_tools,
            "long_context_cost_per_day": round(self.long_context_cost_per_day, 6),
            "rag_cost_per_day": round(self.rag_cost_per_day, 6),
            "cag": self.cag,
            "cag_cost_per_day": round(self.cag_cost_per_day, 6),
            "reasons": list(self.reasons),
            "long_context_input_tokens": self.long_context_input_tokens,
            "rag_input_tokens": self.rag_input_tokens,
            "tokens_available_for_documents": self.tokens_available_for_documents,
        }
        if self.cost_per_correct_answer:
            d["cost_per_correct_answer"] = {k: round(v, 8) for k, v in self.cost_per_correct_answer.items()}
        return d


def _usd(x: float) -> str:
    return f"{x:,.2f}"


def recommend(workload: Workload) -> Recommendation:
    """Recommend long context or RAG (and whether to add tools) for a workload, with reasons.

    Rules (issue 7), evaluated in this order:

    1. RAG when the corpus does not fit ``budget.available_for_documents``; when a long-context
       request's input (system + corpus + question) is above ``max_input_tokens_for_slo``; or when
       long context costs more than ``daily_budget_usd`` per day and RAG is cheaper. Otherwise long
       context (simpler, and it cannot miss a passage that retrieval would miss).
    2. Per-user permissions remove the shared cacheable prefix: long context pays the full input
       price on every request. With RAG: "filter by ACL inside the retrieval query".
    3. Updates: RAG → incremental ingestion; long context with a prompt cache → "each update
       invalidates the cached prefix" (its cost is in the long-context figure).
    4. ``structured_share >= 0.2`` → add tools.
    5. CAG (the indexing document's cache-augmented generation) on top of long context when the
       corpus fits, everyone may read the same corpus (no per-user permissions: CAG is "the wrong
       pattern ... for multi-tenant access control"), cached input is cheaper than uncached, and
       one prefill per corpus version (at least one a day) adds at most
       :data:`CAG_MAX_PREFILL_SHARE` of a request's cost once spread over the requests it serves
       (the corpus changes rarely and the volume is high), CAG costs less than sending the corpus
       uncached on every request, and it stays within the daily budget if one is set.

    Costs follow the module docstring. Raises nothing for a valid :class:`Workload`.
    """
    w = workload
    b = w.budget
    avail = b.available_for_documents
    lc_day = w.long_context_cost_per_day()
    rag_day = w.rag_cost_per_day()
    lc_in, rag_in = w.long_context_input_tokens, w.rag_input_tokens
    slo, cap = w.max_input_tokens_for_slo, w.daily_budget_usd
    reasons: list[str] = []

    fits = w.corpus_tokens <= avail
    within_slo = slo is None or lc_in <= slo
    over_budget = cap is not None and lc_day > cap
    if not fits:
        reasons.append(
            f"the corpus ({w.corpus_tokens:,} tokens) does not fit the {avail:,} tokens available for documents "
            f"(context window {b.context_window:,} - output {b.max_output_tokens:,} - system prompt "
            f"{b.system_prompt_tokens:,} - question {b.max_question_tokens:,} - safety margin {b.margin_tokens:,}): use RAG"
        )
    if not within_slo:
        reasons.append(
            f"a long-context request would send {lc_in:,} input tokens, above the latency limit of {slo:,} "
            f"(max_input_tokens_for_slo): use RAG ({rag_in:,} input tokens per request)"
        )
    if over_budget:
        if rag_day < lc_day:
            reasons.append(
                f"long context would cost {_usd(lc_day)}/day, above the daily budget of {_usd(cap)}; "
                f"RAG costs {_usd(rag_day)}/day: use RAG"
            )
        else:
            reasons.append(
                f"long context would cost {_usd(lc_day)}/day, above the daily budget of {_usd(cap)}, "
                f"but RAG would cost more ({_usd(rag_day)}/day)"
            )
    use_rag = (not fits) or (not within_slo) or (over_budget and rag_day < lc_day)
    primary: Primary = "rag" if use_rag else "long_context"

    if primary == "long_context":
        budget_txt = f"within the daily budget of {_usd(cap)}" if cap is not None else "with no daily budget set"
        slo_txt = f"within the latency limit of {slo:,}" if slo is not None else "with no latency limit set"
        reasons.append(
            f"the corpus ({w.corpus_tokens:,} tokens) fits the {avail:,} tokens available for documents, "
            f"{lc_in:,} input tokens per request is {slo_txt}, and {_usd(lc_day)}/day is {budget_txt}: "
            f"use long context, which is simpler and cannot miss a passage retrieval would miss "
            f"(RAG would cost {_usd(rag_day)}/day)"
        )
    else:
        if cap is not None and rag_day > cap:
            reasons.append(
                f"RAG too costs {_usd(rag_day)}/day, above the daily budget of {_usd(cap)}: "
                f"lower rag_context_tokens, output_tokens or the price per token"
            )
        if slo is not None and rag_in > slo:
            reasons.append(
                f"a RAG request too sends {rag_in:,} input tokens, above the latency limit of {slo:,}: "
                f"lower rag_context_tokens"
            )

    if w.per_user_permissions:
        if w.prices.has_cache_discount:
            shared = replace(w, per_user_permissions=False).long_context_cost_per_day()
            cache_txt = f" ({_usd(lc_day)}/day instead of {_usd(shared)}/day with a shared cached prefix)"
        else:
            cache_txt = ""
        reasons.append(
            f"per-user permissions remove the shared cacheable prefix: each user's context holds only the "
            f"documents they may read, so long context pays the full input price on every request{cache_txt}"
        )
        if primary == "rag":
            reasons.append(
                "filter by ACL inside the retrieval query (the store applies the principal's groups "
                "during the search, never after it), so no restricted chunk reaches the prompt"
            )
        else:
            reasons.append("build each user's context from only the documents their groups may read")

    if w.updates_per_day > 0:
        if primary == "rag":
            reasons.append(
                f"{w.updates_per_day:g} updates/day: use incremental ingestion (re-embed only new and "
                f"changed documents, delete removed ones; 'citewise ingest' compares content hashes)"
            )
        elif w.uses_prompt_cache:
            reasons.append(
                f"{w.updates_per_day:g} updates/day: each update invalidates the cached prefix, and the "
                f"next request pays the full input price for the corpus again "
                f"(+{_usd(w.cache_invalidation_cost_per_day())}/day, included above)"
            )
        else:
            reasons.append(
                f"{w.updates_per_day:g} updates/day: each request reads the current documents "
                f"(no prompt cache to invalidate)"
            )

    add_tools = w.structured_share >= STRUCTURED_SHARE_FOR_TOOLS
    if add_tools:
        reasons.append(
            f"{w.structured_share:.0%} of questions are about records (structured_share >= "
            f"{STRUCTURED_SHARE_FOR_TOOLS:g}): add tools (tool calls such as a guarded sql_query) "
            f"for them; documents do not hold per-customer records"
        )
    else:
        reasons.append(
            f"{w.structured_share:.0%} of questions are about records (< {STRUCTURED_SHARE_FOR_TOOLS:g}): "
            f"no tools needed"
        )

    per_correct: dict[str, float] = {}
    if w.accuracy is not None:
        n = w.requests_per_day or 1
        per_correct = {
            "long_context": cost_per_correct_answer(lc_day / n, w.accuracy.long_context),
            "rag": cost_per_correct_answer(rag_day / n, w.accuracy.rag),
        }
        reasons.append(
            f"cost per correctly supported answer: long context {per_correct['long_context']:.6f} USD "
            f"(accuracy {w.accuracy.long_context:.0%}), RAG {per_correct['rag']:.6f} USD (accuracy {w.accuracy.rag:.0%})"
        )

    cag, cag_day = _cag(w, primary, reasons)
    return Recommendation(primary, add_tools, lc_day, rag_day, reasons, lc_in, rag_in, avail, per_correct, cag, cag_day)


def _cag(w: Workload, primary: str, reasons: list[str]) -> tuple[bool, float]:
    """Rule 5 of :func:`recommend`: whether to serve the long context as CAG, and its USD/day."""
    cag_day = w.cag_cost_per_day()
    if primary != "long_context":
        return False, cag_day
    c = cag_cost(
        w.corpus_tokens, 1, w.budget.system_prompt_tokens + w.budget.max_question_tokens, w.output_tokens, w.prices
    )
    share = (
        (c.prefill_usd / w.requests_per_cache) / c.per_query_usd
        if w.requests_per_cache and c.per_query_usd
        else float("inf")
    )
    why = []
    if w.per_user_permissions:
        why.append("users read different documents, so there is no one corpus to cache")
    if not w.prices.has_cache_discount:
        why.append("cached input costs as much as uncached input (no cached_input_per_mtok below input_per_mtok)")
    if share > CAG_MAX_PREFILL_SHARE:
        why.append(
            f"one prefill per corpus version ({w.cag_prefills_per_day:g}/day) would add {share:.0%} "
            f"to each of its {w.requests_per_cache:,.0f} requests (more than {CAG_MAX_PREFILL_SHARE:.0%}): "
            f"the corpus changes too often for the volume"
        )
    naive = round(w.requests_per_day * request_cost(w.long_context_input_tokens, w.output_tokens, w.prices), 9)
    if not why and cag_day >= naive:
        why.append(
            f"re-prefilling after every update ({w.cag_prefills_per_day:g}/day) costs more than sending the "
            f"corpus uncached ({_usd(naive)}/day)"
        )
    if w.daily_budget_usd is not None and cag_day > w.daily_budget_usd:
        why.append(f"CAG would cost {_usd(cag_day)}/day, above the daily budget of {_usd(w.daily_budget_usd)}")
    if why:
        reasons.append(f"CAG not recommended ({_usd(cag_day)}/day): " + "; ".join(why))
        return False, cag_day
    reasons.append(
        f"serve it as CAG: the corpus fits, changes rarely and the volume is high ({w.requests_per_cache:,.0f} "
        f"requests per cached prefill, which adds {share:.1%} to each): prefill the corpus once per version and "
        f"reuse its cache, {_usd(cag_day)}/day (long context {_usd(w.long_context_cost_per_day())}/day, "
        f"RAG {_usd(w.rag_cost_per_day())}/day); each update invalidates the cache"
    )
    return True, cag_day
