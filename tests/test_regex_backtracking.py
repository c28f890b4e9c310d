"""Patterns read over document text fail fast on near-misses: each row is a string that almost
matches, long enough that a pattern splitting a run of spaces or dashes many ways would not
return for seconds to hours, and the result the pattern must give; plus ordinary cases."""

from __future__ import annotations

import pytest

from citewise.answer.select.format import is_furniture, states_value
from citewise.answer.units import TABLE_SEPARATOR
from citewise.text.html import _REFRESH
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
