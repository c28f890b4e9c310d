"""RAPTOR: soft clustering finds separated groups, trees are built per permission group (no
restricted word reaches a node others can see), incremental refresh redoes only the affected
branch, and both retrieval modes keep the top-k full without leaks."""

from __future__ import annotations

import numpy as np
import pytest

from citewise.core import Principal
from citewise.index import Index
from citewise.retrieval import raptor
from citewise.retrieval.raptor import RaptorIndex, soft_clusters
from citewise.store.derived import trees_of

from conftest import write_doc

TOPICS = {
    "billing": [
        "Invoices are issued monthly in the account currency.",
        "Refunds are paid to the original card.",
        "Plan upgrades are charged pro rata.",
        "Annual plans renew on the contract date.",
    ],
    "sso": [
        "SAML single sign-on needs the identity provider certificate.",
        "Okta sends the email attribute.",
        "Rotate the signing certificate before it expires.",
        "SCIM provisioning creates the users.",
    ],
    "exports": [
        "CSV exports hold one row per invoice.",
        "The REST API pages through results.",
        "Bulk export jobs run in the background.",
        "Rate limits apply per workspace.",
    ],
}


def test_soft_clusters_separates_well_separated_blobs():
    rng = np.random.default_rng(0)
    centres = np.eye(8)[:3] * 10
    X = np.vstack([c + rng.normal(scale=0.05, size=(12, 8)) for c in centres])
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    clusters = soft_clusters(X)
    # BIC may split a blob (UMAP shows sub-structure in tight blobs) but never mixes two
    assert all(len({i // 12 for i in m}) == 1 for m in clusters), clusters
    assert 3 <= len(clusters) <= 12
    assert set().union(*map(set, clusters)) == set(range(36))  # every node placed


@pytest.fixture(autouse=True)
def small_top(monkeypatch):
    """Stop at 2 nodes (not 4) so the small corpus gets a second level."""
    monkeypatch.setattr(raptor, "TOP", 2)


def by_doc_prefix(X, seed=42):
    """Deterministic stand-in for UMAP + GMM in the incremental test: clusters of 4 in order."""
    return [list(range(i, min(i + 4, len(X)))) for i in range(0, len(X), 4)]


@pytest.fixture()
def corpus(tmp_path):
    root = tmp_path / "docs"
    for topic, sentences in TOPICS.items():
        for i, s in enumerate(sentences):
            write_doc(root, f"{topic}/{i}.md", f"{topic} {i}", f"# {topic} {i}\n\n{s} More about {topic} here.")
    write_doc(
        root,
        "hr/secret.md",
        "Salary bands",
        "# Salary bands\n\nZanzibarite bonuses are paid in March.",
        permissions=["hr"],
    )
    write_doc(
        root, "hr/secret2.md", "Payroll", "# Payroll\n\nPayroll zanzibarite codes are private.", permissions=["hr"]
    )
    idx = Index.open(tmp_path / "index", embedder="hashing")
    assert idx.ingest(root).errors == []
    return idx, root


def test_trees_are_per_group_and_restricted_words_stay_in_their_group(corpus, monkeypatch):
    monkeypatch.setattr(raptor, "soft_clusters", by_doc_prefix)
    idx, _ = corpus
    ri = RaptorIndex(trees_of(idx.store), idx.embedder)
    stats = ri.refresh(idx.store)
    assert stats["rebuilt_groups"] == 2 and stats["nodes"] == sum(len(t.nodes) for t in ri.trees.values())
    groups = {t.groups for t in ri.trees.values()}
    assert groups == {("public",), ("hr",)}
    for t in ri.trees.values():
        for n in t.nodes.values():
            assert n.groups == t.groups
            if "hr" not in n.groups:
                assert "zanzibarite" not in n.summary.lower(), n
    hr_tree = next(t for t in ri.trees.values() if t.groups == ("hr",))
    assert any("zanzibarite" in n.summary.lower() for n in hr_tree.nodes.values())
    public = next(t for t in ri.trees.values() if t.groups == ("public",))
    assert max(n.level for n in public.nodes.values()) == 2  # 12 leaves -> 3 clusters (> TOP 2) -> 1 root
    assert len([n for n in public.nodes.values() if n.level == 1]) == 3
    assert ri.visible(("public",)) == [public]


@pytest.mark.parametrize("name", ["raptor-collapsed", "raptor-tree"])
def test_raptor_retrievers_leak_nothing_and_fill_top_k(corpus, monkeypatch, name):
    monkeypatch.setattr(raptor, "soft_clusters", by_doc_prefix)
    idx, _ = corpus
    anon = idx.search("zanzibarite bonuses payroll", 10, retriever=name)
    assert len(anon) == 10 and not any(h.doc_id.startswith("hr/") for h in anon)
    hr = idx.search("zanzibarite bonuses", 3, retriever=name, principal=Principal("h", ("hr",)))
    assert hr[0].doc_id == "hr/secret" and [h.rank for h in hr] == [1, 2, 3]


def test_incremental_refresh_redoes_only_the_affected_branch(corpus, monkeypatch):
    monkeypatch.setattr(raptor, "soft_clusters", by_doc_prefix)
    idx, root = corpus
    ri = RaptorIndex(trees_of(idx.store), idx.embedder)
    ri.refresh(idx.store)
    public = next(t for t in ri.trees.values() if t.groups == ("public",))
    before = {nid: n.summary for nid, n in public.nodes.items()}
    parent_of = {c: n.id for n in public.nodes.values() if n.level == 1 for c in n.children}
    changed_leaf = next(c for c in parent_of if c.startswith("sso/1#"))
    branch = {parent_of[changed_leaf]} | {n.id for n in public.nodes.values() if n.level == 2}
    write_doc(root, "sso/1.md", "sso 1", "# sso 1\n\nOkta sends the email attribute and the quokka group claim.")
    idx.ingest(root)
    again = RaptorIndex(trees_of(idx.store), idx.embedder)  # as a new process would
    stats = again.refresh(idx.store)
    assert stats["patched_groups"] == 1 and stats["rebuilt_groups"] == 0
    assert stats["nodes_resummarised"] == len(branch) == 2
    public = next(t for t in again.trees.values() if t.groups == ("public",))
    after = {nid: n.summary for nid, n in public.nodes.items()}
    assert {nid for nid in after if after[nid] != before.get(nid)} <= branch
    new_parent = next(n for n in public.nodes.values() if n.level == 1 and changed_leaf in n.children)
    assert new_parent.id in branch and changed_leaf in new_parent.leaves
    assert all(after[nid] == before[nid] for nid in after if nid not in branch)
    # nothing changed: nothing redone
    assert again.refresh(idx.store)["nodes_resummarised"] == 0


def test_summarize_raptor_reports_node_counts(corpus, monkeypatch):
    import json

    from typer.testing import CliRunner

    from citewise.cli import app

    monkeypatch.setattr(raptor, "soft_clusters", by_doc_prefix)
    idx, _ = corpus
    res = CliRunner().invoke(app, ["summarize", "--index", str(idx.path), "--raptor", "--json"])
    assert res.exit_code == 0, res.output
    tree = json.loads(res.output)["raptor"]
    # public: 12 leaves -> 3 level-1 nodes -> 1 root; hr: 2 leaves -> 1 level-1 node
    assert tree["nodes_per_level"] == {"1": 4, "2": 1} and tree["groups"] == 2 and tree["rebuilt_groups"] == 2


def test_collapsed_pool_mixes_summaries_and_leaves_and_a_summary_cites_its_leaves(corpus, monkeypatch):
    """The indexing document's SEARCH-RAPTOR-COLLAPSED: one pool of leaves and summaries by cosine."""
    monkeypatch.setattr(raptor, "soft_clusters", by_doc_prefix)
    idx, _ = corpus
    r = idx.retriever("raptor-collapsed")
    # a general question about billing: the billing cluster's summary (its central sentences are
    # the line every billing page shares) is nearer than any one page
    q = "More about billing here"
    pool = r.pool(q, 5)
    assert (
        pool[0].level >= 1
        and pool[0].text
        and {c.split("#")[0] for c in pool[0].cites} >= {"billing/0", "billing/1", "billing/2", "billing/3"}
    )
    assert any(h.level == 0 for h in pool)  # leaves compete in the same pool
    assert [h.score for h in pool] == sorted((h.score for h in pool), reverse=True)
    hits = r.search(q, 5)
    assert hits[0].stage == "raptor-summary" and hits[0].chunk_id in pool[0].cites
    assert {h.doc_id for h in hits[:3]} <= {"billing/0", "billing/1", "billing/2", "billing/3"}
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5]
    # the hr tree's summaries are not in an anonymous caller's pool; an hr member's pool has them
    secret = "Zanzibarite bonuses are paid in March. Payroll zanzibarite codes are private."
    assert not any("zanzibarite" in h.text.lower() for h in r.pool(secret, 20))
    hr_pool = r.pool(secret, 3, principal=Principal("h", ("hr",)))
    assert hr_pool[0].level >= 1 and all(c.startswith("hr/") for c in hr_pool[0].cites)
    # a doc_ids filter narrows what a summary cites
    only = r.pool(q, 5, filters=__import__("citewise.core", fromlist=["Filters"]).Filters(doc_ids=("billing/1",)))
    assert only and all(c.startswith("billing/1#") for h in only for c in h.cites)
