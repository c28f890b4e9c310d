"""Issue 10, PDF manuals: running headers and footers, dot-leader contents lines, words hyphenated
across a line break, numbered headings and Texinfo-style definition tables.

The cleaning is tested on page texts (:func:`pdf_to_text`) and end to end on a PDF written here
(a tiny PDF 1.4 file with Helvetica text and an outline; no PDF writer is installed) loaded with
:func:`load_pdf`, then ingested and asked. All text is made up here (a fictional "gizmo" shell).
"""

from __future__ import annotations

from citewise.answer.citations import split_cited_sentences
from citewise.answer.units import split_units
from citewise.index import Index
from citewise.text.loaders import layout_roles, load_pdf, pdf_to_text

from conftest import make_pdf

HEADER = "Gizmo Shell Reference"

PAGES = [
    [
        HEADER,
        "Contents",
        "1 Introduction . . . . . . . . . . . . 2",
        "3.2 Shell Expansions . . . . . . . . . 3",
        "4 Glob Options . . . . . . . . . . . 4",
        "Page 1 of 4",
    ],
    [
        HEADER,
        "1 Introduction",
        "The gizmo shell reads each command and splits it into meta-",
        "characters and plain words before it runs anything.",
        "Page 2 of 4",
    ],
    [
        HEADER,
        "3.2 Shell Expansions",
        "Expansion is performed on the command line after it has been split into tokens.",
        "Page 3 of 4",
    ],
    [
        HEADER,
        "4 Glob Options",
        "dotglob",
        "If set, the shell includes filenames beginning with a dot",
        "in the results of filename expansion.",
        "nullglob  If set, patterns which match no files expand to a null string.",
        "Page 4 of 4",
    ],
]
#: bookmarks as a PDF outline holds them: the titles without their section numbers
OUTLINE = [("Gizmo Shell Reference", 0, [("Introduction", 1, [("Shell Expansions", 2, [])]), ("Glob Options", 3, [])])]
OUTLINE_ENTRIES = [
    (0, 1, "Gizmo Shell Reference"),
    (1, 2, "Introduction"),
    (2, 3, "Shell Expansions"),
    (3, 2, "Glob Options"),
]

INTRO = (
    "## 1 Introduction\n"
    "The gizmo shell reads each command and splits it into metacharacters\n"
    "and plain words before it runs anything."
)
EXPANSIONS = "### 3.2 Shell Expansions\nExpansion is performed on the command line after it has been split into tokens."
GLOB = (
    "## 4 Glob Options\n\n"
    "dotglob\n"
    ": If set, the shell includes filenames beginning with a dot in the results of filename expansion.\n\n"
    "nullglob\n"
    ": If set, patterns which match no files expand to a null string.\n"
)


def page_texts() -> list[str]:
    return ["\n".join(p) + "\n" for p in PAGES]


def test_running_headers_footers_and_contents_lines_are_dropped():
    text, starts = pdf_to_text(page_texts(), [])
    assert HEADER not in text
    assert "Page" not in text and "of 4" not in text
    assert ". . ." not in text
    # the contents page keeps only its title; each page starts where its text starts
    assert text.split("\n\n")[0] == "Contents"
    assert len(starts) == 4 and starts[0] == 0
    # (without bookmarks the numbered lines may or may not be marked as headings: not asserted)
    assert text[starts[1] :].lstrip("# ").startswith("1 Introduction\nThe gizmo shell")
    assert text[starts[2] :].lstrip("# ").startswith("3.2 Shell Expansions\nExpansion is performed")
    assert text[starts[3] :].lstrip("# ").startswith("4 Glob Options\n\ndotglob\n: If set")


def test_a_line_on_only_two_pages_or_inside_a_page_is_not_running():
    pages = [
        "Draft notes\nAlpha text one.\nend",
        "Draft notes\nBeta text two.\nend",
        "Gamma text three.\nDraft notes\nDelta text four.\nend",
    ]
    text, _ = pdf_to_text(pages, [])
    # "Draft notes" opens only two pages (and sits mid-page on the third): kept everywhere;
    # "end" closes all three pages: a running footer, dropped
    assert text == (
        "Draft notes\nAlpha text one.\n\nDraft notes\nBeta text two.\n\n"
        "Gamma text three.\nDraft notes\nDelta text four.\n"
    )


def test_hyphenation_across_a_line_break_is_joined_only_for_split_words():
    text, _ = pdf_to_text(
        [
            "The shell splits words at meta-\ncharacters like the pipe.\n"
            "A well-known rule stays as written.\nSee also Non-\nASCII names.\n"
        ],
        [],
    )
    assert text == (
        "The shell splits words at metacharacters\nlike the pipe.\n"
        "A well-known rule stays as written.\nSee also Non-\nASCII names.\n"
    )


def test_numbered_heading_lines_become_headings_of_their_bookmark_depth():
    text, _ = pdf_to_text(page_texts(), OUTLINE_ENTRIES)
    assert "## 1 Introduction\n" in text
    assert "### 3.2 Shell Expansions\n" in text
    assert "## 4 Glob Options\n" in text
    # the bookmark title that is no line of its page (it was the running header) tops the page
    assert text.startswith("# Gizmo Shell Reference\n\nContents\n\n## 1 Introduction")


def test_texinfo_definition_tables_become_definition_pairs():
    text, _ = pdf_to_text(page_texts(), OUTLINE_ENTRIES)
    assert text.endswith(GLOB + "\n")
    defs = [(u.lead, u.text, u.headings) for u in split_units(text) if u.kind == "definition"]
    assert defs == [
        (
            "dotglob",
            "dotglob: If set, the shell includes filenames beginning with a dot in the results of filename expansion.",
            ("Gizmo Shell Reference", "4 Glob Options"),
        ),
        (
            "nullglob",
            "nullglob: If set, patterns which match no files expand to a null string.",
            ("Gizmo Shell Reference", "4 Glob Options"),
        ),
    ]


def test_definition_table_with_option_terms():
    text, _ = pdf_to_text(
        ["Options\n--login\nAct as if invoked as a login shell.\n-c  Read commands from the first argument.\n"], []
    )
    assert text == (
        "Options\n\n--login\n: Act as if invoked as a login shell.\n\n-c\n: Read commands from the first argument.\n\n"
    )


def test_pdf_file_loads_clean_and_answers_from_the_definition(tmp_path):
    root = tmp_path / "manuals"
    root.mkdir()
    (root / "gizmo.pdf").write_bytes(make_pdf(PAGES, OUTLINE))
    doc = load_pdf(root / "gizmo.pdf", root)
    assert (doc.doc_id, doc.format, doc.title) == ("gizmo", "pdf", "Gizmo Shell Reference")
    assert doc.text == ("# Gizmo Shell Reference\n\nContents\n\n" + INTRO + "\n\n" + EXPANSIONS + "\n\n" + GLOB + "\n")
    assert doc.pages == (0, doc.text.index("## 1 Introduction"), doc.text.index("### 3.2"), doc.text.index("## 4 Glob"))

    idx = Index.open(tmp_path / "index", embedder="hashing")
    report = idx.ingest(root)
    assert report.errors == [] and report.added == 1
    a = idx.ask("What does nullglob do?")
    assert a.outcome == "answered", a.abstain_reason
    assert split_cited_sentences(a.text)[0] == (
        "nullglob: If set, patterns which match no files expand to a null string.",
        [("doc", "gizmo")],
    )
    c = a.citations[0]
    assert doc.text[c.start : c.end] == "nullglob\n: If set, patterns which match no files expand to a null string."


def test_title_is_the_cover_line_not_the_first_bookmark(tmp_path):
    """pdfTeX manuals (the Bash manual) carry no /Title and their first bookmark is a chapter
    ("Introduction"): the cover page's first line names the document."""
    pages = [
        ["Widget Manual", "Reference documentation for widgets"],
        ["1 Introduction", "Widgets are configured with a file named widget.conf in the home folder."],
    ]
    (tmp_path / "widget.pdf").write_bytes(make_pdf(pages, [("Introduction", 1, [])]))
    assert load_pdf(tmp_path / "widget.pdf", tmp_path).title == "Widget Manual"


def test_a_text_line_starting_with_hash_is_not_a_heading():
    """The Bash manual lists the special parameter ``#`` as "# ($#) Expands to the number of
    positional parameters": text, escaped as Markdown does, never a level-1 heading."""
    text, _ = pdf_to_text(["Special Parameters\n# ($#) Expands to the number of positional parameters.\n"], [])
    assert "\n# " not in "\n" + text and "\\# ($#) Expands" in text
    shown = split_units(text)[-1].text  # the escape is Markdown's: the reader sees '#'
    assert shown == "Special Parameters # ($#) Expands to the number of positional parameters."


def test_a_sentence_running_over_a_page_break_stays_one_sentence():
    """ "... wishes to view" / "them; otherwise, ...": the page break is one space, a word
    hyphenated over it is joined, a definition's continuation joins its line, and a page that
    starts a new sentence keeps its paragraph break; page offsets point at each page's text."""
    pages = [
        "Options\ncompletion-items\nThe number of completions above which the user is asked to view\n",
        "them; otherwise, they are listed. It must be set\nto an integer. The default limit is 100.\n\nMore.\n",
        "A new page starts a new sentence.\nIt ends with a meta-\n",
        "character here.\n",
    ]
    text, starts = pdf_to_text(pages, [])
    assert text == (
        "Options\n\ncompletion-items\n: The number of completions above which the user is asked to "
        "view them; otherwise, they are listed. It must be set to an integer. The default limit is "
        "100.\n\nMore.\n\nA new page starts a new sentence.\nIt ends with a metacharacter here.\n"
    )
    assert [text[s : s + 9] for s in starts] == ["Options\n\n", "them; oth", "A new pag", "character"]
    defs = [u.text for u in split_units(text) if u.kind == "definition"]
    assert defs == [
        "completion-items: The number of completions above which the user is asked to view them; "
        "otherwise, they are listed."
    ]


# -- definition tables told apart by their columns (pypdf layout mode) -------------------------
GLOSSARY = [
    [(72, "Terms")],
    [(72, "These terms are used throughout the gizmo manual.")],
    [(72, "token"), (180, "A sequence of characters the gizmo shell treats as one unit.")],
    [(180, "It is either a word or an operator.")],
    [(72, "special builtin")],
    [(180, "A builtin that the gizmo standard marks as special.")],
    [(72, "word"), (180, "A sequence of characters treated as a unit.")],
    [(72, "The table ends here and prose goes on for a while after it.")],
]


def test_layout_columns_make_definition_entries_without_punctuation(tmp_path):
    # "token A sequence ..." has no colon or dash between term and definition: only the column
    # the definition starts in (layout mode) says where the term ends
    root = tmp_path / "m"
    root.mkdir()
    (root / "gizmo.pdf").write_bytes(make_pdf([GLOSSARY]))
    doc = load_pdf(root / "gizmo.pdf", root)
    assert doc.text == (
        "Terms\nThese terms are used throughout the gizmo manual.\n\n"
        "token\n: A sequence of characters the gizmo shell treats as one unit. "
        "It is either a word or an operator.\n\n"
        "special builtin\n: A builtin that the gizmo standard marks as special.\n\n"
        "word\n: A sequence of characters treated as a unit.\n\n"
        "The table ends here and prose goes on for a while after it.\n"
    )
    units = [u for u in split_units(doc.text) if u.kind == "definition"]
    assert [(u.lead, u.text[:40]) for u in units] == [
        ("token", "token: A sequence of characters the gizm"),
        ("special builtin", "special builtin: A builtin that the gizm"),
        ("word", "word: A sequence of characters treated a"),
    ]


def test_layout_roles_ignore_justified_prose_and_bullets():
    # justified prose has wide gaps too, but no wider than the rest of its line; a bullet list
    # with a hanging indent is not a table; "(see   Section 3": a link's gap is not a term's
    layout = (
        "Chapter 3  Features                                   12\n"
        "If  none  of  the  characters  in  the  prefix  are  quoted,  the  characters\n"
        "•              The first bullet point of a list with a hanging indent\n"
        "               that continues here.\n"
        "subshell (see        Section 3.7.3 [Command Execution Environment], page 43),\n"
        "               deep line\n"
        "blank          A space or tab character.\n"
    )
    roles = layout_roles(layout)
    assert [r for v in roles.values() for r in v] == [
        ("body", ""),
        ("body", ""),
        ("body", ""),
        ("def", ""),
        ("body", ""),
        ("def", ""),
        ("inline", "blank"),
    ]


def test_without_layout_the_plain_shape_still_reads_article_definitions():
    # no layout text (another extractor, a test): a single lower-case term followed by "A ..."
    # on one line is still a definition (the article "A" was not taken as a definition's start)
    text, _ = pdf_to_text(["Terms\nThese are used below.\nblank A space or tab character.\n"], [])
    assert "blank\n: A space or tab character." in text


def test_a_contents_page_is_dropped_whole():
    """A page mostly of dot-leader lines is a contents or index page: dropping only those lines
    left "i", "Table of Contents" and a cut entry, and "i Table of Contents ii." was quoted as an
    answer. Such a page goes whole; a page with a few leader lines keeps its other lines."""
    contents = (
        ["i", "Table of Contents"]
        + [f"{n} Topic {n} . . . . . . . . . . . {n + 1}" for n in range(1, 8)]
        + ["Appendix B Major Differences From", "Appendix C Free Documentation License . . 74"]
    )
    body = ["1 Introduction", "The gizmo shell reads each command before it runs anything."]
    few = ["2 Options", "See the list below.", "a . . . . . . . . 3", "b . . . . . . . . 4", "Options are read once."]
    text, starts = pdf_to_text(["\n".join(p) + "\n" for p in (contents, body, few)], [])
    assert "Table of Contents" not in text and "Appendix" not in text and "Topic" not in text
    assert text[starts[1] :].lstrip("# ").startswith("1 Introduction\nThe gizmo shell")
    assert "See the list below.\nOptions are read once." in text[starts[2] :]
