"""The one ask / search pipeline behind every front end (CLI, Python, HTTP, MCP, web page, eval).

>>> cw = Citewise.open("./my-index")                                  # doctest: +SKIP
>>> cw.search("refund window", principal=Principal("ana", ("finance",)))  # doctest: +SKIP
>>> ans = cw.ask("Who approves large refunds?", options=AskOptions(k=8))  # doctest: +SKIP
>>> ans.outcome, ans.reason, [c.doc_id for c in ans.citations]            # doctest: +SKIP

:meth:`Citewise.ask` runs each stage once, in this order:

1. **route** — when a records database is configured (``[records] database``, ``CITEWISE_DB``
   or ``--db``) and routing is on, the router (``routing.router``: rule, or llm; built once per
   database and group set, with its tools, catalogue and SQL writer) decides ``record`` /
   ``both`` / ``live`` / ``document`` / ``none``; a record, both or live route is answered by
   the tools (:mod:`citewise.tools.pipeline`: rows, a ``no_tool`` outcome, the rule comparison,
   or a live-data abstention) and returns. With ``agent`` (``AskOptions.agent`` /
   ``routing.agent``; needs an LLM) the ReAct agent answers instead, its final text checked for
   citations (:mod:`citewise.tools.agent_answer`).
2. **retrieve → assess → generate → cite** — the index's answerer
   (:class:`citewise.answer.pipeline.Answerer`); through the evidence-gap controller
   (:mod:`citewise.answer.gaps`) when a scope, round, deadline, budget or requirements option
   is given, or when ``answer.sufficiency`` asks for it (``always``; ``auto``, the default: a
   question with condition clauses or an always / never / guaranteed / safe / cannot claim,
   :attr:`citewise.answer.question.QuestionAnalysis.conditional`).

Front ends parse their input into :class:`AskOptions`, call :meth:`Citewise.ask` and render the
:class:`~citewise.core.Answer` it returns (outcome, typed :class:`~citewise.core.Reason`,
citations); none of them routes or answers on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citewise.core import CitewiseError, Filters, Principal, SearchResult
from citewise.index import Index, check_query
from citewise.settings import Settings, load_settings


@dataclass(frozen=True)
class AskOptions:
    """One ask's options; None means "the settings' value" (``[answer]``).

    Attributes:
        k: chunks retrieved as evidence.
        retriever: retriever name (``citewise.retrieval``'s registry).
        filters: version / as-of / document filters (permissions come from the principal).
        generator: ``extractive`` | ``llm``.
        reranker, rerank_depth: rerank the candidates first.
        scope: document ids or folder prefixes to answer from (evidence-gap controller).
        max_rounds, deadline_ms, budget_tokens: the controller's limits.
        requirements: a requirements YAML path (or a loaded ``Requirements``) for the controller.
        route: route record questions to the records tools (None: ``answer.route``).
        database: records database for this ask (None: ``records.database``).
        agent: answer with the ReAct agent over the tools (None: ``routing.agent``).
        judge: an LLM sufficiency judge for the controller
            (:class:`~citewise.answer.marks.SufficiencyJudge`; None: rule-based checks only).
    """

    k: int | None = None
    retriever: str | None = None
    filters: Filters | None = None
    generator: str | None = None
    reranker: str | None = None
    rerank_depth: int | None = None
    scope: tuple[str, ...] = ()
    max_rounds: int | None = None
    deadline_ms: float | None = None
    budget_tokens: int | None = None
    requirements: Any = None
    route: bool | None = None
    database: str | None = None
    agent: bool | None = None
    judge: Any = None

    @property
    def controller(self) -> bool:
        """Whether an option of the evidence-gap controller was given."""
        return bool(self.scope) or any(
            v is not None
            for v in (self.max_rounds, self.deadline_ms, self.budget_tokens, self.requirements, self.judge)
        )


class Citewise:
    """An index with its settings: the application object every front end calls.

    Args:
        index: an open :class:`~citewise.index.Index`.
        settings: the effective settings (default: :func:`~citewise.settings.load_settings` for
            the index folder).
    """

    def __init__(self, index: Index, settings: Settings | None = None):
        self.index = index
        self.settings = settings if settings is not None else load_settings(index.path)
        index.config = self.settings
        self._routers: dict[tuple[str, tuple[str, ...]], Any] = {}
        self._tools: dict[str, Any] = {}
        self._catalogs: dict[str, Any] = {}
        self._writers: dict[str, Any] = {}
        self._models: dict[str, Any] = {}

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        settings: Settings | None = None,
        overrides: dict[str, Any] | None = None,
        embedder: str | None = None,
        store: str | None = None,
        read_only: bool = False,
        preload: bool = False,
        default_permission: str | None = None,
    ) -> "Citewise":
        """Open (or create) the index at ``path`` (default: ``index.path``, else
        :func:`~citewise.core.default_index_dir`) with its settings.

        ``overrides``: flag values by dotted key (:func:`~citewise.settings.load_settings`).

        Raises:
            CitewiseError: as :meth:`Index.open`; InputError: a bad settings file or value.
        """
        if settings is None:
            first = load_settings(None, overrides)
            index_dir = Path(path) if path else (Path(first.index.path).expanduser() if first.index.path else None)
            settings = load_settings(index_dir, overrides) if index_dir is not None else first
        else:
            index_dir = (
                Path(path) if path else (Path(settings.index.path).expanduser() if settings.index.path else None)
            )
        idx = Index.open(
            index_dir,
            embedder=embedder or None,
            store=store or settings.index.store or None,
            read_only=read_only,
            preload=preload,
            default_permission=default_permission,
        )
        return cls(idx, settings)

    # -- search -----------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        principal: Principal | None = None,
        *,
        k: int | None = None,
        retriever: str | None = None,
        filters: Filters | None = None,
        reranker: str | None = None,
        rerank_depth: int | None = None,
    ) -> list[SearchResult]:
        """Top-k results visible to ``principal`` (anonymous: public documents only), each with
        its chunk's text, snippet, heading path, document fields and metadata
        (:class:`~citewise.core.SearchResult`); None arguments take ``[search]``'s settings.

        Raises:
            CitewiseError: the query is too long, or an unknown retriever / reranker.
        """
        s = self.settings.search
        return self.index.search(
            query,
            s.k if k is None else k,
            retriever=retriever or s.retriever,
            principal=principal,
            filters=filters,
            reranker=reranker or s.reranker or None,
            rerank_depth=rerank_depth or s.rerank_depth or None,
        )

    # -- ask --------------------------------------------------------------------------------------
    def ask(self, question: str, principal: Principal | None = None, options: AskOptions | None = None, on_delta=None):
        """Route, retrieve, assess, generate and cite once; returns a
        :class:`~citewise.core.Answer` (outcome, typed reason, citations, tool calls).
        ``on_delta(text)`` receives a streamed LLM answer as it arrives, before the citation check.

        Raises:
            CitewiseError: the question is too long, a bad option or scope, a records database
                that cannot be opened; ChatError: the LLM endpoint failed.
        """
        check_query(question)
        o = options or AskOptions()
        a = self.settings.answer
        principal = principal or Principal()
        if (self.settings.routing.agent if o.agent is None else o.agent) and question.strip():
            return self.ask_agent(question, principal, o)
        if (a.route if o.route is None else o.route) and question.strip():
            routed = self._route(question, principal, o)
            if routed is not None:
                return routed
        k = a.k if o.k is None else o.k
        retriever = o.retriever or a.retriever
        generator = o.generator or a.generator
        reranker = o.reranker or a.reranker or None
        rerank_depth = o.rerank_depth or a.rerank_depth or None
        if o.controller or self._sufficiency_check(question):
            return self._controlled(question, principal, o, k, retriever, generator, reranker, rerank_depth)
        return self.index.ask(
            question,
            k,
            retriever=retriever,
            principal=principal,
            filters=o.filters,
            generator=generator,
            reranker=reranker,
            rerank_depth=rerank_depth,
            on_delta=on_delta,
        )

    def _sufficiency_check(self, question: str) -> bool:
        mode = self.settings.answer.sufficiency
        if mode not in ("auto", "always", "off"):
            raise CitewiseError(f"answer.sufficiency must be auto, always or off, got {mode!r}")
        if mode == "always":
            return True
        from citewise.answer.question import analyze_question

        return mode == "auto" and analyze_question(question).conditional

    def _controlled(self, question, principal, o: AskOptions, k, retriever, generator, reranker, rerank_depth):
        from citewise.answer.gaps import ask_with_controller

        a = self.settings.answer
        return ask_with_controller(
            self.index,
            question,
            k=k,
            retriever=retriever,
            principal=principal,
            filters=o.filters,
            generator=generator,
            scope=list(o.scope) or None,
            max_rounds=a.max_rounds if o.max_rounds is None else o.max_rounds,
            deadline_ms=a.deadline_ms if o.deadline_ms is None else o.deadline_ms,
            budget_tokens=a.budget_tokens if o.budget_tokens is None else o.budget_tokens,
            requirements=o.requirements,
            reranker=reranker,
            rerank_depth=rerank_depth,
            judge=o.judge,
        )

    # -- records ----------------------------------------------------------------------------------
    def records_database(self, options: AskOptions | None = None) -> str | None:
        """The records database record questions go to (None: routing is off)."""
        db = (options.database if options is not None else None) or self.settings.records.database
        return db or None

    def _toolset(self, db: str):
        from dataclasses import replace

        from citewise.tools.registry import records_toolset

        if db not in self._tools:
            records = replace(self.settings.records, database=db)
            self._tools[db] = records_toolset(
                records, index=self.index, web_search_url=self.settings.routing.web_search_url
            )
        return self._tools[db]

    def _catalog(self, db: str):
        from citewise.tools.catalog import RecordsCatalog
        from citewise.tools.question import load_cues

        if db not in self._catalogs:
            tools = self._toolset(db)
            self._catalogs[db] = RecordsCatalog(
                list(tools.tools.values()),
                load_cues(self.settings.routing.cues or None),
                tools["sql_query"].db,
                self.settings.records.entities,
            )
        return self._catalogs[db]

    def chat_model(self, use: str = "router"):
        """The chat model of ``[llm]`` with ``[llm.<use>]``'s overrides (built once per use), or
        None when no LLM is configured."""
        from citewise.models.chat import ChatConfig, OpenAIChatModel

        llm = self.settings.llm.for_use(use)
        if not llm.configured:
            return None
        if use not in self._models:
            self._models[use] = OpenAIChatModel(ChatConfig.from_settings(self.settings.llm, use))
        return self._models[use]

    def router(self, principal: Principal | None = None, database: str | None = None):
        """The router for ``principal``'s tools (``routing.router``: the rule router, or the LLM
        router when one is configured; built once per database and group set), or None when no
        records database is configured."""
        from citewise.tools.router import LLMRouter, RuleRouter

        db = database or self.records_database()
        if db is None:
            return None
        groups = (principal or Principal()).all_groups()
        key = (db, groups)
        if key not in self._routers:
            tools = list(self._toolset(db).for_groups(groups).tools.values())
            kind = self.settings.routing.router
            if kind not in ("rule", "llm"):
                raise CitewiseError(f"routing.router must be rule or llm, got {kind!r}")
            model = self.chat_model("router") if kind == "llm" else None
            if kind == "llm" and model is None:
                raise CitewiseError("routing.router = llm needs an LLM: set llm.base_url and llm.model")
            catalog = self._catalog(db)
            self._routers[key] = (
                LLMRouter(model, tools)
                if model is not None
                else RuleRouter(tools, self.index.question_embedder, catalog=catalog, cues=catalog_cues(self))
            )
        return self._routers[key]

    def sql_writer(self, database: str | None = None):
        """The text-to-SQL writer over the records schema (built once per database), or None when
        no LLM is configured or ``routing.sql`` is off."""
        from citewise.tools.text_to_sql import SqlWriter

        db = database or self.records_database()
        model = self.chat_model("router") if db and self.settings.routing.sql else None
        if model is None:
            return None
        if db not in self._writers:
            self._writers[db] = SqlWriter(model, self._toolset(db)["sql_query"].db, self._catalog(db).categories)
        return self._writers[db]

    def ask_records(self, question: str, principal: Principal | None = None, options: AskOptions | None = None):
        """A record question answered by the records tools only: the routed answer, or an
        abstention whose reason says that no database is configured
        (``no_records_database``) or that the question is not about records
        (``not_a_record_question``) — never a document answer.

        Raises:
            CitewiseError: as :meth:`ask`.
        """
        from citewise.core import ABSTENTION_TEXT, Answer, Reason, ReasonCode

        check_query(question)
        o = options or AskOptions()
        if self.records_database(o) is None:
            return Answer(ABSTENTION_TEXT, "abstained", reason=Reason.of(ReasonCode.NO_RECORDS_DATABASE))
        routed = self._route(question, principal or Principal(), o)
        if routed is None:
            return Answer(ABSTENTION_TEXT, "abstained", reason=Reason.of(ReasonCode.NOT_A_RECORD_QUESTION))
        return routed

    def _route(self, question: str, principal: Principal, o: AskOptions):
        from citewise.tools.pipeline import route_and_answer

        db = self.records_database(o)
        if db is None:
            return None
        router = self.router(principal, db)
        tools = self._toolset(db).for_principal(principal, self.index)
        return route_and_answer(
            question, self.index, router=router, tools=tools, filters=o.filters, sql_writer=self.sql_writer(db)
        )

    # -- agent ------------------------------------------------------------------------------------
    def ask_agent(self, question: str, principal: Principal | None = None, options: AskOptions | None = None):
        """Answer with the ReAct agent (parallel tool calls, retry, iteration cap
        ``routing.max_iterations``) over ``principal``'s tools: ``vector_search`` with their
        permissions, and the records and web tools when configured; the final text goes through
        the citation check (:func:`citewise.tools.agent_answer.agent_answer`).

        Raises:
            CitewiseError: no LLM is configured (``llm.base_url`` and ``llm.model``).
        """
        from citewise.tools.agent import Agent
        from citewise.tools.agent_answer import agent_answer
        from citewise.tools.registry import ToolSet
        from citewise.tools.vector import VectorSearchTool
        from citewise.tools.web import WebSearchTool

        model = self.chat_model("answer")
        if model is None:
            raise CitewiseError(
                "the agent needs an LLM: set llm.base_url and llm.model (citewise.toml [llm], "
                "CITEWISE_LLM_BASE_URL, CITEWISE_LLM_MODEL)"
            )
        principal = principal or Principal()
        db = self.records_database(options)
        if db is not None:
            tools = self._toolset(db).for_principal(principal, self.index)
        else:
            tools = ToolSet(
                [VectorSearchTool(self.index.retriever("shipped"), self.index.store, principal)]
                + (
                    [WebSearchTool(self.settings.routing.web_search_url)]
                    if self.settings.routing.web_search_url
                    else []
                )
            )
        from citewise.answer.agent_check import check_agent_answer

        result = Agent(model, tools, max_iterations=self.settings.routing.max_iterations, check=check_agent_answer).run(
            question
        )
        return agent_answer(result, self.index)


def catalog_cues(cw: Citewise):
    """The question cues of ``cw``'s settings (``routing.cues``, else the bundled file)."""
    from citewise.tools.question import load_cues

    return load_cues(cw.settings.routing.cues or None)
