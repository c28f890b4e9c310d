"""How a chunk's dense vector is made.

A transformer embedder reads a window of tokens (MiniLM 256 word pieces, E5 512) while chunks
hold 300-800 tokens, so the vector of a chunk's text sees only its beginning. The answer units
of a chunk (sentences, list items, table rows: :mod:`citewise.answer.units`) each fit the window,
and ingest embeds them anyway for the answer layer; so one embedding pass serves both:

* ``units-mean``: the chunk's vector is the L2-normalised mean of its unit vectors (every part of
  the chunk counts); a chunk without units falls back to its own text's vector;
* ``chunk``: the chunk's own text is embedded (its first window only), besides its units.

New indexes use :data:`DEFAULT_MODE` (``units-mean``): one embedding pass serves chunks and
units, and every part of a chunk counts. Measured with MiniLM (docs/benchmarks.md, "Chunk
vectors"): it found the answering passage of real documentation far more often than ``chunk``
(span recall@5 rustc 0.635 vs 0.492, bash 0.846 vs 0.673), lifted the sample golden set's
shipped nDCG@10 from 0.871 to 0.944 (paraphrased questions 0.794 to 0.925; identifier questions
0.932 to 0.918), ranked NFCorpus better (0.4501 vs 0.4225) and SciFact abstracts lower (0.8125 vs
0.8330). An index chooses ``chunk`` with ``Index.open(..., chunk_vectors="chunk")`` or
``citewise ingest --chunk-vectors chunk``; an index keeps the mode it was created with
(``index.json``; an index from before the setting existed is ``chunk``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from citewise.models.embedding import l2_normalise

MODES = ("chunk", "units-mean")
#: The mode of a new index unless one is chosen (see module docstring).
DEFAULT_MODE = "units-mean"


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
    >>> np.round(v.astype(float), 4).tolist(), ok.tolist()
    ([[0.7071, 0.7071], [0.0, 0.0]], [True, False])
    """
    out = np.zeros((len(units), dim), dtype=np.float64)
    has = np.zeros(len(units), dtype=bool)
    for i, u in enumerate(units):
        if len(u):
            out[i] = np.asarray(u, dtype=np.float64).mean(axis=0)
            has[i] = True
    return l2_normalise(out), has
