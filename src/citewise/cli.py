"""The ``citewise`` command line (Typer).

Every command takes ``--index DIR`` (default: ``$CITEWISE_INDEX`` or
``~/.local/share/citewise/index``); figures can be printed as JSON with ``--json``. Errors are one
line on stderr and exit status 2; never a traceback.
"""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from citewise.core import CitewiseError, Principal

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Evidence-grounded answers over your documents, with retrieval you can measure.")
eval_app = typer.Typer(no_args_is_help=True, help="Measure retrieval quality.")
app.add_typer(eval_app, name="eval")

out = Console()
err = Console(stderr=True)

IndexOpt = typer.Option(None, "--index", help="Index folder (default: $CITEWISE_INDEX or ~/.local/share/citewise/index).")
AsOpt = typer.Option(None, "--as", help="Ask as a principal in this group (repeatable). Default: public documents only.")
KOpt = typer.Option(10, "--k", min=1, max=1000, help="How many results.")
RetrieverOpt = typer.Option("shipped", "--retriever", help="bm25 | dense | hybrid | shipped.")
JsonOpt = typer.Option(False, "--json", help="Print JSON.")


def _principal(groups: Optional[list[str]]) -> Principal:
    return Principal(name="cli", groups=tuple(groups or ()))


@contextmanager
def _progress(total: int, label: str, enabled: bool = True):
    if not enabled or not sys.stderr.isatty():
        yield lambda n: None
        return
    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as p:
        task = p.add_task(label, total=total)
        yield lambda n: p.advance(task, n)


def _open(index: Optional[Path], embedder: Optional[str] = None, must_exist: bool = True, **kw):
    from citewise.index import Index, default_index_dir

    if must_exist and not Index.exists(index):
        raise CitewiseError(f"{index or default_index_dir()}: no index here yet; run 'citewise ingest PATH' first")
    return Index.open(index, embedder=embedder, **kw)


@app.command()
def ingest(
    path: Path = typer.Argument(..., help="Folder (or file) of Markdown, HTML and text documents."),
    index: Optional[Path] = IndexOpt,
    embedder: Optional[str] = typer.Option(None, help="minilm (default) | hashing; fixed when the index is created."),
    default_permission: Optional[str] = typer.Option(None, help="public | deny, for documents without permissions."),
    as_json: bool = JsonOpt,
):
    """Ingest a folder: new and changed documents are indexed, removed ones deleted."""
    from citewise.text.loaders import iter_files

    if not path.exists():
        raise CitewiseError(f"{path}: no such file or folder")
    idx = _open(index, embedder, must_exist=False, default_permission=default_permission)
    total = len(iter_files(path))
    with _progress(total, "ingesting", not as_json) as tick:
        report = idx.ingest(path, progress=tick)
    stats = idx.store.stats()
    if as_json:
        out.print_json(json.dumps({**report.as_dict(), "index": str(idx.path), "documents": stats["documents"], "chunks": stats["chunks"]}))
    else:
        for e in report.errors:
            err.print(f"[yellow]skipped[/] {e}", markup=True, highlight=False, soft_wrap=True)
        out.print(
            f"{report.added} added, {report.updated} updated, {report.unchanged} unchanged, "
            f"{report.deleted} deleted, {len(report.errors)} errors; {report.chunks_embedded} chunks embedded. "
            f"Index {idx.path}: {stats['documents']} documents, {stats['chunks']} chunks.",
            highlight=False, soft_wrap=True,
        )


@app.command()
def search(
    query: str = typer.Argument(..., help="What to look for."),
    index: Optional[Path] = IndexOpt,
    as_: Optional[list[str]] = AsOpt,
    k: int = KOpt,
    retriever: str = RetrieverOpt,
    as_json: bool = JsonOpt,
):
    """Rank chunks for a query."""
    idx = _open(index)
    hits = idx.search(query, k, retriever=retriever, principal=_principal(as_))
    if as_json:
        out.print_json(json.dumps({"hits": [
            {"chunk_id": h.chunk_id, "doc_id": h.doc_id, "title": h.title, "score": h.score, "rank": h.rank, "stage": h.stage}
            for h in hits]}))
        return
    if not hits:
        out.print("no results")
        return
    t = Table("rank", "score", "stage", "doc", "chunk", "title")
    for h in hits:
        t.add_row(str(h.rank), f"{h.score:.4f}", h.stage, h.doc_id, h.chunk_id.split("#", 1)[-1], h.title)
    out.print(t)


def print_answer(ans, as_json: bool) -> None:
    """Print an Answer as text with its sources, or as JSON."""
    if as_json:
        out.print_json(json.dumps({
            "answer": ans.text,
            "outcome": ans.outcome,
            "citations": [{"doc_id": c.doc_id, "title": c.title, "version": c.version, "updated": c.updated,
                           "chunk_id": c.chunk_id, "start": c.start, "end": c.end} for c in ans.citations],
            "retrieved_ids": ans.retrieved_ids,
            "used_ids": ans.used_ids,
            "best_score": ans.best_score,
        }))
        return
    out.print(ans.text, highlight=False, markup=False, soft_wrap=True)
    if ans.citations:
        out.print("Sources:")
        for c in ans.citations:
            bits = [b for b in (f"version {c.version}" if c.version else "", f"updated {c.updated}" if c.updated else "") if b]
            out.print(f"  [doc:{c.doc_id}] {c.title}" + (f" ({', '.join(bits)})" if bits else ""),
                      highlight=False, markup=False, soft_wrap=True)


@app.command()
def ask(
    question: str = typer.Argument(..., help="A question in words."),
    index: Optional[Path] = IndexOpt,
    as_: Optional[list[str]] = AsOpt,
    k: int = typer.Option(5, "--k", min=1, max=100, help="Chunks retrieved as evidence."),
    retriever: str = RetrieverOpt,
    as_json: bool = JsonOpt,
):
    """Answer a question from the documents, citing every sentence, or abstain."""
    idx = _open(index)
    print_answer(idx.ask(question, k, retriever=retriever, principal=_principal(as_)), as_json)


@eval_app.command("beir")
def eval_beir(
    directory: Path = typer.Argument(..., help="A BEIR dataset folder (corpus.jsonl, queries.jsonl, qrels/)."),
    split: str = typer.Option("test", help="Qrels split: qrels/<split>.tsv."),
    retriever: str = typer.Option("hybrid", "--retriever", help="bm25 | dense | hybrid | shipped."),
    index: Optional[Path] = typer.Option(None, "--index", help="Index folder (default: one per dataset and embedder under the data folder)."),
    embedder: str = typer.Option("minilm", help="minilm | hashing."),
    run_file: Optional[Path] = typer.Option(None, "--run-file", help="Also write the run in TREC format here."),
    as_json: bool = JsonOpt,
):
    """Index a BEIR dataset (once) and print nDCG@10, MRR@10, recall@10 and recall@100."""
    import time

    from citewise.evaluation.beir import BEIR_METRICS, BeirDataset, PrecomputedEmbedder, evaluate_ranked, read_queries, run_queries
    from citewise.evaluation.trec import read_qrels, write_run
    from citewise.index import default_index_dir
    from citewise.retrieval.retrievers import make_retriever

    ds = BeirDataset(directory)
    ds.check(split)
    index = index or default_index_dir().parent / "beir" / f"{ds.name}-{embedder}"
    idx = _open(index, embedder, must_exist=False)
    t0 = time.perf_counter()
    n_docs = sum(1 for _ in ds.corpus.open("rb"))
    with _progress(n_docs, f"indexing {ds.name}", not as_json) as tick:
        report = idx.ingestor().ingest_documents(ds.documents(), progress=tick)
    t_index = time.perf_counter() - t0
    qrels = read_qrels(ds.qrels_path(split))
    queries = {q: t for q, t in read_queries(ds.root / "queries.jsonl").items() if q in qrels}
    missing = sorted(set(qrels) - set(queries))
    if missing:
        raise CitewiseError(f"{ds.root / 'queries.jsonl'}: {len(missing)} qrels queries have no text (e.g. {missing[0]})")
    t1 = time.perf_counter()
    r = make_retriever(retriever, idx.store, PrecomputedEmbedder(idx.embedder, [queries[q] for q in sorted(queries)]))
    with _progress(len(queries), f"querying ({retriever})", not as_json) as tick:
        ranked = run_queries(r, queries, depth=100, progress=tick)
    t_query = time.perf_counter() - t1
    ev = evaluate_ranked(qrels, ranked, BEIR_METRICS)
    if run_file:
        write_run(run_file, ranked, tag=f"citewise-{retriever}")
    result = {
        "dataset": ds.name, "split": split, "retriever": retriever, "embedder": idx.embedder.name,
        "queries": len(queries), "documents": idx.store.stats()["documents"],
        "metrics": ev.means, "index_seconds": round(t_index, 2), "query_seconds": round(t_query, 2),
        "chunks_embedded": report.chunks_embedded, "index": str(idx.path),
    }
    if as_json:
        out.print_json(json.dumps(result))
        return
    t = Table(title=f"{ds.name} {split} · {retriever} · {len(queries)} queries", *["metric", "value"])
    for m, v in ev.means.items():
        t.add_row(m, f"{v:.4f}")
    out.print(t)
    out.print(f"indexed in {t_index:.1f}s ({report.chunks_embedded} chunks embedded), queried in {t_query:.1f}s", highlight=False)


@app.command()
def demo(
    index: Optional[Path] = typer.Option(None, "--index", help="Index folder for the sample corpus (default: the data folder's 'demo')."),
    embedder: str = typer.Option("minilm", help="minilm | hashing."),
):
    """Ingest the bundled sample corpus, answer sample questions, abstain once, show a restricted answer."""
    from citewise.demo import run_demo
    from citewise.index import default_index_dir

    run_demo(index or default_index_dir().parent / "demo", embedder, out, err, print_answer, _progress)


# --- lifecycle commands (status, watch) ---

# --- answer commands ---

# --- tools commands (tools list/call) ---

# --- evaluation commands (eval run/compare, gate, report) ---

# --- decide commands (recommend) ---


def main() -> None:
    """Entry point: run the Typer app and turn known errors into one line and exit status 2."""
    try:
        app(standalone_mode=False)
    except CitewiseError as e:
        err.print(f"error: {e}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt):
        err.print("aborted")
        sys.exit(130)
    except Exception as e:  # click usage errors and anything unexpected: one line, no traceback
        import click

        if isinstance(e, click.exceptions.ClickException):
            e.show()
            sys.exit(e.exit_code)
        if isinstance(e, click.exceptions.Exit):
            sys.exit(e.exit_code)
        err.print(f"error: {type(e).__name__}: {e}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
