"""``citewise eval beir | conditions | squad | tools``."""

import json
from pathlib import Path
from typing import Optional

import typer

from citewise.core import CitewiseError
from citewise.cli.common import (
    EMBEDDER_HELP,
    JsonOpt,
    RETRIEVER_HELP,
    RetrieverOpt,
    StoreOpt,
    Table,
    _check_db,
    _open,
    _progress,
    err,
    eval_app,
    out,
)
from citewise.cli.tools import DbOpt


@eval_app.command("beir")
def eval_beir(
    directory: Path = typer.Argument(..., help="A BEIR dataset folder (corpus.jsonl, queries.jsonl, qrels/)."),
    split: str = typer.Option("test", help="Qrels split: qrels/<split>.tsv."),
    retriever: str = typer.Option("hybrid", "--retriever", help=RETRIEVER_HELP),
    index: Optional[Path] = typer.Option(
        None, "--index", help="Index folder (default: one per dataset and embedder under the data folder)."
    ),
    embedder: str = typer.Option("minilm", metavar="SPEC", help=EMBEDDER_HELP),
    run_file: Optional[Path] = typer.Option(None, "--run-file", help="Also write the run in TREC format here."),
    store: Optional[str] = StoreOpt,
    chunk_vectors: Optional[str] = typer.Option(
        None,
        "--chunk-vectors",
        metavar="MODE",
        help="units-mean (default) | chunk: how a new index makes chunk vectors (docs/embedders.md).",
    ),
    as_json: bool = JsonOpt,
):
    """Index a BEIR dataset (once) and print nDCG@10, MRR@10, recall@10 and recall@100."""
    import time

    from citewise.evaluation.beir import BEIR_METRICS, BeirDataset, PrecomputedEmbedder, evaluate_ranked, run_queries
    from citewise.evaluation.trec import write_run
    from citewise.index import default_index_dir
    from citewise.retrieval.retrievers import make_retriever

    ds = BeirDataset(directory)
    ds.check(split)
    index = index or default_index_dir().parent / "beir" / f"{ds.name}-{embedder}"
    idx = _open(index, embedder, must_exist=False, store=store, chunk_vectors=chunk_vectors)
    t0 = time.perf_counter()
    n_docs = sum(1 for _ in ds.corpus.open("rb"))
    with _progress(n_docs, f"indexing {ds.name}", not as_json) as tick:
        report = idx.ingestor(units=False).ingest_documents(ds.documents(), progress=tick)
    t_index = time.perf_counter() - t0
    qrels, queries = ds.load_split(split)
    t1 = time.perf_counter()
    r = make_retriever(retriever, idx.store, PrecomputedEmbedder(idx.embedder, [queries[q] for q in sorted(queries)]))
    with _progress(len(queries), f"querying ({retriever})", not as_json) as tick:
        ranked = run_queries(r, queries, depth=100, progress=tick)
    t_query = time.perf_counter() - t1
    ev = evaluate_ranked(qrels, ranked, BEIR_METRICS)
    if run_file:
        write_run(run_file, ranked, tag=f"citewise-{retriever}")
    result = {
        "dataset": ds.name,
        "split": split,
        "retriever": retriever,
        "embedder": idx.embedder.name,
        "queries": len(queries),
        "documents": idx.store.stats()["documents"],
        "metrics": ev.means,
        "index_seconds": round(t_index, 2),
        "query_seconds": round(t_query, 2),
        "chunks_embedded": report.chunks_embedded,
        "index": str(idx.path),
    }
    if as_json:
        out.print_json(json.dumps(result))
        return
    t = Table("metric", "value", title=f"{ds.name} {split} · {retriever} · {len(queries)} queries")
    for m, v in ev.means.items():
        t.add_row(m, f"{v:.4f}")
    out.print(t)
    out.print(
        f"indexed in {t_index:.1f}s ({report.chunks_embedded} chunks embedded), queried in {t_query:.1f}s",
        highlight=False,
    )


@eval_app.command("conditions")
def eval_conditions(
    question_set: Path = typer.Argument(
        ..., metavar="SET", help="Conditions question set (JSONL), e.g. src/citewise/sample/payment/questions.jsonl."
    ),
    corpus: Optional[Path] = typer.Option(
        None,
        "--corpus",
        help="Folder the set's questions are about (default: corpus/ beside SET); ingested into --index.",
    ),
    requirements: Optional[Path] = typer.Option(
        None, "--requirements", help="Domain requirements YAML (default: requirements.yaml beside SET, if present)."
    ),
    index: Optional[Path] = typer.Option(
        None, "--index", help="Index folder (default: one per set and embedder under the data folder)."
    ),
    embedder: str = typer.Option("minilm", metavar="SPEC", help=EMBEDDER_HELP),
    split: str = typer.Option(
        "dev", "--split", help="dev | heldout | all (the held-out half is for the final measurement)."
    ),
    workload: Optional[Path] = typer.Option(
        None,
        "--workload",
        help="Workload YAML whose prices the cost model uses (default: the bundled sample workload's example prices).",
    ),
    latency_target_ms: float = typer.Option(
        2000.0, "--latency-target-ms", help="p95 latency target reported per condition."
    ),
    max_rounds: int = typer.Option(
        2, "--max-rounds", min=1, metavar="N", help="Retrieval rounds of the adaptive route."
    ),
    html_out: Optional[Path] = typer.Option(
        None, "--html", help="Also write the HTML report (table, found/retained/used log, position test) here."
    ),
    as_json: bool = JsonOpt,
):
    """Five conditions (flat top-k, strong baseline, intact documents, adaptive, oracle) on one question set."""
    from citewise.answer.gaps import Requirements
    from citewise.decide import load_workload
    from citewise.demo import sample_dir
    from citewise.evaluation.conditions import load_questions, run_conditions, to_html, to_markdown
    from citewise.index import default_index_dir

    if split not in ("dev", "heldout", "all"):
        raise CitewiseError(f"--split must be dev, heldout or all, got '{split}'")
    questions = [q for q in load_questions(question_set) if split == "all" or q.split == split]
    if not questions:
        raise CitewiseError(f"{question_set}: no questions in split '{split}'")
    corpus = corpus or question_set.parent / "corpus"
    if not corpus.is_dir():
        raise CitewiseError(f"--corpus: {corpus} is not a folder")
    req_path = requirements or (question_set.parent / "requirements.yaml")
    reqs = Requirements.load(req_path) if requirements or req_path.exists() else None
    prices = load_workload(workload or sample_dir() / "workload.yaml").prices
    index = index or default_index_dir().parent / "conditions" / f"{question_set.parent.name}-{embedder}"
    idx = _open(index, embedder, must_exist=False)
    report = idx.ingest(corpus)
    for e in report.errors:
        err.print(f"skipped {e}", markup=False, highlight=False)
    result = run_conditions(idx, questions, reqs, prices, latency_target_ms, max_rounds=max_rounds)
    result["settings"]["split"] = split
    if html_out:
        html_out.write_text(to_html(result), encoding="utf-8")
    if as_json:
        out.print_json(json.dumps(result))
        return
    out.print(to_markdown(result), highlight=False, markup=False, soft_wrap=True)
    a = result["summary"]["adaptive"]
    if a.get("questions"):
        out.print(
            f"adaptive: fallback rate {a['fallback_rate']:.2%}; expected cost per request "
            f"{a['adaptive_route_cost_usd']:.6f} USD (initial path + fallback rate x incremental fallback cost)",
            highlight=False,
        )
    na = result["summary"]["intact_documents"].get("not_applicable", 0)
    if na:
        out.print(
            f"intact documents: {na} question(s) not applicable (packet larger than the intact budget)", highlight=False
        )
    changed = sum(p["changed"] for p in result["position_test"])
    out.print(
        f"position test (intact documents): {changed} of {len(result['position_test'])} questions changed "
        "outcome or citations when the decisive clause moved",
        highlight=False,
    )


@eval_app.command("squad")
def eval_squad(
    directory: Path = typer.Argument(
        ..., help="SQuAD 2.0 folder (dev-v2.0.json or dev-v2.0.reconstructed.json) or the file."
    ),
    limit: Optional[int] = typer.Option(
        None, "--limit", min=1, metavar="N", help="Answer only this many questions (deterministic sample)."
    ),
    index: Optional[Path] = typer.Option(
        None, "--index", help="Index folder (default: one per embedder under the data folder)."
    ),
    embedder: str = typer.Option("minilm", metavar="SPEC", help=EMBEDDER_HELP),
    retriever: str = RetrieverOpt,
    k: int = typer.Option(5, "--k", min=1, max=100, metavar="N", help="Chunks retrieved per question."),
    threshold: Optional[float] = typer.Option(
        None, "--threshold", help="Fixed abstention threshold (default: calibrated on the train half)."
    ),
    articles: Optional[str] = typer.Option(
        None, "--articles", help="train | test: only those articles' questions (the answer selector trains on train)."
    ),
    as_json: bool = JsonOpt,
):
    """Answer SQuAD 2.0 questions through retrieval with the extractive generator: EM/F1, abstention, citations."""
    from citewise.evaluation.squad import evaluate_squad, load_squad, sample_questions
    from citewise.index import default_index_dir

    data = load_squad(directory)
    index = index or default_index_dir().parent / "squad" / f"squad-v2-dev-{embedder}"
    idx = _open(index, embedder, must_exist=False)
    n = len(sample_questions(data.questions, limit))
    with _progress(n, "answering", not as_json) as tick:
        result = evaluate_squad(
            idx, data, limit=limit, retriever=retriever, k=k, threshold=threshold, progress=tick, articles=articles
        )
    if as_json:
        out.print_json(json.dumps(result))
        return
    t = Table(
        "metric",
        "all",
        "test half",
        title=f"SQuAD 2.0 dev · {n} questions · threshold {result['threshold']:.4f} ({result['threshold_source']})",
    )
    for key in (
        "exact",
        "f1",
        "HasAns_exact",
        "HasAns_f1",
        "NoAns_exact",
        "abstention_precision",
        "abstention_recall",
        "citation_precision",
        "gold_cited",
        "answer_in_quote",
    ):
        a, b = result["all"][key], result["test"][key]
        t.add_row(key, "-" if a is None else f"{a:.4f}", "-" if b is None else f"{b:.4f}")
    out.print(t)
    aa = result["always_abstain_f1"]
    out.print(
        f"always abstaining on the same questions: F1 {aa['all']:.4f} (all), {aa['test']:.4f} (test half); "
        f"articles: {result['articles']}",
        highlight=False,
    )
    s = result["seconds"]
    out.print(
        f"ingest {s['ingest']}s, question embeddings {s['embed_questions']}s, sentence embeddings {s['embed_units']}s, "
        f"answering {s['answer']}s ({s['per_question_ms']} ms/question)",
        highlight=False,
    )


# --- tools commands (tools list/call) ---


@eval_app.command("tools")
def eval_tools(
    routing: Optional[Path] = typer.Option(
        None, "--routing", help="Routing set JSONL (default: the bundled sample/routing.jsonl)."
    ),
    index: Optional[Path] = typer.Option(
        None, "--index", help="Index of the set's documents (default: the data folder's 'demo', built if missing)."
    ),
    db: Optional[str] = DbOpt,
    config: Optional[Path] = typer.Option(
        None,
        "--config",
        help="Settings file with the records configuration of a routing set that is not the sample's (records database, templates, entities).",
    ),
    bfcl: Optional[str] = typer.Option(
        None,
        "--bfcl",
        help="Also run BFCL categories from ../shared/data/bfcl, comma-separated, e.g. simple,irrelevance (also multiple, parallel_multiple).",
    ),
    bfcl_dir: Optional[Path] = typer.Option(
        None, "--bfcl-dir", help="BFCL data folder (default: $CITEWISE_SHARED_DATA/bfcl or ../shared/data/bfcl)."
    ),
    limit: Optional[int] = typer.Option(
        None, "--limit", min=1, metavar="N", help="BFCL: first N entries of each category only."
    ),
    llm: bool = typer.Option(
        False,
        "--llm",
        help="Also run the LLM router (the llm settings: llm.base_url, llm.model, and the llm.router overrides; CITEWISE_LLM_*).",
    ),
    as_json: bool = JsonOpt,
):
    """Tool selection accuracy (TSA), route accuracy and wrong-source count: rule router vs embedding baseline (vs LLM router)."""
    import os

    from citewise.demo import SAMPLE_MARKER_DOC, sample_dir
    from citewise.evaluation.routing_eval import evaluate_tools
    from citewise.index import Index, default_index_dir
    from citewise.settings import load_settings
    from citewise.tools.tsa import load_routing_set

    _check_db(db)
    routing_file = Path(routing or sample_dir() / "routing.jsonl").resolve()
    cases = load_routing_set(routing_file)
    sample = routing_file.is_relative_to(sample_dir().resolve())
    index = index or default_index_dir().parent / "demo"
    if not Index.exists(index) and sample:
        err.print(f"building the sample index in {index} ...", highlight=False)
        Index.open(index, embedder="minilm").ingest(sample_dir() / "corpus")
    idx = _open(index)
    if sample and SAMPLE_MARKER_DOC not in idx.store.documents():
        raise CitewiseError(
            f"{routing_file}: this routing set is written for the bundled sample corpus, which is not in "
            f"the index {idx.path}; use the demo index (citewise demo) or pass --routing with your own set"
        )
    env = {**os.environ, "CITEWISE_CONFIG": str(config)} if config else None
    settings = load_settings(None if sample else idx.path, env=env)
    result = {
        "routing_set": str(routing or "sample/routing.jsonl"),
        **evaluate_tools(
            idx,
            cases,
            settings,
            sample=sample,
            db=db,
            llm=llm,
            bfcl=[c.strip() for c in (bfcl or "").split(",") if c.strip()],
            bfcl_dir=bfcl_dir,
            limit=limit,
        ),
    }
    if as_json:
        out.print_json(json.dumps(result))
        return
    t = Table(
        "router",
        "slice",
        "cases",
        "TSA",
        "route acc",
        "wrong source",
        "arg cases",
        "arg acc",
        title=f"Tool selection · {len(cases)} queries",
    )
    for rep in result["routers"]:
        for sl, m in [("all", rep["overall"]), *rep["per_kind"].items()]:
            t.add_row(
                rep["router"],
                sl,
                str(m["cases"]),
                f"{m['tsa']:.3f}",
                f"{m['route_accuracy']:.3f}",
                str(m["wrong_source"]),
                str(m["arg_cases"]),
                "-" if m["arg_accuracy"] is None else f"{m['arg_accuracy']:.3f}",
            )
    out.print(t)
    for category, by in (result.get("bfcl") or {}).items():
        for name, m in by.items():
            out.print(
                f"BFCL {category} · {name}: {m['cases']} cases, TSA {m['tsa']:.3f}, arg accuracy "
                f"{'-' if m['arg_accuracy'] is None else format(m['arg_accuracy'], '.3f')}",
                highlight=False,
            )


# --- evaluation commands (eval run/compare, gate, report) ---
