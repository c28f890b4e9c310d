"""Emphasis marks left without a partner when a sentence is cut from an emphasised passage.

A bold passage of two sentences, ``**Refunds are final. No exceptions are made.**``, split into
sentences gives ``**Refunds are final.`` and ``No exceptions are made.**``; pairing the marks
inside each sentence (:func:`citewise.answer.units.clean`) cannot remove them. A mark that opens
the text directly before a word, or closes it directly after one, and has no partner in it, is
such a remainder:

>>> unpaired_edges("**Refunds are final.")
'Refunds are final.'
>>> unpaired_edges("No exceptions are made.**")
'No exceptions are made.'
>>> unpaired_edges("2 ** 3")
'2 ** 3'
"""

from __future__ import annotations

import re

#: ``**``, ``__``, ``~~`` or ``*`` at the start, directly before a character that is no mark or
#: space; the same at the end, directly after one. (A single ``_`` is left: ``_exit`` is a name.)
_EDGE_OPEN = re.compile(r"^\s*(\*\*|__|~~|\*)(?=[^\s*_~])")
_EDGE_CLOSE = re.compile(r"(?<=[^\s*_~])(\*\*|__|~~|\*)\s*$")


def unpaired_edges(text: str) -> str:
    """``text`` without an emphasis mark at its start or end that has no partner in it (an odd
    number of that mark in ``text``)."""
    for rx in (_EDGE_OPEN, _EDGE_CLOSE):
        m = rx.search(text)
        if m and text.count(m.group(1)) % 2 == 1:
            text = text[: m.start(1)] + text[m.end(1) :]
    return text
