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
from functools import lru_cache

#: The longest term line, in characters (an option with its argument synopsis:
#: ``http-request set-header <name> <fmt> [ { if | unless } <condition> ]`` is 66).
TERM_MAX_CHARS = 80
#: How much deeper than its term a body is indented, at least, in columns.
MIN_EXTRA_INDENT = 2
#: Tabs count as this many columns (as :mod:`citewise.answer.units` counts them).
TAB_COLUMNS = 4

_NOT_TERM = re.compile(
    r"^(?:#{1,6}\s|\||```|~~~|(?:[-*+•◦▪‣·]|\d+[.)])\s)"  # heading, table row, fence, list item
    r"|^[$#%>]\s"  # a shell prompt: a command example
    r"|[.,;:!?]$"  # sentence punctuation or a lead-in colon at the end
    r"|[.!?]\s+[A-Z]"  # a sentence break inside
)
#: A term line written as a name: one token, or opening with a flag dash, a quote or a bracket,
#: or holding an argument synopsis (``<timeout>``, ``[FILE]``, ``{a|b}``, ``--size=N``), or a
#: first token joining letters with ``.``, ``_``, ``-``, ``/`` or ``:`` (``tune.bufsize``,
#: ``http-request``; not a section number such as ``1.1``).
_NAME_LIKE = re.compile(r"^(?:\S+$|[-‘'\"`<\[]|.*[<\[{=]|(?=\S*[A-Za-z])\S*\w[._/:-]\w)")


def indent_width(line: str, tab: int = TAB_COLUMNS) -> int:
    """Columns of white space before ``line``'s text, tabs expanded to stops every ``tab``
    columns."""
    return len(line.expandtabs(tab)) - len(line.expandtabs(tab).lstrip())


def _indent(line: str) -> int:
    return indent_width(line)


def _term_like(stripped: str) -> bool:
    return 0 < len(stripped) <= TERM_MAX_CHARS and not _NOT_TERM.search(stripped)


def hanging_definitions(text: str) -> list[tuple[int, int, int, str]]:
    """Hanging-indent entries of ``text`` (see module docstring), in one pass over its lines.

    Returns:
        ``[(term start, body end, body start, term)]`` character offsets into ``text``, in
        order of the term start; ``term`` is the term lines' text joined with ``", "``.
        Lines inside fenced code blocks are never terms or bodies.

    >>> t = "Intro.\\n\\n  -q, --quiet\\n      Print nothing.\\n\\n      Twice: less.\\n  -v\\n      More.\\n"
    >>> [(t[s:e].split()[0], t[ds:e], term) for s, e, ds, term in hanging_definitions(t)]
    [('-q,', 'Print nothing.\\n\\n      Twice: less.', '-q, --quiet'), ('-v', 'More.', '-v')]
    """
    starts: list[int] = []
    bodies: list[str] = []
    pos = 0
    fenced = False
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        if body.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            body = ""  # a fence line is neither a term nor a body
        starts.append(pos)
        bodies.append("" if fenced else body)
        pos += len(line)
    n = len(bodies)
    stripped = [b.strip() for b in bodies]
    level = [_indent(b) if st else -1 for b, st in zip(bodies, stripped)]
    found: list[list] = []  # [term line, body line, last body line, term level, term]
    open_: list[list] = []  # entries whose body the scan is in, innermost last
    opens: set[int] = set()  # first body lines: a nested entry may start right there

    def close() -> None:
        done = open_.pop()
        if open_:  # a nested entry's lines are its parent's body too
            open_[-1][2] = max(open_[-1][2], done[2])

    i = 0
    while i < n:
        if level[i] < 0:
            i += 1
            continue
        while open_ and level[i] <= open_[-1][3]:
            close()
        if open_:
            open_[-1][2] = i
        entry = _entry_at(i, bodies, stripped, level, opens)
        if entry is None:
            i += 1
            continue
        j, term = entry
        rec = [i, j, j, level[i], term]
        found.append(rec)
        open_.append(rec)
        opens.add(j)
        i = j  # the body's lines are scanned next: nested entries start there
    while open_:
        close()
    out = []
    for t, j, last, _, term in found:
        term_start = starts[t] + len(bodies[t]) - len(bodies[t].lstrip())
        body_start = starts[j] + len(bodies[j]) - len(bodies[j].lstrip())
        out.append((term_start, starts[last] + len(bodies[last].rstrip()), body_start, term))
    return out


#: Texts up to this many characters (a chunk's) keep their entries in :func:`chunk_entries`.
CACHED_MAX_CHARS = 20_000


def chunk_entries(text: str) -> tuple[tuple[int, int, int, str], ...]:
    """:func:`hanging_definitions` of a chunk-sized ``text``, remembered for the most recent
    texts: one question reads the same chunks' entries several times (entry pinning per name,
    the evidence's entry check, the answer units). Longer texts are not kept."""
    if len(text) > CACHED_MAX_CHARS:
        return tuple(hanging_definitions(text))
    return _cached_entries(text)


@lru_cache(maxsize=512)
def _cached_entries(text: str) -> tuple[tuple[int, int, int, str], ...]:
    return tuple(hanging_definitions(text))


def _entry_at(i: int, bodies: list[str], stripped: list[str], level: list[int], opens: set[int]):
    """``(first body line, term)`` when an entry's term lines start at line ``i``, else None."""
    prev = level[i - 1] if i else -1
    if not (prev < 0 or prev > level[i] or i in opens) or not _term_like(stripped[i]):
        return None
    n = len(bodies)
    j = i + 1  # further term lines of the same entry (Info's "-n" / "--quiet" / "--silent")
    while j < n and level[j] == level[i] and _term_like(stripped[j]):
        j += 1
    if j >= n or level[j] < level[i] + MIN_EXTRA_INDENT:
        return None
    terms = stripped[i:j]
    if len(terms) > 1 and not all(_NAME_LIKE.match(t) for t in terms):
        return None  # several term lines are names each; lines of prose are not
    if stripped[j][:1].islower() and not _NAME_LIKE.match(terms[0]):
        return None  # a wrapped sentence going on, indented: no term above it
    return j, ", ".join(terms)


#: Characters around a term that are markup or quoting, not part of the name.
_TERM_QUOTES = "`*_ \t'\"‘’“”"


#: An option with its argument: ``--name=ARG``, ``--name[=ARG]``, ``-x ARG``, ``--name <arg>``
#: (group 1: the option alone).
_OPTION_WITH_ARGUMENT = re.compile(r"(--?[A-Za-z][\w-]*)(?:\[?=|\s+)[<\[]?(?!-)[\w.-]+[>\]]*")


def term_alternatives(term: str) -> list[str]:
    """The names a term line gives: the whole term, then each comma-separated alternative
    (``-z, --gzip`` names ``-z`` and ``--gzip``; Info's ``‘-n’, ‘--quiet’`` names ``-n`` and
    ``--quiet``), markup and quotes stripped, empty ones dropped.

    >>> term_alternatives("‘-n’, ‘--quiet’")[1:]
    ['-n', '--quiet']
    >>> term_alternatives("`--emit`"), term_alternatives("")
    (['--emit'], [])

    An option written with its argument also names the option alone:

    >>> term_alternatives("-d action, --directories=action")[3:]
    ['-d', '--directories']
    >>> term_alternatives("--colour[=value]")[1:], term_alternatives("-o <file>")[1:]
    (['--colour'], ['-o'])
    >>> term_alternatives("-T -TM"), term_alternatives("-5 degrees")
    (['-T -TM'], ['-5 degrees'])
    """
    whole = term.strip(_TERM_QUOTES)
    parts = [p.strip(_TERM_QUOTES) for p in re.split(r",\s+", whole)] if "," in whole else []
    # an option written with its argument names the option: ``--label=name``, ``-N type``,
    # ``--colour[=value]``, ``-o <file>`` (the getopt synopsis forms)
    bare = [m.group(1) for p in (whole, *parts) if (m := _OPTION_WITH_ARGUMENT.fullmatch(p))]
    return [a for a in dict.fromkeys([whole, *parts, *bare]) if a]
