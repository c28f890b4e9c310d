"""Hanging-indent definition entries of plain-text manuals.

Manual pages rendered to text, GNU Info files, RFCs and configuration references write an entry
as one or more short *term* lines (an option, a keyword, a command) followed by its *body*
indented deeper::

       -z, --gzip
              Filter the archive through gzip(1).  The default is ...

    timeout connect <timeout>
      Set the maximum time to wait for a connection attempt to a server to succeed.

      If the server is located on the same LAN ...

The format rule (declared here, for any corpus):

- term lines: consecutive non-blank lines at one indentation, each at most
  :data:`TERM_MAX_CHARS` characters, none ending in sentence punctuation (``. , ; ! ?``) or a
  lead-in colon, none holding a sentence break, none a Markdown heading, table row, list item
  (``-``, ``*``, ``+``, ``1.``, or a bullet such as ``•``), code fence or shell prompt
  (``$ ``); the line before the first is blank, the text's start, indented deeper (the end
  of the previous entry's body) or the term of an entry whose body it opens (entries nest);
- the body: the next line, with no blank line between, indented at least
  :data:`MIN_EXTRA_INDENT` columns deeper than the terms; it runs over blank lines and every
  line indented deeper than the terms, and ends before the first non-blank line that is not.

Entries nest (a sub-section line of a manual page holds its options): each is reported.
"""

from __future__ import annotations

import re

#: The longest term line, in characters (an option with its argument synopsis:
#: ``http-request set-header <name> <fmt> [ { if | unless } <condition> ]`` is 66).
TERM_MAX_CHARS = 80
#: How much deeper than its term a body is indented, at least, in columns.
MIN_EXTRA_INDENT = 2
#: Tabs count as this many columns.
TAB_COLUMNS = 8

_NOT_TERM = re.compile(
    r"^(?:#{1,6}\s|\||```|~~~|(?:[-*+•◦▪‣·]|\d+[.)])\s)"  # heading, table row, fence, list item
    r"|^[$#%>]\s"  # a shell prompt: a command example
    r"|[.,;:!?]$"  # sentence punctuation or a lead-in colon at the end
    r"|[.!?]\s+[A-Z]"  # a sentence break inside
)


def _indent(line: str) -> int:
    col = 0
    for ch in line:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += TAB_COLUMNS - col % TAB_COLUMNS
        else:
            break
    return col


def _term_like(stripped: str) -> bool:
    return 0 < len(stripped) <= TERM_MAX_CHARS and not _NOT_TERM.search(stripped)


def hanging_definitions(text: str) -> list[tuple[int, int, int, str]]:
    """Hanging-indent entries of ``text`` (see module docstring).

    Returns:
        ``[(term start, body end, body start, term)]`` character offsets into ``text``, in
        order of the term start; ``term`` is the term lines' text joined with ``", "``.
        Lines inside fenced code blocks are never terms or bodies.

    >>> t = "Intro.\\n\\n  -q, --quiet\\n      Print nothing.\\n\\n      Twice: less.\\n  -v\\n      More.\\n"
    >>> [(t[s:e].split()[0], t[ds:e], term) for s, e, ds, term in hanging_definitions(t)]
    [('-q,', 'Print nothing.\\n\\n      Twice: less.', '-q, --quiet'), ('-v', 'More.', '-v')]
    """
    lines: list[tuple[int, str]] = []  # (start offset, line without its end)
    pos = 0
    fenced = False
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        if body.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            body = ""  # a fence line is neither a term nor a body
        lines.append((pos, "" if fenced else body))
        pos += len(line)
    out: list[tuple[int, int, int, str]] = []
    opens: set[int] = set()  # first body lines: a nested entry may start right there
    n = len(lines)
    i = 0
    while i < n:
        start, body = lines[i]
        stripped = body.strip()
        prev = lines[i - 1][1] if i else ""
        after = not prev.strip() or _indent(prev) > _indent(body) or i in opens
        if not after or not _term_like(stripped):
            i += 1
            continue
        level = _indent(body)
        j = i + 1  # further term lines of the same entry ("-n" / "--quiet" / "--silent")
        while j < n and _indent(lines[j][1]) == level and _term_like(lines[j][1].strip()):
            j += 1
        if j >= n or not lines[j][1].strip() or _indent(lines[j][1]) < level + MIN_EXTRA_INDENT:
            i += 1
            continue
        k = j + 1
        end = j  # last body line
        while k < n:
            b = lines[k][1]
            if b.strip():
                if _indent(b) <= level:
                    break
                end = k
            k += 1
        term = ", ".join(lines[t][1].strip() for t in range(i, j))
        body_start = lines[j][0] + len(lines[j][1]) - len(lines[j][1].lstrip())
        body_end = lines[end][0] + len(lines[end][1].rstrip())
        out.append((start + len(body) - len(body.lstrip()), body_end, body_start, term))
        opens.add(j)
        i = j  # nested entries inside the body are found as the scan goes on
    return out


#: Characters around a term that are markup or quoting, not part of the name.
_TERM_QUOTES = "`*_ \t'\"‘’“”"


def term_alternatives(term: str) -> list[str]:
    """The names a term line gives: the whole term, then each comma-separated alternative
    (``-z, --gzip`` names ``-z`` and ``--gzip``; Info's ``‘-n’, ‘--quiet’`` names ``-n`` and
    ``--quiet``), markup and quotes stripped, empty ones dropped.

    >>> term_alternatives("‘-n’, ‘--quiet’")[1:]
    ['-n', '--quiet']
    >>> term_alternatives("`--emit`"), term_alternatives("")
    (['--emit'], [])
    """
    whole = term.strip(_TERM_QUOTES)
    parts = [p.strip(_TERM_QUOTES) for p in re.split(r",\s+", whole)] if "," in whole else []
    return [a for a in dict.fromkeys([whole, *parts]) if a]
