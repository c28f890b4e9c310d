"""Evaluate a retriever on a BEIR dataset folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/``).

Chunk hits are turned into a document ranking by first occurrence (a document ranks where its
best chunk ranks), which is how passage-level retrievers are scored on document-level qrels.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from citewise.core import InputError
from citewise.evaluation.metrics import Evaluation, evaluate
from citewise.models.embedding import embed_queries
from citewise.text.lines import jsonl_rows
from citewise.text.loaders import load_beir_corpus

BEIR_METRICS = ("ndcg@10", "mrr@10", "recall@10", "recall@100")


def read_queries(path: str | Path) -> dict[str, str]:
    """``{qid: text}`` from a BEIR ``queries.jsonl``.

    Raises:
        InputError: unreadable file or a bad line (with its number).
    """
    out: dict[str, str] = {}
    for n, row in jsonl_rows(path, "queries"):
        if "_id" not in row or "text" not in row:
            raise InputError(str(path), "expected a JSON object with '_id' and 'text'", n)
        out[str(row["_id"])] = str(row["text"])
    return out


@dataclass
class BeirDataset:
    """Paths of one BEIR dataset folder."""

    root: Path

    @property
    def name(self) -> str:
        return self.root.resolve().name

    @property
    def corpus(self) -> Path:
        return self.root / "corpus.jsonl"

    def qrels_path(self, split: str) -> Path:
        return self.root / "qrels" / f"{split}.tsv"

    def check(self, split: str) -> None:
        """Raises InputError naming the first missing file."""
        for p in (self.corpus, self.root / "queries.jsonl", self.qrels_path(split)):
            if not p.is_file():
                raise InputError(
                    str(p), "missing: a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv"
                )

    def documents(self):
        return load_beir_corpus(self.corpus)

    def load_split(self, split: str) -> tuple[dict[str, dict[str, int]], dict[str, str]]:
        """``(qrels, queries)`` of a split; queries limited to those judged in the qrels.

        Raises:
            InputError: a missing file, or qrels queries without text in queries.jsonl.
        """
        from citewise.evaluation.trec import read_qrels

        self.check(split)
        qrels = read_qrels(self.qrels_path(split))
        queries = {q: t for q, t in read_queries(self.root / "queries.jsonl").items() if q in qrels}
        missing = sorted(set(qrels) - set(queries))
        if missing:
            raise InputError(
                str(self.root / "queries.jsonl"), f"{len(missing)} qrels queries have no text (e.g. {missing[0]})"
            )
        return qrels, queries


class PrecomputedEmbedder:
    """Wraps an embedder for queries: texts embedded up front as queries (in one batched call,
    :func:`citewise.models.embedding.embed_queries`) are served from memory."""

    def __init__(self, base, texts: Sequence[str]):
        self.base = base
        self.name = base.name
        self.dim = base.dim
        uniq = list(dict.fromkeys(texts))
        vecs = embed_queries(base, uniq) if uniq else np.zeros((0, base.dim), np.float32)
        self._cache = dict(zip(uniq, vecs))

    def embed(self, texts):
        missing = [t for t in texts if t not in self._cache]
        if missing:
            self._cache.update(zip(missing, embed_queries(self.base, missing)))
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


def doc_ranking(hits, depth: int, level: str = "doc") -> list[tuple[str, float]]:
    """``[(id, score)]`` from chunk hits, first occurrence of each id, at most ``depth`` entries.

    ``level="doc"`` ranks documents (a document ranks where its best chunk ranks); ``"chunk"``
    ranks chunk ids (duplicates dropped).
    """
    seen: set[str] = set()
    out = []
    for h in hits:
        key = h.doc_id if level == "doc" else h.chunk_id
        if key not in seen:
            seen.add(key)
            out.append((key, h.score))
            if len(out) == depth:
                break
    return out


def run_queries(
    retriever, queries: dict[str, str], depth: int = 100, progress: Callable[[int], None] | None = None
) -> dict[str, list[tuple[str, float]]]:
    """Ranked documents per query: ``{qid: [(doc_id, score), ...]}`` (at most ``depth`` each).

    Chunks are fetched at 1.5x depth so that documents split into several chunks still leave
    ``depth`` distinct documents.
    """
    out = {}
    for qid in sorted(queries):
        hits = retriever.search(queries[qid], k=int(depth * 1.5))
        out[qid] = doc_ranking(hits, depth)
        if progress:
            progress(1)
    return out


def evaluate_ranked(
    qrels, ranked: dict[str, list[tuple[str, float]]], metrics: Sequence[str] = BEIR_METRICS
) -> Evaluation:
    """Evaluate ranked lists in their own order (ties already broken by the retriever)."""
    return evaluate(qrels, {q: [d for d, _ in items] for q, items in ranked.items()}, metrics)
