"""The evidence-gap controller: required checks, bounded follow-up retrieval, outcomes.

A question that turns on several conditions ("can a delayed retry charge an order twice?") is
answered only when the evidence covers each condition. The controller (after the design of
S2G-RAG's sufficiency-and-gap judging, ACL 2026, with the bounded request contract of
:mod:`citewise.answer.scope`):

1. **Required checks.** From a YAML file of domain requirements (:class:`Requirements`; the
   bundled ``sample/payment/requirements.yaml`` lists the payment example's ``retry timing``,
   ``idempotency key behaviour``, ``provider guarantee`` and ``uncertain first outcome``), or,
   when no domain applies, derived from the question's analysis (:func:`derive_checks`: its main
   clause and each condition clause; a check counts as found only where one sentence states it).
2. **Round 1**: search the question within the scope (permission filters inside the search).
3. **Mark each check** found / missing against the sentences of the evidence; a found check keeps
   its :class:`EvidenceItem` (source id, content revision, version, effective date, offsets).
4. **Follow-up rounds**: each missing check sends its targeted query (the domain file's
   ``query``, or the clause's own words) within the same scope, until every check is found,
   ``max_rounds`` is reached or the deadline has passed (no round starts after it).
5. **Assemble** (:class:`~citewise.answer.context.ContextAssembler`): the chunks that satisfy a
   check come first (room reserved for every distinct required source), then the rest by rank;
   duplicates are dropped and no document takes more than ``max_doc_share`` of the budget. Checks
   are marked again on what was *retained*.
6. **Outcome** (first that applies):

   * ``abstained``: nothing in scope was retrieved, an abstention rule of the answerer fired
     (unknown name, not in the evidence, subject not in one passage, live value), or the evidence
     score is below the threshold and no check was found;
   * ``conflict``: two sources (or two revisions) give different values for one check (a domain
     check's ``value`` pattern); both are shown. A question that names a version
     (``contract 4.5``) keeps only evidence of that version when some exists;
   * ``gap``: a domain check is still missing; the answer names it;
   * ``not_established``: a derived check is missing, or the question claims *always / never /
     guaranteed / cannot* and no found check ``covers_absolute``;
   * ``supported``: every check is covered; the answer quotes one sentence per check, cited
     (derived checks: the extractive answer to the question first, then the check sentences it
     does not already quote; ``not_established`` with derived checks quotes it too, after saying
     what is not established).

   Every answer opens with its scope ("From the 4 documents you named").
7. With an LLM generator the same context goes to the model; its answer is ``supported`` only if
   it cites, for every check, a document that satisfies it (else ``not_established``: the model
   did not use the evidence). An optional :class:`SufficiencyJudge` (an LLM asked which checks
   the evidence covers) fails closed: an unparseable reply marks every check missing.

Version filter: searches see current revisions only (the store's default), so "which rollback
setting is active in production" is answered from the current revision and, with the bundled
requirements, cites its approving change; a domain with ``history: true`` ("why did it change")
also searches every older revision of the documents found, and the answer quotes them oldest first.
"""

from __future__ import annotations

import time

from citewise.answer.context import Context, ContextAssembler
from citewise.answer.marks import (
    CheckResult,
    EvidenceItem,
    GapTrace,
    SufficiencyJudge,  # noqa: F401 (re-exported)
    _version_filter,
    find_conflicts,
    mark_checks,
)
from citewise.answer.question import analyze_question, to_reader
from citewise.answer.requirements import Check, Domain, Requirements, derive_checks  # noqa: F401 (re-exported)
from citewise.answer.scope import AskRequest, SourceScope
from citewise.answer.units import clean
from citewise.core import ABSTENTION_TEXT, Answer, Citation, Filters, Hit, Principal, Reason, ReasonCode
from citewise.retrieval.retrievers import effective_filters

OUTCOMES = ("supported", "gap", "conflict", "not_established", "abstained")


def already_quoted(line: str, quoted: str) -> bool:
    """Whether a cited check ``line`` says nothing the ``quoted`` answer does not: one of its
    sentences, compared as a run of words (case, markup, punctuation and citation markers
    ignored), occurs whole in the quoted text. A check's evidence is often the same sentence as a
    quoted unit, cut or marked up differently (the setting name without its code marks, no final
    period); it is not said twice.

    >>> already_quoted("delay Number of seconds (float) [doc:a]", "``delay``: Number of seconds (float). [doc:a] More.")
    True
    >>> already_quoted("The default is 3 seconds. [doc:a]", "``delay``: Number of seconds (float). [doc:a]")
    False
    """
    from citewise.answer.citations import split_cited_sentences
    from citewise.answer.select.paragraph import norm_text

    have = f" {norm_text(clean(' '.join(s for s, _ in split_cited_sentences(quoted))))} "
    return any((w := norm_text(clean(s))) and f" {w} " in have for s, _ in split_cited_sentences(line))


def _scope_phrase(scope: SourceScope) -> str:
    s = scope.describe()
    return s[0].upper() + s[1:]


class GapController:
    """Answer with required checks and bounded follow-up retrieval (see module docstring).

    Args:
        answerer: a :class:`citewise.answer.pipeline.Answerer` (its retriever, store, scorer,
            threshold and generator are used).
        requirements: domain requirements (None or empty: checks are derived from the question).
        assembler_kw: extra :class:`ContextAssembler` settings (``budget_tokens`` comes from the
            request).
        judge: an optional :class:`SufficiencyJudge` consulted after assembly.
    """

    def __init__(
        self,
        answerer,
        requirements: Requirements | None = None,
        assembler_kw: dict | None = None,
        judge: SufficiencyJudge | None = None,
    ):
        self.answerer = answerer
        self.requirements = requirements or Requirements()
        self.assembler_kw = dict(assembler_kw or {})
        self.judge = judge

    def checks_for(self, question: str, filters: Filters | None = None) -> tuple[Domain | None, list[Check]]:
        """The domain (None when derived) and the required checks for ``question`` (derived
        checks weigh terms by their IDF among the chunks ``filters`` let through; a term absent
        from them weighs 0)."""
        dom = self.requirements.domain_for(question)
        if dom:
            return dom, list(dom.checks)
        scorer = getattr(self.answerer, "scorer", None)
        f = filters or Filters(groups=("public",))
        # a term no visible chunk holds is paraphrase vocabulary ("actually"): it weighs nothing
        weight = (lambda t: scorer.idf(t, f) if scorer.df(t, f) else 0.0) if scorer is not None else None
        return None, derive_checks(question, weight)

    def _search(self, query: str, k: int, principal, filters) -> list[Hit]:
        return self.answerer.retriever.search(query, k, principal=principal, filters=filters)

    def _history_hits(
        self, question: str, doc_ids: list[str], principal, filters: Filters | None
    ) -> tuple[list[Hit], int]:
        """Hits from every older revision (``id@version``) of ``doc_ids`` the principal may read,
        and the number of searches run (one per revision)."""
        docs = self.answerer.store.documents()
        groups = set(effective_filters(principal, filters).groups or ())
        out: list[Hit] = []
        searches = 0
        for d in doc_ids:
            for hid, e in docs.items():
                if hid.startswith(d + "@") and groups & set(e.groups):
                    f = Filters(doc_ids=(hid,), version=e.version)
                    out += self._search(question, 2, principal, f)
                    searches += 1
        return out, searches

    def ask(
        self,
        question: str,
        request: AskRequest | None = None,
        *,
        principal: Principal | None = None,
        filters: Filters | None = None,
    ) -> tuple[Answer, GapTrace]:
        """Answer ``question`` within ``request`` (scope, budget, deadline, rounds).

        Returns the :class:`Answer` (``outcome`` one of :data:`OUTCOMES`) and the
        :class:`GapTrace`.

        Raises:
            ChatError: the LLM generator's endpoint failed (a judge's failure never raises).
        """
        request = request or AskRequest()
        t0 = time.perf_counter()
        deadline = None if request.deadline_ms is None else t0 + request.deadline_ms / 1000.0
        scope = request.scope
        sfilters = scope.filters(filters)
        trace = GapTrace(scope=scope.as_dict())
        dom, checks = self.checks_for(question, effective_filters(principal, sfilters))
        trace.domain = dom.name if dom else ""
        store = self.answerer.store
        docs = store.documents()
        revisions = {d: e.content_hash for d, e in docs.items()}
        ans = Answer(ABSTENTION_TEXT, "abstained", generator=getattr(self.answerer.generator, "name", ""))
        # round 1: the question itself (evidence score and abstention as the plain answerer does)
        a = self.answerer.assess(question, request.k, principal=principal, filters=sfilters)
        trace.retrieval_calls += 1
        pool: list[Hit] = list(a.hits)
        chunks = dict(a.chunks)
        rank_of = {h.chunk_id: i for i, h in enumerate(pool)}
        results = mark_checks(checks, [chunks[h.chunk_id] for h in pool if h.chunk_id in chunks], revisions, 1)
        _version_filter(question, results)
        trace.rounds.append(
            {
                "round": 1,
                "queries": [question],
                "new_chunks": [h.chunk_id for h in pool],
                "missing_after": [n for n, r in results.items() if r.status == "missing"],
            }
        )
        if dom is not None and dom.history and pool:
            # part of round 1: one search per older revision of the two best documents
            extra, searches = self._history_hits(
                question, list(dict.fromkeys(h.doc_id for h in pool))[:2], principal, sfilters
            )
            trace.retrieval_calls += searches
            for h in extra:
                if h.chunk_id not in rank_of:
                    rank_of[h.chunk_id] = len(pool)
                    pool.append(h)
            chunks.update(store.get_chunks([h.chunk_id for h in extra if h.chunk_id not in chunks]))
        round_no = 1
        while pool and any(r.status == "missing" for r in results.values()):
            if round_no >= request.max_rounds:
                break
            if deadline is not None and time.perf_counter() >= deadline:
                trace.deadline_hit = True
                break
            round_no += 1
            missing = [results[n].check for n, r in results.items() if r.status == "missing"]
            new: list[str] = []
            for chk in missing:
                hits = self._search(chk.query, request.k, principal, sfilters)
                trace.retrieval_calls += 1
                for h in hits:
                    if h.chunk_id not in rank_of:
                        rank_of[h.chunk_id] = len(pool)
                        pool.append(h)
                        new.append(h.chunk_id)
            chunks.update(store.get_chunks([i for i in new if i not in chunks]))
            results = mark_checks(
                checks, [chunks[h.chunk_id] for h in pool if h.chunk_id in chunks], revisions, round_no, results
            )
            _version_filter(question, results)
            trace.rounds.append(
                {
                    "round": round_no,
                    "queries": [c.query for c in missing],
                    "new_chunks": new,
                    "missing_after": [n for n, r in results.items() if r.status == "missing"],
                }
            )
        trace.found_ids = [h.chunk_id for h in pool]
        ans.retrieved_ids = list(trace.found_ids)
        if a.evidence is not None:
            ans.best_score = a.score
        # assemble: required sources first (one satisfying chunk per check), then by rank
        required = list(dict.fromkeys(e.chunk_id for r in results.values() for e in r.evidence[:2]))
        # parent expansion only where needed: a satisfying chunk cut from a longer section brings
        # the section's first chunk (its heading, and any qualifying table before the subsections)
        parents = [chunks[i].parent_id for i in required if i in chunks and getattr(chunks[i], "parent_id", None)]
        parents = [p for p in dict.fromkeys(parents) if p not in chunks]
        if parents:
            chunks.update(store.get_chunks(parents))
        for i in list(required):
            p = getattr(chunks.get(i), "parent_id", None)
            if p and p in chunks and p not in required:
                required.insert(required.index(i), p)
                if p not in rank_of:
                    trace.expanded.append(p)
                    c = chunks[p]
                    rank_of[p] = len(pool)
                    pool.append(Hit(p, c.doc_id, 0.0, len(pool) + 1, "parent", c.title))
        ordered = sorted(
            pool,
            key=lambda h: (
                0 if h.chunk_id in required else 1,
                required.index(h.chunk_id) if h.chunk_id in required else rank_of[h.chunk_id],
            ),
        )
        kw = {"min_sources": max(3, len({chunks[i].doc_id for i in required if i in chunks}))}
        kw.update(self.assembler_kw)
        assembler = ContextAssembler(budget_tokens=request.budget_tokens, **kw)
        ranked = [Hit(h.chunk_id, h.doc_id, h.score, i, h.stage, h.title) for i, h in enumerate(ordered, start=1)]
        context = (
            assembler.assemble(question, ranked, store, chunks)
            if ranked
            else Context(question, [], request.budget_tokens)
        )
        ans.timings["controller_s"] = time.perf_counter() - t0
        # the quoted answer reads the chunks in retrieval order, as the selector was trained on:
        # the assembly order (required sources first) decides only what fits the budget
        first = {i: rank_of[h.chunk_id] for i, h in enumerate(ordered, start=1)}
        reading = Context(
            question,
            sorted(context.chunks, key=lambda c: first.get(c.rank, len(pool))),
            context.budget,
            context.dropped,
        )
        f = effective_filters(principal, sfilters)
        signals = {"qvec": a.qvec, "idf": lambda t: self.answerer.scorer.idf(t, f)}
        self._conclude(
            question, ans, trace, context, checks, dom, scope, a.reason, revisions, round_no, results, reading, signals
        )
        ans.timings["total_s"] = time.perf_counter() - t0
        ans.evidence = {"controller": trace.as_dict()}
        return ans, trace

    def _conclude(
        self,
        question,
        ans,
        trace,
        context,
        checks,
        dom,
        scope,
        abstain_reason,
        revisions,
        round_no,
        results=None,
        reading: Context | None = None,
        signals: dict | None = None,
    ) -> None:
        """Mark the checks on ``context`` and decide the outcome. The quoted extractive answer
        reads ``reading`` (the same chunks in retrieval order; default ``context``) with the plain
        answer's ``signals`` (``qvec``, ``idf``: the question's vector, the visible corpus's IDF)."""
        ans.context_ids = [c.chunk_id for c in context.chunks]
        results = mark_checks(checks, context.chunks, revisions, round_no, results)
        _version_filter(question, results)
        trace.checks = list(results.values())
        if self.judge is not None and context.chunks:
            trace.judge = self.judge.judge(question, context, checks)
            trace.model_calls += 1
            rule_missing = [n for n, r in results.items() if r.status == "missing"]
            # against the rule-based checks: a miss calls evidence sufficient that lacks a check;
            # an unnecessary fallback calls complete evidence insufficient
            trace.judge["miss"] = trace.judge["verdict"] == "sufficient" and bool(rule_missing)
            trace.judge["unnecessary_fallback"] = trace.judge["verdict"] == "insufficient" and not rule_missing
        self._decide(
            question, ans, trace, context, results, scope, abstain_reason, dom, reading or context, signals or {}
        )

    def answer_from_context(
        self, question: str, context: Context, scope: SourceScope | None = None
    ) -> tuple[Answer, GapTrace]:
        """Decide and answer from a context given whole (no retrieval): the intact-document and
        oracle-evidence conditions of :mod:`citewise.evaluation.conditions` use it, so they share
        the checks, outcome rules and citation rules of :meth:`ask`."""
        t0 = time.perf_counter()
        scope = scope or SourceScope()
        dom, checks = self.checks_for(question)
        trace = GapTrace(domain=dom.name if dom else "", scope=scope.as_dict())
        trace.found_ids = [c.chunk_id for c in context.chunks]
        revisions = {d: e.content_hash for d, e in self.answerer.store.documents().items()}
        ans = Answer(
            ABSTENTION_TEXT,
            "abstained",
            generator=getattr(self.answerer.generator, "name", ""),
            retrieved_ids=list(trace.found_ids),
        )
        self._conclude(question, ans, trace, context, checks, dom, scope, None, revisions, 0)
        ans.timings["total_s"] = time.perf_counter() - t0
        ans.evidence = {"controller": trace.as_dict()}
        return ans, trace

    def _decide(
        self,
        question,
        ans: Answer,
        trace: GapTrace,
        context: Context,
        results: dict[str, CheckResult],
        scope: SourceScope,
        abstain_reason: Reason | None,
        dom,
        reading: Context,
        signals: dict,
    ) -> None:
        phrase = _scope_phrase(scope)
        found = [r for r in results.values() if r.status == "found"]
        missing = [r for r in results.values() if r.status == "missing"]
        if trace.judge and trace.judge["verdict"] == "insufficient":
            # fail closed: a check the judge does not confirm counts as missing
            for r in found[:]:
                if r.check.name in trace.judge["missing"]:
                    found.remove(r)
                    missing.append(r)
        judged = set(trace.judge["missing"]) if trace.judge else set()
        # what a wh-question asks is the answer's business, not a condition left unstated
        unstated = [r for r in missing if not r.check.asked or r.check.name in judged]
        # a low evidence score yields to found checks; a rule does not (an unknown name, a name or
        # subject the evidence lacks, a live value): found words cannot make the question in scope
        rule = bool(abstain_reason) and getattr(abstain_reason, "code", None) != ReasonCode.BELOW_THRESHOLD
        # checks derived from the question's own words lift a low score only when every one is
        # stated: one clause found somewhere does not make the question in scope
        weak = not found or (dom is None and bool(missing))
        if not context.chunks or (abstain_reason and (weak or rule)):
            ans.outcome = "abstained"
            ans.reason = abstain_reason or Reason.of(ReasonCode.NOTHING_IN_SCOPE)
            if scope.doc_ids is not None and not scope.doc_ids:
                ans.reason = Reason.of(ReasonCode.SCOPE_UNAVAILABLE)
            ans.text = ABSTENTION_TEXT
            return
        conflicts = find_conflicts({r.check.name: r for r in found})
        trace.conflicts = {k: [e.as_dict() for e in v] for k, v in conflicts.items()}
        by_chunk = {c.chunk_id: c for c in context.chunks}
        cites: dict[str, Citation] = {}

        def cite(e: EvidenceItem) -> str:
            cc = by_chunk.get(e.chunk_id)
            key = e.source_id
            if key not in cites:
                cites[key] = Citation(
                    e.source_id, cc.title if cc else "", e.version, e.updated, e.chunk_id, e.start, e.end
                )
            return f"{clean(e.text)} [doc:{e.source_id}]"  # as a reader sees it: no Markdown

        lines: list[str] = []
        if conflicts:
            ans.outcome = "conflict"
            for name, items in conflicts.items():
                lines.append(f"{phrase}, the sources disagree on {name}:")
                lines += [f"- {cite(e)} (version {e.version or '?'}, revision {e.revision or '?'})" for e in items]
        elif missing and (dom is not None):
            ans.outcome = "gap"
            names = ", ".join(r.check.name for r in missing)
            lines.append(f"{phrase}, I cannot establish the answer: the evidence is missing the {names}.")
            lines += [cite(r.evidence[0]) for r in found]
            ans.reason = Reason.of(ReasonCode.GAP, missing=names)
        elif unstated or (analyze_question(question).absolute and not any(r.check.covers_absolute for r in found)):
            ans.outcome = "not_established"
            # the question's own clause, said back to the asker ("I set X" -> "you set X")
            what = (
                ", ".join(f"'{to_reader(r.check.name)}'" for r in unstated)
                if unstated
                else "the always/never/guaranteed claim"
            )
            lines.append(f"{phrase}, the authorised sources do not establish {what}.")
            lines += [cite(r.evidence[0]) for r in found]
            ans.reason = Reason.of(ReasonCode.NOT_ESTABLISHED, what=what)
        else:
            ans.outcome = "supported"
            lines.append(f"{phrase}:")
            if dom is not None and dom.history:
                items = sorted(
                    {e.source_id: e for r in found for e in r.evidence}.values(),
                    key=lambda e: (e.effective or e.updated, e.source_id),
                )
                lines += [cite(e) for e in items]
            else:
                lines += [cite(r.evidence[0]) for r in found]
        gen = self.answerer.generator
        if getattr(gen, "name", "extractive") != "extractive" and ans.outcome == "supported":
            self._generate(question, ans, trace, context, found, phrase)
            return
        if dom is None and ans.outcome in ("supported", "not_established") and context.chunks:
            lines = self._with_quoted(question, reading, lines, cites, signals)
        ans.text = "\n".join(dict.fromkeys(lines))
        ans.citations = list(cites.values())
        ans.used_ids = list(dict.fromkeys(c.chunk_id for c in ans.citations))

    def _with_quoted(
        self, question: str, context: Context, lines: list[str], cites: dict[str, Citation], signals: dict
    ) -> list[str]:
        """``lines`` with the extractive answer to ``question`` from ``context`` after the opening
        line (the selector's units, cited), and without the check sentences it already quotes:
        derived checks say what is established; the quoted units answer the question itself."""
        from citewise.answer.citations import enforce_citations

        draft = self.answerer.generator.generate(question, context, **signals)
        checked = enforce_citations(draft.text, context, draft.spans)
        if checked.outcome == "abstained":
            return lines
        for c in checked.citations:
            cites.setdefault(c.doc_id, c)
        rest = [ln for ln in lines[1:] if not already_quoted(ln, checked.text)]
        return [lines[0], checked.text, *rest]

    def _generate(self, question, ans: Answer, trace: GapTrace, context: Context, found, phrase: str) -> None:
        """LLM path: the model answers from the same context; supported only if it cites a
        satisfying source for every check."""
        from citewise.answer.citations import enforce_citations

        draft = self.answerer.generator.generate(question, context)
        trace.model_calls += 1
        checked = enforce_citations(draft.text, context, draft.spans)
        ans.text = f"{phrase}: {checked.text}"
        ans.citations, ans.used_ids = checked.citations, checked.used_ids
        ans.fabricated = list(dict.fromkeys(draft.fabricated + checked.fabricated))
        ans.dropped = draft.withdrawn + checked.dropped
        ans.notes, ans.llm = list(draft.notes), dict(draft.llm)
        cited = {c.doc_id for c in checked.citations}
        unused = [r.check.name for r in found if not any(e.source_id in cited for e in r.evidence)]
        if checked.outcome == "abstained" or unused:
            ans.outcome = "not_established"
            ans.reason = (
                Reason.of(ReasonCode.MODEL_CITED_NOTHING, checks=", ".join(unused))
                if unused
                else Reason.of(ReasonCode.NO_SUPPORTED_SENTENCE)
            )


def ask_with_controller(
    idx,
    question: str,
    *,
    k: int = 5,
    retriever: str = "shipped",
    principal: Principal | None = None,
    filters: Filters | None = None,
    generator="extractive",
    scope=None,
    max_rounds: int | None = None,
    deadline_ms: float | None = None,
    budget_tokens: int | None = None,
    requirements=None,
    reranker=None,
    rerank_depth: int | None = None,
    judge=None,
) -> Answer:
    """``citewise ask`` through the controller on an :class:`~citewise.index.Index`.

    ``scope``: ``--scope`` values (resolved for ``principal``); ``requirements``: a
    :class:`Requirements` or the path of a requirements YAML file (None: derived checks);
    ``reranker``/``rerank_depth``: rerank every round's candidates (``--reranker``, as
    :meth:`~citewise.index.Index.ask`), after the scope and permission filters; ``judge``: an
    optional :class:`SufficiencyJudge`. The controller's trace is in the answer's
    ``evidence["controller"]`` (:meth:`GapTrace.as_dict`).

    Raises:
        CitewiseError / InputError: a bad scope value, request setting or requirements file;
        ChatError: the LLM endpoint failed.
    """
    from citewise.answer.scope import DEFAULT_BUDGET_TOKENS, DEFAULT_MAX_ROUNDS, resolve_scope
    from citewise.core import check_query

    check_query(question)
    reqs = (
        requirements
        if isinstance(requirements, Requirements) or requirements is None
        else Requirements.load(requirements)
    )
    request = AskRequest(
        resolve_scope(scope, idx.store, principal),
        budget_tokens=DEFAULT_BUDGET_TOKENS if budget_tokens is None else budget_tokens,
        deadline_ms=deadline_ms,
        max_rounds=DEFAULT_MAX_ROUNDS if max_rounds is None else max_rounds,
        k=k,
    )
    answerer = idx.answerer(retriever, generator, reranker=reranker, rerank_depth=rerank_depth)
    answer, _trace = GapController(answerer, reqs, judge=judge).ask(
        question, request, principal=principal, filters=filters
    )
    return answer
