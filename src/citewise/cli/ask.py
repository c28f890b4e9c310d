"""``citewise search`` and ``citewise ask``, and how hits and answers print."""

import json
from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from citewise import cli_llm
from citewise.cli.common import (
    AsOpt,
    AskRetrieverOpt,
    EXIT_NO_ANSWER,
    FilterOpt,
    IndexOpt,
    JsonOpt,
    NO_ANSWER,
    QueryEmbedderOpt,
    RerankerOpt,
    SearchKOpt,
    SearchRetrieverOpt,
    SettingsRerankDepthOpt,
    StoreOpt,
    Table,
    _blas_threads_sleep_at_once,
    _check_db,
    _check_words,
    _citewise,
    _filters,
    _preload_model,
    _principal,
    _warn_unknown_groups,
    _without_gc,
    app,
    err,
    out,
    terminal_safe,
)


@app.command()
@_without_gc
def search(
    query: str = typer.Argument(..., help="What to look for."),
    index: Optional[Path] = IndexOpt,
    as_: Optional[list[str]] = AsOpt,
    k: Optional[int] = SearchKOpt,
    retriever: Optional[str] = SearchRetrieverOpt,
    as_of: Optional[str] = typer.Option(
        None, "--as-of", metavar="YYYY-MM-DD", help="Only documents in force on this date (YYYY-MM-DD)."
    ),
    version: Optional[str] = typer.Option(None, "--version", help="Only documents with this version."),
    filter_: Optional[list[str]] = FilterOpt,
    store: Optional[str] = StoreOpt,
    reranker: Optional[str] = RerankerOpt,
    rerank_depth: Optional[int] = SettingsRerankDepthOpt,
    embedder: Optional[str] = QueryEmbedderOpt,
    as_json: bool = JsonOpt,
):
    """Rank chunks for a query; each hit shows its best-matching passage and that passage's
    character offsets in the source file."""
    with _blas_threads_sleep_at_once():
        import numpy  # noqa: F401 - loaded here (and the variable unset) before any other thread starts
    from citewise.settings import load_settings

    lexical = (retriever or load_settings().search.retriever) == "bm25"
    if not lexical and query.strip():
        _preload_model(index)
    from citewise.index import check_query
    from citewise.retrieval.snippets import Snippet
    from citewise.service.payloads import hits_missing_words, search_json

    # read by hits_missing_words after the hits; imported now, it loads while the query model does
    import citewise.answer.evidence  # noqa: F401

    check_query(query)
    _check_words(query, "query")
    cw = _citewise(
        index,
        {
            "search.k": k,
            "search.retriever": retriever,
            "search.reranker": reranker,
            "search.rerank_depth": rerank_depth,
        },
        embedder=embedder,
        preload=not lexical,
        store=store,
        read_only=True,
    )
    idx = cw.index
    principal = _principal(as_)
    _warn_unknown_groups(idx, as_)
    hits = cw.search(query, principal, filters=_filters(as_of, version, filter_))
    if as_json:
        out.print_json(json.dumps(search_json(idx.store, query, hits)))
        return
    snips = {
        h.chunk_id: Snippet(h.snippet, h.snippet_start, h.snippet_end) for h in hits if h.snippet_start is not None
    }
    # words of the query no hit holds (title or text): the hits match part of it, or only by meaning
    missing = hits_missing_words(query, hits)
    if not hits:
        empty = idx.store.stats()["documents"] == 0
        out.print(
            "no results"
            + (
                f" (the index {idx.path} holds no documents; run 'citewise ingest PATH --index {idx.path}')"
                if empty
                else ""
            ),
            highlight=False,
            soft_wrap=True,
        )
        return
    _print_hits(hits, snips)
    if missing:
        from citewise.answer.evidence import content_terms
        from citewise.text.analyzer import analyze

        every = not set(content_terms(query)) - {t for w in missing for t in analyze(w)}
        err.print(
            "note: "
            + (
                "none of these results contains a word of the query; they are only the nearest by meaning"
                if every
                else "no result contains " + ", ".join(f"'{w}'" for w in missing) + "; they match the rest of the query"
            ),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


#: Narrowest the title and snippet columns of the search table may get together (characters);
#: below that the hits are printed one block each instead.
_MIN_TEXT_COLUMNS = 36


def _print_hits(hits, snips) -> None:
    """The ``citewise search`` hits for a person: a table when its id columns fit whole in the
    console width next to at least :data:`_MIN_TEXT_COLUMNS` characters of title and snippet
    (the title and snippet wrap), else one block per hit (rank, full chunk id, score and stage on
    the first line, then the title and the snippet, wrapped). Ids are never shortened; the
    snippet shows at most 160 characters of the passage (``--json`` has it whole)."""
    rows = []
    for h in hits:
        sn = snips.get(h.chunk_id)
        passage = terminal_safe(" ".join(sn.text.split())) if sn else ""
        if len(passage) > 160:
            passage = passage[:159].rstrip() + "…"
        rows.append((h, passage, f"[{sn.start}-{sn.end})" if sn else ""))
    slug = lambda h: h.chunk_id.split("#", 1)[-1]  # noqa: E731
    fixed = [
        max(4, *(len(str(h.rank)) for h in hits)),
        max(5, *(len(f"{h.score:.4f}") for h in hits)),
        max(5, *(len(h.stage) for h in hits)),
        max(3, *(len(h.doc_id) for h in hits)),
        max(5, *(len(slug(h)) for h in hits)),
    ]
    borders = 3 * 7 + 1  # "│ " + " " around each of 7 cells, and the last "│"
    if out.width - sum(fixed) - borders >= _MIN_TEXT_COLUMNS:
        t = Table("rank", "score", "stage")
        t.add_column("doc", no_wrap=True, min_width=fixed[3])
        t.add_column("chunk", no_wrap=True, min_width=fixed[4])
        t.add_column("title", ratio=1, overflow="fold")
        t.add_column("snippet [chars in source)", ratio=2, overflow="fold")
        for h, passage, offsets in rows:
            t.add_row(
                str(h.rank),
                f"{h.score:.4f}",
                h.stage,
                terminal_safe(h.doc_id),
                terminal_safe(slug(h)),
                terminal_safe(h.title),
                Text.assemble(passage, (f" {offsets}", "dim")) if offsets else "",
            )
        out.print(t)
        return
    import textwrap

    width = max(20, out.width - 4)
    for i, (h, passage, offsets) in enumerate(rows):
        if i:
            out.print()
        out.print(f"{h.rank}. {h.chunk_id}  (score {h.score:.4f}, {h.stage})", highlight=False, soft_wrap=True)
        for line in textwrap.wrap(h.title, width) if h.title else []:
            out.print("   " + line, highlight=False, soft_wrap=True)
        for line in textwrap.wrap(f"{passage} {offsets}".strip(), width) if passage or offsets else []:
            out.print("   " + line, highlight=False, soft_wrap=True)


def print_answer(ans, as_json: bool) -> None:
    """Print an Answer as text with its sources, or as JSON."""
    if as_json:
        from citewise.service.payloads import answer_to_dict

        out.print_json(json.dumps(answer_to_dict(ans)))
        return
    fixes = getattr(ans, "corrections", [])
    if fixes:  # the question was answered as corrected: say how it was read
        out.print(
            "Read " + ", ".join(f"“{c['typo']}” as “{c['fix']}”" for c in fixes) + ".",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    out.print(ans.text, highlight=False, markup=False, soft_wrap=True)
    for note in getattr(ans, "notes", []):
        out.print(f"Note: {note}", highlight=False, markup=False, soft_wrap=True)
    controller = ans.evidence.get("controller") if isinstance(ans.evidence, dict) else None
    if controller is None and ans.outcome == "abstained" and ans.reason is not None:
        # say why, as --json does (reason) and as the scoped answer below does
        out.print(f"Why: {ans.reason.sentence().rstrip('.')}.", highlight=False, markup=False, soft_wrap=True)
    if controller is not None:  # the evidence-gap controller: say why, as --json does (abstain_reason, scope)
        scope = controller.get("scope") or {}
        if ans.outcome == "abstained":
            searched = (
                f" (searched {scope['description']})" if scope.get("doc_ids") and scope.get("description") else ""
            )
            why = ans.reason.sentence() if ans.reason is not None else "nothing in scope was retrieved"
            out.print(f"Why: {why}{searched}.", highlight=False, markup=False, soft_wrap=True)
        if scope.get("unavailable"):
            out.print(
                "Unavailable (missing, or not readable by you; the two look the same): "
                + ", ".join(scope["unavailable"]),
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
    if ans.citations or ans.tool_calls:
        out.print("Sources:")
        for c in ans.citations:
            bits = [
                b
                for b in (f"version {c.version}" if c.version else "", f"updated {c.updated}" if c.updated else "")
                if b
            ]
            out.print(
                f"  [doc:{c.doc_id}] {c.title}" + (f" ({', '.join(bits)})" if bits else ""),
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
    for tc in ans.tool_calls:
        args = ", ".join(f"{k}={v!r}" for k, v in tc["arguments"].items())
        status = f"error: {tc['error']}" if tc.get("error") else f"{tc.get('rows')} row(s)"
        out.print(f"  [tool:{tc['tool']}] {tc['tool']}({args}) -> {status}", highlight=False, soft_wrap=True)


@app.command()
def ask(
    question: str = typer.Argument(..., help="A question in words."),
    index: Optional[Path] = IndexOpt,
    as_: Optional[list[str]] = AsOpt,
    k: Optional[int] = typer.Option(
        None, "--k", min=1, max=100, metavar="N", help="Chunks retrieved as evidence. Default: setting answer.k (5)."
    ),
    retriever: Optional[str] = AskRetrieverOpt,
    as_of: Optional[str] = typer.Option(
        None, "--as-of", metavar="YYYY-MM-DD", help="Only documents in force on this date (YYYY-MM-DD)."
    ),
    version: Optional[str] = typer.Option(None, "--version", help="Only documents with this version."),
    db: Optional[str] = typer.Option(
        None,
        "--db",
        help="Records database for record questions (sqlite:///PATH or a path). Default: setting records.database ($CITEWISE_DB); none: no records routing.",
    ),
    generator: Optional[str] = typer.Option(
        None, "--generator", help="extractive (no LLM) | llm. Default: setting answer.generator (extractive)."
    ),
    llm: bool = typer.Option(
        False,
        "--llm",
        help="Same as --generator llm: the OpenAI-compatible endpoint of the llm settings (llm.base_url, llm.model, llm.api_key; CITEWISE_LLM_BASE_URL ...).",
    ),
    agent: Optional[bool] = typer.Option(
        None,
        "--agent",
        help="Answer with the ReAct agent over the tools (needs the llm settings). Default: setting routing.agent.",
    ),
    scope: Optional[list[str]] = typer.Option(
        None,
        "--scope",
        help="Answer only from this document id or folder prefix (repeatable); never widens past --as. Turns on the evidence-gap controller.",
    ),
    max_rounds: Optional[int] = typer.Option(
        None,
        "--max-rounds",
        help="Retrieval rounds allowed, the first search included (evidence-gap controller; default 2).",
    ),
    deadline_ms: Optional[float] = typer.Option(
        None,
        "--deadline-ms",
        help="No follow-up retrieval round starts after this many milliseconds (evidence-gap controller).",
    ),
    budget_tokens: Optional[int] = typer.Option(
        None, "--budget-tokens", help="Token budget of the assembled evidence (evidence-gap controller; default 4000)."
    ),
    requirements: Optional[Path] = typer.Option(
        None,
        "--requirements",
        help="Domain requirements YAML (required checks per kind of question); turns on the evidence-gap controller.",
    ),
    filter_: Optional[list[str]] = FilterOpt,
    store: Optional[str] = StoreOpt,
    reranker: Optional[str] = RerankerOpt,
    rerank_depth: Optional[int] = SettingsRerankDepthOpt,
    llm_url: Optional[str] = cli_llm.LlmUrlOpt,
    llm_model: Optional[str] = cli_llm.LlmModelOpt,
    llm_timeout: Optional[float] = cli_llm.LlmTimeoutOpt,
    llm_context: Optional[int] = cli_llm.LlmContextOpt,
    stream: bool = cli_llm.StreamOpt,
    show_prompt: bool = cli_llm.ShowPromptOpt,
    embedder: Optional[str] = QueryEmbedderOpt,
    as_json: bool = JsonOpt,
    fail_on_abstain: bool = typer.Option(
        False,
        "--fail-on-abstain",
        help=f"Exit with status {EXIT_NO_ANSWER} when there is no answer (outcome abstained, gap or not_established), for scripts and CI; the answer is printed as usual.",
    ),
):
    """Answer a question from the documents, citing every sentence, or abstain.

    With --scope, --max-rounds, --deadline-ms, --budget-tokens or --requirements the evidence-gap
    controller answers: outcome supported / gap / conflict / not_established / abstained."""
    if question.strip():
        _preload_model(index)
    from citewise.api import AskOptions
    from citewise.index import check_query

    check_query(question)
    _check_words(question, "question")
    _check_db(db)
    cw = _citewise(
        index,
        {"records.database": db, **cli_llm.llm_overrides(llm_url, llm_model, llm_timeout, llm_context)},
        embedder=embedder,
        preload=True,
        store=store,
        read_only=True,
    )
    principal = _principal(as_)  # an empty group is refused before anything else is said
    _warn_unknown_groups(cw.index, as_)
    options = AskOptions(
        k=k,
        retriever=retriever,
        filters=_filters(as_of, version, filter_),
        generator="llm" if llm else generator,
        reranker=reranker,
        rerank_depth=rerank_depth,
        scope=tuple(scope or ()),
        max_rounds=max_rounds,
        deadline_ms=deadline_ms,
        budget_tokens=budget_tokens,
        requirements=requirements,
        agent=agent,
    )
    ans = (
        cli_llm.ask_streaming(cw, question, principal, options, out)
        if stream and not as_json
        else cw.ask(question, principal, options)
    )
    if show_prompt and not as_json:
        cli_llm.print_prompt(out, ans)
    print_answer(ans, as_json)
    if fail_on_abstain and ans.outcome in NO_ANSWER:
        raise typer.Exit(EXIT_NO_ANSWER)
