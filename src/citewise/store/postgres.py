"""PostgreSQL + pgvector backend of :class:`citewise.store.base.Store` (DESIGN.md: the server backend).

Connection: a libpq URL (``postgresql://user:pass@host:port/db``); a ``schema=NAME`` query
parameter (ours, removed before connecting) picks the schema holding the tables (default
``citewise``), so one database can hold several stores. Needs the ``vector`` extension
(pgvector >= 0.8 for iterative index scans); the store creates it when it may. Driver: psycopg 3.

Tables (one schema per store):

* ``chunks``: one row per chunk with its document's metadata (the same columns as the LanceDB
  table), ``vector vector(dim)``, ``lexical`` (our analyzer's output) and ``doc_len`` (its token
  count for BM25). Answer-unit vectors live on the row (``unit_vectors`` bytea of float32,
  ``unit_spans`` int[]), so they are written, replaced and deleted with their chunk.
* ``postings(term_id, rid, tf, doc_len, groups)``, ``term_stats(term_id, term, df)`` and
  ``corpus_stats`` (one row: chunk count and total token count): the BM25 term statistics
  (integer keys: ``rid`` is the chunk row's identity, ``term_id`` the term's; a posting carries
  its chunk's token count and groups, so scoring and row-level security need no join), fed by
  our own analyzer
  (:func:`citewise.text.analyzer.lexical_text`) split on whitespace, exactly the tokens the
  LanceDB FTS index sees with its ``whitespace`` tokenizer (tokens of 64 UTF-8 bytes or more
  are dropped, as LanceDB's ``max_token_length=64`` does).
* ``ingest_runs``: the ingest log.

Lexical search: BM25 computed in SQL (PostgreSQL has no BM25; ``ts_rank`` has no IDF, DESIGN.md):
``score = sum over query terms (duplicates count) of idf * tf * (k1 + 1) / (tf + k1 * (1 - b +
b * len / avglen))`` with ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, k1 = 1.2, b = 0.75 and N,
avglen and df over every stored row: the Lucene/Tantivy BM25 that LanceDB's FTS computes (lance
``BM25Scorer``: K1 1.2, B 0.75). Measured equal to the LanceDB scores on the same corpus to
float32 precision (tests/test_store_conformance.py). The statistics are updated in the same
transaction as the rows, so they are never stale. The top-k is found with MaxScore pruning
(:meth:`PostgresStore.lexical_search`): the rarest query terms' postings are summed and the
common terms' postings are looked up only for those candidates, until no chunk outside them can
reach the k-th score. Summing every posting of a common term (the first version) cost 203 ms
per query at 20k chunks, almost all of it aggregating and joining postings of near-stop-words.

Dense search: cosine (``<=>``). Exact (a sequential scan of the visible rows, sorted) below
:data:`citewise.store.lance.ANN_MIN_ROWS` rows; from there :meth:`PostgresStore.refresh_indexes`
builds an HNSW index (``vector_cosine_ops``) and queries use it with
``hnsw.iterative_scan = relaxed_order`` so a filtered query keeps scanning the graph until k
visible rows are found (DESIGN.md: pgvector's default plan returned 0.4 of 10 hits under a 1%
filter), except when the filter leaves fewer than ``ann_exact_below`` rows visible: those are
searched exactly. Results are re-sorted by (score, chunk id) here.

Permissions, twice: the filter's groups go into the WHERE clause (``groups && ARRAY[...]``) *and*
every filtered read runs as the role :data:`SEARCH_ROLE` (``SET LOCAL ROLE``) under row-level
security: a policy shows it only rows whose ``groups`` intersect the transaction setting
``citewise.groups`` (``set_config(..., is_local => true)``, so it ends with the transaction). A
transaction that did not set it sees nothing (fails closed). Reads without a group filter
(``Filters.groups is None``: a trusted caller, as in the embedded store) run as the connecting
user, which owns the tables and is not subject to the policy.

Writes: :meth:`PostgresStore.upsert` replaces whole documents in one transaction (old rows,
their postings and term statistics out, new ones in), so a reader sees the old or the new
version of every document, never a mix; a killed writer's transaction is rolled back by the
server. Ingests take a session advisory lock (:meth:`PostgresStore.ingest_lock`), so two
ingests into one store are serialised even from different machines.

Connections: a ``psycopg_pool.ConnectionPool`` per store handle (1 connection at open, up to
:data:`POOL_MAX_SIZE`), so concurrent callers (the HTTP service's threads) each run their
transaction on a connection of their own instead of queueing on one. Every operation borrows a
connection for one transaction and hands it back. The principal is per transaction (``SET
LOCAL ROLE`` and ``set_config(..., is_local => true)`` end with it, commit or rollback), the pool
rolls back a transaction left open, and its ``reset`` callback also resets the role and the
groups setting at session level (in a pool worker, after the caller has gone on): a returned
connection carries no principal (tests/test_postgres_store.py). Connections are not checked
before lending (a round trip per operation): one broken by a server restart fails its
operation once and is then discarded by the pool. The ingest lock uses a separate connection
outside the pool (a session lock must not go back to the pool).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import re
import zlib
from collections import Counter
from contextlib import contextmanager
from typing import Iterable, Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

from citewise.core import CitewiseError, Filters
from citewise import metadata as _metadata
from citewise.store.base import (DocumentEntry, DocumentUpdate, IndexBusy, IngestRun, ScoredChunk, StoredChunk,
                                 UnitVectors)
from citewise.store.lance import ANN_EXACT_BELOW_VISIBLE, ANN_MIN_ROWS, TIE_MARGIN, page_range
from citewise.text.analyzer import find_identifiers, fold

#: BM25 parameters, as LanceDB's FTS (lance ``BM25Scorer``: K1 = 1.2, B = 0.75).
BM25_K1 = 1.2
BM25_B = 0.75
#: Tokens of this many UTF-8 bytes or more are not indexed (LanceDB ``max_token_length=64``:
#: Tantivy's ``RemoveLongFilter`` keeps tokens shorter than the limit; measured on LanceDB 0.40).
MAX_TOKEN_BYTES = 64
#: The role filtered reads run as (row-level security applies to it); cluster-wide, created once.
SEARCH_ROLE = "citewise_search"
#: The transaction setting holding the principal's groups (a text[] literal).
GROUPS_SETTING = "citewise.groups"
#: ``hnsw.ef_search`` for ANN queries (pgvector default 40). With iterative scans a filtered
#: query goes on past it until k visible rows are found (up to ``hnsw.max_scan_tuples``).
#: Measured on NFCorpus-derived MiniLM 100k (bench/scale.py's enlarged set imported into the
#: store, 300 NFCorpus test queries, recall@10 against the store's exact path, exact p50 211 ms;
#: docs/scaling.md): pgvector's default graph (m 16, ef_construction 64; 30 s build) gave 0.70 /
#: 0.79 / 0.87 / 0.94 at ef_search 100 / 200 / 400 / 1,000 (p50 10-21 ms); the graph of
#: :data:`HNSW_M` / :data:`HNSW_EF_CONSTRUCTION` (129 s build, 203 MB) 0.89 / 0.94 / 0.965 / 0.985
#: / 0.987 at 100 / 200 / 400 / 800 / 1,000 (p50 15 / 20 / 25 / 45 / 53 ms, loaded machine).
HNSW_EF_SEARCH = 800
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
#: BM25 MaxScore: the cost of one primary-key probe into the postings, in postings read by a scan
#: (EXPLAIN ANALYZE at 20k chunks: ~8 us per probe against ~2.5 us per scanned posting, so ~3-4).
#: A pass is run only if its candidates' probes plus its scan cost less than reading every
#: posting of the query (:meth:`PostgresStore._worth_pruning`).
BM25_PROBE_COST = 4
#: BM25: candidates joined to the chunk table per pass, as a multiple of the rows wanted (k + the
#: tie margin); more only when the filter's non-group part (current, dates, doc ids) drops too many.
BM25_OVERFETCH = 4
#: Connections per store handle (psycopg_pool ``max_size``; one is opened at start, more on
#: demand). Concurrent queries beyond it wait for a free connection up to :data:`POOL_TIMEOUT_S`.
POOL_MAX_SIZE = 8
#: Seconds to wait for a pooled connection (and for the first one at open).
POOL_TIMEOUT_S = 30.0

_META_COLS = ["chunk_id", "doc_id", "title", "source", "version", "updated", "effective", "groups",
              "heading_path", "text", "start", "end_", "token_count", "page_start", "page_end",
              "prev_id", "next_id", "parent_id", "metadata"]

_ROW_COLS = ["chunk_id", "doc_id", "title", "title_ids", "source", "version", "updated", "effective",
             "current", "valid_to", "groups", "content_hash", "indexed_at", "source_changed_at",
             "heading_path", "text", "lexical", "doc_len", "start", "end_", "token_count", "page_start",
             "page_end", "prev_id", "next_id", "parent_id", "vector", "units_version", "units_key",
             "unit_spans", "unit_vectors", "metadata", "meta_terms", "meta_ranges"]


def import_psycopg():
    """``import psycopg`` (psycopg 3), or a clear error naming the package to install."""
    try:
        import psycopg
    except ImportError:
        raise CitewiseError("the PostgreSQL backend needs psycopg 3: pip install 'psycopg[binary]'") from None
    return psycopg


def import_pool():
    """A ``psycopg_pool.ConnectionPool`` subclass (see :func:`_pool_class`), or a clear error
    naming the package to install."""
    try:
        import psycopg_pool  # noqa: F401
    except ImportError:
        raise CitewiseError("the PostgreSQL backend needs psycopg-pool: pip install psycopg-pool") from None
    return _pool_class()


_POOL_CLASS = None


def _pool_class():
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

        class _Pool(ConnectionPool):
            def __del__(self) -> None:
                if getattr(self, "_closed", True):
                    return
                self._signal_stop_worker()

        _POOL_CLASS = _Pool
    return _POOL_CLASS


def _reset_principal(conn) -> None:
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
        out = f"{parts.scheme}://" + out[len(parts.scheme) + 1:]
    return out, schema.lower()


def filter_sql(filters: Filters | None, alias: str = "c") -> tuple[str, list]:
    """The SQL predicate (with ``%s`` placeholders) and its parameters for ``filters``.

    The same semantics as :func:`citewise.store.lance.filter_sql`: without a date or a version
    only current documents match.

    >>> filter_sql(Filters(groups=("public",), version="3"))
    ('c.groups && %s::text[] AND c.version = %s', [['public'], '3'])
    >>> filter_sql(None)
    ('c.current', [])
    """
    a = alias + "."
    if filters is None:
        return a + "current", []
    parts: list[str] = []
    params: list = []
    if filters.groups is not None:
        if not filters.groups:
            return "false", []
        parts.append(f"{a}groups && %s::text[]")
        params.append(list(filters.groups))
    if filters.doc_ids is not None:
        if not filters.doc_ids:
            return "false", []
        parts.append(f"{a}doc_id = ANY(%s::text[])")
        params.append(list(filters.doc_ids))
    if filters.as_of is not None:
        d = filters.as_of.isoformat()
        parts.append(f"(({a}effective <> '' AND {a}effective <= %s) OR "
                     f"({a}effective = '' AND ({a}updated = '' OR {a}updated <= %s)))")
        parts.append(f"({a}current OR ({a}valid_to <> '' AND {a}valid_to > %s))")
        params += [d, d, d]
    if filters.version is not None:
        parts.append(f"{a}version = %s")
        params.append(filters.version)
    if filters.as_of is None and filters.version is None:
        parts.append(f"{a}current")
    if filters.metadata:
        from citewise.store.metadata_sql import pg_predicates

        more, values = pg_predicates(filters.metadata, alias)
        parts += more
        params += values
    return " AND ".join(parts), params


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
_HIT_INDEX = ("CREATE INDEX IF NOT EXISTS chunks_hit ON {s}.chunks (rid) "
              "INCLUDE (chunk_id, doc_id, title, current, groups)")


def _postings_keys(schema: str) -> dict[str, tuple[str, str]]:
    """The postings table's primary key (covering: BM25 reads postings from it alone), its foreign
    key to the chunks (a document's postings go with its rows) and its ``rid`` index, by name,
    each as ``(statement that adds it, statement that drops it)``: :func:`_ddl` adds them,
    :meth:`PostgresStore.bulk_load` drops them and puts them back."""
    s = schema
    constraint = f"ALTER TABLE {s}.postings DROP CONSTRAINT IF EXISTS {{}}"
    return {
        "postings_pkey": (f"ALTER TABLE {s}.postings ADD CONSTRAINT postings_pkey PRIMARY KEY (term_id, rid) "
                          "INCLUDE (tf, doc_len, groups)", constraint.format("postings_pkey")),
        "postings_rid_fkey": (f"ALTER TABLE {s}.postings ADD CONSTRAINT postings_rid_fkey FOREIGN KEY (rid) "
                              f"REFERENCES {s}.chunks (rid) ON DELETE CASCADE", constraint.format("postings_rid_fkey")),
        "postings_rid": (f"CREATE INDEX IF NOT EXISTS postings_rid ON {s}.postings (rid)",
                         f"DROP INDEX IF EXISTS {s}.postings_rid"),
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


def _vector_text(vec) -> str:
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


class PostgresStore:
    """The PostgreSQL + pgvector backend of :class:`citewise.store.base.Store`.

    Args:
        url: libpq URL, optionally with ``?schema=NAME`` (see module docstring).
        dim: vector dimension; must match an existing store.
        ann_min_rows: rows from which :meth:`refresh_indexes` builds the HNSW index and
            :meth:`vector_search` uses it (default :data:`citewise.store.lance.ANN_MIN_ROWS`).
        ann_exact_below: a filter leaving fewer visible rows than this is searched exactly
            (default :data:`citewise.store.lance.ANN_EXACT_BELOW_VISIBLE`).

    Raises:
        CitewiseError: the server cannot be reached, lacks pgvector, or the store has another
            vector dimension.
    """

    def __init__(self, url: str, dim: int, ann_min_rows: int | None = None, ann_exact_below: int | None = None,
                 pool_size: int = POOL_MAX_SIZE):
        psycopg = import_psycopg()
        self.url = url
        self.dsn, self.schema = split_url(url)
        self.dim = int(dim)
        self.ann_min_rows = ANN_MIN_ROWS if ann_min_rows is None else ann_min_rows
        self.ann_exact_below = ANN_EXACT_BELOW_VISIBLE if ann_exact_below is None else ann_exact_below
        if pool_size < 1:
            raise ValueError(f"pool_size must be >= 1 (got {pool_size})")
        #: "ann" or "exact": the path the last :meth:`vector_search` took (for tests and benches)
        self.last_vector_path = ""
        #: the essential-term counts of the MaxScore passes of the last :meth:`lexical_search`
        #: (0: every visible row scored by lookups, for a selective filter)
        self.last_bm25_passes: list[int] = []
        # one direct connection first: a clear libpq error when the server is unreachable (the
        # pool would only time out), and the schema setup; then the pool for everything else
        try:
            conn = psycopg.connect(self.dsn, autocommit=True)
        except psycopg.Error as e:
            raise CitewiseError(f"--store {self._safe_url()}: cannot connect ({' '.join(str(e).split())})") from None
        try:
            self._setup(conn)
        finally:
            conn.close()
        self._bulk: set[str] | None = None  # doc ids imported in the current bulk_load, if any
        self._pool = import_pool()(self.dsn, min_size=1, max_size=pool_size, kwargs={"autocommit": True},
                                   reset=_reset_principal,
                                   timeout=POOL_TIMEOUT_S, name=f"citewise-{self.schema}", open=False)
        self._pool.open(wait=True, timeout=POOL_TIMEOUT_S)

    def _safe_url(self) -> str:
        """The URL without its password (for messages)."""
        p = urlsplit(self.url)
        if p.password:
            p = p._replace(netloc=p.netloc.replace(":" + p.password + "@", ":***@"))
        if "password=" in p.query:  # libpq also takes ?password=...
            p = p._replace(query=re.sub(r"(^|&)password=[^&]*", r"\1password=***", p.query))
        return urlunsplit(p)

    def _setup(self, conn) -> None:
        """Create the extension, role, schema and tables if missing (serialised by an advisory
        transaction lock, so two processes opening a new store do not race); check the dim."""
        psycopg = import_psycopg()
        s = self.schema
        with conn.transaction():
            cur = conn.cursor()
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key("setup"),))
            exists = cur.execute("SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = 'chunks'",
                                 (s,)).fetchone()
            if exists:
                have = cur.execute(f"SELECT value FROM {s}.meta WHERE key = 'dim'").fetchone()
                if have and int(have[0]) != self.dim:
                    raise CitewiseError(f"--store {self._safe_url()}: stored vectors have dim {have[0]}, "
                                        f"embedder gives {self.dim}")
                self._restore_postings_keys(cur)  # a bulk load killed before it put them back
                return
            try:
                cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
                role = cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (SEARCH_ROLE,)).fetchone()
                if not role:
                    cur.execute(f"CREATE ROLE {SEARCH_ROLE} NOLOGIN")
                member = cur.execute("SELECT pg_has_role(current_user, %s, 'MEMBER')", (SEARCH_ROLE,)).fetchone()[0]
                if not member:
                    cur.execute(f"GRANT {SEARCH_ROLE} TO current_user")
                for stmt in _ddl(s, self.dim):
                    cur.execute(stmt)
                cur.execute(f"INSERT INTO {s}.meta VALUES ('dim', %s), ('format', '1')", (str(self.dim),))
            except psycopg.Error as e:
                raise CitewiseError(f"--store {self._safe_url()}: cannot create the store in schema {s} "
                                    f"({' '.join(str(e).split())})") from None

    def _lock_key(self, what: str) -> int:
        """A 63-bit advisory lock key for ``what`` in this store's schema."""
        return zlib.crc32(f"citewise:{self.schema}:{what}".encode())

    def close(self) -> None:
        """Close the pool and its connections (the store cannot be used afterwards)."""
        self._pool.close()

    def pool_stats(self) -> dict:
        """The pool's counters (``psycopg_pool.ConnectionPool.get_stats``: ``pool_size``,
        ``pool_available``, ``requests_num``, ``connections_num``...), for tests and monitoring."""
        return self._pool.get_stats()

    @contextmanager
    def _tx(self, groups: Sequence[str] | None = None, snapshot: bool = True):
        """A transaction (cursor); with ``groups``, run as :data:`SEARCH_ROLE` with the groups set.

        ``snapshot``: REPEATABLE READ, so every statement of a read sees one snapshot (a BM25
        search reads the corpus and term statistics, then the postings: under READ COMMITTED a
        commit in between mixed two versions; found by the conformance suite). Writes pass
        False (READ COMMITTED: no serialization failures; ingests are serialised by the
        advisory lock and each replace is one transaction).
        """
        psycopg = import_psycopg()
        with self._connection() as conn:
            # sent with BEGIN (no round trip of its own); set on every borrow, pooled connections
            # are shared by reads and writes
            conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ if snapshot else None
            with conn.transaction():
                cur = conn.cursor()
                if groups is not None:  # = SET LOCAL ROLE + the groups, in one round trip
                    cur.execute("SELECT set_config('role', %s, true), set_config(%s, %s::text[]::text, true)",
                                (SEARCH_ROLE, GROUPS_SETTING, list(groups)))
                yield cur

    @contextmanager
    def _connection(self):
        """A connection borrowed from the pool (autocommit; handed back, reset, on exit).

        Raises:
            CitewiseError: no connection became free within :data:`POOL_TIMEOUT_S` seconds.
        """
        from psycopg_pool import PoolTimeout

        try:
            conn = self._pool.getconn()
        except PoolTimeout:
            raise CitewiseError(f"--store {self._safe_url()}: no free connection after {POOL_TIMEOUT_S:.0f} s "
                                f"(pool of {self._pool.max_size} all busy, or the server is unreachable)") from None
        try:
            yield conn
        finally:
            self._pool.putconn(conn)

    # -- ingest lock --------------------------------------------------------------------------
    @contextmanager
    def ingest_lock(self, wait: bool = False, on_wait=None):
        """Hold this store's ingest advisory lock (session level, on a connection of its own).

        The lock goes with the connection, so a killed ingest leaves no stale lock.

        Raises:
            IndexBusy: another session holds it and ``wait`` is False.
        """
        psycopg = import_psycopg()
        conn = psycopg.connect(self.dsn, autocommit=True)
        key = self._lock_key("ingest")
        held = False
        try:
            held = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]
            if not held:
                msg = f"{self._safe_url()}: another ingest is running on schema {self.schema}"
                if not wait:
                    raise IndexBusy(msg + "; wait for it to finish, or pass --wait")
                if on_wait:
                    on_wait(msg + "; waiting for it to finish")
                conn.execute("SELECT pg_advisory_lock(%s)", (key,))
                held = True
            yield
        finally:
            # Unlock before closing: closing only ends the server backend asynchronously, so a
            # lock left to the disconnect can still be held when the next ingest asks for it.
            if held:
                try:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
                except psycopg.Error:
                    pass  # the connection is gone, and the lock with its backend
            conn.close()

    # -- writes -------------------------------------------------------------------------------
    def _rows(self, updates: Sequence[DocumentUpdate]) -> tuple[list[tuple], list[tuple]]:
        """(chunk rows in :data:`_ROW_COLS` order, posting rows (term, chunk_id, tf))."""
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
        rows, postings = [], []
        for u in updates:
            d = u.document
            if len(u.chunks) != len(u.vectors):
                raise ValueError(f"{d.doc_id}: {len(u.chunks)} chunks but {len(u.vectors)} vectors")
            units = list(u.units) if u.units is not None else [None] * len(u.chunks)
            if len(units) != len(u.chunks):
                raise ValueError(f"{d.doc_id}: {len(u.chunks)} chunks but {len(units)} unit entries")
            title_ids = find_identifiers(d.title)
            lexical = u.lexical_texts()
            meta = (_metadata.to_json(d.metadata), _metadata.terms(d.metadata), json.dumps(_metadata.ranges(d.metadata)))
            for c, v, uv, lex in zip(u.chunks, u.vectors, units, lexical):
                p0, p1 = page_range(d.pages, c.start, c.end)
                terms = bm25_terms(lex)
                for term, tf in sorted(Counter(terms).items()):
                    postings.append((term, c.chunk_id, tf, len(terms), list(u.groups)))
                if uv is None:
                    uver, ukey, uspans, uvecs = "", "", None, None
                else:
                    vecs = np.asarray(uv.vectors, dtype="<f4").reshape(-1, self.dim)
                    if len(vecs) != len(uv.spans):
                        raise ValueError(f"{d.doc_id}: {len(uv.spans)} unit spans but {len(vecs)} unit vectors")
                    uver, ukey = uv.version, uv.key
                    uspans = [int(x) for span in uv.spans for x in span]
                    uvecs = vecs.tobytes()
                vec = np.asarray(v, dtype=np.float32).reshape(-1)
                if len(vec) != self.dim:
                    raise ValueError(f"{d.doc_id}: vector has dim {len(vec)}, store has {self.dim}")
                rows.append((
                    c.chunk_id, d.doc_id, d.title, title_ids, d.source, d.version,
                    d.updated.isoformat() if d.updated else "", d.effective.isoformat() if d.effective else "",
                    bool(d.current), d.valid_to.isoformat() if d.valid_to else "", list(u.groups),
                    d.content_hash, now, u.source_changed_at, list(c.heading_path), c.text, lex, len(terms),
                    c.start + d.offset_base, c.end + d.offset_base, c.token_count, p0, p1,
                    c.prev_id, c.next_id, c.parent_id, _vector_text(vec),
                    uver, ukey, uspans, uvecs, *meta,
                ))
        return rows, postings

    def _remove(self, cur, doc_ids: list[str]) -> int:
        """Delete documents' rows and take their postings out of the term statistics."""
        s = self.schema
        cur.execute(f"""UPDATE {s}.term_stats t SET df = t.df - x.n
                        FROM (SELECT p.term_id, count(*) AS n FROM {s}.postings p JOIN {s}.chunks c ON c.rid = p.rid
                              WHERE c.doc_id = ANY(%s) GROUP BY p.term_id) x
                        WHERE t.term_id = x.term_id""", (doc_ids,))
        gone = cur.execute(f"DELETE FROM {s}.chunks WHERE doc_id = ANY(%s) RETURNING doc_len", (doc_ids,)).fetchall()
        cur.execute(f"DELETE FROM {s}.term_stats WHERE df <= 0")
        if gone:
            cur.execute(f"UPDATE {s}.corpus_stats SET n_chunks = n_chunks - %s, total_len = total_len - %s",
                        (len(gone), sum(r[0] for r in gone)))
        return len(gone)

    def upsert(self, updates: Sequence[DocumentUpdate]) -> None:
        """Replace the given documents (all of them, in one transaction: see module docstring).

        Raises:
            ValueError: chunk, vector and unit counts or the vector dimension disagree.
        """
        if not updates:
            return
        rows, postings = self._rows(updates)
        self._write(rows, postings, [u.document.doc_id for u in updates])

    @contextmanager
    def bulk_load(self):
        """Fill an empty store faster: inside the block, :meth:`import_rows` writes postings into
        a table without its primary key, its foreign key to the chunks and its ``rid`` index,
        which are built once at the end (PostgreSQL, "Populating a Database": remove indexes
        and foreign keys, load, recreate). Per-row upkeep of those three was ~half a copy's
        server time at 3,000 chunks (523 -> 1,042 rows/s) and grows with the table.

        Yields True when the store was empty (the keys are off until the block ends), False
        otherwise (nothing changes: rows replace documents as always). Every document may be
        imported once per block. The keys are put back when the block ends, also on an error;
        a process killed inside the block leaves them off, and the next open of the store puts
        them back (:meth:`_setup`). Readers meanwhile get the same rows, more slowly.

        Raises:
            CitewiseError: putting the keys back failed (the message says which).
        """
        s = self.schema
        with self._tx(snapshot=False) as cur:
            empty = cur.execute(f"SELECT NOT EXISTS (SELECT 1 FROM {s}.chunks)").fetchone()[0]
            if empty:
                for _, drop in reversed(_postings_keys(s).values()):
                    cur.execute(drop)
        self._bulk = set() if empty else None
        try:
            yield empty
        finally:
            self._bulk = None
            if empty:
                with self._tx(snapshot=False) as cur:
                    self._restore_postings_keys(cur)

    def _restore_postings_keys(self, cur) -> None:
        """Add whichever of :func:`_postings_keys` the postings table lacks (on ``cur``, in the
        caller's transaction)."""
        s = self.schema
        have = {r[0] for r in cur.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype IN ('p', 'f') UNION "
            "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND tablename = 'postings'",
            (f"{s}.postings", s)).fetchall()}
        missing = [add for name, (add, _) in _postings_keys(s).items() if name not in have]
        if not missing:
            return
        cur.execute(f"SET LOCAL maintenance_work_mem = '{HNSW_BUILD_MEMORY}'")
        for stmt in missing:
            try:
                cur.execute(stmt)
            except import_psycopg().Error as e:
                raise CitewiseError(f"--store {self._safe_url()}: could not restore the postings keys "
                                    f"after a bulk load ({' '.join(str(e).split())})") from None

    def import_rows(self, rows: Sequence[dict]) -> None:
        """Write rows read from another store (the LanceDB column names: ``end`` not ``end_``,
        ``vector`` a float list, ``unit_vectors`` a list of float lists) in one transaction,
        replacing the documents they belong to; postings and term statistics are computed from
        each row's ``lexical`` text. For :mod:`citewise.store.migrate`.

        Raises:
            ValueError: a row's vector has another dimension than the store.
            CitewiseError: inside :meth:`bulk_load`, a document imported before in the block.
        """
        if not rows:
            return
        doc_ids = sorted({r["doc_id"] for r in rows})
        if self._bulk is not None:
            again = self._bulk.intersection(doc_ids)
            if again:
                raise CitewiseError(f"document '{min(again)}' imported twice in one bulk load")
        out, postings = [], []
        for r in rows:
            terms = bm25_terms(r["lexical"] or "")
            for term, tf in sorted(Counter(terms).items()):
                postings.append((term, r["chunk_id"], tf, len(terms), list(r["groups"] or [])))
            vec = np.asarray(r["vector"], dtype=np.float32).reshape(-1)
            if len(vec) != self.dim:
                raise ValueError(f"{r['chunk_id']}: vector has dim {len(vec)}, store has {self.dim}")
            units = r.get("unit_vectors")
            row = dict(r, end_=r["end"], doc_len=len(terms),
                       vector=_vector_text(vec),
                       units_version=r.get("units_version") or "", units_key=r.get("units_key") or "",
                       unit_spans=r.get("unit_spans") if r.get("units_version") else None,
                       unit_vectors=np.asarray(units, dtype="<f4").tobytes() if units and r.get("units_version") else None,
                       title_ids=r["title_ids"] or [], groups=r["groups"] or [], heading_path=r["heading_path"] or [],
                       page_start=r.get("page_start") or 0, page_end=r.get("page_end") or 0,
                       source_changed_at=r.get("source_changed_at") or "", effective=r.get("effective") or "",
                       valid_to=r.get("valid_to") or "", metadata=r.get("metadata") or "{}",
                       meta_terms=r.get("meta_terms") or [], meta_ranges=r.get("meta_ranges") or "{}")
            out.append(tuple(row[c] for c in _ROW_COLS))
        # in a bulk load the documents are new (the store was empty, each comes once): nothing
        # to remove, and the removal's join would read postings that have no rid index then
        self._write(out, postings, doc_ids, remove=self._bulk is None)
        if self._bulk is not None:
            self._bulk.update(doc_ids)

    def _write(self, rows: list[tuple], postings: list[tuple], doc_ids: list[str], remove: bool = True) -> None:
        """One transaction: remove ``doc_ids`` (unless ``remove`` is False), then COPY ``rows``
        and ``postings`` in and update the term and corpus statistics."""
        s = self.schema
        with self._tx(snapshot=False) as cur:
            if remove:
                self._remove(cur, doc_ids)
            with cur.copy(f"COPY {s}.chunks ({', '.join(_ROW_COLS)}) FROM STDIN") as copy:
                for r in rows:
                    copy.write_row(r)
            rids = dict(cur.execute(f"SELECT chunk_id, rid FROM {s}.chunks WHERE chunk_id = ANY(%s)",
                                    ([r[0] for r in rows],)).fetchall())
            df = Counter(p[0] for p in postings)
            names = sorted(df)
            ids = dict(cur.execute(f"""INSERT INTO {s}.term_stats (term, df) SELECT * FROM unnest(%s::text[], %s::int[])
                                       ON CONFLICT (term) DO UPDATE SET df = term_stats.df + excluded.df
                                       RETURNING term, term_id""", (names, [df[t] for t in names])).fetchall())
            with cur.copy(f"COPY {s}.postings (term_id, rid, tf, doc_len, groups) FROM STDIN") as copy:
                # COPY's text format written in blocks: psycopg's write_row (array dumping per row)
                # was a third of a migrate's time (~83 postings per chunk)
                arrays: dict[tuple, str] = {}
                lines = []
                for term, chunk_id, tf, doc_len, groups in postings:
                    key = tuple(groups)
                    arr = arrays.get(key)
                    if arr is None:
                        arr = arrays[key] = _copy_text_array(key)
                    lines.append(f"{ids[term]}\t{rids[chunk_id]}\t{tf}\t{doc_len}\t{arr}\n")
                    if len(lines) >= 20_000:
                        copy.write("".join(lines))
                        lines.clear()
                if lines:
                    copy.write("".join(lines))
            cur.execute(f"UPDATE {s}.corpus_stats SET n_chunks = n_chunks + %s, total_len = total_len + %s",
                        (len(rows), sum(r[_ROW_COLS.index("doc_len")] for r in rows)))

    def delete(self, doc_ids: Sequence[str]) -> int:
        """Delete documents (one transaction); returns how many chunks went."""
        if not doc_ids:
            return 0
        with self._tx(snapshot=False) as cur:
            return self._remove(cur, list(doc_ids))

    def refresh_indexes(self) -> None:
        """Build the HNSW index on ``vector`` once the store has ``ann_min_rows`` rows, and
        ``VACUUM (ANALYZE)`` the tables (planner statistics; the visibility map that lets BM25
        read postings from the covering primary-key index, and its hits from ``chunks_hit``,
        without the heap); creates ``chunks_hit`` in a store made before it existed. Term
        statistics need no refresh."""
        s = self.schema
        with self._connection() as conn:
            n = conn.execute(f"SELECT n_chunks FROM {s}.corpus_stats").fetchone()[0]
            if n >= self.ann_min_rows and not self._has_ann_index(conn):
                # the graph is built in memory when it fits (pgvector: slower once it spills)
                conn.execute(f"SET maintenance_work_mem = '{hnsw_build_memory(n, self.dim)}'")
                try:
                    conn.execute(f"CREATE INDEX IF NOT EXISTS chunks_vector_hnsw ON {s}.chunks "
                                 f"USING hnsw (vector vector_cosine_ops) WITH (m = {HNSW_M}, "
                                 f"ef_construction = {HNSW_EF_CONSTRUCTION})")
                finally:
                    conn.execute("RESET maintenance_work_mem")
            conn.execute(_HIT_INDEX.format(s=s))  # stores created before it had it
            # VACUUM sets the visibility map, so BM25 reads postings from the covering index alone
            conn.execute(f"VACUUM (ANALYZE) {s}.chunks, {s}.postings, {s}.term_stats, {s}.corpus_stats")

    def has_ann_index(self) -> bool:
        """Whether the chunk table has the HNSW index on ``vector``."""
        with self._connection() as conn:
            return self._has_ann_index(conn)

    def _has_ann_index(self, conn) -> bool:
        # on the caller's connection: a second borrow while holding one would wait forever
        # with a pool of one
        return conn.execute("SELECT 1 FROM pg_indexes WHERE schemaname = %s AND indexname = %s",
                            (self.schema, "chunks_vector_hnsw")).fetchone() is not None

    def unindexed_rows(self) -> int:
        """Always 0: the term statistics are written with the rows."""
        return 0

    # -- ingest log ---------------------------------------------------------------------------
    def record_run(self, run: IngestRun) -> None:
        """Append one completed ingest run to ``ingest_runs``."""
        names = [f.name for f in dataclasses.fields(IngestRun)]
        with self._tx(snapshot=False) as cur:
            cur.execute(f"INSERT INTO {self.schema}.ingest_runs ({', '.join(names)}) "
                        f"VALUES ({', '.join(['%s'] * len(names))})", [getattr(run, n) for n in names])

    def runs(self) -> list[IngestRun]:
        """The ingest log, oldest first (by finish time)."""
        names = [f.name for f in dataclasses.fields(IngestRun)]
        with self._tx() as cur:
            rows = cur.execute(f"SELECT {', '.join(names)} FROM {self.schema}.ingest_runs "
                               "ORDER BY finished_at, started_at, root").fetchall()
        return [IngestRun(*r) for r in rows]

    # -- reads --------------------------------------------------------------------------------
    @staticmethod
    def _scored(rows) -> list[ScoredChunk]:
        out = [ScoredChunk(r[0], r[1], r[2], float(r[3])) for r in rows]
        out.sort(key=lambda h: (-h.score, h.chunk_id))
        return out

    def known_terms(self, terms: Sequence[str]) -> set[str]:
        """The analyzed ``terms`` that occur in some chunk (``term_stats``; any permission:
        callers check what a principal may see with :meth:`lexical_search`)."""
        if not terms:
            return set()
        with self._tx(None) as cur:
            return {r[0] for r in cur.execute(f"SELECT term FROM {self.schema}.term_stats WHERE term = ANY(%s)",
                                              (list(terms),)).fetchall()}

    def lexical_search(self, terms: Sequence[str], k: int, filters: Filters | None = None) -> list[ScoredChunk]:
        """BM25 over already-analyzed terms (OR semantics; formula in the module docstring).

        Exact top-k, computed with MaxScore pruning (Turtle & Flood 1995, "Query evaluation:
        strategies and optimizations"): a query term's contribution is below its weight
        ``qtf * idf * (k1 + 1)`` (``tf / (tf + K) < 1``). Terms are taken rarest (heaviest)
        first; a pass scores only the chunks holding one of the first ``j`` ("essential") terms,
        fully (the other terms' postings are looked up for those chunks alone, by primary key),
        filtered and ranked. If it yields k hits, a chunk holding none of the essential terms
        scores below the sum of the other terms' weights; once that sum is below the k-th score,
        the top-k is final. Otherwise the next pass takes the fewest terms that make it so (the
        k-th score only grows, so that pass is final). When a pass yields fewer than k hits, the
        next takes enough terms for k at the share of candidates that was visible -- or, if the
        filter leaves fewer rows visible than reading more postings would cost
        (:data:`BM25_PROBE_COST`), every visible row is scored by lookups (exact at once). The
        first pass takes enough terms to hold k postings. A pass whose probes would cost more
        than reading every posting of the query is replaced by the plain sum (all terms
        essential). Common terms (stop-word-like, df near N) are thus read only for the
        candidates, not in full. ``last_bm25_passes`` records the passes (essential-term counts,
        0 for the visible-rows pass).

        Args:
            terms: analyzed query terms; a repeated term counts each time (as in LanceDB).
            k: hits wanted; fewer only when fewer visible rows contain a term.
            filters: applied in the WHERE clause (and by row-level security for groups).
        """
        q = Counter(t for t in bm25_terms(" ".join(terms)))
        if not q or k <= 0:
            return []
        where, params = filter_sql(filters)
        s = self.schema
        groups = filters.groups if filters is not None else None
        with self._tx(groups) as cur:
            stats = cur.execute(f"""SELECT c.n_chunks, c.total_len, t.term, t.term_id, t.df FROM {s}.corpus_stats c
                                    LEFT JOIN {s}.term_stats t ON t.term = ANY(%s) ORDER BY t.term""",
                                (list(q),)).fetchall()
            n, total = stats[0][:2]
            found = [r[2:] for r in stats if r[2] is not None]
            if not found or not n:
                return []
            # per query term: qtf * idf * (k1 + 1), so the SQL only sums the tf part; heaviest first
            weighted = sorted(((q[t] * math.log(1 + (n - df + 0.5) / (df + 0.5)) * (BM25_K1 + 1), tid, t)
                               for t, tid, df in found), key=lambda x: (-x[0], x[2]))
            ids = [tid for _, tid, _ in weighted]
            weights = [w for w, _, _ in weighted]
            avglen = total / n
            df_of = {tid: df for _, tid, df in found}
            dfs = [df_of[tid] for tid in ids]
            passes: list[int] = []
            counted = False
            j = self._terms_for(dfs, 1, k)  # fewer postings than k cannot give k hits
            j = j if self._worth_pruning(dfs, j) else len(ids)
            while True:
                rows = self._bm25_pass(cur, ids, weights, j, where, params, groups, avglen, k + TIE_MARGIN, k)
                passes.append(j)
                if j == len(ids):
                    break
                if len(rows) >= k:
                    theta = rows[k - 1][3]  # rows are best first
                    need, rest = len(ids), 0.0
                    while need > 0 and rest + weights[need - 1] < theta:
                        rest += weights[need - 1]
                        need -= 1
                    if need <= j:
                        break
                    j = need
                else:
                    # fewer than k visible: a selective filter (or only rare terms). When the
                    # visible rows are few, score each of them by lookups instead of reading
                    # more postings (cheaper than the next passes' scans; exact at once).
                    if where != "c.current" and not counted:
                        counted = True
                        cap = sum(dfs) // max(1, len(ids) * BM25_PROBE_COST)
                        visible = cur.execute(f"SELECT count(*) FROM (SELECT 1 FROM {s}.chunks c WHERE {where} "
                                              "LIMIT %s) x", [*params, cap]).fetchone()[0]
                        if visible < cap:
                            rows = self._bm25_visible_pass(cur, ids, weights, where, params, avglen, k + TIE_MARGIN)
                            passes.append(0)
                            break
                    # enough terms for k hits at the share of candidates that was visible
                    j = self._terms_for(dfs, j + 1, math.ceil(sum(dfs[:j]) * k / max(1, len(rows))))
                if not self._worth_pruning(dfs, j):
                    j = len(ids)
        self.last_bm25_passes = passes
        return self._scored(rows)[:k]

    @staticmethod
    def _terms_for(dfs: list[int], j: int, postings: int) -> int:
        """The smallest number of essential terms, at least ``j``, whose postings number at least
        ``postings`` (all of them if none is enough)."""
        while j < len(dfs) and sum(dfs[:j]) < postings:
            j += 1
        return min(j, len(dfs))

    @staticmethod
    def _worth_pruning(dfs: list[int], j: int) -> bool:
        """Whether a pass with ``j`` essential terms (at most ``sum(dfs[:j])`` candidates, each
        probed for the other terms) costs less than reading every posting of the query
        (:data:`BM25_PROBE_COST`)."""
        return sum(dfs[:j]) * (1 + BM25_PROBE_COST * (len(dfs) - j)) < sum(dfs)

    def _bm25_visible_pass(self, cur, ids: list[int], weights: list[float], where: str, params: list,
                           avglen: float, limit: int) -> list[tuple]:
        """Every chunk visible under ``where`` scored by one primary-key probe per query term
        (for filters that leave few rows visible); best ``limit`` by (score desc, chunk id)."""
        s = self.schema
        return cur.execute(f"""
            SELECT c.chunk_id, c.doc_id, c.title, x.score FROM {s}.chunks c
            CROSS JOIN LATERAL (
                SELECT sum(w.wt * p.tf / (p.tf + {BM25_K1!r} * (1 - {BM25_B!r} + {BM25_B!r} * p.doc_len / %s::float8)))
                       AS score
                FROM unnest(%s::int[], %s::float8[]) AS w(term_id, wt)
                CROSS JOIN LATERAL (SELECT tf, doc_len FROM {s}.postings
                                    WHERE term_id = w.term_id AND rid = c.rid OFFSET 0) p) x
            WHERE {where} AND x.score IS NOT NULL
            ORDER BY x.score DESC, c.chunk_id
            LIMIT %s""", [avglen, ids, weights, *params, limit]).fetchall()

    def _bm25_pass(self, cur, ids: list[int], weights: list[float], j: int, where: str, params: list,
                   groups: Sequence[str] | None, avglen: float, limit: int, k: int) -> list[tuple]:
        """One MaxScore pass (see :meth:`lexical_search`): chunks holding one of the terms
        ``ids[:j]``, scored over all of ``ids``, filtered, best ``limit`` by (score desc, chunk id).

        Only the best ``limit * BM25_OVERFETCH`` candidates by score are joined to ``chunks`` for
        the rest of the filter (current, dates, versions, doc ids; groups are already applied on
        the postings): the first k survivors in score order are the filtered top-k when the k-th
        scores above the lowest candidate kept (ties included); otherwise the pass reruns
        joining every candidate. Joining all of them was most of the first version's cost."""
        s = self.schema
        tf_part = f"w.wt * p.tf / (p.tf + {BM25_K1!r} * (1 - {BM25_B!r} + {BM25_B!r} * p.doc_len / %s::float8))"
        group_sql = " AND p.groups && %s::text[]" if groups is not None else ""
        group_params = [list(groups)] if groups is not None else []
        if j < len(ids):
            # the other terms' postings of each candidate, one primary-key (term_id, rid) probe per
            # term (OFFSET 0 keeps the planner from flattening it into a scan of the rid index
            # that reads all ~80 postings of the chunk from the heap: 3x slower, measured)
            rest_sql = f"""+ coalesce((SELECT sum({tf_part}) FROM unnest(%s::int[], %s::float8[]) AS w(term_id, wt)
                                       CROSS JOIN LATERAL (SELECT tf, doc_len FROM {s}.postings
                                           WHERE term_id = w.term_id AND rid = a.rid OFFSET 0) p), 0)"""
            rest_params = [avglen, ids[j:], weights[j:]]
        else:
            rest_sql, rest_params = "", []
        cap: int | None = limit * BM25_OVERFETCH
        while True:
            rows = cur.execute(f"""
                WITH e AS MATERIALIZED (
                    SELECT a.rid, a.score {rest_sql} AS score FROM (
                        SELECT p.rid, sum({tf_part}) AS score
                        FROM unnest(%s::int[], %s::float8[]) AS w(term_id, wt) JOIN {s}.postings p ON p.term_id = w.term_id
                        WHERE true{group_sql}
                        GROUP BY p.rid) a
                    ORDER BY score DESC {"LIMIT %s" if cap else ""})
                SELECT c.chunk_id, c.doc_id, c.title, e.score, m.lo, m.n
                FROM e JOIN {s}.chunks c ON c.rid = e.rid CROSS JOIN (SELECT min(score) AS lo, count(*) AS n FROM e) m
                WHERE {where}
                ORDER BY e.score DESC, c.chunk_id
                LIMIT %s""", [*rest_params, avglen, ids[:j], weights[:j], *group_params, *([cap] if cap else []),
                             *params, limit]).fetchall()
            if cap is None or (rows and rows[0][5] < cap) or (len(rows) >= k and rows[k - 1][3] > rows[0][4]):
                return [r[:4] for r in rows]
            cap = None

    def vector_search(self, vector: np.ndarray, k: int, filters: Filters | None = None) -> list[ScoredChunk]:
        """Cosine search; score = cosine similarity = 1 - cosine distance, best first.

        Args:
            vector: query vector, shape ``(dim,)``.
            k: hits wanted; fewer only when fewer rows are visible under ``filters``.
            filters: applied in the WHERE clause (and by row-level security for groups).

        Exact unless the HNSW index exists, the store has ``ann_min_rows`` rows and the filter
        leaves at least ``ann_exact_below`` rows visible; then HNSW with iterative scans
        (module docstring). ``last_vector_path`` records the path taken ("ann" or "exact").
        """
        if k <= 0:
            return []
        vec = np.asarray(vector, dtype=np.float32).reshape(-1)
        qv = _vector_text(vec)
        where, params = filter_sql(filters)
        s = self.schema
        groups = filters.groups if filters is not None else None
        with self._tx(groups) as cur:
            n, has_index = cur.execute(f"SELECT n_chunks, EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = %s "
                                       f"AND indexname = 'chunks_vector_hnsw') FROM {s}.corpus_stats", (s,)).fetchone()
            use_ann = has_index and n >= self.ann_min_rows
            if use_ann and where != "c.current":
                visible = cur.execute(f"SELECT count(*) FROM (SELECT 1 FROM {s}.chunks c WHERE {where} "
                                      "LIMIT %s) x", [*params, self.ann_exact_below]).fetchone()[0]
                use_ann = visible >= self.ann_exact_below
            if use_ann:
                cur.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                cur.execute(f"SET LOCAL hnsw.ef_search = {max(HNSW_EF_SEARCH, k + TIE_MARGIN)}")
                order = "c.vector <=> %s::vector"
            else:
                order = "(c.vector <=> %s::vector) + 0"  # not the index's operator expression: exact
            rows = cur.execute(f"""SELECT chunk_id, doc_id, title, 1 - dist FROM (
                                     SELECT c.chunk_id, c.doc_id, c.title, c.vector <=> %s::vector AS dist
                                     FROM {s}.chunks c WHERE {where} ORDER BY {order} LIMIT %s) x""",
                               [qv, *params, qv, k + TIE_MARGIN]).fetchall()
        self.last_vector_path = "ann" if use_ann else "exact"
        return self._scored(rows)[:k]

    def titled_with(self, identifier: str, filters: Filters | None = None) -> list[ScoredChunk]:
        """Chunks of documents whose title names ``identifier`` (first chunk of each doc first)."""
        where, params = filter_sql(filters)
        with self._tx(filters.groups if filters is not None else None) as cur:
            rows = cur.execute(f"SELECT chunk_id, doc_id, title, prev_id FROM {self.schema}.chunks c "
                               f"WHERE c.title_ids @> ARRAY[%s]::text[] AND {where} LIMIT 1000",
                               [fold(identifier), *params]).fetchall()
        rows.sort(key=lambda r: (r[1], r[3] is not None, r[0]))
        return [ScoredChunk(r[0], r[1], r[2], 1.0) for r in rows]

    def has_group(self, group: str) -> bool:
        """Whether any chunk names ``group`` among its groups (read as a principal in that group,
        so row-level security applies as to a search)."""
        with self._tx((group,)) as cur:
            return bool(cur.execute(f"SELECT EXISTS (SELECT 1 FROM {self.schema}.chunks c "
                                    "WHERE c.groups @> ARRAY[%s]::text[])", [group]).fetchone()[0])

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, StoredChunk]:
        """Chunks by id with their document metadata."""
        if not chunk_ids:
            return {}
        with self._tx() as cur:
            rows = cur.execute(f"SELECT {', '.join(_META_COLS)} FROM {self.schema}.chunks WHERE chunk_id = ANY(%s)",
                               (list(set(chunk_ids)),)).fetchall()
        out = {}
        for r in rows:
            m = dict(zip(_META_COLS, r))
            out[m["chunk_id"]] = StoredChunk(
                chunk_id=m["chunk_id"], doc_id=m["doc_id"], title=m["title"], source=m["source"],
                version=m["version"], updated=m["updated"], groups=tuple(m["groups"]),
                heading_path=tuple(m["heading_path"]), text=m["text"], start=m["start"], end=m["end_"],
                token_count=m["token_count"], prev_id=m["prev_id"], next_id=m["next_id"],
                parent_id=m["parent_id"], effective=m["effective"], page_start=m["page_start"],
                page_end=m["page_end"], metadata=m["metadata"] or {})
        return out

    def get_vectors(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by chunk id (float32, shape (dim,))."""
        if not chunk_ids:
            return {}
        with self._tx() as cur:
            rows = cur.execute(f"SELECT chunk_id, vector::text FROM {self.schema}.chunks WHERE chunk_id = ANY(%s)",
                               (list(set(chunk_ids)),)).fetchall()
        return {cid: np.array(v[1:-1].split(","), dtype=np.float32) for cid, v in rows}

    def get_units(self, chunk_ids: Sequence[str]) -> dict[str, UnitVectors]:
        """Stored answer-unit vectors by chunk id (one query; rows without units are absent)."""
        if not chunk_ids:
            return {}
        with self._tx() as cur:
            rows = cur.execute(f"SELECT chunk_id, units_version, units_key, unit_spans, unit_vectors "
                               f"FROM {self.schema}.chunks WHERE chunk_id = ANY(%s) AND units_version <> ''",
                               (list(set(chunk_ids)),)).fetchall()
        out = {}
        for cid, ver, key, spans, blob in rows:
            spans = spans or []
            vecs = np.frombuffer(bytes(blob or b""), dtype="<f4").astype(np.float32).reshape(-1, self.dim)
            out[cid] = UnitVectors(ver, key, tuple(zip(spans[0::2], spans[1::2])), vecs)
        return out

    def documents(self, doc_ids: Iterable[str] | None = None) -> dict[str, DocumentEntry]:
        """Every stored document (only those of ``doc_ids`` when given), from its chunk rows (one
        aggregate query)."""
        where, params = "", ()
        if doc_ids is not None:
            ids = sorted(set(doc_ids))
            if not ids:
                return {}
            where, params = "WHERE doc_id = ANY(%s::text[])", (ids, ids)
        with self._tx() as cur:
            rows = cur.execute(f"""
                SELECT a.*, f.groups FROM (
                    SELECT doc_id, min(title), min(source), min(content_hash), min(version), min(updated),
                           count(*), min(indexed_at), min(effective), min(source_changed_at),
                           CASE WHEN count(DISTINCT units_version) = 1 THEN min(units_version) ELSE '' END,
                           min(title_ids)
                    FROM {self.schema}.chunks {where} GROUP BY doc_id) a
                JOIN (SELECT DISTINCT ON (doc_id) doc_id, groups FROM {self.schema}.chunks {where}
                      ORDER BY doc_id, chunk_id) f USING (doc_id)
                ORDER BY doc_id""", params or None).fetchall()
        return {r[0]: DocumentEntry(r[0], r[1], r[2], r[3], r[4], r[5], int(r[6]), r[7], r[8], tuple(r[12] or ()),
                                    r[9], r[10], tuple(r[11] or ())) for r in rows}

    def chunk_versions(self) -> dict[str, set[tuple[str, str, str]]]:
        """Per document, the set of (chunk_id, content_hash, version) of its rows."""
        out: dict[str, set[tuple[str, str, str]]] = {}
        with self._tx() as cur:
            for doc, cid, h, v in cur.execute(f"SELECT doc_id, chunk_id, content_hash, version FROM {self.schema}.chunks"):
                out.setdefault(doc, set()).add((cid, h, v))
        return out

    def term_statistics(self) -> dict:
        """{'n_chunks', 'total_len', 'df': {term: df}} as stored (for checks against a recount)."""
        with self._tx() as cur:
            n, total = cur.execute(f"SELECT n_chunks, total_len FROM {self.schema}.corpus_stats").fetchone()
            df = dict(cur.execute(f"SELECT term, df FROM {self.schema}.term_stats").fetchall())
        return {"n_chunks": n, "total_len": total, "df": df}

    def stats(self) -> dict:
        """Document and chunk counts, and the backend."""
        with self._tx() as cur:
            docs, chunks = cur.execute(f"SELECT count(DISTINCT doc_id), count(*) FROM {self.schema}.chunks").fetchone()
        return {"documents": int(docs), "chunks": int(chunks), "backend": "postgresql", "schema": self.schema}
