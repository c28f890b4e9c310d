"""CLI commands for evaluation with an LLM judge, golden-set generation and the latency model.

``citewise eval ragas``, ``citewise eval judge-agreement``, ``citewise golden generate`` and
``citewise decide latency``; :func:`register` adds them to the main app (``citewise.cli``), so
that module keeps only the registration. Errors are :class:`citewise.core.CitewiseError` (one
line, exit 2, printed by ``citewise.cli.main``); a failed gate exits 1.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from citewise.core import CitewiseError

HELP = {"help_option_names": ["-h", "--help"]}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
out = Console(markup=False, highlight=False, soft_wrap=True)
err = Console(stderr=True, markup=False, highlight=False, soft_wrap=True)


def _say(text: str, to: Console = out) -> None:
    to.print(_CONTROL.sub("\ufffd", text))


golden_app = typer.Typer(no_args_is_help=True, context_settings=HELP, help="Build golden sets.")
decide_app = typer.Typer(
    no_args_is_help=True, context_settings=HELP, help="Decide the system's shape: latency from traces."
)


def _judge_or_none():
    from citewise.evaluation.llm_judge import judge_model

    return judge_model()


def eval_ragas(
    dataset: Path = typer.Argument(..., help="RAGAS dataset JSONL: question, answer, contexts (list), ground_truth."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write a report: .json, .md or .html."),
    noise: int = typer.Option(
        0,
        "--noise",
        min=0,
        help="Noise sensitivity: regenerate each answer with this many noise contexts of other rows (needs the llm generator settings); 0 = skip.",
    ),
    embedder: str = typer.Option("minilm", "--embedder", help="Embedder for answer relevance (minilm | hashing)."),
    floors: Optional[Path] = typer.Option(
        None,
        "--floors",
        help="YAML: floors {metric: value}, judge {agreement: FILE, min_kappa: 0.6}; exit 1 on a breach; the judge must pass its agreement gate.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """RAGAS as the design documents define it: faithfulness, answer relevance, context precision
    (relevant/retrieved, and the rank-weighted form), context recall, noise sensitivity."""
    from citewise.answer.judges import ClaimJudge, LLMFaithfulnessJudge
    from citewise.evaluation import ragas_report
    from citewise.evaluation.llm_judge import NO_JUDGE
    from citewise.evaluation.ragas import read_ragas_set, run_ragas
    from citewise.evaluation.ragas_gate import check_floors, load_ragas_floors

    rows = read_ragas_set(dataset)
    fl = load_ragas_floors(floors) if floors else None
    model = _judge_or_none()
    if fl is not None:
        if model is None:
            raise CitewiseError(f"{floors}: the floors need an LLM judge; {NO_JUDGE}")
        from citewise.evaluation.judge_agreement import require_agreement

        require_agreement(fl.agreement, LLMFaithfulnessJudge(model), fl.min_kappa, fl.min_labels)
    judge = ClaimJudge(model) if model is not None else None
    emb = probe = None
    if judge is not None:
        from citewise.models.embedders import make_embedder

        emb = make_embedder(embedder)
        if noise:
            from citewise.answer.generators import LLMGenerator
            from citewise.evaluation.ragas_noise import noise_probe
            from citewise.models.chat import ChatConfig, OpenAIChatModel
            from citewise.settings import load_settings

            llm_settings = load_settings().llm
            g = llm_settings.for_use("answer")
            if not g.configured:
                raise CitewiseError(
                    "--noise regenerates answers with the LLM generator and none is configured: set "
                    "CITEWISE_LLM_BASE_URL and CITEWISE_LLM_MODEL (or [llm] in citewise.toml)"
                )
            gen = LLMGenerator(OpenAIChatModel(ChatConfig.from_settings(llm_settings, "answer")))
            probe = noise_probe(rows, gen, judge, noise)
    else:
        _say(f"warning: {NO_JUDGE}; only what needs no LLM is reported", err)
    rep = run_ragas(
        rows, judge, emb, dataset=str(dataset), judge_name=model.config.model if model else None, noise=probe
    )
    data = rep.to_dict()
    breaches = check_floors(data["means"], fl) if fl is not None else []
    if fl is not None:
        data["gate"] = {"passed": not breaches, "floors": fl.floors, "breaches": breaches}
    if report:
        ragas_report.write(report, data)
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(ragas_report.to_markdown(data))
        for b in breaches:
            _say(f"floor breached: {b}", err)
    if breaches:
        raise typer.Exit(1)


def eval_judge_agreement(
    labels: Path = typer.Argument(
        ..., help="Hand labels JSONL: id, question, answer, contexts (list), faithful (true/false)."
    ),
    out_file: Optional[Path] = typer.Option(
        None, "--out", help="Write the agreement record (JSON) here; gates read it."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Accuracy and Cohen's kappa of the configured LLM judge against hand labels."""
    from citewise.answer.judges import LLMFaithfulnessJudge
    from citewise.evaluation.judge_agreement import MIN_LABELS, measure_agreement, read_labels
    from citewise.evaluation.llm_judge import NO_JUDGE

    items = read_labels(labels)
    model = _judge_or_none()
    if model is None:
        raise CitewiseError(NO_JUDGE)
    ag = measure_agreement(items, LLMFaithfulnessJudge(model), labels_path=str(labels))
    data = ag.to_dict()
    if out_file:
        try:
            out_file.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        except OSError as e:
            raise CitewiseError(f"{out_file}: cannot write: {e.strerror or e}") from None
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    c = ag.confusion
    _say(
        f"judge {ag.judge['model']} vs {ag.n} hand labels: accuracy {ag.accuracy:.3f}, Cohen's kappa {ag.kappa:.3f} "
        f"(judge faithful & label faithful {c['tp']}, judge faithful & label not {c['fp']}, judge not & label "
        f"faithful {c['fn']}, both not {c['tn']}; {ag.judge_errors} verdicts failed closed)"
    )
    if ag.n < MIN_LABELS:
        _say(f"note: {ag.n} labels; a judge gates nothing until it is measured on at least {MIN_LABELS}", err)


@golden_app.command("generate")
def golden_generate(
    out_file: Path = typer.Argument(..., help="Review file to write (JSONL)."),
    index: Optional[Path] = typer.Option(
        None, "--index", metavar="DIR", help="Index folder (default: $CITEWISE_INDEX)."
    ),
    seeds: int = typer.Option(20, "--seeds", min=1, help="Seed chunks (stratified by document)."),
    per_chunk: int = typer.Option(3, "--per-chunk", min=2, max=3, help="Questions per seed chunk (2 or 3)."),
    review_share: float = typer.Option(
        0.15, "--review-share", help="Share of rows marked for human review (0.10-0.20)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the review sample."),
    as_json: bool = typer.Option(False, "--json", help="Print what was written as JSON."),
):
    """Generate golden questions (easy / multi-hop / adversarial) from the index's chunks with the
    configured LLM, writing a review file; without an LLM nothing is generated."""
    from citewise.evaluation.golden_generate import generate, write_review_file
    from citewise.evaluation.llm_judge import NO_JUDGE
    from citewise.index import Index

    model = _judge_or_none()
    if model is None:
        raise CitewiseError(
            f"golden generate writes questions with an LLM and none is configured; nothing was written ({NO_JUDGE})"
        )
    if index is not None and not Index.exists(index):
        raise CitewiseError(f"{index}: no index here; run 'citewise ingest PATH --index {index}' first")
    idx = Index.open(index)
    res = generate(idx.store, model, seeds=seeds, per_chunk=per_chunk, review_share=review_share, seed=seed)
    if not res.rows:
        raise CitewiseError(
            f"the LLM produced no usable question for {res.seeds} seed chunks ({len(res.skipped)} replies "
            "unusable); nothing was written"
        )
    write_review_file(out_file, res)
    kinds = {k: sum(r["kind"] == k for r in res.rows) for k in ("easy", "multi-hop", "adversarial")}
    if as_json:
        sys.stdout.write(
            json.dumps(
                {
                    "file": str(out_file),
                    "questions": len(res.rows),
                    "seeds": res.seeds,
                    "kinds": kinds,
                    "review": sum(r["review"] for r in res.rows),
                    "skipped": list(res.skipped),
                },
                indent=2,
            )
            + "\n"
        )
        return
    _say(
        f"wrote {out_file}: {len(res.rows)} questions from {res.seeds} seed chunks ({', '.join(f'{v} {k}' for k, v in kinds.items())}); "
        f"{sum(r['review'] for r in res.rows)} marked for review; {len(res.skipped)} skipped"
    )
    for s in res.skipped:
        _say(f"skipped {s}", err)


@decide_app.command("latency")
def decide_latency(
    traces: Path = typer.Argument(
        ..., help="OTLP/JSON lines file of spans (CITEWISE_TRACES_FILE, or a collector's file exporter)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """ReAct latency from measured spans: per step T1 (LLM) + T2 (tools; parallel calls cost the
    max) + T3 (context growth and overhead), plus the final synthesis."""
    from citewise.decide.latency import latency_report

    rep = latency_report(traces)
    if as_json:
        sys.stdout.write(json.dumps(rep, indent=2) + "\n")
        return
    _say(f"{rep['runs']} agent runs in {traces}")
    _say(
        f"{'steps':>5} {'runs':>5} {'measured ms':>12} {'p95':>8} {'model ms':>9} {'T1':>7} {'T2':>7} {'T3':>7} "
        f"{'synth':>7} {'sequential':>10}"
    )
    for g in rep["groups"]:
        _say(
            f"{g['steps']:>5} {g['runs']:>5} {g['measured_ms_mean']:>12.1f} {g['measured_ms_p95']:>8.1f} "
            f"{g['model_ms_mean']:>9.1f} {g['t1_ms_mean']:>7.1f} {g['t2_ms_mean']:>7.1f} {g['t3_ms_mean']:>7.1f} "
            f"{g['synthesis_ms_mean']:>7.1f} {g['sequential_ms_mean']:>10.1f}"
        )
    _say(
        "model = steps x (T1 + T2 + T3) + synthesis; sequential = the same with each step's tool calls one after "
        "the other instead of in parallel."
    )


def register(app: typer.Typer, eval_app: typer.Typer) -> None:
    """Add these commands to the main app and its ``eval`` group."""
    eval_app.command("ragas")(eval_ragas)
    eval_app.command("judge-agreement")(eval_judge_agreement)
    app.add_typer(golden_app, name="golden")
    app.add_typer(decide_app, name="decide")
