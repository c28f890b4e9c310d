"""Source scope, request contract and the evidence-gap controller on the bundled payment packet."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from citewise.answer.gaps import GapController, Requirements, SufficiencyJudge, derive_checks
from citewise.answer.scope import AskRequest, resolve_scope, visible_documents
from citewise.cli import app
from citewise.core import CitewiseError, Filters, InputError, Principal
from citewise.demo import sample_dir
from citewise.index import Index

from fake_openai import FakeOpenAI

PAYMENT = sample_dir() / "payment"
PACKET = ["incident/inc-4471", "runbooks/payment-worker", "client/payment-client", "provider/integration-contract"]
Q = "Could a delayed retry cause a double charge?"


@pytest.fixture(scope="module")
def idx(tmp_path_factory):
    index = Index.open(tmp_path_factory.mktemp("payment") / "index", embedder="hashing")
    report = index.ingest(PAYMENT / "corpus")
    assert not report.errors
    return index


@pytest.fixture(scope="module")
def reqs():
    return Requirements.load(PAYMENT / "requirements.yaml")


def ask(idx, reqs, question, scope=(), principal=None, **kw):
    request = AskRequest(resolve_scope(list(scope), idx.store, principal), **kw)
    return GapController(idx.answerer(), reqs).ask(question, request, principal=principal)


def test_payment_scenario_gap_then_one_follow_up_round_then_scoped_answer(idx, reqs):
    ans, trace = ask(idx, reqs, Q, PACKET, k=3, max_rounds=2)
    assert trace.domain == "payment retry safety"
    assert trace.rounds[0]["missing_after"] == ["provider guarantee"]
    assert len(trace.rounds) == 2 and trace.rounds[1]["queries"] == [
        "provider retains request token window repeated request"
    ]
    assert "provider/integration-contract#provider-integration-contract" in trace.rounds[1]["new_chunks"]
    assert trace.rounds[1]["missing_after"] == []
    assert ans.outcome == "supported"
    assert ans.text.startswith("From the 4 documents you named:")
    assert "10 minutes" in ans.text and "after 15 minutes" in ans.text
    assert [c.doc_id for c in ans.citations] == [
        "runbooks/payment-worker",
        "client/payment-client",
        "provider/integration-contract",
    ]
    guarantee = next(c for c in trace.checks if c.check.name == "provider guarantee")
    assert guarantee.round == 2
    item = guarantee.evidence[0]
    assert (item.source_id, item.version, item.effective, item.value) == (
        "provider/integration-contract",
        "4.5",
        "2026-10-01",
        "10 minutes",
    )
    src = (PAYMENT / "corpus" / "provider" / "integration-contract-4.5.md").read_text()
    assert src[item.start : item.end] == (
        "The provider retains each request token for 10 minutes after the first request that carried it."
    )
    assert item.revision == idx.store.documents()["provider/integration-contract"].content_hash[:12]


def test_one_round_leaves_the_gap_named(idx, reqs):
    ans, trace = ask(idx, reqs, Q, PACKET, k=3, max_rounds=1)
    assert len(trace.rounds) == 1 and trace.retrieval_calls == 1
    assert ans.outcome == "gap" and "missing the provider guarantee" in ans.text


def test_incomplete_packet_is_never_supported_and_rounds_are_bounded(idx, reqs):
    packet = PACKET[:3]
    for rounds in (1, 2, 3):
        ans, trace = ask(idx, reqs, Q, packet, k=3, max_rounds=rounds)
        assert ans.outcome == "gap", rounds
        assert len(trace.rounds) == rounds
        assert trace.retrieval_calls == 1 + (rounds - 1) * 1  # one missing check, one query per round
        assert set(trace.found_ids) <= {c for c in trace.found_ids if c.split("#")[0] in packet}


def test_deadline_stops_follow_up_rounds(idx, reqs):
    ans, trace = ask(idx, reqs, Q, PACKET, k=3, max_rounds=5, deadline_ms=0)
    assert trace.deadline_hit and len(trace.rounds) == 1 and ans.outcome == "gap"


def test_scope_never_widens_past_permissions(idx, reqs):
    anon = resolve_scope(["ledger/capture-guard", "ledger/", "runbooks/payment-worker"], idx.store)
    assert anon.doc_ids == ("runbooks/payment-worker",)
    assert anon.unavailable == ("ledger/capture-guard", "ledger/")  # same as a missing id: no side channel
    assert resolve_scope(["ledger/capture-guard"], idx.store).unavailable == resolve_scope(
        ["no/such-doc"], idx.store
    ).unavailable[:0] + ("ledger/capture-guard",)
    ans, trace = ask(idx, reqs, "Does the ledger reject a second capture posting?", ["ledger/capture-guard"])
    assert ans.outcome == "abstained" and trace.found_ids == []
    assert ans.abstain_reason == "no document in the scope is available to you"
    # a caller-supplied group filter cannot widen either (intersected with the principal's groups)
    ctl = GapController(idx.answerer(), reqs)
    ans, trace = ctl.ask(
        "ledger rejects second capture posting", AskRequest(anon), filters=Filters(groups=("ledger-team",))
    )
    assert all(not c.startswith("ledger/") for c in trace.found_ids)
    member = Principal("l", ("ledger-team",))
    allowed = resolve_scope(["ledger/"], idx.store, member)
    assert allowed.doc_ids == ("ledger/capture-guard",) and allowed.describe() == "from the 1 document under ledger/"
    ans, trace = ask(idx, reqs, "Does the ledger reject a second capture posting?", ["ledger/"], principal=member)
    assert trace.found_ids and all(c.startswith("ledger/capture-guard#") for c in trace.found_ids)
    # every search of every round stays inside scope ∩ permissions
    for scope in (["provider/"], ["runbooks/payment-worker", "wiki/"], PACKET[:2]):
        s = resolve_scope(scope, idx.store)
        _, trace = ask(idx, reqs, Q, scope, k=3, max_rounds=3)
        assert trace.found_ids and {c.split("#")[0] for c in trace.found_ids} <= set(s.doc_ids)
    assert "ledger/capture-guard" not in visible_documents(idx.store, None)


def test_scope_describes_itself_and_rejects_bad_values(idx):
    assert resolve_scope(None, idx.store).describe() == "from the corpus"
    assert resolve_scope(PACKET, idx.store).describe() == "from the 4 documents you named"
    assert resolve_scope(["provider"], idx.store).describe() == "from the 3 documents under provider/"
    with pytest.raises(CitewiseError, match="not versions"):
        resolve_scope(["provider/integration-contract@4.2"], idx.store)
    with pytest.raises(CitewiseError, match="--max-rounds"):
        AskRequest(max_rounds=0)
    with pytest.raises(CitewiseError, match="--deadline-ms"):
        AskRequest(deadline_ms=-1)


def test_each_outcome_is_reachable(idx, reqs):
    outcomes = {}
    outcomes["supported"] = ask(idx, reqs, Q, PACKET)[0]
    outcomes["gap"] = ask(idx, reqs, Q, PACKET[:3])[0]
    conflict, trace = ask(idx, reqs, Q, ["runbooks/payment-worker", "provider/", "client/", "incident/"], k=6)
    outcomes["conflict"] = conflict
    outcomes["not_established"] = ask(idx, reqs, "Is a webhook with a bad signature always rejected by the provider?")[
        0
    ]
    outcomes["abstained"] = ask(idx, reqs, Q, ["no/such-folder/"])[0]
    assert {k: v.outcome for k, v in outcomes.items()} == {k: k for k in outcomes}
    # the conflict shows both sides, each with its version
    assert set(trace.conflicts) == {"retry timing", "provider guarantee"}
    values = {e["value"] for e in trace.conflicts["provider guarantee"]}
    assert values == {"10 minutes", "24 hours"}
    assert "[doc:provider/archive/contract-notes-4.2]" in conflict.text and "(version 4.5" in conflict.text


def test_question_naming_a_version_keeps_that_version(idx, reqs):
    ans, trace = ask(
        idx,
        reqs,
        "Under contract 4.5, could a delayed retry cause a double charge?",
        ["runbooks/payment-worker", "provider/", "client/", "incident/"],
    )
    assert ans.outcome == "supported", ans.text
    assert "24 hours" not in ans.text and "10 minutes" in ans.text


def test_absolute_claim_needs_a_covering_check(idx, reqs):
    ans, _ = ask(idx, reqs, "Does the client always send the same Idempotency-Key header on a retry?")
    assert ans.outcome == "not_established" and "always/never/guaranteed" in ans.text


def test_version_filter_current_value_and_history(idx, reqs):
    cur, _ = ask(idx, reqs, "Which rollback setting is active in production?")
    assert cur.outcome == "supported"
    assert "is blue-green:" in cur.text and "CHG-2291" in cur.text and "@" not in cur.text
    assert "`" not in cur.text  # the source's `blue-green` as a reader sees it
    hist, trace = ask(idx, reqs, "Why did the rollback setting change?")
    assert hist.outcome == "supported"
    cited = [c.doc_id for c in hist.citations]
    assert cited == [
        "deploy/rollback-setting@1",
        "deploy/rollback-setting@2",
        "deploy/rollback-setting@3",
        "deploy/rollback-setting",
    ]


def test_derived_checks_split_the_question_at_its_conditions():
    checks = derive_checks("Does the worker retry after a capture times out?")
    assert [c.name for c in checks] == ["the worker retry", "a capture times out"]
    # a clause of three terms is stated only by a sentence holding all three
    assert checks[1].terms == ("captur", "time", "out") and checks[1].min_terms == 3
    assert checks[1].match("The capture times out after 30 seconds.")
    assert not checks[1].match("A capture is retried after 15 minutes.")


@pytest.mark.parametrize(
    "question, names",
    [
        # a how-to question asks for a procedure: only its conditions are checks
        ("How do I make bash append to the history file when it exits?", ["it exits"]),
        ("How can I pass arguments to the linker if I am not using LLD?", ["I am not using LLD"]),
        # a claim keeps its main clause
        (
            "Can I pass arguments to the linker if I am not using LLD?",
            ["I pass arguments to the linker", "I am not using LLD"],
        ),
        # a how-to question without conditions derives its main clause as before
        ("How do I rotate the signing certificate?", ["I rotate the signing certificate"]),
    ],
)
def test_a_how_to_question_is_checked_on_its_conditions(question, names):
    assert [c.name for c in derive_checks(question)] == names


def test_requirements_errors_name_file_and_field(tmp_path):
    bad = tmp_path / "r.yaml"
    bad.write_text(
        "domains:\n  - name: x\n    when: ['retry']\n    checks:\n      - name: a\n        query: q\n"
        "        evidence: ['(unclosed']\n"
    )
    with pytest.raises(InputError, match=r"r\.yaml: domains\[0\]\.checks\[0\]\.evidence\[0\]: not a regular"):
        Requirements.load(bad)
    bad.write_text("domains: [ {name: x, when: [a], checks: [{name: a, query: q, evidence: [b], colour: red}]} ]\n")
    with pytest.raises(InputError, match="unknown key"):
        Requirements.load(bad)


def test_llm_sufficiency_judge_fails_closed(idx, reqs):
    from citewise.models.chat import ChatConfig, OpenAIChatModel

    with FakeOpenAI([{"content": "I think it is fine."}]) as server:
        judge = SufficiencyJudge(OpenAIChatModel(ChatConfig(base_url=server.base_url, model="m", api_key="k")))
        request = AskRequest(resolve_scope(PACKET, idx.store))
        ans, trace = GapController(idx.answerer(), reqs, judge=judge).ask(Q, request)
    assert trace.judge["verdict"] == "insufficient" and trace.judge["error"]
    assert ans.outcome == "gap" and trace.model_calls == 1


def test_cli_ask_scope_json(idx):
    res = CliRunner().invoke(
        app,
        [
            "ask",
            Q,
            "--index",
            str(idx.path),
            "--k",
            "3",
            "--json",
            "--requirements",
            str(PAYMENT / "requirements.yaml"),
            *sum((["--scope", d] for d in PACKET), []),
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["outcome"] == "supported" and data["scope"]["description"] == "from the 4 documents you named"
    assert [r["round"] for r in data["controller"]["rounds"]] == [1, 2]


def test_demo_payment_scenario_shows_gap_then_scoped_answer(tmp_path):
    res = CliRunner().invoke(
        app, ["demo", "--scenario", "payment", "--embedder", "hashing", "--index", str(tmp_path / "d")]
    )
    assert res.exit_code == 0, res.output
    text = res.stdout
    first, second = text.index("outcome: gap"), text.index("outcome: supported")
    assert first < second and "From the 4 documents you named:" in text[second:]
    bad = CliRunner().invoke(app, ["demo", "--scenario", "refunds", "--index", str(tmp_path / "d")])
    assert bad.exit_code != 0 and "valid: payment" in str(bad.exception)


def test_llm_generator_is_supported_only_when_it_cites_every_check(idx, reqs, tmp_path):
    from citewise.answer.generators import LLMGenerator
    from citewise.models.chat import ChatConfig, OpenAIChatModel

    good = (
        "The worker retries after 15 minutes [doc:runbooks/payment-worker]. On every retry the client sends the "
        "same Idempotency-Key header [doc:client/payment-client]. The provider retains each request token for "
        "10 minutes [doc:provider/integration-contract]."
    )
    lazy = "The client reuses the key, so the retry is safe [doc:client/payment-client]."
    with FakeOpenAI([{"content": good}, {"content": lazy}]) as server:
        index = Index.open(idx.path)
        # the answerer's unit cache: every sentence of the reply is checked against the sources
        gen = LLMGenerator(
            OpenAIChatModel(ChatConfig(base_url=server.base_url, model="m", api_key="k")), units=index.answerer().units
        )
        ctl = GapController(index.answerer(generator=gen), reqs)
        request = AskRequest(resolve_scope(PACKET, idx.store))
        ok, t1 = ctl.ask(Q, request)
        bad, t2 = ctl.ask(Q, request)
    assert ok.outcome == "supported" and ok.text.startswith("From the 4 documents you named: ") and t1.model_calls == 1
    assert bad.outcome == "not_established"
    assert "retry timing" in bad.abstain_reason and "provider guarantee" in bad.abstain_reason


def test_judge_miss_and_unnecessary_fallback_are_counted(idx, reqs):
    from citewise.models.chat import ChatConfig, OpenAIChatModel

    names = ["retry timing", "idempotency key behaviour", "provider guarantee", "uncertain first outcome"]
    says_all = json.dumps({"covered": names, "missing": []})
    says_none = json.dumps({"covered": [], "missing": names})
    with FakeOpenAI([{"content": says_all}, {"content": says_none}]) as server:
        judge = SufficiencyJudge(OpenAIChatModel(ChatConfig(base_url=server.base_url, model="m", api_key="k")))
        ctl = GapController(idx.answerer(), reqs, judge=judge)
        gap, t1 = ctl.ask(Q, AskRequest(resolve_scope(PACKET[:3], idx.store)))  # contract absent
        full, t2 = ctl.ask(Q, AskRequest(resolve_scope(PACKET, idx.store)))
    assert t1.judge["miss"] and gap.outcome == "gap"  # the rule-based check still holds the gap
    assert t2.judge["unnecessary_fallback"] and full.outcome == "gap"  # fails closed


def test_parent_section_is_expanded_only_for_a_satisfying_chunk(tmp_path):
    from conftest import write_doc

    filler = " ".join(
        f"Settlement batch {i} closes at the end of its business day and is reported the morning after."
        for i in range(60)
    )
    body = (
        "## Token retention\n\n| plan | retention |\n|---|---|\n| enterprise | 24 hours |\n\n"
        "The table above qualifies every rule in this section.\n\n"
        f"### Background\n\n{filler}\n\n### Standard accounts\n\n"
        "For standard accounts the provider retains each request token for 10 minutes.\n\n"
        f"## Settlement\n\n{filler}\n"
    )
    write_doc(tmp_path / "docs", "contract.md", "Contract", body, version="4.5")
    index = Index.open(tmp_path / "index", embedder="hashing")
    index.ingest(tmp_path / "docs")
    reqs = Requirements.from_mapping(
        {
            "domains": [
                {
                    "name": "retention",
                    "when": ["retain"],
                    "checks": [
                        {
                            "name": "provider guarantee",
                            "query": "provider retains request token",
                            "evidence": [r"retains each request token for \d+ minutes"],
                        }
                    ],
                }
            ]
        }
    )
    ans, trace = GapController(index.answerer(), reqs).ask(
        "How long does the provider retain request tokens?", AskRequest(k=1)
    )
    assert ans.outcome == "supported" and len(trace.found_ids) == 1
    ev = trace.checks[0].evidence[0]
    parent = index.store.get_chunks([ev.chunk_id])[ev.chunk_id].parent_id
    assert parent and trace.expanded == [parent]
    assert parent in ans.context_ids and "| enterprise | 24 hours |" in index.store.get_chunks([parent])[parent].text
    assert parent not in trace.found_ids  # brought by expansion, not found by search


def test_cli_ask_scope_text_says_why_nothing_in_scope_was_readable(idx):
    """Text mode printed only "I have no document on this." where --json had the reason and the
    unavailable scope entries; a restricted and a missing document are reported alike."""
    res = CliRunner().invoke(
        app, ["ask", Q, "--index", str(idx.path), "--scope", "ledger/capture-guard", "--scope", "no/such-doc"]
    )
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == [
        "I have no document on this.",
        "Why: no document in the scope is available to you.",
        "Unavailable (missing, or not readable by you; the two look the same): ledger/capture-guard, no/such-doc",
    ]
    data = json.loads(
        CliRunner()
        .invoke(
            app,
            ["ask", Q, "--index", str(idx.path), "--json", "--scope", "ledger/capture-guard", "--scope", "no/such-doc"],
        )
        .stdout
    )
    assert data["abstain_reason"] == "no document in the scope is available to you"
    assert data["scope"]["unavailable"] == ["ledger/capture-guard", "no/such-doc"]
    # an abstention inside a readable scope names what was searched
    res = CliRunner().invoke(
        app, ["ask", "What is the capital of Peru?", "--index", str(idx.path), "--scope", "provider/"]
    )
    assert res.stdout.splitlines() == [
        "I have no document on this.",
        "Why: no document you can read mentions “Peru” (searched from the 3 documents under provider/).",
    ]


def test_cli_ask_scope_passes_the_reranker_to_the_controller(idx):
    """--reranker was ignored once --scope (or another controller option) was given: the TEI
    server got no request. Now every round's candidates go to it, and only chunks inside the
    scope (after the permission filter) are ever sent."""
    from test_rerank import RerankServer, tei_handler

    scope = PACKET[:3]
    with RerankServer(tei_handler) as srv:
        res = CliRunner().invoke(
            app,
            [
                "ask",
                Q,
                "--index",
                str(idx.path),
                "--k",
                "3",
                "--json",
                "--requirements",
                str(PAYMENT / "requirements.yaml"),
                "--reranker",
                f"tei:{srv.url}",
                "--rerank-depth",
                "4",
                *sum((["--scope", d] for d in scope), []),
            ],
        )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["scope"]["doc_ids"] == sorted(scope)
    rounds = len(data["controller"]["rounds"])
    assert rounds >= 1 and len(srv.requests) >= rounds  # one rerank call per search at least
    texts = [t for _, body in srv.requests for t in body["texts"]]
    assert texts and all(path == "/rerank" and body["query"] and len(body["texts"]) <= 4 for path, body in srv.requests)
    # the contract (outside the scope) matches the follow-up query best, yet none of it was sent
    outside = idx.search(
        "provider retains request token window",
        20,
        retriever="bm25",
        filters=Filters(doc_ids=("provider/integration-contract",)),
    )
    assert outside and not any(idx.store.get_chunks([h.chunk_id])[h.chunk_id].text in texts for h in outside)


def test_ask_with_controller_reranks_with_a_reranker_object(idx, reqs):
    from citewise.answer.gaps import ask_with_controller

    class Counting:
        name = "counting"

        def __init__(self):
            self.passages: list[int] = []

        def rerank(self, query, passages):
            self.passages.append(len(passages))
            return [float(-i) for i in range(len(passages))]  # keeps the base order

    rr = Counting()
    ans = ask_with_controller(
        Index.open(idx.path), Q, k=3, scope=PACKET, requirements=reqs, reranker=rr, rerank_depth=5
    )
    plain = ask_with_controller(Index.open(idx.path), Q, k=3, scope=PACKET, requirements=reqs)
    assert rr.passages and all(0 < n <= 5 for n in rr.passages)
    assert ans.outcome == plain.outcome == "supported" and ans.text == plain.text  # the order kept, the same answer


def test_a_checks_evidence_already_quoted_is_not_repeated(tmp_path):
    """The controller adds each check's evidence after the quoted answer unless the answer quotes
    it already; both are shown as a reader sees them, without the source's Markdown
    (``**within 30 days**``)."""
    import shutil

    from citewise.answer.citations import split_cited_sentences
    from citewise.answer.units import clean
    from citewise.api import AskOptions, Citewise

    shutil.copytree(sample_dir() / "corpus", tmp_path / "docs")
    index = Index.open(tmp_path / "index", embedder="hashing")
    index.ingest(tmp_path / "docs")
    ans = Citewise(index).ask(
        "How long do I have to request a refund on Pro?",
        Principal("fin", ("finance",)),
        AskOptions(scope=("help/refunds/",)),
    )
    assert ans.outcome == "supported"
    said = [clean(s) for line in ans.text.split("\n")[1:] for s, _ in split_cited_sentences(line)]
    assert (
        "On Pro, you can request a refund of a subscription charge within 30 days of the date of that charge." in said
    )
    assert len(said) == len(set(said)), said
    assert "**" not in ans.text, ans.text


@pytest.mark.parametrize(
    "line, quoted, repeated",
    [
        # the check's evidence cut before a displayed line: no final period
        (
            "You can change the buffer size used while reading data with [doc:m]",
            "You can change the buffer size used while reading data with. [doc:m] set_buffer_size(p, n). [doc:m]",
            True,
        ),
        # the setting's name without its code marks and colon
        (
            "update.check Determines what level of checking update performs. [doc:c]",
            "``update.check``: Determines what level of checking update performs. [doc:c] (default: linear). [doc:c]",
            True,
        ),
        # a table cell the quoted row already holds
        (
            "RegExp Unicode Property Escapes [doc:i]",
            "Feature: RegExp Unicode Property Escapes; none: none. [doc:i]",
            True,
        ),
        # another sentence of the same page: new, kept
        ("The default is 3 seconds. [doc:c]", "``delay``: Number of seconds (float). [doc:c]", False),
        # the same words in another order say something else
        ("Property escapes RegExp Unicode [doc:i]", "Feature: RegExp Unicode Property Escapes. [doc:i]", False),
    ],
)
def test_a_check_line_already_quoted_in_other_markup(line, quoted, repeated):
    from citewise.answer.gaps import already_quoted

    assert already_quoted(line, quoted) is repeated


def test_a_condition_not_established_is_said_back_to_the_asker(idx):
    """The question's own clause is quoted in the reply with first person turned to second
    ("if I restart my payment worker" -> 'you restart your payment worker')."""
    from citewise.api import Citewise

    ans = Citewise(idx).ask("Does the worker retry a capture if I restart my payment worker during a deploy?")
    assert ans.outcome == "not_established", ans.text
    assert ans.text.startswith(
        "From the corpus, the authorised sources do not establish 'you restart your payment worker'."
    ), ans.text
    assert ans.reason is not None and ans.reason.fields["what"] == "'you restart your payment worker'"


@pytest.mark.parametrize(
    "clause, said_back",
    [
        ("I restart my worker", "you restart your worker"),
        ("I don't pass --emit", "you don't pass --emit"),
        ("I’m told we own it", "you’re told you own it"),  # the asker's apostrophe kept
        ("Our team and us", "Your team and you"),
        ("the index is mine", "the index is yours"),
        ("Iris set MY_VAR", "Iris set MY_VAR"),  # not a pronoun: a name, an identifier
    ],
)
def test_the_askers_words_are_said_back(clause, said_back):
    from citewise.answer.question import to_reader

    assert to_reader(clause) == said_back


@pytest.mark.parametrize(
    "question, asked",
    [
        # a wh-question's main clause is what it asks; its condition is a condition
        ("What limits the worker's wait before it treats the outcome as unknown?", [True, False]),
        # a yes/no question's main clause is a claim the evidence must state
        ("Does the setting limit the worker's wait before it treats the outcome as unknown?", [False, False]),
        # so is an absolute claim's, whatever the question word
        ("Which retry is always safe after a capture times out?", [False, False]),
        # a yes/no question that does not open with its auxiliary, a negative one, a statement
        # asked, a "why" that asserts its clause: claims
        ("So does the worker page the support team when a capture request times out?", [False, False]),
        ("Doesn't the worker page the support team when a capture request times out?", [False, False]),
        ("The worker pages the support team when a capture request times out?", [False, False]),
        ("Why does the worker page the support team when a capture request times out?", [False, False]),
        # a yes/no sentence after a wh sentence is a claim of its own
        ("What happens when a capture request times out? Does the worker page the support team?", [False, False]),
    ],
)
def test_a_wh_questions_main_clause_is_asked_not_claimed(question, asked):
    assert [c.asked for c in derive_checks(question)] == asked


def test_an_abbreviation_ends_no_sentence_of_the_question():
    names = [c.name for c in derive_checks("Which tool runs last, e.g. for a binary file, when nothing else applies?")]
    assert names == ["tool runs last, e.g. for a binary file", "nothing else applies"]


@pytest.mark.parametrize(
    "question, outcome, notice",
    [
        # the condition is stated word for word; the paraphrased ask ("limits the wait") is the
        # answer's business: no notice
        ("What limits the worker's wait before it treats the outcome as unknown?", "supported", None),
        # the same ask as a yes/no claim is not stated by any sentence
        (
            "Does the setting limit the worker's wait before it treats the outcome as unknown?",
            "not_established",
            "From the corpus, the authorised sources do not establish 'the setting limit the worker's wait'.",
        ),
    ],
)
def test_only_claims_and_conditions_are_reported_not_established(idx, question, outcome, notice):
    from citewise.api import Citewise

    ans = Citewise(idx).ask(question)
    assert ans.outcome == outcome, ans.text
    assert "capture_timeout_ms is the time in milliseconds the worker waits" in ans.text
    if notice:
        assert ans.text.startswith(notice), ans.text
    else:
        assert "do not establish" not in ans.text


def test_a_leading_when_clause_is_a_condition_unless_an_auxiliary_follows():
    q = "When the provider returns HTTP 418, who does the worker page after the last retry of a capture fails?"
    assert [(c.name, c.asked) for c in derive_checks(q)] == [
        ("the worker page", True),
        ("the provider returns HTTP 418", False),
        ("the last retry of a capture fails", False),
    ]
    assert derive_checks("When does the daily limit reset?")[0].asked
