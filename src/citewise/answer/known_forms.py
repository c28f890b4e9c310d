"""Names a corpus knows under another written form than the question's.

The unknown-name rule (:meth:`citewise.answer.evidence.Evidence.unknown_name`) abstains when the
question names something no visible chunk holds. Three conventions of technical writing name a
thing in a form no chunk spells whole, while the corpus plainly documents it:

* **a configuration key in section notation** — ``ui.editor``, ``merge.on-failure``: INI-style
  manuals (Mercurial's ``hgrc``, Python's ``setup.cfg``, systemd units) document the key
  ``editor`` as an entry of a section headed ``ui``. Known when a chunk under a heading naming the
  first part names the last part as a whole word (:func:`section_key_known`).
* **a one-letter flag with its value attached** — ``-Tcanon``, ``-Gsize``, ``-O2``, ``-Xmx``: the
  manual writes the flag once (``-Tformat``, ``-Gname=value``) and lists the values apart. Known
  when the value occurs in the corpus and a chunk holding it also writes the flag
  (:func:`attached_flag_known`).
* **an acronym's plural** — ``PNGs``, ``APIs``: known when the acronym is (:func:`singular`).

A made-up name stays unknown: its own part (``ui.frobnicate``, ``-Tfrobnicate``) is in no chunk.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

from citewise.text.analyzer import analyze
from citewise.text.names import heading_pattern

#: A key in section notation: two or three dot-separated lower-case parts (letters, digits,
#: hyphens), as configuration manuals write them.
SECTION_KEY = re.compile(r"[a-z][a-z0-9-]*(?:\.[a-z][a-z0-9-]*){1,2}")
#: A one-letter flag with its value attached: ``-Tcanon``, ``-Gsize``.
ATTACHED_FLAG = re.compile(r"-([A-Za-z])([a-z][a-z0-9]+)")
_HEADING_LINE = re.compile(r"^#{1,6} +(.*)$", re.M)
#: An upper-case constant (``O_DIRECT``, ``SIGPWR``).
CONSTANT = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z]{3,}[0-9]*")
#: An acronym's plural: two or more capitals (digits allowed after the first), then ``s``.
ACRONYM_PLURAL = re.compile(r"([A-Z][A-Z0-9]+)s")


def section_key_known(name: str, df: Callable[[str], int], chunks_with: Callable[[list[str]], Iterable]) -> bool:
    """Whether ``name`` (``section.key``) is documented as the entry ``key`` under a heading that
    names ``section``. ``df(term)``: chunks holding an analyzed term; ``chunks_with(terms)``: the
    chunks a lexical search for ``terms`` returns (each with ``text``, ``title``,
    ``heading_path``).

    >>> from types import SimpleNamespace as C
    >>> hg = [C(text="``editor``\\n  The editor to use during a commit.", title="config", heading_path=("Syntax", "``ui``"))]
    >>> section_key_known("ui.editor", lambda t: 1, lambda ts: hg)
    True
    >>> section_key_known("ui.frobnicate", lambda t: int(t != "frobnic"), lambda ts: hg)
    False
    >>> two = [C(text="## ``merge``\\n\\n``on-failure``\\n  What to do.\\n\\n## ``web``\\n\\n``style``\\n  A style.", title="config", heading_path=("Sections",))]
    >>> section_key_known("merge.on-failure", lambda t: 1, lambda ts: two), section_key_known("merge.style", lambda t: 1, lambda ts: two)
    (True, False)
    """
    if not SECTION_KEY.fullmatch(name):
        return False
    parts = name.split(".")
    for part in parts:
        terms = analyze(part)
        if not terms or any(df(t) == 0 for t in terms[-1:]):
            return False
    section, key = heading_pattern(parts[0]), heading_pattern(parts[-1])
    for c in chunks_with(analyze(parts[-1])):
        for m in key.finditer(c.text):
            # the heading the key stands under: the last one before it in the chunk (small
            # sections share a chunk), else the chunk's own
            inside = _HEADING_LINE.findall(c.text, 0, m.start())
            if section.search(inside[-1]) if inside else any(section.search(h) for h in (c.title, *c.heading_path)):
                return True
    return False


def attached_flag_known(name: str, df: Callable[[str], int], chunks_with: Callable[[list[str]], Iterable]) -> bool:
    """Whether ``name`` (``-Tcanon``) is a one-letter flag the corpus writes (alone or with a
    placeholder attached: ``-T``, ``-Tformat``, ``-T<format>``) and a value it names (``canon``)
    in a chunk that also writes the flag.

    >>> from types import SimpleNamespace as C
    >>> dot = [C(text="-Tformat sets the output format; canon, dot and xdot are formats.", title="", heading_path=())]
    >>> attached_flag_known("-Tcanon", lambda t: 1, lambda ts: dot)
    True
    >>> attached_flag_known("-Tfrob", lambda t: int(t != "frob"), lambda ts: dot)
    False
    """
    m = ATTACHED_FLAG.fullmatch(name)
    if not m:
        return False
    terms = analyze(m.group(2))
    if not terms or df(terms[0]) == 0:
        return False
    flag = re.compile(rf"(?<![\w-])-{re.escape(m.group(1))}(?![\d-])")
    value = heading_pattern(m.group(2))
    return any(flag.search(c.text) and value.search(c.text) for c in chunks_with(terms))


def singular(word: str) -> str | None:
    """The acronym of an acronym's plural (``PNGs`` -> ``PNG``), else None.

    >>> singular("PNGs"), singular("APIs"), singular("Stripes")
    ('PNG', 'API', None)
    """
    m = ACRONYM_PLURAL.fullmatch(word)
    return m.group(1) if m else None


def evidence_terms(name: str) -> list[str]:
    """The analyzed term by which an evidence chunk names ``name`` when it does not spell it whole:
    the key of a section key (``ui.editor``: ``editor``), the value of an attached flag
    (``-Tcanon``: ``canon``), the constant of a dotted name ending in one
    (``fs.constants.O_DIRECT``: ``o_direct``, the row of its table); [] for other names. A
    lower-case dotted name is read as a section key (``fs.rm``: ``rm``).

    >>> evidence_terms("ui.editor"), evidence_terms("-Tcanon"), evidence_terms("fs.readFile")
    (['editor'], ['canon'], [])
    """
    last = name.rstrip("()").split(".")[-1]
    if SECTION_KEY.fullmatch(name) or ("." in name and CONSTANT.fullmatch(last)):
        return analyze(last)[:1]
    m = ATTACHED_FLAG.fullmatch(name)
    return analyze(m.group(2))[:1] if m else []


#: A setting assigned in the question: ``shape=cloud``, ``overlap=scale`` (not a flag's value:
#: ``--emit=x`` is :func:`citewise.text.names.code_names`'; not a query string ``?q=dogs``, an
#: equation ``y=mx+b`` or a path ``HOME=D:\x``; a key of two characters or more and a value of
#: three: a two-letter value is mostly a code the corpus describes as a class, ``lang=fr``). Key
#: and value are literal names.
ASSIGNMENT = re.compile(r"(?<![\w.$?&/-])([A-Za-z][\w-]+)=([A-Za-z][\w-]{2,})(?![\w=.(:\\+*/^-])")
#: A plain word called as a function or predicate: ``generated()`` (dotted and ``snake_case``
#: names are code names already, checked whole).
CALL = re.compile(r"(?<![\w.$:-])([A-Za-z][a-z]+)\(\)")
#: Values any setting may take; their absence says nothing about the setting.
PLAIN_VALUES = frozenset("true false yes no on off none auto default".split())


def literal_names(question: str) -> list[tuple[str, bool]]:
    """``(name, called)`` for each literal name of ``question`` a corpus must write as it is: the
    key and value of a setting assigned (``shape=cloud``; a plain value such as ``true`` is left
    out: :data:`PLAIN_VALUES`) and a plain word called (``generated()``; ``called`` True).

    >>> literal_names("Is shape=cloud supported, and collapsible=true? What does generated() match?")
    [('shape', False), ('cloud', False), ('collapsible', False), ('generated', True)]
    >>> literal_names("Does --emit=asm or fs.rm() or -C lto=thin work?")
    [('lto', False), ('thin', False)]
    >>> literal_names("What does /search?q=dogs return, and y=mx+b, a=b, lang=fr or HOME=D:/x?")
    []
    """
    out: list[tuple[str, bool]] = []
    for m in ASSIGNMENT.finditer(question):
        out += [(m.group(1), False)] + ([(m.group(2), False)] if m.group(2).lower() not in PLAIN_VALUES else [])
    out += [(m.group(1), True) for m in CALL.finditer(question)]
    return list(dict.fromkeys(out))


def literal_known(
    name: str, called: bool, df: Callable[[str], int], chunks_with: Callable[[list[str]], Iterable], cap: int
) -> bool:
    """Whether a chunk writes ``name`` as a whole word, case aside, in its text, title or
    headings (``called``: in its text followed by ``(`` or as code, or in a heading): a literal
    name is not known by its stem (``collapsible`` is not ``collapse``); '-' and '_' stand for
    each other and a plural for its word. ``chunks_with`` returns at most ``cap`` chunks, so a
    name whose stem is in ``cap`` chunks or more counts as known.

    >>> from types import SimpleNamespace as C
    >>> fs = [C(text="``added()``\\n  File that is added. Files that collapse are generated.", title="", heading_path=())]
    >>> [literal_known(n, c, lambda t: 1, lambda ts: fs, 100) for n, c in (("added", True), ("generated", True), ("collapsible", False), ("collapse", False))]
    [True, False, False, True]
    >>> up = [C(text="Call it with a string.", title="", heading_path=("Functions", "upper"))]
    >>> literal_known("upper", True, lambda t: 1, lambda ts: up, 100), literal_known("strings", False, lambda t: 1, lambda ts: up, 100)
    (True, True)
    """
    forms = [t[0] for t in map(analyze, dict.fromkeys((name, name.replace("-", "_"), name.replace("_", "-")))) if t]
    if not forms or max(map(df, forms)) >= cap:
        return True
    terms = [max(forms, key=df)]
    if df(terms[0]) == 0:
        return False
    # '-' and '_' stand for each other (``retry-policy`` / ``retry_policy``), a plural for its word
    stems = {name} | ({name[:-1]} if name.endswith("s") and len(name) > 3 else set())
    stems |= {name[:-2]} if name.endswith("es") and len(name) > 4 else set()
    body = (
        "(?:" + "|".join(re.sub(r"\\?[-_]", "[-_]", re.escape(x)) for x in sorted(stems, key=len, reverse=True)) + ")"
    )
    word = re.compile(rf"(?<![\w-]){body}(?:e?s)?(?![\w-])", re.I)
    call = re.compile(rf"(?<![\w-]){body}\s*\(|`{body}`|^#+ .*(?<![\w-]){body}(?![\w-])", re.I | re.M)
    for c in chunks_with(terms[:1]):
        heads = "\n".join((c.title, *c.heading_path))
        if (call if called else word).search(c.text) or word.search(heads):
            return True  # a function is also named by its own heading or as code: `upper`
    return False
