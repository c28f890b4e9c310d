"""Answer-level checks: citations against retrieved evidence, abstention precision/recall."""

from __future__ import annotations

import pytest

from citewise.core import ABSTENTION_TEXT, Answer, CitewiseError, Citation
from citewise.demo import sample_dir
from citewise.evaluation.answers import abstention_scores, check_citations, cited_ids, evaluate_answers
from citewise.evaluation.golden import read_golden, read_out_of_scope

RETRIEVED = ["help/sso/okta#scim-provisioning", "errors/E-1003#fix", "help/sso/okta#setup"]


def answered(text, citations=()):
    return Answer(text, "answered", list(citations), retrieved_ids=list(RETRIEVED))


def test_grounded_answer_passes():
    a = answered(
        "Enable SCIM in Okta [doc:help/sso/okta]. Re-upload the certificate [chunk:errors/E-1003#fix].",
        [Citation("help/sso/okta", "Okta", "", "", "help/sso/okta#setup")],
    )
    check = check_citations(a)
    assert check.ok and check.cited == ["doc:help/sso/okta", "chunk:errors/E-1003#fix"] and check.fabricated == []


def test_fabricated_citations_are_reported():
    a = answered(
        "Refunds take 30 days [doc:help/refunds/refunds-pro]. See [chunk:help/sso/okta#pricing] and [doc:help/sso/okta]."
    )
    check = check_citations(a)
    assert not check.ok
    assert check.fabricated == ["doc:help/refunds/refunds-pro", "chunk:help/sso/okta#pricing"]
    assert check.problems[0] == "[doc:help/refunds/refunds-pro] is cited but was never retrieved (fabricated)"
    # a citation object that the text does not mark is checked too
    b = answered("Enable SCIM [doc:help/sso/okta].", [Citation("errors/E-1009", "E-1009", "", "")])
    assert check_citations(b).fabricated == ["doc:errors/E-1009"]


def test_answer_without_citation_fails_but_an_abstention_needs_none():
    assert check_citations(answered("Enable SCIM in Okta.")).problems == ["answer cites no source"]
    abstained = Answer(ABSTENTION_TEXT, "abstained", retrieved_ids=list(RETRIEVED))
    assert check_citations(abstained).ok
    assert cited_ids(Answer("x [doc:a] y [doc:a] [chunk:b#c]", "partial")) == ["doc:a", "chunk:b#c"]
    assert check_citations(Answer("x [doc:a]", "partial"), chunk_doc={}).fabricated == ["doc:a"]
    assert check_citations(Answer("x [doc:a]", "partial", retrieved_ids=["c1"]), chunk_doc={"c1": "a"}).ok


def test_abstention_precision_and_recall_hand_computed():
    ans = lambda outcome: Answer("t", outcome)  # noqa: E731
    answerable = {"q1": ans("answered"), "q2": ans("abstained"), "q3": ans("partial"), "q4": ans("answered")}
    oos = {"o1": ans("abstained"), "o2": ans("abstained"), "o3": ans("answered")}
    s = abstention_scores(answerable, oos)
    assert (s.tp, s.fp, s.fn, s.tn) == (2, 1, 1, 3)
    assert s.precision == pytest.approx(2 / 3) and s.recall == pytest.approx(2 / 3)
    assert s.f1 == pytest.approx(2 / 3) and s.accuracy == pytest.approx(5 / 7)
    assert s.false_abstentions == ["q2"] and s.missed == ["o3"]
    assert abstention_scores({"q": ans("abstained")}, {"o": ans("answered")}).precision == 0.0
    with pytest.raises(CitewiseError, match="at least one out-of-scope"):
        abstention_scores(answerable, {})


def test_sample_answers_cite_only_retrieved_sources(sample_index):
    """The shipped answerer on a few golden questions of each kind and a few out-of-scope ones
    (kept small: every ask embeds the evidence sentences with the real model)."""
    golden = read_golden(sample_dir() / "golden.jsonl")
    picked = {}
    for q in golden.queries:
        if all(p[0] != q.kind for p in picked.values()):
            picked[q.qid] = (q.kind, q.text)
    oos = dict(sorted(read_out_of_scope(sample_dir() / "out_of_scope.jsonl").items())[:3])
    result = evaluate_answers(lambda q: sample_index.ask(q), {q: t for q, (_, t) in picked.items()}, oos)
    assert result["citations"]["checked"] == 6
    assert result["citations"]["fabricated"] == {}, result["citations"]["fabricated"]
    ab = result["abstention"]
    assert ab["tp"] + ab["fn"] == 3 and ab["fp"] + ab["tn"] == 3
    assert ab["recall"] == ab["tp"] / 3
