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

Format rule, for any corpus. Only a block without a language tag (or tagged as text,
:data:`TEXT_TAGS`) is read; a tagged block is code in that language (Go struct fields, SQL
clauses and YAML keys align too). Every non-blank line of the block is one of:

* a **row**: a term of at most :data:`MAX_TERM_WORDS` words without a run of two spaces, then
  two or more spaces (one, where the term fills its column), then a description that opens with
  a letter, a digit, an opening bracket or quote, or a dash or arrow and a space (``- show
  help``), and has no further run of two spaces except after punctuation (a third column makes
  it command output, ``df -h`` or ``ps``, not a glossary). A row sits at the block's least
  indentation, or deeper with its description in the common column (GNU ``--help``'s long-only
  options, indented past the short ones);
* a line indented deeper than the rows that goes on from the row before it (a wrapped
  description); before the first row, a header;
* a label ending in ':' ("Options:"), which is no row.

A table has at least :data:`MIN_ROWS` rows with distinct terms (log lines repeat theirs), at
least half of them start their description in the same column (the columns are aligned) and
hold two words or more in it (not ``hash  file`` lines), and it is no C: no line ends in ``{`` or
``}``, no term ends in ``;``, and fewer than half of the lines end in ``;``.
"""

from __future__ import annotations

import re
from collections import Counter

#: Fewest rows of a table.
MIN_ROWS = 3
#: Most words in a row's first column (a name, an option with its argument, a short phrase).
MAX_TERM_WORDS = 6
#: Language tags of a fenced block that may hold a table (no tag at all included).
TEXT_TAGS = frozenset({"", "text", "txt", "plain", "none"})
_DESC = r"(?:[\w(\"'\u201c]|-+>?\s)"
_ROW = re.compile(r"^(?P<indent>[ \t]*)(?P<term>\S(?:\S| (?! ))*)(?P<gap>[ \t]{2,})(?P<desc>" + _DESC + r".*)$")
_DESC_START = re.compile(_DESC)
#: A run of two spaces inside a description that does not follow punctuation: a third column.
_THIRD_COLUMN = re.compile(r"[^\s.!?:;,] {2,}\S")
_LABEL = re.compile(r"^\S[^:]{0,40}:$")


def column_rows(lines: list[str]) -> list[tuple[int, int, str]] | None:
    """The rows of a block's ``lines`` (without fences) read as a two-column table (module
    docstring): ``[(first line index, last line index, term)]``, a row's wrapped lines included;
    None when the block is not such a table.

    >>> column_rows(["Options:", "  -a      show all", "  -l      long listing,", "           one per line", "  -r      reverse order"])
    [(1, 1, '-a'), (2, 3, '-l'), (4, 4, '-r')]
    >>> column_rows(["  int x;      counter", "  int y;      other", "  int z;      third"]) is None
    True
    """
    body = [(i, ln.expandtabs(8).rstrip()) for i, ln in enumerate(lines) if ln.strip()]
    if len(body) < MIN_ROWS or any(ln.endswith(("{", "}")) for _, ln in body):
        return None
    if sum(ln.endswith(";") for _, ln in body) * 2 >= len(body):
        return None
    indents = {i: len(ln) - len(ln.lstrip()) for i, ln in body}
    found = {i: _ROW.match(ln) for i, ln in body}
    labels = {i for i, ln in body if found[i] is None and _LABEL.match(ln.strip())}
    if len(labels) == len(body):
        return None
    base = min(indents[i] for i, _ in body if i not in labels)
    columns = [m.start("desc") for i, m in found.items() if m is not None and indents[i] == base]
    if not columns:
        return None
    column = Counter(columns).most_common(1)[0][0]
    rows: list[tuple[int, int, str, str]] = []  # (first line, last line, term, description)
    for i, ln in body:
        m = found[i]
        if (
            i not in labels
            and indents[i] > base
            and not (m is not None and m.start("desc") == column and indents[i] < column)
        ):
            if rows:  # a wrapped description; before the first row, a header
                rows[-1] = (rows[-1][0], i, rows[-1][2], rows[-1][3])
            continue
        if i in labels:
            continue  # "Options:"
        term = m.group("term") if m is not None else _overflow(ln, base, column)
        if term is None or term.endswith(";") or len(term.split()) > MAX_TERM_WORDS:
            return None
        desc = m.group("desc") if m is not None else ln[column:]
        if _THIRD_COLUMN.search(desc):
            return None
        rows.append((i, i, term, desc))
    aligned = sum(c == column for c in columns)
    worded = sum(len(d.split()) >= 2 for _, _, _, d in rows)
    terms = [t for _, _, t, _ in rows]
    if len(rows) < MIN_ROWS or len(set(terms)) < len(terms) or aligned * 2 < len(rows) or worded * 2 < len(rows):
        return None
    return [(a, b, t) for a, b, t, _ in rows]


def _overflow(line: str, base: int, column: int) -> str | None:
    """The first column of a row whose term fills its column up to one space before the
    description column ``column``; None when ``line`` does not split there."""
    if len(line) <= column or line[column - 1] != " " or not _DESC_START.match(line[column:]):
        return None
    term = line[base : column - 1].strip()
    return term if term and "  " not in term else None


def block_rows(text: str, start: int, end: int) -> list[tuple[int, int, str, str]] | None:
    r"""The rows of the fenced code block ``text[start:end]`` (its opening fence line first, its
    closing fence line last, or none at the end of the text) when its language tag is one of
    :data:`TEXT_TAGS` and it is a two-column table (:func:`column_rows`): ``[(start, end, shown,
    term)]`` with offsets in ``text``, ``shown`` the row's lines stripped and joined by a space;
    else None.

    >>> t = "```\n  -a   all files\n  -l   long listing\n  -r   reverse order\n```"
    >>> [(t[s:e], term) for s, e, shown, term in block_rows(t, 0, len(t))]
    [('-a   all files', '-a'), ('-l   long listing', '-l'), ('-r   reverse order', '-r')]
    >>> block_rows("```go\n" + t[4:], 0, len(t) + 2) is None
    True
    """
    first = text.find("\n", start, end)
    if first < 0 or text[start:first].strip().lstrip("`~").strip().lower() not in TEXT_TAGS:
        return None
    inner_start = first + 1
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
