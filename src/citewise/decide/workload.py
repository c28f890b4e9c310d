"""The workload a system must serve (:class:`Workload`) and its YAML file."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from citewise.core import InputError
from citewise.decide.costs import ContextBudget, Prices, cag_cost, request_cost
from citewise.decide.validation import _check_int, _check_keys, _check_number, _from_mapping


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
        object.__setattr__(
            self, "structured_share", _check_number(self.structured_share, "structured_share", src, 0.0, 1.0)
        )
        object.__setattr__(self, "updates_per_day", _check_number(self.updates_per_day, "updates_per_day", src))
        if self.max_input_tokens_for_slo is not None:
            object.__setattr__(
                self,
                "max_input_tokens_for_slo",
                _check_int(self.max_input_tokens_for_slo, "max_input_tokens_for_slo", src, 1),
            )
        if self.daily_budget_usd is not None:
            object.__setattr__(self, "daily_budget_usd", _check_number(self.daily_budget_usd, "daily_budget_usd", src))
        for name, typ in (("budget", ContextBudget), ("prices", Prices)):
            if not isinstance(getattr(self, name), typ):
                raise InputError(src, f"{name}: must be a {typ.__name__}, got {type(getattr(self, name)).__name__}")
        if self.accuracy is not None and not isinstance(self.accuracy, Accuracy):
            raise InputError(src, f"accuracy: must be an Accuracy, got {type(self.accuracy).__name__}")
        if self.output_tokens > self.budget.max_output_tokens:
            raise InputError(
                src,
                f"output_tokens: {self.output_tokens:,} is above budget.max_output_tokens "
                f"{self.budget.max_output_tokens:,}",
            )
        if self.rag_context_tokens > self.budget.available_for_documents:
            raise InputError(
                src,
                f"rag_context_tokens: {self.rag_context_tokens:,} is above the "
                f"{self.budget.available_for_documents:,} tokens available for documents",
            )

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
        return request_cost(self.long_context_input_tokens, self.output_tokens, self.prices, cached)

    def cache_invalidation_cost_per_day(self) -> float:
        """USD/day for re-reading the corpus uncached after each update (0 without a prompt cache).

        ``min(updates_per_day, requests_per_day) * corpus_tokens * (input - cached_input) / 1e6``:
        the first request after an update misses the cache for the whole corpus.
        """
        if not self.uses_prompt_cache or not self.updates_per_day or not self.requests_per_day:
            return 0.0
        p = self.prices
        misses = min(self.updates_per_day, float(self.requests_per_day))
        return round(misses * self.corpus_tokens * (p.input_per_mtok - p.cached_rate) / 1e6, 12)

    def long_context_cost_per_day(self) -> float:
        """USD/day of long context: requests x request cost + cache invalidation after updates."""
        return round(
            self.requests_per_day * self.long_context_request_cost() + self.cache_invalidation_cost_per_day(), 9
        )

    def rag_request_cost(self) -> float:
        """USD per RAG request (no cached part: see the module docstring)."""
        return request_cost(self.rag_input_tokens, self.output_tokens, self.prices)

    def rag_cost_per_day(self) -> float:
        """USD/day of RAG: requests x request cost."""
        return round(self.requests_per_day * self.rag_request_cost(), 9)

    # --- cache-augmented generation (the indexing document's CAG) ----------------------------

    @property
    def cag_prefills_per_day(self) -> float:
        """Corpus prefills per day under CAG: one per corpus version, at least one a day (a
        cache is rebuilt at least daily in this per-day model: server restarts, provider
        cache lifetimes)."""
        return max(self.updates_per_day, 1.0)

    @property
    def requests_per_cache(self) -> float:
        """Requests served by one cached prefill: ``requests_per_day / cag_prefills_per_day``."""
        return self.requests_per_day / self.cag_prefills_per_day

    def cag_cost_per_day(self) -> float:
        """USD/day of CAG (the indexing document, "Cache-Augmented Generation"): the corpus is
        prefilled once per version at the full input price (:attr:`cag_prefills_per_day`) and
        every request reads it at the cached rate (its question, system prompt and output at the
        full prices) — ``C_prefill + N (C_generate - C_prefill + alpha C_prefill)`` per version,
        with ``alpha = cached / input`` price."""
        c = cag_cost(
            self.corpus_tokens,
            self.requests_per_day,
            self.budget.system_prompt_tokens + self.budget.max_question_tokens,
            self.output_tokens,
            self.prices,
        )
        return round(self.cag_prefills_per_day * c.prefill_usd + self.requests_per_day * c.per_query_usd, 9)


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
        raise InputError(
            str(path), f"bad YAML: {getattr(e, 'problem', None) or e}", mark.line + 1 if mark is not None else None
        ) from None
    if data is None:
        raise InputError(str(path), "empty workload file")
    return Workload.from_mapping(data, str(path))
