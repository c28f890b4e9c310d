"""Where a store keeps what is derived from its chunks at the document and cluster level: the
document summaries of the hierarchical retriever and the RAPTOR trees.

Two tables, each written whole (one atomic replace) and read whole, by the retrievers
(:mod:`citewise.retrieval.hierarchical`, :mod:`citewise.retrieval.raptor`), which decide what to
summarise and how to search:

* **summaries**: one entry per document — a dict with ``doc_id``, ``title``, ``outline`` (list),
  ``summary``, ``model``, ``content_hash``, ``groups`` (list) — and its vector;
* **trees**: per permission group set, a dict with ``groups``, ``doc_hashes``, ``leaf_doc`` and
  ``nodes`` (dicts with ``id``, ``level``, ``children``, ``leaves``, ``summary``, ``groups``),
  and each node's vector by node id.

Both record the embedder that made the vectors; a table written with another embedder reads as
absent (the retriever rebuilds it). A read may name the reader's groups: then only entries and
nodes whose groups meet them come back (the store's "any group matches" rule, as for chunks).

Backends: the embedded store keeps them as files beside it (:class:`FolderSummaries` in
``<index>/doclevel/``, :class:`FolderTrees` in ``<index>/raptor/``; each file replaced
atomically); a store that has tables of its own for them says so with ``summary_table()`` and
``tree_table()`` (PostgreSQL: :mod:`citewise.store.pg_derived`, under row-level security).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence, TypedDict, cast

import numpy as np

if TYPE_CHECKING:  # type-only: the Store protocol names these tables
    from citewise.store.base import Store


FORMAT = 1


class SummaryEntry(TypedDict):
    """One document's entry in the summary table (lists come back from JSON and SQL, tuples may
    go in)."""

    doc_id: str
    title: str
    outline: Sequence[str]
    summary: str
    model: str
    content_hash: str
    groups: Sequence[str]


class TreeNodeEntry(TypedDict):
    """One RAPTOR node of a stored tree (its vector is kept by ``id`` beside the trees)."""

    id: str
    level: int
    children: list[str]
    leaves: list[str]
    summary: str
    groups: Sequence[str]


class TreeEntry(TypedDict):
    """One group set's stored RAPTOR tree."""

    groups: Sequence[str]
    doc_hashes: dict[str, str]
    leaf_doc: dict[str, str]
    nodes: list[TreeNodeEntry]


class SummaryTable(Protocol):
    """Storage of the document summaries (module docstring)."""

    #: names the table in messages and per-process caches (a folder, or a URL and schema)
    where: str

    def load(self, embedder: str, groups: Sequence[str] | None = None) -> tuple[list[SummaryEntry], np.ndarray] | None:
        """Entries sorted by ``doc_id`` and their vectors (shape (n, dim)); None when nothing was
        written, it was written with another embedder, or it cannot be read."""
        ...

    def save(self, embedder: str, entries: list[SummaryEntry], vectors: np.ndarray) -> None:
        """Replace the whole table."""
        ...

    def exists(self) -> bool: ...


class TreeTable(Protocol):
    """Storage of the RAPTOR trees (module docstring)."""

    where: str

    def load(
        self, embedder: str, groups: Sequence[str] | None = None
    ) -> tuple[dict[str, TreeEntry], dict[str, np.ndarray]] | None:
        """Trees by key and node vectors by node id; None as :meth:`SummaryTable.load`."""
        ...

    def save(self, embedder: str, trees: dict[str, TreeEntry], vectors: dict[str, np.ndarray]) -> None: ...

    def exists(self) -> bool: ...


def _visible(groups_of_row: Sequence[str], groups: Sequence[str] | None) -> bool:
    return groups is None or bool(set(groups) & set(groups_of_row))


def _put(path: Path, write: Callable[[Path], Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    write(tmp)
    os.replace(tmp, path)


class FolderSummaries:
    """Summaries as ``meta.json``, ``entries.jsonl`` and ``vectors.npy`` in a folder."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.where = str(self.folder)

    def exists(self) -> bool:
        return (self.folder / "meta.json").exists()

    def load(self, embedder: str, groups: Sequence[str] | None = None) -> tuple[list[SummaryEntry], np.ndarray] | None:
        meta_p, ent_p, vec_p = (self.folder / n for n in ("meta.json", "entries.jsonl", "vectors.npy"))
        if not (meta_p.exists() and ent_p.exists() and vec_p.exists()):
            return None
        try:
            meta = json.loads(meta_p.read_text())
            if meta.get("format") != FORMAT or meta.get("embedder") != embedder:
                return None
            entries: list[SummaryEntry] = [json.loads(line) for line in ent_p.read_text(encoding="utf-8").splitlines()]
            vectors: np.ndarray = np.load(vec_p)
        except (OSError, ValueError, EOFError):
            return None
        if vectors.ndim != 2 or len(vectors) != len(entries):
            return None
        keep = [i for i, e in enumerate(entries) if _visible(e.get("groups", ()), groups)]
        return [entries[i] for i in keep], vectors[keep].astype(np.float32)

    def save(self, embedder: str, entries: list[SummaryEntry], vectors: np.ndarray) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        _put(self.folder / "vectors.npy", lambda p: np.save(open(p, "wb"), np.asarray(vectors, dtype=np.float32)))
        _put(
            self.folder / "entries.jsonl",
            lambda p: p.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8"),
        )
        _put(
            self.folder / "meta.json",
            lambda p: p.write_text(json.dumps({"format": FORMAT, "embedder": embedder, "documents": len(entries)})),
        )


class FolderTrees:
    """Trees as ``trees.json`` (nodes with their row in the vectors) and ``vectors.npy``."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.where = str(self.folder)

    def exists(self) -> bool:
        return (self.folder / "trees.json").exists()

    def load(
        self, embedder: str, groups: Sequence[str] | None = None
    ) -> tuple[dict[str, TreeEntry], dict[str, np.ndarray]] | None:
        meta = self.folder / "trees.json"
        if not meta.exists():
            return None
        try:
            data = json.loads(meta.read_text())
            if data.get("format") != FORMAT or data.get("embedder") != embedder:
                return None
            vecs = np.load(self.folder / "vectors.npy")
            trees: dict[str, TreeEntry] = {}
            vectors: dict[str, np.ndarray] = {}
            for key, t in data["trees"].items():
                if not _visible(t["groups"], groups):
                    continue
                for nd in t["nodes"]:
                    vectors[nd["id"]] = vecs[nd["row"]].astype(np.float32)
                # the stored nodes carry their "row" in vectors.npy, which the entries leave out
                nodes = [cast(TreeNodeEntry, {k: v for k, v in nd.items() if k != "row"}) for nd in t["nodes"]]
                trees[key] = cast(TreeEntry, {**t, "nodes": nodes})
        except (OSError, ValueError, EOFError, KeyError, TypeError, IndexError):
            return None
        return trees, vectors

    def save(self, embedder: str, trees: dict[str, TreeEntry], vectors: dict[str, np.ndarray]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        rows: list[np.ndarray] = []
        out: dict[str, Any] = {}
        for key, t in sorted(trees.items()):
            nodes: list[dict[str, Any]] = []
            for nd in t["nodes"]:
                nodes.append({**nd, "row": len(rows)})
                rows.append(vectors[nd["id"]])
            out[key] = {**t, "nodes": nodes}
        dim = len(rows[0]) if rows else 0
        _put(
            self.folder / "vectors.npy",
            lambda p: np.save(
                open(p, "wb"), np.stack(rows).astype(np.float32) if rows else np.zeros((0, dim), np.float32)
            ),
        )
        _put(
            self.folder / "trees.json",
            lambda p: p.write_text(json.dumps({"format": FORMAT, "embedder": embedder, "trees": out})),
        )


def summaries_of(store: Store) -> SummaryTable:
    """The summary table of ``store`` (:meth:`citewise.store.base.Store.summary_table`: tables of
    a server store, or ``<index>/doclevel/`` beside an embedded one)."""
    return store.summary_table()


def trees_of(store: Store) -> TreeTable:
    """The RAPTOR tree table of ``store`` (:meth:`citewise.store.base.Store.tree_table`)."""
    return store.tree_table()
