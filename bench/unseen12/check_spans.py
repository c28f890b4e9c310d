"""Sanity-check the twelfth unseen question set against its four corpora (no system code involved).

The checks and the rendering are those of ``bench/unseen/check_spans.py`` (see its docstring),
run on this folder's ``questions-*.jsonl`` and, by default, ``~/.cache/citewise/unseen12``.

Usage: python check_spans.py [corpus_root]            (needs bs4 and pypdf)
       python check_spans.py --grep WORD [corpus_root] (which documents contain WORD, normalised)
"""

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).parent
DEFAULT_ROOT = Path.home() / ".cache/citewise/unseen12"


def _first_set():
    spec = importlib.util.spec_from_file_location("unseen_check_spans", HERE.parent / "unseen" / "check_spans.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    sys.exit(_first_set().main(sys.argv[1:], here=HERE, default_root=DEFAULT_ROOT))
