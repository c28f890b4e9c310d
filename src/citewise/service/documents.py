"""The permission-checked source view of one document: its text and metadata, and the character
span to highlight (a citation's ``start``/``end``, offsets into the source file).

What a reader is sent by default is the cited span with some context around it
(:meth:`SourceView.excerpt`), not the whole document: a client that needs the whole text asks for
it (``full``) and the server must allow it (``citewise serve --full-documents``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from citewise.core import Principal

#: Characters of context on each side of the cited span in a source view (the API's default).
DEFAULT_CONTEXT_CHARS = 300
#: Most characters of context a caller may ask for on each side.
MAX_CONTEXT_CHARS = 2000


@dataclass
class SourceView:
    """One document as a principal may see it.

    Attributes:
        doc_id, title, version, updated, source: the stored document metadata (``source``: the
            file's path on the server).
        path: the source file's path relative to the folder it was ingested from
            (:func:`relative_source`), what readers are shown: the server's folders stay private.
        text: the source file's text that chunk and citation offsets point into (front matter
            included for Markdown; the extracted text for HTML, PDF and DOCX).
        exact: True when ``text`` is the source file as indexed (same content hash); False when the
            file changed or is gone since and ``text`` was rebuilt from the indexed chunks (gaps
            between chunks are blank).
        chunks: ``(chunk_id, start, end)`` of the document's chunks, in source order.
    """

    doc_id: str
    title: str
    version: str
    updated: str
    source: str
    text: str
    exact: bool
    chunks: list[tuple[str, int, int]]
    path: str = ""

    def span(self, start: int | None, end: int | None) -> tuple[int, int] | None:
        """A valid ``[start, end)`` within :attr:`text`, or None when not given or out of range."""
        if start is None or end is None or not (0 <= start < end <= len(self.text)):
            return None
        return start, end

    @property
    def file_name(self) -> str:
        """The source file's name."""
        return Path(self.source).name

    def excerpt(self, start: int | None, end: int | None, context: int = DEFAULT_CONTEXT_CHARS) -> tuple[int, int]:
        """The ``[from, to)`` window of :attr:`text` shown around the span ``[start, end)``.

        ``context`` characters on each side (clipped to the text), then each edge moved inwards to
        just past the nearest whitespace so no word is cut (never into the span; an edge with no
        whitespace in its margin stays). Without a valid span (:meth:`span`): the document's
        opening, ``2 * context`` characters, its end moved back the same way.

        Raises:
            ValueError: ``context`` < 0.
        """
        if context < 0:
            raise ValueError(f"context must be >= 0 characters, got {context}")
        n = len(self.text)
        sp = self.span(start, end)
        s, e = sp if sp is not None else (0, 0)
        lo, hi = (max(0, s - context), min(n, e + context)) if sp is not None else (0, min(n, 2 * context))
        if lo > 0:
            cut = next((i for i in range(lo, s) if self.text[i].isspace()), None)
            lo = lo if cut is None else cut + 1
        if hi < n:
            cut = next((i for i in range(hi - 1, e - 1, -1) if self.text[i].isspace()), None)
            hi = hi if cut is None or cut <= e else cut
        return lo, hi

    def as_dict(
        self, start: int | None = None, end: int | None = None, context: int = DEFAULT_CONTEXT_CHARS, full: bool = False
    ) -> dict:
        """JSON of the view.

        ``highlight``: the requested span ``{start, end, text}`` (None when absent or invalid);
        ``context``: the window around it (:meth:`excerpt`) as ``{start, end, text}``, offsets into
        the source like the span's; ``source``: :attr:`path` (relative to the ingested folder); ``length``: characters in the whole text; ``text``: the whole
        text only when ``full`` (else None); ``chunks``: every chunk's id and offsets.
        """
        sp = self.span(start, end)
        lo, hi = self.excerpt(start, end, context)
        return {
            "doc_id": self.doc_id,
            "title": self.title,
            "version": self.version,
            "updated": self.updated,
            "source": self.path or self.file_name,
            "exact": self.exact,
            "length": len(self.text),
            "full": full,
            "highlight": None if sp is None else {"start": sp[0], "end": sp[1], "text": self.text[sp[0] : sp[1]]},
            "context": {"start": lo, "end": hi, "text": self.text[lo:hi]},
            "text": self.text if full else None,
            "chunks": [{"chunk_id": c, "start": s, "end": e} for c, s, e in self.chunks],
        }


def relative_source(source: str, roots: Sequence[str]) -> str:
    """``source`` relative to the first of ``roots`` (ingest roots, newest first) it lies in, as a
    POSIX path (``help/refunds/refunds-pro.md``); a root that is the file itself gives its name.
    Paths are compared as recorded (no file system access). Under no root: the file name.
    """
    src = Path(source)
    for root in roots:
        base = Path(root)
        if base == src:
            return src.name
        try:
            return src.relative_to(base).as_posix()
        except ValueError:
            continue
    return src.name


def source_view(index, doc_id: str, principal: Principal) -> SourceView | None:
    """The document ``doc_id`` (a current id, or ``id@version`` for a kept older version) if
    ``principal`` may read it, else None — a missing and a forbidden document look the same, so
    the answer does not reveal that a restricted document exists.

    The permission filter runs inside the store query (as for searches).
    """
    from citewise.text.loaders import load_file, read_text

    store = index.store
    rows = store.document_chunks(doc_id, principal.all_groups())
    if not rows:
        return None
    first = rows[0]
    entry = store.documents([doc_id]).get(doc_id)
    text, exact = None, False
    path = Path(first.source)
    try:
        doc = load_file(path, path.parent)
        if entry is not None and doc.content_hash == entry.content_hash:
            # chunks were cut from the loader's text; a Markdown file is shown as written (its
            # front matter and the navigation the loader blanked are at the same offsets)
            loaded = doc.text
            if doc.format == "markdown":
                text = read_text(path)[1]
                loaded = text[: doc.offset_base] + doc.text
            else:
                text = doc.text
            # an HTML page's text also depends on its folder (blocks its sibling pages repeat are
            # dropped at ingest): use it only where every stored chunk is where it was
            exact = len(loaded) == len(text) and all(
                loaded[r.start : r.end] == r.text[len(r.text) - (r.end - r.start) :] for r in rows
            )
            text = text if exact else None
    except Exception:  # noqa: BLE001 - a gone or unreadable source falls back to the stored chunks
        text = None
    if text is None:
        size = max(r.end for r in rows)
        buf = [" "] * size
        for r in rows:
            piece = r.text[len(r.text) - (r.end - r.start) :]
            buf[r.start : r.end] = list(piece)
        text = "".join(buf)
    roots = [run.root for run in reversed(store.runs())]
    return SourceView(
        doc_id=doc_id,
        title=first.title,
        version=first.version,
        updated=first.updated,
        source=first.source,
        text=text,
        exact=exact,
        chunks=[(r.chunk_id, r.start, r.end) for r in rows],
        path=relative_source(first.source, roots),
    )
