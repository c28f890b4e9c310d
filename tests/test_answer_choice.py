"""Which sentences an extractive answer quotes from the entry it found (issue 10, blind set 6).

On blind set 6, 11 of 36 in-scope answers cited the right page but quoted the wrong part of the
entry. The kinds fixed here, each with a small page written for the test:

* A question about the rest of an option ("... target-cpu for the host machine processor") gets
  the sentence of the entry covering the question's remaining terms right after the entry's
  opening, and a list that follows an entry's opening sentence holds that entry's values (it is
  read on), unlike a list of sibling options following an option's own item.
* A question asking which members a list has ("Which linker flavors can I pass?") gets the list's
  items, not the sentences between the entry's opening and its list.
* A question about a default in other words ("when I do not specify it", "if omitted") quotes
  the entry's default like one that says "default".
* A builtin's synopsis followed by its first sentence on the same line ("caller [expr] Returns
  the context ...") is quoted; a bare synopsis is not.
* A sentence that goes on in lower case after a lone full stop ("a script run with the . or
  source builtins") is one sentence, not two.
"""

from __future__ import annotations

import numpy as np
import pytest

from citewise.answer.citations import split_cited_sentences
from citewise.answer.extractive import ExtractiveGenerator, ScoredUnit, asks_default, asks_list, bare_entry
from citewise.answer.units import Unit
from citewise.text.analyzer import analyze

from conftest import minilm_fixture

# -- pure functions ----------------------------------------------------------------------------


@pytest.mark.parametrize("question, expected", [
    ("What does the compiler use for tune-cpu when I do not specify it?", True),
    ("Which signal is sent if the option is omitted?", True),
    ("What happens when HISTFILE is unset?", True),
    ("What does the server do out of the box?", True),
    ("keepAliveTimeout default", True),
    ("What kind of output does rustc produce if I don't pass --emit?", True),
    ("What does it print if I don’t set a prompt?", True),
    ("How do I specify a target CPU?", False),
    ("What does -C target-cpu do?", False),
    ("Why is my variable not set inside the loop?", False),
])
def test_asks_default_reads_a_default_question_in_other_words(question, expected):
    assert asks_default(question) is expected


@pytest.mark.parametrize("question, expected", [
    ("Which linker flavors can I pass with -C linker-flavor?", True),
    ("What lints are in the unused group?", True),
    ("Which Windows versions does the target support?", True),
    ("What does -C linker-flavor do?", False),
    ("What is the default linker flavor?", False),
    ("Which process is started first?", False),
    ("What class does the error extend?", False),
])
def test_asks_list_wants_which_and_a_plural_noun(question, expected):
    assert asks_list(question) is expected


def _unit(text: str, lead: str) -> Unit:
    return Unit(0, len(text), text, ("Builtins",), kind="definition", lead=lead)


def test_a_synopsis_followed_by_a_sentence_is_quotable():
    assert bare_entry(_unit("shopt: shopt [-pqsu] [-o] [optname ...]", "shopt"))
    long = "complete: complete [-abcdefgjksuv] [-o comp-option] [-DEI] [-A action] [-G globpat] " \
           "[-W wordlist] [-F function] [-C command] [-X filterpat] [-P prefix] [-S suffix] name [name ...]"
    assert bare_entry(_unit(long, "complete"))  # long, but still only a synopsis
    assert not bare_entry(_unit("caller: caller [expr] Returns the context of any active subroutine call.", "caller"))
    assert not bare_entry(_unit("mapfile: mapfile [-d delim] [array] Read lines from the standard input.", "mapfile"))


def test_a_lower_case_word_after_a_full_stop_goes_on_with_the_sentence():
    text = "It runs a script executed with the . or source builtins. Then it stops. [doc:x]"
    assert split_cited_sentences(text) == [
        ("It runs a script executed with the . or source builtins.", []), ("Then it stops.", [("doc", "x")])]
    # markers removed before a full stop still leave no space ("30 days [doc:x]." -> "30 days.")
    assert split_cited_sentences("A is 30 days [doc:x]. B.") == [("A is 30 days.", [("doc", "x")]), ("B.", [])]
    assert split_cited_sentences("A [doc:x], b [doc:y]: c.") == [("A, b: c.", [("doc", "x"), ("doc", "y")])]
    # a mark that belongs to code keeps the space before it ("address :: won't" read "address::")
    assert split_cited_sentences("Binding to address :: won't bind 0.0.0.0.")[0][0] == \
        "Binding to address :: won't bind 0.0.0.0."
    # nor do initials, abbreviations and dots written with spaces end one (a bibliography entry
    # was quoted as "R." "Á." "de Espíndola." with a citation each; "(k1 v1 . . . )" as ".", ").")
    assert [s for s, _ in split_cited_sentences("Support: No. R. Á. de Espíndola, Fig. 3. Done.")] == [
        "Support: No.", "R. Á. de Espíndola, Fig. 3.", "Done."]
    assert [s for s, _ in split_cited_sentences("A list: name=(k1 v1 k2 v2 . . . ). Next one.")] == [
        "A list: name=(k1 v1 k2 v2 . . . ).", "Next one."]


def _scored(score: float, start: int, text: str, axis: int, terms=(), lead: str = "", kind: str = "sentence") -> ScoredUnit:
    vec = np.zeros(16, dtype=np.float32)
    vec[axis] = 1.0  # orthogonal vectors: no unit is redundant with another
    unit = Unit(start, start + len(text), text, ("Codegen", "target-cpu"), kind=kind, lead=lead)
    return ScoredUnit(score, 0, unit, vec, frozenset(terms))


def _generator(weights: dict[str, float], values: bool = False) -> ExtractiveGenerator:
    gen = ExtractiveGenerator(units=None)
    gen._wants_code, gen._sides, gen._default, gen._values = False, [], False, values
    gen._entry_opening, gen._read_on = set(), True
    gen._weights = (weights, sum(weights.values()))
    return gen


def test_reading_on_puts_the_sentence_answering_the_rest_of_the_question_first():
    """Question terms: cpu (covered by the opening), host, machine. The follower naming host and
    machine is quoted second although three sentences come before it in the entry."""
    w = {"cpu": 1.0, "host": 2.0, "machine": 2.0}
    best = _scored(1.3, 0, "This makes the compiler generate code for one particular processor.", 0, {"cpu"})
    f1 = _scored(0.9, 70, "Run the print command to see the valid options.", 1, {"cpu"})
    f2 = _scored(0.8, 120, "Each target has a default base processor.", 2, {"cpu"})
    f3 = _scored(0.7, 170, "The list depends on the target.", 3, {"cpu"})
    native = _scored(0.6, 210, "native: use the processor of the host machine.", 4, {"cpu", "host", "machine"}, lead="native", kind="item")
    chosen = _generator(w).select(sorted([best, f1, f2, f3, native], key=lambda su: -su.score))
    assert [su.unit.text for su in chosen] == [best.unit.text, native.unit.text, f1.unit.text]
    # a list item after an option's own item is the next option, not part of its entry
    own = _scored(1.3, 0, "force: when true, errors are ignored.", 0, {"cpu"}, lead="force", kind="item")
    chosen = _generator(w).select(sorted([own, native], key=lambda su: -su.score))
    assert native not in chosen


def test_a_list_question_gets_the_items_not_the_sentences_before_them():
    w = {"linker": 1.0, "flavor": 1.0}
    best = _scored(1.3, 0, "This flag sets the linker flavor.", 0, {"linker", "flavor"})
    s1 = _scored(1.0, 40, "If a linker is given, the flavor is inferred from it.", 1, {"linker", "flavor"})
    s2 = _scored(0.9, 100, "Every target defaults to some flavor.", 2, {"flavor"})
    items = [_scored(0.8 - i / 100, 150 + 40 * i, f"{name}: use the {name} executable.", 3 + i, lead=name, kind="item")
             for i, name in enumerate(["em", "gcc", "ld", "msvc", "wasm", "bpf", "ptx", "lld", "cc"])]
    scored = sorted([best, s1, s2, *items], key=lambda su: -su.score)
    chosen = _generator(w, values=True).select(scored)
    assert [su.unit.text for su in chosen] == [best.unit.text] + [su.unit.text for su in items[:ExtractiveGenerator.LIST_ITEMS]]
    # not a list question: three sentences in text order, as before
    chosen = _generator(w).select(scored)
    assert [su.unit.text for su in chosen] == [best.unit.text, s1.unit.text, s2.unit.text]


# -- pipeline ----------------------------------------------------------------------------------

PAGES = {
    "codegen": ("Codegen options", "# Codegen options\n\n"
                "## target-cpu\n\nThis tells the compiler to emit code tuned for one particular processor. "
                "Run the print command with target-cpus to list the names it accepts. Every target ships "
                "with a baseline processor of its own.\n\n"
                "* `native` can be passed to use the processor of the host machine.\n"
                "* `generic` selects a target with minimal features.\n\n"
                "## tune-cpu\n\nThis tells the compiler to schedule code for one particular processor without "
                "changing the instruction set. Use the unstable tune-cpu flag to give a value. The accepted "
                "names are the same as for target-cpu. The default is None, which the backend reads as the "
                "target-cpu.\n\n"
                "## linker-flavor\n\nThis flag chooses the linker flavor the compiler drives. When a linker "
                "is named with the linker flag, the flavor is guessed from its file name. When no linker is "
                "named, the flavor picks the linker to run. The flavors are:\n\n"
                "* `em`: drive the Emscripten emcc program.\n"
                "* `gcc`: drive the cc program, usually gcc or clang.\n"
                "* `ld`: drive the ld program.\n"
                "* `msvc`: drive the link.exe program of Visual Studio.\n"),
    "builtins": ("Bash builtins", "# Bash builtins\n\n## Builtin commands\n\n"
                 "builtin\n: builtin [shell-builtin [args]] Run a shell builtin, passing it args. This is "
                 "useful when a function has the same name as a builtin.\n\n"
                 "caller\n: caller [expr] Returns the context of any active subroutine call (a shell function "
                 "or a script executed with the . or source builtins). Without expr, caller displays the "
                 "line number and source file of the current call. The current frame is frame 0. This "
                 "extra information may be used to print a stack trace.\n\n"
                 "command\n: command [-pVv] command [arguments] Runs command with arguments ignoring any "
                 "shell function named command.\n"),
}


idx = minilm_fixture(PAGES, "idx")


@pytest.mark.parametrize("question, expected", [
    ("compiler target-cpu for the host machine processor", "native can be passed to use the processor of the host machine"),
    ("What does the compiler use for tune-cpu when I do not specify it?", "The default is None"),
    ("Which linker flavors can I pass with linker-flavor?", "msvc: drive the link.exe program"),
    ("caller builtin", "Returns the context of any active subroutine call"),
])
def test_the_answer_quotes_the_part_of_the_entry_asked_about(idx, question, expected):
    a = idx.ask(question)
    assert a.outcome == "answered", (a.abstain_reason, a.evidence)
    assert expected in a.text, a.text
    assert {c.doc_id for c in a.citations} <= {"codegen", "builtins"}


def test_a_builtins_first_sentence_is_quoted_whole(idx):
    a = idx.ask("caller builtin")
    assert "a script executed with the . or source builtins)." in a.text, a.text


# -- a chunk from deeper in the ranking whose best sentence beats the context's ------------------

DEEP_PAGES = {
    "mail-faq": ("Shell mail FAQ", "# Shell mail FAQ\n\n## New mail in the shell\n\nNew mail for each shell user is "
                 "kept in a mail folder. The shell mail folder holds new mail and old mail. Shell scripts check "
                 "the mail folder. Mail tools check new mail in the shell folder. Check the shell mail folder "
                 "size with the quota tool. New mail and old mail often share the folder.\n"),
    "variables": ("Shell variables", "# Shell variables\n\n## Variables\n\n" + "".join(
        f"{name}\n: {text}\n\n" for name, text in [
            ("BASHPID", "Expands to the process ID of the current process."),
            ("COLUMNS", "Used by the select command to find the terminal width."),
            ("EUID", "The numeric effective user id of the current user."),
            ("HISTSIZE", "The number of commands kept in the history list."),
            ("HOSTNAME", "The name of the current host."),
            ("LINES", "Used by the select command to find the column length for printing lists."),
            ("MAILCHECK", "How often, in seconds, the shell looks for new mail. The default is 60 seconds."),
            ("OLDPWD", "The previous working directory as set by the cd builtin."),
            ("PPID", "The process ID of the parent process."),
            ("PS1", "The primary prompt string."),
            ("RANDOM", "Each time this parameter is referenced, it expands to a random integer."),
            ("SECONDS", "The number of seconds since the shell was started."),
            ("TMOUT", "The time-out for the read builtin."),
            ("UID", "The numeric real user id of the current user."),
        ])),
}


deep_idx = minilm_fixture(DEEP_PAGES, "deep_idx")


def test_a_deeper_chunk_whose_sentence_answers_better_joins_the_context(deep_idx):
    q = "How often does the shell check for new mail?"
    hits = deep_idx.search(q, k=2)
    assert [h.doc_id for h in hits] == ["mail-faq", "variables"]  # the keyword-heavy page ranks first
    a = deep_idx.answerer()
    assess = a.assess(q, k=1)
    assert [h.doc_id for h in assess.hits] == ["mail-faq"] and [h.doc_id for h in assess.deeper] == ["variables"]
    ans = deep_idx.ask(q, k=1)
    assert "How often, in seconds, the shell looks for new mail" in ans.text, ans.text
    assert [c.doc_id for c in ans.citations][0] == "variables"
    # off: the context holds only the first hit, and the answer quotes it
    a.deep_extra = 0
    try:
        off = a.answer(q, k=1)
    finally:
        a.deep_extra = 2
    assert "variables" not in {c.doc_id for c in off.citations}, off.text


def test_best_cosines_reads_stored_unit_vectors(deep_idx):
    a = deep_idx.answerer()
    chunks = deep_idx.store.get_chunks([h.chunk_id for h in deep_idx.search("mail", k=2)])
    q = a.embedder.embed(["How often does the shell check for new mail?"])[0]
    tops = a.units.best_cosines(list(chunks), q)
    for cid, chunk in chunks.items():
        units, vecs = a.units.get([chunk])[0]
        assert tops[cid] == pytest.approx(float((vecs @ q).max()), abs=1e-6)


def test_no_deeper_chunk_when_a_page_titled_with_the_asked_identifier_is_pinned(deep_idx):
    """Sample corpus q12 ("which fields are in the E-1006 API error response"): an API page's
    general error format outscored the E-1006 page's sentences; the page titled with the
    identifier the question names stays the authority."""
    from dataclasses import replace

    a = deep_idx.answerer()
    q = "How often does the shell check for new mail?"
    assess = a.assess(q, k=1)
    retrieved = [assess.chunks[h.chunk_id] for h in assess.hits]
    assert [h.doc_id for h in a.deeper_hits(q, assess.qvec, retrieved, assess.hits, assess.deeper)] == ["variables"]
    pinned = [replace(assess.hits[0], stage="pinned", title="MX-204 mail folders")]
    assert a.deeper_hits(f"{q} MX-204", assess.qvec, retrieved, pinned, assess.deeper) == []
    # pinned for a title without the identifier asked about: deeper chunks still count
    assert a.deeper_hits(f"{q} MX-204", assess.qvec, retrieved, [replace(pinned[0], title="Mail FAQ")], assess.deeper)


def test_states_default_reads_is_the_default():
    from citewise.answer.extractive import STATES_DEFAULT
    assert STATES_DEFAULT.search("link: Generates the crates. This is the default if --emit is not specified.")
    assert STATES_DEFAULT.search("y, yes, on, or no value: include default libraries (the default).")
    assert STATES_DEFAULT.search("Default: 100") and STATES_DEFAULT.search("The default value is emacs.")
    assert not STATES_DEFAULT.search("This variable controls which default set of key bindings is used.")


# -- a best sentence that points back ---------------------------------------------------------------

def _units_scored(text: str) -> list[ScoredUnit]:
    from citewise.answer.units import split_units
    return [ScoredUnit(0.5, 0, u, np.zeros(3, dtype=np.float32), frozenset()) for u in split_units(text)]


def test_a_sentence_pointing_back_brings_its_antecedent():
    from citewise.answer.extractive import antecedent

    # same paragraph: the sentence right before
    text = "## retries\n\nThe client retries a failed call three times. It waits one second between tries.\n"
    scored = _units_scored(text)
    first = next(s for s in scored if s.unit.text.startswith("It waits"))
    assert antecedent(first, scored, text).unit.text == "The client retries a failed call three times."
    # a paragraph of its own under an option's heading: "This" is the option; its section's
    # first sentence says what it is (the paragraph before ends with another sentence)
    text = ("#### `--nocapture`\n\nDoes not capture the output of the test. Usually the output is captured.\n\n"
            "This may also be specified by setting the GIZMO_NOCAPTURE environment variable.\n")
    scored = _units_scored(text)
    first = next(s for s in scored if s.unit.text.startswith("This may"))
    assert antecedent(first, scored, text).unit.text == "Does not capture the output of the test."
    # a sentence that does not point back, or the first sentence of its section, has none
    assert antecedent(scored[0], scored, text) is None
    lone = _units_scored("## Notes\n\nThis page lists notes.\n")
    assert antecedent(lone[0], lone, "## Notes\n\nThis page lists notes.\n") is None


def test_an_entry_that_only_points_at_another_brings_that_entry():
    from citewise.answer.extractive import pointed_at

    text = ("## Options\n\nnotify\n: Same as -b.\n\n-b\n: Report the status of finished jobs at once.\n\n"
            "verbose\n: Print each line as it is read.\n")
    scored = _units_scored(text)
    by_lead = {s.unit.lead: s for s in scored if s.unit.lead}
    assert pointed_at(by_lead["notify"], scored) is by_lead["-b"]
    assert pointed_at(by_lead["verbose"], scored) is None  # says what it does itself
    assert pointed_at(by_lead["-b"], scored) is None


def test_a_quoted_sentence_pointing_back_follows_the_sentence_it_points_at():
    from citewise.answer.extractive import antecedents_first

    text = ("## Signature errors\n\nThe sign-in failed. Ledgerly checks every response against your certificates. "
            "If none of them matches the signature, the sign-in is rejected.\n")
    scored = _units_scored(text)
    by = {s.unit.text.split()[0]: s for s in scored}
    chosen = [by["The"], by["If"], by["Ledgerly"]]
    assert [s.unit.text.split()[0] for s in antecedents_first(chosen, scored, [text])] == ["The", "Ledgerly", "If"]
    assert antecedents_first([by["The"], by["Ledgerly"]], scored, [text]) == [by["The"], by["Ledgerly"]]


def test_the_runner_up_of_another_entry_is_quoted_after_the_read_on():
    """"How do I make dns.lookup() give me every address?": the best unit is the ``address``
    option's item and its entry's sentences fill the three places; the second-ranked unit, the
    ``all`` option's item (the answer), scores 0.95 / 1.2 = 0.79 of the best (floor 0.75) and is
    quoted last. At 0.85 / 1.2 = 0.71 it is not; nor when it repeats a quoted unit."""
    w = {"address": 1.0, "every": 1.0}
    best = _scored(1.2, 0, "address {string} A string representation of an IPv4 or IPv6 address.", 0,
                   {"address"}, lead="address", kind="item")
    f1 = _scored(0.5, 80, "It is the first address the resolver returned.", 1, {"address"})
    f2 = _scored(0.45, 130, "It is empty when the lookup failed.", 2)
    runner = _scored(0.95, 2000, "all {boolean} When true, the callback returns all resolved addresses in an array.",
                     3, {"address"}, lead="all", kind="item")
    low = _scored(0.3, 2100, "family {integer} The record family.", 4, lead="family", kind="item")
    chosen = _generator(w).select(sorted([best, f1, f2, runner, low], key=lambda su: -su.score))
    assert [su.unit.text for su in chosen] == [best.unit.text, f1.unit.text, f2.unit.text, runner.unit.text]
    weaker = _scored(0.85, 2000, runner.unit.text, 3, {"address"}, lead="all", kind="item")
    chosen = _generator(w).select(sorted([best, f1, f2, weaker, low], key=lambda su: -su.score))
    assert [su.unit.text for su in chosen] == [best.unit.text, f1.unit.text, f2.unit.text]
    same = ScoredUnit(0.95, 0, runner.unit, best.vector, runner.terms)  # cosine 1 with the best unit
    chosen = _generator(w).select(sorted([best, f1, f2, same, low], key=lambda su: -su.score))
    assert same not in chosen


def test_after_the_named_entry_the_runner_up_must_lead_an_entry_of_that_name():
    """"What does the dead_code lint detect?": the best unit opens that lint's entry; the
    runner-up "Unlike dead_code, ... this lint detects unused local bindings" belongs to another
    lint and is left out. An item led by the name asked about (the ``sorted`` option's item after
    the prose sentence "The sorted option ensures ...") is still quoted."""
    w = {"dead_code": 1.0, "detect": 1.0}
    best = _scored(1.2, 0, "The dead_code lint detects unused, unexported items.", 0, {"dead_code", "detect"})
    mention = _scored(1.0, 900, "Unlike dead_code, which detects unused items, this lint detects unused local bindings.",
                      1, {"dead_code", "detect"})
    gen = _generator(w)
    gen._entry_opening = {best}
    assert [su.unit.text for su in gen.select([best, mention])] == [best.unit.text]
    gen._entry_opening = set()  # no entry named: the same runner-up is quoted
    assert [su.unit.text for su in gen.select([best, mention])] == [best.unit.text, mention.unit.text]
    w = dict.fromkeys(analyze("sorted option"), 1.0)  # the analyzer's terms, as rank_units keys them
    best = _scored(1.2, 0, "The sorted option ensures that insertion order does not change the result.", 0, {"sorted"})
    item = _scored(1.0, 900, "sorted {boolean} If set to true, all properties of an object are sorted.", 1,
                   {"sorted"}, lead="sorted", kind="item")
    gen = _generator(w)
    gen._entry_opening = {best}
    assert [su.unit.text for su in gen.select([best, item])] == [best.unit.text, item.unit.text]


def test_a_how_to_question_gets_the_procedure_around_the_quoted_step():
    """A numbered list's item is a step; :func:`with_next_steps` puts the steps of its list,
    numbered without a gap, in order where the first chosen step stood: from step 1 when they
    fit in ``most``, else ``most`` steps from the chosen one; another list or heading ends it."""
    from citewise.answer.extractive import step_number, with_next_steps

    text = ("Intro sentence here.\n\n1. Open the log.\n2. Compare the fingerprints.\n3. Upload the certificate.\n"
            "5. Not the next step.\n\n- A bullet.\n")
    units = []
    for line in text.splitlines():
        body = line.split(" ", 1)[1] if line[:1].isdigit() or line.startswith("-") else line
        if body:
            start = text.index(body)
            kind = "item" if body != "Intro sentence here." else "sentence"
            units.append(Unit(start, start + len(body), body, ("How to fix it",), kind=kind))
    assert [step_number(text, u) for u in units] == [None, 1, 2, 3, 5, None]
    scored = [ScoredUnit(1.0 - i / 10, 0, u, np.eye(8, dtype=np.float32)[i], frozenset()) for i, u in enumerate(units)]
    intro, s1, s2, s3, s5, bullet = scored
    assert with_next_steps([intro, s1], scored, [text], most=8) == [intro, s1, s2, s3]
    # step 2 quoted first: steps 1 and 3 come with it, in order, where it stood
    assert with_next_steps([s2, intro], scored, [text], most=8) == [s1, s2, s3, intro]
    # more steps than fit: from the chosen one on
    assert with_next_steps([intro, s2], scored, [text], most=2) == [intro, s2, s3]
    assert with_next_steps([intro, s5], scored, [text], most=8) == [intro, s5]  # 5 after 3: a gap
    assert with_next_steps([intro, bullet], scored, [text], most=8) == [intro, bullet]


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"


TARGET_PAGES = {
    "platform-support": ("Platform Support", "# Platform Support\n\n## Tier 3\n\n" + table(
        ["target", "std", "notes"],
        [["mips64-openwrt-linux-musl", "?", "MIPS64 for OpenWrt Linux MUSL"],
         ["mipsel-sony-psp", "*", "MIPS (LE) Sony PlayStation Portable (PSP)"],
         ["mipsel-unknown-linux-uclibc", "✓", "MIPS (LE) Linux with uClibc"],
         ["riscv32imac-unknown-xous-elf", "?", "RISC-V Xous (RV32IMAC ISA)"]])),
    "platform-support/mips64-openwrt-linux-musl": ("mips64-openwrt-linux-musl", (
        "# mips64-openwrt-linux-musl\n\nTier: 3\n\nThis target is for OpenWrt routers on 64-bit MIPS with the n64 ABI.\n\n"
        "## Requirements\n\nThis target is cross-compiled. There is no support for host tools.\n\n"
        "This target uses -msoft-float and is dynamically linked.\n")),
}

target_idx = minilm_fixture(TARGET_PAGES, "target_idx")


def test_the_page_titled_with_the_exact_name_covers_it(target_idx):
    """"mips64-openwrt-linux-musl default float ABI and linking" quoted the Platform Support row
    naming the target (its text repeats the name) ahead of the target page's own sentence, which
    does not. A unit of a page whose title holds an exact name of the question now covers that
    name; units of other pages do not (unless their text names it)."""
    q = "mips64-openwrt-linux-musl float ABI and linking"
    ans = target_idx.answerer()
    seen = {}
    generate = ans.generator.generate

    def spy(question, context, **kw):
        seen.update(ctx=context, qvec=kw.get("qvec"))
        return generate(question, context, **kw)

    ans.generator.generate = spy
    a = ans.answer(q)
    assert a.outcome == "answered", a.abstain_reason
    assert "uses -msoft-float and is dynamically linked" in a.text, a.text
    scored = {su.unit.text: su for su in ans.generator.rank_units(q, seen["ctx"], seen["qvec"])}
    name = "mips64-openwrt-linux-musl"
    assert name in scored["This target uses -msoft-float and is dynamically linked."].terms
    assert name in scored["target: mips64-openwrt-linux-musl; std: ?; notes: MIPS64 for OpenWrt Linux MUSL"].terms
    other = next(t for t in scored if t.startswith("target: mipsel-sony-psp"))
    assert name not in scored[other].terms


def test_an_entry_is_read_on_into_its_explanation_subsection():
    """A lint entry: its opening, an Example subsection (a code block, "This will produce:"), then
    the Explanation, 900 characters on. The read-on takes the Explanation's sentences, not the
    Example's, and not another heading's."""
    def su(score, start, text, headings, axis):
        vec = np.zeros(16, dtype=np.float32)
        vec[axis] = 1.0
        return ScoredUnit(score, 0, Unit(start, start + len(text), text, headings), vec, frozenset())

    entry = ("Allowed-by-default lints", "box-pointers")
    first = su(1.2, 0, "The box_pointers lints use of the Box type.", entry, 0)
    produce = su(0.5, 300, "This will produce a warning for the struct.", (*entry, "Example"), 1)
    why = su(0.4, 900, "This lint is mostly historical, and not particularly useful.", (*entry, "Explanation"), 2)
    why2 = su(0.3, 970, "Box<T> used to be built into the language.", (*entry, "Explanation"), 3)
    other = su(0.6, 1100, "The elided_lifetimes_in_paths lint detects hidden lifetimes.",
               ("Allowed-by-default lints", "elided-lifetimes-in-paths"), 4)
    scored = sorted([first, produce, why, why2, other], key=lambda s: -s.score)
    assert ExtractiveGenerator._entry_followers(first, scored) == [why, why2]
    # a definition's later sentences (under its term) still stop at the reach: past it, another
    # part of a long builtin entry ("-e with -P ...") is not read on before the sentences near it
    cd = ScoredUnit(1.2, 0, Unit(0, 60, "cd: Change the current working directory to directory.", ("Builtins",),
                                 kind="definition", lead="cd"), np.eye(16, dtype=np.float32)[5], frozenset())
    near = su(0.5, 200, "The -P option means to not follow symbolic links.", ("Builtins", "cd"), 6)
    far = su(0.7, 900, "If the -e option is supplied with -P, cd returns an unsuccessful status.", ("Builtins", "cd"), 7)
    assert ExtractiveGenerator._entry_followers(cd, sorted([cd, near, far], key=lambda s: -s.score)) == [near]
