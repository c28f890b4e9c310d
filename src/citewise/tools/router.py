"""Routers: what kind of answer a question needs, which tool gives it, with which arguments.

A :class:`Route` has a ``kind`` and planned tool calls:

* ``record``   - exact figures from the records: a named query template (a record tool), or
  ``sql_query`` with no arguments when no template answers it (an LLM writes the SQL over the
  configured schema; without one the answer is a ``no_tool`` outcome);
* ``both``     - a record value checked against a documented rule: the record tool for the value,
  ``vector_search`` for the rule, the comparison in code (:mod:`citewise.tools.rules`);
* ``live``     - a value that changes by the minute (a price, a rate, today's news):
  ``web_search`` when one is configured, else an abstention as live data;
* ``document`` - ``vector_search`` (a cited answer from the documents);
* ``none``     - nothing here answers it: abstain.

``missing`` lists required parameters the question does not give ("Has this customer exceeded
the limit?" names no customer): the answer asks for them instead of guessing.

:class:`RuleRouter` (default, deterministic, no LLM) decides with the cue features of
:mod:`citewise.tools.question` and the catalogue of :mod:`citewise.tools.catalog`:

1. **live**: a live value with a "now" word ("price ... today", "current exchange rate"), no named
   record, and a subject that is not only record nouns;
2. **both**: a rule word (the cues file's, or a tool policy's ``cues``) with a named record
   (an identifier filled, an entity pattern, a value of an ``x-values`` parameter) or a reference
   to one ("this customer"); the tool is the best-matching one that declares a ``policy``. A
   named record with a document cue ("what happens", "rules") and no aggregate is ``both`` too:
   the record's rows and a document answer to the question;
3. **record**: a named record, or an aggregate ("how many", "total", "average", "largest") or a
   listing with a filter (a date, year, month, quarter, amount with a comparator, a state, a value
   of the database, a condition clause), collective speech ("did we") or an average/extreme -
   unless a document cue ("can I", "may", "what does") speaks of rules and no record is named;
4. otherwise **document** when the question names a document identifier or the index has enough
   evidence (``probe``), else **none**.

A template is chosen for a record question only when its declared output answers it (see
:meth:`RuleRouter.select`): every filter of the question is expressed by a filled argument, the
figure asked for (the words after "how many" / "total") is what the template counts or sums,
and no identifier parameter is left empty; the best by word coverage of the question plus
cosine to the description wins. No such template: ``sql_query``.

:class:`EmbeddingRouter` (baseline) and :class:`LLMRouter` (a chat model) live here too.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from citewise.tools.base import Tool
from citewise.tools.catalog import RecordsCatalog, positive_text
from citewise.tools.llm_router import ROUTER_SYSTEM_PROMPT, LLMRouter, parse_calls  # noqa: F401
from citewise.tools.question import Cues, QuestionKind, analyze, load_cues, stem, words
from citewise.tools.route import KINDS, PlannedCall, Route  # noqa: F401
from citewise.tools.slots import Slots, extract_slots, fill_arguments, fill_spans, value_spans  # noqa: F401

_HASH_NUMBER = re.compile(r"(?<![\w-])#\s?(\d+)\b")
_DOC_IDENT = re.compile(r"\b(?:[A-Za-z]{1,5}-\d{3,}|v\d+(?:\.\d+)+)\b")
_NOT_RECORD_TOOLS = ("vector_search", "sql_query", "web_search")


def positive_description(tool: Tool) -> str:
    """What a tool is for: its name in words and its description up to ``NOT for``."""
    return f"{tool.name.replace('_', ' ')}: {positive_text(tool.description)}"


#: Description vectors by (embedder name, dim, text), for the life of the process.
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
        self.matrix = (
            description_vectors(embedder, [positive_description(t) for t in self.tools])
            if self.tools
            else np.zeros((0, 1))
        )

    def similarities(self, question: str, qvec: np.ndarray | None = None) -> dict[str, float]:
        if not self.tools:
            return {}
        q = self.embedder.embed([question])[0] if qvec is None else qvec
        return {t.name: float(s) for t, s in zip(self.tools, self.matrix @ q)}


def _record_tools(tools: Sequence[Tool]) -> list[Tool]:
    return [t for t in tools if t.name not in _NOT_RECORD_TOOLS]


def _overlaps(span, spans) -> bool:
    return any(a < span[1] and span[0] < b for a, b in spans)


def _database_of(tools) -> object | None:
    for t in tools:
        db = getattr(t, "db", None)
        if db is not None:
            return db
    return None


@dataclass
class _Fill:
    tool: Tool
    args: dict
    spans: dict  # parameter -> question span
    missing: list[str]
    identified: bool  # an identifier parameter was filled


class RuleRouter:
    """The deterministic default router (see module docstring).

    Args:
        tools: candidate tools (record tools; ``vector_search``/``sql_query``/``web_search`` are
            planned by kind, never chosen by similarity).
        embedder: the index's question embedder (cosine to tool descriptions).
        probe: optional ``question -> evidence`` (1.0 when the index can answer it), e.g.
            :func:`index_probe`; None = cosine to the vector_search description.
        catalog: the :class:`~citewise.tools.catalog.RecordsCatalog` (None: built from ``tools``
            and the database of the first record tool).
        cues: the question cues (None: the bundled file).
        entities: ``[records.entities]`` (used when ``catalog`` is None).
        doc_threshold: evidence at or above which a question goes to the documents.
    """

    name = "rule"

    def __init__(
        self,
        tools: Sequence[Tool],
        embedder,
        probe: Callable[[str], float] | None = None,
        *,
        catalog: RecordsCatalog | None = None,
        cues: Cues | None = None,
        entities: dict[str, str] | None = None,
        doc_threshold: float = 0.15,
    ):
        self.cues = cues or load_cues()
        self.records = _record_tools(tools)
        self.catalog = catalog or RecordsCatalog(self.records, self.cues, _database_of(self.records), entities)
        self.index = _DescriptionIndex(self.records, embedder)
        self.embedder = embedder
        self.probe = probe
        self.doc_threshold = doc_threshold
        from citewise.tools.vector import VectorSearchTool

        self._doc_vec = description_vectors(embedder, [positive_description(VectorSearchTool)])[0]
        self._live_words = {stem(w) for p in self.cues.live_values + self.cues.live_now for w in p.split()}
        self._money = {stem(w) for w in self.cues.money}
        #: integer identifier parameters (``invoice_id``) of the tools that have no pattern: with
        #: exactly one, a bare "#2049" names it
        self._integer_ids = {
            n
            for t in self.records
            for n, s in (t.parameters.get("properties") or {}).items()
            if n.endswith("_id")
            and s.get("type") == "integer"
            and "pattern" not in s
            and n not in self.catalog.entities
        }

    # -- features ---------------------------------------------------------------------------
    def _fills(self, slots: Slots) -> list[_Fill]:
        out = []
        hash_number = _HASH_NUMBER.search(slots.text) if len(self._integer_ids) == 1 else None
        for tool in self.records:
            prof = self.catalog.profiles[tool.name]
            args, spans, _ = fill_spans(tool, slots, entities=self.catalog.entities, values=prof.values)
            ident = next(iter(self._integer_ids)) if hash_number else None
            if ident and ident in (tool.parameters.get("properties") or {}) and ident not in args:
                args[ident], spans[ident] = int(hash_number.group(1)), hash_number.span()
            required = tool.parameters.get("required") or []
            out.append(
                _Fill(
                    tool, args, spans, [r for r in required if r not in args], any(n in args for n in prof.identifiers)
                )
            )
        return out

    def _named(self, question: str, fills: list[_Fill], k: QuestionKind) -> list[tuple[int, int]]:
        """Spans of named records: identifier arguments filled (a value of an ``x-values``
        parameter only in a question that also names a record noun or asks for an aggregate or
        a listing: "When was Jane Peacock hired?", not "the capital of Australia"), entity
        pattern matches."""
        spans: list[tuple[int, int]] = []
        for f in fills:
            prof = self.catalog.profiles[f.tool.name]
            for n in prof.identifiers:
                if n not in f.args:
                    continue
                span = f.spans.get(n)
                if span is None:
                    continue
                if n in prof.values and not (
                    k.aggregate
                    or k.listing
                    or any(s in self.catalog.record_nouns and not _overlaps(sp, [span]) for s, sp in k.content)
                ):
                    continue
                spans.append(span)
        for pattern in self.catalog.entities.values():
            spans += [m.span() for m in pattern.finditer(question)]
        return spans

    def _filters(self, question: str, slots: Slots, k: QuestionKind) -> list[tuple[str, tuple[int, int]]]:
        """``(kind, span)`` of what restricts the records asked about: slots (an amount only with a
        comparator) and values of the database (kind ``values``)."""
        out = [(kind, sp) for kind, sp in slots.filters() if not (kind == "amounts" and not k.comparator)]
        out += [("values", sp) for _, sp in value_spans(question, self.catalog.categories, min_len=4)]
        return out

    # -- decision ---------------------------------------------------------------------------
    def route(self, question: str, today: _dt.date | None = None) -> Route:
        """Route one question (``today`` resolves relative dates; default: the UTC date now)."""
        slots = extract_slots(question, today, self.catalog.synonyms)
        k = analyze(
            question,
            self.cues,
            extra_rule=self.catalog.rule_cues,
            extra_states=tuple(self.catalog.categories),
            record_nouns=self.catalog.record_nouns,
        )
        fills = self._fills(slots)
        named = self._named(question, fills, k)
        valued = [sp for _, sp in value_spans(question, self.catalog.categories, min_len=4)]
        subject = {s for s, sp in k.content if s not in self._live_words and not _overlaps(sp, valued)}
        if k.live and not named and (subject - self.catalog.record_nouns or not (subject or valued)):
            return Route(
                "live",
                [PlannedCall("web_search", {"query": question})],
                f"asks for a live value ({k.live_value}, {k.live_now})",
            )
        if k.rule and (named or k.deictic):
            policy_fills = [f for f in fills if getattr(f.tool, "policy", None)]
            chosen = self.select(
                question,
                slots,
                k,
                policy_fills,
                named=named,
                allow_missing_identifier=bool(k.deictic) and not named,
                rule=True,
            )
            if chosen is not None:
                f, scores = chosen
                policy = f.tool.policy
                return Route(
                    "both",
                    [PlannedCall(f.tool.name, f.args), PlannedCall("vector_search", {"query": policy["query"]})],
                    f"{f.tool.name} gives the value; the {policy.get('rule', 'rule')} comes from the documents",
                    scores,
                    f.missing,
                )
        if named and k.document and not k.aggregate:
            # a named record and a question about what the documents say of it ("Invoice 2045 is
            # past due - under the failed-payment rules, has the workspace gone read-only?")
            chosen = self.select(question, slots, k, fills, named=named)
            if chosen is not None:
                f, scores = chosen
                return Route(
                    "both",
                    [PlannedCall(f.tool.name, f.args), PlannedCall("vector_search", {"query": question})],
                    f"{f.tool.name} gives the record; the documents say what applies to it",
                    scores,
                    f.missing,
                )
        filters = self._filters(question, slots, k)
        aggregate_ask = (k.aggregate or (k.listing and self._mentions_records(k))) and (
            filters or k.comparator or k.state or k.collective or k.condition or k.aggregate in ("average", "extreme")
        )
        if named or (aggregate_ask and not k.document):
            chosen = self.select(question, slots, k, fills, named=named)
            if chosen is not None:
                f, scores = chosen
                return Route(
                    "record",
                    [PlannedCall(f.tool.name, f.args)],
                    f"record tool {f.tool.name} with {f.args}",
                    scores,
                    f.missing,
                )
            if named or aggregate_ask:
                return Route(
                    "record", [PlannedCall("sql_query", {})], "a question about records that no named query answers"
                )
        if _DOC_IDENT.search(question) and not named:
            return Route("document", [PlannedCall("vector_search", {"query": question})], "names a document identifier")
        evidence = self.probe(question) if self.probe else float(self.embedder.embed([question])[0] @ self._doc_vec)
        if evidence >= self.doc_threshold:
            return Route(
                "document",
                [PlannedCall("vector_search", {"query": question})],
                f"documents match (evidence {evidence:.2f})",
                {"corpus": evidence},
            )
        return Route(
            "none", [], f"no tool fits and documents do not match (evidence {evidence:.2f})", {"corpus": evidence}
        )

    def _mentions_records(self, k: QuestionKind) -> bool:
        return any(s in self.catalog.record_nouns for s, _ in k.content)

    def _asked(self, question: str, k: QuestionKind, spans: list) -> list[str]:
        """Stems of the (at most two) content words after the aggregate cue, filled values skipped."""
        if k.aggregate_span is None:
            return []
        after = [
            stem(w)
            for w, sp in words(question)
            if sp[0] >= k.aggregate_span[1] and not _overlaps(sp, spans) and w not in self.cues.stopwords
        ]
        return after[:2]

    def select(
        self,
        question: str,
        slots: Slots,
        k: QuestionKind,
        fills: list[_Fill],
        *,
        named: Sequence[tuple[int, int]] = (),
        allow_missing_identifier: bool = False,
        rule: bool = False,
    ):
        """The template whose declared output answers the question, with the scores; None if none.

        A fill is a candidate when (1) no required identifier is missing (unless the question
        refers to a record without naming it and ``allow_missing_identifier``); (2) every filter
        span of the question and every ``named`` record span lies inside one of its filled
        arguments' spans (state and database values excepted for a tool that names one record:
        they are what is asked about); (3) for an aggregate
        question, the tool declares that aggregate of what is asked (``count``: strictly what it
        counts; other aggregates: what it declares or describes; a money noun after "how many"
        asks for a sum), or, for a tool that names one record, what is asked is in its
        vocabulary. Score: share of the question's content words (outside its filled values) in the tool's vocabulary
        + 0.5 x cosine to its description + 0.1 per argument taken from the question - 0.3 per
        missing one - 0.4 per aggregate it returns besides the one asked for (the tool whose
        output is exactly the figure asked for wins over one that also returns others) + 0.3 for
        a tool that declares a listing when the question asks for one.
        """
        if not fills:
            return None
        filters = self._filters(question, slots, k) + [("named", sp) for sp in named]
        sims = self.index.similarities(question)
        best, scores = None, {}
        for f in fills:
            prof = self.catalog.profiles[f.tool.name]
            missing_ident = [m for m in f.missing if m in prof.identifiers]
            if missing_ident and not allow_missing_identifier:
                continue
            # a record named by its identifier is asked about, not filtered: "is invoice 2017 paid?"
            needed = [sp for kind, sp in filters if not (f.identified and kind in ("enums", "values"))]
            if any(not _overlaps(sp, f.spans.values()) for sp in needed):
                continue
            spans = list(f.spans.values())
            asked = self._asked(question, k, spans)
            if k.aggregate and not rule:
                money = bool(set(asked) & self._money)
                kind = "sum" if k.aggregate == "count" and money else k.aggregate
                declared = prof.aggregates.get(kind, set())
                if money and kind == "sum" and declared & (self._money | {"amount"}):
                    asked = sorted(declared & (self._money | {"amount"}))  # "dollar value" asks for a money sum
                if f.identified:
                    if kind == "count" and prof.aggregates.get("count") and asked and not set(asked) & declared:
                        continue
                    if asked and not set(asked) & (prof.vocabulary | declared):
                        continue
                elif kind == "count":
                    if not (set(asked) & declared):
                        continue
                elif not prof.aggregates.get(kind) or (asked and not set(asked) & (declared | prof.vocabulary)):
                    continue
            words_left = [s for s, sp in k.content if not _overlaps(sp, spans)]  # values are not vocabulary
            cover = sum(s in prof.vocabulary for s in words_left) / max(1, len(words_left))
            other_aggregates = len(set(prof.aggregates) - {k.aggregate, "list"}) if k.aggregate else 0
            listing = 0.3 if k.listing and "list" in prof.aggregates else 0.0
            score = (
                cover
                + 0.5 * sims.get(f.tool.name, 0.0)
                + 0.1 * len(f.spans)
                - 0.3 * len(f.missing)
                - 0.4 * other_aggregates
                + listing
            )
            scores[f.tool.name] = round(score, 4)
            if best is None or score > best[0] + 1e-12:
                best = (score, f)
        return (best[1], scores) if best else None


class EmbeddingRouter:
    """Baseline: the tool whose description is most similar to the question; ``none`` below a
    threshold; it cannot route ``both`` or ``live``."""

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


def index_probe(index, principal=None) -> Callable[[str], float]:
    """``question -> evidence``: 1.0 when the index's answerer has enough evidence to answer (a
    document titled with an identifier in the question, or an evidence score at or above its
    abstention threshold; :meth:`citewise.answer.pipeline.Answerer.assess`), else 0.0. Only
    retrieval and evidence scoring run; no answer is generated."""
    answerer = index.answerer()

    def probe(question: str) -> float:
        return 0.0 if answerer.assess(question, principal=principal).reason is not None else 1.0

    return probe
