"""Table names, the Arrow schema, SQL filters and index settings of the LanceDB store
(:mod:`citewise.store.lance`), and the helpers that read its rows."""

from __future__ import annotations

import bisect
import dataclasses
import json
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pyarrow as pa

from citewise.core import Filters
from citewise.store.base import CHUNK_COLUMNS, DocumentEntry, IngestRun


TABLE = "chunks"
RUNS_TABLE = "ingest_runs"
#: Extra rows fetched beyond k so that ties at the k-th score are broken by chunk id here, not
#: by the engine's arbitrary order (exact unless more than this many rows tie at the cut).
TIE_MARGIN = 16


def _q(value: str) -> str:
    """A SQL string literal (single quotes doubled)."""
    return "'" + str(value).replace("'", "''") + "'"


def filter_sql(filters: Filters | None) -> str | None:
    """The SQL predicate for ``filters`` (None when there is nothing to filter).

    Without a date or a version only current documents match (older versions kept as history
    are found by ``as_of`` or ``version``).

    >>> filter_sql(Filters(groups=("public", "finance"), version="3"))
    "array_has_any(groups, ['public', 'finance']) AND version = '3'"
    >>> filter_sql(None)
    'current = true'
    """
    if filters is None:
        return "current = true"
    parts = []
    if filters.groups is not None:
        if not filters.groups:
            return "false"
        parts.append(f"array_has_any(groups, [{', '.join(_q(g) for g in filters.groups)}])")
    if filters.doc_ids is not None:
        if not filters.doc_ids:
            return "false"
        parts.append(f"doc_id IN ({', '.join(_q(d) for d in filters.doc_ids)})")
    if filters.as_of is not None:
        d = _q(filters.as_of.isoformat())
        parts.append(
            f"((effective <> '' AND effective <= {d}) OR (effective = '' AND (updated = '' OR updated <= {d})))"
        )
        parts.append(f"(current = true OR (valid_to <> '' AND valid_to > {d}))")
    if filters.version is not None:
        parts.append(f"version = {_q(filters.version)}")
    if filters.as_of is None and filters.version is None:
        parts.append("current = true")
    if filters.metadata:
        from citewise.store.metadata_sql import lance_predicates

        parts += lance_predicates(filters.metadata)
    return " AND ".join(parts)


def _schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("doc_id", pa.string(), nullable=False),
            pa.field("title", pa.string()),
            pa.field("title_ids", pa.list_(pa.string())),
            pa.field("source", pa.string()),
            pa.field("version", pa.string()),
            pa.field("updated", pa.string()),
            pa.field("effective", pa.string()),
            pa.field("current", pa.bool_()),
            pa.field("valid_to", pa.string()),
            pa.field("groups", pa.list_(pa.string())),
            pa.field("content_hash", pa.string()),
            pa.field("indexed_at", pa.string()),
            pa.field("source_changed_at", pa.string()),
            pa.field("heading_path", pa.list_(pa.string())),
            pa.field("text", pa.string()),
            pa.field("lexical", pa.string()),
            pa.field("start", pa.int64()),
            pa.field("end", pa.int64()),
            pa.field("token_count", pa.int32()),
            pa.field("page_start", pa.int32()),
            pa.field("page_end", pa.int32()),
            pa.field("prev_id", pa.string()),
            pa.field("next_id", pa.string()),
            pa.field("parent_id", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
            *_unit_fields(dim),
            *_meta_fields(),
        ]
    )


def _meta_fields() -> list[pa.Field]:
    """Columns of the document metadata (:mod:`citewise.store.metadata_sql`); optional on old
    tables: JSON text, ``key=value`` terms, range values (Arrow JSON, read by ``json_get_*``)."""
    return [
        pa.field("metadata", pa.string()),
        pa.field("meta_terms", pa.list_(pa.string())),
        pa.field("meta_ranges", pa.json_(pa.string())),
    ]


def _unit_fields(dim: int) -> list[pa.Field]:
    """Columns of the answer-unit vectors (see module docstring); optional on old tables."""
    return [
        pa.field("units_version", pa.string()),
        pa.field("units_key", pa.string()),
        pa.field("unit_spans", pa.list_(pa.int32())),
        pa.field("unit_vectors", pa.list_(pa.list_(pa.float32(), dim))),
    ]


_META_COLS = list(CHUNK_COLUMNS)

_RUN_SCHEMA = pa.schema(
    [pa.field(f.name, pa.string() if f.type in (str, "str") else pa.int64()) for f in dataclasses.fields(IngestRun)]
)

#: Scalar indexes kept on the chunk table: column -> LanceDB index type. ``LABEL_LIST`` serves
#: ``array_has_any``/``array_has`` on list columns, ``BITMAP`` equality on low-cardinality columns,
#: ``BTREE`` equality and ``IN`` on near-unique ones (``get_chunks``, ``merge_insert``'s key, deletes).
SCALAR_INDEXES = {
    "groups": "LABEL_LIST",
    "title_ids": "LABEL_LIST",
    "current": "BITMAP",
    "version": "BITMAP",
    "chunk_id": "BTREE",
    "doc_id": "BTREE",
    "meta_terms": "LABEL_LIST",
}

#: The fewest rows from which a store builds the :data:`SCALAR_INDEXES`. Below it a read that
#: evaluates a predicate on those columns (``get_chunks`` of a search's top k, a version mask)
#: scans them at most about a millisecond slower than the indexes answer, while the seven indexes
#: cost 25-55 ms of CPU at every ingest's refresh (bench/scalar_indexes.py, docs/benchmarks.md).
SCALAR_INDEX_MIN_ROWS = 5_000

#: The fewest rows from which a store builds an approximate (ANN) index on ``vector`` (the
#: PostgreSQL store's HNSW threshold; LanceDB stores use :func:`exact_max_rows`, which is at
#: least this). Exact search costs one pass over the visible vectors, linear in the rows (2.5 s at
#: 1M through LanceDB's scan, issue 12), so a large table needs an index.
ANN_MIN_ROWS = 50_000

#: Exact dense search (NumPy, over the vectors kept with the BM25 postings) serves tables of up to
#: this many vector cells (rows x dim): 250,000 chunks at dim 384. Below it a one-thread pass over
#: every vector costs less than probing the IVF index (100k x 384: exact 8-10 ms vs 22-25 ms for
#: 160 probes, bench/dense_search.py); at 1M chunks the pass costs ~10x that and the index wins
#: (docs/scaling.md). :func:`exact_max_rows` turns it into the store's ``ann_min_rows``.
EXACT_MAX_CELLS = 96_000_000


def exact_max_rows(dim: int) -> int:
    """Rows up to which a LanceDB store of ``dim``-d vectors searches exactly (:data:`EXACT_MAX_CELLS`),
    at least :data:`ANN_MIN_ROWS`.

    >>> exact_max_rows(384), exact_max_rows(1536)
    (250000, 62500)
    """
    return max(ANN_MIN_ROWS, EXACT_MAX_CELLS // max(int(dim), 1))


#: The ANN index is retrained when the table has grown to this many times the rows it was
#: trained on (new rows otherwise only join the existing partitions, which grow with them).
ANN_RETRAIN_GROWTH = 4

#: IVF partitions probed per ANN query at least (``minimum_nprobes``; ``maximum_nprobes`` is 0 =
#: no limit, so a filtered query probes further partitions until its top-k is full). 64 gave
#: recall@10 vs exact 1.000 on 100k hashing-embedder vectors (316 partitions) and 0.996 on
#: SciFact-derived MiniLM vectors, but 0.958-0.974 on NFCorpus-derived ones (each real vector's 26
#: noisy copies straddle partitions); on that set (kept build, 300 queries, bench/scale.py
#: --minilm-base, docs/benchmarks.md) 96 / 128 / 160 / 200 probes gave 0.977 / 0.983 / 0.991 /
#: 0.995 at p50 15.7 / 18.1 / 21.5 / 24.7 ms (64: 0.974, 15.5 ms; exact ~94 ms).
ANN_NPROBES = 160

#: Share of the index's IVF partitions probed per ANN query when more than :data:`ANN_NPROBES`
#: (:func:`ann_nprobes_for`): the share that gave recall 1.000 at 100k (64 of 316). A fixed 64
#: probes of the 1,000 partitions at 1M chunks scanned 6.4% of the vectors and recall@10 fell to
#: 0.762 (hashing vectors, 50 queries, bench/scale.py's queries); the same 20% share (200 probes)
#: gave 0.886 public / 0.826 under a 1% filter at p50 101 / 37 ms, 320 probes 0.958 / 0.944 at
#: 119 / 53 ms, exact 918 / 131 ms (one process, load ~4, docs/scaling.md).
ANN_PROBE_SHARE = 0.2


#: A filtered dense query whose filter leaves fewer visible rows than this bypasses the ANN
#: index and runs exact over the visible rows (cheap: a few thousand distances), so a selective
#: permission/version filter (e.g. a 1% group at 100k) never depends on how many visible rows the
#: probed partitions happen to hold.
ANN_EXACT_BELOW_VISIBLE = 5_000

#: A table folder unchanged for this long is trusted not to have committed since it was last
#: looked at when its mtime is the same (:meth:`LanceStore._version_probe`); well above the
#: kernel's timestamp granularity (one tick, <= 10 ms).
PROBE_MARGIN_NS = 50_000_000

#: Folder (inside the LanceDB folder) of the saved BM25 postings, one subfolder per table version.
BM25_FOLDER = "_bm25"
#: Up to this many changed documents, the postings of a new version are derived from the
#: previous version's (:meth:`LanceStore._updated_postings`; their rows are read by a
#: ``doc_id IN (...)`` predicate); above, a full build from a scan of the table, which a change of
#: that size costs little more than.
INCREMENTAL_MAX_DOCS = 5_000


_FTS_OPTIONS = dict(
    with_position=False,
    base_tokenizer="whitespace",
    lower_case=False,
    stem=False,
    remove_stop_words=False,
    ascii_folding=False,
    max_token_length=64,
)


def _ann_config(rows: int) -> Any:
    """The LanceDB config of the ANN index on ``vector`` for a table of ``rows`` rows.

    IVF_FLAT with cosine distance and ``round(sqrt(rows))`` partitions.

    Cosine, because :meth:`LanceStore.vector_search` ranks by cosine (an index trained on
    another distance gives wrong results). IVF_FLAT keeps the full float32 vectors in each
    partition, so the distances it returns are exact and only the partition choice
    (:func:`ann_nprobes_for`) costs recall; no refine step is needed. Measured against the
    quantized types on 100k hashing-embedder vectors (dim 256, 100 queries, public filter,
    recall@10 vs exact; LanceDB's default partitioning): IVF_HNSW_SQ (one partition) 0.45 / 0.65
    / 0.74 at ef 100 / 300 / 600 (36 s build); IVF_PQ (32 sub-vectors) 0.54 / 0.67 with nprobes
    20 / 40 and refine_factor 5 / 10 (26 s build); IVF_FLAT 0.968 / 1.000 at nprobes 20 / 60
    (1.3 s build). Partitions are set
    explicitly: LanceDB 0.40.0's IVF_FLAT default derives them from a target partition size
    (8,192 rows), which puts a few thousand rows in one partition (nothing approximate left to
    test) and gives few, large partitions at 100k; sqrt(rows) is the usual IVF choice.
    """
    from lancedb.index import IvfFlat

    return IvfFlat(distance_type="cosine", num_partitions=max(1, round(rows**0.5)))


def ann_nprobes_for(partitions: int, minimum: int = ANN_NPROBES, share: float = ANN_PROBE_SHARE) -> int:
    """IVF partitions to probe in an index of ``partitions`` partitions: ``ceil(share *
    partitions)``, at least ``minimum`` (and at most ``partitions`` when that is known, > 0).

    >>> ann_nprobes_for(316), ann_nprobes_for(1000), ann_nprobes_for(20)
    (160, 200, 20)
    """
    import math

    n = max(int(minimum), math.ceil(share * partitions - 1e-9))
    return min(n, partitions) if partitions > 0 else n


def _ivf_partitions(index_names: Iterable[str]) -> int:
    """Partitions of the ANN index from its name ``vector_ivf_p<N>`` (the largest N; 0 if none)."""
    best = 0
    for name in index_names:
        tail = name.rsplit("_p", 1)[-1]
        if name.startswith("vector_ivf_p") and tail.isdigit():
            best = max(best, int(tail))
    return best


def _scalar_config(kind: str) -> Any:
    """The LanceDB index config object for a :data:`SCALAR_INDEXES` type name."""
    from lancedb.index import BTree, Bitmap, LabelList

    return {"LABEL_LIST": LabelList, "BITMAP": Bitmap, "BTREE": BTree}[kind]()


def page_range(pages: Sequence[int], start: int, end: int) -> tuple[int, int]:
    """1-based (first, last) page of the text span ``[start, end)`` given page start offsets.

    >>> page_range((0, 90, 200), 80, 120)
    (1, 2)
    >>> page_range((), 0, 10)
    (0, 0)
    """
    if not pages:
        return 0, 0
    first = bisect.bisect_right(pages, start)
    last = bisect.bisect_right(pages, max(start, end - 1))
    return max(first, 1), max(last, 1)


def import_lancedb() -> ModuleType:
    """``import lancedb``, without building the validators of its REST namespace client up front.

    ``import lancedb`` (0.40.0) imports ``lance_namespace_urllib3_client``, whose API classes
    decorate every method with ``pydantic.validate_call``; building those validators was 0.25 of
    the 0.80 s the import took (2-core machine, ``python -X importtime``), on every ``citewise
    search``, for a REST client an embedded store never calls. While lancedb is first imported,
    ``pydantic.validate_call`` is replaced by a decorator that builds the same validator on the
    first call of the decorated function (same checks, later). Any other pydantic use is
    untouched; when lancedb is already imported this is a plain import.
    """
    import sys

    if "lancedb" in sys.modules:
        return sys.modules["lancedb"]
    import functools

    import pydantic

    real = pydantic.validate_call

    def deferred(func: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
            built: Callable[..., Any] | None = None

            @functools.wraps(f)
            def call(*args: Any, **kwargs: Any) -> Any:
                nonlocal built
                if built is None:
                    built = real(**options)(f)
                return built(*args, **kwargs)

            return call

        return decorate(func) if func is not None else decorate

    pydantic.validate_call = deferred
    try:
        import lancedb
    finally:
        pydantic.validate_call = real
    module: ModuleType = lancedb
    return module


def _document_entries(tbl: pa.Table, with_units: bool) -> dict[str, DocumentEntry]:
    """:class:`DocumentEntry` per document of the chunk rows ``tbl`` (see
    :meth:`LanceStore.documents`), sorted by id; one Python row per document."""
    import pyarrow.compute as pc

    if tbl.num_rows == 0:
        return {}
    enc = pc.dictionary_encode(tbl.column("doc_id").combine_chunks())
    codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    ndocs = len(enc.dictionary)
    _, first = np.unique(codes, return_index=True)  # each document's first row (codes 0..ndocs-1)
    counts = np.bincount(codes, minlength=ndocs)
    if with_units:
        units = pc.dictionary_encode(tbl.column("units_version").combine_chunks().fill_null(""))
        pairs = np.unique(codes * len(units.dictionary) + units.indices.to_numpy(zero_copy_only=False).astype(np.int64))
        distinct = np.bincount(pairs // len(units.dictionary), minlength=ndocs)
    head = tbl.take(pa.array(first))
    col = {c: head.column(c).to_pylist() for c in head.column_names}
    out: dict[str, DocumentEntry] = {}
    for i, d in enumerate(col["doc_id"]):
        unit_version = (col["units_version"][i] or "") if with_units and distinct[i] == 1 else ""
        out[d] = DocumentEntry(
            d,
            col["title"][i],
            col["source"][i],
            col["content_hash"][i],
            col["version"][i],
            col["updated"][i],
            int(counts[i]),
            col["indexed_at"][i],
            col["effective"][i] or "",
            tuple(col["groups"][i] or ()),
            col["source_changed_at"][i] or "",
            unit_version,
            tuple(col["title_ids"][i] or ()),
        )
    return dict(sorted(out.items()))


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write JSON atomically (temp file + rename)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True))
    tmp.replace(path)
