"""Searches of the LanceDB store: BM25 over NumPy postings (and the FTS reference), filter
masks, exact and ANN dense search (:class:`citewise.store.lance.LanceStore`)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
import pyarrow as pa

from citewise.core import CitewiseError, Filters
from citewise.store.base import ScoredChunk
from citewise.store.lance.host import AsyncHandle, _LanceHost

from citewise.store.lance.schema import (
    INCREMENTAL_MAX_DOCS,
    PROBE_MARGIN_NS,
    TABLE,
    TIE_MARGIN,
    _ivf_partitions,
    _q,
    ann_nprobes_for,
)

if TYPE_CHECKING:
    from citewise.store.postings import Postings
    from citewise.store.row_filters import RowFilters


#: An ANN query whose filter leaves at least this share of the table's rows visible (or that has
#: no filter) probes exactly its configured IVF partitions whatever its depth
#: (:meth:`LanceStore.vector_search`, ``ann_cap_probes=None``); a more selective filter may probe
#: on (LanceDB's open maximum), since the probed partitions then hold proportionally fewer
#: visible rows. Measured at hybrid's depth (limit 116) against the exact top 100 on the 1M
#: MiniLM-derived sets (bench/scale.py --minilm-base, 100 real queries each, 200 of 1,000
#: partitions): broad filter capped recall@100 1.000 (SciFact) / 0.990 (NFCorpus), recall@10
#: 1.000 / 0.993, p50 41 / 39 ms vs 96 / 93 ms open; 1% filter capped recall@100 only 0.973 /
#: 0.935 (open: 1.000, p95 75-80 ms). docs/benchmarks.md, twelfth session.
ANN_CAP_MIN_VISIBLE_SHARE = 0.5


class _SearchMixin(_LanceHost):
    """Lexical and dense search of :class:`~citewise.store.lance.LanceStore`."""

    def _scored(self, rows: list[dict[str, Any]], score_of: Callable[[dict[str, Any]], float]) -> list[ScoredChunk]:
        out = [ScoredChunk(r["chunk_id"], r["doc_id"], r["title"], float(score_of(r))) for r in rows]
        out.sort(key=lambda h: (-h.score, h.chunk_id))
        return out

    def lexical_search(self, terms: Sequence[str], k: int, filters: Filters | None = None) -> list[ScoredChunk]:
        """BM25 over already-analyzed terms (OR semantics), filters applied inside the search.

        Scored from the postings of the table's current version (:mod:`citewise.store.postings`:
        loaded from ``_bm25/v<version>/``, or built from the table and saved when absent); the
        filter's SQL predicate (:func:`filter_sql`) is evaluated by LanceDB once per table
        version and filter and kept as a row mask. Results equal LanceDB FTS's BM25 (same
        formula and tokens), best first, ties by chunk id.
        """
        if not terms or k <= 0 or self._reader() is None:
            return []
        where = self._where(filters)
        if where == "false":
            return []
        postings = self.postings()
        if postings is None:
            return []
        mask = self._mask(postings, where, filters) if where else None
        if mask is None and where:
            return self.lexical_search(terms, k, filters)  # a commit landed meanwhile: redo on the new version
        return [ScoredChunk(c, d, t, s) for c, d, t, s in postings.top(terms, k, mask)]

    def known_terms(self, terms: Sequence[str]) -> set[str]:
        """The analyzed ``terms`` that occur in some chunk of the current version (any
        permission: callers check what a principal may see with :meth:`lexical_search`). One
        ``searchsorted`` over the BM25 postings' sorted vocabulary."""
        postings = self.postings() if terms and self._reader() is not None else None
        if postings is None or not len(postings.vocab):
            return set()
        size = postings.vocab.dtype.itemsize  # a longer term is in no vocabulary entry (no truncation)
        terms = [t for t in terms if 0 < len(t.encode("utf-8")) <= size]
        if not terms:
            return set()
        keys = np.array([t.encode("utf-8") for t in terms], dtype=postings.vocab.dtype)
        at = np.minimum(np.searchsorted(postings.vocab, keys), len(postings.vocab) - 1)
        return {t for t, i, key in zip(terms, at, keys) if postings.vocab[i] == key}

    def fts_search(self, terms: Sequence[str], k: int, filters: Filters | None = None) -> list[ScoredChunk]:
        """BM25 by LanceDB's own FTS index (the path :meth:`lexical_search` replaced; kept as the
        reference its scores are tested against and as the peer in bench/bm25_speed.py)."""
        if not terms or k <= 0 or self._reader() is None:
            return []
        self._writable()  # LanceDB's FTS query builder lives in the lancedb package
        from lancedb.query import MatchQuery

        where = self._where(filters)
        match = MatchQuery(" ".join(terms), "lexical")

        def make(q: Any) -> Any:
            q = q.nearest_to_text(match)
            if where:
                q = q.where(where)  # a prefilter: applied inside the search
            return q.select(["chunk_id", "doc_id", "title", "_score"]).limit(k + TIE_MARGIN)

        rows = self._query(make).to_pylist()
        return self._scored(rows, lambda r: r["_score"])[:k]

    def postings(self) -> Postings | None:
        """The BM25 postings of the chunk table's current version (None without a table).

        One trip to LanceDB's loop to read the version; on a new version the postings are
        loaded from ``_bm25/v<version>/`` or built from a scan of the table and saved there.
        """
        if self._reader() is None:
            return None
        at = self._table._table
        probe = self._version_probe()
        if self._postings is not None and probe is not None and probe == self._probe:
            return self._postings
        with self._postings_lock:
            return self._load_postings(at, probe)

    def _load_postings(self, at: AsyncHandle, probe: tuple[int, int] | None) -> Postings:
        """:meth:`postings` past its fast path (under ``_postings_lock``)."""
        from citewise.store.postings import Postings

        for _ in range(5):
            version = self._run(at.version())
            self._probe = probe if probe is not None and probe[1] >= 0 else None
            if self._postings is not None and self._postings.version == version:
                return self._postings
            p = Postings.load(self.bm25_root, version)
            if p is None:
                p = self._updated_postings(version) or self._build_postings()
                if p is None:
                    continue  # the table moved on during the scan: try the newer version
                p.save(self.bm25_root)
            if self._changes is not None and self._changes[1] == p.version:
                self._changes = None  # the next write starts a log from these postings
            self._postings = p
            return p
        raise CitewiseError(f"{self.path}: the index changed during 5 consecutive BM25 index builds; retry")

    def concurrent_legs(self) -> bool:
        """Whether a hybrid query may run its dense leg in a second thread beside BM25
        (:class:`citewise.retrieval.retrievers.HybridRetriever`): once postings of at least
        ``ann_min_rows`` rows are loaded, dense search is LanceDB's scan, which runs in Rust
        without the GIL, while BM25 scores in NumPy. Below that both legs are NumPy in this
        process (sharing the postings' filter masks), and before the first search nothing is
        loaded, so they run one after the other. The two legs share only :meth:`postings`,
        whose reload after another process's commit takes a lock."""
        p = self._postings
        return p is not None and p.n >= self.ann_min_rows

    def _version_probe(self) -> tuple[int, int] | None:
        """A cheap stand-in for "has the table committed since the last look?" (no LanceDB call).

        Every commit adds a manifest to ``chunks.lance/_versions/``, which sets the folder's
        mtime. Timestamps are coarse (one clock tick, a few ms), so two commits within a tick can
        leave one mtime; the probe is therefore trusted only when it was taken at least
        :data:`PROBE_MARGIN_NS` after the folder last changed: any later commit then stamps a
        strictly later mtime. Returns ``(mtime_ns, ok)`` with ``ok`` = -1 when the probe must
        not be trusted (then the version is read from LanceDB), or None when the folder cannot
        be read.
        """
        import os
        import time

        now = time.time_ns()
        versions = self.__dict__.get("_versions_dir")
        if versions is None:
            versions = self._versions_dir = str(self.path / f"{TABLE}.lance" / "_versions")
        try:
            mtime = os.stat(versions).st_mtime_ns
        except OSError:
            return None
        return (mtime, 0 if now - mtime >= PROBE_MARGIN_NS else -1)

    def _updated_postings(self, version: int) -> Postings | None:
        """Postings of ``version`` derived from an older version's (:meth:`Postings.update`), or
        None when that is not possible: no change log ending at ``version`` (another process
        wrote, or this store never saw the older postings), more than
        :data:`INCREMENTAL_MAX_DOCS` changed documents, the older postings are not at hand (in
        memory or saved) or lack term frequencies, or a commit landed during the reads.

        Reads the new version's ids (``chunk_id``, ``doc_id``, ``title``, ``_rowid``; vectors
        below ``ann_min_rows``) and the ``lexical`` text of the changed documents only, in one
        trip, both at one version: at 1M chunks the full build's scan of ``lexical`` was 1.5 GB.
        """
        from citewise.store.postings import Postings

        changes = self._changes
        if changes is None or changes[1] != version or len(changes[2]) > INCREMENTAL_MAX_DOCS:
            return None
        base, _, docs = changes
        prev = self._postings if self._postings is not None and self._postings.version == base else None
        if prev is None:
            prev = Postings.load(self.bm25_root, base)
        if prev is None or prev.tf is None:
            return None
        at = self._table._table
        where = f"doc_id IN ({', '.join(_q(d) for d in sorted(docs))})" if docs else "false"

        async def go() -> tuple[int, int, pa.Table, pa.Table]:
            v0 = await at.version()
            rows = await at.count_rows()
            cols = ["chunk_id", "doc_id", "title"] + (["vector"] if rows < self.ann_min_rows else [])
            ids = await at.query().select(cols).with_row_id().limit(max(rows, 1)).to_arrow()
            fresh = await at.query().where(where).select(["lexical"]).with_row_id().limit(max(rows, 1)).to_arrow()
            return v0, await at.version(), ids, fresh

        v0, v1, ids, fresh = self._run(go())
        if not v0 == v1 == version:
            return None
        return Postings.update(prev, version, ids, fresh, docs)

    def _build_postings(self) -> Postings | None:
        """Postings from a scan of the current version, or None when a commit landed during it."""
        from citewise.store.postings import Postings

        at = self._table._table

        async def go() -> tuple[int, int, pa.Table]:
            v0 = await at.version()
            rows = await at.count_rows()
            cols = ["chunk_id", "doc_id", "title", "lexical"] + (["vector"] if rows < self.ann_min_rows else [])
            tbl = await at.query().select(cols).with_row_id().limit(max(rows, 1)).to_arrow()
            return v0, await at.version(), tbl

        v0, v1, tbl = self._run(go())
        return Postings.build(v0, tbl) if v0 == v1 else None

    def _mask(self, postings: Postings, where: str, filters: Filters | None = None) -> np.ndarray | None:
        """Row mask of ``where`` (the SQL of ``filters``) on ``postings``' version (cached), or
        None if the table moved on. A groups-only filter is computed in NumPy from the version's
        permission columns (:class:`citewise.store.row_filters.RowFilters`, read once per
        version); any other by LanceDB."""
        from citewise.store.postings import MASK_CACHE
        from citewise.store.row_filters import RowFilters

        mask = postings.masks.get(where)
        if mask is not None:
            return mask
        if RowFilters.expressible(filters):
            rf = self._row_filters(postings)
            if rf is None:
                return None
            mask = rf.mask(filters)
            if len(postings.masks) >= MASK_CACHE:
                postings.masks.pop(next(iter(postings.masks)))
            postings.masks[where] = mask
            return mask
        at = self._table._table

        async def go() -> tuple[int, int, pa.Table]:
            v0 = await at.version()
            rows = await at.count_rows()
            tbl = await at.query().where(where).select([]).with_row_id().limit(max(rows, 1)).to_arrow()
            return v0, await at.version(), tbl

        v0, v1, tbl = self._run(go())
        if not (v0 == v1 == postings.version):
            return None
        mask = postings.mask_of(tbl.column("_rowid").to_numpy())
        if len(postings.masks) >= MASK_CACHE:
            postings.masks.pop(next(iter(postings.masks)))
        postings.masks[where] = mask
        return mask

    def _row_filters(self, postings: Postings) -> RowFilters | None:
        """The :class:`~citewise.store.row_filters.RowFilters` of ``postings``' version (one scan
        of ``groups`` and ``current``, kept on the postings), or None if the table moved on."""
        from citewise.store.row_filters import RowFilters

        rf = postings.row_filters
        if rf is not None:
            return rf
        at = self._table._table

        async def go() -> tuple[int, int, pa.Table]:
            v0 = await at.version()
            rows = await at.count_rows()
            tbl = await at.query().select(["groups", "current"]).with_row_id().limit(max(rows, 1)).to_arrow()
            return v0, await at.version(), tbl

        v0, v1, tbl = self._run(go())
        if not (v0 == v1 == postings.version):
            return None
        rf = RowFilters(
            postings.n,
            postings.positions(tbl.column("_rowid").to_numpy().astype(np.uint64)),
            tbl.column("groups"),
            tbl.column("current").combine_chunks(),
        )
        postings.row_filters = rf
        return rf

    def vector_search(self, vector: np.ndarray, k: int, filters: Filters | None = None) -> list[ScoredChunk]:
        """Cosine search; score = cosine similarity = 1 - cosine distance, best first.

        Args:
            vector: query vector, shape ``(dim,)`` (cast to float32).
            k: hits wanted; fewer only when fewer rows are visible under ``filters``.
            filters: permission/version filter, applied inside the search (prefilter).

        Below ``ann_min_rows`` rows the exact search runs in NumPy over the vectors kept with the
        BM25 postings of the table's version (:meth:`postings`; LanceDB's brute force cost ~5 ms
        of fixed overhead per query at 5k rows, issue 12), with the same filter mask. Otherwise:
        exact (every visible vector) unless the table has the ANN index (built by
        :meth:`refresh_indexes` from ``ann_min_rows`` rows), has at least ``ann_min_rows`` rows
        and the filter leaves at least ``ann_exact_below`` rows visible; then the
        IVF index is probed (``ann_nprobes`` partitions at least, by default
        :func:`ann_nprobes_for` the index's partitions; more until k visible hits are found).
        LanceDB 0.40 chooses "more" itself, and above a limit of 100 (hybrid's depth 100 plus
        the tie margin) it probes in effect every partition at 1M chunks (its top 100 equalled
        the exact one; ~2.3x the time of 200 probes). A capped query probes exactly the
        configured partitions whatever ``k`` (more only when they hold fewer than k + the tie
        margin visible hits): by default when there is no filter or the filter leaves at least
        :data:`ANN_CAP_MIN_VISIBLE_SHARE` of the rows visible (up to a limit of 100 LanceDB
        probes no more than that anyway), always with ``ann_cap_probes=True``, never with
        False. Capped at 1M: hybrid p95 120 -> 76 ms public; the depth-116 leg's recall@100 vs
        exact 1.000 / 0.990 on MiniLM-derived vectors (0.931 top-10 overlap on hashing-embedder
        vectors, which have no cluster structure for IVF).
        Rows committed after the index was last updated are searched flat as well, so
        nothing committed is missed. The visible-row count is cached per table version and
        filter. ``last_vector_path`` records the path taken ("ann" or "exact").
        """
        if k <= 0 or self._reader() is None:
            return []
        where = self._where(filters)
        vec = np.asarray(vector, dtype=np.float32)
        if where == "false":
            return []
        postings = self.postings()
        if postings is not None and postings.vectors is not None and postings.n < self.ann_min_rows:
            mask = self._mask(postings, where, filters) if where else None
            if mask is not None or not where:
                self.last_vector_path = "exact"
                return [ScoredChunk(c, d, t, s) for c, d, t, s in postings.nearest(vec, k, mask)]
        at = self._table._table
        cols = ["chunk_id", "doc_id", "title", "_distance"]

        async def go() -> tuple[bool, pa.Table]:
            _, rows, use_ann, visible, partitions = await self._ann_info(at)
            use_ann = use_ann and rows >= self.ann_min_rows
            if use_ann and where:
                if where not in visible:
                    visible[where] = await at.count_rows(where)
                use_ann = visible[where] >= self.ann_exact_below

            def query(max_probes: int | None) -> Any:
                q = at.query().nearest_to(vec).column("vector").distance_type("cosine")
                if max_probes is not None:
                    # open the maximum, set the minimum, then cap: each call checks min <= max
                    q = q.maximum_nprobes(0).minimum_nprobes(nprobes)
                    if max_probes:
                        q = q.maximum_nprobes(max_probes)
                else:
                    q = q.bypass_vector_index()
                if where:
                    q = q.where(where)  # a prefilter: applied inside the search
                return q.select(cols).limit(k + TIE_MARGIN).to_arrow()

            if not use_ann:
                return False, await query(None)
            nprobes = self.ann_nprobes if self.ann_nprobes is not None else ann_nprobes_for(partitions)
            self.last_nprobes = nprobes
            cap = self.ann_cap_probes
            if cap is None:
                cap = not where or visible[where] >= ANN_CAP_MIN_VISIBLE_SHARE * rows
            self.last_capped = cap
            if not cap:
                return True, await query(0)
            # Exactly nprobes partitions first. With an open maximum (0), LanceDB 0.40 probes
            # far more than the minimum once the limit exceeds 100 (hybrid's depth 100 + the tie
            # margin): at 1M chunks its top 100 equalled the exact one (all partitions, p50 192
            # vs 77 ms capped at 200 of 1,000; docs/scaling.md). Up to limit 100 the open maximum
            # gave the same rows as this capped pass.
            tbl = await query(nprobes)
            if tbl.num_rows < k + TIE_MARGIN:
                tbl = await query(0)  # too few visible hits in those partitions: probe on (prefilter)
            return True, tbl

        use_ann, tbl = self._run(go())
        self.last_vector_path = "ann" if use_ann else "exact"
        return self._scored(tbl.to_pylist(), lambda r: 1.0 - r["_distance"])[:k]

    async def _ann_info(self, at: AsyncHandle) -> tuple[int, int, bool, dict[str, int], int]:
        """``(version, rows, has ANN index, {where: visible rows}, IVF partitions)`` of the open
        table ``at`` (LanceDB's async table), cached per table version."""
        version = await at.version()
        if version != self._ann_state[0]:
            rows = await at.count_rows()
            vec_idx = [i.name for i in await at.list_indices() if i.columns == ["vector"]]
            self._ann_state = (version, rows, bool(vec_idx), {}, _ivf_partitions(vec_idx))
        return self._ann_state

    def warm(self) -> dict[str, float]:
        """Load what the first queries would otherwise load: the BM25 postings of the current
        version and, when dense search uses the ANN index, every IVF partition (one query
        probing all of them, limit 1), into LanceDB's index cache. Without it, each of the
        first queries of a process at 1M chunks reads the ~200 partitions it probes that no
        earlier query did (150-600 ms each for the first ~10 hybrid queries, vs ~60 ms warm);
        with it, 3.6 s once (1M chunks, 1,000 partitions). ``citewise serve`` calls it before
        accepting requests.

        Returns:
            ``{"postings_s": float, "ann_s": float, "partitions": int}`` (seconds; 0 partitions
            when dense search does not use the ANN index).
        """
        t0 = time.perf_counter()
        if self._reader() is None:
            return {"postings_s": 0.0, "ann_s": 0.0, "partitions": 0}
        self.postings()
        t1 = time.perf_counter()
        at = self._table._table

        async def go() -> int:
            _, rows, use_ann, _, partitions = await self._ann_info(at)
            if not (use_ann and rows >= self.ann_min_rows and partitions):
                return 0
            probe = np.zeros(self.dim, dtype=np.float32)
            probe[0] = 1.0
            await (
                at.query()
                .nearest_to(probe)
                .column("vector")
                .distance_type("cosine")
                .maximum_nprobes(0)
                .minimum_nprobes(partitions)
                .select(["chunk_id", "_distance"])
                .limit(1)
                .to_arrow()
            )
            return partitions

        partitions = self._run(go())
        return {"postings_s": t1 - t0, "ann_s": time.perf_counter() - t1, "partitions": partitions}
