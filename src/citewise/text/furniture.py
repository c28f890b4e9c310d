"""Navigation and page furniture in HTML that is not marked up as such.

Documentation generators put their Prev / Up / Home / Next bars, breadcrumbs and tables of
contents in plain ``<div>``s and ``<table>``s (DocBook XSL's ``navheader``/``navfooter`` tables,
Texinfo's ``Next: ..., Previous: ..., Up: ...`` headers). Two signals find them, neither tied to
one generator:

* **Link density** (the signal of boilerplate classifiers since Kohlschütter et al., "Boilerplate
  detection using shallow text features", WSDM 2010, and jusText): a block with at least
  :data:`MIN_LINKS` links (``<a href>``) and no heading or code block of its own is navigation
  (a contents list, a breadcrumb trail, a bar of page links) when at least :data:`LINK_DENSITY`
  of its visible text is link text, or when its other words are only labels: no more of them
  than links plus one, and the block does not end like a sentence (``Next: X, Previous: Y,
  Up: Z``; ``Home > Docs > Widgets``).
* **Repetition across a folder's pages** (an ingest-time pass over the HTML pages of one folder,
  :func:`citewise.text.loaders.html.folder_furniture`): a short block with links (at most
  :data:`FURNITURE_MAX_WORDS` words) whose link texts (together, or each of them) recur on at
  least :data:`REPEAT_SHARE` of the folder's pages (and :data:`REPEAT_MIN_PAGES`) is furniture: the same bar on every page with
  only the neighbouring pages' titles changing. A block without links is never furniture: a
  sentence or a table header many pages repeat ("This will produce:") is text, unless it is the
  first or last block of the page's content on most pages (a footer line: "Zsh version 5.9,
  released on May 14, 2022."), :func:`edge_key`, or a notice of :data:`TOP_MIN_WORDS` words or
  more, word for word, among the first :data:`TOP_BLOCKS` blocks under the page's title and
  above its first section on most pages ("This page is part of the PCRE2 HTML documentation. It
  was generated automatically ..."), :func:`top_key`.

A table whose first row is column headers is data, not navigation; a table whose rows are each
a link (:data:`MENU_SHARE`) is a menu; a list needs :data:`MIN_LIST_LINKS` links, unless it is
a menu of pages (:func:`page_menu`): every one of its items, two or more, is a single link and
nothing else, to another page of the same folder, named by that page's title or first heading
(the folder pass records them, :func:`name_keys`): a node's menu of its subsections. A list of
links to other sites, to pages the folder does not hold or under other names, or whose items say
more than their link, stays.
Code and headings are never looked into.
"""

from __future__ import annotations

import re
from typing import Any
from collections import Counter

#: Block elements examined (outermost first).
BLOCK_TAGS = ("div", "table", "tr", "p", "ul", "ol", "dl", "section", "center")
#: Elements that may hold a bar of page links (compared link by link across pages).
BAR_TAGS = ("div", "table", "tr", "center")
#: Elements whose inside is never navigation (nor examined): code, headings.
OPAQUE_TAGS = frozenset(("pre", "code", "h1", "h2", "h3", "h4", "h5", "h6"))
#: A navigation block has at least this many links (a list: :data:`MIN_LIST_LINKS`; a short list
#: of links in the text, two maintainers or two tools, stays) ...
MIN_LINKS = 2
MIN_LIST_LINKS = 4
#: ... and at least this share of its visible characters inside them.
LINK_DENSITY = 0.7
#: A table at least this share of whose rows are each mostly link text is a menu (Texinfo's
#: node menus, contents tables).
MENU_SHARE = 0.8
#: Furniture (repeated) blocks are at most this many words long.
FURNITURE_MAX_WORDS = 80
#: A block recurring on at least this share of a folder's HTML pages is furniture ...
REPEAT_SHARE = 0.5
#: ... provided the folder has at least this many pages.
REPEAT_MIN_PAGES = 3

_WORD = re.compile(r"[^\W\d_]{2,}")
_CONTENT_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6", "pre", "code", "img", "math")


def element_stats(root) -> dict[int, tuple[int, ...]]:
    """Per element (by ``id``) of the tree under ``root``, in one pass (linear in the page):
    (visible characters, characters inside ``<a href>``, links, headings/code blocks not inside a
    link, words, words with a letter outside links)."""
    from bs4 import NavigableString, Tag
    from bs4.element import Comment

    stats: dict[int, tuple[int, ...]] = {}
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        if not done:
            stack.append((node, True))
            stack.extend((c, False) for c in node.children if isinstance(c, Tag))
            continue
        total = linked = links = content = words = labels = 0
        for c in node.children:
            if isinstance(c, Tag):
                t = stats[id(c)]
                total, linked, links, content, words, labels = (
                    total + t[0],
                    linked + t[1],
                    links + t[2],
                    content + t[3],
                    words + t[4],
                    labels + t[5],
                )
            elif isinstance(c, NavigableString) and not isinstance(c, Comment):
                total += len("".join(c.split()))
                words += len(c.split())
                labels += len(_WORD.findall(c))
        if node.name == "a" and node.has_attr("href"):
            linked, links, content, labels = total, links + 1, 0, 0  # code inside a link is the link's text
        elif node.name in _CONTENT_TAGS:
            content += 1
        stats[id(node)] = (total, linked, links, content, words, labels)
    return stats


def link_dense(tag, stats: dict, pages: frozenset[str] = frozenset()) -> str:
    """Why ``tag`` is navigation by link density, or as a menu of the folder's pages ('' when it
    is neither); ``stats`` from :func:`element_stats`, ``pages`` the folder's :func:`name_keys`."""
    total, linked, links, content, _, labels = stats[id(tag)]
    table = tag if tag.name == "table" else tag.find_parent("table") if tag.name == "tr" else None
    if table is not None and _column_header(table):
        return ""  # a table with a row of column headers is data (a bar or a menu of links has none)
    if tag.name == "table":
        rows = [r for r in _rows(tag) if stats[id(r)][0]]
        dense = [r for r in rows if stats[id(r)][2] and stats[id(r)][1] >= LINK_DENSITY * stats[id(r)][0]]
        if len(dense) >= MIN_LIST_LINKS and len(dense) >= MENU_SHARE * len(rows):
            return f"navigation: a menu table, {len(dense)} of its {len(rows)} rows are links"
    need = MIN_LIST_LINKS if tag.name in ("ul", "ol", "dl") else MIN_LINKS
    if content or not total:
        return ""
    if links >= need and linked / total >= LINK_DENSITY:
        return f"navigation: {links} links, {round(100 * linked / total)}% of its text is link text"
    if links >= need and labels <= links + 1 and not tag.get_text().rstrip().endswith((".", "!", "?", ":")):
        return f"navigation: {links} links with only {labels} other words (labels, not a sentence)"
    n = page_menu(tag, pages) if tag.name in ("ul", "ol") and pages else 0
    return f"navigation: a menu of {n} of the folder's pages, each named by its title" if n else ""


#: A section number in front of a heading: ``22.1``, ``A.4.1``, ``3.``.
_SECTION_NO = re.compile(r"^(?:\d+|[a-z])(?:\.\d+)*\.?\s+")


def _name(text: str) -> str:
    return " ".join(text.split()).casefold()


def name_keys(page: str, names: list[str]) -> set[str]:
    """Keys recording that the folder holds the page file ``page`` under each of ``names`` (its
    ``<title>`` and first heading, the heading also without its section number), for
    :func:`page_menu`."""
    out = set()
    for n in map(_name, names):
        for v in (n, _SECTION_NO.sub("", n)):
            if v:
                out.add(f"T:{page}:{v}")
    return out


def page_menu(lst: Any, pages: frozenset[str]) -> int:
    """The number of items of a list (``<ul>``/``<ol>``) whose every item, two or more, is one
    link and no other text, to another page of the same folder (a relative URL without a
    folder part) named by that page's title or heading (a key of :func:`name_keys` in
    ``pages``); 0 for any other list."""
    items = lst.find_all("li", recursive=False)
    if len(items) < 2:
        return 0
    for li in items:
        links = li.find_all("a", href=True)
        if len(links) != 1:
            return 0
        page = re.split(r"[?#]", str(links[0]["href"]).strip(), maxsplit=1)[0]
        text = _name(links[0].get_text(" "))
        if not page or "/" in page or ":" in page or _name(li.get_text(" ")) != text:
            return 0
        if f"T:{page}:{text}" not in pages:
            return 0
    return len(items)


def _rows(table) -> list:
    """The rows of a table, not of tables nested in it."""
    return [r for r in table.find_all("tr") if r.find_parent("table") is table]


def _column_header(table) -> bool:
    """Whether a table's first row is a row of two or more ``<th>`` column headers."""
    rows = _rows(table)
    cells = rows[0].find_all(("td", "th"), recursive=False) if rows else []
    return len(cells) >= 2 and all(c.name == "th" for c in cells)


def fingerprints(tag, stats: dict) -> list[str]:
    """Keys under which a short block is compared across pages: its tag and link texts in order,
    then its tag and each link text (the text between links changes from page to page: the
    neighbouring pages' titles). A block without links has none: a sentence or table header many
    pages repeat is text."""
    words = stats[id(tag)][4]
    if not words or words > FURNITURE_MAX_WORDS or not stats[id(tag)][2]:
        return []
    if tag.find(("h1", "h2", "h3", "pre")) is not None:
        return []
    links = [" ".join(a.get_text(" ").split()) for a in tag.find_all("a", href=True)]
    if not any(links):
        return []
    return [f"L:{tag.name}:" + "|".join(links)] + [f"A:{tag.name}:{t}" for t in links if t]


def is_furniture(tag, stats: dict, repeated: frozenset[str]) -> bool:
    """Whether a block is furniture given the folder's repeated fingerprints: its links (in
    order) recur on most pages, or each of its links does (a first page's bar lacks "Prev")."""
    keys = fingerprints(tag, stats)
    if not keys:
        return False
    # link by link only for a bar (a table or division): a paragraph whose one link many pages
    # share ("see $editor") is text
    return keys[0] in repeated or (tag.name in BAR_TAGS and all(k in repeated for k in keys[1:]))


def blocks(root):
    """Candidate blocks under ``root`` in document order (outermost first), skipping the subtree
    of a block the caller drops: ``send(True)`` after receiving a block to drop it."""
    from bs4 import Tag

    stack = [root]
    while stack:
        node = stack.pop()
        drop = False
        if node is not root and node.name in BLOCK_TAGS:
            drop = yield node
        if not drop and node.name not in OPAQUE_TAGS:
            stack.extend(reversed([c for c in node.children if isinstance(c, Tag)]))


def _prose_block(block: str, min_words: int = 1) -> bool:
    """Whether ``block`` is text that may be furniture: no heading, code block or table, between
    ``min_words`` and :data:`FURNITURE_MAX_WORDS` words."""
    return not block.startswith(("#", "```", "|")) and min_words <= len(block.split()) <= FURNITURE_MAX_WORDS


def edge_key(block: str, end: str) -> str:
    """Key of a page's first or last content block (``end``: 'first' | 'last'), digits as ``#``;
    '' for a heading, a code block or table, or a block over :data:`FURNITURE_MAX_WORDS` words."""
    if not _prose_block(block):
        return ""
    return f"E:{end}:" + re.sub(r"\d+", "#", " ".join(block.split()))


#: Blocks at the start of a page, headings not counted, that may be a notice shared with the
#: folder's other pages (a "Return to the index" line, then a generator notice) ...
TOP_BLOCKS = 3
#: ... when at least this many words long (a short label under each title, "Tier: 3", is data).
TOP_MIN_WORDS = 5


def top_key(block: str) -> str:
    """Key of a block near the top of a page (:data:`TOP_BLOCKS`): its exact text (digits
    count: "Deprecated since version 4.2" on one page is not "... 4.3" on the next), '' for a
    heading, a code block or table, or a block under :data:`TOP_MIN_WORDS` or over
    :data:`FURNITURE_MAX_WORDS` words."""
    return "E:top:" + " ".join(block.split()) if _prose_block(block, TOP_MIN_WORDS) else ""


def top_blocks(blocks: list[str]) -> list[int]:
    """Indices of the blocks a top notice may be: the first :data:`TOP_BLOCKS` that are no
    heading, above the page's second heading (under its title, before its first section)."""
    out: list[int] = []
    headings = 0
    for i, b in enumerate(blocks):
        if b.startswith("#"):
            headings += 1
            if headings > 1:
                break
        elif len(out) < TOP_BLOCKS:
            out.append(i)
    return out


def edge_keys(blocks: list[str]) -> set[str]:
    """The keys of a page's first and last content blocks (:func:`edge_key`) and of the blocks
    under its title (:func:`top_blocks`, :func:`top_key`)."""
    keys = {edge_key(blocks[0], "first"), edge_key(blocks[-1], "last")} if blocks else set()
    keys |= {top_key(blocks[i]) for i in top_blocks(blocks)}
    return keys - {""}


def page_keys(root) -> set[str]:
    """The fingerprints of all candidate blocks of one page."""
    stats = element_stats(root)
    keys: set[str] = set()
    for tag in blocks(root):
        keys.update(fingerprints(tag, stats))
    return keys


def repeated(per_page: list[set[str]]) -> frozenset[str]:
    """Fingerprints that recur on at least :data:`REPEAT_SHARE` of the pages (and at least
    :data:`REPEAT_MIN_PAGES` of them); empty for a folder with fewer pages than that."""
    if len(per_page) < REPEAT_MIN_PAGES:
        return frozenset()
    counts: Counter[str] = Counter()
    for keys in per_page:
        counts.update(keys)
    need = max(REPEAT_MIN_PAGES, REPEAT_SHARE * len(per_page))
    return frozenset(k for k, n in counts.items() if n >= need)
