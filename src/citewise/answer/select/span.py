"""Short answer spans chosen by a learned span scorer (for span-level evaluation such as SQuAD
exact match / F1; the answer shown to users is the cited sentences).

Candidates are the token runs of the best unit of up to :data:`MAX_SPAN` tokens that neither start
nor end with punctuation or a function word of the question lexicon, and that are not all words
of the question. Each gets :data:`SPAN_FEATURES`:

* ``len``, ``len2``: its length in tokens (and squared);
* ``in_question``: share of its tokens that are words of the question;
* ``capitalised``, ``digit``, ``year``: share of capitalised tokens, any digit, a four-digit year
  or month name;
* ``near``: ``1 / (1 + d)``, ``d`` = tokens between the span and the nearest question word in the
  sentence; ``before_q``/``after_q``: the token right before / after it is a question word;
* ``position``: its start / the sentence's length; ``paren``: inside parentheses; ``comma_in``:
  holds a comma;
* ``t_*``: the expected answer type (``number``, ``date``, ``person``/``place``, other) times the
  matching shape (digit, year, capitalised), so one linear model serves every type;
* ``left_ctx``, ``right_ctx``: share of the question's content words among the
  :data:`WINDOW` tokens left / right of the span (the sliding-window match of Richardson et al.
  2013, MCTest, used as a span feature by Rajpurkar et al. 2016, SQuAD);
* ``prev_function``: the token before the span is a function word ("in 1066", "by William");
  ``prev_punct``, ``next_punct``: the span starts / ends at a punctuation mark or the sentence's
  edge; ``stop_share``: share of its words that are function words;
* ``e_*``: one-hot expected answer type (number, date, person or place, other): constant within a
  question, so only the trees (:func:`citewise.answer.select.model.fit_trees`) use them, crossed
  with the other features.

The model is the listwise model of :mod:`citewise.answer.select.model` (packaged
``data/span.json``): a linear part and boosted trees, fitted on SQuAD's train articles with each
candidate weighted by its token F1 against the gold answers (``citewise train-answerer --squad``:
:func:`citewise.evaluation.train_answerer.span_groups`). Falls back to :func:`citewise.answer.select.short.short_answer`
when no model is packaged or the sentence has no candidate.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

import numpy as np

from citewise.answer.question import QuestionAnalysis, lexicon
from citewise.answer.select.model import SelectorModel
from citewise.answer.select.short import short_answer

#: Longest candidate span, in tokens.
MAX_SPAN = 8
SPAN_FEATURES = (
    "len",
    "len2",
    "in_question",
    "capitalised",
    "digit",
    "year",
    "near",
    "before_q",
    "after_q",
    "position",
    "paren",
    "comma_in",
    "t_number",
    "t_date",
    "t_name",
    "t_other_cap",
    "t_other_len",
    "left_ctx",
    "right_ctx",
    "prev_function",
    "prev_punct",
    "next_punct",
    "stop_share",
    "e_number",
    "e_date",
    "e_name",
    "e_other",
)
#: Tokens on each side of a span read for ``left_ctx`` / ``right_ctx``.
WINDOW = 4
_TOKEN = re.compile(r"\w[\w'’.-]*\w|\w|[^\w\s]")
_MONTHS = frozenset("january february march april may june july august september october november december".split())
PACKAGED = "data/span.json"


def tokens(sentence: str) -> list[str]:
    """Words (with inner apostrophes, dots, hyphens) and punctuation marks of ``sentence``."""
    return _TOKEN.findall(sentence)


def spans(qa: QuestionAnalysis, toks: list[str]) -> tuple[list[tuple[int, int]], np.ndarray]:
    """Candidate ``(start, end)`` token spans of ``toks`` and their feature rows."""
    lex = lexicon()
    q_words = {w.lower() for w in re.findall(r"\w+", qa.text)}
    content_q = {w for w in q_words if w not in lex.question_words}
    low = [t.lower() for t in toks]
    word = [bool(re.match(r"\w", t)) for t in toks]
    qpos = [i for i, t in enumerate(low) if t in content_q]
    depth, paren = 0, []
    for t in toks:
        depth += t == "("
        paren.append(depth > 0)
        depth -= t == ")" and depth > 0
    e = qa.expected
    named = e in ("person", "place")
    other = e not in ("number", "date", "person", "place")
    n_content = max(len(content_q), 1)
    out, rows = [], []
    n = len(toks)
    for i in range(n):
        if not word[i] or low[i] in lex.question_words:
            continue
        for j in range(i + 1, min(n, i + MAX_SPAN) + 1):
            if not word[j - 1] or low[j - 1] in lex.question_words:
                continue
            seg = toks[i:j]
            ws = [t for t, w in zip(seg, word[i:j]) if w]
            if not ws or any(t in (".", ";", ":", "?", "!", '"') for t in seg):
                continue
            inq = sum(t.lower() in q_words for t in ws) / len(ws)
            if inq >= 1.0:
                continue
            cap = sum(t[:1].isupper() for t in ws) / len(ws)
            digit = float(any(ch.isdigit() for t in ws for ch in t))
            year = float(any(re.fullmatch(r"1\d{3}|20\d{2}", t) or t.lower() in _MONTHS for t in ws))
            d = min((min(abs(p - i), abs(p - (j - 1))) for p in qpos), default=n)
            f = [
                len(ws),
                len(ws) ** 2 / MAX_SPAN,
                inq,
                cap,
                digit,
                year,
                1.0 / (1 + d),
                float(i > 0 and low[i - 1] in content_q),
                float(j < n and low[j] in content_q),
                i / max(n, 1),
                float(paren[i]),
                float("," in seg),
                digit * (e == "number"),
                year * (e == "date"),
                cap * named,
                cap * other,
                len(ws) * other / MAX_SPAN,
                len(content_q.intersection(low[max(0, i - WINDOW) : i])) / n_content,
                len(content_q.intersection(low[j : j + WINDOW])) / n_content,
                float(i > 0 and low[i - 1] in lex.question_words),
                float(i == 0 or not word[i - 1]),
                float(j == n or not word[j]),
                sum(t.lower() in lex.question_words for t in ws) / len(ws),
                float(e == "number"),
                float(e == "date"),
                float(named),
                float(other),
            ]
            out.append((i, j))
            rows.append(f)
    return out, np.array(rows, dtype=np.float32).reshape(len(rows), len(SPAN_FEATURES))


@lru_cache(maxsize=1)
def packaged_span_model() -> SelectorModel | None:
    """The packaged span model, or None when the package ships none."""
    import json

    f = resources.files("citewise.answer").joinpath(PACKAGED)
    if not f.is_file():
        return None
    return SelectorModel.from_dict(
        json.loads(f.read_text(encoding="utf-8")), f"citewise/answer/{PACKAGED}", SPAN_FEATURES
    )


def best_span(qa: QuestionAnalysis, sentence: str, model: SelectorModel | None = None) -> str:
    """The short answer of ``sentence`` for the analysed question (see module docstring)."""
    model = model or packaged_span_model()
    toks = tokens(sentence)
    cands, x = spans(qa, toks)
    if model is None or not cands:
        return short_answer(qa, sentence)
    i, j = cands[int(np.argmax(model.score(x)))]
    return _join(toks[i:j])


def _join(toks: list[str]) -> str:
    out = ""
    for t in toks:
        out += t if (not out or t in ",)'’%" or out.endswith(("(", "$"))) else f" {t}"
    return out
