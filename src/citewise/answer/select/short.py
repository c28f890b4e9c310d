"""A short answer span from the best unit, by expected answer type (for span-level evaluation
such as SQuAD exact match / F1; the answer shown to users is the cited sentences).

* ``date`` → the first date or year the question does not hold;
* ``number`` → the first number (with the word after it) the question does not hold;
* ``person`` / ``place`` / other *which / what* questions → the first run of capitalised words the
  question does not hold (a name), not the unit's first word;
* otherwise → the unit's words that are not words of the question, up to :data:`MAX_WORDS`.

The classic answer-type heuristic of pre-neural QA systems (Moldovan et al. 2000, "The structure
and performance of an open-domain question answering system"). '' when nothing fits.

>>> from citewise.answer.question import analyze_question as a
>>> short_answer(a("When did the Normans conquer England?"), "The Normans conquered England in 1066.")
'1066'
>>> short_answer(a("How many plans are there?"), "There are three plans: Basic, Standard and Premium.")
'three plans'
>>> short_answer(a("Who founded the duchy?"), "The duchy was founded by Rollo, a Viking leader.")
'Rollo'
"""

from __future__ import annotations

import re

from citewise.answer.question import QuestionAnalysis

#: Most words of a short answer of no particular type.
MAX_WORDS = 12
_MONTHS = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_DATE = re.compile(
    rf"\b(?:{_MONTHS}\s+\d{{1,2}},?\s+\d{{3,4}}|\d{{1,2}}\s+{_MONTHS}\s+\d{{3,4}}|{_MONTHS}\s+\d{{3,4}}|\d{{3,4}}s?)\b"
)
_NUMBER_WORDS = r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|million|billion)"
_QUANTITY = re.compile(
    rf"(?:[$€£]\s?)?(?:\d[\d,.]*|\b{_NUMBER_WORDS}\b)(?:\s?(?:%|percent|per cent))?"
    r"(?:\s+(?:million|billion|thousand|hundred))?(?:\s+[a-z]+)?",
    re.I,
)
_NAME = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:of|de|von|van|the|and|du|la)?\s*[A-Z][\w'’.-]*)*")


def short_answer(qa: QuestionAnalysis, sentence: str) -> str:
    """The short answer span of ``sentence`` for the analysed question (module docstring)."""
    q_words = set(re.findall(r"\w+", qa.text.lower()))

    def fresh(span: str) -> bool:
        words = set(re.findall(r"\w+", span.lower()))
        return bool(words) and not words <= q_words

    if qa.expected == "date":
        for m in _DATE.finditer(sentence):
            if fresh(m.group(0)):
                return m.group(0).strip()
    if qa.expected == "number":
        for m in _QUANTITY.finditer(sentence):
            if fresh(m.group(0)):
                return m.group(0).strip(" ,.")
    if qa.expected in ("person", "place", "date", "number") or qa.text.lower().startswith(("which", "what")):
        for m in _NAME.finditer(sentence):
            span = m.group(0).strip(" .,")
            if m.start() == 0 and " " not in span:
                continue  # the sentence's first word is capitalised anyway
            if fresh(span):
                return " ".join(w for w in span.split() if w.lower() not in q_words) or span
    words = [w for w in re.findall(r"[\w'’-]+", sentence) if w.lower() not in q_words]
    return " ".join(words[:MAX_WORDS])
