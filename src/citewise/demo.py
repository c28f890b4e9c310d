"""``citewise demo``: the main job on the bundled sample corpus (a help centre for "Ledgerly").

Ingests ``citewise/sample/corpus`` into an index folder, then, following ``sample/demo.yaml``:
answers three sample questions with citations, shows one abstention, and asks one question twice:
anonymously (the restricted document stays invisible) and as a member of the group allowed to
read it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import yaml
from rich.text import Text

from citewise.core import Principal, sample_dir  # noqa: F401 - sample_dir re-exported
from citewise.index import Index

#: A document of the sample corpus: an index holding it holds the sample (``eval tools`` checks
#: that the bundled routing set is run on the corpus it was written for).
SAMPLE_MARKER_DOC = "help/billing/daily-transaction-limits"

#: The question the demo's closing "Try it yourself" line suggests (the sample corpus answers it).
TRY_QUESTION = "How do I rotate the SAML signing certificate in Okta?"


def command_name(argv0: str | None = None) -> str:
    """How to type citewise again in the shell that ran it: ``citewise`` when that name on
    ``PATH`` is this program (or when it was not started as a ``citewise`` script, e.g. ``python -m
    citewise.cli``), else the path it was started by (``.venv/bin/citewise`` after the README's
    install, where ``citewise`` alone is "command not found")."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    if not argv0 or os.path.basename(argv0) != "citewise":
        return "citewise"
    on_path = shutil.which("citewise")
    if on_path and os.path.realpath(on_path) == os.path.realpath(argv0):
        return "citewise"
    return argv0


#: First line of the settings file the demo writes; a file opening otherwise is the user's.
DEMO_SETTINGS_MARK = "# written by citewise demo: the sample records and their named queries for record questions"


def configure_sample_records(index_dir: Path) -> None:
    """Write ``<index>/citewise.toml`` naming the sample records database (built once in the
    cache folder) and this installation's record tools, so record questions asked of the demo
    index ("What is the status of invoice 2041?") reach the sample's record tools. A file the
    demo wrote before (it opens with :data:`DEMO_SETTINGS_MARK`) is brought up to date: it names
    files of the installation that wrote it, which may since have moved or been deleted. A
    settings file of the user's is left as it is."""
    from citewise.settings import FILE_NAME
    from citewise.tools.records import build_sample_db, sample_tools_yaml

    path = Path(index_dir) / FILE_NAME
    old = path.read_text(encoding="utf-8") if path.exists() else None
    if old is not None and not old.startswith(DEMO_SETTINGS_MARK):
        return
    text = (
        f"{DEMO_SETTINGS_MARK}\n"
        f"[records]\ndatabase = {json.dumps(str(build_sample_db()))}\n"
        f"templates = {json.dumps(str(sample_tools_yaml()))}\n"
    )
    if text != old:
        path.write_text(text, encoding="utf-8")


def run_demo(index_dir: Path, embedder: str, out, err, print_answer, progress) -> None:
    """Run the demo script, printing to the given rich consoles."""
    from citewise.api import Citewise

    sample = sample_dir()
    script = yaml.safe_load((sample / "demo.yaml").read_text())
    idx = Index.open(index_dir, embedder=embedder)
    configure_sample_records(idx.path)
    cw = Citewise(idx)
    corpus = sample / "corpus"
    from citewise.text.loaders import iter_files

    with progress(len(iter_files(corpus)), "ingesting sample corpus") as tick:
        report = idx.ingest(corpus, progress=tick)
    stats = idx.store.stats()
    out.rule("citewise demo: Ledgerly help centre")
    out.print(
        f"Ingested {corpus}\n  {report.added} added, {report.updated} updated, {report.unchanged_text()}, "
        + (f"{report.metadata_updated} with new permissions only, " if report.metadata_updated else "")
        + f"{report.deleted} deleted -> {stats['documents']} documents, {stats['chunks']} chunks in {idx.path}",
        highlight=False,
        soft_wrap=True,
    )
    for e in report.errors:
        err.print(f"skipped {e}", markup=False, highlight=False)

    def show(title: str, question: str, principal: Principal | None = None):
        who = f" (as {', '.join(principal.groups)})" if principal and principal.groups else " (anonymous)"
        out.rule(title)
        out.print(Text.assemble((f"Q{who}:", "bold"), f" {question}"), highlight=False)
        print_answer(cw.ask(question, principal), False)

    for i, q in enumerate(script["questions"], start=1):
        show(f"Sample question {i}", q["text"])
    for q in script["abstain"]:
        show("Out of scope: citewise abstains", q["text"])
    r = script["restricted"]
    show("Permissions: a restricted document, anonymous", r["text"])
    show("Permissions: the same question, as a member of the group", r["text"], Principal("demo", (r["as"],)))
    out.rule()
    out.print(
        # a real question, so the line runs as pasted (a "..." placeholder was refused as empty)
        f"Try it yourself:  {command_name()} ask {shlex.quote(script.get('try', TRY_QUESTION))} --index "
        f"{shlex.quote(str(idx.path))}   (add --as {r['as']} to read restricted documents)",
        highlight=False,
        soft_wrap=True,
    )
