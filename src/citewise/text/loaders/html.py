"""HTML pages: main content as Markdown-like text (:mod:`citewise.text.html`)."""

from __future__ import annotations

from pathlib import Path

from citewise.core import Document, InputError
from citewise.text.loaders.common import _H1, _parse_date, _parse_groups, doc_id_for, read_text, sha256_hex
from citewise.text.loaders.front_matter import check_unread_front_matter


def html_to_markdown(html: str) -> tuple[str, dict[str, str]]:
    """Markdown-like text of an HTML page's main content and its ``<title>``/``<meta>`` values
    (rules and the choice of extractor: :mod:`citewise.text.html`)."""
    from citewise.text.html import html_to_markdown as convert

    return convert(html)


def load_html(path: Path, root: Path) -> Document:
    """Load an HTML page; metadata from ``<title>`` and ``<meta name=id|title|version|updated|permissions>``."""
    raw, text = read_text(path, html=True)
    source = str(path)
    check_unread_front_matter(text, source, "html")
    body, meta = html_to_markdown(text)
    if not body.strip():
        raise InputError(source, "HTML page has no text content")
    h1 = _H1.search(body)
    title = meta.get("title") or (h1.group(1).strip() if h1 else path.stem)
    return Document(
        doc_id=meta.get("id") or doc_id_for(path, root),
        title=title,
        text=body,
        source=source,
        format="html",
        content_hash=sha256_hex(raw),
        version=meta.get("version", ""),
        updated=_parse_date(meta["updated"], source, None, "updated") if meta.get("updated") else None,
        effective=_parse_date(meta["effective"], source, None, "effective") if meta.get("effective") else None,
        groups=_parse_groups(meta.get("permissions"), source, None),
    )
