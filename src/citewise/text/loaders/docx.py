"""Word (DOCX) files (python-docx)."""

from __future__ import annotations

import io
import re
from pathlib import Path

from citewise.core import Document, InputError
from citewise.text.loaders.common import _H1, _one_line, _read_bytes, content_hash, doc_id_for


def _cell_text(cell, depth: int = 0) -> str:
    """The text of a table cell, a table nested in it included (its rows as ``a / b; c / d``).
    python-docx's ``cell.text`` reads the cell's paragraphs only: a nested table's text was lost
    without a word (break-it trial)."""
    from docx.table import Table

    bits = []
    for block in cell.iter_inner_content():
        if isinstance(block, Table):
            if depth < 5:
                rows = [" / ".join(t for t in (_cell_text(c, depth + 1) for c in row.cells) if t) for row in block.rows]
                bits.append("; ".join(r for r in rows if r))
        else:
            bits.append(block.text)
    return " ".join(" ".join(bits).split())


def docx_to_text(doc) -> tuple[str, str]:
    """Markdown-like text of a python-docx Document and its ``Title``-styled paragraph ('' if none)."""
    from docx.table import Table

    parts: list[str] = []
    title = ""
    for block in doc.iter_inner_content():
        if isinstance(block, Table):
            rows = []
            for row in block.rows:
                cells, last = [], None
                for cell in row.cells:
                    if cell._tc is last:  # a merged cell repeats; keep it once
                        continue
                    last = cell._tc
                    cells.append(_cell_text(cell).replace("|", "\\|"))
                rows.append("| " + " | ".join(cells) + " |")
            if rows:
                parts.append("\n".join(rows))
            continue
        txt = " ".join(block.text.split())
        if not txt:
            continue
        style = (block.style.name if block.style is not None else "") or ""
        m = re.fullmatch(r"Heading (\d)", style)
        if m:
            parts.append("#" * min(int(m.group(1)), 6) + " " + txt)
        elif style == "Title":
            title = title or txt
            parts.append("# " + txt)
        elif style.startswith("List"):
            parts.append("- " + txt)
        else:
            parts.append(txt)
    return "\n\n".join(parts) + "\n", title


def load_docx(path: Path, root: Path) -> Document:
    """Load a Word document (see module docstring).

    Raises:
        InputError: not a DOCX (zip) file, malformed, or without text.
    """
    raw = _read_bytes(path)
    source = str(path)
    if not raw.startswith(b"PK"):
        raise InputError(source, "not a DOCX file (not a zip package)")
    try:
        import docx

        d = docx.Document(io.BytesIO(raw))
        text, styled_title = docx_to_text(d)
        props = d.core_properties
        meta_title, version = (props.title or "").strip(), (props.version or "").strip()
    except Exception as e:  # zipfile, lxml and python-docx errors on malformed files: bad input
        raise InputError(source, f"not a readable DOCX ({_one_line(e)})") from None
    if not text.strip():
        raise InputError(source, "DOCX has no text")
    h1 = _H1.search(text)
    title = meta_title or styled_title or (h1.group(1).strip() if h1 else path.stem)
    return Document(
        doc_id=doc_id_for(path, root),
        title=title,
        text=text,
        source=source,
        format="docx",
        content_hash=content_hash(raw, path.suffix),
        version=version,
    )
