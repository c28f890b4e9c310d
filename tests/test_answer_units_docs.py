"""Issue 10, answer quality on documentation: answer units (list items with their lead term,
definition pairs, whole code blocks, table rows), plain-text answers with source offsets,
unknown-name abstention for flags / code names / subcommands / quoted terms, pinning that never
bypasses abstention, and no sentence quoted twice.

Every input is small and written here (an API page of a made-up ``filebox`` module, a CLI page of
a made-up ``widgetctl`` tool, a page titled with an identifier, two pages sharing a sentence).
The pipeline tests use one index built with the real MiniLM embedder (the default), as a user's
``citewise ingest`` would.
"""

from __future__ import annotations

import re

import pytest

from citewise.answer.citations import split_cited_sentences
from citewise.answer.units import clean, split_units
from citewise.core import ABSTENTION_TEXT

from conftest import minilm_index_of

# -- answer units ----------------------------------------------------------------------------

UNITS_TEXT = """## Options

<!-- YAML
changes: none
-->

> Stability: 1 - Experimental

Use [`box.rm()`][] to delete a box _once_ it is empty.

* `force` {boolean} When `true`, exceptions will be ignored. **Default:** `false`.
* `retryDelay` {integer} Milliseconds to wait between retries. **Default:** `100`.

dotglob
: If set, names that begin with a dot are matched too.

| Plan | Refund window |
|------|---------------|
| PLN-1157 | 45 days |

```js
for (const x of xs) {
  console.log(x);

  done();
}
```

[`box.rm()`]: #boxrm
"""

CODE_BLOCK = "```js\nfor (const x of xs) {\n  console.log(x);\n\n  done();\n}\n```"


def test_units_kinds_texts_and_lead_terms():
    units = split_units(UNITS_TEXT)
    assert [(u.kind, u.lead, u.text) for u in units] == [
        ("sentence", "", "Stability: 1 - Experimental"),
        ("sentence", "", "Use box.rm() to delete a box once it is empty."),
        ("item", "force", "force {boolean} When true, exceptions will be ignored. Default: false."),
        ("item", "retryDelay", "retryDelay {integer} Milliseconds to wait between retries. Default: 100."),
        ("definition", "dotglob", "dotglob: If set, names that begin with a dot are matched too."),
        ("row", "", "Plan: PLN-1157; Refund window: 45 days"),
        ("code", "", CODE_BLOCK),
    ]
    assert all(u.headings == ("Options",) for u in units)
    # the HTML comment and the link reference definition are not content
    assert not any("YAML" in u.text or "changes" in u.text or "#boxrm" in u.text for u in units)


def test_unit_offsets_point_into_the_source_text():
    by_kind = {}
    for u in split_units(UNITS_TEXT):
        by_kind.setdefault(u.kind, []).append(UNITS_TEXT[u.start : u.end])
    assert by_kind["sentence"] == [
        "> Stability: 1 - Experimental",
        "Use [`box.rm()`][] to delete a box _once_ it is empty.",
    ]
    assert by_kind["item"] == [
        "`force` {boolean} When `true`, exceptions will be ignored. **Default:** `false`.",
        "`retryDelay` {integer} Milliseconds to wait between retries. **Default:** `100`.",
    ]
    assert by_kind["definition"] == ["dotglob\n: If set, names that begin with a dot are matched too."]
    assert by_kind["row"] == ["| PLN-1157 | 45 days |"]
    # the whole fence, blank line and indentation included, is one unit
    assert by_kind["code"] == [CODE_BLOCK]


SETEXT_TEXT = """Our roasting schedule
=====================

We roast every weekday morning and ship the same afternoon.

Decaf beans
-----------
Decaf beans are roasted on Thursdays only. They ship on Friday.

Single origins
--------------

Single origins rotate every month.
"""


def test_setext_headings_head_units_and_are_never_sentences():
    # a title underlined with '=' or '-' is a heading, as CommonMark reads it (a sentence right
    # under the underline included): its lines are no unit and the units below sit under it
    units = split_units(SETEXT_TEXT)
    assert [(u.headings, u.text) for u in units] == [
        (("Our roasting schedule",), "We roast every weekday morning and ship the same afternoon."),
        (("Our roasting schedule", "Decaf beans"), "Decaf beans are roasted on Thursdays only."),
        (("Our roasting schedule", "Decaf beans"), "They ship on Friday."),
        (("Our roasting schedule", "Single origins"), "Single origins rotate every month."),
    ]
    assert SETEXT_TEXT[units[1].start : units[1].end] == "Decaf beans are roasted on Thursdays only."


def test_list_item_with_several_sentences_is_one_unit():
    text = "Steps:\n\n1. Open the vault settings. Pick the snapshot to restore.\n2. Press Restore.\n"
    items = [u for u in split_units(text) if u.kind == "item"]
    assert [u.text for u in items] == ["Open the vault settings. Pick the snapshot to restore.", "Press Restore."]
    assert [u.lead for u in items] == ["", ""]


def test_clean_renders_plain_text():
    assert (
        clean("See [`fs.rm()`][] and [the guide][g] or [docs](https://x.test/a_b).")
        == "See fs.rm() and the guide or docs."
    )
    assert (
        clean("Runs _once_ per call, *twice* at most, __never__ **always**.")
        == "Runs once per call, twice at most, never always."
    )
    assert clean("> Stability: 0 - Deprecated") == "Stability: 0 - Deprecated"
    assert (
        clean("Keep snake_case_name and `__proto__` as written. <!-- hidden note -->")
        == "Keep snake_case_name and __proto__ as written."
    )
    assert clean("A <code>Promise<void></code> &amp; more") == "A Promise<void> & more"


# -- the pipeline on a small documentation set -----------------------------------------------

FILEBOX = """
## Removing files

### filebox.rm(path[, options])

<!-- YAML
added: v1.2.0
-->

> Stability: 2 - Stable

Removes files and folders asynchronously, like the `rm -rf` command of a shell. See also
[`filebox.rmdir()`][] for removing empty folders. The callback runs _once_ when removal ends.

* `path` {string} The path to remove.
* `options` {Object}
  * `force` {boolean} When `true`, exceptions will be ignored if `path` does not exist. **Default:** `false`.
  * `maxRetries` {integer} If an `EBUSY` error is encountered, the operation is retried up to this many times. **Default:** `0`.
  * `retryDelay` {integer} The amount of time in milliseconds to wait between retries. **Default:** `100`.
  * `recursive` {boolean} If `true`, perform a recursive folder removal. **Default:** `false`.

## Reading a file line by line

A common task is to process a large text file one line at a time without loading it into memory.
The following example streams the file and prints each line with its number:

```js
const lines = filebox.openLines('notes.txt');
let n = 0;
for await (const line of lines) {
  console.log(`${++n}: ${line}`);
}
```

[`filebox.rmdir()`]: #fileboxrmdirpath
"""

READ_CODE = """```js
const lines = filebox.openLines('notes.txt');
let n = 0;
for await (const line of lines) {
  console.log(`${++n}: ${line}`);
}
```"""

WIDGETCTL = """
## Options

* `--verbose` Print every step that widgetctl takes while it works.
* `--dry-run` Show which widgets would change without changing any of them.

## Subcommands

### widgetctl build

Builds every widget listed in the manifest file and writes the packages to the out folder.

### widgetctl clean

Deletes the out folder and all cached widget packages.

## Settings

* `parallel-build-jobs` How many widgets widgetctl builds at the same time. Default: 4.
"""

ZX900 = """
Setting ZX-900 forces the pump controller into manual mode for one hour.
"""

SNAPSHOT = "Nightly snapshots are kept for 35 days in the cold vault."

BACKUPS_EU = f"""
## Retention

{SNAPSHOT}

## Region

The European backup copies live in the Frankfurt data centre and never leave the EU.
A second copy is mirrored to a site near Lyon in France.
"""

BACKUPS_US = f"""
## Retention

{SNAPSHOT}

## Region

The American backup copies are stored in Oregon and replicated to Virginia every hour.
"""


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    """(index, {doc id: source file text}) over the small documentation set."""
    return minilm_index_of(
        tmp_path_factory,
        {
            "api/filebox": ("Filebox API", FILEBOX),
            "cli/widgetctl": ("widgetctl command line", WIDGETCTL),
            "ops/zx-900": ("ZX-900 override", ZX900),
            "ops/backups-eu": ("Backups in Europe", BACKUPS_EU),
            "ops/backups-us": ("Backups in America", BACKUPS_US),
        },
    )


def cited(answer) -> list[tuple[str, list]]:
    return split_cited_sentences(answer.text)


def test_option_question_quotes_the_option_bullet(docs):
    idx, src = docs
    a = idx.ask("What does the force option do?")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    first, cites = cited(a)[0]
    assert first == "force {boolean} When true, exceptions will be ignored if path does not exist."
    assert cites == [("doc", "api/filebox")]
    assert a.citations[0].doc_id == "api/filebox"
    # the citation offsets index the source file and cover the bullet
    c = a.citations[0]
    assert src["api/filebox"][c.start : c.end] == (
        "`force` {boolean} When `true`, exceptions will be ignored if `path` does not exist. **Default:** `false`."
    )


def test_default_question_quotes_the_default(docs):
    idx, src = docs
    a = idx.ask("What is the default retryDelay?")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    sentences = [s for s, _ in cited(a)]
    assert sentences[:2] == [
        "retryDelay {integer} The amount of time in milliseconds to wait between retries.",
        "Default: 100.",
    ]
    assert "100" in a.text and "Default: 0." not in a.text  # not maxRetries' default
    c = a.citations[0]
    assert c.doc_id == "api/filebox" and "**Default:** `100`" in src["api/filebox"][c.start : c.end]


@pytest.mark.parametrize(
    "question", ["Show me the code to read a file line by line", "How do I read a file line by line?"]
)
def test_code_question_gets_the_whole_fenced_block(docs, question):
    idx, _ = docs
    a = idx.ask(question)
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    # verbatim: every line, indentation included, exactly once
    assert READ_CODE in a.text, a.text
    assert a.text.count("filebox.openLines") == 1
    blocks = [(s, c) for s, c in cited(a) if s.startswith("```")]
    assert blocks == [(READ_CODE, [("doc", "api/filebox")])]
    assert [c.doc_id for c in a.citations] == ["api/filebox"]


def test_answers_are_plain_text_with_source_offsets(docs):
    idx, src = docs
    a = idx.ask("What does filebox.rm() do?")
    assert a.outcome == "answered", (a.abstain_reason, a.text)
    sentences = [s for s, _ in cited(a)]
    assert sentences[0] == "Removes files and folders asynchronously, like the rm -rf command of a shell."
    b = idx.ask("What should I use for removing empty folders?")
    assert "See also filebox.rmdir() for removing empty folders." in b.text, b.text
    d = idx.ask("How often does the callback of filebox.rm run?")
    assert "The callback runs once when removal ends." in d.text, d.text
    for ans in (a, b, d):
        assert not re.search(r"\]\[[^\]]*\]", ans.text), ans.text  # [x][] reference links
        assert not re.search(r"(?<!\w)_[^_\s][^_]*_(?!\w)", ans.text), ans.text  # _emphasis_
        assert "**" not in ans.text and "`" not in ans.text and "<!--" not in ans.text
        assert not any(line.lstrip().startswith(">") for line in ans.text.splitlines()), ans.text
        for c in ans.citations:
            assert c.doc_id == "api/filebox"
    # offsets still index the Markdown source: the cited span holds the cited words as written
    assert (
        src["api/filebox"][b.citations[0].start : b.citations[0].end].count("[`filebox.rmdir()`][] for removing") == 1
    )
    assert "runs _once_ when removal ends" in src["api/filebox"][d.citations[0].start : d.citations[0].end]


# -- unknown names abstain, known ones are answered -----------------------------------------


@pytest.mark.parametrize(
    "question, reason",
    [
        ("What does the --turbo-mode flag do?", "unknown name: --turbo-mode"),
        ("What does filebox.frobnicate() do?", "unknown name: filebox.frobnicate()"),
        ("What does snake_case_name do?", "unknown name: snake_case_name"),
        ("What is CamelCaseThing?", "unknown name: CamelCaseThing"),
        ("What does widgetctl frobnicate do?", "unknown name: frobnicate"),
        ('What does "quantum flux" mean?', "unknown name: quantum flux"),
        # a lower-case name of three hyphen-joined parts, or two the question calls a setting
        ("How do I enable parallel-build-cache?", "unknown name: parallel-build-cache"),
        ("What does the variable cache-depth do?", "unknown name: cache-depth"),
    ],
)
def test_questions_about_unknown_names_abstain(docs, question, reason):
    idx, _ = docs
    a = idx.ask(question)
    assert (a.outcome, a.text, a.abstain_reason) == ("abstained", ABSTENTION_TEXT, reason)
    assert a.citations == []


@pytest.mark.parametrize(
    "question, quote, doc",
    [
        (
            "What does the --dry-run flag do?",
            "Show which widgets would change without changing any of them.",
            "cli/widgetctl",
        ),
        (
            "What does the --dry-run option do?",
            "Show which widgets would change without changing any of them.",
            "cli/widgetctl",
        ),
        ("What does widgetctl clean do?", "Deletes the out folder and all cached widget packages.", "cli/widgetctl"),
        ("What does filebox.rm() do?", "Removes files and folders asynchronously", "api/filebox"),
        (
            "What does the parallel-build-jobs setting do?",
            "How many widgets widgetctl builds at the same time.",
            "cli/widgetctl",
        ),
    ],
)
def test_same_questions_about_existing_names_are_answered(docs, question, quote, doc):
    idx, _ = docs
    a = idx.ask(question)
    assert a.outcome == "answered", (question, a.abstain_reason)
    assert quote in a.text
    assert a.citations[0].doc_id == doc


# -- pinning never bypasses abstention -------------------------------------------------------


@pytest.mark.parametrize(
    "question, pinned",
    [
        # the case: a country the corpus never names, plus an identifier that pins a page
        # (a variant where the corpus does name France elsewhere still answers: known limitation,
        # the evidence coverage is taken over the union of the retrieved chunks)
        ("What is the capital of Peru? ZX-900", True),
        # every word known, nothing about it: the evidence score itself stays below the threshold
        ("Who won the football cup? ZX-900", True),
        ("What does HX-217 mean?", False),
    ],
)
def test_pinned_title_does_not_answer_unrelated_questions(docs, question, pinned):
    idx, _ = docs
    a = idx.ask(question)
    assert a.evidence["pinned"] is pinned
    assert (a.outcome, a.text) == ("abstained", ABSTENTION_TEXT), a.text
    assert "pump controller" not in a.text and a.citations == []


def test_pinned_title_still_answers_its_own_question(docs):
    idx, _ = docs
    a = idx.ask("What does the ZX-900 override do?")
    assert a.outcome == "answered", a.abstain_reason
    assert cited(a)[0] == (
        "Setting ZX-900 forces the pump controller into manual mode for one hour.",
        [("doc", "ops/zx-900")],
    )


# -- the same sentence never twice -----------------------------------------------------------


def test_same_sentence_in_two_documents_is_quoted_once(docs):
    idx, _ = docs
    a = idx.ask("How long are nightly snapshots kept in the cold vault?")
    assert a.outcome == "answered", a.abstain_reason
    assert a.text.count("Nightly snapshots are kept for 35 days") == 1, a.text
    # both documents carrying it were retrieved: the dedup is in the answer, not luck
    docs_retrieved = {i.split("#")[0] for i in a.retrieved_ids}
    assert {"ops/backups-eu", "ops/backups-us"} <= docs_retrieved


def test_a_definition_wrapped_over_lines_keeps_every_sentence_and_the_next_term():
    """A definition wrapped over several lines runs until a blank line: its later sentences are
    whole (a sentence cut at the first line's end lost "option is off by default."), and a term
    that follows without a blank line starts its own definition."""
    text = (
        "## Shell options\n\npipeguard\n: If set, the return status of a pipeline is the status of the last "
        "command that failed. The\noption is off by default. It applies to every pipeline.\nnullmatch\n"
        ": If set, patterns which match no files expand to nothing.\nPatterns are otherwise left as typed.\n\n"
        "After text.\n"
    )
    got = [(u.kind, u.lead, u.headings[-1], u.text) for u in split_units(text)]
    assert got == [
        (
            "definition",
            "pipeguard",
            "Shell options",
            "pipeguard: If set, the return status of a pipeline is the status of the last command that failed.",
        ),
        ("sentence", "", "pipeguard", "The option is off by default."),
        ("sentence", "", "pipeguard", "It applies to every pipeline."),
        (
            "definition",
            "nullmatch",
            "Shell options",
            "nullmatch: If set, patterns which match no files expand to nothing.",
        ),
        ("sentence", "", "nullmatch", "Patterns are otherwise left as typed."),
        ("sentence", "", "Shell options", "After text."),
    ]
