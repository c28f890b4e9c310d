"""BM25 postings derived from one committed version of the LanceDB chunk table (issue 12).

LanceDB's full-text search cost ~0.2-5 ms of fixed overhead per query (plan building, one trip
to its event loop, the prefilter) against ~0.05-0.3 ms for bm25s on the same tokens. This module
holds the BM25 postings in NumPy arrays instead, so a query is a few vectorised additions:

* ``vocab``: the sorted terms (NumPy bytes array, UTF-8), looked up with ``searchsorted``;
* ``indptr`` / ``rows`` / ``weights``: per term, the rows holding it and the term's BM25 weight
  in each row, precomputed (CSR layout, rows ascending);
* ``chunk_id`` / ``doc_id`` / ``title`` per row (Arrow arrays) and the rows' Lance ``_rowid``,
  so the permission/version filter, evaluated by LanceDB with the same SQL predicate as
  before (:func:`citewise.store.lance.filter_sql`) and cached per filter, becomes a boolean mask.

Scoring is Okapi BM25 exactly as LanceDB 0.40's FTS computes it (checked against its scores,
tests/test_bm25_postings.py): ``k1 = 1.2``, ``b = 0.75``,
``idf = ln(1 + (N - n + 0.5) / (n + 0.5))`` (Lucene's; Robertson & Zaragoza 2009, eq. 3.1 with
the +1 that keeps it positive), ``avgdl`` = tokens / rows over the live rows, a query term given
twice counts twice, and tokens of 64 UTF-8 bytes or more are dropped like LanceDB's
``max_token_length=64`` does (from the terms and from the row length).

Crash safety: the postings are a *derived* index. They are built from a scan of the table at a
committed version and saved under ``<db>/_bm25/v<version>/`` (written to a temporary folder and
renamed into place, so a folder that exists is complete). A reader uses only the folder of the
table's current version; a process killed between a Lance commit and the postings write leaves
no folder for the new version, and the next reader builds it from the table. Stale or missing
documents are therefore never served: the Lance table stays the single source of truth.

Incremental update (:meth:`Postings.update`, issue 12): rebuilding the postings from a scan of
the whole table after every ingest cost 57 s and 2.4 GB at 1M chunks for a one-document change.
The saved postings also keep each posting's term frequency (``tf``) and each row's length
(``dl``), so the next version's postings can be derived from the previous version's: drop the
rows of the changed documents, tokenise only their new rows, merge the vocabularies and
recompute every weight (N, avgdl and the document frequencies change) with the same float64
formula. The result is identical, array for array, to :meth:`Postings.build` on a scan of the
new version (tests/test_bm25_postings.py). The new postings are saved under the new version's
folder like built ones, so the version rule above is unchanged.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pyarrow as pa

# exact dense search (Postings.nearest) lives in citewise.store.dense; re-exported here
from citewise.store.dense import SELECT_MARGIN, TIE_DECIMALS, one_blas_thread  # noqa: F401
from citewise.store.postings_build import (  # noqa: F401 - the constants re-exported
    BUILD_BATCH_BYTES,
    BUILD_BATCH_ROWS,
    MAX_TOKEN_BYTES,
    merge_batches,
    tf_dtype,
    tokenise_batches,
    vocab_array,
)

if TYPE_CHECKING:
    from citewise.store.row_filters import RowFilters

#: BM25 parameters of LanceDB 0.40's FTS (measured: its scores equal this formula to 1e-5).
K1 = 1.2
B = 0.75
#: Bumped when the saved layout changes; an older folder is rebuilt.
FORMAT = 1
#: Up to this many terms (rows), term lookup uses a dict and row ids NumPy object arrays, both
#: built on first use (~10 ms at 30k terms / 5k rows); above, binary search and Arrow takes
#: keep a large index's memory and open time flat.
DICT_MAX = 300_000
#: Postings whose BM25 weights :meth:`Postings.build` computes at a time (float64 temporaries).
WEIGHT_BLOCK = 4_000_000
#: Filter masks kept per postings (the permission filters of the principals seen lately).
MASK_CACHE = 64


def _row_columns(table: pa.Table) -> tuple[np.ndarray, pa.Table, np.ndarray | None]:
    """``(rowids, ids, vectors)`` of scanned rows: uint64 ``_rowid``, the ``chunk_id`` /
    ``doc_id`` / ``title`` columns, and the L2-normalised float32 vectors (n, dim) when the
    scan has a ``vector`` column (else None)."""
    rowids = table.column("_rowid").to_numpy().astype(np.uint64)
    ids = table.select(["chunk_id", "doc_id", "title"])
    vectors = None
    if "vector" in table.column_names:
        col = table.column("vector").combine_chunks()
        dim = col.type.list_size
        vectors = col.flatten().to_numpy(zero_copy_only=False).astype(np.float32).reshape(-1, dim)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = vectors / np.where(norms > 0, norms, 1.0).astype(np.float32)
    return rowids, ids, vectors


def _weights(indptr: np.ndarray, rows: np.ndarray, tf: np.ndarray, dl: np.ndarray) -> np.ndarray:
    """BM25 weight of every posting (float32, shape (P,)), Okapi BM25 as in the module docstring.

    ``indptr`` (V + 1,) delimits each term's postings in ``rows`` / ``tf`` (P,); ``dl`` is the
    token count of each of the ``n`` rows. Computed in float64, :data:`WEIGHT_BLOCK` postings at
    a time, by the one expression that :meth:`Postings.build` and :meth:`Postings.update` share
    (so their weights are bitwise equal).
    """
    n = len(dl)
    dlf = dl.astype(np.float64)
    df = np.diff(indptr).astype(np.float64)
    avgdl = dlf.sum() / n if n else 1.0
    idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
    weights = np.empty(len(rows), dtype=np.float32)
    for a in range(0, len(rows), WEIGHT_BLOCK):
        b = min(a + WEIGHT_BLOCK, len(rows))
        term = np.searchsorted(indptr, np.arange(a, b, dtype=np.int64), side="right") - 1
        t = tf[a:b].astype(np.float64)
        weights[a:b] = idf[term] * t * (K1 + 1.0) / (t + K1 * (1.0 - B + B * dlf[rows[a:b]] / max(avgdl, 1e-9)))
    return weights


@dataclass
class Postings:
    """BM25 postings of one table version (see module docstring).

    Attributes (``n`` rows, ``V`` terms, ``P`` postings):
        version: the Lance table version they were built from.
        vocab: sorted terms, NumPy ``S`` array, shape (V,).
        indptr: int64, shape (V + 1,); term ``t``'s postings are ``indptr[t]:indptr[t + 1]``.
        rows: int32 row positions, shape (P,).
        weights: float32 BM25 weight of the term in that row, shape (P,).
        rowids: uint64 Lance ``_rowid`` of each row position, shape (n,).
        ids: Arrow table with ``chunk_id``, ``doc_id``, ``title`` per row position.
        vectors: the rows' vectors, L2-normalised float32, shape (n, dim), for exact dense
            search (:meth:`nearest`); None when the table is searched by its ANN index instead.
        vectors_t: the same transposed, shape (dim, n), C-contiguous (:meth:`transposed`).
        tf: each posting's term frequency, shape (P,) (uint16, or int32 if one exceeds 65,535),
            and dl: each row's token count, int32, shape (n,): what :meth:`update` needs to
            recompute the weights; None in folders saved before they were kept.
    """

    version: int
    vocab: np.ndarray
    indptr: np.ndarray
    rows: np.ndarray
    weights: np.ndarray
    rowids: np.ndarray
    ids: pa.Table
    vectors: np.ndarray | None = None
    tf: np.ndarray | None = None
    dl: np.ndarray | None = None
    vectors_t: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.n = len(self.rowids)
        order = np.argsort(self.rowids, kind="stable")
        self._sorted_rowids = self.rowids[order]
        self._pos_of_sorted: np.ndarray = order.astype(np.int64)
        self._ids = self.ids.combine_chunks()
        self.masks: dict[str, np.ndarray] = {}
        self._visible: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # see selection()
        self._term_index: dict[bytes, int] | None = None
        self._columns: dict[str, np.ndarray] | None = None
        #: the version's permission masks (:class:`citewise.store.row_filters.RowFilters`), set by
        #: the store on first use
        self.row_filters: RowFilters | None = None

    # -- building -------------------------------------------------------------------------------
    @classmethod
    def build(
        cls, version: int, table: pa.Table, batch_rows: int | None = None, batch_bytes: int | None = None
    ) -> "Postings":
        """Postings from the scanned rows ``table`` (columns ``chunk_id``, ``doc_id``, ``title``,
        ``lexical``, ``_rowid``, optionally ``vector``) of table version ``version``.

        ``lexical`` is our analyzer's output joined by spaces; it is split on whitespace as
        LanceDB's ``whitespace`` tokenizer does. Vectorised in Arrow/NumPy (no per-row Python).

        The rows are tokenised ``batch_rows`` at a time (default :data:`BUILD_BATCH_ROWS`), and
        at most about ``batch_bytes`` bytes of text (default :data:`BUILD_BATCH_BYTES`): each
        batch keeps only its (term, row, tf) triples, then the batches' vocabularies are merged
        into the sorted global one. Tokenising all rows at once held every token of the table
        several times over (Arrow strings, int64 term ids, row ids and sort keys: ~11 GB at 1M
        chunks of ~100 tokens, issue 12); batches bound that to one batch's tokens plus the
        postings themselves. The result is identical for every ``batch_rows``
        (tests/test_bm25_postings.py).
        """
        # per batch: (local vocab, local term ids int32, global rows int32, tf int32)
        parts, dl = tokenise_batches(
            table.column("lexical"),
            max(1, int(batch_rows or BUILD_BATCH_ROWS)),
            max(1, int(batch_bytes or BUILD_BATCH_BYTES)),
        )
        dl = dl.astype(np.int32)
        vocab, indptr, rows, tf = merge_batches(parts)
        del parts
        tf = tf.astype(tf_dtype(tf), copy=False)  # before the weights: the int32 copy goes first
        return cls(version, vocab, indptr, rows, _weights(indptr, rows, tf, dl), *_row_columns(table), tf=tf, dl=dl)

    @classmethod
    def update(
        cls, prev: "Postings", version: int, table: pa.Table, fresh: pa.Table, changed_docs: set[str] | frozenset[str]
    ) -> "Postings | None":
        """The postings of table version ``version`` derived from ``prev`` (an older version's).

        Args:
            prev: postings of an older version, with :attr:`tf` and :attr:`dl` (saved by this
                code; folders saved before them have none).
            version: the new table version.
            table: every row of the new version, in scan order, columns ``chunk_id``,
                ``doc_id``, ``title``, ``_rowid`` (optionally ``vector``): what
                :meth:`build` reads except ``lexical``.
            fresh: ``_rowid`` and ``lexical`` of exactly the new version's rows whose
                ``doc_id`` is in ``changed_docs``.
            changed_docs: ids of every document written or deleted between ``prev.version``
                and ``version``; every other row must be unchanged.

        Rows of ``changed_docs`` are dropped from ``prev`` and their new rows tokenised; every
        other row must be in ``prev`` with the same ``chunk_id``, ``doc_id`` and ``title``
        (found by chunk id: compaction renumbers ``_rowid``). Weights are recomputed for all
        postings (N, avgdl and document frequencies change) by the expression :meth:`build`
        uses, so the result equals ``build(version, <scan with lexical>)`` array for array.

        Returns:
            The new postings, or None when ``prev`` has no ``tf``/``dl`` or does not match
            ``table`` (then the caller builds from a full scan).
        """
        import pyarrow.compute as pc

        if prev.tf is None or prev.dl is None or len(prev.tf) != len(prev.rows) or len(prev.dl) != prev.n:
            return None
        n, n_old = table.num_rows, prev.n
        changed = pa.array(sorted(changed_docs), pa.string())
        new_chunk = table.column("chunk_id").combine_chunks()
        new_doc = table.column("doc_id").combine_chunks()
        is_fresh = pc.is_in(new_doc, value_set=changed).to_numpy(zero_copy_only=False).astype(bool)
        keep_old = ~pc.is_in(prev._ids.column("doc_id"), value_set=changed).to_numpy(zero_copy_only=False).astype(bool)
        same = np.flatnonzero(~is_fresh)  # new positions of the unchanged rows
        if len(same) != int(keep_old.sum()):
            return None
        old_of = pc.index_in(new_chunk.take(pa.array(same)), value_set=prev._ids.column("chunk_id").combine_chunks())
        if old_of.null_count:
            return None
        old_pos = old_of.to_numpy(zero_copy_only=False).astype(np.int64)
        if len(same) and (not keep_old[old_pos].all() or len(np.unique(old_pos)) != len(old_pos)):
            return None
        taken = pa.array(old_pos)
        for col in ("doc_id", "title"):
            if (
                not table.column(col)
                .combine_chunks()
                .take(pa.array(same))
                .equals(prev._ids.column(col).combine_chunks().take(taken))
            ):
                return None
        newpos = np.full(n_old, -1, dtype=np.int32)  # int32: gathers below stay 4 bytes a posting
        newpos[old_pos] = same
        # the fresh rows' text, in new-position order
        rowids = table.column("_rowid").to_numpy().astype(np.uint64)
        fresh_pos = np.flatnonzero(is_fresh)
        f_rowids = fresh.column("_rowid").to_numpy().astype(np.uint64)
        if len(f_rowids) != len(fresh_pos):
            return None
        order = np.argsort(rowids[fresh_pos], kind="stable")
        sorted_ids = rowids[fresh_pos][order]
        at = np.minimum(np.searchsorted(sorted_ids, f_rowids), max(len(sorted_ids) - 1, 0))
        if len(f_rowids) and (not np.array_equal(sorted_ids[at], f_rowids) or len(np.unique(at)) != len(at)):
            return None
        f_pos = fresh_pos[order][at]  # new position of each fresh row
        by_pos = np.argsort(f_pos, kind="stable")
        f_pos = f_pos[by_pos]
        parts, fdl = tokenise_batches(
            fresh.column("lexical").combine_chunks().take(pa.array(by_pos)), BUILD_BATCH_ROWS, BUILD_BATCH_BYTES
        )
        dl = np.zeros(n, dtype=np.int32)
        dl[same] = prev.dl[old_pos]
        dl[f_pos] = fdl
        f_vocab, f_indptr, f_rows, f_tf = merge_batches(
            [(terms, term, f_pos[row].astype(np.int32), ftf) for terms, term, row, ftf in parts]
        )
        # the kept postings of prev, term by term; how many each term loses
        gone = np.flatnonzero(~keep_old[prev.rows])
        kept_df = np.diff(prev.indptr) - np.bincount(
            np.searchsorted(prev.indptr, gone, side="right") - 1, minlength=len(prev.vocab)
        )
        del gone
        surviving = prev.vocab[kept_df > 0]
        vocab = np.union1d(surviving, f_vocab) if len(f_vocab) else surviving
        vocab = vocab_array(vocab.tolist())
        V = len(vocab)
        old_new = np.searchsorted(vocab, prev.vocab[kept_df > 0])  # new id of each surviving old term
        f_new = np.searchsorted(vocab, f_vocab)
        k_df = np.zeros(V, dtype=np.int64)
        k_df[old_new] = kept_df[kept_df > 0]
        f_df = np.zeros(V, dtype=np.int64)
        f_df[f_new] = np.diff(f_indptr)
        indptr = np.zeros(V + 1, dtype=np.int64)
        np.cumsum(k_df + f_df, out=indptr[1:])
        tf_type = np.promote_types(prev.tf.dtype, tf_dtype(f_tf))
        f_term = np.repeat(f_new, np.diff(f_indptr)).astype(np.int64)
        if np.all(np.diff(newpos[keep_old]) > 0):
            # the kept rows keep their order (the usual case: compaction appends), so every term's
            # kept postings stay ascending: a kept posting's place is its rank among the kept ones
            # plus the fresh postings that sort before it (by term, then row), and the fresh
            # postings fill the places left. Written in place, WEIGHT_BLOCK old postings at a
            # time (whole-array gathers were ~1 GB of temporaries at 1M chunks).
            rows = np.empty(int(indptr[-1]), dtype=np.int32)
            tf = np.empty(int(indptr[-1]), dtype=tf_type)
            new_of_old = np.full(len(prev.vocab), -1, dtype=np.int64)
            new_of_old[kept_df > 0] = old_new
            f_keys = f_term * n + f_rows  # ascending: terms ascend, rows ascend within a term
            free = np.ones(len(rows), dtype=bool) if len(f_rows) else None
            done = 0
            for a in range(0, len(prev.rows), WEIGHT_BLOCK):
                b = min(a + WEIGHT_BLOCK, len(prev.rows))
                r = prev.rows[a:b]
                at = np.flatnonzero(keep_old[r])
                term = new_of_old[np.searchsorted(prev.indptr, at + a, side="right") - 1]
                new_rows = newpos[r[at]]
                dest = done + np.arange(len(at))
                if free is not None:
                    dest += np.searchsorted(f_keys, term * n + new_rows)
                    free[dest] = False
                rows[dest] = new_rows
                tf[dest] = prev.tf[a:b][at]
                done += len(at)
            if free is not None:
                rows[free] = f_rows
                tf[free] = f_tf
        else:  # rows reordered: sort every posting by (term, row)
            mask = keep_old[prev.rows]
            k_rows = newpos[prev.rows[mask]]
            k_tf = prev.tf[mask].astype(tf_type, copy=False)
            del mask
            k_term = np.repeat(old_new, kept_df[kept_df > 0])
            rows = np.concatenate([k_rows, f_rows])
            tf = np.concatenate([k_tf, f_tf.astype(tf_type)])
            del k_rows, k_tf
            by = np.lexsort((rows, np.concatenate([k_term, f_term])))
            rows, tf = rows[by], tf[by]
        tf = tf.astype(tf_dtype(tf), copy=False)
        return cls(version, vocab, indptr, rows, _weights(indptr, rows, tf, dl), *_row_columns(table), tf=tf, dl=dl)

    # -- saving and loading ------------------------------------------------------------------------
    @staticmethod
    def folder(root: Path, version: int) -> Path:
        """The folder of the postings of table version ``version`` under ``root``."""
        return Path(root) / f"v{version}"

    def save(self, root: Path) -> bool:
        """Write to ``root/v<version>/`` atomically (temporary folder, then rename).

        Returns False (and writes nothing) when that folder already exists or ``root`` is not
        writable; the postings are derived data, so failing to save only costs a rebuild.
        """
        import pyarrow.ipc as ipc

        root = Path(root)
        final = self.folder(root, self.version)
        if final.exists():
            return False
        try:
            root.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f"tmp-v{self.version}-", dir=root))
        except OSError:
            return False
        try:
            if self.vectors is not None:
                self.transposed()
            for name in ("vocab", "indptr", "rows", "weights", "rowids", "vectors", "vectors_t", "tf", "dl"):
                if getattr(self, name) is not None:
                    np.save(tmp / f"{name}.npy", getattr(self, name))
            with pa.OSFile(str(tmp / "ids.arrow"), "wb") as f, ipc.new_file(f, self.ids.schema) as w:
                w.write_table(self.ids)
            (tmp / "meta.json").write_text(json.dumps({"format": FORMAT, "version": self.version, "rows": self.n}))
            os.rename(tmp, final)
            return True
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            return False

    @classmethod
    def load(cls, root: Path, version: int) -> "Postings | None":
        """The saved postings of ``version`` (memory-mapped), or None if absent or unreadable."""
        import pyarrow.ipc as ipc

        folder = cls.folder(root, version)
        try:
            meta = json.loads((folder / "meta.json").read_text())
            if meta.get("format") != FORMAT or meta.get("version") != version:
                return None
            # plain ndarray views of the maps: np.memmap's per-slice overhead is a third of a query
            arrays = {
                name: np.load(folder / f"{name}.npy", mmap_mode="r").view(np.ndarray)
                for name in ("vocab", "indptr", "rows", "weights", "rowids")
            }
            ids = ipc.open_file(pa.memory_map(str(folder / "ids.arrow"))).read_all()
        except (OSError, ValueError, EOFError, KeyError, pa.ArrowException):
            # EOFError: an empty .npy (a full disk, a copy cut short), which numpy reports so
            # and Click turned into a bare "aborted" of every search
            return None
        indptr = arrays["indptr"]
        if (
            len(arrays["rowids"]) != meta.get("rows")
            or len(indptr) != len(arrays["vocab"]) + 1
            or len(arrays["rows"]) != len(arrays["weights"])
            or (len(indptr) and int(indptr[-1]) != len(arrays["rows"]))
        ):
            return None
        if (folder / "vectors.npy").exists():
            try:
                arrays["vectors"] = np.load(folder / "vectors.npy", mmap_mode="r").view(np.ndarray)
            except (OSError, ValueError, EOFError):
                return None
            try:  # optional: computed again when missing or unreadable
                vt = np.load(folder / "vectors_t.npy", mmap_mode="r").view(np.ndarray)
                if vt.shape == arrays["vectors"].shape[::-1]:
                    arrays["vectors_t"] = vt
            except (OSError, ValueError, EOFError):
                pass
        try:  # optional (only :meth:`update` needs them): unreadable ones just mean a full build next
            tf = np.load(folder / "tf.npy", mmap_mode="r").view(np.ndarray)
            dl = np.load(folder / "dl.npy", mmap_mode="r").view(np.ndarray)
            if len(tf) == len(arrays["rows"]) and len(dl) == len(arrays["rowids"]):
                arrays["tf"], arrays["dl"] = tf, dl
        except (OSError, ValueError, EOFError):
            pass
        return cls(version, ids=ids, **arrays)

    @staticmethod
    def prune(root: Path, keep: int) -> None:
        """Remove saved postings of versions other than ``keep`` and stray temporary folders."""
        root = Path(root)
        if not root.is_dir():
            return
        for p in root.iterdir():
            if p.name != f"v{keep}":
                shutil.rmtree(p, ignore_errors=True)

    # -- querying ------------------------------------------------------------------------------------
    def positions(self, rowids: np.ndarray) -> np.ndarray:
        """Row positions of Lance ``_rowid`` values (all must belong to this version)."""
        idx = np.searchsorted(self._sorted_rowids, np.asarray(rowids, dtype=np.uint64))
        idx = np.minimum(idx, max(self.n - 1, 0))
        ok = self._sorted_rowids[idx] == rowids if self.n else np.zeros(len(rowids), bool)
        pos: np.ndarray = self._pos_of_sorted[idx[ok]]
        return pos

    def mask_of(self, rowids: np.ndarray) -> np.ndarray:
        """Boolean mask over row positions, True at the given ``_rowid`` values."""
        mask = np.zeros(self.n, dtype=bool)
        mask[self.positions(rowids)] = True
        return mask

    def term_ids(self, terms: Sequence[str]) -> list[tuple[int, int]]:
        """(term id, times given) for the query terms that are in the vocabulary, sorted by id.

        Up to :data:`DICT_MAX` terms the vocabulary is looked up in a dict built on first use
        (~50 ns a term); above, by binary search in the sorted array (no per-term objects).
        """
        counts = Counter(t.encode("utf-8") for t in terms)
        if not len(self.vocab):
            return []
        if len(self.vocab) <= DICT_MAX:
            if self._term_index is None:
                self._term_index = {t: i for i, t in enumerate(self.vocab.tolist())}
            index = self._term_index
            return sorted((index[t], c) for t, c in counts.items() if t in index)
        keys = [t for t in counts if 0 < len(t) < MAX_TOKEN_BYTES and len(t) <= self.vocab.dtype.itemsize]
        if not keys:
            return []
        q = np.array(keys, dtype=self.vocab.dtype)
        idx = np.searchsorted(self.vocab, q)
        out = []
        for key, i in zip(keys, idx.tolist()):
            if i < len(self.vocab) and self.vocab[i] == key:
                out.append((i, counts[key]))
        out.sort()
        return out

    def _rows_of(self, cand: np.ndarray) -> tuple[list[str], list[str], list[str]]:
        """(chunk ids, doc ids, titles) of row positions ``cand``: from NumPy object arrays built
        on first use up to :data:`DICT_MAX` rows, else by an Arrow take."""
        if self.n <= DICT_MAX:
            if self._columns is None:
                self._columns = {
                    c: np.array(self._ids.column(c).to_pylist(), dtype=object) for c in ("chunk_id", "doc_id", "title")
                }
            cols = self._columns
            return cols["chunk_id"][cand].tolist(), cols["doc_id"][cand].tolist(), cols["title"][cand].tolist()
        got = self._ids.take(cand).to_pydict()
        return got["chunk_id"], got["doc_id"], got["title"]

    def scores(self, terms: Sequence[str]) -> np.ndarray:
        """BM25 score of every row for the query ``terms`` (float32, shape (n,); 0 = no term)."""
        found = self.term_ids(terms)
        if not found:
            return np.zeros(self.n, dtype=np.float32)
        ip = self.indptr
        spans = [(int(ip[t]), int(ip[t + 1]), times) for t, times in found]
        rows = np.concatenate([self.rows[a:b] for a, b, _ in spans])
        w = np.concatenate(
            [self.weights[a:b] if times == 1 else self.weights[a:b] * np.float32(times) for a, b, times in spans]
        )
        return np.bincount(rows, weights=w, minlength=self.n).astype(np.float32)

    def top(self, terms: Sequence[str], k: int, mask: np.ndarray | None) -> list[tuple[str, str, str, float]]:
        """The best ``k`` rows with a positive score (and ``mask`` True): (chunk_id, doc_id, title,
        score), by score descending, ties by chunk id ascending."""
        s = self.scores(terms)
        if mask is not None:
            s *= mask  # rows outside the filter score 0, i.e. are not candidates
        cand = np.flatnonzero(s)
        if len(cand) == 0 or k <= 0:
            return []
        cs = s[cand]
        if len(cand) > k:
            kth = np.partition(cs, len(cs) - k)[len(cs) - k]
            sel = cs >= kth  # every row tied with the k-th is kept, then ordered by chunk id
            cand, cs = cand[sel], cs[sel]
        chunk, docs, titles = self._rows_of(cand)
        scores = cs.tolist()
        order = sorted(range(len(cand)), key=lambda i: (-scores[i], chunk[i]))[:k]
        return [(chunk[i], docs[i], titles[i], scores[i]) for i in order]

    def nearest(self, vector: np.ndarray, k: int, mask: np.ndarray | None) -> list[tuple[str, str, str, float]]:
        """Exact cosine search over :attr:`vectors`: the best ``k`` rows (with ``mask`` True) as
        (chunk_id, doc_id, title, cosine similarity), best first, ties by chunk id
        (:func:`citewise.store.dense.exact_top`; a selective mask gathers only its rows).

        Raises:
            ValueError: these postings hold no vectors.
        """
        from citewise.store.dense import exact_top

        if self.vectors is None:
            raise ValueError("no vectors in these postings")
        visible, hidden = (None, None) if mask is None else self.selection(mask)
        return exact_top(self.vectors, vector, k, visible, self._rows_of, self.transposed(), hidden)

    def transposed(self) -> np.ndarray:
        """:attr:`vectors` transposed, C-contiguous, shape (dim, n) (:attr:`vectors_t`; made on
        first use when not loaded): the full-pass layout of :func:`citewise.store.dense.exact_top`.

        Raises:
            ValueError: these postings hold no vectors.
        """
        if self.vectors_t is None:
            if self.vectors is None:
                raise ValueError("no vectors in these postings")
            self.vectors_t = np.ascontiguousarray(self.vectors.T)
        return self.vectors_t

    def selection(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The row positions where ``mask`` is True and where it is False (int64, ascending),
        kept per mask object."""
        hit = self._visible.get(id(mask))
        if hit is None or hit[0] is not mask:
            if len(self._visible) >= 64:
                self._visible.pop(next(iter(self._visible)))
            hit = self._visible[id(mask)] = (mask, np.flatnonzero(mask), np.flatnonzero(~mask))
        return hit[1], hit[2]
