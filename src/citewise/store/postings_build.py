"""Tokenising the lexical column into BM25 postings triples, in bounded batches, and merging the
batches into one sorted CSR (the build half of :mod:`citewise.store.postings`).

Memory: a batch holds ~60 bytes per byte of its text at its peak (Arrow token strings, int64 row
and term keys, the sort), so batches are bounded in rows and in bytes of text; the merged result
does not depend on either bound (tests/test_bm25_postings.py).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

#: Tokens of this many UTF-8 bytes or more are not indexed (LanceDB ``max_token_length=64``).
MAX_TOKEN_BYTES = 64
#: Rows tokenised at a time by :meth:`citewise.store.postings.Postings.build` (bounds the
#: build's memory to one batch's tokens plus the postings: ~100 tokens a row, so ~10M a batch).
BUILD_BATCH_ROWS = 100_000
#: ... and at most about this many bytes of lexical text a batch (a batch is never split inside
#: a row): rows hold up to a chunk's ~800 tokens, so a row count alone did not bound the tokens.
#: Tokenising holds ~60 bytes per byte of text at its peak (Arrow token strings, int64 row and
#: term keys, the sort); one 50 MB document's 9,500 chunks in one batch took the ingest's peak
#: to ~1 GB (bench/huge_line.py, docs/benchmarks.md).
BUILD_BATCH_BYTES = 8_000_000


def tokenise(lex: pa.Array) -> tuple[pa.Array | None, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Split analyzed texts on whitespace as LanceDB's ``whitespace`` tokenizer does.

    Args:
        lex: Arrow string array (nulls count as empty), ``m`` rows.

    Returns:
        ``(terms, term, row, tf, dl)``: the distinct tokens (Arrow string array, unsorted; None
        when there are none), then per distinct (row, token) pair, ordered by row then token
        index: the token's index into ``terms`` (int32), the local row (int32, 0..m-1) and the
        count (int32); ``dl`` is each row's token count (int64, shape (m,)). Tokens of
        :data:`MAX_TOKEN_BYTES` bytes or more are dropped from all of them.
    """
    import pyarrow.compute as pc

    m = len(lex)
    lex = lex.fill_null("")
    toks = pc.utf8_split_whitespace(lex)
    counts = pc.list_value_length(toks).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    flat = toks.flatten()
    parent = np.repeat(np.arange(m, dtype=np.int64), counts)
    blen = pc.binary_length(flat).to_numpy(zero_copy_only=False)
    keep = (blen > 0) & (blen < MAX_TOKEN_BYTES)
    flat = flat.filter(pa.array(keep))
    parent = parent[keep]
    del toks, blen, keep, lex
    dl = np.bincount(parent, minlength=m).astype(np.int64)
    empty = np.zeros(0, np.int32)
    if not len(flat):
        return None, empty, empty, empty, dl
    enc = pc.dictionary_encode(flat)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks()
    del flat
    nv = len(enc.dictionary)
    # row-major keys: the unique pairs come out by row, then term
    key = parent * nv + enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    del parent
    uniq, tf = np.unique(key, return_counts=True)
    del key
    return enc.dictionary, (uniq % nv).astype(np.int32), (uniq // nv).astype(np.int32), tf.astype(np.int32), dl


#: One batch of :func:`tokenise_batches`: (terms dictionary, term codes, rows, tf).
TokenBatch = tuple[pa.Array, np.ndarray, np.ndarray, np.ndarray]


def tokenise_batches(
    lex: pa.Array | pa.ChunkedArray, batch_rows: int, batch_bytes: int
) -> tuple[list[TokenBatch], np.ndarray]:
    """:func:`tokenise` over ``lex`` in batches of at most ``batch_rows`` rows and about
    ``batch_bytes`` bytes of text (at least one row each), in row order.

    Returns:
        ``(parts, dl)``: per batch with tokens ``(terms, term, row, tf)`` as :func:`tokenise`
        gives them but with ``row`` numbered over all of ``lex`` (int32); ``dl`` each row's token
        count (int64, shape (len(lex),)).
    """
    import pyarrow.compute as pc

    chunks = lex.chunks if isinstance(lex, pa.ChunkedArray) else [lex]
    dl = np.zeros(len(lex), dtype=np.int64)
    parts: list[TokenBatch] = []
    base = 0
    for c in chunks:
        cum = np.concatenate([[0], np.cumsum(pc.binary_length(c).fill_null(0).to_numpy(zero_copy_only=False))])
        lo = 0
        while lo < len(c):
            cap = int(np.searchsorted(cum, cum[lo] + batch_bytes, side="right")) - 1
            hi = max(lo + 1, min(len(c), lo + batch_rows, cap))
            terms, term, row, tf, dl_batch = tokenise(c.slice(lo, hi - lo))
            dl[base + lo : base + hi] = dl_batch
            if terms is not None:
                parts.append((terms, term, (row + base + lo).astype(np.int32), tf))
            lo = hi
        base += len(c)
    return parts, dl


def tf_dtype(tf: np.ndarray) -> np.dtype:
    """Storage type of the term frequencies: uint16 when they fit (the usual case), else int32."""
    return np.dtype(np.uint16) if not len(tf) or int(tf.max()) < 2**16 else np.dtype(np.int32)


def vocab_array(terms: list[bytes]) -> np.ndarray:
    """Sorted UTF-8 terms as a NumPy ``S<longest>`` array (``S1`` and empty when none)."""
    if not terms:
        return np.zeros(0, "S1")
    return np.array(terms, dtype=f"S{max(1, max(len(t) for t in terms))}")


def merge_batches(parts: list[TokenBatch]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Merge per-batch pairs of :func:`tokenise` into one sorted CSR.

    Args:
        parts: per batch ``(terms, term, rows, tf)``: the batch's distinct tokens (Arrow
            strings), then per pair the index into them (int32), the global row (int32,
            ascending from batch to batch) and the count (int32), ordered by row. Emptied
            (the arrays are released as soon as they are merged).

    Returns:
        ``(vocab, indptr, rows, tf)``: the sorted vocabulary (:func:`vocab_array`), int64
        ``indptr`` (V + 1,), and per posting the row and count (int32), by term then row.
    """
    import pyarrow.compute as pc

    if not parts:
        empty = np.zeros(0, np.int32)
        return np.zeros(0, "S1"), np.zeros(1, np.int64), empty, empty
    merged = pc.unique(pa.chunked_array([p[0] for p in parts]).combine_chunks())
    order = pc.sort_indices(merged).to_numpy()
    vocab_arr = merged.take(pa.array(order))
    term = np.concatenate(
        [pc.index_in(d, value_set=vocab_arr).to_numpy(zero_copy_only=False).astype(np.int32)[t] for d, t, _, _ in parts]
    )
    rows = np.concatenate([p[2] for p in parts])
    tf = np.concatenate([p[3] for p in parts])
    parts.clear()  # the batches' copies go before the sort (1 GB at 1M chunks)
    by_term = np.argsort(term, kind="stable")  # rows stay ascending within a term
    term, rows, tf = term[by_term], rows[by_term], tf[by_term]
    del by_term
    V = len(vocab_arr)
    indptr = np.zeros(V + 1, dtype=np.int64)
    np.cumsum(np.bincount(term, minlength=V), out=indptr[1:])
    return vocab_array([t.encode("utf-8") for t in vocab_arr.to_pylist()]), indptr, rows, tf
