"""Markdown navigation that only links within the document (tables of contents, back-to-top
lines) is blanked at load; everything else keeps its text and offsets."""

from __future__ import annotations

from citewise.text import notes
from citewise.text.chunker import Chunker
from citewise.text.loaders import load_file
from citewise.text.md_nav import fragment_navigation

README = """\
Kettle controller
=================

Table of Contents
-----------------

* [Wiring](#wiring)
* [Settings](#settings)
    * [Boil point](#boil-point)

Wiring
------

Connect the relay to pin 7 before powering the board.

[Back to top](#kettle-controller)

Settings
--------

* [Boil point](#boil-point): the temperature at which heating stops.
* See the [vendor notes](https://example.org/notes) for other boards.

### Boil point

The boil point defaults to 98 degrees at sea level.

**[Top](#kettle-controller)** | [Settings](#settings)

Jump to [Wiring](#wiring) for the pin layout.
"""


def test_only_blocks_made_of_in_document_links_are_navigation():
    spans = fragment_navigation(README)
    got = [README[s.start : s.end] for s in spans]
    assert got == [
        "Table of Contents\n-----------------",  # the heading of a section that is only the list
        "* [Wiring](#wiring)\n* [Settings](#settings)\n    * [Boil point](#boil-point)",
        "[Back to top](#kettle-controller)",
        "**[Top](#kettle-controller)** | [Settings](#settings)",
    ]
    assert [(s.first_line, s.last_line) for s in spans] == [(4, 5), (7, 9), (16, 16), (28, 28)]
    assert spans[0].reason == "navigation: the heading of a section that only links to this document's own sections"
    assert spans[1].reason == "navigation: a list of 3 links to this document's own sections"
    # a link with words around it, or to another page, is content
    assert fragment_navigation("See [Wiring](#wiring) first.\n") == []
    assert fragment_navigation("* [Docs](https://example.org/#top)\n") == []
    assert fragment_navigation("* [Wiring](#wiring)\n* plain item\n") == []
    assert fragment_navigation("[empty](#)\n") == []


def test_a_heading_goes_with_its_navigation_only_when_its_section_holds_nothing_else():
    doc = (
        "Guide\n=====\n\nContents\n--------\n\n* [Setup](#setup)\n* [Use](#use)\n\n"
        "Setup\n-----\n\n[Back to top](#guide)\n\n### Cables\n\nUse the short cable.\n\n"
        "Use\n---\n\n[Back to top](#guide)\n\n### Notes\n\n[Setup](#setup)\n\n"
        "Example\n-------\n\n[Back to top](#guide)\n\n```\nplug in\n```\n"
    )
    got = [(doc[s.start : s.end], s.reason.split(": ")[1][:11]) for s in fragment_navigation(doc)]
    assert got == [
        ("Contents\n--------", "the heading"),
        ("* [Setup](#setup)\n* [Use](#use)", "a list of 2"),
        # "Setup" stays: its subsection says something
        ("[Back to top](#guide)", "only links "),
        # "Use" and its subsection hold nothing but links: both headings go
        ("Use\n---", "the heading"),
        ("[Back to top](#guide)", "only links "),
        ("### Notes", "the heading"),
        ("[Setup](#setup)", "only links "),
        # "Example" stays: its section holds code
        ("[Back to top](#guide)", "only links "),
    ]


def test_the_loader_blanks_navigation_and_keeps_every_offset(tmp_path):
    path = tmp_path / "kettle.md"
    path.write_text("---\ntitle: Kettle\n---\n" + README, encoding="utf-8")
    with notes.collecting() as told:
        doc = load_file(path, tmp_path)
    raw = path.read_text(encoding="utf-8")
    assert len(doc.text) + doc.offset_base == len(raw)
    assert "Back to top" not in doc.text and "**[Top]" not in doc.text and "* [Wiring]" not in doc.text
    assert "[Boil point](#boil-point): the temperature" in doc.text and "Jump to [Wiring]" in doc.text
    assert [(d.where, d.reason.split(":")[0]) for d in told] == [
        ("lines 7-8", "navigation"),
        ("lines 10-12", "navigation"),
        ("line 19", "navigation"),
        ("line 31", "navigation"),
    ]
    chunks = Chunker().chunk(doc.doc_id, doc.title, doc.text)
    for c in chunks:
        body = c.text[len(c.text) - (c.end - c.start) :]
        assert body == doc.text[c.start : c.end]
        assert "(#kettle-controller)" not in c.text
    # the text after blanked navigation is where it is in the file
    for words in ("Connect the relay to pin 7", "The boil point defaults", "Jump to [Wiring]"):
        assert doc.offset_base + doc.text.index(words) == raw.index(words)


def test_the_source_view_shows_the_file_as_written(tmp_path):
    from citewise.core import Principal
    from citewise.index import Index
    from citewise.service.documents import source_view

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "kettle.md").write_text(README, encoding="utf-8")
    idx = Index.open(tmp_path / "idx", embedder="hashing")
    idx.ingest(docs)
    view = source_view(idx, "kettle", Principal())
    assert view.exact is True and view.text == README  # navigation included, as in the file
    stored = idx.store.get_chunks([chunk_id for chunk_id, _, _ in view.chunks])
    assert stored and not any("Back to top" in c.text for c in stored.values())
