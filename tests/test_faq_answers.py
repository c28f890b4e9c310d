"""FAQ answers that open with a bare "Yes." / "No." (issue 10).

Found by a fresh-clone trial on the sample corpus: "What is the refund window for Pro?" ended
with "Yes. [doc:...] 20 days is inside the 30-day window.": the reply to the FAQ heading "I have
been on Pro for 20 days and want to cancel. Can I get my money back?", quoted after the answer,
said yes to nothing. Our own text.
"""

from __future__ import annotations

from conftest import minilm_index_of

PAGE = """
## The refund rule

On Pro, you can ask for a refund of a subscription charge within 30 days of that charge.

## Frequently asked questions

### I have been on Pro for 20 days and want to cancel. Can I get my money back?

Yes. 20 days is inside the 30-day window. You get the unused days of the period back.

### Can several people share one Pro workspace?

Yes. Up to ten people can share one Pro workspace, each with their own sign-in.
"""


def test_a_bare_reply_is_quoted_only_as_the_answer_to_its_own_question(tmp_path_factory):
    idx, _ = minilm_index_of(tmp_path_factory, {"billing/refunds": ("Refunds on Pro", PAGE)})
    a = idx.ask("How many days do I have to ask for a refund on Pro?")
    assert a.outcome == "answered" and a.text.startswith("On Pro, you can ask for a refund"), (a.abstain_reason, a.text)
    assert "Yes." not in a.text, a.text
    b = idx.ask("I have been on Pro for 20 days, can I get my money back?")
    assert b.text.startswith("Yes. [doc:billing/refunds] 20 days is inside the 30-day window."), b.text


def test_a_bare_reply_to_a_question_that_is_not_yes_no_is_quoted_without_its_yes(tmp_path_factory):
    """Found by a fresh-clone trial: "How many accounts can control one hub?" was answered "Yes.
    Up to four accounts ..." (the FAQ heading asked "Can several people use one hub?")."""
    idx, _ = minilm_index_of(tmp_path_factory, {"billing/refunds": ("Refunds on Pro", PAGE)})
    a = idx.ask("How many people can share one Pro workspace?")
    assert a.text.startswith("Up to ten people can share one Pro workspace"), a.text
    b = idx.ask("Can several people share one Pro workspace?")
    assert b.text.startswith("Yes. [doc:billing/refunds] Up to ten people"), b.text


EXCEPTION_PAGE = """
## The refund rule

On Pro, you can request a refund of a subscription charge within 30 days of the date of that charge.

## Exceptions

If you pay for Pro annually ($990 per year), the refund window is 45 days from the charge.
"""


def test_a_question_about_the_exception_opens_with_the_exception(tmp_path_factory):
    """A question that names the exception's condition ("if I pay annually") opens with the
    exception. The rule and its exception both quoted for "What is the refund window for Pro?"
    is measured in bench/answer_cases.jsonl (``refund-rule-first``)."""
    idx, _ = minilm_index_of(tmp_path_factory, {"billing/pro": ("Refunds on Pro", EXCEPTION_PAGE)})
    b = idx.ask("What is the refund window if I pay for Pro annually?")
    assert b.text.startswith("If you pay for Pro annually"), b.text


DETERMINER_PAGE = """
## Platforms

The native extensions are tested on Linux. Users of other Unix-like systems report that they work.

No native extensions are available for Windows at this time.
"""


def test_a_sentence_opening_with_the_determiner_no_keeps_it(tmp_path_factory):
    """The sentence "No native extensions are available" negates its noun phrase; cutting "No"
    as a reply opener would invert it (found on the Mercurial development set)."""
    idx, _ = minilm_index_of(tmp_path_factory, {"ext/platforms": ("Extension platforms", DETERMINER_PAGE)})
    a = idx.ask("Are native extensions available for Windows?")
    assert "No native extensions are available for Windows at this time." in a.text, a.text
    assert "\nNative extensions are available" not in a.text and not a.text.startswith("Native extensions are"), a.text


def test_no_dot_before_a_number_is_an_abbreviation_not_a_reply():
    from citewise.answer.select.features import REPLY_OPENER

    assert not REPLY_OPENER.match("No. 10 of the release notes lists the upload limit change.")
    assert REPLY_OPENER.match("No. Each worker keeps its own cache.")
    assert REPLY_OPENER.match("Yes. 20 days is inside the 30-day window.")
