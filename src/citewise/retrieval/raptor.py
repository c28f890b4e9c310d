"""RAPTOR: a tree of cluster summaries over the chunks (Sarthi et al., ICLR 2024, "RAPTOR:
Recursive Abstractive Processing for Tree-Organized Retrieval"), built offline and per permission
group.

**Build** (per group set, see below): the leaves are the chunks with their stored embeddings.
Each level reduces the current nodes' embeddings with UMAP (umap-learn; cosine metric,
``n_neighbors = sqrt(n - 1)`` and ``min(10, n - 2)`` dimensions, as the paper's code does), fits
Gaussian mixtures (scikit-learn, full covariance, seeded) for cluster counts on the grid
:data:`K_GRID` and keeps the count with the lowest BIC, then assigns every node to each cluster
whose posterior is above :data:`SOFT_THRESHOLD` (soft clustering: a node may sit in several
clusters; at least in its most likely one). Each cluster becomes a parent whose text is an
extractive summary of its members (central sentences, :func:`citewise.retrieval.hierarchical.
extractive_summary`) and whose vector is that summary re-embedded. Levels repeat until at most
:data:`TOP` nodes remain, a level stops shrinking, or :data:`MAX_LEVELS` is reached. The paper
also re-clusters inside each global cluster; this build keeps the global step only.

**Permissions: one tree per group set.** Documents are partitioned by their exact permission
groups and each part gets its own tree; a summary node carries its part's groups. So a summary
never mixes text of documents with different visibility, and a principal sees a node exactly when
they may read every document under it (same groups, same "any group matches" rule as the store).
The alternative — one tree over everything with each node carrying the intersection of its
children's visibility — would make mixed nodes visible to fewer principals than their own text
warrants and hide summaries of public text from everyone outside the intersection; per-group
trees cost a few more nodes and keep every principal's view complete.

**Incremental.** The tree stores each document's content hash. When documents change, their old
leaves are removed from the level-1 nodes, their new leaves join the level-1 node whose vector is
closest (cosine), and only the nodes on those branches (those level-1 nodes and their ancestors)
are re-summarised and re-embedded; when more than half of a group's documents changed, or the
group is new, that group's tree is rebuilt. ``RaptorIndex.refresh`` returns what it rebuilt.

**Retrieval.** ``raptor-collapsed`` is the paper's collapsed tree (SEARCH-RAPTOR-COLLAPSED in
the indexing design document): the leaves and every summary node the principal may read form one
pool ranked by cosine with the query, and the top-k may mix summaries with leaves
(:meth:`RaptorCollapsedRetriever.pool`). A summary hit *cites the leaves under it*; as chunk hits
(the ``Retriever`` seam) a summary stands for those leaves, the ones the hybrid ranking holds
first (stage ``raptor-summary``), a leaf for itself (stage ``raptor``). ``raptor-tree``: tree traversal — the ``width`` best visible top nodes,
then the ``width`` best of their children at each level down to level 1; chunks under the chosen
level-1 nodes are ranked by hybrid retrieval restricted to their documents. Both fill from the
flat hybrid list so the top-k stays full; with an ``as_of`` / ``version`` filter (the tree holds
current versions only) both are plain hybrid.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, cast

import numpy as np

from citewise.core import CitewiseError, Filters, Hit, Principal
from citewise.models.embedding import Embedder
from citewise.retrieval.hierarchical import DocLevel, doc_chunks, document_sentences, extractive_summary
from citewise.retrieval.registry import register
from citewise.retrieval.retrievers import HybridRetriever, effective_filters
from citewise.store.base import ScoredChunk, Store, StoredChunk
from citewise.store.derived import FolderTrees, TreeEntry, TreeNodeEntry, TreeTable, trees_of

#: Cluster counts tried per level (a geometric grid up to the paper's maximum of 50).
K_GRID = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 50)
#: Posterior above which a node also belongs to a cluster (the paper's threshold).
SOFT_THRESHOLD = 0.1
#: Stop when a level has at most this many nodes; never more levels than MAX_LEVELS.
TOP = 4
MAX_LEVELS = 4
SUMMARY_SENTENCES, SUMMARY_WORDS = 5, 120
TREE_WIDTH = 3
SEED = 42


@dataclass
class Node:
    """A summary node: ``level`` >= 1; ``children`` are chunk ids (level 1) or node ids;
    ``leaves`` every chunk id under it; ``groups`` its permission groups."""

    id: str
    level: int
    children: list[str]
    leaves: list[str]
    summary: str
    groups: tuple[str, ...]


@dataclass
class GroupTree:
    """The tree of one group set: nodes by id, their vectors, and the content hash per document."""

    groups: tuple[str, ...]
    nodes: dict[str, Node] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    doc_hashes: dict[str, str] = field(default_factory=dict)
    leaf_doc: dict[str, str] = field(default_factory=dict)


def _key(groups: tuple[str, ...]) -> str:
    return hashlib.sha1(("\x1f".join(groups)).encode()).hexdigest()[:10]


def soft_clusters(X: np.ndarray, seed: int = SEED) -> list[list[int]]:
    """Soft clusters of the rows of ``X`` (UMAP, then the BIC-best Gaussian mixture; module
    docstring): a list of member index lists, each non-empty, every row in at least one."""
    n = len(X)
    if n <= 2:
        return [list(range(n))]
    try:
        import umap
        from sklearn.mixture import GaussianMixture
    except ImportError:
        raise CitewiseError("RAPTOR needs umap-learn and scikit-learn: pip install 'citewise[raptor]'") from None

    dim = max(1, min(10, n - 2))
    reduced = umap.UMAP(
        n_neighbors=max(2, int(math.sqrt(n - 1))),
        n_components=dim,
        metric="cosine",
        random_state=seed,
        init="random" if n < 30 else "spectral",
        n_jobs=1,
    ).fit_transform(X)
    best = None
    for k in K_GRID:
        if k > n - 1:
            break
        try:  # reg_covar above sklearn's 1e-6: UMAP can collapse points onto each other
            gm = GaussianMixture(n_components=k, random_state=seed, reg_covar=1e-4).fit(reduced.astype(np.float64))
        except ValueError:  # a component still degenerate at this k: try the next one
            continue
        bic = gm.bic(reduced.astype(np.float64))
        if best is None or bic < best[0]:
            best = (bic, gm)
    if best is None:
        return [list(range(n))]
    probs = best[1].predict_proba(reduced.astype(np.float64))
    members: list[list[int]] = [[] for _ in range(probs.shape[1])]
    for i, row in enumerate(probs):
        for c in set(np.flatnonzero(row > SOFT_THRESHOLD).tolist()) | {int(row.argmax())}:
            members[c].append(i)
    return [m for m in members if m]


class RaptorIndex:
    """The RAPTOR trees of one index, one per group set, kept by the store
    (:func:`citewise.store.derived.trees_of`: files in ``<index>/raptor/`` beside the embedded
    store, tables of a PostgreSQL store).

    Args:
        table: the store's tree table (a folder path is read as ``<index>/raptor``); embedder:
            the index's embedder (summaries are re-embedded).
    """

    def __init__(self, table: TreeTable | str | Path, embedder: Embedder):
        self.table: TreeTable = FolderTrees(table) if isinstance(table, (str, Path)) else table
        self.embedder = embedder
        self.trees: dict[str, GroupTree] = {}
        self.last_build: dict[str, float] = {}
        self._load()

    # -- persistence --------------------------------------------------------------------------
    def _load(self) -> None:
        got = self.table.load(self.embedder.name)
        if got is None:
            return
        stored, vecs = got
        try:
            for key, t in stored.items():
                tree = GroupTree(tuple(t["groups"]), doc_hashes=dict(t["doc_hashes"]), leaf_doc=dict(t["leaf_doc"]))
                for nd in t["nodes"]:
                    node = Node(
                        nd["id"],
                        nd["level"],
                        list(nd["children"]),
                        list(nd["leaves"]),
                        nd["summary"],
                        tuple(nd["groups"]),
                    )
                    tree.nodes[node.id] = node
                    tree.vectors[node.id] = vecs[nd["id"]]
                self.trees[key] = tree
        except (KeyError, TypeError):
            self.trees = {}

    def save(self) -> None:
        """Replace the stored trees (nodes in id order per tree)."""
        trees: dict[str, TreeEntry] = {
            key: {
                "groups": list(tree.groups),
                "doc_hashes": tree.doc_hashes,
                "leaf_doc": tree.leaf_doc,
                "nodes": [cast(TreeNodeEntry, dataclasses.asdict(tree.nodes[nid])) for nid in sorted(tree.nodes)],
            }
            for key, tree in sorted(self.trees.items())
        }
        vectors = {nid: tree.vectors[nid] for tree in self.trees.values() for nid in tree.nodes}
        self.table.save(self.embedder.name, trees, vectors)

    # -- building -----------------------------------------------------------------------------
    def refresh(self, store: Store, seed: int = SEED) -> dict[str, float]:
        """Bring every group's tree up to date with ``store`` (module docstring, "Incremental").

        Returns:
            ``{"rebuilt_groups", "patched_groups", "nodes_resummarised", "nodes", "levels",
            "seconds"}``.
        """
        t0 = time.perf_counter()
        docs = {d: e for d, e in store.documents().items() if "@" not in d}
        by_groups: dict[tuple[str, ...], dict[str, str]] = {}
        for d, e in docs.items():
            by_groups.setdefault(tuple(sorted(e.groups)), {})[d] = e.content_hash
        stats: dict[str, float] = {"rebuilt_groups": 0, "patched_groups": 0, "nodes_resummarised": 0}
        wanted = {_key(g): g for g in by_groups}
        changed = False
        for key in [k for k in self.trees if k not in wanted]:
            del self.trees[key]
            changed = True
        chunk_ids: dict[str, list[str]] | None = None
        idf: Callable[[str], float] | None = None
        for key, groups in sorted(wanted.items()):
            hashes = by_groups[groups]
            tree = self.trees.get(key)
            dirty = sorted(
                d
                for d in set(hashes) | set(tree.doc_hashes if tree else {})
                if (tree.doc_hashes.get(d) if tree else None) != hashes.get(d)
            )
            if tree is not None and not dirty:
                continue
            changed = True
            if chunk_ids is None:
                chunk_ids = doc_chunks(store)
                idf, _ = DocLevel._read(store, chunk_ids, set())
            assert idf is not None  # read with chunk_ids, on the first group that needs them
            if tree is None or len(dirty) * 2 > max(len(hashes), 1):
                self.trees[key] = self._build(store, groups, hashes, chunk_ids, idf, seed)
                stats["rebuilt_groups"] += 1
                stats["nodes_resummarised"] += len(self.trees[key].nodes)
            else:
                stats["nodes_resummarised"] += self._patch(store, tree, hashes, dirty, chunk_ids, idf)
                stats["patched_groups"] += 1
        if changed or not self.table.exists():
            self.save()
        stats["nodes"] = sum(len(t.nodes) for t in self.trees.values())
        stats["levels"] = max((n.level for t in self.trees.values() for n in t.nodes.values()), default=0)
        stats["seconds"] = round(time.perf_counter() - t0, 2)
        self.last_build = stats
        return stats

    def _leaf_texts(self, store: Store, ids: list[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for b in range(0, len(ids), 500):
            for cid, sc in store.get_chunks(ids[b : b + 500]).items():
                out[cid] = document_sentences([sc])
        return out

    def _summarise(self, sentences: list[str], idf: Callable[[str], float]) -> str:
        return extractive_summary(sentences, idf, n=SUMMARY_SENTENCES, max_words=SUMMARY_WORDS)

    def _build(
        self,
        store: Store,
        groups: tuple[str, ...],
        hashes: dict[str, str],
        chunk_ids: dict[str, list[str]],
        idf: Callable[[str], float],
        seed: int,
    ) -> GroupTree:
        tree = GroupTree(groups, doc_hashes=dict(hashes))
        leaves = [c for d in sorted(hashes) for c in chunk_ids.get(d, [])]
        tree.leaf_doc = {c: d for d in sorted(hashes) for c in chunk_ids.get(d, [])}
        if not leaves:
            return tree
        vec = store.get_vectors(leaves)
        leaves = [c for c in leaves if c in vec]
        texts = self._leaf_texts(store, leaves)
        level_ids = leaves
        level_vecs = np.stack([vec[c] for c in leaves])
        level_sents = {c: texts.get(c, []) for c in leaves}
        level_leaves = {c: [c] for c in leaves}
        for level in range(1, MAX_LEVELS + 1):
            clusters = soft_clusters(level_vecs, seed) if len(level_ids) > TOP else [list(range(len(level_ids)))]
            new_ids: list[str] = []
            summaries: list[str] = []
            sents: dict[str, list[str]] = {}
            leafs: dict[str, list[str]] = {}
            for ci, members in enumerate(clusters):
                nid = f"{_key(groups)}-L{level}-{ci}"
                kids = [level_ids[i] for i in members]
                s = [x for k in kids for x in level_sents[k]]
                summary = self._summarise(s, idf)
                lv = sorted({leaf for k in kids for leaf in level_leaves[k]})
                tree.nodes[nid] = Node(nid, level, kids, lv, summary, groups)
                new_ids.append(nid)
                summaries.append(summary or " ")
                sents[nid] = [summary] if summary else []
                leafs[nid] = lv
            embedded = np.asarray(self.embedder.embed(summaries), dtype=np.float32)
            for nid, v in zip(new_ids, embedded):
                tree.vectors[nid] = v
            if len(new_ids) >= len(level_ids) or len(new_ids) <= TOP:
                break
            level_ids, level_vecs, level_sents, level_leaves = new_ids, embedded, sents, leafs
        return tree

    def _patch(
        self,
        store: Store,
        tree: GroupTree,
        hashes: dict[str, str],
        dirty: list[str],
        chunk_ids: dict[str, list[str]],
        idf: Callable[[str], float],
    ) -> int:
        """Move the dirty documents' leaves and re-summarise their branches; returns nodes redone."""
        gone = {c for c, d in tree.leaf_doc.items() if d in set(dirty)}
        new = [c for d in dirty if d in hashes for c in chunk_ids.get(d, [])]
        vec = store.get_vectors(new)
        new = [c for c in new if c in vec]
        level1 = [n for n in tree.nodes.values() if n.level == 1]
        touched: set[str] = set()
        for n in level1:
            if gone & set(n.children):
                n.children = [c for c in n.children if c not in gone]
                touched.add(n.id)
        if level1:
            M = np.stack([tree.vectors[n.id] for n in level1])
            for c in new:
                best = level1[int(np.argmax(M @ vec[c]))]
                best.children.append(c)
                touched.add(best.id)
        for c in gone:
            tree.leaf_doc.pop(c, None)
        for d in dirty:
            if d in hashes:
                for c in chunk_ids.get(d, []):
                    tree.leaf_doc[c] = d
        # ancestors of touched nodes
        parents: dict[str, list[str]] = {}
        for n in tree.nodes.values():
            for ch in n.children:
                parents.setdefault(ch, []).append(n.id)
        frontier, redo = list(touched), set(touched)
        while frontier:
            nid = frontier.pop()
            for p in parents.get(nid, []):
                if p not in redo:
                    redo.add(p)
                    frontier.append(p)
        texts = self._leaf_texts(
            store, sorted({c for nid in redo if tree.nodes[nid].level == 1 for c in tree.nodes[nid].children})
        )
        order = sorted(redo, key=lambda i: (tree.nodes[i].level, i))
        for nid in [i for i in order if not tree.nodes[i].children]:
            del tree.nodes[nid]
            tree.vectors.pop(nid, None)
        order = [i for i in order if i in tree.nodes]
        for nid in order:  # bottom-up: a parent reads its children's new summaries
            n = tree.nodes[nid]
            n.children = [c for c in n.children if n.level == 1 or c in tree.nodes]
            if n.level == 1:
                s = [x for c in n.children for x in texts.get(c, [])]
                n.leaves = sorted(n.children)
            else:
                s = [tree.nodes[c].summary for c in n.children if tree.nodes[c].summary]
                n.leaves = sorted({leaf for c in n.children for leaf in tree.nodes[c].leaves})
            n.summary = self._summarise(s, idf)
        if order:
            vecs = self.embedder.embed([tree.nodes[i].summary or " " for i in order])
            for nid, v in zip(order, np.asarray(vecs, dtype=np.float32)):
                tree.vectors[nid] = v
        tree.doc_hashes = dict(hashes)
        return len(order)

    # -- search -------------------------------------------------------------------------------
    def visible(self, groups: tuple[str, ...] | None) -> list[GroupTree]:
        """Trees a principal with ``groups`` may read (None: all)."""
        g = None if groups is None else set(groups)
        return [t for _, t in sorted(self.trees.items()) if g is None or g & set(t.groups)]


_INDEXES: dict[tuple[str, str], RaptorIndex] = {}


def raptor_for(store: Store, embedder: Embedder) -> RaptorIndex:
    """The (refreshed) RAPTOR trees of ``store``'s index, cached per process.

    Raises:
        CitewiseError: the store keeps no trees (:func:`citewise.store.derived.trees_of`).
    """
    from citewise.retrieval.hierarchical import base_embedder

    table = trees_of(store)
    base = base_embedder(embedder)
    key = (table.where, base.name)
    if key not in _INDEXES:
        _INDEXES[key] = RaptorIndex(table, base)
    _INDEXES[key].refresh(store)
    return _INDEXES[key]


class _RaptorBase:
    def __init__(self, store: Store, embedder: Embedder, width: int = TREE_WIDTH):
        self.store = store
        self.embedder = embedder
        self.index = raptor_for(store, embedder)
        self.hybrid = HybridRetriever(store, embedder)
        self.width = width

    def _finish(self, ranked: list[Hit], query: str, k: int, f: Filters) -> list[Hit]:
        if len(ranked) < k:
            seen = {h.chunk_id for h in ranked}
            ranked += [
                Hit(c.chunk_id, c.doc_id, c.score, 0, "rrf", c.title)
                for c in self.hybrid.fused(query, k, f)
                if c.chunk_id not in seen
            ]
        return [dataclasses.replace(h, rank=i) for i, h in enumerate(ranked[:k], start=1)]


@dataclass(frozen=True)
class PoolHit:
    """One hit of the collapsed tree: a leaf chunk (``level`` 0) or a summary node.

    Attributes:
        node_id: the chunk id (leaf) or the node id (summary).
        level: 0 for a leaf, the tree level for a summary.
        score: cosine with the query.
        text: the summary's text ('' for a leaf: it is the chunk's stored text).
        cites: the chunk ids the hit stands for: the leaf itself, or every leaf under the summary
            the principal may read (sorted).
    """

    node_id: str
    level: int
    score: float
    text: str
    cites: tuple[str, ...]


@register("raptor-collapsed")
class RaptorCollapsedRetriever(_RaptorBase):
    """``raptor-collapsed``: the paper's collapsed tree (module docstring).

    :meth:`pool` ranks one pool of leaves and summaries by cosine (SEARCH-RAPTOR-COLLAPSED);
    :meth:`search` is that ranking as chunk hits, each summary standing for the leaves it cites.
    """

    name = "raptor-collapsed"

    def pool(
        self, query: str, k: int = 10, *, principal: Principal | None = None, filters: Filters | None = None
    ) -> list[PoolHit]:
        """The top-``k`` of every visible leaf and summary node by cosine with ``query``.

        Leaves come from the store's vector search (the top ``k`` leaves by cosine, permission
        filters applied in the search), summaries from the visible trees; the union is ranked by
        cosine, ties by id. A summary cites the leaves under it that pass ``filters.doc_ids``; a
        summary left with none is skipped.
        """
        f = effective_filters(principal, filters)
        if not query.strip():
            return []
        q = self.embedder.embed([query])[0]
        leaves = [PoolHit(c.chunk_id, 0, float(c.score), "", (c.chunk_id,)) for c in self.store.vector_search(q, k, f)]
        if f.as_of is not None or f.version is not None or f.metadata:  # the trees hold current versions only
            return leaves[:k]
        allowed = None if f.doc_ids is None else set(f.doc_ids)
        nodes: list[PoolHit] = []
        for t in self.index.visible(f.groups):
            for n in t.nodes.values():
                cites = tuple(c for c in n.leaves if allowed is None or t.leaf_doc.get(c) in allowed)
                if cites:
                    nodes.append(PoolHit(n.id, n.level, float(t.vectors[n.id] @ q), n.summary, cites))
        ranked = sorted(leaves + nodes, key=lambda h: (-h.score, h.node_id))
        return ranked[:k]

    def search(
        self, query: str, k: int = 10, *, principal: Principal | None = None, filters: Filters | None = None
    ) -> list[Hit]:
        f = effective_filters(principal, filters)
        if not query.strip():
            return []
        found = self.pool(query, k, principal=principal, filters=filters)
        chunks = self.hybrid.fused(query, max(k, 50), f)
        order = {c.chunk_id: i for i, c in enumerate(chunks)}
        out: list[Hit] = []
        seen: set[str] = set()
        for h in found:
            # a summary stands for its leaves: those the hybrid ranking holds first, in its order
            cites = sorted(h.cites, key=lambda c: (order.get(c, len(order)), c)) if h.level else list(h.cites)
            for c in cites:
                if c not in seen and len(out) < k:
                    seen.add(c)
                    out.append(Hit(c, "", h.score, 0, "raptor-summary" if h.level else "raptor"))
        info: dict[str, ScoredChunk | StoredChunk] = {c.chunk_id: c for c in chunks}
        missing = [h.chunk_id for h in out if h.chunk_id not in info]
        if missing:
            info.update(self.store.get_chunks(missing))
        hits = [
            dataclasses.replace(h, doc_id=info[h.chunk_id].doc_id, title=info[h.chunk_id].title)
            for h in out
            if h.chunk_id in info
        ]
        return self._finish(hits, query, k, f)


@register("raptor-tree")
class RaptorTreeRetriever(_RaptorBase):
    """``raptor-tree``: top-down traversal, ``width`` nodes per level (module docstring)."""

    name = "raptor-tree"

    def search(
        self, query: str, k: int = 10, *, principal: Principal | None = None, filters: Filters | None = None
    ) -> list[Hit]:
        f = effective_filters(principal, filters)
        if not query.strip():
            return []
        if f.as_of is not None or f.version is not None or f.metadata:
            return self._finish([], query, k, f)
        q = self.embedder.embed([query])[0]
        chosen_leaves: set[str] = set()
        docs: set[str] = set()
        for t in self.index.visible(f.groups):
            if not t.nodes:
                continue
            top = max(n.level for n in t.nodes.values())
            layer = [n for n in t.nodes.values() if n.level == top]
            while True:
                layer = sorted(layer, key=lambda n: (-float(t.vectors[n.id] @ q), n.id))[: self.width]
                if layer[0].level == 1:
                    break
                layer = [t.nodes[c] for n in layer for c in n.children if c in t.nodes]
                if not layer:
                    break
            for n in layer:
                chosen_leaves.update(n.leaves)
                docs.update(t.leaf_doc[c] for c in n.leaves if c in t.leaf_doc)
        if f.doc_ids is not None:
            docs &= set(f.doc_ids)
        hits: list[Hit] = []
        if docs:
            inner = dataclasses.replace(f, doc_ids=tuple(sorted(docs)))
            hits = [
                Hit(c.chunk_id, c.doc_id, c.score, 0, "raptor", c.title)
                for c in self.hybrid.fused(query, k, inner)
                if c.chunk_id in chosen_leaves
            ]
        return self._finish(hits, query, k, f)
