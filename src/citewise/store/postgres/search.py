"""Searches of the PostgreSQL store: the filter predicate, BM25 in SQL with MaxScore pruning,
HNSW/exact dense search (:class:`citewise.store.postgres.PostgresStore`)."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Sequence

import numpy as np

from citewise.core import Filters
from citewise.store.base import ScoredChunk
from citewise.store.lance import TIE_MARGIN
from citewise.text.analyzer import fold

from citewise.store.postgres.host import PgCursor, _PgHost
from citewise.store.postgres.schema import BM25_B, BM25_K1, BM25_OVERFETCH, _vector_text, bm25_terms


#: ``hnsw.ef_search`` for ANN queries (pgvector default 40). With iterative scans a filtered
#: query goes on past it until k visible rows are found (up to ``hnsw.max_scan_tuples``).
#: Measured on NFCorpus-derived MiniLM 100k (bench/scale.py's enlarged set imported into the
#: store, 300 NFCorpus test queries, recall@10 against the store's exact path, exact p50 211 ms;
#: docs/scaling.md): pgvector's default graph (m 16, ef_construction 64; 30 s build) gave 0.70 /
#: 0.79 / 0.87 / 0.94 at ef_search 100 / 200 / 400 / 1,000 (p50 10-21 ms); the graph of
#: :data:`HNSW_M` / :data:`HNSW_EF_CONSTRUCTION` (129 s build, 203 MB) 0.89 / 0.94 / 0.965 / 0.985
#: / 0.987 at 100 / 200 / 400 / 800 / 1,000 (p50 15 / 20 / 25 / 45 / 53 ms, loaded machine).
HNSW_EF_SEARCH = 800


#: BM25 MaxScore: the cost of one primary-key probe into the postings, in postings read by a scan
#: (EXPLAIN ANALYZE at 20k chunks: ~8 us per probe against ~2.5 us per scanned posting, so ~3-4).
#: A pass is run only if its candidates' probes plus its scan cost less than reading every
#: posting of the query (:meth:`PostgresStore._worth_pruning`).
BM25_PROBE_COST = 4


def filter_sql(filters: Filters | None, alias: str = "c") -> tuple[str, list[object]]:
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
    params: list[object] = []
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
        parts.append(
            f"(({a}effective <> '' AND {a}effective <= %s) OR "
            f"({a}effective = '' AND ({a}updated = '' OR {a}updated <= %s)))"
        )
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


class _SearchMixin(_PgHost):
    """Lexical and dense search of :class:`~citewise.store.postgres.PostgresStore`."""

    @staticmethod
    def _scored(rows: Sequence[Sequence[Any]]) -> list[ScoredChunk]:
        out = [ScoredChunk(r[0], r[1], r[2], float(r[3])) for r in rows]
        out.sort(key=lambda h: (-h.score, h.chunk_id))
        return out

    def known_terms(self, terms: Sequence[str]) -> set[str]:
        """The analyzed ``terms`` that occur in some chunk (``term_stats``; any permission:
        callers check what a principal may see with :meth:`lexical_search`)."""
        if not terms:
            return set()
        with self._tx(None) as cur:
            return {
                r[0]
                for r in cur.execute(
                    f"SELECT term FROM {self.schema}.term_stats WHERE term = ANY(%s)", (list(terms),)
                ).fetchall()
            }

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
            stats = cur.execute(
                f"""SELECT c.n_chunks, c.total_len, t.term, t.term_id, t.df FROM {s}.corpus_stats c
                                    LEFT JOIN {s}.term_stats t ON t.term = ANY(%s) ORDER BY t.term""",
                (list(q),),
            ).fetchall()
            n, total = stats[0][:2]
            found = [r[2:] for r in stats if r[2] is not None]
            if not found or not n:
                return []
            # per query term: qtf * idf * (k1 + 1), so the SQL only sums the tf part; heaviest first
            weighted = sorted(
                ((q[t] * math.log(1 + (n - df + 0.5) / (df + 0.5)) * (BM25_K1 + 1), tid, t) for t, tid, df in found),
                key=lambda x: (-x[0], x[2]),
            )
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
                        visible = cur.execute(
                            f"SELECT count(*) FROM (SELECT 1 FROM {s}.chunks c WHERE {where} LIMIT %s) x",
                            [*params, cap],
                        ).fetchone()[0]
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

    def _bm25_visible_pass(
        self,
        cur: PgCursor,
        ids: list[int],
        weights: list[float],
        where: str,
        params: list[object],
        avglen: float,
        limit: int,
    ) -> list[tuple[str, str, str, float]]:
        """Every chunk visible under ``where`` scored by one primary-key probe per query term
        (for filters that leave few rows visible); best ``limit`` by (score desc, chunk id)."""
        s = self.schema
        rows: list[tuple[str, str, str, float]] = cur.execute(
            f"""
            SELECT c.chunk_id, c.doc_id, c.title, x.score FROM {s}.chunks c
            CROSS JOIN LATERAL (
                SELECT sum(w.wt * p.tf / (p.tf + {BM25_K1!r} * (1 - {BM25_B!r} + {BM25_B!r} * p.doc_len / %s::float8)))
                       AS score
                FROM unnest(%s::int[], %s::float8[]) AS w(term_id, wt)
                CROSS JOIN LATERAL (SELECT tf, doc_len FROM {s}.postings
                                    WHERE term_id = w.term_id AND rid = c.rid OFFSET 0) p) x
            WHERE {where} AND x.score IS NOT NULL
            ORDER BY x.score DESC, c.chunk_id
            LIMIT %s""",
            [avglen, ids, weights, *params, limit],
        ).fetchall()
        return rows

    def _bm25_pass(
        self,
        cur: PgCursor,
        ids: list[int],
        weights: list[float],
        j: int,
        where: str,
        params: list[object],
        groups: Sequence[str] | None,
        avglen: float,
        limit: int,
        k: int,
    ) -> list[tuple[str, str, str, float]]:
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
            rows = cur.execute(
                f"""
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
                LIMIT %s""",
                [*rest_params, avglen, ids[:j], weights[:j], *group_params, *([cap] if cap else []), *params, limit],
            ).fetchall()
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
            n, has_index = cur.execute(
                f"SELECT n_chunks, EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = %s "
                f"AND indexname = 'chunks_vector_hnsw') FROM {s}.corpus_stats",
                (s,),
            ).fetchone()
            use_ann = has_index and n >= self.ann_min_rows
            if use_ann and where != "c.current":
                visible = cur.execute(
                    f"SELECT count(*) FROM (SELECT 1 FROM {s}.chunks c WHERE {where} LIMIT %s) x",
                    [*params, self.ann_exact_below],
                ).fetchone()[0]
                use_ann = visible >= self.ann_exact_below
            if use_ann:
                cur.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                cur.execute(f"SET LOCAL hnsw.ef_search = {max(HNSW_EF_SEARCH, k + TIE_MARGIN)}")
                order = "c.vector <=> %s::vector"
            else:
                order = "(c.vector <=> %s::vector) + 0"  # not the index's operator expression: exact
            rows = cur.execute(
                f"""SELECT chunk_id, doc_id, title, 1 - dist FROM (
                                     SELECT c.chunk_id, c.doc_id, c.title, c.vector <=> %s::vector AS dist
                                     FROM {s}.chunks c WHERE {where} ORDER BY {order} LIMIT %s) x""",
                [qv, *params, qv, k + TIE_MARGIN],
            ).fetchall()
        self.last_vector_path = "ann" if use_ann else "exact"
        return self._scored(rows)[:k]

    def titled_with(self, identifier: str, filters: Filters | None = None) -> list[ScoredChunk]:
        """Chunks of documents whose title names ``identifier`` (first chunk of each doc first)."""
        where, params = filter_sql(filters)
        with self._tx(filters.groups if filters is not None else None) as cur:
            rows = cur.execute(
                f"SELECT chunk_id, doc_id, title, prev_id FROM {self.schema}.chunks c "
                f"WHERE c.title_ids @> ARRAY[%s]::text[] AND {where} LIMIT 1000",
                [fold(identifier), *params],
            ).fetchall()
        rows.sort(key=lambda r: (r[1], r[3] is not None, r[0]))
        return [ScoredChunk(r[0], r[1], r[2], 1.0) for r in rows]

    def has_group(self, group: str) -> bool:
        """Whether any chunk names ``group`` among its groups (read as a principal in that group,
        so row-level security applies as to a search)."""
        with self._tx((group,)) as cur:
            return bool(
                cur.execute(
                    f"SELECT EXISTS (SELECT 1 FROM {self.schema}.chunks c WHERE c.groups @> ARRAY[%s]::text[])", [group]
                ).fetchone()[0]
            )
