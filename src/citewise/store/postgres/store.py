"""The PostgreSQL store class (:class:`PostgresStore`): connection pool, transactions and the
ingest lock; its writes, searches and lookups come from the mixins of the sibling modules."""

from __future__ import annotations

import re
import zlib
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence
from urllib.parse import urlsplit, urlunsplit

from citewise.core import CitewiseError
from citewise.store.base import IndexBusy, StoreCapabilities
from citewise.store.pg_names import GROUPS_SETTING, SEARCH_ROLE
from citewise.store.lance import ANN_EXACT_BELOW_VISIBLE, ANN_MIN_ROWS

from citewise.store.postgres.schema import (
    POOL_MAX_SIZE,
    POOL_TIMEOUT_S,
    _ddl,
    _reset_principal,
    import_pool,
    import_psycopg,
    split_url,
)
from citewise.store.postgres.host import PgConnection, PgCursor
from citewise.store.postgres.writes import _WriteMixin
from citewise.store.postgres.search import _SearchMixin
from citewise.store.postgres.reads import _ReadMixin

if TYPE_CHECKING:
    from citewise.store.pg_derived import PgSummaries, PgTrees


class PostgresStore(_WriteMixin, _SearchMixin, _ReadMixin):
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

    def __init__(
        self,
        url: str,
        dim: int,
        ann_min_rows: int | None = None,
        ann_exact_below: int | None = None,
        pool_size: int = POOL_MAX_SIZE,
    ) -> None:
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
        self._pool = import_pool()(
            self.dsn,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            reset=_reset_principal,
            timeout=POOL_TIMEOUT_S,
            name=f"citewise-{self.schema}",
            open=False,
        )
        self._pool.open(wait=True, timeout=POOL_TIMEOUT_S)

    def _safe_url(self) -> str:
        """The URL without its password (for messages)."""
        p = urlsplit(self.url)
        if p.password:
            p = p._replace(netloc=p.netloc.replace(":" + p.password + "@", ":***@"))
        if "password=" in p.query:  # libpq also takes ?password=...
            p = p._replace(query=re.sub(r"(^|&)password=[^&]*", r"\1password=***", p.query))
        return urlunsplit(p)

    def _setup(self, conn: PgConnection) -> None:
        """Create the extension, role, schema and tables if missing (serialised by an advisory
        transaction lock, so two processes opening a new store do not race); check the dim."""
        psycopg = import_psycopg()
        s = self.schema
        with conn.transaction():
            cur = conn.cursor()
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key("setup"),))
            exists = cur.execute(
                "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = 'chunks'", (s,)
            ).fetchone()
            if exists:
                have = cur.execute(f"SELECT value FROM {s}.meta WHERE key = 'dim'").fetchone()
                if have and int(have[0]) != self.dim:
                    raise CitewiseError(
                        f"--store {self._safe_url()}: stored vectors have dim {have[0]}, embedder gives {self.dim}"
                    )
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
                raise CitewiseError(
                    f"--store {self._safe_url()}: cannot create the store in schema {s} ({' '.join(str(e).split())})"
                ) from None

    def _lock_key(self, what: str) -> int:
        """A 63-bit advisory lock key for ``what`` in this store's schema."""
        return zlib.crc32(f"citewise:{self.schema}:{what}".encode())

    @property
    def capabilities(self) -> StoreCapabilities:
        """A server store: several processes and hosts may write it (an ingest takes its
        advisory lock), no local folder, and listing rows is a round trip."""
        return StoreCapabilities(name="postgresql", folder=None, shared=True, rows_scan=False)

    def concurrent_legs(self) -> bool:
        """False: both legs are SQL on pooled connections; they run one after the other."""
        return False

    def warm(self) -> dict[str, float]:
        """Nothing to preload: PostgreSQL keeps its own buffer cache."""
        return {}

    def close(self) -> None:
        """Close the pool and its connections (the store cannot be used afterwards)."""
        self._pool.close()

    def pool_stats(self) -> dict[str, int]:
        """The pool's counters (``psycopg_pool.ConnectionPool.get_stats``: ``pool_size``,
        ``pool_available``, ``requests_num``, ``connections_num``...), for tests and monitoring."""
        stats: dict[str, int] = self._pool.get_stats()
        return stats

    @contextmanager
    def _tx(self, groups: Sequence[str] | None = None, snapshot: bool = True) -> Iterator[PgCursor]:
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
                    cur.execute(
                        "SELECT set_config('role', %s, true), set_config(%s, %s::text[]::text, true)",
                        (SEARCH_ROLE, GROUPS_SETTING, list(groups)),
                    )
                yield cur

    @contextmanager
    def _connection(self) -> Iterator[PgConnection]:
        """A connection borrowed from the pool (autocommit; handed back, reset, on exit).

        Raises:
            CitewiseError: no connection became free within :data:`POOL_TIMEOUT_S` seconds.
        """
        from psycopg_pool import PoolTimeout

        from citewise.store.faults import store_faults

        try:
            conn = self._pool.getconn()
        except PoolTimeout:
            raise CitewiseError(
                f"--store {self._safe_url()}: no free connection after {POOL_TIMEOUT_S:.0f} s "
                f"(pool of {self._pool.max_size} all busy, or the server is unreachable)"
            ) from None
        try:
            # a full disk, a damaged page or a read-only replica: one line saying what to do
            with store_faults(self._safe_url()):
                yield conn
        finally:
            self._pool.putconn(conn)

    def summary_table(self) -> PgSummaries:
        """The document summaries' table (:class:`citewise.store.pg_derived.PgSummaries`)."""
        from citewise.store.pg_derived import PgSummaries

        return PgSummaries(self)

    def replication(self) -> dict[str, Any]:
        """Replication role and lag (:func:`citewise.store.pg_replication.replication_status`)."""
        from citewise.store.pg_replication import replication_status

        return replication_status(self)

    def tree_table(self) -> PgTrees:
        """The RAPTOR trees' tables (:class:`citewise.store.pg_derived.PgTrees`)."""
        from citewise.store.pg_derived import PgTrees

        return PgTrees(self)

    # -- ingest lock --------------------------------------------------------------------------
    @contextmanager
    def ingest_lock(self, wait: bool = False, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
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
