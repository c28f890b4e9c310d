"""Loaders: files (Markdown, HTML, plain text, PDF, DOCX) and BEIR corpus JSONL into Documents.

Every loader either returns a Document or raises :class:`citewise.core.InputError` naming the file
(and line, where there is one): unreadable, binary, not UTF-8, empty, bad front matter. A folder
walk yields one result per file so one bad file never stops the rest.

Markdown front matter (YAML between ``---`` lines at the top of the file) may set:
``id`` (str), ``title`` (str), ``version`` (str or number), ``updated`` (ISO date),
``effective`` (ISO date from which the document is in force), ``permissions`` (list of group
names). It is read with a safe YAML loader without aliases; every key is type-checked (see
:func:`load_markdown`). Every other key is the document's metadata (``Document.metadata``,
:mod:`citewise.metadata`): stored and filterable; a key that looks like a misspelled
``permissions`` and a blank group are errors, so the file is refused rather than made public. UTF-16/UTF-32 files with a byte order mark are decoded.
HTML may set the same through ``<meta name="..." content="...">`` (permissions comma-separated).

PDF (pypdf, text layer only): pages are joined with a blank line and ``Document.pages`` records
the character offset where each page starts, so a chunk's offsets map to a page range. Outline
(bookmark) entries become ``#`` headings (level = outline depth) on the page they point to.
Definition tables (a term at the left, its definition in a deeper column: Texinfo manuals'
glossaries, variable and option lists) become ``term`` / ``: definition`` pairs, told apart from
prose by the columns of pypdf's layout-mode text (:func:`layout_roles`). Lines set wholly in a
monospace font (the manual's examples) become fenced code blocks (:func:`_page_with_code_marks`).
A PDF's content hash carries the PDF loader's version (:func:`content_hash`), so an index built by
an older loader re-parses it on the next ingest. A PDF without a text layer (a scan) is an error:
OCR it first.
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
import errno
import os
import re
import stat
from pathlib import Path
from typing import Iterator

import yaml

from citewise.core import Document, InputError, InputWarning
from citewise.metadata import KEY as METADATA_KEY, MAX_METADATA_BYTES, YamlFloat, normalize as normalize_metadata, to_json

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


#: Version of a loader whose text (or chunks) for the same file bytes changed (PDF 2: monospace
#: lines became fenced code blocks; 3: contents and index pages are dropped whole; Markdown 2: an
#: HTML ``<table>`` in it is chunked between rows, its header row repeated, and read as table rows;
#: 3: its HTML markup tags are not embedded or indexed, :func:`citewise.core.without_markup`;
#: PDF 4: a term whose key binding is a bracket, ``complete-into-braces (M-{)``, is a term).
#: It is mixed into that format's content hash (:func:`content_hash`), so the next ingest re-parses
#: and re-chunks files the old version read, instead of keeping their old chunks because the bytes
#: did not change. Formats absent here hash the bytes.
LOADER_VERSIONS = {".pdf": "4", ".md": "3", ".markdown": "3"}


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
            raise InputError(str(path), f"bad {bom.upper()} text (starts with a {bom.upper()} byte order mark; "
                             f"undecodable bytes at offset {e.start})") from None
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


#: Front matter keys with a meaning of their own; any other key is the document's metadata.
FRONT_MATTER_KEYS = ("id", "title", "version", "updated", "effective", "permissions")
#: Limits on front matter, so a hostile or broken file cannot exhaust memory or the index.
MAX_FRONT_MATTER_BYTES = 64 * 1024
MAX_ID_CHARS = 256
MAX_TITLE_CHARS = 500
MAX_VERSION_CHARS = 64
MAX_GROUP_CHARS = 128
#: The separator of history ids (``doc_id@version``), reserved: no document id may contain it.
HISTORY_SEP = "@"

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _FrontMatterLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` without aliases (a few hundred bytes of ``*a`` references can expand
    to gigabytes: a "billion laughs" bomb), without implicit timestamps (dates stay strings, so
    an impossible date is our clear error rather than a constructor ``ValueError``), and refusing
    a key given twice (``permissions`` twice was last-wins,
    so a later ``permissions: [public]`` silently opened a restricted document)."""

    def compose_node(self, parent, index):  # noqa: D102 - PyYAML hook
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases (*name) are not allowed in front matter", event.start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):  # noqa: D102 - PyYAML hook
        seen: set = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, str) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key '{key}' is given twice (which one counts would be a guess)", key_node.start_mark)
            if isinstance(key, str):
                seen.add(key)
        return super().construct_mapping(node, deep)


# a number with a fraction keeps the text written: "version: 1.10" is "1.10", not the float 1.1
# (which made version 1.9 the newer one); integers stay numbers (type checks refuse them as groups)
_FrontMatterLoader.add_constructor("tag:yaml.org,2002:float", lambda loader, node: YamlFloat(loader.construct_scalar(node)))

_FrontMatterLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _short(value, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters (error lines stay one short line)."""
    r = repr(value)
    return r if len(r) <= limit else r[: limit - 1] + "…"


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance between two strings.

    >>> edit_distance("permission", "permissions")
    1
    """
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


_FENCED_TOP = re.compile(r"\A\s*(-{3,}|\+{3,})[ \t]*\r?\n(.*?)\r?\n[ \t]*\1[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_PERMISSIONS_LINE = re.compile(r"^\s*permissions\s*[:=]", re.M | re.I)
_KEY_VALUE_LINE = re.compile(r"^[ \t]*[\w-]+[ \t]*[:=]")
#: An unfenced block of ``key: value`` lines at the top of a file is read as metadata-like (and
#: refused when it names ``permissions``) up to this many lines.
MAX_BARE_BLOCK_LINES = 10


def _bare_permissions_block(text: str) -> bool:
    """Whether the file opens (after blank lines) with a ``permissions:`` line, or with a
    paragraph of at most :data:`MAX_BARE_BLOCK_LINES` ``key: value`` lines one of which is
    ``permissions``: front matter written without its ``---`` fences."""
    block = []
    for line in text.lstrip("\r\n \t").splitlines()[: MAX_BARE_BLOCK_LINES + 1]:
        if not line.strip():
            break
        block.append(line)
    if block and _PERMISSIONS_LINE.match(block[0]):
        return True
    return (0 < len(block) <= MAX_BARE_BLOCK_LINES and all(_KEY_VALUE_LINE.match(x) for x in block)
            and any(_PERMISSIONS_LINE.match(x) for x in block))


def check_unread_front_matter(text: str, source: str, kind: str = "markdown") -> None:
    """Refuse a file whose top is a front-matter block naming ``permissions`` that is not read as
    front matter: after blank lines or indented, TOML (``+++``), fenced with more than three
    dashes, without fences (a paragraph of ``key: value`` lines, :func:`_bare_permissions_block`),
    or in a ``.txt`` / ``.html`` file. Indexed as text, the document took the default permission
    (often public) and its ``permissions:`` line became searchable text (break-it trials): fail
    closed instead.

    Raises:
        InputError: such a block, with how to fix it.
    """
    m = _FENCED_TOP.match(text)
    fenced = bool(m and _PERMISSIONS_LINE.search(m.group(2)))
    if not fenced and not _bare_permissions_block(text):
        return
    if kind != "markdown":
        fix = ("front matter is read only in Markdown files; use a policy rule"
               + (" or <meta name=\"permissions\" content=\"...\">" if kind == "html" else "")
               + " to restrict this file")
    elif not fenced:
        fix = "front matter goes between '---' lines, the first of them the file's first line"
    elif m.group(1).startswith("+"):
        fix = "TOML front matter (+++) is not read; write it as YAML between '---' lines"
    elif m.group(1) != "---":
        fix = f"front matter fences are exactly three dashes ('---'), not {m.group(1)!r}"
    else:
        fix = "front matter must start on the first line, unindented; remove what comes before '---'"
    raise InputError(source, f"a front-matter block naming 'permissions' is not read here, so they would not "
                     f"apply and the file would take the default permission: {fix}", 1)


def parse_front_matter(text: str, source: str) -> tuple[dict, str, int]:
    """Split YAML front matter from a Markdown text.

    The YAML is read with a safe loader that refuses aliases and keeps dates as strings, and the
    block may be at most :data:`MAX_FRONT_MATTER_BYTES`.

    Returns:
        (metadata dict, body text, character offset of the body in ``text``).

    Raises:
        InputError: the YAML does not parse (with its line in the file), uses aliases, is too
            big, or is not a mapping.
    """
    m = _FRONT.match(text)
    if not m:
        if text.startswith("---\n") or text.startswith("---\r\n"):
            raise InputError(source, "front matter is not closed by a '---' line", 1)
        check_unread_front_matter(text, source)
        return {}, text, 0
    block = m.group(1) or ""
    size = len(block.encode("utf-8", "surrogatepass"))
    if size > MAX_FRONT_MATTER_BYTES:
        raise InputError(source, f"front matter is {size:,} bytes (limit {MAX_FRONT_MATTER_BYTES:,})", 1)
    try:
        meta = yaml.load(block, Loader=_FrontMatterLoader) if block.strip() else {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        if "mapping values are not allowed" in problem:
            problem += " (quote a value that contains ': ', e.g. title: \"E-1004: Card declined\")"
        raise InputError(source, f"bad front matter: {problem}", line) from None
    except RecursionError:
        raise InputError(source, "bad front matter: nested too deeply", 1) from None
    except Exception as e:  # ValueError from an explicit !!timestamp tag, ...
        raise InputError(source, f"bad front matter: {type(e).__name__}: {' '.join(str(e).split())[:120]}", 1) from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise InputError(source, "bad front matter: expected 'key: value' lines", 2)
    return meta, text[m.end():], m.end()


def _scalar_text(meta: dict, key: str, source: str, line: int, limit: int) -> str | None:
    """A front matter value that must be a short piece of text (numbers are accepted as text)."""
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(source, f"front matter '{key}' must be text, got {type(value).__name__} {_short(value)}", line)
    text = str(value).strip()
    if "\n" in text or "\r" in text:
        raise InputError(source, f"front matter '{key}' must be one line", line)
    if len(text) > limit:
        raise InputError(source, f"front matter '{key}' is {len(text):,} characters (limit {limit})", line)
    return text


def _front_matter_date(meta: dict, key: str, source: str, line: int) -> dt.date | None:
    value = meta.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}([Tt ].{0,40})?", value.strip()):
        try:
            return dt.date.fromisoformat(value.strip()[:10])
        except ValueError as e:
            raise InputError(source, f"front matter '{key}': {value.strip()[:10]} is not a real date ({e})", line) from None
    raise InputError(source, f"front matter '{key}' must be an ISO date (YYYY-MM-DD), got {_short(value)}", line)


def _front_matter_groups(meta: dict, source: str, line: int) -> tuple[str, ...]:
    """``permissions``: a list of non-blank group names (or one comma-separated string).

    A blank group is an error, not "no permissions": dropping it would make the document follow
    the default (often public) when its author meant to restrict it.
    """
    if "permissions" in meta and meta["permissions"] in (None, []):
        # "permissions: ~", or a list whose items are all commented out: an author who wrote the
        # key meant to restrict the document; the default would often make it public
        raise InputError(source, "front matter 'permissions' is empty (remove the key, or name the groups)", line)
    value = meta.get("permissions")
    if value is None:
        return ()
    if isinstance(value, str):
        if not value.strip():
            raise InputError(source, "front matter 'permissions' is blank (remove the key, or name the groups)", line)
        value = [g for g in re.split(r"[,\s]+", value) if g]
    if not isinstance(value, list):
        raise InputError(source, f"front matter 'permissions' must be a list of group names, got {_short(value)}", line)
    groups = set()
    for g in value:
        if not isinstance(g, str):
            raise InputError(source, f"front matter 'permissions' must list group names (text), got {_short(g)}", line)
        if not g.strip():
            raise InputError(source, f"front matter 'permissions' has a blank group {g!r}", line)
        if len(g.strip()) > MAX_GROUP_CHARS:
            raise InputError(source, f"front matter 'permissions' group is {len(g.strip()):,} characters (limit {MAX_GROUP_CHARS})", line)
        groups.add(g.strip())
    return tuple(sorted(groups))


def check_front_matter_keys(meta: dict, block: str, source: str) -> list[str]:
    """Warnings for front matter keys kept as metadata that cannot be filtered on (naming file
    and line): a key that is not text, or not letters, digits, ``_``, ``.`` and ``-``.

    Raises:
        InputError: a key that looks like a misspelling of ``permissions`` (``Permissions``,
            ``permission``, ``permisions``): keeping it as metadata would silently widen access,
            so the file is refused (fail closed).
    """
    warnings = []
    for key in meta:
        k = str(key)
        if k in FRONT_MATTER_KEYS:
            continue
        line = _key_line(block, k, 1)
        if edit_distance(k.strip().lower(), "permissions") <= 2:
            raise InputError(source, f"front matter key '{k}' is not 'permissions' (spelled exactly, lower case); "
                             "refusing the file rather than ignoring its permissions", line)
        if not isinstance(key, str) or not METADATA_KEY.match(k):
            warnings.append(f"{source}:{line}: front matter key {_short(k, 40)} is kept as metadata but cannot be "
                            "filtered on (use letters, digits, '_', '.' or '-')")
    return warnings


def front_matter_metadata(meta: dict, source: str) -> dict:
    """The metadata of a front matter mapping: every key but :data:`FRONT_MATTER_KEYS`,
    normalised (:func:`citewise.metadata.normalize`).

    Raises:
        InputError: the metadata is over :data:`citewise.metadata.MAX_METADATA_BYTES` as JSON
            (it is stored with every chunk of the document).
    """
    out = normalize_metadata({str(k): v for k, v in meta.items() if str(k) not in FRONT_MATTER_KEYS})
    size = len(to_json(out).encode("utf-8", "surrogatepass"))
    if size > MAX_METADATA_BYTES:
        raise InputError(source, f"front matter metadata is {size:,} bytes as JSON (limit {MAX_METADATA_BYTES:,}); "
                         "keep long text in the body", 1)
    return out


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
        raise InputError(source, f"front matter 'id' {doc_id!r} contains '{HISTORY_SEP}', which is reserved for "
                         "older versions kept as history (id@version)", line("id"))
    if doc_id and (doc_id.startswith("/") or ".." in doc_id.split("/") or "." in doc_id.split("/")):
        # ids are shown as paths and linked as /doc/ID: "../../etc/passwd" is no document's name
        raise InputError(source, f"front matter 'id' {doc_id!r} has an absolute or '.'/'..' path part; "
                         "use a relative name such as 'policies/travel'", line("id"))
    title = _scalar_text(meta, "title", source, line("title"), MAX_TITLE_CHARS)
    if not title:
        h1 = _H1.search(body)
        title = h1.group(1).strip() if h1 else path.stem.replace("-", " ").replace("_", " ")
    version = _scalar_text(meta, "version", source, line("version"), MAX_VERSION_CHARS) or ""
    updated = _front_matter_date(meta, "updated", source, line("updated"))
    effective = _front_matter_date(meta, "effective", source, line("effective"))
    groups = _front_matter_groups(meta, source, line("permissions"))
    metadata = front_matter_metadata(meta, source)
    if not body.strip():
        raise InputError(source, "no text after the front matter")
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


#: Marks a code line (set wholly in a monospace font) in page texts handed to
#: :func:`pdf_to_text`; runs of such lines become fenced code blocks. NUL never survives in text.
CODE_MARK = "\x00"
#: Monospace font names: TeX's typewriter faces (CMTT10, CMSLTT10, LMMono), Courier, Consolas,
#: Menlo, DejaVu Sans Mono, Source Code Pro ... (the part after a subset prefix ``ABCDEF+``).
_MONO_FONT = re.compile(r"(?i)mono|courier|consol|menlo|typewriter|code|^(?:cm|ec|lm)\w*tt\d*$|^tt\d|tt\d+$")


def _is_mono(font) -> bool:
    """Whether a pypdf font dictionary is monospace: by its name (:data:`_MONO_FONT`) or by the
    FixedPitch flag (bit 1 of ``/Flags``, PDF 32000-1:2008 §9.8.2) of its font descriptor."""
    if not font:
        return False
    name = str(font.get("/BaseFont", "")).lstrip("/").split("+")[-1]
    if _MONO_FONT.search(name):
        return True
    try:
        desc = font.get("/FontDescriptor")
        if desc is None and "/DescendantFonts" in font:  # Type0: the descriptor is the CID font's
            desc = font["/DescendantFonts"][0].get_object().get("/FontDescriptor")
        return desc is not None and bool(int(desc.get_object().get("/Flags", 0)) & 1)
    except Exception:  # a malformed descriptor says nothing about the font
        return False


def _page_with_code_marks(page) -> str:
    """A page's plain text (pypdf ``extract_text``) with :data:`CODE_MARK` in front of each line
    whose every visible character is set in a monospace font (:func:`_is_mono`): the Texinfo
    ``@example`` blocks of a manual, which plain extraction otherwise runs into the prose.

    pypdf hands each text run to ``visitor_text`` with its font, and the runs concatenate to the
    extracted text; when they do not (a pypdf change), the page is returned unmarked."""
    runs: list[tuple[str, bool]] = []
    known: dict[int, bool] = {}

    def visit(text, cm, tm, font, size):
        key = id(font)
        if key not in known:
            known[key] = _is_mono(font)
        runs.append((text, known[key]))

    text = (page.extract_text(visitor_text=visit) or "").replace(CODE_MARK, "")
    if "".join(t for t, _ in runs).replace(CODE_MARK, "") != text or not any(m for _, m in runs):
        return text
    mono: list[bool] = []
    for t, m in runs:
        mono.extend([m] * len(t.replace(CODE_MARK, "")))
    out, pos = [], 0
    for line in text.split("\n"):
        flags = mono[pos:pos + len(line)]
        visible = [f for ch, f in zip(line, flags) if not ch.isspace()]
        out.append(CODE_MARK + line if visible and all(visible) else line)
        pos += len(line) + 1
    return "\n".join(out)


def _is_code(line: str) -> bool:
    return line.startswith(CODE_MARK)


#: A code run of at most this many lines set inside a sentence stays in the sentence.
INLINE_CODE_LINES = 3


def _inline_code(lines: list[str], i: int, before: str) -> int:
    """How many code lines from ``lines[i]`` on are set inside a sentence (0 when they are a block
    of their own): the text ``before`` them ends without closing punctuation and the line after a
    run of at most :data:`INLINE_CODE_LINES` code lines goes on in lower case ("your
    ~/.bash_profile contains the line" / ``if [ -f ~/.bashrc ]; then . ~/.bashrc; fi`` / "after
    (or before) any login-specific initializations."). Such code is part of the sentence."""
    before = before.rstrip()
    if not before or before.endswith((".", ":", ";", "!", "?", "```")) or before.startswith("#"):
        return 0
    j = i
    while j < len(lines) and _is_code(lines[j].strip()) and j - i < INLINE_CODE_LINES:
        j += 1
    after = lines[j].strip() if j < len(lines) else ""
    return j - i if j > i and re.match(r"[a-z(]", after) else 0


def _fence_code(lines: list[str]) -> list[str]:
    """Runs of :data:`CODE_MARK` lines become fenced code blocks (a blank line on either side);
    code set inside a sentence (:func:`_inline_code`) stays in its line."""
    out: list[str] = []
    i, n = 0, len(lines)
    while i < n:
        if not _is_code(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        k = _inline_code(lines, i, out[-1] if out else "")
        if k:
            out.extend(ln.replace(CODE_MARK, "") for ln in lines[i:i + k])
            i += k
            continue
        if out and out[-1].strip():
            out.append("")
        out.append("```")
        while i < n and (_is_code(lines[i]) or (not lines[i].strip() and i + 1 < n and _is_code(lines[i + 1]))):
            out.append(lines[i][len(CODE_MARK):] if _is_code(lines[i]) else "")
            i += 1
        out.append("```")
        if i < n and lines[i].strip():
            out.append("")
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
_TERM_INLINE = re.compile(r"^([a-z][a-z0-9_]*[a-z0-9]|-{1,2}[A-Za-z0-9][\w-]*)[ \t]{1,3}((?:[A-Z][a-z]+|An?)\b.*)$")

#: Layout (column) evidence of a definition table, from pypdf's layout-mode text: a term line
#: starts at the left and its definition is indented at least this many columns deeper.
DEF_INDENT = 8
#: A term set on the definition's first line is at most this many words and characters long.
TERM_MAX_WORDS = 4
TERM_MAX_CHARS = 40
#: Columns by which layout mode may misplace a definition's first word (it estimates glyph
#: widths): ``builtin      A command`` ends its gap at column 13 for a column at 15.
LAYOUT_SLACK = 4

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


#: A page whose non-blank lines are at least this share dot-leader lines (and at least
#: ``CONTENTS_MIN_LINES`` of them) is a contents or index page.
CONTENTS_SHARE = 0.5
CONTENTS_MIN_LINES = 5


def _contents_page(lines: list[str]) -> bool:
    """Whether a page is a table of contents or an index: mostly dot-leader lines
    (``Redirections . . . . . 38``). Dropping only those lines left the page's title, its roman
    page number and cut entries ("i Table of Contents ii." was quoted as an answer)."""
    body = [ln for ln in lines if ln.strip()]
    leaders = sum(1 for ln in body if _LEADERS.search(ln) and not _is_code(ln))
    return leaders >= CONTENTS_MIN_LINES and leaders >= CONTENTS_SHARE * len(body)


def _clean_page(lines: list[str], running: set[str]) -> list[str]:
    """Drop running headers/footers and dot-leader (contents/index) lines; join words hyphenated
    across a line break (``metachar-`` + ``acters``)."""
    body = [i for i, ln in enumerate(lines) if ln.strip()]
    edge = set(body[:1] + body[-1:])
    out: list[str] = []
    for i, ln in enumerate(lines):
        if (i in edge and _digitless(ln) in running) or (_LEADERS.search(ln) and not _is_code(ln)):
            continue
        if out and not _is_code(out[-1]) and re.search(r"[a-z]-$", out[-1]) and re.match(r"^[a-z]", ln):
            head, _, tail = ln.partition(" ")
            out[-1] = out[-1][:-1] + head
            if tail.strip():
                out.append(tail)
            continue
        out.append(ln)
    return out


def _key(line: str) -> str:
    """Lookup key of a line in :func:`layout_roles`: its first 48 characters, whitespace
    collapsed (the end of a line may change when a hyphenated word is joined)."""
    return " ".join(line.replace(CODE_MARK, "").split())[:48]


_BULLETS = frozenset("•◦▪▫●○■□‣∙")


#: A Readline key binding whose key is a bracket (``M-{``, ``C-x (``, ``C-x )``): the bracket is
#: a key, not punctuation.
_BRACKET_KEY = re.compile(r"(?<![\w-])(?:[CM]-)+(?:x\s+)?[()\[\]{}]")


def _balanced(text: str) -> bool:
    """Whether every (, [ and { in ``text`` is closed (a term is; a cut-off phrase may not be).
    A bracket typed as a key (``complete-into-braces (M-{)``, ``start-kbd-macro (C-x ()``) is
    no bracket.

    >>> _balanced("complete-into-braces (M-{)"), _balanced("end-kbd-macro (C-x ))"), _balanced("(see Section")
    (True, True, False)
    """
    depth = 0
    for ch in _BRACKET_KEY.sub("K", text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth < 0:
            return False
    return depth == 0


def layout_roles(layout: str) -> dict[str, list[tuple[str, str]]]:
    """Definition-table roles of the lines of one page, read from its layout-mode text (pypdf
    ``extraction_mode="layout"``, which keeps each line's columns).

    A Texinfo table (``@table``: Bash's definitions, shell variables, ``shopt`` options, the
    tilde-prefix table) sets each term at the left and its definition in a column
    :data:`DEF_INDENT` or more deeper, either on the term's line (``token          A sequence of
    characters ...``) or, for a wide term, from the next line on (``special builtin`` /
    ``                A shell builtin command ...``). Plain text extraction loses the columns, so
    ``token A sequence of characters`` cannot be told from prose; the layout can.

    Returns ``{key: [(role, term), ...]}`` in page order per :func:`_key` of the line:
    ``term`` (a term alone on its line: the next line is indented deeper), ``inline`` (a term of
    at most :data:`TERM_MAX_WORDS` words followed by a gap wider than the line's other gaps
    (3 spaces or more, and more than their median) whose end lines up, within
    :data:`LAYOUT_SLACK` columns, with a definition column: the indentation of a line on the
    page at least :data:`DEF_INDENT` deeper than the margin), ``def`` (a line indented at least :data:`DEF_INDENT` deeper
    than the page margin) and ``body`` (any other line).
    """
    rows = [(len(ln) - len(ln.lstrip()), ln.rstrip()) for ln in layout.split("\n") if ln.strip()]
    out: dict[str, list[tuple[str, str]]] = {}
    if not rows:
        return out
    margin = min(i for i, _ in rows)
    deep = {i for i, _ in rows if i >= margin + DEF_INDENT}
    for n, (ind, ln) in enumerate(rows):
        nxt = rows[n + 1][0] if n + 1 < len(rows) else -1
        body = ln.strip()
        role, term = ("def" if ind >= margin + DEF_INDENT else "body"), ""
        words = body.split()
        if (nxt >= ind + DEF_INDENT and len(words) <= TERM_MAX_WORDS and len(body) <= TERM_MAX_CHARS
                and not body.endswith((".", ",", ";", ":")) and _balanced(body) and words[0] not in _BULLETS):
            role, term = "term", " ".join(words)
        else:
            gaps = [(m.start(), m.end()) for m in re.finditer(r" +", ln[ind:])]
            for gi, (gs, ge) in enumerate(gaps[:TERM_MAX_WORDS]):
                head = ln[ind:ind + gs].split()
                if (gs > TERM_MAX_CHARS or head[-1].endswith((".", ",", ";", ":")) or not _balanced(" ".join(head))
                        or head[0] in _BULLETS):
                    break  # prose ("(see   Section 3.7.3": a link's wide gap) or a bullet list
                others = sorted(b - a for j, (a, b) in enumerate(gaps) if j != gi)
                wide = max(3, (others[len(others) // 2] if others else 1) + 1)
                # layout mode places columns approximately (font widths are estimated): the
                # gap may end a few columns off the definition column
                col = ind + ge
                target = min(deep, key=lambda d: abs(d - col), default=-99)
                if ge - gs >= wide and abs(col - target) <= LAYOUT_SLACK and col >= ind + DEF_INDENT - LAYOUT_SLACK:
                    role, term = "inline", " ".join(head)
                    break
        out.setdefault(_key(ln), []).append((role, term))
    return out


def _definitions(lines: list[str], roles: dict[str, list[tuple[str, str]]] | None = None) -> list[str]:
    """Turn Texinfo-style tables (a term on its own line, or a term then its definition on one
    line, the definition running until the next term) into ``term`` / ``: definition`` pairs,
    the Markdown definition-list form the answer units read as one unit each.

    With ``roles`` (:func:`layout_roles` of the page) the page's columns decide; without them,
    the shape of the plain lines does (a single lower-case word or a flag, then a capitalised
    definition)."""
    if roles is not None and any(r == "term" or r == "inline" for v in roles.values() for r, _ in v):
        return _layout_definitions(lines, roles)
    out: list[str] = []
    i = 0
    n = len(lines)
    while i < n:
        ln = lines[i].strip()
        term = defn = None
        nxt = lines[i + 1].strip() if i + 1 < n else ""
        if _is_code(ln):
            # a monospace line is a term only alone before a definition (``@table @code``);
            # followed by more code it is a line of an example
            if _is_code(nxt) or nxt.startswith("#") or (i and _is_code(lines[i - 1].strip())):
                out.append(lines[i])
                i += 1
                continue
            ln = ln[len(CODE_MARK):]
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
        prose = bool(defn)
        while i < n:
            cur = lines[i].strip()
            after = lines[i + 1].strip() if i + 1 < n else ""
            if not cur or cur.startswith("#") or (_is_code(cur) and prose and not _inline_code(lines, i, defn[-1])):
                break  # an example inside the definition: a code block of its own
            prose = prose or not _is_code(cur)
            cur = cur.replace(CODE_MARK, "")  # a synopsis right after the term opens its definition
            if _TERM_LINE.match(cur) and after and (after[0].isupper() or after.startswith(cur + " ")) and defn:
                break
            if _TERM_INLINE.match(cur) and defn and defn[-1].rstrip().endswith((".", ":")):
                break
            defn.append(cur)
            i += 1
        _emit_entry(out, term, defn)
    return out


def _emit_entry(out: list[str], term: str, defn: list[str]) -> None:
    """Append a definition entry as its own paragraph: the term line, then ``: definition``."""
    if out and out[-1].strip():
        out.append("")  # a term starts a paragraph of its own
    out.append(term)
    out.append(": " + " ".join(defn) if defn else ": ")
    out.append("")


def _layout_definitions(lines: list[str], roles: dict[str, list[tuple[str, str]]]) -> list[str]:
    """:func:`_definitions` led by the page's layout roles: a ``term`` / ``inline`` line starts
    an entry, whose definition runs over the following lines until a blank line, a heading,
    the next term or a ``body`` line (back at the page margin: the text after the table)."""
    pending = {k: list(v) for k, v in roles.items()}

    def role(line: str) -> tuple[str, str]:
        got = pending.get(_key(line))
        return got.pop(0) if got else ("", "")

    out: list[str] = []
    i, n = 0, len(lines)
    cur = role(lines[0]) if lines else ("", "")
    while i < n:
        ln = lines[i].strip()
        kind, term = cur
        i += 1
        cur = role(lines[i]) if i < n else ("", "")
        rest = ""
        if kind == "inline":
            head = " ".join(ln.split()[:len(term.split())])
            if head != term:
                kind = ""  # the plain line does not start with the term: not the same line
            else:
                rest = ln.split(None, len(term.split()))[-1] if len(ln.split()) > len(term.split()) else ""
        if kind == "term" and _is_code(ln) and not _code_term(lines, i, cur, pending):
            kind = ""  # a line of an example whose next lines are indented deeper (``else``)
        if kind == "body" and _is_code(ln) and cur[0] == "term":
            # a monospace line at the margin right above a term is one more name of that entry
            # (Texinfo ``@itemx``: ``${parameter:offset}`` over ``${parameter:offset:length}``),
            # not the last line of the example before it
            out += ["", ln[len(CODE_MARK):]]
            continue
        if kind not in ("term", "inline") or ln.startswith("#"):
            out.append(lines[i - 1])
            continue
        defn = [rest] if rest else []
        prose = bool(rest)
        while i < n:
            cur_ln = lines[i].strip()
            if not cur_ln or cur_ln.startswith("#") or cur[0] in ("term", "inline", "body"):
                break
            if _is_code(cur_ln):
                if prose and not _inline_code(lines, i, defn[-1]):
                    break  # an example inside the definition: a code block of its own
                cur_ln = cur_ln[len(CODE_MARK):]  # the term's synopsis, or code inside a sentence
            else:
                prose = True
            defn.append(cur_ln)
            i += 1
            cur = role(lines[i]) if i < n else ("", "")
        _emit_entry(out, term, defn)
    return out


def _code_term(lines: list[str], i: int, nxt_role: tuple[str, str], pending: dict) -> bool:
    """Whether a monospace line with the layout role ``term`` (``lines[i]`` is the line after
    it, whose role is ``nxt_role``) is a term: its definition follows (a line in roman), or its
    synopsis does (code lines indented deeper, then the definition, still deeper). A line of an
    example whose next lines are indented (``else`` / ``    echo ...`` / ``fi``) comes back to
    the margin within its code."""
    if i >= len(lines) or not lines[i].strip():
        return False
    if not _is_code(lines[i].strip()):
        return True
    role = nxt_role[0]
    j = i
    while j < len(lines) and _is_code(lines[j].strip()):
        if role != "def":
            return False  # the code comes back to the margin: an example
        j += 1
        got = pending.get(_key(lines[j])) if j < len(lines) else None
        role = got[0][0] if got else ""
    return j < len(lines) and bool(lines[j].strip()) and role == "def"


def _continues(prev_page: str, page: str) -> bool:
    """Whether ``page`` continues a sentence of ``prev_page``: the previous page's text ends
    without closing punctuation (and not on a heading or a definition term) in a letter, a comma
    or a hyphenated word part, and this page's text starts with a lower-case letter."""
    tail = prev_page.rstrip().rsplit("\n", 1)[-1].strip()
    head = page.lstrip()
    return bool(tail and head and head[0].islower() and not tail.startswith("#")
                and not _TERM_LINE.match(tail) and re.search(r"(?:[A-Za-z,]|[a-z]-)$", tail))


def pdf_to_text(page_texts: list[str], outline: list[tuple[int, int, str]],
                layouts: list[str] | None = None) -> tuple[str, tuple[int, ...]]:
    """Join extracted page texts into one Markdown-like text with headings from the outline.

    Args:
        page_texts: the text layer of each page, in page order.
        outline: (page index, depth, title) bookmark entries.
        layouts: optional layout-mode text of each page (same order): its columns tell
            definition tables apart from prose (:func:`layout_roles`).

    Returns:
        (text, page start offsets): page ``n`` (1-based) starts at ``offsets[n - 1]``.

    Cleaning, page by page: running headers and footers (a first or last line that repeats on
    many pages once digits are ignored, e.g. ``Chapter 4: Shell Builtin Commands 71``) and
    contents/index lines with dot leaders are dropped; a word hyphenated across a line break is
    joined. A bookmark whose title is a line of its page, with or without a section number in
    front (``4.3.2 The Shopt Builtin``), turns that line into a ``#`` heading of its depth
    (capped at 6); otherwise the heading is inserted at the top of the page. A sentence that runs
    on over a page break is joined with one space (:func:`_continues`). Texinfo-style
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
        lines = [] if _contents_page(lines) else _clean_page(lines, running)
        # a text line that starts with '#' (the Bash manual's special parameter "# ($#) Expands
        # to ...") is not a heading: escape it as Markdown does, so only bookmarks make headings
        lines = ["\\" + ln.lstrip() if ln.lstrip().startswith("#") else ln for ln in lines]
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
        lines = _fence_code(_definitions(lines, layout_roles(layouts[i]) if layouts and i < len(layouts) else None))
        page = "\n".join(top + ([""] if top and lines else []) + lines)
        if i and not top and parts and parts[-1].endswith("\n```") and page.startswith("```\n"):
            # a code block runs on over the page break: one block, not two
            parts[-1] = parts[-1][:-3]  # drop the closing fence, keep its line break
            pos -= 3
            page = page[4:]  # and the opening fence with its line break
            starts.append(pos)
            parts.append(page)
            pos += len(page)
            continue
        if i and not top and parts and _continues(parts[-1], page):
            # a sentence runs on over the page break ("... wishes to view" / "them; otherwise,
            # ..."): one space, not a paragraph break, so it stays one sentence (and a word
            # hyphenated over the break is joined)
            prev = parts[-1].rstrip()
            pos -= len(parts[-1]) - len(prev)
            page = page.lstrip()
            if prev.rsplit("\n", 1)[-1].startswith(": "):
                # a definition runs on: its continuation lines join its one line (same length)
                para, sep, rest = page.partition("\n\n")
                page = para.replace("\n", " ") + sep + rest
            if re.search(r"[a-z]-$", prev):
                parts[-1] = prev[:-1]
                pos -= 1
            else:
                parts[-1] = prev + " "
                pos += 1
            starts.append(pos)
            parts.append(page)
            pos += len(page)
            continue
        if i:
            parts.append("\n\n")
            pos += 2
        starts.append(pos)
        parts.append(page)
        pos += len(page)
    return "".join(parts) + "\n", tuple(starts)


def _layout_text(page) -> str:
    """A page's layout-mode text ('' when pypdf cannot lay it out: the plain text still serves)."""
    try:
        return page.extract_text(extraction_mode="layout") or ""
    except Exception:  # layout mode fails on some odd fonts; it is only a hint
        return ""


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
        # each line set wholly in a monospace font is marked as code (:func:`_page_with_code_marks`)
        marked = [_page_with_code_marks(p) for p in reader.pages]
        page_texts = [t.replace(CODE_MARK, "") for t in marked]
        # the same text with its columns (pypdf's layout mode): definition tables are told
        # from prose by their indentation (:func:`layout_roles`)
        layouts = [_layout_text(p) if t.strip() else "" for p, t in zip(reader.pages, page_texts)]
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
    text, starts = pdf_to_text(marked, outline, layouts)
    if not text.strip():
        raise InputError(source, f"PDF has no text layer ({len(page_texts)} page(s); a scan? OCR it first)")
    first = next((ln.lstrip("# ").strip() for ln in text.splitlines() if ln.strip()), path.stem)
    # no /Title in the metadata (pdfTeX manuals): the title page's first line ("Bash Reference
    # Manual") names the document; the first bookmark is only its first chapter ("Introduction")
    cover = next((ln.strip() for ln in page_texts[0].splitlines() if ln.strip()), "")
    title = meta_title or (cover if 0 < len(cover) <= 120 else (outline[0][2] if outline else first[:200]))
    return Document(
        doc_id=doc_id_for(path, root), title=title, text=text, source=source, format="pdf",
        content_hash=content_hash(raw, path.suffix), pages=starts,
    )


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


class NotFollowed(InputError):
    """A path the folder walk skips on purpose (special file, dangling symlink, link out of the
    folder): reported, and a document previously indexed from it is not kept."""


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def scan_folder(root: Path, follow_links: bool = False) -> Iterator[Path | InputError]:
    """Walk ``root`` in sorted order: yield each regular file to load, or an InputError (an
    :class:`~citewise.core.InputWarning` for harmless oddities) naming each path that is skipped.

    Hidden files and folders are skipped silently. Never opens a file, so a FIFO cannot hang it.
    Skipped with a line: FIFOs, sockets and devices; dangling symlinks; symlinks (to files or
    folders) whose target is outside ``root`` unless ``follow_links``; symlinked folders unless
    ``follow_links`` (then followed once each, loops cut). A folder named like a document
    (``notes.md/``) gets a warning and is walked as a folder. A folder that cannot be listed
    (permissions) is an InputError naming it.
    """
    root = Path(root)
    if not root.is_dir():
        try:
            mode = os.stat(root).st_mode
        except OSError as e:
            yield InputError(str(root), f"cannot read file: {e.strerror or e}")
            return
        if stat.S_ISREG(mode):
            yield root
        else:
            yield NotFollowed(str(root), f"{_kind(mode)}, not a regular file; skipped")
        return
    real_root = os.path.realpath(root)
    seen_dirs = {real_root}

    def link_problem(p: Path) -> InputError | None:
        target = os.path.realpath(p)
        if not os.path.exists(target):
            try:
                os.stat(p)
            except OSError as e:
                if e.errno == errno.ELOOP:  # a -> b -> a: realpath stops, nothing is missing
                    return NotFollowed(str(p), f"symlink loop (its target {os.readlink(p)} leads back to it); skipped")
            return NotFollowed(str(p), f"dangling symlink (its target {os.readlink(p)} does not exist); skipped")
        if not follow_links and not _inside(target, real_root):
            return NotFollowed(str(p), f"symlink to {target}, outside the ingested folder; not followed "
                                      "(use --follow-links to ingest it)")
        return None

    unreadable: list[OSError] = []  # os.walk skips a folder it cannot list unless told
    for dirpath, dirnames, filenames in os.walk(root, followlinks=follow_links, onerror=unreadable.append):
        while unreadable:
            e = unreadable.pop(0)
            yield InputError(str(e.filename), f"cannot read folder: {e.strerror or e}; its files are skipped "
                                              "(their indexed versions are kept)")
        keep = []
        for d in sorted(dirnames):
            if d.startswith("."):
                continue
            p = Path(dirpath) / d
            if p.is_symlink():
                problem = link_problem(p)
                if problem is None and not follow_links:
                    problem = InputWarning(str(p), "symlinked folder, not followed (use --follow-links to ingest it)")
                if problem is not None:
                    yield problem
                    continue
            real = os.path.realpath(p)
            if real in seen_dirs:
                yield InputWarning(str(p), f"folder already ingested as {real} (a symlink loop or a second link); skipped")
                continue
            seen_dirs.add(real)
            if p.suffix.lower() in SUPPORTED_EXT:
                yield InputWarning(str(p), "a folder named like a document file; ingesting the files inside it")
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            if f.startswith("."):
                continue
            p = Path(dirpath) / f
            if p.is_symlink():
                problem = link_problem(p)
                if problem is not None:
                    yield problem
                    continue
            try:
                mode = os.stat(p).st_mode
            except OSError as e:
                yield InputError(str(p), f"cannot read file: {e.strerror or e}")
                continue
            if not stat.S_ISREG(mode):
                yield NotFollowed(str(p), f"{_kind(mode)}, not a regular file; skipped")
                continue
            yield p
    for e in unreadable:  # the root itself, or the last folder walked
        yield InputError(str(e.filename), f"cannot read folder: {e.strerror or e}; its files are skipped "
                                          "(their indexed versions are kept)")


def iter_files(root: Path, follow_links: bool = False) -> list[Path]:
    """Regular files below ``root`` that :func:`load_folder` would load, in sorted order
    (hidden files and folders, special files and links it would skip are left out)."""
    return [p for p in scan_folder(Path(root), follow_links) if isinstance(p, Path)]


def load_folder(root: Path, follow_links: bool = False) -> Iterator[Document | InputError]:
    """Load every file below ``root``; yields a Document or the InputError for each file.

    Any exception while loading one file (not only a loader's own InputError) becomes that
    file's InputError, so one bad file never stops the rest. A file of a type citewise does not
    read (an image beside the docs) is an :class:`InputWarning`, not an error: it is skipped with
    a line and does not make ``ingest`` exit 3. Paths that :func:`scan_folder`
    skips are yielded as their InputError / InputWarning.

    Raises:
        InputError: ``root`` does not exist.
    """
    root = Path(root)
    if not root.exists():
        raise InputError(str(root), "no such file or folder")
    base = root.parent if root.is_file() else root
    for path in scan_folder(root, follow_links):
        if isinstance(path, InputError):
            yield path
            continue
        ext = path.suffix.lower()
        if ext not in SUPPORTED_EXT:  # an image or a build file beside the docs: not an error
            yield InputWarning(str(path), f"not a document type citewise reads ('{ext or '(none)'}'); skipped "
                                          f"(supported: {', '.join(sorted(SUPPORTED_EXT))})")
            continue
        bad = next((ch for ch in str(path) if "\udc80" <= ch <= "\udcff"), None)
        if bad is not None:  # undecodable bytes in the name: no id or row could hold it
            yield InputError(str(path), f"file name is not UTF-8 (byte 0x{ord(bad) - 0xDC00:02x}); rename the file")
            continue
        try:
            yield load_file(path, base)
        except InputError as e:
            yield e
        except RecursionError:
            yield InputError(str(path), "could not be loaded: structure nested too deeply")
        except Exception as e:  # a loader bug or library error on a hostile file: that file's error
            yield InputError(str(path), f"could not be loaded ({_one_line(e)})")


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
