"""``citewise train-answerer``, ``tune`` and ``summarize``."""

import json
from pathlib import Path
from typing import Optional

import typer

from citewise.core import CitewiseError
from citewise.cli.common import IndexOpt, JsonOpt, _open, _progress, app, err, out
from citewise.cli.eval_runs import _sample_index


@app.command("train-answerer")
def train_answerer(
    squad: Optional[Path] = typer.Option(None, "--squad", help="SQuAD 2.0 folder: its train articles are used."),
    squad_index: Optional[Path] = typer.Option(
        None, "--squad-index", help="Index of the SQuAD paragraphs (as 'eval squad' builds)."
    ),
    sets: Optional[list[Path]] = typer.Option(None, "--set", help="Answer set JSONL (repeatable) over --index."),
    index: Optional[Path] = IndexOpt,
    out_file: Optional[Path] = typer.Option(None, "--out", help="Model file to write (default: the packaged model)."),
    squad_limit: int = typer.Option(3000, "--squad-limit", min=1, help="Most SQuAD train questions used."),
    model: str = typer.Option(
        "linear", "--model", help="Selector: linear | trees (linear + boosted trees; LightGBM, the tune extra)."
    ),
    span_model: str = typer.Option(
        "trees", "--span-model", help="Span model fitted with --squad: trees (LightGBM, the tune extra) | linear."
    ),
    groups_in: Optional[list[Path]] = typer.Option(
        None, "--groups", help="Training groups saved by --save-groups (repeatable), used besides any --squad/--set."
    ),
    groups_out: Optional[Path] = typer.Option(
        None, "--save-groups", help="Also write the collected groups (.npz) to refit later without asking again."
    ),
    span_out: Optional[Path] = typer.Option(
        None, "--span-out", help="Span model file to write with --squad (default: the packaged span model)."
    ),
    as_json: bool = JsonOpt,
):
    """Train the answer selector (a listwise model over answer-unit features); docs/answers.md."""
    from citewise.evaluation.train_answerer import run_training

    log = (
        (lambda m: err.print(m, highlight=False, markup=False, soft_wrap=True))
        if as_json
        else (lambda m: out.print(m, highlight=False, markup=False, soft_wrap=True))
    )
    report = run_training(
        squad,
        squad_index,
        sets or [],
        index,
        out_file,
        squad_limit,
        log=log,
        model=model,
        groups_in=groups_in or [],
        groups_out=groups_out,
        span_out=span_out,
        span_model=span_model,
    )
    if as_json:
        out.print_json(json.dumps(report, default=float))


@app.command()
def tune(
    golden: Path = typer.Option(
        ..., "--golden", help="A golden set (.jsonl) or a BEIR dataset folder (its --split qrels)."
    ),
    index: Optional[Path] = typer.Option(
        None,
        "--index",
        help="Index folder (default: the demo index for golden sets; the 'citewise eval beir' folder for BEIR).",
    ),
    split: str = typer.Option("train", help="BEIR qrels split to fit on (never test)."),
    embedder: str = typer.Option("minilm", help="BEIR only: selects the default index folder."),
    model: str = typer.Option(
        "linear",
        "--model",
        help="linear (fusion weights, coordinate ascent) | lambdamart (LightGBM) | convex (dense weight and vector pseudo-relevance feedback, grid search).",
    ),
    folds: int = typer.Option(5, "--folds", min=2, metavar="N", help="Cross-validation folds."),
    alpha: float = typer.Option(
        0.05, "--alpha", min=0.0, max=1.0, metavar="P", help="Significance level of the paired test against RRF."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report only; store nothing."),
    as_json: bool = JsonOpt,
):
    """Fit learned fusion on a golden set; store it only if it beats RRF in cross-validation.

    The stored model serves --retriever tuned; it must beat RRF significantly (paired test at
    --alpha) in k-fold cross-validation. Exit 1 when it does not."""
    from citewise.evaluation.tuning import cross_validate
    from citewise.retrieval.fusion_learned import FITTERS, build_training_data, model_path

    if model not in FITTERS and model != "convex":
        raise CitewiseError(f"unknown model '{model}' (valid: {', '.join([*FITTERS, 'convex'])})")
    if golden.is_dir():
        from citewise.evaluation.beir import BeirDataset, PrecomputedEmbedder
        from citewise.index import default_index_dir

        ds = BeirDataset(golden)
        if split == "test":
            raise CitewiseError("tune fits on train/dev qrels; the test split is for reporting (citewise eval compare)")
        qrels, queries = ds.load_split(split)
        idx = _open(index or default_index_dir().parent / "beir" / f"{ds.name}-{embedder}")
        levels: object = "doc"
        name = f"{ds.name} {split}"
    elif golden.is_file():
        from citewise.evaluation.golden import load_golden

        idx = _sample_index(index)
        gs = load_golden(golden, idx.store)
        qrels, queries, levels, name = gs.qrels, gs.texts, gs.levels(), golden.name
    else:
        raise CitewiseError(f"{golden}: no such golden set file or BEIR folder")
    from citewise.evaluation.beir import PrecomputedEmbedder

    emb = PrecomputedEmbedder(idx.embedder, [queries[q] for q in sorted(queries)])
    if model == "convex":
        from citewise.evaluation.tuning import tune_convex

        with _progress(len(queries), f"fusion grid ({name})", not as_json) as tick:
            rep = tune_convex(idx.store, emb, queries, qrels, levels, folds=folds, alpha=alpha, progress=tick)
    else:
        with _progress(len(queries), f"candidate features ({name})", not as_json) as tick:
            data = build_training_data(idx.store, emb, queries, qrels, levels, progress=tick)
        rep = cross_validate(data, model, folds=folds, alpha=alpha)
    path = model_path(idx.store)
    if rep.stored and not dry_run:
        rep.model.info.update({"trained_on": name, "queries": rep.queries, "cv": rep.to_dict()})
        rep.model.save(path)
    result = {
        **rep.to_dict(),
        "golden": name,
        "path": str(path) if rep.stored and not dry_run else None,
        "dry_run": dry_run,
    }
    if as_json:
        out.print_json(json.dumps(result))
    else:
        out.print(
            f"{name}: {rep.queries} queries, {folds}-fold CV, {model}: held-out nDCG@10 {rep.tuned_mean:.4f} "
            f"vs RRF {rep.rrf_mean:.4f} (p = {rep.p:.4g})",
            highlight=False,
            soft_wrap=True,
        )
        out.print(
            ("stored " + str(path) if not dry_run else "would store (dry run)")
            if rep.stored
            else f"not stored: {rep.reason}",
            highlight=False,
            soft_wrap=True,
        )
    if not rep.stored:
        raise typer.Exit(1)


@app.command()
def summarize(
    index: Optional[Path] = IndexOpt,
    llm: bool = typer.Option(
        False,
        "--llm",
        help="Write summaries with the OpenAI-compatible endpoint of CITEWISE_LLM_* (default: extractive, central sentences).",
    ),
    force: bool = typer.Option(False, "--force", help="Re-summarise every document, not only new and changed ones."),
    raptor: bool = typer.Option(
        False,
        "--raptor",
        help="Also build or refresh the RAPTOR trees (raptor-collapsed / raptor-tree) and report node counts and build time.",
    ),
    as_json: bool = JsonOpt,
):
    """Build or refresh the document level of the hierarchical retriever (title, outline, summary)."""
    from collections import Counter

    from citewise.retrieval.hierarchical import DocLevel, LLMSummarizer
    from citewise.store.derived import summaries_of

    idx = _open(index)
    summarizer = None
    if llm:
        from citewise.models.chat import ChatConfig, OpenAIChatModel

        cfg = ChatConfig.from_env("summarizer")
        summarizer = LLMSummarizer(OpenAIChatModel(cfg), cfg.model)
    level = DocLevel(summaries_of(idx.store), idx.embedder)
    counts = level.refresh(idx.store, summarizer=summarizer, force=force)
    models = dict(sorted(Counter(e.model for e in level.entries).items()))
    errors = summarizer.errors if summarizer else []
    tree = None
    if raptor:
        from citewise.retrieval.raptor import RaptorIndex
        from citewise.store.derived import trees_of

        ri = RaptorIndex(trees_of(idx.store), idx.embedder)
        tree = ri.refresh(idx.store)
        tree["nodes_per_level"] = {
            str(lv): n
            for lv, n in sorted(Counter(nd.level for t in ri.trees.values() for nd in t.nodes.values()).items())
        }
        tree["groups"] = len(ri.trees)
    if as_json:
        out.print_json(
            json.dumps(
                {
                    **counts,
                    "models": models,
                    "errors": errors,
                    "folder": level.where,
                    **({"raptor": tree} if tree else {}),
                }
            )
        )
    else:
        out.print(
            f"document level: {counts['documents']} documents ({counts['added']} added, {counts['updated']} "
            f"re-summarised, {counts['deleted']} deleted, {counts['unchanged']} unchanged); summaries by "
            + ", ".join(f"{m} ({n})" for m, n in models.items()),
            highlight=False,
            soft_wrap=True,
        )
        for e in errors:
            err.print(f"warning: {e} (extractive summary kept)", markup=False, highlight=False, soft_wrap=True)
        if tree:
            out.print(
                f"RAPTOR: {tree['nodes']} summary nodes in {tree['groups']} permission group(s), per level "
                f"{tree['nodes_per_level']}; {tree['rebuilt_groups']} group(s) rebuilt, {tree['patched_groups']} "
                f"patched ({tree['nodes_resummarised']} nodes re-summarised) in {tree['seconds']:.1f}s",
                highlight=False,
                soft_wrap=True,
            )


#: Usage errors (bad option value, unknown option or command): Typer's vendored click's
#: ``ClickException``, the base of the public ``typer.BadParameter``.
