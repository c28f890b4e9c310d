"""Hanging-indent definition entries of plain-text manuals (manual pages, GNU Info, configuration
references): the term lines and the deeper-indented body, the units under the term, and the
answer that reads them."""

from __future__ import annotations

import pytest

from conftest import open_minilm_index
from citewise.answer.units import split_units
from citewise.text.hanging import hanging_definitions, term_alternatives

MAN_PAGE = """\
OPTIONS
       -c, --stdout
              Write output on standard output; keep original files unchanged.

       -k, --keep
              Keep (don't delete) input files during compression or decompression.
              The default is to delete them.

   Tuning
       -b, --blocks=N
              Use blocks of N kilobytes. The default block size is 64.
"""

INFO_ENTRY = """\
‘-n’
‘--quiet’
‘--silent’
     By default, ‘sed’ prints out the pattern space at the end of each
     cycle. These options disable this automatic printing.

‘-s’
     Consider files as separate.
"""

CONFIG_REFERENCE = """\
timeout connect <timeout>
  Set the maximum time to wait for a connection attempt to a server to succeed.
  Arguments :
    <timeout> is the timeout value specified in milliseconds by default.

  If the server is located on the same LAN, the connection should be immediate.

timeout queue <timeout>
  Set the maximum time to wait in the queue for a connection slot to be free.
"""


def terms(text: str) -> list[str]:
    return [d[3] for d in hanging_definitions(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        (MAN_PAGE, ["OPTIONS", "-c, --stdout", "-k, --keep", "Tuning", "-b, --blocks=N"]),
        (INFO_ENTRY, ["‘-n’, ‘--quiet’, ‘--silent’", "‘-s’"]),
        (CONFIG_REFERENCE, ["timeout connect <timeout>", "timeout queue <timeout>"]),
        # a wrapped paragraph's first line ends a sentence: no term
        ("A sentence that ends here.\n    and an indented line after it\n", []),
        # a lead-in colon, a list item, a bullet and a shell prompt are not terms
        ("Example:\n    gzip -k file\n", []),
        ("- an item\n    its continuation\n", []),
        ("• an item\n    its continuation\n", []),
        ("$ tar -xf a.tar\n    x file\n", []),
        # the body must be indented at least two columns deeper, with no blank line between
        ("term\n continued at one column\n", []),
        ("term\n\n    a body after a blank line\n", []),
        # the line before a term is blank, the start, or the end of a deeper body
        ("A sentence.\nshort line\n    deeper\n", []),
        # fenced code is neither term nor body
        ("```\nterm\n    body\n```\n", []),
        # a term line is at most 80 characters
        ("x" * 81 + "\n    body\n", []),
    ],
)
def test_hanging_definition_terms(text, expected):
    assert terms(text) == expected


def test_a_body_runs_over_blank_lines_and_ends_at_the_next_term():
    (s1, e1, d1, _), (s2, _, _, _) = hanging_definitions(CONFIG_REFERENCE)
    assert CONFIG_REFERENCE[s1:d1].strip() == "timeout connect <timeout>"
    assert CONFIG_REFERENCE[d1:e1].startswith("Set the maximum time to wait for a connection")
    assert CONFIG_REFERENCE[d1:e1].endswith("the connection should be immediate.")
    assert e1 < s2 and CONFIG_REFERENCE[s2:].startswith("timeout queue")


@pytest.mark.parametrize(
    "term, names",
    [
        ("-z, --gzip", ["-z, --gzip", "-z", "--gzip"]),
        ("‘-n’, ‘--quiet’", ["-n’, ‘--quiet", "-n", "--quiet"]),
        ("`--emit`", ["--emit"]),
        ("ServerAliveCountMax", ["ServerAliveCountMax"]),
        ("", []),
    ],
)
def test_term_alternatives(term, names):
    assert term_alternatives(term) == names


def test_body_sentences_sit_under_their_term_and_nested_terms_keep_the_outer_one():
    units = {u.text: u for u in split_units(MAN_PAGE)}
    keep = units["-k, --keep: Keep (don't delete) input files during compression or decompression."]
    assert (keep.kind, keep.lead, keep.headings) == ("definition", "-k, --keep", ("OPTIONS",))
    assert units["The default is to delete them."].headings == ("OPTIONS", "-k, --keep")
    assert units["The default block size is 64."].headings == ("OPTIONS", "Tuning", "-b, --blocks=N")
    sed = {u.text: u for u in split_units(INFO_ENTRY)}
    assert sed["These options disable this automatic printing."].headings == ("‘-n’, ‘--quiet’, ‘--silent’",)
    ref = {u.text: u for u in split_units(CONFIG_REFERENCE)}
    same_lan = "If the server is located on the same LAN, the connection should be immediate."
    assert ref[same_lan].headings == ("timeout connect <timeout>",)


def test_markdown_definition_lists_are_unchanged():
    text = "pipefail\n: If set, the status is the last failure. It is off by default.\n"
    (u1, u2) = split_units(text)
    assert (u1.text, u1.kind, u1.lead) == (
        "pipefail: If set, the status is the last failure.",
        "definition",
        "pipefail",
    )
    assert (u2.text, u2.headings) == ("It is off by default.", ("pipefail",))


def test_an_answer_from_a_manual_page_reads_the_entry_named_by_an_alternative(tmp_path):
    """A plain-text manual ingested as text: the question names the entry by its second
    alternative (``--keep``) and asks what its body says past the first sentence."""
    (tmp_path / "docs").mkdir()
    page = (
        "GZIP(1)\n\nNAME\n       gzip - compress or expand files\n\n"
        + MAN_PAGE
        + (
            "\n       -r, --recursive\n              Travel the directory structure recursively."
            " The default is to compress the named files only.\n"
        )
    )
    (tmp_path / "docs" / "gzip.txt").write_text(page, encoding="utf-8")
    idx = open_minilm_index(tmp_path / "index")
    assert idx.ingest(tmp_path / "docs").errors == []
    a = idx.ask("Does gzip --keep delete the input files by default?")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    assert "The default is to delete them." in a.text, a.text
    assert "--recursive" not in a.text, a.text


def test_a_chunk_starting_inside_an_entry_body_repeats_its_term_lines():
    """A long entry split across chunks: the later chunk starts with a copy of the term line
    (a prefix, as a split table repeats its header), so its sentences still sit under the term;
    ``text[prefix_len:]`` is still the source span."""
    from citewise.text.chunker import Chunker

    body = "".join(f"              Sentence {i} of the keep option says something about files.\n\n" for i in range(150))
    text = "OPTIONS\n\n       -k, --keep\n" + body + "       -r, --recursive\n              Travel the tree.\n"
    chunks = Chunker().chunk("gzip", "GZIP", text)
    assert len(chunks) >= 2
    for c in chunks:
        assert c.text[c.prefix_len :] == text[c.start : c.end]
    inside = [c for c in chunks if "Sentence 140 " in c.text]
    (later,) = inside
    assert later.start > text.index("Sentence 1 ")
    assert later.text[: later.prefix_len].startswith("       -k, --keep\n")
    unit = next(u for u in split_units(later.text) if u.text.startswith("Sentence 140 "))
    assert unit.headings[-1] == "-k, --keep"
    # outside any entry body: no prefix
    assert chunks[0].prefix_len == 0


def test_an_oversized_indented_block_is_cut_at_its_blank_lines():
    """Plain text indented four or more columns after a blank line parses as one indented block;
    when it is too long for a chunk it is cut between its paragraphs, never inside one."""
    from citewise.text.chunker import Chunker

    paragraphs = [
        f"     Paragraph {i} begins here and goes on\n     over a second line that ends it.\n" for i in range(120)
    ]
    text = "Intro.\n\n" + "\n".join(paragraphs)
    chunks = Chunker().chunk("doc", "Doc", text)
    assert len(chunks) >= 2
    for c in chunks[1:]:
        assert text[: c.start].endswith("\n\n     ") or text[: c.start].endswith("\n\n"), repr(
            text[c.start - 20 : c.start]
        )
        assert c.text.lstrip().startswith("Paragraph "), c.text[:40]
