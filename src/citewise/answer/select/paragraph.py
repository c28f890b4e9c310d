"""Where a quoted unit's paragraph goes on: the format-level expansions of
:mod:`citewise.answer.select.compose` that read a unit's neighbours in its chunk (a block's lead
sentence, a paragraph running on across a display, the sentence window, a block's explanation,
the asked value read on or back, the sentence a unit points back to), and the repeat test."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

from citewise.answer.question import QuestionAnalysis, leans_back, lexicon
from citewise.answer.select.features import FEATURES, Candidate
from citewise.answer.select.format import states_value
from citewise.text.blocks import parse_blocks
from citewise.text.hanging import indent_width

_F = {name: i for i, name in enumerate(FEATURES)}

#: Jaccard overlap of two units' word sets at or above which one repeats the other
#: (:func:`repeats`).
REPEAT_OVERLAP = 0.8


def norm_text(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _content_words(text: str) -> set[str]:
    """Lower-case words of ``text`` (as :func:`_norm` splits them) less :func:`_function_words`."""
    drop = _function_words()
    return {w for w in norm_text(text).split() if w not in drop}


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
        return norm_text(a) == norm_text(b)
    return len(wa & wb) / len(wa | wb) >= REPEAT_OVERLAP


#: Most characters of prose quoted (code blocks apart); the first unit is always quoted whole.
MAX_CHARS = 900


#: Most sentences of a definition's body read on after it.
READ_ON = 3


#: Sentences after a first quoted sentence in its paragraph that are quoted with it. Chosen on
#: the development sets (bench/train t1 + t2, real-docs 24 sets): 1 -> 210/363 and 647/798,
#: 2 -> 213 and 649 (mean answer 480 -> 487 characters), 3 -> 214 and 649.
SENTENCE_WINDOW = 2


#: A paragraph opening with a lower-case word (letters, then a space) goes on with the sentence
#: before the display it follows.
_GOES_ON = re.compile(r"[a-z]+\s")


@lru_cache(maxsize=1)
def _function_words() -> frozenset[str]:
    """English function words (``english_function_words`` of ``data/question.yaml``) less the
    negation "not", which changes what is stated."""
    return lexicon().english - {"not"}


def _prose_before(c: Candidate, cands: Sequence[Candidate]) -> Candidate | None:
    """The nearest prose unit before ``c`` in its chunk under the same headings, None when none."""
    before = [
        o
        for o in cands
        if o.chunk_index == c.chunk_index
        and o.unit.kind != "code"
        and o.unit.end <= c.unit.start
        and o.unit.headings == c.unit.headings
    ]
    return max(before, key=lambda o: o.unit.start) if before else None


def lead_sentence(block: Candidate, cands: Sequence[Candidate], texts: Sequence[str]) -> Candidate | None:
    """The prose unit right before a code block under the same headings (its lead sentence), in
    the paragraph that introduces the block (an unquotable lead-in ending in ':' may end that
    paragraph: "Since 4.4.2 the flags may be restricted. Then all options must come first:");
    None when there is none or it stands in an earlier paragraph (about something else)."""
    lead = _prose_before(block, cands)
    if lead is None:
        return None
    return lead if "\n\n" not in texts[block.chunk_index][lead.unit.end : block.unit.start].rstrip() else None


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


def goes_on(prev: Candidate, nxt: Candidate, chunk_text: str) -> bool:
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


def continuation(c: Candidate, cands: Sequence[Candidate], texts: Sequence[str]) -> list[Candidate]:
    """The prose units after ``c`` in its paragraph or entry body, in order: same chunk, headings
    ``c``'s own (or ``c``'s plus its lead term), each going on from the one before
    (:func:`goes_on`: no blank line between, or a sentence running on across a displayed line
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
        if not goes_on(prev, o, texts[c.chunk_index]) or len(out) >= READ_ON:
            break
        out.append(o)
        prev = o
    return out


def sentence_window(out: list[Candidate], cands: Sequence[Candidate], texts: Sequence[str]) -> list[Candidate]:
    """``out`` with the unit after its first one, when that is a sentence with a next prose unit
    in its paragraph (:func:`continuation`) that is not quoted yet, fits :data:`MAX_CHARS` and
    repeats no quoted unit (module docstring, step 4)."""
    if out[0].unit.kind != "sentence":
        return out
    chars = sum(len(c.unit.text) for c in out if c.unit.kind != "code")
    window: list[Candidate] = []
    for nxt in continuation(out[0], cands, texts)[:SENTENCE_WINDOW]:
        if nxt in out or chars + len(nxt.unit.text) > MAX_CHARS:
            break
        if any(repeats(nxt.unit.text, o.unit.text) for o in out + window):
            break
        window.append(nxt)
        chars += len(nxt.unit.text)
    return out[:1] + window + out[1:]


def _refers_back(text: str) -> bool:
    """Whether ``text`` opens with a back-reference word ("This", "These", "Such")."""
    words = text.split(maxsplit=1)
    return bool(words) and words[0].lower().strip("\"'(") in lexicon().back_references


def explained(
    block: Candidate, out: list[Candidate], cands: Sequence[Candidate], texts: Sequence[str]
) -> list[Candidate]:
    """``out`` with the prose unit right after code block ``block`` (quoted first) inserted after
    it, and the :data:`SENTENCE_WINDOW` units going on from that one: the text that explains an
    example ("``--enable-fuzz-support``" / "If set, it causes an extra library ... to be
    built"). Only under the block's headings, with nothing but white space between, when that
    unit is about the block (it shares a content word with it, or points back: a pronoun or a
    back-reference word), within :data:`MAX_CHARS`, and not repeating a quoted unit."""
    after = sorted(
        (
            c
            for c in cands
            if c.chunk_index == block.chunk_index
            and c.unit.kind != "code"
            and c.unit.headings == block.unit.headings
            and c.unit.start >= block.unit.end
        ),
        key=lambda c: c.unit.start,
    )
    if not after or texts[block.chunk_index][block.unit.end : after[0].unit.start].strip(" \t\n`~"):
        return out
    first = after[0].unit.text
    if not (_content_words(block.unit.text) & _content_words(first) or leans_back(first) or _refers_back(first)):
        return out  # "make all" / "The project is licensed under MIT": not about the block
    chars = sum(len(c.unit.text) for c in out if c.unit.kind != "code")
    add: list[Candidate] = []
    for nxt in [after[0], *continuation(after[0], cands, texts)][:SENTENCE_WINDOW]:
        if (
            nxt in out
            or chars + len(nxt.unit.text) > MAX_CHARS
            or any(repeats(nxt.unit.text, o.unit.text) for o in out + add)
        ):
            break
        add.append(nxt)
        chars += len(nxt.unit.text)
    at = out.index(block) + 1
    return out[:at] + add + out[at:]


def value_read_on(
    qa: QuestionAnalysis, out: list[Candidate], cands: Sequence[Candidate], texts: Sequence[str]
) -> list[Candidate]:
    """``out`` with the unit stating the asked value inserted after the quoted unit it continues
    (module docstring, step 4), or before it when it is the sentence right before that unit in
    its paragraph ("The default font is 14-point Times-Roman." / "Other fonts may be selected
    with fontname."), when the question expects a value and no quoted unit holds one."""
    if not (qa.expected in VALUE_TYPES or qa.asks_default) or any(_holds_value(qa, c) for c in out):
        return out
    quoted = {norm_text(c.unit.text) for c in out}
    for at, c in enumerate(out):
        if c.unit.kind == "code":
            continue
        hit = next((o for o in continuation(c, cands, texts) if _holds_value(qa, o)), None)
        if hit is not None and hit not in out and norm_text(hit.unit.text) not in quoted:
            return out[: at + 1] + [hit] + out[at + 1 :]
        prev = antecedent(c, cands, texts)  # or the sentence right before it states the value
        if prev is not None and _holds_value(qa, prev) and prev not in out and norm_text(prev.unit.text) not in quoted:
            return out[:at] + [prev] + out[at:]
    return out


def points_back(c: Candidate) -> bool:
    """Whether ``c``'s unit leans on the sentence before it: it opens with a back-reference word
    (its ``back_reference`` feature: "This", "Its", "Such") or holds a personal pronoun among its
    first words (:func:`~citewise.answer.question.leans_back`), unless it is a list item or
    definition with a lead term (``joinDuplicateHeaders {boolean} It joins ...``: the pronoun is
    the term)."""
    if c.features[_F["back_reference"]] > 0:
        return True
    return not c.unit.lead and leans_back(c.unit.text)


def antecedent(first: Candidate, cands: Sequence[Candidate], texts: Sequence[str]) -> Candidate | None:
    """The prose unit right before ``first`` in its chunk, under the same headings and in the same
    paragraph (no blank line between), when it is not instruction-like; else None."""
    prev = _prose_before(first, cands)
    if prev is None:
        return None
    gap = texts[first.chunk_index][prev.unit.end : first.unit.start]
    return prev if "\n\n" not in gap and prev.features[_F["instruction"]] == 0 else None


def block_continued(first: Candidate, cands: Sequence[Candidate], texts: Sequence[str]) -> Candidate | None:
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
