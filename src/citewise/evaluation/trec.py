"""Reading and writing qrels (BEIR TSV and TREC) and TREC run files.

* BEIR qrels: TSV with a header ``query-id  corpus-id  score``.
* TREC qrels: ``qid 0 docid grade`` (whitespace-separated, no header).
* TREC run: ``qid Q0 docid rank score tag``.

Errors name the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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


@dataclass
class RunRead:
    """A TREC run as read, with what reading it dropped.

    Attributes:
        run: ``{qid: {doc_id: score}}``.
        duplicates: ``{qid: n}``, lines dropped because the (query, doc) pair appeared on an
            earlier line (the first line in file order keeps its score); queries without
            duplicates are absent.
        identical_ids: ``{qid: n}``, hits dropped because the doc id equals the query id (only
            with ``ignore_identical_ids``; BEIR's ``EvaluateRetrieval.evaluate`` does this by
            default for corpora such as ArguAna/Quora where a query is also a document).
    """

    run: dict[str, dict[str, float]]
    duplicates: dict[str, int] = field(default_factory=dict)
    identical_ids: dict[str, int] = field(default_factory=dict)


def read_run_report(path: str | Path, *, ignore_identical_ids: bool = False) -> RunRead:
    """Read a TREC run file (``qid Q0 docid rank score tag``) and count what is dropped.

    A (query, doc) pair repeated on a later line is dropped (the first line's score is kept) and
    counted in :attr:`RunRead.duplicates`; with ``ignore_identical_ids`` a hit whose doc id equals
    its query id is dropped and counted in :attr:`RunRead.identical_ids`.

    Raises:
        InputError: unreadable file, wrong column count or a non-numeric score (with the line).
    """
    path = Path(path)
    out = RunRead({})
    for n, line in numbered_lines(path, "run"):
        parts = line.split()
        if len(parts) != 6:
            raise InputError(str(path), f"expected 6 columns 'qid Q0 docid rank score tag', got {len(parts)}", n)
        qid, _, doc, _, score, _ = parts
        try:
            s = float(score)
        except ValueError:
            raise InputError(str(path), f"score must be a number, got {score!r}", n) from None
        hits = out.run.setdefault(qid, {})
        if ignore_identical_ids and doc == qid:
            out.identical_ids[qid] = out.identical_ids.get(qid, 0) + 1
        elif doc in hits:
            out.duplicates[qid] = out.duplicates.get(qid, 0) + 1
        else:
            hits[doc] = s
    return out


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """A TREC run file as ``{qid: {doc_id: score}}`` (a repeated doc keeps its first score;
    :func:`read_run_report` also says how many were dropped).

    Raises:
        InputError: unreadable file, wrong column count or a non-numeric score (with the line).
    """
    return read_run_report(path).run


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
