"""Line headings and option paragraphs in HTML: a manual page's layout without semantic markup.

man2html and similar converters (PCRE2's HTML pages among them) write a manual page's section
titles as bold text or an anchor target between two ``<br>``s (``<br><a name="SEC2">DESCRIPTION</a>
<br>``, ``<br><b>Echoing a specific string</b><br>``), not as ``<h2>``. :func:`line_heading`
recognises them, so :mod:`citewise.text.html` renders them as headings. The same converters
write an option's entry as a paragraph that opens with its synopsis in bold and italic runs, a
line break in the source only, then its description: :func:`option_synopsis` finds the synopsis.
"""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, NavigableString, Tag  # noqa: F401 - the doctest parses a page
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


#: Text between the marked-up parts of an option's synopsis: ``<b>-d</b> <i>action</i>,
#: <b>--directories=</b><i>action</i>`` (spaces, commas, ``=``, brackets, ``|``, ``+``).
_SYNOPSIS_GLUE = re.compile(r"[ \t,=\[\]|+]*")
_SYNOPSIS_TAGS = frozenset(("b", "strong", "i", "em", "code", "tt", "var", "kbd", "samp"))
_OPTION_START = re.compile(r"--?[A-Za-z]")
#: Blocks that make a paragraph more than one option's entry (a line heading between ``<br>``s,
#: a second option after ``<br><br>``, a list): such a paragraph is walked as it is.
_NOT_IN_ENTRY = ["p", "div", "pre", "ul", "ol", "dl", "table", "h1", "h2", "h3", "h4", "h5", "h6"]
#: Where a paragraph is read as one cell or item, never as an entry of its own.
_INSIDE = ("td", "th", "dd", "dt", "li")


def option_synopsis(p: Tag) -> tuple[str, list] | None:
    """``(synopsis, body)`` for a paragraph that is an option's entry in a manual page's layout:
    it opens with the option's synopsis, a run of bold, italic or code elements and the
    punctuation between them (``-d action, --directories=action``: the first element bold or
    code, its text an option, ``-d`` or ``--name``), then a line break in the source, then the
    description, which starts with a capital letter and holds no heading, list, line heading or
    second option after a ``<br>`` (``body``: its nodes). None for any other paragraph, and for one inside a table cell, a list
    item or a definition.

    >>> p = BeautifulSoup("<p><b>-d</b> <i>dir</i>, <b>--dir=</b><i>dir</i>\\nUse dir.</p>", "html.parser").p
    >>> syn = option_synopsis(p); syn[0], syn[1]
    ('-d dir, --dir=dir', ['Use dir.'])
    >>> [option_synopsis(BeautifulSoup(h, "html.parser").p) for h in ("<p><b>Note</b>\\nThis.</p>",
    ...  "<p><b>-1</b>\\nMeans no limit.</p>", "<p><code>-O2</code> and <code>-O3</code> optimise.</p>")]
    [None, None, None]
    """
    parts: list[str] = []
    body: list = []
    kids = list(p.children)
    for n, kid in enumerate(kids):
        if isinstance(kid, Tag) and kid.name in _SYNOPSIS_TAGS:
            parts.append(kid.get_text())
        elif isinstance(kid, SKIP_STRINGS):
            continue
        elif isinstance(kid, NavigableString):
            if not parts and not kid.strip():
                continue  # the source's line break after <p>
            line, newline, after = str(kid).partition("\n")
            if not _SYNOPSIS_GLUE.fullmatch(line):
                return None
            parts.append(line)
            if newline:
                body = ([NavigableString(after.lstrip())] if after.strip() else []) + kids[n + 1 :]
                break
        else:
            return None
    first = next((k for k in kids if isinstance(k, Tag)), None)
    term = " ".join("".join(parts).split())
    if first is None or first.name not in ("b", "strong", "code") or not _OPTION_START.match(term):
        return None
    if any(ch in term for ch in "*`"):
        return None
    text = "".join(k.get_text() if isinstance(k, Tag) else str(k) for k in body).lstrip()
    if not text[:1].isupper():
        return None
    # read only for a paragraph that opens like an entry (ingest walks every <p>)
    if p.find_parent(_INSIDE) is not None or p.find(_NOT_IN_ENTRY) is not None:
        return None
    for br in p.find_all("br"):  # a line heading or another option after a line break
        nxt = _beside(br, True)
        if isinstance(nxt, Tag) and (
            line_heading(nxt) or (nxt.name in _SYNOPSIS_TAGS and _OPTION_START.match(nxt.get_text()))
        ):
            return None
    return term, body
