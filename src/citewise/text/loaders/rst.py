"""reStructuredText files, Sphinx sources included (docutils: :mod:`citewise.text.rst`)."""

from __future__ import annotations

from pathlib import Path

from citewise.core import Document, InputError
from citewise.text import notes
from citewise.text.loaders.common import _one_line, content_hash, doc_id_for, read_text
from citewise.text.loaders.front_matter import check_unread_front_matter


def load_rst(path: Path, root: Path) -> Document:
    """Load a reStructuredText file as Markdown-like text; the title is the document title
    (docutils' lone top section), else the file name.

    Raises:
        InputError: unreadable or empty, a front-matter block naming permissions, a document
            docutils cannot read at all, or one without text.
    """
    from citewise.text.rst import rst_to_markdown

    raw, text = read_text(path)
    source = str(path)
    check_unread_front_matter(text, source, "text")
    try:
        body, title, found = rst_to_markdown(text, source)
    except RecursionError:
        raise InputError(source, "reStructuredText nested too deeply") from None
    except Exception as e:  # docutils raises on input it cannot read at all; that file's error
        raise InputError(source, f"not readable as reStructuredText ({_one_line(e)})") from None
    for line, what in found:
        notes.dropped(source, f"line {line}" if line else "", what)
    if not body.strip():
        raise InputError(source, "reStructuredText file has no text")
    return Document(
        doc_id=doc_id_for(path, root),
        title=title or path.stem.replace("-", " ").replace("_", " "),
        text=body,
        source=source,
        format="rst",
        content_hash=content_hash(raw, path.suffix),
    )
