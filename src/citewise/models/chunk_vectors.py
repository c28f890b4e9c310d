"""How a chunk's dense vector is made.

A transformer embedder reads a window of tokens (MiniLM 256 word pieces, E5 512) while chunks
hold 300-800 tokens, so the vector of a chunk's text sees only its beginning. The answer units
of a chunk (sentences, list items, table rows: :mod:`citewise.answer.units`) each fit the window,
and ingest embeds them anyway for the answer layer; so one embedding pass serves both:

* ``units-mean``: the chunk's vector is the L2-normalised mean of its unit vectors (every part of
  the chunk counts); a chunk without units falls back to its own text's vector;
* ``chunk``: the chunk's own text is embedded (windowed), besides its units.

:func:`mode_for` picks ``units-mean`` for an embedder with a window and ``chunk`` for one that
reads any length (the hashing embedder, whose chunk vector already sees every word).
Measured: docs/benchmarks.md, "Chunk vectors" (``bench/chunk_vectors.py``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from citewise.models.embedding import l2_normalise

MODES = ("units-mean", "chunk")


def mode_for(embedder) -> str:
    """``chunk`` when ``embedder.window`` is None (reads any length), else ``units-mean`` (a
    window, or not declared: a transformer behind an endpoint)."""
    return "chunk" if getattr(embedder, "window", 0) is None else "units-mean"


def check_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`MODES`.

    Raises:
        ValueError: another value (the message lists the valid ones).
    """
    if mode not in MODES:
        raise ValueError(f"chunk vector mode '{mode}' unknown (valid: {', '.join(MODES)})")
    return mode


def mean_of_units(units: Sequence[np.ndarray], dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Per chunk, the L2-normalised mean of its unit vectors.

    Args:
        units: one float array (n_units, dim) per chunk (n_units may be 0).
        dim: vector size.

    Returns:
        ``(vectors, has_units)``: float32 (len(units), dim), zero rows for chunks without units,
        and a bool mask of the chunks that had units.

    >>> v, ok = mean_of_units([np.array([[1., 0.], [0., 1.]]), np.zeros((0, 2))], 2)
    >>> np.round(v, 4).tolist(), ok.tolist()
    ([[0.7071, 0.7071], [0.0, 0.0]], [True, False])
    """
    out = np.zeros((len(units), dim), dtype=np.float64)
    has = np.zeros(len(units), dtype=bool)
    for i, u in enumerate(units):
        if len(u):
            out[i] = np.asarray(u, dtype=np.float64).mean(axis=0)
            has[i] = True
    return l2_normalise(out), has
