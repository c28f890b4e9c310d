"""Plain-text files: headings from underlines, overlines and section numbers, tables of contents
dropped (:mod:`citewise.text.plain`)."""

from __future__ import annotations

from pathlib import Path

from citewise.core import Document, InputError
from citewise.text import notes
from citewise.text.loaders.common import content_hash, doc_id_for, read_text
from citewise.text.loaders.front_matter import check_unread_front_matter
from citewise.text.plain import to_markdown


def load_text(path: Path, root: Path) -> Document:
    """Load a plain-text file as Markdown-like text (:func:`citewise.text.plain.to_markdown`); the
    title is its opening heading, else its first non-blank line.

    Raises:
        InputError: unreadable or empty, a front-matter block naming permissions, or no text but
            a table of contents.
    """
    raw, text = read_text(path)
    source = str(path)
    check_unread_front_matter(text, source, "text")
    body, title, dropped = to_markdown(text)
    for first, last, why, start in dropped:
        notes.dropped(source, f"lines {first}-{last}" if last > first else f"line {first}", why, start)
    if not body.strip():
        raise InputError(source, "no text besides a table of contents")
    return Document(
        doc_id=doc_id_for(path, root),
        title=title or path.stem,
        text=body,
        source=source,
        format="text",
        content_hash=content_hash(raw, path.suffix),
    )
