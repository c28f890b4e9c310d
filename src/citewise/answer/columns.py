"""Two-column tables laid out with spaces inside a code block: one answer unit per row.

Plain-text manuals (man pages rendered as text, README option lists) lay a table out as aligned
columns in an indented or fenced block; the loaders keep it as code, which is quotable only for a
question asking for code. A block is such a table when it reads as term / description rows
(:func:`column_rows`), and each row becomes a unit of its own whose lead term is its first
column, quoted as the line stands:

.. code-block:: text

      PCRE2_NEWLINE_CR       Carriage return (CR)
      PCRE2_NEWLINE_LF       Linefeed (LF)
      PCRE2_NEWLINE_ANYCRLF  Any of CR, LF, or CRLF

Format rule, for any corpus: every non-blank line of the block either is a **row** (at the
block's least indentation: a term of at most :data:`MAX_TERM_WORDS` words without a run of two
spaces, then two or more spaces — or one, where the term fills its column — then a description that opens with a letter, a digit or an
opening bracket or quote) or goes on from the row before it (indented deeper: a wrapped
description); lines indented deeper before the first row are a header. There are at least
:data:`MIN_ROWS` rows, at least half of them start their description in the same column (the
columns are aligned), and no line or first column ends as a C statement or block does (``;``
``{`` ``}``): an aligned comment after code is not a table.
"""

from __future__ import annotations

import re
from collections import Counter

#: Fewest rows of a table.
MIN_ROWS = 3
#: Most words in a row's first column (a name, an option with its argument, a short phrase).
MAX_TERM_WORDS = 6
_ROW = re.compile(r"^(?P<indent>[ \t]*)(?P<term>\S(?:\S| (?! ))*)(?P<gap>[ \t]{2,})(?P<desc>[\w(\"'\u201c].*)$")
_CODE_END = (";", "{", "}")
_DESC_START = re.compile(r"[\w(\"'\u201c]")


def column_rows(lines: list[str]) -> list[tuple[int, int, str]] | None:
    """The rows of a block's ``lines`` (without fences) read as a two-column table (module
    docstring): ``[(first line index, last line index, term)]``, a row's wrapped lines included;
    None when the block is not such a table. A first column one character short of running into
    the description column may leave a single space before it (``rootfilesin:foo/bar the files
    ...`` under ``path:foo/bar        a name ...``).

    >>> column_rows(["  -a      show all", "  -l      long listing,", "           one per line", "  -r      reverse"])
    [(0, 0, '-a'), (1, 2, '-l'), (3, 3, '-r')]
    >>> column_rows(["  int x;      counter", "  int y;      other", "  int z;      third"]) is None
    True
    """
    body = [(i, ln.expandtabs(8).rstrip()) for i, ln in enumerate(lines) if ln.strip()]
    if len(body) < MIN_ROWS or any(ln.endswith(_CODE_END) for _, ln in body):
        return None
    base = min(len(ln) - len(ln.lstrip()) for _, ln in body)
    found = {i: _ROW.match(ln) for i, ln in body if len(ln) - len(ln.lstrip()) == base}
    columns = [m.start("desc") for m in found.values() if m is not None]
    if not columns:
        return None
    column = Counter(columns).most_common(1)[0][0]
    rows: list[tuple[int, int, str]] = []
    for i, ln in body:
        if i not in found:  # indented deeper: a header before the first row, else a wrapped line
            if rows:
                rows[-1] = (rows[-1][0], i, rows[-1][2])
            continue
        m = found[i]
        term = m.group("term") if m is not None else _overflow(ln, base, column)
        if term is None or term.endswith(_CODE_END):
            return None  # a line that is no row, or a statement with an aligned comment after it
        if len(term.split()) > MAX_TERM_WORDS:
            return None
        rows.append((i, i, term))
    aligned = sum(c == column for c in columns)
    if len(rows) < MIN_ROWS or aligned * 2 < len(rows):
        return None
    return rows


def _overflow(line: str, base: int, column: int) -> str | None:
    """The first column of a row whose term fills its column up to one space before the
    description column ``column``; None when ``line`` does not split there."""
    if len(line) <= column or line[column - 1] != " " or not _DESC_START.match(line[column]):
        return None
    term = line[base : column - 1].strip()
    return term if term and "  " not in term else None


def block_rows(text: str, start: int, end: int) -> list[tuple[int, int, str, str]] | None:
    """The rows of the fenced code block ``text[start:end]`` (its opening fence line first, its
    closing fence line last, or none at the end of the text) when it is a two-column table
    (:func:`column_rows`): ``[(start, end, shown, term)]`` with offsets in ``text``, ``shown`` the
    row's lines stripped and joined by a space; else None.

    >>> t = "```\\n  -a   all\\n  -l   long\\n  -r   reverse\\n```"
    >>> [(t[s:e], shown, term) for s, e, shown, term in block_rows(t, 0, len(t))]
    [('-a   all', '-a   all', '-a'), ('-l   long', '-l   long', '-l'), ('-r   reverse', '-r   reverse', '-r')]
    """
    block = text[start:end]
    first = block.find("\n")
    if first < 0:
        return None
    inner_start = start + first + 1
    lines = text[inner_start:end].split("\n")
    if lines and lines[-1].lstrip().startswith(("```", "~~~")):
        lines = lines[:-1]
    rows = column_rows(lines)
    if rows is None:
        return None
    offsets = []
    pos = inner_start
    for ln in lines:
        offsets.append(pos)
        pos += len(ln) + 1
    out = []
    for a, b, term in rows:
        s = offsets[a] + len(lines[a]) - len(lines[a].lstrip())
        e = offsets[b] + len(lines[b].rstrip())
        out.append((s, e, " ".join(ln.strip() for ln in lines[a : b + 1] if ln.strip()), term))
    return out
