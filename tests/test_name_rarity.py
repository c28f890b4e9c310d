"""Which words of a question can name a thing (citewise.text.rarity), and the unknown-name rule
built on them: a name by shape or by rarity in English, never an ordinary word."""

from __future__ import annotations

import pytest

from citewise.text.rarity import is_rare, name_phrases, name_shaped, name_words


@pytest.mark.parametrize(
    "token, shaped",
    [
        ("x86_64", True),
        ("fs.rm", True),
        ("std::vec", True),
        ("--dry-run", True),
        ("-C", True),
        ("L4", True),
        ("MT103", True),
        ("E-1004", True),
        ("maxHeaderSize", True),
        ("PayPal", True),
        ("SIGPWR", True),
        ("HISTSIZE", True),
        # abbreviations and plain words are not names by their shape
        ("OK", False),
        ("CEO", False),
        ("e.g", False),
        ("i.e.", False),
        ("U.S", False),
        ("HTTP", False),
        ("JSON", False),
        ("minimal", False),
        ("Program", False),
        ("-", False),
        # a number with a lower-case unit or count suffix is a quantity, not a name
        ("10ms", False),
        ("3g", False),
        ("1.5x", False),
        ("3DS", True),
        ("42", False),
    ],
)
def test_name_shapes(token, shaped):
    assert name_shaped(token) is shaped


@pytest.mark.parametrize(
    "word, capitalised, rare",
    [
        ("frobnicate", False, True),
        ("nginx", False, True),
        ("zsh", False, True),
        ("minimal", False, False),
        ("OK", False, False),
        ("program", False, False),
        ("employees", False, False),
        ("salary", False, False),
        # a proper noun's shape raises the cut-off: Stripe (3.5) is a name, Germany (4.9) a word
        ("Stripe", True, True),
        ("Stripe", False, False),
        ("Peru", True, True),
        ("Germany", True, False),
    ],
)
def test_rarity(word, capitalised, rare):
    assert is_rare(word, capitalised) is rare


@pytest.mark.parametrize(
    "question, names",
    [
        ("Is it OK for a program to allocate memory in a signal handler?", []),
        ("What is the minimal supported kernel?", []),
        ("What is the refund policy of Stripe?", ["Stripe"]),
        ("Stripe refunds", []),  # the first word of a sentence is capitalised anyway
        ("What does cargo frobnicate do?", ["frobnicate"]),
        ("What is the salary range for L4?", ["L4"]),
        ("How do I set HISTSIZE? And is CEO a name?", ["HISTSIZE"]),
        ("What does the `--dry-run` flag do?", ["--dry-run"]),
        ("How do I trim a string, e.g. with slice?", []),
    ],
)
def test_name_words(question, names):
    assert name_words(question) == names


@pytest.mark.parametrize(
    "question, phrases",
    [
        ("How do I install a Visual Studio Code extension?", ["Visual Studio Code"]),
        ("Does Signal Handler Safety apply? Memory Pools do.", ["Signal Handler Safety"]),
        ("Visual Studio opens", []),  # a sentence's first word is capitalised anyway
        ("How does the Google SAML app sign?", []),  # an abbreviation joins no run
        ("What is Node's Buffer?", []),  # a possessive ends a name
        ("Is the Pro plan billed by Stripe, Inc?", []),  # one capitalised word is no phrase
        ("Set it in Settings, Security and Sign-In Log.", ["Sign-In Log"]),
        # a function word ends a run; one capitalised inside a sentence is Title Case: no names
        ("Is Signal Handler Of Memory safe?", []),
        ("How Do I Change My Payment Method?", []),
        ("Is the Bank of America card accepted?", []),
        ("How do I Update My Card?", []),
    ],
)
def test_name_phrases(question, phrases):
    from citewise.answer.question import lexicon

    assert name_phrases(question, lexicon().english) == phrases


PAGES = {
    "shell/memory": (
        "Memory",
        "## Allocation\n\nA program may allocate memory with malloc. In a signal handler "
        "only async-signal-safe functions may be called; malloc is not one of them.\n",
    ),
    "shell/vars": (
        "Variables",
        "## HISTSIZE\n\nHISTSIZE sets the number of commands kept in the history list. The default value is 500.\n",
    ),
    "shell/plans": (
        "Plans",
        "| Plan | History lines |\n|---|---|\n| Pro | 5000 |\n| Enterprise | 50000 |\n\n"
        "The history-list limit is per shell. Sign in with OneLogin to see your plan.\n",
    ),
}


@pytest.fixture(scope="module")
def idx(tmp_path_factory):
    from conftest import minilm_index_of

    return minilm_index_of(tmp_path_factory, PAGES)[0]


@pytest.mark.parametrize(
    "question, reason",
    [
        # ordinary words the pages do not use are no unknown names
        ("Is it OK for a program to call malloc in a signal handler?", None),
        ("What is the minimal history size?", None),
        # names the corpus lacks: by rarity, by a proper noun's shape, by an identifier's shape
        ("How do I set HISTSIZE in zsh?", "zsh"),
        ("Does Stripe call malloc?", "Stripe"),
        ("What does HISTFILESIZE default to?", "HISTFILESIZE"),
        ("What does the --no-history flag do?", "--no-history"),
        ("Is malloc_trim safe in a signal handler?", "malloc_trim"),
        # a multi-word name is known only as a phrase: its words apart do not name it
        ("Can a Signal Handler call malloc?", None),
        ("Can a Memory Program call malloc?", "Memory Program"),
        ("Which Commands Kept in the history list does HISTSIZE set?", None),
        # compared without case, spaces, hyphens: "History List Limit", "One Login" are named
        ("What is the History List Limit on Pro?", None),
        ("Does the plan page need One Login?", None),
        # a table's cells, or words across a comma, are no phrase
        ("Is there a Pro Enterprise plan?", "Pro Enterprise"),
    ],
)
def test_unknown_names_come_from_the_corpus(idx, question, reason):
    from citewise.core import ReasonCode

    got = idx.answerer().scorer.unknown_name(question, None)
    if reason is None:
        assert got is None, got
    else:
        assert got is not None and got.code == ReasonCode.UNKNOWN_NAME and got.fields["name"] == reason, got


def test_common_word_table_agrees_with_wordfreq_and_is_cached(tmp_path, monkeypatch):
    """The cached table of words at or above RARE_ZIPF gives the verdict wordfreq gives, for
    words on both sides of both cut-offs, and a second process reads it from the cache file."""
    from wordfreq import zipf_frequency

    from citewise.text import rarity

    monkeypatch.setenv("CITEWISE_CACHE", str(tmp_path))
    rarity.common_words.cache_clear()
    try:
        table = rarity.common_words()
        files = list(tmp_path.glob("wordfreq-en-*-zipf3.tsv"))
        assert len(files) == 1
        # zipf 2.4-4.6: rarer than, between and above the two cut-offs (3.0 lower case, 4.0 capitalised)
        words = ["shebang", "garbled", "retyping", "rebuild", "cheapest", "minimal", "stripe", "window"]
        words += ["frobnicate", "employees", "ok", "program", "refund", "certificate", "the"]
        for w in words:
            z = zipf_frequency(w, "en")
            assert (w in table) == (z >= rarity.RARE_ZIPF), w
            for cap in (False, True):
                word = w.capitalize() if cap else w
                assert is_rare(word, capitalised=cap) == (z < (rarity.RARE_NAME_ZIPF if cap else rarity.RARE_ZIPF)), (
                    word
                )
        assert table["the"] == zipf_frequency("the", "en")
        # written as "word<TAB>zipf" lines; read back by a fresh call
        lines = files[0].read_text(encoding="ascii").splitlines()
        assert len(lines) == len(table) and "window\t" + str(table["window"]) in lines
        files[0].write_text("window\t1.5\n", encoding="ascii")  # a table read from the file, not rebuilt
        rarity.common_words.cache_clear()
        assert rarity.common_words() == {"window": 1.5}
    finally:
        rarity.common_words.cache_clear()


def test_a_name_led_by_the_corpus_subject_is_the_rest_of_it(sample_index):
    """The sample corpus is about Ledgerly: "Ledgerly Pro" is the Pro plan, a name the pages
    hold; "Google Sheets" is named nowhere."""
    scorer = sample_index.answerer().scorer
    assert scorer.unknown_name("Does Ledgerly Pro include SSO?", None) is None
    got = scorer.unknown_name("Does Ledgerly integrate with Google Sheets?", None)
    assert got is not None and got.fields["name"] == "Google Sheets"
    got = scorer.unknown_name("Can Ledgerly Desk Phones call customers?", None)
    assert got is not None and got.fields["name"] == "Ledgerly Desk Phones"  # as the question wrote it


def test_word_tables_of_other_installations_are_pruned_to_the_newest(tmp_path, monkeypatch):
    """Each virtual environment's wordfreq list has its own modification time and so its own
    table file; writing one keeps it and the KEEP_TABLES - 1 newest others."""
    import os

    from citewise.text import rarity

    monkeypatch.setenv("CITEWISE_CACHE", str(tmp_path))
    old = [tmp_path / f"wordfreq-en-1-{i}-zipf3.tsv" for i in range(5)]
    for i, p in enumerate(old):
        p.write_text("window\t1.5\n", encoding="ascii")
        os.utime(p, (1_000_000 + i, 1_000_000 + i))
    (tmp_path / "other.tsv").write_text("x", encoding="ascii")
    rarity.common_words.cache_clear()
    try:
        rarity.common_words()
    finally:
        rarity.common_words.cache_clear()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert rarity.KEEP_TABLES == 3 and len(left) == 4, left
    assert old[4].name in left and old[3].name in left and "other.tsv" in left
