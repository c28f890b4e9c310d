"""Structure of plain text: headings and tables of contents, rendered as Markdown-like text.

A plain-text manual marks its sections in three ways, read here in this order of precedence:

1. **Underlines and overlines** (reStructuredText section adornment, also used by Texinfo's
   plain-text output and hand-written manuals): a title line followed by a line of one repeated
   punctuation character at least :data:`UNDERLINE_SHARE` of the title's length, optionally with
   the same line above it. As in reStructuredText, each (character, overline or not) style is a
   level, and the order in which the styles first appear gives their levels.
2. **Numbered section lines** set apart by blank lines: ``3.6. Widgets``, ``4.9.1 Base set``,
   ``Chapter 3. Installing``, ``Appendix A. Options``, ``III. Reading`` (upper-case Roman). A line ``N.M`` is a level below ``N``; a
   number is read as a heading only where it can follow the headings before it (the next sibling,
   a first child, or ``1`` after a chapter line), so the steps of a numbered procedure are not
   sections; the title starts with a capital letter and does not end like a sentence.
3. **Short lines set apart by blank lines** that are ALL CAPS or Title Case (at most
   :data:`SHORT_MAX_WORDS` words, no closing punctuation), in a text that has no adorned or
   numbered headings (:data:`SHORT_ONLY_BELOW`; in one that has, such lines are admonition labels
   and captions: ``Note``, ``Table 2.1. Keys``).

A **table of contents** is navigation and is dropped: a run of at least :data:`TOC_MIN_LINES`
lines (blank lines between entries allowed) that are section-number lines with a multi-part
number somewhere in the run, or dot-leader lines (``Installing ........ 12``), or lines that
repeat headings found elsewhere in the text — together with a short caption line right above it
(``Table of Contents``, ``List of Examples``). Transitions (a lone adornment line) are dropped.

The result is Markdown-like text: headings as ``#`` lines, everything else line for line, with a
backslash before a line start that CommonMark would read as a heading or a code fence (``#``,
`````` ``` ``````, ``~~~``, a setext underline).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from citewise.text.plain_code import RST_TAB, code_paragraphs, indent_of, literal_blocks, literal_marker

#: Characters of a section adornment line (reStructuredText's list, plus box-drawing rules).
ADORNMENT_CHARS = "=-`:'\"~^_*+#<>.!$%&,/;?@[\\]{|}()─━═"
#: An underline is at least this share of its title's length (reStructuredText asks for all of
#: it; plain-text authors often stop short).
UNDERLINE_SHARE = 0.7
#: Longest heading line (characters).
MAX_HEADING_CHARS = 120
#: A short heading (rule 3) has at most this many words and characters.
SHORT_MAX_WORDS = 8
SHORT_MAX_CHARS = 60
#: Short lines (rule 3) are read as headings only in a text with fewer adorned or numbered
#: headings than this.
SHORT_ONLY_BELOW = 3
#: A table of contents has at least this many entries.
TOC_MIN_LINES = 3
#: Share of a run's lines that must be table-of-contents lines.
TOC_SHARE = 0.8

#: Most lines a title set between two rules may take (the title block of :func:`_title_block`).
TITLE_BLOCK_LINES = 3
_ADORN = re.compile(r"^([" + re.escape(ADORNMENT_CHARS) + r"])\1{2,}[ \t]*$")
#: A numbered section line: optional Chapter/Part/Appendix/Section word, a number (``3``, ``3.6``,
#: ``3.6.``, ``A.1``), then the title.
_NUMBERED = re.compile(
    r"^(?:(?P<word>chapter|part|appendix|section)\s+(?P<wnum>[0-9]+|[A-Z]|[IVXLC]+)[.:]?"
    r"|(?P<num>[0-9]{1,3}(?:\.[0-9]{1,3})*|[A-Z](?:\.[0-9]{1,3})+)\.?|(?P<roman>[IVXLC]{1,7})\.)\s+(?P<title>\S.*)$",
    re.I,
)
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}


def _roman(numeral: str) -> int:
    """The value of an upper-case Roman numeral (``XIV`` -> 14).

    >>> _roman("XIV"), _roman("IX"), _roman("III")
    (14, 9, 3)
    """
    values = [_ROMAN[c] for c in numeral]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


_DOT_LEADERS = re.compile(r"(?:\.\s?){4,}\s*(?:[0-9]+|[ivxlc]+)\s*$", re.I)
_SMALL_WORDS = frozenset("a an and as at by for from in into of on or the to vs via with".split())
_SENTENCE_END = (".", ",", ";", ":", "!", "?")
#: Line starts CommonMark would read as structure in text that is not Markdown: a heading, a
#: code fence (which would run to the end of the text), a setext underline. Other markup
#: (``>``, ``<``, ``|``) changes no block boundary that matters to the chunker and stays as written.
_MARKUP_START = re.compile(r"^[ \t]{0,3}(?:#|```|~~~|[=\-]+[ \t]*$)")


@dataclass
class Heading:
    """A heading found in the text: its title, level and the lines it occupies."""

    line: int  # the title line
    title: str
    first: int  # first line of the heading (the overline, if any)
    last: int  # last line (the underline, if any)
    kind: str  # adorned | numbered | short
    style: tuple = ()  # adorned: (char, overlined); numbered: the number parts
    level: int = 0


@dataclass
class Structure:
    """Headings and dropped line ranges of a plain text (line indices, 0-based)."""

    headings: list[Heading] = field(default_factory=list)
    dropped: list[tuple[int, int, str]] = field(default_factory=list)  # (first, last, reason)


def _norm_title(s: str) -> str:
    s = _DOT_LEADERS.sub("", s)
    m = _NUMBERED.match(s.strip())
    core = m.group("title") if m else s
    return " ".join(re.sub(r"[^\w\s]", " ", core).split()).casefold()


def _blank(lines: list[str], i: int) -> bool:
    return i < 0 or i >= len(lines) or not lines[i].strip()


#: Inline markup a title may open with: reStructuredText literals and emphasis, quotes
#: (``\`\`ui\`\``` over a ``------`` line titles the ``ui`` section of an INI-style manual).
TITLE_MARKUP = "`*\"'"


def _title_like(s: str) -> bool:
    """A heading title: starts with a letter or digit (after inline markup, :data:`TITLE_MARKUP`),
    is not a sentence (no closing punctuation, except a question mark), and has a letter.

    >>> _title_like("``ui``"), _title_like("Troubleshooting"), _title_like("- item"), _title_like("Done.")
    (True, True, False, False)
    """
    s = s.strip()
    return (
        0 < len(s) <= MAX_HEADING_CHARS
        and s.lstrip(TITLE_MARKUP)[:1].isalnum()
        and any(c.isalpha() for c in s)
        and not s.endswith((".", ",", ";", ":", "!"))
    )


def _short_like(s: str) -> str:
    """'caps' or 'title' when ``s`` is a short ALL CAPS or Title Case line, else ''."""
    s = s.strip()
    if len(s) > SHORT_MAX_CHARS:  # before splitting: a huge line's words are millions of strings
        return ""
    words = s.split()
    if not (1 <= len(words) <= SHORT_MAX_WORDS) or s.endswith(_SENTENCE_END):
        return ""
    if not s[0].isalpha() or not s[0].isupper():
        return ""
    letters = [c for c in s if c.isalpha()]
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return "caps"
    content = [w for w in words if w.lower() not in _SMALL_WORDS]
    if content and all(w[0].isupper() or not w[0].isalpha() for w in content):
        return "title"
    return ""


def _adorned(lines: list[str]) -> list[Heading]:
    out: list[Heading] = []
    n = len(lines)
    i = 0
    while i < n:
        ln = lines[i]
        text = ln.strip()
        over = _ADORN.match(ln)
        if (
            over
            and i + 2 < n
            and text
            and lines[i + 1].strip()
            and _ADORN.match(lines[i + 2])
            and lines[i + 2].strip()[0] == text[0]
            and _title_like(lines[i + 1])
            and len(lines[i + 2].strip()) >= UNDERLINE_SHARE * len(lines[i + 1].strip())
            and _blank(lines, i - 1)
        ):
            out.append(Heading(i + 1, lines[i + 1].strip(), i, i + 2, "adorned", (text[0], True)))
            i += 3
            continue
        if (
            text
            and not over
            and i + 1 < n
            and len(ln) - len(ln.lstrip()) <= 3
            and _title_like(ln)
            and _blank(lines, i - 1)
        ):
            under = _ADORN.match(lines[i + 1])
            if under and len(lines[i + 1].strip()) >= max(3, UNDERLINE_SHARE * len(text)):
                out.append(Heading(i, text, i, i + 1, "adorned", (lines[i + 1].strip()[0], False)))
                i += 2
                continue
        i += 1
    return out


def _number_parts(m: re.Match) -> tuple:
    if m.group("word"):
        return ("chapter",)
    if m.group("roman"):  # ``III. Reading``: the third top-level section
        return (str(_roman(m.group("roman"))),)
    return tuple(m.group("num").split("."))


def _follows(parts: tuple, prev: list[tuple]) -> bool:
    """Whether a section number can come next after the numbers seen so far (``prev``, in
    order): the first number, a first child (``N.1`` after ``N``), the next sibling of an open
    section (``N+1``, ``N.M+1``), or ``1`` right after a chapter line."""
    if parts == ("chapter",):
        return True
    if not prev:
        return parts[-1] in ("1", "A", "0") or len(parts) == 1
    last = prev[-1]
    if last == ("chapter",):
        return parts[-1] in ("1", "A", "0")
    if parts[:-1] == last and parts[-1] in ("1", "0"):
        return True
    for k in range(len(last), 0, -1):
        anc = last[:k]
        if len(anc) == len(parts) and anc[:-1] == parts[:-1]:
            a, b = anc[-1], parts[-1]
            if a.isdigit() and b.isdigit():
                return int(b) == int(a) + 1
            return len(a) == len(b) == 1 and ord(b) == ord(a) + 1
    # a restart inside a new chapter whose lines are not numbered (``1.`` again)
    return ("chapter",) in prev and parts == ("1",)


#: A well-formed Roman numeral up to 3999 (``CIVIL`` is none).
_ROMAN_NUMERAL = re.compile(r"M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")


def _roman_ok(m: re.Match) -> bool:
    r = m.group("roman")
    return bool(r) and r.isupper() and _ROMAN_NUMERAL.fullmatch(r) is not None


def _numbered(lines: list[str], taken: set[int]) -> list[Heading]:
    out: list[Heading] = []
    seen: list[tuple] = []
    # Roman section lines count only where there are two or more ("I. Newton" alone is a name)
    romans = sum(
        1
        for i, ln in enumerate(lines)
        if (m := _NUMBERED.match(ln.rstrip())) and _roman_ok(m) and _blank(lines, i - 1) and _blank(lines, i + 1)
    )
    for i, ln in enumerate(lines):
        if i in taken or not ln.strip() or ln[:1].isspace():
            continue
        m = _NUMBERED.match(ln.rstrip())
        if not m or not _blank(lines, i - 1) or not _blank(lines, i + 1):
            continue
        title = m.group("title").strip()
        if m.group("roman") and (not _roman_ok(m) or romans < 2):
            continue  # ``ii. item``, ``CIVIL. WAR``, a lone ``I. Newton``
        if not title[:1].isupper() and not title[:1].isdigit() or not _title_like(title) or _DOT_LEADERS.search(ln):
            continue
        parts = _number_parts(m)
        if not _follows(parts, seen):
            continue
        seen.append(parts)
        out.append(Heading(i, ln.strip(), i, i, "numbered", parts))
    return out


def _toc_line(ln: str, last_seen: dict[str, int], at: int) -> str:
    """Why line ``at`` is a table-of-contents entry ('' if it is not one); ``last_seen`` maps a
    normalised heading title to the last line it is a heading on."""
    s = ln.strip()
    if not s or len(s) > 2 * MAX_HEADING_CHARS:
        return ""  # a contents entry is one short line
    if last_seen.get(_norm_title(s), -1) > at:
        return "repeats later headings"
    if _DOT_LEADERS.search(s):
        return "dot leaders"
    m = _NUMBERED.match(s)
    if m and not s.endswith((".", ",", ";")):
        return "section numbers"
    return ""


def _tocs(lines: list[str], headings: list[Heading]) -> list[tuple[int, int, str]]:
    """Table-of-contents runs as (first line, last line, reason)."""
    head_lines = {h.line for h in headings}
    last_seen: dict[str, int] = {}
    for h in headings:
        key = _norm_title(h.title)
        last_seen[key] = max(last_seen.get(key, -1), h.line)
    runs: list[tuple[int, int, str]] = []
    n = len(lines)
    i = 0
    while i < n:
        if not lines[i].strip():
            i += 1
            continue
        # a run of candidate lines, blank lines between entries allowed (at most one at a time)
        j, entries, reasons, last = i, 0, [], i
        spaced = None  # whether the entries are set apart by blank lines (decided by the first gap)
        while j < n:
            if not lines[j].strip():
                if spaced is None:
                    spaced = entries == 1
                if spaced and j + 1 < n and lines[j + 1].strip():
                    j += 1
                    continue
                break
            if spaced is None and entries == 1:
                spaced = False
            why = _toc_line(lines[j], last_seen, j)
            if not why:
                break
            entries += 1
            reasons.append(why)
            last = j
            j += 1
        nums = [_NUMBERED.match(lines[k].strip()) for k in range(i, last + 1) if lines[k].strip()]
        multi = any(m and m.group("num") and "." in m.group("num").strip(".") for m in nums)
        spaced = bool(spaced)
        confident = "dot leaders" in reasons or "repeats later headings" in reasons or multi
        # entries set apart by blank lines are the document's own headings unless they repeat
        # later ones or carry dot leaders
        if (
            entries >= TOC_MIN_LINES
            and confident
            and not (
                spaced and reasons.count("section numbers") == entries and {k for k in range(i, last + 1)} & head_lines
            )
        ):
            first = i
            cap = i - 1
            while cap >= 0 and not lines[cap].strip():
                cap -= 1
            if (
                cap >= 0
                and cap >= i - 2
                and cap not in head_lines
                and _short_like(lines[cap])
                and len(lines[cap].split()) <= 4
            ):
                first = cap  # the run's caption (Table of Contents, List of Tables)
            runs.append((first, last, "table of contents (" + ", ".join(sorted(set(reasons))) + ")"))
            i = last + 1
        else:
            i = max(i + 1, last + 1)  # linear: a run that is not a contents list is passed over whole
    return runs


def _short(lines: list[str], taken: set[int]) -> list[Heading]:
    out = []
    for i, ln in enumerate(lines):
        if i in taken or not ln.strip() or ln[:1].isspace() or _ADORN.match(ln):
            continue
        if _blank(lines, i - 1) and _blank(lines, i + 1):
            kind = _short_like(ln)
            if kind and not _NUMBERED.match(ln.strip()):
                out.append(Heading(i, ln.strip(), i, i, "short", (kind,)))
    return out


def analyse(text: str) -> tuple[list[str], Structure]:
    """Lines of ``text`` and its structure (headings with levels, dropped tables of contents)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    adorned = _adorned(lines)
    taken = {k for h in adorned for k in range(h.first, h.last + 1)}
    numbered = _numbered(lines, taken)
    # a numbered line that is also underlined is one heading (its adornment sets the level)
    for h in adorned:
        m = _NUMBERED.match(h.title)
        if m:
            h.kind, h.style = "adorned", h.style + (_number_parts(m),)
    pre = adorned + numbered
    tocs = _tocs(lines, pre)
    dropped_lines = {k for a, b, _ in tocs for k in range(a, b + 1)}
    # headings inside a table of contents are its entries
    adorned = [h for h in adorned if h.line not in dropped_lines]
    taken = {k for h in adorned for k in range(h.first, h.last + 1)} | dropped_lines
    numbered = _numbered(lines, taken)
    taken |= {h.line for h in numbered}
    # short lines are headings only in a text without adorned or numbered ones (there they are
    # admonition labels and captions: Note, Warning, Table 2.1. ...)
    short = _short(lines, taken) if len(adorned) + len(numbered) < SHORT_ONLY_BELOW else []
    heads = sorted(adorned + numbered + short, key=lambda h: h.line)
    _levels(heads)
    # transitions: a lone adornment line between blank lines
    for i, ln in enumerate(lines):
        if _ADORN.match(ln) and _blank(lines, i - 1) and _blank(lines, i + 1) and i not in taken:
            tocs.append((i, i, "transition line"))
    return lines, Structure(heads, sorted(tocs))


def _levels(heads: list[Heading]) -> None:
    """Heading levels (1..6): adornment styles ranked by first appearance; a chapter line one
    below the last adorned heading (or 1); a numbered line one below its parent number, else at
    its siblings' level, else its number's depth below the chapter; a short line one below the
    section it is in."""
    styles: list[tuple] = []
    by_number: dict[tuple, int] = {}
    chapter_level = 0
    adorned_level = 0  # level of the last adorned heading
    current = 0  # level of the last adorned or numbered heading
    for h in heads:
        if h.kind == "adorned":
            style = h.style[:2]
            if style not in styles:
                styles.append(style)
            h.level = adorned_level = styles.index(style) + 1
            if len(h.style) > 2:
                by_number[h.style[2]] = h.level
        elif h.style == ("chapter",):
            chapter_level = chapter_level or adorned_level + 1
            h.level = chapter_level
        else:
            parts = h.style
            same = [lv for p, lv in by_number.items() if len(p) == len(parts)]
            if parts[:-1] in by_number:
                h.level = by_number[parts[:-1]] + 1
            elif same:
                h.level = same[-1]
            else:
                h.level = (chapter_level or adorned_level) + len(parts)
            by_number[parts] = h.level
        if h.kind == "short":
            h.level = current + 1
        h.level = min(h.level, 6)
        if h.kind != "short":
            current = h.level


def _title_block(lines: list[str], i: int) -> str:
    """The title that starts on line ``i``: the line itself, or, when an adornment line (any
    indentation) sits right above it and the same character's adornment closes the block within
    :data:`TITLE_BLOCK_LINES` lines, the block's lines joined by spaces (a centred title over
    several lines between two rules, as plain-text manuals set it)."""
    first = lines[i].strip()
    above = lines[i - 1].strip() if i > 0 else ""
    if not _ADORN.match(above):
        return first
    for j in range(i + 1, min(i + TITLE_BLOCK_LINES, len(lines))):
        ln = lines[j].strip()
        if not ln:
            break
        if _ADORN.match(ln):
            return " ".join(x.strip() for x in lines[i:j]) if ln[0] == above[0] else first
    return first


def to_markdown(text: str) -> tuple[str, str, list[tuple[int, int, str, str]]]:
    """Markdown-like text of a plain text, its title, and what was dropped.

    Returns:
        (text, title, dropped): ``title`` is the first heading when the text opens with one, else
        its first non-blank line, with its runs of spaces collapsed (a manual page's header line
        ``TAR(1)      GNU TAR Manual      TAR(1)``); ``dropped`` lists (first line, last line (1-based), reason,
        the dropped text's first line).
    """
    lines, st = analyse(text)
    drop = {}
    for a, b, why in st.dropped:
        for k in range(a, b + 1):
            drop[k] = why
    skip = {k for h in st.headings for k in range(h.first, h.last + 1)}
    head_at = {h.line: h for h in st.headings}
    first_text = next(
        (i for i, ln in enumerate(lines) if ln.strip() and i not in drop and not _ADORN.match(ln.strip())), None
    )
    title = ""
    if first_text is not None:
        h = head_at.get(first_text)
        title = h.title if h else _title_block(lines, first_text)
    taken = drop.keys() | skip | head_at.keys()
    literal = literal_blocks(lines, taken)
    in_literal = {k for a, b in literal.items() for k in range(a, b)}
    fence_at = code_paragraphs(lines, taken | in_literal)
    out: list[str] = []
    fence = ""
    literal_end = -1
    for i, ln in enumerate(lines):
        if i == literal_end:
            out += [fence, ""]
            fence, literal_end = "", -1
        if i in literal:
            block = lines[i : literal[i]]
            fence = "```"
            while any(fence in b for b in block):
                fence += "`"
            cut = min(indent_of(b) for b in block if b.strip())
            while out and not out[-1].strip():
                out.pop()
            if out and out[-1].rstrip().endswith("::"):
                marker = literal_marker(out.pop())
                if marker is not None:
                    out.append(marker)
            out += ["", fence]
            literal_end = literal[i]
        if literal_end >= 0:
            out.append(ln.expandtabs(RST_TAB)[cut:].rstrip())
            continue
        if i in fence_at:  # a code paragraph opens (its first line) or closes (after its last)
            if fence:
                out.append(fence)
                fence = ""
            if fence_at[i]:
                if out and out[-1].strip():
                    out.append("")
                fence = fence_at[i]
                out.append(fence)
        if fence and (not ln.strip() or i in drop):
            out.append(fence)
            fence = ""
        if fence:
            out.append(ln.rstrip())
            continue
        if i in drop:
            continue
        if i in head_at:
            h = head_at[i]
            if out and out[-1].strip():
                out.append("")
            out.append("#" * h.level + " " + h.title)
            out.append("")
            continue
        if i in skip:
            continue
        if not ln.strip():
            if out and out[-1].strip():
                out.append("")
            continue
        out.append("\\" + ln.lstrip() if _MARKUP_START.match(ln) else ln.rstrip())
    if fence:
        out.append(fence)
    notes = [(a + 1, b + 1, why, lines[a].strip()[:80]) for a, b, why in st.dropped]
    return "\n".join(out).strip("\n") + "\n", " ".join(title[:2000].split())[:200], notes
