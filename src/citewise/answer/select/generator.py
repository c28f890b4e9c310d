"""The extractive generator: quote and cite the units the learned selector ranks best.

Deterministic, no LLM. For a question and an assembled context:

1. analyse the question once (:func:`citewise.answer.question.analyze_question`);
2. split the context's chunks into answer units with their embeddings
   (:class:`~citewise.answer.unit_cache.UnitCache`), keep the quotable ones and compute their features
   (:mod:`citewise.answer.select.features`);
3. score them with the selector model (:mod:`citewise.answer.select.model`; the packaged one by
   default, trained by ``citewise train-answerer``);
4. choose and order what to quote (:mod:`citewise.answer.select.compose`: trust rule,
   followers, format-level expansions, hygiene);
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
from citewise.answer.question import QuestionAnalysis, analyze_question
from citewise.answer.select.compose import compose
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
        chosen = compose(qa, cands, scores, [c.text for c in context.chunks], self.max_sentences)
        if not chosen:
            return Draft(ABSTENTION_TEXT, self.name)
        sentences, spans = [], {}
        for c in chosen:
            chunk, u = context.chunks[c.chunk_index], c.unit
            if u.kind == "code":
                sentences.append(f"{u.text} [doc:{chunk.doc_id}]")
                spans.setdefault(u.text, (u.start, u.end))
                continue
            text = u.text if u.text[-1:] in ".!?" else f"{u.text}."
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


def _key(sentence: str) -> str:
    """A cited sentence's words without its ``[doc:ID]`` marker, lower case."""
    return " ".join(sentence.rsplit(" [doc:", 1)[0].lower().split())
