"""Analyzer, sentence splitter, chunker and loaders."""

from __future__ import annotations

import re

import pytest

from citewise.core import InputError
from citewise.text.analyzer import analyze, find_identifiers
from citewise.text.chunker import Chunker, slugify
from citewise.text.loaders import load_beir_corpus, load_file, load_folder, parse_front_matter
from citewise.text.sentences import split_sentences
from citewise.text.tokens import count_tokens

from conftest import write_doc


def test_analyzer_keeps_identifiers_whole_and_stems_words():
    assert analyze("Error E-1004 in the Refunds API v4.5, MT103 and capture_timeout_ms") == [
        "error",
        "e-1004",
        "refund",
        "api",
        "v4.5",
        "mt103",
        "capture_timeout_ms",
        "captur",
        "timeout",
        "ms",
    ]


def test_analyzer_folds_plurals_accents_and_drops_stop_words():
    assert analyze("The invoices") == analyze("invoice")
    assert analyze("Café") == ["cafe"]
    assert analyze("it is not the") == []


def test_identifier_compounds_do_not_match_their_number():
    # 'e-1004' must not be split into '1004', or every '1004' in the corpus would match it
    assert "1004" not in analyze("E-1004")


def test_find_identifiers():
    assert find_identifiers("What does E-1004 mean? And mt103, v4.5 or INV-2041?") == [
        "e-1004",
        "mt103",
        "v4.5",
        "4.5",
        "inv-2041",
    ]
    assert find_identifiers("how do refunds work") == []
    # release numbers with a cue word on either side; bare numbers and single numbers are not
    assert find_identifiers("What changed in Version 6.5.1?") == ["6.5.1"]
    assert find_identifiers("Ledgerly 6.5 release notes") == ["6.5"]
    assert find_identifiers("a fee of 2.5 percent, version 10, 3.1415") == []


def test_token_count_is_o200k():
    # o200k_base: "hello world" is 2 tokens, the empty string 0
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0


def test_sentences_skip_markup_and_split_prose():
    text = "# Title\n\nFirst one. Second one!\n\n| a | b |\n|---|---|\n\n```\ncode. Here\n```\n- item one\n- Item two."
    got = [text[s:e] for s, e in split_sentences(text)]
    assert got == ["First one.", "Second one!", "item one", "Item two."]


def test_a_bold_passage_of_several_sentences_splits_and_reads_without_stray_marks():
    from citewise.answer.units import clean

    text = "Gift cards are final. **Refunds are never made. No credit is given either.** Other items: 14 days."
    got = [text[s:e] for s, e in split_sentences(text)]
    assert got == [
        "Gift cards are final.",
        "**Refunds are never made.",
        "No credit is given either.",
        "Other items: 14 days.",
    ]
    assert [clean(g) for g in got[1:3]] == ["Refunds are never made.", "No credit is given either."]
    # marks with a partner, or standing apart, are no remainder
    assert clean("**Pro** is *the* plan. 2 ** 3 = 8") == "Pro is the plan. 2 ** 3 = 8"


def test_slugify():
    assert slugify("Refunds on the Pro plan (2026)") == "refunds-on-the-pro-plan-2026"
    assert slugify("!!!") == "section"


def _long_section(topic: str, paragraphs: int, words: int = 90) -> str:
    paras = []
    for p in range(paragraphs):
        paras.append(" ".join(f"{topic}{p}w{i}." if i % 12 == 11 else f"{topic}{p}w{i}" for i in range(words)))
    return "\n\n".join(paras)


def test_chunker_splits_at_headings_within_token_range():
    text = "\n\n".join(
        [
            "# Guide",
            "Intro paragraph that is short.",
            "## Alpha",
            _long_section("alpha", 6),
            "## Beta",
            _long_section("beta", 6),
            "### Beta details",
            _long_section("detail", 3),
            "## Gamma",
            "Only a little text here.",
        ]
    )
    chunks = Chunker().chunk("docs/guide", "Guide", text)
    assert len(chunks) >= 3
    for c in chunks:
        assert text[c.start : c.end] == c.text  # offsets reproduce the text
        assert c.token_count <= 800
        assert c.token_count == count_tokens(c.indexed_text)
    # every chunk but the last of a section group is at least 300 tokens
    assert sum(1 for c in chunks if c.token_count < 300) <= 2
    ids = [c.chunk_id for c in chunks]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"docs/guide#[a-z0-9-]+", i) for i in ids)
    # neighbours link in order
    for a, b in zip(chunks, chunks[1:]):
        assert a.next_id == b.chunk_id and b.prev_id == a.chunk_id
    assert chunks[0].prev_id is None and chunks[-1].next_id is None
    # heading path is prepended to the indexed text
    alpha = next(c for c in chunks if "alpha5w0" in c.text)
    assert alpha.heading_path[:2] == ("Guide", "Alpha")
    assert alpha.indexed_text.startswith("Guide > Alpha\n")
    # the whole text is covered, in order, without overlap
    assert all(a.end <= b.start for a, b in zip(chunks, chunks[1:]))


def test_chunker_small_document_is_one_chunk_and_ids_are_stable():
    text = "# Note\n\n## Rule\nRefunds within 30 days.\n\n## Exceptions\nNot for annual plans.\n"
    a = Chunker().chunk("n", "Note", text)
    b = Chunker().chunk("n", "Note", text)
    assert [c.chunk_id for c in a] == [c.chunk_id for c in b] == ["n#note"]
    assert "Not for annual plans." in a[0].text


def test_chunker_keeps_code_block_whole():
    code = "```\n" + "\n".join(f"line {i} of the example. Another sentence {i}." for i in range(60)) + "\n```"
    text = "# Doc\n\n" + _long_section("x", 5) + "\n\n## Example\n\n" + code + "\n\n" + _long_section("y", 5)
    chunks = Chunker().chunk("d", "Doc", text)
    holding = [c for c in chunks if "line 0 of" in c.text]
    assert len(holding) == 1 and "line 59 of" in holding[0].text


def test_chunker_splits_one_huge_paragraph_by_sentences():
    text = " ".join(f"Sentence number {i} talks about topic {i}." for i in range(400))
    chunks = Chunker().chunk("big", "Big", text)
    assert len(chunks) > 1
    assert all(c.token_count <= 800 for c in chunks)
    assert "".join(c.text for c in chunks).replace(" ", "") == text.replace(" ", "")


def test_chunker_parent_links_point_to_enclosing_section():
    text = (
        "# G\n\nIntro.\n\n## Big\n\n"
        + _long_section("big", 4)
        + "\n\n### Sub one\n\n"
        + _long_section("s", 7)
        + "\n\n### Sub two\n\n"
        + _long_section("t", 7)
    )
    chunks = Chunker().chunk("g", "G", text)
    sub = next(c for c in chunks if "s0w0" in c.text)
    assert sub.parent_id is not None and sub.parent_id in {c.chunk_id for c in chunks}


def test_markdown_loader_reads_front_matter(tmp_path):
    p = write_doc(
        tmp_path,
        "billing/refund-team.md",
        "Refund team",
        "Who handles refunds.",
        version="3",
        updated="2026-09-14",
        permissions=["finance", "support"],
    )
    doc = load_file(p, tmp_path)
    assert doc.doc_id == "billing/refund-team"
    assert (doc.title, doc.version, str(doc.updated), doc.groups) == (
        "Refund team",
        "3",
        "2026-09-14",
        ("finance", "support"),
    )
    raw = p.read_text()
    assert raw[doc.offset_base :] == doc.text


def test_front_matter_id_overrides_path(tmp_path):
    p = tmp_path / "x.md"
    p.write_text("---\nid: custom/id\n---\n# Hello\nbody\n")
    assert load_file(p, tmp_path).doc_id == "custom/id"


@pytest.mark.parametrize(
    "name, content, message, line",
    [
        ("bin.md", b"abc\x00def", "binary file", None),
        ("empty.md", b"  \n", "empty file", None),
        ("latin1.txt", "caf\xe9 au lait".encode("latin-1"), "not UTF-8", 1),
        ("bad.md", b"---\ntitle: ok\nupdated: [unclosed\n---\nbody\n", "bad front matter", 4),
        ("colon.md", b"---\ntitle: E-1: Card declined\n---\nbody\n", "quote a value", 2),
        ("date.md", b"---\nupdated: yesterday\n---\nbody\n", "ISO date", 2),
        ("perm.md", b"---\npermissions: {a: 1}\n---\nbody\n", "list of group names", 2),
        ("open.md", b"---\ntitle: x\nbody\n", "not closed", 1),
        ("img.png", b"\x89PNG", "unsupported file type", None),
    ],
)
def test_bad_input_gives_one_clear_error_naming_the_file(tmp_path, name, content, message, line):
    p = tmp_path / name
    p.write_bytes(content)
    with pytest.raises(InputError) as ei:
        load_file(p, tmp_path)
    assert message in str(ei.value)
    assert str(ei.value).startswith(str(p))
    assert ei.value.line == line
    assert "\n" not in str(ei.value)


def test_folder_load_reports_bad_files_and_keeps_the_rest(tmp_path):
    write_doc(tmp_path, "good.md", "Good", "Fine text.")
    (tmp_path / "bad.md").write_bytes(b"\x00\x01")
    (tmp_path / ".hidden.md").write_text("ignored")
    items = list(load_folder(tmp_path))
    docs = [i for i in items if not isinstance(i, InputError)]
    errors = [i for i in items if isinstance(i, InputError)]
    assert [d.doc_id for d in docs] == ["good"]
    assert len(errors) == 1 and "bad.md" in str(errors[0])


def test_html_loader_turns_headings_into_sections(tmp_path):
    p = tmp_path / "page.html"
    p.write_text(
        "<html><head><title>SSO guide</title><meta name='version' content='7'>"
        "<meta name='permissions' content='it, security'><script>evil()</script></head>"
        "<body><h1>SSO guide</h1><p>Intro text.</p><h2>Okta</h2><p>Set the ACS URL.</p>"
        "<table><tr><th>Field</th><th>Value</th></tr><tr><td>email</td><td>user.email</td></tr></table></body></html>"
    )
    doc = load_file(p, tmp_path)
    assert (doc.doc_id, doc.title, doc.version, doc.groups) == ("page", "SSO guide", "7", ("it", "security"))
    assert "## Okta" in doc.text and "| email | user.email |" in doc.text and "evil" not in doc.text
    chunks = Chunker().chunk(doc.doc_id, doc.title, doc.text)
    assert "Set the ACS URL." in chunks[0].text


def test_text_loader_title_is_first_line(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("\n  Meeting notes  \nWe agreed on refunds.\n")
    doc = load_file(p, tmp_path)
    assert (doc.doc_id, doc.title, doc.format) == ("notes", "Meeting notes", "text")


def test_beir_loader_and_bad_line(tmp_path):
    p = tmp_path / "corpus.jsonl"
    p.write_text('{"_id": "d1", "title": "T", "text": "Body."}\n\n{"_id": "d2", "title": "", "text": "B2"}\nnot json\n')
    it = load_beir_corpus(p)
    d1, d2 = next(it), next(it)
    assert (d1.doc_id, d1.title, d1.text, d2.doc_id) == ("d1", "T", "Body.", "d2")
    with pytest.raises(InputError) as ei:
        next(it)
    assert ei.value.line == 4


def test_parse_front_matter_offsets():
    meta, body, base = parse_front_matter("---\na: 1\n---\nhello\n", "f.md")
    assert meta == {"a": 1} and body == "hello\n" and base == 13


def test_line_readers_name_file_and_line(tmp_path):
    from citewise.text.lines import jsonl_rows, numbered_lines

    p = tmp_path / "x.jsonl"
    p.write_text('{"a": 1}\n\n[2]\n')
    it = jsonl_rows(p, "things")
    assert next(it) == (1, {"a": 1})
    with pytest.raises(InputError) as ei:
        next(it)
    assert (ei.value.line, ei.value.reason) == (3, "expected a JSON object, got list")
    p.write_bytes(b'{"a": "\xe9"}\n')
    with pytest.raises(InputError, match="cannot read things"):
        list(numbered_lines(p, "things"))
    with pytest.raises(InputError, match="cannot read things"):
        list(numbered_lines(tmp_path / "missing.tsv", "things"))


# -- issue 10.8: Unicode dashes in identifiers ---------------------------------------------------


@pytest.mark.parametrize("dash", ["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015", "\u2212"])
def test_unicode_dash_identifier_is_one_token_like_ascii(dash):
    assert analyze(f"Error E{dash}1004 appears") == analyze("Error E-1004 appears") == ["error", "e-1004", "appear"]
    assert find_identifiers(f"What does E{dash}1004 mean?") == ["e-1004"]


def test_identifiers_are_found_inside_unspaced_cjk_text():
    assert find_identifiers("E-1004是什么意思？错误E\u20111005号") == ["e-1004", "e-1005"]
    assert find_identifiers("ABCDEFG1234 x_E-1004") == []  # ASCII borders as before


def test_soft_hyphen_is_removed_and_prose_dashes_stay_separators():
    assert analyze("E\u00ad-1004 and in\u00advoice") == ["e-1004", "invoic"]
    assert find_identifiers("E-\u00ad1004") == ["e-1004"]
    # hyphens are hyphens everywhere: same terms as the ASCII spelling
    assert analyze("motif\u2010bearing") == analyze("motif-bearing")
    # an en dash range and an em dash between words keep splitting, as before
    assert analyze("10\u201320 years") == ["10", "20", "year"]
    assert analyze("cells\u2014and more") == ["cell", "more"]


# -- issue 10.9: scripts written without spaces --------------------------------------------------


def test_cjk_text_is_segmented_into_overlapping_bigrams():
    assert analyze("申请退款需要主管批准。") == ["申请", "请退", "退款", "款需", "需要", "要主", "主管", "管批", "批准"]
    assert analyze("退款") == ["退款"]
    assert analyze("款") == ["款"]  # a lone character is a unigram (Lucene CJKBigramFilter)
    # kana keep their voicing marks (no accent stripping outside Latin/Greek/Cyrillic), Hangul its syllables
    assert analyze("ガスの請求書")[:2] == ["ガス", "スの"]
    assert analyze("환불 요청") == ["환불", "요청"]
    # mixed tokens split at the script border; identifiers stay whole
    assert analyze("E-1004号错误") == ["e-1004", "号错", "错误"]
    # other scripts: words kept, accents of Latin/Greek/Cyrillic folded
    assert analyze("Café Ελληνικά Привет") == ["cafe", "ελληνικα", "привет"]
    assert analyze("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert len(analyze("ภาษาไทย")) == 6  # Thai: character bigrams


def test_latin_ascii_terms_are_unchanged():
    text = "Customers on the Pro plan can request refunds within 30 days (see E-1004, v4.5, capture_timeout_ms)."
    assert analyze(text) == [
        "custom",
        "pro",
        "plan",
        "can",
        "request",
        "refund",
        "within",
        "30",
        "day",
        "see",
        "e-1004",
        "v4.5",
        "capture_timeout_ms",
        "captur",
        "timeout",
        "ms",
    ]


# -- issue 10.2: a long table keeps its header in every chunk ------------------------------------


def _plan_table(rows: int = 180) -> tuple[str, str]:
    header = "| Plan code | Name | Refund window | Setup fee |\n|---|---|---|---|"
    body = "\n".join(f"| PLN-{1000 + i} | Plan {i} | {14 + i % 30} days | {i * 3} USD |" for i in range(rows))
    text = f"# Plans\n\nEvery plan code with its refund window.\n\n{header}\n{body}\n\nPrices exclude VAT.\n"
    return text, header


def test_every_chunk_of_a_split_table_starts_with_its_header():
    from citewise.answer.units import split_units

    text, header = _plan_table(180)
    chunks = Chunker().chunk("plans", "Plans", text)
    table_chunks = [c for c in chunks if "| PLN-" in c.text]
    assert len(table_chunks) >= 3
    for c in chunks:
        assert c.token_count <= 800 and c.token_count == count_tokens(c.indexed_text)
        # offsets stay honest: start/end point at the rows, the header copy is a prefix
        assert c.text[c.prefix_len :] == text[c.start : c.end]
        assert len(c.text) - (c.end - c.start) == c.prefix_len
    for c in table_chunks:
        assert header in c.text
        lines = [ln for ln in c.text.splitlines() if ln.startswith("|")]
        assert "\n".join(lines[:2]) == header  # the table in this chunk parses on its own
    assert table_chunks[0].prefix_len == 0 and all(c.prefix_len == len(header) + 1 for c in table_chunks[1:])
    # every row appears exactly once, in order, across the chunks
    rows = [ln for c in chunks for ln in c.text[c.prefix_len :].splitlines() if ln.startswith("| PLN-")]
    assert rows == [ln for ln in text.splitlines() if ln.startswith("| PLN-")]
    # the answer units of a later chunk label cells with the right column names
    later = next(c for c in table_chunks if "PLN-1157" in c.text)
    assert later.prefix_len > 0
    units = [u.text for u in split_units(later.text) if "PLN-1157" in u.text]
    assert units == ["Plan code: PLN-1157; Name: Plan 157; Refund window: 21 days; Setup fee: 471 USD"]


def test_every_chunk_of_a_split_code_block_reopens_its_fence():
    """A 400-line example (a PDF manual's sample init file) is cut at line ends into chunks that
    each start with the block's opening fence, so each part is still a code unit."""
    from citewise.answer.units import split_units

    lines = [f"echo step {i} of the long example script" for i in range(400)]
    text = "# Setup\n\nRun this script:\n\n```sh\n" + "\n".join(lines) + "\n```\n\nDone.\n"
    chunks = Chunker().chunk("setup", "Setup", text)
    assert len(chunks) >= 4
    for c in chunks:
        assert c.token_count <= 800 and c.token_count == count_tokens(c.indexed_text)
        assert c.text[c.prefix_len :] == text[c.start : c.end]
    assert chunks[0].prefix_len == 0 and all(c.prefix_len == len("```sh\n") for c in chunks[1:])
    assert all(c.text.startswith("```sh\n") for c in chunks[1:])
    # nothing lost or doubled (the whitespace a cut falls on belongs to no chunk)
    assert " ".join(c.text[c.prefix_len :] for c in chunks).split() == text.split()
    # past the section's first chunk (heading and lead-in packed with the block's start), the
    # block is cut at line ends
    assert all(c.text.startswith("```sh\necho step ") and c.text.endswith("script") for c in chunks[2:-1])
    for c in chunks[1:]:
        assert split_units(c.text)[0].kind == "code"


def test_small_table_is_not_prefixed():
    text, _ = _plan_table(5)
    (c,) = Chunker().chunk("plans", "Plans", text)
    assert c.prefix_len == 0 and c.text == text.strip()


# -- issue 13.6: hard cap and NUL bytes ----------------------------------------------------------


def test_one_huge_line_is_capped_at_max_tokens():
    words = ["refund", "window", "plan", "invoice", "E-1004", "approval", "退款"]
    line = " ".join(words[i % len(words)] + str(i % 97) for i in range(60_000))  # one line, no sentences
    assert "\n" not in line and count_tokens(line) > 100_000
    chunks = Chunker().chunk("one-line", "One line", line)
    assert len(chunks) > 100
    assert max(c.token_count for c in chunks) <= 800
    assert all(line[c.start : c.end] == c.text for c in chunks)
    assert all(a.end <= b.start for a, b in zip(chunks, chunks[1:]))
    # cut at whitespace, so no word is split
    assert all(not line[c.end : c.end + 1].strip() for c in chunks[:-1])


def test_huge_line_without_spaces_and_long_sentences_are_capped():
    blob = "QUJD" * 50_000  # base64-like, no whitespace at all
    chunks = Chunker().chunk("blob", "Blob", blob)
    assert len(chunks) > 1 and max(c.token_count for c in chunks) <= 800
    assert "".join(c.text for c in chunks) == blob
    cjk = "申请退款需要主管批准。" * 3000  # CJK sentences without spaces
    chunks = Chunker().chunk("zh", "退款", cjk)
    assert max(c.token_count for c in chunks) <= 800
    assert all(c.text.endswith("。") for c in chunks)  # cut after a CJK full stop
    code = "```\n" + "\n".join(f"x_{i} = compute({i}, retries=3)  # step {i}" for i in range(400)) + "\n```"
    assert max(c.token_count for c in Chunker().chunk("code", "Code", code)) <= 800


def test_nul_bytes_never_reach_a_chunk_and_offsets_stay_right():
    text = "# Doc\n\nRefunds\x00 within 30 days.\x00\x00\n\n## Next\n\nMore\x00text here.\n"
    chunks = Chunker().chunk("nul", "Doc\x00", text)
    assert chunks
    for c in chunks:
        assert "\x00" not in c.text and "\x00" not in c.indexed_text
        assert c.text == text[c.start : c.end].replace("\x00", " ")


def test_giant_table_header_is_not_repeated_and_cap_holds():
    header = "| " + " | ".join(f"Column number {i} with a long name" for i in range(60)) + " |\n|" + "---|" * 60
    rows = "\n".join("| " + " | ".join(f"r{r}c{i}" for i in range(60)) + " |" for r in range(40))
    text = f"{header}\n{rows}\n"
    chunks = Chunker().chunk("wide", "Wide", text)
    assert max(c.token_count for c in chunks) <= 800
    assert all(c.prefix_len == 0 and c.text == text[c.start : c.end] for c in chunks)


def test_chunking_a_5mb_single_line_is_linear_and_capped():
    import time

    sentence = "Customers on the Pro plan may request a refund of invoice E-1004 within thirty days. "
    text = sentence * (5_000_000 // len(sentence))  # 5 MB, one line
    t0 = time.perf_counter()
    chunks = Chunker().chunk("big", "Big", text)
    elapsed = time.perf_counter() - t0
    assert max(c.token_count for c in chunks) <= 800 and len(chunks) > 1000
    assert elapsed < 60, f"{elapsed:.1f} s"  # ~3 s on the 2-core dev machine; quadratic would be hours


def test_chunk_token_counts_are_exact_and_the_count_cache_holds_no_chunk_text(monkeypatch):
    """Issue 37: the token-count cache kept every chunk's indexed text (a second copy of a huge
    document while chunking); now only strings up to COUNT_CACHE_CHARS stay cached."""
    from citewise.text import chunker as chunker_mod
    from citewise.text.tokens import count_tokens

    runs = []
    real_run = chunker_mod._Run

    def spy(*a, **k):
        runs.append(real_run(*a, **k))
        return runs[-1]

    monkeypatch.setattr(chunker_mod, "_Run", spy)
    header = "| plan | price | seats |\n|---|---|---|\n"
    table = header + "".join(f"| p{i} | {i * 7} | {i % 9} |\n" for i in range(300))
    prose = " ".join(f"Sentence {i} says the refund window is {i} days." for i in range(900))
    text = f"# Guide\n\n{prose}\n\n## Plans\n\n{table}\n## More\n\n{prose}\n"
    chunks = chunker_mod.Chunker().chunk("g", "Guide", text)
    assert len(chunks) > 10
    assert [c.token_count for c in chunks] == [count_tokens(c.indexed_text) for c in chunks]
    assert all(c.token_count <= chunker_mod.MAX_TOKENS for c in chunks)
    (run,) = runs
    assert run._counts and max(len(s) for s in run._counts) <= chunker_mod.COUNT_CACHE_CHARS


def test_plain_text_of_one_huge_line_is_not_split_into_words():
    """Issue 37: the short-heading test split every line into words before checking its length;
    a 50 MB single-line file became millions of strings (9.3x the text at the peak here, 3.0x
    after; the rest is the loader's copies of the line)."""
    import random
    import tracemalloc

    from citewise.text.plain import to_markdown

    rng = random.Random(1)
    words = "invoice refund export webhook payment currency ledger".split()
    text = " ".join(rng.choice(words) for _ in range(300_000)) + "\n"
    tracemalloc.start()
    try:
        body, title, dropped = to_markdown(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert body == text and dropped == []
    assert title == text[:200]
    assert peak < 5 * len(text)
