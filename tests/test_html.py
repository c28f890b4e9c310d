"""HTML loading: every text node of the main content kept, boilerplate dropped, structure kept."""

from __future__ import annotations

from citewise.answer.units import split_units
from citewise.text.chunker import Chunker, parse_blocks
from citewise.text.html import html_to_markdown
from citewise.text.loaders import load_html


def md(html: str) -> str:
    return html_to_markdown(html)[0]


def test_text_in_unknown_tags_is_kept(tmp_path):
    p = tmp_path / "returns.html"
    p.write_text("<h1>Returns policy</h1><div>Items can be returned within 45 days with receipt code RX-9042.</div>")
    doc = load_html(p, tmp_path)
    assert doc.title == "Returns policy"
    assert doc.text == "# Returns policy\n\nItems can be returned within 45 days with receipt code RX-9042.\n"


def test_every_text_node_kept_section_span_custom_and_bare_body():
    text = md(
        "<html><body>Loose text in body.<section><span>Span text</span> tail.</section>"
        "<x-callout>Custom element text.</x-callout><div><div>Deep <em>div</em> text.</div></div>"
        "After divs.</body></html>"
    )
    for s in ("Loose text in body.", "Span text tail.", "Custom element text.", "Deep div text.", "After divs."):
        assert s in text
    assert "Loose text in body.\n\nSpan text tail.\n\nCustom element text.\n\nDeep div text.\n\nAfter divs." in text


def test_boilerplate_dropped_main_kept():
    html = """<html><head><title>Intro - My Book</title><style>p{}</style></head><body>
    <header><a href="/">Home</a> Site header</header>
    <nav id="sidebar" class="sidebar"><ol><li>Chapter one</li></ol></nav>
    <div id="mdbook-help-container"><div id="mdbook-help-popup"><h2 class="mdbook-help-title">Keyboard shortcuts</h2>
      <div><p>Press <kbd>←</kbd> or <kbd>→</kbd> to navigate between chapters</p></div></div></div>
    <div id="menu-bar" class="menu-bar"><h1 class="menu-title">My Book</h1>
      <ul class="theme-popup"><li><button>Light (default)</button></li></ul></div>
    <div role="search">Search this book</div><div aria-hidden="true">hidden helper</div><p hidden>secret</p>
    <div id="content"><main><h1>Intro</h1><p>Real content here.</p><div>More real content.</div></main></div>
    <nav class="nav-wrapper"><a rel="prev">Previous chapter</a></nav>
    <aside>Related links</aside><footer>Copyright footer</footer><script>var x = 1;</script>
    </body></html>"""
    text = md(html)
    assert text == "# Intro\n\nReal content here.\n\nMore real content.\n"


def test_boilerplate_dropped_without_main():
    html = (
        "<body><header>Top banner</header><nav>Menu</nav><div role='navigation'>Links</div>"
        "<h1>Page</h1><p>Body text.</p><form><button>Go</button></form>"
        "<div style='display: none'>invisible</div><footer>Foot</footer></body>"
    )
    assert md(html) == "# Page\n\nBody text.\n"


def test_article_roots_keep_their_header():
    html = (
        "<body><header>Site</header><article><header><h1>Post title</h1></header><p>Post body.</p>"
        "</article><aside>ads</aside></body>"
    )
    assert md(html) == "# Post title\n\nPost body.\n"


def test_lists_nested_and_one_unit_per_item():
    html = (
        "<main><h2>Steps</h2><ol><li><p>Open settings.</p><p>Then wait a second.</p></li>"
        "<li>Pick one:<ul><li>Alpha <code>a-1</code></li><li>Beta</li></ul></li></ol></main>"
    )
    text = md(html)
    assert text == ("## Steps\n\n1. Open settings. Then wait a second.\n2. Pick one:\n  - Alpha `a-1`\n  - Beta\n")
    units = [u for u in split_units(text) if u.kind == "item"]
    assert units[0].text == "Open settings. Then wait a second."


def test_an_empty_anchor_between_list_items_is_no_item():
    # SQLite's limits page: ``</li><a name="max_column"></a><li>`` inside its <ol>; an item's
    # title paragraph reads as its term, not run into the sentence after it
    html = (
        '<main><ol><li><p><b>Maximum length</b></p><p>It is 10 by default.</p></li><a name="x"></a>'
        "<li><p><b>Maximum depth</b></p><p>It is 1000.</p></li><span>A stray note.</span></ol></main>"
    )
    assert md(html) == ("1. Maximum length: It is 10 by default.\n2. Maximum depth: It is 1000.\n- A stray note.\n")


def test_definition_list_is_item_with_lead_term():
    html = (
        "<main><dl><dt><code>opt-level</code></dt><dd>Controls optimisation. Defaults to 0.</dd>"
        "<dt>debug</dt><dt>-g</dt><dd>Emit debug info.</dd></dl></main>"
    )
    text = md(html)
    assert text == "- **`opt-level`**: Controls optimisation. Defaults to 0.\n- **debug / -g**: Emit debug info.\n"
    items = [u for u in split_units(text) if u.kind == "item"]
    assert [u.text for u in items] == [
        "opt-level: Controls optimisation. Defaults to 0.",
        "debug / -g: Emit debug info.",
    ]


def test_pre_is_a_whole_fenced_block_and_table_has_header_row():
    html = (
        "<main><h2>Usage</h2><pre><code class='language-bash'>$ rustc a.rs\n\n# comment\n$ ./a</code></pre>"
        "<table><thead><tr><th>Level</th><th>Meaning</th></tr></thead>"
        "<tbody><tr><td><code>0</code></td><td>no | opt</td></tr><tr><td>3</td><td>all</td></tr></tbody></table></main>"
    )
    text = md(html)
    assert "```bash\n$ rustc a.rs\n\n# comment\n$ ./a\n```" in text
    assert "| Level | Meaning |\n| --- | --- |\n| `0` | no \\| opt |\n| 3 | all |" in text
    kinds = [b.kind for b in parse_blocks(text)]
    assert kinds == ["heading", "code", "table"]
    rows = [u.text for u in split_units(text) if u.kind == "row"]
    assert rows[-1] == "Level: 3; Meaning: all"
    chunks = Chunker().chunk("d", "Usage", text)
    assert len(chunks) == 1 and "# comment" in chunks[0].text


def test_title_from_title_tag_then_h1(tmp_path):
    a = tmp_path / "a.html"
    a.write_text("<html><head><title>Tab title</title></head><body><h1>Heading</h1><p>x y z</p></body></html>")
    b = tmp_path / "b.html"
    b.write_text("<body><main><h1>Only heading</h1><p>x y z</p></main></body>")
    assert load_html(a, tmp_path).title == "Tab title"
    assert load_html(b, tmp_path).title == "Only heading"


def test_empty_main_falls_back_to_body():
    assert (
        md("<body><nav>Menu</nav><main></main><div>Rendered outside main.</div></body>") == "Rendered outside main.\n"
    )


def test_a_paragraph_led_by_an_option_synopsis_is_its_entry():
    """The HTML man page layout (man2html, PCRE2's pages): a paragraph opening with the option's
    synopsis in bold and italic runs, then its description, is the option's entry."""
    html = (
        "<body><P>\n<b>-d</b> <i>action</i>, <b>--directories=</b><i>action</i>\n"
        'If an input path is a directory, "action" says how. Valid values are "read" (the default).\n</P>'
        "<P>\n<b>--label</b>=<i>name</i>\nThe name shown for standard input.\n</P>"
        # not an option, or nothing after the synopsis, or plain text first: a paragraph
        "<P><b>Note</b> this is prose.</P><P><b>-v</b></P><P>Use <b>-v</b> for more.</P></body>"
    )
    text = md(html)
    assert text.split("\n\n") == [
        '- **-d action, --directories=action**: If an input path is a directory, "action" says how. '
        'Valid values are "read" (the default).',
        "- **--label=name**: The name shown for standard input.",
        "Note this is prose.",
        "-v",
        "Use -v for more.\n",
    ]
    items = [u for u in split_units(text) if u.kind == "item"]
    assert [(u.lead, u.text.split(": ")[0]) for u in items] == [
        ("-d action, --directories=action", "-d action, --directories=action"),
        ("--label=name", "--label=name"),
    ]


def test_only_an_option_line_then_its_description_is_an_entry():
    """Prose that opens with an option or a number, a paragraph holding line headings or a
    second option, and a paragraph in a table cell stay as they are."""
    html = (
        "<body><p><b>-1</b> means unlimited.</p>"
        "<p><code>-O2</code> and <code>-O3</code> enable more optimisation.</p>"
        '<p><b>-x</b>\nDesc of x<br><a name="SEC5">EXIT STATUS</a><br>Exit 0 on success.</p>'
        "<p>\n<b>--colour</b>[=<i>value</i>]\nThis option sets the colour.</p>"
        "<table><tr><th>flag</th></tr><tr><td><p><b>-q</b>\nQuiet.</p></td></tr></table></body>"
    )
    text = md(html)
    assert "- **-1**" not in text and "- **-O2**" not in text and "- **-q**" not in text
    assert "-1 means unlimited." in text and "`-O2` and `-O3` enable more optimisation." in text
    assert "## EXIT STATUS" in text
    assert "- **--colour[=value]**: This option sets the colour." in text


def test_an_option_entry_reads_on_across_line_breaks_but_not_into_another_option():
    assert md("<body><p><b>-x</b>\nDesc of x<br><br>More about x.</p></body>") == "- **-x**: Desc of x More about x.\n"
    assert md("<body><p><b>-x</b>\nDesc one<br><br><b>-y</b> desc two</p></body>") == "-x Desc one -y desc two\n"
