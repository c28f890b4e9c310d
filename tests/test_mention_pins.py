"""Mention pinning in the shipped retriever: a rare compound code name pins the chunks naming it.

Our own text: a memory-allocation page whose only sentence about ``buf_alloc_warn`` sits in a
change-history section about other things, beside pages that talk about allocation, warnings
and buffers in general (the words dense similarity matches).
"""

from __future__ import annotations

import pytest
from conftest import minilm_index_of

from citewise.retrieval.retrievers import MENTION_PINS

ALLOC = """
## Allocating memory

The library allocates buffers through buf_alloc, which aborts the program when the system has
no memory left. Buffers are freed with buf_free. Warnings about memory go to the warning
callback set with set_warn_fn.

## Warnings

A warning never stops processing. The warning callback receives the message text and may log it.
Memory warnings are issued once per buffer.
"""

HISTORY = """
## Changes in version 1.2

The default compression level changed from 5 to 6. The buf_alloc_warn() function was added in
version 1.2.3; it issues a warning and returns NULL instead of aborting when it fails to
allocate. Text chunks are now checked for a trailing NUL byte.

## Changes in version 1.4

The build-time option --with-chunk-limit sets how many text chunks are read; it is also named in
the configuration notes and in the limits section and in the reading guide.
"""

LIMITS = """
## Configuration notes

Set --with-chunk-limit when the input comes from untrusted sources.

## Limits

Without --with-chunk-limit the reader keeps every text chunk.

"""

POOL_REFERENCE = """
## Connection pool

The pool_size option sets how many database connections the server keeps open. The default is
10 connections; each one holds a socket and a small buffer.
"""

POOL_CHANGES = """
## Changes in 2.1

Fixed a crash when pool_size was zero. Renamed the restore flags of the admin tool.
"""

GUIDE = """
## Reading guide

Memory for buffers is allocated as the rows are read; see --with-chunk-limit for text chunks.
"""


@pytest.fixture(scope="module")
def idx(tmp_path_factory):
    index, _ = minilm_index_of(
        tmp_path_factory,
        {
            "lib/alloc": ("Memory", ALLOC),
            "lib/history": ("Change history", HISTORY),
            "lib/limits": ("Limits", LIMITS),
            "lib/guide": ("Reading guide", GUIDE),
            "db/pool": ("Connection pool", POOL_REFERENCE),
            "db/changes": ("Changes", POOL_CHANGES),
        },
    )
    return index


def test_a_name_few_chunks_contain_pins_them(idx):
    hits = idx.retriever("shipped").search("buf_alloc_warn", 3)
    assert (hits[0].doc_id, hits[0].stage) == ("lib/history", "pinned")
    assert "buf_alloc_warn()" in idx.store.get_chunks([hits[0].chunk_id])[hits[0].chunk_id].text
    assert [h.stage for h in hits[1:]] == ["rrf", "rrf"]


def test_a_name_many_chunks_contain_is_left_to_fusion(idx):
    names = [h for h in idx.retriever("shipped").search("--with-chunk-limit", 5) if h.stage == "pinned"]
    assert MENTION_PINS == 2 and names == []


def test_a_plain_word_query_pins_nothing(idx):
    assert all(h.stage == "rrf" for h in idx.retriever("shipped").search("memory warning", 4))


def test_the_pinned_mention_is_quoted(idx):
    a = idx.ask("What does buf_alloc_warn do?")
    assert a.outcome == "answered" and "returns NULL instead of aborting" in a.text, a.text


def test_the_reference_section_is_pinned_before_a_changelog_mention(idx):
    hits = [h for h in idx.retriever("shipped").search("What is the default pool_size of connections?", 4)]
    pinned = [h.doc_id for h in hits if h.stage == "pinned"]
    assert pinned == ["db/pool", "db/changes"], hits
