"""Features of answer units for the learned selector: general signals, no per-question rules.

For a question (its :class:`~citewise.answer.question.QuestionAnalysis`, embedding ``qvec`` and
the embedding of its subject) and an assembled context, every *quotable* unit of every context
chunk (:func:`quotable`) becomes a :class:`Candidate` with one row of :data:`FEATURES`:

========================  ======================================================================
feature                   value
========================  ======================================================================
``cos``                   cosine of the question and the unit (embedded with title and heading)
``cos_gap``               ``cos`` minus the best ``cos`` of the context (0 for the best unit)
``lex``                   IDF-weighted share of the question's content terms in the unit's text
                          (a code block's text with the lead-in ending in ':' right before it)
``lex_context``           the same share in the unit's headings and the document title
``lex_gap``               ``lex`` minus the best ``lex`` of the context
``subject``               share of the subject's terms in the unit's text
``lead``                  1 when the unit has a lead term (list item, definition, table row)
                          all of whose terms are question terms
``identifier``            share of the question's identifiers the unit or its title names
``entry``                 1 when a name the question asks about (an identifier, a word that is
                          a name by its shape or rarity: :func:`citewise.text.rarity.name_words`,
                          or a one-word subject) is the unit's lead term or its nearest heading, whole
                          (:func:`citewise.text.names.heading_pattern`): the name's entry
``entry_first``           ``entry`` × ``section_first``: the opening of that entry
``other_identifier``      1 when the unit names identifiers and none is the question's
``kind_*``                one-hot unit kind: sentence, item, row, code, definition
``section_first``         1 for the first unit under its headings in the chunk
``section_position``      position under its headings / units under them (0 first .. 1 last)
``chunk_rr``              1 / the chunk's rank in the context
``chunk_score``           the chunk's retrieval score / the context's best
``type_match``            the unit holds what the expected answer type needs (a number, a date,
                          a capitalised name, code, a numbered step, a value after "default")
``novel``                 share of the unit's words that are not words of the question
``log_words``             ``log(1 + words)`` of the unit
``back_reference``        1 when the unit opens with a word pointing back (``this``, ``it``)
``faq_reply``             1 when the unit opens with Yes/No under a question heading
``reply_matches``         ``faq_reply`` × the IDF share of that heading's content terms that the
                          question holds (the heading asks what the question asks)
``instruction``           1 when the unit reads as instructions to a model
                          (:func:`citewise.text.trust.instruction_like`)
========================  ======================================================================

Interaction features the linear model cannot form itself: ``code_wanted`` = ``kind_code`` ×
(the question asks for code), ``step_howto`` = numbered item × how-to question,
``yes_no_reply`` = ``reply_matches`` × yes/no question.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from citewise.answer.question import QuestionAnalysis, lexicon
from citewise.answer.select.format import (
    is_furniture,
    is_garble,
    is_lead_in,
    is_synopsis,
    is_synopsis_section,
    step_number,
    states_value,
)
from citewise.answer.units import Unit
from citewise.text.analyzer import analyze, find_identifiers
from citewise.text.hanging import term_alternatives
from citewise.text.names import heading_pattern
from citewise.text.rarity import name_words
from citewise.text.trust import instruction_like

FEATURES = (
    "cos",
    "cos_gap",
    "lex",
    "lex_context",
    "lex_gap",
    "subject",
    "lead",
    "identifier",
    "entry",
    "entry_first",
    "other_identifier",
    "kind_sentence",
    "kind_item",
    "kind_row",
    "kind_code",
    "kind_definition",
    "section_first",
    "section_position",
    "chunk_rr",
    "chunk_score",
    "type_match",
    "novel",
    "log_words",
    "back_reference",
    "faq_reply",
    "reply_matches",
    "instruction",
    "code_wanted",
    "step_howto",
    "yes_no_reply",
)
_KINDS = ("sentence", "item", "row", "code", "definition")
#: A code block of at most this many characters (a configuration line, a command, a pattern:
#: a value more than a program) may be quoted for a question that does not ask for code.
SHORT_CODE_CHARS = 300
_NUMBER = re.compile(r"\d")
_DATE = re.compile(
    r"\b(?:1[0-9]{3}|20[0-9]{2})s?\b|\b(?:January|February|March|April|May|June|July|August|"
    r"September|October|November|December)\b"
)
_CAPITALISED = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-z]+")
# A reply opener is "Yes"/"No" standing alone before punctuation, a dash or the end ("No,
# ..."), never the determiner of a noun phrase ("No Rust extensions are available") nor the
# abbreviation of "number" ("No. 10 of the release notes").
REPLY_OPENER = re.compile(r"^(?:yes|no(?!\.\s*\d))(?:[.,!;:]|\s+[-\u2013\u2014]|$)\s*", re.I)


@dataclass(frozen=True, eq=False)
class Candidate:
    """A quotable unit of a context chunk.

    Attributes:
        chunk_index: its chunk's index in the context.
        unit: the :class:`~citewise.answer.units.Unit`.
        vector: its embedding (shape (dim,)).
        features: one value per :data:`FEATURES` name.
        other_entity: the question names identifiers, the unit's chunk is titled with other
            identifiers and neither the title nor the unit names one of the question's (a page
            about ``E-1008`` for a question about ``E-1003``).
        lead_in: for a code block or list item, the sentence ending in ':' that introduces it
            (right before the block, or before the list's first item, under the same headings:
            "Use an extra slash at the start of a path to specify an absolute path:"), as a
            candidate that is never ranked (zero features); None when there is none.
    """

    chunk_index: int
    unit: Unit
    vector: np.ndarray
    features: np.ndarray
    other_entity: bool = False
    lead_in: "Candidate | None" = None


def _marker(text: str, start: int) -> str:
    """The list marker of the item line holding ``start``: '-', '*', '+', or '1' for a number."""
    line = text[text.rfind("\n", 0, start) + 1 : start].strip()
    return "1" if line[:1].isdigit() else line[:1]


def _lead_in_index(units: Sequence[Unit], ui: int, text: str = "") -> int | None:
    """Index of the unit ending in ':' that introduces code block or list item ``units[ui]``:
    the unit right before the block, or right before the run of items ``units[ui]`` is in (under
    the same headings, with the same list marker in ``text``, the chunk text: a ``*`` list
    after a ``-`` list is another list); None when that unit is no such lead-in."""
    u, k = units[ui], ui - 1
    if u.kind == "item":
        mark = _marker(text, u.start)
        while (
            k >= 0
            and units[k].kind == "item"
            and units[k].headings == u.headings
            and _marker(text, units[k].start) == mark
        ):
            k -= 1
    if k < 0 or units[k].kind not in ("sentence", "item") or units[k].headings != u.headings:
        return None
    return k if units[k].text.rstrip("\"'”’)*_ ").endswith(":") else None


def quotable(u: Unit, chunk_text: str, wants_code: bool) -> bool:
    """Whether a unit may be quoted at all (format-level, any corpus): not cut off by truncation,
    not a lead-in ending in ':' or a question, not page furniture (a table-of-contents line, a
    section or page number, a footnote marker: :func:`~citewise.answer.select.format.is_furniture`;
    not a run of numbers and codes, a table row aside: :func:`~citewise.answer.select.format.is_garble`),
    not a bare command synopsis (:func:`~citewise.answer.select.format.is_synopsis`), and a code
    block only when the question asks for code or the block has at most
    :data:`SHORT_CODE_CHARS` characters, and it is not a manual page's synopsis
    (:func:`~citewise.answer.select.format.is_synopsis_section`). (A short block quoted for a
    question that does not ask for code is quoted first or not at all:
    :func:`~citewise.answer.select.compose.compose`.)"""
    if u.end > len(chunk_text) or not u.text.strip():
        return False
    if u.kind == "code":
        return (wants_code or len(u.text) <= SHORT_CODE_CHARS) and not is_synopsis_section(u.heading)
    return not (
        is_lead_in(u.text) or is_furniture(u.text) or is_synopsis(u.text) or (u.kind != "row" and is_garble(u.text))
    )


def _share(have: set[str], weights: dict[str, float]) -> float:
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in have) / total if total > 0 else 0.0


def _heading_asked(heading: str, weights: dict[str, float], idf: Callable[[str], float] | None) -> float:
    """IDF share of ``heading``'s content terms that are terms of the question (``weights``)."""
    terms = [t for t in dict.fromkeys(analyze(heading)) if t not in lexicon().question_terms]
    w = {t: (idf(t) if idf else 1.0) for t in terms}
    total = sum(w.values())
    return sum(v for t, v in w.items() if t in weights) / total if total > 0 else 0.0


def _type_match(qa: QuestionAnalysis, u: Unit, text: str, step: bool) -> float:
    e = qa.expected
    if e == "number":
        return float(bool(_NUMBER.search(u.text)))
    if e == "date":
        return float(bool(_DATE.search(u.text)))
    if e in ("person", "place"):
        return float(bool(_CAPITALISED.search(u.text)))
    if e == "code":
        return float(u.kind == "code")
    if e == "procedure":
        return float(step or u.kind == "code")
    if e == "value":
        return float(states_value(u.text))
    if e == "definition":
        return float(u.kind in ("definition", "item", "row") or " is " in f" {u.text} " or " are " in f" {u.text} ")
    return 0.0


def candidates(
    qa: QuestionAnalysis,
    qvec: np.ndarray,
    chunks: Sequence,
    got: Sequence[tuple[list[Unit], np.ndarray]],
    idf: Callable[[str], float] | None = None,
) -> list[Candidate]:
    """The quotable units of ``chunks`` (context chunks: ``title``, ``heading_path``, ``text``,
    ``score``) with their feature rows. ``got``: ``(units, vectors)`` per chunk
    (:meth:`~citewise.answer.unit_cache.UnitCache.get`). Only the question is embedded: the
    subject's weight comes through ``subject``, the share of its terms in the unit."""
    lex_words = lexicon()
    weights = {t: (idf(t) if idf else 1.0) for t in qa.terms}
    subj = set(qa.subject_terms)
    q_words = {w.lower() for w in re.findall(r"\w+", qa.text)}
    q_ids = {i.lower() for i in qa.identifiers}
    q = np.asarray(qvec, dtype=np.float32)
    best_score = max((float(getattr(c, "score", 0.0) or 0.0) for c in chunks), default=0.0)
    names = list(qa.identifiers) + name_words(qa.text) + ([qa.subject] if qa.subject and " " not in qa.subject else [])
    name_rx = [heading_pattern(n) for n in dict.fromkeys(names) if n.strip("-`'\"")]
    rows: list[tuple[int, Unit, np.ndarray, dict]] = []
    for ci, (chunk, (units, vecs)) in enumerate(zip(chunks, got)):
        if not len(units):
            continue
        sims = vecs @ q
        context_terms = set(analyze(" ".join((chunk.title, *chunk.heading_path))))
        title_ids = {i.lower() for i in find_identifiers(chunk.title)}
        by_heads: dict[tuple, list[int]] = {}
        leads: list[int | None] = []  # per unit, its lead-in's index (an item: its list's, found once)
        for ui, u in enumerate(units):
            by_heads.setdefault(u.headings, []).append(ui)
            prev = units[ui - 1] if ui else None
            same_list = (
                u.kind == "item"
                and prev is not None
                and prev.kind == "item"
                and prev.headings == u.headings
                and _marker(chunk.text, prev.start) == _marker(chunk.text, u.start)
            )
            leads.append(
                leads[-1]
                if same_list
                else _lead_in_index(units, ui, chunk.text)
                if u.kind in ("code", "item")
                else None
            )
        for ui, u in enumerate(units):
            if not quotable(u, chunk.text, qa.wants_code):
                continue
            own = set(analyze(u.text))
            if u.kind == "code" and ui and units[ui - 1].headings == u.headings and is_lead_in(units[ui - 1].text):
                own |= set(analyze(units[ui - 1].text))  # a block is read with its lead-in ("The syntax is:")
            heads = set(analyze(" ".join(u.headings))) | context_terms
            lead_terms = set(analyze(u.lead)) if u.lead else set()
            named = {i.lower() for i in find_identifiers(u.text)} | {
                n.lower() for n in qa.identifiers if n.lower() in u.text.lower()
            }
            words = re.findall(r"\w+", u.text.lower())
            step = u.kind == "item" and step_number(chunk.text, u.start) is not None
            peers = by_heads[u.headings]
            reply = bool(REPLY_OPENER.match(u.text)) and u.heading.rstrip().endswith("?")
            lead_names, heading_names = term_alternatives(u.lead), term_alternatives(u.heading)
            entry = float(
                any(rx.fullmatch(a) for rx in name_rx for a in lead_names)
                or any(rx.match(a) for rx in name_rx for a in heading_names)
            )
            reply_share = _heading_asked(u.heading, weights, idf) if reply else 0.0
            f = {
                "cos": float(sims[ui]),
                "lex": _share(own, weights),
                "lex_context": _share(heads, weights),
                "subject": len(own & subj) / len(subj) if subj else 0.0,
                "lead": float(bool(lead_terms) and lead_terms <= set(weights)),
                "identifier": len((named | title_ids) & q_ids) / len(q_ids) if q_ids else 0.0,
                "other_identifier": float(bool(named) and not named & q_ids and bool(q_ids)),
                "entry": entry,
                "entry_first": entry * float(peers[0] == ui),
                "section_first": float(peers[0] == ui),
                "section_position": peers.index(ui) / max(len(peers) - 1, 1),
                "chunk_rr": 1.0 / (ci + 1),
                "chunk_score": (float(getattr(chunk, "score", 0.0) or 0.0) / best_score) if best_score > 0 else 0.0,
                "type_match": _type_match(qa, u, chunk.text, step),
                "novel": sum(w not in q_words for w in words) / len(words) if words else 0.0,
                "log_words": math.log1p(len(words)),
                "back_reference": float(bool(words) and words[0] in lex_words.back_references),
                "faq_reply": float(reply),
                "reply_matches": reply_share,
                "instruction": float(instruction_like(u.text)),
                "code_wanted": float(u.kind == "code" and qa.wants_code),
                "step_howto": float(step and qa.kind == "how_to"),
                "yes_no_reply": reply_share * float(qa.kind == "yes_no"),
            }
            for k in _KINDS:
                f[f"kind_{k}"] = float(u.kind == k)
            other = bool(q_ids) and bool(title_ids) and not (title_ids | named) & q_ids
            li = leads[ui]
            lead = None if li is None else Candidate(ci, units[li], vecs[li], np.zeros(len(FEATURES), np.float32))
            rows.append((ci, u, vecs[ui], f, other, lead))
    if not rows:
        return []
    top_cos = max(r[3]["cos"] for r in rows)
    top_lex = max(r[3]["lex"] for r in rows)
    out = []
    for ci, u, v, f, other, lead in rows:
        f["cos_gap"] = f["cos"] - top_cos
        f["lex_gap"] = f["lex"] - top_lex
        out.append(Candidate(ci, u, v, np.array([f[name] for name in FEATURES], dtype=np.float32), other, lead))
    return out
