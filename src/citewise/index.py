"""The Python API: an :class:`Index` folder holding a store, its embedder choice and settings.

>>> idx = Index.open("/tmp/my-index", embedder="hashing")   # doctest: +SKIP
>>> idx.ingest("docs/")                                       # doctest: +SKIP
>>> idx.search("refund window on Pro", k=5)                   # doctest: +SKIP
>>> idx.ask("How long do I have to ask for a refund?")        # doctest: +SKIP

Layout of an index folder: ``index.json`` (settings: embedder, dimension, analyzer version,
default permission, abstention threshold, store), ``lance/`` (the LanceDB database) and, after a folder
ingest, ``duplicates.json`` (per ingested folder, the copies the last ingest of it did not index).

Store: the embedded LanceDB database in ``lance/`` unless a PostgreSQL store is chosen
(``store="postgresql://..."``, ``--store`` or ``$CITEWISE_STORE``: :func:`store_choice`); the
folder then keeps only the settings, and ``index.json`` records the URL without its password
(libpq takes one from ``PGPASSWORD`` or ``~/.pgpass``), so later commands use the same store.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from typing import TYPE_CHECKING

from citewise.core import (
    MAX_QUERY_CHARS,  # noqa: F401
    CitewiseError,
    Filters,
    Hit,  # noqa: F401
    Principal,
    SearchResult,
    check_query,
    default_index_dir,
)  # noqa: F401 - re-exported
from citewise.models.embedders import Embedder, QueryMemo, QueryView, make_embedder
from citewise.retrieval.retrievers import Retriever, make_retriever
from citewise.settings import Settings
from citewise.store.base import IndexBusy  # noqa: F401  (part of this module's API)
from citewise.store.lance import LanceStore, write_json
from citewise.text.analyzer import ANALYZER_VERSION
from citewise.index_config import (  # noqa: F401 - re-exported: part of this module's API
    EMBEDDED_STORE,
    FORMAT,
    NAMED_KINDS,
    IndexSettings,
    index_embedder,
    ingest_lock,
    model_record,
    store_choice,
    strip_password,
)

if TYPE_CHECKING:  # imported where used: a search needs no ingest machinery (CLI start, issue 12)
    from citewise.ingest import IngestReport, Ingestor


# IndexBusy (another process holds the index's ingest lock) lives with the Store protocol, so
# a server store's own ingest lock raises the same error; re-exported here.


class Index:
    """An index folder: ingest into it, search it, ask it.

    Use :meth:`open` to create or reopen one.
    """

    def __init__(
        self,
        path: Path,
        settings: IndexSettings,
        embedder: Embedder,
        preload: bool = False,
        store: str | None = None,
        read_only: bool = False,
    ):
        self.path = Path(path)
        self.settings = settings
        #: the user's settings (:class:`citewise.settings.Settings`; :class:`citewise.api.Citewise`
        #: sets them); None: the defaults
        self.config: Settings | None = None
        self.embedder = embedder
        if preload and hasattr(embedder, "preload"):
            embedder.preload()  # the model loads while the store opens
        self.store_url = store_choice(store, settings.store)
        if self.store_url:
            from citewise.store.postgres import PostgresStore

            self.store = PostgresStore(self.store_url, settings.dim)
        else:
            self.store = LanceStore(self.path / settings.lance_dir, settings.dim, read_only=read_only)

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        embedder: str | None = None,
        default_permission: str | None = None,
        *,
        preload: bool = False,
        store: str | None = None,
        read_only: bool = False,
        chunk_vectors: str | None = None,
    ) -> "Index":
        """Open the index at ``path`` (default: :func:`default_index_dir`), creating it if new.

        Args:
            embedder: an embedder spec (:func:`citewise.models.embedders.make_embedder`; ``minilm``
                by default for new indexes); for an existing index it must be the model the
                index was built with (:func:`index_embedder`).
            default_permission: ``public`` or ``deny`` for documents without permissions.
            preload: start loading the embedding model in the background while the store opens
                (for a command that will embed a query: saves ~0.15 s of a ``citewise search``).
            store: ``lancedb`` or a ``postgresql://`` URL (:func:`store_choice`); a store given
                here is recorded in ``index.json`` (without its password) for later opens.
            read_only: open the embedded store without importing ``lancedb`` until something
                writes (:class:`citewise.store.lance.LanceStore` ``read_only``): for a process
                that only searches (``citewise search``, issue 12: CLI start).
            chunk_vectors: how a new index makes chunk vectors (``chunk`` or ``units-mean``:
                :mod:`citewise.models.chunk_vectors`; default ``units-mean``); ignored for an
                existing index, which keeps its own.

        Raises:
            CitewiseError: the embedder or analyzer differs from the one the index was built with,
                or ``default_permission`` is not ``public``/``deny`` (checked before anything is
                created on disk).
        """
        if default_permission is not None:
            from citewise.ingest import DEFAULT_PERMISSIONS

        if default_permission is not None and default_permission not in DEFAULT_PERMISSIONS:
            raise CitewiseError(
                f"--default-permission must be one of {', '.join(DEFAULT_PERMISSIONS)}, got '{default_permission}'"
            )
        path = Path(path) if path else default_index_dir()
        if path.exists() and not path.is_dir():
            raise CitewiseError(f"{path}: not an index folder (it is a file); give --index a folder")
        cfg = path / "index.json"
        if cfg.exists():
            try:
                data = json.loads(cfg.read_text())
                settings = IndexSettings(**data)
            except (json.JSONDecodeError, TypeError) as e:
                raise CitewiseError(f"{cfg}: not a citewise index settings file ({e})") from None
            emb = index_embedder(path, settings, embedder)
            if settings.analyzer != ANALYZER_VERSION:
                raise CitewiseError(f"{path}: built with analyzer v{settings.analyzer}; re-ingest into a new index")
            chosen = strip_password(store_choice(store, settings.store)) if store else settings.store
            # the store is opened (a server store: connected) before index.json names it: a
            # --store URL that cannot be reached must not become the index's store for every
            # later command (it did: one failed `search --store BAD` broke the index)
            idx = cls(path, settings, emb, preload=preload, store=store, read_only=read_only)
            if (default_permission and default_permission != settings.default_permission) or chosen != settings.store:
                settings.default_permission = default_permission or settings.default_permission
                settings.store = chosen
                write_json(cfg, settings.__dict__)
            return idx
        from citewise.models.chunk_vectors import DEFAULT_MODE, check_mode

        try:
            mode = check_mode(chunk_vectors or DEFAULT_MODE)
        except ValueError as e:
            raise CitewiseError(f"--chunk-vectors: {e}") from None
        emb = make_embedder(embedder or "minilm")
        settings = IndexSettings(
            embedder=embedder or "minilm",
            dim=emb.dim,
            chunk_vectors=mode,
            default_permission=default_permission or "public",
            store=strip_password(store_choice(store, "")),
            **model_record(emb),
        )
        created = [p for p in (path, *path.parents) if not p.exists()]
        path.mkdir(parents=True, exist_ok=True)
        try:
            idx = cls(path, settings, emb, store=store)
        except BaseException:
            # nothing of a new index is left behind when its store cannot be opened
            for p in created:
                if p.is_dir() and not any(p.iterdir()):
                    p.rmdir()
            raise
        write_json(cfg, settings.__dict__)
        return idx

    @classmethod
    def exists(cls, path: str | Path | None = None) -> bool:
        """Whether an index folder has been created at ``path``."""
        return ((Path(path) if path else default_index_dir()) / "index.json").exists()

    # -- ingestion ----------------------------------------------------------------------------
    def ingestor(
        self,
        policy=None,
        batch_docs: int = 256,
        units: bool = True,
        keep_duplicates: bool = False,
        workers: int | None = None,
    ) -> Ingestor:
        """An :class:`Ingestor` for this index (``policy``: a :class:`citewise.policy.Policy`).

        ``units``: also embed and store answer-unit vectors (:mod:`citewise.answer.units`), so
        :meth:`ask` embeds only the question. Retrieval-only indexes (BEIR) pass False; in the
        ``units-mean`` chunk-vector mode the units are embedded (and kept) anyway, since chunk
        vectors are made from them.
        ``keep_duplicates``: index whole-book copies and near-duplicates too.
        ``workers``: forked prepare workers (:class:`citewise.ingest.Ingestor`; None: one per
        CPU, at most 4; 0: none).
        """
        from citewise.answer.units import ANSWER_UNITS
        from citewise.ingest import Ingestor

        return Ingestor(
            self.store,
            self.embedder,
            default_permission=self.settings.default_permission,
            policy=policy,
            batch_docs=batch_docs,
            units=ANSWER_UNITS if units or self.settings.chunk_vectors == "units-mean" else None,
            keep_duplicates=keep_duplicates,
            workers=workers,
            chunk_vectors=self.settings.chunk_vectors,
        )

    def ingest(
        self,
        folder: str | Path,
        progress=None,
        policy=None,
        *,
        follow_links: bool = False,
        wait: bool = False,
        on_wait=None,
        embed_progress=None,
        keep_duplicates: bool = False,
    ) -> IngestReport:
        """Ingest a folder (incremental; see :mod:`citewise.ingest`).

        Whole-book copies and near-duplicates are not indexed unless ``keep_duplicates``; the
        lines naming them are kept in ``duplicates.json`` for :meth:`duplicates` (``status``).

        ``policy``: a :class:`citewise.policy.Policy` or the path of a policy YAML file. A policy
        file given here is copied to ``<index>/policy.yaml`` and used by later ingests that name
        none (so forgetting ``--policy`` once cannot widen permissions); delete that file to drop it.

        Args:
            progress: called with the number of documents handled after each batch.
            follow_links: follow symlinks whose target is outside ``folder`` (default: skip them
                with an error line).
            wait: if another ingest holds this index's lock, wait for it (``on_wait(message)`` is
                called once) instead of raising :class:`IndexBusy`.
            embed_progress: called with (chunks embedded, chunks planned) while embedding.

        Raises:
            IndexBusy: another ingest is running on this index and ``wait`` is False.
            InputError: a bad policy file (nothing is changed).
        """
        from citewise.policy import Policy

        kept = self.path / "policy.yaml"
        if policy is not None and not isinstance(policy, Policy):
            loaded = Policy.load(policy)  # validate before keeping it
            policy_bytes = Path(policy).read_bytes()
        else:
            loaded, policy_bytes = policy, None
        # a shared (server) store has its own advisory lock besides the folder's file lock
        with ingest_lock(self.path, wait=wait, on_wait=on_wait), self.store.ingest_lock(wait=wait, on_wait=on_wait):
            if policy_bytes is not None:
                tmp = kept.with_suffix(".yaml.tmp")
                tmp.write_bytes(policy_bytes)
                tmp.replace(kept)
            elif loaded is None and kept.exists():
                loaded = Policy.load(kept)
            ingestor = self.ingestor(loaded, keep_duplicates=keep_duplicates)
            ingestor.embed_progress = embed_progress
            report = ingestor.ingest_folder(Path(folder), progress=progress, follow_links=follow_links)
            self._keep_duplicates(str(Path(folder).resolve()), report.duplicates)
            return report

    def _keep_duplicates(self, root: str, lines: list[str]) -> None:
        path = self.path / "duplicates.json"
        data = self._read_duplicates()
        if lines:
            data[root] = list(lines)
        else:
            data.pop(root, None)
        if data or path.exists():
            write_json(path, data)

    def _read_duplicates(self) -> dict[str, list[str]]:
        try:
            data = json.loads((self.path / "duplicates.json").read_text())
        except (OSError, json.JSONDecodeError):
            return {}
        return data if isinstance(data, dict) else {}

    def duplicates(self) -> list[str]:
        """Lines naming the documents the last ingest of each folder skipped as copies of others."""
        data = self._read_duplicates()
        return [line for root in sorted(data) for line in data[root]]

    def status(self, max_lag_s: float | None = None):
        """Freshness of this index: a :class:`citewise.lifecycle.Status` (see that module)."""
        from citewise.lifecycle import compute_status

        st = compute_status(
            self.store.documents(),
            self.store.stats()["chunks"],
            self.store.runs(),
            threshold_s=max_lag_s,
            unindexed_rows=self.store.unindexed_rows(),
        )
        st.replication = self.store.replication()  # a server store: its replicas' lag; else None
        return st

    # -- retrieval ----------------------------------------------------------------------------
    def retriever(self, name: str = "shipped", *, reranker=None, rerank_depth: int | None = None) -> Retriever:
        """The named retriever over this index, optionally reranked (``reranker``: a spec string
        or :class:`citewise.retrieval.rerank.Reranker`; see :func:`make_retriever`)."""
        return make_retriever(name, self.store, self.question_embedder, reranker=reranker, rerank_depth=rerank_depth)

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        retriever: str = "shipped",
        principal: Principal | None = None,
        filters: Filters | None = None,
        reranker=None,
        rerank_depth: int | None = None,
    ) -> list[SearchResult]:
        """Top-k results for ``query`` visible to ``principal`` (anonymous: public documents
        only): :class:`~citewise.core.SearchResult` (the :class:`Hit` fields plus the chunk's
        text, best snippet with its source offsets, heading path, the document's version, dates,
        groups and metadata).

        ``reranker``/``rerank_depth``: rerank the top candidates (:mod:`citewise.retrieval.rerank`).

        Raises:
            CitewiseError: ``query`` is longer than :data:`MAX_QUERY_CHARS`.
        """
        from citewise.retrieval.results import search_results
        from citewise.text.trust import trusted_first

        check_query(query)
        hits = self.retriever(retriever, reranker=reranker, rerank_depth=rerank_depth).search(
            query, k, principal=principal, filters=filters
        )
        if self.record_usage:
            self.usage.record(h.chunk_id for h in hits)
        # a passage holding instructions to a model never outranks one without (citewise.text.trust)
        found = trusted_first(search_results(self.store, hits, query), lambda r: r.text)
        return [r if r.rank == i else dataclasses.replace(r, rank=i) for i, r in enumerate(found, start=1)]

    #: Record the chunks :meth:`search` and :meth:`ask` return (:mod:`citewise.usage`); evaluation
    #: commands turn it off so their questions do not count as use.
    record_usage = True

    @property
    def usage(self):
        """The :class:`citewise.usage.RetrievalLog` of this index folder (retrievals per chunk)."""
        if "_usage" not in self.__dict__:
            from citewise.usage import retrieval_log

            self._usage = retrieval_log(self.path)
        return self._usage

    @property
    def abstain_threshold(self) -> float:
        """The evidence score below which :meth:`ask` abstains: ``answer.threshold`` when the
        settings set it, else the value calibrated for this index (``index.json``
        ``abstain_threshold``, written by :meth:`set_abstain_threshold` / ``citewise calibrate``),
        else the embedder's entry in ``answer.thresholds``."""
        config = self.config or Settings()
        if config.answer.threshold is not None:
            return config.answer.threshold
        if self.settings.abstain_threshold is not None:
            return self.settings.abstain_threshold
        return config.threshold_for(self.embedder.name).abstain

    @property
    def passage_gate(self) -> float:
        """The passage gate of :class:`citewise.answer.pipeline.Answerer` (the embedder's
        ``answer.thresholds`` entry)."""
        return (self.config or Settings()).threshold_for(self.embedder.name).passage_gate

    def set_abstain_threshold(self, value: float | None) -> None:
        """Store a calibrated abstention threshold in ``index.json`` (None: back to the default)."""
        self.settings.abstain_threshold = None if value is None else float(value)
        write_json(self.path / "index.json", self.settings.__dict__)
        self._answerers = {}

    @property
    def question_embedder(self) -> QueryMemo:
        """The index's embedder behind one :class:`~citewise.models.embedders.QueryMemo`: every
        part that embeds a question (retriever, evidence score, tool router) shares it, so a
        question is embedded once."""
        if "_question_memo" not in self.__dict__:
            self._question_memo = QueryMemo(QueryView(self.embedder))
        return self._question_memo

    def answerer(
        self,
        retriever: str = "shipped",
        generator="extractive",
        threshold: float | None = None,
        reranker=None,
        rerank_depth: int | None = None,
    ):
        """The :class:`citewise.answer.pipeline.Answerer` of this index (cached per retriever and
        generator name, so sentence embeddings are reused across questions).

        ``generator``: ``extractive`` | ``llm`` (configured from the settings' ``[llm]``) or a
        Generator object. ``threshold`` overrides :attr:`abstain_threshold`.
        """
        from citewise.answer.generators import make_generator
        from citewise.answer.pipeline import Answerer
        from citewise.answer.unit_cache import UnitCache

        cache = self.__dict__.setdefault("_answerers", {})
        if "_units" not in self.__dict__:
            self._units = UnitCache(self.embedder, store=self.store)
        units = self._units
        memo = self.question_embedder  # retrieval and evidence share the question's embedding
        key = (
            retriever,
            generator if isinstance(generator, str) else id(generator),
            reranker if reranker is None or isinstance(reranker, str) else id(reranker),
            rerank_depth,
        )
        if key not in cache:
            gen = (
                make_generator(generator, units=units, **({"settings": self.config} if generator == "llm" else {}))
                if isinstance(generator, str)
                else generator
            )
            cache[key] = Answerer(
                make_retriever(retriever, self.store, memo, reranker=reranker, rerank_depth=rerank_depth),
                self.store,
                memo,
                threshold=self.abstain_threshold,
                generator=gen,
                units=units,
                passage_gate=self.passage_gate,
            )
        answerer = cache[key]
        answerer.threshold = self.abstain_threshold if threshold is None else threshold
        return answerer

    def ask(
        self,
        question: str,
        k: int = 5,
        *,
        retriever: str = "shipped",
        principal: Principal | None = None,
        filters: Filters | None = None,
        generator="extractive",
        threshold: float | None = None,
        reranker=None,
        rerank_depth: int | None = None,
        on_delta=None,
    ):
        """A cited answer (or an abstention); see :mod:`citewise.answer.pipeline`.

        ``generator``: ``extractive`` (default, no LLM) | ``llm`` | a Generator object.
        ``reranker``/``rerank_depth``: rerank the retrieved candidates first. ``on_delta``:
        called with each piece of a streamed LLM answer before the citation check.

        Raises:
            CitewiseError: ``question`` is longer than :data:`MAX_QUERY_CHARS`.
        """
        check_query(question)
        ans = self.answerer(retriever, generator, threshold, reranker, rerank_depth).answer(
            question, k=k, principal=principal, filters=filters, on_delta=on_delta
        )
        if self.record_usage:
            self.usage.record(ans.retrieved_ids)
        return ans
