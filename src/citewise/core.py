"""Core nouns shared by every layer: Document, Chunk, Hit, Principal, Filters, Answer.

This module imports nothing from the rest of citewise (DESIGN.md: core types are the bottom layer).
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from enum import StrEnum
from typing import Any, Literal

#: The group every principal belongs to and that documents without declared permissions get
#: when the index's default policy is "public".
PUBLIC_GROUP = "public"


class CitewiseError(Exception):
    """Base class of errors that reach the user as one clear line (never a traceback)."""


#: Longest query or question accepted by ``Index.search`` / ``Index.ask``, the CLI and the question
#: files of the evaluation commands. Retrieval cost grows with query length (a 75 KB query took
#: 41 s); a question is far shorter.
MAX_QUERY_CHARS = 2000


def check_query(query: str) -> str:
    """Return ``query`` if it is within :data:`MAX_QUERY_CHARS`.

    Raises:
        CitewiseError: the query is longer (the message says how long and the limit).
    """
    if len(query) > MAX_QUERY_CHARS:
        raise CitewiseError(
            f"query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,} "
            "(ask a shorter question, or search for its key phrase)"
        )
    return query


class InputError(CitewiseError):
    """Bad input: a file, line or field that cannot be used.

    Attributes:
        source: the file (or other input) at fault.
        line: 1-based line number, when known.
        reason: what is wrong, in words a user can act on.
    """

    def __init__(self, source: str, reason: str, line: int | None = None):
        self.source = source
        self.reason = reason
        self.line = line
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {reason}")


class InputWarning(InputError):
    """Something about an input worth a line that does not stop it being used (or that skips
    nothing of value), e.g. a folder named like a document. Reported, never counted as an error."""


@dataclass(frozen=True)
class Document:
    """One source document, as loaded, before chunking.

    Attributes:
        doc_id: stable id; for files the path relative to the ingested folder without extension
            (``billing/refund-team``) unless front matter sets ``id``.
        title: display title.
        text: the body text that chunk offsets point into (front matter removed).
        source: where it came from (file path or URL).
        format: ``markdown`` | ``html`` | ``text`` | ``pdf`` | ``docx`` | ``beir``.
        version: free-form version string ('' when unknown); compared with
            ``citewise.lifecycle.version_key`` when two sources declare the same id.
        updated: last-updated date, or None.
        effective: date from which the document is in force (front matter ``effective``), or
            None (then ``updated`` is used for "as of" queries).
        groups: groups allowed to read it; empty = none declared (the index policy decides).
        content_hash: sha256 hex of the raw source bytes (and, for a format whose loader changed,
            the loader's version: ``citewise.text.loaders.content_hash``).
        offset_base: character offset of ``text`` inside the raw source (front matter length), so
            chunk offsets can be reported against the source file.
        pages: for paged formats (PDF), the character offset in ``text`` where each page starts
            (page n starts at ``pages[n-1]``); empty for other formats.
        current: False for an older version kept as history (its id is ``doc_id@version``);
            searches see only current documents unless they ask for a date or a version.
        valid_to: for a superseded version, the date its successor came into force (None:
            current, or a successor without a date).
        warnings: things worth telling the user that did not stop the load (a front matter key
            that cannot be filtered on, with its line); not stored in the index.
        metadata: every other front matter key (``department``, ``tags``, ``author``, ...), as
            JSON-ready values (:func:`citewise.metadata.normalize`: text, numbers, booleans,
            ISO dates as ``YYYY-MM-DD`` text, lists of those); stored with each chunk and
            filterable inside a search (:class:`MetaCondition`).
    """

    doc_id: str
    title: str
    text: str
    source: str
    format: str
    content_hash: str
    version: str = ""
    updated: _dt.date | None = None
    groups: tuple[str, ...] = ()
    offset_base: int = 0
    effective: _dt.date | None = None
    pages: tuple[int, ...] = ()
    current: bool = True
    valid_to: _dt.date | None = None
    warnings: tuple[str, ...] = field(default=(), compare=False)
    metadata: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Chunk:
    """A retrievable unit of a document.

    Attributes:
        chunk_id: ``doc_id#heading-slug[-n]``, stable across re-ingests of unchanged text.
        doc_id: owning document.
        heading_path: headings from the document title down to this section.
        text: the chunk's own text (what an answer quotes). When a long table is split across
            chunks, the chunks after the first start with a copy of the table's header row and
            separator line (``prefix_len`` characters), so the text parses as a table on its own.
        start, end: character offsets in the source file, ``[start, end)``, of the text after
            that prefix: ``text[prefix_len:]`` is the source slice (NULs there read as spaces).
        token_count: o200k_base tokens of the heading path and chunk text (what the chunk size
            limit holds); ``indexed_text`` is the same for text without HTML markup tags, shorter
            for text with them.
        prev_id, next_id: neighbouring chunks in document order (None at the ends).
        parent_id: the chunk of the enclosing section, when the section was split.
        prefix_len: characters at the start of ``text`` that repeat a table header and are not
            at ``[start, end)`` (0 for most chunks). Not stored separately: for a stored chunk it
            is ``len(text) - (end - start)``.
    """

    chunk_id: str
    doc_id: str
    heading_path: tuple[str, ...]
    text: str
    start: int
    end: int
    token_count: int
    prev_id: str | None = None
    next_id: str | None = None
    parent_id: str | None = None
    prefix_len: int = 0

    @property
    def indexed_text(self) -> str:
        """Text that is embedded and indexed: the heading path, then the chunk text without its
        HTML markup tags (:func:`without_markup`: an HTML table in Markdown is indexed as its cell
        text, ``<kbd>Ctrl</kbd>+<kbd>U</kbd>`` as ``Ctrl+U``)."""
        head = " > ".join(h for h in self.heading_path if h)
        body = without_markup(self.text)
        return f"{head}\n{body}" if head else body


#: Inline HTML tags whose text runs on (``<code>O_DIRECT</code>``, ``<kbd>Ctrl</kbd>+<kbd>U</kbd>``).
_INLINE_TAG = re.compile(
    r"</?(?:a|abbr|b|code|del|em|i|ins|kbd|mark|s|samp|small|span|strong|sub|sup|u|var)"
    r"(?:\s[^<>]*)?/?>",
    re.I,
)
#: Block and table tags: they separate words (``<td>x</td><td>y</td>`` is ``x y``).
_BLOCK_TAG = re.compile(
    r"</?(?:br|div|p|table|thead|tbody|tfoot|tr|td|th|caption|details|summary|ul|ol|li|dl|dt|dd)"
    r"(?:\s[^<>]*)?/?>",
    re.I,
)


def prefix_length(text: str, start: int, end: int) -> int:
    """Characters at the start of a chunk ``text`` stored at source offsets ``[start, end)`` that
    are a copy, not source text (a split table's header, a manual entry's term lines:
    :attr:`Chunk.prefix_len`)."""
    return max(0, len(text) - (end - start))


def source_span(text: str, start: int, end: int, s: int, e: int) -> tuple[int, int]:
    """Source offsets of ``[s, e)``, offsets in a chunk ``text`` stored at ``[start, end)``: less
    its copied prefix (:func:`prefix_length`); an offset inside the prefix maps to ``start``.

    >>> source_span("H\\nrow two", 100, 107, 2, 9), source_span("H\\nrow two", 100, 107, 0, 5)
    ((100, 107), (100, 103))
    """
    prefix = prefix_length(text, start, end)
    a = start + max(0, s - prefix)
    return a, max(a, start + e - prefix)


def without_markup(text: str) -> str:
    """``text`` without the HTML tags of Markdown that embeds HTML (tables, ``<kbd>``, ``<code>``):
    inline tags are dropped, block and table tags become a space. Text without ``<`` is returned
    as is; anything that is not one of these tags (``a < b``, ``Vec<T>``) stays.

    >>> without_markup("<tr><td><kbd>Ctrl</kbd>+<kbd>U</kbd></td><td>Delete to the line start</td></tr>")
    '  Ctrl+U  Delete to the line start  '
    >>> without_markup("Vec<T> where a < b")
    'Vec<T> where a < b'
    >>> without_markup("Rows are `<tr>` elements: <b>bold</b>")
    'Rows are `<tr>` elements: bold'
    """
    if "<" not in text:
        return text
    # a tag written as code (```<tr>``` in prose about HTML) is text, not markup
    parts = _CODE_SPAN.split(text)
    return "".join(p if i % 2 else _BLOCK_TAG.sub(" ", _INLINE_TAG.sub("", p)) for i, p in enumerate(parts))


_CODE_SPAN = re.compile(r"(`+[^`\n]*`+)")


@dataclass(frozen=True)
class Principal:
    """Who is asking: a name and the groups they belong to. Everyone is in ``public``."""

    name: str = "anonymous"
    groups: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Principal("ana", "exec") would be the groups e, x, e, c: it saw no restricted document
        # and said nothing
        if isinstance(self.groups, str):
            raise TypeError(
                f"Principal.groups must be a tuple of group names, not the string {self.groups!r} "
                f"(write ({self.groups!r},))"
            )

    def all_groups(self) -> tuple[str, ...]:
        """The principal's groups plus ``public``, sorted and unique."""
        return tuple(sorted(set(self.groups) | {PUBLIC_GROUP}))


@dataclass(frozen=True)
class MetaCondition:
    """One predicate on a document's metadata (front matter keys beyond the built-in ones), applied
    by the store inside the search like every other filter.

    Attributes:
        key: the front matter key (``department``, ``tags``); ``updated`` and ``effective`` name
            the built-in dates.
        op: ``eq`` (the value, or for a list value one of its items, equals one of ``values``:
            equality and membership), or a range ``ge`` / ``gt`` / ``le`` / ``lt`` against
            ``values[0]``, a number (compared with numeric values) or a :class:`datetime.date`
            (compared with ISO-date values). A document without the key never matches.
        values: for ``eq`` the accepted values as text (compared with the canonical text of the
            stored values: :func:`citewise.metadata.spellings`); for a range one number or date.

    Build them with :func:`citewise.metadata.parse_filter` (``"tags=security"``,
    ``"year>=2020"``, ``"date<2025-01-01"``, ``"team=a,b"``).
    """

    key: str
    op: Literal["eq", "ge", "gt", "le", "lt"]
    values: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Filters:
    """Restrictions a Store applies *inside* a search (never after it).

    Attributes:
        groups: only chunks whose groups intersect these (None = no permission filter).
        doc_ids: only these documents (None = all).
        as_of: only documents in force on this date: ``effective`` (else ``updated``) on or
            before it, and not superseded by then (an older version kept as history is found
            when its successor came into force after the date); undated documents always pass.
            None: current versions only.
        version: only documents with exactly this version string, current or history
            (None = any version, current only unless ``as_of`` is given).
        metadata: conditions on document metadata, all of which must hold
            (:class:`MetaCondition`); applied after the permission filter, in the same query.
    """

    groups: tuple[str, ...] | None = None
    doc_ids: tuple[str, ...] | None = None
    as_of: _dt.date | None = None
    version: str | None = None
    metadata: tuple[MetaCondition, ...] = ()


@dataclass(frozen=True)
class Hit:
    """One ranked search result.

    Attributes:
        chunk_id, doc_id: what was found.
        score: the producing stage's score (higher is better; BM25 score, cosine, RRF sum, or
            convex combination for ``hybrid-prf``).
        rank: 1-based rank in the final list.
        stage: which stage produced the score: ``bm25`` | ``dense`` | ``rrf`` (the ``hybrid`` and
            ``shipped`` retrievers' fusion) | ``pinned`` (``shipped``'s identifier pinning) |
            ``hybrid-prf`` | ``hierarchical`` | ``tuned`` | ``raptor`` | ``raptor-summary`` (a leaf a
            RAPTOR summary hit stands for) | ``rerank`` | ``exact`` (a
            chunk ``ask`` added because it alone holds an identifier-like name of the question in
            a table cell, code span or definition line, or the entry of "the X builtin" no retrieved
            chunk held, :mod:`citewise.answer.pipeline`) |
            ``unit`` (a chunk from deeper in the ranking ``ask`` added to the context because one
            of its sentences matches the question better than any retrieved one; score = that
            cosine; :meth:`citewise.answer.pipeline.Answerer.deeper_hits`).
        title: the document title, for display.
    """

    chunk_id: str
    doc_id: str
    score: float
    rank: int
    stage: str
    title: str = ""


@dataclass(frozen=True)
class SearchResult(Hit):
    """A :class:`Hit` with what a reader of the result needs: the chunk's text, its best passage
    for the query, and its document's fields and metadata (:meth:`citewise.index.Index.search`).

    Attributes:
        text: the chunk text ('' when the chunk was removed between the search and the read).
        snippet: the chunk's passage that best matches the query
            (:func:`citewise.retrieval.snippets.best_snippet`).
        snippet_start, snippet_end: the snippet's ``[start, end)`` character offsets in the
            source file (None when the chunk is gone).
        heading_path: headings from the document title down to the chunk.
        start, end: the chunk's ``[start, end)`` character offsets in the source file.
        version, updated, effective: the document's version and dates (ISO, '' when unknown).
        groups: the groups allowed to read the document.
        pages: ``(first, last)`` 1-based pages of a paged source (PDF), else ``(0, 0)``.
        metadata: the document's metadata (front matter keys beyond the built-in ones).
    """

    text: str = ""
    snippet: str = ""
    snippet_start: int | None = None
    snippet_end: int | None = None
    heading_path: tuple[str, ...] = ()
    start: int = 0
    end: int = 0
    version: str = ""
    updated: str = ""
    effective: str = ""
    groups: tuple[str, ...] = ()
    pages: tuple[int, int] = (0, 0)
    metadata: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class CitedSpan:
    """Where one sentence of an answer is supported: the sentence's 0-based index among the
    answer's sentences and the cited ``[start, end)`` character offsets in the source file."""

    sentence: int
    chunk_id: str
    start: int
    end: int


@dataclass(frozen=True)
class Citation:
    """A source shown with an answer.

    ``start``/``end``: the span of the first sentence citing it (character offsets in the source
    file); ``spans``: one :class:`CitedSpan` per sentence citing it, in answer order, so the n-th
    ``[doc:ID]`` marker of the answer links to ``spans[n]``
    (:func:`citewise.answer.citations.marker_links`); empty when the answer was not built by the
    citation check (then every marker links to ``start``/``end``).
    """

    doc_id: str
    title: str
    version: str
    updated: str
    chunk_id: str = ""
    start: int = 0
    end: int = 0
    spans: tuple[CitedSpan, ...] = ()


Outcome = Literal["answered", "abstained", "partial", "supported", "gap", "conflict", "not_established", "no_tool"]


class ReasonCode(StrEnum):
    """Why an answer abstained or fell short: a stable code (metrics labels, ``--json``), with
    its fields in :attr:`Reason.fields`."""

    NOTHING_RETRIEVED = "nothing_retrieved"
    NO_EVIDENCE = "no_evidence"
    BELOW_THRESHOLD = "below_threshold"  # fields: score, threshold
    SUBJECT_NOT_IN_ONE_PASSAGE = "subject_not_in_one_passage"  # fields: score, gate
    UNKNOWN_NAME = "unknown_name"  # fields: name
    NOT_IN_EVIDENCE = "not_in_evidence"  # fields: what
    LIVE_VALUE = "live_value"
    NO_SUPPORTED_SENTENCE = "no_supported_sentence"
    NOTHING_IN_SCOPE = "nothing_in_scope"
    SCOPE_UNAVAILABLE = "scope_unavailable"
    GAP = "gap"  # fields: missing (names, comma-separated)
    NOT_ESTABLISHED = "not_established"  # fields: what
    MODEL_CITED_NOTHING = "model_cited_nothing"  # fields: checks
    NO_RECORDS_DATABASE = "no_records_database"
    NOT_A_RECORD_QUESTION = "not_a_record_question"
    MODEL_ABSTAINED = "model_abstained"
    MODEL_ANSWER_UNSUPPORTED = "model_answer_unsupported"  # fields: withdrawn (sentences)
    NO_TOOL = "no_tool"  # fields: kind (record | both)
    MISSING_ARGUMENT = "missing_argument"  # fields: tool, names (comma-separated)
    SOURCES_DISAGREE = "sources_disagree"  # fields: what, sources (how many documents)


#: Each code's short form (``Answer.abstain_reason``, kept for scripts that read it), a
#: ``str.format`` template over the reason's fields.
_REASON_SHORT = {
    ReasonCode.NOTHING_RETRIEVED: "nothing retrieved",
    ReasonCode.NO_EVIDENCE: "no evidence",
    ReasonCode.BELOW_THRESHOLD: "evidence {score:.3f} < threshold {threshold:.3f}",
    ReasonCode.SUBJECT_NOT_IN_ONE_PASSAGE: "subject not in one passage: {score:.3f} < gate {gate:.3f}",
    ReasonCode.UNKNOWN_NAME: "unknown name: {name}",
    ReasonCode.NOT_IN_EVIDENCE: "not in the evidence: {what}",
    ReasonCode.LIVE_VALUE: "live value",
    ReasonCode.NO_SUPPORTED_SENTENCE: "generator found no supported sentence",
    ReasonCode.NOTHING_IN_SCOPE: "nothing in scope was retrieved",
    ReasonCode.SCOPE_UNAVAILABLE: "no document in the scope is available to you",
    ReasonCode.GAP: "gap: {missing}",
    ReasonCode.NOT_ESTABLISHED: "not established: {what}",
    ReasonCode.MODEL_CITED_NOTHING: "the model cited no source for: {checks}",
    ReasonCode.NO_RECORDS_DATABASE: "no records database is configured (set records.database in citewise.toml, "
    "CITEWISE_DB, or --db)",
    ReasonCode.NOT_A_RECORD_QUESTION: "not a record question: no record tool applies (ask the documents with the ask tool)",
    ReasonCode.MODEL_ABSTAINED: "the language model found no answer in the sources",
    ReasonCode.MODEL_ANSWER_UNSUPPORTED: "the language model answered, but no source supports any of its "
    "{withdrawn} sentence(s)",
    ReasonCode.NO_TOOL: "no configured query answers this {kind} question",
    ReasonCode.MISSING_ARGUMENT: "{tool} needs {names}",
    ReasonCode.SOURCES_DISAGREE: "{sources} sources disagree on {what}",
}

#: Each code as a sentence for people (the CLI's "Why:" line, the web page); codes not listed
#: read as their short form. Scores stay in the short form and the JSON fields, not here.
_REASON_SENTENCE = {
    ReasonCode.UNKNOWN_NAME: "no document you can read mentions \u201c{name}\u201d",
    ReasonCode.LIVE_VALUE: "it asks for a live value (current, today's), which documents do not hold",
    ReasonCode.BELOW_THRESHOLD: "no passage you can read is close enough to the question to answer it",
    ReasonCode.NOT_IN_EVIDENCE: "the passages found never mention \u201c{what}\u201d",
    ReasonCode.SUBJECT_NOT_IN_ONE_PASSAGE: "no one passage holds what the question asks about "
    "(score {score:.3f}, below the gate {gate:.3f})",
    ReasonCode.NOTHING_RETRIEVED: "nothing you can read matched the question",
    ReasonCode.NO_SUPPORTED_SENTENCE: "no sentence of the evidence could be cited for it",
    ReasonCode.NO_TOOL: "this is a question about records; no configured query answers it (configure a named query "
    "in records.templates, or an LLM in [llm] to write SQL over the records schema)",
    ReasonCode.MISSING_ARGUMENT: "the question does not give what {tool} needs: {names}",
}


@dataclass(frozen=True)
class Reason:
    """A typed reason: a :class:`ReasonCode` and its fields (numbers, names).

    ``str(reason)`` is the short form kept in ``Answer.abstain_reason``; :meth:`sentence` is what
    a person reads.

    >>> r = Reason(ReasonCode.UNKNOWN_NAME, {"name": "Stripe"})
    >>> str(r), r.sentence()
    ('unknown name: Stripe', 'no document you can read mentions \u201cStripe\u201d')
    """

    code: ReasonCode
    fields: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, code: ReasonCode, **fields: Any) -> "Reason":
        """``Reason(code, fields)`` with the fields as keywords."""
        return cls(ReasonCode(code), fields)

    def __str__(self) -> str:
        return _REASON_SHORT[self.code].format(**self.fields)

    def sentence(self) -> str:
        """The reason as a sentence fragment (no final full stop)."""
        return _REASON_SENTENCE.get(self.code, _REASON_SHORT[self.code]).format(**self.fields)

    def as_dict(self) -> dict[str, Any]:
        """``{"code", "fields", "text"}`` for JSON."""
        return {"code": self.code.value, "fields": dict(self.fields), "text": self.sentence()}


#: The sentence an answer consists of when no evidence clears the threshold.
ABSTENTION_TEXT = "I have no document on this."


@dataclass
class Answer:
    """An answer with its evidence.

    Attributes:
        text: the answer, each sentence ending in a ``[doc:ID]`` citation (or the abstention text).
        outcome: ``answered`` | ``abstained`` | ``partial``.
        citations: the sources cited, in first-cited order.
        retrieved_ids: chunk ids that retrieval returned.
        used_ids: chunk ids the answer quotes.
        best_score: evidence score that was compared with the abstention threshold.
        timings: seconds per stage.
        context_ids: chunk ids put in front of the generator (retrieved plus expanded neighbours).
        evidence: parts of the evidence score (dense, coverage, uncovered and absent terms, rule).
        reason: why the answer abstained or fell short (None when it did not): a code and its
            fields; ``abstain_reason`` is its short form.
        fabricated: cited ids that were not in the context (their sentences were dropped).
        dropped: sentences removed by the citation check (uncited or fabricated citation).
        generator: name of the generator that drafted the answer.
        short: a short answer span (extractive generator; for span-level evaluation), or ''.
        tool_calls: record tools that supplied facts: ``{"tool", "arguments", "error", "rows"}``.
        corrections: misspelt question words read as corpus words, ``{"typo", "fix"}`` each
            (:mod:`citewise.answer.spelling`); the answer is to the corrected question.
        notes: lines for the reader: sentences of a model's answer withdrawn or cited after the
            fact, a model failure answered extractively instead.
        llm: an LLM answer's call: prompt messages, tokens and budget, usage, seconds, attribution.
    """

    text: str
    outcome: Outcome
    citations: list[Citation] = field(default_factory=list)
    retrieved_ids: list[str] = field(default_factory=list)
    used_ids: list[str] = field(default_factory=list)
    best_score: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    context_ids: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)
    reason: Reason | None = None
    fabricated: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    generator: str = ""
    short: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    corrections: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    llm: dict[str, Any] = field(default_factory=dict)

    @property
    def abstain_reason(self) -> str:
        """The reason's short form ('' when there is none), e.g. ``unknown name: Stripe``."""
        return str(self.reason) if self.reason is not None else ""


def sample_dir() -> Path:
    """Folder of the bundled sample data (``corpus/``, ``golden.jsonl``, ``demo.yaml``, ``records/``)."""
    from importlib import resources

    return Path(str(resources.files("citewise") / "sample"))


def cache_dir() -> Path:
    """``$CITEWISE_CACHE``, else ``$XDG_CACHE_HOME/citewise``, else ``~/.cache/citewise``."""
    env = os.environ.get("CITEWISE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "citewise"


def default_index_dir() -> Path:
    """``$CITEWISE_INDEX`` or ``$XDG_DATA_HOME/citewise/index`` (``~/.local/share/citewise/index``)."""
    env = os.environ.get("CITEWISE_INDEX")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "citewise" / "index"
