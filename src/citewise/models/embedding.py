"""What every embedder shares: the ``Embedder`` protocol, normalisation, the query side of an
embedder, and the per-model declaration of query/passage prompts.

Contract (DESIGN.md): ``embed(texts) -> float32 array (n, dim)``, every row L2-normalised;
attributes ``dim`` and ``name``. ``embed`` embeds *passages* (chunks, answer units); an embedder
whose model embeds queries differently (E5's ``query: `` prefix) also has
``embed_queries(texts)``; :class:`QueryView` and :func:`embed_queries` pick it when present.
An empty input gives an array of shape (0, dim).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dim), rows L2-normalised (passages)."""
        ...


def l2_normalise(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` scaled to unit L2 norm (zero rows stay zero); float32."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def embed_queries(embedder, texts: Sequence[str]) -> np.ndarray:
    """``embedder.embed_queries(texts)`` when the embedder has one, else ``embedder.embed(texts)``."""
    fn = getattr(embedder, "embed_queries", None)
    return fn(texts) if fn is not None else embedder.embed(texts)


class QueryView:
    """The query side of an embedder as an :class:`Embedder`: ``embed`` embeds queries.

    Handed to retrievers and to the question path, which call ``embed([question])``; passages
    (ingest, answer units) go through the wrapped embedder itself. ``name`` and ``dim`` are the
    wrapped embedder's.
    """

    def __init__(self, embedder):
        self.embedder = embedder
        self.name = embedder.name
        self.dim = embedder.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), dim): the texts embedded as queries."""
        return embed_queries(self.embedder, texts)

    def preload(self) -> None:
        """The wrapped embedder's ``preload`` (a no-op when it has none)."""
        fn = getattr(self.embedder, "preload", None)
        if fn is not None:
            fn()


@dataclass(frozen=True)
class Prompts:
    """How a model tells queries from passages.

    Attributes:
        query, passage: text prepended to each query / passage before it is embedded.
        input_type: send the OpenAI-compatible request field ``input_type`` (``query`` or
            ``passage``) instead; for servers that add the model's prefixes themselves.
        source: where the declaration comes from (model card, server documentation).
    """

    query: str = ""
    passage: str = ""
    input_type: bool = False
    source: str = ""


_PROMPTS_FILE = Path(__file__).parent / "data" / "prompts.json"


@lru_cache(maxsize=1)
def _prompt_table() -> tuple[tuple[re.Pattern, Prompts], ...]:
    rows = json.loads(_PROMPTS_FILE.read_text(encoding="utf-8"))
    return tuple(
        (
            re.compile(r["match"], re.I),
            Prompts(r.get("query", ""), r.get("passage", ""), bool(r.get("input_type", False)), r.get("source", "")),
        )
        for r in rows
    )


def prompts_for(model: str) -> Prompts:
    """The declared prompts of ``model`` (its id as a server names it), from
    ``models/data/prompts.json``: the first entry whose ``match`` regex is found in the id; no
    prompts when none matches.

    >>> prompts_for("intfloat/multilingual-e5-small").query
    'query: '
    >>> prompts_for("multilingual-e5-small-q4").input_type
    True
    >>> prompts_for("all-MiniLM-L6-v2") == Prompts()
    True
    """
    for pattern, prompts in _prompt_table():
        if pattern.search(model):
            return prompts
    return Prompts()
