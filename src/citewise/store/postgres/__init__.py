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

from citewise.store.postgres.schema import (  # noqa: F401
    _copy_text_array,
    _ddl,
    _HIT_INDEX,
    _META_COLS,
    _pool_class,
    _postings_keys,
    _reset_principal,
    _ROW_COLS,
    _vector_text,
    BM25_B,
    BM25_K1,
    BM25_OVERFETCH,
    bm25_terms,
    DEFAULT_SCHEMA,
    hnsw_build_memory,
    HNSW_BUILD_MEMORY,
    HNSW_BUILD_MEMORY_MAX_MB,
    HNSW_EF_CONSTRUCTION,
    HNSW_M,
    import_pool,
    import_psycopg,
    MAX_TOKEN_BYTES,
    POOL_MAX_SIZE,
    POOL_TIMEOUT_S,
    split_url,
)
from citewise.store.postgres.search import BM25_PROBE_COST, filter_sql, HNSW_EF_SEARCH  # noqa: F401
from citewise.store.postgres.store import PostgresStore  # noqa: F401
from citewise.store.pg_names import GROUPS_SETTING  # noqa: F401
from citewise.store.pg_names import SEARCH_ROLE  # noqa: F401

__all__ = [
    "_copy_text_array",
    "_ddl",
    "_HIT_INDEX",
    "_META_COLS",
    "_pool_class",
    "_postings_keys",
    "_reset_principal",
    "_ROW_COLS",
    "_vector_text",
    "BM25_B",
    "BM25_K1",
    "BM25_OVERFETCH",
    "bm25_terms",
    "DEFAULT_SCHEMA",
    "hnsw_build_memory",
    "HNSW_BUILD_MEMORY",
    "HNSW_BUILD_MEMORY_MAX_MB",
    "HNSW_EF_CONSTRUCTION",
    "HNSW_M",
    "import_pool",
    "import_psycopg",
    "MAX_TOKEN_BYTES",
    "POOL_MAX_SIZE",
    "POOL_TIMEOUT_S",
    "split_url",
    "BM25_PROBE_COST",
    "filter_sql",
    "HNSW_EF_SEARCH",
    "PostgresStore",
    "GROUPS_SETTING",
    "SEARCH_ROLE",
]
