"""What the mixins of :class:`citewise.store.postgres.PostgresStore` share: the store's state,
set by its ``__init__``, and the methods one mixin calls on another, declared once for the type
checker (nothing here runs: the attributes are annotations only, the methods exist only while
type checking, and :class:`PostgresStore` gets each from the class that defines it)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Sequence

#: A psycopg 3 cursor whose rows are tuples (``psycopg.Cursor[tuple]``). Any: psycopg is the
#: optional [postgres] extra, read untyped (see ``[tool.mypy]``); the rows of our own SELECTs
#: are known from their SQL.
PgCursor = Any
#: A psycopg 3 connection (``psycopg.Connection``), autocommit, borrowed from the pool.
PgConnection = Any


class _PgHost:
    """The state and cross-mixin methods of :class:`~citewise.store.postgres.PostgresStore`."""

    url: str
    dsn: str
    schema: str
    dim: int
    ann_min_rows: int
    ann_exact_below: int
    last_vector_path: str
    last_bm25_passes: list[int]
    #: doc ids imported in the current ``bulk_load`` (None outside one)
    _bulk: set[str] | None
    #: ``psycopg_pool.ConnectionPool`` (the subclass of :func:`~citewise.store.postgres.schema._pool_class`)
    _pool: Any

    if TYPE_CHECKING:

        def _safe_url(self) -> str: ...

        def _tx(
            self, groups: Sequence[str] | None = None, snapshot: bool = True
        ) -> AbstractContextManager[PgCursor]: ...

        def _connection(self) -> AbstractContextManager[PgConnection]: ...

        def _restore_postings_keys(self, cur: PgCursor) -> None: ...
