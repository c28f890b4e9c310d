"""Misspelt question words read as the corpus word one edit away ("did you mean").

A question with a typo ("How do I rotate the Okta signing certficate?", "refund windw") used to
abstain: the misspelt word occurs in no document, so the unknown-name rule said the corpus does
not know the thing asked about. A user of a search box expects the typo to be read as the word
it nearly is, and to be told so.

:func:`corrections` looks at each plain word of the question (letters only, five or more, not
written as a name: no capitals after the first letter, no digits, not part of a code name such as
``fs.rm`` or ``--dry-run``) whose analyzed term no chunk visible to the principal holds and that
is no English word (:func:`citewise.answer.evidence.is_common_word`: "cable" over a corpus that
only says "table" is a question about something else, not a typo). Its candidates are the
strings one Damerau-Levenshtein edit away (a deletion, a transposition of neighbours, a
substitution or an insertion of a letter a-z; Damerau 1964, the four error kinds that account
for ~80% of misspellings; the candidate generation of Norvig's "How to Write a Spelling
Corrector", 2007). The candidate whose analyzed term the most visible chunks hold wins (ties:
an English word first, then alphabetical); none: the word stays as written. Names made up in
false-premise questions ("frobnicate", "globnumeric") are not one edit from a corpus word, so
they still abstain.

Document frequencies are counted under the principal's filters (a word only restricted
documents hold is never suggested: no side channel). Only words of five letters or more are
looked at: one edit turns most shorter words into other words.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from citewise.text.analyzer import analyze

#: Shortest word that is corrected (letters).
MIN_LETTERS = 5

#: A plain word: letters only, not touching characters that make it part of a code name
#: (``fs.rm``, ``--dry-run``, ``snake_case``, ``a/b``, ``$VAR``, ``x=y``).
_BEFORE, _AFTER = r"(?<![\w.\-/$=@#:])", r"(?![\w\-/=@#(]|\.\w)"
_WORD = re.compile(rf"{_BEFORE}([A-Za-z]+){_AFTER}")


@dataclass(frozen=True)
class Correction:
    """One misspelt word: ``typo`` as written, ``fix`` the corpus word it was read as."""

    typo: str
    fix: str


def edits1(word: str) -> set[str]:
    """Strings one Damerau-Levenshtein edit from ``word`` (lower-case letters a-z): deletions,
    transpositions of neighbours, substitutions, insertions (Norvig 2007).

    >>> len(edits1("windw")), "window" in edits1("windw"), "wind" in edits1("windw")
    (285, True, True)
    >>> "certificate" in edits1("certficate"), "export" in edits1("exprot")
    (True, True)
    """
    letters = string.ascii_lowercase
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deletes = {a + b[1:] for a, b in splits if b}
    transposes = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    replaces = {a + c + b[1:] for a, b in splits if b for c in letters}
    inserts = {a + c + b for a, b in splits for c in letters}
    return (deletes | transposes | replaces | inserts) - {word}


def corrections(
    question: str,
    df: Callable[[str], int],
    known: Callable[[Sequence[str]], set[str]],
    common: Callable[[str], bool],
    written: Callable[[str], Iterable[str]] | None = None,
) -> list[Correction]:
    """The misspelt words of ``question`` and the corpus words they are read as (see module
    docstring), in question order.

    Args:
        question: the question as asked.
        df: analyzed term -> chunks visible to the principal that hold it.
        known: analyzed terms -> those some chunk holds (any permission; a fast prefilter, each
            candidate is then counted with ``df``).
        common: word -> whether it is an English word (never corrected, preferred on ties).
        written: analyzed term -> words (lower case) of a visible chunk that holds it; the
            correction must be one of them, spelt as the corpus spells it ("certificate", not
            the other strings one edit away that analyze to the same term; "lightest" is not
            read as "lightes", which analyzes to "light" but is no corpus word). None: English
            words first, then alphabetical.
    """
    out: list[Correction] = []
    seen: set[str] = set()
    for m in _WORD.finditer(question):
        word = m.group(1)
        lower = word.lower()
        if len(word) < MIN_LETTERS or lower in seen or not (word.islower() or word[1:].islower()) or common(lower):
            continue
        seen.add(lower)
        terms = analyze(lower)
        if len(terms) != 1 or df(terms[0]) > 0:
            continue
        fix = _best(edits1(lower), df, known, common, written)
        if fix:
            out.append(Correction(word, fix if word.islower() else fix.capitalize()))
    return out


def _best(
    candidates: Iterable[str],
    df: Callable[[str], int],
    known: Callable[[Sequence[str]], set[str]],
    common: Callable[[str], bool],
    written: Callable[[str], Iterable[str]] | None = None,
) -> str:
    """The candidate whose analyzed term most visible chunks hold ('' when none does), spelt
    as the corpus spells it when ``written`` tells."""
    by_term: dict[str, list[str]] = {}
    for c in candidates:
        t = analyze(c)
        if len(t) == 1:
            by_term.setdefault(t[0], []).append(c)
    present = known(sorted(by_term))
    scored = [(df(t), t) for t in sorted(present)]
    scored = [(n, t) for n, t in scored if n > 0]
    if not scored:
        return ""
    best = max(n for n, _ in scored)
    words = sorted(w for n, t in scored if n == best for w in by_term[t])
    if written is not None:
        # only a word the corpus writes: "lightest" is one edit from "lightes", which analyzes to
        # the corpus term "light" but is no word of the corpus (nor a typo of one)
        spelt = {w for n, t in scored if n == best for w in written(t)}
        return next((w for w in words if w in spelt), "")
    return next((w for w in words if common(w)), words[0])


def apply(question: str, fixes: Sequence[Correction]) -> str:
    """``question`` with each misspelt word replaced by its correction (whole words only).

    >>> apply("the refund windw for Pro", [Correction("windw", "window")])
    'the refund window for Pro'
    >>> apply("Windw size and windw", [Correction("Windw", "Window")])
    'Window size and window'
    """
    for c in fixes:
        question = re.sub(
            rf"{_BEFORE}{re.escape(c.typo)}{_AFTER}",
            lambda m: c.fix.capitalize() if m.group(0)[0].isupper() else c.fix.lower(),
            question,
            flags=re.I,
        )
    return question
