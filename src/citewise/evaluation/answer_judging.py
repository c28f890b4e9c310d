"""``citewise eval answers --judge``: the configured LLM judge's faithfulness verdict on every answer.

Each answered question is judged against the texts of the chunks its generator was shown
(``Answer.context_ids``, else ``retrieved_ids``) with
:class:`citewise.answer.judges.LLMFaithfulnessJudge` (failing closed); abstentions are not
judged. The summary is the share of judged answers found faithful, with the failed verdicts
counted apart.
"""

from __future__ import annotations

from typing import Mapping

from citewise.evaluation.answer_set import strip_citations


def judge_answers(answers: Mapping[str, tuple[str, object]], store, judge) -> dict:
    """``{"judged", "faithful", "faithful_rate", "judge_errors", "per_question": {qid: {...}}}``.

    Args:
        answers: ``{qid: (question, Answer)}``.
        store: the index's store (chunk texts by id).
        judge: a :class:`~citewise.answer.judges.Judge`.
    """
    per, faithful, errors = {}, 0, 0
    for qid, (question, ans) in sorted(answers.items()):
        if ans.outcome == "abstained":
            continue
        ids = list(ans.context_ids or ans.retrieved_ids)
        chunks = store.get_chunks(ids)
        v = judge.judge(question, strip_citations(ans.text), [chunks[i].text for i in ids if i in chunks])
        faithful += v.passed
        errors += bool(v.error)
        per[qid] = {"faithful": v.passed, "unsupported_claims": list(v.unsupported_claims), "error": v.error}
    n = len(per)
    return {
        "judged": n,
        "faithful": faithful,
        "faithful_rate": round(faithful / n, 6) if n else None,
        "judge_errors": errors,
        "per_question": per,
    }
