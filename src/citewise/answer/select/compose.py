"""From ranked units to the quoted answer: hard rules, format-level expansions and hygiene.

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
     "creates users for new members ..."), with the sentence that lead-in points back to;
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
   * a sentence quoted first keeps the :data:`SENTENCE_WINDOW` sentences after it in its
     paragraph (the sentence window of window retrieval, LlamaIndex's
     ``SentenceWindowNodeParser``): the sentence matching the question's words often names the
     thing and the next one says it ("Matching these sequences is noticeably slower when UCP is
     set." / "This can double the matching time."), within :data:`MAX_CHARS` and unless it
     repeats a quoted unit.

   A paragraph runs on across a displayed line or code block (:func:`_goes_on`): an unfinished
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

import re
from dataclasses import replace
from functools import lru_cache
from typing import Sequence

import numpy as np

from citewise.answer.question import QuestionAnalysis, leans_back, lexicon
from citewise.answer.select.features import FEATURES, REPLY_OPENER, Candidate
from citewise.answer.select.format import row_label, states_value, step_number
from citewise.answer.units import is_instruction, label_named
from citewise.text.blocks import parse_blocks
from citewise.text.hanging import indent_width

#: A follower needs at least this share of the first unit's probability. Chosen on the 626
#: real-docs *training* questions (the selector's own training sets): share of questions with an
#: answering unit among the quoted ones (at most 4) / mean units quoted: 0.5 -> 0.719 / 1.41,
#: 0.35 -> 0.752 / 1.65, 0.2 -> 0.791 / 2.00, 0.1 -> 0.826 / 2.44.
FOLLOW_SHARE = 0.1
#: Jaccard overlap of two units' word sets at or above which one repeats the other
#: (:func:`repeats`).
REPEAT_OVERLAP = 0.8
#: Most characters of prose quoted (code blocks apart); the first unit is always quoted whole.
MAX_CHARS = 900
#: Longest code block quoted after the first unit (characters): a longer block is a page of code,
#: not an example of what the first unit says.
MAX_CODE_CHARS = 1200
#: Most code blocks quoted (code is quotable only when the question asks for code: a second block
#: is the documentation's other example of the same task, e.g. its callback and async forms).
MAX_CODE_BLOCKS = 2
#: Most steps of a procedure quoted.
MAX_STEPS = 8
#: Most sentences of a definition's body read on after it.
READ_ON = 3
#: Sentences after a first quoted sentence in its paragraph that are quoted with it. Chosen on
#: the development sets (bench/train t1 + t2, real-docs 24 sets): 1 -> 210/363 and 647/798,
#: 2 -> 213 and 649 (mean answer 480 -> 487 characters), 3 -> 214 and 649.
SENTENCE_WINDOW = 2
#: Share of a FAQ heading's term weight (IDF) the question must hold for the heading's "Yes." /
#: "No." to open the answer: the heading asks what was asked ("I have been on Pro for 20 days, can
#: I get my money back?" under "Can I get my money back?"). On the sample corpus the heading "Do
#: refunds on Starter need anyone's approval?" holds "refunds" and "approval" of "Are refunds
#: approved automatically?" but not "Starter" or "need": well under it.
REPLY_MATCH = 0.8
_F = {name: i for i, name in enumerate(FEATURES)}
#: A paragraph opening with a lower-case word (letters, then a space) goes on with the sentence
#: before the display it follows.
_GOES_ON = re.compile(r"[a-z]+\s")


def _norm(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


@lru_cache(maxsize=1)
def _function_words() -> frozenset[str]:
    """English function words (``english_function_words`` of ``data/question.yaml``) less the
    negation "not", which changes what is stated."""
    return lexicon().english - {"not"}


def _content_words(text: str) -> set[str]:
    """Lower-case words of ``text`` (as :func:`_norm` splits them) less :func:`_function_words`."""
    drop = _function_words()
    return {w for w in _norm(text).split() if w not in drop}


def repeats(a: str, b: str) -> bool:
    """Whether unit text ``a`` repeats ``b``: the Jaccard overlap of their content word sets
    (:func:`_content_words`) is at least :data:`REPEAT_OVERLAP` (the same sentence in two
    documents, or with an article changed; a changed number or name in a short sentence is
    another fact).

    Judged on the units' own words, not on their vectors: a unit is embedded with its title and
    headings, so two short units under one heading ("y, yes, on: disable the red zone." / "n, no,
    off: enable the red zone.") have near-equal vectors while stating different facts."""
    wa, wb = _content_words(a), _content_words(b)
    if not wa or not wb:
        return _norm(a) == _norm(b)
    return len(wa & wb) / len(wa | wb) >= REPEAT_OVERLAP


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


def _lead_sentence(block: Candidate, cands: Sequence[Candidate], texts: Sequence[str]) -> Candidate | None:
    """The prose unit right before a code block under the same headings (its lead sentence), in
    the paragraph that introduces the block (an unquotable lead-in ending in ':' may end that
    paragraph: "Since 4.4.2 the flags may be restricted. Then all options must come first:");
    None when there is none or it stands in an earlier paragraph (about something else)."""
    before = [
        c
        for c in cands
        if c.chunk_index == block.chunk_index
        and c.unit.kind != "code"
        and c.unit.end <= block.unit.start
        and c.unit.headings == block.unit.headings
    ]
    if not before:
        return None
    lead = max(before, key=lambda c: c.unit.start)
    return lead if "\n\n" not in texts[block.chunk_index][lead.unit.end : block.unit.start].rstrip() else None


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
    seen = {_norm(c.unit.text) for c in chosen}
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
        if c in chosen or _norm(c.unit.text) in seen or (c.other_entity and not first.other_entity):
            continue
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
        seen.add(_norm(c.unit.text))
        if _names_row(qa.text, c):
            named_tables.add(_table(c))
        chars += len(c.unit.text) if c.unit.kind != "code" else 0
    if qa.kind == "how_to":
        chosen = _with_procedures(chosen, cands, texts)
    out: list[Candidate] = []
    for c in chosen:  # a code block keeps its lead sentence and its lead-in, right before it
        if c.unit.kind == "code":
            lead = _lead_sentence(c, cands, texts)
            if lead is not None and lead not in out and lead.features[_F["instruction"]] == 0:
                out.append(lead)
            if c.lead_in is not None and not is_instruction(c.lead_in.unit.text) and c.lead_in not in out:
                out.append(c.lead_in)
        if c not in out:
            out.append(c)
    opener = out[0].lead_in if _fragment(out[0]) else None
    if opener is not None and not is_instruction(opener.unit.text):
        out = [opener] + out  # "It:" / "- creates users for ...": the item goes on from it
    prev = _antecedent(out[0], cands, texts) if points_back(out[0]) else None
    if prev is not None:
        out = [prev] + [c for c in out if c is not prev]
    block = _block_continued(out[0], cands, texts)
    if block is not None:
        lead = _lead_sentence(block, cands, texts)
        pre = [x for x in (lead, block) if x is not None and x.features[_F["instruction"]] == 0]
        out = pre + [c for c in out if c not in pre]
    out = _value_read_on(qa, out, cands, texts)
    out = _sentence_window(out, cands, texts)
    return [_reply_checked(qa, c, i == 0) for i, c in enumerate(out)]


def _fragment(c: Candidate) -> bool:
    """Whether ``c`` is a list item that goes on from its lead-in: it opens with a lower-case
    word and the list is introduced by a sentence ending in ':' (``It:`` / ``- creates users for
    new members ...``)."""
    return c.unit.kind == "item" and c.unit.text[:1].islower() and c.lead_in is not None


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


#: Expected answer types whose answer is a value a unit holds or lacks (``type_match``).
VALUE_TYPES = ("number", "date", "value")


def _holds_value(qa: QuestionAnalysis, c: Candidate) -> bool:
    """Whether ``c`` holds the value the question expects (its ``type_match``; for a question
    asking a default, a sentence stating one)."""
    if c.unit.kind == "code" or c.features[_F["instruction"]] > 0:
        return False
    if qa.expected in VALUE_TYPES:
        return bool(c.features[_F["type_match"]] > 0)
    return qa.asks_default and states_value(c.unit.text)


def _goes_on(prev: Candidate, nxt: Candidate, chunk_text: str) -> bool:
    """Whether ``nxt`` continues ``prev``'s paragraph in ``chunk_text``: no blank line between
    them; or, across a display (a code block, or a line indented deeper than the text):

    * ``prev`` is an unfinished sentence (it ends in ':' or ',' or with a function word, "...
      reading compressed data with") and ``nxt`` is the displayed line right after it;
    * ``nxt`` is a sentence opening with a lower-case word ("where the default size is 8192
      bytes.") right after a code block, or right after ``prev`` when ``prev`` is a displayed
      line.

    Only white space and code blocks may lie between them (a paragraph between them, quotable
    or not, ends the run)."""
    gap = chunk_text[prev.unit.end : nxt.unit.start]
    if "\n\n" not in gap:
        return True
    kinds = {b.kind for b in parse_blocks(gap)}  # the CommonMark blocks between them
    if kinds - {"code", "icode"} or nxt.unit.kind != "sentence":
        return False
    if _GOES_ON.match(nxt.unit.text):
        return bool(kinds) or _displayed(prev, chunk_text)
    words = prev.unit.text.rstrip("\"'\u201d\u2019)*_ ").split()
    unfinished = (
        prev.unit.kind == "sentence"
        and bool(words)
        and (words[-1].endswith((":", ",")) or words[-1].lower() in _function_words())
    )
    return unfinished and not kinds and _displayed(nxt, chunk_text)


def _displayed(c: Candidate, chunk_text: str) -> bool:
    """Whether ``c``'s unit is a displayed line: its line of ``chunk_text`` is indented (two
    columns or more) and it is a line of its own."""
    lead = chunk_text[chunk_text.rfind("\n", 0, c.unit.start) + 1 : c.unit.start]
    return not lead.strip() and indent_width(lead) >= 2 and "\n" not in chunk_text[c.unit.start : c.unit.end]


def _continuation(c: Candidate, cands: Sequence[Candidate], texts: Sequence[str]) -> list[Candidate]:
    """The prose units after ``c`` in its paragraph or entry body, in order: same chunk, headings
    ``c``'s own (or ``c``'s plus its lead term), each going on from the one before
    (:func:`_goes_on`: no blank line between, or a sentence running on across a displayed line
    or code block); at most :data:`READ_ON`."""
    heads = {c.unit.headings} | ({c.unit.headings + (c.unit.lead,)} if c.unit.lead else set())
    after = sorted(
        (
            o
            for o in cands
            if o.chunk_index == c.chunk_index
            and o.unit.headings in heads
            and o.unit.kind != "code"
            and o.unit.start >= c.unit.end
        ),
        key=lambda o: o.unit.start,
    )
    out: list[Candidate] = []
    prev = c
    for o in after:
        if not _goes_on(prev, o, texts[c.chunk_index]) or len(out) >= READ_ON:
            break
        out.append(o)
        prev = o
    return out


def _sentence_window(out: list[Candidate], cands: Sequence[Candidate], texts: Sequence[str]) -> list[Candidate]:
    """``out`` with the unit after its first one, when that is a sentence with a next prose unit
    in its paragraph (:func:`_continuation`) that is not quoted yet, fits :data:`MAX_CHARS` and
    repeats no quoted unit (module docstring, step 4)."""
    if out[0].unit.kind != "sentence":
        return out
    chars = sum(len(c.unit.text) for c in out if c.unit.kind != "code")
    window: list[Candidate] = []
    for nxt in _continuation(out[0], cands, texts)[:SENTENCE_WINDOW]:
        if nxt in out or chars + len(nxt.unit.text) > MAX_CHARS:
            break
        if any(repeats(nxt.unit.text, o.unit.text) for o in out + window):
            break
        window.append(nxt)
        chars += len(nxt.unit.text)
    return out[:1] + window + out[1:]


def _value_read_on(
    qa: QuestionAnalysis, out: list[Candidate], cands: Sequence[Candidate], texts: Sequence[str]
) -> list[Candidate]:
    """``out`` with the unit stating the asked value inserted after the quoted unit it continues
    (module docstring, step 4), or before it when it is the sentence right before that unit in
    its paragraph ("The default font is 14-point Times-Roman." / "Other fonts may be selected
    with fontname."), when the question expects a value and no quoted unit holds one."""
    if not (qa.expected in VALUE_TYPES or qa.asks_default) or any(_holds_value(qa, c) for c in out):
        return out
    quoted = {_norm(c.unit.text) for c in out}
    for at, c in enumerate(out):
        if c.unit.kind == "code":
            continue
        hit = next((o for o in _continuation(c, cands, texts) if _holds_value(qa, o)), None)
        if hit is not None and hit not in out and _norm(hit.unit.text) not in quoted:
            return out[: at + 1] + [hit] + out[at + 1 :]
        prev = _antecedent(c, cands, texts)  # or the sentence right before it states the value
        if prev is not None and _holds_value(qa, prev) and prev not in out and _norm(prev.unit.text) not in quoted:
            return out[:at] + [prev] + out[at:]
    return out


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


def points_back(c: Candidate) -> bool:
    """Whether ``c``'s unit leans on the sentence before it: it opens with a back-reference word
    (its ``back_reference`` feature: "This", "Its", "Such") or holds a personal pronoun among its
    first words (:func:`~citewise.answer.question.leans_back`), unless it is a list item or
    definition with a lead term (``joinDuplicateHeaders {boolean} It joins ...``: the pronoun is
    the term)."""
    if c.features[_F["back_reference"]] > 0:
        return True
    return not c.unit.lead and leans_back(c.unit.text)


def _antecedent(first: Candidate, cands: Sequence[Candidate], texts: Sequence[str]) -> Candidate | None:
    """The prose unit right before ``first`` in its chunk, under the same headings and in the same
    paragraph (no blank line between), when it is not instruction-like; else None."""
    before = [
        c
        for c in cands
        if c.chunk_index == first.chunk_index
        and c.unit.kind != "code"
        and c.unit.end <= first.unit.start
        and c.unit.headings == first.unit.headings
    ]
    if not before:
        return None
    prev = max(before, key=lambda c: c.unit.start)
    gap = texts[first.chunk_index][prev.unit.end : first.unit.start]
    return prev if "\n\n" not in gap and prev.features[_F["instruction"]] == 0 else None


def _block_continued(first: Candidate, cands: Sequence[Candidate], texts: Sequence[str]) -> Candidate | None:
    """The code block a sentence quoted first goes on from: ``first`` is prose opening with a
    lower-case letter right after a code block of its chunk under the same headings (nothing
    but white space and fence marks between), the block being the sentence's subject ("For
    example, this definition:" / ``latest = log --limit 5`` / "creates a new command latest
    ..."); else None."""
    if first.unit.kind not in ("sentence", "item") or not first.unit.text[:1].islower():
        return None
    for c in cands:
        if (
            c.unit.kind == "code"
            and c.chunk_index == first.chunk_index
            and c.unit.headings == first.unit.headings
            and c.unit.end <= first.unit.start
            and not texts[first.chunk_index][c.unit.end : first.unit.start].strip(" \t\n`~")
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
