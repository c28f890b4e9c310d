"""Misspelt question words (citewise.answer.spelling).

Found by fresh-clone trials: a question with one typo ("certficate", "windw", "exprot") abstained
("unknown name: certficate"), although the page it asks about is in the index. All pages here
are our own text.
"""

from __future__ import annotations

import json

import pytest

from citewise.answer.spelling import Correction, apply, corrections, edits1
from citewise.core import Principal

from conftest import open_minilm_index, write_doc

CERT_PAGE = """
## Rotating the signing certificate

Generate a new certificate on the Sign On tab, upload it as the secondary certificate, then
activate it. The old certificate keeps working for seven days.
"""

REFUND_PAGE = """
## Refund window

The refund window on the Pro plan is 30 days from the date of the charge.
"""

PAYROLL_PAGE = """
## Bonus payroll

Quarterly bonuses are paid with the payroll of the month after the quarter ends.
"""


@pytest.fixture(scope="module")
def idx(tmp_path_factory):
    root = tmp_path_factory.mktemp("docs")
    write_doc(root, "sso/cert.md", "Rotating the signing certificate", CERT_PAGE)
    write_doc(root, "billing/refunds.md", "Refunds", REFUND_PAGE)
    write_doc(root, "hr/payroll.md", "Payroll", PAYROLL_PAGE, permissions=["hr"])
    index = open_minilm_index(tmp_path_factory.mktemp("index"))
    report = index.ingest(root)
    assert report.errors == [] and report.added == 3
    return index


def test_edits1_holds_the_four_damerau_edits():
    e = edits1("windw")
    assert {"window", "wind", "windy", "widnw"} <= e  # insertion, deletion, substitution, transposition
    assert "windw" not in e and "windoww" not in e
    # 5 deletions, 4 transpositions, 5*26 substitutions and 6*26 insertions, less the repeats
    assert len(e) == len(set(e)) == 285


def test_a_question_with_a_typo_is_answered_as_corrected_and_says_so(idx):
    a = idx.ask("How do I rotate the signing certficate?")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    assert a.corrections == [{"typo": "certficate", "fix": "certificate"}]
    assert "[doc:sso/cert]" in a.text, a.text
    b = idx.ask("What is the refund windw on Pro?")
    assert b.corrections == [{"typo": "windw", "fix": "window"}] and "30 days" in b.text, b.text
    right = idx.ask("What is the refund window on Pro?")
    assert right.corrections == [] and right.text == b.text


def test_made_up_names_common_words_and_code_names_are_not_corrected(idx):
    a = idx.ask("What does the frobnicate option do?")
    assert a.outcome == "abstained" and a.corrections == [], (a.abstain_reason, a.text)
    store, df = idx.store, (lambda t: len(idx.store.lexical_search([t], 5)))
    from citewise.answer.evidence import is_common_word

    # "cable" is an English word (a question about something else, not a typo of "table"); a
    # code name ("--certficate", "certficate.pem", "Certficate" as a name inside) stays as written
    for q in ("Which cable do I use?", "What does --certficate do?", "Where is certficate.pem?", "Is CertFicate set?"):
        assert corrections(q, df, store.known_terms, is_common_word) == [], q


def test_a_word_only_restricted_documents_hold_is_never_suggested(idx):
    """ "bonsues" is one edit from "bonuses", which only the hr group may read: an anonymous user
    gets no correction (that would reveal the word), an hr member does."""
    anon = idx.ask("When are quarterly bonsues paid?")
    assert anon.corrections == [] and anon.outcome == "abstained", (anon.corrections, anon.text)
    hr = idx.ask("When are quarterly bonsues paid?", principal=Principal("h", ("hr",)))
    assert hr.corrections == [{"typo": "bonsues", "fix": "bonuses"}] and "[doc:hr/payroll]" in hr.text, hr.text


def test_the_most_frequent_candidate_wins_and_a_capital_is_kept():
    terms = {"window": 3, "windi": 1}  # analyzed terms: "window", "windy"
    df = lambda t: terms.get(t, 0)  # noqa: E731
    known = lambda ts: {t for t in ts if t in terms}  # noqa: E731
    written = lambda t: {"windi": ["a", "windy", "day"], "window": ["window"]}[t]  # noqa: E731
    # "windw" is one edit from "window" (3 chunks) and from "windy" (1 chunk): the more frequent wins
    assert corrections("the windw", df, known, lambda w: False, written) == [Correction("windw", "window")]
    terms["windi"] = 5  # spelt as the corpus writes it: "windy", not "windi" (also one edit away)
    assert corrections("the windw", df, known, lambda w: False, written) == [Correction("windw", "windy")]
    terms["windi"] = 3  # a tie: the corpus spelling, then an English word, then alphabetical
    assert corrections("the windw", df, known, lambda w: False, written) == [Correction("windw", "window")]
    assert corrections("the windw", df, known, lambda w: w == "windy") == [Correction("windw", "windy")]
    assert corrections("the windw", df, known, lambda w: False) == [Correction("windw", "windi")]
    # with the corpus's words known, only a word it writes is a correction: "lightest" is one
    # edit from "lightes", whose analyzed term "light" the corpus holds, but the corpus writes
    # "light" (found by a fresh-clone trial: "Which widget is lightest?" read as "lightes")
    light = {"light": 4}
    assert (
        corrections(
            "Which widget is lightest?",
            lambda t: light.get(t, 0),
            lambda ts: {t for t in ts if t in light},
            lambda w: False,
            lambda t: ["the", "light", "is", "green"],
        )
        == []
    )
    assert corrections("Windw size", df, known, lambda w: False, written) == [Correction("Windw", "Window")]
    assert corrections("Windw size and windw", df, known, lambda w: False, written) == [Correction("Windw", "Window")]
    assert apply("Windw size and windw", [Correction("Windw", "Window")]) == "Window size and window"


def test_cli_prints_how_the_question_was_read_and_json_lists_it(idx, capsys):
    from citewise.cli import print_answer

    a = idx.ask("What is the refund windw on Pro?")
    print_answer(a, as_json=False)
    assert capsys.readouterr().out.startswith("Read “windw” as “window”.\n")
    print_answer(a, as_json=True)
    assert json.loads(capsys.readouterr().out)["corrections"] == [{"typo": "windw", "fix": "window"}]


def test_cli_says_why_it_abstained(idx, capsys):
    """Found by a fresh-clone trial: in text mode an abstention never said why (only --json
    had abstain_reason)."""
    from citewise.cli import print_answer

    a = idx.ask("What does the frobnicate option do?")
    print_answer(a, as_json=False)
    assert (
        capsys.readouterr().out == "I have no document on this.\nWhy: no document you can read mentions “frobnicate”.\n"
    )
    # the other reason codes read as sentences too (the --json code stays as it is)
    from citewise.core import Reason, ReasonCode

    a.reason = Reason.of(ReasonCode.BELOW_THRESHOLD, score=0.018, threshold=0.140)
    print_answer(a, as_json=False)
    assert (
        capsys.readouterr().out.splitlines()[1]
        == "Why: no passage you can read is close enough to the question to answer it."
    )
    assert str(a.reason) == "evidence 0.018 < threshold 0.140"  # the numbers stay in the short form
    a.reason = Reason.of(ReasonCode.NOT_IN_EVIDENCE, what="Germany")
    print_answer(a, as_json=False)
    assert capsys.readouterr().out.splitlines()[1] == "Why: the passages found never mention \u201cGermany\u201d."
