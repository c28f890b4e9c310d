"""Retrievers register themselves by name; make_retriever builds them without importing a
factory that imports every retriever."""

from __future__ import annotations

import pytest

from citewise.core import CitewiseError, Hit
from citewise.retrieval.registry import make_retriever, register, registered, retriever_names


def test_builtin_names_are_registered():
    names = retriever_names()
    assert {
        "bm25",
        "dense",
        "hybrid",
        "shipped",
        "hybrid-prf",
        "hierarchical",
        "tuned",
        "raptor-collapsed",
        "raptor-tree",
    } <= set(names) and list(names) == sorted(names)
    assert registered("hybrid-prf").__name__ == "ConvexRetriever"


def test_a_plugin_registers_and_is_built_by_name():
    @register("test-constant")
    class Constant:
        def __init__(self, store, embedder):
            self.store, self.embedder = store, embedder

        def search(self, query, k=10, *, principal=None, filters=None):
            return [Hit("c#1", "c", 1.0, 1, "test-constant")]

    r = make_retriever("test-constant", "STORE", "EMB")
    assert isinstance(r, Constant) and (r.store, r.embedder) == ("STORE", "EMB")
    assert "test-constant" in retriever_names()
    with pytest.raises(ValueError, match="registered twice"):
        register("test-constant")(type("Other", (), {}))


def test_an_unknown_name_lists_the_valid_ones():
    with pytest.raises(
        CitewiseError,
        match=r"unknown retriever 'bm52' \(valid: bm25, dense, hierarchical, hybrid, hybrid-prf, raptor-collapsed",
    ):
        make_retriever("bm52", None, None)
    with pytest.raises(CitewiseError, match="needs a reranker"):
        make_retriever("bm25+rerank", None, None)
