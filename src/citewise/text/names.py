"""Names a question is about: flags, code identifiers and quoted terms.

Used by identifier pinning (a query naming ``fs.rm`` or ``--emit`` gets the section headed with
it first; :mod:`citewise.retrieval.retrievers`) and by the evidence check that abstains when a
question names something the corpus never mentions (:mod:`citewise.answer.evidence`).
"""

from __future__ import annotations

import re

#: Things a question can name besides capitalised words: ``--flags``, dotted or called code
#: names (``fs.frobnicate()``, ``path.superJoin``), ``snake_case``, ``camelCase``/``CamelCase``
#: and anything in backticks or quotes.
_FLAG = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*[A-Za-z0-9]")
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)+(?:\(\))?|\b[A-Za-z_$][\w$]*\(\)")
_SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")
_CAMEL = re.compile(r"\b[a-z]+[A-Z][A-Za-z0-9]*\b|\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b")
_QUOTED = re.compile(r"`([^`]+)`|\"([^\"]+)\"|“([^”]+)”|‘([^’]+)’|(?<!\w)'([^']+)'(?!\w)")



def code_names(question: str) -> list[str]:
    """Names a question is about, other than capitalised words: flags, code identifiers,
    ``snake_case`` / ``camelCase`` names and quoted or back-ticked terms, in order, unique.

    >>> code_names('What does the --turbo-mode flag of fs.frobnicate() do with "hyper mode"?')
    ['--turbo-mode', 'fs.frobnicate()', 'hyper mode']
    """
    found: dict[str, int] = {}
    for rx in (_FLAG, _DOTTED, _SNAKE, _CAMEL):
        for m in rx.finditer(question):
            found.setdefault(m.group(0), m.start())
    for m in _QUOTED.finditer(question):
        text = next(g for g in m.groups() if g is not None).strip()
        if text:
            found.setdefault(text, m.start())
    # a name inside a longer one (``frobnicate`` in ``fs.frobnicate()``) is the same name
    names = sorted(found, key=lambda n: (found[n], -len(n)))
    return [n for n in names if not any(n != o and n in o for o in names)]


def heading_pattern(name: str) -> re.Pattern:
    """A regex that finds ``name`` in a heading as a whole name: ``fs.rm`` matches
    ``fs.rm(path[, options])`` but not ``fs.rmdir`` or ``fsPromises.rm``; ``--emit`` matches
    ``--emit: specifies ...``. Case-insensitive; a trailing ``()`` in ``name`` is optional.

    >>> bool(heading_pattern("fs.rm").search("`fs.rm(path[, options], callback)`"))
    True
    >>> bool(heading_pattern("fs.rm()").search("fs.rmdir(path)"))
    False
    """
    core = name.strip()
    if core.endswith("()"):
        core = core[:-2]
    return re.compile(rf"(?<![\w.$-]){re.escape(core)}(?![\w$-]|\.[\w$])", re.I)
