"""Document structure: CommonMark blocks, plain-text and reStructuredText headings, tables of
contents dropped, and the heading paths chunks get. All inputs are written here."""

from __future__ import annotations

import pytest

from citewise.text import notes
from citewise.text.blocks import parse_blocks
from citewise.text.chunker import Chunker
from citewise.text.loaders import load_file
from citewise.text.plain import to_markdown

# -- CommonMark: (source, expected top-level blocks as (kind, level, title) or kind) ----------------
COMMONMARK = [
    # ATX headings: 1-6 '#', optional closing sequence, up to 3 spaces of indentation
    ("# foo\n## foo\n###### foo", [("heading", 1, "foo"), ("heading", 2, "foo"), ("heading", 6, "foo")]),
    ("####### foo", ["para"]),  # seven: not a heading
    ("#5 bolt\n\n#hashtag", ["para", "para"]),  # no space after '#'
    ("\\## foo", ["para"]),  # escaped
    ("### foo ###\n  ## bar #####", [("heading", 3, "foo"), ("heading", 2, "bar")]),
    ("# C#", [("heading", 1, "C#")]),  # a '#' not after a space does not close the heading
    ("    # foo", ["icode"]),  # four spaces: indented code
    # setext headings: '=' is level 1, '-' level 2; the title may span lines
    ("Foo *bar*\n=========\n\nFoo *bar*\n---------", [("heading", 1, "Foo *bar*"), ("heading", 2, "Foo *bar*")]),
    ("Foo *bar\nbaz*\n====", [("heading", 1, "Foo *bar baz*")]),
    ("Foo\n   ----      ", [("heading", 2, "Foo")]),
    ("Foo\n\n---", ["para", "para"]),  # after a blank line '---' is a thematic break
    ("- Foo\n---", ["list", "para"]),  # a list item cannot be a setext title
    ("> foo\n-----", ["para", "para"]),  # nor can a block quote
    # a heading inside a block quote or list item is not a section heading
    ("> # Foo\n> bar", ["para"]),
    ("- # Foo\n- Bar", ["list"]),
    # fenced code: backticks or tildes, closed by a fence at least as long; '#' inside is code
    ("```\n# not a heading\n```", ["code"]),
    ("~~~~\naaa\n~~~\n~~~~", ["code"]),
    ("````\naaa\n```\n``````", ["code"]),
    ("```\nunclosed to the end\n\n# still code", ["code"]),
    # indented code after a blank line; it cannot interrupt a paragraph
    ("Foo\n    bar", ["para"]),
    ("Foo\n\n    bar\n    baz", ["para", "icode"]),
    # lists: bullets, ordered lists with a start number, nested and loose items are one block
    ("- a\n- b\n\n  c\n- d", ["list"]),
    ("1. one\n2. two\n   - nested\n3) other", ["list", "list"]),  # a change of delimiter starts a new list
    ("Para\n- item", ["para", "list"]),  # a bullet list may interrupt a paragraph
    ("Para\n14. item", ["para"]),  # an ordered list not starting at 1 may not
    # GFM tables need a delimiter row
    ("| a | b |\n| --- | --- |\n| 1 | 2 |", ["table"]),
    ("| a | b |\n| 1 | 2 |", ["para"]),
    # HTML blocks: a table is a table block, other HTML a paragraph-like block
    ("<table>\n<tr><th>A</th></tr>\n<tr><td>1</td></tr>\n</table>", ["htmltable"]),
    ("<div>\n*hi*\n</div>", ["para"]),
    # a link reference definition makes no token; its text is still a block
    ("Text with [a link][x].\n\n[x]: https://example.org/x", ["para", "para"]),
]


def _shape(text):
    out = []
    for b in parse_blocks(text):
        out.append((b.kind, b.level, b.title) if b.kind == "heading" else b.kind)
    return out


@pytest.mark.parametrize("source,expected", COMMONMARK, ids=[s[:20] for s, _ in COMMONMARK])
def test_commonmark_blocks(source, expected):
    assert _shape(source) == expected


def test_block_spans_are_exact_source_offsets_with_any_line_break():
    text = "Title\r\n=====\r\n\r\nBody line\rmore\n\n    code\n"
    blocks = parse_blocks(text)
    assert [text[b.start : b.end] for b in blocks] == ["Title\r\n=====", "Body line\rmore", "    code"]


def test_list_items_are_where_an_oversized_list_splits():
    text = "- a\n  - b\n- c\n"
    (b,) = parse_blocks(text)
    assert [text[i : i + 5].strip() for i in b.items] == ["- a", "- b", "- c"]


def test_setext_markdown_sections_become_heading_paths(tmp_path):
    """The issue's ten-line file: setext headings came back as paragraphs only."""
    f = tmp_path / "guide.md"
    f.write_text(
        "Operations Guide\n================\n\nIntro text.\n\nInstalling\n----------\n\n"
        "Run the installer.\n\n### Virtual widgets\n\nWidgets are virtual.\n"
    )
    doc = load_file(f, tmp_path)
    chunks = Chunker(min_tokens=1, max_tokens=12).chunk(doc.doc_id, doc.title, doc.text)
    assert doc.title == "Operations Guide"
    assert [c.heading_path for c in chunks] == [
        ("Operations Guide",),
        ("Operations Guide", "Installing"),
        ("Operations Guide", "Installing", "Virtual widgets"),
    ]
    raw = f.read_text()
    assert all(raw[c.start : c.end] == c.text for c in chunks)  # offsets into the source file


# -- plain text ---------------------------------------------------------------------------------
MANUAL = """Operations Manual

Table of Contents

1. Overview
2. Installing
    2.1. Virtual widgets
    2.2. Base set

Chapter 1. Overview

This manual explains how the plant is operated.

Chapter 2. Installing

1. Preparing

Clear the bench before you start.

2. Virtual widgets

A virtual widget is a widget that exists only in the controller.

2.1. Limits

At most 40 virtual widgets can be defined.

3. Base set

The base set holds the eight widgets shipped with the controller.
"""


def test_plain_text_manual_gets_headings_and_loses_its_contents(tmp_path):
    f = tmp_path / "manual.txt"
    f.write_text(MANUAL)
    with notes.collecting() as dropped:
        doc = load_file(f, tmp_path)
    assert doc.title == "Operations Manual"
    assert "Table of Contents" not in doc.text and "    2.1. Virtual widgets" not in doc.text
    assert [d.where for d in dropped] == ["lines 3-8"]
    assert dropped[0].reason.startswith("table of contents")
    chunks = Chunker(min_tokens=1, max_tokens=24).chunk(doc.doc_id, doc.title, doc.text)
    paths = {c.heading_path for c in chunks}
    assert ("Operations Manual", "Chapter 2. Installing", "2. Virtual widgets", "2.1. Limits") in paths
    limit = next(c for c in chunks if "At most 40" in c.text)
    assert limit.heading_path[-1] == "2.1. Limits"
    assert not any("1. Overview\n2. Installing" in c.text for c in chunks)


def test_underlined_headings_take_levels_in_the_order_their_styles_appear():
    text = (
        "=================\nOperations Manual\n=================\n\n3 Installing\n============\n\n"
        "Text.\n\n3.6 Virtual widgets\n-------------------\n\nMore.\n\n3.6.1 Limits\n\nAt most 40.\n\n"
        "4 Running\n=========\n\nDone.\n"
    )
    md, title, _ = to_markdown(text)
    heads = [ln for ln in md.split("\n") if ln.startswith("#")]
    assert title == "Operations Manual"
    assert heads == [
        "# Operations Manual",
        "## 3 Installing",
        "### 3.6 Virtual widgets",
        "#### 3.6.1 Limits",
        "## 4 Running",
    ]
    chunks = Chunker(min_tokens=1, max_tokens=20).chunk("m", title, md)
    assert next(c for c in chunks if "More." in c.text).heading_path == (
        "Operations Manual",
        "3 Installing",
        "3.6 Virtual widgets",
    )


def test_an_ini_manual_titles_its_sections_with_inline_literals():
    # an INI-style manual (Mercurial's hgrc help) titles each section with the section's name as
    # a reStructuredText literal; its keys are entries of that section
    text = (
        "Sections\n========\n\nThe sections follow.\n\n``ui``\n------\n\nUser interface controls.\n\n"
        "``editor``\n    The editor to use during a commit.\n\n``web``\n-------\n\n``guessmime``\n"
        "    Control MIME types.\n\n- item\n------\n"
    )
    md, _, _ = to_markdown(text)
    assert [ln for ln in md.split("\n") if ln.startswith("#")] == ["# Sections", "## ``ui``", "## ``web``"]
    chunks = Chunker(min_tokens=1, max_tokens=12).chunk("hgrc", "hgrc", md)
    assert next(c for c in chunks if "The editor to use" in c.text).heading_path[-1] == "``ui``"


def test_numbered_steps_and_sentences_are_not_headings():
    text = (
        "1. Setup\n\nFirst part.\n\n2. Use\n\nSteps:\n\n1. Open the box\n\n2. Take the widget\n\n"
        "3. Close the box.\n\n3. Care\n\nKeep it dry.\n"
    )
    md, _, _ = to_markdown(text)
    assert [ln for ln in md.split("\n") if ln.startswith("#")] == ["# 1. Setup", "# 2. Use", "# 3. Care"]


def test_dot_leader_contents_are_dropped_with_their_caption():
    text = (
        "Widget Guide\n\nCONTENTS\n\nIntroduction ........ 1\nInstalling ........ 4\nRunning ........ 9\n\n"
        "INTRODUCTION\n\nWidgets are small.\n\nINSTALLING\n\nPut them in.\n"
    )
    md, title, dropped = to_markdown(text)
    assert "...." not in md and "CONTENTS" not in md
    assert [ln for ln in md.split("\n") if ln.startswith("#")] == ["# Widget Guide", "# INTRODUCTION", "# INSTALLING"]
    assert dropped[0][:3] == (3, 7, "table of contents (dot leaders)")


def test_markup_like_plain_lines_stay_text():
    md, _, _ = to_markdown("Notes\n\n# not a heading in a .txt file\n```\nplain\n-----\n")
    assert "\\# not a heading" in md and "\\```" in md and "\\-----" in md
    assert [(b.kind, b.title) for b in parse_blocks(md)] == [("heading", "Notes"), ("para", "")]


# -- reStructuredText ---------------------------------------------------------------------------
SPHINX = """.. _widgets:

Widgets
=======

.. toctree::
   :maxdepth: 2

   install
   usage

Call :func:`~acme.widgets.make` or see :ref:`the limits <limits>`.

.. code-block:: python
   :caption: make.py

   make(40)

.. autofunction:: acme.widgets.make

   Makes a widget.

.. versionadded:: 2.1
   The ``size`` argument.

Limits
------

At most **40** widgets.

.. note:: Widgets are virtual.
"""


def test_sphinx_sources_read_quietly_with_their_text(tmp_path, capfd):
    f = tmp_path / "widgets.rst"
    f.write_text(SPHINX)
    with notes.collecting() as dropped:
        doc = load_file(f, tmp_path)
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")  # docutils printed nothing
    assert doc.format == "rst" and doc.title == "Widgets"
    assert "Call `acme.widgets.make` or see the limits." in doc.text
    assert "```python\nmake(40)\n```" in doc.text
    assert "`acme.widgets.make`" in doc.text and "Makes a widget." in doc.text
    assert "Note: Widgets are virtual." in doc.text
    assert "install" not in doc.text.split("Call")[0]  # the toctree is navigation
    assert [d.reason for d in dropped] == ["navigation: toctree directive"]
    chunks = Chunker(min_tokens=1, max_tokens=40).chunk(doc.doc_id, doc.title, doc.text)
    assert next(c for c in chunks if "At most" in c.text).heading_path == ("Widgets", "Limits")


def test_rst_include_and_raw_are_not_followed(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    f = tmp_path / "a.rst"
    f.write_text(f"Title\n=====\n\n.. include:: {secret}\n\n.. raw:: html\n   :file: {secret}\n\nText.\n")
    doc = load_file(f, tmp_path)
    assert "TOP SECRET" not in doc.text and "Text." in doc.text


# -- HTML navigation and furniture ------------------------------------------------------------
def _docbook_page(n: int, body: str) -> str:
    """A page shaped like DocBook XSL chunked output (XHTML, navigation in plain tables)."""
    prev = f'<a accesskey="p" href="ch{n - 1}.html">Prev</a>' if n > 1 else ""
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head>'
        f"<title>Chapter {n}. Part {n}</title></head><body>"
        f'<div class="navheader"><table><tr><th colspan="3">Chapter {n}. Part {n}</th></tr>'
        f'<tr><td>{prev}</td><th></th><td><a href="ch{n + 1}.html">Next</a></td></tr></table></div>'
        f'<div class="chapter"><h1>Chapter {n}. Part {n}</h1><div class="toc"><p>Table of Contents</p><dl>'
        f'<dt><a href="#a">{n}.1. Setup</a></dt><dt><a href="#b">{n}.2. Use</a></dt>'
        f'<dt><a href="#c">{n}.3. Care</a></dt><dt><a href="#d">{n}.4. Repair</a></dt></dl></div>'
        f"{body}</div>"
        f'<div class="navfooter"><table><tr><td>{prev}</td><td></td><td><a href="ch{n + 1}.html">Next</a></td></tr>'
        f'<tr><td>Chapter {n - 1}</td><td><a href="index.html">Home</a></td><td>Chapter {n + 1}</td></tr></table>'
        f'</div><font size="-1">Widget manual 2.1, released on May {n}, 2024.</font></body></html>'
    )


def test_docbook_navigation_in_plain_tables_is_dropped_across_a_folder(tmp_path, recwarn):
    from citewise.text.loaders import load_folder

    site = tmp_path / "site"
    site.mkdir()
    for n in range(1, 5):
        word = ["red", "green", "blue", "grey"][n - 1]
        (site / f"ch{n}.html").write_text(
            _docbook_page(
                n,
                f"<h2>{n}.1. Setup</h2><p>A {word} widget needs <a href='x.html'>a {word} bench</a> to stand on.</p>"
                f"<table><tr><th>Key</th><th>Meaning</th></tr><tr><td><a href='k.html'>{word[0]}</a></td>"
                f"<td><a href='quit.html'>{word}</a></td></tr></table><ul><li><a href='m1'>@{word}</a></li>"
                "<li><a href='m2'>@bo</a></li></ul><p>This will produce:</p><pre>make widget</pre>",
            )
        )
    with notes.collecting() as dropped:
        docs = [d for d in load_folder(site)]
    assert not [w for w in recwarn if "XML" in str(w.message)]  # XHTML parsed without a warning
    assert len(docs) == 4
    for d in docs:
        assert "Prev" not in d.text and "Next" not in d.text and "Home" not in d.text, d.text
        assert "Table of Contents" not in d.text
        word = d.doc_id and ["red", "green", "blue", "grey"][int(d.doc_id[-1]) - 1]
        assert f"widget needs a {word} bench to stand on." in d.text and "| Key | Meaning |" in d.text
        assert f"| {word[0]} | {word} |" in d.text
        assert f"- @{word}\n- @bo" in d.text and "This will produce:\n\n```\nmake widget\n```" in d.text
        assert "released on" not in d.text  # the footer line every page ends with
    reasons = {d.reason.split(":")[0] for d in dropped}
    assert reasons == {"furniture", "navigation"}
    # two bars and the footer line on each of 4 pages
    assert sum(d.reason.startswith("furniture") for d in dropped) == 12


def test_link_bars_breadcrumbs_and_texinfo_headers_are_navigation_on_a_single_page():
    from citewise.text.html import html_to_markdown

    page = (
        '<html><body><div class="header"><p>Next: <a href="b.html">Base set</a>, Previous: '
        '<a href="a.html">Intro</a>, Up: <a href="top.html">Top</a></p></div>'
        '<div class="crumbs"><a href="/">Home</a> &gt; <a href="/docs">Docs</a> &gt; Widgets</div>'
        '<h1>Widgets</h1><p>See <a href="x">make</a> and <a href="y">break</a> for the details of each.</p>'
        '<p><a href="p.html">Prev</a> | <a href="u.html">Up</a> | <a href="n.html">Next</a></p></body></html>'
    )
    text, _ = html_to_markdown(page)
    assert text == "# Widgets\n\nSee make and break for the details of each.\n"


# -- PDF page furniture and headings ------------------------------------------------------------
def _pdf(pages: list[list[list[tuple]]]) -> bytes:
    """A PDF whose pages are lines of ``(font size, text)`` runs set one after another on the
    line (Helvetica; a run in a smaller size is a superscript, raised 4 points), or
    ``(font size, text, rise)`` runs set ``rise`` points above (below, when negative) the line."""
    objs = {1: b"<< /Type /Catalog /Pages 2 0 R >>", 3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
    kids = []
    for i, lines in enumerate(pages):
        ops = ["BT"]
        y = 740
        for line in lines:
            x = 72.0
            top = max(run[0] for run in line)
            for z, text, *given in line:
                esc = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
                rise = given[0] if given else 4 if z < top else 0
                ops.append(f"/F1 {z} Tf 1 0 0 1 {x:.1f} {y + rise} Tm ({esc}) Tj")
                x += 0.5 * z * len(text)
            y -= int(top * 1.6)
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objs[5 + 2 * i] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
        objs[4 + 2 * i] = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {5 + 2 * i} 0 R >>"
        ).encode()
        kids.append(4 + 2 * i)
    objs[2] = f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} >>".encode()
    out, offsets = b"%PDF-1.4\n", {}
    for n in sorted(objs):
        offsets[n] = len(out)
        out += b"%d 0 obj\n" % n + objs[n] + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (max(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % offsets.get(n, 0) for n in range(1, max(objs) + 1))
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (max(objs) + 1, xref)


def test_a_man2html_folder_gets_line_headings_and_loses_its_notice_under_each_title(tmp_path):
    # man2html-style pages (PCRE2's HTML): section titles are anchors or bold text alone between
    # <br>s; under each page's title a link back and a generator notice, the same on every page
    from citewise.text.loaders import load_folder

    site = tmp_path / "man"
    site.mkdir()
    for n, word in enumerate(["frob", "twiddle", "widen"]):
        (site / f"w_{word}.html").write_text(
            f"<html><head><title>w_{word}</title></head><body><h1>w_{word} man page</h1>"
            '<p>Return to the <a href="index.html">Widget index page</a>.</p>'
            "<p>This page is part of the Widget HTML documentation. It was generated automatically from "
            "the original man page.<br><br><b>SYNOPSIS</b><br><P><b>int w_"
            f'{word}(int n);</b></P><br><a name="SEC2" href="#TOC1">DESCRIPTION</a><br>'
            f"<P>The w_{word} function takes {n + 2} widgets.</P><br><b>\nLimits of the call\n</b><br>"
            f"<P>At most {n + 10} widgets, <b>never</b> more.</P>"
            '<p>Return to the <a href="index.html">Widget index page</a>.</p></body></html>'
        )
    with notes.collecting() as dropped:
        docs = {d.doc_id: d for d in load_folder(site)}
    text = docs["w_twiddle"].text
    heads = [ln for ln in text.split("\n") if ln.startswith("#")]
    assert heads == ["# w_twiddle man page", "## SYNOPSIS", "## DESCRIPTION", "### Limits of the call"]
    assert "The w_twiddle function takes 3 widgets." in text and "At most 11 widgets, never more." in text
    for d in docs.values():
        assert "generated automatically" not in d.text and "Return to the" not in d.text
    assert sum(d.reason.startswith("furniture") for d in dropped) == 9  # link, notice, link on 3 pages


def test_pdf_page_numbers_footnote_markers_and_size_headings(tmp_path):
    body = 10
    pages = [
        [[(18, "Widget Standard")], [(body, "This standard covers widgets.")], [(body, "1")]],
        [
            [(14, "3 Installing")],
            [(body, "Widgets are installed by hand.")],
            [(body, "The standard"), (6, "2"), (body, " says so plainly.")],
            [(body, "2")],
        ],
        [[(body, "3.6")], [(body, "Virtual widgets")], [(body, "A virtual widget has no body.")], [(body, "3")]],
    ]
    f = tmp_path / "std.pdf"
    f.write_bytes(_pdf(pages))
    with notes.collecting() as dropped:
        doc = load_file(f, tmp_path)
    lines = doc.text.split("\n")
    assert "# Widget Standard" in lines and "## 3 Installing" in lines
    assert "The standard says so plainly." in doc.text  # the footnote marker is gone
    assert "3.6 Virtual widgets" in lines  # the section number stays with its title
    assert not any(ln.strip() in ("1", "2", "3") for ln in lines)
    assert [d.reason for d in dropped] == ["page number"] * 3
    chunks = Chunker(min_tokens=1, max_tokens=14).chunk(doc.doc_id, doc.title, doc.text)
    assert next(c for c in chunks if "installed by hand" in c.text).heading_path == ("Widget Standard", "3 Installing")


def test_pdf_numbered_figure_label_is_not_a_section_heading(tmp_path):
    """A drawn graph's edge label "100 times", set large like its node names, opens with a number
    that does not continue the section numbering (1, then 2): a label, not a heading."""
    body, big = 10, 14
    pages = [
        [
            [(big, "1 Drawing")],
            [(body, "Edges carry labels.")],
            [(big, "main")],
            [(big, "100 times")],
            [(big, "parse")],
            [(body, "Figure 1: A labelled edge.")],
            [(body, "The label sits beside its edge.")],
            [(big, "2 Layout")],
            [(body, "Ranks are assigned first.")],
        ]
    ]
    f = tmp_path / "guide.pdf"
    f.write_bytes(_pdf(pages))
    doc = load_file(f, tmp_path)
    heads = [ln for ln in doc.text.split("\n") if ln.startswith("#")]
    assert heads == ["# 1 Drawing", "# 2 Layout"]
    assert "100 times" in doc.text.split("\n")
    chunks = Chunker(min_tokens=1, max_tokens=12).chunk(doc.doc_id, doc.title, doc.text)
    assert next(c for c in chunks if "beside its edge" in c.text).heading_path[-1] == "1 Drawing"


def test_pdf_subscripts_stay_and_a_footnote_loses_its_number(tmp_path):
    body = 10
    pages = [
        [
            [(18, "Forms")],
            [
                (body, "A form f = a"),
                (6, "1", -2),
                (body, "x"),
                (6, "1", -2),
                (body, " + a"),
                (6, "0", -2),
                (body, "."),
            ],
            [(body, "Each row names its driver."), (6, "2")],
            [(body, "Rows are read in order.")],
            [(5, "2", 3), (8, "The driver standard is ISO 9075.")],
            [(body, "1")],
        ]
    ]
    f = tmp_path / "forms.pdf"
    f.write_bytes(_pdf(pages))
    doc = load_file(f, tmp_path)
    lines = doc.text.split("\n")
    # set below the line: subscripts, kept (pypdf may put a space where the baseline drops)
    assert [ln.replace(" ", "") for ln in lines if ln.startswith("A form")] == ["Aformf=a1x1+a0."]
    assert "Each row names its driver." in lines  # raised after a word: a footnote marker, gone
    assert "The driver standard is ISO 9075." in lines  # the footnote's own number, gone
    assert not any(ln.startswith("2") for ln in lines)


# -- HTML redirect pages and menus of a folder's pages -------------------------------------------
def _node(title: str, heading: str, body: str) -> str:
    return f"<html><head><title>{title} (Widget Guide)</title></head><body><h2>{heading}</h2>{body}</body></html>"


def test_a_redirect_page_is_skipped_with_a_line_and_a_menu_of_pages_is_navigation(tmp_path):
    from citewise.core import InputError, InputWarning
    from citewise.text.loaders import load_folder

    site = tmp_path / "guide"
    site.mkdir()
    menu = '<ul><li><a href="Fitting.html">Fitting</a></li><li><a href="Care.html#top">Care</a></li></ul>'
    (site / "Widgets.html").write_text(_node("Widgets", "3 Widgets", f"<p>Widgets come in two kinds.</p>{menu}"))
    (site / "Fitting.html").write_text(_node("Fitting", "3.1 Fitting", "<p>Fit the widget by hand.</p>"))
    (site / "Care.html").write_text(
        _node(
            "Care",
            "3.2 Care",
            "<p>Oil it monthly. Tools:</p>"  # links to other sites, or to pages under other names, stay
            '<ul><li><a href="https://oil.example/">Oil</a></li><li><a href="mailto:a@b.example">Rag</a></li></ul>'
            '<ul><li><a href="Fitting.html">Fit first</a></li><li><a href="Widgets.html">Widgets</a></li></ul>',
        )
    )
    (site / "old-fitting.html").write_text(
        '<html><head><meta http-equiv="Refresh" content="0; url=Fitting.html#top"></head>'
        '<body><p>The page you are looking for is at <a href="Fitting.html#top">Fitting</a>.</p></body></html>'
    )
    (site / "clock.html").write_text(  # reloads itself: not a redirect
        '<html><head><meta http-equiv="refresh" content="30"></head><body><p>It is noon.</p></body></html>'
    )
    with notes.collecting() as dropped:
        got = list(load_folder(site))
    docs = {d.doc_id: d for d in got if not isinstance(d, InputError)}
    (warning,) = [w for w in got if isinstance(w, InputWarning)]
    assert str(warning) == (
        f"{site / 'old-fitting.html'}: a redirect page (meta refresh to Fitting.html#top); "
        "nothing of its own to index, skipped"
    )
    assert sorted(docs) == ["Care", "Fitting", "Widgets", "clock"]
    assert docs["Widgets"].text == "## 3 Widgets\n\nWidgets come in two kinds.\n"
    assert "- Oil\n- Rag" in docs["Care"].text and "- Fit first\n- Widgets" in docs["Care"].text
    assert docs["clock"].text == "It is noon.\n"
    assert sorted(d.reason for d in dropped) == [
        "navigation: a menu of 2 of the folder's pages, each named by its title",
        "navigation: a redirect page to Fitting.html#top",
    ]


def test_a_heading_that_only_titled_dropped_navigation_goes_with_it():
    from citewise.text.html import html_to_markdown

    links = "".join(f'<li><a href="#s{i}">{i} Part {i}</a></li>' for i in range(1, 6))
    page = (
        "<html><body><h1>Guide</h1><p>About the guide.</p>"
        f"<div><h2>Table of Contents</h2><div><ul>{links}</ul></div></div>"
        "<h2>Setup</h2><p>Plug it in.</p>"
        f"<h2>Related</h2><ul>{links}</ul><h2>Care</h2><p>Keep it dry.</p></body></html>"
    )
    with notes.collecting() as dropped:
        text, _ = html_to_markdown(page, source="guide.html")
    assert text == "# Guide\n\nAbout the guide.\n\n## Setup\n\nPlug it in.\n\n## Care\n\nKeep it dry.\n"
    assert [(d.where, d.text) for d in dropped if "heading" in d.reason] == [
        ("<div>", "Table of Contents"),
        ("<h2>", "Related"),
    ]
    # a page that is only a menu keeps its own title
    only, _ = html_to_markdown(f"<html><body><h2>Indices</h2><ul>{links}</ul></body></html>")
    assert only == "## Indices\n"


# -- citewise inspect -----------------------------------------------------------------------------
def test_inspect_shows_heading_paths_tokens_and_what_was_dropped(tmp_path):
    import json

    from typer.testing import CliRunner

    from citewise.cli import app

    (tmp_path / "manual.txt").write_text(MANUAL)
    (tmp_path / "bad.md").write_text("---\ntitle: [unclosed\n---\nText.\n")
    res = CliRunner().invoke(app, ["inspect", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    (doc,) = report["documents"]
    assert doc["doc_id"] == "manual" and doc["format"] == "text"
    # the whole manual fits one chunk of the default size: its heading path is the title
    assert [(c["heading_path"], c["chunk_id"]) for c in doc["chunks"]] == [
        (["Operations Manual"], "manual#operations-manual")
    ]
    assert 50 < doc["chunks"][0]["tokens"] < 200
    assert doc["dropped"] == [
        {"where": "lines 3-8", "reason": "table of contents (repeats later headings)", "text": "Table of Contents"}
    ]
    assert len(report["errors"]) == 1 and "bad.md:3: bad front matter" in report["errors"][0]
    text = CliRunner().invoke(app, ["inspect", str(tmp_path / "manual.txt")]).output
    assert "dropped lines 3-8: table of contents" in text
    assert " tok  Operations Manual  | Operations Manual # Chapter 1. Overview" in text
    assert text.rstrip().endswith("1 things dropped, 0 errors")


def test_a_menu_table_is_navigation_a_data_table_of_links_is_not():
    from citewise.text.html import html_to_markdown

    rows = "".join(
        f'<tr><td><a href="n{i}.html">{i} Node {i}</a></td><td>&nbsp;</td><td></td></tr>' for i in range(1, 6)
    )
    data = (
        "<table><tr><th>Target</th><th>Tier</th></tr>"
        + "".join(
            f'<tr><td><a href="t{i}.html">target-{i}</a></td><td><a href="tier.html">tier 2</a></td></tr>'
            for i in range(1, 6)
        )
        + "</table>"
    )
    page = f'<html><body><h1>Widgets</h1><p>About widgets.</p><table class="menu">{rows}</table>{data}</body></html>'
    text, _ = html_to_markdown(page)
    assert "Node 3" not in text
    assert "| Target | Tier |" in text and "| target-5 | tier 2 |" in text


def test_plain_title_set_between_two_indented_rules_is_the_whole_block():
    """A centred title over two lines between two rules of dashes names the document; a rule is
    never the title; without a closing rule the first line alone is the title."""
    text = (
        "                    -------------------\n"
        "                         Widgetd\n"
        "                   Operations Manual\n"
        "                    -------------------\n"
        "                       version 1.4\n\n"
        "This manual covers the daemon.\n"
    )
    assert to_markdown(text)[1] == "Widgetd Operations Manual"
    assert to_markdown("   =====\n   Widgetd notes\n\nText follows.\n")[1] == "Widgetd notes"
    assert to_markdown("   *****\n   Widgetd\n   Manual\n   =====\n\nText.\n")[1] == "Widgetd"


def test_a_manual_page_header_line_as_title_has_its_spacing_collapsed():
    text = "TAR(1)                     GNU TAR Manual                     TAR(1)\n\nNAME\n       tar - an archiving utility\n"
    assert to_markdown(text)[1] == "TAR(1) GNU TAR Manual TAR(1)"


def test_pdf_cover_line_of_glyph_codes_is_not_the_title(tmp_path):
    """A cover line pypdf can only write as glyph codes (``/x4D /x4C``) holds no text: the next
    cover line names the document."""
    from conftest import make_pdf

    pdf = tmp_path / "guide.pdf"
    pdf.write_bytes(
        make_pdf([["/x4D /x4C", "Widget Modelling Language", "Reference"], ["1 Introduction", "Widgets are."]])
    )
    assert load_file(pdf, tmp_path).title == "Widget Modelling Language"


def test_line_headings_stay_out_of_table_cells_sentences_and_labels():
    from citewise.text.html import html_to_markdown

    page = (
        "<html><body><h1>Widget API</h1><p>Intro.<br><b>OPTIONS</b><br>"
        "The <span><b>fast</b><br></span> mode is on.<br><b>Version: 2.3.1</b><br>More text.</p>"
        "<table><tr><th>Name</th><th>Meaning</th></tr><tr><td><b>timeout</b><br><i>int</i></td>"
        "<td>Seconds to wait.</td></tr></table></body></html>"
    )
    text, _ = html_to_markdown(page)
    assert [ln for ln in text.split("\n") if ln.startswith("#")] == ["# Widget API", "## OPTIONS"]
    assert "| timeout int | Seconds to wait. |" in text and "Version: 2.3.1" in text


def test_plain_text_code_needs_c_shape_and_roman_sections_come_in_twos():
    legal = "Terms\n\nYou agree to:\n\n(a) keep the software confidential;\n(b) not copy it;\n(c) return it.\n"
    md, _, _ = to_markdown(legal)
    assert "```" not in md and "(b) not copy it;" in md
    code = "Example\n\nCall it so:\n\n int f(void)\n {\n    return g(1);\n }\n"
    md, _, _ = to_markdown(code)
    assert "```\n int f(void)\n {\n    return g(1);\n }\n```" in md
    md, _, _ = to_markdown("Intro\n\nI. Newton\n\nText here.\n\nUsage\n\nMore.\n")
    assert [ln for ln in md.split("\n") if ln.startswith("#")] == ["# Intro", "# Usage"]
    md, _, _ = to_markdown("I. Definitions\n\nWords.\n\nII. Scope\n\nMore.\n")
    assert [ln for ln in md.split("\n") if ln.startswith("#")] == ["# I. Definitions", "# II. Scope"]


RST_AS_TEXT = """Aliases
=======

For example, this definition::

    latest = log --limit 5

    stable5 = latest -b stable

creates a new command ``latest`` that shows the five most recent changesets.

.. note::

   Aliases may shadow commands.

Sample queries:

- Open branch heads::

    hg log -r "head() and not closed()"

A paragraph ending in a colon::
not followed by a blank line stays text.

1. Install the package::

       pip install widget-server

   Then edit widget.conf and set the data path.

2. Start the server.
"""


def test_rst_literal_blocks_in_a_plain_text_file_become_code():
    md, _, _ = to_markdown(RST_AS_TEXT)
    assert "For example, this definition:\n\n```\nlatest = log --limit 5\n\nstable5 = latest -b stable\n```\n" in md, md
    assert "```\n\ncreates a new command ``latest``" in md, md
    assert '- Open branch heads:\n\n```\nhg log -r "head() and not closed()"\n```' in md, md
    assert ".. note::\n\n   Aliases may shadow commands." in md, md  # a directive's body is text
    assert "A paragraph ending in a colon::\nnot followed" in md, md
    # a list item's block ends where the item's text goes on
    assert "1. Install the package:\n\n```\npip install widget-server\n```\n\n   Then edit widget.conf" in md, md
    assert md.count("```") == 6, md


def test_a_code_question_over_rst_as_text_quotes_the_literal_block(tmp_path_factory):
    from conftest import open_minilm_index

    root = tmp_path_factory.mktemp("docs")
    (root / "aliases.txt").write_text(RST_AS_TEXT, encoding="utf-8")
    idx = open_minilm_index(tmp_path_factory.mktemp("index"))
    assert idx.ingest(root).errors == []
    a = idx.ask("alias definition example for the five most recent changesets")
    # the sentence going on from the block ("creates a new command ...") comes after the block
    assert a.text.index("latest = log --limit 5") < a.text.index("creates a new command latest"), a.text


def test_pdf_figure_labels_set_large_are_not_headings(tmp_path):
    """A drawn graph's node names, set larger than the body and one per line, are a figure's
    labels: three or more in a row at one size, or a label without a two-letter word, make no
    heading; a heading followed by its text still does."""
    body = 10
    pages = [
        [
            [(18, "Drawing Widgets")],
            [(14, "2 Call Graphs")],
            [(body, "A call graph shows which function calls which.")],
            [(14, "main")],
            [(14, "parse")],
            [(14, "execute")],
            [(body, "Figure 1: A small call graph")],
            [(14, "x")],
            [(body, "The node x has no edges.")],
            [(14, "3 Layers")],
            [(body, "Layers split a drawing.")],
        ]
    ]
    f = tmp_path / "graphs.pdf"
    f.write_bytes(_pdf(pages))
    doc = load_file(f, tmp_path)
    heads = [ln for ln in doc.text.split("\n") if ln.startswith("#")]
    assert heads == ["# Drawing Widgets", "## 2 Call Graphs", "## 3 Layers"], heads
    assert "main\nparse" in doc.text  # the labels stay as text


def test_pdf_numbered_headings_in_a_row_or_without_a_word_stay_headings(tmp_path):
    body = 10
    pages = [
        [
            [(18, "Widget Guide")],
            [(14, "1 Overview")],
            [(14, "1.1 Scope")],
            [(14, "1.2 Audience")],
            [(body, "This guide covers widgets and their parts in some detail.")],
            [(14, "5 I/O")],
            [(body, "Widgets read and write through ports.")],
        ]
    ]
    f = tmp_path / "guide.pdf"
    f.write_bytes(_pdf(pages))
    heads = [ln for ln in load_file(f, tmp_path).text.split("\n") if ln.startswith("#")]
    assert heads == ["# Widget Guide", "## 1 Overview", "## 1.1 Scope", "## 1.2 Audience", "## 5 I/O"], heads
