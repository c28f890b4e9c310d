"""From ranked units to the quoted answer: hard rules, format-level expansions and hygiene.

The expansions that read a unit's neighbours in its chunk live in
:mod:`citewise.answer.select.paragraph`.

Given the candidates of a context (:mod:`citewise.answer.select.features`) and the model's scores:

1. **Trust** (hard rule): a unit that reads as instructions to a model
   (:func:`citewise.text.trust.instruction_like`) ranks after every other unit, and is never
   quoted first; with nothing else to quote the answer is empty (abstain). A chunk holding such
   a unit is untrusted as a whole (an injected page carries the false facts it asks a model to
   repeat): when a unit of a trusted chunk states the asked fact (its probability is at least
   :data:`FOLLOW_SHARE` of the best unit's), every unit of an untrusted chunk ranks after every
   trusted unit, and none follows a trusted first unit.
2. **First unit**: the best-scoring one: the most direct unit opens the answer. When the
   question names an identifier and the first unit is about it, no follower comes from a page
   titled with other identifiers that does not name the asked one (:attr:`Candidate.other_entity`:
   the E-1008 page's "The error appears in the sync log" says nothing of E-1003).
3. **Followers**: units whose probability (softmax of the scores within the question) is at
   least :data:`FOLLOW_SHARE` of the first's, best first, skipping a unit that repeats a quoted
   one (:func:`repeats`: its words and the quoted unit's are nearly the same set), while the
   answer has fewer than ``max_units`` (4) units and :data:`MAX_CHARS` characters of prose; at
   most :data:`MAX_CODE_BLOCKS` code blocks, each of at most :data:`MAX_CODE_CHARS` characters
   unless it is the first unit, and none for a question that does not ask for code (a short
   block may only open its answer).
4. **Format-level expansions** (hold for any corpus):

   * a list item keeps its lead term and a table row its header (both are in the unit's display
     text: :mod:`citewise.answer.units`), a definition its term (likewise);
   * a table row is the entry of the thing its first cell names: once a quoted row's first cell
     is named by the question (every word of it: "the Enterprise plan" names ``Plan:
     Enterprise``), no row of the same table (same chunk, headings and first header) whose first
     cell the question does not name follows it (not the ``Plan: Starter`` row);
   * a code block keeps its lead sentence: the prose unit right before it under the same
     headings in the paragraph that introduces the block (not a paragraph before it), quoted
     just before the block; and its lead-in, the sentence ending in ':' right before the block
     (:attr:`Candidate.lead_in`: "Use an extra slash at the start of a path to specify an
     absolute path:"), which is never quoted alone;
   * a list item quoted first that goes on from its lead-in (it opens with a lower-case word and
     the list is introduced by a sentence ending in ':') keeps the lead-in before it ("It:" /
     "creates users for new members ..."), with the sentence that lead-in points back to; such
     an item follows only an item of the same list quoted first, never on its own;
   * a numbered step quoted for a how-to question keeps its procedure: the consecutive
     numbered items around it under the same headings (at most :data:`MAX_STEPS`), in order,
     where the first of them was quoted (also when the answer opens with an introduction);
   * a first sentence that goes on from a code block keeps the block: prose opening with a
     lower-case letter right after a code block ("For example, this definition:" / the block /
     "creates a new command latest ...") comes after the block and the block's lead sentence;
   * a first sentence that points back keeps the sentence it points at: the unit right before it
     in its paragraph comes first. A sentence points back when it opens with a back-reference
     word ("Its size defaults to four threads.": the ``back_reference`` feature) or holds a
     personal pronoun among its first four words ("If none of them matches ...", "On day 20 it
     cancels.": :func:`points_back`);
   * an entry keeps its opening: a sentence quoted first that continues a definition or list item
     (it sits under the entry's term: ``pipeguard`` / ``: If set, ... The option is off by
     default.``) comes after the entry's first unit, which names what it is about;
   * a definition quoted first reads on through its own body: the best-scoring sentences under its
     term (at most :data:`READ_ON`) follow it in text order, before any unit of another entry;
   * a unit that introduces the asked value reads on to it: when the question expects a value (a
     number, a date, a default) and no quoted unit holds one (``type_match``; for a default, a
     sentence stating one), the first unit that does among the next :data:`READ_ON` prose units
     of the same paragraph or entry body (same chunk and headings, no blank line between) is
     quoted right after the earliest quoted unit it continues ("Specify the sampling interval in
     microseconds." / "The default is 1000 microseconds."); failing that, the sentence right
     before a quoted unit in its paragraph, when it holds the value, is quoted before it;
   * a code block or displayed line quoted first keeps the paragraph right after it that
     explains it (only white
     space between, under the same headings: ``--enable-fuzz-support`` / "If set, it causes an
     extra library ... to be built."), up to :data:`SENTENCE_WINDOW` units;
   * a sentence quoted first keeps the :data:`SENTENCE_WINDOW` sentences after it in its
     paragraph (the sentence window of window retrieval, LlamaIndex's
     ``SentenceWindowNodeParser``): the sentence matching the question's words often names the
     thing and the next one says it ("Matching these sequences is noticeably slower when UCP is
     set." / "This can double the matching time."), within :data:`MAX_CHARS` and unless it
     repeats a quoted unit.

   A paragraph runs on across a displayed line or code block (:func:`goes_on`): an unfinished
   sentence (ending in ':' or ',' or with a function word) goes on into the line displayed right
   after it, and a sentence opening with a lower-case word right after a display continues the
   sentence before it ("You can change the buffer size with" /
   ``png_set_compression_buffer_size(png_ptr, size);`` / "where the default size is 8192
   bytes.").

5. **Hygiene**: no sentence twice; a bare "Yes." / "No." opening a unit is kept only when the
   unit is quoted first, answers a yes/no question, and sits under a question heading at least
   :data:`REPLY_MATCH` of whose term weight the question holds (a FAQ reply to *this* question);
   elsewhere it is cut from the quoted text (never an inverted answer taken from another
   question's reply).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np

from citewise.answer.question import QuestionAnalysis
from citewise.answer.select.features import FEATURES, REPLY_OPENER, Candidate
from citewise.answer.select.format import row_label, step_number
from citewise.answer.select.paragraph import (  # noqa: F401 (READ_ON, SENTENCE_WINDOW, REPEAT_OVERLAP re-exported)
    MAX_CHARS,
    READ_ON,
    REPEAT_OVERLAP,
    SENTENCE_WINDOW,
    antecedent,
    _displayed,
    block_continued,
    explained,
    lead_sentence,
    norm_text,
    points_back,
    repeats,
    sentence_window,
    value_read_on,
)
from citewise.answer.units import is_instruction, label_named

#: A follower needs at least this share of the first unit's probability. Chosen on the 626
#: real-docs *training* questions (the selector's own training sets): share of questions with an
#: answering unit among the quoted ones (at most 4) / mean units quoted: 0.5 -> 0.719 / 1.41,
#: 0.35 -> 0.752 / 1.65, 0.2 -> 0.791 / 2.00, 0.1 -> 0.826 / 2.44.
FOLLOW_SHARE = 0.1
#: Longest code block quoted after the first unit (characters): a longer block is a page of code,
#: not an example of what the first unit says.
MAX_CODE_CHARS = 1200
#: Most code blocks quoted (code is quotable only when the question asks for code: a second block
#: is the documentation's other example of the same task, e.g. its callback and async forms).
MAX_CODE_BLOCKS = 2
#: Most steps of a procedure quoted.
MAX_STEPS = 8
#: Share of a FAQ heading's term weight (IDF) the question must hold for the heading's "Yes." /
#: "No." to open the answer: the heading asks what was asked ("I have been on Pro for 20 days, can
#: I get my money back?" under "Can I get my money back?"). On the sample corpus the heading "Do
#: refunds on Starter need anyone's approval?" holds "refunds" and "approval" of "Are refunds
#: approved automatically?" but not "Starter" or "need": well under it.
REPLY_MATCH = 0.8
_F = {name: i for i, name in enumerate(FEATURES)}


def untrusted(cands: Sequence[Candidate], scores: np.ndarray) -> set[int]:
    """Indices of the units that rank after the trusted ones (module docstring, step 1): every
    instruction-like unit, and, when a unit of a chunk without one is within
    :data:`FOLLOW_SHARE` of the best unit's probability (it states the asked fact as well as
    anything), every unit of a chunk holding one."""
    flagged = {i for i, c in enumerate(cands) if c.features[_F["instruction"]] > 0}
    tainted = {cands[i].chunk_index for i in flagged}
    if not tainted:
        return flagged
    s = np.asarray(scores, dtype=np.float64)
    p = np.exp(s - s.max())
    best = p.max()
    if any(p[i] >= FOLLOW_SHARE * best for i, c in enumerate(cands) if c.chunk_index not in tainted):
        return flagged | {i for i, c in enumerate(cands) if c.chunk_index in tainted}
    return flagged


def order(cands: Sequence[Candidate], scores: np.ndarray) -> list[int]:
    """Indices of ``cands`` best first: untrusted units (:func:`untrusted`) after all others,
    then by score, context order and position (deterministic)."""
    after = untrusted(cands, scores)
    return sorted(
        range(len(cands)),
        key=lambda i: (
            i in after,
            -float(scores[i]),
            cands[i].chunk_index,
            cands[i].unit.start,
        ),
    )


def _procedure(first: Candidate, cands: Sequence[Candidate], texts: Sequence[str]) -> list[Candidate]:
    """The numbered run of items around ``first`` (same chunk and headings), in order."""
    text = texts[first.chunk_index]
    n = step_number(text, first.unit.start)
    if n is None or first.unit.kind != "item":
        return [first]
    same = sorted(
        (
            c
            for c in cands
            if c.chunk_index == first.chunk_index and c.unit.headings == first.unit.headings and c.unit.kind == "item"
        ),
        key=lambda c: c.unit.start,
    )
    nums = {id(c): step_number(text, c.unit.start) for c in same}
    at = next(i for i, c in enumerate(same) if c is first)
    lo = at
    while lo > 0 and nums[id(same[lo - 1])] == nums[id(same[lo])] - 1:
        lo -= 1
    hi = at
    while hi + 1 < len(same) and nums[id(same[hi + 1])] == nums[id(same[hi])] + 1:
        hi += 1
    run = same[lo : hi + 1]
    return run[:MAX_STEPS] if len(run) <= MAX_STEPS else run[at - lo : at - lo + MAX_STEPS]


def _with_procedures(chosen: list[Candidate], cands: Sequence[Candidate], texts: Sequence[str]) -> list[Candidate]:
    """``chosen`` with each numbered step replaced by its whole procedure (:func:`_procedure`),
    in order, where the first of its steps was quoted; each unit once. A how-to answer that
    opens with an introduction and quotes steps 1 and 3 of a procedure quotes steps 1 to 4 (the
    step it skipped may be the one that matters: "upload it as the Secondary certificate")."""
    out: list[Candidate] = []
    for c in chosen:
        steps = _procedure(c, cands, texts) if c.unit.kind == "item" else [c]
        out += [s for s in steps if s not in out]
    return out


def compose(
    qa: QuestionAnalysis, cands: Sequence[Candidate], scores: np.ndarray, texts: Sequence[str], max_units: int = 4
) -> list[Candidate]:
    """The units to quote, in answer order (see module docstring); [] when nothing may be
    quoted. ``texts``: the context's chunk texts by chunk index."""
    if not cands:
        return []
    ranked = order(cands, scores)
    after = untrusted(cands, scores)
    first = cands[ranked[0]]
    if first.features[_F["instruction"]] > 0:
        return []
    s = np.asarray(scores, dtype=np.float64)
    p = np.exp(s - s.max())
    p /= p.sum()
    p_first = p[ranked[0]]
    chosen: list[Candidate] = [first]
    if qa.kind == "how_to" and first.unit.kind == "item":
        chosen = _procedure(first, cands, texts)
    opening = _entry_opening(first, cands)
    if opening is not None:
        chosen = [opening, first]
    if chosen[0].unit.kind == "definition":
        score_of = {id(c): float(v) for c, v in zip(cands, scores)}
        body = [c for c in _entry_body(chosen[0], cands) if c not in chosen]
        best = sorted(body, key=lambda c: -score_of[id(c)])[:READ_ON]
        chosen += [c for c in body if c in best]
    seen = {norm_text(c.unit.text) for c in chosen}
    chars = sum(len(c.unit.text) for c in chosen if c.unit.kind != "code")
    named_tables = {_table(c) for c in chosen if _names_row(qa.text, c)}
    for i in ranked[1:]:
        c = cands[i]
        if len(chosen) >= max_units:
            break
        if (
            p[i] < FOLLOW_SHARE * p_first
            or c.features[_F["instruction"]] > 0
            or (i in after and ranked[0] not in after)
        ):
            break
        if c in chosen or norm_text(c.unit.text) in seen or (c.other_entity and not first.other_entity):
            continue
        if _fragment(c) and not (_fragment(first) and _at(c.lead_in) == _at(first.lead_in)):
            continue  # "deactivates users who ...": only beside its lead-in, which opens the answer
        if _table(c) in named_tables and _names_row(qa.text, c) is False:
            continue  # a sibling row about a thing the question does not name
        if any(repeats(c.unit.text, o.unit.text) for o in chosen):
            continue
        if c.unit.kind == "code" and (
            not qa.wants_code
            or sum(o.unit.kind == "code" for o in chosen) >= MAX_CODE_BLOCKS
            or len(c.unit.text) > MAX_CODE_CHARS
        ):
            continue
        if c.unit.kind != "code" and chars + len(c.unit.text) > MAX_CHARS:
            continue
        chosen.append(c)
        seen.add(norm_text(c.unit.text))
        if _names_row(qa.text, c):
            named_tables.add(_table(c))
        chars += len(c.unit.text) if c.unit.kind != "code" else 0
    if qa.kind == "how_to":
        chosen = _with_procedures(chosen, cands, texts)
    out: list[Candidate] = []
    for c in chosen:  # a code block keeps its lead sentence and its lead-in, right before it
        if c.unit.kind == "code":
            lead = lead_sentence(c, cands, texts)
            if lead is not None and lead not in out and lead.features[_F["instruction"]] == 0:
                out.append(lead)
            if c.lead_in is not None and not is_instruction(c.lead_in.unit.text) and c.lead_in not in out:
                out.append(c.lead_in)
        if c not in out:
            out.append(c)
    opener = out[0].lead_in if _fragment(out[0]) else None
    if opener is not None and not is_instruction(opener.unit.text):
        siblings = [c for c in out[1:] if _fragment(c) and _at(c.lead_in) == _at(opener)]
        rest = [c for c in out[1:] if c not in siblings]
        out = [opener, out[0], *siblings, *rest]  # "It:" / "- creates users ..." / "- deactivates ..."
    prev = antecedent(out[0], cands, texts) if points_back(out[0]) else None
    if prev is not None:
        out = [prev] + [c for c in out if c is not prev]
    block = block_continued(out[0], cands, texts)
    if block is not None:
        lead = lead_sentence(block, cands, texts)
        pre = [x for x in (lead, block) if x is not None and x.features[_F["instruction"]] == 0]
        out = pre + [c for c in out if c not in pre]
    out = value_read_on(qa, out, cands, texts)
    out = sentence_window(out, cands, texts)
    if (first.unit.kind == "code" or _displayed(first, texts[first.chunk_index])) and first in out:
        out = explained(first, out, cands, texts)
    return [_reply_checked(qa, c, i == 0) for i, c in enumerate(out)]


def _at(c: Candidate | None) -> tuple[int, int] | None:
    return None if c is None else (c.chunk_index, c.unit.start)


def _fragment(c: Candidate) -> bool:
    """Whether ``c`` is a list item that goes on from its lead-in: it opens with a lower-case
    word, has no lead term (``debuginfo - debug information ...`` names its own subject) and the
    list is introduced by a sentence ending in ':' (``It:`` / ``- creates users for new members
    ...``)."""
    return c.unit.kind == "item" and not c.unit.lead and c.unit.text[:1].islower() and c.lead_in is not None


def _table(c: Candidate) -> tuple | None:
    """The table a row unit belongs to: its chunk, headings and first column's header; None for
    a unit that is not a row with a first cell."""
    label = row_label(c.unit.text) if c.unit.kind == "row" else None
    return None if label is None else (c.chunk_index, c.unit.headings, label[0])


def _names_row(question: str, c: Candidate) -> bool | None:
    """Whether ``question`` names a row unit's first cell (:func:`citewise.answer.units.label_named`);
    None for a unit that is not a row, or a cell that names nothing ("a", "-")."""
    label = row_label(c.unit.text) if c.unit.kind == "row" else None
    if label is None or not label_named(label[1], label[1]):
        return None
    return label_named(label[1], question)


def _entry_body(entry: Candidate, cands: Sequence[Candidate]) -> list[Candidate]:
    """The prose units under ``entry``'s term (same chunk, headings = the entry's headings plus its
    lead term), after it, in order."""
    if not entry.unit.lead:
        return []
    heads = entry.unit.headings + (entry.unit.lead,)
    return sorted(
        (
            c
            for c in cands
            if c.chunk_index == entry.chunk_index
            and c.unit.headings == heads
            and c.unit.kind != "code"
            and c.unit.start >= entry.unit.end
        ),
        key=lambda c: c.unit.start,
    )


def _entry_opening(first: Candidate, cands: Sequence[Candidate]) -> Candidate | None:
    """The definition or list item whose body ``first`` (a sentence) continues: the unit of the
    same chunk, before it, whose headings plus lead term are ``first``'s headings; else None."""
    if first.unit.kind != "sentence" or not first.unit.headings:
        return None
    heads = first.unit.headings
    for c in cands:
        if (
            c.chunk_index == first.chunk_index
            and c.unit.kind in ("definition", "item")
            and c.unit.lead
            and c.unit.headings + (c.unit.lead,) == heads
            and c.unit.end <= first.unit.start
            and c.features[_F["instruction"]] == 0
        ):
            return c
    return None


def _reply_checked(qa: QuestionAnalysis, c: Candidate, first: bool) -> Candidate:
    """``c`` with a bare "Yes." / "No." opener cut unless it answers this question (module
    docstring, step 5)."""
    if not REPLY_OPENER.match(c.unit.text):
        return c
    keeps = first and qa.kind == "yes_no" and c.features[_F["reply_matches"]] >= REPLY_MATCH
    if keeps:
        return c
    rest = REPLY_OPENER.sub("", c.unit.text, count=1).strip()
    return replace(c, unit=replace(c.unit, text=rest)) if rest else c
