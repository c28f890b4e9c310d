"""Loaders: files (Markdown, HTML, plain text) and BEIR corpus JSONL into Documents.

Every loader either returns a Document or raises :class:`citewise.core.InputError` naming the file
(and line, where there is one): unreadable, binary, not UTF-8, empty, bad front matter. A folder
walk yields one result per file so one bad file never stops the rest.

Markdown front matter (YAML between ``---`` lines at the top of the file) may set:
``id`` (str), ``title`` (str), ``version`` (str or number), ``updated`` (ISO date),
``permissions`` (list of group names). Unknown keys are kept out of the index and ignored.
HTML may set the same through ``<meta name="..." content="...">`` (permissions comma-separated).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Iterator

import yaml

from citewise.core import Document, InputError

MARKDOWN_EXT = {".md", ".markdown"}
HTML_EXT = {".html", ".htm"}
TEXT_EXT = {".txt", ".text"}
SUPPORTED_EXT = MARKDOWN_EXT | HTML_EXT | TEXT_EXT

_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data`` (the document content hash)."""
    return hashlib.sha256(data).hexdigest()


def doc_id_for(path: Path, root: Path) -> str:
    """Document id of a file: its path relative to ``root`` without extension, ``/``-separated.

    >>> doc_id_for(Path("/c/billing/refund-team.md"), Path("/c"))
    'billing/refund-team'
    """
    rel = path.relative_to(root).with_suffix("")
    return rel.as_posix()


def read_text(path: Path) -> tuple[bytes, str]:
    """Raw bytes and decoded UTF-8 text of a file.

    Raises:
        InputError: unreadable, binary (NUL byte), not UTF-8, or empty.
    """
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InputError(str(path), f"cannot read file: {e.strerror or e}") from None
    if b"\x00" in raw[:8192]:
        raise InputError(str(path), "binary file (NUL bytes), not text")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise InputError(
            str(path), f"not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})", line
        ) from None
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


def _key_line(block: str, key: str, base_line: int) -> int:
    for i, line in enumerate(block.splitlines()):
        if line.lstrip().startswith(f"{key}:"):
            return base_line + i
    return base_line


def parse_front_matter(text: str, source: str) -> tuple[dict, str, int]:
    """Split YAML front matter from a Markdown text.

    Returns:
        (metadata dict, body text, character offset of the body in ``text``).

    Raises:
        InputError: the YAML does not parse (with its line in the file) or is not a mapping.
    """
    m = _FRONT.match(text)
    if not m:
        if text.startswith("---\n") or text.startswith("---\r\n"):
            raise InputError(source, "front matter is not closed by a '---' line", 1)
        return {}, text, 0
    block = m.group(1) or ""
    try:
        meta = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        if "mapping values are not allowed" in problem:
            problem += " (quote a value that contains ': ', e.g. title: \"E-1004: Card declined\")"
        raise InputError(source, f"bad front matter: {problem}", line) from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise InputError(source, "bad front matter: expected 'key: value' lines", 2)
    return meta, text[m.end():], m.end()


def load_markdown(path: Path, root: Path) -> Document:
    """Load a Markdown file (front matter optional; see module docstring)."""
    raw, text = read_text(path)
    source = str(path)
    meta, body, base = parse_front_matter(text, source)
    block = text[:base]
    doc_id = meta.get("id")
    if doc_id is not None and (not isinstance(doc_id, (str, int)) or not str(doc_id).strip()):
        raise InputError(source, f"front matter 'id' must be a non-empty string, got {doc_id!r}", _key_line(block, "id", 1))
    title = meta.get("title")
    if title is not None and not isinstance(title, (str, int, float)):
        raise InputError(source, f"front matter 'title' must be text, got {title!r}", _key_line(block, "title", 1))
    if not title:
        h1 = _H1.search(body)
        title = h1.group(1).strip() if h1 else path.stem.replace("-", " ").replace("_", " ")
    updated = meta.get("updated")
    if not body.strip():
        raise InputError(source, "no text after the front matter")
    return Document(
        doc_id=str(doc_id).strip() if doc_id is not None else doc_id_for(path, root),
        title=str(title).strip(),
        text=body,
        source=source,
        format="markdown",
        content_hash=sha256_hex(raw),
        version=str(meta.get("version", "") or ""),
        updated=_parse_date(updated, source, _key_line(block, "updated", 1), "updated") if updated else None,
        groups=_parse_groups(meta.get("permissions"), source, _key_line(block, "permissions", 1)),
        offset_base=base,
    )


_BLOCK_TAGS = ["h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "table", "blockquote", "dt", "dd"]


def html_to_markdown(html: str) -> tuple[str, dict[str, str]]:
    """Readable Markdown-like text of an HTML page and its ``<title>``/``<meta>`` values.

    Headings become ``#`` lines (so the chunker splits there), tables become ``|`` rows, ``pre``
    becomes a fenced block. Scripts, styles and navigation are dropped.
    """
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    meta: dict[str, str] = {}
    if soup.title and soup.title.string:
        meta["title"] = soup.title.string.strip()
    for tag in soup.find_all("meta"):
        name, content = tag.get("name"), tag.get("content")
        if name and content is not None:
            meta[name.lower()] = content
    for tag in soup(["script", "style", "nav", "noscript", "template"]):
        tag.decompose()
    parts: list[str] = []
    for el in soup.find_all(_BLOCK_TAGS):
        if el.find_parent(_BLOCK_TAGS):
            continue  # nested: its text is taken with the outer block
        name = el.name
        if name in ("h1", "h2", "h3", "h4", "h5", "h6"):
            txt = " ".join(el.get_text(" ").split())
            if txt:
                parts.append("#" * int(name[1]) + " " + txt)
        elif name == "pre":
            parts.append("```\n" + el.get_text().strip("\n") + "\n```")
        elif name == "table":
            rows = []
            for tr in el.find_all("tr"):
                cells = [" ".join(c.get_text(" ").split()) for c in tr.find_all(["th", "td"])]
                rows.append("| " + " | ".join(cells) + " |")
            if rows:
                parts.append("\n".join(rows))
        else:
            txt = " ".join(el.get_text(" ").split())
            if txt:
                parts.append(("- " if name == "li" else "") + txt)
    if not parts:  # no block markup: fall back to the page's text
        body = soup.body or soup
        txt = "\n\n".join(p.strip() for p in body.get_text("\n").split("\n\n") if p.strip())
        if txt:
            parts.append(txt)
    return "\n\n".join(parts) + "\n", meta


def load_html(path: Path, root: Path) -> Document:
    """Load an HTML page; metadata from ``<title>`` and ``<meta name=id|title|version|updated|permissions>``."""
    raw, text = read_text(path)
    source = str(path)
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
        groups=_parse_groups(meta.get("permissions"), source, None),
    )


def load_text(path: Path, root: Path) -> Document:
    """Load a plain-text file; the title is its first non-blank line."""
    raw, text = read_text(path)
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), path.stem)
    return Document(
        doc_id=doc_id_for(path, root),
        title=first[:200],
        text=text,
        source=str(path),
        format="text",
        content_hash=sha256_hex(raw),
    )


def load_file(path: Path, root: Path) -> Document:
    """Load one file by its extension.

    Raises:
        InputError: unsupported extension, or any loader error.
    """
    ext = path.suffix.lower()
    if ext in MARKDOWN_EXT:
        return load_markdown(path, root)
    if ext in HTML_EXT:
        return load_html(path, root)
    if ext in TEXT_EXT:
        return load_text(path, root)
    supported = ", ".join(sorted(SUPPORTED_EXT))
    raise InputError(str(path), f"unsupported file type '{ext or '(none)'}' (supported: {supported})")


def iter_files(root: Path) -> list[Path]:
    """Files below ``root`` in sorted order, skipping hidden files and folders."""
    if root.is_file():
        return [root]
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in sorted(filenames):
            if not f.startswith("."):
                out.append(Path(dirpath) / f)
    return out


def load_folder(root: Path) -> Iterator[Document | InputError]:
    """Load every file below ``root``; yields a Document or the InputError for each file.

    Raises:
        InputError: ``root`` does not exist.
    """
    root = Path(root)
    if not root.exists():
        raise InputError(str(root), "no such file or folder")
    base = root.parent if root.is_file() else root
    for path in iter_files(root):
        try:
            yield load_file(path, base)
        except InputError as e:
            yield e


def load_beir_corpus(path: Path) -> Iterator[Document]:
    """Documents of a BEIR ``corpus.jsonl`` (``{"_id", "title", "text"}`` per line).

    The document text is the BEIR text; the title is kept separately (and prepended to the
    indexed text by the chunker's heading path, as BEIR's title+text convention does).

    Raises:
        InputError: a line that is not JSON or lacks ``_id``, naming the line.
    """
    path = Path(path)
    source = str(path)
    try:
        fh = path.open("rb")
    except OSError as e:
        raise InputError(source, f"cannot read file: {e.strerror or e}") from None
    with fh:
        for n, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise InputError(source, f"not a JSON object: {e}", n) from None
            if not isinstance(row, dict) or "_id" not in row:
                raise InputError(source, "missing '_id'", n)
            title = str(row.get("title") or "")
            text = str(row.get("text") or "")
            yield Document(
                doc_id=str(row["_id"]),
                title=title,
                text=text if text.strip() else title,
                source=f"{source}:{n}",
                format="beir",
                content_hash=sha256_hex(raw.strip()),
            )
