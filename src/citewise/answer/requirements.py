"""Required checks of the evidence-gap controller: domain requirements (YAML) and checks
derived from the question's conditions.

A domain file (format: ``sample/payment/requirements.yaml``; :class:`Requirements`) lists, per kind
of question, the checks the evidence must cover, each with its evidence patterns, follow-up query
and optional compared value. Without one, :func:`derive_checks` derives the checks from the
question's analysis (its main clause and condition clauses).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from citewise.core import InputError
from citewise.text.analyzer import analyze
from citewise.text.sentences import SENTENCE_END

#: Share of a derived check's IDF weight one sentence must hold to state it (besides holding all
#: its terms, or all but one of four or more).
STATED_SHARE = 0.75


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
            satisfies the check when it holds ``min_terms`` terms *and* :data:`STATED_SHARE` of the weight.
        asked: the main clause of a sentence that opens with a content question word
            (``content_wh_words`` of ``data/question.yaml``: "What is the match limit if ...";
            not "Why", ``asserting_wh_words``): what the question asks, which the answer gives, rather than a claim or
            condition the evidence must state. Still read for values and for lifting a low
            evidence score; its absence is no "not established" notice. Never set for an
            absolute claim.
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
    asked: bool = False

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
            return weight if sum(got) >= self.min_terms and weight >= STATED_SHARE * sum(w) else 0
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
            raise InputError(
                src, f"not valid YAML ({getattr(e, 'problem', e)})", line=mark.line + 1 if mark else None
            ) from None
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
                checks.append(
                    Check(
                        c["name"].strip(),
                        c["query"].strip(),
                        tuple(_compile(p, f"{cat}.evidence[{k}]", source) for k, p in enumerate(c["evidence"])),
                        value,
                        flags["covers_absolute"],
                        versioned=flags["versioned"],
                    )
                )
            hist = d.get("history", False)
            if not isinstance(hist, bool):
                raise InputError(source, f"{at}.history: true or false")
            domains.append(
                Domain(
                    d["name"].strip(),
                    tuple(_compile(p, f"{at}.when[{k}]", source) for k, p in enumerate(d["when"])),
                    tuple(checks),
                    hist,
                )
            )
        return cls(tuple(domains))

    def domain_for(self, question: str) -> Domain | None:
        """The first domain whose ``when`` matches ``question`` (None: derive checks)."""
        return next((d for d in self.domains if d.applies(question)), None)


def _asks_content(sentence: str, lex) -> bool:
    """Whether a question sentence asks for content rather than claiming something: the first
    of its clauses (split at ``,`` ``:`` ``;``) that opens with a question word opens with a
    content question word (``content_wh_words``; "what's" is "what"), not a yes/no opener, a
    negative one or an asserting one (``asserting_wh_words``: "why"). "Graphviz without
    fontconfig: where does dot look ..." asks; "Quick question: does the worker page ...",
    "Doesn't it ...", "Why does it ..." and "The worker pages support?" claim.

    >>> from citewise.answer.question import lexicon
    >>> [_asks_content(s, lexicon()) for s in ("Without X: where does dot look?", "So, does it page?", "It pages?")]
    [True, False, False]
    """
    for clause in re.split(r"[,:;]\s+", sentence.strip()):
        first = clause.split(maxsplit=1)[0].lower() if clause.split() else ""
        first = first[:-2] if first.endswith(("'s", "\u2019s")) else first
        if first in lex.content_wh_words:
            return True
        if first in lex.yes_no_openers or first in lex.asserting_wh_words or first.endswith("n't"):
            return False
    return False


def derive_checks(question: str, idf=None) -> list[Check]:
    """Checks derived from the question's conditions (no domain file applies).

    From the question's analysis (:func:`citewise.answer.question.analyze_question`): one check
    for the main clause and one per condition clause ("after a capture request times out"), each
    named by its words without the condition marker. A how-to question with conditions has no
    main-clause check: it asks for a procedure, which no sentence states as a claim.

    >>> [c.name for c in derive_checks("How do I stop fs.rm from throwing when the path does not exist?")]
    ['the path does not exist']

    A check counts as found only where one sentence *states* it: the sentence holds every content
    term of the clause, or all but one when the clause has four or more, and at least
    :data:`STATED_SHARE` of their IDF weight (``idf``: term -> weight, e.g.
    :meth:`EvidenceScorer.idf`; equal weights when None). A sentence that shares a word or two
    with the clause does not.

    When the question asks for a number or a date, each check also reads that value from its
    evidence (the first quantity or date of the sentence: ``data/format.yaml``, ``values``), so
    sources giving different values are a ``conflict``.

    >>> [c.name for c in derive_checks("Does the worker retry after a capture times out?")]
    ['the worker retry', 'a capture times out']
    """
    from citewise.answer.question import analyze_question, lexicon
    from citewise.answer.select.format import value_pattern

    qa = analyze_question(question)
    lex = lexicon()
    main = question.strip()
    for c in qa.conditions:
        main = main.replace(c, " ")
    pieces = []
    # a how-to question's main clause asks for a procedure ("How do I stop fs.rm from throwing"):
    # no sentence states it as a claim; the answer gives the procedure, the conditions are checked
    # sentences end as the answer units' do: before a capital, so "e.g. for a file" goes on
    sentences = [] if qa.kind == "how_to" and qa.conditions else SENTENCE_END.split(main)
    asked_pieces = set()
    for sentence in sentences:  # "... twice? Is it guaranteed safe?": two claims
        words = sentence.strip().strip(",;:").rstrip("?!.").split()
        low = " ".join(w.lower() for w in words)
        asked = _asks_content(sentence, lex)
        for phrase, _ in lex.answer_types:  # "How long are keys kept": the wh-phrase is no claim
            if low == phrase or low.startswith(phrase + " "):
                words = words[len(phrase.split()) :]
                break
        while words and words[0].lower().strip(",") in lex.askers | lex.yes_no_openers:
            words = words[1:]  # "Does the worker retry": the opener is no part of the claim
        pieces.append(" ".join(words).strip(" ,;"))
        if asked:
            asked_pieces.add(pieces[-1])
    for c in qa.conditions:
        first, _, rest = c.partition(" ")
        pieces.append(rest.strip(" ,;") if first.lower() in lex.condition_markers else c)
    value = value_pattern(qa.expected)
    claim = qa.absolute  # "Which retry is always safe ...": every clause is a claim
    checks: list[Check] = []
    for p in dict.fromkeys(p for p in pieces if p):
        terms = tuple(t for t in dict.fromkeys(analyze(p)) if t not in lex.question_terms)
        if not terms:
            continue
        need = len(terms) if len(terms) < 4 else len(terms) - 1
        weights = tuple(float(idf(t)) for t in terms) if idf else ()
        asked = p in asked_pieces and not claim
        checks.append(Check(p, p, terms=terms, min_terms=need, weights=weights, value=value, asked=asked))
    return checks
