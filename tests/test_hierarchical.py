"""Hierarchical retrieval: extractive summaries, the document level's refresh (only changed
documents are re-summarised and re-embedded), LLM summaries through the chat client, and search."""

from __future__ import annotations

import json

import numpy as np
import pytest

from citewise.core import Principal
from citewise.index import Index
from citewise.retrieval.hierarchical import EXTRACTIVE_MODEL, DocLevel, extractive_summary, outline_of
from citewise.store.derived import summaries_of

from conftest import write_doc
from fake_openai import FakeOpenAI


def test_extractive_summary_picks_central_sentences_in_document_order():
    s = ["Cats purr.", "Cats and dogs purr loudly.", "Stocks fell."]
    # idf 1: centroid {cat 2, purr 2, and 1, dog 1, loud 1, stock 1, fell 1} (norm sqrt 13);
    # cosines: s1 4/(sqrt2 sqrt13) = 0.784, s2 7/(sqrt5 sqrt13) = 0.868, s3 2/(sqrt2 sqrt13) = 0.392
    assert extractive_summary(s, lambda t: 1.0, n=1) == "Cats and dogs purr loudly."
    assert extractive_summary(s, lambda t: 1.0, n=2) == "Cats purr. Cats and dogs purr loudly."
    # the word budget skips a sentence that does not fit (s1, 2 words, fits after s2's 5; s3 not)
    assert extractive_summary(s, lambda t: 1.0, n=3, max_words=7) == "Cats purr. Cats and dogs purr loudly."
    # a rare term (high idf) pulls the centroid towards its sentence
    assert extractive_summary(s, lambda t: 10.0 if t.startswith("stock") else 1.0, n=1) == "Stocks fell."
    assert extractive_summary([], lambda t: 1.0) == ""


class Chunkish:
    def __init__(self, heading_path):
        self.heading_path = heading_path


def test_outline_keeps_distinct_headings_in_order_without_the_title():
    chunks = [
        Chunkish(("Guide",)),
        Chunkish(("Guide", "Setup")),
        Chunkish(("Guide", "Setup", "Keys")),
        Chunkish(("Guide", "Usage")),
    ]
    assert outline_of(chunks, "Guide") == ("Setup", "Keys", "Usage")


class CountingEmbedder:
    """Wraps an embedder and records how many texts it embedded."""

    def __init__(self, base):
        self.base, self.name, self.dim = base, base.name, base.dim
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        return self.base.embed(texts)


DOCS = {
    "billing/refunds": (
        "Refund guide",
        "# Refund guide\n\nRefunds are paid to the original card.\n\n"
        "## Eligibility\n\nA refund is possible within 30 days of payment. Annual plans are prorated.\n\n"
        "## Approval\n\nRefunds above 5,000 USD need the controller's approval.",
    ),
    "billing/invoices": (
        "Invoices",
        "# Invoices\n\nInvoices are issued on the first day of the month.\n\n"
        "## Numbering\n\nInvoice numbers never repeat. Credit notes get their own series.",
    ),
    "security/sso": (
        "Single sign-on",
        "# Single sign-on\n\nSAML single sign-on needs the identity provider's "
        "certificate.\n\n## Rotation\n\nUpload the new certificate before the old one expires.",
    ),
}


@pytest.fixture()
def small(tmp_path):
    root = tmp_path / "docs"
    for doc, (title, body) in DOCS.items():
        write_doc(root, f"{doc}.md", title, body)
    write_doc(
        root,
        "internal/payroll.md",
        "Payroll",
        "# Payroll\n\nRefunds of salary advances are approved by HR.",
        permissions=["hr"],
    )
    idx = Index.open(tmp_path / "index", embedder="hashing")
    assert idx.ingest(root).errors == []
    return idx, root


def test_refresh_summarises_only_new_and_changed_documents(small):
    idx, root = small
    emb = CountingEmbedder(idx.embedder)
    level = DocLevel(summaries_of(idx.store), emb)
    assert level.refresh(idx.store) == {"added": 4, "updated": 0, "deleted": 0, "unchanged": 0, "documents": 4}
    assert len(emb.texts) == 4
    entry = {e.doc_id: e for e in level.entries}["billing/refunds"]
    assert entry.title == "Refund guide" and entry.outline == ("Eligibility", "Approval")
    assert entry.model == EXTRACTIVE_MODEL
    assert entry.content_hash == idx.store.documents()["billing/refunds"].content_hash
    assert {e.doc_id: e.groups for e in level.entries}["internal/payroll"] == ("hr",)
    # nothing changed: nothing embedded, files not rewritten
    mtime = (level.table.folder / "entries.jsonl").stat().st_mtime_ns
    assert level.refresh(idx.store)["unchanged"] == 4 and len(emb.texts) == 4
    assert (level.table.folder / "entries.jsonl").stat().st_mtime_ns == mtime
    # one document changes, one is deleted: exactly one is re-summarised and re-embedded
    title, body = DOCS["security/sso"]
    write_doc(root, "security/sso.md", title, body + "\n\n## Break-glass\n\nUse the break-glass owner account.")
    (root / "billing/invoices.md").unlink()
    idx.ingest(root)
    reopened = DocLevel(summaries_of(idx.store), emb)  # a new process reads the stored level
    assert [e.doc_id for e in reopened.entries] == [
        "billing/invoices",
        "billing/refunds",
        "internal/payroll",
        "security/sso",
    ]
    assert reopened.refresh(idx.store) == {"added": 0, "updated": 1, "deleted": 1, "unchanged": 2, "documents": 3}
    assert len(emb.texts) == 5 and "Break-glass" in emb.texts[-1]
    sso = {e.doc_id: e for e in reopened.entries}["security/sso"]
    assert sso.content_hash == idx.store.documents()["security/sso"].content_hash
    assert reopened.vectors.shape == (3, idx.embedder.dim)
    np.testing.assert_allclose(
        reopened.vectors[[e.doc_id for e in reopened.entries].index("security/sso")],
        idx.embedder.embed([sso.text])[0],
        atol=1e-6,
    )


def test_hierarchical_search_finds_chunks_inside_the_best_documents(small):
    idx, _ = small
    hits = idx.search("refund approval above 5,000 USD", 3, retriever="hierarchical")
    assert hits[0].doc_id == "billing/refunds" and hits[0].stage == "hierarchical"
    assert [h.rank for h in hits] == [1, 2, 3] and len({h.chunk_id for h in hits}) == 3
    # permissions: the hr document is invisible to the public, visible to hr
    anon = idx.search("salary advances approved by HR", 10, retriever="hierarchical")
    assert "internal/payroll" not in {h.doc_id for h in anon}
    assert len(anon) == len({c for d in DOCS for c in idx.store.chunk_versions()[d]})  # every visible chunk
    hr = idx.search("salary advances approved by HR", 1, retriever="hierarchical", principal=Principal("h", ("hr",)))
    assert hr[0].doc_id == "internal/payroll"


def test_summarize_cli_uses_the_llm_and_keeps_model_and_hash(small, monkeypatch):
    from typer.testing import CliRunner

    from citewise.cli import app

    idx, root = small
    runner = CliRunner()
    with FakeOpenAI(
        lambda body: {"content": "LLM summary of " + body["messages"][1]["content"].split("\n")[0]}
    ) as server:
        monkeypatch.setenv("CITEWISE_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("CITEWISE_LLM_MODEL", "tiny-instruct")
        res = runner.invoke(app, ["summarize", "--index", str(idx.path), "--llm", "--json"])
        assert res.exit_code == 0, res.output
        data = json.loads(res.output)
        assert data["models"] == {"llm:tiny-instruct": 4} and data["errors"] == [] and len(server.requests) == 4
        assert "<document>" in server.requests[0]["messages"][1]["content"]
    level = DocLevel(summaries_of(idx.store), idx.embedder)
    assert {e.doc_id: e.summary for e in level.entries}["billing/refunds"] == "LLM summary of Title: Refund guide"
    # a search refreshes without the LLM: unchanged documents keep their LLM summaries ...
    title, body = DOCS["billing/refunds"]
    write_doc(root, "billing/refunds.md", title, body + "\n\nPartial refunds are possible.")
    idx.ingest(root)
    idx.search("refund", 3, retriever="hierarchical")
    level = DocLevel(summaries_of(idx.store), idx.embedder)
    models = {e.doc_id: e.model for e in level.entries}
    # ... and the changed one is summarised again (extractively) rather than kept stale
    assert models["billing/refunds"] == EXTRACTIVE_MODEL and models["security/sso"] == "llm:tiny-instruct"
    with FakeOpenAI([{"content": "x"}], status=500) as server:
        monkeypatch.setenv("CITEWISE_LLM_BASE_URL", server.base_url)
        res = runner.invoke(app, ["summarize", "--index", str(idx.path), "--llm", "--json"])
        data = json.loads(res.output)
        assert res.exit_code == 0 and len(data["errors"]) == 1 and "HTTP 500" in data["errors"][0]
        assert data["models"] == {EXTRACTIVE_MODEL: 1, "llm:tiny-instruct": 3}
