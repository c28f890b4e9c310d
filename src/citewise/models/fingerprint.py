"""Which model made an index's vectors: a fingerprint of an embedder, and the check that a query
embedder is the one the index was built with.

The fingerprint embeds :data:`PROBES` (fixed sentences in four languages) as passages. The
index keeps the probe vectors (rounded to 4 decimals) and a short digest of them for display;
two embedders are the same model when each probe's vectors have cosine >= :data:`SAME_MODEL_COSINE`
(the same model run by another engine or with other threads differs by ~1e-6; two different
models of one dimension do not come near 0.99). Different dimensions are different models.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from citewise.core import CitewiseError

#: Fixed probe sentences (do not change: recorded fingerprints depend on them).
PROBES = (
    "The invoice must be paid within thirty days of delivery.",
    "Der Server startet nach dem Update automatisch neu.",
    "¿Cuántos días de vacaciones tiene un empleado nuevo?",
    "E-1004: connection refused on port 5432",
)
#: Cosine between each pair of probe vectors above which two embedders count as one model.
SAME_MODEL_COSINE = 0.99


@dataclass(frozen=True)
class Fingerprint:
    """``digest``: 12 hex characters of SHA-256 over the probe vectors rounded to 2 decimals (for
    display); ``vectors``: the probe vectors, shape (len(PROBES), dim), rounded to 4 decimals."""

    digest: str
    vectors: np.ndarray

    def as_json(self) -> dict:
        return {"fingerprint": self.digest, "probe": [[float(x) for x in row] for row in self.vectors]}

    @classmethod
    def from_json(cls, digest: str, probe: Sequence[Sequence[float]] | None) -> "Fingerprint | None":
        if not digest or not probe:
            return None
        return cls(digest, np.asarray(probe, dtype=np.float32))

    def same_model(self, other: "Fingerprint") -> bool:
        """Whether both fingerprints come from one model (see module docstring)."""
        a, b = self.vectors, other.vectors
        if a.shape != b.shape:
            return False
        na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
        cos = (a * b).sum(axis=1) / np.maximum(na * nb, 1e-12)
        return bool((cos >= SAME_MODEL_COSINE).all())


def fingerprint(embedder) -> Fingerprint:
    """The :class:`Fingerprint` of ``embedder`` (embeds :data:`PROBES` once, as passages)."""
    vecs = np.asarray(embedder.embed(list(PROBES)), dtype=np.float64)
    digest = hashlib.sha256(np.round(vecs, 2).astype("<f4").tobytes() + str(vecs.shape).encode()).hexdigest()[:12]
    return Fingerprint(digest, np.round(vecs, 4).astype(np.float32))


def mismatch_message(
    index: str, built: str, built_dim: int, built_fp: str, given: str, given_dim: int, given_fp: str
) -> str:
    """The one-line error for a query embedder that is not the index's model."""
    what = f"gives {given_dim}-d vectors" if given_dim != built_dim else f"has fingerprint {given_fp}, not {built_fp}"
    return (
        f"{index}: built with embedder '{built}' ({built_dim}-d, fingerprint {built_fp}); '{given}' {what}. "
        f"Search with --embedder {built}, or move the index to the new model: "
        f"citewise index reembed --embedder {given} --index {index}"
    )


class CheckedEmbedder:
    """An embedder whose first call checks it against the fingerprint an index recorded.

    For embedders whose weights can change behind the same spec (an endpoint serving another
    model, an ONNX folder overwritten). Every other attribute is the wrapped embedder's.

    Raises:
        CitewiseError: (first embedding call) the model is not the recorded one:
            :func:`mismatch_message`.
    """

    def __init__(self, embedder, recorded: Fingerprint, message_args: tuple):
        self.embedder = embedder
        self._recorded = recorded
        self._args = message_args
        self._checked = False

    def __getattr__(self, name):
        return getattr(self.embedder, name)

    def check(self) -> None:
        if self._checked:
            return
        got = fingerprint(self.embedder)
        if not self._recorded.same_model(got):
            index, built, dim, fp, given = self._args
            raise CitewiseError(mismatch_message(index, built, dim, fp, given, got.vectors.shape[1], got.digest))
        self._checked = True

    def embed(self, texts):
        self.check()
        return self.embedder.embed(texts)

    def embed_queries(self, texts):
        self.check()
        fn = getattr(self.embedder, "embed_queries", None)
        return fn(texts) if fn is not None else self.embedder.embed(texts)
