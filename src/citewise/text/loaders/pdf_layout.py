"""PDF page text helpers: monospace (code) lines and definition tables read from the page layout."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any


#: Marks a code line (set wholly in a monospace font) in page texts handed to
#: :func:`pdf_to_text`; runs of such lines become fenced code blocks. NUL never survives in text.
CODE_MARK = "\x00"
#: Monospace font names: TeX's typewriter faces (CMTT10, CMSLTT10, LMMono), Courier and URW's
#: Courier clone Nimbus Mono L (``NimbusMonL-Regu``, as Ghostscript and dvips embed it), Consolas,
#: Menlo, DejaVu Sans Mono, Source Code Pro ... (the part after a subset prefix ``ABCDEF+``).
_MONO_FONT = re.compile(r"(?i)mono|nimbusmon|courier|consol|menlo|typewriter|code|^(?:cm|ec|lm)\w*tt\d*$|^tt\d|tt\d+$")


def _is_mono(font) -> bool:
    """Whether a pypdf font dictionary is monospace: by its name (:data:`_MONO_FONT`) or by the
    FixedPitch flag (bit 1 of ``/Flags``, PDF 32000-1:2008 §9.8.2) of its font descriptor."""
    if not font:
        return False
    name = str(font.get("/BaseFont", "")).lstrip("/").split("+")[-1]
    if _MONO_FONT.search(name):
        return True
    try:
        desc = font.get("/FontDescriptor")
        if desc is None and "/DescendantFonts" in font:  # Type0: the descriptor is the CID font's
            desc = font["/DescendantFonts"][0].get_object().get("/FontDescriptor")
        return desc is not None and bool(int(desc.get_object().get("/Flags", 0)) & 1)
    except Exception:  # a malformed descriptor says nothing about the font
        return False


#: A digit run set at most this share of the page's body size, right after a letter or closing
#: punctuation, is a footnote marker (a superscript): dropped from the text. Set below the
#: baseline of the word before it, it is a subscript (``x₁``, ``S₁``) and stays.
FOOTNOTE_SIZE = 0.8
#: Share of the body size a run's baseline must sit above (or below) its neighbour's to count as
#: raised (or lowered).
BASELINE_SHIFT = 0.05


def _size(size, tm, cm) -> float:
    """The rendered size of a text run: the font size scaled by the text and current matrices."""
    try:
        return abs(float(size) * (float(tm[3]) or float(tm[0]) or 1.0) * (float(cm[3]) or float(cm[0]) or 1.0))
    except (TypeError, ValueError, IndexError):
        return 0.0


def _baseline(tm: Sequence[Any], cm: Sequence[Any]) -> float:
    """The user-space y of a text run's origin: the text matrix ``tm`` times the current
    transformation matrix ``cm`` (PDF 32000-1:2008 §9.4.4), last row's y."""
    try:
        return float(tm[4]) * float(cm[1]) + float(tm[5]) * float(cm[3]) + float(cm[5])
    except (TypeError, ValueError, IndexError):
        return 0.0


def _page_with_code_marks(page, line_sizes: list | None = None) -> str:
    """A page's plain text (pypdf ``extract_text``) with :data:`CODE_MARK` in front of each line
    whose every visible character is set in a monospace font (:func:`_is_mono`): the Texinfo
    ``@example`` blocks of a manual, which plain extraction otherwise runs into the prose.
    Footnote markers (digits set in a small size, :data:`FOOTNOTE_SIZE`, fused to the word before
    them: ``DBTeXMath11``) are removed, and so is the raised number a footnote's own text starts
    with at the foot of the page (``²The standard is ...`` becomes ``The standard is ...``); small
    digits set below the baseline of the word before them are subscripts and stay (``x₁ + x₂``
    reads ``x1 + x2``). ``line_sizes``, when given, receives for each line of the returned text
    ``(largest size of its visible characters, the page's body size)``.

    pypdf hands each text run to ``visitor_text`` with its font and size, and the runs concatenate
    to the extracted text; when they do not (a pypdf change), the page is returned unmarked."""
    runs: list[tuple[str, bool, float, float]] = []
    known: dict[int, bool] = {}

    def visit(text, cm, tm, font, size):
        key = id(font)
        if key not in known:
            known[key] = _is_mono(font)
        runs.append((text, known[key], _size(size, tm, cm), _baseline(tm, cm)))

    text = (page.extract_text(visitor_text=visit) or "").replace(CODE_MARK, "")
    if "".join(t for t, _, _, _ in runs).replace(CODE_MARK, "") != text:
        return text
    mono: list[bool] = []
    sizes: list[float] = []
    ys: list[float] = []
    for t, m, z, y in runs:
        n = len(t.replace(CODE_MARK, ""))
        mono.extend([m] * n)
        sizes.extend([z] * n)
        ys.extend([y] * n)
    counts: dict[float, int] = {}
    for ch, z in zip(text, sizes):
        if not ch.isspace() and z:
            counts[round(z, 1)] = counts.get(round(z, 1), 0) + 1
    body = max(counts, key=lambda z: (counts[z], -z)) if counts else 0.0
    keep = [True] * len(text)
    if body:
        i = 0
        while i < len(text):
            if text[i].isdigit() and sizes[i] and sizes[i] <= FOOTNOTE_SIZE * body:
                j = i
                while j < len(text) and text[j].isdigit() and sizes[j] <= FOOTNOTE_SIZE * body:
                    j += 1
                # the word it is set after: right before it, or one space before (extraction
                # may put a space where the superscript was raised)
                k0 = i - 1 if i and text[i - 1] != " " else i - 2
                before = text[k0] if k0 >= 0 else " "
                shift = BASELINE_SHIFT * body
                if (
                    (before.isalpha() or before in ".,;:)”’\"'")
                    and sizes[k0] > FOOTNOTE_SIZE * body
                    and (j == len(text) or not text[j].isalnum())
                    and ys[i] >= ys[k0] - shift  # not a subscript
                ):
                    for k in range(k0 + 1, j):
                        keep[k] = False
                elif (
                    (i == 0 or text[i - 1] == "\n")
                    and j < len(text)
                    and text[j].isalpha()
                    and ys[i] > ys[j] + shift  # raised above the text it starts: a footnote's number
                ):
                    for k in range(i, j):
                        keep[k] = False
                i = j
            else:
                i += 1
    if not all(keep):
        text = "".join(ch for ch, k in zip(text, keep) if k)
        mono = [m for m, k in zip(mono, keep) if k]
        sizes = [z for z, k in zip(sizes, keep) if k]
    out, pos = [], 0
    for line in text.split("\n"):
        flags = mono[pos : pos + len(line)]
        visible = [f for ch, f in zip(line, flags) if not ch.isspace()]
        out.append(CODE_MARK + line if visible and all(visible) else line)
        if line_sizes is not None:
            zs = [z for ch, z in zip(line, sizes[pos : pos + len(line)]) if not ch.isspace()]
            line_sizes.append((max(zs) if zs else 0.0, body))
        pos += len(line) + 1
    return "\n".join(out)


def _is_code(line: str) -> bool:
    return line.startswith(CODE_MARK)


#: A code run of at most this many lines set inside a sentence stays in the sentence.
INLINE_CODE_LINES = 3


def _inline_code(lines: list[str], i: int, before: str) -> int:
    """How many code lines from ``lines[i]`` on are set inside a sentence (0 when they are a block
    of their own): the text ``before`` them ends without closing punctuation and the line after a
    run of at most :data:`INLINE_CODE_LINES` code lines goes on in lower case ("your
    ~/.bash_profile contains the line" / ``if [ -f ~/.bashrc ]; then . ~/.bashrc; fi`` / "after
    (or before) any login-specific initializations."). Such code is part of the sentence."""
    before = before.rstrip()
    if not before or before.endswith((".", ":", ";", "!", "?", "```")) or before.startswith("#"):
        return 0
    j = i
    while j < len(lines) and _is_code(lines[j].strip()) and j - i < INLINE_CODE_LINES:
        j += 1
    after = lines[j].strip() if j < len(lines) else ""
    return j - i if j > i and re.match(r"[a-z(]", after) else 0


def _fence_code(lines: list[str]) -> list[str]:
    """Runs of :data:`CODE_MARK` lines become fenced code blocks (a blank line on either side);
    code set inside a sentence (:func:`_inline_code`) stays in its line."""
    out: list[str] = []
    i, n = 0, len(lines)
    while i < n:
        if not _is_code(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        k = _inline_code(lines, i, out[-1] if out else "")
        if k:
            out.extend(ln.replace(CODE_MARK, "") for ln in lines[i : i + k])
            i += k
            continue
        if out and out[-1].strip():
            out.append("")
        out.append("```")
        while i < n and (_is_code(lines[i]) or (not lines[i].strip() and i + 1 < n and _is_code(lines[i + 1]))):
            out.append(lines[i][len(CODE_MARK) :] if _is_code(lines[i]) else "")
            i += 1
        out.append("```")
        if i < n and lines[i].strip():
            out.append("")
    return out


#: A definition term alone on its line (``shopt``, ``assoc_expand_once``, ``-s``, ``--login``).
_TERM_LINE = re.compile(r"^(?:[A-Za-z_$][\w$.:+-]*[\w$]|-{1,2}[A-Za-z0-9][\w-]*)$")
#: A term and the start of its definition on one line (``dotglob If set, Bash includes ...``).
_TERM_INLINE = re.compile(r"^([a-z][a-z0-9_]*[a-z0-9]|-{1,2}[A-Za-z0-9][\w-]*)[ \t]{1,3}((?:[A-Z][a-z]+|An?)\b.*)$")

#: Layout (column) evidence of a definition table, from pypdf's layout-mode text: a term line
#: starts at the left and its definition is indented at least this many columns deeper.
DEF_INDENT = 8
#: A term set on the definition's first line is at most this many words and characters long.
TERM_MAX_WORDS = 4
TERM_MAX_CHARS = 40
#: Columns by which layout mode may misplace a definition's first word (it estimates glyph
#: widths): ``builtin      A command`` ends its gap at column 13 for a column at 15.
LAYOUT_SLACK = 4


def _key(line: str) -> str:
    """Lookup key of a line in :func:`layout_roles`: its first 48 characters, whitespace
    collapsed (the end of a line may change when a hyphenated word is joined)."""
    return " ".join(line.replace(CODE_MARK, "").split())[:48]


_BULLETS = frozenset("•◦▪▫●○■□‣∙")


#: A Readline key binding whose key is a bracket (``M-{``, ``C-x (``, ``C-x )``): the bracket is
#: a key, not punctuation.
_BRACKET_KEY = re.compile(r"(?<![\w-])(?:[CM]-)+(?:x\s+)?[()\[\]{}]")


def _balanced(text: str) -> bool:
    """Whether every (, [ and { in ``text`` is closed (a term is; a cut-off phrase may not be).
    A bracket typed as a key (``complete-into-braces (M-{)``, ``start-kbd-macro (C-x ()``) is
    no bracket.

    >>> _balanced("complete-into-braces (M-{)"), _balanced("end-kbd-macro (C-x ))"), _balanced("(see Section")
    (True, True, False)
    """
    depth = 0
    for ch in _BRACKET_KEY.sub("K", text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth < 0:
            return False
    return depth == 0


def layout_roles(layout: str) -> dict[str, list[tuple[str, str]]]:
    """Definition-table roles of the lines of one page, read from its layout-mode text (pypdf
    ``extraction_mode="layout"``, which keeps each line's columns).

    A Texinfo table (``@table``: Bash's definitions, shell variables, ``shopt`` options, the
    tilde-prefix table) sets each term at the left and its definition in a column
    :data:`DEF_INDENT` or more deeper, either on the term's line (``token          A sequence of
    characters ...``) or, for a wide term, from the next line on (``special builtin`` /
    ``                A shell builtin command ...``). Plain text extraction loses the columns, so
    ``token A sequence of characters`` cannot be told from prose; the layout can.

    Returns ``{key: [(role, term), ...]}`` in page order per :func:`_key` of the line:
    ``term`` (a term alone on its line: the next line is indented deeper), ``inline`` (a term of
    at most :data:`TERM_MAX_WORDS` words followed by a gap wider than the line's other gaps
    (3 spaces or more, and more than their median) whose end lines up, within
    :data:`LAYOUT_SLACK` columns, with a definition column: the indentation of a line on the
    page at least :data:`DEF_INDENT` deeper than the margin), ``def`` (a line indented at least :data:`DEF_INDENT` deeper
    than the page margin) and ``body`` (any other line).
    """
    rows = [(len(ln) - len(ln.lstrip()), ln.rstrip()) for ln in layout.split("\n") if ln.strip()]
    out: dict[str, list[tuple[str, str]]] = {}
    if not rows:
        return out
    margin = min(i for i, _ in rows)
    deep = {i for i, _ in rows if i >= margin + DEF_INDENT}
    for n, (ind, ln) in enumerate(rows):
        nxt = rows[n + 1][0] if n + 1 < len(rows) else -1
        body = ln.strip()
        role, term = ("def" if ind >= margin + DEF_INDENT else "body"), ""
        words = body.split()
        if (
            nxt >= ind + DEF_INDENT
            and len(words) <= TERM_MAX_WORDS
            and len(body) <= TERM_MAX_CHARS
            and not body.endswith((".", ",", ";", ":"))
            and _balanced(body)
            and words[0] not in _BULLETS
        ):
            role, term = "term", " ".join(words)
        else:
            gaps = [(m.start(), m.end()) for m in re.finditer(r" +", ln[ind:])]
            for gi, (gs, ge) in enumerate(gaps[:TERM_MAX_WORDS]):
                head = ln[ind : ind + gs].split()
                if (
                    gs > TERM_MAX_CHARS
                    or head[-1].endswith((".", ",", ";", ":"))
                    or not _balanced(" ".join(head))
                    or head[0] in _BULLETS
                ):
                    break  # prose ("(see   Section 3.7.3": a link's wide gap) or a bullet list
                others = sorted(b - a for j, (a, b) in enumerate(gaps) if j != gi)
                wide = max(3, (others[len(others) // 2] if others else 1) + 1)
                # layout mode places columns approximately (font widths are estimated): the
                # gap may end a few columns off the definition column
                col = ind + ge
                target = min(deep, key=lambda d: abs(d - col), default=-99)
                if ge - gs >= wide and abs(col - target) <= LAYOUT_SLACK and col >= ind + DEF_INDENT - LAYOUT_SLACK:
                    role, term = "inline", " ".join(head)
                    break
        out.setdefault(_key(ln), []).append((role, term))
    return out


def _definitions(lines: list[str], roles: dict[str, list[tuple[str, str]]] | None = None) -> list[str]:
    """Turn Texinfo-style tables (a term on its own line, or a term then its definition on one
    line, the definition running until the next term) into ``term`` / ``: definition`` pairs,
    the Markdown definition-list form the answer units read as one unit each.

    With ``roles`` (:func:`layout_roles` of the page) the page's columns decide; without them,
    the shape of the plain lines does (a single lower-case word or a flag, then a capitalised
    definition)."""
    if roles is not None and any(r == "term" or r == "inline" for v in roles.values() for r, _ in v):
        return _layout_definitions(lines, roles)
    out: list[str] = []
    i = 0
    n = len(lines)
    while i < n:
        ln = lines[i].strip()
        term = defn = None
        nxt = lines[i + 1].strip() if i + 1 < n else ""
        if _is_code(ln):
            # a monospace line is a term only alone before a definition (``@table @code``);
            # followed by more code it is a line of an example
            if _is_code(nxt) or nxt.startswith("#") or (i and _is_code(lines[i - 1].strip())):
                out.append(lines[i])
                i += 1
                continue
            ln = ln[len(CODE_MARK) :]
        prev_end = (
            not out or not out[-1].strip() or out[-1].rstrip().endswith((".", ":")) or out[-1].startswith((": ", "#"))
        )
        if _TERM_LINE.match(ln) and nxt and (nxt[0].isupper() or nxt.startswith(ln + " ")) and not ln.startswith("#"):
            term, defn, i = ln, [], i + 1
        else:
            m = _TERM_INLINE.match(ln)
            if m and prev_end:
                term, defn, i = m.group(1), [m.group(2)], i + 1
        if term is None:
            out.append(lines[i])
            i += 1
            continue
        prose = bool(defn)
        while i < n:
            cur = lines[i].strip()
            after = lines[i + 1].strip() if i + 1 < n else ""
            if not cur or cur.startswith("#") or (_is_code(cur) and prose and not _inline_code(lines, i, defn[-1])):
                break  # an example inside the definition: a code block of its own
            prose = prose or not _is_code(cur)
            cur = cur.replace(CODE_MARK, "")  # a synopsis right after the term opens its definition
            if _TERM_LINE.match(cur) and after and (after[0].isupper() or after.startswith(cur + " ")) and defn:
                break
            if _TERM_INLINE.match(cur) and defn and defn[-1].rstrip().endswith((".", ":")):
                break
            defn.append(cur)
            i += 1
        _emit_entry(out, term, defn)
    return out


def _emit_entry(out: list[str], term: str, defn: list[str]) -> None:
    """Append a definition entry as its own paragraph: the term line, then ``: definition``."""
    if out and out[-1].strip():
        out.append("")  # a term starts a paragraph of its own
    out.append(term)
    out.append(": " + " ".join(defn) if defn else ": ")
    out.append("")


def _layout_definitions(lines: list[str], roles: dict[str, list[tuple[str, str]]]) -> list[str]:
    """:func:`_definitions` led by the page's layout roles: a ``term`` / ``inline`` line starts
    an entry, whose definition runs over the following lines until a blank line, a heading,
    the next term or a ``body`` line (back at the page margin: the text after the table)."""
    pending = {k: list(v) for k, v in roles.items()}

    def role(line: str) -> tuple[str, str]:
        got = pending.get(_key(line))
        return got.pop(0) if got else ("", "")

    out: list[str] = []
    i, n = 0, len(lines)
    cur = role(lines[0]) if lines else ("", "")
    while i < n:
        ln = lines[i].strip()
        kind, term = cur
        i += 1
        cur = role(lines[i]) if i < n else ("", "")
        rest = ""
        if kind == "inline":
            head = " ".join(ln.split()[: len(term.split())])
            if head != term:
                kind = ""  # the plain line does not start with the term: not the same line
            else:
                rest = ln.split(None, len(term.split()))[-1] if len(ln.split()) > len(term.split()) else ""
        if kind == "term" and _is_code(ln) and not _code_term(lines, i, cur, pending):
            kind = ""  # a line of an example whose next lines are indented deeper (``else``)
        if kind == "body" and _is_code(ln) and cur[0] == "term":
            # a monospace line at the margin right above a term is one more name of that entry
            # (Texinfo ``@itemx``: ``${parameter:offset}`` over ``${parameter:offset:length}``),
            # not the last line of the example before it
            out += ["", ln[len(CODE_MARK) :]]
            continue
        if kind not in ("term", "inline") or ln.startswith("#"):
            out.append(lines[i - 1])
            continue
        defn = [rest] if rest else []
        prose = bool(rest)
        while i < n:
            cur_ln = lines[i].strip()
            if not cur_ln or cur_ln.startswith("#") or cur[0] in ("term", "inline", "body"):
                break
            if _is_code(cur_ln):
                if prose and not _inline_code(lines, i, defn[-1]):
                    break  # an example inside the definition: a code block of its own
                cur_ln = cur_ln[len(CODE_MARK) :]  # the term's synopsis, or code inside a sentence
            else:
                prose = True
            defn.append(cur_ln)
            i += 1
            cur = role(lines[i]) if i < n else ("", "")
        _emit_entry(out, term, defn)
    return out


def _code_term(lines: list[str], i: int, nxt_role: tuple[str, str], pending: dict) -> bool:
    """Whether a monospace line with the layout role ``term`` (``lines[i]`` is the line after
    it, whose role is ``nxt_role``) is a term: its definition follows (a line in roman), or its
    synopsis does (code lines indented deeper, then the definition, still deeper). A line of an
    example whose next lines are indented (``else`` / ``    echo ...`` / ``fi``) comes back to
    the margin within its code."""
    if i >= len(lines) or not lines[i].strip():
        return False
    if not _is_code(lines[i].strip()):
        return True
    role = nxt_role[0]
    j = i
    while j < len(lines) and _is_code(lines[j].strip()):
        if role != "def":
            return False  # the code comes back to the margin: an example
        j += 1
        got = pending.get(_key(lines[j])) if j < len(lines) else None
        role = got[0][0] if got else ""
    return j < len(lines) and bool(lines[j].strip()) and role == "def"
