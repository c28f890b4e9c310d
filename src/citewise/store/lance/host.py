"""What the mixins of :class:`citewise.store.lance.LanceStore` share: the store's state, set by
its ``__init__``, and the methods one mixin calls on another, declared once for the type checker
(nothing here runs: the attributes are annotations only, the methods exist only while type
checking, and :class:`LanceStore` gets each from the mixin that defines it)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Coroutine, TypeVar

import pyarrow as pa

from citewise.core import Filters

if TYPE_CHECKING:
    from citewise.store.postings import Postings

_T = TypeVar("_T")

#: A table handle: ``lancedb.table.LanceTable``, or on a ``read_only`` store
#: :class:`citewise.store.lance_native.NativeTable` (the same read methods); its ``_table`` is
#: the async handle the reads query. Any: the two share no declared type (lancedb is read
#: untyped, see ``[tool.mypy]``).
TableHandle = Any
#: The async handle behind a :data:`TableHandle` (``lancedb.table.AsyncTable`` or
#: :class:`citewise.store.lance_native.NativeAsyncTable`).
AsyncHandle = Any


class _LanceHost:
    """The state and cross-mixin methods of :class:`~citewise.store.lance.LanceStore`."""

    path: Path
    dim: int
    _read_only: bool
    #: ``lancedb.DBConnection``, or :class:`citewise.store.lance_native.NativeConnection`
    _db: Any
    #: the chunk table (None until it exists; the reads check :meth:`_reader` first)
    _table: TableHandle
    #: the ``ingest_runs`` table (None until it exists)
    _runs: TableHandle
    _names: tuple[int, frozenset[str]]
    _fts_dirty: bool
    _doc_ids: tuple[int, set[str]] | None
    _postings: Postings | None
    _probe: tuple[int, int] | None
    _postings_lock: threading.Lock
    #: [base version, version after the last of these commits, doc ids] (see ``_note_changes``)
    _changes: list[Any] | None
    _versions_dir: str
    bm25_root: Path
    ann_min_rows: int
    ann_nprobes: int | None
    ann_cap_probes: bool | None
    ann_exact_below: int
    scalar_min_rows: int
    last_vector_path: str
    _ann_state: tuple[int, int, bool, dict[str, int], int]
    last_capped: bool
    last_nprobes: int

    if TYPE_CHECKING:

        def _table_names(self) -> list[str]: ...

        def _writable(self) -> None: ...

        def unindexed_rows(self) -> int: ...

        def _reader(self) -> TableHandle | None: ...

        def _open_existing(self, name: str) -> TableHandle | None: ...

        def _run(self, coro: Coroutine[Any, Any, _T]) -> _T: ...

        def _query(self, make: Callable[[Any], Any], table: TableHandle | None = None) -> pa.Table: ...

        def column_names(self) -> frozenset[str]: ...

        def _where(self, filters: Filters | None) -> str | None: ...

        def _scan(self, columns: list[str], where: str | None = None) -> pa.Table: ...

        def _scan_table(self, table: TableHandle, columns: list[str] | None, where: str | None = None) -> pa.Table: ...

        def postings(self) -> Postings | None: ...
