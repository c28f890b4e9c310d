"""Decide the shape of a system before building it: long context, RAG, and/or tools, with costs.

The answer falls out of a few numbers (a :class:`Workload`): corpus size against the context
budget, per-user permissions, updates per day, the share of questions about records, the latency
limit expressed in input tokens, and the daily budget. :func:`recommend` applies the rules below
and says why; the cost helpers (:func:`request_cost`, :func:`cag_cost`, :func:`adaptive_route_cost`,
:func:`cost_per_correct_answer`) can also be used on their own.

Cost model (all prices in USD per million tokens, :class:`Prices`; no prices are built in because
they change every few months and differ by provider):

* one request: ``((input - cached) * input_price + cached * cached_price + output * output_price) / 1e6``
  (:func:`request_cost`), the way OpenAI, Anthropic and Google bill prompt-cache reads.
* long context: input = system prompt + corpus + question allowance. Only the corpus is counted as
  the cached prefix; the system prompt and the question are billed at the full input price (the
  system prompt often carries the date, user or tenant, which breaks a prefix cache from that point
  on). Per-user permissions remove the shared prefix: each user's context holds only what they may
  read, so every input token pays the full price. Each update to the corpus invalidates the cached
  prefix, and the next request pays the full input price for the corpus again.
* RAG: input = system prompt + retrieved context + question allowance, all at the full input price.
  Embedding and ingestion are not priced (the offline embedder runs on local CPU).

Worked example (the acceptance figures of issue 7): prices 2.00 input / 0.50 cached / 8.00 output,
a 60,000-token corpus, a 3,000-token system prompt, a 500-token question allowance, 400-token
answers, 2,000 requests/day, five 400-token chunks for RAG:

* long context, shared prefix: (60,000 x 0.50 + 3,500 x 2.00 + 400 x 8.00) / 1e6 x 2,000 = 80.40/day
* long context, per-user permissions: (63,500 x 2.00 + 400 x 8.00) / 1e6 x 2,000 = 260.40/day
* RAG: ((3,000 + 2,000 + 500) x 2.00 + 400 x 8.00) / 1e6 x 2,000 = 28.40/day
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping

from citewise.core import PUBLIC_GROUP, CitewiseError, InputError

#: Share of questions about records (transactions, invoices, accounts) from which tool calls are
#: recommended next to text retrieval (issue 7).
STRUCTURED_SHARE_FOR_TOOLS = 0.2

Primary = Literal["long_context", "rag"]


# ---------------------------------------------------------------------------------------------
# validation helpers: every error names the field; callers put the file (or class) in front


def _check_int(value: Any, key: str, source: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(source, f"{key}: must be a whole number >= {minimum}, got {value!r}")
    if isinstance(value, float):
        if not value.is_integer():
            raise InputError(source, f"{key}: must be a whole number >= {minimum}, got {value!r}")
        value = int(value)
    if value < minimum:
        raise InputError(source, f"{key}: must be >= {minimum}, got {value!r}")
    return value


def _check_fraction(value: Any, key: str, source: str) -> float:
    """A share in [0, 1); anything else (a token count such as 2000, 1.5, 1) is refused by name."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(source, f"{key}: must be a fraction of the context window (0.10 = 10%), got {value!r}")
    if value < 0:
        raise InputError(source, f"{key}: must be >= 0, got {value!r}")
    if value >= 1:
        hint = (f"; for a number of tokens write safety_margin_tokens: {int(value)}"
                if float(value).is_integer() else "")
        raise InputError(source, (f"{key}: {value!r} is ambiguous: safety_margin is a fraction of the context "
                                  f"window, 0 <= safety_margin < 1 (0.10 = 10%){hint}"))
    return float(value)


def _check_number(value: Any, key: str, source: str, minimum: float = 0.0, maximum: float | None = None) -> float:
    if value is None:
        raise InputError(source, f"{key}: missing (a number is required)")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(source, f"{key}: must be a number, got {value!r}")
    if value < minimum:
        raise InputError(source, f"{key}: must be >= {minimum:g}, got {value!r}")
    if maximum is not None and value > maximum:
        raise InputError(source, f"{key}: must be <= {maximum:g}, got {value!r}")
    return float(value)


def _check_keys(data: Any, cls: type, source: str, prefix: str, optional: Iterable[str] = ()) -> dict:
    where = prefix.rstrip(".") or "the workload"
    if not isinstance(data, Mapping):
        raise InputError(source, f"{where}: must be a mapping of 'key: value' lines, got {type(data).__name__}")
    names = [f.name for f in fields(cls)]
    unknown = sorted(str(k) for k in data if k not in names)
    if unknown:
        raise InputError(source, f"{prefix}{unknown[0]}: unknown key (expected one of: {', '.join(names)})")
    missing = [n for n in names if n not in data and n not in optional]
    if missing:
        raise InputError(source, f"{prefix}{missing[0]}: missing key")
    return dict(data)


def _from_mapping(cls, data: Any, source: str, prefix: str, optional: Iterable[str] = ()):
    values = _check_keys(data, cls, source, prefix, optional)
    try:
        return cls(**values)
    except InputError as e:  # re-point the error at the file and the dotted key
        raise InputError(source, prefix + e.reason) from None


# ---------------------------------------------------------------------------------------------
# budget and prices


@dataclass(frozen=True)
class ContextBudget:
    """How many tokens of a model's context window are left for documents.

    ``available_for_documents = context_window - max_output_tokens - system_prompt_tokens
    - max_question_tokens - margin_tokens`` (the output reserve counts against the window because
    chat models share one window between prompt and completion), where ``margin_tokens =
    ceil(context_window * safety_margin) + safety_margin_tokens``.

    ``safety_margin`` has the design docs' meaning (the ``ContextBudget`` sketch in the shared
    background notes: ``usable = int(context_window * (1 - safety_margin))``, default 0.10 there):
    a *fraction* of the window, 0.10 = 10%. A value of 1 or more (say ``2000`` or ``1.5``) is
    refused as ambiguous; an absolute number of tokens goes in ``safety_margin_tokens``. Giving
    both is refused too, so a budget never counts its margin twice.

    Attributes:
        context_window: the model's context window, tokens (e.g. 128,000).
        max_output_tokens: tokens reserved for the answer (the request's ``max_tokens``).
        system_prompt_tokens: tokens of the system prompt (instructions, citation rules).
        max_question_tokens: allowance for the user's question (and short chat history).
        safety_margin: share of the window kept free for chat-template overhead and tokenizer
            mismatch (counts here are o200k_base; the serving model's tokenizer may count more);
            0 <= safety_margin < 1, default 0.
        safety_margin_tokens: the same reserve as a number of tokens, default 0.

    Raises:
        InputError: a negative or non-integer token field, a safety_margin outside [0, 1), both
            margins given, or nothing left for documents.
    """

    context_window: int
    max_output_tokens: int
    system_prompt_tokens: int
    max_question_tokens: int
    safety_margin: float = 0.0
    safety_margin_tokens: int = 0

    def __post_init__(self) -> None:
        src = type(self).__name__
        for f in fields(self):
            if f.name == "safety_margin":
                object.__setattr__(self, f.name, _check_fraction(self.safety_margin, f.name, src))
                continue
            object.__setattr__(self, f.name, _check_int(getattr(self, f.name), f.name, src,
                                                        minimum=1 if f.name == "context_window" else 0))
        if self.safety_margin and self.safety_margin_tokens:
            raise InputError(src, (
                f"safety_margin: give either safety_margin (a fraction of the window, here {self.safety_margin:g}) "
                f"or safety_margin_tokens (here {self.safety_margin_tokens:,}), not both"))
        if self.available_for_documents <= 0:
            raise InputError(src, (
                f"context_window: {self.context_window:,} tokens leave no room for documents after "
                f"{self.max_output_tokens:,} output + {self.system_prompt_tokens:,} system prompt + "
                f"{self.max_question_tokens:,} question + {self.margin_tokens:,} safety margin"))

    @property
    def margin_tokens(self) -> int:
        """Tokens the safety margin keeps free: ``ceil(context_window * safety_margin)`` (rounded
        to 6 decimals first, so 128,000 x 0.10 is 12,800, not 12,801) plus ``safety_margin_tokens``."""
        return math.ceil(round(self.context_window * self.safety_margin, 6)) + self.safety_margin_tokens

    @property
    def available_for_documents(self) -> int:
        """Tokens available for documents in one request (see the class docstring)."""
        return (self.context_window - self.max_output_tokens - self.system_prompt_tokens
                - self.max_question_tokens - self.margin_tokens)

    @classmethod
    def from_mapping(cls, data: Any, source: str = "ContextBudget", prefix: str = "") -> "ContextBudget":
        """Build from a parsed YAML mapping; errors name ``source`` and ``prefix+key``.

        Raises:
            InputError: unknown, missing (``safety_margin`` and ``safety_margin_tokens`` may be
                omitted: 0) or badly typed keys; an ambiguous ``safety_margin`` (see the class).
        """
        return _from_mapping(cls, data, source, prefix, optional=("safety_margin", "safety_margin_tokens"))


@dataclass(frozen=True)
class Prices:
    """Token prices in USD per million tokens. No prices are built in: give your provider's.

    Attributes:
        input_per_mtok: uncached input (prompt) tokens.
        output_per_mtok: output (completion) tokens.
        cached_input_per_mtok: input tokens read from the provider's prompt cache; set it equal to
            ``input_per_mtok`` when the provider has no prompt caching.

    Raises:
        InputError: a missing (None), negative or non-numeric price, or a cached price above the
            input price (a cache read never costs more than an uncached read).
    """

    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float

    def __post_init__(self) -> None:
        src = type(self).__name__
        for f in fields(self):
            object.__setattr__(self, f.name, _check_number(getattr(self, f.name), f.name, src))
        if self.cached_input_per_mtok > self.input_per_mtok:
            raise InputError(src, (
                f"cached_input_per_mtok: {self.cached_input_per_mtok:g} is above input_per_mtok "
                f"{self.input_per_mtok:g}; a cache read never costs more than an uncached one (set them "
                f"equal if the provider has no prompt caching)"))

    @property
    def has_cache_discount(self) -> bool:
        """True when cached input is cheaper than uncached input."""
        return self.cached_input_per_mtok < self.input_per_mtok

    @classmethod
    def from_mapping(cls, data: Any, source: str = "Prices", prefix: str = "") -> "Prices":
        """Build from a parsed YAML mapping; errors name ``source`` and ``prefix+key``.

        Raises:
            InputError: unknown, missing or badly typed keys; see the class docstring.
        """
        return _from_mapping(cls, data, source, prefix)


def request_cost(input_tokens: int, output_tokens: int, cached_tokens: int, prices: Prices) -> float:
    """USD cost of one request.

    ``((input_tokens - cached_tokens) * input + cached_tokens * cached_input + output_tokens * output) / 1e6``
    with the prices of ``prices`` (per million tokens). ``cached_tokens`` is the part of
    ``input_tokens`` read from the prompt cache, as providers report it (OpenAI
    ``usage.prompt_tokens_details.cached_tokens``).

    Raises:
        InputError: a negative or non-integer count, or ``cached_tokens > input_tokens``.

    >>> request_cost(63_500, 400, 60_000, Prices(2.0, 8.0, 0.5))
    0.0402
    """
    src = "request_cost"
    input_tokens = _check_int(input_tokens, "input_tokens", src)
    output_tokens = _check_int(output_tokens, "output_tokens", src)
    cached_tokens = _check_int(cached_tokens, "cached_tokens", src)
    if cached_tokens > input_tokens:
        raise InputError(src, f"cached_tokens: {cached_tokens:,} cached tokens is more than the {input_tokens:,} "
                              f"input tokens they are part of")
    if not isinstance(prices, Prices):
        raise InputError(src, f"prices: must be a Prices, got {type(prices).__name__}")
    micro = ((input_tokens - cached_tokens) * prices.input_per_mtok
             + cached_tokens * prices.cached_input_per_mtok
             + output_tokens * prices.output_per_mtok)
    return round(micro / 1e6, 12)  # drop float noise below a micro-cent


# ---------------------------------------------------------------------------------------------
# cache-augmented generation, adaptive routes, cost per correct answer


@dataclass(frozen=True)
class CagCost:
    """Cost of cache-augmented generation (CAG) over N queries, USD.

    Attributes:
        prefill_usd: the one-off prefill of the document prefix.
        per_query_usd: marginal cost of one query on the cached prefix; also the limit of the
            average cost per query as the number of queries grows.
        queries: N.
        total_usd: ``prefill_usd + N * per_query_usd``.
        average_per_query_usd: ``total_usd / N`` (``prefill_usd`` when N = 0).
    """

    prefill_usd: float
    per_query_usd: float
    queries: int
    total_usd: float
    average_per_query_usd: float


def cag_cost(prefix_tokens: int, queries: int, question_tokens: int, output_tokens: int, prices: Prices) -> CagCost:
    """Cache-augmented generation: prefill the documents once, then answer N queries on the cache.

    CAG (Chan et al., 2024, "Don't Do RAG: When Cache-Augmented Generation is All You Need for
    Knowledge Tasks", arXiv:2412.15605) loads the whole knowledge prefix once and reuses its KV
    cache for every query. With provider prompt caching the bill is:

    * prefill (once): ``prefix_tokens * input / 1e6``
    * each query: ``request_cost(prefix + question, output, cached=prefix)``
      = ``(prefix * cached_input + question * input + output * output) / 1e6``
    * total(N) = prefill + N * per_query; average(N) = total(N) / N, which falls towards
      ``per_query`` as N grows (the prefill is amortised away).

    Cache storage fees and cache expiry (providers evict after minutes to hours; each eviction
    is another prefill) are not modelled.

    Raises:
        InputError: negative or non-integer counts.
    """
    src = "cag_cost"
    prefix_tokens = _check_int(prefix_tokens, "prefix_tokens", src)
    queries = _check_int(queries, "queries", src)
    question_tokens = _check_int(question_tokens, "question_tokens", src)
    prefill = request_cost(prefix_tokens, 0, 0, prices)
    per_query = request_cost(prefix_tokens + question_tokens, output_tokens, prefix_tokens, prices)
    total = round(prefill + queries * per_query, 12)
    return CagCost(prefill, per_query, queries, total, round(total / queries, 12) if queries else prefill)


def adaptive_route_cost(initial_cost: float, fallback_rate: float, fallback_cost: float) -> float:
    """Expected cost per request of an adaptive route: try a cheap path, fall back when it fails.

    ``initial_cost + fallback_rate * fallback_cost``, where ``fallback_cost`` is the *incremental*
    cost of the fallback (what the second call adds; the first call is already paid). This is the
    Self-Route scheme (Li et al., EMNLP 2024 Industry, "Retrieval Augmented Generation or
    Long-Context LLMs? A Comprehensive Study and Hybrid Approach"): answer with RAG, and send the
    query to long context only when the model judges the retrieved context insufficient.

    Args:
        initial_cost: USD per request of the first path (e.g. RAG).
        fallback_rate: share of requests that fall back, in [0, 1].
        fallback_cost: USD added per request that falls back (e.g. a long-context request).

    Raises:
        InputError: a negative cost, or a rate outside [0, 1].
    """
    src = "adaptive_route_cost"
    initial_cost = _check_number(initial_cost, "initial_cost", src)
    fallback_rate = _check_number(fallback_rate, "fallback_rate", src, 0.0, 1.0)
    fallback_cost = _check_number(fallback_cost, "fallback_cost", src)
    return round(initial_cost + fallback_rate * fallback_cost, 12)


def cost_per_correct_answer(cost_per_request: float, accuracy: float) -> float:
    """USD per correctly supported answer: ``cost_per_request / accuracy``.

    ``accuracy`` is the share of answers that are correct *and* supported by their citations
    (e.g. from ``citewise eval``); a cheaper route that is wrong more often can cost more per
    useful answer.

    Raises:
        InputError: a negative cost, or an accuracy outside (0, 1] (at 0 no answer is correct and
            the cost per correct answer is undefined).
    """
    src = "cost_per_correct_answer"
    cost_per_request = _check_number(cost_per_request, "cost_per_request", src)
    accuracy = _check_number(accuracy, "accuracy", src, 0.0, 1.0)
    if accuracy == 0:
        raise InputError(src, "accuracy: 0 means no answer is correct; cost per correct answer is undefined")
    return round(cost_per_request / accuracy, 12)


# ---------------------------------------------------------------------------------------------
# workload and recommendation


@dataclass(frozen=True)
class Accuracy:
    """Measured share of correctly supported answers per path, each in (0, 1]."""

    long_context: float
    rag: float

    def __post_init__(self) -> None:
        for f in fields(self):
            v = _check_number(getattr(self, f.name), f.name, type(self).__name__, 0.0, 1.0)
            if v == 0:
                raise InputError(type(self).__name__, f"{f.name}: must be > 0")
            object.__setattr__(self, f.name, v)

    @classmethod
    def from_mapping(cls, data: Any, source: str = "Accuracy", prefix: str = "") -> "Accuracy":
        """Build from a parsed YAML mapping; errors name ``source`` and ``prefix+key``."""
        return _from_mapping(cls, data, source, prefix)


@dataclass(frozen=True)
class Workload:
    """What the system must serve. The YAML keys of ``citewise recommend`` are these field names.

    Attributes:
        corpus_tokens: o200k_base tokens of the documents one user may read (the largest such set).
        requests_per_day: questions per day.
        output_tokens: average answer length, tokens (<= ``budget.max_output_tokens``).
        per_user_permissions: users see different documents (ACLs).
        structured_share: share of questions about records (transactions, invoices...), in [0, 1].
        updates_per_day: corpus updates per day (0 for a static corpus; may be fractional).
        rag_context_tokens: retrieved context per RAG request (e.g. five 400-token chunks = 2,000).
        max_input_tokens_for_slo: largest input that still meets the latency SLO (time to first
            token grows with prefill); None = no latency limit.
        daily_budget_usd: spend limit per day; None = no limit.
        budget: the model's :class:`ContextBudget`.
        prices: the model's :class:`Prices`.
        accuracy: optional measured :class:`Accuracy` per path (adds cost per correct answer).

    Raises:
        InputError: a field out of range, ``output_tokens`` above the output reserve, or
            ``rag_context_tokens`` above the tokens available for documents.
    """

    corpus_tokens: int
    requests_per_day: int
    output_tokens: int
    per_user_permissions: bool
    structured_share: float
    updates_per_day: float
    rag_context_tokens: int
    max_input_tokens_for_slo: int | None
    daily_budget_usd: float | None
    budget: ContextBudget
    prices: Prices
    accuracy: Accuracy | None = None

    def __post_init__(self) -> None:
        src = type(self).__name__
        for name in ("corpus_tokens", "requests_per_day", "output_tokens", "rag_context_tokens"):
            object.__setattr__(self, name, _check_int(getattr(self, name), name, src))
        if not isinstance(self.per_user_permissions, bool):
            raise InputError(src, f"per_user_permissions: must be true or false, got {self.per_user_permissions!r}")
        object.__setattr__(self, "structured_share", _check_number(self.structured_share, "structured_share", src, 0.0, 1.0))
        object.__setattr__(self, "updates_per_day", _check_number(self.updates_per_day, "updates_per_day", src))
        if self.max_input_tokens_for_slo is not None:
            object.__setattr__(self, "max_input_tokens_for_slo",
                               _check_int(self.max_input_tokens_for_slo, "max_input_tokens_for_slo", src, 1))
        if self.daily_budget_usd is not None:
            object.__setattr__(self, "daily_budget_usd", _check_number(self.daily_budget_usd, "daily_budget_usd", src))
        for name, typ in (("budget", ContextBudget), ("prices", Prices)):
            if not isinstance(getattr(self, name), typ):
                raise InputError(src, f"{name}: must be a {typ.__name__}, got {type(getattr(self, name)).__name__}")
        if self.accuracy is not None and not isinstance(self.accuracy, Accuracy):
            raise InputError(src, f"accuracy: must be an Accuracy, got {type(self.accuracy).__name__}")
        if self.output_tokens > self.budget.max_output_tokens:
            raise InputError(src, f"output_tokens: {self.output_tokens:,} is above budget.max_output_tokens "
                                  f"{self.budget.max_output_tokens:,}")
        if self.rag_context_tokens > self.budget.available_for_documents:
            raise InputError(src, f"rag_context_tokens: {self.rag_context_tokens:,} is above the "
                                  f"{self.budget.available_for_documents:,} tokens available for documents")

    @classmethod
    def from_mapping(cls, data: Any, source: str = "Workload") -> "Workload":
        """Build from a parsed YAML mapping (nested ``budget``, ``prices``, optional ``accuracy``).

        ``max_input_tokens_for_slo`` and ``daily_budget_usd`` must be present; ``null`` means no
        limit. Errors name ``source`` (the file) and the dotted key, e.g. ``prices.input_per_mtok``.

        Raises:
            InputError: unknown, missing or badly typed keys, or any error of the fields.
        """
        values = _check_keys(data, cls, source, "", optional=("accuracy",))
        values["budget"] = ContextBudget.from_mapping(values["budget"], source, "budget.")
        values["prices"] = Prices.from_mapping(values["prices"], source, "prices.")
        if values.get("accuracy") is not None:
            values["accuracy"] = Accuracy.from_mapping(values["accuracy"], source, "accuracy.")
        try:
            return cls(**values)
        except InputError as e:
            raise InputError(source, e.reason) from None

    # --- derived figures -----------------------------------------------------------------

    @property
    def uses_prompt_cache(self) -> bool:
        """Long context shares a cached corpus prefix: no per-user permissions and a cache discount."""
        return not self.per_user_permissions and self.prices.has_cache_discount

    @property
    def long_context_input_tokens(self) -> int:
        """Input tokens of one long-context request: system prompt + corpus + question allowance."""
        b = self.budget
        return b.system_prompt_tokens + self.corpus_tokens + b.max_question_tokens

    @property
    def rag_input_tokens(self) -> int:
        """Input tokens of one RAG request: system prompt + retrieved context + question allowance.

        The retrieved context is ``min(rag_context_tokens, corpus_tokens)``: retrieval cannot
        return more text than the corpus holds.
        """
        b = self.budget
        return b.system_prompt_tokens + min(self.rag_context_tokens, self.corpus_tokens) + b.max_question_tokens

    def long_context_request_cost(self) -> float:
        """USD per long-context request; the corpus is the cached part when :attr:`uses_prompt_cache`."""
        cached = self.corpus_tokens if self.uses_prompt_cache else 0
        return request_cost(self.long_context_input_tokens, self.output_tokens, cached, self.prices)

    def cache_invalidation_cost_per_day(self) -> float:
        """USD/day for re-reading the corpus uncached after each update (0 without a prompt cache).

        ``min(updates_per_day, requests_per_day) * corpus_tokens * (input - cached_input) / 1e6``:
        the first request after an update misses the cache for the whole corpus.
        """
        if not self.uses_prompt_cache or not self.updates_per_day or not self.requests_per_day:
            return 0.0
        p = self.prices
        misses = min(self.updates_per_day, float(self.requests_per_day))
        return round(misses * self.corpus_tokens * (p.input_per_mtok - p.cached_input_per_mtok) / 1e6, 12)

    def long_context_cost_per_day(self) -> float:
        """USD/day of long context: requests x request cost + cache invalidation after updates."""
        return round(self.requests_per_day * self.long_context_request_cost()
                     + self.cache_invalidation_cost_per_day(), 9)

    def rag_request_cost(self) -> float:
        """USD per RAG request (no cached part: see the module docstring)."""
        return request_cost(self.rag_input_tokens, self.output_tokens, 0, self.prices)

    def rag_cost_per_day(self) -> float:
        """USD/day of RAG: requests x request cost."""
        return round(self.requests_per_day * self.rag_request_cost(), 9)


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

    def as_dict(self) -> dict:
        """JSON-ready dict (the ``--json`` output of ``citewise recommend``)."""
        d = {
            "primary": self.primary,
            "add_tools": self.add_tools,
            "long_context_cost_per_day": round(self.long_context_cost_per_day, 6),
            "rag_cost_per_day": round(self.rag_cost_per_day, 6),
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
            f"{b.system_prompt_tokens:,} - question {b.max_question_tokens:,} - safety margin {b.margin_tokens:,}): use RAG")
    if not within_slo:
        reasons.append(
            f"a long-context request would send {lc_in:,} input tokens, above the latency limit of {slo:,} "
            f"(max_input_tokens_for_slo): use RAG ({rag_in:,} input tokens per request)")
    if over_budget:
        if rag_day < lc_day:
            reasons.append(f"long context would cost {_usd(lc_day)}/day, above the daily budget of {_usd(cap)}; "
                           f"RAG costs {_usd(rag_day)}/day: use RAG")
        else:
            reasons.append(f"long context would cost {_usd(lc_day)}/day, above the daily budget of {_usd(cap)}, "
                           f"but RAG would cost more ({_usd(rag_day)}/day)")
    use_rag = (not fits) or (not within_slo) or (over_budget and rag_day < lc_day)
    primary: Primary = "rag" if use_rag else "long_context"

    if primary == "long_context":
        budget_txt = f"within the daily budget of {_usd(cap)}" if cap is not None else "with no daily budget set"
        slo_txt = f"within the latency limit of {slo:,}" if slo is not None else "with no latency limit set"
        reasons.append(
            f"the corpus ({w.corpus_tokens:,} tokens) fits the {avail:,} tokens available for documents, "
            f"{lc_in:,} input tokens per request is {slo_txt}, and {_usd(lc_day)}/day is {budget_txt}: "
            f"use long context, which is simpler and cannot miss a passage retrieval would miss "
            f"(RAG would cost {_usd(rag_day)}/day)")
    else:
        if cap is not None and rag_day > cap:
            reasons.append(f"RAG too costs {_usd(rag_day)}/day, above the daily budget of {_usd(cap)}: "
                           f"lower rag_context_tokens, output_tokens or the price per token")
        if slo is not None and rag_in > slo:
            reasons.append(f"a RAG request too sends {rag_in:,} input tokens, above the latency limit of {slo:,}: "
                           f"lower rag_context_tokens")

    if w.per_user_permissions:
        if w.prices.has_cache_discount:
            shared = replace(w, per_user_permissions=False).long_context_cost_per_day()
            cache_txt = f" ({_usd(lc_day)}/day instead of {_usd(shared)}/day with a shared cached prefix)"
        else:
            cache_txt = ""
        reasons.append(
            f"per-user permissions remove the shared cacheable prefix: each user's context holds only the "
            f"documents they may read, so long context pays the full input price on every request{cache_txt}")
        if primary == "rag":
            reasons.append("filter by ACL inside the retrieval query (the store applies the principal's groups "
                           "during the search, never after it), so no restricted chunk reaches the prompt")
        else:
            reasons.append("build each user's context from only the documents their groups may read")

    if w.updates_per_day > 0:
        if primary == "rag":
            reasons.append(f"{w.updates_per_day:g} updates/day: use incremental ingestion (re-embed only new and "
                           f"changed documents, delete removed ones; 'citewise ingest' compares content hashes)")
        elif w.uses_prompt_cache:
            reasons.append(f"{w.updates_per_day:g} updates/day: each update invalidates the cached prefix, and the "
                           f"next request pays the full input price for the corpus again "
                           f"(+{_usd(w.cache_invalidation_cost_per_day())}/day, included above)")
        else:
            reasons.append(f"{w.updates_per_day:g} updates/day: each request reads the current documents "
                           f"(no prompt cache to invalidate)")

    add_tools = w.structured_share >= STRUCTURED_SHARE_FOR_TOOLS
    if add_tools:
        reasons.append(f"{w.structured_share:.0%} of questions are about records (structured_share >= "
                       f"{STRUCTURED_SHARE_FOR_TOOLS:g}): add tools (tool calls such as a guarded sql_query) "
                       f"for them; documents do not hold per-customer records")
    else:
        reasons.append(f"{w.structured_share:.0%} of questions are about records (< {STRUCTURED_SHARE_FOR_TOOLS:g}): "
                       f"no tools needed")

    per_correct: dict[str, float] = {}
    if w.accuracy is not None:
        n = w.requests_per_day or 1
        per_correct = {
            "long_context": cost_per_correct_answer(lc_day / n, w.accuracy.long_context),
            "rag": cost_per_correct_answer(rag_day / n, w.accuracy.rag),
        }
        reasons.append(
            f"cost per correctly supported answer: long context {per_correct['long_context']:.6f} USD "
            f"(accuracy {w.accuracy.long_context:.0%}), RAG {per_correct['rag']:.6f} USD (accuracy {w.accuracy.rag:.0%})")

    return Recommendation(primary, add_tools, lc_day, rag_day, reasons, lc_in, rag_in, avail, per_correct)


# ---------------------------------------------------------------------------------------------
# files: workload YAML and corpus token counts


def load_workload(path: str | Path) -> Workload:
    """Read a workload YAML file (keys: the :class:`Workload` field names).

    Raises:
        InputError: unreadable file, bad YAML (with its line), unknown/missing/badly typed keys.
    """
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(str(path), f"cannot read workload file: {getattr(e, 'strerror', None) or e}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise InputError(str(path), f"bad YAML: {getattr(e, 'problem', None) or e}",
                         mark.line + 1 if mark is not None else None) from None
    if data is None:
        raise InputError(str(path), "empty workload file")
    return Workload.from_mapping(data, str(path))


@dataclass(frozen=True)
class CorpusTokens:
    """o200k_base tokens of the documents each principal may read.

    Attributes:
        root: the folder counted.
        tokens: principal (``public`` or a group) → tokens of the documents it may read.
        documents: principal → number of documents it may read.
        groups: every group declared in the corpus's permissions, sorted.
        skipped: one line per file that failed to load (``path: reason``).
        differ: two principals see different document sets (per-user permissions apply).
    """

    root: str
    tokens: dict[str, int]
    documents: dict[str, int]
    groups: tuple[str, ...]
    skipped: tuple[str, ...]
    differ: bool

    @property
    def max_tokens(self) -> int:
        """The largest corpus any one principal may read (what a long-context prompt must hold)."""
        return max(self.tokens.values())


def count_corpus_tokens(root: str | Path, groups: Iterable[str] | None = None) -> CorpusTokens:
    """Count the o200k_base tokens of a folder's documents, per principal.

    Each document's body text (front matter removed) is counted. A document without permissions,
    or whose permissions include ``public``, is readable by everyone (the ingest default). The
    principals are ``public`` plus one per group of ``groups``; each group sees the public
    documents plus those it is named in. Without ``groups``, every group declared in the corpus.
    ``differ`` is True when two principals see different document sets (per-user permissions).

    Raises:
        InputError: ``root`` does not exist, or no document could be loaded.
    """
    from citewise.text.loaders import load_folder
    from citewise.text.tokens import count_tokens_batch

    docs, skipped = [], []
    for item in load_folder(Path(root)):
        if isinstance(item, CitewiseError):
            skipped.append(str(item))
        else:
            docs.append(item)
    if not docs:
        raise InputError(str(root), "no document could be loaded to count its tokens")
    counts = count_tokens_batch([d.text for d in docs])
    declared = tuple(sorted({g for d in docs for g in d.groups if g != PUBLIC_GROUP}))
    principals = [PUBLIC_GROUP] + sorted({g for g in (groups if groups is not None else declared) if g != PUBLIC_GROUP})
    tokens: dict[str, int] = {}
    ndocs: dict[str, int] = {}
    seen: dict[str, frozenset[str]] = {}
    for p in principals:
        visible = [i for i, d in enumerate(docs) if not d.groups or PUBLIC_GROUP in d.groups or p in d.groups]
        tokens[p] = int(sum(int(counts[i]) for i in visible))
        ndocs[p] = len(visible)
        seen[p] = frozenset(docs[i].doc_id for i in visible)
    differ = len(set(seen.values())) > 1
    return CorpusTokens(str(root), tokens, ndocs, declared, tuple(skipped), differ)
