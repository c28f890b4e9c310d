"""The extractive generator: quote and cite the units the learned selector ranks best.

Deterministic, no LLM. For a question and an assembled context:

1. analyse the question once (:func:`citewise.answer.question.analyze_question`);
2. split the context's chunks into answer units with their embeddings
   (:class:`~citewise.answer.unit_cache.UnitCache`), keep the quotable ones and compute their features
   (:mod:`citewise.answer.select.features`);
3. score them with the selector model (:mod:`citewise.answer.select.model`; the packaged one by
   default, trained by ``citewise train-answerer``);
4. choose and order what to quote (:mod:`citewise.answer.select.compose`: trust rule,
   followers, format-level expansions, hygiene); a compound question's later parts each add
   their best unit (:meth:`ExtractiveGenerator._parts`);
5. write each unit's sentences followed by ``[doc:ID]``, with their offsets in the chunk, and a
   short answer span (:mod:`citewise.answer.select.span`).

Nothing about a question is kept on the generator between calls.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from citewise.answer.citations import join_sentences, split_cited_sentences
from citewise.answer.context import Context
from citewise.answer.draft import Draft
from citewise.answer.question import QuestionAnalysis, analyze_question, names_own, part_question
from citewise.answer.select.compose import compose, repeats
from citewise.answer.select.features import Candidate, candidates
from citewise.answer.select.model import SelectorModel, packaged_model
from citewise.answer.select.span import best_span
from citewise.answer.unit_cache import UnitCache
from citewise.core import ABSTENTION_TEXT


class ExtractiveGenerator:
    """Quote and cite the best units of a context (see module docstring).

    Args:
        units: a :class:`UnitCache` over the index's embedder.
        model: the selector model (default: the packaged one).
        max_sentences: most units quoted besides a procedure's steps and a code block's lead.
        idf: optional ``term -> idf`` weights (a call's ``idf`` signal overrides it).
    """

    name = "extractive"

    def __init__(
        self,
        units: UnitCache,
        model: SelectorModel | None = None,
        max_sentences: int = 4,
        idf: Callable[[str], float] | None = None,
        **_ignored,
    ):
        self.units = units
        self.model = model or packaged_model()
        self.max_sentences = max_sentences
        self.idf = idf

    def rank(
        self, question: str, context: Context, qvec: np.ndarray | None = None, idf: Callable[[str], float] | None = None
    ) -> tuple[QuestionAnalysis, list[Candidate], np.ndarray]:
        """The question's analysis, the context's quotable candidates and their model scores."""
        qa = analyze_question(question)
        if qvec is None:
            qvec = self.units.embedder.embed([question])[0]
        got = self.units.get(context.chunks)
        cands = candidates(qa, qvec, context.chunks, got, idf or self.idf)
        x = np.vstack([c.features for c in cands]) if cands else np.zeros((0, len(self.model.features)))
        return qa, cands, self.model.score(x)

    def generate(self, question: str, context: Context, *, qvec: np.ndarray | None = None, **signals) -> Draft:
        """A draft quoting the chosen units of ``context`` (the abstention text when none)."""
        qa, cands, scores = self.rank(question, context, qvec, signals.get("idf"))
        texts = [c.text for c in context.chunks]
        chosen = compose(qa, cands, scores, texts, self.max_sentences)
        if not chosen:
            return Draft(ABSTENTION_TEXT, self.name)
        chosen = self._parts(qa, chosen, context, texts, cands, scores, signals.get("idf"))
        sentences, spans = [], {}
        for c in chosen:
            chunk, u = context.chunks[c.chunk_index], c.unit
            if u.kind == "code":
                sentences.append(f"{u.text} [doc:{chunk.doc_id}]")
                spans.setdefault(u.text, (u.start, u.end))
                continue
            # a unit without an end mark gets a full stop, in place of a comma, semicolon or colon
            # it ends on ("For example," before a code block: never "For example,."); a lead-in
            # (the only quoted unit ending in ':') keeps its colon before what it introduces
            lead_in = u.text.rstrip("\"'”’)*_ ").endswith(":")
            text = u.text if u.text[-1:] in ".!?" or lead_in else f"{u.text.rstrip(',;: ')}."
            for sentence, _ in split_cited_sentences(text):
                sentences.append(f"{sentence} [doc:{chunk.doc_id}]")
                spans.setdefault(sentence, (u.start, u.end))
        seen: set[str] = set()  # no sentence twice, from whichever document
        sentences = [x for x in sentences if not (_key(x) in seen or seen.add(_key(x)))]
        # the short span comes from the best-scoring quoted prose unit (an antecedent placed
        # before it only introduces it)
        score_of = {(c.chunk_index, c.unit.start): float(v) for c, v in zip(cands, scores)}
        prose = sorted(
            (c for c in chosen if c.unit.kind != "code"),
            key=lambda c: -score_of.get((c.chunk_index, c.unit.start), float("-inf")),
        )
        short = best_span(qa, prose[0].unit.text) if prose else ""
        return Draft(join_sentences(sentences), self.name, spans=spans, short=short)

    def _parts(
        self,
        qa: QuestionAnalysis,
        chosen: list[Candidate],
        context: Context,
        texts: list[str],
        cands: list[Candidate],
        scores: np.ndarray,
        idf: Callable[[str], float] | None,
    ) -> list[Candidate]:
        """For a compound question (:attr:`~citewise.answer.question.QuestionAnalysis.parts`):
        the units chosen part by part, in the parts' order; else ``chosen`` (the whole
        question's units, which also stand when the first part has none). ``texts``: the
        context's chunk texts.

        A part that names nothing of its own (:func:`~citewise.answer.question.names_own`) is
        ranked with the identifiers the question names said again after it
        (:func:`~citewise.answer.question.part_question`: "how do I fix it?" as "how do I fix it,
        E-1003?"). The first part gets :func:`compose`'s units (with followers). Each later part
        gets its best unit not quoted yet with its format-level expansions (a how-to step keeps its
        procedure, in order); for a part naming nothing of its own, a unit's score is the model's
        score for the part plus its score for the whole question (``cands``/``scores``; a product
        of the two softmax distributions: the part says what is asked, the whole question what it
        is about). A unit quoted for an earlier part that the later part's expansion holds (a step
        of its procedure) moves to the later part's place unless it opens the answer."""
        if len(qa.parts) < 2:
            return chosen
        whole = {_at(c): float(v) for c, v in zip(cands, scores)}
        floor = min(whole.values())
        out: list[Candidate] = []
        for part in qa.parts:
            own = names_own(part)
            pqa, pcands, pscores = self.rank(part_question(part, qa.identifiers), context, None, idf)
            if not out:
                out = compose(pqa, pcands, pscores, texts, self.max_sentences)
                if not out:
                    return chosen
                continue
            if not pcands:
                continue
            joint = pscores if own else pscores + np.array([whole.get(_at(c), floor) for c in pcands])
            quoted = {_at(c) for c in out}  # the part's best unit is one not quoted yet
            joint = np.where([_at(c) in quoted for c in pcands], joint.min() - QUOTED_PENALTY, joint)
            add = [c for c in compose(pqa, pcands, joint, texts, 1) if _at(c) != _at(out[0])]
            moved = {_at(c) for c in add}
            kept = [c for c in out if _at(c) not in moved]
            out = kept + [c for c in add if not any(repeats(c.unit.text, o.unit.text) for o in kept)]
        return out


#: Subtracted from the lowest score for a unit quoted for an earlier part of a compound
#: question: it ranks last for the later part (its softmax share ~e^-50) yet stays a candidate,
#: so a procedure the later part quotes keeps all its steps.
QUOTED_PENALTY = 50.0


def _at(c: Candidate) -> tuple[int, int]:
    """Where a candidate's unit stands: its chunk's index in the context and its start offset."""
    return c.chunk_index, c.unit.start


def _key(sentence: str) -> str:
    """A cited sentence's words without its ``[doc:ID]`` marker, lower case."""
    return " ".join(sentence.rsplit(" [doc:", 1)[0].lower().split())
