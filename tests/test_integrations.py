"""The framework adapters against the real libraries (issue 35): LangChain's standard retriever
tests (langchain-tests), LlamaIndex's and Haystack's own invocation paths (``retrieve``, a
``Pipeline``), principal and filters passed through, and ingestion from each framework's documents."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

import pytest
from langchain_core.documents import Document as LCDocument
from langchain_tests.integration_tests import RetrieversIntegrationTests

from citewise.api import Citewise
from citewise.core import Principal
from citewise.index import Index
from citewise.integrations import langchain as cw_langchain

# the LlamaIndex and Haystack adapters are imported in the tests that use them: importing
# llama_index costs each pytest worker about a second at collection

QUERY = "How are refunds approved and paid?"
#: The corpus, as LangChain documents (what a LangChain loader gives): text and metadata.
LC_DOCS = [
    LCDocument(
        page_content="Refunds are paid within 30 days of a request.",
        metadata={"source": "policies/refunds.md", "title": "Refund policy", "department": "finance", "year": 2025},
    ),
    LCDocument(
        page_content="Refunds over 5,000 USD are approved by the controller.",
        metadata={
            "source": "policies/approvals.md",
            "title": "Refund approvals",
            "department": "finance",
            "year": 2023,
        },
    ),
    LCDocument(
        page_content="Travel refunds are paid within 10 days of the trip.",
        metadata={"source": "policies/travel.md", "title": "Travel refunds", "department": "hr", "year": 2024},
    ),
    LCDocument(
        page_content="Refunds for board members are approved by the chair.",
        metadata={
            "source": "board/refunds.md",
            "title": "Board refunds",
            "department": "finance",
            "year": 2025,
            "permissions": ["exec"],
        },
    ),
]


@functools.lru_cache(maxsize=None)
def _index_dir() -> str:
    """The corpus ingested once from LangChain documents (hashing embedder)."""
    folder = Path(tempfile.mkdtemp(prefix="citewise-integrations-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)  # a module-level cache outlives tmp_path
    idx = Index.open(folder / "idx", embedder="hashing")
    report = idx.ingestor().ingest_documents(cw_langchain.from_documents(LC_DOCS), root="langchain")
    assert report.added == 4 and not report.errors, report
    return str(idx.path)


@pytest.fixture(scope="module")
def cw():
    return Citewise.open(_index_dir(), read_only=True)


class TestLangChainStandard(RetrieversIntegrationTests):
    """LangChain's own retriever test suite (k in the constructor and per call, sync and async)."""

    @property
    def retriever_constructor(self):
        return cw_langchain.CitewiseRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"index": _index_dir()}

    @property
    def retriever_query_example(self) -> str:
        return QUERY


def test_langchain_documents_carry_text_metadata_and_permissions(cw):
    r = cw_langchain.CitewiseRetriever(citewise=cw, k=10)
    docs = r.invoke(QUERY)
    assert sorted(d.metadata["doc_id"] for d in docs) == ["policies/approvals", "policies/refunds", "policies/travel"]
    top = next(d for d in docs if d.metadata["doc_id"] == "policies/refunds")
    assert top.page_content == "Refunds are paid within 30 days of a request." and top.id == top.metadata["chunk_id"]
    assert (top.metadata["department"], top.metadata["year"], top.metadata["title"]) == (
        "finance",
        2025,
        "Refund policy",
    )
    assert top.metadata["snippet"] == top.page_content and top.metadata["groups"] == ["public"]
    exec_docs = r.invoke(QUERY, groups=["exec"], filters=["year>=2025", "department=finance"])
    assert sorted(d.metadata["doc_id"] for d in exec_docs) == ["board/refunds", "policies/refunds"]
    fixed = cw_langchain.CitewiseRetriever(
        citewise=cw, k=10, principal=Principal("ana", ("exec",)), filters=["department=finance"]
    )
    assert sorted(d.metadata["doc_id"] for d in fixed.invoke(QUERY)) == [
        "board/refunds",
        "policies/approvals",
        "policies/refunds",
    ]


def test_llama_index_retrieve_with_principal_and_metadata_filters(cw):
    from llama_index.core.schema import NodeWithScore

    from citewise.integrations import llama_index as cw_llama
    from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

    r = cw_llama.CitewiseRetriever(cw, k=10)
    nodes = r.retrieve(QUERY)
    assert all(isinstance(n, NodeWithScore) for n in nodes)
    assert sorted(n.node.metadata["doc_id"] for n in nodes) == [
        "policies/approvals",
        "policies/refunds",
        "policies/travel",
    ]
    assert nodes[0].score == max(n.score for n in nodes) and nodes[0].node.get_content()
    f = MetadataFilters(
        filters=[
            MetadataFilter(key="department", value="finance"),
            MetadataFilter(key="year", value=2024, operator=FilterOperator.GT),
        ]
    )
    board = cw_llama.CitewiseRetriever(cw, k=10, groups=["exec"], filters=f)
    assert sorted(n.node.metadata["doc_id"] for n in board.retrieve(QUERY)) == ["board/refunds", "policies/refunds"]
    with pytest.raises(Exception, match="only AND"):
        cw_llama.CitewiseRetriever(cw, filters=MetadataFilters(filters=f.filters, condition="or"))


def test_haystack_pipeline_with_filters_groups_and_serialisation(cw):
    from haystack import Pipeline

    from citewise.integrations import haystack as cw_haystack

    p = Pipeline()
    p.add_component("retriever", cw_haystack.CitewiseRetriever(index=_index_dir(), top_k=10))
    docs = p.run({"retriever": {"query": QUERY}})["retriever"]["documents"]
    assert sorted(d.meta["doc_id"] for d in docs) == ["policies/approvals", "policies/refunds", "policies/travel"]
    assert all(d.content and d.id == d.meta["chunk_id"] and d.score is not None for d in docs)
    filt = {
        "operator": "AND",
        "conditions": [
            {"field": "meta.department", "operator": "==", "value": "finance"},
            {"field": "meta.year", "operator": ">=", "value": 2025},
        ],
    }
    out = p.run({"retriever": {"query": QUERY, "filters": filt, "groups": ["exec"]}})["retriever"]["documents"]
    assert sorted(d.meta["doc_id"] for d in out) == ["board/refunds", "policies/refunds"]
    again = Pipeline.loads(p.dumps(), allowed_modules=["citewise.integrations.haystack"])  # round trip
    assert again.get_component("retriever").to_dict()["init_parameters"]["index"] == _index_dir()
    assert len(again.run({"retriever": {"query": QUERY, "top_k": 2}})["retriever"]["documents"]) == 2


def test_ingestion_from_llama_index_and_haystack_documents(tmp_path):
    from haystack import Document as HDocument
    from llama_index.core import Document as LIDocument

    from citewise.integrations import haystack as cw_haystack
    from citewise.integrations import llama_index as cw_llama

    idx = Index.open(tmp_path / "idx", embedder="hashing")
    docs = cw_llama.from_documents(
        [
            LIDocument(
                text="Chargebacks go to finance within 5 days.",
                metadata={"file_path": "ops/chargebacks.md", "team": "ops"},
            )
        ]
    )
    docs += cw_haystack.from_documents(
        [HDocument(content="Invoices are sent monthly.", meta={"file_path": "billing/invoices.md", "year": 2026})]
    )
    assert [d.doc_id for d in docs] == ["ops/chargebacks", "billing/invoices"]
    report = idx.ingestor().ingest_documents(docs, root="frameworks")
    assert report.added == 2
    (hit,) = Citewise(idx).search("invoices monthly", k=1, filters=None)
    assert (hit.doc_id, hit.metadata) == ("billing/invoices", {"year": 2026})
    # the same documents again: unchanged (the content hash covers text and metadata)
    assert idx.ingestor().ingest_documents(docs, root="frameworks").unchanged == 2
