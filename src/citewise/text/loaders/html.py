"""HTML pages: main content as Markdown-like text (:mod:`citewise.text.html`), navigation and the
blocks a folder's pages all repeat left out (:mod:`citewise.text.furniture`). A redirect page (a
``<meta http-equiv=refresh>`` naming another page) is navigation as a whole: skipped with a line."""

from __future__ import annotations

from pathlib import Path

from citewise.core import Document, InputError, InputWarning
from citewise.text import notes
from citewise.text.loaders.common import (
    HTML_EXT,
    _H1,
    _parse_date,
    _parse_groups,
    content_hash,
    doc_id_for,
    read_text,
)
from citewise.text.loaders.front_matter import check_unread_front_matter


def html_to_markdown(html: str, repeated: frozenset[str] = frozenset(), source: str = "") -> tuple[str, dict[str, str]]:
    """Markdown-like text of an HTML page's main content and its ``<title>``/``<meta>`` values
    (rules and the choice of extractor: :mod:`citewise.text.html`)."""
    from citewise.text.html import html_to_markdown as convert

    return convert(html, repeated, source)


def folder_furniture(paths: list[Path]) -> dict[Path, frozenset[str]]:
    """The ingest-time pass over HTML pages: for each folder, the fingerprints of blocks repeated
    on most of its pages (:func:`citewise.text.furniture.repeated`) and the names its pages go by
    (:func:`citewise.text.furniture.name_keys`), keyed by folder. A page that cannot be read is
    left out of the count (its own load reports it)."""
    from citewise.text.furniture import REPEAT_MIN_PAGES, repeated
    from citewise.text.html import page_keys

    by_folder: dict[Path, list[Path]] = {}
    for p in paths:
        if p.suffix.lower() in HTML_EXT:
            by_folder.setdefault(p.parent, []).append(p)
    out: dict[Path, frozenset[str]] = {}
    for folder, pages in by_folder.items():
        if len(pages) < REPEAT_MIN_PAGES:
            continue
        keys = []
        for p in pages:
            try:
                keys.append(page_keys(read_text(p, html=True)[1], p.name))
            except Exception:  # noqa: BLE001 - an unreadable page is reported when it is loaded
                continue
        names = {k for page in keys for k in page if k.startswith("T:")}
        out[folder] = repeated([page - names for page in keys]) | names
    return out


def load_html(path: Path, root: Path, repeated: frozenset[str] = frozenset()) -> Document:
    """Load an HTML page; metadata from ``<title>`` and ``<meta name=id|title|version|updated|permissions>``.

    ``repeated``: fingerprints of blocks repeated across the page's folder (:func:`folder_furniture`),
    dropped as furniture.

    Raises:
        InputWarning: the page is a redirect (:func:`citewise.text.html.redirect_target`): it has
            nothing of its own to index.
        InputError: the page cannot be read or has no text.
    """
    from citewise.text.html import redirect_target

    raw, text = read_text(path, html=True)
    source = str(path)
    check_unread_front_matter(text, source, "html")
    body, meta = html_to_markdown(text, repeated, source)
    target = redirect_target(meta, path.name)
    if target:
        notes.dropped(source, "<meta http-equiv=refresh>", f"navigation: a redirect page to {target}", body)
        raise InputWarning(source, f"a redirect page (meta refresh to {target}); nothing of its own to index, skipped")
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
        content_hash=content_hash(raw, path.suffix),
        version=meta.get("version", ""),
        updated=_parse_date(meta["updated"], source, None, "updated") if meta.get("updated") else None,
        effective=_parse_date(meta["effective"], source, None, "effective") if meta.get("effective") else None,
        groups=_parse_groups(meta.get("permissions"), source, None),
    )
