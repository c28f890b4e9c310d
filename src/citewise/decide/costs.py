"""Context budget, token prices and the cost of one request, CAG, adaptive routes and correct answers.

Prices are USD per million tokens (:class:`Prices`); none are built in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from citewise.core import InputError
from citewise.decide.validation import _check_fraction, _check_int, _check_number, _from_mapping

#: The design documents' default safety margin: 10% of the window kept free for tokenizer drift
#: between our o200k_base counts and the provider's ("I would rather find out from a 10% margin
#: than from a 400 error in production").
DEFAULT_SAFETY_MARGIN = 0.10


@dataclass(frozen=True)
class ContextBudget:
    """How many tokens of a model's context window are left for documents.

    ``available_for_documents = context_window - max_output_tokens - system_prompt_tokens
    - max_question_tokens - margin_tokens`` (the output reserve counts against the window because
    chat models share one window between prompt and completion), where ``margin_tokens =
    ceil(context_window * safety_margin) + safety_margin_tokens``. This is the design documents'
    ``usable = int(context_window * (1 - safety_margin))`` minus the reserves, with the margin
    rounded up instead of the usable part rounded down.

    ``safety_margin`` is a *fraction* of the window, 0.10 = 10% (:data:`DEFAULT_SAFETY_MARGIN`,
    the documents' default). A value of 1 or more (say ``2000`` or ``1.5``) is refused as
    ambiguous; an absolute number of tokens goes in ``safety_margin_tokens``, and then the
    fraction defaults to 0 (a budget never counts its margin twice; giving both is refused).

    Attributes:
        context_window: the model's context window, tokens (e.g. 128,000).
        max_output_tokens: tokens reserved for the answer (the request's ``max_tokens``).
        system_prompt_tokens: tokens of the system prompt (instructions, citation rules).
        max_question_tokens: allowance for the user's question (and short chat history), default 500.
        safety_margin: share of the window kept free for chat-template overhead and tokenizer
            mismatch; 0 <= safety_margin < 1; default (None) 0.10, or 0 when
            ``safety_margin_tokens`` is given.
        safety_margin_tokens: the same reserve as a number of tokens, default 0.

    Raises:
        InputError: a negative or non-integer token field, a safety_margin outside [0, 1), both
            margins given, or nothing left for documents.

    >>> b = ContextBudget(128_000, 400, 3_000)
    >>> b.safety_margin, b.available_for_documents, b.fits(60_000), b.fits(111_301)
    (0.1, 111300, True, False)
    """

    context_window: int
    max_output_tokens: int
    system_prompt_tokens: int
    max_question_tokens: int = 500
    safety_margin: float | None = None
    safety_margin_tokens: int = 0

    def __post_init__(self) -> None:
        src = type(self).__name__
        if self.safety_margin is None:
            default = 0.0 if self.safety_margin_tokens else DEFAULT_SAFETY_MARGIN
            object.__setattr__(self, "safety_margin", default)
        for f in fields(self):
            if f.name == "safety_margin":
                object.__setattr__(self, f.name, _check_fraction(self.safety_margin, f.name, src))
                continue
            object.__setattr__(
                self,
                f.name,
                _check_int(getattr(self, f.name), f.name, src, minimum=1 if f.name == "context_window" else 0),
            )
        if self.safety_margin and self.safety_margin_tokens:
            raise InputError(
                src,
                (
                    f"safety_margin: give either safety_margin (a fraction of the window, here {self.safety_margin:g}) "
                    f"or safety_margin_tokens (here {self.safety_margin_tokens:,}), not both"
                ),
            )
        if self.available_for_documents <= 0:
            raise InputError(
                src,
                (
                    f"context_window: {self.context_window:,} tokens leave no room for documents after "
                    f"{self.max_output_tokens:,} output + {self.system_prompt_tokens:,} system prompt + "
                    f"{self.max_question_tokens:,} question + {self.margin_tokens:,} safety margin"
                ),
            )

    @property
    def margin_tokens(self) -> int:
        """Tokens the safety margin keeps free: ``ceil(context_window * safety_margin)`` (rounded
        to 6 decimals first, so 128,000 x 0.10 is 12,800, not 12,801) plus ``safety_margin_tokens``."""
        return math.ceil(round(self.context_window * self.safety_margin, 6)) + self.safety_margin_tokens

    @property
    def available_for_documents(self) -> int:
        """Tokens available for documents in one request (see the class docstring)."""
        return (
            self.context_window
            - self.max_output_tokens
            - self.system_prompt_tokens
            - self.max_question_tokens
            - self.margin_tokens
        )

    def fits(self, corpus_tokens: int) -> bool:
        """Whether a corpus of ``corpus_tokens`` fits :attr:`available_for_documents`.

        Raises:
            InputError: a negative or non-integer count.
        """
        return _check_int(corpus_tokens, "corpus_tokens", "ContextBudget.fits") <= self.available_for_documents

    @classmethod
    def from_mapping(cls, data: Any, source: str = "ContextBudget", prefix: str = "") -> "ContextBudget":
        """Build from a parsed YAML mapping; errors name ``source`` and ``prefix+key``.

        Raises:
            InputError: unknown, missing (``max_question_tokens``, ``safety_margin`` and
                ``safety_margin_tokens`` may be omitted: the defaults) or badly typed keys; an
                ambiguous ``safety_margin`` (see the class).
        """
        return _from_mapping(
            cls, data, source, prefix, optional=("max_question_tokens", "safety_margin", "safety_margin_tokens")
        )


@dataclass(frozen=True)
class Prices:
    """Token prices in USD per million tokens. No prices are built in: give your provider's.

    ``Prices(input, output, cached=None)``, as the design documents write it.

    Attributes:
        input_per_mtok: uncached input (prompt) tokens.
        output_per_mtok: output (completion) tokens.
        cached_input_per_mtok: input tokens read from the provider's prompt cache; None (the
            default) when the provider has no prompt caching: cached tokens are then billed at
            ``input_per_mtok``.

    Raises:
        InputError: a missing (None input or output), negative or non-numeric price, or a cached
            price above the input price (a cache read never costs more than an uncached read).
    """

    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None

    def __post_init__(self) -> None:
        src = type(self).__name__
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "cached_input_per_mtok" and value is None:
                continue
            object.__setattr__(self, f.name, _check_number(value, f.name, src))
        if self.cached_input_per_mtok is not None and self.cached_input_per_mtok > self.input_per_mtok:
            raise InputError(
                src,
                (
                    f"cached_input_per_mtok: {self.cached_input_per_mtok:g} is above input_per_mtok "
                    f"{self.input_per_mtok:g}; a cache read never costs more than an uncached one (leave it out "
                    f"if the provider has no prompt caching)"
                ),
            )

    @property
    def cached_rate(self) -> float:
        """USD per million cached input tokens: ``cached_input_per_mtok``, or the input price when none."""
        return self.input_per_mtok if self.cached_input_per_mtok is None else self.cached_input_per_mtok

    @property
    def has_cache_discount(self) -> bool:
        """True when cached input is cheaper than uncached input."""
        return self.cached_rate < self.input_per_mtok

    @classmethod
    def from_mapping(cls, data: Any, source: str = "Prices", prefix: str = "") -> "Prices":
        """Build from a parsed YAML mapping; errors name ``source`` and ``prefix+key``
        (``cached_input_per_mtok`` may be omitted or null: no prompt caching).

        Raises:
            InputError: unknown, missing or badly typed keys; see the class docstring.
        """
        return _from_mapping(cls, data, source, prefix, optional=("cached_input_per_mtok",))


def request_cost(
    input_tokens: int,
    output_tokens: int,
    prices: Prices,
    cached_input_tokens: int = 0,
    *,
    cached_tokens: int | None = None,
) -> float:
    """USD cost of one request, called as the design documents call it:
    ``request_cost(input_tokens, output_tokens, prices, cached_input_tokens=0)``.

    ``((input_tokens - cached) * input + cached * cached_input + output_tokens * output) / 1e6``
    with the prices of ``prices`` (per million tokens). ``cached_input_tokens`` is the part of
    ``input_tokens`` read from the prompt cache, as providers report it (OpenAI
    ``usage.prompt_tokens_details.cached_tokens``); with no cached price (``Prices.cached_input_per_mtok``
    None) it is billed at the input price. ``cached_tokens=`` is the same argument under its
    earlier keyword name. The earlier positional order ``(input, output, cached, prices)`` is
    recognised by the argument types (a :class:`Prices` is never a token count).

    Raises:
        InputError: a negative or non-integer count, ``cached > input_tokens``, or no Prices.

    >>> request_cost(63_500, 400, Prices(2.0, 8.0, 0.5), 60_000)
    0.0402
    >>> request_cost(63_500, 400, Prices(2.0, 8.0))
    0.1302
    """
    src = "request_cost"
    if not isinstance(prices, Prices) and isinstance(cached_input_tokens, Prices):
        prices, cached_input_tokens = cached_input_tokens, prices  # (input, output, cached, prices)
    if cached_tokens is not None:
        if cached_input_tokens:
            raise InputError(src, "cached_tokens: give cached_input_tokens or cached_tokens, not both")
        cached_input_tokens = cached_tokens
    input_tokens = _check_int(input_tokens, "input_tokens", src)
    output_tokens = _check_int(output_tokens, "output_tokens", src)
    cached = _check_int(cached_input_tokens, "cached_input_tokens", src)
    if cached > input_tokens:
        raise InputError(
            src,
            f"cached_input_tokens: {cached:,} cached tokens is more than the {input_tokens:,} "
            f"input tokens they are part of",
        )
    if not isinstance(prices, Prices):
        raise InputError(src, f"prices: must be a Prices, got {type(prices).__name__}")
    micro = (
        (input_tokens - cached) * prices.input_per_mtok
        + cached * prices.cached_rate
        + output_tokens * prices.output_per_mtok
    )
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
    prefill = request_cost(prefix_tokens, 0, prices)
    per_query = request_cost(prefix_tokens + question_tokens, output_tokens, prices, prefix_tokens)
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
