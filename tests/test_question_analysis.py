"""The one question analysis (citewise.answer.question): one row per case."""

from __future__ import annotations

import pytest

from citewise.answer.question import ANSWER_TYPES, KINDS, analyze_question, question_parts


@pytest.mark.parametrize(
    "question, kind, expected",
    [
        ("Can I work from home?", "yes_no", "boolean"),
        ("Are refunds approved automatically?", "yes_no", "boolean"),
        ("I have been on Pro for 20 days, can I get my money back?", "yes_no", "boolean"),
        ("How do I read a file line by line?", "how_to", "procedure"),
        ("How many vacation days do I get?", "factoid", "number"),
        ("When was the Norman conquest?", "factoid", "date"),
        ("Who ruled the duchy of Normandy?", "factoid", "person"),
        ("Where is the config file kept?", "factoid", "place"),
        ("Why did the rollback setting change?", "factoid", "reason"),
        ("What is a Buffer?", "definition", "definition"),
        ("What is the default retry delay?", "definition", "value"),
        ("npm ci vs npm install", "comparison", "description"),
        ("net server.listen backlog default", "keyword", "value"),
        ("Show an example of the unused_results lint", "factoid", "code"),
    ],
)
def test_kind_and_expected_answer_type(question, kind, expected):
    qa = analyze_question(question)
    assert qa.kind in KINDS and qa.expected in ANSWER_TYPES
    assert (qa.kind, qa.expected) == (kind, expected)


@pytest.mark.parametrize(
    "question, conditions, absolute",
    [
        (
            "Can the payment worker charge an order twice after a capture request times out?",
            ("after a capture request times out",),
            False,
        ),
        ("Could a delayed retry cause a double charge? Is it guaranteed safe?", (), True),
        ("Does the client always send the same key?", (), True),
        ("What is the refund window if I pay annually?", ("if I pay annually",), False),
        ("When does the daily limit reset?", (), False),  # a question word, not a condition
        # a clause saying a thing is not given asks for the default: no condition to check
        ("What does rustc use when I do not specify it?", (), False),
        ("What does rustc use when I build for wasm?", ("when I build for wasm",), False),
        ("Which file gets the history if I never set HISTFILE?", (), False),
        ("Does bash never save the history?", (), True),
        # an absolute word inside a condition describes the asker's case, it claims nothing
        ("What goes wrong if I never call read_end?", ("if I never call read_end",), False),
        ("Is it OK for a program to call exit twice?", (), False),
        # "given", "provided", "assuming" are participles unless they open the sentence or a
        # clause after a comma, or are followed by "that"
        ("Which file is read when the option is given?", ("when the option is given",), False),
        (
            "What wins if a flag is set and also given on the command line?",
            ("if a flag is set and also given on the command line",),
            False,
        ),
        ("Given a list of files, how do I compress them?", ("Given a list of files",), False),
        ("Is the refund automatic provided that the order shipped?", ("provided that the order shipped",), False),
    ],
)
def test_conditions_and_absolute_claims(question, conditions, absolute):
    qa = analyze_question(question)
    assert qa.conditions == conditions
    assert qa.absolute is absolute
    assert qa.conditional is bool(conditions or absolute)


@pytest.mark.parametrize(
    "question, subject, entities, identifiers",
    [
        ("How many vacation days do I get?", "vacation days", (), ()),
        ("What does the --dry-run flag do?", "dry-run flag", (), ("--dry-run",)),
        ("What does error E-1003 mean?", "error E-1003 mean", ("E-1003",), ("E-1003",)),
        ("Does Ledgerly sync with Sage 50?", "Ledgerly sync Sage 50", ("Ledgerly", "Sage"), ()),
    ],
)
def test_subject_entities_identifiers(question, subject, entities, identifiers):
    qa = analyze_question(question)
    assert (qa.subject, qa.entities, qa.identifiers) == (subject, entities, identifiers)


def test_the_analysis_is_computed_once_per_question():
    assert analyze_question("What is a Buffer?") is analyze_question("What is a Buffer?")


@pytest.mark.parametrize(
    "question, asks_default",
    [
        ("What is the default retry delay?", True),
        ("Which editor does fc use when FCEDIT is unset?", True),
        # a negation shortly before a verb of supplying: what holds when the thing is not given
        ("What sampling interval does the profiler use if I don't set one?", True),
        ("Which file is read when no option is given?", True),
        ("Which linker is used if I do not pass -C linker?", True),
        ("Which variable gets the line if I call read without giving a name?", True),
        ("Which file gets the history if I never set HISTFILE?", True),
        ("How do I set the cache size?", False),
        ("Why is the option not documented?", False),
        ("Can I pass two files at once?", False),
    ],
)
def test_a_question_about_what_holds_when_nothing_is_given_asks_the_default(question, asks_default):
    qa = analyze_question(question)
    assert qa.asks_default is asks_default
    if asks_default and qa.kind != "yes_no":
        assert qa.expected in ("value", "number", "date")


def test_language_and_code_request():
    assert analyze_question("Wie beantrage ich eine Erstattung für mein Konto?").language == "und"
    assert analyze_question("How do I export invoices?").language == "en"
    assert analyze_question("How do I export invoices?").wants_code
    assert not analyze_question("What is the refund window?").wants_code


@pytest.mark.parametrize(
    "text, parts",
    [
        # "and" / ", and" / ";" before a word that opens a question starts a new part
        ("What does error E-1003 mean and how do I fix it?", ("What does error E-1003 mean", "how do I fix it?")),
        (
            "What is the daily limit on the Enterprise plan, and how do I ask for a higher one?",
            ("What is the daily limit on the Enterprise plan", "how do I ask for a higher one?"),
        ),
        ("Is the cache shared; can I turn it off?", ("Is the cache shared", "can I turn it off?")),
        # a question mark followed by more text
        ("Is it safe? Can I retry it?", ("Is it safe?", "Can I retry it?")),
        ("How do I install it? Show the command.", ("How do I install it?", "Show the command.")),
        # coordination inside one clause is one question
        ("How do I install and configure the proxy?", ()),
        ("What is the difference between zip and gzip?", ()),
        ("Which files does it read and write?", ()),
        # "and" only as a word ("command is found": no split inside "command")
        ("What exit status does bash return if a command is found but is not executable?", ()),
        # a one-word part is no question ("and how?"), nor is a list of four
        ("Does it compress and how?", ()),
        # "or" joins the alternatives of one question
        ("Can a target be removed outright, or does it get demoted first?", ()),
        ("What is A? What is B? What is C? What is D?", ()),
        # a capitalised word after "and" is a name, not an opener ("May", "Will")
        ("What changed between April and May 2026?", ()),
        ("Which payments did Tom and Will Smith approve?", ()),
        # a question mark standing alone ends no question; "?!" and "？" do
        (
            "What does the ? operator do and how do I fix E-1003?",
            ("What does the ? operator do", "how do I fix E-1003?"),
        ),
        ("Is it safe?! Can I retry it?", ("Is it safe?", "Can I retry it?")),
        ("Is it safe？ Can I retry it?", ("Is it safe？", "Can I retry it?")),
        # text after a question mark that asks nothing is context of the part before it
        ("Why did my card payment fail? I am on the Pro plan and pay by card.", ()),
        ("Why did it fail? I run it nightly.", ()),
        ("Is it safe? I run it nightly. Can I retry it?", ("Is it safe?", "I run it nightly. Can I retry it?")),
        # a verb in the imperative after "and" coordinates one request
        ("How do I dispute an invoice and tell support why it is wrong?", ()),
        # a part of question words only is no part
        ("What does E-1003 mean and how do", ()),
        ("What does E-1003 mean (and how do I fix it)?", ("What does E-1003 mean", "how do I fix it)?")),
    ],
)
def test_a_compound_question_is_read_as_its_parts(text, parts):
    assert question_parts(text) == parts
    assert analyze_question(text).parts == parts
