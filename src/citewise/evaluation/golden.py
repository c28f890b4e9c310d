"""Golden sets: graded queries over an indexed corpus, validated line by line.

Format (JSONL, one query per line)::

    {"id": "q04", "kind": "identifier", "text": "What does E-1004 mean?",
     "relevant": {"errors/E-1004": 2, "help/billing/payment-methods": 1}}

* ``id``: unique query id (string).
* ``kind``: the slice the query belongs to (e.g. ``identifier``, ``paraphrase``, ``keyword``);
  required and non-empty; ``all`` is reserved for the slice of every query.
* ``text``: the query.
* ``relevant``: ``{id: grade}`` with grade 0 (judged not relevant), 1 (partly) or 2 (answers
  it). Ids are document ids (``help/sso/okta``) or chunk ids (``help/sso/okta#scim``, recognised
  by the ``#``); one query uses one level, not both. Every query needs at least one grade-2 id.

Validation against an index (:func:`load_golden` with ``store``): every id must exist in the
store, so a renamed or deleted document fails loudly with the file, line and the closest
existing id instead of silently scoring 0.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from citewise.core import MAX_QUERY_CHARS, InputError
from citewise.evaluation.metrics import ALL_SLICE, slices_of
from citewise.text.lines import jsonl_rows

GRADES = (0, 1, 2)


@dataclass(frozen=True)
class GoldenQuery:
    """One golden-set query.

    Attributes:
        qid: query id.
        kind: slice name.
        text: the query text.
        relevant: ``{doc or chunk id: grade 0..2}``.
        line: 1-based line in the file it came from (0 when built in code).
    """

    qid: str
    kind: str
    text: str
    relevant: dict[str, int]
    line: int = 0

    @property
    def level(self) -> str:
        """``chunk`` when the judged ids are chunk ids, else ``doc``."""
        return "chunk" if any("#" in i for i in self.relevant) else "doc"


@dataclass
class GoldenSet:
    """A validated golden set: queries in file order plus where they came from."""

    queries: list[GoldenQuery]
    source: str = ""
    kinds: list[str] = field(default_factory=list)

    @property
    def qrels(self) -> dict[str, dict[str, int]]:
        """``{qid: {id: grade}}`` for :func:`citewise.evaluation.metrics.evaluate`."""
        return {q.qid: dict(q.relevant) for q in self.queries}

    @property
    def texts(self) -> dict[str, str]:
        """``{qid: query text}``."""
        return {q.qid: q.text for q in self.queries}

    @property
    def slices(self) -> dict[str, list[str]]:
        """``{"all": [...], kind: [...]}`` (see :func:`citewise.evaluation.metrics.slices_of`)."""
        return slices_of({q.qid: q.kind for q in self.queries})

    def levels(self) -> dict[str, str]:
        """``{qid: "doc" | "chunk"}``."""
        return {q.qid: q.level for q in self.queries}


def _fail(path: str, line: int, reason: str):
    raise InputError(path, reason, line)


def parse_query(row: object, path: str, line: int) -> GoldenQuery:
    """One decoded JSON line -> :class:`GoldenQuery`.

    Raises:
        InputError: a missing or mistyped field, a grade outside 0..2, no grade-2 id, or a query
            that mixes document and chunk ids (naming ``path`` and ``line``).
    """
    if not isinstance(row, dict):
        _fail(path, line, "expected a JSON object with id, kind, text and relevant")
    for key in ("id", "kind", "text", "relevant"):
        if key not in row:
            _fail(path, line, f"missing field '{key}' (a golden query needs id, kind, text, relevant)")
    qid, kind, text, relevant = row["id"], row["kind"], row["text"], row["relevant"]
    if not isinstance(qid, str) or not qid.strip():
        _fail(path, line, "field 'id' must be a non-empty string")
    if not isinstance(kind, str) or not kind.strip():
        _fail(path, line, f"query '{qid}': field 'kind' must be a non-empty string (the slice, e.g. identifier)")
    if kind.strip() == ALL_SLICE:
        _fail(path, line, f"query '{qid}': kind '{ALL_SLICE}' is reserved for the slice of every query")
    if not isinstance(text, str) or not text.strip():
        _fail(path, line, f"query '{qid}': field 'text' must be a non-empty string")
    if not isinstance(relevant, dict) or not relevant:
        _fail(path, line, f"query '{qid}': field 'relevant' must be a non-empty object {{id: grade}}")
    grades: dict[str, int] = {}
    for rid, g in relevant.items():
        if not isinstance(rid, str) or not rid.strip():
            _fail(path, line, f"query '{qid}': relevant ids must be non-empty strings")
        if isinstance(g, bool) or not isinstance(g, int) or g not in GRADES:
            _fail(path, line, f"query '{qid}': grade of '{rid}' must be 0, 1 or 2, got {g!r}")
        grades[rid] = g
    if 2 not in grades.values():
        _fail(path, line, f"query '{qid}': needs at least one grade-2 id (the document that answers it)")
    levels = {"chunk" if "#" in r else "doc" for r in grades}
    if len(levels) > 1:
        _fail(path, line, f"query '{qid}': mixes document and chunk ids; judge one level per query")
    return GoldenQuery(qid.strip(), kind.strip(), text, grades, line)


def read_golden(path: str | Path) -> GoldenSet:
    """Parse a golden-set JSONL file (no index needed).

    Raises:
        InputError: unreadable file, invalid JSON, a bad field (see :func:`parse_query`), a
            duplicate query id, or no queries at all; always with file and line.
    """
    path = Path(path)
    queries: list[GoldenQuery] = []
    first_line: dict[str, int] = {}
    for n, row in jsonl_rows(path, "golden set", max_text=MAX_QUERY_CHARS):
        q = parse_query(row, str(path), n)
        if q.qid in first_line:
            _fail(str(path), n, f"duplicate query id '{q.qid}' (first on line {first_line[q.qid]})")
        first_line[q.qid] = n
        queries.append(q)
    if not queries:
        raise InputError(str(path), "golden set has no queries")
    return GoldenSet(queries, str(path), sorted({q.kind for q in queries}))


def validate_ids(golden: GoldenSet, doc_ids: Iterable[str], chunk_exists: Callable[[Sequence[str]], set[str]]) -> None:
    """Check that every judged id exists in the corpus.

    Args:
        doc_ids: every document id in the index.
        chunk_exists: given chunk ids, returns the subset that exists (e.g. from
            ``store.get_chunks``).

    Raises:
        InputError: the first unknown id, naming the golden file, line, query and the closest
            existing id (a renamed document usually shows up here).
    """
    docs = set(doc_ids)
    wanted_chunks = sorted({r for q in golden.queries for r in q.relevant if "#" in r})
    chunks = chunk_exists(wanted_chunks) if wanted_chunks else set()
    for q in golden.queries:
        for rid in q.relevant:
            known = chunks if "#" in rid else docs
            if rid in known:
                continue
            what, hint = "document", ""
            doc = rid.rsplit("#", 1)[0]
            if "#" in rid:
                what = "chunk"
                if doc in docs:
                    hint = f"; document '{doc}' exists, its sections may have been renamed"
            if not hint:
                close = difflib.get_close_matches(doc, sorted(docs), n=1, cutoff=0.6)
                hint = f"; did you mean '{close[0]}'?" if close else ""
            raise InputError(
                golden.source,
                f"query '{q.qid}': unknown {what} id '{rid}' (not in the index; renamed or removed?){hint}",
                q.line,
            )


def load_golden(path: str | Path, store=None) -> GoldenSet:
    """Read a golden set and, when ``store`` is given, validate its ids against the index.

    Args:
        store: a :class:`citewise.store.base.Store` (``documents()`` and ``get_chunks``).

    Raises:
        InputError: see :func:`read_golden` and :func:`validate_ids`.
    """
    golden = read_golden(path)
    if store is not None:
        validate_ids(golden, store.documents().keys(), lambda ids: set(store.get_chunks(ids)))
    return golden


def read_out_of_scope(path: str | Path) -> dict[str, str]:
    """Questions with no answer in the corpus: ``{id: text}`` from JSONL with ``id`` and ``text``.

    Raises:
        InputError: unreadable file, bad JSON, a missing field or a duplicate id (with the line).
    """
    path = Path(path)
    out: dict[str, str] = {}
    for n, row in jsonl_rows(path, "questions", max_text=MAX_QUERY_CHARS):
        if not isinstance(row.get("id"), str) or not isinstance(row.get("text"), str):
            raise InputError(str(path), "expected a JSON object with string fields 'id' and 'text'", n)
        if row["id"] in out:
            raise InputError(str(path), f"duplicate id '{row['id']}'", n)
        out[row["id"]] = row["text"]
    return out
