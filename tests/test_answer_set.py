"""Answer-set grading (``citewise.evaluation.answer_set`` and ``citewise eval answers``) on a tiny
hashing index whose verdicts are known, plus validation errors and the normaliser."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from citewise.cli import app
from citewise.core import Answer, Citation, InputError
from citewise.evaluation.answer_set import (
    compile_patterns,
    first_sentence,
    grade_answer,
    is_boilerplate_first,
    normalise,
    read_answer_set,
    strip_citations,
)

from conftest import REPO, write_doc

runner = CliRunner()

#: question id -> the verdict the tiny index must earn.
EXPECTED = {
    "in-correct": "correct",  # span in the answer, expected doc cited
    "in-partial-doc": "partial",  # doc cited, the expected span is not there
    "in-wrong": "wrong",  # answered from another document, span absent
    "in-abstain": "wrong_abstention",  # in scope by the set, but nothing matches: abstains
    "fp-leak": "leak",  # false premise, answered anyway
    "oos-ok": "abstained_ok",  # out of scope, abstained
    "in-boiler": "correct",  # correct, but the answer opens with mdBook's keyboard help
}


def _row(qid, kind, text, docs=(), spans=(), corpus="tiny", category="option"):
    return {
        "id": qid,
        "corpus": corpus,
        "kind": kind,
        "category": category,
        "text": text,
        "expected_docs": list(docs),
        "expected_answer": list(spans),
    }


ROWS = [
    _row(
        "in-correct",
        "in_scope",
        "What does the force option do when removing files?",
        ["fs/remove"],
        ["Exceptions will be ignored if the **path** does not exist"],
    ),
    _row("in-partial-doc", "in_scope", "What does the recursive option remove?", ["fs/remove"], ["symbolic links"]),
    _row("in-wrong", "in_scope", "How often are keep-alive probes sent?", ["cli/flags"], ["every 30 seconds"]),
    _row("in-abstain", "in_scope", "How do I bake sourdough bread?", ["fs/remove"], ["knead"], category="howto"),
    _row(
        "fp-leak",
        "false_premise",
        "Why does the force option delete the whole disk?",
        corpus="any",
        category="false_premise",
    ),
    _row("oos-ok", "out_of_scope", "What is the capital of Australia?", corpus="any", category="out_of_scope"),
    _row(
        "in-boiler",
        "in_scope",
        "How do I search in the book?",
        ["book/shortcuts"],
        ["press S or / to search"],
        corpus="book",
    ),
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("answer-set")
    root = tmp / "docs"
    write_doc(
        root,
        "fs/remove.md",
        "Removing files",
        "## The force option\n\nWith the force option, exceptions will be ignored if the path does not exist.\n\n"
        "## Recursive removal\n\nThe recursive option removes directories and their contents.",
    )
    write_doc(
        root,
        "net/sockets.md",
        "Sockets",
        "## Timeouts\n\nA socket timeout closes the connection after 120 seconds of inactivity.\n\n"
        "## Keep-alive\n\nKeep-alive probes are sent every 60 seconds.",
    )
    write_doc(
        root,
        "book/shortcuts.md",
        "Compiler lints",
        "Keyboard shortcuts. Press S or / to search in the book.\n\n"
        "The lint level deny turns a lint warning into a compiler error.",
    )
    write_doc(
        root,
        "cli/flags.md",
        "Command line flags",
        "## Optimisation\n\nThe opt-level flag sets the optimisation level from 0 to 3.",
    )
    index = tmp / "index"
    res = runner.invoke(app, ["ingest", str(root), "--index", str(index), "--embedder", "hashing", "--json"])
    assert res.exit_code == 0, res.output
    qset = tmp / "set.jsonl"
    qset.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return index, qset


def test_eval_answers_json_verdicts_and_summary(tiny, tmp_path):
    index, qset = tiny
    rows_out = tmp_path / "rows.jsonl"
    res = runner.invoke(app, ["eval", "answers", str(qset), "--index", str(index), "--json", "--out", str(rows_out)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    verdicts = {r["id"]: r["verdict"] for r in data["rows"]}
    assert verdicts == EXPECTED
    boiler = {r["id"] for r in data["rows"] if r["boilerplate_first"]}
    assert boiler == {"in-boiler"}
    row = next(r for r in data["rows"] if r["id"] == "in-correct")
    # "... when removing files?" states a condition: answer.sufficiency=auto (the default) answers it
    # through the evidence-gap controller, which finds both clauses ("Removing files" > "The force option")
    assert row["cited_docs"] == ["fs/remove"] and row["outcome"] == "supported" and row["latency_ms"] > 0
    assert "[doc:fs/remove]" in row["answer"] and row["abstain_reason"] == ""
    # a wrong abstention names the gate that made it
    assert all(r["abstain_reason"] for r in data["rows"] if r["verdict"] in ("wrong_abstention", "abstained_ok"))
    o = data["summary"]["overall"]
    assert (o["questions"], o["in_scope"], o["correct"], o["partial"], o["wrong"], o["wrong_abstention"]) == (
        7,
        5,
        2,
        1,
        1,
        1,
    )
    assert (o["correct_rate"], o["no_answer"], o["abstained_ok"], o["leaks"], o["abstention_rate"]) == (
        0.4,
        2,
        1,
        1,
        0.5,
    )
    assert o["boilerplate_first"] == 1 and o["mean_latency_ms"] > 0
    assert set(data["summary"]["by_kind"]) == {"in_scope", "out_of_scope", "false_premise"}
    assert data["summary"]["by_corpus"]["book"]["correct_rate"] == 1.0
    assert data["summary"]["by_category"]["howto"]["wrong_abstention"] == 1
    assert [json.loads(line)["id"] for line in rows_out.read_text().splitlines()] == [r["id"] for r in ROWS]


def test_eval_answers_table_failures_and_extra_boilerplate(tiny):
    index, qset = tiny
    res = runner.invoke(
        app,
        [
            "eval",
            "answers",
            str(qset),
            "--index",
            str(index),
            "--show-failures",
            "--boilerplate-pattern",
            r"keep-alive probes",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "kind=in_scope" in res.stdout and "corpus=book" in res.stdout
    assert "2 correct and cited" in res.stdout and "1 leaks of 2" in res.stdout
    assert "wrong_abstention · in-abstain" in res.stdout and "leak · fp-leak" in res.stdout
    assert "· in-correct (" not in res.stdout and "· oos-ok (" not in res.stdout
    res = runner.invoke(
        app,
        ["eval", "answers", str(qset), "--index", str(index), "--json", "--boilerplate-pattern", r"keep-alive probes"],
    )
    boiler = {r["id"] for r in json.loads(res.stdout)["rows"] if r["boilerplate_first"]}
    assert boiler == {"in-boiler", "in-wrong"}


def test_grade_script_grades_by_file_path(tiny):
    """bench/realdocs/grade.py loads the grading module by path and agrees with the CLI."""
    index, qset = tiny
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "realdocs" / "grade.py"), str(qset), "--index", str(index), "--json"],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert {r["id"]: r["verdict"] for r in data["rows"]} == EXPECTED


@pytest.mark.parametrize(
    "line, needle",
    [
        ({"id": "x"}, "missing field 'corpus'"),
        (
            {**ROWS[0], "kind": "maybe"},
            "field 'kind' must be one of in_scope, out_of_scope, false_premise, got 'maybe'",
        ),
        ({**ROWS[0], "expected_answer": []}, "field 'expected_answer' must not be empty for an in_scope question"),
        ({**ROWS[0], "expected_docs": "fs/remove"}, "field 'expected_docs' must be a list of non-empty strings"),
        ({**ROWS[0], "text": ""}, "field 'text' must be a non-empty string"),
        # longer than the index accepts: named here, not after answering the questions before it
        (
            {**ROWS[0], "text": "refund " * 400},
            "field 'text' is 2,800 characters; the limit is 2,000 (question 'in-correct')",
        ),
        (
            {**ROWS[0], "expected_docs": ["fs/removes"]},
            "unknown document id 'fs/removes' (not in the index; renamed or removed?); did you mean 'fs/remove'?",
        ),
        ({**ROWS[0], "id": "oos-ok"}, "duplicate question id 'oos-ok' (first on line 1)"),
    ],
)
def test_validation_errors_name_file_line_and_field(tmp_path, line, needle):
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(ROWS[5]) + "\n\n" + json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_answer_set(path, ["fs/remove", "net/sockets"])
    assert str(e.value).startswith(f"{path}:3: ") and needle in str(e.value)


def test_validation_bad_json_and_cli_error(tiny, tmp_path):
    index, _ = tiny
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(ROWS[5]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"set.jsonl:2: invalid JSON"):
        read_answer_set(path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**ROWS[0], "expected_docs": ["fs/remov"]}) + "\n", encoding="utf-8")
    res = runner.invoke(app, ["eval", "answers", str(bad), "--index", str(index)])
    assert res.exit_code != 0 and isinstance(res.exception, InputError)
    assert "bad.jsonl:1" in str(res.exception) and "did you mean 'fs/remove'?" in str(res.exception)


def test_normalise_hand_made_strings():
    assert normalise("  The **`force`** option\n\tof [fs.rm()](fs.md#rm)  ") == "the force option of fs.rm"
    assert normalise("__Exceptions__ will be *ignored*") == "exceptions will be ignored"
    assert normalise("“Quoted”  ‘text’") == "\"quoted\" 'text'"
    assert normalise("ﬁle (a) [b]") == "file a b"  # NFKC folds the ligature
    assert normalise("") == ""
    assert strip_citations("It is 30 days [doc:refunds/pro]. Then [chunk:a/b#c] more.") == "It is 30 days. Then more."
    answer = "With `force`, exceptions will be _ignored_ if the path does not exist [doc:fs/remove]."
    span = "exceptions will be ignored if the path does not exist."
    assert normalise(span) in normalise(strip_citations(answer))


def test_boilerplate_first_sentence_only():
    pats = compile_patterns()
    assert first_sentence("Keyboard shortcuts. [doc:x] Real answer. [doc:x]") == "Keyboard shortcuts."
    assert is_boilerplate_first("Press ← or → to navigate between chapters\nThe answer.", pats)
    assert is_boilerplate_first("We use cookies to improve your experience. Fine.", pats)
    assert not is_boilerplate_first("The answer. Skip to main content.", pats)
    with pytest.raises(InputError, match="not a regular expression"):
        compile_patterns(["(unclosed"])


def test_grade_answer_rules_with_hand_made_answers():
    from citewise.evaluation.answer_set import SetQuestion

    q = SetQuestion("q", "c", "in_scope", "cat", "?", ("a/doc",), ("thirty days",))
    cite = [Citation("a/doc", "A", "", "")]
    assert grade_answer(q, Answer("It is **thirty** days. [doc:a/doc]", "answered", cite)).verdict == "correct"
    assert grade_answer(q, Answer("It is thirty days. [doc:b/doc]", "partial")).verdict == "partial"  # span only
    assert (
        grade_answer(q, Answer("No idea. [chunk:a/doc#s]", "answered")).verdict == "partial"
    )  # doc only, via chunk marker
    assert grade_answer(q, Answer("No idea.", "answered")).verdict == "wrong"
    assert grade_answer(q, Answer("I have no document on this.", "abstained")).verdict == "wrong_abstention"
    fp = SetQuestion("f", "c", "false_premise", "fp", "?", (), ())
    assert grade_answer(fp, Answer("Yes. [doc:a/doc]", "partial")).verdict == "leak"
    assert grade_answer(fp, Answer("I have no document on this.", "abstained")).verdict == "abstained_ok"


def test_table_row_span_matches_a_row_quoted_with_its_header_labels():
    from citewise.evaluation.answer_set import SetQuestion, span_in

    row = normalise("i686-unknown-openbsd | libc++ | Standard PC and clones")
    quoted = normalise(
        "Target name: i686-unknown-openbsd; C++ library: libc++; Platform: Standard PC and clones based on ..."
    )
    assert span_in(row, quoted)
    assert not span_in(
        row, normalise("Target name: i686-unknown-openbsd; C++ library: libstdc++; Platform: Standard PC and clones")
    )
    assert not span_in(row, normalise("Standard PC and clones. i686-unknown-openbsd uses libc++"))  # out of order
    # cells are whole words, and close together (one row, not two facts pages apart)
    assert not span_in(normalise("2 | 225 |"), normalise("opt-level: 3; Threshold: 2250."))
    assert not span_in(normalise("2 | 225 |"), normalise("opt-level: 2; " + "x" * 80 + " Threshold: 225."))
    assert span_in(normalise("2 | 225 |"), normalise("opt-level: 2; Threshold: 225."))
    assert not span_in(normalise("libc++ |"), normalise("C++ library: libc++"[:-1]))  # one cell: plain substring only
    assert not span_in("", "anything")
    q = SetQuestion("q", "c", "in_scope", "table", "?", ("rustc/lto",), ("Rust 1.47 | Clang 11 |",))
    answer = Answer("Rust Version: Rust 1.47; Clang Version: Clang 11. [doc:rustc/lto]", "answered")
    assert grade_answer(q, answer).verdict == "correct"


def test_a_term_and_description_span_matches_the_term_colon_rendering():
    from citewise.evaluation.answer_set import SetQuestion, span_in

    # a PDF definition list sets the term beside its description; the answer renders "term: description"
    assert span_in(
        normalise("\\j The number of jobs currently managed"),
        normalise("\\j: The number of jobs currently managed by the shell."),
    )
    assert not span_in(normalise("\\j The number of jobs currently managed"), normalise("\\j: The count of jobs."))
    q = SetQuestion(
        "q", "c", "in_scope", "table", "?", ("bash/bashref",), ("-N file True if file exists and has been modified",)
    )
    answer = Answer(
        "-N file: True if file exists and has been modified since it was last read. [doc:bash/bashref]", "answered"
    )
    assert grade_answer(q, answer).verdict == "correct"


def test_eval_answers_llm_generator(tiny, monkeypatch):
    from fake_openai import FakeOpenAI

    index, qset = tiny
    with FakeOpenAI([{"content": "Exceptions will be ignored if the path does not exist [doc:fs/remove]."}]) as server:
        monkeypatch.setenv("CITEWISE_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("CITEWISE_LLM_MODEL", "local-model")
        res = runner.invoke(app, ["eval", "answers", str(qset), "--index", str(index), "--llm", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    verdicts = {r["id"]: r["verdict"] for r in data["rows"]}
    assert data["generator"] == "llm" and server.requests
    assert (
        verdicts["in-correct"] == "correct" and verdicts["fp-leak"] == "leak" and verdicts["oos-ok"] == "abstained_ok"
    )
