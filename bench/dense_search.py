"""Dense search cost per query against NumPy exact and FAISS flat on the same vectors, same run.

Run (faiss-cpu comes with the bench extra: pip install -e '.[bench]'):

    python bench/dense_search.py [--sizes 5223 10000 50000 100000] [--queries 200] [--base NPZ] [--json]

Vectors: ``--base`` (an ``.npz`` with ``cv``: unit-norm chunk vectors, e.g. the SciFact MiniLM
chunk vectors that bench/chunk_vectors.py caches) enlarged to each size by noisy copies (row i
of the enlargement = base[i mod B] + N(0, 0.02^2) per dimension, renormalised); without one,
random unit vectors (dim 384, seed 7). Every 100th row belongs to group ``restricted`` only
(1%); the rest to ``public``. Queries: base rows + noise (seed 8).

Each size is one LanceDB store (written directly as rows, then ``refresh_indexes``: FTS, scalar
indexes, BM25 postings with the vectors), searched with ``LanceStore.vector_search(q, 10)``:

* ``citewise public``: the anonymous principal's filter (``groups=("public",)``, 99% visible);
* ``citewise 1% filter``: a principal of group ``restricted`` only;
* ``citewise new principal``: a group set never seen before on every query (``("public",
  "g<i>")``): the filter mask is built each time; against ``public`` (mask cached) its ratio is
  the cost of a new principal;
* ``citewise ANN`` (sizes >= 50,000): a second store of the same rows with ``ann_min_rows`` 50,000
  (the IVF_FLAT index, probes per :func:`citewise.store.lance.ann_nprobes_for`), public filter;
* ``NumPy exact``: ``vectors @ q`` (float32, one BLAS thread) + ``argpartition`` + sort of the
  top 10, no filter; ``NumPy exact 1%``: the same over the 1% rows (``vectors[rows] @ q``);
* ``FAISS flat``: ``IndexFlatIP`` over the same vectors, one OpenMP thread, no filter.

Each query runs through every row back to back (rotating order); per row the median process CPU
time per query (one thread: the same as wall time on an idle core) is printed, with its ratio to
NumPy exact (``x NumPy`` > 1: cheaper than NumPy). Recall@10 of every citewise row against exact
NumPy top-10 (over the visible rows) is printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from citewise.core import Filters
from citewise.store.lance import TABLE, LanceStore, _schema
from citewise.store.dense import one_blas_thread

K = 10


def make_vectors(base: np.ndarray | None, n: int, dim: int = 384) -> np.ndarray:
    rng = np.random.default_rng(7)
    if base is None:
        v = rng.normal(size=(n, dim)).astype(np.float32)
    else:
        v = base[np.arange(n) % len(base)] + rng.normal(scale=0.02, size=(n, base.shape[1])).astype(np.float32)
        v[: len(base)] = base[:n]
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def write_store(path: Path, vecs: np.ndarray, ann_min_rows: int | None = None) -> LanceStore:
    n, dim = vecs.shape
    store = LanceStore(path, dim, ann_min_rows=ann_min_rows)
    schema = _schema(dim)
    ids = [f"d{i:07d}#c" for i in range(n)]
    groups = [["restricted"] if i % 100 == 0 else ["public"] for i in range(n)]
    cols = {
        "chunk_id": ids,
        "doc_id": [c[:-2] for c in ids],
        "title": [f"t{i}" for i in range(n)],
        "title_ids": [[] for _ in range(n)],
        "groups": groups,
        "current": [True] * n,
        "lexical": [f"w{i % 997} w{i % 101}" for i in range(n)],
        "text": [""] * n,
        "heading_path": [[] for _ in range(n)],
        "start": [0] * n,
        "end": [0] * n,
        "token_count": [1] * n,
        "page_start": [0] * n,
        "page_end": [0] * n,
        "unit_spans": [[] for _ in range(n)],
    }
    arrays = []
    for f in schema:
        if f.name == "vector":
            arrays.append(pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1), type=pa.float32()), dim))
        elif f.name == "unit_vectors":
            arrays.append(pa.nulls(n, type=f.type))
        elif f.name in cols:
            arrays.append(pa.array(cols[f.name], type=f.type))
        else:
            arrays.append(pa.array([""] * n, type=f.type) if f.type == pa.string() else pa.nulls(n, type=f.type))
    store._table = store._db.create_table(TABLE, data=pa.Table.from_arrays(arrays, schema=schema), schema=schema)
    store._fts_dirty = True
    store.refresh_indexes()
    return store


def numpy_top(vecs, q, rows=None):
    with one_blas_thread():
        s = (vecs[rows] if rows is not None else vecs) @ q
    top = np.argpartition(s, len(s) - K)[len(s) - K :]
    top = top[np.argsort(-s[top], kind="stable")]
    return rows[top] if rows is not None else top


def measure(name_fns: list[tuple[str, callable]], queries: np.ndarray) -> dict[str, float]:
    times: dict[str, list[float]] = {n: [] for n, _ in name_fns}
    for qi, q in enumerate(queries):
        r = qi % len(name_fns)
        for name, fn in name_fns[r:] + name_fns[:r]:
            t0 = time.process_time()
            fn(qi, q)
            times[name].append(time.process_time() - t0)
    return {n: statistics.median(t) * 1000 for n, t in times.items()}


def run_size(base, n: int, nq: int, tmp: Path) -> dict:
    vecs = make_vectors(base, n)
    rng = np.random.default_rng(8)
    qv = vecs[rng.integers(0, n, nq)] + rng.normal(scale=0.05, size=(nq, vecs.shape[1])).astype(np.float32)
    qv = (qv / np.linalg.norm(qv, axis=1, keepdims=True)).astype(np.float32)
    t0 = time.perf_counter()
    store = write_store(tmp / f"s{n}", vecs)
    build_s = time.perf_counter() - t0
    ann = write_store(tmp / f"a{n}", vecs, ann_min_rows=50_000) if n >= 50_000 else None
    import faiss

    faiss.omp_set_num_threads(1)
    flat = faiss.IndexFlatIP(vecs.shape[1])
    flat.add(vecs)
    restricted = np.arange(0, n, 100)
    pub, one = Filters(groups=("public",)), Filters(groups=("restricted",))
    for f in (pub, one):
        store.vector_search(qv[0], K, f)  # postings and these masks loaded once, as a server would
        if ann is not None:
            ann.vector_search(qv[0], K, f)
    rows = [
        ("citewise public", lambda i, q: store.vector_search(q, K, pub)),
        ("citewise 1% filter", lambda i, q: store.vector_search(q, K, one)),
        ("citewise new principal", lambda i, q: store.vector_search(q, K, Filters(groups=("public", f"g{n}-{i}")))),
        ("NumPy exact", lambda i, q: numpy_top(vecs, q)),
        ("NumPy exact 1%", lambda i, q: numpy_top(vecs, q, restricted)),
        ("FAISS flat", lambda i, q: flat.search(q[None, :], K)),
    ]
    if ann is not None:
        rows.append(("citewise ANN", lambda i, q: ann.vector_search(q, K, pub)))
    med = measure(rows, qv)
    ids = np.array([f"d{i:07d}#c" for i in range(n)])
    rec = {}
    public_rows = np.setdiff1d(np.arange(n), restricted)
    for name, st, f, visible in (
        ("citewise public", store, pub, public_rows),
        ("citewise 1% filter", store, one, restricted),
        ("citewise ANN", ann, pub, public_rows),
    ):
        if st is None:
            continue
        got = [
            len({h.chunk_id for h in st.vector_search(q, K, f)} & set(ids[numpy_top(vecs, q, visible)])) / K
            for q in qv[:50]
        ]
        rec[name] = round(float(np.mean(got)), 3)
    path = {"exact": store.last_vector_path}
    return {
        "rows": n,
        "build_s": round(build_s, 1),
        "cpu_ms": {k: round(v, 3) for k, v in med.items()},
        "x_numpy": {k: round(med["NumPy exact"] / v, 2) for k, v in med.items()},
        "recall@10": rec,
        "path": path,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[5223, 10_000, 50_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--base", type=Path, default=None)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    base = np.load(a.base)["cv"].astype(np.float32) if a.base else None
    tmp = Path(tempfile.mkdtemp(prefix="dense-bench-"))
    try:
        results = [run_size(base, n, a.queries, tmp) for n in a.sizes]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load = round(os.getloadavg()[0], 1)
    if a.json:
        print(json.dumps({"load": load, "results": results}))
        return
    print(f"median CPU ms per query (x NumPy exact: > 1 is cheaper); load {load}")
    for r in results:
        print(f"-- {r['rows']:,} rows (build {r['build_s']} s)")
        for name, ms in r["cpu_ms"].items():
            print(
                f"  {name:24s} {ms:8.3f} ms  x{r['x_numpy'][name]:.2f}"
                + (f"  recall@10 {r['recall@10'][name]:.3f}" if name in r["recall@10"] else "")
            )


if __name__ == "__main__":
    main()
