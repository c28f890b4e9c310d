"""Line headings in HTML: section titles marked only by standing alone on a line.

man2html and similar converters (PCRE2's HTML pages among them) write a manual page's section
titles as bold text or an anchor target between two ``<br>``s (``<br><a name="SEC2">DESCRIPTION</a>
<br>``, ``<br><b>Echoing a specific string</b><br>``), not as ``<h2>``. :func:`line_heading`
recognises them, so :mod:`citewise.text.html` renders them as headings.
"""

from __future__ import annotations

from bs4 import BeautifulSoup, Tag  # noqa: F401 - the doctest parses a page
from bs4.element import CData, Comment, Declaration, Doctype, ProcessingInstruction

_SKIP_STRINGS = (Comment, CData, Declaration, Doctype, ProcessingInstruction)

#: Inline elements that may be a line heading (:func:`line_heading`), and its most words.
LINE_HEADING_TAGS = frozenset(("b", "strong", "a"))
LINE_HEADING_WORDS = 10


def _beside(tag: Tag, forward: bool) -> Tag | None | bool:
    """The element next to ``tag`` (before it, or after it when ``forward``), skipping blank text;
    None at the parent's edge, False when text stands there."""
    node = tag.next_sibling if forward else tag.previous_sibling
    while node is not None:
        if isinstance(node, Tag):
            return node
        if not isinstance(node, _SKIP_STRINGS) and str(node).strip():
            return False
        node = node.next_sibling if forward else node.previous_sibling
    return None


def line_heading(tag: Tag) -> bool:
    """Whether ``tag`` (``b``/``strong``, or an ``a`` with ``name``/``id``) is a line heading: a
    ``<br>`` after it, a ``<br>`` or its parent's start before it, at most
    :data:`LINE_HEADING_WORDS` words opening with a letter or digit (``#include <x.h>`` is code),
    not ending like a sentence or a label, and holding no block.

    >>> page = BeautifulSoup('<p>x<br><b> OPTIONS </b><br>y <b>bold</b><br></p>', "html.parser")
    >>> [line_heading(b) for b in page.find_all("b")]
    [True, False]
    """
    if tag.name == "a" and not (tag.get("name") or tag.get("id")):
        return False
    after, before = _beside(tag, True), _beside(tag, False)
    if not (isinstance(after, Tag) and after.name == "br") or not (
        before is None or (isinstance(before, Tag) and before.name == "br")
    ):
        return False
    text = " ".join(tag.get_text(" ").split())
    return (
        0 < len(text.split()) <= LINE_HEADING_WORDS
        and text[0].isalnum()
        and any(c.isalpha() for c in text)
        and not text.endswith((".", ",", ":", ";", "!"))
        and tag.find(("p", "div", "ul", "ol", "dl", "table", "pre", "br")) is None
    )
