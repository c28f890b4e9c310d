"""The examples in docstrings are tests too: every ``>>>`` example of the package runs here.

Found when they were run by hand (they never ran in the suite): ``split_url("postgresql:///db")``
returned ``postgresql:/db``, which libpq does not read (a local-socket URL broke ``--store``).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import citewise


def _modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(citewise.__path__, "citewise."):
        spec = importlib.util.find_spec(info.name)
        if (
            spec is not None
            and spec.origin
            and spec.origin.endswith(".py")
            and ">>> " in open(spec.origin, encoding="utf-8").read()
        ):
            names.append(info.name)
    return sorted(names)


MODULES = _modules()


def test_the_modules_with_examples_are_found():
    assert {
        "citewise.answer.question",
        "citewise.answer.spelling",
        "citewise.text.names",
        "citewise.store.postgres.schema",
    } <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed (python -m doctest -v)"
