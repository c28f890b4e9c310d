"""Store + retrievers on small corpora where the right answer is known (hashing embedder)."""

from __future__ import annotations

import pytest

from citewise.core import CitewiseError, Filters, Principal
from citewise.index import Index
from citewise.retrieval.fusion import reciprocal_rank_fusion

from conftest import open_minilm_index, write_doc

RETRIEVERS = ["bm25", "dense", "hybrid", "shipped"]


def test_rrf_hand_computed():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a", "d"]], k=60)
    # a: 1/61 + 1/62, c: 1/63 + 1/61, b: 1/62, d: 1/63
    assert [d for d, _ in fused] == ["a", "c", "b", "d"]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62, abs=1e-15)
    assert fused[1][1] == pytest.approx(1 / 63 + 1 / 61, abs=1e-15)


def test_rrf_ties_break_by_id_and_duplicates_count_once():
    fused = reciprocal_rank_fusion([["z", "z", "y"], ["y", "z"]], k=60)
    # z: 1/61 + 1/62, y: 1/62 + 1/61 -> tie, id ascending
    assert [d for d, _ in fused] == ["y", "z"]
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"]], k=0)


@pytest.fixture()
def corpus(tmp_path):
    root = tmp_path / "docs"
    write_doc(
        root,
        "errors/E-1004.md",
        "E-1004: Invoice currency mismatch",
        "## What it means\nThe invoice currency differs from the billing currency of the customer.\n\n"
        "## How to fix it\nChange the currency on the draft invoice, then finalise it again.",
    )
    for i in range(4):
        write_doc(
            root,
            f"release-notes/v4.{i}.md",
            f"Ledgerly 4.{i} release notes",
            f"## Fixed\nFixed E-1004 E-1004 shown on bulk import {i}. Another E-1004 fix for imports.",
        )
    write_doc(
        root,
        "help/refunds-pro.md",
        "Refunds on the Pro plan",
        "## Rule\nPro customers can request a refund within 30 days of payment.\n\n"
        "## Exceptions\nAnnual prepaid plans are refunded pro rata.",
        updated="2026-01-10",
        version="3",
    )
    write_doc(
        root,
        "help/okta.md",
        "Okta single sign-on",
        "Configure the ACS URL and entity ID in Okta. SCIM provisioning syncs groups.",
    )
    # restricted documents that match a refund query better than any public one
    for i in range(12):
        write_doc(
            root,
            f"internal/refund-approval-{i}.md",
            f"Refund approval matrix {i}",
            f"Refund approval refund refund approvals above {1000 * (i + 1)} USD need the finance lead.",
            permissions=["finance"],
        )
    idx = Index.open(tmp_path / "index", embedder="hashing")
    report = idx.ingest(root)
    assert report.errors == [] and report.added == 19
    return idx, root


@pytest.mark.parametrize("name", RETRIEVERS)
def test_each_retriever_finds_the_known_document(corpus, name):
    idx, _ = corpus
    hits = idx.search("okta scim provisioning entity id", 3, retriever=name)
    assert hits[0].doc_id == "help/okta"
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))


def test_pinning_puts_the_titled_page_first(corpus):
    idx, _ = corpus
    bm25 = idx.search("E-1004", 5, retriever="bm25")
    assert bm25[0].doc_id.startswith("release-notes/")  # mentions outrank the page lexically
    shipped = idx.search("what does E-1004 mean", 5, retriever="shipped")
    assert shipped[0].doc_id == "errors/E-1004" and shipped[0].stage == "pinned"
    assert len(shipped) == 5
    assert len({h.chunk_id for h in shipped}) == 5


def test_a_release_number_with_its_cue_word_pins_the_page_titled_with_it(corpus):
    """ "What changed in version 6.5?" over the sample release notes ranked 6.8, 4.7 and 6.5
    (dense knows no numbers, fusion halved BM25's first place); titles "Ledgerly 4.2 release
    notes" and queries "version 4.2" / "release 4.2" / "v4.2" now name the identifier 4.2."""
    idx, _ = corpus
    for q in ("what changed in version 4.2", "release 4.2 fixes", "v4.2 notes"):
        hits = idx.search(q, 5, retriever="shipped")
        assert (hits[0].doc_id, hits[0].stage) == ("release-notes/v4.2", "pinned"), q
        assert [h.stage for h in hits].count("pinned") == 1, q
    # a bare number is no identifier: nothing pinned
    assert all(h.stage != "pinned" for h in idx.search("a fee of 4.2 percent", 5, retriever="shipped"))


def test_an_index_written_before_release_number_identifiers_reingests_those_titles(tmp_path, monkeypatch):
    """Titles' identifiers are stored at ingest; an index from before release numbers counted
    ingests the documents whose title names one again (text unchanged), and only those."""
    import citewise.store.lance as lance
    from citewise.text.analyzer import IDENTIFIER, fold

    root = tmp_path / "docs"
    write_doc(root, "notes/v6.5.md", "Ledgerly 6.5 release notes", "Webhook events can be replayed.")
    write_doc(root, "notes/v6.6.md", "Ledgerly 6.6 release notes", "Exports show a warning.")
    write_doc(root, "errors/E-1004.md", "E-1004: Invoice currency mismatch", "The currencies differ.")
    idx = Index.open(tmp_path / "index", embedder="hashing")
    monkeypatch.setattr(
        lance.writes,
        "find_identifiers",
        lambda t: list(dict.fromkeys(fold(m.group(0)) for m in IDENTIFIER.finditer(t))),
    )
    assert idx.ingest(root).added == 3
    assert all(h.stage != "pinned" for h in idx.search("what changed in version 6.5", 3, retriever="shipped"))
    monkeypatch.undo()
    report = idx.ingest(root)
    assert (report.updated, sorted(report.updated_docs), report.unchanged) == (2, ["notes/v6.5", "notes/v6.6"], 1)
    assert idx.search("what changed in version 6.5", 3, retriever="shipped")[0].stage == "pinned"
    assert (idx.ingest(root).updated, idx.ingest(root).unchanged) == (0, 3)


def test_mentions_elsewhere_do_not_pin(corpus):
    idx, _ = corpus
    hits = idx.search("E-2002 refund", 5, retriever="shipped")
    assert all(h.stage != "pinned" for h in hits)


@pytest.mark.parametrize("name", RETRIEVERS)
def test_permission_filter_is_inside_the_query_and_k_stays_full(corpus, name):
    idx, _ = corpus
    anon = idx.search("refund approval refund", 5, retriever=name)
    assert len(anon) == 5 if name != "bm25" else len(anon) >= 1
    assert not any(h.doc_id.startswith("internal/") for h in anon)
    finance = idx.search("refund approval refund", 5, retriever=name, principal=Principal("f", ("finance",)))
    assert len(finance) == 5 and all(h.doc_id.startswith("internal/") for h in finance)


def test_bm25_returns_every_matching_public_chunk_under_filter(corpus):
    idx, _ = corpus
    # 13 chunks contain 'refund'; 12 are restricted: the public one must still come back
    hits = idx.search("refund", 10, retriever="bm25")
    assert [h.doc_id for h in hits] == ["help/refunds-pro"]


def test_explicit_filters_narrow_but_never_widen(corpus):
    idx, _ = corpus
    hits = idx.search("refund", 10, retriever="hybrid", filters=Filters(groups=("finance",)))
    assert hits == []  # the anonymous principal is not in finance
    hits = idx.search("refund", 10, retriever="hybrid", filters=Filters(doc_ids=("help/okta",)))
    assert {h.doc_id for h in hits} == {"help/okta"}
    hits = idx.search("refund", 10, retriever="dense", filters=Filters(as_of=__import__("datetime").date(2025, 1, 1)))
    assert "help/refunds-pro" not in {h.doc_id for h in hits}


def test_reingest_unchanged_embeds_nothing_and_edit_reembeds_one(corpus):
    idx, root = corpus
    again = idx.ingest(root)
    assert (again.unchanged, again.chunks_embedded, again.added, again.updated) == (19, 0, 0, 0)
    write_doc(root, "help/okta.md", "Okta single sign-on", "Now mentions azure federation only.")
    edit = idx.ingest(root)
    assert (edit.updated, edit.unchanged, edit.chunks_embedded) == (1, 18, 1)
    assert idx.search("azure federation", 1, retriever="bm25")[0].doc_id == "help/okta"
    assert idx.search("scim provisioning", 3, retriever="bm25") == [] or all(
        h.doc_id != "help/okta" for h in idx.search("scim provisioning", 3, retriever="bm25")
    )


@pytest.mark.parametrize("name", RETRIEVERS)
def test_deleted_file_leaves_every_retriever(corpus, name):
    idx, root = corpus
    (root / "help" / "okta.md").unlink()
    report = idx.ingest(root)
    assert report.deleted == 1
    assert all(h.doc_id != "help/okta" for h in idx.search("okta scim provisioning entity id", 10, retriever=name))
    assert "help/okta" not in idx.store.documents()


def test_failed_file_keeps_its_previous_version(corpus):
    idx, root = corpus
    (root / "help" / "okta.md").write_bytes(b"\x00broken")
    report = idx.ingest(root)
    assert report.deleted == 0 and any("okta.md" in e for e in report.errors)
    assert idx.search("okta scim", 1, retriever="bm25")[0].doc_id == "help/okta"


def test_chunks_carry_metadata_and_offsets(corpus):
    idx, root = corpus
    hit = idx.search("refund within 30 days", 1, retriever="bm25")[0]
    c = idx.store.get_chunks([hit.chunk_id])[hit.chunk_id]
    assert (c.doc_id, c.title, c.version, c.updated, c.groups) == (
        "help/refunds-pro",
        "Refunds on the Pro plan",
        "3",
        "2026-01-10",
        ("public",),
    )
    raw = (root / "help" / "refunds-pro.md").read_text()
    assert raw[c.start : c.end] == c.text


def test_index_refuses_another_embedder(corpus, tmp_path):
    with pytest.raises(CitewiseError, match="built with embedder 'hashing'"):
        open_minilm_index(tmp_path / "index")


def test_deny_default_hides_documents_without_permissions(tmp_path):
    write_doc(tmp_path / "d", "a.md", "Alpha", "alpha text about invoices")
    idx = Index.open(tmp_path / "i", embedder="hashing", default_permission="deny")
    idx.ingest(tmp_path / "d")
    assert idx.search("invoices", 5, retriever="bm25") == []


def test_unicode_dash_identifier_is_found_and_pinned(tmp_path):
    """Issue 10.8: a title written with a non-breaking hyphen (E‑1004) is found and pinned for the
    ASCII query E-1004, and an ASCII title for a query typed with an en dash."""
    root = tmp_path / "docs"
    write_doc(
        root,
        "errors/e1004.md",
        "E\u20111004: Invoice currency mismatch",
        "The invoice currency differs from the billing currency of the customer.",
    )
    write_doc(root, "errors/e1005.md", "E-1005: Tax ID missing", "The customer has no tax ID on file.")
    for i in range(3):
        write_doc(root, f"notes/n{i}.md", f"Release notes {i}", f"Fixed E-1004 E-1004 on import {i}. E-1005 too.")
    idx = Index.open(tmp_path / "index", embedder="hashing")
    assert idx.ingest(root).errors == []
    bm25 = idx.search("E-1004", 10, retriever="bm25")
    assert "errors/e1004" in {h.doc_id for h in bm25}  # the title's E‑1004 is the term e-1004
    shipped = idx.search("what does E-1004 mean", 3, retriever="shipped")
    assert shipped[0].doc_id == "errors/e1004" and shipped[0].stage == "pinned"
    shipped = idx.search("what does E\u20131005 mean", 3, retriever="shipped")
    assert shipped[0].doc_id == "errors/e1005" and shipped[0].stage == "pinned"


def test_cjk_query_finds_cjk_sentence_with_bm25(tmp_path):
    """Issue 10.9: `退款` (refund) finds a sentence that writes it inside one unspaced run."""
    root = tmp_path / "docs"
    write_doc(root, "zh/refunds.md", "退款政策", "申请退款需要主管批准。")
    write_doc(root, "zh/invoices.md", "发票", "发票每月自动生成并发送给客户。")
    write_doc(root, "en/refunds.md", "Refunds", "Refunds need a manager's approval.")
    idx = Index.open(tmp_path / "index", embedder="hashing")
    assert idx.ingest(root).errors == []
    hits = idx.search("退款", 5, retriever="bm25")
    assert [h.doc_id for h in hits] == ["zh/refunds"]
    hits = idx.search("主管批准", 5, retriever="bm25")
    assert hits and hits[0].doc_id == "zh/refunds"
