"""Settings, URL handling, DDL and row encoding of the PostgreSQL store
(:mod:`citewise.store.postgres`)."""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any, Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

from citewise.core import CitewiseError
from citewise.store.pg_names import GROUPS_SETTING, SEARCH_ROLE
from citewise.store.base import CHUNK_COLUMNS


#: BM25 parameters, as LanceDB's FTS (lance ``BM25Scorer``: K1 = 1.2, B = 0.75).
BM25_K1 = 1.2
BM25_B = 0.75
#: Tokens of this many UTF-8 bytes or more are not indexed (LanceDB ``max_token_length=64``:
#: Tantivy's ``RemoveLongFilter`` keeps tokens shorter than the limit; measured on LanceDB 0.40).
MAX_TOKEN_BYTES = 64


#: HNSW graph degree and build beam (pgvector defaults 16 and 64), see :data:`HNSW_EF_SEARCH`.
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 200
#: ``maintenance_work_mem`` for the HNSW build at least (pgvector builds fastest when the graph
#: fits; past it, it goes on on disk, much more slowly); more for a larger graph, see
#: :func:`hnsw_build_memory`. Also used to rebuild the postings keys after a bulk load.
HNSW_BUILD_MEMORY = "1GB"
#: ... and at most this many MB, whatever the estimate (the server, not this process, holds it).
HNSW_BUILD_MEMORY_MAX_MB = 8192
DEFAULT_SCHEMA = "citewise"


#: BM25: candidates joined to the chunk table per pass, as a multiple of the rows wanted (k + the
#: tie margin); more only when the filter's non-group part (current, dates, doc ids) drops too many.
BM25_OVERFETCH = 4
#: Connections per store handle (psycopg_pool ``max_size``; one is opened at start, more on
#: demand). Concurrent queries beyond it wait for a free connection up to :data:`POOL_TIMEOUT_S`.
POOL_MAX_SIZE = 8
#: Seconds to wait for a pooled connection (and for the first one at open).
POOL_TIMEOUT_S = 30.0

#: ``end`` is reserved in SQL: the column is ``end_``
_META_COLS = ["end_" if c == "end" else c for c in CHUNK_COLUMNS] + ["metadata"]

_ROW_COLS = [
    "chunk_id",
    "doc_id",
    "title",
    "title_ids",
    "source",
    "version",
    "updated",
    "effective",
    "current",
    "valid_to",
    "groups",
    "content_hash",
    "indexed_at",
    "source_changed_at",
    "heading_path",
    "text",
    "lexical",
    "doc_len",
    "start",
    "end_",
    "token_count",
    "page_start",
    "page_end",
    "prev_id",
    "next_id",
    "parent_id",
    "vector",
    "units_version",
    "units_key",
    "unit_spans",
    "unit_vectors",
    "metadata",
    "meta_terms",
    "meta_ranges",
]


def import_psycopg() -> ModuleType:
    """``import psycopg`` (psycopg 3), or a clear error naming the package to install."""
    try:
        import psycopg
    except ImportError:
        raise CitewiseError("the PostgreSQL backend needs psycopg 3: pip install 'psycopg[binary]'") from None
    module: ModuleType = psycopg
    return module


def import_pool() -> type[Any]:
    """A ``psycopg_pool.ConnectionPool`` subclass (see :func:`_pool_class`), or a clear error
    naming the package to install."""
    try:
        import psycopg_pool  # noqa: F401
    except ImportError:
        raise CitewiseError("the PostgreSQL backend needs psycopg-pool: pip install psycopg-pool") from None
    return _pool_class()


_POOL_CLASS: type[Any] | None = None


def _pool_class() -> type[Any]:
    """``psycopg_pool.ConnectionPool`` whose finaliser does not join its worker threads.

    A store dropped without :meth:`PostgresStore.close` (an ``Index`` going out of scope) is
    collected by the cycle collector in whichever thread runs it, sometimes one of the pool's
    own workers; psycopg_pool 3.3's ``__del__`` then joins that thread with itself and raises
    ``RuntimeError: cannot join current thread`` (ignored, but reported). Here ``__del__`` only
    signals the workers to stop (they exit by themselves); ``close()`` is unchanged.
    """
    global _POOL_CLASS
    if _POOL_CLASS is None:
        from psycopg_pool import ConnectionPool

        class _Pool(ConnectionPool):  # type: ignore[misc]  # psycopg_pool is read untyped
            def __del__(self) -> None:
                if getattr(self, "_closed", True):
                    return
                self._signal_stop_worker()

        _POOL_CLASS = _Pool
    return _POOL_CLASS


def _reset_principal(conn: Any) -> None:
    """Pool ``reset`` callback, run on every connection handed back: drop any role and groups
    setting left at session level. Reads set both per transaction only (``SET LOCAL ROLE``,
    ``set_config(..., true)``) and the pool rolls back an open transaction before this, so this
    is a second wall: a pooled connection never carries a principal into its next borrower."""
    conn.execute(f"RESET ROLE; RESET {GROUPS_SETTING}")  # one round trip (simple query protocol)


def split_url(url: str) -> tuple[str, str]:
    """(libpq URL without our ``schema`` parameter, schema name).

    >>> split_url("postgresql://u@h/db?schema=tenant_a&sslmode=require")
    ('postgresql://u@h/db?sslmode=require', 'tenant_a')
    >>> split_url("postgresql:///db")
    ('postgresql:///db', 'citewise')

    Raises:
        CitewiseError: not a ``postgresql://`` / ``postgres://`` URL, or a bad schema name.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise CitewiseError(f"--store {url!r}: expected a postgresql:// URL")
    params = parse_qsl(parts.query, keep_blank_values=True)
    schema = DEFAULT_SCHEMA
    kept = []
    for k, v in params:
        if k == "schema":
            schema = v
        else:
            kept.append((k, v))
    if not schema or not all(c.isalnum() or c == "_" for c in schema) or schema[0].isdigit():
        raise CitewiseError(f"--store {url!r}: schema must be letters, digits and _ (got {schema!r})")
    out = urlunsplit(parts._replace(query=urlencode(kept)))
    if not parts.netloc and not out.startswith(f"{parts.scheme}://"):
        # "postgresql:///db" (local socket, no host): urlunsplit drops the empty authority,
        # and libpq does not read "postgresql:/db"
        out = f"{parts.scheme}://" + out[len(parts.scheme) + 1 :]
    return out, schema.lower()


def bm25_terms(lexical: str) -> list[str]:
    """The indexed tokens of a lexical string: whitespace split, tokens of
    :data:`MAX_TOKEN_BYTES` UTF-8 bytes or more dropped (as LanceDB's FTS index does).

    >>> bm25_terms("refund  e-1004 " + "x" * 64)
    ['refund', 'e-1004']
    """
    return [t for t in lexical.split() if len(t.encode("utf-8")) < MAX_TOKEN_BYTES]


#: BM25 hits read their chunk's id, document, title and the usual filter columns from this
#: covering index (index-only after VACUUM) instead of the wide chunk rows (vector and text
#: inline): ~0.005 ms instead of ~0.05 ms per hit at 5k chunks (EXPLAIN ANALYZE, SciFact).
_HIT_INDEX = (
    "CREATE INDEX IF NOT EXISTS chunks_hit ON {s}.chunks (rid) INCLUDE (chunk_id, doc_id, title, current, groups)"
)


def _postings_keys(schema: str) -> dict[str, tuple[str, str]]:
    """The postings table's primary key (covering: BM25 reads postings from it alone), its foreign
    key to the chunks (a document's postings go with its rows) and its ``rid`` index, by name,
    each as ``(statement that adds it, statement that drops it)``: :func:`_ddl` adds them,
    :meth:`PostgresStore.bulk_load` drops them and puts them back."""
    s = schema
    constraint = f"ALTER TABLE {s}.postings DROP CONSTRAINT IF EXISTS {{}}"
    return {
        "postings_pkey": (
            f"ALTER TABLE {s}.postings ADD CONSTRAINT postings_pkey PRIMARY KEY (term_id, rid) "
            "INCLUDE (tf, doc_len, groups)",
            constraint.format("postings_pkey"),
        ),
        "postings_rid_fkey": (
            f"ALTER TABLE {s}.postings ADD CONSTRAINT postings_rid_fkey FOREIGN KEY (rid) "
            f"REFERENCES {s}.chunks (rid) ON DELETE CASCADE",
            constraint.format("postings_rid_fkey"),
        ),
        "postings_rid": (
            f"CREATE INDEX IF NOT EXISTS postings_rid ON {s}.postings (rid)",
            f"DROP INDEX IF EXISTS {s}.postings_rid",
        ),
    }


def _ddl(schema: str, dim: int) -> list[str]:
    s = schema
    return [
        f"CREATE SCHEMA IF NOT EXISTS {s}",
        f"""CREATE TABLE IF NOT EXISTS {s}.chunks (
            chunk_id text PRIMARY KEY, rid bigint GENERATED ALWAYS AS IDENTITY UNIQUE, doc_id text NOT NULL, title text NOT NULL,
            title_ids text[] NOT NULL, source text NOT NULL, version text NOT NULL,
            updated text NOT NULL, effective text NOT NULL, current boolean NOT NULL,
            valid_to text NOT NULL, groups text[] NOT NULL, content_hash text NOT NULL,
            indexed_at text NOT NULL, source_changed_at text NOT NULL, heading_path text[] NOT NULL,
            text text NOT NULL, lexical text NOT NULL, doc_len integer NOT NULL,
            start bigint NOT NULL, end_ bigint NOT NULL, token_count integer NOT NULL,
            page_start integer NOT NULL, page_end integer NOT NULL,
            prev_id text, next_id text, parent_id text, vector vector({dim}) NOT NULL,
            units_version text NOT NULL DEFAULT '', units_key text NOT NULL DEFAULT '',
            unit_spans integer[], unit_vectors bytea)""",
        # document metadata (citewise.store.metadata_sql); added to a table made before it existed
        f"ALTER TABLE {s}.chunks ADD COLUMN IF NOT EXISTS metadata jsonb NOT NULL DEFAULT '{{}}'",
        f"ALTER TABLE {s}.chunks ADD COLUMN IF NOT EXISTS meta_terms text[] NOT NULL DEFAULT '{{}}'",
        f"ALTER TABLE {s}.chunks ADD COLUMN IF NOT EXISTS meta_ranges jsonb NOT NULL DEFAULT '{{}}'",
        f"CREATE INDEX IF NOT EXISTS chunks_meta_terms ON {s}.chunks USING gin (meta_terms)",
        f"CREATE INDEX IF NOT EXISTS chunks_doc_id ON {s}.chunks (doc_id)",
        _HIT_INDEX.format(s=s),
        f"CREATE INDEX IF NOT EXISTS chunks_groups ON {s}.chunks USING gin (groups)",
        f"CREATE INDEX IF NOT EXISTS chunks_title_ids ON {s}.chunks USING gin (title_ids)",
        # vectors stay in the row (not TOASTed out of line): an exact scan reads them in place
        f"ALTER TABLE {s}.chunks ALTER COLUMN vector SET STORAGE MAIN",
        f"""CREATE TABLE IF NOT EXISTS {s}.postings (
            term_id integer NOT NULL, rid bigint NOT NULL,
            tf integer NOT NULL, doc_len integer NOT NULL, groups text[] NOT NULL)""",
        *(add for add, _ in _postings_keys(s).values()),
        f"""CREATE TABLE IF NOT EXISTS {s}.term_stats (term_id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            term text NOT NULL UNIQUE, df integer NOT NULL)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.corpus_stats (one boolean PRIMARY KEY DEFAULT true CHECK (one),
            n_chunks bigint NOT NULL, total_len bigint NOT NULL)""",
        f"INSERT INTO {s}.corpus_stats VALUES (true, 0, 0) ON CONFLICT DO NOTHING",
        f"""CREATE TABLE IF NOT EXISTS {s}.ingest_runs (
            started_at text NOT NULL, finished_at text NOT NULL, root text NOT NULL,
            added bigint NOT NULL, updated bigint NOT NULL, unchanged bigint NOT NULL,
            deleted bigint NOT NULL, superseded bigint NOT NULL, errors bigint NOT NULL,
            chunks_embedded bigint NOT NULL)""",
        f"CREATE TABLE IF NOT EXISTS {s}.meta (key text PRIMARY KEY, value text NOT NULL)",
        # row-level security: the search role sees only rows of the transaction's groups
        f"ALTER TABLE {s}.chunks ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {s}.postings ENABLE ROW LEVEL SECURITY",
        f"DROP POLICY IF EXISTS by_groups ON {s}.chunks",
        f"""CREATE POLICY by_groups ON {s}.chunks FOR SELECT TO {SEARCH_ROLE}
            USING (groups && coalesce(nullif(current_setting('{GROUPS_SETTING}', true), '')::text[], '{{}}'))""",
        f"DROP POLICY IF EXISTS by_chunk ON {s}.postings",
        f"""CREATE POLICY by_chunk ON {s}.postings FOR SELECT TO {SEARCH_ROLE}
            USING (groups && coalesce(nullif(current_setting('{GROUPS_SETTING}', true), '')::text[], '{{}}'))""",
        f"GRANT USAGE ON SCHEMA {s} TO {SEARCH_ROLE}",
        f"GRANT SELECT ON {s}.chunks, {s}.postings, {s}.term_stats, {s}.corpus_stats TO {SEARCH_ROLE}",
    ]


def hnsw_build_memory(rows: int, dim: int, m: int = HNSW_M) -> str:
    """``maintenance_work_mem`` for an HNSW build over ``rows`` vectors of ``dim`` float32s: the
    in-memory graph estimated as each element's vector (4 * dim + 8 bytes), its base-layer
    neighbour list (2 * m candidates of 16 bytes; upper layers add ~1/m of that) and ~150 bytes
    of element header (pgvector ``HnswElementData``, src/hnsw.h), plus 25%; never below
    :data:`HNSW_BUILD_MEMORY` (1 GB), never above :data:`HNSW_BUILD_MEMORY_MAX_MB`.

    >>> hnsw_build_memory(100_000, 256), hnsw_build_memory(1_000_000, 256), hnsw_build_memory(10**8, 384)
    ('1024MB', '2630MB', '8192MB')
    """
    per_element = 4 * dim + 8 + 2 * m * 16 + 150
    mb = math.ceil(rows * per_element * 1.25 / 2**20)
    return f"{min(max(mb, 1024), HNSW_BUILD_MEMORY_MAX_MB)}MB"


def _vector_text(vec: np.ndarray | Sequence[float]) -> str:
    """pgvector's text form of a float vector: ``[0.5,-1.0]`` (each float32 as Python's repr of
    the equal double, so the value round-trips exactly)."""
    return "[" + ",".join(map(repr, np.asarray(vec, dtype=np.float32).reshape(-1).tolist())) + "]"


def _copy_text_array(values: Sequence[str]) -> str:
    r"""A ``text[]`` value in COPY's text format: the array literal with every element quoted
    (``"`` and ``\`` backslash-escaped inside it, PostgreSQL "Array Value Input"), then COPY's
    escapes for backslash, tab, newline and carriage return (PostgreSQL ``COPY``, "Text Format").

    >>> _copy_text_array(["public", 'a"b'])
    '{"public","a\\\\"b"}'
    >>> _copy_text_array([])
    '{}'
    """
    literal = "{" + ",".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "}"
    return literal.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
