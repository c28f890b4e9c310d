"""Judges over the real HTTP client against the local OpenAI wire-format server: fail closed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from citewise.answer.judges import (
    ClaimJudge,
    Judge,
    LLMFaithfulnessJudge,
    answer_relevancy,
    context_precision,
    context_recall,
    faithfulness,
    noise_sensitivity,
    ragas_scores,
)
from citewise.models.chat import ChatConfig, OpenAIChatModel

from fake_openai import FakeOpenAI

CONTEXTS = ["On Pro, you can request a refund within 30 days of the charge."]


def judge_for(server, timeout=5.0):
    no_pause = lambda s: None  # noqa: E731 - retries without the backoff pause (test_chat checks it)
    return LLMFaithfulnessJudge(
        OpenAIChatModel(ChatConfig(server.base_url, "judge-model", timeout=timeout), sleep=no_pause)
    )


def test_faithful_verdict_passes_and_request_is_well_formed():
    reply = json.dumps({"faithful": True, "unsupported_claims": []})
    with FakeOpenAI([{"content": reply}]) as server:
        j = judge_for(server)
        assert isinstance(j, Judge)
        v = j.judge("Pro refund window?", "30 days [doc:help/refunds/refunds-pro].", CONTEXTS)
    assert v.passed and v.faithful and v.unsupported_claims == () and v.error == ""
    sent = server.requests[0]
    assert sent["model"] == "judge-model" and sent["messages"][0]["role"] == "system"
    assert '"faithful"' in sent["messages"][0]["content"] and CONTEXTS[0] in sent["messages"][1]["content"]


def test_unfaithful_verdict_keeps_claims_and_fenced_json_is_accepted():
    reply = "```json\n" + json.dumps({"faithful": False, "unsupported_claims": ["Refunds are automatic."]}) + "\n```"
    with FakeOpenAI([{"content": reply}]) as server:
        v = judge_for(server).judge("q", "Refunds are automatic.", CONTEXTS)
    assert (v.faithful, v.unsupported_claims, v.error) == (False, ("Refunds are automatic.",), "")


@pytest.mark.parametrize(
    "reply, error",
    [
        ("Looks fine to me!", "unparseable verdict"),
        ('Sure: {"faithful": true, "unsupported_claims": []}', "unparseable verdict"),
        ('{"faithful": "yes", "unsupported_claims": []}', "no boolean 'faithful'"),
        ('{"unsupported_claims": []}', "no boolean 'faithful'"),
        ('{"faithful": true, "unsupported_claims": ["x"]}', "contradictory verdict"),
        ('{"faithful": true, "unsupported_claims": "none"}', "not a list of strings"),
        ("[true]", "no boolean 'faithful'"),
        ("", "unparseable verdict"),
    ],
)
def test_unusable_verdicts_fail_closed(reply, error):
    with FakeOpenAI([{"content": reply}]) as server:
        v = judge_for(server).judge("q", "a", CONTEXTS)
    assert not v.faithful and not v.passed and error in v.error


def test_timeout_and_http_error_fail_closed():
    with FakeOpenAI([{"content": '{"faithful": true, "unsupported_claims": []}'}], delay=1.0) as server:
        v = judge_for(server, timeout=0.2).judge("q", "a", CONTEXTS)
    assert not v.faithful and "timed out" in v.error
    with FakeOpenAI([{"content": "x"}], status=500) as server:
        v = judge_for(server).judge("q", "a", CONTEXTS)
    assert not v.faithful and "HTTP 500" in v.error


class UnitEmbedder:
    """Deterministic vectors: each text maps to a fixed unit vector."""

    def __init__(self, table):
        self.table = table

    def embed(self, texts):
        return np.asarray([self.table[t] for t in texts], dtype=np.float32)


def claim_judge(server):
    return ClaimJudge(OpenAIChatModel(ChatConfig(server.base_url, "m"), sleep=lambda s: None))  # no backoff pause


def test_ragas_metrics_hand_computed():
    answer = "Pro refunds: 30 days. Annual: 45 days. Refunds are automatic."
    reference = "Pro refunds within 30 days; annual Pro within 45 days."
    ctx = ["Pro: 30 days.", "Annual Pro: 45 days.", "All refunds are approved automatically."]
    claims = {"claims": ["Pro refund window is 30 days", "Annual window is 45 days", "Refunds are automatic"]}

    def script(body):
        system = body["messages"][0]["content"]
        user = body["messages"][1]["content"]
        if system.startswith("Break the text"):
            if reference in user:
                return {"content": json.dumps({"claims": ["30 days on Pro", "45 days annual"]})}
            return {"content": json.dumps(claims)}
        if system.startswith("For each numbered claim"):
            ref = user.split("Reference text:\n", 1)[1].split("\n\nClaims:", 1)[0]
            n = len(user.split("\n\nClaims:\n", 1)[1].splitlines())
            if ref == reference:  # correctness against the reference answer
                return {"content": json.dumps({"supported": [True, True, False]})}
            if ref == ctx[2]:  # the noise context supports the wrong claim
                return {"content": json.dumps({"supported": [False, False, True]})}
            if ref == "\n\n".join(ctx) and "30 days on Pro" in user:  # context recall
                return {"content": json.dumps({"supported": [True, False]})}
            if ref == "\n\n".join(ctx):  # faithfulness over all contexts
                return {"content": json.dumps({"supported": [True, True, True]})}
            return {"content": json.dumps({"supported": [False] * n})}
        if system.startswith("Write questions"):
            return {"content": json.dumps({"questions": ["g1", "g2"]})}
        if system.startswith("For each numbered context"):
            return {"content": json.dumps({"useful": [True, False, True]})}
        return {"content": "?"}

    emb = UnitEmbedder({"q": [1.0, 0.0], "g1": [0.6, 0.8], "g2": [1.0, 0.0]})
    with FakeOpenAI(script) as server:
        j = claim_judge(server)
        assert faithfulness(j, answer, ctx) == 1.0
        assert context_recall(j, reference, ctx) == 0.5
        # wrong claim 3 is supported by context 3: 1 of 3 claims is noise
        assert noise_sensitivity(j, answer, reference, ctx) == pytest.approx(1 / 3)
        assert answer_relevancy(j, emb, "q", answer) == pytest.approx((0.6 + 1.0) / 2)
        s = ragas_scores(j, emb, "q", answer, ctx, reference)
    assert (s.faithfulness, s.context_recall) == (1.0, 0.5)
    assert s.context_precision == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert s.noise_sensitivity == pytest.approx(1 / 3) and s.answer_relevancy == pytest.approx(0.8)
    assert context_precision([False, False]) == 0.0 and context_precision([False, True]) == 0.5


def test_ragas_metrics_fail_closed_on_garbage():
    with FakeOpenAI([{"content": "Looks fine to me!"}]) as server:
        j = claim_judge(server)
        assert faithfulness(j, "a.", ["c"]) == 0.0
        assert context_recall(j, "r.", ["c"]) == 0.0
        assert noise_sensitivity(j, "a.", "r.", ["c"]) == 1.0
        assert answer_relevancy(j, UnitEmbedder({}), "q", "a.") == 0.0
        s = ragas_scores(j, UnitEmbedder({}), "q", "a.", ["c"], "r.")
    assert (s.faithfulness, s.answer_relevancy, s.context_precision, s.context_recall, s.noise_sensitivity) == (
        0.0,
        0.0,
        0.0,
        0.0,
        1.0,
    )
    with FakeOpenAI(
        [{"content": json.dumps({"claims": ["a", "b"]})}, {"content": json.dumps({"supported": [True]})}]
    ) as server:
        assert faithfulness(claim_judge(server), "a. b.", ["c"]) == 0.0  # wrong-length verdict list


def _always_yes(body):
    """A judge that approves everything: the cases below must fail closed anyway."""
    system = body["messages"][0]["content"]
    user = body["messages"][1]["content"]
    if system.startswith("You check whether"):
        return {"content": json.dumps({"faithful": True, "unsupported_claims": []})}
    if system.startswith("Break the text"):
        return {"content": json.dumps({"claims": ["c1", "c2"]})}
    if system.startswith("For each numbered claim"):
        return {"content": json.dumps({"supported": [True] * len(user.split("\n\nClaims:\n", 1)[1].splitlines())})}
    if system.startswith("For each numbered context"):
        return {"content": json.dumps({"useful": [True] * user.count("</context ")})}
    return {"content": json.dumps({"questions": ["q"]})}


def test_no_contexts_or_empty_answer_is_unfaithful_without_asking():
    with FakeOpenAI(_always_yes) as server:
        j = judge_for(server)
        assert j.judge("Pro refund window?", "30 days.", CONTEXTS).passed  # the judge does say yes
        n = len(server.requests)
        for contexts in ([], ["", "  \n"]):
            v = j.judge("Pro refund window?", "30 days.", contexts)
            assert (v.faithful, v.passed, v.error) == (False, False, "no contexts: nothing supports the answer")
        for answer in ("", "   "):
            v = j.judge("Pro refund window?", answer, CONTEXTS)
            assert (v.faithful, v.error) == (False, "empty answer: nothing to judge")
        assert len(server.requests) == n  # decided without a model call
        cj = claim_judge(server)
        assert faithfulness(cj, "30 days. Automatic.", CONTEXTS) == 1.0
        assert faithfulness(cj, "30 days. Automatic.", []) == 0.0
        assert context_recall(cj, "30 days.", []) == 0.0
        emb = UnitEmbedder({"question": [1.0, 0.0], "q": [0.0, 1.0]})
        s = ragas_scores(cj, emb, "question", "30 days. Automatic.", [], "30 days.")
    assert (s.faithfulness, s.context_precision, s.context_recall, s.noise_sensitivity) == (0.0, 0.0, 0.0, 0.0)
    assert s.notes == [
        "faithfulness: no contexts, nothing supports the answer (0.0)",
        "context precision: no contexts (0.0)",
        "context recall: no contexts (0.0)",
    ]


@pytest.mark.parametrize(
    "reply",
    [
        '{"faithful": false, "unsupported_claims": ["Refunds are automatic."], "faithful": true}',
        '```json\n{"faithful": true, "unsupported_claims": [], "unsupported_claims": []}\n```',
    ],
)
def test_duplicate_keys_are_refused(reply):
    with FakeOpenAI([{"content": reply}]) as server:
        v = judge_for(server).judge("q", "Refunds are automatic.", CONTEXTS)
    assert not v.faithful and v.error.startswith("unparseable verdict (expected one JSON object): duplicate key")
    with FakeOpenAI(
        [{"content": json.dumps({"claims": ["a"]})}, {"content": '{"supported": [false], "supported": [true]}'}]
    ) as server:
        assert faithfulness(claim_judge(server), "a.", ["c"]) == 0.0


def test_unusable_replies_leave_a_note_on_every_metric():
    with FakeOpenAI([{"content": "Looks fine to me!"}]) as server:
        s = ragas_scores(claim_judge(server), UnitEmbedder({}), "q", "a.", ["c"], "r.")
    assert (s.faithfulness, s.answer_relevancy, s.context_precision, s.context_recall, s.noise_sensitivity) == (
        0.0,
        0.0,
        0.0,
        0.0,
        1.0,
    )
    assert s.notes == [
        "faithfulness: unusable judge reply listing the answer's claims (0.0)",
        "answer relevancy: unusable judge reply generating questions (0.0)",
        "context precision: unusable judge reply (0.0)",
        "context recall: unusable judge reply listing the reference's claims (0.0)",
        "noise sensitivity: unusable judge reply listing the answer's claims (1.0)",
    ]

    # claims usable, support verdicts unusable: the notes say which step failed
    def script(body):
        if body["messages"][0]["content"].startswith("Break the text"):
            return {"content": json.dumps({"claims": ["x", "y"]})}
        return {"content": json.dumps({"supported": [True]})}  # wrong length for two claims

    with FakeOpenAI(script) as server:
        s = ragas_scores(claim_judge(server), UnitEmbedder({}), "q", "x. y.", ["c"], "r.")
    assert [n for n in s.notes if "claim support" in n or "reference" in n] == [
        "faithfulness: unusable judge reply on claim support (0.0)",
        "context recall: unusable judge reply on claim support (0.0)",
        "noise sensitivity: unusable judge reply on support by the reference (1.0)",
    ]
