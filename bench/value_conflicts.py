"""How often the plain ask pipeline answers ``conflict`` on the project's own answer sets.

The ``conflict`` outcome of :mod:`citewise.answer.disagreement` (sources stating different values
of the asked number or date) must not fire where the sources do not disagree. This script asks
every question of the project's answer sets through :meth:`citewise.api.Citewise.ask` (default
settings, MiniLM embedder, extractive generator, a principal in every group of the index) and counts the
``conflict`` outcomes:

* ``sample``: the packaged sample corpus with ``sample/golden.jsonl``,
  ``sample/heldout/golden.jsonl`` and ``sample/out_of_scope.jsonl`` (the sets ``citewise eval``
  and the tests use);
* ``payment``: the packaged payment corpus with ``sample/payment/questions.jsonl`` (its
  ``conflict`` questions are the evidence-gap controller's, counted apart);
* ``cases``: ``bench/answer_cases.jsonl`` over ``bench/answer_fixtures.json`` and the sample;
* ``realdocs`` (with ``--realdocs DIR``, the folder ``bench/realdocs/fetch.py`` fills): every
  ``bench/realdocs/questions-*.jsonl`` over the nodejs, rustc and bash corpora.

A question whose expected answer type is ``number`` or ``date`` is one the mechanism reads
(``compared``); every ``conflict`` it gives on these sets is a false conflict unless the set
expects it. Usage::

    .venv/bin/python bench/value_conflicts.py [--realdocs ~/.cache/citewise/realdocs] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _principal(cw):
    from citewise.core import Principal

    groups = sorted({g for e in cw.index.store.documents().values() for g in e.groups})
    return Principal("bench", tuple(groups))


def measure(name: str, cw, questions: list[dict]) -> dict:
    """Ask every question; ``{"set", "questions", "compared", "conflict", "expected_conflict",
    "rows"}`` (rows: the conflict answers)."""
    from citewise.answer.question import analyze_question

    who = _principal(cw)
    rows, compared, expected = [], 0, 0
    for q in questions:
        text = q.get("text") or q.get("question")
        compared += analyze_question(text).expected in ("number", "date")
        want = q.get("expected") == "conflict"
        expected += want
        ans = cw.ask(text, principal=who)
        if ans.outcome == "conflict":
            rows.append({"id": q.get("id"), "question": text, "expected": want, "answer": ans.text})
    return {
        "set": name,
        "questions": len(questions),
        "compared": compared,
        "conflict": len(rows),
        "false_conflict": sum(not r["expected"] for r in rows),
        "expected_conflict": expected,
        "rows": rows,
    }


def _open(folder: Path, tmp: Path, name: str):
    from citewise.api import Citewise

    cw = Citewise.open(tmp / name, embedder="minilm")
    cw.index.record_usage = False
    report = cw.index.ingest(folder)
    if report.errors:
        raise SystemExit(f"{folder}: ingest errors {report.errors}")
    return cw


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--realdocs", type=Path, help="the realdocs corpora folder (nodejs, rustc, bash)")
    ap.add_argument("--json", metavar="FILE", help="also write the results here")
    args = ap.parse_args()

    import citewise

    sample = Path(citewise.__file__).resolve().parent / "sample"
    results = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cw-conflicts-") as tmp_:
        tmp = Path(tmp_)
        cw = _open(sample / "corpus", tmp, "sample")
        qs = _read(sample / "golden.jsonl") + _read(sample / "heldout" / "golden.jsonl")
        results.append(measure("sample golden + heldout", cw, qs))
        results.append(measure("sample out_of_scope", cw, _read(sample / "out_of_scope.jsonl")))
        cw = _open(sample / "payment" / "corpus", tmp, "payment")
        results.append(measure("payment", cw, _read(sample / "payment" / "questions.jsonl")))
        fixtures = json.loads((HERE / "answer_fixtures.json").read_text(encoding="utf-8"))
        cases = _read(HERE / "answer_cases.jsonl")
        by_fixture: dict[str, list[dict]] = {}
        for c in cases:
            by_fixture.setdefault(c["fixture"], []).append(c)
        from answer_cases import _write  # the fixture files exactly as the tests write them

        got = []
        for fx, cs in sorted(by_fixture.items()):
            if fx == "sample":
                folder = sample / "corpus"
            else:
                folder = tmp / f"fx-{fx}"
                for doc_id, page in fixtures[fx].items():
                    _write(folder, doc_id, page["title"], page["body"])
            got.append(measure(fx, _open(folder, tmp, f"case-{fx}"), cs))
        results.append(
            {
                "set": "bench/answer_cases",
                **{k: sum(r[k] for r in got) for k in ("questions", "compared", "conflict", "false_conflict")},
                "expected_conflict": 0,
                "rows": [x for r in got for x in r["rows"]],
            }
        )
        if args.realdocs:
            qs = [q for p in sorted((HERE / "realdocs").glob("questions-*.jsonl")) for q in _read(p)]
            for corpus in ("nodejs", "rustc", "bash"):
                cw = _open(args.realdocs / corpus, tmp, corpus)
                mine = [q for q in qs if q.get("corpus") in (corpus, "any", None)]
                results.append(measure(f"realdocs {corpus}", cw, mine))
    print("| set | questions | number/date questions | conflict | false conflict |")
    print("|---|---|---|---|---|")
    for r in results:
        print(f"| {r['set']} | {r['questions']} | {r['compared']} | {r['conflict']} | {r['false_conflict']} |")
    for r in results:
        for row in r["rows"]:
            print(f"  {r['set']} {row['id']}: {row['question']!r} -> {row['answer'][:300]!r}")
    print(f"({time.perf_counter() - t0:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main())
