"""The answer reads the chunk BM25 ranks first for the whole question, even when rank fusion left
it out of the top k; the evidence gate still reads the fused hits alone."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import minilm_index_of

from citewise.retrieval.retrievers import effective_filters
from citewise.text.analyzer import analyze

PAGES = {
    "png/text": (
        "Text chunks",
        "## Compression\n\nIf the text is short, a zTXt chunk is not worth it: store it in tEXt.",
    ),
    "png/colour": (
        "Colour",
        "## Gamma\n\nA display gamma of 2.2 suits most screens.\n\n## Palette\n\nUp to 256 entries.",
    ),
    "png/rows": ("Rows", "## Filters\n\nEach row is filtered before compression with one of five filter types."),
}


@pytest.fixture(scope="module")
def idx(tmp_path_factory):
    return minilm_index_of(tmp_path_factory, PAGES)[0]


def test_the_lexical_best_chunk_replaces_the_last_hit(idx):
    answerer = idx.answerer()
    q = "Is a zTXt chunk worth it for short text?"
    f = effective_filters(None, None)
    best = idx.store.lexical_search(analyze(q), 1, f)[0]
    assert best.doc_id == "png/text"
    fused = [h for h in answerer.retriever.search(q, 5) if h.chunk_id != best.chunk_id][:2]
    read = answerer.lexical_best(q, fused, 2, f)
    assert [h.chunk_id for h in read] == [fused[0].chunk_id, best.chunk_id]
    assert [(h.rank, h.stage) for h in read] == [(1, fused[0].stage), (2, "lexical")]
    # already among the hits: nothing changes
    assert answerer.lexical_best(q, read, 2, f) is read
    # fewer than k hits: added; only pinned hits: none is dropped for it
    assert [h.chunk_id for h in answerer.lexical_best(q, fused[:1], 2, f)] == [fused[0].chunk_id, best.chunk_id]
    pinned = [dataclasses.replace(h, stage="pinned") for h in fused]
    assert answerer.lexical_best(q, pinned, 2, f) is pinned


def test_the_gate_reads_the_fused_hits_and_the_answer_the_lexical_best(idx):
    a = idx.ask("Is a zTXt chunk worth it for short text?")
    assert a.outcome == "answered", a.abstain_reason
    assert "not worth it" in a.text and {c.doc_id for c in a.citations} == {"png/text"}
