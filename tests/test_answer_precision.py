"""The right sentence of the right page, and fewer leaks (issue 10, blind-set misses).

* A terse query naming one row of a table by its exact name ("mipsel-sony-psp target",
  "os.constants.signals SIGSTKFLT") is answered from that row: the row's chunk is added to the
  evidence when retrieval ranked its neighbours above it, and the row pins the passage gate.
* "What is X?" opens with the sentence that says what X is ("Buffer objects are used to
  represent ..."), not the first sentence of X's section.
* Reading on after the best unit (the next sentences of its entry) does not crowd out a unit
  that scores nearly as well as the best one elsewhere in the section.
* A question about a default quotes the default of the entry it names (HISTSIZE's, not
  HISTFILESIZE's sentence naming HISTSIZE, nor another page's "The new default value").
* An option entry led by the flag a question names and its argument (``-t timeout``) is that
  flag's entry; a builtin's options that run into a chunk past its heading count as its entry.
* A how-to whose object the corpus only mentions ("How do I point npm at a private registry?"
  over pages that say "npm" once, elsewhere) abstains: no unit names it with the rest.
* A plain word of the phrase a question is about that occurs nowhere in the corpus ("nginx
  reverse proxy config for a Node.js app") makes the answer abstain.

Pure functions are tested on literal strings; the pipeline tests use one small MiniLM index over
pages written here.
"""

from __future__ import annotations

import pytest

from conftest import reason_text
from citewise.answer.evidence import exact_words, names_cell
from citewise.core import ABSTENTION_TEXT, Hit
from citewise.text.analyzer import analyze
from citewise.text.names import subject_words

from conftest import minilm_fixture

# -- pure functions ----------------------------------------------------------------------------


def test_exact_words_are_names_written_like_identifiers():
    assert exact_words("os.constants.signals SIGSTKFLT") == ["SIGSTKFLT"]
    assert exact_words("mipsel-sony-psp target") == ["mipsel-sony-psp"]
    assert exact_words("What is maxHeaderSize and x86_64?") == ["maxHeaderSize", "x86_64"]
    # flags, dotted paths, short capitals and prose are not
    assert exact_words("What does the --verbose flag of fs.rm do in RAM or NASA?") == []


def test_names_cell_wants_a_row_a_code_span_or_a_term_line_not_prose():
    assert names_cell("| `mipsel-sony-psp` | * | MIPS (LE) Sony PSP |", "mipsel-sony-psp")
    assert names_cell("<tr>\n  <td><code>SIGSTKFLT</code></td>\n</tr>", "sigstkflt")
    assert names_cell("Intro.\n\nSRANDOM\n: This variable expands to a number.", "srandom")
    assert not names_cell("In Powershell or Git bash, both quotes work.", "powershell")
    # a longer name holding it is another name
    assert not names_cell("| `mipsel-sony-psp2` | * |", "mipsel-sony-psp")


def test_subject_words_take_the_phrase_asked_about():
    assert subject_words("nginx reverse proxy config for a Node.js app") == ["nginx", "reverse", "proxy", "config"]
    assert subject_words("How do I set up a Cargo workspace with several member crates?") == ["Cargo", "workspace"]
    assert subject_words("What is the default memory limit of a lambda function?") == [
        "default",
        "memory",
        "limit",
        "lambda",
    ]
    # framing words are not the subject; a why-question has no pattern
    assert subject_words("What is the difference between shell targets and exec?") == ["shell", "targets", "exec"]
    assert subject_words("Why don't my aliases work inside a script?") == []
    # a query that opens like a sentence has no search-box head (sample held-out: "a colleague
    # signs in through SSO ..." abstained on "colleague", "let staff log in ..." on "staff")
    assert subject_words("a colleague signs in through SSO fine but ends up with the wrong access") == []
    assert subject_words("let staff log in with their Google accounts") == []
    # a how-to whose object is an embedded question names no object ("came" is no thing)
    assert subject_words("How can I record which commit a cherry-picked change came from?") == []
    assert subject_words("How do I find out where the config file is?") == []
    # an article is a word of its own ("get around", not "get a round"); adverbs frame, not name
    assert subject_words("how do I get around E-1007 when exporting all my invoices") == ["E-1007"]


# -- pipeline ----------------------------------------------------------------------------------

_ROWS = "\n".join(f"| `mipsel-unknown-board{i}` | ✓ | MIPS (LE) board number {i} with uClibc |" for i in range(60))
PAGES = {
    "targets": (
        "Platform support",
        "# Platform support\n\n## Tier 3\n\nThese targets are not built by CI.\n\n"
        "| target | std | notes |\n|---|---|---|\n" + _ROWS + "\n"
        "| `mipsel-sony-psp` | * | MIPS (LE) Sony PlayStation Portable (PSP) |\n" + _ROWS.replace("board", "kit"),
    ),
    "os": (
        "OS",
        "# OS\n\n## Signal constants\n\nThe following signal constants are exported by "
        "`os.constants.signals`.\n\n<table>\n  <tr>\n    <th>Constant</th>\n    <th>Description</th>\n  </tr>\n"
        "  <tr>\n    <td><code>SIGHUP</code></td>\n    <td>Sent when a controlling terminal is closed.</td>\n  </tr>\n"
        "  <tr>\n    <td><code>SIGSTKFLT</code></td>\n    <td>Sent to a process to indicate a stack fault on a "
        "coprocessor.</td>\n  </tr>\n</table>\n",
    ),
    "http": (
        "HTTP",
        "# HTTP\n\n## Proxies\n\nAn HTTP server written with Node.js can act as a reverse proxy: it "
        "reads each request and forwards it to another server with `http.request()`.\n\n"
        "The proxy config of a Node.js app lives in its own code; there is no config file.\n",
    ),
    "widget": (
        "Widget",
        "# Widget\n\nMany toolkit APIs support Widgets. The Widget class is a subclass of "
        "the Frame class and extends it with methods for layout. Widget objects are used to represent a "
        "fixed-size group of buttons on the screen.\n",
    ),
    "shell": (
        "Shell variables",
        "# Shell variables\n\n## Variables\n\nHISTFILESIZE\n: The maximum number of lines "
        "contained in the history file. The shell sets the default value to the value of HISTSIZE after "
        "reading any startup files.\n\nHISTSIZE\n: The maximum number of commands to remember on the history "
        "list. The shell sets the default value to 500 after reading any startup files.\n\nIGNOREEOF\n: "
        "Controls the action of the shell on receipt of an EOF character. If the variable has no value, "
        "then the default is 10.\n",
    ),
    "net": (
        "Net",
        "# Net\n\n## socket.setKeepAlive(value)\n\n* `value` {boolean} The new default value. The "
        "initial default value is false.\n",
    ),
    "builtins": (
        "Builtins",
        "# Builtins\n\n## ulimit\n\nulimit provides control over resources.\n\n-t\n: The "
        "maximum amount of cpu time in seconds.\n\n-v\n: The maximum amount of virtual memory.\n\n## read\n\n"
        "read reads one line from the standard input.\n\n-s\n: Silent mode. Characters are not echoed.\n\n"
        "-t timeout\n: Cause read to time out and return failure if a line is not read within timeout "
        "seconds.\n",
    ),
    "modules": (
        "Modules",
        "# Modules\n\n## Packages\n\nPackage managers such as npm install packages into "
        "the node_modules folder, which the module loader searches.\n",
    ),
    "codegen": (
        "Codegen options",
        "# Codegen options\n\n## target-feature\n\nIndividual targets support "
        "different features; this flag lets you control enabling or disabling a feature. Each feature "
        "should be prefixed with a + to enable it or - to disable it. Features from multiple "
        "target-feature options are combined. To see the valid options and an example use, run the print "
        "command with the target-features argument. The list of features depends on the target and may "
        "change between releases of the compiler without notice. Unknown features produce a warning "
        "and are ignored by the code generator. Features that the target does not support produce the "
        "same warning. Some features imply others and turn them on as well. Features are not checked for "
        "soundness by the compiler. If some feature is given more than once with both + and -, then "
        "values passed later override values passed earlier.\n",
    ),
}


idx = minilm_fixture(PAGES, "idx")


def test_a_row_named_by_its_exact_name_is_quoted(idx):
    a = idx.ask("mipsel-sony-psp target")
    assert a.outcome == "answered", (a.abstain_reason, a.evidence)
    assert "MIPS (LE) Sony PlayStation Portable (PSP)" in a.text.split(" [doc:")[0]


def test_the_row_chunk_of_a_rare_exact_name_joins_the_hits_first(idx):
    ans = idx.answerer()
    # hits that miss the row's chunk (retrieval ranked the table's other chunks above it)
    row = idx.store.lexical_search(["mipsel-sony-psp"], 1)[0]
    misses = [
        Hit(h.chunk_id, h.doc_id, h.score, i + 1, "rrf")
        for i, h in enumerate(idx.store.lexical_search(analyze("proxy signal"), 2))
    ]
    got = ans.exact_hits("mipsel-sony-psp target", misses, 2, None)
    assert len(misses) == 2 and row.chunk_id not in {h.chunk_id for h in misses}
    assert [(h.chunk_id, h.stage, h.rank) for h in got] == [(row.chunk_id, "exact", 1), (misses[0].chunk_id, "rrf", 2)]
    # a question without such a name keeps its hits as they are
    assert ans.exact_hits("reverse proxy", misses, 2, None) == misses


def test_a_signal_row_answers_though_its_chunk_never_names_the_namespace(idx):
    # "os.constants.signals" occurs in the corpus; the row of SIGSTKFLT is the evidence
    a = idx.ask("os.constants.signals SIGSTKFLT")
    assert a.outcome == "answered", (a.abstain_reason, a.evidence)
    assert "to indicate a stack fault on a coprocessor" in a.text


def test_a_subject_word_the_corpus_never_uses_abstains(idx):
    a = idx.ask("nginx reverse proxy config for a Node.js app")
    assert (a.outcome, a.text) == ("abstained", ABSTENTION_TEXT)
    assert a.abstain_reason == "unknown name: nginx"
    # the same question about what the page does describe is answered
    b = idx.ask("reverse proxy config for a Node.js app")
    assert b.outcome == "answered", (b.abstain_reason, b.evidence)


def test_what_is_x_opens_with_the_sentence_defining_x(idx):
    a = idx.ask("What is a Widget?")
    assert a.outcome == "answered", (a.abstain_reason, a.evidence)
    assert a.text.startswith("Widget objects are used to represent a fixed-size group of buttons"), a.text


@pytest.mark.parametrize(
    "question, expected",
    [
        ("IGNOREEOF default value", "then the default is 10"),
    ],
)
def test_a_default_question_quotes_the_default_of_the_entry_it_names(idx, question, expected):
    a = idx.ask(question)
    assert a.outcome == "answered", (a.abstain_reason, a.evidence)
    # the entry's opening names what the default belongs to; the default sentence follows it
    # (citewise.answer.select.compose: an entry keeps its opening)
    sentences = a.text.split(" [doc:")
    assert sentences[0].startswith(question.split()[0] + ":") and expected in sentences[1], a.text


def test_an_option_entry_with_its_argument_answers_for_its_flag(idx):
    a = idx.ask("What does the -t option of the read builtin do?")
    assert a.outcome == "answered", (a.abstain_reason, a.evidence)
    assert a.text.startswith("-t timeout: Cause read to time out"), a.text


def test_option_entry_past_the_heading_counts_as_the_builtins_entry():
    from types import SimpleNamespace

    from citewise.answer.evidence import EvidenceScorer, _option_entry_of

    assert _option_entry_of("-t timeout\n: Cause read to time out.", ["-t"], "read")
    assert not _option_entry_of("-t timeout\n: Cause it to time out.", ["-t"], "read")
    assert not _option_entry_of("Use -t to cause read to time out.", ["-t"], "read")  # not an entry
    tail = SimpleNamespace(
        text="-s\n: Silent mode.\n\n-t timeout\n: Cause read to time out.", heading_path=("Builtins",)
    )
    q = "What does the -t option of the read builtin do?"
    assert reason_text(EvidenceScorer.missing_entry(q, [tail])) == ""
    assert (
        reason_text(EvidenceScorer.missing_entry("How do I use the read builtin?", [tail]))
        == "not in the evidence: the read builtin"
    )


def test_a_how_to_about_a_thing_the_corpus_only_mentions_abstains(idx):
    a = idx.ask("How do I point npm at a private registry?")
    assert (a.outcome, a.text) == ("abstained", ABSTENTION_TEXT), a.text
    assert a.abstain_reason == "not in the evidence: how to do this with npm", a.abstain_reason
    # a how-to the pages answer, about a thing they describe, is answered
    b = idx.ask("How do I make read time out?")
    assert b.outcome == "answered", (b.abstain_reason, b.evidence)
