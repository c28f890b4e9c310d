"""Grade answers on a question set: is the expected fact in the answer, and is its document cited?

This module depends only on a callable ``ask(question) -> Answer`` (anything with ``.text``,
``.outcome`` and ``.citations`` whose items have ``.doc_id``), the set's rows and, for
validation, the index's document ids. It imports nothing from citewise but ``citewise.core``
(and ``citewise.text.lines`` when present), so ``bench/realdocs/grade.py`` can load it by file
path and grade an older citewise build that has no ``eval answers`` command.

Set format (JSONL, one question per line)::

    {"id": "node-07", "corpus": "nodejs", "kind": "in_scope", "category": "option",
     "text": "What does the force option of fs.rm do?", "expected_docs": ["nodejs/fs"],
     "expected_answer": ["exceptions will be ignored if path does not exist"]}

* ``id``, ``corpus``, ``category``, ``text``: non-empty strings; ids are unique.
* ``kind``: ``in_scope`` | ``out_of_scope`` | ``false_premise``.
* ``expected_docs``: document ids of the index that answer it; ``expected_answer``: text spans
  any one of which shows the answer is right. Both are lists of strings, non-empty for
  ``in_scope``; for the other kinds they may be empty (when given, the doc ids are still checked
  against the index, but grading ignores them).

Verdicts (:data:`VERDICTS`). In scope: ``correct`` (an expected span is in the answer *and* an
expected document is cited), ``partial`` (exactly one of the two), ``wrong`` (neither),
``wrong_abstention`` (the answer abstained). Out of scope and false premise: ``abstained_ok``
(abstained) or ``leak`` (answered, fully or partly). Independently, ``boilerplate_first`` flags
an answer whose first sentence is page furniture (:data:`DEFAULT_BOILERPLATE`).

Matching: the answer (without its ``[doc:ID]`` / ``[chunk:ID]`` markers) and each expected span
go through the same :func:`normalise`, then a plain substring test. A span copied from a table
row (``"2 | 225 |"``: cells between ``|``) also matches an answer that quotes the row in another
layout (``"opt-level: 2; Threshold: 225."``): :func:`span_in`.
"""

from __future__ import annotations

import difflib
import json
import re
import time
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from citewise.core import MAX_QUERY_CHARS, InputError
from citewise.text.lines import jsonl_rows

KINDS = ("in_scope", "out_of_scope", "false_premise")
VERDICTS = ("correct", "partial", "wrong", "wrong_abstention", "leak", "abstained_ok")
FIELDS = ("id", "corpus", "kind", "category", "text", "expected_docs", "expected_answer")

#: Page furniture that must not open an answer (regular expressions, searched case-insensitively
#: in the answer's first sentence): mdBook's keyboard-help overlay, skip links, tables of
#: contents, "edit this page" links and cookie banners.
DEFAULT_BOILERPLATE = (
    r"keyboard shortcuts",
    r"press\s*←\s*or\s*→\s*to\s+navigate",
    r"press\s+s\s+or\s+/\s+to\s+search",
    r"press\s+\?\s+to\s+show\s+this\s+help",
    r"press\s+esc\s+to\s+hide\s+this\s+help",
    r"skip\s+to\s+(?:main\s+)?content",
    r"table\s+of\s+contents",
    r"edit\s+this\s+page",
    r"(?:we|this\s+(?:web)?site)\s+uses?\s+cookies|accept\s+(?:all\s+)?cookies|cookie\s+(?:policy|settings|preferences)",
)

_MARKER = re.compile(r"\s*\[(?:doc|chunk):[^\]\s\[]+\]")
_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")
_DROP = str.maketrans("", "", "`*_[]()")
_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def strip_citations(text: str) -> str:
    """``text`` without its ``[doc:ID]`` / ``[chunk:ID]`` markers (and the space before each)."""
    return _MARKER.sub("", text)


def normalise(text: str) -> str:
    """The form answers and expected spans are compared in (one function for both sides).

    Steps, in order: Unicode NFKC; curly quotes to straight; Markdown inline links
    ``[label](url)`` to ``label``; lowercase; delete the characters ```` ` ```` ``*`` ``_``
    ``[`` ``]`` ``(`` ``)`` (inline markup and call parentheses: ``**`fs.rm()`**`` -> ``fs.rm``);
    collapse every run of whitespace to one space; strip the ends.

    Citation markers are not removed here (:func:`strip_citations` does that to the answer).

    >>> normalise("  The **`force`** option\\n of [fs.rm()](fs.md#rm)  ")
    'the force option of fs.rm'
    """
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = _LINK.sub(r"\1", text)
    text = text.lower().translate(_DROP)
    return " ".join(text.split())


def first_sentence(text: str) -> str:
    """The first sentence of an answer (markers removed): up to the first ``.``/``!``/``?``
    followed by whitespace, or the first line break, whichever comes first."""
    body = strip_citations(text).strip()
    return _SENTENCE_END.split(body, maxsplit=1)[0] if body else ""


def compile_patterns(extra: Iterable[str] = (), defaults: Sequence[str] = DEFAULT_BOILERPLATE) -> list[re.Pattern]:
    """The boilerplate patterns: ``defaults`` plus ``extra``, compiled case-insensitively.

    Raises:
        InputError: a pattern that is not a valid regular expression (naming it).
    """
    out = []
    for p in [*defaults, *extra]:
        try:
            out.append(re.compile(p, re.IGNORECASE))
        except re.error as e:
            raise InputError("--boilerplate-pattern", f"not a regular expression: {p!r} ({e})") from None
    return out


def is_boilerplate_first(text: str, patterns: Sequence[re.Pattern]) -> bool:
    """Whether the answer's :func:`first_sentence` matches any of ``patterns``."""
    first = first_sentence(text)
    return any(p.search(first) for p in patterns)


@dataclass(frozen=True)
class SetQuestion:
    """One validated question of an answer set (see the module docstring for the fields)."""

    qid: str
    corpus: str
    kind: str
    category: str
    text: str
    expected_docs: tuple[str, ...]
    expected_answer: tuple[str, ...]
    line: int = 0


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def parse_row(row: dict, path: str, line: int) -> SetQuestion:
    """One decoded JSON line -> :class:`SetQuestion`.

    Raises:
        InputError: a missing or mistyped field, an unknown kind, or an in-scope question without
            expected documents or spans (naming ``path``, ``line`` and the field).
    """
    for key in FIELDS:
        if key not in row:
            raise InputError(path, f"missing field '{key}' (a question needs {', '.join(FIELDS)})", line)
    qid = row["id"]
    if not isinstance(qid, str) or not qid.strip():
        raise InputError(path, "field 'id' must be a non-empty string", line)
    for key in ("corpus", "kind", "category", "text"):
        if not isinstance(row[key], str) or not row[key].strip():
            raise InputError(path, f"question '{qid}': field '{key}' must be a non-empty string", line)
    kind = row["kind"].strip()
    if kind not in KINDS:
        raise InputError(path, f"question '{qid}': field 'kind' must be one of {', '.join(KINDS)}, got '{kind}'", line)
    for key in ("expected_docs", "expected_answer"):
        if not _strings(row[key]):
            raise InputError(path, f"question '{qid}': field '{key}' must be a list of non-empty strings", line)
        if kind == "in_scope" and not row[key]:
            raise InputError(path, f"question '{qid}': field '{key}' must not be empty for an in_scope question", line)
    spans = tuple(s for s in row["expected_answer"])
    if kind == "in_scope" and not any(normalise(s) for s in spans):
        raise InputError(
            path, f"question '{qid}': field 'expected_answer' has only spans that normalise to nothing", line
        )
    return SetQuestion(
        qid.strip(),
        row["corpus"].strip(),
        kind,
        row["category"].strip(),
        row["text"],
        tuple(d.strip() for d in row["expected_docs"]),
        spans,
        line,
    )


def read_answer_set(path: str | Path, doc_ids: Iterable[str] | None = None) -> list[SetQuestion]:
    """Read and validate an answer set.

    Args:
        doc_ids: every document id of the index; when given, each expected doc id must be one
            of them.

    Raises:
        InputError: unreadable file, invalid JSON, a bad field (:func:`parse_row`), a duplicate
            id, an unknown expected doc id (with the closest existing id: "did you mean"), or an
            empty set; always naming the file and line.
    """
    path = str(path)
    docs = sorted(set(doc_ids)) if doc_ids is not None else None
    known = set(docs or ())
    questions: list[SetQuestion] = []
    first: dict[str, int] = {}
    for n, row in jsonl_rows(path, "answer set", max_text=MAX_QUERY_CHARS):
        q = parse_row(row, path, n)
        if q.qid in first:
            raise InputError(path, f"duplicate question id '{q.qid}' (first on line {first[q.qid]})", n)
        first[q.qid] = n
        if docs is not None:
            for d in q.expected_docs:
                if d not in known:
                    close = difflib.get_close_matches(d, docs, n=1, cutoff=0.6)
                    hint = f"; did you mean '{close[0]}'?" if close else ""
                    raise InputError(
                        path,
                        f"question '{q.qid}': field 'expected_docs': unknown document id '{d}' "
                        f"(not in the index; renamed or removed?){hint}",
                        n,
                    )
        questions.append(q)
    if not questions:
        raise InputError(path, "answer set has no questions")
    return questions


@dataclass
class GradedAnswer:
    """One graded question: the verdict and what it was based on.

    Attributes:
        span_found: an expected span is in the normalised answer (in-scope answered only).
        doc_cited: an expected document is among ``cited_docs``.
        latency_ms: wall time of the ``ask`` call.
        abstain_reason: why ``ask`` abstained (``'unknown name: X'``, ``'evidence 0.12 < threshold
            0.14'``, ...; '' when it answered), so a wrong abstention names the gate that made it.
    """

    qid: str
    corpus: str
    kind: str
    category: str
    question: str
    verdict: str
    outcome: str
    cited_docs: list[str]
    answer: str
    latency_ms: float
    span_found: bool = False
    doc_cited: bool = False
    boilerplate_first: bool = False
    abstain_reason: str = ""

    def as_dict(self) -> dict:
        """JSON-ready dict (field names as in the per-question JSONL: ``id`` for ``qid``)."""
        d = asdict(self)
        return {"id": d.pop("qid"), **d}


def cited_docs(answer: Any) -> list[str]:
    """Document ids an answer cites, first-cited order: its ``citations`` (``.doc_id``), then
    ``[doc:ID]`` / ``[chunk:ID]`` markers in its text (a chunk id counts for its document)."""
    out: dict[str, None] = {}
    for c in getattr(answer, "citations", None) or ():
        doc = getattr(c, "doc_id", None) if not isinstance(c, str) else c
        if doc:
            out.setdefault(doc, None)
    for m in re.finditer(r"\[(doc|chunk):([^\]\s\[]+)\]", answer.text or ""):
        ident = m.group(2)
        out.setdefault(ident.rsplit("#", 1)[0] if m.group(1) == "chunk" else ident, None)
    return list(out)


def is_abstention(answer: Any) -> bool:
    """``answer.outcome == "abstained"`` (``partial`` counts as answered)."""
    return getattr(answer, "outcome", "") == "abstained"


#: Most characters between two cells of a table-row span in an answer (a header label and its
#: punctuation: "; Threshold: " is 13): :func:`span_in`.
CELL_GAP = 60


def span_in(span: str, body: str) -> bool:
    """Whether a normalised expected span is in a normalised answer ``body``.

    A plain substring test; a span holding ``|`` (a table row, as rendered from Markdown or
    copied from an HTML table) with two or more non-empty cells also matches when every cell
    occurs in ``body`` in the span's order, each as whole words (no letter or digit touching
    either end) and at most :data:`CELL_GAP` characters after the previous one: the answer quoted
    the row with its header labels (``"Target: bpfel-unknown-none; std: *; Notes: BPF"``).

    >>> span_in("2 | 225 |", "opt-level: 2; threshold: 225.")
    True
    >>> span_in("2 | 225 |", "opt-level: 3; threshold: 275. the default is 225 at 2")
    False

    A span copied from a term and its description set side by side (a PDF's definition list:
    ``\\j the number of jobs``) also matches the answer's ``term: description`` rendering: the
    body is tested once more with every ``": "`` read as a space.

    >>> span_in("<< >> left and right bitwise shifts", "<< >>: left and right bitwise shifts.")
    True
    """
    if not span:
        return False
    if span in body or span in body.replace(": ", " "):
        return True
    cells = [c.strip() for c in span.split("|") if c.strip()]
    if len(cells) < 2:
        return False

    patterns = [re.compile(rf"(?<![^\W_]){re.escape(c)}(?![^\W_])") for c in cells]

    def rest_from(i: int, pos: int) -> bool:
        if i == len(cells):
            return True
        limit = len(body) if i == 0 else pos + CELL_GAP + len(cells[i])
        for m in patterns[i].finditer(body, pos, limit):
            if i and m.start() - pos > CELL_GAP:
                break
            if rest_from(i + 1, m.end()):
                return True
        return False

    return rest_from(0, 0)


def grade_answer(
    q: SetQuestion, answer: Any, latency_ms: float = 0.0, patterns: Sequence[re.Pattern] | None = None
) -> GradedAnswer:
    """Grade one answer to ``q`` (verdicts: see the module docstring)."""
    patterns = compile_patterns() if patterns is None else patterns
    text = answer.text or ""
    docs = cited_docs(answer)
    abstained = is_abstention(answer)
    body = normalise(strip_citations(text))
    span = any(span_in(normalise(e), body) for e in q.expected_answer)
    cited = any(d in docs for d in q.expected_docs)
    if q.kind == "in_scope":
        verdict = (
            "wrong_abstention"
            if abstained
            else "correct"
            if span and cited
            else "partial"
            if span or cited
            else "wrong"
        )
    else:
        verdict = "abstained_ok" if abstained else "leak"
    return GradedAnswer(
        q.qid,
        q.corpus,
        q.kind,
        q.category,
        q.text,
        verdict,
        getattr(answer, "outcome", ""),
        docs,
        text,
        round(latency_ms, 2),
        span and not abstained,
        cited,
        not abstained and is_boilerplate_first(text, patterns),
        getattr(answer, "abstain_reason", "") or "",
    )


def _rate(n: int, d: int) -> float | None:
    return round(n / d, 4) if d else None


def summarise(rows: Sequence[GradedAnswer]) -> dict:
    """Counts and rates of a group of graded answers.

    Returns a dict: ``questions``; ``in_scope`` and the counts ``correct``, ``partial``,
    ``wrong``, ``wrong_abstention`` with their ``*_rate`` over in-scope questions
    (``correct_rate`` is the correct-and-cited rate); ``no_answer`` (out-of-scope plus
    false-premise questions), ``abstained_ok``, ``leaks`` and ``abstention_rate`` over them; rates
    are None when their denominator is 0; ``boilerplate_first``; ``mean_latency_ms``.
    """
    count = {v: sum(r.verdict == v for r in rows) for v in VERDICTS}
    n_in = sum(r.kind == "in_scope" for r in rows)
    n_no = len(rows) - n_in
    out: dict[str, Any] = {"questions": len(rows), "in_scope": n_in}
    for v in ("correct", "partial", "wrong", "wrong_abstention"):
        out[v] = count[v]
        out[f"{v}_rate"] = _rate(count[v], n_in)
    out.update(
        {
            "no_answer": n_no,
            "abstained_ok": count["abstained_ok"],
            "leaks": count["leak"],
            "abstention_rate": _rate(count["abstained_ok"], n_no),
            "boilerplate_first": sum(r.boilerplate_first for r in rows),
            "mean_latency_ms": round(sum(r.latency_ms for r in rows) / len(rows), 2) if rows else None,
        }
    )
    return out


@dataclass
class AnswerSetReport:
    """Graded answers of a whole set and their summaries (overall and per group)."""

    rows: list[GradedAnswer] = field(default_factory=list)

    def summary(self) -> dict:
        """``{"overall": ..., "by_corpus": {...}, "by_kind": {...}, "by_category": {...}}``, each
        value a :func:`summarise` dict; groups sorted by name."""

        def by(attr: str) -> dict:
            names = sorted({getattr(r, attr) for r in self.rows})
            return {n: summarise([r for r in self.rows if getattr(r, attr) == n]) for n in names}

        return {
            "overall": summarise(self.rows),
            "by_corpus": by("corpus"),
            "by_kind": by("kind"),
            "by_category": by("category"),
        }

    def failures(self) -> list[GradedAnswer]:
        """Questions whose verdict is neither ``correct`` nor ``abstained_ok``."""
        return [r for r in self.rows if r.verdict not in ("correct", "abstained_ok")]

    def to_dict(self) -> dict:
        """``{"summary": ..., "rows": [per-question dicts]}``."""
        return {"summary": self.summary(), "rows": [r.as_dict() for r in self.rows]}

    def write_jsonl(self, path: str | Path) -> None:
        """Write one JSON object per question (:meth:`GradedAnswer.as_dict`)."""
        with open(path, "w", encoding="utf-8") as f:
            for r in self.rows:
                f.write(json.dumps(r.as_dict(), ensure_ascii=False) + "\n")

    def table_lines(self) -> list[str]:
        """A plain-text summary table (one line per group), for tools without rich."""
        head = f"{'group':<28} {'n':>4} {'correct':>8} {'partial':>8} {'wrong':>6} {'w.abst':>7} {'abst.ok':>8} {'leaks':>6} {'boiler':>6} {'ms':>8}"
        lines = [head]
        for label, s in summary_groups(self.summary()):
            lines.append(
                f"{label[:28]:<28} {s['questions']:>4} {fmt_rate(s['correct_rate']):>8} {fmt_rate(s['partial_rate']):>8} "
                f"{fmt_rate(s['wrong_rate']):>6} {fmt_rate(s['wrong_abstention_rate']):>7} "
                f"{fmt_rate(s['abstention_rate']):>8} {s['leaks']:>6} {s['boilerplate_first']:>6} "
                f"{s['mean_latency_ms']:>8.1f}"
            )
        return lines


def summary_groups(summary: dict) -> list[tuple[str, dict]]:
    """``(label, stats)`` for every row of a summary table: ``all``, then ``corpus=…``,
    ``kind=…``, ``category=…``."""
    out = [("all", summary["overall"])]
    for key, prefix in (("by_corpus", "corpus"), ("by_kind", "kind"), ("by_category", "category")):
        out += [(f"{prefix}={name}", s) for name, s in summary[key].items()]
    return out


def fmt_rate(value: float | None) -> str:
    """A rate as ``0.667``, or ``-`` when undefined."""
    return "-" if value is None else f"{value:.3f}"


def grade_set(
    ask: Callable[[str], Any],
    questions: Sequence[SetQuestion],
    patterns: Sequence[re.Pattern] | None = None,
    progress: Callable[[int], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> AnswerSetReport:
    """Ask every question (in set order), time each call and grade the answers.

    Args:
        ask: ``question text -> Answer`` (e.g. ``lambda q: index.ask(q)``).
        patterns: boilerplate patterns (default: :func:`compile_patterns` of the defaults).
        progress: called with 1 after each question.
        clock: seconds clock for latency (wall time by default).
    """
    patterns = compile_patterns() if patterns is None else patterns
    report = AnswerSetReport()
    for q in questions:
        t0 = clock()
        answer = ask(q.text)
        ms = (clock() - t0) * 1000.0
        report.rows.append(grade_answer(q, answer, ms, patterns))
        if progress:
            progress(1)
    return report
