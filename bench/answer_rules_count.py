"""Count the regular expressions and literal word lists in the answer path.

    python bench/answer_rules_count.py [ROOT] [--json]

ROOT is a checkout (default: this one). The answer path is ``src/citewise/answer/**.py`` and
``src/citewise/text/names.py``. Counted with :mod:`ast`, so comments and docstrings never count:

* **regex calls**: calls of ``re.compile / search / match / fullmatch / finditer / findall / sub /
  subn / split`` (one compiled pattern counts once, where it is compiled);
* **regex literal words**: words of two letters or more inside the string literals given to those
  calls as the pattern (after dropping escapes such as ``\\b``, ``\\s``, ``\\w`` and named groups),
  the literal vocabulary a pattern holds (``always|never|guaranteed`` is 3 words);
* **word lists**: ``set`` / ``frozenset`` / ``list`` / ``tuple`` literals, or ``frozenset(...)``
  / ``set(...)`` calls on a literal, on ``"...".split()`` or on ``f("...")`` (``analyze("a b")``), holding two or more string elements
  that are plain words; **listed words**: their elements.

Data files (``src/citewise/answer/data/*``) are reported apart: words kept as data, not code.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

RE_FUNCS = {"compile", "search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split"}
_WORDISH = re.compile(r"^[A-Za-z][A-Za-z'’-]*$")


def _pattern_words(pattern: str) -> list[str]:
    """Literal words of a regex source: escapes, classes' shorthand and group names dropped."""
    p = re.sub(r"\(\?P<\w+>|\(\?P=\w+\)|\(\?[:=!<>aiLmsux-]*", " ", pattern)
    p = re.sub(r"\\[A-Za-z]", " ", p)
    p = re.sub(r"\{[^}]*\}", " ", p)
    return re.findall(r"[A-Za-z]{2,}", p)


def _literal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _literal(node.left), _literal(node.right)
        return None if a is None and b is None else (a or "") + (b or "")
    return None


def _word_elements(node: ast.AST) -> list[str] | None:
    """The plain-word string elements of a collection literal (None: not a word list)."""
    elts = None
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        elts = node.elts
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("set", "frozenset")
        and node.args
    ):
        arg = node.args[0]
        if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "split":
            text = _literal(arg.func.value)
            return text.split() if text is not None and len(text.split()) >= 2 else None
        if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.args:  # frozenset(analyze("a b c"))
            text = _literal(arg.args[0])
            return text.split() if text is not None and len(text.split()) >= 2 else None
        return _word_elements(arg)
    if elts is None:
        return None
    words = [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if (
        len(words) < 2
        or len(words) != len(elts)
        or not all(_WORDISH.match(w.split()[0] if w.split() else "") for w in words)
    ):
        return None
    return words


def count_file(path: Path) -> dict:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = words = lists = listed = 0
    inner: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in RE_FUNCS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
        ):
            calls += 1
            if node.args:
                pat = _literal(node.args[0])
                if pat is not None:
                    words += len(_pattern_words(pat))
        found = _word_elements(node)
        if found is not None and id(node) not in inner:
            lists += 1
            listed += len(found)
            for child in ast.walk(node):
                inner.add(id(child))
    return {
        "regex_calls": calls,
        "regex_words": words,
        "word_lists": lists,
        "listed_words": listed,
        "lines": len(path.read_text(encoding="utf-8").splitlines()),
    }


def count(root: Path) -> dict:
    files = sorted((root / "src/citewise/answer").rglob("*.py")) + [root / "src/citewise/text/names.py"]
    per = {str(p.relative_to(root)): count_file(p) for p in files if p.is_file()}
    total = {
        k: sum(v[k] for v in per.values())
        for k in ("regex_calls", "regex_words", "word_lists", "listed_words", "lines")
    }
    data_words = 0
    data_dir = root / "src/citewise/answer/data"
    for p in sorted(data_dir.glob("*")) if data_dir.is_dir() else []:
        if p.suffix in (".yaml", ".yml", ".txt"):
            data_words += len(re.findall(r"[A-Za-z]{2,}", p.read_text(encoding="utf-8")))
    return {"root": str(root), "files": per, "total": total, "data_file_words": data_words}


def main(argv: list[str]) -> int:
    args = [a for a in argv if a != "--json"]
    root = Path(args[0]) if args else Path(__file__).resolve().parents[1]
    result = count(root)
    if "--json" in argv:
        print(json.dumps(result, indent=1))
        return 0
    print(f"{'file':52} {'regex':>6} {'words':>6} {'lists':>6} {'listed':>6} {'lines':>6}")
    for name, c in result["files"].items():
        print(
            f"{name:52} {c['regex_calls']:6} {c['regex_words']:6} {c['word_lists']:6} {c['listed_words']:6} {c['lines']:6}"
        )
    t = result["total"]
    print(
        f"{'total':52} {t['regex_calls']:6} {t['regex_words']:6} {t['word_lists']:6} {t['listed_words']:6} {t['lines']:6}"
    )
    print(f"words kept in data files (src/citewise/answer/data): {result['data_file_words']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
