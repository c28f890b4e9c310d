"""Offsets of a chunk whose text starts with a copy of a manual entry's term lines (a *prefix*,
``Chunk.prefix_len``): whatever reads an offset in the chunk text and adds ``chunk.start`` must
first take the prefix off, so a cited or snippeted span is the source text it quotes."""

from __future__ import annotations

import re

from conftest import open_minilm_index
from citewise.answer.context import ContextChunk
from citewise.retrieval.snippets import chunk_snippet
from citewise.text.chunker import Chunker

COLOURS = ["amber", "cobalt", "crimson", "jade", "ochre", "violet", "teal", "scarlet", "indigo", "olive"]


def _sentence(i: int) -> str:
    return f"The keep option stores copy number {i} in the {COLOURS[i % 10]} folder named vault{i}."


BODY = "".join(f"              {_sentence(i)}\n\n" for i in range(150))
PAGE = (
    "GZIP(1)                  General Commands Manual                  GZIP(1)\n\nNAME\n       gzip - compress or expand files\n\nOPTIONS\n       -k, --keep\n"
    + BODY
    + "       -r, --recursive\n              Travel the directory structure recursively.\n"
)
TARGET = _sentence(140)


def _later_chunk():
    chunks = Chunker().chunk("gzip", "GZIP", PAGE)
    (later,) = [c for c in chunks if TARGET in c.text]
    assert later.prefix_len > 0 and later.text.startswith("       -k, --keep\n")
    assert later.text[later.prefix_len :] == PAGE[later.start : later.end]
    return later


def _context_chunk(c) -> ContextChunk:
    return ContextChunk(c.chunk_id, c.doc_id, "GZIP", "", "", c.heading_path, c.text, c.start, c.end, 1)


def test_a_citation_of_a_sentence_in_a_prefixed_chunk_points_at_that_sentence():
    later = _later_chunk()
    s = later.text.index(TARGET)
    cited = _context_chunk(later).citation(s, s + len(TARGET))
    assert PAGE[cited.start : cited.end] == TARGET


def test_a_cited_span_starting_in_the_copied_term_lines_is_not_placed_before_or_inside_the_body():
    """The copied term line has no place in ``[start, end)``: a span that opens in it (a
    definition unit ``term: sentence``) starts at the chunk's start, and ends where its last
    body character is."""
    later = _later_chunk()
    e = later.text.index(TARGET) + len(TARGET)
    cited = _context_chunk(later).citation(0, e)
    assert (cited.start, cited.end) == (later.start, later.start + e - later.prefix_len)


def test_a_snippet_of_a_prefixed_chunk_has_its_source_offsets():
    later = _later_chunk()
    sn = chunk_snippet(later, "vault140 folder")
    assert "vault140" in sn.text
    assert PAGE[sn.start : sn.end] == sn.text


def test_an_answer_from_a_later_chunk_of_a_long_entry_cites_the_sentence_it_quotes(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "gzip.txt").write_text(PAGE, encoding="utf-8")
    idx = open_minilm_index(tmp_path / "index")
    assert idx.ingest(tmp_path / "docs").errors == []
    a = idx.ask("Which folder does the keep option store copy number 140 in?")
    assert a.outcome in ("answered", "partial"), (a.abstain_reason, a.text)
    assert "vault140" in a.text, a.text
    spans = [sp for c in a.citations for sp in c.spans]
    assert spans
    quoted = [PAGE[sp.start : sp.end] for sp in spans]
    assert any(" ".join(TARGET.split()) in " ".join(q.split()) for q in quoted), quoted
    for q in quoted:
        # every cited span starts at a sentence of the page, not part-way into one
        assert re.match(r"(The keep option|-k, --keep|Travel)", q.lstrip()), q[:80]
