"""Filter masks computed in NumPy from per-row permission columns of one table version.

A principal's filter (:class:`citewise.core.Filters`: groups, and the implied ``current``
documents) was a SQL predicate evaluated by LanceDB over the whole table for every new group
set: 99 ms at 100k chunks against 17 ms for a principal whose mask was cached (issue 34). Here
the ``groups`` and ``current`` columns of the version are read once (one scan of two columns,
kept beside the BM25 postings of that version), each group's rows are indexed like a bitmap
index (the sorted row positions holding the group), and the mask of any group set is the union
of a few such arrays and the ``current`` flag: a new principal costs about what a repeated one
costs. Filters naming a date (``as_of``) or a version are left to the SQL predicate.
"""

from __future__ import annotations

from typing import TypeGuard

import numpy as np
import pyarrow as pa

from citewise.core import Filters


class RowFilters:
    """Per-row ``groups`` and ``current`` of one table version, positions as the postings number
    their rows.

    Args:
        n: rows of the version.
        positions: int64 (m,) the postings position of each scanned row.
        groups: Arrow list<string> array (m,), each row's groups.
        current: Arrow bool array (m,) (null = False).
    """

    def __init__(self, n: int, positions: np.ndarray, groups: pa.Array, current: pa.Array):
        import pyarrow.compute as pc

        self.n = n
        self.current = np.zeros(n, dtype=bool)
        self.current[positions] = current.fill_null(False).to_numpy(zero_copy_only=False)
        groups = groups.combine_chunks() if isinstance(groups, pa.ChunkedArray) else groups
        lengths = pc.list_value_length(groups).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        owner = np.repeat(np.asarray(positions, dtype=np.int64), lengths)
        flat = pc.list_flatten(groups)
        self._rows: dict[str, np.ndarray] = {}
        if len(flat):
            enc = pc.dictionary_encode(flat)
            codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
            order = np.lexsort((owner, codes))
            codes, owner = codes[order], owner[order]
            bounds = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1], True])
            names = enc.dictionary.to_pylist()
            for a, b in zip(bounds[:-1], bounds[1:]):
                self._rows[names[int(codes[a])]] = owner[a:b]

    @staticmethod
    def expressible(filters: Filters | None) -> TypeGuard[Filters]:
        """Whether :meth:`mask` computes ``filters``: groups only (no date, version, document
        ids or metadata conditions; no filters at all means the current documents, which the SQL
        path serves)."""
        return (
            filters is not None
            and filters.as_of is None
            and filters.version is None
            and filters.doc_ids is None
            and not filters.metadata
        )

    def mask(self, filters: Filters) -> np.ndarray:
        """Boolean (n,) mask of the rows ``filters`` lets through: current documents in at least
        one of ``filters.groups`` (all current documents when ``groups`` is None)."""
        mask = self.current.copy()
        if filters.groups is not None:
            allowed = np.zeros(self.n, dtype=bool)
            for g in set(filters.groups):
                rows = self._rows.get(g)
                if rows is not None:
                    allowed[rows] = True
            mask &= allowed
        return mask
