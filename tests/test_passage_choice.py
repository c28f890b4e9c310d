"""Issue 10, right passage from the right document: each answer unit keeps the heading path of
its own section when the chunker merges small sections; a default question quotes the sentence
stating the default of the entry it is about; a code request quotes the block of that entry, not
a neighbour's; a PDF glossary entry whose term and definition are separated only by columns is
quoted for "what is X".

All inputs are small and made up here (a "gizmo" shell, a "crate" packing tool).
"""

from __future__ import annotations


from citewise.answer.units import split_units
from citewise.text.chunker import Chunker

from conftest import make_pdf, minilm_index_of, open_minilm_index

# -- chunks keep every section's heading path ----------------------------------------------------
LONG = " ".join(f"Positional parameter number {i} holds argument {i} of the call." for i in range(60))
NESTED = f"""# Gizmo

## 3 Features

### 3.4 Parameters

#### 3.4.1 Positional parameters

{LONG}

#### 3.4.2 Special parameters

The parameter ? expands to the exit status of the last pipeline.

## 4 Builtins

The shell has a few builtins of its own.

### 4.1 Plain builtins

The colon builtin does nothing and succeeds.
"""


def _section_path(text: str, pos: int) -> set[str]:
    """Headings (level 2 and deeper) above offset ``pos`` of ``text``: the section's true path."""
    stack: list[tuple[int, str]] = []
    at = 0
    for line in text.splitlines(keepends=True):
        if at > pos:
            break
        if line.startswith("##"):
            level = len(line) - len(line.lstrip("#"))
            stack = [h for h in stack if h[0] < level] + [(level, line.lstrip("# ").strip())]
        at += len(line)
    return {t for _, t in stack}


def test_merged_small_sections_keep_each_unit_heading_path():
    # before: "3.4.2 Special parameters" (path Gizmo > 3 Features > 3.4 Parameters > 3.4.2) and
    # "4 Builtins" were merged under their common path ("Gizmo",), and the heading lines of 3
    # and 3.4 were in an earlier chunk: the unit about "?" kept only "3.4.2 Special parameters".
    # Now the chunk's heading path plus the headings inside it hold each unit's whole path.
    chunks = Chunker().chunk("gizmo", "Gizmo", NESTED)
    assert len(chunks) > 1
    seen = 0
    for c in chunks:
        assert NESTED[c.start : c.end] == c.text
        for u in split_units(c.text):
            if u.kind == "sentence" and "Positional" not in u.text:
                want = _section_path(NESTED, c.start + u.start)
                assert want <= set(c.heading_path) | set(u.headings), (c.heading_path, u.headings, u.text)
                seen += 1
    assert seen == 3
    special = next(c for c in chunks if "expands to the exit status" in c.text)
    assert special.heading_path[:3] == ("Gizmo", "3 Features", "3.4 Parameters")


def test_small_sibling_sections_still_merge():
    # siblings whose own heading lines are in the merged text lose nothing: merged as before
    text = (
        "## 4 Builtins\n\nThe shell has a few builtins.\n\n### 4.1 Plain\n\nThe colon builtin does nothing.\n\n"
        "### 4.2 Other\n\nThe hash builtin remembers paths.\n\n### 4.3 More\n\n" + "The more builtin. " * 12
    )
    chunks = Chunker(min_tokens=30, max_tokens=60).chunk("gizmo", "Gizmo", text)
    assert chunks[0].heading_path == ("Gizmo", "4 Builtins")
    assert "### 4.1 Plain" in chunks[0].text and "### 4.2 Other" in chunks[0].text


# -- the default of the entry asked about, the code block of that entry ---------------------------


# -- end to end ------------------------------------------------------------------------------------
GLOSSARY = [
    [(72, "Terms")],
    [(72, "These terms are used throughout the gizmo manual.")],
    [(72, "blank"), (180, "A space or tab character.")],
    [(72, "field"), (180, "A unit of text that results from one of the gizmo expansions.")],
    [(72, "token"), (180, "A sequence of characters the gizmo shell treats as one unit.")],
    [(180, "It is either a word or an operator.")],
    [(72, "word"), (180, "A sequence of characters treated as a unit by the gizmo shell.")],
    [(180, "Words may not include unquoted metacharacters.")],
]


def test_what_is_a_token_quotes_the_glossary_entry_of_a_pdf(tmp_path):
    root = tmp_path / "m"
    root.mkdir()
    (root / "gizmo.pdf").write_bytes(make_pdf([GLOSSARY], title="Gizmo Manual"))
    idx = open_minilm_index(tmp_path / "idx")
    assert idx.ingest(root).errors == []
    a = idx.ask("What is a token in gizmo?")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    assert a.text.startswith("token: A sequence of characters the gizmo shell treats as one unit."), a.text


LEVELS_PAGE = """
## block

A 'block' rule stops the gizmo build when it fires. For example, this rule runs into the wide_shift check.

What's the difference between an error from a rule and a regular old error? Rules are configurable
through levels, so a rule that blocks by default can be relaxed.

## seal

'seal' is a special rule level that fills the same role for 'block' that 'insist' does for 'warn'.
It's the same as 'block' in that a rule at this level stops the build, but unlike the 'block'
level, the 'seal' level can never be lowered by a later setting. Levels may still be capped
from the command line.
"""


def test_a_comparison_reads_on_from_a_unit_naming_both_sides_and_never_quotes_a_question(tmp_path_factory):
    """The best unit names both sides but only says they are alike; the contrast is the next
    sentence. A question sentence in the page ("What's the difference ...?") is never quoted."""
    idx, _ = minilm_index_of(tmp_path_factory, {"gizmo/levels": ("Rule levels", LEVELS_PAGE)})
    a = idx.ask("What's the difference between the block and seal rule levels?")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    assert "the 'seal' level can never be lowered by a later setting" in a.text, a.text
    assert "?" not in a.text, a.text


SALARIES = """
| Level | Minimum | Maximum |
|---|---|---|
| L3 | 70,000 EUR | 90,000 EUR |
| L4 | 88,000 EUR | 115,000 EUR |

Salary reviews happen every year in March.
"""


def test_a_common_word_the_pages_do_not_use_is_no_unknown_name(tmp_path_factory):
    """ "What is the salary range for L4?" over pages that say "salary bands" abstained as
    "unknown name: salary range for L4" (the fresh-clone trial): "range" is a common English word,
    not a name; an invented one ("frobnicate") still abstains."""
    idx, _ = minilm_index_of(
        tmp_path_factory,
        {
            "hr/salaries": ("Salary bands 2026", SALARIES),
            "eng/deploys": ("Deploys", "No deploys on Fridays. Deploys need a review."),
        },
    )
    a = idx.ask("What is the salary range for L4?")
    assert a.outcome == "answered" and "Level: L4; Minimum: 88,000 EUR; Maximum: 115,000 EUR." in a.text, (
        a.abstain_reason,
        a.text,
    )
    b = idx.ask("What is the frobnicate range for L4?")
    assert b.outcome == "abstained" and b.abstain_reason.startswith("unknown name"), b.text
