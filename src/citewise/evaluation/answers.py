"""Answer-level checks: citations that point at retrieved evidence, and abstention accuracy.

Only :class:`citewise.core.Answer` is consumed, so any answerer (extractive or LLM) can be checked.

* :func:`check_citations` — an answered question must cite at least one source; every cited id
  (``[doc:ID]`` / ``[chunk:ID]`` markers in the text, and the ``citations`` list) must have been
  retrieved; a cited id that retrieval never returned is *fabricated*. A ``[doc:ID]`` counts as
  retrieved when any retrieved chunk belongs to that document (chunk ids are ``doc_id#slug``).
* :func:`abstention_scores` — on questions with no answer in the corpus (``out_of_scope.jsonl``)
  the right outcome is to abstain. Abstention is the positive class: precision = abstentions on
  out-of-scope questions / all abstentions; recall = abstentions on out-of-scope questions /
  out-of-scope questions. ``answered`` and ``partial`` count as not abstaining.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from citewise.core import Answer, CitewiseError

#: ``[doc:ID]`` or ``[chunk:ID]``; an ID runs to the closing bracket (no whitespace or brackets).
CITATION = re.compile(r"\[(doc|chunk):([^\]\s\[]+)\]")


def doc_of_chunk(chunk_id: str) -> str:
    """The document id of a chunk id (``doc_id#heading-slug[-n]`` -> ``doc_id``)."""
    return chunk_id.rsplit("#", 1)[0] if "#" in chunk_id else chunk_id


def cited_ids(answer: Answer) -> list[str]:
    """Cited ids as ``doc:ID`` / ``chunk:ID`` in first-cited order: text markers, then the
    ``citations`` list (a citation with a chunk id counts as ``chunk:ID`` only if the text cites
    that chunk; otherwise as ``doc:ID``)."""
    out: dict[str, None] = {}
    for kind, ident in CITATION.findall(answer.text):
        out.setdefault(f"{kind}:{ident}", None)
    for c in answer.citations:
        if f"chunk:{c.chunk_id}" not in out:
            out.setdefault(f"doc:{c.doc_id}", None)
    return list(out)


@dataclass
class CitationCheck:
    """Result of :func:`check_citations`.

    Attributes:
        ok: no problem found.
        cited: cited ids (``doc:ID`` / ``chunk:ID``).
        fabricated: cited ids that retrieval never returned.
        problems: one line per problem, for display.
    """

    ok: bool
    cited: list[str] = field(default_factory=list)
    fabricated: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def check_citations(answer: Answer, chunk_doc: Mapping[str, str] | None = None) -> CitationCheck:
    """Check an answer's citations against what was retrieved.

    Args:
        answer: the answer (text with markers, ``citations``, ``retrieved_ids`` = chunk ids).
        chunk_doc: ``{chunk_id: doc_id}`` when chunk ids do not follow ``doc_id#slug``
            (default: :func:`doc_of_chunk`).

    An abstention needs no citation, but any it carries are still checked.
    """
    retrieved_chunks = set(answer.retrieved_ids)
    retrieved_docs = {(chunk_doc or {}).get(c) or doc_of_chunk(c) for c in retrieved_chunks}
    cited = cited_ids(answer)
    problems: list[str] = []
    if answer.outcome != "abstained" and not cited:
        problems.append("answer cites no source")
    fabricated = []
    for cid in cited:
        kind, ident = cid.split(":", 1)
        found = ident in retrieved_chunks if kind == "chunk" else ident in retrieved_docs
        if not found:
            fabricated.append(cid)
            problems.append(f"[{cid}] is cited but was never retrieved (fabricated)")
    return CitationCheck(not problems, cited, fabricated, problems)


@dataclass
class AbstentionScores:
    """Abstention as a classifier of "no answer in the corpus" (positive class = abstain).

    Attributes:
        precision, recall, f1, accuracy: in [0, 1]; precision is 0 when nothing abstained.
        tp: out-of-scope questions abstained on; fp: answerable questions abstained on;
        fn: out-of-scope questions answered; tn: answerable questions answered.
        false_abstentions / missed: the question ids behind fp / fn.
    """

    precision: float
    recall: float
    f1: float
    accuracy: float
    tp: int
    fp: int
    fn: int
    tn: int
    false_abstentions: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def abstention_scores(answerable: Mapping[str, Answer], out_of_scope: Mapping[str, Answer]) -> AbstentionScores:
    """Precision/recall of abstention from answers to answerable and out-of-scope questions.

    Args:
        answerable: ``{qid: Answer}`` for questions the corpus answers (e.g. the golden set).
        out_of_scope: ``{qid: Answer}`` for questions it does not.

    Raises:
        CitewiseError: no out-of-scope answers (recall would be undefined).
    """
    if not out_of_scope:
        raise CitewiseError("abstention accuracy needs at least one out-of-scope question")
    fp_ids = sorted(q for q, a in answerable.items() if a.outcome == "abstained")
    fn_ids = sorted(q for q, a in out_of_scope.items() if a.outcome != "abstained")
    tp = len(out_of_scope) - len(fn_ids)
    fp = len(fp_ids)
    tn = len(answerable) - fp
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / len(out_of_scope)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    accuracy = (tp + tn) / (len(answerable) + len(out_of_scope))
    return AbstentionScores(precision, recall, f1, accuracy, tp, fp, len(fn_ids), tn, fp_ids, fn_ids)


def evaluate_answers(
    answer: Callable[[str], Answer], answerable: Mapping[str, str], out_of_scope: Mapping[str, str]
) -> dict:
    """Ask every question and score citations and abstention.

    Args:
        answer: ``question -> Answer`` (e.g. ``lambda q: index.ask(q)``).
        answerable, out_of_scope: ``{qid: question}``.

    Returns:
        ``{"abstention": AbstentionScores.as_dict(), "citations": {"checked", "ok",
        "fabricated": {qid: [ids]}, "problems": {qid: [lines]}}}``.
    """
    ans_in = {q: answer(t) for q, t in sorted(answerable.items())}
    ans_out = {q: answer(t) for q, t in sorted(out_of_scope.items())}
    checks = {q: check_citations(a) for q, a in _chain(ans_in.items(), ans_out.items())}
    return {
        "abstention": abstention_scores(ans_in, ans_out).as_dict(),
        "citations": {
            "checked": len(checks),
            "ok": sum(c.ok for c in checks.values()),
            "fabricated": {q: c.fabricated for q, c in checks.items() if c.fabricated},
            "problems": {q: c.problems for q, c in checks.items() if c.problems},
        },
    }


def _chain(*its: Iterable):
    for it in its:
        yield from it
