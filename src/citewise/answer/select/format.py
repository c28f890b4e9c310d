"""Format-level facts about answer units that hold for any corpus.

Patterns are data (``citewise/answer/data/format.yaml``): page furniture (tables of contents,
section and page numbers, footnote markers), the numbered-list marker, sentences stating a value.

>>> is_furniture("4.2 Bash Variables . . . . . . . . . 71"), is_furniture("3.1.2"), is_furniture("[12]")
(True, True, True)
>>> is_furniture("The default value is 500.")
False
>>> is_lead_in("The following options are accepted:"), is_lead_in("Can I get a refund?")
(True, True)
>>> states_value("The default value is 500."), states_value("controls which default set is used")
(True, False)
>>> step_number("1. Open it.\\n2. Save it.", 15)
2
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

import yaml


@lru_cache(maxsize=1)
def _data() -> dict:
    raw = yaml.safe_load(resources.files("citewise.answer").joinpath("data/format.yaml").read_text(encoding="utf-8"))
    return {
        "furniture": tuple(re.compile(p, re.I) for p in raw["furniture"]),
        "step": re.compile(raw["step_marker"]),
        "synopsis": re.compile(raw["synopsis"]),
        "synopsis_headings": frozenset(str(h).lower() for h in raw["synopsis_headings"]),
        "value": tuple(re.compile(p, re.I) for p in raw["states_value"]),
        "values": {k: re.compile(p, re.I) for k, p in raw["values"].items()},
    }


def is_furniture(text: str) -> bool:
    """Whether ``text`` is page furniture, never a sentence of an answer (see module docstring)."""
    return any(rx.match(text) for rx in _data()["furniture"])


def is_synopsis(text: str) -> bool:
    """Whether ``text`` is a command synopsis and nothing else (``data/format.yaml``:
    ``synopsis``): an entry's term, the name again, then only bracketed options, flags,
    placeholders and ellipses.

    >>> is_synopsis("shopt: shopt [-pqsu] [-o] [optname ...]"), is_synopsis("widgetctl: widgetctl [-pqsu] [name ...")
    (True, True)
    >>> is_synopsis("unstash: unstash [-n] [+N] Removes elements from the stack."), is_synopsis("shopt: toggles options")
    (False, False)
    """
    return _data()["synopsis"].match(text.strip()) is not None


def is_synopsis_section(heading: str) -> bool:
    """Whether ``heading`` names a manual page's synopsis section (``data/format.yaml``:
    ``synopsis_headings``), whose code block shows how a command is written, not how to do a task.

    >>> is_synopsis_section("SYNOPSIS"), is_synopsis_section("Examples")
    (True, False)
    """
    return heading.strip().rstrip(":").lower() in _data()["synopsis_headings"]


def is_lead_in(text: str) -> bool:
    """Whether ``text`` ends in ':' (it introduces a list or table) or is a question: neither
    says anything on its own."""
    return text.rstrip("\"'”’)*_ ").endswith((":", "?"))


#: A unit of at least this many tokens ...
GARBLE_MIN_TOKENS = 16
#: ... fewer than this share of which hold a word (two lower-case letters in a row, or four
#: letters) is no prose: a figure's data or a matrix of codes that text extraction laid out as
#: a line.
GARBLE_WORD_SHARE = 0.15
_WORDY = re.compile(r"[a-z]{2}|[^\W\d_]{4}")


def is_garble(text: str) -> bool:
    """Whether ``text`` is a run of numbers and codes rather than a sentence (a PDF figure's
    labels, a conversion matrix): :data:`GARBLE_MIN_TOKENS` tokens or more, under
    :data:`GARBLE_WORD_SHARE` of them holding a word.

    >>> is_garble(" ".join(str(341411 + 7 * i) for i in range(20))), is_garble("Gt G G Gt G Bt Bt GBt 0O lt Gt t . + Gt Gt G")
    (True, True)
    >>> is_garble("If n is not supplied, it is assumed to be 1."), is_garble("Y = 0.2126 * R + 0.7152 * G + 0.0722 * B")
    (False, False)
    """
    tokens = text.split()
    return len(tokens) >= GARBLE_MIN_TOKENS and sum(bool(_WORDY.search(t)) for t in tokens) < GARBLE_WORD_SHARE * len(
        tokens
    )


def states_value(text: str) -> bool:
    """Whether ``text`` states a default value (``data/format.yaml``: ``states_value``)."""
    return any(rx.search(text) for rx in _data()["value"])


def step_number(text: str, start: int) -> int | None:
    """The number of the numbered-list item starting at ``start`` of ``text`` (``2`` for the item
    after ``2. ``), None when the line does not open with a number marker."""
    line = text.rfind("\n", 0, start) + 1
    m = _data()["step"].fullmatch(text, line, start)
    return int(m.group(1)) if m else None


def value_pattern(expected: str) -> re.Pattern | None:
    """The pattern (one group) of the value an answer of type ``expected`` gives (``number``,
    ``date``; ``data/format.yaml``: ``values``), None for other types.

    >>> value_pattern("number").search("Keys are kept for 24 hours.").group(1)
    '24 hours'
    """
    return _data()["values"].get(expected)


def row_label(text: str) -> tuple[str, str] | None:
    """``(header, cell)`` of a table row's first cell, from its display text ``Header: cell; ...``
    (:mod:`citewise.answer.units` renders rows so); None when the text has no such first cell.

    >>> row_label("Plan: Starter; Daily outgoing-payment limit: 5,000 USD")
    ('Plan', 'Starter')
    >>> row_label("No header here") is None
    True
    """
    header, sep, cell = text.split("; ", 1)[0].partition(": ")
    if not sep or not header.strip() or not cell.strip():
        return None
    return header.strip(), cell.strip()
