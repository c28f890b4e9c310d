"""Search snippets: the best-matching passage of a hit and its offsets (library and ``search``)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from citewise.cli import app
from citewise.answer.question_words import missing_words
from citewise.retrieval.snippets import best_snippet, chunk_snippet, segments

from conftest import write_doc

runner = CliRunner()

TEXT = (
    "# Refunds\n"
    "Refunds are issued to the original card.\n"
    "On Pro, you can request a refund within 30 days of the charge. Annual plans differ.\n"
    "Contact support for anything else."
)


def test_segments_are_lines_then_sentences():
    assert [TEXT[s:e] for s, e in segments(TEXT)] == [
        "# Refunds",
        "Refunds are issued to the original card.",
        "On Pro, you can request a refund within 30 days of the charge.",
        "Annual plans differ.",
        "Contact support for anything else.",
    ]


def test_best_snippet_exact_text_and_offsets():
    s = best_snippet(TEXT, "Pro refund window days")
    assert (s.text, s.start, s.end) == ("On Pro, you can request a refund within 30 days of the charge.", 51, 113)
    assert TEXT[s.start : s.end] == s.text
    # terms spread over two sentences: the window of both wins over either alone
    s = best_snippet(TEXT, "original card annual plans")
    assert (
        s.text
        == "Refunds are issued to the original card.\nOn Pro, you can request a refund within 30 days of the charge. Annual plans differ."
    )
    assert (s.start, s.end) == (10, 134)
    # a tie (one term each) goes to the earliest passage; headings lose ties
    assert best_snippet(TEXT, "refund").text == "Refunds are issued to the original card."
    # no query term at all: the first passage that is not a heading
    assert best_snippet(TEXT, "zebra").text == "Refunds are issued to the original card."
    assert best_snippet("", "x") == best_snippet("   \n", "x")
    # terms on a heading line do not count: the page's title is not its snippet
    notes = "# Gizmo 5.1 release notes\n\n## New\n\n- **Direct debit.** Workspaces can pay from a bank account.\n"
    s = best_snippet(notes, "What changed in version 5.1?")
    assert s.text == "- **Direct debit.** Workspaces can pay from a bank account."
    assert best_snippet(notes, "bank account 5.1").text == s.text


def test_long_segment_gets_a_word_aligned_window():
    words = (
        " ".join(f"w{i}" for i in range(100))
        + " the escalation phone number is 555 "
        + " ".join(f"v{i}" for i in range(100))
    )
    s = best_snippet(words, "escalation phone", max_chars=60)
    assert len(s.text) <= 60 and "escalation phone" in s.text and words[s.start : s.end] == s.text
    assert s.text.startswith("w90 w91 ")  # the earliest window that holds both terms (exactly 60 chars to "phone")
    assert s.start == words.index("w90 ")


def test_chunk_snippet_offsets_are_source_offsets():
    chunk = SimpleNamespace(text=TEXT, start=1000, end=1000 + len(TEXT))
    s = chunk_snippet(chunk, "Pro refund window days")
    assert (s.start, s.end) == (1051, 1113)


def test_search_json_snippets_with_source_offsets_and_whole_ids(tmp_path):
    root = tmp_path / "docs"
    rel = "policies/billing-and-payments/refunds-for-annual-and-monthly-subscriptions-explained.md"
    path = write_doc(
        root,
        rel,
        "Refunds for annual and monthly subscriptions explained in full detail",
        "## Requesting a refund on a monthly subscription plan\n\n"
        "Refunds are issued to the original card.\n"
        "On Pro, you can request a refund within 30 days of the charge. Annual plans differ.",
    )
    write_doc(root, "exports/csv.md", "Export data to CSV", "Exports use the ISO 8601 date format.")
    index = tmp_path / "index"
    res = runner.invoke(app, ["ingest", str(root), "--index", str(index), "--embedder", "hashing", "--json"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["search", "Pro refund window days", "--index", str(index), "--json", "--k", "2"])
    assert res.exit_code == 0, res.output
    hit = json.loads(res.stdout)["hits"][0]
    doc_id = rel[:-3]
    assert hit["doc_id"] == doc_id
    assert hit["chunk_id"] == f"{doc_id}#refunds-for-annual-and-monthly-subscriptions-explained-in-full-detail"
    assert hit["snippet"] == "On Pro, you can request a refund within 30 days of the charge."
    source = path.read_text(encoding="utf-8")
    assert source[hit["snippet_start"] : hit["snippet_end"]] == hit["snippet"]
    res = runner.invoke(app, ["search", "Pro refund window days", "--index", str(index), "--k", "1"])
    assert res.exit_code == 0 and "[" + f"{hit['snippet_start']}-{hit['snippet_end']})" in res.stdout.replace(
        "\n", " "
    ).replace("│", " ").replace(" ", "")


def test_search_says_which_query_words_no_result_holds(tmp_path):
    assert missing_words("What is the refund policy of Stripe?", ["Refund policy: 30 days."]) == ["Stripe"]
    assert missing_words("Stripe stripe STRIPE refunds", ["Refunds"]) == ["Stripe"]  # one word once, as first typed
    assert missing_words("What is it?", ["anything"]) == []  # only question words: nothing to miss
    root = tmp_path / "docs"
    write_doc(root, "refunds.md", "Refunds", "On Pro, you can request a refund within 30 days of the charge.")
    index = tmp_path / "index"
    assert runner.invoke(app, ["ingest", str(root), "--index", str(index), "--embedder", "hashing"]).exit_code == 0
    res = runner.invoke(app, ["search", "refund window of Stripe", "--index", str(index), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["missing_words"] == ["window", "Stripe"]
    res = runner.invoke(app, ["search", "refund days", "--index", str(index), "--json"])
    assert json.loads(res.stdout)["missing_words"] == []
    res = runner.invoke(app, ["search", "refund window of Stripe", "--index", str(index)])
    assert "note: no result contains 'window', 'Stripe'; they match the rest of the query" in res.stderr
    res = runner.invoke(app, ["search", "quantum llamas", "--index", str(index)])
    assert res.exit_code == 0 and "none of these results contains a word of the query" in res.stderr
    res = runner.invoke(app, ["search", "Pro refund", "--index", str(index)])
    assert "note:" not in res.stderr


def test_control_characters_in_documents_never_reach_the_terminal(tmp_path):
    """A document holding ``ESC[31m`` or an OSC title sequence recoloured the terminal or renamed
    its window when search / ask printed it (break-it trial); they print as U+FFFD. JSON escapes
    them already."""
    root = tmp_path / "docs"
    write_doc(root, "esc.md", "Esc", "This is \x1b[31mRED\x1b[0m and \x1b]0;PWNED\x07 text about kestrels.")
    index = tmp_path / "index"
    assert runner.invoke(app, ["ingest", str(root), "--index", str(index), "--embedder", "hashing"]).exit_code == 0
    res = runner.invoke(app, ["search", "kestrels", "--index", str(index)])
    assert res.exit_code == 0 and "kestrels" in res.stdout
    assert "\x1b" not in res.stdout and "\x07" not in res.stdout and "\ufffd[31mRED" in res.stdout, res.stdout
    # an answer quoting it (printed by the console every ask uses)
    import io

    from citewise import cli
    from citewise.core import Answer

    buf = io.StringIO()
    cli.out.file = buf
    try:
        cli.print_answer(Answer("This is \x1b[31mRED\x1b[0m. [doc:esc]", "answered"), False)
    finally:
        cli.out.file = None  # back to sys.stdout
    assert "\x1b" not in buf.getvalue() and "\ufffd[31mRED" in buf.getvalue()
    res = runner.invoke(app, ["search", "kestrels", "--index", str(index), "--json"])
    assert "\\u001b[31mRED" in res.stdout and "\x1b" not in res.stdout


def _best_snippet_by_passage(text: str, query: str, max_chars: int):
    """The rule as first written: every candidate passage analyzed whole (the shipped one
    analyzes each segment once and unions their terms)."""
    from citewise.retrieval.snippets import _windows, segments
    from citewise.text.analyzer import analyze

    segs = segments(text)
    if not segs:
        return ("", 0, 0)
    wanted, _best = set(analyze(query)), None
    heading = [text[s] == "#" for s, _ in segs]

    def key(s, e, first, n):
        n_headings = sum(heading[first : first + n])
        body = (
            " ".join(text[a:b] for k, (a, b) in enumerate(segs[first : first + n], first) if not heading[k])
            if n_headings
            else text[s:e]
        )
        return (-len(wanted & set(analyze(body))) if wanted else 0, n_headings, n, s), (s, e)

    cands = []
    for i, (s, e) in enumerate(segs):
        if e - s > max_chars:
            cands += [key(ws, we, i, 1) for ws, we in _windows(text, s, e, max_chars)]
            continue
        for j in range(i, len(segs)):
            if segs[j][1] - s > max_chars:
                break
            cands.append(key(s, segs[j][1], i, j - i + 1))
    s, e = min(cands)[1] if cands else segs[0]
    return (text[s:e], s, e)


@pytest.mark.parametrize("max_chars", [240, 60, 25])
def test_segment_terms_unioned_pick_what_whole_passages_would(max_chars):
    """A passage's query terms are the union of its segments' (no token spans the whitespace
    between segments): the same snippet as analyzing each candidate passage whole, on headings,
    identifiers, accents, combining marks, CJK bigrams, dashes and over-long lines."""
    import random

    from citewise.retrieval.snippets import best_snippet

    texts = [
        "# Refunds\nRefunds take 30 days. Cards are charged monthly.\n## Exceptions\nE-1004 means the refund failed! Retry?",
        "申请退款需要主管批准。退款 请求\n# 标题\n退款内容。 请求 主管",
        "Caf\u00e9 na\u00efve r\u00e9sum\u00e9 E\u20131004 \ufb01le\u00a0size. e\u0301cole\n\u0301start v4.5 is out. "
        * 3,
        "word " * 120 + "refund window\n" + "filler. " * 40 + "\n# refund window heading\nthe window for a refund",
    ]
    rng = random.Random(12)
    for text in texts:
        words = text.split()
        for _ in range(40):
            query = " ".join(rng.choice(words) for _ in range(rng.randint(1, 4)))
            sn = best_snippet(text, query, max_chars)
            assert (sn.text, sn.start, sn.end) == _best_snippet_by_passage(text, query, max_chars), query
