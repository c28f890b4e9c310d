"""Exact dense search in NumPy: the transposed full pass, the gathered selective pass, and the
group masks computed from the permission columns."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from citewise.core import Filters
from citewise.store.dense import GATHER_MAX_SHARE, exact_top
from citewise.store.row_filters import RowFilters


def _unit_rows(n, dim, seed):
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _brute(vectors, q, k, visible):
    s = vectors[visible].astype(np.float64) @ (q / np.linalg.norm(q))
    order = sorted(range(len(visible)), key=lambda i: (-round(s[i], 6), f"c{visible[i]:05d}"))[:k]
    return [f"c{visible[i]:05d}" for i in order]


@pytest.mark.parametrize("share", [1.0, 0.6, GATHER_MAX_SHARE / 2, 0.002])
def test_every_pass_ranks_as_float64_brute_force(share):
    n, dim, k = 3000, 48, 10
    v = _unit_rows(n, dim, 1)
    v[17] = v[5]  # an exact tie: broken by chunk id
    ids = np.array([f"c{i:05d}" for i in range(n)], dtype=object)
    rows_of = lambda c: (ids[c].tolist(), ids[c].tolist(), ids[c].tolist())  # noqa: E731
    rng = np.random.default_rng(2)
    visible = np.arange(n) if share == 1.0 else np.sort(rng.choice(n, int(share * n), replace=False))
    hidden = np.setdiff1d(np.arange(n), visible)
    vt = np.ascontiguousarray(v.T)
    for q in (v[5] + 0.01, _unit_rows(1, dim, 3)[0]):
        want = _brute(v, q, k, visible)
        mask = None if share == 1.0 else visible
        assert [h[0] for h in exact_top(v, q, k, mask, rows_of, vt, hidden if mask is not None else None)] == want
        assert [h[0] for h in exact_top(v, q, k, mask, rows_of)] == want  # the (n, dim) layout alone


def test_row_filter_masks_by_hand():
    groups = pa.array([["public"], ["finance"], ["public", "finance"], [], None, ["support"]], pa.list_(pa.string()))
    current = pa.array([True, True, True, True, True, False])
    positions = np.array([5, 4, 3, 2, 1, 0])  # scan order differs from the postings' positions
    rf = RowFilters(6, positions, groups, current)
    # position p holds scanned row 5 - p
    assert rf.mask(Filters(groups=("public",))).tolist() == [False, False, False, True, False, True]
    assert rf.mask(Filters(groups=("finance", "nobody"))).tolist() == [False, False, False, True, True, False]
    assert rf.mask(Filters(groups=())).tolist() == [False] * 6
    assert rf.mask(Filters(groups=None)).tolist() == [False, True, True, True, True, True]
    assert not RowFilters.expressible(Filters(groups=("public",), version="3"))
    assert not RowFilters.expressible(None)


def _small_store(path, n, dim=8):
    """A LanceStore of ``n`` one-chunk rows: every 10th in group ``restricted``, the rest
    ``public``; row 3 is an old version (not current)."""
    from citewise.store.lance import TABLE, LanceStore, _schema

    store = LanceStore(path, dim)
    schema = _schema(dim)
    vecs = _unit_rows(n, dim, 4)
    cols = {
        "chunk_id": [f"c{i:04d}" for i in range(n)],
        "doc_id": [f"d{i:04d}" for i in range(n)],
        "groups": [["restricted"] if i % 10 == 0 else ["public"] for i in range(n)],
        "current": [i != 3 for i in range(n)],
        "lexical": [f"w{i % 7}" for i in range(n)],
    }
    arrays = []
    for f in schema:
        if f.name == "vector":
            arrays.append(pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1), type=pa.float32()), dim))
        elif f.name in cols:
            arrays.append(pa.array(cols[f.name], type=f.type))
        else:
            arrays.append(pa.nulls(n, type=f.type))
    store._writable()
    store._table = store._db.create_table(TABLE, data=pa.Table.from_arrays(arrays, schema=schema), schema=schema)
    store._fts_dirty = True
    store.refresh_indexes()
    return store


def test_store_masks_equal_the_sql_predicate(tmp_path):
    from citewise.store.lance import filter_sql

    store = _small_store(tmp_path / "s", 400)
    p = store.postings()
    for f in (Filters(groups=("public",)), Filters(groups=("restricted", "public")), Filters(groups=("nobody",))):
        fast = store._mask(p, filter_sql(f), f).copy()
        p.masks.clear()
        slow = store._mask(p, filter_sql(f))  # LanceDB evaluates the SQL
        p.masks.clear()
        assert fast.tolist() == slow.tolist()
    hits = store.vector_search(np.ones(8, np.float32), 50, Filters(groups=("restricted",)))
    assert sorted(h.chunk_id for h in hits) == [f"c{i:04d}" for i in range(0, 400, 10)]
    public = store.vector_search(np.ones(8, np.float32), 400, Filters(groups=("public",)))
    assert len(public) == 359 and "c0003" not in {h.chunk_id for h in public}  # 360 public, one not current
