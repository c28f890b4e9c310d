"""``citewise demo``, ``inspect``, ``status``, ``watch`` and ``calibrate``."""

import json
from pathlib import Path
from typing import Optional

import typer

from citewise.core import CitewiseError
from citewise.cli.common import (
    EMBEDDER_HELP,
    IndexOpt,
    JsonOpt,
    RetrieverOpt,
    Table,
    _index_dir,
    _open,
    _progress,
    app,
    err,
    out,
    plural,
)
from citewise.cli.ask import print_answer


@app.command()
def demo(
    index: Optional[Path] = typer.Option(
        None, "--index", help="Index folder for the sample corpus (default: the data folder's 'demo')."
    ),
    embedder: str = typer.Option("minilm", metavar="SPEC", help=EMBEDDER_HELP),
    scenario: Optional[str] = typer.Option(
        None,
        "--scenario",
        help="payment: the evidence-gap controller on the payment packet (gap -> follow-up -> scoped answer).",
    ),
):
    """Ingest the bundled sample corpus, answer sample questions, abstain once, show a restricted answer."""
    from citewise.demo import run_demo
    from citewise.index import default_index_dir

    if scenario is not None:
        if scenario != "payment":
            raise CitewiseError(f"--scenario: unknown scenario '{scenario}' (valid: payment)")
        from citewise.demo_payment import run_payment_demo

        run_payment_demo(
            _index_dir(index or default_index_dir().parent / "demo-payment", must_exist=False),
            embedder,
            out,
            err,
            print_answer,
        )
        return

    run_demo(
        _index_dir(index or default_index_dir().parent / "demo", must_exist=False),
        embedder,
        out,
        err,
        print_answer,
        _progress,
    )


# --- lifecycle commands (status, watch) ---


@app.command()
def inspect(
    path: Path = typer.Argument(..., help="File or folder to preview."),
    as_json: bool = JsonOpt,
    summary: bool = typer.Option(False, "--summary", help="Only each document's line and what was dropped."),
    follow_links: bool = typer.Option(False, "--follow-links", help="Follow symlinks out of the folder."),
):
    """How files will be chunked (heading paths, tokens) and what is dropped as navigation or furniture; indexes nothing."""
    from citewise.text.preview import inspect_path, render

    report = inspect_path(path, follow_links=follow_links)
    if as_json:
        out.print_json(json.dumps(report, ensure_ascii=False))
    else:
        out.print(render(report, show_chunks=not summary), soft_wrap=True)


@app.command()
def status(
    index: Optional[Path] = IndexOpt,
    max_lag: Optional[str] = typer.Option(
        None,
        "--max-lag",
        help="Alert threshold (seconds or 15m, 6h, 2d): exit 1 when the last completed ingest or a pending source change is older.",
    ),
    as_json: bool = JsonOpt,
):
    """Documents, chunks, index lag, staleness and stale documents; exit 1 past --max-lag."""
    from citewise.lifecycle import parse_duration

    threshold = parse_duration(max_lag) if max_lag is not None else None
    idx = _open(index)
    st = idx.status(threshold)
    data = st.as_dict()
    data["duplicates"] = idx.duplicates()
    data["retrievals"] = _usage(idx)
    if as_json:
        out.print_json(json.dumps({**data, "index": str(idx.path)}))
    else:

        def dur(s):
            return (
                "never"
                if s is None
                else f"{s:.1f}s"
                if s < 120
                else f"{s / 60:.1f}m"
                if s < 7200
                else f"{s / 3600:.1f}h"
            )

        out.print(
            f"Index {idx.path}: {plural(st.documents, 'document')}, {plural(st.chunks, 'chunk')}, "
            f"{plural(st.runs, 'ingest run')}.",
            highlight=False,
            soft_wrap=True,
        )
        out.print(
            f"Last completed ingest: {st.last_run_at or 'none'} (staleness {dur(st.staleness_s)}).", highlight=False
        )
        out.print(
            f"Index lag (indexed − source changed): max {dur(st.lag_max_s)}, p95 {dur(st.lag_p95_s)}.", highlight=False
        )
        if st.unindexed_rows:
            out.print(
                f"{st.unindexed_rows} chunks not yet in the lexical index (next ingest repairs it).", highlight=False
            )
        from citewise.store.pg_replication import replication_line

        if replication_line(st.replication):
            out.print(replication_line(st.replication), highlight=False, soft_wrap=True)
        if st.stale:
            t = Table("reason", "waiting", "doc", "source", title=f"{len(st.stale)} stale documents")
            for sd in st.stale[:50]:
                t.add_row(sd.reason, dur(sd.pending_s), sd.doc_id or "-", sd.source)
            out.print(t)
        else:
            out.print("No stale documents: every indexed source matches its file.", highlight=False)
        if st.last_run_errors:
            out.print(
                f"The last ingest skipped {st.last_run_errors} file(s) that failed to load or index; "
                "re-run 'citewise ingest' to see each error.",
                highlight=False,
                soft_wrap=True,
            )
        for line in data["duplicates"]:
            out.print(f"duplicate {line}", markup=False, highlight=False, soft_wrap=True)
        for line in _usage_lines(data["retrievals"]):
            out.print(line, markup=False, highlight=False, soft_wrap=True)
        if threshold is not None:
            out.print(
                ("ALERT: " + "; ".join(st.alerts)) if st.alerts else f"OK: within {dur(threshold)}.",
                highlight=False,
                soft_wrap=True,
            )
    if st.alerts:
        raise typer.Exit(1)


def _usage(idx) -> dict | None:
    """Retrievals per chunk of ``idx`` (:mod:`citewise.usage`), or None for a store that cannot list its chunks."""
    from citewise.usage import usage_report

    return usage_report(idx.store, idx.usage.counts()).as_dict()


def _usage_lines(u: dict | None) -> list[str]:
    if u is None:
        return []
    lines = [
        f"Retrievals: {u['retrievals']} recorded; {u['chunks_retrieved']} of {u['chunks']} chunks retrieved at least once, "
        f"{u['chunks_never_retrieved']} never."
    ]
    docs = u["never_retrieved_documents"]
    if docs:
        lines.append(
            f"{plural(len(docs), 'document')} never retrieved (unnecessary or badly split?): "
            + ", ".join(docs[:20])
            + (f", ... ({len(docs) - 20} more; --json lists all)" if len(docs) > 20 else "")
        )
    return lines


@app.command()
def watch(
    path: Path = typer.Argument(..., help="Folder to keep indexed."),
    index: Optional[Path] = IndexOpt,
    embedder: Optional[str] = typer.Option(None, metavar="SPEC", help=EMBEDDER_HELP),
    policy: Optional[Path] = typer.Option(
        None, "--policy", help="Permission policy YAML (see 'citewise ingest --policy')."
    ),
    debounce: float = typer.Option(1.0, "--debounce", help="Seconds of quiet before re-indexing."),
    rescan: float = typer.Option(3600.0, "--rescan", help="Seconds between full incremental ingests without events."),
    polling: bool = typer.Option(False, "--polling", help="Poll instead of OS file events (network file systems)."),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print each re-index as one JSON line (the 'citewise ingest --json' report) and errors as {\"error\": ...} lines.",
    ),
):
    """Re-index a folder whenever its files change (Ctrl-C stops)."""
    import threading

    from citewise.policy import Policy
    from citewise.watch import FolderWatcher

    if policy is not None:
        Policy.load(policy)  # a bad policy file stops here, not on every re-index
    idx = _open(index, embedder, must_exist=False)

    def on_run(r):
        if as_json:
            print(json.dumps(r.as_dict()), flush=True)
            return
        for e in r.errors:
            err.print(f"skipped {e}", markup=False, highlight=False, soft_wrap=True)
        out.print(
            f"{r.added} added, {r.updated} updated, {r.deleted} deleted, {r.unchanged_text()}, "
            f"{len(r.errors)} errors; {r.chunks_embedded} chunks embedded",
            highlight=False,
        )

    def on_error(m):
        if as_json:
            print(json.dumps({"error": str(m)}), flush=True)
        else:
            err.print(f"error: {m}", markup=False, highlight=False, soft_wrap=True)

    w = FolderWatcher(
        idx, path, debounce=debounce, rescan=rescan, policy=policy, on_run=on_run, on_error=on_error, polling=polling
    )
    err.print(f"watching {w.path} → {idx.path} (Ctrl-C stops)", highlight=False)
    stop = threading.Event()
    try:
        w.run(stop)
    except KeyboardInterrupt:
        stop.set()
        err.print("stopped")


# --- answer commands ---
@app.command()
def calibrate(
    index: Optional[Path] = IndexOpt,
    golden: Optional[Path] = typer.Option(
        None, "--golden", help="Golden set JSONL (id, text, relevant); default: the bundled sample golden.jsonl."
    ),
    out_of_scope: Optional[Path] = typer.Option(
        None,
        "--out-of-scope",
        help="Out-of-scope questions JSONL (id, text); default: the bundled sample out_of_scope.jsonl.",
    ),
    retriever: str = RetrieverOpt,
    fit: str = typer.Option(
        "train",
        "--fit",
        help="train: fit on the train half, report the held-out test half | all: fit on every question.",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the threshold without storing it in the index."),
    as_json: bool = JsonOpt,
):
    """Calibrate the abstention threshold on the train half of a golden set, report the test half, store it."""
    from citewise.answer.calibrate import COLLECT_THRESHOLD, calibrate as run_calibration, read_questions
    from citewise.demo import sample_dir

    idx = _open(index)
    gold_path = golden or sample_dir() / "golden.jsonl"
    gold = read_questions(gold_path, need_relevant=True)
    known = set(idx.store.documents())
    unknown = sorted({d.split("#", 1)[0] for q in gold for d in q.relevant} - known)
    if unknown:
        raise CitewiseError(
            f"{gold_path}: {len(unknown)} relevant document ids are not in the index {idx.path} "
            f"(e.g. '{unknown[0]}'); calibrate with a golden set written for this index's corpus (--golden)"
        )
    oos = read_questions(out_of_scope or sample_dir() / "out_of_scope.jsonl", need_relevant=False)
    if not oos:
        raise CitewiseError("calibration needs at least one out-of-scope question (--out-of-scope)")
    report = run_calibration(lambda q: idx.ask(q, retriever=retriever, threshold=COLLECT_THRESHOLD), gold, oos, fit=fit)
    previous = idx.abstain_threshold
    if not dry_run:
        idx.set_abstain_threshold(report.threshold)
    if as_json:
        out.print_json(
            json.dumps(
                {**report.as_dict(), "previous_threshold": previous, "stored": not dry_run, "index": str(idx.path)}
            )
        )
        return
    t = Table(
        "split",
        "questions",
        "answered correctly",
        "abstained correctly",
        "accuracy",
        title=f"abstention threshold {report.threshold:.4f}, fitted on {fit} (was {previous:.4f})",
    )
    for name, m in (("train", report.train), ("test", report.test)):
        t.add_row(
            name,
            str(m["questions"]),
            f"{m['answered_correctly']}/{m['in_scope']}",
            f"{m['abstained_correctly']}/{m['out_of_scope']}",
            f"{m['accuracy']:.4f}",
        )
    out.print(t)
    out.print("stored in " + str(idx.path / "index.json") if not dry_run else "not stored (--dry-run)", highlight=False)
