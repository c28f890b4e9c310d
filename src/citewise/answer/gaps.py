"""The evidence-gap controller: required checks, bounded follow-up retrieval, outcomes.

A question that turns on several conditions ("can a delayed retry charge an order twice?") is
answered only when the evidence covers each condition. The controller (after the design of
S2G-RAG's sufficiency-and-gap judging, ACL 2026, with the bounded request contract of
:mod:`citewise.answer.scope`):

1. **Required checks.** From a YAML file of domain requirements (:class:`Requirements`; the
   bundled ``sample/payment/requirements.yaml`` lists the payment example's ``retry timing``,
   ``idempotency key behaviour``, ``provider guarantee`` and ``uncertain first outcome``), or,
   when no domain applies, derived from the question's conditions (:func:`derive_checks`: the
   main clause and each clause opened by *after*, *if*, *when*, *while*, *before*, *once*,
   *unless*, *without*, *during*, *and*).
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
   * ``supported``: every check is covered; the answer quotes one sentence per check, cited.

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

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from citewise.answer.context import Context, ContextAssembler, ContextChunk
from citewise.answer.evidence import QUESTION_WORDS
from citewise.answer.scope import AskRequest, SourceScope
from citewise.core import ABSTENTION_TEXT, Answer, Citation, Filters, Hit, InputError, Principal, Reason, ReasonCode
from citewise.retrieval.retrievers import effective_filters
from citewise.text.analyzer import analyze
from citewise.text.sentences import split_sentences

OUTCOMES = ("supported", "gap", "conflict", "not_established", "abstained")

#: Words that make a claim absolute; such a claim needs a found check with ``covers_absolute``.
ABSOLUTE = re.compile(r"\b(always|never|guarantee[sd]?|guaranteed|cannot|can'?t|impossible|under no circumstances)\b", re.I)
_CONDITION = re.compile(r"\b(after|if|when|whenever|while|before|once|unless|without|during|and)\b", re.I)
_VERSION_IN_Q = re.compile(r"\b(?:version|v|contract|integration)\s*(\d+(?:\.\d+)+)\b", re.I)


@dataclass(frozen=True)
class Check:
    """One condition the evidence must cover.

    Attributes:
        name: e.g. ``provider guarantee``.
        query: the targeted follow-up query sent when the check is missing.
        evidence: compiled patterns; a sentence matching one satisfies the check.
        value: pattern with one group: the value sources must agree on (None: no comparison).
        covers_absolute: a found check of this kind may back an always/never/guaranteed claim.
        versioned: when the question names a version (``contract 4.5``), only evidence from a
            document of that version satisfies the check (a fact that changes between versions).
        terms: for derived checks, the analyzed terms a sentence must mostly contain.
        min_terms: for derived checks, how many of ``terms`` must occur in one sentence.
        weights: for derived checks, one weight per term (IDF; equal when not given). A sentence
            satisfies the check when it holds ``min_terms`` terms *and* at least half the weight.
    """

    name: str
    query: str
    evidence: tuple = ()
    value: re.Pattern | None = None
    covers_absolute: bool = False
    terms: tuple[str, ...] = ()
    min_terms: int = 0
    weights: tuple[float, ...] = ()
    versioned: bool = False

    @property
    def derived(self) -> bool:
        """True for a check derived from the question (no domain file)."""
        return bool(self.terms)

    def match(self, sentence: str) -> bool:
        """Whether ``sentence`` satisfies this check."""
        return self.strength(sentence) > 0

    def strength(self, sentence: str) -> float:
        """0 when ``sentence`` does not satisfy the check; else, for a derived check, how many of
        its terms the sentence holds (the best-holding sentence is its evidence), 1 otherwise."""
        if self.terms:
            have = set(analyze(sentence))
            w = self.weights or (1.0,) * len(self.terms)
            got = [t in have for t in self.terms]
            weight = sum(x for x, g in zip(w, got) if g)
            return weight if sum(got) >= self.min_terms and weight >= 0.5 * sum(w) else 0
        return 1 if any(p.search(sentence) for p in self.evidence) else 0

    def value_of(self, sentence: str) -> str:
        """The compared value in ``sentence`` ('' when none or no ``value`` pattern)."""
        if self.value is None:
            return ""
        m = self.value.search(sentence)
        return m.group(1).lower() if m else ""


@dataclass(frozen=True)
class Domain:
    """Requirements for one kind of question: ``when`` patterns and the checks."""

    name: str
    when: tuple
    checks: tuple[Check, ...]
    history: bool = False

    def applies(self, question: str) -> bool:
        """Whether one of the ``when`` patterns matches ``question``."""
        return any(p.search(question) for p in self.when)


def _compile(pattern, where: str, source: str) -> re.Pattern:
    if not isinstance(pattern, str) or not pattern.strip():
        raise InputError(source, f"{where}: must be a non-empty regular expression string")
    try:
        return re.compile(pattern, re.I)
    except re.error as e:
        raise InputError(source, f"{where}: not a regular expression ({e})") from None


@dataclass(frozen=True)
class Requirements:
    """Domain requirements loaded from YAML (format: ``sample/payment/requirements.yaml``)::

        domains:
          - name: payment retry safety
            when: ['regex on the question', ...]
            history: false            # optional: also search older revisions
            checks:
              - name: retry timing
                query: follow-up search text
                evidence: ['regex on a sentence', ...]
                value: 'regex with one (group)'   # optional
                covers_absolute: false            # optional
                versioned: false                  # optional: a named version must match
    """

    domains: tuple[Domain, ...] = ()

    @classmethod
    def load(cls, path: str | Path) -> "Requirements":
        """Read and check a requirements file.

        Raises:
            InputError: unreadable file, bad YAML, or a missing / mistyped field (the message
                names the file and the field, e.g. ``domains[0].checks[1].query``).
        """
        src = str(path)
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except OSError as e:
            raise InputError(src, f"cannot read requirements file ({e.strerror or e})") from None
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            raise InputError(src, f"not valid YAML ({getattr(e, 'problem', e)})",
                             line=mark.line + 1 if mark else None) from None
        return cls.from_mapping(data, src)

    @classmethod
    def from_mapping(cls, data, source: str = "requirements") -> "Requirements":
        """Build from parsed YAML (see :meth:`load` for errors)."""
        if not isinstance(data, dict) or not isinstance(data.get("domains"), list):
            raise InputError(source, "domains: expected a list of domains at the top level")
        domains = []
        for i, d in enumerate(data["domains"]):
            at = f"domains[{i}]"
            if not isinstance(d, dict):
                raise InputError(source, f"{at}: expected a mapping")
            unknown = set(d) - {"name", "when", "checks", "history"}
            if unknown:
                raise InputError(source, f"{at}: unknown key(s) {', '.join(sorted(unknown))}")
            if not isinstance(d.get("name"), str) or not d["name"].strip():
                raise InputError(source, f"{at}.name: a non-empty string is required")
            if not isinstance(d.get("when"), list) or not d["when"]:
                raise InputError(source, f"{at}.when: a non-empty list of patterns is required")
            if not isinstance(d.get("checks"), list) or not d["checks"]:
                raise InputError(source, f"{at}.checks: a non-empty list of checks is required")
            checks = []
            for j, c in enumerate(d["checks"]):
                cat = f"{at}.checks[{j}]"
                if not isinstance(c, dict):
                    raise InputError(source, f"{cat}: expected a mapping")
                unknown = set(c) - {"name", "query", "evidence", "value", "covers_absolute", "versioned"}
                if unknown:
                    raise InputError(source, f"{cat}: unknown key(s) {', '.join(sorted(unknown))}")
                for key in ("name", "query"):
                    if not isinstance(c.get(key), str) or not c[key].strip():
                        raise InputError(source, f"{cat}.{key}: a non-empty string is required")
                if not isinstance(c.get("evidence"), list) or not c["evidence"]:
                    raise InputError(source, f"{cat}.evidence: a non-empty list of patterns is required")
                value = None
                if c.get("value") is not None:
                    value = _compile(c["value"], f"{cat}.value", source)
                    if value.groups != 1:
                        raise InputError(source, f"{cat}.value: needs exactly one (group), has {value.groups}")
                flags = {}
                for key in ("covers_absolute", "versioned"):
                    flags[key] = c.get(key, False)
                    if not isinstance(flags[key], bool):
                        raise InputError(source, f"{cat}.{key}: true or false")
                checks.append(Check(c["name"].strip(), c["query"].strip(),
                                    tuple(_compile(p, f"{cat}.evidence[{k}]", source) for k, p in enumerate(c["evidence"])),
                                    value, flags["covers_absolute"], versioned=flags["versioned"]))
            hist = d.get("history", False)
            if not isinstance(hist, bool):
                raise InputError(source, f"{at}.history: true or false")
            domains.append(Domain(d["name"].strip(),
                                  tuple(_compile(p, f"{at}.when[{k}]", source) for k, p in enumerate(d["when"])),
                                  tuple(checks), hist))
        return cls(tuple(domains))

    def domain_for(self, question: str) -> Domain | None:
        """The first domain whose ``when`` matches ``question`` (None: derive checks)."""
        return next((d for d in self.domains if d.applies(question)), None)


def derive_checks(question: str, idf=None) -> list[Check]:
    """Checks derived from the question's conditions (no domain file applies).

    The question is cut at condition words (:data:`_CONDITION`); each piece with content terms
    (analyzed, minus question words) becomes a check, satisfied by one sentence holding at least
    half of its terms (rounded up; two thirds missed "When did the first capture for order 88121
    actually succeed?" on the payment set's dev split) and, with ``idf`` (term -> weight, e.g.
    :meth:`EvidenceScorer.idf`), at least half of their IDF weight, so the rare terms count most. Its follow-up query is the piece's own words.

    >>> [c.name for c in derive_checks("Does the worker retry after a capture times out?")]
    ['the worker retry', 'a capture times out']
    """
    body = re.sub(r"^\s*(does|do|did|can|could|is|are|will|would|should|what|which|how|why|when|who)\b", "",
                  question.strip().rstrip("?"), flags=re.I)
    pieces = [p.strip(" ,;") for p in _CONDITION.split(body)]
    pieces = [p for p in pieces if p and not _CONDITION.fullmatch(p)]
    checks: list[Check] = []
    for p in pieces:
        terms = tuple(t for t in dict.fromkeys(analyze(p)) if t not in QUESTION_WORDS)
        if not terms:
            continue
        need = max(1, -(-len(terms) // 2))
        weights = tuple(float(idf(t)) for t in terms) if idf else ()
        checks.append(Check(p, p, terms=terms, min_terms=need, weights=weights))
    return checks


@dataclass(frozen=True)
class EvidenceItem:
    """A sentence that satisfies a check, with its source identity.

    Attributes:
        check: the check's name.
        source_id: document id (``id@version`` for an older revision).
        revision: content hash of the document version (first 12 hex digits; '' if unknown).
        version, effective, updated: the document's version string and ISO dates ('' if none).
        chunk_id: the chunk holding the sentence.
        start, end: character offsets of the sentence in the source file.
        text: the sentence.
        value: the compared value ('' when the check has none).
    """

    check: str
    source_id: str
    revision: str
    version: str
    effective: str
    updated: str
    chunk_id: str
    start: int
    end: int
    text: str
    value: str = ""

    def as_dict(self) -> dict:
        """JSON form."""
        return dict(self.__dict__)


@dataclass
class CheckResult:
    """A check and what satisfied it.

    Attributes:
        check: the :class:`Check`.
        status: ``found`` | ``missing``.
        evidence: satisfying sentences, best ranked first, at most one per source.
        round: retrieval round in which it was first found (0 when missing).
    """

    check: Check
    status: str = "missing"
    evidence: list[EvidenceItem] = field(default_factory=list)
    round: int = 0

    def as_dict(self) -> dict:
        """JSON form: name, status, round, query, evidence."""
        return {"name": self.check.name, "status": self.status, "round": self.round,
                "query": self.check.query, "derived": self.check.derived,
                "evidence": [e.as_dict() for e in self.evidence]}


@dataclass
class GapTrace:
    """What the controller did for one question (``ask --json`` key ``controller``).

    Attributes:
        domain: the requirements domain used ('' when checks were derived).
        scope: :meth:`SourceScope.as_dict`.
        checks: check results on the retained evidence.
        rounds: per round: ``{"round", "queries", "new_chunks", "missing_after"}``.
        deadline_hit: a round was skipped because the deadline had passed.
        found_ids: every chunk id any search returned (union over rounds).
        conflicts: ``{check: [EvidenceItem dict, ...]}`` for checks whose sources disagree.
        expanded: parent-section chunks added because a satisfying chunk was cut from them.
        judge: LLM sufficiency judge record (``{"verdict", "missing", "error", "miss",
            "unnecessary_fallback"}``), when used; ``miss``: judged sufficient while a rule-based
            check is missing; ``unnecessary_fallback``: judged insufficient while every check is found.
        model_calls: LLM calls made (generator and judge).
        retrieval_calls: searches run.
    """

    domain: str = ""
    scope: dict = field(default_factory=dict)
    checks: list[CheckResult] = field(default_factory=list)
    rounds: list[dict] = field(default_factory=list)
    deadline_hit: bool = False
    found_ids: list[str] = field(default_factory=list)
    conflicts: dict = field(default_factory=dict)
    expanded: list[str] = field(default_factory=list)
    judge: dict | None = None
    model_calls: int = 0
    retrieval_calls: int = 0

    def as_dict(self) -> dict:
        """JSON form."""
        return {"domain": self.domain, "scope": self.scope, "checks": [c.as_dict() for c in self.checks],
                "rounds": self.rounds, "deadline_hit": self.deadline_hit, "found_ids": self.found_ids,
                "conflicts": self.conflicts, "expanded": self.expanded, "judge": self.judge, "model_calls": self.model_calls,
                "retrieval_calls": self.retrieval_calls}


def mark_checks(checks: list[Check], chunks: list, revisions: dict[str, str], round_no: int = 0,
                previous: dict[str, CheckResult] | None = None) -> dict[str, CheckResult]:
    """Mark each check found / missing against the sentences of ``chunks`` (best first).

    ``chunks``: StoredChunk or ContextChunk objects (``chunk_id``, ``doc_id``, ``text``,
    ``start``, ``version``, ``updated``, optionally ``effective``). ``revisions``: content hash
    per doc id. ``previous``: earlier results, whose ``round`` is kept for checks found before.
    """
    out: dict[str, CheckResult] = {}
    sentences = []  # (chunk, start, end, text) in rank order, then document order
    for c in chunks:
        text = c.text
        for s, e in split_sentences(text) or [(0, len(text))]:  # list items are sentences too
            sentences.append((c, s, e, text[s:e]))
    for chk in checks:
        res = CheckResult(chk)
        scored = [(chk.strength(t), i) for i, (_, _, _, t) in enumerate(sentences)]
        # strongest first (derived checks), then rank order; at most one sentence per document
        seen_docs: set[str] = set()
        for strength, i in sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], x[1])):
            c, s, e, sent = sentences[i]
            if c.doc_id in seen_docs:
                continue
            seen_docs.add(c.doc_id)
            prefix = max(0, len(c.text) - (c.end - c.start))
            base = c.start - prefix
            res.evidence.append(EvidenceItem(
                chk.name, c.doc_id, revisions.get(c.doc_id, "")[:12], c.version or "",
                getattr(c, "effective", "") or "", c.updated or "", c.chunk_id,
                base + s, base + e, " ".join(sent.split()), chk.value_of(sent)))
        if res.evidence:
            res.status = "found"
            prev = (previous or {}).get(chk.name)
            res.round = prev.round if prev is not None and prev.round else round_no
        out[chk.name] = res
    return out


def _version_filter(question: str, results: dict[str, CheckResult]) -> None:
    """Keep only evidence of the version a question names: for a ``versioned`` check always (no
    evidence of that version = missing), for others when some exists."""
    wanted = set(_VERSION_IN_Q.findall(question))
    if not wanted:
        return
    for r in results.values():
        match = [e for e in r.evidence if e.version in wanted]
        if match or r.check.versioned:
            r.evidence = match
            if not match:
                r.status, r.round = "missing", 0


def find_conflicts(results: dict[str, CheckResult]) -> dict[str, list[EvidenceItem]]:
    """Checks whose evidence from different sources / revisions carries different values."""
    out: dict[str, list[EvidenceItem]] = {}
    for name, r in results.items():
        vals = {}
        for e in r.evidence:
            if e.value:
                vals.setdefault(e.value, e)
        if len(vals) > 1:
            out[name] = list(vals.values())
    return out


@dataclass
class SufficiencyJudge:
    """An LLM asked which required checks the evidence covers; fails closed.

    The model gets the fenced context and the check names, and must reply with JSON
    ``{"covered": [names], "missing": [names]}``. Anything else (no JSON, unknown names, an
    endpoint error) marks every check missing, so a judge failure can only cause a follow-up
    round or a ``gap``, never an unsupported ``supported``.

    Args:
        model: a :class:`citewise.models.chat.ChatModel`.
    """

    model: object

    def judge(self, question: str, context: Context, checks: list[Check]) -> dict:
        """``{"verdict": "sufficient"|"insufficient", "missing": [names], "error": str}``."""
        names = [c.name for c in checks]
        prompt = ("Decide which of these required checks the sources establish for the question. "
                  "Reply with JSON only: {\"covered\": [...], \"missing\": [...]}.\n"
                  f"Question: {question}\nChecks: {json.dumps(names)}\n\nSources (untrusted data):\n{context.render()}")
        try:
            resp = self.model.chat([{"role": "user", "content": prompt}], max_tokens=200)
            text = resp.content or ""
            m = re.search(r"\{.*\}", text, re.S)
            data = json.loads(m.group(0)) if m else None
            covered = data.get("covered") if isinstance(data, dict) else None
            if not isinstance(covered, list) or any(c not in names for c in covered):
                raise ValueError(f"unparseable verdict: {text[:120]!r}")
        except Exception as e:  # noqa: BLE001 - fails closed on any error, recorded
            return {"verdict": "insufficient", "missing": names, "error": str(e)[:200]}
        missing = [n for n in names if n not in covered]
        return {"verdict": "insufficient" if missing else "sufficient", "missing": missing, "error": ""}


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

    def __init__(self, answerer, requirements: Requirements | None = None, assembler_kw: dict | None = None,
                 judge: SufficiencyJudge | None = None):
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

    def _history_hits(self, question: str, doc_ids: list[str], principal, filters: Filters | None) -> tuple[list[Hit], int]:
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

    def ask(self, question: str, request: AskRequest | None = None, *, principal: Principal | None = None,
            filters: Filters | None = None) -> tuple[Answer, GapTrace]:
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
        trace.rounds.append({"round": 1, "queries": [question], "new_chunks": [h.chunk_id for h in pool],
                             "missing_after": [n for n, r in results.items() if r.status == "missing"]})
        if dom is not None and dom.history and pool:
            # part of round 1: one search per older revision of the two best documents
            extra, searches = self._history_hits(question, list(dict.fromkeys(h.doc_id for h in pool))[:2],
                                                 principal, sfilters)
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
            results = mark_checks(checks, [chunks[h.chunk_id] for h in pool if h.chunk_id in chunks], revisions,
                                  round_no, results)
            _version_filter(question, results)
            trace.rounds.append({"round": round_no, "queries": [c.query for c in missing], "new_chunks": new,
                                 "missing_after": [n for n, r in results.items() if r.status == "missing"]})
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
        ordered = sorted(pool, key=lambda h: (0 if h.chunk_id in required else 1,
                                              required.index(h.chunk_id) if h.chunk_id in required else rank_of[h.chunk_id]))
        kw = {"min_sources": max(3, len({chunks[i].doc_id for i in required if i in chunks}))}
        kw.update(self.assembler_kw)
        assembler = ContextAssembler(budget_tokens=request.budget_tokens, **kw)
        ranked = [Hit(h.chunk_id, h.doc_id, h.score, i, h.stage, h.title) for i, h in enumerate(ordered, start=1)]
        context = assembler.assemble(question, ranked, store, chunks) if ranked else Context(question, [], request.budget_tokens)
        ans.timings["controller_s"] = time.perf_counter() - t0
        self._conclude(question, ans, trace, context, checks, dom, scope, a.reason, revisions, round_no, results)
        ans.timings["total_s"] = time.perf_counter() - t0
        ans.evidence = {"controller": trace.as_dict()}
        return ans, trace

    def _conclude(self, question, ans, trace, context, checks, dom, scope, abstain_reason, revisions, round_no,
                  results=None) -> None:
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
        self._decide(question, ans, trace, context, results, scope, abstain_reason, dom)

    def answer_from_context(self, question: str, context: Context, scope: SourceScope | None = None) -> tuple[Answer, GapTrace]:
        """Decide and answer from a context given whole (no retrieval): the intact-document and
        oracle-evidence conditions of :mod:`citewise.evaluation.conditions` use it, so they share
        the checks, outcome rules and citation rules of :meth:`ask`."""
        t0 = time.perf_counter()
        scope = scope or SourceScope()
        dom, checks = self.checks_for(question)
        trace = GapTrace(domain=dom.name if dom else "", scope=scope.as_dict())
        trace.found_ids = [c.chunk_id for c in context.chunks]
        revisions = {d: e.content_hash for d, e in self.answerer.store.documents().items()}
        ans = Answer(ABSTENTION_TEXT, "abstained", generator=getattr(self.answerer.generator, "name", ""),
                     retrieved_ids=list(trace.found_ids))
        self._conclude(question, ans, trace, context, checks, dom, scope, None, revisions, 0)
        ans.timings["total_s"] = time.perf_counter() - t0
        ans.evidence = {"controller": trace.as_dict()}
        return ans, trace

    def _decide(self, question, ans: Answer, trace: GapTrace, context: Context, results: dict[str, CheckResult],
                scope: SourceScope, abstain_reason: Reason | None, dom) -> None:
        phrase = _scope_phrase(scope)
        found = [r for r in results.values() if r.status == "found"]
        missing = [r for r in results.values() if r.status == "missing"]
        if trace.judge and trace.judge["verdict"] == "insufficient":
            # fail closed: a check the judge does not confirm counts as missing
            for r in found[:]:
                if r.check.name in trace.judge["missing"]:
                    found.remove(r)
                    missing.append(r)
        # a low evidence score yields to found checks; a rule does not (an unknown name, a name or
        # subject the evidence lacks, a live value): found words cannot make the question in scope
        rule = abstain_reason is not None and abstain_reason.code != ReasonCode.BELOW_THRESHOLD
        if not context.chunks or (abstain_reason and (not found or rule)):
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
                cites[key] = Citation(e.source_id, cc.title if cc else "", e.version, e.updated, e.chunk_id, e.start, e.end)
            return f"{e.text} [doc:{e.source_id}]"

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
        elif missing or (ABSOLUTE.search(question) and not any(r.check.covers_absolute for r in found)):
            ans.outcome = "not_established"
            what = ", ".join(f"'{r.check.name}'" for r in missing) if missing else "the always/never/guaranteed claim"
            lines.append(f"{phrase}, the authorised sources do not establish {what}.")
            lines += [cite(r.evidence[0]) for r in found]
            ans.reason = Reason.of(ReasonCode.NOT_ESTABLISHED, what=what)
        else:
            ans.outcome = "supported"
            lines.append(f"{phrase}:")
            if dom is not None and dom.history:
                items = sorted({e.source_id: e for r in found for e in r.evidence}.values(),
                               key=lambda e: (e.effective or e.updated, e.source_id))
                lines += [cite(e) for e in items]
            else:
                lines += [cite(r.evidence[0]) for r in found]
        gen = self.answerer.generator
        if getattr(gen, "name", "extractive") != "extractive" and ans.outcome == "supported":
            self._generate(question, ans, trace, context, found, phrase)
            return
        ans.text = "\n".join(dict.fromkeys(lines))
        ans.citations = list(cites.values())
        ans.used_ids = list(dict.fromkeys(c.chunk_id for c in ans.citations))

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
            ans.reason = (Reason.of(ReasonCode.MODEL_CITED_NOTHING, checks=", ".join(unused)) if unused
                          else Reason.of(ReasonCode.NO_SUPPORTED_SENTENCE))


def ask_with_controller(idx, question: str, *, k: int = 5, retriever: str = "shipped",
                        principal: Principal | None = None, filters: Filters | None = None,
                        generator="extractive", scope=None, max_rounds: int | None = None,
                        deadline_ms: float | None = None, budget_tokens: int | None = None,
                        requirements=None, reranker=None, rerank_depth: int | None = None) -> Answer:
    """``citewise ask`` through the controller on an :class:`~citewise.index.Index`.

    ``scope``: ``--scope`` values (resolved for ``principal``); ``requirements``: a
    :class:`Requirements` or the path of a requirements YAML file (None: derived checks);
    ``reranker``/``rerank_depth``: rerank every round's candidates (``--reranker``, as
    :meth:`~citewise.index.Index.ask`), after the scope and permission filters.

    Raises:
        CitewiseError / InputError: a bad scope value, request setting or requirements file;
        ChatError: the LLM endpoint failed.
    """
    from citewise.answer.scope import DEFAULT_BUDGET_TOKENS, DEFAULT_MAX_ROUNDS, resolve_scope
    from citewise.core import check_query

    check_query(question)
    reqs = requirements if isinstance(requirements, Requirements) or requirements is None else Requirements.load(requirements)
    request = AskRequest(resolve_scope(scope, idx.store, principal),
                         budget_tokens=DEFAULT_BUDGET_TOKENS if budget_tokens is None else budget_tokens,
                         deadline_ms=deadline_ms, max_rounds=DEFAULT_MAX_ROUNDS if max_rounds is None else max_rounds,
                         k=k)
    answerer = idx.answerer(retriever, generator, reranker=reranker, rerank_depth=rerank_depth)
    answer, _trace = GapController(answerer, reqs).ask(
        question, request, principal=principal, filters=filters)
    return answer
