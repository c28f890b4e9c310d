"""Inputs shaped a little like hanging-indent entries, Info furniture, participle conditions,
flag values and quantities that are none of them: wrapped prose, lists inside an entry's body,
text after a body, Haskell signatures, mid-sentence conditions, English option values and
digit-first names. Each test states what the text or question really holds."""

from __future__ import annotations

import re

import pytest

from citewise.answer.question import analyze_question
from citewise.answer.select.format import is_furniture
from citewise.answer.units import split_units
from citewise.text.names import code_names, entry_names
from citewise.text.rarity import name_words


def _words(s: str) -> list[str]:
    return re.findall(r"\w+", s)


@pytest.mark.parametrize(
    "text, kept",
    [
        # a command line inside a sentence: the sentence goes on after it
        (
            "Run the following command\n    make install PREFIX=/usr\nand then reboot the machine.\n",
            "and then reboot the machine",
        ),
        # a term whose body has no full stop, then a paragraph line at the term's indentation
        (
            "timeout\n    Connection timeout in seconds\nDefaults are applied when a key is absent.\n",
            "Defaults are applied",
        ),
        ("  -v\n      Verbose output\n  and other text continues here. More text.\n", "and other text continues here"),
    ],
)
def test_words_after_an_entry_body_stay_in_a_unit(text, kept):
    units = split_units(text)
    assert any(kept in u.text for u in units), [u.text for u in units]
    covered = {i for u in units for i in range(u.start, u.end)}
    lost = [m.group() for m in re.finditer(r"\w+", text) if not covered & set(range(m.start(), m.end()))]
    assert lost == []


def test_list_items_in_an_indented_body_stay_items_with_their_lead():
    text = "Server settings\n    - `port`: the port to listen on. Default 80.\n    - `host`: the interface to bind.\n"
    units = split_units(text)
    port = [u for u in units if u.text.startswith("port:")]
    assert [(u.kind, u.lead, u.text) for u in port] == [("item", "port", "port: the port to listen on. Default 80.")]
    # no unit runs from one item into the next
    assert not any("80" in u.text and "host" in u.text for u in units)


def test_numbered_steps_in_an_indented_body_are_not_merged_across_steps():
    text = "Upgrade procedure\n   1. Stop the service.\n      - Drain the queue.\n      - Close sessions.\n   2. Install the package.\n"
    units = split_units(text)
    assert not any("Close sessions" in u.text and "Install the package" in u.text for u in units), [
        u.text for u in units
    ]


@pytest.mark.parametrize(
    "text, sentence",
    [
        # a wrapped prose sentence whose continuation is indented (plain-text mail, HTML-to-text)
        (
            "The server accepts\nrequests from\n    any host listed in the allow file.\n",
            "The server accepts requests from any host listed in the allow file.",
        ),
        # a numbered clause with its continuation aligned under the text (contracts as text)
        (
            "1.1  The Supplier shall deliver the Goods\n     within 30 days of the order date. Late delivery is a breach.\n",
            "1.1 The Supplier shall deliver the Goods within 30 days of the order date.",
        ),
    ],
)
def test_a_wrapped_sentence_is_quoted_as_written(text, sentence):
    """A quote must read as the source does: no ':' or ', ' inserted mid-sentence."""
    assert sentence in [u.text for u in split_units(text)]


@pytest.mark.parametrize(
    "text",
    [
        "## Changelog\n\nv1.2.0\n  - fixed crash on empty input\n  - added --json flag\n",
        "OPTIONS\r\n\t-a\r\n\t\tAll files. Including hidden.\r\n\t-b\r\n\t\tBrief.\r\n",
    ],
)
def test_no_definition_unit_without_a_definition(text):
    """A term whose body opens with a list or a nested entry gives no empty 'term: ' unit."""
    units = split_units(text)
    assert not [u.text for u in units if u.kind == "definition" and not u.text[len(u.lead) + 1 :].strip()]


def test_changelog_items_stay_items():
    units = split_units("## Changelog\n\nv1.2.0\n  - fixed crash on empty input\n  - added --json flag\n")
    assert [(u.kind, u.text) for u in units if "fixed" in u.text or "added" in u.text] == [
        ("item", "fixed crash on empty input"),
        ("item", "added --json flag"),
    ]


@pytest.mark.parametrize(
    "sentence",
    [
        "map :: (a -> b) -> [a] -> [b] applies the function to every element of the list.",
        "The type of length is length :: [a] -> Int, and it counts the elements.",
        "Timeout: (seconds) the time to wait before the connection is dropped.",
        "Warning: (v2.0) this option was removed and is ignored.",
    ],
)
def test_sentences_shaped_a_little_like_info_menus_are_not_furniture(sentence):
    assert not is_furniture(sentence)


def test_a_hanging_entry_with_a_type_in_parentheses_is_not_furniture():
    units = split_units("--level\n      (integer) Compression level, 1-9.\n")
    assert [u for u in units if "Compression level" in u.text and not is_furniture(u.text)], [u.text for u in units]


@pytest.mark.parametrize(
    "question, condition",
    [
        ("Can I get a refund provided I cancel within 30 days?", "provided I cancel within 30 days"),
        ("Is the late fee waived given a valid student ID?", "given a valid student ID"),
        ("Does the backup succeed assuming the disk is full?", "assuming the disk is full"),
    ],
)
def test_a_participle_marker_mid_sentence_still_opens_a_condition(question, condition):
    assert analyze_question(question).conditions == (condition,)


@pytest.mark.parametrize(
    "question, value", [("What does set -o history do?", "history"), ("What does set -o vi do?", "vi")]
)
def test_an_option_value_that_is_an_english_word_is_still_named(question, value):
    """bash's ``set -o`` options include history, vi, monitor, notify, physical, verbose."""
    assert value in code_names(question)
    assert value in entry_names(question)


@pytest.mark.parametrize(
    "question, name", [("Does the archive tool support 7zip?", "7zip"), ("Is 2fa required for admins?", "2fa")]
)
def test_a_digit_first_product_name_is_still_a_name(question, name):
    assert name in name_words(question)
