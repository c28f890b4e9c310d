"""The Python API: an :class:`Index` folder holding a store, its embedder choice and settings.

>>> idx = Index.open("/tmp/my-index", embedder="hashing")   # doctest: +SKIP
>>> idx.ingest("docs/")                                       # doctest: +SKIP
>>> idx.search("refund window on Pro", k=5)                   # doctest: +SKIP
>>> idx.ask("How long do I have to ask for a refund?")        # doctest: +SKIP

Layout of an index folder: ``index.json`` (settings: embedder, dimension, analyzer version,
default permission, abstention threshold) and ``lance/`` (the LanceDB database).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from citewise.core import CitewiseError, Filters, Hit, Principal
from citewise.ingest import IngestReport, Ingestor
from citewise.models.embedders import Embedder, make_embedder
from citewise.retrieval.retrievers import Retriever, make_retriever
from citewise.store.lance import LanceStore, write_json
from citewise.text.analyzer import ANALYZER_VERSION

FORMAT = 1

#: Abstention thresholds on the best chunk's cosine similarity to the question, per embedder.
#: Calibrated on the sample corpus golden set and out-of-scope questions (see README).
DEFAULT_THRESHOLDS = {"all-MiniLM-L6-v2-int8": 0.40, "hashing": 0.20}


def default_index_dir() -> Path:
    """``$CITEWISE_INDEX`` or ``$XDG_DATA_HOME/citewise/index`` (``~/.local/share/citewise/index``)."""
    env = os.environ.get("CITEWISE_INDEX")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "citewise" / "index"


@dataclass
class IndexSettings:
    """Settings stored in ``index.json``."""

    embedder: str
    dim: int
    analyzer: str = ANALYZER_VERSION
    default_permission: str = "public"
    abstain_threshold: float | None = None
    format: int = FORMAT


class Index:
    """An index folder: ingest into it, search it, ask it.

    Use :meth:`open` to create or reopen one.
    """

    def __init__(self, path: Path, settings: IndexSettings, embedder: Embedder):
        self.path = Path(path)
        self.settings = settings
        self.embedder = embedder
        self.store = LanceStore(self.path / "lance", settings.dim)

    @classmethod
    def open(cls, path: str | Path | None = None, embedder: str | None = None,
             default_permission: str | None = None) -> "Index":
        """Open the index at ``path`` (default: :func:`default_index_dir`), creating it if new.

        Args:
            embedder: ``minilm`` (default for new indexes) or ``hashing``; must match an existing
                index's embedder.
            default_permission: ``public`` or ``deny`` for documents without permissions.

        Raises:
            CitewiseError: the embedder or analyzer differs from the one the index was built with.
        """
        path = Path(path) if path else default_index_dir()
        cfg = path / "index.json"
        if cfg.exists():
            try:
                data = json.loads(cfg.read_text())
                settings = IndexSettings(**data)
            except (json.JSONDecodeError, TypeError) as e:
                raise CitewiseError(f"{cfg}: not a citewise index settings file ({e})") from None
            emb = make_embedder(settings.embedder)
            if embedder and make_embedder(embedder).name != emb.name:
                raise CitewiseError(
                    f"{path}: index was built with embedder '{settings.embedder}', not '{embedder}'; "
                    "use another --index folder"
                )
            if settings.analyzer != ANALYZER_VERSION:
                raise CitewiseError(f"{path}: built with analyzer v{settings.analyzer}; re-ingest into a new index")
            if default_permission and default_permission != settings.default_permission:
                settings.default_permission = default_permission
                write_json(cfg, settings.__dict__)
            return cls(path, settings, emb)
        emb = make_embedder(embedder or "minilm")
        settings = IndexSettings(embedder=embedder or "minilm", dim=emb.dim,
                                 default_permission=default_permission or "public")
        path.mkdir(parents=True, exist_ok=True)
        write_json(cfg, settings.__dict__)
        return cls(path, settings, emb)

    @classmethod
    def exists(cls, path: str | Path | None = None) -> bool:
        """Whether an index folder has been created at ``path``."""
        return ((Path(path) if path else default_index_dir()) / "index.json").exists()

    # -- ingestion ----------------------------------------------------------------------------
    def ingestor(self) -> Ingestor:
        return Ingestor(self.store, self.embedder, default_permission=self.settings.default_permission)

    def ingest(self, folder: str | Path, progress=None) -> IngestReport:
        """Ingest a folder (incremental; see :mod:`citewise.ingest`)."""
        return self.ingestor().ingest_folder(Path(folder), progress=progress)

    # -- retrieval ----------------------------------------------------------------------------
    def retriever(self, name: str = "shipped") -> Retriever:
        return make_retriever(name, self.store, self.embedder)

    def search(self, query: str, k: int = 10, *, retriever: str = "shipped",
               principal: Principal | None = None, filters: Filters | None = None) -> list[Hit]:
        """Top-k hits for ``query`` visible to ``principal`` (anonymous: public documents only)."""
        return self.retriever(retriever).search(query, k, principal=principal, filters=filters)

    @property
    def abstain_threshold(self) -> float:
        if self.settings.abstain_threshold is not None:
            return self.settings.abstain_threshold
        key = "hashing" if self.embedder.name.startswith("hashing") else self.embedder.name
        return DEFAULT_THRESHOLDS.get(key, 0.4)

    def ask(self, question: str, k: int = 5, *, retriever: str = "shipped",
            principal: Principal | None = None, filters: Filters | None = None):
        """An extractive, cited answer (or an abstention); see :mod:`citewise.answer.extractive`."""
        from citewise.answer.extractive import ExtractiveAnswerer

        answerer = ExtractiveAnswerer(self.retriever(retriever), self.store, self.embedder,
                                      threshold=self.abstain_threshold)
        return answerer.answer(question, k=k, principal=principal, filters=filters)
