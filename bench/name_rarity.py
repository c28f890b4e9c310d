"""Choose the rarity cut-offs of ``citewise.text.rarity`` on the training question sets.

For every question of the real-docs training sets (dev, heldout, heldout3 … heldout19; heldout2
holds routing questions only, heldout20-22 are reported sets and are not read) and of the sample
golden / out-of-scope sets, the plain words (not name-shaped) that its corpus never uses are
listed with their Zipf frequency (wordfreq) and whether they are written capitalised inside the
sentence. For each pair of cut-offs the table says how many in-scope questions the unknown-name
rule would wrongly abstain on, and how many out-of-scope / false-premise questions it catches.

    python bench/name_rarity.py REALDOCS_INDEX SAMPLE_INDEX
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from citewise.answer.question_words import QUESTION_WORDS
from citewise.demo import sample_dir
from citewise.index import Index
from citewise.retrieval.retrievers import effective_filters
from citewise.text.analyzer import analyze
from citewise.text.rarity import PLAIN_WORD, name_shaped, zipf

ROOT = Path(__file__).resolve().parent
TRAINING = ["dev", "heldout"] + [f"heldout{i}" for i in range(3, 20)]


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def absent_words(scorer, question: str) -> list[tuple[str, float, bool]]:
    """``(word, zipf, capitalised inside the sentence)`` of the plain words the corpus lacks."""
    f = effective_filters(None, None)
    out, start = [], True
    for raw in question.split():
        tok = raw.strip(".,;:!?()[]{}\"'`“”‘’<>*")
        ends = raw.rstrip("\"')”’*").endswith((".", "?", "!", ":", ";"))
        if tok and PLAIN_WORD.fullmatch(tok) and not name_shaped(tok):
            terms = [t for t in analyze(tok) if t not in QUESTION_WORDS]
            if terms and all(scorer.df(t, f) == 0 for t in terms):
                out.append((tok, zipf(tok), tok[0].isupper() and not start and tok != "I"))
        start = ends or (start and not tok)
    return out


def main(realdocs_index: str, sample_index: str) -> None:
    qs = []
    scorer = Index.open(realdocs_index).answerer().scorer
    for name in TRAINING:
        for r in rows(ROOT / "realdocs" / f"questions-{name}.jsonl"):
            qs.append((r["kind"], r["text"], absent_words(scorer, r["text"])))
    scorer = Index.open(sample_index).answerer().scorer
    sample = sample_dir()
    qs += [("in_scope", r["text"], absent_words(scorer, r["text"])) for r in rows(sample / "golden.jsonl")]
    qs += [("out_of_scope", r["text"], absent_words(scorer, r["text"])) for r in rows(sample / "out_of_scope.jsonl")]
    n_in = sum(k == "in_scope" for k, _, _ in qs)
    print(f"{len(qs)} questions: {n_in} in scope, {len(qs) - n_in} out of scope or false premise\n")
    print("| lower-case cut | capitalised cut | in-scope abstained (wrong) | others caught |")
    print("|---:|---:|---:|---:|")
    for low in (2.0, 2.5, 3.0, 3.5):
        for cap in (3.0, 3.5, 4.0, 4.5):
            hit = [(k, q) for k, q, ws in qs if any(z < (cap if c else low) for _, z, c in ws)]
            bad = sum(k == "in_scope" for k, _ in hit)
            print(f"| {low} | {cap} | {bad} | {len(hit) - bad} |")
    print("\nin-scope questions with an absent plain word under 4.0:")
    for k, q, ws in qs:
        if k == "in_scope" and any(z < 4.0 for _, z, _ in ws):
            print(f"  {q}  {[(w, round(z, 2), c) for w, z, c in ws]}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
