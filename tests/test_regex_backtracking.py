"""Patterns read over document text fail fast on near-misses: each row is a string that almost
matches, long enough that a pattern splitting a run of spaces or dashes many ways would not
return for seconds to hours, and the result the pattern must give; plus ordinary cases."""

from __future__ import annotations

import pytest

from citewise.answer.attribution import map_markers
from citewise.answer.judges import parse_json_reply
from citewise.answer.select.format import is_furniture, states_value
from citewise.answer.units import TABLE_SEPARATOR
from citewise.metadata import _NUMBER
from citewise.text.html import _REFRESH
from citewise.text.names import compared_names
from citewise.tools.rules import _PERCENT


@pytest.mark.parametrize(
    "text, separator",
    [
        ("|" + "-" * 5000 + "x", False),
        ("|---|:--:|", True),
        ("| :--- | ---: |", True),
        ("|---+---|", False),  # an org-mode rule, no Markdown separator
        ("|-|-|", False),
        ("| a | b |", False),
    ],
)
def test_table_separator(text, separator):
    assert (TABLE_SEPARATOR.match(text) is not None) is separator


@pytest.mark.parametrize(
    "content, url",
    [
        (" " * 2000 + '"', None),
        ("0; url=https://example.com/", "https://example.com/"),
        ("5;URL='new.html'", "new.html"),
        (' 0 ; url = "x.html" ', "x.html"),
        ("3", ""),
    ],
)
def test_meta_refresh_content(content, url):
    m = _REFRESH.match(content)
    assert (m.group("url") if m else None) == url


@pytest.mark.parametrize(
    "sentence, percent",
    [
        ("50% of" + " " * 2000 + "x", None),
        ("For the first 30 days the cap is 50% of the normal limit.", "50"),
        ("25 % of their usual threshold", "25"),
        ("10% of its cap", "10"),
    ],
)
def test_percent_of_a_limit(sentence, percent):
    m = _PERCENT.search(sentence)
    assert (m.group(1) if m else None) == percent


@pytest.mark.parametrize(
    "text, states",
    [
        ("The default value of" + " " * 8000 + "x", False),
        ("The default value is 500.", True),
        ("The default value of this parameter is 511.", True),
        ("Defaults to 16 KiB.", True),
        ("This controls which default set is used.", False),
    ],
)
def test_default_value_sentences(text, states):
    assert states_value(text) is states


def test_dot_leaders_without_a_page_number():
    assert is_furniture(". " * 2000 + "x") is False
    assert is_furniture("Installation" + " ." * 40 + " 12") is True


@pytest.mark.parametrize(
    "reply, mapped",
    [
        ("See [" + " " * 3000 + "x", ("See [" + " " * 3000 + "x", [])),
        (" " * 1000 + "[" + " " * 1000, (" " * 1000 + "[" + " " * 1000, [])),
        ("Thirty days [1]. See [9].", ("Thirty days [doc:a]. See.", ["[9]"])),
        ("Paid [ < source-b07753299c15 [1]].", ("Paid [doc:a].", [])),
    ],
)
def test_citation_markers_of_a_model_reply(reply, mapped):
    assert map_markers(reply, ["[doc:a]"]) == mapped


def test_a_fenced_judge_reply():
    assert parse_json_reply('```json\n{"faithful": true}\n```') == {"faithful": True}
    assert parse_json_reply("```\n[1, 2]\n```") == [1, 2]
    assert parse_json_reply("```json\n{" + " " * 16000 + "}\n```") == {}
    with pytest.raises(ValueError):
        parse_json_reply("```json" + " " * 3000 + '"')
    with pytest.raises(ValueError):
        parse_json_reply("`````")  # no fence pair


def test_compared_names():
    assert compared_names("What is the difference between npm ci and npm install?") == ["npm ci", "npm install"]
    assert compared_names("What is the difference between" + " " * 1900 + "x?") == []


@pytest.mark.parametrize("text, number", [("1" * 8000 + "x", False), ("2.50", True), ("7.", True), ("-1e5", True)])
def test_metadata_number(text, number):
    assert (_NUMBER.match(text) is not None) is number
