"""A code block laid out as a two-column table reads as its rows (citewise.answer.columns), one
row per case; and the answer units of such a block."""

from __future__ import annotations

import pytest

from citewise.answer.columns import column_rows
from citewise.answer.units import split_units

ERRORS = [
    "  PCRE2_ERROR_BADDATA      number_of_codes is zero or less",
    "  PCRE2_ERROR_BADMAGIC     mismatch of id bytes in one of the patterns",
    "  PCRE2_ERROR_MEMORY       memory allocation failed",
    "  PCRE2_ERROR_MIXEDTABLES  the patterns do not all use the same tables",
]


@pytest.mark.parametrize(
    "lines, terms",
    [
        # names and descriptions, the columns aligned
        (ERRORS, ["PCRE2_ERROR_BADDATA", "PCRE2_ERROR_BADMAGIC", "PCRE2_ERROR_MEMORY", "PCRE2_ERROR_MIXEDTABLES"]),
        # options; a wrapped description belongs to the row above it
        (
            [
                "-a, --all     show all",
                "-l            long listing,",
                "              one per line",
                "-r            reverse",
            ],
            ["-a, --all", "-l", "-r"],
        ),
        # a header indented deeper than the rows is no row, nor is a label ending in ':'
        (
            [
                "                Meaning",
                "Options:",
                "  -a   list all files",
                "  -l   use a long listing",
                "  -r   reverse the order",
            ],
            ["-a", "-l", "-r"],
        ),
        # a third column makes it command output, not a glossary
        (
            [
                "Filesystem      Size  Used Avail Use% Mounted on",
                "/dev/sda1        50G   20G   28G  42% /",
                "tmpfs           3.9G     0  3.9G   0% /dev/shm",
            ],
            None,
        ),
        (
            [
                ". matches newline      no     DOTALL",
                "$ matches at end       yes    DOLLAR_ENDONLY",
                "newline matches [^a]   yes    not changeable",
            ],
            None,
        ),
        # ... but two spaces after a full stop are one column's prose
        (
            ["-a   list all.  Hidden too.", "-l   long listing.  One a line.", "-r   reverse order"],
            ["-a", "-l", "-r"],
        ),
        # long-only options indented past the short ones are rows of their own
        (
            ["  -a, --all      list all files", "      --author   print the author", "  -b, --escape   print escapes"],
            ["-a, --all", "--author", "-b, --escape"],
        ),
        # a description may open with a dash or arrow
        (["gg     -> go to the top", "G      -> go to the end", "dd     - delete a line"], ["gg", "G", "dd"]),
        # log lines repeat their first column; hash lines have one-word descriptions
        (["[INFO]   Building the core", "[INFO]   Building the app", "[WARN]   Skipping the docs"], None),
        (["d41d8cd98f00b204  a.txt", "9e107d9d372bb682  b.txt", "e4d909c290d0fb1c  c.txt"], None),
        # a description ending one statement is still prose; C ends most lines so
        (["-s   scale sizes;", "-t   sort by time", "-u   sort by access"], ["-s", "-t", "-u"]),
        # a term may be longer than the column: half the rows aligned is enough
        (
            ["(?i)   caseless", "(?J)   duplicate names", "(?m)   multiline", "(?xx)  extended more"],
            ["(?i)", "(?J)", "(?m)", "(?xx)"],
        ),
        # a first column filling its column may leave one space before the description
        (
            [
                "path:foo/bar        a name bar in a directory named foo in the root",
                "                    of the repository",
                "path:path:name      a file or directory named path:name",
                "rootfilesin:foo/bar the files in a directory called foo/bar",
            ],
            ["path:foo/bar", "path:path:name", "rootfilesin:foo/bar"],
        ),
        # ... but not where the description column falls inside a word
        (["abc    one a", "defg   two b", "hij    three c", "klmnop four d"], ["abc", "defg", "hij", "klmnop"]),
        (["abc    one a", "defg   two b", "hij    three c", "klmnopq four d"], None),
        # code with aligned comments is not a table
        (["int x;      /* counter */", "int y;      /* other */", "int z;      /* third */"], None),
        (["int x;      counter", "int y;      other", "int z;      third"], None),
        (["ls -l        # long", "ls -a        # all", "ls -r        # reverse"], None),
        # a block ending a statement anywhere is code
        (["if (x)   run it", "  go();", "  stop();", "done     ok then"], None),
        (["struct s {", "  int   a counter", "  int   b other", "}"], None),
        # two rows are too few
        (ERRORS[:2], None),
        # columns that do not line up
        (["a   one a", "bb      two b", "ccc  three c", "d          four d"], None),
        # prose, or a line at the rows' indentation without a second column
        (["This is a sentence.", "And another one here."], None),
        (ERRORS + ["  see the manual"], None),
    ],
)
def test_a_block_is_a_table_when_its_lines_are_aligned_rows(lines, terms):
    rows = column_rows(lines)
    assert (None if rows is None else [t for _, _, t in rows]) == terms


def test_a_table_block_is_answered_row_by_row():
    text = "Errors:\n\n```\n" + "\n".join(ERRORS) + "\n```\n\nSee also the API.\n"
    units = split_units(text)
    rows = [u for u in units if u.kind == "definition"]
    assert [u.lead for u in rows] == [
        "PCRE2_ERROR_BADDATA",
        "PCRE2_ERROR_BADMAGIC",
        "PCRE2_ERROR_MEMORY",
        "PCRE2_ERROR_MIXEDTABLES",
    ]
    # each row is quoted as the line stands, and its span is that line
    assert rows[3].text == "PCRE2_ERROR_MIXEDTABLES  the patterns do not all use the same tables"
    assert text[rows[3].start : rows[3].end] == rows[3].text
    assert not [u for u in units if u.kind == "code"]


def test_a_block_of_code_stays_one_code_unit():
    text = "Call it so:\n\n```\nint x;      /* counter */\nint y;      /* other */\nint z;      /* third */\n```\n"
    assert [u.kind for u in split_units(text)] == ["sentence", "code"]
