"""Whole-book copies and near-duplicates are not indexed (citewise.text.dedup, Ingestor)."""

from __future__ import annotations

import json
import random

from typer.testing import CliRunner

from citewise.cli import app
from citewise.index import Index
from citewise.text.dedup import find_duplicates, shingles
from citewise.text.loaders import load_folder

from conftest import write_doc

CHAPTERS = {
    "install": (
        "Installing",
        "Download the installer for your platform and run it. The installer puts the "
        "toolchain in your home folder and adds it to the path. Restart the shell afterwards so the "
        "new path takes effect.",
    ),
    "config": (
        "Configuration",
        "Settings live in a file named settings.toml next to the project. Each key "
        "overrides the built-in default, and unknown keys are reported as warnings when the build starts.",
    ),
    "upgrade": (
        "Upgrading",
        "Run the self update command to move to the newest release. Old releases stay "
        "installed until you remove them, so a failed upgrade can always be rolled back by hand.",
    ),
}


def _page(title: str, body: str) -> str:
    return (
        f"<html><head><title>{title} - Guide</title></head><body><nav class='sidebar'>Contents</nav>"
        f"<main><h1>{title}</h1><p>{body}</p></main></body></html>"
    )


def make_book(root, groups: dict[str, str] | None = None):
    """Three chapter pages and a print.html holding all three; ``groups``: page -> permissions meta."""
    root.mkdir(parents=True, exist_ok=True)
    groups = groups or {}
    for name, (title, body) in CHAPTERS.items():
        meta = f"<meta name='permissions' content='{groups[name]}'>" if name in groups else ""
        (root / f"{name}.html").write_text(_page(title, body).replace("<head>", "<head>" + meta))
    allbody = "".join(f"<h1>{t}</h1><p>{b}</p>" for t, b in CHAPTERS.values())
    meta = f"<meta name='permissions' content='{groups['print']}'>" if "print" in groups else ""
    (root / "print.html").write_text(
        f"<html><head>{meta}<title>Guide</title></head><body><main>{allbody}</main></body></html>"
    )


def _words(seed: int, n: int = 160) -> str:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(400)]
    return " ".join(rng.choice(vocab) for _ in range(n)) + "."


def test_print_page_of_three_pages_is_skipped_and_the_three_indexed(tmp_path):
    make_book(tmp_path / "docs")
    idx = Index.open(tmp_path / "i", embedder="hashing")
    report = idx.ingest(tmp_path / "docs")
    assert sorted(idx.store.documents()) == ["config", "install", "upgrade"]
    assert report.added == 3 and len(report.duplicates) == 1
    line = report.duplicates[0]
    assert "print.html" in line and "concatenation of 3 documents (config, install, upgrade)" in line
    assert idx.duplicates() == report.duplicates


def test_reingest_unchanged_folder_skips_copy_and_embeds_nothing(tmp_path):
    make_book(tmp_path / "docs")
    idx = Index.open(tmp_path / "i", embedder="hashing")
    idx.ingest(tmp_path / "docs")
    again = idx.ingest(tmp_path / "docs")
    assert again.chunks_embedded == 0 and again.added == 0 and again.unchanged == 3
    assert len(again.duplicates) == 1 and "print" not in idx.store.documents()


def test_copy_indexed_before_leaves_the_index_and_keep_duplicates_keeps_it(tmp_path):
    make_book(tmp_path / "docs")
    idx = Index.open(tmp_path / "i", embedder="hashing")
    kept = idx.ingest(tmp_path / "docs", keep_duplicates=True)
    assert kept.duplicates == [] and "print" in idx.store.documents()
    report = idx.ingest(tmp_path / "docs")
    assert "print" not in idx.store.documents() and report.deleted == 1
    assert report.chunks_embedded == 0 and len(report.duplicates) == 1
    hits = idx.search("settings.toml unknown keys warnings", k=10, retriever="bm25")
    assert hits and hits[0].doc_id == "config" and all(h.doc_id != "print" for h in hits)


def test_near_duplicate_pair_keeps_exactly_one(tmp_path):
    body = _words(1)
    edited = body.replace("w", "v", 1)  # one word differs
    write_doc(tmp_path / "docs", "b-copy.md", "Limits", body)
    write_doc(tmp_path / "docs", "a-limits.md", "Limits", edited)
    write_doc(tmp_path / "docs", "other.md", "Other", _words(2))
    idx = Index.open(tmp_path / "i", embedder="hashing")
    report = idx.ingest(tmp_path / "docs")
    assert sorted(idx.store.documents()) == ["a-limits", "other"]
    assert len(report.duplicates) == 1 and "'b-copy' is a near-duplicate of a-limits" in report.duplicates[0]


def test_differing_permissions_are_never_duplicates(tmp_path):
    body = _words(3)
    write_doc(tmp_path / "docs", "public.md", "Limits", body)
    write_doc(tmp_path / "docs", "restricted.md", "Limits", body, permissions=["finance"])
    make_book(tmp_path / "docs" / "book", groups={"install": "ops", "config": "ops", "upgrade": "ops"})
    idx = Index.open(tmp_path / "i", embedder="hashing")
    report = idx.ingest(tmp_path / "docs")
    assert report.duplicates == []
    assert {"public", "restricted", "book/print", "book/install"} <= set(idx.store.documents())


def test_versions_of_one_id_and_unrelated_pages_are_not_duplicates(tmp_path):
    body = _words(4)
    write_doc(tmp_path / "docs", "v1.md", "Policy", body, id="policy", version="1")
    write_doc(tmp_path / "docs", "v2.md", "Policy", body + " Extra.", id="policy", version="2")
    docs = [d for d in load_folder(tmp_path / "docs")]
    assert find_duplicates(docs) == []
    assert len(shingles("one two three")) == 1 and shingles("") == set()


def test_cli_ingest_json_and_status_name_the_copy(tmp_path):
    make_book(tmp_path / "docs")
    runner = CliRunner()
    res = runner.invoke(
        app, ["ingest", str(tmp_path / "docs"), "--index", str(tmp_path / "i"), "--embedder", "hashing", "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert len(data["duplicates"]) == 1 and "print.html" in data["duplicates"][0]
    st = runner.invoke(app, ["status", "--index", str(tmp_path / "i"), "--json"])
    assert json.loads(st.stdout)["duplicates"] == data["duplicates"]
    res = runner.invoke(app, ["ingest", str(tmp_path / "docs"), "--index", str(tmp_path / "i"), "--keep-duplicates"])
    assert res.exit_code == 0 and "0 duplicates skipped" in res.stdout


def test_shingle_array_counts_distinct_windows():
    """Hand-counted: six words give two 5-word windows; a repeated 5-word phrase, read as ten
    words, gives six windows of which five are distinct; fewer than five words are one shingle."""
    from citewise.text.dedup import shingle_array

    assert len(shingle_array("a b c d e f")) == 2
    rep = shingle_array("x y z w v. X Y Z W V")
    assert len(rep) == 5 and list(rep) == sorted(set(rep.tolist()))
    assert shingles("x y z w v x y z w v") == set(rep.tolist())
    assert len(shingle_array("one two")) == 1 and len(shingle_array("...")) == 0
