"""The summary and tree tables of a PostgreSQL store (:mod:`citewise.store.derived` on
PostgreSQL), in the store's schema:

* ``doc_summaries(doc_id, embedder, title, outline, summary, model, content_hash, groups,
  vector)``: one row per document;
* ``trees(tree_key, embedder, groups, doc_hashes, leaf_doc)`` and ``tree_nodes(node_id,
  tree_key, embedder, level, children, leaves, summary, groups, vector)``.

Vectors are float32 little-endian ``bytea`` (read back exactly; searched in memory by the
retrievers). Permissions as for the chunks (:mod:`citewise.store.postgres`): every table has a
``groups`` column and row-level security, so a read that names the reader's groups runs as the
search role and sees only rows whose groups meet them (the WHERE clause says the same, twice as
for chunks); the owner's read (``groups`` None) sees all. A save replaces the table's rows in
one transaction, so a reader sees the old or the new set, never a mix.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from citewise.store.derived import FORMAT, SummaryEntry, TreeEntry

if TYPE_CHECKING:  # type-only: the store imports this module when asked for its tables
    from citewise.store.postgres import PostgresStore
    from citewise.store.postgres.host import PgCursor

#: Policy name of each derived table (its row-level security), for :mod:`citewise.store.pg_check`.
DERIVED_POLICIES = {"doc_summaries": "summaries_by_groups", "trees": "trees_by_groups", "tree_nodes": "nodes_by_groups"}


def ensure_tables(cur: PgCursor, s: str, dim: int) -> None:
    """Create the three tables, their policies and grants if missing (on ``cur``'s transaction)."""
    from citewise.store.pg_names import GROUPS_SETTING, SEARCH_ROLE

    visible = f"groups && coalesce(nullif(current_setting('{GROUPS_SETTING}', true), '')::text[], '{{}}')"
    cur.execute(f"""CREATE TABLE IF NOT EXISTS {s}.doc_summaries (
        doc_id text PRIMARY KEY, embedder text NOT NULL, title text NOT NULL, outline text[] NOT NULL,
        summary text NOT NULL, model text NOT NULL, content_hash text NOT NULL, groups text[] NOT NULL,
        vector bytea NOT NULL)""")
    cur.execute(f"""CREATE TABLE IF NOT EXISTS {s}.trees (
        tree_key text PRIMARY KEY, embedder text NOT NULL, groups text[] NOT NULL,
        doc_hashes jsonb NOT NULL, leaf_doc jsonb NOT NULL)""")
    cur.execute(f"""CREATE TABLE IF NOT EXISTS {s}.tree_nodes (
        node_id text PRIMARY KEY, tree_key text NOT NULL REFERENCES {s}.trees (tree_key) ON DELETE CASCADE,
        embedder text NOT NULL, level integer NOT NULL, children text[] NOT NULL, leaves text[] NOT NULL,
        summary text NOT NULL, groups text[] NOT NULL, vector bytea NOT NULL)""")
    cur.execute(f"CREATE INDEX IF NOT EXISTS tree_nodes_tree ON {s}.tree_nodes (tree_key)")
    for table, policy in DERIVED_POLICIES.items():
        cur.execute(f"ALTER TABLE {s}.{table} ENABLE ROW LEVEL SECURITY")
        cur.execute(f"DROP POLICY IF EXISTS {policy} ON {s}.{table}")
        cur.execute(f"CREATE POLICY {policy} ON {s}.{table} FOR SELECT TO {SEARCH_ROLE} USING ({visible})")
    cur.execute(f"GRANT SELECT ON {s}.doc_summaries, {s}.trees, {s}.tree_nodes TO {SEARCH_ROLE}")


def _vec(blob: bytes | memoryview) -> np.ndarray:
    return np.frombuffer(bytes(blob), dtype="<f4").astype(np.float32)


class _PgTable:
    def __init__(self, store: PostgresStore):
        self.store = store
        self.where = f"{store._safe_url()} (schema {store.schema})"
        self._ready = False

    def _ensure(self) -> None:
        if self._ready:
            return
        s = self.store.schema
        with self.store._tx() as cur:  # a replica serves reads only: create nothing that exists
            have: int = cur.execute(
                "SELECT count(*) FROM pg_tables WHERE schemaname = %s AND tablename = ANY(%s)",
                (s, list(DERIVED_POLICIES)),
            ).fetchone()[0]
        if have < len(DERIVED_POLICIES):
            with self.store._tx(snapshot=False) as cur:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (self.store._lock_key("derived"),))
                ensure_tables(cur, s, self.store.dim)
        self._ready = True

    def _read(self, groups: Sequence[str] | None) -> AbstractContextManager[PgCursor]:
        """A read transaction: as the search role with ``groups``, or as the owner (None)."""
        return self.store._tx(groups=list(groups) if groups is not None else None)

    #: the ``meta`` key recording the format and embedder the table was written with
    META_KEY = ""

    def _written(self) -> str | None:
        with self.store._tx() as cur:
            row = cur.execute(f"SELECT value FROM {self.store.schema}.meta WHERE key = %s", (self.META_KEY,)).fetchone()
        value: str | None = row[0] if row else None
        return value

    def exists(self) -> bool:
        self._ensure()
        return self._written() is not None

    @staticmethod
    def _where(groups: Sequence[str] | None) -> tuple[str, list[list[str]]]:
        return ("WHERE groups && %s::text[]", [list(groups)]) if groups is not None else ("", [])


class PgSummaries(_PgTable):
    """:class:`citewise.store.derived.SummaryTable` on a :class:`PostgresStore`."""

    META_KEY = "summaries_embedder"

    def load(self, embedder: str, groups: Sequence[str] | None = None) -> tuple[list[SummaryEntry], np.ndarray] | None:
        self._ensure()
        s = self.store.schema
        if self._written() != f"{FORMAT}:{embedder}":
            return None
        where, params = self._where(groups)
        with self._read(groups) as cur:
            rows = cur.execute(
                f"SELECT doc_id, title, outline, summary, model, content_hash, groups, vector "
                f"FROM {s}.doc_summaries {where} ORDER BY doc_id",
                params,
            ).fetchall()
        entries: list[SummaryEntry] = [
            {
                "doc_id": r[0],
                "title": r[1],
                "outline": list(r[2]),
                "summary": r[3],
                "model": r[4],
                "content_hash": r[5],
                "groups": list(r[6]),
            }
            for r in rows
        ]
        dim = self.store.dim
        vectors = np.stack([_vec(r[7]) for r in rows]) if rows else np.zeros((0, dim), np.float32)
        return entries, vectors

    def save(self, embedder: str, entries: list[SummaryEntry], vectors: np.ndarray) -> None:
        self._ensure()
        s = self.store.schema
        vectors = np.asarray(vectors, dtype="<f4")
        with self.store._tx(snapshot=False) as cur:
            cur.execute(f"DELETE FROM {s}.doc_summaries")
            with cur.copy(
                f"COPY {s}.doc_summaries (doc_id, embedder, title, outline, summary, model, content_hash, "
                "groups, vector) FROM STDIN"
            ) as copy:
                for e, v in zip(entries, vectors):
                    copy.write_row(
                        (
                            e["doc_id"],
                            embedder,
                            e["title"],
                            list(e["outline"]),
                            e["summary"],
                            e["model"],
                            e["content_hash"],
                            list(e["groups"]),
                            v.tobytes(),
                        )
                    )
            cur.execute(
                f"INSERT INTO {s}.meta VALUES ('summaries_embedder', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (f"{FORMAT}:{embedder}",),
            )


class PgTrees(_PgTable):
    """:class:`citewise.store.derived.TreeTable` on a :class:`PostgresStore`."""

    META_KEY = "trees_embedder"

    def load(
        self, embedder: str, groups: Sequence[str] | None = None
    ) -> tuple[dict[str, TreeEntry], dict[str, np.ndarray]] | None:
        self._ensure()
        s = self.store.schema
        if self._written() != f"{FORMAT}:{embedder}":
            return None
        where, params = self._where(groups)
        with self._read(groups) as cur:
            trees_rows = cur.execute(
                f"SELECT tree_key, groups, doc_hashes, leaf_doc FROM {s}.trees {where} ORDER BY tree_key", params
            ).fetchall()
            node_rows = cur.execute(
                f"SELECT tree_key, node_id, level, children, leaves, summary, groups, vector "
                f"FROM {s}.tree_nodes {where} ORDER BY tree_key, node_id",
                params,
            ).fetchall()
        trees: dict[str, TreeEntry] = {
            k: {"groups": list(g), "doc_hashes": _json(h), "leaf_doc": _json(ld), "nodes": []}
            for k, g, h, ld in trees_rows
        }
        vectors: dict[str, np.ndarray] = {}
        for key, nid, level, children, leaves, summary, g, blob in node_rows:
            if key in trees:
                trees[key]["nodes"].append(
                    {
                        "id": nid,
                        "level": level,
                        "children": list(children),
                        "leaves": list(leaves),
                        "summary": summary,
                        "groups": list(g),
                    }
                )
                vectors[nid] = _vec(blob)
        return trees, vectors

    def save(self, embedder: str, trees: dict[str, TreeEntry], vectors: dict[str, np.ndarray]) -> None:
        self._ensure()
        s = self.store.schema
        with self.store._tx(snapshot=False) as cur:
            cur.execute(f"DELETE FROM {s}.tree_nodes")
            cur.execute(f"DELETE FROM {s}.trees")
            with cur.copy(f"COPY {s}.trees (tree_key, embedder, groups, doc_hashes, leaf_doc) FROM STDIN") as copy:
                for key, t in sorted(trees.items()):
                    copy.write_row(
                        (key, embedder, list(t["groups"]), json.dumps(t["doc_hashes"]), json.dumps(t["leaf_doc"]))
                    )
            with cur.copy(
                f"COPY {s}.tree_nodes (node_id, tree_key, embedder, level, children, leaves, summary, "
                "groups, vector) FROM STDIN"
            ) as copy:
                for key, t in sorted(trees.items()):
                    for nd in t["nodes"]:
                        copy.write_row(
                            (
                                nd["id"],
                                key,
                                embedder,
                                int(nd["level"]),
                                list(nd["children"]),
                                list(nd["leaves"]),
                                nd["summary"],
                                list(nd["groups"]),
                                np.asarray(vectors[nd["id"]], dtype="<f4").tobytes(),
                            )
                        )
            cur.execute(
                f"INSERT INTO {s}.meta VALUES ('trees_embedder', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (f"{FORMAT}:{embedder}",),
            )


def _json(v: Any) -> Any:
    """A ``jsonb`` value as psycopg returns it (already parsed), or JSON text parsed."""
    return v if isinstance(v, (dict, list)) else json.loads(v)
