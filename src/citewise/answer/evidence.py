"""Evidence score: how well the retrieved chunks support answering the question at all.

The abstention rule compares this score with a threshold calibrated on a golden set
(:mod:`citewise.answer.calibrate`). The first version (max cosine of question vs retrieved chunk
vectors) answered near-domain questions such as "What is the refund policy of Stripe?" because
the refund articles are semantically close. Measured on the sample corpus (40 golden, 14
out-of-scope questions; MiniLM), out-of-scope questions reached cosines of 0.64 while 25 of the 28
in-scope questions without an identifier scored lower, so no threshold on that score works.

The score here combines meaning and words:

``score = dense × coverage²``

* ``dense`` = the best cosine between the question and an answer *unit* (sentence, list item or
  table row, embedded with its title and nearest heading; :mod:`citewise.answer.units`) of the
  top ``top_m`` retrieved chunks. A sentence that answers scores higher than a whole chunk that
  merely shares the topic.
* ``coverage`` = IDF-weighted share of the question's content terms (our analyzer's terms minus
  question words such as *what*, *how*, *can*) that occur in those chunks (title, headings,
  text)::

      coverage = Σ_{t covered} idf(t) / (Σ_{t covered} idf(t) + Σ_{t uncovered, in corpus} idf(t)
                                          + absent_weight · Σ_{t absent from corpus} idf(t))

  with ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))`` (the BM25 / Lucene IDF; Robertson &
  Zaragoza 2009), ``N`` = chunks in the index, ``df`` = chunks containing ``t`` visible to the
  principal (capped at ``df_cap`` lookups; a capped term is common anyway). Lower-case terms
  absent from the whole corpus are mostly paraphrase vocabulary of in-scope questions ("mid
  tier", "cheapest", "staff"), so they weigh ``absent_weight`` = 0.25 by default.

The constants come from a grid on the sample golden set (40 in-scope, 14 out-of-scope
questions; ``absent_weight`` ∈ {0.25, 0.5, 1}, coverage exponent ∈ {0.5, 1, 2}, dense exponent
∈ {1, 2}, ``top_m`` ∈ {1, 2, 3, 5} for each part): with every out-of-scope question abstained,
0.25 / 2 / 1 / 5 answered 38 of 40 in-scope questions with a correct citation, with the
largest gap (6%) between the last out-of-scope score and the next in-scope one. Tuned on 54
questions, so treat it as a starting point: calibrate the threshold on your own golden set.

Three rules set the score to 0 (always abstain), each reported in :attr:`Evidence.reason`:

* **unknown name**: the question names something whose terms occur nowhere in the corpus
  visible to the principal: a ``--flag``, a code name (``fs.frobnicate()``, ``snake_case``,
  ``camelCase``; the whole identifier must occur, not just its parts), a quoted or back-ticked
  term, or a word that is a name by its shape or its rarity in English (``L4``, ``SIGPWR``,
  *Stripe*, *Kubernetes*, *frobnicate*: :mod:`citewise.text.rarity`, Zipf frequencies of the
  ``wordfreq`` package). An ordinary English word is never a name ("Is it OK ...", "minimal").
  The corpus cannot be about a thing it never mentions.
* **not in the evidence**: a code name or slot name the corpus has, but none of the evidence
  chunks mention ("the retry reserved word" of a bash question when only Node.js pages say
  "retry"): the evidence is about something else. So is a comparison one of whose sides
  no answer unit of the evidence names ("What is the difference between npm ci and npm
  install?" over pages that say "npm install" and, elsewhere, "CI/CD"; the sides are
  :func:`citewise.text.names.compared_names`, each side's terms must occur in one unit with its
  headings), or a configuration section named in brackets (``[features]``) that no evidence
  chunk writes verbatim.
* **tool apart**: a how-to done "with / in / using" a tool the corpus only mentions (fewer than
  ``df_cap`` chunks name it), when no answer unit naming the tool also holds half the weight of
  the question's other terms (:meth:`EvidenceScorer.tool_apart`: "How do I add a package as a
  dev dependency with pnpm?" over a table row "Package manager: pnpm").
* **live value**: the question asks for a value that changes by the day ("today's USD to EUR
  exchange rate", "the price right now"). Documents hold no live values; such questions belong
  to a tool.

**Passage gate** (``passage_gate`` of ``answer.thresholds`` in :mod:`citewise.settings`, applied by :mod:`citewise.answer.pipeline`): a question
whose words each occur *somewhere* in the evidence ("How do I restart the server when a tutorial
crashes?" over one page on server timeouts and another that mentions tutorials; "How do I change
the default branch name that git init uses for new repositories?" over the Bash manual) can pass
the score although no passage is about its subject. The gate asks for meaning and the
subject's words together: ``dense² × passage ≥ gate``, where ``passage`` is the best share
(IDF-weighted, as in ``coverage``) of the question's content terms held by *one* top chunk. The
gate value is fitted, like the threshold (on the real-docs, sample and abstain-probe sets; the settings' default). A question whose named
subject has its own entry in the evidence (``Evidence.entry``: "What does the wait builtin do?"
over the manual's ``wait`` definition) is not gated: the entry pins the subject, and a short
definitional question often has a low cosine with the entry's terse text.

Document frequencies are looked up with the principal's filters, so words that occur only in
documents the principal may not read count as absent (no side channel on restricted text).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from citewise.answer.known_forms import CONSTANT, attached_flag_known, literal_known, literal_names
from citewise.answer.known_forms import section_key_known, singular
from citewise.answer.missing import ENTRY_SLOT, missing_entry, missing_name  # noqa: F401 (ENTRY_SLOT re-exported)
from citewise.answer.question import analyze_question, lexicon
from citewise.answer.unit_cache import UnitCache
from citewise.answer.units import is_instruction
from citewise.core import Filters, Reason, ReasonCode
from citewise.text.analyzer import analyze, fold_dashes
from citewise.text.rarity import name_phrases, name_shaped, name_words, squeezed
from citewise.text.names import (
    ABBREVIATIONS,  # noqa: F401
    GENERIC_WORDS,
    code_names,
    compared_names,
    entry_names,
    entry_offsets,  # noqa: F401
    LEAD_TOOL_SLOT,
    NOT_NAMES,
    TOOL_SLOT,
    question_subject,  # noqa: F401
    section_names,
    subject_words,
)  # (question_subject re-exported)

from citewise.answer.question_words import (
    QUESTION_WORDS,
    _CODE_TOKEN,  # noqa: F401
    _DOES_VERB,  # noqa: F401
    _option_entry_of,  # noqa: F401,E402 (re-exported)
    asks_live_value,
    content_terms,
    exact_words,
    is_common_word,  # noqa: F401
    named_row_label,
    named_terms,  # noqa: F401
    names_cell,
)

#: A product name with a version (``bash-5.0``, ``python-3``): written "bash 5.0" or "version 5.0"
#: as often as with the hyphen, so its absence as one token says nothing.
#: An upper-case constant name: ``O_DIRECT``, ``SIGPWR``, ``UV_THREADPOOL_SIZE``.
_VERSIONED = re.compile(r"[A-Za-z]+-\d+(?:\.\d+)*")
#: A bare version number ("1.6.17"), which the pages may write joined to its product
#: ("libpng-1.6.17", one token): :meth:`EvidenceScorer._joined_version`.
_BARE_VERSION = re.compile(r"\d+(?:\.\d+)+")
#: Analyzed forms of :data:`citewise.text.names.GENERIC_WORDS` ("flag", "option", "builtin").
_GENERIC_TERMS = frozenset(analyze(" ".join(GENERIC_WORDS)))


#: Compound words that name things in reference pages: ``menu-items``, ``dead_code``, ``fs.rm``.
_COMPOUND = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)+(?![\w-])")
#: A how-to question ("How do I ...", "How can we ...", "how to ...").
_HOW_TO = re.compile(r"^\s*how\s+(?:do|can|could|should|would|to)\b", re.I)


#: Units before a code block read with it (:func:`_prose_before`).
CODE_PROSE_UNITS = 4


def _prose_before(units: Sequence, k: int) -> list[str]:
    """Texts of up to :data:`CODE_PROSE_UNITS` units before ``units[k]`` under the same headings,
    stopping at another code block: the prose a code block illustrates."""
    out: list[str] = []
    j = k - 1
    while j >= 0 and len(out) < CODE_PROSE_UNITS and units[j].kind != "code" and units[j].headings == units[k].headings:
        out.append(units[j].text)
        j -= 1
    return out[::-1]


#: The object of a how-to that fewer chunks than this hold is one the corpus only mentions
#: (:meth:`EvidenceScorer.tool_apart`).
SUBJECT_APART_DF = 20
#: A term in at least this share of a corpus's chunks is one of its topics, whatever the fixed
#: caps say (:meth:`EvidenceScorer._topic_df`; a small corpus: "How do I renew the SSO
#: certificate?" over the sample corpus, where "SSO" is in 19 of 81 chunks, abstained).
TOPIC_SHARE = 0.05

#: A word in at least this share of the visible chunks is what the corpus is about (its product's
#: name: "Ledgerly" on the sample corpus); leading a multi-word name it only qualifies it
#: (:meth:`EvidenceScorer.phrase_occurs`). At most :data:`CORPUS_SUBJECT_CAP` chunks are counted.
CORPUS_SUBJECT_SHARE = 0.2
CORPUS_SUBJECT_CAP = 2000

#: A word of :func:`exact_words` is a *rare exact* name when at most this many chunks hold it
#: (a table row's target triple, a signal name): it pins the passage that holds it.
RARE_EXACT_DF = 3


@dataclass
class Evidence:
    """The evidence score of one question and how it was made.

    Attributes:
        score: ``dense × coverage ** coverage_power`` in [0, 1] (0 when a rule fired).
        dense: best question-unit cosine over the top chunks.
        coverage: IDF-weighted coverage of the question's content terms (see module docstring).
        terms: the content terms.
        uncovered: content terms not found in the evidence chunks.
        absent: content terms found nowhere in the visible corpus.
        reason: None, or the rule that set the score to 0 (:class:`~citewise.core.Reason`).
        unit_scores: ``{chunk_id: [cosine per unit]}`` for the chunks looked at (reused by the
            extractive generator).
        passage: the best IDF-weighted share of the content terms that *one* of the top chunks
            holds (title, headings, text; terms absent from the corpus weigh ``absent_weight``,
            as in ``coverage``, which counts a term found in any of the chunks).
        entry: a name the question asks about (:func:`citewise.text.names.entry_names`, or a
            compound word such as ``menu-items``) has its entry in a top chunk (a heading, list
            item or definition led by it), or each side of a comparison is named by one unit:
            the subject is pinned by the evidence, so the passage gate does not apply.
    """

    score: float
    dense: float = 0.0
    coverage: float = 0.0
    terms: list[str] = field(default_factory=list)
    uncovered: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    reason: Reason | None = None
    unit_scores: dict[str, np.ndarray] = field(default_factory=dict)
    passage: float = 0.0
    entry: bool = False

    @property
    def together(self) -> float:
        """``dense² × passage``: meaning and the question's words *in one passage* (the gate of
        the settings' ``answer.thresholds``)."""
        return self.dense**2 * self.passage


class EvidenceScorer:
    """Compute :class:`Evidence` for a question and its retrieved chunks.

    Args:
        store: the Store (for term document frequencies, ``lexical_search``, and ``stats``).
        units: a :class:`UnitCache` over the index's embedder.
        top_m: how many of the top retrieved chunks count as evidence.
        absent_weight: weight of terms absent from the visible corpus (see module docstring).
        coverage_power: exponent of the coverage in the score.
        df_cap: document frequencies are counted up to this many chunks.
    """

    def __init__(
        self,
        store,
        units: UnitCache,
        top_m: int = 5,
        absent_weight: float = 0.25,
        coverage_power: float = 2.0,
        df_cap: int = 100,
    ):
        self.coverage_power = coverage_power
        self.store = store
        self.units = units
        self.top_m = top_m
        self.absent_weight = absent_weight
        self.df_cap = df_cap
        self._df: dict[tuple[str, Filters | None], int] = {}
        self._phrase: dict[tuple[str, Filters | None], bool] = {}
        self._subject: dict[tuple[str, Filters | None], bool] = {}
        self._n: int | None = None

    def df(self, term: str, filters: Filters | None) -> int:
        """Chunks (visible under ``filters``) containing ``term``, counted up to ``df_cap``."""
        key = (term, filters)
        if key not in self._df:
            if len(self._df) > 200_000:
                self._df.clear()
            self._df[key] = len(self.store.lexical_search([term], self.df_cap, filters))
        return self._df[key]

    def idf(self, term: str, filters: Filters | None) -> float:
        """``ln(1 + (N - df + 0.5) / (df + 0.5))`` with N = chunks in the store."""
        n, d = self._chunk_count(), self.df(term, filters)
        return math.log(1.0 + (max(n - d, 0) + 0.5) / (d + 0.5))

    def _chunk_count(self) -> int:
        """Chunks in the store (at least 1), read once."""
        if self._n is None:
            self._n = max(int(self.store.stats().get("chunks", 0)), 1)
        return self._n

    def _topic_df(self) -> int:
        """Chunks a term must be in to be a topic of a small corpus rather than a mention:
        :data:`TOPIC_SHARE` of the store's chunks (at least 2). On the 81-chunk sample corpus
        "SSO" is in 19 chunks, a quarter of them, yet under the fixed caps of
        :meth:`tool_apart` (20 and ``df_cap``); on corpora of 400 chunks or more the fixed caps
        are the lower ones. Never more than the corpus has: a term in every chunk of a one-chunk
        corpus is its topic."""
        n = self._chunk_count()
        return max(1, min(n, max(2, math.ceil(TOPIC_SHARE * n))))

    def unknown_name(self, question: str, filters: Filters | None) -> Reason | None:
        """``'unknown name: X'`` when the question names something the visible corpus never
        mentions, else None. A name is a code name (:func:`code_names`: a flag, a dotted,
        ``snake_case`` or camelCase identifier, a quoted phrase; its whole token must be absent,
        and every content term of a quoted phrase must occur) or a word that is a name by its shape
        or its rarity in English (:func:`citewise.text.rarity.name_words`: ``L4``, ``SIGPWR``,
        *Stripe*, *frobnicate*; all its terms absent), or a multi-word proper name
        (:func:`citewise.text.rarity.name_phrases`: "Visual Studio Code") that no chunk holds as a
        phrase (:meth:`phrase_occurs`). An ordinary English word the pages do not
        use ("minimal", "OK") is never a name: it only lowers the coverage. Words are looked up as
        the principal may see them (``filters``); a question in another language (no English
        function word: :attr:`QuestionAnalysis.language`) is checked by shape only. Unicode dashes
        are folded first (``E\u20111004`` is the name ``E-1004``, as in the analyzer and pinning)."""
        question = fold_dashes(question)
        codes = code_names(question)
        for name in codes:
            terms = analyze(name)
            if not terms or _VERSIONED.fullmatch(name):
                continue
            if " " in name.strip():  # a quoted phrase: every content term must occur
                if any(self.df(t, filters) == 0 for t in terms if t not in QUESTION_WORDS):
                    return Reason.of(ReasonCode.UNKNOWN_NAME, name=name)
            elif self.df(terms[0], filters) == 0:  # the whole identifier, not its parts
                if not (self._known_constant(name, filters) or self._known_form(name, filters)):
                    return Reason.of(ReasonCode.UNKNOWN_NAME, name=name)
        df, chunks_with = self._lookups(filters)
        for name, called in literal_names(question):  # shape=cloud, generated(): written as asked
            if not literal_known(name, called, df, chunks_with, self.df_cap):
                return Reason.of(ReasonCode.UNKNOWN_NAME, name=f"{name}()" if called else name)
        english = analyze_question(question).language == "en"
        phrases = name_phrases(question, lexicon().english) if english else []
        for phrase in phrases:
            if not self.phrase_occurs(phrase, filters):
                return Reason.of(ReasonCode.UNKNOWN_NAME, name=phrase)
        inside = " ".join(codes + phrases)  # a word of a known phrase is named by it ("One Login")
        for word in name_words(question):
            if word in inside or _VERSIONED.fullmatch(word) or not (english or name_shaped(word)):
                continue
            if _BARE_VERSION.fullmatch(word) and self._joined_version(question, word, filters):
                continue
            terms = [t for t in analyze(word) if t not in QUESTION_WORDS]
            one = singular(word)  # "PNGs" is known where "PNG" is
            if terms and all(self.df(t, filters) == 0 for t in terms + (analyze(one) if one else [])):
                return Reason.of(ReasonCode.UNKNOWN_NAME, name=word)
        return None

    def phrase_occurs(self, phrase: str, filters: Filters | None) -> bool:
        """Whether ``phrase`` occurs as a phrase in a chunk visible under ``filters`` (its text,
        its title or its headings), among the :attr:`df_cap` chunks BM25 ranks first for its
        terms. A multi-word name (:func:`name_phrases`) is known only as a phrase: "Visual Studio
        Code" is not named by a corpus holding "Visual Studio" and "code" apart.

        Compared as :func:`~citewise.text.rarity.squeezed` text: case, spaces, hyphens and apostrophes do not count
        ("Bacs Direct-Debit" is "Bacs Direct Debit", "One Login" is "OneLogin", "E-Mail Address"
        is in "email addresses"), while other punctuation, a tab or a blank line stands between
        words (a table's "Pro | Enterprise" is no "Pro Enterprise"). Leading words the corpus is
        about (each in at least :data:`CORPUS_SUBJECT_SHARE` of the visible chunks: the
        product's own name, "Ledgerly Pro") only qualify the name and are left out; a phrase left
        with fewer than two words is not checked (True)."""
        words = [w for w in re.split(r"[\s\-]+", phrase) if w]
        while len(words) >= 2 and self._corpus_subject(words[0], filters):
            words = words[1:]
        terms = list(dict.fromkeys([t for w in words for t in analyze(w)] + analyze("".join(words))))
        if len(words) < 2 or not terms:
            return True
        key = (squeezed(" ".join(words)), filters)
        if key not in self._phrase:
            if len(self._phrase) > 20_000:
                self._phrase.clear()
                self._subject.clear()
            hits = self.store.lexical_search(terms, self.df_cap, filters)
            chunks = self.store.get_chunks([h.chunk_id for h in hits]).values()
            self._phrase[key] = any(
                key[0] in squeezed(text) for c in chunks for text in (c.text, " ".join((c.title, *c.heading_path)))
            )
        return self._phrase[key]

    def _corpus_subject(self, word: str, filters: Filters | None) -> bool:
        """Whether ``word``'s term is in at least :data:`CORPUS_SUBJECT_SHARE` of the chunks
        (at most :data:`CORPUS_SUBJECT_CAP` of them counted)."""
        terms = analyze(word)
        if len(terms) != 1:
            return False
        need = min(CORPUS_SUBJECT_CAP, max(2, math.ceil(CORPUS_SUBJECT_SHARE * self._chunk_count())))
        key = (terms[0], filters)
        if key not in self._subject:
            self._subject[key] = len(self.store.lexical_search(terms, need, filters)) >= need
        return self._subject[key]

    def _lookups(self, filters: Filters | None):
        """``(df, chunks_with)`` under ``filters`` for :mod:`known_forms`."""

        def chunks_with(terms: list[str]):
            hits = self.store.lexical_search(terms, self.df_cap, filters)
            return self.store.get_chunks([h.chunk_id for h in hits]).values()

        return (lambda t: self.df(t, filters)), chunks_with

    def _joined_version(self, question: str, version: str, filters: Filters | None) -> bool:
        """Whether the corpus holds ``version`` joined to the word before it in ``question``:
        "libpng 1.6.17" asked, "libpng-1.6.17" written (the mirror of :data:`_VERSIONED`: a
        product's version is written with or without the hyphen)."""
        found = False
        for m in re.finditer(re.escape(version) + r"(?!\w|\.\d)", question):
            # every mention must follow a word the version is written joined to ("widget 2.4.1
            # with gizmo 2.4.1" is not known by gizmo-2.4.1 alone)
            before = re.search(r"(?<![\w.+-])([A-Za-z][\w+]*)[\s-]+$", question[max(0, m.start() - 80) : m.start()])
            joined = analyze(f"{before.group(1)}-{version}") if before else []
            if not (joined and "-" in joined[0] and self.df(joined[0], filters) > 0):
                return False
            found = True
        return found

    def _known_form(self, name: str, filters: Filters | None) -> bool:
        """Whether the corpus knows ``name`` in another written form (:mod:`known_forms`)."""
        df, chunks_with = self._lookups(filters)
        return section_key_known(name, df, chunks_with) or attached_flag_known(name, df, chunks_with)

    def _known_constant(self, name: str, filters: Filters | None) -> bool:
        """Whether a dotted name the corpus never spells whole ends in a constant it knows, under
        a first part it knows: ``fs.constants.O_DIRECT`` where a table of ``fs.constants`` lists
        ``O_DIRECT`` in a row of its own. Only an upper-case constant counts (``O_DIRECT``,
        ``SIGPWR``); a made-up method under a real module (``fs.copyTree``) stays unknown."""
        parts = name.rstrip("()").split(".")
        if len(parts) < 2 or not CONSTANT.fullmatch(parts[-1]):
            return False
        first, last = analyze(parts[0]), analyze(parts[-1])
        return bool(first and last) and self.df(first[0], filters) > 0 and self.df(last[0], filters) > 0

    missing_name = staticmethod(missing_name)
    missing_entry = staticmethod(missing_entry)

    def tool_apart(self, question: str, chunks: Sequence, units: Sequence, filters: Filters | None) -> Reason | None:
        """``'not in the evidence: how to ... with X'`` when a how-to ("How do I ...") names the tool it is done with
        ("How do I add a package as a dev dependency with pnpm?", "... in X", "... using X"; the
        tool of :func:`citewise.text.names.slot_names`), the tool is one the corpus only mentions
        (fewer than ``df_cap`` chunks name it, so it is not what the corpus is about) and no answer
        unit that names it (with its title and headings) also holds at least half of the IDF
        weight of the question's other content terms, else ''. A page listing "Package manager:
        pnpm" does not say how to add a dev dependency with it.

        ``chunks``: the top chunks; ``units``: their answer units, one list per chunk."""
        m = TOOL_SLOT.search(question) or LEAD_TOOL_SLOT.match(question)
        if m and m.group(1).lower() in NOT_NAMES:
            m = None  # "... replacing one string with another": no tool named
        if not _HOW_TO.match(question):
            return None
        if not m:
            # the how-to's own object ("How do I point npm at a private registry?"), when the
            # corpus only mentions it: the same test as for a tool
            for word in subject_words(question):
                if len(word) >= 3 and word.isalpha():
                    why = self._apart(word, question, chunks, units, filters, SUBJECT_APART_DF)
                    if why:
                        return why
            return None
        return self._apart(m.group(1), question, chunks, units, filters, self.df_cap)

    def _apart(
        self, tool: str, question: str, chunks: Sequence, units: Sequence, filters: Filters | None, df_limit: int
    ) -> Reason | None:
        """:meth:`tool_apart` for one name ``tool``, which counts as one the corpus only mentions
        when fewer than ``df_limit`` chunks hold it."""
        tool_terms = [t for t in analyze(tool) if t not in QUESTION_WORDS]
        if not tool_terms or self.df(tool_terms[0], filters) >= min(df_limit, self._topic_df()):
            return None
        rest = {t: self.idf(t, filters) for t in content_terms(question) if t not in tool_terms}
        total = sum(rest.values())
        if total <= 0:
            return None
        for c, us in zip(chunks, units):
            for k, u in enumerate(us):
                # a code block is read with the prose it illustrates: the units before it in its
                # section, back to the previous block (``$ echo ${string:7:2}`` after "Here are
                # some examples illustrating substring expansion:" and the sentences on offsets)
                intro = " ".join(_prose_before(us, k)) if u.kind == "code" else ""
                have = set(analyze(" ".join((c.title, *c.heading_path, u.heading, intro, u.text))))
                if any(t in have for t in tool_terms) and sum(w for t, w in rest.items() if t in have) >= 0.5 * total:
                    return None
        return Reason.of(ReasonCode.NOT_IN_EVIDENCE, what=f"how to do this with {tool}")

    def rare_exact(self, question: str, filters: Filters | None) -> list[str]:
        """Analyzed whole-word terms of the question's :func:`exact_words` that occur in at least
        one and at most :data:`RARE_EXACT_DF` visible chunks (``mipsel-sony-psp``)."""
        out = []
        for word in exact_words(fold_dashes(question)):
            terms = analyze(word)
            if terms and 1 <= self.df(terms[0], filters) <= RARE_EXACT_DF:
                out.append(terms[0])
        return out

    def score(self, question: str, qvec: np.ndarray, chunks: Sequence, filters: Filters | None) -> Evidence:
        """Evidence for ``question`` given its embedding ``qvec`` (shape (dim,)) and the retrieved
        chunks in rank order (StoredChunk-like: ``chunk_id``, ``title``, ``heading_path``,
        ``text``); only the first ``top_m`` are used. ``filters`` are the principal's effective
        filters (used for document frequencies)."""
        terms = content_terms(question)
        if code_names(question):  # "the --dry-run flag": the kind of thing named carries no topic
            terms = [t for t in terms if t not in _GENERIC_TERMS]
        top = list(chunks)[: self.top_m]
        ev = Evidence(0.0, terms=terms)
        ev.reason = self.unknown_name(question, filters)
        if not ev.reason and asks_live_value(question):
            ev.reason = Reason.of(ReasonCode.LIVE_VALUE)
        if not top:
            ev.reason = ev.reason or Reason.of(ReasonCode.NO_EVIDENCE)
            return ev
        best = 0.0
        sides = {
            side: [t for t in analyze(side) if t not in QUESTION_WORDS and len(t) > 1]
            for side in compared_names(question)
        }
        found = {side for side, ts in sides.items() if not ts}
        top_units = self.units.get(top)
        for c, (units, vecs) in zip(top, top_units):
            for u in units if len(found) < len(sides) else ():
                have = set(analyze(" ".join((*c.heading_path, u.heading, u.text))))
                found.update(side for side, ts in sides.items() if all(t in have for t in ts))
            sims = vecs @ np.asarray(qvec, dtype=np.float32) if len(units) else np.zeros(0, np.float32)
            ev.unit_scores[c.chunk_id] = sims
            for u, sim in zip(units, sims):
                if not is_instruction(u.text):
                    best = max(best, float(sim))
        ev.dense = best
        seen: set[str] = set()
        weights = {t: self.idf(t, filters) for t in terms}
        # the subject's words together in one passage (:attr:`Evidence.passage`); words absent
        # from the whole corpus weigh ``absent_weight``, as in the coverage
        pweights = {t: w * (self.absent_weight if self.df(t, filters) == 0 else 1.0) for t, w in weights.items()}
        ptotal = sum(pweights.values())
        for c in top:
            have = set(analyze(" ".join((c.title, *c.heading_path, c.text))))
            seen.update(have)
            if ptotal > 0:
                ev.passage = max(ev.passage, sum(w for t, w in pweights.items() if t in have) / ptotal)
        # a rare exact name of the question (a target triple, a signal name) held by a top chunk
        # pins the passage: "os.constants.signals SIGSTKFLT" is answered by the table row of
        # SIGSTKFLT although the chunk never spells out the namespace it sits in
        rare = [t for t in self.rare_exact(question, filters) if t in seen and any(names_cell(c.text, t) for c in top)]
        if not ev.reason and not rare:
            ev.reason = self.missing_name(question, seen)
        # the subject is pinned by the evidence: a name the question asks about (its code names,
        # the subject of "what is X", a compound word such as ``menu-items``) has its entry in a
        # top chunk, or each side of a comparison is named by one unit
        names = list(dict.fromkeys(entry_names(question) + _COMPOUND.findall(question)))
        ev.entry = (
            bool(sides)
            and len(found) == len(sides)
            or any(entry_offsets(c.text, n, c.heading_path[-1] if c.heading_path else "") for n in names for c in top)
        )
        # a command-line flag the question asks about (``--verbose``), written as such in a top
        # chunk, pins the subject as well as an entry would ("The `--verbose` flag prints ...")
        flags = [f for f in code_names(question) if f.startswith("-") and len(f.lstrip("-")) >= 2]
        ev.entry = ev.entry or any(
            re.search(r"(?<![\w-])" + re.escape(f) + r"(?![\w-])", c.text) for f in flags for c in top
        )
        ev.entry = ev.entry or bool(rare)
        # a table row the question names by its label ("How wide is the Small X?" over the row
        # "| Small X | 1.2 kg | 20 cm | ...") is that thing's entry: the question's other words
        # are the row's columns, which may be spelt otherwise ("wide" / "Width")
        ev.entry = ev.entry or any(named_row_label(c.text, question) for c in top)
        if not ev.reason:
            ev.reason = self.missing_entry(question, top)
        if not ev.reason:
            texts = [c.text.lower() for c in top]
            ev.reason = next(
                (
                    Reason.of(ReasonCode.NOT_IN_EVIDENCE, what=sec)
                    for sec in section_names(question)
                    if not any(sec.lower() in t for t in texts)
                ),
                None,
            )
        if not ev.reason:
            ev.reason = self.tool_apart(question, top, [u for u, _ in top_units], filters)
        if not ev.reason and len(found) < len(sides):
            # "npm ci vs npm install": a comparison is about both sides; one that no answer unit
            # names (its words spread over unrelated sentences) is not in the evidence
            ev.reason = Reason.of(ReasonCode.NOT_IN_EVIDENCE, what=next(side for side in sides if side not in found))
        covered = uncovered = absent = 0.0
        for t in terms:
            w = weights[t]
            if t in seen:
                covered += w
            elif self.df(t, filters) == 0:
                absent += w
                ev.absent.append(t)
                ev.uncovered.append(t)
            else:
                uncovered += w
                ev.uncovered.append(t)
        denom = covered + uncovered + self.absent_weight * absent
        ev.coverage = covered / denom if denom > 0 else 0.0
        ev.score = 0.0 if ev.reason else ev.dense * ev.coverage**self.coverage_power
        return ev
