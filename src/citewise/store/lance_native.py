"""Read-only access to a LanceDB database through LanceDB's native extension alone (issue 12).

``import lancedb`` (0.40.0) imports its REST namespace client, embeddings registry, pandas
bridges and more: most of a ``citewise search`` process's start (python -X importtime; see
bench/cli_start.py). A search needs none of that: every read :class:`~citewise.store.lance.LanceStore`
makes is a query on the table's async handle, and those handles are thin wrappers over the
classes of LanceDB's compiled extension ``lancedb._lancedb``. This module loads that extension
by itself (without running ``lancedb/__init__.py``) and gives the store the few handle methods
its reads use, with the same names and results:

* :class:`NativeConnection`: ``table_names()``, ``open_table(name)``;
* :class:`NativeTable` (the synchronous handle's read side): ``version``, ``schema``,
  ``list_indices()``, ``count_rows(filter)``, and ``_table``, a :class:`NativeAsyncTable`;
* :class:`NativeAsyncTable`: ``version()``, ``count_rows(filter)``, ``schema()``,
  ``list_indices()``, ``query()``;
* :class:`NativeQuery`: ``where``, ``select`` (column names), ``with_row_id``, ``limit``,
  ``nearest_to`` (then ``column``, ``distance_type``, ``minimum_nprobes``, ``maximum_nprobes``,
  ``bypass_vector_index``) and ``to_arrow()``, each as ``lancedb.query.AsyncQuery`` does it
  (a list of names selects columns, a ``where`` on a vector query is a prefilter).

The extension is registered in ``sys.modules`` as ``lancedb._lancedb``, so a later
``import lancedb`` in the same process (a write, :meth:`LanceStore._writable`) reuses it
rather than loading it twice. Connections read with strong consistency
(``read_consistency_interval`` 0: each read sees the latest committed version, as the store's
own connection does).
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any, Coroutine, TypeVar

import numpy as np
import pyarrow as pa

_LOOP: _Loop | None = None
_LOCK = threading.Lock()
_T = TypeVar("_T")


def native() -> ModuleType:
    """The ``lancedb._lancedb`` extension module, loaded without the ``lancedb`` package.

    Raises:
        ImportError: lancedb is not installed, or its extension file is not where 0.40 keeps it.
    """
    mod = sys.modules.get("lancedb._lancedb")
    if mod is not None:
        return mod
    with _LOCK:
        mod = sys.modules.get("lancedb._lancedb")
        if mod is not None:
            return mod
        spec = importlib.util.find_spec("lancedb")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("lancedb is not installed")
        files = sorted(Path(spec.submodule_search_locations[0]).glob("_lancedb*.so"))
        if not files:
            raise ImportError("lancedb's native extension (_lancedb*.so) was not found")
        ext = importlib.util.spec_from_file_location("lancedb._lancedb", files[0])
        if ext is None or ext.loader is None:
            raise ImportError(f"lancedb's native extension {files[0]} cannot be loaded")
        mod = importlib.util.module_from_spec(ext)
        sys.modules["lancedb._lancedb"] = mod
        try:
            ext.loader.exec_module(mod)
        except BaseException:
            sys.modules.pop("lancedb._lancedb", None)
            raise
        return mod


class _Loop:
    """An asyncio loop on a daemon thread, as ``lancedb.background_loop`` runs one."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="citewise-lance-read", daemon=True).start()

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return fut.result()
        except BaseException:
            fut.cancel()
            raise


def run(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coro`` to completion on a background event loop and return its result.

    LanceDB's own loop when ``lancedb`` is imported (so handles of both kinds share one thread),
    else this module's.
    """
    bg = sys.modules.get("lancedb.background_loop")
    if bg is not None:
        result: _T = bg.LOOP.run(coro)
        return result
    global _LOOP
    if _LOOP is None:
        with _LOCK:
            if _LOOP is None:
                _LOOP = _Loop()
    return _LOOP.run(coro)


class NativeQuery:
    """A plain or vector query on a :class:`NativeAsyncTable` (builder methods return self)."""

    def __init__(self, inner: Any):
        self._inner = inner
        self._vector = False

    def where(self, predicate: str) -> "NativeQuery":
        self._inner.where(predicate)
        return self

    def select(self, columns: list[str]) -> "NativeQuery":
        if self._vector:
            self._inner.select([(c, c) for c in columns])
        else:
            self._inner.select_columns(list(columns))
        return self

    def with_row_id(self) -> "NativeQuery":
        self._inner.with_row_id()
        return self

    def limit(self, n: int) -> "NativeQuery":
        self._inner.limit(int(n))
        return self

    def nearest_to(self, vector: np.ndarray) -> "NativeQuery":
        self._inner = self._inner.nearest_to(pa.array(np.asarray(vector, dtype=np.float32).reshape(-1)))
        self._vector = True
        return self

    def column(self, name: str) -> "NativeQuery":
        self._inner.column(name)
        return self

    def distance_type(self, kind: str) -> "NativeQuery":
        self._inner.distance_type(kind)
        return self

    def minimum_nprobes(self, n: int) -> "NativeQuery":
        self._inner.minimum_nprobes(int(n))
        return self

    def maximum_nprobes(self, n: int) -> "NativeQuery":
        self._inner.maximum_nprobes(int(n))
        return self

    def bypass_vector_index(self) -> "NativeQuery":
        self._inner.bypass_vector_index()
        return self

    async def to_arrow(self) -> pa.Table:
        stream = await self._inner.execute(max_batch_length=None, timeout=None)
        batches = [b async for b in stream]
        table: pa.Table = pa.Table.from_batches(batches, schema=stream.schema)
        return table


class NativeAsyncTable:
    """The read methods of ``lancedb.table.AsyncTable`` over the native table."""

    def __init__(self, inner: Any):
        self._inner = inner

    async def version(self) -> int:
        return int(await self._inner.version())

    async def count_rows(self, filter: str | None = None) -> int:
        return int(await self._inner.count_rows(filter))

    async def schema(self) -> pa.Schema:
        schema: pa.Schema = await self._inner.schema()
        return schema

    async def list_indices(self) -> list[Any]:
        """The table's index descriptions (LanceDB's ``IndexConfig``: ``name``, ``columns``...)."""
        return list(await self._inner.list_indices())

    def query(self) -> NativeQuery:
        return NativeQuery(self._inner.query())


class NativeTable:
    """The read side of ``lancedb.table.LanceTable`` (synchronous) over a native table."""

    def __init__(self, inner: Any):
        self._table = NativeAsyncTable(inner)

    @property
    def version(self) -> int:
        return run(self._table.version())

    @property
    def schema(self) -> pa.Schema:
        return run(self._table.schema())

    def list_indices(self) -> list[Any]:
        return run(self._table.list_indices())

    def count_rows(self, filter: str | None = None) -> int:
        return run(self._table.count_rows(filter))


class NativeConnection:
    """A read-only connection to the LanceDB database folder ``path``."""

    def __init__(self, path: str | Path):
        mod = native()
        self.path = str(path)

        async def go() -> Any:  # the extension's futures need the running loop when they are made
            return await mod.connect(self.path, None, None, None, None, 0.0, None, None, None)

        self._conn = run(go())

    def table_names(self) -> list[str]:
        async def go() -> list[str]:
            return list(await self._conn.table_names(None, None, None))

        return list(run(go()))

    def open_table(self, name: str) -> NativeTable:
        async def go() -> Any:
            return await self._conn.open_table(name)

        return NativeTable(run(go()))
