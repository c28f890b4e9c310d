"""Issue 10, PDF manuals: code examples set in a monospace font become fenced code blocks.

Plain text extraction runs a manual's examples into the prose around them ("... subscripted
arrays: $ string=0123 $ echo ${string:7:2} 78 ..."), so a question asking for code got prose.
pypdf reports each text run's font; a line set wholly in a monospace font is code. All text is
made up here (a fictional "gizmo" shell); PDFs are written by ``conftest.make_pdf`` (Helvetica
text, Courier code).
"""

from __future__ import annotations

import hashlib

import pytest
from pypdf.generic import DictionaryObject, NameObject, NumberObject

from citewise.answer.citations import split_cited_sentences
from citewise.answer.units import split_units
from citewise.index import Index
from citewise.text import loaders
from citewise.text.loaders import CODE_MARK, content_hash, load_pdf, pdf_to_text

from conftest import make_pdf

M = CODE_MARK

EXAMPLE_PAGE = [
    "Substring Expansion",
    "Here is an example of substring expansion on a variable named word:",
    ("mono", "$ word=abcdefgh"),
    ("mono", "$ gizmo-echo ${word:2:3}"),
    ("mono", "cde"),
    "The offset counts from zero and the length is a number of characters.",
]


def test_monospace_lines_become_one_fenced_block_between_prose(tmp_path):
    (tmp_path / "gizmo.pdf").write_bytes(make_pdf([EXAMPLE_PAGE]))
    doc = load_pdf(tmp_path / "gizmo.pdf", tmp_path)
    assert doc.text == (
        "Substring Expansion\nHere is an example of substring expansion on a variable named word:\n\n"
        "```\n$ word=abcdefgh\n$ gizmo-echo ${word:2:3}\ncde\n```\n\n"
        "The offset counts from zero and the length is a number of characters.\n"
    )
    code = [u.text for u in split_units(doc.text) if u.kind == "code"]
    assert code == ["```\n$ word=abcdefgh\n$ gizmo-echo ${word:2:3}\ncde\n```"]


def test_a_code_question_is_answered_with_the_example(tmp_path):
    root = tmp_path / "m"
    root.mkdir()
    (root / "gizmo.pdf").write_bytes(make_pdf([EXAMPLE_PAGE]))
    idx = Index.open(tmp_path / "index", embedder="hashing")
    assert idx.ingest(root).added == 1
    a = idx.ask("Show me an example of substring expansion in gizmo")
    assert a.outcome == "answered", a.abstain_reason
    assert "$ gizmo-echo ${word:2:3}\ncde" in a.text
    assert split_cited_sentences(a.text)[0][1] == [("doc", "gizmo")]


TERM_PAGES = [
    # Texinfo ``@table @code``: the term is set in the code font, its definition in roman; a
    # synopsis line right under the term opens the definition; an example after the definition's
    # prose is a code block of its own, and the prose after it goes on as a paragraph
    pytest.param(
        M
        + "wait-all\nWait for every job to finish before returning.\n"
        + M
        + "$ wait-all; echo done\nThe return status is zero.\n"
        + M
        + "((...))\n"
        + M
        + "(( expression ))\nThe expression is evaluated as arithmetic.\n",
        # the page's columns (pypdf layout mode): terms left, the rest deeper
        "wait-all\n"
        "               Wait for every job to finish before returning.\n"
        "               $  wait-all;  echo  done\n"
        "               The return status is zero.\n"
        "((...))\n"
        "                       ((  expression  ))\n"
        "               The expression is evaluated as arithmetic.\n",
        "wait-all\n: Wait for every job to finish before returning.\n\n"
        "```\n$ wait-all; echo done\n```\n\n"
        "The return status is zero.\n\n"
        "((...))\n: (( expression )) The expression is evaluated as arithmetic.\n\n",
        id="term-synopsis-example",
    ),
    # Texinfo ``@itemx``: two names of one entry at the margin, the first with no definition of
    # its own; the example above them ends before them
    pytest.param(
        f"{M}${{w:+word}}\nUse word when w is set.\n{M}$ gizmo-echo ${{w:+yes}}\n{M}yes\n"
        f"{M}${{w:off}}\n{M}${{w:off:len}}\nSubstring expansion.\n",
        "${w:+word}\n"
        "               Use word when w is set.\n"
        "                       $  gizmo-echo  ${w:+yes}\n"
        "                       yes\n"
        "${w:off}\n"
        "${w:off:len}\n"
        "               Substring expansion.\n",
        "${w:+word}\n: Use word when w is set.\n\n"
        "```\n$ gizmo-echo ${w:+yes}\nyes\n```\n\n"
        "${w:off}\n\n"
        "${w:off:len}\n: Substring expansion.\n\n",
        id="second-name-after-an-example",
    ),
    # Readline commands whose key binding is a bracket: "(M-{)" and "(C-x ()" are keys, not an
    # open bracket (found on blind set 21: the term was read as an example line and its
    # definition as loose prose, so "What does complete-into-braces do?" quoted another command)
    pytest.param(
        f"{M}gather-into-braces (M-{{)\nInsert the matches inside braces.\n{M}begin-macro (C-x ()\nStart recording keys.\n",
        "gather-into-braces  (M-{)\n"
        "               Insert the matches inside braces.\n"
        "begin-macro  (C-x  ()\n"
        "               Start recording keys.\n",
        "gather-into-braces (M-{)\n: Insert the matches inside braces.\n\n"
        "begin-macro (C-x ()\n: Start recording keys.\n\n",
        id="bracket-key-bindings",
    ),
]


@pytest.mark.parametrize("page, layout, expected", TERM_PAGES)
def test_monospace_terms_keep_their_definitions_and_examples_their_blocks(page, layout, expected):
    text, _ = pdf_to_text([page], [], [layout])
    assert text == expected


def test_the_last_line_of_an_example_is_not_taken_for_a_term():
    # "cde" alone, then a capitalised sentence, has the shape of a term and its definition; after
    # a code line it is the example's last line
    text, _ = pdf_to_text(
        [f"Example:\n{M}$ gizmo-echo ${{w:2:3}}\n{M}cde\nIf the offset is negative it counts from the end.\n"], []
    )
    assert text == (
        "Example:\n\n```\n$ gizmo-echo ${w:2:3}\ncde\n```\n\nIf the offset is negative it counts from the end.\n"
    )
    # without code before it, the same shape is a monospace term and its definition
    assert pdf_to_text([f"{M}wait-all\nWait for every job to finish.\n"], [])[0] == (
        "wait-all\n: Wait for every job to finish.\n\n"
    )


def test_an_example_running_over_a_page_break_is_one_block():
    text, starts = pdf_to_text([f"Loops:\n{M}for x in a b; do\n", f"{M}  echo $x\n{M}done\nThat is all.\n"], [])
    assert text == "Loops:\n\n```\nfor x in a b; do\n  echo $x\ndone\n```\n\nThat is all.\n"
    assert text[starts[1] :].startswith("  echo $x")


def test_comment_lines_in_code_are_not_headings_and_leaders_are_kept():
    text, _ = pdf_to_text([f"Setup:\n{M}# load the defaults\n{M}gizmo-load . . . . . . defaults\n"], [])
    assert text == "Setup:\n\n```\n# load the defaults\ngizmo-load . . . . . . defaults\n```\n"


def test_monospace_fonts_by_name_and_by_fixed_pitch_flag():
    def font(name, flags=None):
        d = DictionaryObject({NameObject("/BaseFont"): NameObject(name)})
        if flags is not None:
            d[NameObject("/FontDescriptor")] = DictionaryObject({NameObject("/Flags"): NumberObject(flags)})
        return d

    assert loaders._is_mono(font("/TCCLIA+CMTT10"))
    assert loaders._is_mono(font("/FFVXNZ+CMSLTT10"))  # slanted typewriter
    assert loaders._is_mono(font("/Courier-Bold"))
    assert loaders._is_mono(font("/DejaVuSansMono"))
    assert loaders._is_mono(font("/KLAMHM+NimbusMonL-Regu"))  # URW's Courier, no FixedPitch flag
    assert not loaders._is_mono(font("/TUQXQH+NimbusRomNo9L-Regu"))
    assert loaders._is_mono(font("/ABCDEF+Anything", flags=33))  # FixedPitch (bit 1) + Nonsymbolic
    assert not loaders._is_mono(font("/AWCRRA+CMR10"))
    assert not loaders._is_mono(font("/Helvetica", flags=32))
    assert not loaders._is_mono(None)


def test_pdf_content_hash_carries_the_loader_version(tmp_path, monkeypatch):
    """An index built by the old PDF loader re-parses the file on the next ingest (same bytes,
    new text); other formats hash their bytes alone."""
    raw = make_pdf([EXAMPLE_PAGE])
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "gizmo.pdf").write_bytes(raw)
    (tmp_path / "m" / "notes.md").write_text("# Notes\n\nPlain notes about gizmo.\n")
    assert content_hash(raw, ".pdf") != hashlib.sha256(raw).hexdigest()
    assert content_hash(b"abc", ".csv") == hashlib.sha256(b"abc").hexdigest()  # a format without a loader version
    assert load_pdf(tmp_path / "m" / "gizmo.pdf", tmp_path / "m").content_hash == content_hash(raw, ".PDF")

    idx = Index.open(tmp_path / "index", embedder="hashing")
    assert idx.ingest(tmp_path / "m").added == 2
    assert idx.ingest(tmp_path / "m").unchanged == 2
    monkeypatch.setitem(loaders.LOADER_VERSIONS, ".pdf", "test-next")
    again = idx.ingest(tmp_path / "m")
    assert (again.updated, again.unchanged) == (1, 1)
