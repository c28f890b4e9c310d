"""A bare version in a question ("gizmo 2.4.1") is known where the pages write it joined to its
product ("gizmo-2.4.1", one token): the mirror of a hyphenated version asked and written apart.
A version the pages never name stays an unknown name."""

from __future__ import annotations

import pytest
from conftest import minilm_index_of

CHANGES = """\
## Cache limits

Starting with gizmo-2.4.1, the frob cache holds 64 entries by default and larger caches need
the `--frob-cache` flag.

## Older releases

Before gizmo-2.3.0, the frob cache had no limit and grew with every request.
"""

SETUP = """\
## Installing

Run the gizmo installer and restart the service. The service reads its settings at start.
"""


@pytest.fixture(scope="module")
def idx(tmp_path_factory):
    return minilm_index_of(tmp_path_factory, {"gizmo/changes": ("Changes", CHANGES), "gizmo/setup": ("Setup", SETUP)})[
        0
    ]


@pytest.mark.parametrize(
    "question",
    [
        "With gizmo 2.4.1 or later, how many entries does the frob cache hold by default?",
        "I run gizmo 2.4.1. How many entries does the frob cache hold by default?",
    ],
)
def test_a_version_written_joined_to_its_product_is_known(idx, question):
    a = idx.ask(question)
    assert a.outcome == "answered", a.abstain_reason
    assert "64 entries by default" in a.text
    assert {c.doc_id for c in a.citations} == {"gizmo/changes"}


@pytest.mark.parametrize(
    "question, name",
    [
        ("With gizmo 2.4.9 or later, how many entries does the frob cache hold by default?", "2.4.9"),
        # after another word the pages know, the version they name is not that word's
        ("Since frob 2.4.1, how many entries does the gizmo cache hold by default?", "2.4.1"),
        # every mention counts, and the word must stand alone ("super-gizmo" is another name)
        ("Does frob 2.4.1 with gizmo 2.4.1 hold 64 entries by default?", "2.4.1"),
        ("With super-gizmo 2.4.1, how many entries does the frob cache hold by default?", "2.4.1"),
    ],
)
def test_a_version_the_pages_never_name_is_unknown(idx, question, name):
    a = idx.ask(question)
    assert (a.outcome, a.abstain_reason) == ("abstained", f"unknown name: {name}")
