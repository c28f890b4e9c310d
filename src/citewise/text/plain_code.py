"""Code in plain text: C-like code paragraphs and reStructuredText literal blocks.

:func:`citewise.text.plain.to_markdown` fences what these find, so the chunker keeps each block
whole and the answer layer quotes it as code (format rules in the docstrings below).
"""

from __future__ import annotations

import re

from citewise.text.hanging import indent_width

#: A paragraph is code when at least this share of its lines (two or more) read as code ...
CODE_LINE_SHARE = 0.6
_CODE_END = (";", "{", "}", "*/", "};")
_CODE_START = ("/*", "*/", "//", "#include", "#define", "#if", "#endif", "#else", "{", "}")
#: ... and one of them has C's own shape: a brace alone, a call statement, a block opened after
#: a condition, a comment or preprocessor line (a list of clauses ending in ";" is prose).
_CODE_SHAPE = re.compile(r"^(?:[{}];?|.*\)\s*;|.*\)\s*\{|/\*.*|#(?:include|define|if|endif)\b.*)$")
#: A list item's marker at a line's start: ``-``, ``*``, ``+``, ``•``, ``1.``, ``(a)``, ``a)``,
#: ``A.``; such a line is never code, and a literal block in the item is measured from its text.
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*+\u2022]|\(?[0-9a-zA-Z]{1,3}[.)])[ \t]+")
#: reStructuredText's tab stops (every 8 columns, as docutils expands tabs).
RST_TAB = 8


def _code_line(line: str) -> bool:
    """A line of C-like code: ends a statement or block (``;``, ``{``, ``}``, ``*/``) or opens a
    comment or preprocessor line; a list item is not."""
    s = line.strip()
    return not _LIST_MARKER.match(s) and (s.endswith(_CODE_END) or s.startswith(_CODE_START))


def code_paragraphs(lines: list[str], taken) -> dict[int, str]:
    """Where code paragraphs open (first line -> fence) and close (line after the last -> '').
    A paragraph (a run of non-blank lines, no heading or dropped line among them) is code when it
    has two lines or more, :data:`CODE_LINE_SHARE` of them read as code (:func:`_code_line`) and
    one of those has C's own shape (a brace alone, ``f(x);``, ``if (x) {``, a comment):
    a plain-text manual's C examples, indented by a space or two, that CommonMark would read as
    prose.

    >>> code_paragraphs(["Call it so:", "", " int f(void)", " {", "    return 0;", " }", "", "Done."], set())
    {2: '```', 6: ''}
    >>> code_paragraphs(["It ends; it goes on;", "and it is prose, not code."], set())
    {}
    >>> code_paragraphs(["(a) keep it confidential;", "(b) not copy it;", "(c) return it."], set())
    {}
    >>> code_paragraphs(["Call init first; it sets up the state;", "then run; it works;"], set())
    {}
    """
    out: dict[int, str] = {}
    i, n = 0, len(lines)
    while i < n:
        if not lines[i].strip() or i in taken:
            i += 1
            continue
        j = i
        while j < n and lines[j].strip() and j not in taken:
            j += 1
        block = lines[i:j]
        code = [ln for ln in block if _code_line(ln)]
        if (
            len(block) >= 2
            and len(code) >= CODE_LINE_SHARE * len(block)
            and any(_CODE_SHAPE.match(ln.strip()) for ln in code)
        ):
            fence = "```"
            while any(fence in ln for ln in block):
                fence += "`"
            out[i], out[j] = fence, ""
        i = j
    return out


def indent_of(line: str) -> int:
    """Columns of white space before ``line``'s text, at reStructuredText's tab stops."""
    return indent_width(line, RST_TAB)


def _body_indent(first: str, last: str) -> int:
    """The indentation a paragraph's text stands at: that of its first line, or of the text after
    a list marker opening it (``1. Install it::`` stands at 3), or of its last line when that
    is deeper (an entry's description wrapped under its term)."""
    m = _LIST_MARKER.match(first)
    at = len(m.group(0).expandtabs(RST_TAB)) if m else indent_of(first)
    return max(at, indent_of(last))


def literal_blocks(lines: list[str], taken) -> dict[int, int]:
    """reStructuredText literal blocks: ``{first line: line after the last}``. A paragraph whose
    last line ends in ``::``, then a blank line, then lines indented deeper than that paragraph's
    text (:func:`_body_indent`: a list item's text after its marker): the block runs over blank
    lines and every line indented deeper, and ends before
    the first non-blank line that is not (the reStructuredText rule for "expanded" ``::``
    literal blocks; plain-text manuals written in reStructuredText keep it). A directive
    (``.. note::``) is not such a paragraph: its body is text.

    >>> literal_blocks(["For example::", "", "    latest = log -l 5", "", "    x = y", "", "creates it."], set())
    {2: 5}
    >>> literal_blocks(["A note::", "but no blank line", "    after it"], set())
    {}
    >>> literal_blocks(["1. Install it::", "", "       pip install w", "", "   Then edit it.", "2. Go."], set())
    {2: 3}
    """
    out: dict[int, int] = {}
    n = len(lines)
    i = 0
    while i < n:
        if i in taken or not lines[i].rstrip().endswith("::"):
            i += 1
            continue
        top = i
        while top > 0 and lines[top - 1].strip() and top - 1 not in taken:
            top -= 1
        if any(ln.lstrip().startswith("..") for ln in lines[top : i + 1]):  # a directive's body is text
            i += 1
            continue
        base = _body_indent(lines[top], lines[i])
        k = i + 1
        if k >= n or lines[k].strip():
            i += 1
            continue
        while k < n and not lines[k].strip():
            k += 1
        end = k
        j = k
        while j < n and (not lines[j].strip() or indent_of(lines[j]) > base) and j not in taken:
            if lines[j].strip():
                end = j + 1
            j += 1
        if end > k:
            out[k] = end
        i = max(end, i + 1)
    return out


def literal_marker(line: str) -> str | None:
    """The line that introduces a literal block as reStructuredText renders it: ``Text::`` ->
    ``Text:``, ``Text ::`` -> ``Text``, a lone ``::`` -> None (dropped)."""
    body = line.rstrip()[:-2]
    if not body.strip():
        return None
    return body.rstrip() if body.endswith((" ", "\t")) else body + ":"
