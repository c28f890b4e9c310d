"""The answering pipeline: retrieve → evidence score → abstain or assemble → generate → check.

1. Retrieve ``k`` chunks (permission filters inside the search); a chunk holding an
   instruction-like passage (:func:`citewise.text.trust.trusted_first`) goes after every chunk
   without one.
2. Evidence score (:mod:`citewise.answer.evidence`). Below the threshold → abstain ("I have no
   document on this."). Pinning (a document titled with an identifier the question names) only
   reorders the evidence: it never lifts a score, so "What is the capital of France? ZX-900"
   abstains even though a page is titled "ZX-900 override". A score over the threshold still
   abstains when no one passage holds the question's subject (``dense² × passage`` below the
   embedder's passage gate, unless the evidence has the entry of the name the question asks
   about; ``answer.thresholds`` in :mod:`citewise.settings`).
3. Assemble the context (:mod:`citewise.answer.context`: budget, dedup, diversity, neighbour
   expansion, fencing).
4. Sources that disagree on the asked value (:mod:`citewise.answer.disagreement`: a number or
   date the question asks for, stated differently by answer sentences of different documents)
   → the ``conflict`` outcome: both sentences quoted, each cited; nothing is generated.
   Otherwise generate a draft (extractive by default, or an LLM; :mod:`citewise.answer.generators`).
5. Enforce citations (:mod:`citewise.answer.citations`): fabricated ids and uncited sentences
   are dropped; nothing left → abstain.

The :class:`~citewise.core.Answer` carries text, citations (doc id, title, version, updated,
offsets), outcome, retrieved / context / used chunk ids, the evidence score and its parts,
fabricated ids, dropped sentences and per-stage timings in seconds.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace

import numpy as np

from citewise.answer.citations import enforce_citations
from citewise.answer.context import ContextAssembler
from citewise.answer.disagreement import COMPARED_TYPES, conflict_answer, find_conflict
from citewise.answer.spelling import Correction, corrections
from citewise.answer.spelling import apply as apply_corrections
from citewise.answer.evidence import (
    ENTRY_SLOT,
    QUESTION_WORDS,
    RARE_EXACT_DF,
    Evidence,
    EvidenceScorer,
    is_common_word,
    names_cell,
)
from citewise.answer.generators import Generator
from citewise.answer.unit_cache import UnitCache
from citewise.core import ABSTENTION_TEXT, Answer, Filters, Hit, Principal, Reason, ReasonCode
from citewise.retrieval.retrievers import effective_filters
from citewise.settings import Settings
from citewise.telemetry import traced_answer
from citewise.text.analyzer import analyze, find_identifiers
from citewise.text.names import NOT_NAMES, entry_offsets
from citewise.text.trust import trusted_first


#: How much higher (cosine) a deeper chunk's best sentence must score than every sentence of the
#: context for :meth:`Answerer.deeper_hits` to add it. Measured on the 222 spent in-scope
#: real-docs questions (replayed contexts; the added chunks go first): margin 0 -> 189 correct
#: (8 won, 1 lost: ulimit's "-t: The maximum amount of cpu time" quoted for read's -t), 0.02 ->
#: 189 (7 won, none lost), 0.05 -> 188, 0.08 -> 187; 180 without deeper chunks, 182 with them
#: put last (the per-document share of the context then dropped most of them).
DEEP_MARGIN = 0.02

#: How many BM25 chunks :meth:`Answerer.entry_hits` reads looking for the entry of "the X builtin".
ENTRY_LOOKUP_K = 50
#: Most chunks a name may occur in for :meth:`Answerer.entry_hits` to look up its entry.
NAME_ENTRY_DF = 30


@dataclass
class Assessment:
    """Retrieval plus evidence for one question (:meth:`Answerer.assess`).

    Attributes:
        hits: what the retriever returned (the first ``k``).
        deeper: the retriever's next hits, down to ``deep_k`` (for :meth:`Answerer.deeper_hits`).
        chunks: those chunks by id.
        evidence: the evidence score and how it was made (None when nothing was retrieved).
        score: the score compared with the threshold (pinning never lifts it).
        pinned: a document titled with an identifier in the question was retrieved.
        reason: why the answerer would abstain (None when the evidence suffices).
        qvec: the question embedding.
        timings: seconds per stage so far.
        question: the question as answered: misspelt words read as the corpus words one edit
            away (:mod:`citewise.answer.spelling`), else as asked.
        corrections: those words (:class:`~citewise.answer.spelling.Correction`), in order.
    """

    hits: list = field(default_factory=list)
    deeper: list = field(default_factory=list)
    chunks: dict = field(default_factory=dict)
    evidence: Evidence | None = None
    score: float = 0.0
    pinned: bool = False
    reason: Reason | None = None
    qvec: np.ndarray | None = None
    timings: dict = field(default_factory=dict)
    question: str = ""
    corrections: list = field(default_factory=list)


def _has_entry(chunk, name: str) -> bool:
    """Whether ``chunk`` holds the reference entry of ``name`` (:func:`entry_offsets`)."""
    return bool(entry_offsets(chunk.text, name, chunk.heading_path[-1] if chunk.heading_path else ""))


def _about(kind_terms: list[str]):
    """A test of a chunk: whether its title, headings or text hold every term of ``kind_terms``
    (the entry of "the times builtin" sits in a chunk about builtins; [] passes every chunk)."""

    def test(chunk) -> bool:
        return not kind_terms or set(kind_terms) <= set(
            analyze(" ".join((chunk.title, *chunk.heading_path, chunk.text)))
        )

    return test


def _put_first(added: list[Hit], hits: list[Hit], k: int) -> list[Hit]:
    """``added`` then the rest of ``hits`` (without duplicates), cut to ``k`` and re-ranked 1..k."""
    if not added:
        return hits
    ids = {h.chunk_id for h in added}
    merged = added + [h for h in hits if h.chunk_id not in ids]
    return [replace(h, rank=i + 1) for i, h in enumerate(merged[:k])]


class Answerer:
    """Answer questions over a store (see module docstring).

    Args:
        retriever: any Retriever.
        store: the Store the retriever searches.
        embedder: the index's embedder.
        threshold: evidence score below which the answer abstains.
        generator: a Generator (default: the extractive one).
        assembler: a ContextAssembler (default settings when None).
        units: a shared :class:`UnitCache` (when None, one over ``embedder`` that reads unit
            vectors stored at ingest from ``store``).
        scorer: an EvidenceScorer (default settings when None).
        passage_gate: abstain when ``dense² × passage`` (:attr:`Evidence.together`) is below it
            although the score clears ``threshold`` (None: the embedder's ``passage_gate`` in the
            settings' ``answer.thresholds``, 0 when it has none).
        deep_k, deep_extra: how deep :meth:`deeper_hits` looks for a chunk whose best sentence
            beats every sentence of the context, and how many such chunks it adds (``deep_k`` at
            most ``k``, or ``deep_extra`` 0: off).
        spelling: read misspelt question words as the corpus words one edit away
            (:mod:`citewise.answer.spelling`; the answer lists them in ``corrections``).
    """

    def __init__(
        self,
        retriever,
        store,
        embedder,
        threshold: float,
        generator: Generator | None = None,
        assembler: ContextAssembler | None = None,
        units: UnitCache | None = None,
        scorer: EvidenceScorer | None = None,
        passage_gate: float | None = None,
        deep_k: int = 30,
        deep_extra: int = 2,
        spelling: bool = True,
    ):
        self.retriever = retriever
        self.spelling = spelling
        if passage_gate is None:
            passage_gate = Settings().threshold_for(getattr(embedder, "name", "")).passage_gate
        self.passage_gate = passage_gate
        self.store = store
        self.embedder = embedder
        self.threshold = threshold
        self.units = units or UnitCache(embedder, store=store)
        self.scorer = scorer or EvidenceScorer(store, self.units)
        self.assembler = assembler or ContextAssembler()
        if generator is None:
            from citewise.answer.select.generator import ExtractiveGenerator

            generator = ExtractiveGenerator(self.units)
        self.generator = generator
        self.deep_k = deep_k
        self.deep_extra = deep_extra

    def assess(
        self,
        question: str,
        k: int = 5,
        *,
        principal: Principal | None = None,
        filters: Filters | None = None,
        qvec: np.ndarray | None = None,
    ) -> Assessment:
        """Retrieve and score the evidence for ``question`` without generating an answer.

        The first half of :meth:`answer`; a router uses it to ask "would the answerer have
        enough evidence?" without paying for context assembly and generation.
        """
        t0 = time.perf_counter()
        fixes = self.misspelt(question, effective_filters(principal, filters))
        if fixes:  # "certficate": read as the corpus word one edit away, and say so
            question, qvec = apply_corrections(question, fixes), None
        # one search, deep enough for :meth:`deeper_hits` too: the hybrid retrievers fuse the top
        # max(k, 100) of each list, so the first k of a deeper search are the k hits (checked on
        # the 426 real-docs questions)
        depth = max(k, self.deep_k if self.deep_extra > 0 else k)
        found = self.retriever.search(question, depth, principal=principal, filters=filters) if question.strip() else []
        hits, deeper = found[:k], found[k:]
        if hits:
            hits, deeper = self.part_hits(question, hits, deeper, k, principal, filters)
            hits = self.exact_hits(question, hits, k, effective_filters(principal, filters))
            hits = self.entry_hits(question, hits, k, effective_filters(principal, filters))
        a = Assessment(
            hits=hits,
            deeper=deeper,
            timings={"retrieve_s": time.perf_counter() - t0},
            question=question,
            corrections=fixes,
        )
        if not hits:
            a.reason = Reason.of(ReasonCode.NOTHING_RETRIEVED)
            return a
        t1 = time.perf_counter()
        a.qvec = self.embedder.embed([question])[0] if qvec is None else qvec
        a.chunks = self.store.get_chunks([h.chunk_id for h in hits])
        # a passage holding instructions to a model never outranks one without
        trusted = trusted_first(hits, lambda h: a.chunks[h.chunk_id].text if h.chunk_id in a.chunks else None)
        if trusted != hits:
            a.hits = hits = [replace(h, rank=i) for i, h in enumerate(trusted, start=1)]
        ranked = [a.chunks[h.chunk_id] for h in hits if h.chunk_id in a.chunks]
        ev = self.scorer.score(question, a.qvec, ranked, effective_filters(principal, filters))
        pinned = any(h.stage == "pinned" for h in hits) and not (ev.reason and ev.reason.code == ReasonCode.LIVE_VALUE)
        a.evidence, a.pinned = ev, pinned
        a.score = ev.score
        if a.score < self.threshold:
            a.reason = ev.reason or Reason.of(ReasonCode.BELOW_THRESHOLD, score=a.score, threshold=self.threshold)
        elif ev.together < self.passage_gate and not ev.entry and not pinned:
            # every word of the question occurs in the evidence, but no one passage holds its
            # subject ("restart the server when a tutorial crashes" over a server page and a tutorial one).
            # A page pinned by the identifier the question names is that subject's page, as an
            # entry is ("What changed in version 4.2?": the 4.2 notes never say "changed"); the
            # threshold above still applies to it
            a.reason = Reason.of(ReasonCode.SUBJECT_NOT_IN_ONE_PASSAGE, score=ev.together, gate=self.passage_gate)
        if a.reason is None:
            # the gate above read the fused hits; the answer also reads the lexical best chunk
            read = self.lexical_best(question, hits, k, effective_filters(principal, filters))
            if read is not hits:  # one chunk more to fetch; the others are in hand
                a.chunks = {**a.chunks, **self.store.get_chunks([read[-1].chunk_id])}
                a.hits = trusted_first(read, lambda h: a.chunks[h.chunk_id].text if h.chunk_id in a.chunks else None)
        a.timings["evidence_s"] = time.perf_counter() - t1
        return a

    def part_hits(
        self,
        question: str,
        hits: list[Hit],
        deeper: list[Hit],
        k: int,
        principal: Principal | None,
        filters: Filters | None,
    ) -> tuple[list[Hit], list[Hit]]:
        """``(hits, deeper)`` for a compound question
        (:attr:`~citewise.answer.question.QuestionAnalysis.parts`): each part is searched as a
        question of its own (:func:`~citewise.answer.question.part_question`), and the ``k`` hits
        are taken in turn from the parts' rankings and the whole question's (``hits``), in that
        order, each chunk once, re-ranked 1..k; the whole question's hits left out go to the head
        of ``deeper``. One search for the whole of "What happens to my data if I cancel, and can I
        export my invoices first?" ranks the export pages' chunks first, and the page on what a
        cancelled workspace keeps second for the first part alone is not among them. This is
        sub-question retrieval as LlamaIndex's ``SubQuestionQueryEngine`` does it, with the
        parts found by the question analysis instead of a language model. Unchanged for a
        question of one part."""
        from citewise.answer.question import analyze_question, part_question, said_before

        qa = analyze_question(question)
        if len(qa.parts) < 2:
            return hits, deeper
        lists = [
            self.retriever.search(part_question(part, said_before(qa, i)), k, principal=principal, filters=filters)
            for i, part in enumerate(qa.parts)
        ] + [hits]
        merged: dict[str, Hit] = {}
        for turn in range(k):
            for ranked in lists:
                if turn < len(ranked) and len(merged) < k:
                    merged.setdefault(ranked[turn].chunk_id, ranked[turn])
        chosen = [replace(h, rank=i + 1) for i, h in enumerate(merged.values())]
        return chosen, [h for h in hits + deeper if h.chunk_id not in merged]

    def misspelt(self, question: str, filters: Filters | None) -> list[Correction]:
        """The question's misspelt words and the corpus words they are read as
        (:func:`citewise.answer.spelling.corrections`; document frequencies under ``filters``);
        [] when the store cannot list its terms (``known_terms``) or spelling is off."""
        if not self.spelling or not question.strip():
            return []

        def written(term: str) -> list[str]:  # the words of a visible chunk that holds the term
            hits = self.store.lexical_search([term], 1, filters)
            chunk = self.store.get_chunks([hits[0].chunk_id]).get(hits[0].chunk_id) if hits else None
            return re.findall(r"[a-z]+", f"{chunk.title}\n{chunk.text}".lower()) if chunk is not None else []

        return corrections(
            question, lambda t: self.scorer.df(t, filters), self.store.known_terms, is_common_word, written
        )

    def lexical_best(self, question: str, hits: list[Hit], k: int, filters: Filters | None) -> list[Hit]:
        """``hits`` with the best BM25 chunk of the whole question read last when the fused list
        left it out: rank fusion can bury the chunk the lexical leg ranks first when the dense leg
        ranks other chunks first. With ``k`` hits already, it takes the place of the last fused
        one (stage ``rrf``); a pinned or looked-up chunk is never dropped for it."""
        found = self.store.lexical_search(analyze(question), 1, filters)
        if not found or any(h.chunk_id == found[0].chunk_id for h in hits):
            return hits
        f = found[0]
        extra = Hit(f.chunk_id, f.doc_id, f.score, 0, "lexical", getattr(f, "title", ""))
        if len(hits) < k:
            kept = list(hits)
        else:
            last = next((i for i in range(len(hits) - 1, -1, -1) if hits[i].stage == "rrf"), None)
            if last is None:
                return hits
            kept = hits[:last] + hits[last + 1 :]
        return [replace(h, rank=i) for i, h in enumerate([*kept, extra], start=1)]

    def exact_hits(self, question: str, hits: list[Hit], k: int, filters: Filters | None) -> list[Hit]:
        """``hits`` with, first, the best BM25 chunk of each rare exact name of the question
        (:meth:`EvidenceScorer.rare_exact`: ``mipsel-sony-psp``, ``SIGSTKFLT``; at most
        :data:`~citewise.answer.evidence.RARE_EXACT_DF` chunks hold it) that no retrieved chunk
        holds, among those that name it in a table row or code span (:func:`names_cell`), with stage ``exact``; cut to ``k`` and re-ranked. A terse query naming one row of a
        600-row table ("mipsel-sony-psp target") ranks the table's other chunks above the row's
        own in the fused list (their neighbours read alike); the exact name says which one."""
        rare = self.scorer.rare_exact(question, filters)
        if not rare:
            return hits
        texts = [c.text.lower() for c in self.store.get_chunks([h.chunk_id for h in hits]).values()]
        added: list[Hit] = []
        for term in rare:
            if any(term in t for t in texts):
                continue
            f = self._lookup([term], RARE_EXACT_DF, filters, lambda c: names_cell(c.text, term))
            if f is not None and not any(h.chunk_id == f.chunk_id for h in added):
                added.append(f)
        return _put_first(added, hits, k)

    def _lookup(self, terms: list[str], k: int, filters: Filters | None, holds) -> Hit | None:
        """The best of the top ``k`` BM25 chunks for ``terms`` whose stored chunk ``holds(chunk)``,
        as a hit with stage ``exact``; None when none does."""
        found = self.store.lexical_search(terms, k, filters)
        texts = self.store.get_chunks([f.chunk_id for f in found])
        f = next((f for f in found if f.chunk_id in texts and holds(texts[f.chunk_id])), None)
        return None if f is None else Hit(f.chunk_id, f.doc_id, f.score, 0, "exact", getattr(f, "title", ""))

    def entry_hits(self, question: str, hits: list[Hit], k: int, filters: Filters | None) -> list[Hit]:
        """``hits`` with, first, the chunk holding the reference entry (a definition, item or
        heading led by the name: :func:`citewise.text.names.entry_offsets`) of a name the question
        asks about when no retrieved chunk holds that entry; stage ``exact``, at most one chunk per
        name, cut to ``k``. Two kinds of names:

        * "the X builtin / lint / reserved word" (:data:`~citewise.answer.evidence.ENTRY_SLOT`):
          the best of the top :data:`ENTRY_LOOKUP_K` BM25 chunks for X and its kind whose entry
          for X sits in a chunk about that kind ("What does the times builtin print?" retrieves
          chunks about time; the manual's ``times`` entry is one line among fifty builtins). An
          option named ``retry`` elsewhere is not "the retry builtin": nothing is added, and the
          evidence check abstains.
        * any other name the question gives (its exact words, its entry names, and for a
          search-box query its words of four letters or more) that 1 to :data:`NAME_ENTRY_DF`
          visible chunks hold: the best of the top :data:`ENTRY_LOOKUP_K` BM25 chunks for it
          holding its entry ("FIGNORE variable", "shopt lastpipe" retrieved the passages citing
          FIGNORE / lastpipe in prose while their definitions ranked 8th)."""
        from citewise.answer.evidence import exact_words
        from citewise.answer.question import analyze_question
        from citewise.text.names import entry_names

        wanted: dict[str, tuple[list[str], object]] = {}  # name -> (BM25 terms, test of a chunk)
        for m in ENTRY_SLOT.finditer(question):
            name, kind_terms = m.group(1), analyze(m.group(0).split()[-1])
            if name.lower() not in NOT_NAMES:
                wanted[name] = (list(dict.fromkeys(analyze(name) + kind_terms)), _about(kind_terms))
        names = exact_words(question) + entry_names(question)
        if analyze_question(question).kind == "keyword":
            names += re.findall(r"[A-Za-z][\w-]{3,}", question)
        for name in dict.fromkeys(names):
            terms = [t for t in analyze(name) if t not in QUESTION_WORDS]
            if (
                any(n.lower() == name.lower() for n in wanted)
                or not terms
                or not 1 <= self.scorer.df(terms[0], filters) <= NAME_ENTRY_DF
            ):
                continue
            # "retry builtin" as a query: still the entry of a builtin, not any entry named retry
            kind = re.search(rf"(?<![\w-]){re.escape(name)}\s+(builtins?|lints?|reserved\s+words?)\b", question, re.I)
            wanted[name] = (terms[:1], _about(analyze(kind.group(1)) if kind else []))
        if not wanted:
            return hits
        have = self.store.get_chunks([h.chunk_id for h in hits]).values()
        added: list[Hit] = []
        for name, (terms, fits) in wanted.items():
            if any(_has_entry(c, name) for c in have):
                continue
            f = self._lookup(
                terms, ENTRY_LOOKUP_K, filters, lambda c, name=name, fits=fits: fits(c) and _has_entry(c, name)
            )
            if f is not None and not any(h.chunk_id == f.chunk_id for h in added):
                added.append(f)
        return _put_first(added, hits, k)

    def deeper_hits(self, question: str, qvec: np.ndarray, chunks, hits: list[Hit], deeper: list[Hit]) -> list[Hit]:
        """Of ``deeper`` (the search's hits ranked ``k+1 .. deep_k``), those whose best answer unit has a
        cosine to the question higher by :data:`DEEP_MARGIN` than every unit of ``chunks`` (the
        retrieved chunks of ``hits``, whose units the evidence score already holds), best first,
        at most :attr:`deep_extra`; stage ``unit``. :meth:`answer` assembles the context from
        them and the hits, them first, so the per-document share and the token budget never drop them. None when a
        pinned hit's title holds an identifier the question names: the page titled with it answers it ("which fields are in the E-1006 API error response"
        quoted an API page's general error format ahead of the E-1006 page, sample corpus q12).

        A long reference section holds one entry among many ("MAILCHECK: How often ... the shell
        should check for mail", "EMFILE (Too many open files in system)"), so its chunk can rank
        below the top ``k`` although one sentence of it answers the question better than any
        sentence retrieved. Scoring chunks by their best sentence is the *MaxP* passage score
        (Dai & Callan 2019, "Deeper Text Understanding for IR with Contextual Neural Language
        Modeling"); here it only adds such chunks to the context, after the evidence cleared the
        threshold, so it never turns an abstention into an answer; ``deeper`` comes from the same
        search as ``hits`` (same principal and filters). Measured on the 222 spent in-scope
        real-docs questions (replayed contexts): 180 -> 189 correct, wrong 5 -> 2, none lost."""
        if not deeper or self.deep_extra <= 0:
            return []
        names = set(find_identifiers(question))
        if names and any(h.stage == "pinned" and names & set(find_identifiers(h.title)) for h in hits):
            return []  # the page titled with the identifier asked about is the authority
        q = np.asarray(qvec, dtype=np.float32)
        best = max((float((v @ q).max()) for u, v in self.units.get(chunks) if len(u)), default=-1.0)
        have = {h.chunk_id for h in hits}
        deep = [h for h in deeper if h.chunk_id not in have]
        # stored unit vectors only: no chunk text is fetched or split for the ones that lose
        tops = self.units.best_cosines([h.chunk_id for h in deep], q)
        scored = sorted((-tops[h.chunk_id], h.rank, h) for h in deep if tops.get(h.chunk_id, -1.0) > best + DEEP_MARGIN)
        n = len(hits)
        return [
            Hit(h.chunk_id, h.doc_id, -neg, n + i + 1, "unit", getattr(h, "title", ""))
            for i, (neg, _, h) in enumerate(scored[: self.deep_extra])
        ]

    def context_of(self, a: Assessment):
        """The assembled :class:`~citewise.answer.context.Context` of an assessment that found
        evidence: the deeper chunks (:meth:`deeper_hits`) first, then the hits."""
        question = a.question
        deeper = self.deeper_hits(
            question, a.qvec, [a.chunks[h.chunk_id] for h in a.hits if h.chunk_id in a.chunks], a.hits, a.deeper
        )
        # deeper chunks first: they beat every retrieved sentence, so no share or budget rule drops them
        return self.assembler.assemble(question, deeper + a.hits, self.store, a.chunks)

    def conflict_of(self, question: str, context, filters: Filters | None):
        """The disagreement of the context's answer sentences on the value ``question`` asks for
        (:func:`citewise.answer.disagreement.find_conflict`; terms weighed by their IDF among the
        chunks ``filters`` let through), or None."""
        from citewise.answer.question import analyze_question

        if analyze_question(question).expected not in COMPARED_TYPES:
            return None  # nothing to compare: no unit is read
        scorer = self.scorer

        def weight(t: str) -> float:
            return scorer.idf(t, filters) if scorer.df(t, filters) else 0.0

        return find_conflict(question, context.chunks, self.units.get(context.chunks), weight)

    @traced_answer
    def answer(
        self,
        question: str,
        k: int = 5,
        *,
        principal: Principal | None = None,
        filters: Filters | None = None,
        qvec: np.ndarray | None = None,
        on_delta=None,
    ) -> Answer:
        """Answer ``question`` for ``principal`` (anonymous: public documents only).

        ``qvec`` may carry a precomputed question embedding (batch evaluations); ``on_delta``
        receives the text of a streaming generator (the LLM) as it arrives, before the check.

        Raises:
            ChatError: the LLM generator's endpoint failed.
        """
        t0 = time.perf_counter()
        a = self.assess(question, k, principal=principal, filters=filters, qvec=qvec)
        hits, _chunks, ev, qvec, timings = a.hits, a.chunks, a.evidence, a.qvec, a.timings
        question = a.question or question
        ans = Answer(
            ABSTENTION_TEXT,
            "abstained",
            retrieved_ids=[h.chunk_id for h in hits],
            timings=timings,
            generator=getattr(self.generator, "name", ""),
            corrections=[{"typo": c.typo, "fix": c.fix} for c in a.corrections],
        )
        if ev is not None:
            ans.best_score = a.score
            ans.evidence = {
                "score": ev.score,
                "dense": ev.dense,
                "coverage": ev.coverage,
                "passage": ev.passage,
                "together": ev.together,
                "entry": ev.entry,
                "pinned": a.pinned,
                "uncovered": ev.uncovered,
                "absent": ev.absent,
                "rule": str(ev.reason or ""),
            }
        if a.reason is not None:
            ans.reason = a.reason
            timings["total_s"] = time.perf_counter() - t0
            return ans
        t2 = time.perf_counter()
        context = self.context_of(a)
        ans.context_ids = [c.chunk_id for c in context.chunks]
        t3 = time.perf_counter()
        timings["assemble_s"] = t3 - t2
        f = effective_filters(principal, filters)
        conflict = self.conflict_of(question, context, f)
        if conflict is not None:  # sources disagree on the asked value: both shown, nothing generated
            checked = conflict_answer(conflict, context)
            ans.text, ans.outcome = checked.text, "conflict"
            ans.citations, ans.used_ids = checked.citations, checked.used_ids
            ans.reason = Reason.of(
                ReasonCode.SOURCES_DISAGREE, what=conflict.subject, sources=len({s.doc_id for s in conflict.stated})
            )
            timings["check_s"] = time.perf_counter() - t3
            timings["total_s"] = time.perf_counter() - t0
            return ans
        draft = self.generator.generate(
            question, context, qvec=qvec, evidence=ev, idf=lambda t: self.scorer.idf(t, f), on_delta=on_delta
        )
        t4 = time.perf_counter()
        timings["generate_s"] = t4 - t3
        checked = enforce_citations(draft.text, context, draft.spans)
        ans.text, ans.outcome = checked.text, checked.outcome
        ans.citations, ans.used_ids = checked.citations, checked.used_ids
        ans.fabricated = list(dict.fromkeys(draft.fabricated + checked.fabricated))
        ans.dropped = draft.withdrawn + checked.dropped
        ans.generator = draft.generator or ans.generator
        ans.notes, ans.llm = list(draft.notes), dict(draft.llm)
        if draft.withdrawn and checked.outcome == "answered":
            ans.outcome = "partial"
        ans.short = draft.short if checked.outcome != "abstained" else ""
        if checked.outcome == "abstained":
            ans.reason = draft.reason or Reason.of(ReasonCode.NO_SUPPORTED_SENTENCE)
        timings["check_s"] = time.perf_counter() - t4
        timings["total_s"] = time.perf_counter() - t0
        return ans
