"""Loaders: files (Markdown, HTML, plain text, PDF, DOCX) and BEIR corpus JSONL into Documents.

Every loader either returns a Document or raises :class:`citewise.core.InputError` naming the file
(and line, where there is one): unreadable, binary, not UTF-8, empty, bad front matter. A folder
walk yields one result per file so one bad file never stops the rest.

Markdown front matter (YAML between ``---`` lines at the top of the file) may set:
``id`` (str), ``title`` (str), ``version`` (str or number), ``updated`` (ISO date),
``effective`` (ISO date from which the document is in force), ``permissions`` (list of group
names). Unknown keys are kept out of the index and ignored.
HTML may set the same through ``<meta name="..." content="...">`` (permissions comma-separated).

PDF (pypdf, text layer only): pages are joined with a blank line and ``Document.pages`` records
the character offset where each page starts, so a chunk's offsets map to a page range. Outline
(bookmark) entries become ``#`` headings (level = outline depth) on the page they point to. A PDF
without a text layer (a scan) is an error: OCR it first.
DOCX (python-docx): ``Heading 1..9`` paragraphs become ``#``..``######`` headings, ``Title`` the
title, list styles ``- `` items and tables ``| a | b |`` rows, in body order. Title and version
come from the document properties when set. PDF and DOCX carry no permissions of their own: use
a policy file (``citewise.policy``) or the index's default permission.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import logging
import os
import re
from pathlib import Path
from typing import Iterator

import yaml

from citewise.core import Document, InputError

MARKDOWN_EXT = {".md", ".markdown"}
HTML_EXT = {".html", ".htm"}
TEXT_EXT = {".txt", ".text"}
PDF_EXT = {".pdf"}
DOCX_EXT = {".docx"}
SUPPORTED_EXT = MARKDOWN_EXT | HTML_EXT | TEXT_EXT | PDF_EXT | DOCX_EXT

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
    effective = meta.get("effective")
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
        effective=_parse_date(effective, source, _key_line(block, "effective", 1), "effective") if effective else None,
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
        effective=_parse_date(meta["effective"], source, None, "effective") if meta.get("effective") else None,
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


def _pdf_outline(reader) -> list[tuple[int, int, str]]:
    """Outline entries as (page index, depth 1.., title), in outline order; [] when absent."""
    out: list[tuple[int, int, str]] = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            title = " ".join(str(getattr(item, "title", "") or "").split())
            try:
                page = reader.get_destination_page_number(item)
            except Exception:  # a bookmark pointing nowhere is skipped, not fatal
                page = None
            if title and page is not None and page >= 0:
                out.append((page, depth, title))

    walk(reader.outline or [], 1)
    return out


def _page_text(text: str) -> list[str]:
    """Lines of one extracted page: trailing spaces stripped, runs of blank lines collapsed."""
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    out: list[str] = []
    for ln in lines:
        if not ln.strip() and (not out or not out[-1].strip()):
            continue
        out.append(ln)
    while out and not out[-1].strip():
        out.pop()
    return out


#: A table-of-contents or index line: a run of dot leaders (``Redirections . . . . . 38``).
_LEADERS = re.compile(r"(?:\.\s?){6,}")
#: A section number in front of a heading line: ``4.3.2``, ``Chapter 4:``, ``Appendix C``, ``A.1``.
_SECTION_NO = re.compile(r"^(?:(?:chapter|appendix)\s+)?(?:[0-9]+|[A-Z])(?:\.[0-9]+)*[.:]?\s+", re.I)
#: A definition term alone on its line (``shopt``, ``assoc_expand_once``, ``-s``, ``--login``).
_TERM_LINE = re.compile(r"^(?:[A-Za-z_$][\w$.:+-]*[\w$]|-{1,2}[A-Za-z0-9][\w-]*)$")
#: A term and the start of its definition on one line (``dotglob If set, Bash includes ...``).
_TERM_INLINE = re.compile(r"^([a-z][a-z0-9_]*[a-z0-9]|-{1,2}[A-Za-z0-9][\w-]*)[ \t]{1,3}([A-Z][a-z]+\b.*)$")

#: A line that starts or ends at least this many pages (and at least
#: ``RUNNING_MIN_SHARE`` of them), digits ignored, is a running header or footer.
RUNNING_MIN_PAGES = 3
RUNNING_MIN_SHARE = 0.02


def _running_lines(pages: list[list[str]]) -> set[str]:
    """Normalised running headers/footers: the first or last non-blank line of a page that
    repeats (digits ignored: page numbers) on many pages (:data:`RUNNING_MIN_PAGES`)."""
    from collections import Counter

    counts: Counter[str] = Counter()
    for lines in pages:
        body = [ln for ln in lines if ln.strip()]
        for ln in {*body[:1], *body[-1:]}:
            counts[_digitless(ln)] += 1
    need = max(RUNNING_MIN_PAGES, int(RUNNING_MIN_SHARE * len(pages)))
    return {k for k, n in counts.items() if n >= need and k.strip("# ")}


def _digitless(line: str) -> str:
    return re.sub(r"\d+", "#", _norm(line))


def _clean_page(lines: list[str], running: set[str]) -> list[str]:
    """Drop running headers/footers and dot-leader (contents/index) lines; join words hyphenated
    across a line break (``metachar-`` + ``acters``)."""
    body = [i for i, ln in enumerate(lines) if ln.strip()]
    edge = set(body[:1] + body[-1:])
    out: list[str] = []
    for i, ln in enumerate(lines):
        if (i in edge and _digitless(ln) in running) or _LEADERS.search(ln):
            continue
        if out and re.search(r"[a-z]-$", out[-1]) and re.match(r"^[a-z]", ln):
            head, _, tail = ln.partition(" ")
            out[-1] = out[-1][:-1] + head
            if tail.strip():
                out.append(tail)
            continue
        out.append(ln)
    return out


def _definitions(lines: list[str]) -> list[str]:
    """Turn Texinfo-style tables (a term on its own line, or a term then its definition on one
    line, the definition running until the next term) into ``term`` / ``: definition`` pairs,
    the Markdown definition-list form the answer units read as one unit each."""
    out: list[str] = []
    i = 0
    n = len(lines)
    while i < n:
        ln = lines[i].strip()
        term = defn = None
        nxt = lines[i + 1].strip() if i + 1 < n else ""
        prev_end = not out or not out[-1].strip() or out[-1].rstrip().endswith((".", ":")) or out[-1].startswith((": ", "#"))
        if _TERM_LINE.match(ln) and nxt and (nxt[0].isupper() or nxt.startswith(ln + " ")) and not ln.startswith("#"):
            term, defn, i = ln, [], i + 1
        else:
            m = _TERM_INLINE.match(ln)
            if m and prev_end:
                term, defn, i = m.group(1), [m.group(2)], i + 1
        if term is None:
            out.append(lines[i])
            i += 1
            continue
        while i < n:
            cur = lines[i].strip()
            after = lines[i + 1].strip() if i + 1 < n else ""
            if not cur or cur.startswith("#"):
                break
            if _TERM_LINE.match(cur) and after and (after[0].isupper() or after.startswith(cur + " ")) and defn:
                break
            if _TERM_INLINE.match(cur) and defn and defn[-1].rstrip().endswith((".", ":")):
                break
            defn.append(cur)
            i += 1
        if out and out[-1].strip():
            out.append("")  # a term starts a paragraph of its own
        out.append(term)
        out.append(": " + " ".join(defn) if defn else ": ")
        out.append("")
    return out


def pdf_to_text(page_texts: list[str], outline: list[tuple[int, int, str]]) -> tuple[str, tuple[int, ...]]:
    """Join extracted page texts into one Markdown-like text with headings from the outline.

    Args:
        page_texts: the text layer of each page, in page order.
        outline: (page index, depth, title) bookmark entries.

    Returns:
        (text, page start offsets): page ``n`` (1-based) starts at ``offsets[n - 1]``.

    Cleaning, page by page: running headers and footers (a first or last line that repeats on
    many pages once digits are ignored, e.g. ``Chapter 4: Shell Builtin Commands 71``) and
    contents/index lines with dot leaders are dropped; a word hyphenated across a line break is
    joined. A bookmark whose title is a line of its page, with or without a section number in
    front (``4.3.2 The Shopt Builtin``), turns that line into a ``#`` heading of its depth
    (capped at 6); otherwise the heading is inserted at the top of the page. Texinfo-style
    term/definition tables become ``term`` / ``: definition`` pairs (:func:`_definitions`).
    """
    by_page: dict[int, list[tuple[int, str]]] = {}
    for page, depth, title in outline:
        by_page.setdefault(page, []).append((depth, title))
    pages = [_page_text(raw) for raw in page_texts]
    running = _running_lines(pages)
    parts: list[str] = []
    starts: list[int] = []
    pos = 0
    for i, lines in enumerate(pages):
        lines = _clean_page(lines, running)
        top: list[str] = []
        marked: set[int] = set()
        for depth, title in by_page.get(i, []):
            mark = "#" * min(depth, 6) + " "
            want = _norm(_SECTION_NO.sub("", title.strip()))
            for j, ln in enumerate(lines):
                if j in marked or ln.startswith("#"):
                    continue
                if _norm(ln) == _norm(title) or _norm(_SECTION_NO.sub("", ln.strip())) == want:
                    lines[j] = mark + ln.strip()
                    marked.add(j)
                    break
            else:
                top.append(mark + title)
        lines = _definitions(lines)
        page = "\n".join(top + ([""] if top and lines else []) + lines)
        if i:
            parts.append("\n\n")
            pos += 2
        starts.append(pos)
        parts.append(page)
        pos += len(page)
    return "".join(parts) + "\n", tuple(starts)


def load_pdf(path: Path, root: Path) -> Document:
    """Load the text layer of a PDF (see module docstring).

    Raises:
        InputError: not a PDF, unreadable or malformed, encrypted, or without a text layer.
    """
    raw = _read_bytes(path)
    source = str(path)
    if b"%PDF-" not in raw[:1024]:
        raise InputError(source, "not a PDF file (no %PDF- header)")
    from pypdf import PdfReader

    pypdf_log = logging.getLogger("pypdf")
    level = pypdf_log.level
    pypdf_log.setLevel(logging.ERROR)  # pypdf warns per recoverable glitch; we report one line
    try:
        reader = PdfReader(io.BytesIO(raw), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise InputError(source, "encrypted PDF (a password is needed); decrypt it first")
        page_texts = [p.extract_text() or "" for p in reader.pages]
        outline = _pdf_outline(reader)
        info = reader.metadata or {}
        meta_title = str(info.get("/Title") or "").strip()
    except InputError:
        raise
    except Exception as e:  # pypdf raises many types on malformed files; each is a bad input
        raise InputError(source, f"not a readable PDF ({_one_line(e)})") from None
    finally:
        pypdf_log.setLevel(level)
    if not page_texts:
        raise InputError(source, "PDF has no pages")
    text, starts = pdf_to_text(page_texts, outline)
    if not text.strip():
        raise InputError(source, f"PDF has no text layer ({len(page_texts)} page(s); a scan? OCR it first)")
    first = next((ln.lstrip("# ").strip() for ln in text.splitlines() if ln.strip()), path.stem)
    title = meta_title or (outline[0][2] if outline else first[:200])
    return Document(
        doc_id=doc_id_for(path, root), title=title, text=text, source=source, format="pdf",
        content_hash=sha256_hex(raw), pages=starts,
    )


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
                    cells.append(" ".join(cell.text.split()).replace("|", "\\|"))
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
        doc_id=doc_id_for(path, root), title=title, text=text, source=source, format="docx",
        content_hash=sha256_hex(raw), version=version,
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
    if ext in PDF_EXT:
        return load_pdf(path, root)
    if ext in DOCX_EXT:
        return load_docx(path, root)
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
