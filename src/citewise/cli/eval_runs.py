"""``citewise eval run | compare | report`` and ``citewise gate``."""

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from citewise.core import CitewiseError
from citewise.cli.common import JsonOpt, RerankDepthOpt, Table, _open, _progress, app, err, eval_app, out


EVAL_RUN_METRICS = "ndcg@10,ndcg_exp@10,mrr@10,recall@10,recall@100,precision@10,map,hit@10"


def _sample_index(index: Optional[Path]):
    """The index golden sets are evaluated on: ``--index``, else the demo index (built from the
    bundled sample corpus with MiniLM on first use, like ``citewise demo``)."""
    from citewise.demo import sample_dir
    from citewise.index import Index, default_index_dir

    if index is not None:
        return _open(index)
    path = default_index_dir().parent / "demo"
    if not Index.exists(path):
        err.print(f"building the sample index in {path} (once)", highlight=False)
        Index.open(path, embedder="minilm").ingest(sample_dir() / "corpus")
    return Index.open(path)


def _print_comparison(c, floors=None, breaches=None) -> None:
    for slice_name, qids in c.slices.items():
        t = Table(
            "metric", *c.arms, *[f"p {a}" for a in c.arms[1:]], title=f"{c.name} · {slice_name} · {len(qids)} queries"
        )
        for m in c.metrics:
            ps = [c.deltas[a][slice_name][m]["p"] for a in c.arms[1:]]
            t.add_row(
                m,
                *[f"{c.means[a][slice_name][m]:.4f}" for a in c.arms],
                *[("<0.001" if p < 0.001 else f"{p:.3f}") + ("*" if p < 0.05 else "") for p in ps],
            )
        out.print(t)
    s = c.settings
    if len(c.arms) > 1:
        out.print(
            f"p X: two-sided paired randomisation test of X vs {c.baseline}, {s['permutations']} permutations, "
            f"seed {s['seed']} (* p < 0.05); 95% bootstrap CIs in --json and reports.",
            highlight=False,
            soft_wrap=True,
        )


@eval_app.command("run")
def eval_run(
    qrels: Path = typer.Argument(..., help="Qrels: BEIR TSV (query-id, corpus-id, score) or TREC (qid 0 docid grade)."),
    run: Path = typer.Argument(..., help="TREC run file: qid Q0 docid rank score tag."),
    metrics: str = typer.Option(
        EVAL_RUN_METRICS,
        "--metrics",
        show_default=EVAL_RUN_METRICS.replace(",", ", "),
        help="Comma-separated: ndcg@k, ndcg_exp@k, mrr or mrr@k, recall@k, precision@k, map or map@k, hit@k.",
    ),
    ignore_identical_ids: bool = typer.Option(
        False,
        "--ignore-identical-ids",
        help="Drop hits whose doc id equals the query id, as BEIR's EvaluateRetrieval does (e.g. ArguAna, Quora). Off by default.",
    ),
    as_json: bool = JsonOpt,
):
    """Score any system's TREC run against qrels with trec_eval's definitions.

    A doc repeated for the same query keeps its first line; the lines dropped are counted per
    query (stderr note; ``duplicates_dropped`` in --json), as are hits dropped by
    ``--ignore-identical-ids`` (``identical_ids_dropped``).
    """
    from citewise.evaluation.metrics import evaluate, parse_metrics
    from citewise.evaluation.trec import read_qrels, read_run_report

    names = parse_metrics(metrics)
    qrels_data = read_qrels(qrels)
    got = read_run_report(run, ignore_identical_ids=ignore_identical_ids)
    run_data = got.run
    ev = evaluate(qrels_data, run_data, names)
    missing = sorted(set(qrels_data) - {q for q, hits in run_data.items() if hits})
    notes = []
    if missing:
        notes.append(
            f"{len(missing)} of {len(qrels_data)} qrels queries have no results in the run (e.g. {missing[0]}); "
            "they score 0 and count in the means (trec_eval -c; plain trec_eval would skip them)"
        )

    def per_query(counts: dict[str, int]) -> str:
        shown = ", ".join(f"{q}: {n}" for q, n in sorted(counts.items())[:5])
        return shown + (f", … ({len(counts) - 5} more queries)" if len(counts) > 5 else "")

    if got.duplicates:
        notes.append(
            f"{sum(got.duplicates.values())} duplicate hit(s) dropped in {len(got.duplicates)} of {len(run_data)} run "
            f"queries (the first line of a repeated query/doc pair counts): {per_query(got.duplicates)}"
        )
    if got.identical_ids:
        notes.append(
            f"--ignore-identical-ids: dropped {sum(got.identical_ids.values())} hit(s) whose doc id equals the "
            f"query id: {per_query(got.identical_ids)}"
        )
    if as_json:
        out.print_json(
            json.dumps(
                {
                    "metrics": ev.means,
                    "per_query": ev.per_query,
                    "queries": len(qrels_data),
                    "queries_missing_from_run": missing,
                    "duplicates_dropped": got.duplicates,
                    "duplicates_dropped_total": sum(got.duplicates.values()),
                    "ignore_identical_ids": ignore_identical_ids,
                    "identical_ids_dropped": got.identical_ids,
                }
            )
        )
        return
    t = Table("metric", "value", title=f"{run.name} · {len(ev.per_query)} queries")
    for m, v in ev.means.items():
        t.add_row(m, f"{v:.4f}")
    out.print(t)
    for note in notes:
        err.print(f"note: {note}", highlight=False, soft_wrap=True)


@eval_app.command("compare")
def eval_compare(
    source: Path = typer.Argument(..., help="A golden set (.jsonl) or a BEIR dataset folder."),
    retrievers: str = typer.Option(
        "bm25,dense,hybrid", "--retrievers", help="Comma-separated arms; the first is the baseline."
    ),
    index: Optional[Path] = typer.Option(
        None,
        "--index",
        help="Index folder (default: the demo index for golden sets; the 'citewise eval beir' folder for BEIR).",
    ),
    split: str = typer.Option("test", help="BEIR qrels split: qrels/<split>.tsv."),
    embedder: str = typer.Option("minilm", help="BEIR only: minilm | hashing (selects the default index folder)."),
    metrics: Optional[str] = typer.Option(
        None,
        "--metrics",
        help="Comma-separated metrics (default: ndcg@10, ndcg_exp@10, mrr@10, recall@10, precision@10, map, hit@1, hit@10).",
    ),
    permutations: int = typer.Option(
        10_000, "--permutations", min=1000, metavar="N", help="Randomisation test permutations."
    ),
    seed: int = typer.Option(42, "--seed", help="Seed of the permutation test and the bootstrap."),
    report: Optional[Path] = typer.Option(
        None, "--report", help="Also write a report; format from the suffix: .md, .json or .html."
    ),
    reranker: Optional[str] = typer.Option(
        None,
        "--reranker",
        help="Reranker for the arms named NAME+rerank (tei:URL | cohere:URL or cohere:URL#MODEL | onnx:FOLDER | llm*).",
    ),
    rerank_depth: int = RerankDepthOpt,
    as_json: bool = JsonOpt,
):
    """Compare retrievers per slice: means, 95% bootstrap CIs and paired p-values vs the first arm."""
    import time

    from citewise.evaluation.beir import BeirDataset
    from citewise.evaluation.harness import compare_beir, compare_golden, parse_retrievers
    from citewise.evaluation.metrics import DEFAULT_METRICS, parse_metrics
    from citewise.evaluation.reports import write_report
    from citewise.index import default_index_dir

    arms = parse_retrievers(retrievers)
    names = parse_metrics(metrics) if metrics else list(DEFAULT_METRICS)
    if source.is_dir():
        ds = BeirDataset(source)
        ds.check(split)
        idx = _open(index or default_index_dir().parent / "beir" / f"{ds.name}-{embedder}", embedder, must_exist=False)
        t0 = time.perf_counter()
        n_docs = sum(1 for _ in ds.corpus.open("rb"))
        with _progress(n_docs, f"indexing {ds.name}", not as_json) as tick:
            idx.ingestor(units=False).ingest_documents(ds.documents(), progress=tick)
        t_index = time.perf_counter() - t0
        c = compare_beir(
            idx,
            ds,
            arms,
            split=split,
            metrics=names,
            permutations=permutations,
            seed=seed,
            reranker=reranker,
            rerank_depth=rerank_depth,
        )
        c.info["index_seconds"] = round(t_index, 2)
    elif source.is_file():
        idx = _sample_index(index)
        c = compare_golden(
            idx,
            source,
            arms,
            metrics=names,
            permutations=permutations,
            seed=seed,
            reranker=reranker,
            rerank_depth=rerank_depth,
        )
    else:
        raise CitewiseError(f"{source}: no such golden set file or BEIR folder")
    if report:
        write_report(report, c)
    if as_json:
        out.print_json(json.dumps(c.to_dict()))
        return
    _print_comparison(c)
    info = c.info
    out.print(
        f"queried {len(arms)} arms in {info['query_seconds']:.1f}s, compared in {info['compare_seconds']:.1f}s"
        + (f" (index check {info['index_seconds']:.1f}s)" if "index_seconds" in info else "")
        + (f"; report: {report}" if report else ""),
        highlight=False,
        soft_wrap=True,
    )


@eval_app.command("report")
def eval_report(
    comparison: Path = typer.Argument(..., help="JSON written by 'citewise eval compare --json' or '--report x.json'."),
    fmt: str = typer.Option("html", "--format", help="md | json | html."),
    out_file: Optional[Path] = typer.Option(None, "--out", help="Output file (default: print to stdout)."),
):
    """Render a saved comparison as Markdown, JSON or a self-contained HTML page with bar charts."""
    from citewise.evaluation.compare import Comparison
    from citewise.evaluation.gate import Floors
    from citewise.evaluation.reports import render, write_report

    try:
        data = json.loads(comparison.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CitewiseError(f"{comparison}: cannot read comparison JSON ({e})") from None
    c = Comparison.from_dict(data)
    floors = breaches = None
    if isinstance(data.get("gate"), dict):
        floors = Floors(data["gate"].get("floors", {}))
        breaches = [str(b) for b in data["gate"].get("breaches", [])]  # rendered as written
    if out_file:
        write_report(out_file, c, fmt, floors, breaches)
        out.print(f"wrote {out_file}", highlight=False)
    else:
        sys.stdout.write(render(c, fmt, floors, breaches) + "\n")


@app.command()
def gate(
    golden: Optional[Path] = typer.Option(
        None, "--golden", help="Golden set (default: the floors file's 'golden', else the bundled sample)."
    ),
    floors: Optional[Path] = typer.Option(
        None, "--floors", help="Floors YAML (default: the bundled sample/floors.yaml)."
    ),
    retriever: Optional[str] = typer.Option(
        None, "--retriever", help="Retriever to gate (default: the floors file's, else shipped)."
    ),
    index: Optional[Path] = typer.Option(
        None, "--index", help="Index folder (default: the demo index of the sample corpus)."
    ),
    report: Optional[Path] = typer.Option(
        None, "--report", help="Also write a report; format from the suffix: .md, .json or .html."
    ),
    as_json: bool = JsonOpt,
):
    """Fail (exit 1) when any slice's metric is below its floor; list every breach."""
    from citewise.demo import sample_dir
    from citewise.evaluation.gate import load_floors
    from citewise.evaluation.harness import parse_retrievers, run_gate
    from citewise.evaluation.reports import write_report

    fl = load_floors(floors or sample_dir() / "floors.yaml")
    golden_path = golden or fl.golden or sample_dir() / "golden.jsonl"
    name = parse_retrievers(retriever or fl.retriever or "shipped")[0]
    idx = _sample_index(index)
    c, breaches = run_gate(idx, fl, golden_path, name)
    if report:
        write_report(report, c, None, fl, breaches)
    if as_json:
        out.print_json(
            json.dumps(
                {
                    "passed": not breaches,
                    "retriever": name,
                    "golden": str(golden_path),
                    "floors_file": fl.source,
                    "breaches": [str(b) for b in breaches],
                    "floors": fl.floors,
                    "means": c.means[name],
                }
            )
        )
    else:
        t = Table("slice", "metric", "value", "floor", "", title=f"gate · {name} · {Path(golden_path).name}")
        for slice_name, per in fl.floors.items():
            for m, f in per.items():
                v = c.means[name].get(slice_name, {}).get(m)
                ok = v is not None and v >= f
                t.add_row(
                    slice_name,
                    m,
                    "missing" if v is None else f"{v:.4f}",
                    f"{f:g}",
                    "ok" if ok else Text("FAIL", style="red"),
                )
        out.print(t)
        if breaches:
            err.print(f"gate failed: {len(breaches)} floors breached", highlight=False)
            for b in breaches:
                err.print(f"  {b}", markup=False, highlight=False, soft_wrap=True)
        else:
            out.print("gate passed", highlight=False)
    if breaches:
        sys.exit(1)


# --- eval answers (answer quality on a question set) ---
