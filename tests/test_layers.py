"""The package's import structure: the layer order of pyproject.toml's import-linter contract
holds, every top-level module sits in a layer, and no import cycle exists (function-local
imports count: grimp reads every import statement of a module; those under ``if TYPE_CHECKING:``,
which never run, do not)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]


def _graph():
    # imports under ``if TYPE_CHECKING:`` never run (annotations only), as in the contract
    return grimp.build_graph("citewise", exclude_type_checking_imports=True)


def strongly_connected(graph) -> list[list[str]]:
    """Tarjan's strongly connected components of the module graph, those with more than one
    module (an import cycle), each sorted, sorted by first module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        work = [(v, iter(sorted(graph.find_modules_directly_imported_by(v))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.find_modules_directly_imported_by(w)))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))

    for m in sorted(graph.modules):
        if m not in index:
            visit(m)
    return sorted(out)


def test_the_cycle_finder_finds_a_planted_cycle():
    """The finder on a hand-made graph: a -> b -> c -> a is one cycle; d -> a is not in it."""
    g = grimp.ImportGraph()
    for m in "abcd":
        g.add_module(m)
    g.add_import(importer="a", imported="b")
    g.add_import(importer="b", imported="c")
    g.add_import(importer="c", imported="a")
    g.add_import(importer="d", imported="a")
    assert strongly_connected(g) == [["a", "b", "c"]]


def test_no_import_cycles():
    """Not one cycle among citewise's modules (the root package's own re-exports excluded)."""
    g = _graph()
    g.remove_module("citewise")
    assert strongly_connected(g) == []


def test_the_layer_contract_holds():
    """pyproject.toml's import-linter contract: each module imports only from layers below."""
    import logging

    # lint_imports runs logging's dictConfig, which disables every logger that exists (later
    # tests of this process then saw no 'citewise.rerank' warning): keep them as they were
    loggers = [lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger)]
    disabled = [lg.disabled for lg in loggers]
    try:
        assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0
    finally:
        for lg, was in zip(loggers, disabled):
            lg.disabled = was


def test_every_top_level_module_has_a_layer():
    """A new top-level module or package must be placed in the contract (an unlisted module is
    not checked by it)."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    listed = {
        m.strip() for c in cfg["contracts"] if c["type"] == "layers" for layer in c["layers"] for m in layer.split("|")
    }
    pkg = ROOT / "src" / "citewise"
    tops = {f"citewise.{p.stem}" for p in pkg.glob("*.py") if p.stem != "__init__"}
    tops |= {f"citewise.{p.name}" for p in pkg.iterdir() if (p / "__init__.py").is_file()}
    assert sorted(tops - listed) == []


def test_no_module_is_over_600_lines():
    """Modules stay small enough to read whole: a concept that grows past 600 lines becomes a
    package of smaller modules."""
    pkg = ROOT / "src" / "citewise"
    sizes = {str(p.relative_to(pkg)): len(p.read_text(encoding="utf-8").splitlines()) for p in pkg.rglob("*.py")}
    assert sorted(p for p, n in sizes.items() if n > 600) == []
