"""``citewise eval answers`` and ``citewise recommend``."""

import json
from pathlib import Path
from typing import Optional

import typer

from citewise.core import CitewiseError
from citewise.cli.common import (
    AsOpt,
    IndexOpt,
    JsonOpt,
    Table,
    _citewise,
    _principal,
    _progress,
    app,
    err,
    eval_app,
    out,
)


@eval_app.command("answers")
def eval_answers(
    question_set: Path = typer.Argument(
        ..., help="Answer set JSONL: id, corpus, kind, category, text, expected_docs, expected_answer."
    ),
    index: Optional[Path] = IndexOpt,
    as_: Optional[list[str]] = AsOpt,
    llm: bool = typer.Option(
        False, "--llm", help="Answer with the LLM generator (CITEWISE_LLM_* endpoint) instead of the extractive one."
    ),
    out_file: Optional[Path] = typer.Option(
        None, "--out", help="Also write one JSON object per question here (JSONL)."
    ),
    show_failures: bool = typer.Option(
        False, "--show-failures", help="Print every question not graded correct / abstained_ok, with its answer."
    ),
    boilerplate: Optional[list[str]] = typer.Option(
        None,
        "--boilerplate-pattern",
        help="Extra regex (repeatable) that flags an answer whose first sentence is page furniture.",
    ),
    judge: bool = typer.Option(
        False,
        "--judge",
        help="Also judge every answer's faithfulness with the configured LLM judge (settings llm.judge, else llm: CITEWISE_LLM_JUDGE_* or CITEWISE_LLM_*).",
    ),
    judge_agreement: Optional[Path] = typer.Option(
        None,
        "--judge-agreement",
        help="With --judge: refuse a judge whose agreement record (citewise eval judge-agreement --out) is below --min-kappa.",
    ),
    min_kappa: float = typer.Option(
        0.6, "--min-kappa", help="With --judge-agreement: the lowest Cohen's kappa accepted."
    ),
    as_json: bool = JsonOpt,
):
    """Grade answers: expected span in the answer and expected document cited; abstention on the rest."""
    from citewise.evaluation.answer_set import compile_patterns, grade_set, read_answer_set, summary_groups

    from citewise.api import AskOptions

    patterns = compile_patterns(boilerplate or ())
    llm_judge = _answers_judge(judge, judge_agreement, min_kappa)
    cw = _citewise(index, {"answer.generator": "llm" if llm else None})
    idx = cw.index
    idx.record_usage = False  # evaluation questions are not use
    questions = read_answer_set(question_set, idx.store.documents().keys())
    principal = _principal(as_)
    generator = cw.settings.answer.generator
    asked: dict = {}

    def ask(q):
        asked[q] = cw.ask(q, principal, AskOptions())
        return asked[q]

    with _progress(len(questions), "asking", not as_json) as tick:
        report = grade_set(ask, questions, patterns, tick)
    judged = None
    if llm_judge is not None:
        from citewise.evaluation.answer_judging import judge_answers

        judged = judge_answers(
            {q.qid: (q.text, asked[q.text]) for q in questions if q.text in asked}, idx.store, llm_judge
        )
    if out_file:
        report.write_jsonl(out_file)
    if as_json:
        out.print_json(
            json.dumps(
                {
                    "set": str(question_set),
                    "index": str(idx.path),
                    "generator": generator,
                    **report.to_dict(),
                    **({"judge": judged} if judged else {}),
                }
            )
        )
        return
    summary = report.summary()
    from rich import box

    t = Table(
        "group",
        "n",
        "corr",
        "part",
        "wrong",
        "wabst",
        "absok",
        "leaks",
        "boil",
        "ms",
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        title=f"Answers · {question_set.name} · {len(questions)} questions · {generator}",
    )
    t.columns[0].no_wrap = True  # group labels (corpus=…, category=…) are what readers look for

    def rate(v):
        return "-" if v is None else f"{v:.2f}"

    for label, s in summary_groups(summary):
        t.add_row(
            label,
            str(s["questions"]),
            rate(s["correct_rate"]),
            rate(s["partial_rate"]),
            rate(s["wrong_rate"]),
            rate(s["wrong_abstention_rate"]),
            rate(s["abstention_rate"]),
            str(s["leaks"]),
            str(s["boilerplate_first"]),
            f"{s['mean_latency_ms']:.0f}",
        )
    out.print(t)
    o = summary["overall"]
    out.print(
        "corr = expected span in the answer and expected document cited, part = one of the two, wabst = wrong "
        "abstention (rates of in-scope questions); absok = abstention rate on out-of-scope and false-premise "
        "questions, leaks = those answered; boil = answers opening with page furniture; ms = mean ask latency.",
        highlight=False,
        soft_wrap=True,
    )
    out.print(
        f"in scope: {o['correct']} correct and cited, {o['partial']} partial, {o['wrong']} wrong, "
        f"{o['wrong_abstention']} wrong abstentions of {o['in_scope']}; out of scope / false premise: "
        f"{o['abstained_ok']} abstained, {o['leaks']} leaks of {o['no_answer']}"
        + (f"; per-question rows: {out_file}" if out_file else ""),
        highlight=False,
        soft_wrap=True,
    )
    if judged is not None:
        rate = "-" if judged["faithful_rate"] is None else f"{judged['faithful_rate']:.3f}"
        out.print(
            f"judge: {judged['faithful']} of {judged['judged']} answers faithful ({rate}); "
            f"{judged['judge_errors']} verdicts failed closed",
            highlight=False,
            soft_wrap=True,
        )
    if show_failures:
        for r in report.failures():
            out.print(
                f"\n{r.verdict} · {r.qid} ({r.corpus}, {r.kind}/{r.category}) · cited {', '.join(r.cited_docs) or 'nothing'}",
                highlight=False,
                soft_wrap=True,
            )
            out.print(f"  Q: {r.question}", highlight=False, soft_wrap=True)
            out.print(f"  A: {r.answer}", highlight=False, soft_wrap=True)


def _answers_judge(judge: bool, agreement: Optional[Path], min_kappa: float):
    """The LLM faithfulness judge of ``eval answers --judge`` (None without --judge), refused
    below ``min_kappa`` when an agreement record is given (:mod:`citewise.evaluation.judge_agreement`)."""
    if not judge:
        return None
    from citewise.answer.judges import LLMFaithfulnessJudge
    from citewise.evaluation.judge_agreement import require_agreement
    from citewise.evaluation.llm_judge import NO_JUDGE, judge_model

    model = judge_model()
    if model is None:
        raise CitewiseError(f"--judge: {NO_JUDGE}")
    j = LLMFaithfulnessJudge(model)
    if agreement is not None:
        require_agreement(agreement, j, min_kappa)
    return j


# --- decide commands (recommend) ---


@app.command()
def recommend(
    workload: Path = typer.Argument(..., help="Workload YAML (keys: see citewise/sample/workload.yaml)."),
    corpus: Optional[Path] = typer.Option(
        None, "--corpus", help="Count this folder's o200k_base tokens per principal and use them as corpus_tokens."
    ),
    as_: Optional[list[str]] = typer.Option(
        None, "--as", help="With --corpus: count for this group (repeatable). Default: every group the corpus declares."
    ),
    as_json: bool = JsonOpt,
):
    """Recommend long context or RAG (and tools) for a workload, with both daily costs and every reason."""
    from dataclasses import replace

    from citewise.decide import count_corpus_tokens, load_workload
    from citewise.decide import recommend as _recommend

    w = load_workload(workload)
    counted = None
    if corpus is not None:
        counted = count_corpus_tokens(corpus, as_)
        w = replace(w, corpus_tokens=counted.max_tokens, per_user_permissions=w.per_user_permissions or counted.differ)
    rec = _recommend(w)
    if as_json:
        data = rec.as_dict()
        data["corpus_tokens"] = w.corpus_tokens
        data["per_user_permissions"] = w.per_user_permissions
        if counted is not None:
            data["corpus"] = {
                "path": counted.root,
                "encoding": "o200k_base",
                "tokens": counted.tokens,
                "documents": counted.documents,
                "skipped": list(counted.skipped),
            }
        out.print_json(json.dumps(data))
        return
    for line in counted.skipped if counted else ():
        err.print(f"skipped {line}", markup=False, highlight=False, soft_wrap=True)
    if counted is not None:
        per = "; ".join(f"{p} {n:,} ({counted.documents[p]} docs)" for p, n in counted.tokens.items())
        out.print(
            f"Corpus {counted.root} (o200k_base tokens each principal may read): {per}", highlight=False, soft_wrap=True
        )
    label = {"long_context": "long context", "rag": "RAG"}[rec.primary] + (", served as CAG" if rec.cag else "")
    out.print(f"Recommendation: {label}" + (" + tools" if rec.add_tools else ""), highlight=False)
    out.print(
        f"  long context: {rec.long_context_cost_per_day:,.2f} USD/day ({rec.long_context_input_tokens:,} input tokens per request)",
        highlight=False,
    )
    out.print(
        "  CAG:          n/a (users read different documents: no one corpus to cache)"
        if w.per_user_permissions
        else f"  CAG:          {rec.cag_cost_per_day:,.2f} USD/day (the corpus prefilled once per version, then cached)",
        highlight=False,
    )
    out.print(
        f"  RAG:          {rec.rag_cost_per_day:,.2f} USD/day ({rec.rag_input_tokens:,} input tokens per request)",
        highlight=False,
    )
    out.print("Reasons:")
    for r in rec.reasons:
        out.print(f"  - {r}", highlight=False, markup=False, soft_wrap=True)
