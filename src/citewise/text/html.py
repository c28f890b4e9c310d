"""HTML → Markdown-like text for the chunker: main content only, every text node kept, structure kept.

Choice (measured on the 40 pages of the rustc book, mdBook HTML, ``bench/html_extract.py``):
BeautifulSoup over lxml with our own block walk, not a main-content extractor library.

* Measured (chunks with mdBook chrome / share of ``<main>`` words kept / headings / pipe tables
  with a header row / code blocks): previous tag-list loader 40 of 342 / 1.000 / 1576 of 1536 (the
  menu bar's book title became a heading) / 0 of 22 / 850 of 856; this walk 0 of 360 / 1.000 /
  1536 of 1536 / 22 of 22 / 856 of 856; trafilatura 2.3.1 (Markdown output, tables, formatting,
  ``favor_recall``) 0 of 360 / 0.993 / 1535 of 1536 / 19 of 22 / 854 of 856. trafilatura drops
  text it scores as boilerplate and some tables, and needs six more dependencies; documentation
  pages mark their main content explicitly (``<main>``, ``<article>``, ``role=main``), so a
  structural rule loses nothing. readability-lxml was not measured: it returns HTML, so the
  conversion to Markdown would still be ours.
* The walk keeps *every* text node below the chosen root: unknown tags (``<div>``, ``<section>``,
  custom elements) are blocks, known inline tags (``span``, ``a``, ``em``...) are inline, and text
  directly in ``<body>`` is a paragraph. A hand list of tags to *take* (the previous loader) drops
  whatever it does not name.

Rules:

* Root: the first ``<main>``, else ``[role=main]``, else the ``<article>`` elements (all, in
  order), else ``<body>`` (also when the chosen root holds no text). Before that, boilerplate is removed everywhere: ``nav, header, footer,
  aside, script, style, noscript, template, form, button, svg, iframe, select, dialog`` (a
  ``header``/``footer`` *inside* an ``<article>``/``<main>`` root is kept: there it is the
  article's own title block), elements with ``role`` navigation/banner/contentinfo/complementary/
  search, ``aria-hidden=true``, ``hidden``, ``style=display:none``, and mdBook's chrome: the
  sidebar, menu bar, search box, theme popup, "Keyboard shortcuts" help popup
  (``#mdbook-help-container``) and previous/next page links.
* Output: headings ``#``..``######``; paragraphs separated by blank lines; ``ul``/``ol`` as
  ``- `` / ``1. `` items, nested lists indented two spaces per level, a list item's paragraphs
  joined on one line (one answer unit); ``<dl>`` as ``- **term**: definition`` items (a list item
  with its lead term, so the answer units treat it as one item); ``<pre>`` as a fenced code block
  (language from a ``language-*`` class) kept verbatim; tables as Markdown pipe tables whose first
  row is the header (``thead``/``th`` row, else the first row) followed by ``| --- |``; inline
  ``<code>``/``<kbd>``/``<samp>`` in backticks; ``<br>`` as a space.
* A line heading (man2html's and similar converters' section titles,
  :func:`citewise.text.line_headings.line_heading`):
  bold text, or an anchor target (``<a name>``/``<a id>``), standing alone on a line between
  ``<br>``s, short and not a sentence, is a heading: ``##`` when ALL CAPS (``DESCRIPTION``),
  ``###`` otherwise (``Echoing a specific string``).
* An option paragraph (the HTML man page layout of man2html, groff and PCRE2's pages): a ``<p>``
  holding an option's synopsis in bold/italic runs (``<b>-d</b> <i>action</i>,
  <b>--directories=</b><i>action</i>``), a line break in the source and a capitalised
  description is the option's entry, ``- **-d action, --directories=action**: If an input path
  ...``, as a ``<dl>`` item is (:func:`citewise.text.line_headings.option_synopsis`).
"""

from __future__ import annotations

import re
import warnings

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, NavigableString, Tag, XMLParsedAsHTMLWarning

from citewise.text import furniture, notes
from citewise.text.line_headings import LINE_HEADING_TAGS, SKIP_STRINGS as _SKIP_STRINGS, line_heading, option_synopsis

#: Removed wherever they are (see module docstring).
DROP_TAGS = (
    "nav",
    "aside",
    "script",
    "style",
    "noscript",
    "template",
    "form",
    "button",
    "svg",
    "iframe",
    "select",
    "dialog",
    "object",
    "embed",
    "canvas",
    "audio",
    "video",
    "head",
)
#: Removed unless inside the chosen <main>/<article> root.
PAGE_CHROME_TAGS = ("header", "footer")
DROP_SELECTORS = (
    "[role=navigation]",
    "[role=banner]",
    "[role=contentinfo]",
    "[role=complementary]",
    "[role=search]",
    "[aria-hidden=true]",
    "[hidden]",
    # mdBook chrome: sidebar (table of contents), menu bar with the book title and theme list,
    # search box, "Keyboard shortcuts" help popup, previous/next links
    "#sidebar",
    ".sidebar",
    "#menu-bar",
    ".menu-bar",
    "#menu-bar-hover-placeholder",
    "#search-wrapper",
    "#searchresults-outer",
    ".theme-popup",
    "#mdbook-help-container",
    "#mdbook-help-popup",
    ".mdbook-help-container",
    ".nav-wrapper",
    ".nav-wide-wrapper",
    ".nav-chapters",
    ".sidetoc",
    ".pagetoc",
)
_DISPLAY_NONE = re.compile(r"display\s*:\s*none", re.I)

INLINE_TAGS = frozenset(
    "a abbr b bdi bdo big cite data del dfn em font i img ins label mark q s small span strike "
    "strong sub sup time tt u var wbr math".split()
)
CODE_TAGS = frozenset(("code", "kbd", "samp"))
_LINE_START_MARKUP = re.compile(r"^(#|\||```|~~~)")


def _text(node) -> str:
    return " ".join(node.get_text(" ").split())


def _code_span(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        return ""
    ticks = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


class _Walker:
    """Collects blocks (strings) from a subtree; inline text accumulates until a block boundary."""

    def __init__(self, depth: int = 0):
        self.blocks: list[str] = []
        self.inline: list[str] = []
        self.depth = depth  # list nesting depth, for indentation

    def flush(self) -> None:
        txt = " ".join("".join(self.inline).split())
        self.inline = []
        if txt:
            if _LINE_START_MARKUP.match(txt):
                txt = "\\" + txt  # text, not a heading / table / fence
            self.blocks.append(txt)

    def walk(self, node) -> None:
        for child in node.children:
            if isinstance(child, NavigableString):
                if not isinstance(child, _SKIP_STRINGS):
                    self.inline.append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name
            if name in ("h1", "h2", "h3", "h4", "h5", "h6"):
                self.flush()
                txt = _inline_text(child)
                if txt:
                    self.blocks.append("#" * int(name[1]) + " " + txt)
            elif name == "pre":
                self.flush()
                self.blocks.append(_fenced(child))
            elif name == "table":
                self.flush()
                tbl = _table(child)
                if tbl:
                    self.blocks.append(tbl)
            elif name in ("ul", "ol", "menu"):
                self.flush()
                lst = _list(child, self.depth)
                if lst:
                    self.blocks.append(lst)
            elif name == "dl":
                self.flush()
                dl = _dl(child, self.depth)
                if dl:
                    self.blocks.append(dl)
            elif name in LINE_HEADING_TAGS and line_heading(child):
                self.flush()
                txt = " ".join(child.get_text(" ").split())
                self.blocks.append(("## " if txt.upper() == txt else "### ") + txt)
            elif name in CODE_TAGS:
                span = _code_span(child.get_text())
                if self.inline and self.inline[-1].endswith("`"):
                    span = " " + span  # two code spans in a row stay two
                self.inline.append(span)
            elif name == "br":
                self.inline.append(" ")
            elif name in INLINE_TAGS:
                self.walk(child)
            elif name == "p" and (synopsis := option_synopsis(child)):
                self.flush()  # an option's entry, as a <dl> item is (no <br> inside: one line)
                body = _Walker()
                body.walk(_Holder(synopsis[1]))
                self.blocks.append(f"- **{synopsis[0]}**: " + " ".join(body.result()))
            else:  # p, div, section, blockquote, li outside a list, unknown and custom elements
                self.flush()
                self.walk(child)
                self.flush()

    def result(self) -> list[str]:
        self.flush()
        return self.blocks


class _Holder:
    """Nodes presented as one parent's children (for :meth:`_Walker.walk`)."""

    def __init__(self, nodes: list):
        self.children = nodes


def _inline_text(node) -> str:
    """One line of text for a heading or table cell (code in backticks, blocks joined by spaces)."""
    w = _Walker()
    w.walk(node)
    return " ".join(b.lstrip("\\") for b in w.result()).replace("\n", " ")


def _fenced(pre: Tag) -> str:
    body = pre.get_text().strip("\n")
    lang = ""
    code = pre.find("code")
    for cls in (code.get("class") if isinstance(code, Tag) else None) or pre.get("class") or []:
        if cls.startswith("language-"):
            lang = cls[len("language-") :]
            break
    fence = "```"
    while fence in body:
        fence += "`"
    return f"{fence}{lang}\n{body}\n{fence}"


def _rows(table: Tag) -> list[Tag]:
    """Rows of this table, not of tables nested in its cells."""
    return [tr for tr in table.find_all("tr") if tr.find_parent("table") is table]


def _table(table: Tag) -> str:
    rows = []
    header_idx = None
    caption = table.find("caption")
    for _i, tr in enumerate(_rows(table)):
        cells = [c for c in tr.find_all(["th", "td"]) if c.find_parent("tr") is tr]
        if not cells:
            continue
        texts = []
        for c in cells:
            t = _inline_text(c).replace("|", "\\|")
            span = str(c.get("colspan", "1")).strip()
            texts.extend([t] + [""] * ((min(int(span), 50) if span.isdigit() and int(span) > 0 else 1) - 1))
        if header_idx is None and (tr.find_parent("thead") is not None or all(c.name == "th" for c in cells)):
            header_idx = len(rows)
        rows.append(texts)
    if not rows:
        return ""
    if header_idx:  # a header row below data rows (rare): move it to the top
        rows.insert(0, rows.pop(header_idx))
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "| " + " | ".join(["---"] * width) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    out = "\n".join(lines)
    if caption is not None and _text(caption):
        out = _text(caption) + "\n\n" + out
    return out


def _item_lines(node: Tag, depth: int, marker: str) -> list[str]:
    """Lines of one list item: its text on the marker line, nested lists/code below it."""
    w = _Walker(depth + 1)
    w.walk(node)
    blocks = w.result()
    indent = "  " * depth
    text_parts: list[str] = []
    after: list[str] = []
    for b in blocks:
        if b.startswith("```"):
            after.append(b)  # fenced code stays at column 0 so the chunker keeps it whole
        elif re.match(r"^\s*(- |\d+\. )", b) or b.startswith("|"):
            after.append(b)
        elif b.startswith("#"):
            text_parts.append(b.lstrip("#").strip())
        else:
            text_parts.append(b.lstrip("\\"))
    lines = [f"{indent}{marker}{_join_blocks(text_parts)}".rstrip()] if text_parts or not after else []
    lines += after
    return lines


#: Words of a block that titles the blocks after it in one list item (``<li><p><b>Maximum
#: length</b></p><p>It is 10.</p></li>``): a short block without closing punctuation.
TITLE_WORDS = 8


def _join_blocks(parts: list[str]) -> str:
    """The blocks of one list item on one line. A block that titles the next (at most
    :data:`TITLE_WORDS` words, no closing punctuation) is joined with ": " (it reads as the item's
    term, "Maximum length: It is 10."), any other block without closing punctuation with ". ", so
    a title never runs into the sentence after it.

    >>> _join_blocks(["Maximum length", "It is 10 by default."])
    'Maximum length: It is 10 by default.'
    >>> _join_blocks(["Open settings.", "Then wait."])
    'Open settings. Then wait.'
    """
    parts = [p for p in parts if p]
    out = parts[0] if parts else ""
    for before, part in zip(parts, parts[1:]):
        if out.rstrip().endswith((".", "!", "?", ":", ";", ",")):
            out += " "
        else:
            out = out.rstrip() + (": " if len(before.split()) <= TITLE_WORDS else ". ")
        out += part
    return out


def _list(lst: Tag, depth: int) -> str:
    lines: list[str] = []
    ordered = lst.name == "ol"
    n = int(lst.get("start", 1)) if ordered and str(lst.get("start", "1")).lstrip("-").isdigit() else 1
    for child in lst.children:
        if isinstance(child, Tag) and child.name == "li":
            marker = f"{n}. " if ordered else "- "
            n += 1
            item = _item_lines(child, depth, marker)
            if item and item[0].strip() in ("-", f"{n - 1}."):
                item = item[1:]
            lines += item
        elif isinstance(child, Tag) and child.get_text(strip=True):
            # stray element directly in a list: keep its text as an item (an empty anchor
            # between items, ``</li><a name="x"></a><li>``, is no item)
            lines += _item_lines(child, depth, "- ")
        elif isinstance(child, NavigableString) and not isinstance(child, _SKIP_STRINGS) and child.strip():
            lines.append("  " * depth + "- " + " ".join(child.split()))
    return "\n".join(ln for ln in lines if ln.strip())


def _dl(dl: Tag, depth: int) -> str:
    """``- **term**: definition`` items; several ``dd`` of one term are joined with ``; ``."""
    lines: list[str] = []
    terms: list[str] = []
    defs: list[list[str]] = []

    def emit():
        if not terms and not defs:
            return
        head = " / ".join(terms)
        first: list[str] = []
        rest: list[str] = []
        for d in defs:
            if d and not first:
                first = d[:1]
                rest += d[1:]
            else:
                rest += d
        defn = first[0].strip() if first else ""
        indent = "  " * depth
        if head:
            lines.append(f"{indent}- **{head}**" + (f": {defn}" if defn else ""))
        elif defn:
            lines.append(f"{indent}- {defn}")
        lines.extend(rest)

    for child in dl.find_all(["dt", "dd"]):
        if child.find_parent("dl") is not dl:
            continue
        if child.name == "dt":
            if defs:
                emit()
                terms, defs = [], []
            t = _inline_text(child)
            if t:
                terms.append(t)
        else:
            item = _item_lines(child, depth, "")
            defs.append(item)
    emit()
    return "\n".join(ln for ln in lines if ln.strip())


def _main_roots(soup: BeautifulSoup) -> list[Tag]:
    main = soup.find("main") or soup.select_one("[role=main]")
    if main is not None:
        return [main]
    articles = [a for a in soup.find_all("article") if a.find_parent("article") is None]
    if articles:
        return articles
    return [soup.body or soup]


def _prepared(html: str) -> tuple[BeautifulSoup, dict[str, str]]:
    """The parsed page with boilerplate removed (see module docstring), and its title/meta values.
    An XHTML page is parsed as HTML without a printed warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        soup = BeautifulSoup(html, "lxml")
    meta: dict[str, str] = {}
    if soup.title is not None:
        t = " ".join(soup.title.get_text().split())
        if t:
            meta["title"] = t
    for tag in soup.find_all("meta"):
        name, content = tag.get("name"), tag.get("content")
        if name and content is not None:
            meta[name.lower()] = content
        elif str(tag.get("http-equiv", "")).lower() == "refresh" and content is not None:
            meta["http-equiv:refresh"] = str(content)
    for tag in soup.find_all(DROP_TAGS):
        tag.decompose()
    for sel in DROP_SELECTORS:
        for tag in soup.select(sel):
            tag.decompose()
    for tag in soup.find_all(style=_DISPLAY_NONE):
        tag.decompose()
    return soup, meta


def page_keys(html: str, name: str = "") -> set[str]:
    """Fingerprints of a page's short blocks, for the folder pass that finds blocks repeated
    across pages (:func:`citewise.text.furniture.repeated`), and, given the page's file ``name``,
    the keys naming it by its title and first heading (:func:`citewise.text.furniture.name_keys`)."""
    soup, meta = _prepared(html)
    keys = furniture.page_keys(soup)
    if name:
        heading = soup.find(("h1", "h2", "h3", "h4", "h5", "h6"))
        keys |= furniture.name_keys(name, [meta.get("title", ""), heading.get_text(" ") if heading else ""])
    _drop_navigation(soup, frozenset(), "")
    return keys | furniture.edge_keys(_content_blocks(soup))


def _drop_navigation(soup: BeautifulSoup, repeated: frozenset[str], source: str) -> None:
    """Remove link-dense blocks and blocks repeated across the folder (:mod:`citewise.text.furniture`),
    outermost first, telling :mod:`citewise.text.notes` what went and why."""
    stats = furniture.element_stats(soup)
    walk = furniture.blocks(soup)
    drop = None
    left: list[tuple[Tag, Tag | None]] = []  # (parent, previous element) of each dropped block
    while True:
        try:
            tag = walk.send(drop)
        except StopIteration:
            break
        why = ""
        if repeated and furniture.is_furniture(tag, stats, repeated):
            why = "furniture: repeated on most pages of the folder"
        else:
            why = furniture.link_dense(tag, stats, repeated)
        drop = bool(why)
        if why:
            cls = " ".join(tag.get("class") or [])
            if source:  # the folder pass (no source) only looks
                notes.dropped(source, f"<{tag.name}{' class=' + cls if cls else ''}>", why, tag.get_text(" "))
            left.append((tag.parent, tag.find_previous_sibling()))
            tag.decompose()
    _drop_titles(soup, left, source)


_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
#: Containers a navigation title is never looked for beyond: the page and its main content.
_ROOT_TAGS = ("html", "body", "main", "article", "[document]")


def _headings_only(tag: Tag) -> bool:
    """Whether every visible character of ``tag`` is inside a heading (or it has none)."""
    inside = "".join(h.get_text() for h in ([tag] if tag.name in _HEADINGS else tag.find_all(_HEADINGS)))
    return "".join(tag.get_text().split()) == "".join(inside.split())


def _drop_titles(soup: BeautifulSoup, left: list[tuple[Tag, Tag | None]], source: str) -> None:
    """Remove the headings that only titled navigation just dropped (``left``: the parent and
    previous element of each dropped block): the outermost container around a dropped block
    that now holds headings and nothing else (``<div><h2>Table of Contents</h2><div>`` + the
    list), or a heading right before a dropped block whose section is now empty (the next
    element with text is a heading of the same or a higher level, or there is none). The page's
    first heading is its own title and stays (a page that is only a menu keeps its name)."""
    first = soup.find(_HEADINGS)

    def gone(tag: Tag | None) -> bool:
        return tag is None or tag.decomposed or any(p.decomposed for p in tag.parents)

    for parent, prev in left:
        if gone(parent):
            continue
        top: Tag | None = None
        box: Tag | None = parent
        while box is not None and box.name not in _ROOT_TAGS and box.get("role") != "main" and _headings_only(box):
            top, box = box, box.parent
        title = top if top is not None and top.find(_HEADINGS) is not None else None
        if title is None and prev is not None and not gone(prev) and prev.name in _HEADINGS:
            nxt = prev.find_next_sibling()
            while nxt is not None and nxt.name not in _HEADINGS and not nxt.get_text(strip=True):
                nxt = nxt.find_next_sibling()
            if nxt is None or (nxt.name in _HEADINGS and int(nxt.name[1]) <= int(prev.name[1])):
                title = prev
        if title is not None and first is not None and (title is first or first in title.descendants):
            title = None
        if title is not None:
            if source:
                notes.dropped(
                    source,
                    f"<{title.name}>",
                    "navigation: the heading of navigation dropped below it",
                    title.get_text(" "),
                )
            title.decompose()


def html_to_markdown(html: str, repeated: frozenset[str] = frozenset(), source: str = "") -> tuple[str, dict[str, str]]:
    """Markdown-like text of an HTML page's main content and its ``<title>``/``<meta>`` values.

    See the module docstring for what is kept and how it is rendered. ``meta`` holds ``title``
    (from ``<title>``), every ``<meta name=... content=...>`` (names lowercased) and the content
    of a ``<meta http-equiv=refresh>`` as ``http-equiv:refresh`` (:func:`redirect_target`).
    ``repeated``: fingerprints of blocks repeated across the page's folder (dropped as
    furniture); ``source`` names the page in :mod:`citewise.text.notes`.
    """
    soup, meta = _prepared(html)
    _drop_navigation(soup, repeated, source)
    blocks = _content_blocks(soup)
    # a first or last block most pages of the folder share (a footer line without links)
    for end in (-1, 0):
        while blocks and repeated and furniture.edge_key(blocks[end], "last" if end else "first") in repeated:
            notes.dropped(
                source,
                f"{'last' if end else 'first'} block",
                "furniture: the same block ends (or starts) most pages of the folder",
                blocks[end],
            )
            blocks.pop(end)
    # a notice under the page's title most pages share ("This page is part of ... documentation.")
    while repeated:
        at = next(iter(furniture.top_blocks(blocks)), None)
        if at is None or furniture.top_key(blocks[at]) not in repeated:
            break
        notes.dropped(source, "top block", "furniture: the same notice opens most pages of the folder", blocks[at])
        blocks.pop(at)
    text = "\n\n".join(blocks)
    return (text + "\n") if text.strip() else "", meta


def _content_blocks(soup: BeautifulSoup) -> list[str]:
    """The Markdown-like blocks of the main content (page chrome removed from the tree)."""
    roots = _main_roots(soup)
    for tag in soup.find_all(PAGE_CHROME_TAGS):
        if not any(r.name in ("main", "article") or r.get("role") == "main" for r in tag.parents if isinstance(r, Tag)):
            tag.decompose()
    roots = [r for r in roots if r.parent is not None or r is soup]  # a root inside removed chrome is gone
    if not roots:
        roots = [soup.body or soup]
    blocks: list[str] = []
    for root in roots:
        w = _Walker()
        w.walk(root)
        blocks += w.result()
    if not blocks and soup.body is not None and roots != [soup.body]:  # an empty <main> (filled by script)
        w = _Walker()
        w.walk(soup.body)
        blocks = w.result()
    return blocks


#: A ``<meta http-equiv=refresh>`` content: a delay, then the URL after ``;`` or ``,`` and an
#: optional ``url=`` (WHATWG HTML, "shared declarative refresh steps").
#: Possessive quantifiers: each part takes what it can and never gives it back, so a content of
#: spaces that fails to match fails in linear time (greedy parts could split the spaces ~n^5 ways).
_REFRESH = re.compile(r"""^\s*+[\d.]*+\s*+[;,]?\s*+(?:url\s*=\s*+)?(?P<q>["']?)(?P<url>[^"']*+)(?P=q)\s*$""", re.I)


def redirect_target(meta: dict[str, str], page_name: str = "") -> str:
    """Where a page sends its reader at once: the URL of its ``<meta http-equiv=refresh>``
    (``meta["http-equiv:refresh"]`` from :func:`html_to_markdown`), or ``''`` when it has none or
    reloads itself (no URL, or one naming ``page_name``). Such a page is a redirect: its own text
    is a pointer to the page it names, never read."""
    m = _REFRESH.match(meta.get("http-equiv:refresh", ""))
    url = m.group("url").strip() if m else ""
    target = re.split(r"[?#]", url, maxsplit=1)[0].rsplit("/", 1)[-1]
    return url if url and target and target != page_name else ""


def first_heading(text: str) -> str:
    """The first ``#`` heading of a Markdown-like text ('' if none)."""
    m = re.search(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", text, re.M)
    return m.group(1).strip() if m else ""
