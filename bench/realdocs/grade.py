"""Grade any importable citewise build on an answer set, with this checkout's grader.

The grading logic is ``src/citewise/evaluation/answer_set.py`` of *this* checkout, loaded by file
path; the answers come from whichever ``citewise`` the interpreter imports (an older build
installed in another venv, or ``PYTHONPATH=/path/to/old/src``). So a build that has no
``citewise eval answers`` command is measured with exactly the same rules::

    PYTHONPATH=/old/checkout/src python bench/realdocs/grade.py SET.jsonl --index DIR --json
    python bench/realdocs/grade.py SET.jsonl --index DIR --out rows.jsonl --as finance

Output: a plain-text summary table, or with ``--json`` ``{"citewise": where the measured
package lives, "summary": ..., "rows": [...]}`` (the same shape as ``citewise eval answers
--json``). Exit status 2 with one line on a bad set or index.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

GRADER = Path(__file__).resolve().parents[2] / "src" / "citewise" / "evaluation" / "answer_set.py"


def load_grader(path: Path = GRADER):
    """Import the grading module from ``path`` (not from the installed citewise)."""
    spec = importlib.util.spec_from_file_location("citewise_answer_set_grader", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building classes
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, grade, print; returns the exit status."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("set", type=Path, help="answer set JSONL")
    p.add_argument("--index", type=Path, required=True, help="index folder built by the measured build")
    p.add_argument(
        "--as", dest="groups", action="append", default=[], help="ask as a principal in this group (repeatable)"
    )
    p.add_argument("--boilerplate-pattern", action="append", default=[], help="extra boilerplate regex (repeatable)")
    p.add_argument("--out", type=Path, help="also write per-question JSONL here")
    p.add_argument("--json", action="store_true", help="print JSON")
    args = p.parse_args(argv)

    grader = load_grader()
    import citewise
    from citewise.core import CitewiseError, Principal
    from citewise.index import Index

    try:
        if not (args.index / "index.json").exists():
            raise CitewiseError(f"{args.index}: no citewise index here")
        idx = Index.open(args.index)
        store = getattr(idx, "store", None)
        doc_ids = store.documents().keys() if hasattr(store, "documents") else None
        questions = grader.read_answer_set(args.set, doc_ids)
        patterns = grader.compile_patterns(args.boilerplate_pattern)
        kw = {"principal": Principal(name="grade", groups=tuple(args.groups))} if args.groups else {}
        report = grader.grade_set(lambda q: idx.ask(q, **kw), questions, patterns)
    except CitewiseError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.out:
        report.write_jsonl(args.out)
    where = str(Path(citewise.__file__).resolve().parent) if getattr(citewise, "__file__", None) else "?"
    if args.json:
        print(
            json.dumps(
                {
                    "set": str(args.set),
                    "index": str(args.index),
                    "citewise": where,
                    "validated_doc_ids": doc_ids is not None,
                    **report.to_dict(),
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        print(f"citewise from {where}; {len(questions)} questions in {args.set}")
        print("\n".join(report.table_lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
