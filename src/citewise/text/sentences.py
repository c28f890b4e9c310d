"""Sentence splitting for extractive answers: prose sentences with their character spans.

Markup lines (headings, table rows, code fences and the code between them) are not sentences and
are skipped; list items are sentences of their own. The boundary rule is the usual heuristic:
``.``, ``!`` or ``?`` (optionally followed by closing quotes, brackets or emphasis marks: a bold
passage of several sentences ends ``.**``), whitespace, then an upper-case letter, digit, quote,
bracket or emphasis mark.
"""

from __future__ import annotations

import re

SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]*_~]*\s+(?=[A-Z0-9\"'(\[`*_])")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def trim_span(text: str, s: int, e: int) -> tuple[int, int] | None:
    """``(s, e)`` narrowed past the whitespace at both ends of ``text[s:e]``; None when nothing
    else is left.

    >>> trim_span("  ab  ", 0, 6), trim_span("   ", 0, 3)
    ((2, 4), None)
    """
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return (s, e) if e > s else None


def split_sentences(text: str) -> list[tuple[int, int]]:
    """``[(start, end)]`` spans of prose sentences in ``text`` (see module docstring)."""
    spans: list[tuple[int, int]] = []
    in_code = False
    para_start: int | None = None
    pos = 0

    def flush(end: int):
        nonlocal para_start
        if para_start is None:
            return
        s = para_start
        for m in SENTENCE_END.finditer(text, para_start, end):
            spans.append((s, m.start()))
            s = m.end()
        spans.append((s, end))
        para_start = None

    for line in text.splitlines(keepends=True):
        start, body = pos, line.rstrip("\r\n")
        pos += len(line)
        stripped = body.strip()
        if _FENCE.match(body):
            flush(start)
            in_code = not in_code
            continue
        if in_code or not stripped or stripped.startswith(("#", "|")):
            flush(start)
            continue
        m = _LIST.match(body)
        if m:
            flush(start)
            para_start = start + m.end()
            continue
        if para_start is None:
            para_start = start + (len(body) - len(body.lstrip()))
    flush(len(text.rstrip()))
    return [span for s, e in spans if (span := trim_span(text, s, e))]
