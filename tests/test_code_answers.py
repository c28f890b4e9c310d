"""Issue 10: how-to questions answered by a code block, and "e.g." in questions.

"How do I take a substring of a variable, e.g. 2 characters starting at offset 7?" is answered
by an example block whose own text holds "7" and "2" and whose introducing sentences hold the
rest. Before: "e.g" was taken for an unknown code name (abstention "unknown name: e.g"), and the
how-to check wanted one unit holding the question's terms, which a code block alone never does.
All text is made up here (a fictional "gizmo" shell).
"""

from __future__ import annotations

import pytest

from citewise.answer import evidence
from citewise.answer.evidence import content_terms
from citewise.index import Index
from citewise.text.names import code_names

EXPANSION = """# Gizmo expansions

## Substring expansion

The form ${name:offset:length} is called substring expansion in gizmo.
It expands to up to length characters of the value of the variable.
The characters are counted starting at the character specified by offset.
Here are some examples:

```
$ word=0123456789abc
$ gizmo-echo ${word:7:2}
78
```

## Case conversion

The form ${name^^} converts every letter of the value to upper case.
"""
JOBS = """# Gizmo jobs

Background jobs are started with an ampersand and listed by the jobs command.
The wait command pauses until every background job has finished running.
"""
QUESTION = "How do I take a substring of a variable, e.g. 2 characters starting at offset 7?"


@pytest.fixture(scope="module")
def idx(tmp_path_factory):
    root = tmp_path_factory.mktemp("gizmo")
    (root / "docs").mkdir()
    (root / "docs" / "expansion.md").write_text(EXPANSION)
    (root / "docs" / "jobs.md").write_text(JOBS)
    index = Index.open(root / "index", embedder="hashing")
    assert index.ingest(root / "docs").added == 2
    return index


def test_latin_abbreviations_are_neither_names_nor_content_terms():
    assert code_names(QUESTION) == []
    assert content_terms(QUESTION) == ["take", "substr", "variabl", "2", "charact", "start", "offset", "7"]
    assert content_terms("Which flags, i.e. options, etc.?") == ["flag", "option"]


def test_a_how_to_answered_by_an_example_is_answered_with_it(idx):
    a = idx.ask(QUESTION)
    assert a.outcome == "answered", a.abstain_reason
    assert "$ gizmo-echo ${word:7:2}\n78" in a.text
    assert {c.doc_id for c in a.citations} == {"expansion"}


def test_the_block_is_read_with_the_prose_before_it(idx, monkeypatch):
    # read alone, neither the block nor any sentence holds half the question's weight with
    # "substring": the how-to check abstains
    monkeypatch.setattr(evidence, "CODE_PROSE_UNITS", 0)
    a = idx.ask(QUESTION)
    assert (a.outcome, a.abstain_reason) == ("abstained", "not in the evidence: how to do this with substring")


def test_a_lead_sentence_ending_in_a_comma_reads_as_a_sentence(minilm):
    """A code block's lead sentence "For example," is quoted as "For example." (no ",.")."""
    from citewise.answer.context import Context, ContextChunk
    from citewise.answer.select.generator import ExtractiveGenerator
    from citewise.answer.unit_cache import UnitCache

    text = "Brace expansion keeps the order of the words. For example,\n\n```\necho a{d,c,b}e\n```"
    chunk = ContextChunk("c#1", "c", "Brace expansion", "", "", ("Brace expansion",), text, 0, len(text), 1, score=1.0)
    draft = ExtractiveGenerator(UnitCache(minilm)).generate(
        "Show an example of brace expansion order.", Context("q", [chunk], 1000)
    )
    assert "For example. [doc:c]" in draft.text and ",." not in draft.text, draft.text


def test_a_lead_in_keeps_its_colon_before_the_block_it_introduces(minilm):
    """The sentence ending in ':' that introduces a block holds the answer here; it is quoted
    right before the block, with its colon."""
    from citewise.answer.context import Context, ContextChunk
    from citewise.answer.select.generator import ExtractiveGenerator
    from citewise.answer.unit_cache import UnitCache

    text = (
        "Gizmo URLs name a host and a path. The path is relative to the home directory by default. "
        "Use an extra slash at the start of a path to specify an absolute path:\n\n"
        "```\ngizmo://example.com//tmp/repository\n```"
    )
    chunk = ContextChunk("u#1", "u", "Gizmo URLs", "", "", ("Gizmo URLs",), text, 0, len(text), 1, score=1.0)
    draft = ExtractiveGenerator(UnitCache(minilm)).generate(
        "How do I give an absolute path in a gizmo URL?", Context("q", [chunk], 1000)
    )
    assert "to specify an absolute path: [doc:u]" in draft.text, draft.text
    assert draft.text.index("absolute path:") < draft.text.index("gizmo://example.com//tmp"), draft.text
