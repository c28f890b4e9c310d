"""Document text on the web page: Markdown rendered (markdown-it-py, CommonMark with tables;
raw HTML in a document is shown as text) and the result sanitised by an allow-list
(nh3, the Ammonia sanitiser: no script, style, event attributes or ``javascript:`` links), so
``**45 days**`` reads as bold and a pipe table as a table, and nothing in a document runs.

Answers keep their citation markers as numbered links (:func:`answer_html`), each to its own
sentence's span (:func:`citewise.answer.citations.marker_links`); a cited span in the source view
is marked text node by text node (:func:`mark_span`), so it may cross paragraphs and table cells.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import quote

from markupsafe import Markup, escape

#: Private-use characters standing in for a marker or a span boundary while Markdown is rendered
#: (text to markdown-it and nh3; swapped for HTML afterwards).
_OPEN, _CLOSE = "\ue000", "\ue001"
_SPAN_START, _SPAN_END = "\ue002", "\ue003"
_TOKEN = re.compile(f"{_OPEN}(\\d+){_CLOSE}")
_TAGS = {
    "p",
    "br",
    "strong",
    "em",
    "code",
    "pre",
    "ul",
    "ol",
    "li",
    "blockquote",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "a",
    "hr",
    "del",
    "s",
    "sup",
    "sub",
    "kbd",
}


@lru_cache(maxsize=1)
def _md():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").enable("strikethrough")


def sanitize(html: str) -> str:
    """``html`` with only the allow-listed tags and safe attributes (links: http, https, mailto
    and relative; ``rel="noopener noreferrer"`` added)."""
    import nh3

    return nh3.clean(
        html,
        tags=_TAGS,
        attributes={"a": {"href", "title"}, "th": {"align"}, "td": {"align"}},
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
    )


def markdown_html(text: str, inline: bool = False) -> Markup:
    """``text`` (Markdown) as sanitised HTML; ``inline``: without the paragraph around a single
    paragraph (a snippet, a sentence)."""
    html = sanitize(_md().render(text or ""))
    if inline:
        html = html.strip()
        if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
            html = html[3:-4]
    return Markup(html)


def doc_url(doc_id: str, start: int | None = None, end: int | None = None, full: bool = False) -> str:
    """URL of the source view of ``doc_id`` with the span ``[start, end)`` marked (``full``: the
    whole document, which the server must allow)."""
    params = [f"start={start}", f"end={end}"] if start is not None and end is not None else []
    params += ["full=1"] if full else []
    return (
        "/doc/"
        + quote(doc_id, safe="/@")
        + ("?" + "&".join(params) if params else "")
        + ("#cited" if start is not None and end is not None else "")
    )


def answer_html(text: str, citations: list[dict]) -> Markup:
    """An answer as sanitised HTML: its Markdown rendered, each ``[doc:ID]`` marker a numbered
    link (the source's place in ``citations``) to the source view at that marker's own
    sentence's span."""
    from citewise.answer.citations import marker_links

    links = marker_links(text, citations)
    out, pos = [], 0
    for i, m in enumerate(links):
        lo = text.rfind("[", 0, m["marker_start"])
        hi = text.find("]", m["marker_end"])
        lo = lo if lo >= 0 and lo >= pos else m["marker_start"]
        out.append(text[pos:lo] + f"{_OPEN}{i}{_CLOSE}")
        pos = hi + 1 if hi >= 0 and text[m["marker_end"] : hi].strip(" ,;") == "" else m["marker_end"]
    out.append(text[pos:])
    html = str(markdown_html("".join(out), inline=True))

    def link(mt: re.Match) -> str:
        m = links[int(mt.group(1))]
        return str(
            Markup('<a class="cite" href="{}" title="{}" data-doc="{}">[{}]</a>').format(
                doc_url(m["doc_id"], m["start"], m["end"]), m["title"] or m["doc_id"], m["doc_id"], m["number"]
            )
        )

    return Markup(_TOKEN.sub(link, html))


def mark_span(text: str, start: int, end: int) -> Markup:
    """``text`` (Markdown) rendered, with the characters ``[start, end)`` marked: every text run
    inside the span is wrapped in ``<mark class="cited">``, the first with ``id="cited"``."""
    if not (0 <= start <= end <= len(text)) or start == end:
        return markdown_html(text)
    html = str(markdown_html(text[:start] + _SPAN_START + text[start:end] + _SPAN_END + text[end:]))
    out, inside, first = [], False, True
    for part in re.split(r"(<[^>]*>)", html):
        if part.startswith("<"):
            out.append(part)
            continue
        pieces = re.split(f"([{_SPAN_START}{_SPAN_END}])", part)
        for p in pieces:
            if p == _SPAN_START:
                inside = True
            elif p == _SPAN_END:
                inside = False
            elif p:
                if inside and p.strip():
                    out.append(('<mark class="cited" id="cited">' if first else '<mark class="cited">') + p + "</mark>")
                    first = False
                else:
                    out.append(p)
    return Markup("".join(out))


def plain(text: str) -> str:
    """The visible text of rendered Markdown (tags dropped), for comparisons in tests."""
    import html as _html

    return _html.unescape(re.sub(r"<[^>]+>", "", str(markdown_html(text))))


__all__ = ["answer_html", "doc_url", "escape", "mark_span", "markdown_html", "plain", "sanitize"]
