"""Reading and writing qrels (BEIR TSV and TREC) and TREC run files.

* BEIR qrels: TSV with a header ``query-id  corpus-id  score``.
* TREC qrels: ``qid 0 docid grade`` (whitespace-separated, no header).
* TREC run: ``qid Q0 docid rank score tag``.

Errors name the file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from citewise.core import InputError
from citewise.text.lines import numbered_lines


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Qrels from a BEIR TSV or TREC qrels file: ``{qid: {doc_id: grade}}``.

    Raises:
        InputError: unreadable file, wrong column count, or a non-integer grade (with the line).
    """
    path = Path(path)
    qrels: dict[str, dict[str, int]] = {}
    for n, line in numbered_lines(path, "qrels"):
        parts = line.split("\t") if "\t" in line else line.split()
        if n == 1 and parts[0].strip().lower() in ("query-id", "query_id", "qid"):
            continue
        if len(parts) == 3:
            qid, doc, grade = parts
        elif len(parts) == 4:
            qid, _, doc, grade = parts
        else:
            raise InputError(str(path), f"expected 3 (BEIR) or 4 (TREC) columns, got {len(parts)}", n)
        try:
            g = int(float(grade))
        except ValueError:
            raise InputError(str(path), f"grade must be an integer, got {grade.strip()!r}", n) from None
        qrels.setdefault(qid.strip(), {})[doc.strip()] = g
    return qrels


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """A TREC run file as ``{qid: {doc_id: score}}`` (a repeated doc keeps its first score).

    Raises:
        InputError: unreadable file, wrong column count or a non-numeric score (with the line).
    """
    path = Path(path)
    run: dict[str, dict[str, float]] = {}
    for n, line in numbered_lines(path, "run"):
        parts = line.split()
        if len(parts) != 6:
            raise InputError(str(path), f"expected 6 columns 'qid Q0 docid rank score tag', got {len(parts)}", n)
        qid, _, doc, _, score, _ = parts
        try:
            s = float(score)
        except ValueError:
            raise InputError(str(path), f"score must be a number, got {score!r}", n) from None
        run.setdefault(qid, {}).setdefault(doc, s)
    return run


def strictly_decreasing(scores: Sequence[float]) -> list[float]:
    """Scores rounded to float32 and nudged down by float32 steps where needed so they strictly
    decrease *in single precision*.

    Ranked lists are written with these so that trec_eval (which re-sorts by score as a C
    ``float``, ties by doc id descending) reproduces our order exactly. Double-precision nudges
    are not enough: trec_eval would round them back into a tie. Each score moves by at most a
    few float32 ULPs (~1e-7 relative) per tied neighbour; the values returned are exactly
    representable in float32, so ``repr`` round-trips through ``atof`` and ``(float)``.
    """
    out: list[np.float32] = []
    for s in scores:
        v = np.float32(s)
        if out and not v < out[-1]:
            v = np.nextafter(out[-1], np.float32(-np.inf), dtype=np.float32)
        out.append(v)
    return [float(v) for v in out]


def ranked_run(ranked: Mapping[str, Sequence[tuple[str, float]]]) -> dict[str, dict[str, float]]:
    """``{qid: [(doc, score), ...]}`` in rank order -> a scored run that sorts back to that order."""
    run = {}
    for qid, items in ranked.items():
        docs = [d for d, _ in items]
        run[qid] = dict(zip(docs, strictly_decreasing([s for _, s in items])))
    return run


def write_run(path: str | Path, ranked: Mapping[str, Sequence[tuple[str, float]]], tag: str = "citewise") -> None:
    """Write a TREC run file from ``{qid: [(doc, score), ...]}`` in rank order."""
    run = ranked_run(ranked)
    with Path(path).open("w", encoding="utf-8") as fh:
        for qid in sorted(run):
            for rank, (doc, score) in enumerate(run[qid].items(), start=1):
                fh.write(f"{qid} Q0 {doc} {rank} {score!r} {tag}\n")
