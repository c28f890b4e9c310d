"""Plain-text files."""

from __future__ import annotations

from pathlib import Path

from citewise.core import Document
from citewise.text.loaders.common import doc_id_for, read_text, sha256_hex
from citewise.text.loaders.front_matter import check_unread_front_matter


def load_text(path: Path, root: Path) -> Document:
    """Load a plain-text file; the title is its first non-blank line."""
    raw, text = read_text(path)
    check_unread_front_matter(text, str(path), "text")
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), path.stem)
    return Document(
        doc_id=doc_id_for(path, root),
        title=first[:200],
        text=text,
        source=str(path),
        format="text",
        content_hash=sha256_hex(raw),
    )
