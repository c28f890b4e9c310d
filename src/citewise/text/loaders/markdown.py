"""Markdown files (CommonMark; front matter optional). Blocks that only link to the document's
own sections (a table of contents, "back to top" lines) are navigation: blanked in the text
(:mod:`citewise.text.md_nav`), every other character at its offset in the file."""

from __future__ import annotations

from pathlib import Path

from citewise.core import Document, InputError
from citewise.text import notes
from citewise.text.loaders.common import content_hash, doc_id_for, read_text
from citewise.text.md_nav import blank, fragment_navigation
from citewise.text.loaders.front_matter import (
    HISTORY_SEP,
    MAX_ID_CHARS,
    MAX_TITLE_CHARS,
    MAX_VERSION_CHARS,
    _front_matter_date,
    _front_matter_groups,
    _key_line,
    _scalar_text,
    check_front_matter_keys,
    front_matter_metadata,
    parse_front_matter,
)


def load_markdown(path: Path, root: Path) -> Document:
    """Load a Markdown file (front matter optional; see module docstring).

    Every front matter key is type-checked: ``id``, ``title`` and ``version`` are one line of
    text with a length cap, ``id`` may not contain ``@`` (reserved for history ids),
    ``updated``/``effective`` are real ISO dates, ``permissions`` non-blank group names. Every
    other key is kept as metadata; a misspelled ``permissions`` key is an error.
    """
    raw, text = read_text(path)
    source = str(path)
    meta, body, base = parse_front_matter(text, source)
    block = text[:base]
    warnings = check_front_matter_keys(meta, block, source)
    line = lambda key: _key_line(block, key, 1)  # noqa: E731
    doc_id = _scalar_text(meta, "id", source, line("id"), MAX_ID_CHARS)
    if doc_id is not None and not doc_id:
        raise InputError(source, "front matter 'id' must be a non-empty string", line("id"))
    if doc_id and HISTORY_SEP in doc_id:
        raise InputError(
            source,
            f"front matter 'id' {doc_id!r} contains '{HISTORY_SEP}', which is reserved for "
            "older versions kept as history (id@version)",
            line("id"),
        )
    if doc_id and (doc_id.startswith("/") or ".." in doc_id.split("/") or "." in doc_id.split("/")):
        # ids are shown as paths and linked as /doc/ID: "../../etc/passwd" is no document's name
        raise InputError(
            source,
            f"front matter 'id' {doc_id!r} has an absolute or '.'/'..' path part; "
            "use a relative name such as 'policies/travel'",
            line("id"),
        )
    title = _scalar_text(meta, "title", source, line("title"), MAX_TITLE_CHARS)
    if not title:
        from citewise.text.blocks import parse_blocks

        h1 = next((b.title for b in parse_blocks(body) if b.kind == "heading" and b.level == 1), "")
        title = h1 or path.stem.replace("-", " ").replace("_", " ")
    version = _scalar_text(meta, "version", source, line("version"), MAX_VERSION_CHARS) or ""
    updated = _front_matter_date(meta, "updated", source, line("updated"))
    effective = _front_matter_date(meta, "effective", source, line("effective"))
    groups = _front_matter_groups(meta, source, line("permissions"))
    metadata = front_matter_metadata(meta, source)
    if not body.strip():
        raise InputError(source, "no text after the front matter")
    nav = fragment_navigation(body)
    if nav:
        first_line = text.count("\n", 0, base)
        for sp in nav:
            lines = (sp.first_line + first_line, sp.last_line + first_line)
            where = f"lines {lines[0]}-{lines[1]}" if lines[1] > lines[0] else f"line {lines[0]}"
            notes.dropped(source, where, sp.reason, body[sp.start : sp.end])
        body = blank(body, nav)
    return Document(
        doc_id=doc_id if doc_id else doc_id_for(path, root),
        title=title[:MAX_TITLE_CHARS].strip(),
        text=body,
        source=source,
        format="markdown",
        content_hash=content_hash(raw, path.suffix),
        version=version,
        updated=updated,
        effective=effective,
        groups=groups,
        offset_base=base,
        warnings=tuple(warnings),
        metadata=metadata,
    )
