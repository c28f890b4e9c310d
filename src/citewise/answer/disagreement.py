"""Sources that disagree on the value a question asks for: the ``conflict`` outcome of the plain
ask pipeline.

When the question asks for a number or a date (its expected answer type,
:func:`citewise.answer.question.analyze_question`) and the assembled context holds *answer
sentences* from different documents (or versions of one) that state different values of one
unit, the answer is not one of them but both: :func:`find_conflict` returns them and
:func:`conflict_answer` writes the answer, one cited line per value.

Conservative by construction:

* an **answer sentence** is an answer unit (sentence, list item, table row, definition; never
  code) that states the asked subject: read with its document title and headings it holds the
  content terms of every clause of the question
  (:func:`citewise.answer.requirements.derive_checks`: all of them, or all but one of four or
  more; the one left may be the relation the value stands for, "cost" for "$39 per month"), every
  name and identifier the question gives, and one of those terms itself (a heading alone does
  not make a sentence about the subject);
* its value is a quantity or date (:mod:`citewise.answer.values`) of the asked type; values are
  compared only within one unit (``30 days`` with ``365 days``, never with ``1 month``), and only
  where each sentence states exactly one value of that unit;
* a document stating two values of that unit for the subject (per plan, per region...) is left
  out: it qualifies the value, it does not disagree;
* a chunk holding an instruction-like passage (:func:`citewise.text.trust.instruction_like`) is
  untrusted as a whole: none of its sentences is an answer sentence here;
* the units considered are those of the best answer sentence (the first in context order), so
  an answer about days is never turned into a conflict about users.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from citewise.answer.citations import CheckedAnswer, enforce_citations, split_cited_sentences
from citewise.answer.question import analyze_question
from citewise.answer.requirements import derive_checks
from citewise.answer.units import Unit
from citewise.answer.values import Value, values_of_type
from citewise.text.trust import instruction_like

#: Expected answer types whose values are compared.
COMPARED_TYPES = ("number", "date")


@dataclass(frozen=True)
class Stated:
    """An answer sentence and the value it states.

    Attributes:
        chunk_index: the chunk's index in the context.
        doc_id: its document (``id@version`` for an older revision).
        unit: the answer unit (offsets in the chunk text).
        value: the value (offsets in ``unit.text``).
    """

    chunk_index: int
    doc_id: str
    unit: Unit
    value: Value


@dataclass(frozen=True)
class ValueConflict:
    """Answer sentences of different documents stating different values of one unit.

    Attributes:
        subject: the question's main clause, without its question words (what the sources
            disagree on).
        unit: the values' unit (:mod:`citewise.answer.values`).
        stated: one answer sentence per distinct value, in context order.
    """

    subject: str
    unit: str
    stated: tuple[Stated, ...]


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[\w-]+", text)}


def answer_sentences(
    question: str,
    chunks: Sequence,
    units: Sequence[tuple[list[Unit], object]],
    weight: Callable[[str], float] | None = None,
) -> list[Stated]:
    """The context's answer sentences with their values of the asked type (module docstring),
    in context order; [] when the question asks for no compared type.

    ``chunks``: the context's chunks (``doc_id``, ``title``, ``heading_path``); ``units``: their
    ``(units, vectors)`` (:meth:`citewise.answer.unit_cache.UnitCache.get`); ``weight``: term ->
    IDF weight for the derived checks (equal weights when None)."""
    qa = analyze_question(question)
    if qa.expected not in COMPARED_TYPES:
        return []
    checks = derive_checks(question, weight)
    if not checks:
        return []
    names = [n.lower() for n in (*qa.entities, *qa.identifiers)]
    own_terms = {t for c in checks for t in c.terms} | {t for n in names for t in _analyzed(n)}
    out: list[Stated] = []
    for ci, (chunk, (us, _vecs)) in enumerate(zip(chunks, units)):
        if any(instruction_like(u.text) for u in us):
            continue
        where = " ".join((chunk.title, *chunk.heading_path))
        for u in us:
            if u.kind == "code":
                continue
            vals = values_of_type(u.text, qa.expected)
            if not vals:
                continue
            read = f"{where} {' '.join(u.headings)} {u.text}"
            terms = set(_analyzed(read))
            if not all(sum(t in terms for t in c.terms) >= c.min_terms for c in checks):
                continue
            have = _words(read)
            if not all(set(_words(n)) <= have for n in names):
                continue
            if not own_terms & set(_analyzed(u.text)):
                continue
            out += [Stated(ci, chunk.doc_id, u, v) for v in vals]
    return out


def _analyzed(text: str) -> list[str]:
    from citewise.text.analyzer import analyze

    return analyze(text)


def find_conflict(
    question: str,
    chunks: Sequence,
    units: Sequence[tuple[list[Unit], object]],
    weight: Callable[[str], float] | None = None,
) -> ValueConflict | None:
    """The disagreement of the context's answer sentences on the asked value (module
    docstring), or None when they agree, name one document, or the question asks for no
    compared type. Arguments as :func:`answer_sentences`."""
    stated = answer_sentences(question, chunks, units, weight)
    if not stated:
        return None
    first = stated[0]
    lead_units = [s.value.unit for s in stated if s.unit is first.unit and s.chunk_index == first.chunk_index]
    for unit in dict.fromkeys(lead_units):
        per_sentence: dict[tuple[int, int], list[Stated]] = {}
        for s in stated:
            if s.value.unit == unit:
                per_sentence.setdefault((s.chunk_index, s.unit.start), []).append(s)
        single = [v[0] for v in per_sentence.values() if len(v) == 1]  # one value of the unit each
        by_doc: dict[str, set] = {}
        for s in single:
            by_doc.setdefault(s.doc_id, set()).add(s.value.amount)
        docs = {d for d, amounts in by_doc.items() if len(amounts) == 1}  # a document qualifying the value: left out
        kept: dict[object, Stated] = {}
        for s in single:
            if s.doc_id in docs:
                kept.setdefault(s.value.amount, s)
        if len(kept) > 1:
            checks = derive_checks(question)  # the main clause names what the sources disagree on
            return ValueConflict(checks[0].name if checks else "", unit, tuple(kept.values()))
    return None


def conflict_answer(conflict: ValueConflict, context) -> CheckedAnswer:
    """The ``conflict`` answer for ``context`` (a :class:`~citewise.answer.context.Context`): a
    line saying the sources disagree on the subject, then one line per value quoting its answer
    sentence, each sentence cited ``[doc:ID]`` with its offsets (citations as
    :func:`~citewise.answer.citations.enforce_citations` makes them; outcome ``conflict``)."""
    quoted, spans = [], {}
    for s in conflict.stated:
        chunk = context.chunks[s.chunk_index]
        text = s.unit.text if s.unit.text[-1:] in ".!?" else f"{s.unit.text}."
        line = []
        for sentence, _ in split_cited_sentences(text):
            line.append(f"{sentence} [doc:{chunk.doc_id}]")
            spans.setdefault(sentence, (s.unit.start, s.unit.end))
        quoted.append(" ".join(line))
    checked = enforce_citations("\n".join(quoted), context, spans)
    what = conflict.subject or "the value asked for"
    checked.text = "\n".join([f"The sources disagree on {what}:", *(f"- {q}" for q in quoted)])
    checked.outcome = "conflict"
    return checked
