"""Line headings in HTML: section titles marked only by standing alone on a line.

man2html and similar converters (PCRE2's HTML pages among them) write a manual page's section
titles as bold text or an anchor target between two ``<br>``s (``<br><a name="SEC2">DESCRIPTION</a>
<br>``, ``<br><b>Echoing a specific string</b><br>``), not as ``<h2>``. :func:`line_heading`
recognises them, so :mod:`citewise.text.html` renders them as headings.
"""

from __future__ import annotations

from bs4 import BeautifulSoup, Tag  # noqa: F401 - the doctest parses a page
from bs4.element import CData, Comment, Declaration, Doctype, ProcessingInstruction

#: Node types that are no text of the page (comments, CDATA, declarations).
SKIP_STRINGS = (Comment, CData, Declaration, Doctype, ProcessingInstruction)

#: Inline elements that may be a line heading (:func:`line_heading`), and its most words.
LINE_HEADING_TAGS = frozenset(("b", "strong", "a"))
LINE_HEADING_WORDS = 10
#: Parents a line heading stands in: blocks of running text (not a span inside a sentence) ...
HEADING_PARENTS = frozenset(("body", "div", "p", "section", "article", "main", "blockquote", "center", "font"))
#: ... and never inside these (a table cell or caption is read as one line of text).
NO_HEADING_INSIDE = ("td", "th", "caption")


def _beside(tag: Tag, forward: bool) -> Tag | None | bool:
    """The element next to ``tag`` (before it, or after it when ``forward``), skipping blank text;
    None at the parent's edge, False when text stands there."""
    node = tag.next_sibling if forward else tag.previous_sibling
    while node is not None:
        if isinstance(node, Tag):
            return node
        if not isinstance(node, SKIP_STRINGS) and str(node).strip():
            return False
        node = node.next_sibling if forward else node.previous_sibling
    return None


def line_heading(tag: Tag) -> bool:
    """Whether ``tag`` (``b``/``strong``, or an ``a`` with ``name``/``id``) is a line heading: a
    ``<br>`` after it, a ``<br>`` or its parent's start before it, in a block of running text
    (:data:`HEADING_PARENTS`; never in a table cell), at most :data:`LINE_HEADING_WORDS` words
    opening with a letter or digit (``#include <x.h>`` is code), not ending like a sentence, no
    label's colon, and holding no block.

    >>> page = BeautifulSoup('<p>x<br><b> OPTIONS </b><br>y <b>bold</b><br></p>', "html.parser")
    >>> [line_heading(b) for b in page.find_all("b")]
    [True, False]
    >>> cell = BeautifulSoup('<table><tr><td><b>timeout</b><br><i>int</i></td></tr></table>', "html.parser")
    >>> line_heading(cell.b), line_heading(BeautifulSoup('<p>It is <span><b>on</b><br></span> now.</p>', "html.parser").b)
    (False, False)
    """
    if tag.name == "a" and not (tag.get("name") or tag.get("id")):
        return False
    if tag.parent is None or tag.parent.name not in HEADING_PARENTS or tag.find_parent(NO_HEADING_INSIDE):
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
        and not text.endswith((".", ",", ";", "!"))
        and (":" not in text or text.upper() == text)  # "Version: 2.3.1" is a label, not a title
        and tag.find(("p", "div", "ul", "ol", "dl", "table", "pre", "br")) is None
    )
