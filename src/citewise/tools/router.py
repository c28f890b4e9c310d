"""Routers: which tool answers a question, with which arguments.

A :class:`Route` has a ``kind`` and planned tool calls:

* ``record``   - a record tool (exact figures from the system of record);
* ``document`` - ``vector_search`` (retrieval-augmented answer from the documents);
* ``both``     - the record tool for the number, ``vector_search`` for the rule, compared in code;
* ``none``     - nothing fits: abstain.

Routers:

* :class:`RuleRouter` (default, deterministic, no LLM):
  1. slot filling (:func:`extract_slots`): identifiers (``C-1002``, ``invoice 2041``, ``E-1006``),
     ISO dates and ``today``/``yesterday``, years and ``this year``/``last year``, amounts, and enum
     values through a synonym table (``overdue`` -> ``past_due``);
  2. a record tool is *feasible* when every required parameter can be filled from the slots;
  3. feasible tools are ranked by ``cosine(question, tool's positive description)`` (the index's
     embedder) ``+ 0.1 * parameters filled + 0.15 * cue match`` (count cues -> ``count_*`` tools,
     money cues -> ``*_total``/``*amount*`` tools); the best with cosine >= ``min_record_sim`` wins;
  4. the winner is ``both`` when it declares a ``policy`` and the question names one of the
     policy's ``cues`` (``limit``, ``exceed`` ...), else ``record``;
  5. with no record tool: ``document`` when the question names a document identifier or the
     ``probe``'s evidence reaches ``doc_threshold``, else ``none``. The index probe
     (:func:`index_probe`) says whether the answerer has enough evidence, so ``none`` and
     abstention agree. Without a probe, the cosine to the ``vector_search`` description is used
     instead (weaker).
* :class:`EmbeddingRouter` (the weaker baseline): argmax of cosine to all tool descriptions,
  ``none`` below a threshold, same slot filling; it cannot route ``both``.
* :class:`LLMRouter`: function calling through an OpenAI-compatible :class:`ChatModel`.

The constants (0.1, 0.15, ``min_record_sim`` 0.2, ``doc_threshold`` 0.15) were set on the
routing set ``sample/routing.jsonl`` after its labels were written (documents' best corpus
cosine >= 0.20, off-topic questions <= 0.11 there); there is no separate dev split yet.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from citewise.tools.base import Tool, spec

KINDS = ("record", "document", "both", "none")

#: Enum synonyms (phrase -> canonical value); longest phrases are matched first.
ENUM_SYNONYMS = {
    "partially refunded": "partially_refunded", "partial refund": "partially_refunded",
    "past due": "past_due", "past-due": "past_due", "overdue": "past_due", "late": "past_due",
    "unpaid": "open", "outstanding": "open", "open": "open",
    "disputed": "disputed", "in dispute": "disputed", "refunded": "refunded", "paid": "paid",
}

_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
#: Numbers that are identifiers, not years: "#2017", "invoice 2017", "order no. 2017".
_NUMBERED = re.compile(r"#\s*\d+|\b(?:invoice|order|contract|ticket|number|no\.?)\s*#?\s*\d+", re.IGNORECASE)
_YEAR = re.compile(r"(?<![\w-])((?:19|20)\d{2})(?![\w-])")
_AMOUNT = re.compile(r"(?:\$\s?(\d[\d,]*(?:\.\d+)?))|(?:\b(\d[\d,]*(?:\.\d+)?)\s?(?:USD|usd|dollars)\b)")
_DOC_IDENT = re.compile(r"\b(?:[A-Za-z]{1,5}-\d{3,}|v\d+(?:\.\d+)+)\b")
_WORD = re.compile(r"[a-z]+")
COUNT_CUES = ("how many", "count", "number of")
MONEY_CUES = ("how much", "total amount", "total", "sum", "money", "dollars", "usd", "$")


@dataclass(frozen=True)
class PlannedCall:
    """One tool call a route plans: tool name and JSON arguments."""

    name: str
    arguments: dict


@dataclass
class Route:
    """A routing decision.

    Attributes:
        kind: ``record`` | ``document`` | ``both`` | ``none``.
        calls: planned tool calls (record tool first, then ``vector_search`` for ``both``).
        reason: a short human explanation.
        scores: tool name -> similarity used in the decision.
    """

    kind: str
    calls: list[PlannedCall] = field(default_factory=list)
    reason: str = ""
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def tool(self) -> str | None:
        """The primary tool: the record tool for record/both, ``vector_search`` for document."""
        return self.calls[0].name if self.calls else None

    @property
    def arguments(self) -> dict:
        return dict(self.calls[0].arguments) if self.calls else {}


def _has(text: str, phrase: str) -> bool:
    if not phrase[0].isalnum():
        return phrase in text
    return re.search(r"(?<![\w-])" + re.escape(phrase) + r"(?![\w-])", text) is not None


def extract_slots(question: str, today: _dt.date | None = None) -> dict:
    """Typed values named in a question.

    Returns a dict with (when found): ``dates`` (ISO strings; ``today``/``yesterday`` resolved
    against ``today``), ``years`` (ints; ``this year``/``last year`` resolved; numbers
    that are identifiers such as ``#2017`` or ``invoice 2017`` are not years), ``amounts``
    (floats, from ``$20,000`` or ``20,000 USD``), ``enums`` (canonical values from
    :data:`ENUM_SYNONYMS`, in order of appearance), ``text`` (the question).
    """
    today = today or _dt.datetime.now(_dt.timezone.utc).date()
    low = question.lower()
    dates = _DATE.findall(question)
    if _has(low, "today") or _has(low, "so far today"):
        dates.append(today.isoformat())
    if _has(low, "yesterday"):
        dates.append((today - _dt.timedelta(days=1)).isoformat())
    no_dates = _NUMBERED.sub(" ", _DATE.sub(" ", question))
    years = [int(y) for y in _YEAR.findall(no_dates)]
    if _has(low, "this year"):
        years.append(today.year)
    if _has(low, "last year"):
        years.append(today.year - 1)
    amounts = [float((a or b).replace(",", "")) for a, b in _AMOUNT.findall(question)]
    enums: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for phrase in sorted(ENUM_SYNONYMS, key=lambda p: (-len(p), p)):
        for m in re.finditer(r"(?<![\w-])" + re.escape(phrase) + r"(?![\w-])", low):
            if any(s < m.end() and m.start() < e for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            enums.append((m.start(), ENUM_SYNONYMS[phrase]))
    return {"text": question, "dates": dates, "years": years, "amounts": amounts,
            "enums": [v for _, v in sorted(enums)]}


def fill_arguments(tool: Tool, slots: dict) -> tuple[dict, bool]:
    """Arguments for ``tool`` from ``slots``; returns ``(arguments, feasible)``.

    Per parameter (JSON Schema): ``format: date`` -> first date; integer named ``year`` -> first
    year; ``enum`` -> first enum slot that is a valid value; string with ``pattern`` -> first token
    of the question matching the pattern (case-insensitive, upper-cased when the pattern is);
    integer named ``<noun>_id`` -> the number after ``<noun>`` (``invoice #2041``); number named
    ``*amount*`` -> first amount. ``feasible`` is whether every required parameter was filled.
    """
    props = tool.parameters.get("properties") or {}
    required = tool.parameters.get("required") or []
    text = slots["text"]
    args: dict = {}
    for name, schema in props.items():
        value = None
        typ = schema.get("type")
        if schema.get("format") == "date" and slots["dates"]:
            value = slots["dates"][0]
        elif "enum" in schema:
            value = next((v for v in slots["enums"] if v in schema["enum"]), None)
        elif typ == "integer" and name == "year" and slots["years"]:
            value = slots["years"][0]
        elif typ == "string" and "pattern" in schema:
            core = schema["pattern"].lstrip("^").rstrip("$")
            m = re.search(r"(?<![\w-])" + core + r"(?![\w-])", text, re.IGNORECASE)
            if m:
                value = m.group(0).upper() if core.upper() == core else m.group(0)
        elif typ == "integer" and name.endswith("_id"):
            noun = re.escape(name[:-3].replace("_", " "))
            m = re.search(rf"\b{noun}s?\s*(?:no\.?|number|#)?\s*#?\s*(\d+)\b", text, re.IGNORECASE)
            if m:
                value = int(m.group(1))
        elif typ == "number" and "amount" in name and slots["amounts"]:
            value = slots["amounts"][0]
        if value is not None:
            args[name] = value
    return args, all(r in args for r in required)


def positive_description(tool: Tool) -> str:
    """What a tool is for: its name in words and its description up to ``NOT for``."""
    return f"{tool.name.replace('_', ' ')}: {tool.description.split('NOT for')[0].strip()}"


#: Description vectors by (embedder name, dim, text), for the life of the process: a router is
#: built per question (``route_and_answer``), and its tool descriptions never change.
_DESCRIPTION_VECS: dict[tuple[str, int, str], np.ndarray] = {}


def description_vectors(embedder, texts: list[str]) -> np.ndarray:
    """``embedder``'s vectors of tool descriptions, shape (len(texts), dim); each text is
    embedded once per process and embedder (:data:`_DESCRIPTION_VECS`), one text per call."""
    keys = [(embedder.name, embedder.dim, t) for t in texts]
    todo = sorted({k[2] for k in keys if k not in _DESCRIPTION_VECS})
    # one text per call: a single text goes through the query session the question uses; a
    # batch made MiniLM build its second (all-threads) session, ~0.3 s of a cold ``ask``
    for t in todo:
        _DESCRIPTION_VECS[(embedder.name, embedder.dim, t)] = np.asarray(embedder.embed([t])[0], dtype=np.float32)
    return np.stack([_DESCRIPTION_VECS[k] for k in keys])


class _DescriptionIndex:
    """Embeddings of tools' positive descriptions (:func:`description_vectors`)."""

    def __init__(self, tools: Sequence[Tool], embedder):
        self.tools = list(tools)
        self.embedder = embedder
        self.matrix = (description_vectors(embedder, [positive_description(t) for t in self.tools])
                       if self.tools else np.zeros((0, 1)))

    def similarities(self, question: str) -> dict[str, float]:
        if not self.tools:
            return {}
        q = self.embedder.embed([question])[0]
        return {t.name: float(s) for t, s in zip(self.tools, self.matrix @ q)}


def _record_tools(tools: Sequence[Tool]) -> list[Tool]:
    return [t for t in tools if t.name not in ("vector_search", "sql_query", "web_search")]


class RuleRouter:
    """The deterministic default router (see module docstring).

    Args:
        tools: candidate tools (record tools; ``sql_query``/``web_search`` are never chosen by rules).
        embedder: the index's embedder (for cosine to tool descriptions).
        probe: optional ``question -> best corpus evidence`` (cosine; 1.0 for a pinned
            identifier), e.g. :func:`index_probe`; None = cosine to the vector_search description.
        min_record_sim, doc_threshold: see module docstring.
    """

    name = "rule"

    def __init__(self, tools: Sequence[Tool], embedder, probe: Callable[[str], float] | None = None,
                 min_record_sim: float = 0.2, doc_threshold: float = 0.15):
        self.records = _record_tools(tools)
        self.index = _DescriptionIndex(self.records, embedder)
        self.embedder = embedder
        self.probe = probe
        self.min_record_sim = min_record_sim
        self.doc_threshold = doc_threshold
        from citewise.tools.vector import VectorSearchTool

        self._doc_vec = description_vectors(embedder, [positive_description(VectorSearchTool)])[0]

    def route(self, question: str, today: _dt.date | None = None) -> Route:
        """Route one question (``today`` resolves relative dates; default: the UTC date now)."""
        slots = extract_slots(question, today)
        low = question.lower()
        sims = self.index.similarities(question)
        best: tuple[float, Tool, dict] | None = None
        for tool in self.records:
            args, feasible = fill_arguments(tool, slots)
            if not feasible or sims[tool.name] < self.min_record_sim:
                continue
            score = sims[tool.name] + 0.1 * len(args) + 0.15 * _cue_match(tool.name, low)
            if best is None or score > best[0] + 1e-12:
                best = (score, tool, args)
        if best is not None:
            _, tool, args = best
            policy = getattr(tool, "policy", None)
            if policy and any(_has(low, c) for c in policy.get("cues", ())):
                return Route("both", [PlannedCall(tool.name, args), PlannedCall("vector_search", {"query": policy["query"]})],
                             f"{tool.name} gives the number; the {policy.get('rule', 'rule')} comes from the documents", sims)
            return Route("record", [PlannedCall(tool.name, args)], f"record tool {tool.name} with {args}", sims)
        if _DOC_IDENT.search(question) and not re.search(r"\bC-\d", question):
            return Route("document", [PlannedCall("vector_search", {"query": question})], "names a document identifier", sims)
        evidence = self.probe(question) if self.probe else float(self.embedder.embed([question])[0] @ self._doc_vec)
        sims["corpus"] = evidence
        if evidence >= self.doc_threshold:
            return Route("document", [PlannedCall("vector_search", {"query": question})],
                         f"documents match (cosine {evidence:.2f})", sims)
        return Route("none", [], f"no tool fits and documents do not match (cosine {evidence:.2f})", sims)


def _cue_match(tool_name: str, low: str) -> int:
    if tool_name.startswith("count") and any(_has(low, c) for c in COUNT_CUES):
        return 1
    if ("total" in tool_name or "amount" in tool_name) and any(_has(low, c) for c in MONEY_CUES) \
            and not any(_has(low, c) for c in COUNT_CUES):
        return 1
    return 0


class EmbeddingRouter:
    """Baseline: the tool whose description is most similar to the question (module docstring)."""

    name = "embedding"

    def __init__(self, tools: Sequence[Tool], embedder, threshold: float = 0.15):
        from citewise.tools.vector import VectorSearchTool

        self.records = _record_tools(tools)
        self.index = _DescriptionIndex([VectorSearchTool] + self.records, embedder)  # class has name/description
        self.threshold = threshold

    def route(self, question: str, today: _dt.date | None = None) -> Route:
        sims = self.index.similarities(question)
        name = max(sorted(sims), key=lambda n: sims[n])
        if sims[name] < self.threshold:
            return Route("none", [], f"best description cosine {sims[name]:.2f} < {self.threshold}", sims)
        if name == "vector_search":
            return Route("document", [PlannedCall(name, {"query": question})], "closest description", sims)
        tool = next(t for t in self.records if t.name == name)
        args, _ = fill_arguments(tool, extract_slots(question, today))
        return Route("record", [PlannedCall(name, args)], "closest description", sims)


ROUTER_SYSTEM_PROMPT = (
    "You route questions about Ledgerly to tools. Call the record tool that returns the exact "
    "figure for questions about specific customers, invoices, days or counts; call vector_search "
    "for policies, how-to and definitions; call both when a customer's figure must be compared "
    "with a policy rule. Fill arguments from the question only (dates as YYYY-MM-DD; today is "
    "{today}). If no tool fits, answer without calling any tool."
)


class LLMRouter:
    """Routing by function calling through an OpenAI-compatible chat model.

    One chat request with the tools in OpenAI format and ``tool_choice="auto"``; the returned tool
    calls become the route (no call -> ``none``; only vector_search -> ``document``; a record tool
    with vector_search -> ``both``; otherwise ``record``). A :class:`ChatError` becomes a ``none``
    route whose reason carries the error (fail closed).
    """

    name = "llm"

    def __init__(self, model, tools: Sequence[Tool]):
        self.model = model
        self.specs = [spec(t) for t in tools]

    def route(self, question: str, today: _dt.date | None = None) -> Route:
        from citewise.models.chat import ChatError

        today = today or _dt.datetime.now(_dt.timezone.utc).date()
        messages = [{"role": "system", "content": ROUTER_SYSTEM_PROMPT.format(today=today.isoformat())},
                    {"role": "user", "content": question}]
        try:
            resp = self.model.chat(messages, tools=self.specs, tool_choice="auto")
        except ChatError as e:
            return Route("none", [], f"LLM router failed: {e}")
        calls = [PlannedCall(c.name, c.arguments) for c in resp.tool_calls]
        names = {c.name for c in calls}
        if not calls:
            return Route("none", [], resp.content or "no tool call")
        if names == {"vector_search"}:
            return Route("document", calls, "LLM chose vector_search")
        records = [c for c in calls if c.name != "vector_search"]
        rest = [c for c in calls if c.name == "vector_search"]
        return Route("both" if rest else "record", records + rest, "LLM tool calls")


def index_probe(index, principal=None) -> Callable[[str], float]:
    """``question -> evidence``: 1.0 when the index's answerer has enough evidence to answer (a
    document titled with an identifier in the question, or an evidence score at or above its
    abstention threshold; :meth:`citewise.answer.pipeline.Answerer.assess`), else 0.0. Only
    retrieval and evidence scoring run; no answer is generated."""
    answerer = index.answerer()

    def probe(question: str) -> float:
        return 0.0 if answerer.assess(question, principal=principal).abstain_reason else 1.0

    return probe
