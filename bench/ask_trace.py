"""One ``citewise ask`` traced: the citewise modules whose code runs, and the store searches made.

Ingests the bundled sample corpus with the hashing embedder into a temporary index, asks one
question through the CLI in process (a first ask warms imports and caches), then asks it again
under ``sys.setprofile`` and prints the number of citewise modules entered and each store search
method's calls by caller (retrieval: ``retrievers.candidates``; the evidence check's document
frequencies: ``evidence.df``).

Usage (any checkout: put its ``src`` first on the path)::

    PYTHONPATH=/path/to/checkout/src python bench/ask_trace.py
"""

from __future__ import annotations

import collections
import sys
import tempfile
from pathlib import Path

from typer.testing import CliRunner

from citewise.cli import app
from citewise.index import Index

try:
    from citewise.core import sample_dir
except ImportError:  # older checkouts
    from citewise.demo import sample_dir

QUESTION = "What is the refund window for annual plans?"


def main() -> None:
    tmp = Path(tempfile.mkdtemp())
    Index.open(tmp / "idx", embedder="hashing").ingest(sample_dir() / "corpus")
    args = ["ask", QUESTION, "--index", str(tmp / "idx")]
    runner = CliRunner()
    runner.invoke(app, args)
    modules: set[str] = set()
    calls: collections.Counter[str] = collections.Counter()

    def profile(frame, event, arg):
        if event != "call":
            return
        name = frame.f_globals.get("__name__", "")
        if not name.startswith("citewise"):
            return
        modules.add(name)
        if frame.f_code.co_name in ("lexical_search", "vector_search") and name.startswith("citewise.store"):
            caller = frame.f_back
            where = f"{caller.f_globals.get('__name__', '')}.{caller.f_code.co_name}"
            calls[f"{frame.f_code.co_name} <- {where}"] += 1

    sys.setprofile(profile)
    result = runner.invoke(app, args)
    sys.setprofile(None)
    print(f"question: {QUESTION}")
    print(f"citewise modules entered: {len(modules)}")
    for key, n in sorted(calls.items()):
        print(f"  {key}: {n}")
    print(f"exit status {result.exit_code}; answer: {result.output.strip().splitlines()[0][:100]}")


if __name__ == "__main__":
    main()
