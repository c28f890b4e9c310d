"""Abstention on out-of-scope and false-premise questions whose words all occur in the corpus
(issue 10): the passage gate (the question's words together in one passage, not each somewhere),
entries for "the X builtin / lint", values after a long flag, versioned product names, and
adjectives that fill a name slot without naming anything.

The pipeline tests use one small index built once per module with the real MiniLM embedder over
pages written here: server timeouts, a worker pool, sample projects that mention a database, a
shell manual with definition entries, and a compiler's ``--print`` values. Each page holds some of
the words of the out-of-scope questions, none holds their subject.
"""

from __future__ import annotations

import pytest

from conftest import reason_text
from citewise.answer.evidence import Evidence, EvidenceScorer
from citewise.settings import Settings
from citewise.core import ABSTENTION_TEXT
from citewise.text.names import code_names, slot_names

from conftest import minilm_index_of

PAGES = {
    "server/timeouts": (
        "Server timeouts",
        """# Server timeouts

## server.timeout

The number of milliseconds of inactivity before a socket is presumed to have timed out.
A value of 0 disables the timeout behaviour on incoming connections.
Changing the value only affects new connections to the server, not existing ones.

## server.headersTimeout

Limits the time the server waits to receive the complete request headers. The default is 60000 milliseconds.
""",
    ),
    "runtime/workers": (
        "Worker pool",
        """# Worker pool

The worker pool runs file system and compression tasks off the main thread.
Its size defaults to four threads. Set the POOL_SIZE environment variable before start-up to change it.
""",
    ),
    "guides/samples": (
        "Sample projects",
        """# Sample projects

The samples folder holds a small inventory database used by the tutorials.
Each tutorial reads the database file once and prints a report.

| Package manager | Lock file |
|---|---|
| pnpm | pnpm-lock.yaml |

Install the samples with pnpm install before the first tutorial.
""",
    ),
    "shell/builtins": (
        "Shell builtins",
        """# Shell builtins

Commands in a loop repeat until the loop condition fails.

wait
: wait [id] Wait until the child process with the given id exits and return its exit status.

trap
: trap [action] [signal] Run the action when the shell receives the signal.
""",
    ),
    "cli/print": (
        "Compiler printing",
        """# Printing compiler information

## --print

Prints information about the compiler instead of compiling. It takes one value:

* `target-list` — the list of known targets.
* `cfg` — the configuration values of the current target.

Reverts to the layout of widget 5.0 when the compatibility level is 50 or lower.
""",
    ),
}


@pytest.fixture(scope="module")
def idx(tmp_path_factory):
    index, _ = minilm_index_of(tmp_path_factory, PAGES)
    return index


# -- pure rules --------------------------------------------------------------------------------


def test_a_hyphenated_value_after_a_long_flag_is_a_name():
    assert code_names("How do I use rustc --print cache-sizes to see the CPU cache sizes?") == [
        "--print",
        "cache-sizes",
    ]
    assert code_names("--print native-static-libs") == ["--print", "native-static-libs"]
    # a plain word after a flag is not its value
    assert code_names("does rustc --extern link the crate even if I never use it") == ["--extern"]


def test_adjectives_do_not_fill_a_name_slot():
    assert slot_names("How do I turn a warning into an error for the whole crate?") == []
    assert slot_names("How do I let util.parseArgs accept the same option more than once?") == []
    assert slot_names("What does the autofixup builtin do in bash?") == ["autofixup", "bash"]


def test_missing_entry_needs_a_definition_or_heading_led_by_the_name():
    class C:  # a StoredChunk-like chunk
        def __init__(self, text, heading_path=()):
            self.text, self.heading_path = text, heading_path

    manual = [C("Commands in a loop repeat until the condition fails.\n\nwait\n: wait [id] Wait for a child.\n")]
    assert (
        reason_text(EvidenceScorer.missing_entry("How do I use the repeat builtin?", manual))
        == "not in the evidence: the repeat builtin"
    )
    assert reason_text(EvidenceScorer.missing_entry("What does the wait builtin do?", manual)) == ""
    # a heading naming it is its entry too; adjectives and other kinds of slot are not checked
    assert (
        reason_text(
            EvidenceScorer.missing_entry(
                "What does the dead_code lint detect?", [C("Detects unused code.", ("dead_code",))]
            )
        )
        == ""
    )
    assert reason_text(EvidenceScorer.missing_entry("What is the same lint?", manual)) == ""
    assert reason_text(EvidenceScorer.missing_entry("What does the retry option do?", manual)) == ""


def test_together_is_dense_squared_times_passage():
    ev = Evidence(0.3, dense=0.5, passage=0.8)
    assert ev.together == pytest.approx(0.2)
    assert Settings().threshold_for("all-MiniLM-L6-v2-int8").passage_gate == 0.09


# -- the pipeline ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        # every content word occurs in the corpus, but on different pages: no passage is about it
        "How many connections can the database accept?",
        "How do I restart the server when a tutorial crashes?",
    ],
)
def test_out_of_scope_words_spread_over_pages_abstain(idx, question):
    a = idx.ask(question)
    assert (a.outcome, a.text, a.citations) == ("abstained", ABSTENTION_TEXT, []), a.text
    # the how-to's object ("the server") has no unit with the rest of the question either
    # (:meth:`EvidenceScorer.tool_apart`), which is checked before the passage gate
    assert a.abstain_reason.startswith(
        ("subject not in one passage: ", "not in the evidence: how to do this with server")
    ), a.abstain_reason
    assert a.evidence["together"] < 0.09 and a.evidence["passage"] < 0.4, a.evidence


@pytest.mark.parametrize(
    "question, quote, doc",
    [
        (
            "How do I set a timeout on incoming connections?",
            "A value of 0 disables the timeout behaviour on incoming connections.",
            "server/timeouts",
        ),
        # "Its size ..." points back: the sentence it points at comes first
        (
            "How many threads does the worker pool use by default?",
            "The worker pool runs file system and compression tasks off the main thread. [doc:runtime/workers] "
            "Its size defaults to four threads.",
            "runtime/workers",
        ),
        ("What does --print target-list do?", "target-list — the list of known targets.", "cli/print"),
        # a product name with a version (widget-5.0) is not an unknown name when written "widget 5.0"
        (
            "Which compatibility level reverts to the widget-5.0 layout?",
            "Reverts to the layout of widget 5.0 when the compatibility level is 50 or lower.",
            "cli/print",
        ),
    ],
)
def test_in_scope_questions_on_the_same_pages_are_answered(idx, question, quote, doc):
    a = idx.ask(question)
    assert a.outcome == "answered", (a.abstain_reason, a.evidence)
    assert a.text.startswith(quote), a.text
    assert a.citations[0].doc_id == doc


def test_an_entry_for_the_subject_lifts_the_passage_gate(idx):
    """ "What does the wait builtin do?" has a low cosine with the terse definition ("wait [id]
    Wait until ..."); the question names ``wait`` and the evidence holds its entry, so the subject
    is pinned and the gate does not apply. With a gate of 0.5 (above both questions'
    ``dense² × passage``) the question without an entry abstains and the one with it is answered."""
    answerer = idx.answerer()
    gate = answerer.passage_gate
    answerer.passage_gate = 0.5
    try:
        a = idx.ask("What does the wait builtin do?")
        b = idx.ask("How many threads does the worker pool use by default?")
    finally:
        answerer.passage_gate = gate
    assert a.evidence["entry"] is True and a.evidence["together"] < 0.5, a.evidence
    assert a.outcome == "answered", a.abstain_reason
    assert a.citations[0].doc_id == "shell/builtins"
    assert b.evidence["entry"] is False and b.evidence["together"] < 0.5, b.evidence
    assert (b.outcome, b.abstain_reason[:26]) == ("abstained", "subject not in one passage"), b.abstain_reason


@pytest.mark.parametrize(
    "question, reason",
    [
        ("How do I use the repeat builtin?", "not in the evidence: the repeat builtin"),
        ("What does --print cache-sizes show?", "unknown name: cache-sizes"),
    ],
)
def test_false_premise_names_whose_words_exist_abstain(idx, question, reason):
    a = idx.ask(question)
    assert (a.outcome, a.abstain_reason) == ("abstained", reason), a.text


def test_the_evidence_gap_controller_keeps_the_rules(idx):
    """The controller lets checks it finds outvote a low evidence score, but not a rule: the words
    of "the repeat builtin" are found in a sentence ("Commands in a loop repeat ..."), yet no entry
    for a repeat builtin exists, so the answer is still an abstention."""
    from citewise.answer.gaps import ask_with_controller

    a = ask_with_controller(idx, "How do I use the repeat builtin?", max_rounds=2)
    assert (a.outcome, a.abstain_reason, a.text) == (
        "abstained",
        "not in the evidence: the repeat builtin",
        ABSTENTION_TEXT,
    )
    b = ask_with_controller(idx, "How many threads does the worker pool use by default?", max_rounds=2)
    assert b.outcome == "supported", (b.abstain_reason, b.text)
    assert [c.doc_id for c in b.citations] == ["runtime/workers"], b.text


def test_how_many_of_a_thing_the_documents_name_is_answered(sample_index):
    # "How many employees does Ledgerly have?" (an ordinary word no page uses, no unknown name:
    # citewise.text.rarity) abstaining is measured in bench/answer_cases.jsonl (how-many-employees)
    b = sample_index.ask("How many days do I have to request a refund on the Pro plan?")
    assert b.outcome == "answered" and b.citations[0].doc_id == "help/refunds/refunds-pro", b.text


@pytest.mark.parametrize("dash", ["\u2011", "\u2010", "\u2013", "-"])
def test_an_identifier_written_with_a_unicode_dash_is_not_an_unknown_name(sample_index, dash):
    # found by a fresh-clone run: "E\u20111004" split into the unknown name "E" and abstained
    a = sample_index.ask(f"What does error E{dash}1001 mean?")
    assert a.outcome == "answered", (dash, a.abstain_reason)
    assert a.citations[0].doc_id == "errors/E-1001"


def test_a_flag_named_in_a_top_chunk_lifts_the_passage_gate(tmp_path_factory):
    # found by a fresh-clone run: "What does the --verbose flag do?" abstained ('subject not in one
    # passage') although one sentence of the page says what it does
    from conftest import minilm_index_of

    idx, _ = minilm_index_of(
        tmp_path_factory,
        {
            "cli": (
                "Command line",
                """# Command line

## Output

The `--format` option selects json or text output. Results are written to standard output.

## Progress

The `--verbose` flag prints every widget as it is counted.
""",
            )
        },
    )
    a = idx.ask("What does the --verbose flag do?")
    assert a.outcome == "answered", a.abstain_reason
    assert "prints every widget" in a.text and a.evidence["entry"] is True
    assert idx.ask("What does the --turbo-mode flag do?").outcome == "abstained"


def test_a_pronoun_after_with_names_no_tool():
    """ "... replacing one string with another": "another" is not a tool the evidence must name."""
    q = "bash history rerun last command replacing one string with another"
    assert reason_text(EvidenceScorer.missing_name(q, {"bash", "histori", "command", "string"})) == ""
    assert (
        reason_text(EvidenceScorer.missing_name("How do I resize a partition with fdisk?", {"resiz", "partit"}))
        == "not in the evidence: fdisk"
    )


def test_the_entry_of_a_named_builtin_is_looked_up_when_retrieval_missed_it(tmp_path):
    """ "What does the times builtin print?" retrieves chunks about time; the manual's ``times``
    entry is one definition among many. When no retrieved chunk holds the entry, ``ask`` looks
    it up (BM25 on the name and its kind, then the entry markup) and puts it first; a builtin
    with no entry anywhere is not found, so the evidence check still abstains."""
    from citewise.index import Index

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "timing.md").write_text(
        "# Timing\n\nThe time it takes to run a command is printed by the shell "
        "when you ask for it. Print the time of each step with a timer.\n"
    )
    (docs / "builtins.md").write_text(
        "# Builtins\n\nwait\n: Wait for each background job to finish.\n\n"
        "times\n: Print out the user and system times used by the shell.\n\n"
        "trap\n: Run a command when the shell receives a signal.\n"
    )
    (docs / "client.md").write_text("# Client options\n\nretry\n: Send a failed request once more.\n")
    idx = Index.open(tmp_path / "index", embedder="hashing")
    idx.ingest(docs)
    ans = idx.answerer()
    hits = [h for h in idx.search("timing of commands", k=5) if h.doc_id == "timing"]
    assert hits and all(h.doc_id == "timing" for h in hits)
    got = ans.entry_hits("What does the times builtin print?", hits, 5, None)
    assert (got[0].doc_id, got[0].stage, got[0].rank) == ("builtins", "exact", 1)
    assert [h.chunk_id for h in got[1:]] == [h.chunk_id for h in hits][:4]
    # an entry already retrieved: nothing added; no entry anywhere: nothing added
    assert ans.entry_hits("What does the times builtin print?", got, 5, None) == got
    assert ans.entry_hits("What does the frobnicate builtin print?", hits, 5, None) == hits
    assert ans.entry_hits("What does the same builtin print?", hits, 5, None) == hits  # names nothing
    # an entry of that name in a page about something else is not the builtin's, however asked
    assert ans.entry_hits("How do I use the retry builtin?", hits, 5, None) == hits
    assert ans.entry_hits("What does the retry builtin do?", hits, 5, None) == hits
    assert ans.entry_hits("retry builtin", hits, 5, None) == hits


def test_a_hyphenated_file_name_is_one_name(tmp_path_factory):
    # found by a fresh-clone run: "acme-office.conf" was read as the name "office.conf", which no
    # page mentions whole, so a question the page answers abstained ("unknown name: office.conf")
    from conftest import minilm_index_of

    idx, _ = minilm_index_of(
        tmp_path_factory,
        {
            "it/vpn": (
                "VPN access",
                """# VPN access

The VPN configuration file is called `acme-office.conf` and is issued by the IT helpdesk.
Services for local development are defined in `docker-compose.yml` at the repository root.
""",
            )
        },
    )
    scorer = idx.answerer().scorer
    for q in ("Who issues the acme-office.conf file?", "What is docker-compose.yml?"):
        assert reason_text(scorer.unknown_name(q, None)) == "", q
    a = idx.ask("Who issues the acme-office.conf file?")
    assert a.outcome == "answered" and "IT helpdesk" in a.text, a.abstain_reason
    b = idx.ask("Who issues the acme-home.conf file?")
    assert (b.outcome, b.abstain_reason) == ("abstained", "unknown name: acme-home.conf")


def test_a_common_word_in_a_phrase_the_pages_otherwise_use_is_a_paraphrase(tmp_path_factory):
    # found by a fresh-clone run: "What is the hotel limit per night?" abstained as "unknown name:
    # hotel limit per night" (only "limit" is absent; the page says "reimbursed up to"), and the
    # Why line named the whole phrase. Two known words of the phrase make a common one a paraphrase;
    # a phrase the pages do not talk about still abstains.
    from conftest import minilm_index_of

    idx, _ = minilm_index_of(
        tmp_path_factory,
        {
            "travel": (
                "Travel policy",
                """# Travel policy

Hotel stays are reimbursed up to 180 EUR per night in Europe.
The VPN gateway is vpn.acme.example and needs the office certificate.
""",
            )
        },
    )
    a = idx.ask("What is the hotel limit per night?")
    assert a.outcome == "answered" and "180 EUR per night" in a.text, a.abstain_reason
    b = idx.ask("What is the VPN gateway address?")
    assert b.outcome == "answered" and "vpn.acme.example" in b.text, b.abstain_reason
    for q in ("What is the boiling point of mercury?", "What is the hotel swimming pool depth?"):
        assert idx.ask(q).outcome == "abstained", q


def test_names_known_in_another_written_form_are_answered_made_up_ones_abstain(tmp_path_factory):
    # an INI manual documents ui.editor as the key "editor" under the section "ui"; a renderer's
    # manual writes -Tformat and lists its formats; a page says PNG, the question PNGs
    from conftest import minilm_index_of

    idx, _ = minilm_index_of(
        tmp_path_factory,
        {
            "hgrc": (
                "Configuration files",
                """# Configuration files

## ui

User interface controls.

``editor``
: The program run to edit commit messages. The default is vi.

## web

``guessmime``
: Control MIME types for raw download of file content. Off by default.
""",
            ),
            "render": (
                "Rendering",
                """# Rendering

## Output formats

The option -Tformat sets the output format. The canon format prettyprints the input
without any layout. The plain format lists node positions one per line.

## Images

Interlaced PNG images are drawn progressively, one pass at a time.
""",
            ),
        },
    )
    for question, quote in [
        ("Which program does ui.editor run?", "edit commit messages"),
        ("Is web.guessmime on by default?", "Off by default"),
        ("How are interlaced PNGs drawn?", "drawn progressively"),
    ]:
        a = idx.ask(question)
        assert a.outcome == "answered" and quote in a.text, (question, a.abstain_reason, a.text)
    # the attached flag is a known name (whatever the evidence score then decides)
    assert "unknown name" not in (idx.ask("What does dot -Tcanon output?").abstain_reason or "")
    for question, name in [
        ("Which program does ui.frobnicator run?", "ui.frobnicator"),
        ("What does -Tfrobnicator output?", "-Tfrobnicator"),
        ("How are interlaced GIFs drawn?", "GIFs"),
    ]:
        a = idx.ask(question)
        assert a.outcome == "abstained" and a.abstain_reason == f"unknown name: {name}", (question, a.abstain_reason)


def test_literal_names_must_be_written_as_asked(tmp_path_factory):
    """A setting assigned (``shape=cloud``), a plain word called (``generated()``), a hyphenated
    name with a leading colon (``:keep-both``) and a rare word of a keyword query are names the corpus must write as
    asked: sharing a stem or a part with corpus words does not make them known."""
    from conftest import minilm_index_of

    idx, _ = minilm_index_of(
        tmp_path_factory,
        {
            "shapes": (
                "Node shapes",
                """# Node shapes

The shape attribute sets a node's outline: shape=box draws a rectangle and shape=ellipse an
oval. Nodes that collapse into one are drawn once. The arrow colour follows the edge color.
""",
            ),
            "filesets": (
                "File sets",
                """# File sets

## Predicates

``added()``
: Files that are added according to the status.

``keep-merge``
: Keep the merged file as it is. Generated files are listed apart.
""",
            ),
            "functions": (
                "Functions",
                """# Functions

## upper

The upper function converts a string to capitals.

## Retries

Set the retry_policy setting to exponential to back off between attempts.
""",
            ),
        },
    )
    for question, quote in [
        ("What does shape=box draw?", "draws a rectangle"),
        ("Which files does the added() predicate match?", "added according to the status"),
        # a function its heading names; '-' for '_'; a plural; a query string and an equation
        ("What does upper() return?", "converts a string to capitals"),
        ("What does retry-policy=exponential do?", "back off between attempts"),
        ("Which shapes does shape=boxes draw?", "draws a rectangle"),
        ("What does /draw?shape=star do to the node outline?", "outline"),
    ]:
        a = idx.ask(question)
        assert "unknown name" not in (a.abstain_reason or ""), (question, a.abstain_reason)
        assert a.outcome == "answered" and quote in a.text, (question, a.abstain_reason, a.text)
    for question, name in [
        ("What does shape=cloud draw?", "cloud"),
        ("Can a node be marked collapsible=true?", "collapsible"),
        ("Which files does the generated() predicate match?", "generated()"),
        ("What does the :keep-both merge tool do?", ":keep-both"),
        ("node shape arrowcolor attribute different from edge color", "arrowcolor"),
        ("edge arrowcolor attribute 2 colors", "arrowcolor"),  # a number makes no other language
    ]:
        a = idx.ask(question)
        assert a.outcome == "abstained" and a.abstain_reason == f"unknown name: {name}", (question, a.abstain_reason)
