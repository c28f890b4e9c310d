"""Decide the shape of a system before building it: long context, RAG (and CAG), and/or tools, with costs.

The answer falls out of a few numbers (a :class:`Workload`): corpus size against the context
budget, per-user permissions, updates per day, the share of questions about records, the latency
limit expressed in input tokens, and the daily budget. :func:`recommend` applies the rules and
says why; the cost helpers (:func:`request_cost`, :func:`cag_cost`, :func:`adaptive_route_cost`,
:func:`cost_per_correct_answer`) can also be used on their own, and :mod:`citewise.decide.latency`
measures the ReAct loop's latency terms from recorded spans.

Modules: :mod:`~citewise.decide.costs` (budget, prices, request and CAG costs),
:mod:`~citewise.decide.workload` (the workload and its YAML), :mod:`~citewise.decide.recommend`,
:mod:`~citewise.decide.corpus` (token counts per principal), :mod:`~citewise.decide.latency`.

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
* CAG: the corpus prefilled once per version (at least once a day) at the full input price, then
  every request reads it at the cached price (:meth:`Workload.cag_cost_per_day`).

Worked example (the decision document's figures): prices 2.00 input / 0.50 cached / 8.00 output,
a 60,000-token corpus, a 3,000-token system prompt, a 500-token question allowance, 400-token
answers, 2,000 requests/day, five 400-token chunks for RAG, the default 10% safety margin:

* long context, shared prefix: (60,000 x 0.50 + 3,500 x 2.00 + 400 x 8.00) / 1e6 x 2,000 = 80.40/day
* long context, per-user permissions: (63,500 x 2.00 + 400 x 8.00) / 1e6 x 2,000 = 260.40/day
* RAG: ((3,000 + 2,000 + 500) x 2.00 + 400 x 8.00) / 1e6 x 2,000 = 28.40/day
* CAG: 60,000 x 2.00 / 1e6 + 80.40 = 80.52/day
"""

from citewise.decide.corpus import CorpusTokens, count_corpus_tokens
from citewise.decide.costs import (
    DEFAULT_SAFETY_MARGIN,
    CagCost,
    ContextBudget,
    Prices,
    adaptive_route_cost,
    cag_cost,
    cost_per_correct_answer,
    request_cost,
)
from citewise.decide.recommend import (
    CAG_MAX_PREFILL_SHARE,
    STRUCTURED_SHARE_FOR_TOOLS,
    Primary,
    Recommendation,
    recommend,
)
from citewise.decide.workload import Accuracy, Workload, load_workload

__all__ = [
    "Accuracy",
    "CAG_MAX_PREFILL_SHARE",
    "CagCost",
    "ContextBudget",
    "CorpusTokens",
    "DEFAULT_SAFETY_MARGIN",
    "Prices",
    "Primary",
    "Recommendation",
    "STRUCTURED_SHARE_FOR_TOOLS",
    "Workload",
    "adaptive_route_cost",
    "cag_cost",
    "cost_per_correct_answer",
    "count_corpus_tokens",
    "load_workload",
    "recommend",
    "request_cost",
]
