"""Shared fixtures. Real benchmark data lives in ../shared/data beside the clone (CI has it);
tests that need it skip with that reason when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("CITEWISE_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_dataset(name: str) -> Path:
    """Path of a dataset under ../shared/data, or skip the test saying why."""
    path = SHARED_DATA / name
    if not path.is_dir():
        pytest.skip(f"benchmark data {path} is absent (CI provides ../shared/data beside the clone)")
    return path


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


@pytest.fixture(scope="session")
def minilm():
    """The real offline MiniLM embedder (loaded once per session)."""
    from citewise.models.embedders import MiniLMEmbedder

    return MiniLMEmbedder()


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory):
    """The bundled sample corpus ingested once with the real MiniLM embedder."""
    from citewise.demo import sample_dir
    from citewise.index import Index

    idx = Index.open(tmp_path_factory.mktemp("sample-index"), embedder="minilm")
    report = idx.ingest(sample_dir() / "corpus")
    assert not report.errors, report.errors
    return idx


def minilm_index_of(tmp_path_factory, pages: dict[str, tuple[str, str]]):
    """``(index, {doc id: source text})``: ``pages`` (doc id -> (title, Markdown body)) written as
    ``<doc id>.md`` and ingested into a new MiniLM index; fails on any ingest error."""
    from citewise.index import Index

    root = tmp_path_factory.mktemp("docs")
    paths = {doc: write_doc(root, f"{doc}.md", title, body) for doc, (title, body) in pages.items()}
    idx = Index.open(tmp_path_factory.mktemp("index"), embedder="minilm")
    report = idx.ingest(root)
    assert report.errors == [] and report.added == len(paths)
    return idx, {d: p.read_text(encoding="utf-8") for d, p in paths.items()}
