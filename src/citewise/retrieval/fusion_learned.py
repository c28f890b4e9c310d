"""Learned fusion: rank the BM25 + dense candidate pool with weights (or LambdaMART) fitted on a
golden set, stored only when it beats reciprocal rank fusion significantly.

**Candidates and features.** For a query, the pool is the union of the top :data:`POOL` BM25 and
dense candidates (the store applies the permission filter inside both searches, as for
``hybrid``). Each candidate chunk gets the features in :data:`FEATURES`, all from what the index
already holds:

* ``bm25``, ``dense``: the store's BM25 score (divided by the query's best) and the cosine;
* ``bm25_rr``, ``dense_rr``, ``rrf``: reciprocal ranks ``1/(60 + rank)`` and their sum (RRF);
* ``title_terms``, ``heading_terms``, ``body_terms``: share of the query's distinct analyzer terms
  found in the title, the heading path and the chunk text (BM25-by-field is not available from
  a single-field index, so each field contributes its term coverage);
* ``title_id``: 1 when the title names an identifier of the query (``E-1004``), else 0;
* ``log_tokens``: ``log(1 + token_count)`` of the chunk; ``depth``: heading-path length.

**Models.** ``linear``: a weighted sum of the z-scored features, fitted by coordinate ascent on
mean nDCG@10 (Metzler and Croft 2007, "Linear feature-based models for information retrieval",
the RankLib method), starting from RRF alone (so it can only move away from RRF where that helps
the training queries). ``lambdamart``: LightGBM's LambdaMART (``LGBMRanker``, objective
``lambdarank``; Burges 2010), when ``lightgbm`` is installed.

**Validation.** :func:`citewise.evaluation.tuning.cross_validate` runs k-fold cross-validation over the golden queries (folds by a
seeded shuffle): each held-out query is ranked by a model fitted on the other folds, and by RRF.
The per-query nDCG@10 of the two are compared with the paired randomisation test of
:mod:`citewise.evaluation.significance`. The model (refitted on every query) is stored in
``<index>/fusion.json`` only when the held-out mean is higher and p < ``alpha``; otherwise
:func:`citewise.evaluation.tuning.cross_validate` reports the refusal and stores nothing.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from citewise.core import CitewiseError, Filters, Hit, Principal
from citewise.models.embedding import Embedder
from citewise.retrieval.fusion import RRF_K
from citewise.retrieval.registry import register, registered
from citewise.retrieval.retrievers import BM25Retriever, DenseRetriever, effective_filters
from citewise.store.base import Store
from citewise.text.analyzer import analyze, find_identifiers, fold_dashes

if TYPE_CHECKING:
    from citewise.retrieval.retrievers import Retriever

FEATURES = (
    "bm25",
    "dense",
    "bm25_rr",
    "dense_rr",
    "rrf",
    "title_terms",
    "heading_terms",
    "body_terms",
    "title_id",
    "log_tokens",
    "depth",
)
#: Candidates taken from each of BM25 and dense.
POOL = 100
#: Step sizes (in z-score units) tried per coordinate, and passes over the coordinates.
STEPS = (-1.0, -0.3, -0.1, -0.03, 0.03, 0.1, 0.3, 1.0)
PASSES = 3
MODEL_FILE = "fusion.json"


@dataclass
class Pool:
    """One query's candidates: ``ids`` (chunk ids), ``docs`` (their doc ids), ``titles`` and the
    feature matrix ``X`` of shape ``(len(ids), len(FEATURES))``."""

    ids: list[str]
    docs: list[str]
    titles: list[str]
    X: np.ndarray


def candidate_pool(store: Store, embedder: Embedder, query: str, filters: Filters, pool: int = POOL) -> Pool:
    """The candidate pool of ``query`` with its features (module docstring)."""
    lex = BM25Retriever(store).candidates(query, pool, filters)
    vec = DenseRetriever(store, embedder).candidates(query, pool, filters)
    ids = list(dict.fromkeys([c.chunk_id for c in lex] + [c.chunk_id for c in vec]))
    if not ids:
        return Pool([], [], [], np.zeros((0, len(FEATURES))))
    lex_rank = {c.chunk_id: (r, c.score) for r, c in enumerate(lex, start=1)}
    vec_rank = {c.chunk_id: (r, c.score) for r, c in enumerate(vec, start=1)}
    top = max((c.score for c in lex), default=1.0) or 1.0
    stored = store.get_chunks(ids)
    qterms = set(analyze(query))
    qids = {fold_dashes(i).lower() for i in find_identifiers(query)}
    X = np.zeros((len(ids), len(FEATURES)))
    docs: list[str] = []
    titles: list[str] = []
    for i, cid in enumerate(ids):
        sc = stored.get(cid)
        title = sc.title if sc else ""
        heads = " ".join(sc.heading_path) if sc else ""
        body = sc.text if sc else ""
        docs.append(sc.doc_id if sc else cid.split("#")[0])
        titles.append(title)
        lr, ls = lex_rank.get(cid, (None, 0.0))
        vr, vs = vec_rank.get(cid, (None, 0.0))
        if vr is None and sc is not None:
            vs = 0.0
        cover: Callable[[str], float] = (
            (lambda text: len(qterms & set(analyze(text))) / len(qterms)) if qterms else (lambda text: 0.0)
        )
        tids = {fold_dashes(t).lower() for t in find_identifiers(title)} if qids else set()
        X[i] = [
            ls / top,
            vs,
            1 / (RRF_K + lr) if lr else 0.0,
            1 / (RRF_K + vr) if vr else 0.0,
            (1 / (RRF_K + lr) if lr else 0.0) + (1 / (RRF_K + vr) if vr else 0.0),
            cover(title),
            cover(heads),
            cover(body),
            float(bool(qids & tids)),
            math.log1p(sc.token_count) if sc else 0.0,
            float(len(sc.heading_path)) if sc else 0.0,
        ]
    return Pool(ids, docs, titles, X)


# -- metrics on pools -------------------------------------------------------------------------


@dataclass
class Labeled:
    """A pool with graded labels per candidate, and the query's ideal DCG@10 from all its qrels."""

    pool: Pool
    labels: np.ndarray
    unit: np.ndarray  # per candidate, an integer id of what is judged (doc or chunk), for dedup
    idcg: float
    tie: np.ndarray = field(default_factory=lambda: np.zeros(0, int))  # rank of the chunk id (tie-break)


def label_pool(pool: Pool, judged: Mapping[str, int], level: str = "doc") -> Labeled:
    """Grades of the pool's candidates from ``judged`` (``{doc or chunk id: grade}``)."""
    keys = pool.docs if level == "doc" else pool.ids
    labels = np.array([max(int(judged.get(k, 0)), 0) for k in keys], dtype=np.float64)
    _, unit = np.unique(np.array(keys, dtype=object), return_inverse=True) if keys else (None, np.zeros(0, int))
    gains = sorted((g for g in judged.values() if g > 0), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    tie = np.empty(len(pool.ids), dtype=int)
    tie[sorted(range(len(pool.ids)), key=pool.ids.__getitem__)] = np.arange(len(pool.ids))
    return Labeled(pool, labels, np.asarray(unit), idcg, tie)


def ndcg10(scores: np.ndarray, q: Labeled) -> float:
    """nDCG@10 (linear gain, trec_eval) of ranking ``q``'s candidates by ``scores`` (desc, ties by
    chunk id), counting each judged unit (document) once, at its first candidate."""
    if q.idcg == 0 or len(scores) == 0:
        return 0.0
    order = np.lexsort((q.tie, -scores))
    seen: set[int] = set()
    dcg, r = 0.0, 0
    for i in order:
        u = int(q.unit[i])
        if u in seen:
            continue
        seen.add(u)
        dcg += q.labels[i] / math.log2(r + 2)
        r += 1
        if r == 10:
            break
    return dcg / q.idcg


# -- models -----------------------------------------------------------------------------------


@dataclass
class FusionModel:
    """A fitted ranker over :data:`FEATURES` (see module docstring); ``score(X)`` higher = better."""

    kind: str  # "linear" | "lambdamart" | "convex" (weights = [alpha, prf_chunks, prf_beta])
    mean: list[float]
    std: list[float]
    weights: list[float] = field(default_factory=list)
    booster: str = ""  # LightGBM model text (lambdamart)
    features: list[str] = field(default_factory=lambda: list(FEATURES))
    info: dict[str, Any] = field(default_factory=dict)

    def score(self, X: np.ndarray) -> np.ndarray:
        if len(X) == 0:
            return np.zeros(0)
        if self.kind == "linear":
            Z = (X - np.asarray(self.mean)) / np.asarray(self.std)
            linear: np.ndarray = Z @ np.asarray(self.weights)
            return linear
        booster = self.__dict__.get("_booster")
        if booster is None:
            import lightgbm as lgb

            booster = self.__dict__["_booster"] = lgb.Booster(model_str=self.booster)
        ranked: np.ndarray = booster.predict(X)
        return ranked

    def params(self) -> dict[str, float]:
        """The fitted weights by name (features, or ``alpha``/``prf_chunks``/``prf_beta``)."""
        if self.kind == "convex":
            return dict(zip(("alpha", "prf_chunks", "prf_beta"), self.weights))
        return dict(zip(self.features, self.weights))

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    def save(self, path: Path) -> None:
        tmp = Path(path).with_suffix(".tmp")
        tmp.write_text(json.dumps(self.to_dict()))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> "FusionModel":
        """Raises CitewiseError: missing file (run ``citewise tune``) or not a fusion model."""
        try:
            data = json.loads(Path(path).read_text())
            model = cls(**data)
        except FileNotFoundError:
            raise CitewiseError(f"{path}: no tuned fusion model; run 'citewise tune --golden SET' first") from None
        except (ValueError, TypeError) as e:
            raise CitewiseError(f"{path}: not a fusion model ({e})") from None
        if model.features != list(FEATURES):
            raise CitewiseError(
                f"{path}: fitted on features {model.features}; this citewise computes {list(FEATURES)}; re-run 'citewise tune'"
            )
        return model


def _standardise(train: Sequence[Labeled]) -> tuple[np.ndarray, np.ndarray]:
    X = np.vstack([q.pool.X for q in train]) if train else np.zeros((1, len(FEATURES)))
    mean, std = X.mean(axis=0), X.std(axis=0)
    std[std == 0] = 1.0
    return mean, std


def fit_linear(train: Sequence[Labeled], seed: int = 42) -> FusionModel:
    """Coordinate ascent on mean nDCG@10, from RRF's weight vector (module docstring)."""
    mean, std = _standardise(train)
    Zs = [(q.pool.X - mean) / std for q in train]
    w = np.zeros(len(FEATURES))
    w[FEATURES.index("rrf")] = 1.0

    def objective(w: np.ndarray) -> float:
        return float(np.mean([ndcg10(Z @ w, q) for Z, q in zip(Zs, train)])) if train else 0.0

    best = objective(w)
    rng = np.random.default_rng(seed)
    for _ in range(PASSES):
        improved = False
        for j in rng.permutation(len(FEATURES)):
            for step in STEPS:
                cand = w.copy()
                cand[j] += step
                val = objective(cand)
                if val > best + 1e-9:
                    best, w, improved = val, cand, True
        if not improved:
            break
    return FusionModel("linear", mean.tolist(), std.tolist(), w.tolist(), info={"train_ndcg@10": best})


def fit_lambdamart(train: Sequence[Labeled], seed: int = 42) -> FusionModel:
    """LightGBM LambdaMART (``lambdarank``, 200 trees, 15 leaves, learning rate 0.05, seeded).

    Raises:
        CitewiseError: lightgbm is not installed.
    """
    try:
        import lightgbm as lgb
    except ImportError:
        raise CitewiseError("the lambdamart model needs lightgbm: pip install 'lightgbm==4.7.0'") from None
    qs = [q for q in train if len(q.labels)]
    X = np.vstack([q.pool.X for q in qs])
    y = np.concatenate([q.labels for q in qs]).astype(int)
    ranker = lgb.LGBMRanker(
        objective="lambdarank",
        n_estimators=200,
        num_leaves=15,
        learning_rate=0.05,
        min_child_samples=20,
        random_state=seed,
        deterministic=True,
        force_row_wise=True,
        n_jobs=1,
        verbose=-1,
    )
    ranker.fit(X, y, group=[len(q.labels) for q in qs])
    mean, std = _standardise(train)
    return FusionModel("lambdamart", mean.tolist(), std.tolist(), booster=ranker.booster_.model_to_string())


FITTERS: dict[str, Callable[..., FusionModel]] = {"linear": fit_linear, "lambdamart": fit_lambdamart}


@dataclass
class TuneReport:
    """What :func:`citewise.evaluation.tuning.cross_validate` found: per-query held-out nDCG@10 of RRF and the model, their means,
    the paired p-value, whether the model was stored, and why."""

    kind: str
    folds: int
    queries: int
    rrf: list[float]
    tuned: list[float]
    p: float
    alpha: float
    stored: bool
    reason: str
    model: FusionModel | None = None

    @property
    def rrf_mean(self) -> float:
        return float(np.mean(self.rrf)) if self.rrf else 0.0

    @property
    def tuned_mean(self) -> float:
        return float(np.mean(self.tuned)) if self.tuned else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.kind,
            "folds": self.folds,
            "queries": self.queries,
            "rrf_ndcg@10": self.rrf_mean,
            "tuned_ndcg@10": self.tuned_mean,
            "delta": self.tuned_mean - self.rrf_mean,
            "p": self.p,
            "alpha": self.alpha,
            "stored": self.stored,
            "reason": self.reason,
            "weights": self.model.params() if self.model and self.model.weights else None,
        }


def build_training_data(
    store: Store,
    embedder: Embedder,
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    level: str | Mapping[str, str] = "doc",
    progress: Callable[[int], None] | None = None,
    principal: Principal | None = None,
) -> list[Labeled]:
    """Pools with labels for every query that has qrels (sorted by query id); ``level``: ``doc``
    or ``chunk`` (what the qrels judge), or one per query id."""
    f = effective_filters(principal, None)
    out: list[Labeled] = []
    for qid in sorted(q for q in queries if q in qrels):
        pool = candidate_pool(store, embedder, queries[qid], f)
        out.append(label_pool(pool, qrels[qid], level if isinstance(level, str) else level.get(qid, "doc")))
        if progress:
            progress(1)
    return out


def model_path(store: Store) -> Path:
    """``<index>/fusion.json`` beside the store folder (``store.capabilities.folder``).

    Raises:
        CitewiseError: the store has no local folder (a server store).
    """
    path = store.capabilities.folder
    if path is None:
        raise CitewiseError(f"{type(store).__name__} has no index folder to keep a fusion model in")
    return Path(path).parent / MODEL_FILE


@register("tuned")
class TunedRetriever:
    """Ranks the candidate pool with the stored :class:`FusionModel` (``--retriever tuned``).

    Raises:
        CitewiseError: no model stored for this index (run ``citewise tune``).
    """

    name = "tuned"

    def __init__(self, store: Store, embedder: Embedder, model: FusionModel | None = None):
        self.store = store
        self.embedder = embedder
        self.model = model or FusionModel.load(model_path(store))
        self._convex: Retriever | None = None
        if self.model.kind == "convex":
            a, m, b = self.model.weights
            convex = registered("hybrid-prf")  # citewise.retrieval.convex.ConvexRetriever
            self._convex = convex(store, embedder, alpha=a, prf_chunks=int(m), prf_beta=b)

    def search(
        self, query: str, k: int = 10, *, principal: Principal | None = None, filters: Filters | None = None
    ) -> list[Hit]:
        if self._convex is not None:
            return [
                dataclasses.replace(h, stage="tuned")
                for h in self._convex.search(query, k, principal=principal, filters=filters)
            ]
        f = effective_filters(principal, filters)
        if not query.strip():
            return []
        pool = candidate_pool(self.store, self.embedder, query, f, max(POOL, k))
        scores = self.model.score(pool.X)
        order = sorted(range(len(pool.ids)), key=lambda i: (-scores[i], pool.ids[i]))[:k]
        return [
            Hit(pool.ids[i], pool.docs[i], float(scores[i]), r, "tuned", pool.titles[i])
            for r, i in enumerate(order, start=1)
        ]
