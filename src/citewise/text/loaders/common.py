"""Shared pieces of the loaders: supported extensions, reading and decoding files, content
hashes (with the loader versions mixed in), document ids, and one-line error texts."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from pathlib import Path

from citewise.core import InputError

MARKDOWN_EXT = {".md", ".markdown"}
HTML_EXT = {".html", ".htm"}
TEXT_EXT = {".txt", ".text"}
PDF_EXT = {".pdf"}
DOCX_EXT = {".docx"}
RST_EXT = {".rst"}
SUPPORTED_EXT = MARKDOWN_EXT | HTML_EXT | TEXT_EXT | RST_EXT | PDF_EXT | DOCX_EXT

_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data`` (the document content hash)."""
    return hashlib.sha256(data).hexdigest()


#: Version of a loader whose text (or chunks) for the same file bytes changed (PDF 2: monospace
#: lines became fenced code blocks; 3: contents and index pages are dropped whole; Markdown 2: an
#: HTML ``<table>`` in it is chunked between rows, its header row repeated, and read as table rows;
#: 3: its HTML markup tags are not embedded or indexed, :func:`citewise.core.without_markup`;
#: PDF 4: a term whose key binding is a bracket, ``complete-into-braces (M-{)``, is a term;
#: every format's next version: the chunker reads the text with a CommonMark parser (setext
#: headings, lists, indented code), plain text gets headings and loses its tables of contents,
#: HTML loses navigation and its folder's repeated blocks, PDF its page furniture; then every
#: format's next: a chunk starting inside a hanging-indent entry's body repeats its term lines;
#: and the next: an oversized indented block is cut at its blank lines, not at any line; HTML 6:
#: an empty element between list items is no item, an item's title paragraph reads as its term;
#: plain text 8: an adorned title may open with inline markup (````ui```` over ``------``), a
#: paragraph of C-like code lines is a code block, upper-case Roman section lines are headings;
#: HTML 8: bold text or an anchor alone between ``<br>``s in running text is a heading, and a
#: notice under the title that most pages of the folder share word for word is furniture;
#: HTML 10: a paragraph that is an option's bold synopsis, a line break, then its description,
#: is that option's entry).
#: It is mixed into that format's content hash (:func:`content_hash`), so the next ingest re-parses
#: and re-chunks files the old version read, instead of keeping their old chunks because the bytes
#: did not change. Formats absent here hash the bytes.
LOADER_VERSIONS = {
    ".pdf": "11",
    ".md": "7",
    ".markdown": "7",
    ".html": "10",
    ".htm": "10",
    ".txt": "10",
    ".text": "10",
    ".rst": "3",
    ".docx": "4",
}


def content_hash(raw: bytes, suffix: str) -> str:
    """The content hash of a source file's bytes (sha256 hex): the bytes alone, or for a format in
    :data:`LOADER_VERSIONS` (by file suffix, e.g. ``".pdf"``) the bytes and that loader's version."""
    version = LOADER_VERSIONS.get(suffix.lower())
    if version is None:
        return sha256_hex(raw)
    return sha256_hex(raw + b"\0citewise-loader:" + suffix.lower().encode() + b":" + version.encode())


def doc_id_for(path: Path, root: Path) -> str:
    """Document id of a file: its path relative to ``root`` without extension, ``/``-separated.

    >>> doc_id_for(Path("/c/billing/refund-team.md"), Path("/c"))
    'billing/refund-team'
    """
    rel = path.relative_to(root).with_suffix("")
    return rel.as_posix()


def _utf16_32_bom(raw: bytes) -> str:
    """The codec named by a UTF-32 / UTF-16 byte order mark at the start of ``raw``, else ''."""
    if raw.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32"
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    return ""


#: An HTML page's declared encoding in its first 2 KB: ``<meta charset="...">`` or the
#: ``http-equiv="Content-Type"`` form (WHATWG HTML, "prescan a byte stream to determine its encoding").
_HTML_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([A-Za-z0-9._:-]+)", re.I)


def read_text(path: Path, html: bool = False) -> tuple[bytes, str]:
    """Raw bytes and decoded text of a file: UTF-8, or UTF-16/UTF-32 when the file starts with
    their byte order mark (Windows editors save "Unicode" text that way); with ``html``, a page
    that is not UTF-8 but declares its encoding in a ``<meta>`` tag (``iso-8859-1``,
    ``windows-1252``, ...) is decoded with it.

    Raises:
        InputError: unreadable, binary (NUL byte), not UTF-8 (nor its declared encoding), or empty.
    """
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InputError(str(path), f"cannot read file: {e.strerror or e}") from None
    bom = _utf16_32_bom(raw)
    if bom:
        try:
            text = raw.decode(bom)
        except UnicodeDecodeError as e:
            raise InputError(
                str(path),
                f"bad {bom.upper()} text (starts with a {bom.upper()} byte order mark; "
                f"undecodable bytes at offset {e.start})",
            ) from None
        if "\x00" in text:
            raise InputError(str(path), f"{bom.upper()} text contains NUL characters; not a text document")
        if not text.strip():
            raise InputError(str(path), "empty file")
        return raw, text
    if b"\x00" in raw[:8192]:
        raise InputError(str(path), "binary file (NUL bytes), not text")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        declared = _HTML_CHARSET.search(raw[:2048]) if html else None
        if declared is not None:
            import codecs

            name = declared.group(1).decode("ascii", "replace")
            try:
                codecs.lookup(name)
                text = raw.decode(name)
            except (LookupError, UnicodeDecodeError):
                text = ""
            if text.strip():
                return raw, text
        line = raw[: e.start].count(b"\n") + 1
        raise InputError(str(path), f"not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})", line) from None
    if not text.strip():
        raise InputError(str(path), "empty file")
    return raw, text


def _parse_date(value, source: str, line: int | None, key: str) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip()[:10])
        except ValueError:
            pass
    raise InputError(source, f"front matter '{key}' must be an ISO date (YYYY-MM-DD), got {value!r}", line)


def _parse_groups(value, source: str, line: int | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [g for g in re.split(r"[,\s]+", value) if g]
    if not isinstance(value, list) or not all(isinstance(g, (str, int)) for g in value):
        raise InputError(source, f"front matter 'permissions' must be a list of group names, got {value!r}", line)
    groups = tuple(sorted({str(g).strip() for g in value if str(g).strip()}))
    return groups


def _read_bytes(path: Path) -> bytes:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InputError(str(path), f"cannot read file: {e.strerror or e}") from None
    if not raw.strip():
        raise InputError(str(path), "empty file")
    return raw


def _one_line(e: Exception) -> str:
    """An exception as one short line: ``Type: message`` (whitespace collapsed, ≤ 160 chars)."""
    msg = " ".join(str(e).split())
    return f"{type(e).__name__}: {msg}"[:160] if msg else type(e).__name__


def _norm(s: str) -> str:
    return " ".join(s.split()).casefold()
