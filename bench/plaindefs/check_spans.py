"""Check that every expected span of questions.jsonl occurs in one of its expected documents.

Usage: python bench/plaindefs/check_spans.py [QUESTIONS] [CORPUS]
(defaults: questions.jsonl beside this script, ~/.cache/citewise/plaindefs).
A document id is the file path relative to CORPUS without its .txt extension. Text is compared
after the grader's normalisation (citewise.evaluation.answer_set.normalise, restated here so the
script runs standalone): NFKC, curly quotes to straight, lowercase, drop ` * _ [ ] ( ),
collapse whitespace. Exit status 1 when a span or document is missing.
"""

import json
import re
import sys
import unicodedata
from pathlib import Path

QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
DROP = str.maketrans("", "", "`*_[]()")


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(QUOTES).lower().translate(DROP)
    return re.sub(r"\s+", " ", text).strip()


def main() -> int:
    here = Path(__file__).resolve().parent
    questions = Path(sys.argv[1]) if len(sys.argv) > 1 else here / "questions.jsonl"
    corpus = Path(sys.argv[2] if len(sys.argv) > 2 else "~/.cache/citewise/plaindefs").expanduser()
    docs = {
        p.relative_to(corpus).with_suffix("").as_posix(): normalise(p.read_text(errors="replace"))
        for p in corpus.rglob("*.txt")
    }
    bad = checked = 0
    for line in questions.read_text().splitlines():
        q = json.loads(line)
        for doc in q["expected_docs"]:
            if doc not in docs:
                print(f"{q['id']}: document '{doc}' not in {corpus}")
                bad += 1
        for span in q["expected_answer"]:
            checked += 1
            if not any(normalise(span) in docs.get(d, "") for d in q["expected_docs"]):
                print(f"{q['id']}: span not found in {q['expected_docs']}: {span!r}")
                bad += 1
    print(f"{checked} spans checked, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
