"""``citewise inspect``: how files will be read and chunked, without indexing anything.

For each document under a file or folder: its format, title and chunks (id, heading path, tokens,
start of text), and what its loader dropped as navigation or page furniture, with the reason
(:mod:`citewise.text.notes`); files that cannot be loaded are listed with their one-line error.
A user checks a new corpus with it before ingesting: are the headings found, is the navigation
gone, is anything of value dropped.
"""

from __future__ import annotations

from pathlib import Path

from citewise.core import InputError, InputWarning
from citewise.text import notes
from citewise.text.chunker import MAX_TOKENS, MIN_TOKENS, Chunker


def inspect_path(
    path: Path, follow_links: bool = False, min_tokens: int = MIN_TOKENS, max_tokens: int = MAX_TOKENS
) -> dict:
    """The preview of ``path`` (a file or folder) as a JSON-ready dict::

        {"documents": [{"doc_id", "source", "format", "title", "chunks": [{"chunk_id",
          "heading_path", "tokens", "start", "end", "text"}], "dropped": [{"where", "reason",
          "text"}]}], "errors": [str], "warnings": [str]}

    Raises:
        InputError: ``path`` does not exist.
    """
    from citewise.text.loaders import load_folder

    chunker = Chunker(min_tokens=min_tokens, max_tokens=max_tokens)
    docs, errors, warnings = [], [], []
    with notes.collecting() as dropped:
        items = list(load_folder(Path(path), follow_links=follow_links))
    for item in items:
        if isinstance(item, InputWarning):
            warnings.append(str(item))
            continue
        if isinstance(item, InputError):
            errors.append(str(item))
            continue
        chunks = chunker.chunk(item.doc_id, item.title, item.text)
        mine = [d for d in dropped if d.source == item.source or d.source.startswith(item.source + " ")]
        docs.append(
            {
                "doc_id": item.doc_id,
                "source": item.source,
                "format": item.format,
                "title": item.title,
                "chunks": [
                    {
                        "chunk_id": c.chunk_id,
                        "heading_path": list(c.heading_path),
                        "tokens": c.token_count,
                        "start": c.start,
                        "end": c.end,
                        "text": " ".join(c.text.split())[:80],
                    }
                    for c in chunks
                ],
                "dropped": [
                    {
                        "where": (d.source[len(item.source) :].strip() + " " + d.where).strip(),
                        "reason": d.reason,
                        "text": d.text,
                    }
                    for d in mine
                ],
            }
        )
    return {"documents": docs, "errors": errors, "warnings": warnings}


def render(report: dict, show_chunks: bool = True) -> str:
    """The preview as text: per document a header line, one line per chunk (tokens, heading
    path, start of text) and one per dropped thing (where, why, its start), then a summary."""
    out = []
    for d in report["documents"]:
        out.append(
            f'{d["source"]}  [{d["format"]}]  {d["doc_id"]}  "{d["title"]}"  '
            f"{len(d['chunks'])} chunks, {len(d['dropped'])} dropped"
        )
        if show_chunks:
            for c in d["chunks"]:
                path = " > ".join(h for h in c["heading_path"] if h)
                out.append(f"  {c['tokens']:>4} tok  {path}  | {c['text'][:60]}")
        for x in d["dropped"]:
            where = f"{x['where']}: " if x["where"] else ""
            out.append(f"  dropped {where}{x['reason']}  | {x['text'][:60]}")
    for e in report["errors"]:
        out.append(f"error {e}")
    for w in report["warnings"]:
        out.append(f"warning {w}")
    docs = report["documents"]
    n_chunks = sum(len(d["chunks"]) for d in docs)
    deep = sum(1 for d in docs for c in d["chunks"] if len([h for h in c["heading_path"] if h]) > 1)
    out.append(
        f"{len(docs)} documents, {n_chunks} chunks ({deep} with a heading below the title), "
        f"{sum(len(d['dropped']) for d in docs)} things dropped, {len(report['errors'])} errors"
    )
    return "\n".join(out)
