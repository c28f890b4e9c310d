"""One analysis of a question, computed once and read by every later stage.

:func:`analyze_question` returns a frozen :class:`QuestionAnalysis`: the question's kind, subject,
named entities and identifiers, conditions, expected answer type and language, plus its content
terms and two request flags (code, default). Its word lists are data
(``citewise/answer/data/question.yaml``, with their sources), not code; the function is cached
per question text, and nothing about a question is kept on shared objects (a generator, a scorer)
between calls.

>>> q = analyze_question("Can a resent settle call after an unknown outcome settle the payment twice?")
>>> q.kind, q.expected, q.conditions, q.absolute
('yes_no', 'boolean', ('after an unknown outcome settle the payment twice',), False)
>>> q = analyze_question("How many vacation days do I get?")
>>> q.kind, q.expected, q.subject
('factoid', 'number', 'vacation days')
>>> analyze_question("Is it guaranteed safe?").absolute
True
>>> analyze_question("What does the --dry-run flag do?").identifiers
('--dry-run',)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Sequence

import yaml

from citewise.text.analyzer import analyze, find_identifiers
from citewise.text.rarity import is_rare, name_words
from citewise.text.names import ABBREVIATIONS, code_names

#: The kinds of question, in the order :func:`_kind` decides them.
KINDS = ("comparison", "yes_no", "how_to", "definition", "list", "factoid", "keyword")
#: Expected answer types (see the data file's ``answer_types``), plus ``boolean`` for yes/no,
#: ``code``, ``value`` (a default) and ``description`` (anything else).
ANSWER_TYPES = (
    "number",
    "date",
    "person",
    "place",
    "reason",
    "procedure",
    "definition",
    "boolean",
    "code",
    "value",
    "description",
)


@dataclass(frozen=True)
class Lexicon:
    """The data file's lists, read once (:func:`lexicon`)."""

    question_words: frozenset[str]
    question_terms: frozenset[str]
    yes_no_openers: frozenset[str]
    askers: frozenset[str]
    content_wh_words: frozenset[str]
    asserting_wh_words: frozenset[str]
    imperatives: frozenset[str]
    answer_types: tuple[tuple[str, str], ...]
    condition_markers: tuple[str, ...]
    participle_markers: frozenset[str]
    prepositions: frozenset[str]
    absolute_markers: tuple[str, ...]
    code_words: frozenset[str]
    default_words: frozenset[str]
    omission_negations: frozenset[str]
    omission_verbs: frozenset[str]
    omission_window: int
    back_references: frozenset[str]
    back_pronouns: frozenset[str]
    back_determiners: frozenset[str]
    self_references: frozenset[str]
    english: frozenset[str]
    reader_pronouns: tuple[tuple[str, str], ...]


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """The word lists of ``data/question.yaml``.

    Raises:
        ValueError: a list is missing (a broken installation, never user input).
    """
    raw = yaml.safe_load(resources.files("citewise.answer").joinpath("data/question.yaml").read_text(encoding="utf-8"))

    def words(key: str) -> list[str]:
        if key not in raw:
            raise ValueError(f"citewise/answer/data/question.yaml: missing {key!r}")
        v = raw[key]
        return v.split() if isinstance(v, str) else [str(x) for x in v]

    def pairs(key: str) -> dict:
        if not isinstance(raw.get(key), dict):
            raise ValueError(f"citewise/answer/data/question.yaml: missing {key!r}")
        return raw[key]

    qw = frozenset(words("question_words"))
    return Lexicon(
        qw,
        frozenset(t for w in qw for t in analyze(w)),
        frozenset(words("yes_no_openers")),
        frozenset(words("askers")),
        frozenset(words("content_wh_words")),
        frozenset(words("asserting_wh_words")),
        frozenset(words("imperatives")),
        tuple((str(a), str(b)) for a, b in raw["answer_types"]),
        tuple(_markers(raw["condition_markers"])),
        frozenset(words("participle_markers")),
        frozenset(words("prepositions")),
        tuple(words("absolute_markers")),
        frozenset(words("code_words")),
        frozenset(words("default_words")),
        frozenset(words("omission_negations")),
        frozenset(words("omission_verbs")),
        int(raw["omission_window"]),
        frozenset(words("back_references")),
        frozenset(words("back_pronouns")),
        frozenset(words("back_determiners")),
        frozenset(words("self_references")),
        frozenset(words("english_function_words")),
        tuple((str(a), str(b)) for a, b in pairs("reader_pronouns").items()),
    )


def _markers(value) -> list[str]:
    """Condition markers: one word each, except the two-word ``in case``."""
    out, ws = [], str(value).split()
    i = 0
    while i < len(ws):
        if ws[i] == "in" and i + 1 < len(ws) and ws[i + 1] == "case":
            out.append("in case")
            i += 2
            continue
        out.append(ws[i])
        i += 1
    return out


@dataclass(frozen=True)
class QuestionAnalysis:
    """What a question asks (see module docstring).

    Attributes:
        text: the question as asked.
        kind: one of :data:`KINDS`.
        expected: the expected answer type, one of :data:`ANSWER_TYPES`.
        subject: the words the question is about (main clause, without question words,
            conditions and the kind of thing named), '' when none.
        entities: capitalised words that are not the first word of a sentence (names).
        identifiers: code names, flags, quoted terms and identifiers (``E-1004``), in order.
        conditions: the clauses that state conditions ("after a capture request times out").
        absolute: the question claims always / never / guaranteed / safe / cannot.
        language: ``en``, or ``und`` when a longer question holds no English function word and
            no more than half of its words are common English words.
        terms: analyzed content terms, question words removed, in order.
        subject_terms: analyzed terms of ``subject``.
        wants_code: the question asks to see code (a how-to, or "example", "syntax", ...).
        asks_default: the question asks for a default value.
        parts: the questions a compound question asks, in order (:func:`question_parts`: "What
            does E-1003 mean and how do I fix it?" -> "What does E-1003 mean", "how do I fix
            it?"); ``()`` for a question that asks one thing.
    """

    text: str
    kind: str
    expected: str
    subject: str
    entities: tuple[str, ...]
    identifiers: tuple[str, ...]
    conditions: tuple[str, ...]
    absolute: bool
    language: str
    terms: tuple[str, ...]
    subject_terms: tuple[str, ...]
    wants_code: bool
    asks_default: bool
    parts: tuple[str, ...] = ()

    @property
    def conditional(self) -> bool:
        """Whether the answer turns on conditions or an absolute claim (the evidence-gap
        controller's trigger under ``answer.sufficiency = "auto"``)."""
        return bool(self.conditions) or self.absolute


_WORD = re.compile(r"[^\W\d_][\w'’-]*|\d[\w.,-]*")


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _mostly_english(words: list[str]) -> bool:
    """Whether ``words`` (lower case) are all ASCII and more than half of those made of letters
    (at least two) are common English words (:func:`citewise.text.rarity.is_rare`): a keyword
    query in English ("edge arrowcolor attribute different line color", "snapshot retention
    Kubernetes 30 days") holds no function word but is still English."""
    if not all(w.isascii() for w in words):  # accented letters: another language
        return False
    plain = [w for w in words if w.isalpha()]  # numbers and codes are no words of any language
    return len(plain) >= 2 and 2 * sum(not is_rare(w) for w in plain) > len(plain)


def _lower_words(text: str) -> list[str]:
    return [w.lower() for w in _words(text)]


def _phrase_at(words: list[str], phrase: str) -> int:
    """Index where the words of ``phrase`` occur in ``words`` (lower case), -1 when absent."""
    p = phrase.split()
    for i in range(len(words) - len(p) + 1):
        if words[i : i + len(p)] == p:
            return i
    return -1


def _kind(words: list[str], text: str, lex: Lexicon) -> str:
    if not words:
        return "keyword"
    if _phrase_at(words, "vs") >= 0 or _phrase_at(words, "versus") >= 0 or _phrase_at(words, "difference between") >= 0:
        return "comparison"
    first = words[0]
    if first in lex.yes_no_openers:
        return "yes_no"
    # "I have been on Pro for 20 days, can I get my money back?": a leading clause, then the question
    tail = text.rsplit(",", 1)[-1] if "," in text else ""
    tail_words = _lower_words(tail)
    if tail_words and tail_words[0] in lex.yes_no_openers and text.rstrip().endswith("?"):
        return "yes_no"
    if first == "how" and len(words) > 1 and (words[1] in lex.yes_no_openers or words[1] == "to"):
        return "how_to"
    if first in ("what", "which") and len(words) > 2 and words[1] in ("is", "are", "does", "do") and len(words) <= 6:
        return "definition"
    if first in ("define", "explain", "describe"):
        return "definition"
    if first in ("list", "which") or (
        first == "what" and len(words) > 1 and words[1].endswith("s") and words[1] not in lex.question_words
    ):
        return "list"
    if first in lex.askers or "?" in text:
        return "factoid"
    return "keyword"


def _expected(words: list[str], kind: str, lex: Lexicon, wants_code: bool, asks_default: bool) -> str:
    if kind == "yes_no":
        return "boolean"
    if asks_default:
        return "value"
    head = words[:3]
    for phrase, kind_of in lex.answer_types:
        n = len(phrase.split())
        at = _phrase_at(words, phrase)
        # "how many" and other two-word wh-phrases may come after a leading clause; a one-word
        # wh-word counts only where it opens the question
        if (
            at == 0
            or (n > 1 and at > 0 and phrase.split()[0] in ("how", "what", "which"))
            or (n == 1 and phrase in head[:1])
        ):
            if kind_of == "procedure" and wants_code and kind != "how_to":
                return "code"
            return kind_of
    return "code" if wants_code else "description"


def _omission(words: list[str], lex: Lexicon) -> bool:
    """A negation shortly before a verb of supplying ("if I don't set one", "when no name is
    given"): the question asks what holds when a thing is not supplied (data file: ``omission_*``).

    >>> _omission("what does it use if i don't set one".split(), lexicon())
    True
    >>> _omission("how do i set the cache size".split(), lexicon())
    False
    """
    for i, w in enumerate(words):
        if w in lex.omission_verbs:
            before = words[max(0, i - lex.omission_window) : i]
            if any(b in lex.omission_negations or b.endswith("n't") for b in before):
                return True
    return False


def _conditions(text: str, lex: Lexicon) -> tuple[str, ...]:
    """Clauses opened by a condition marker, each up to the next marker, comma or end."""
    low = text.lower()
    markers = sorted(lex.condition_markers, key=len, reverse=True)
    rx = re.compile(r"(?<![\w'-])(?:" + "|".join(re.escape(m) for m in markers) + r")(?![\w'-])")
    # "... is given", "given on the command line": a participle, not a condition (the data file)
    hits = [
        m for m in rx.finditer(low) if m.group(0) not in lex.participle_markers or not _participle(low, m.end(), lex)
    ]
    out = []
    for i, m in enumerate(hits):
        if m.start() == 0 and m.group(0) == "when" and "?" in text and _then_auxiliary(low, m.end(), lex):
            continue  # "When does the daily limit reset?": a question word, not a condition
        end = hits[i + 1].start() if i + 1 < len(hits) else len(text)
        clause = text[m.start() : end]
        clause = re.split(r"[,;?!]|\.(?:\s|$)", clause, maxsplit=1)[0].strip()
        if len(_words(clause)) >= 2:
            out.append(clause)
    return tuple(dict.fromkeys(out))


def _next_word(low: str, end: int) -> str | None:
    """The word right after ``end`` of ``low`` (the question, lower case); None at its end."""
    after = re.match(r"\s*([\w'-]+)", low[end:])
    return after.group(1) if after else None


def _then_auxiliary(low: str, end: int, lex: Lexicon) -> bool:
    """Whether the word after ``end`` of ``low`` is an auxiliary ("When does ..."): a leading
    "when" then asks for a time; before a subject ("When the provider returns 418, who ...") it
    opens a condition."""
    return _next_word(low, end) in lex.yes_no_openers


def _participle(low: str, end: int, lex: Lexicon) -> bool:
    """Whether the participle marker ending at ``end`` of ``low`` (the question, lower case) is a
    participle: the clause ends right after it, or a preposition follows it."""
    nxt = _next_word(low, end)
    return nxt is None or nxt in lex.prepositions


def _absolute(words: list[str], lex: Lexicon) -> bool:
    joined = " " + " ".join(words) + " "
    return any(f" {m.lower()} " in joined for m in lex.absolute_markers)


def _entities(text: str) -> tuple[str, ...]:
    """Capitalised words after the first word of each sentence (``I`` excluded)."""
    out: list[str] = []
    start = True
    for m in re.finditer(r"[A-Za-z][\w'’-]*|[.?!:;]", text):
        w = m.group(0)
        if w in ".?!:;":
            start = True
            continue
        if not start and w[0].isupper() and w != "I":
            out.append(w)
        start = False
    return tuple(dict.fromkeys(out))


def _subject(text: str, words: list[str], conditions: tuple[str, ...], lex: Lexicon) -> str:
    """The main clause's content words: conditions removed, then question words and the
    leading wh-phrase dropped; at most six words."""
    main = text
    for c in conditions:
        main = main.replace(c, " ")
    ws = _words(main)
    low = [w.lower() for w in ws]
    for phrase, _ in lex.answer_types:  # "how many vacation days": the wh-phrase is no subject
        at = _phrase_at(low, phrase)
        if at >= 0:
            ws = ws[:at] + ws[at + len(phrase.split()) :]
            break
    kept = [w for w in ws if w.lower() not in lex.question_words]
    return " ".join(kept[:6])


#: Most parts a compound question is read as (:func:`question_parts`); a longer list is a
#: question about a list of things, not several questions.
MAX_PARTS = 3


def question_parts(text: str, lex: Lexicon | None = None) -> tuple[str, ...]:
    """The questions ``text`` asks when it asks more than one, in order; ``()`` otherwise.

    A new part starts after a question mark that ends a word (``?``, ``?!``, the full-width
    ``？``) followed by more text, or at "and" / ";" (after an optional comma) directly followed
    by a lower-case word that opens a question (``askers`` of ``data/question.yaml``: "..., and how
    do I ask for a higher one?"; a capitalised "May" or "Will" after "and" is a name). Each part
    must hold a content word (not only question words: "... and how do" is no part); at most
    :data:`MAX_PARTS` parts, else ``()``. A verb in the imperative after "and" (``imperatives``:
    "... and tell billing support why") coordinates a request, it opens no part; a piece after a
    question mark that asks nothing (no question mark of its own, no opener: "I am on the Pro
    plan.") is context of the part before it. Coordination inside one clause ("install and
    configure", "X and Y") does not split: the word after "and" does not open a question; nor does
    "or", which joins the alternatives of one question ("Can it be removed outright, or is it
    demoted first?"); nor a question mark standing alone ("the ? operator").
    """
    lex = lex or lexicon()
    openers = "|".join(sorted(lex.askers - lex.imperatives, key=len, reverse=True))
    pieces = re.split(rf"(?<=[^\s(][?？])!?\s+(?=\S)|\s*(?:,\s*)?(?:\b(?i:and)\b|;)\s+(?=(?:{openers})\b)", text)
    parts: list[str] = []
    for piece in (p.strip(" \t\n,;:(") for p in pieces if p):
        if not piece:
            continue
        if parts and not _asks(piece, lex):
            parts[-1] = f"{parts[-1]} {piece}"  # "... fail? I am on the Pro plan.": context, not a question
        else:
            parts.append(piece)
    if len(parts) < 2 or len(parts) > MAX_PARTS:
        return ()
    if any(all(t in lex.question_terms for t in analyze(p)) for p in parts):
        return ()
    return tuple(parts)


def _asks(piece: str, lex: Lexicon) -> bool:
    """Whether a piece of a question asks something: it ends in a question mark or opens with a
    question's opener (``askers``)."""
    first = piece.split(maxsplit=1)[0].lower().strip("\"'(") if piece.split() else ""
    return piece.rstrip().endswith(("?", "？")) or first in lex.askers


def to_reader(text: str) -> str:
    """The asker's own words said back to them: first-person words become second-person
    (``reader_pronouns`` of ``data/question.yaml``), a capital kept where the word had one
    (other than "I"). Straight and curly apostrophes both match.

    >>> to_reader("I don't pass --emit to my build")
    "you don't pass --emit to your build"
    >>> to_reader("Our SAML app expires; I'm told we must rotate it")
    "Your SAML app expires; you're told you must rotate it"
    """
    swap = dict(lexicon().reader_pronouns)

    def said_back(m: re.Match) -> str:
        word = m.group(0)
        key = word.lower().replace("’", "'")
        new = swap.get(key)
        if new is None:
            return word
        if "’" in word:  # the asker's apostrophe kept
            new = new.replace("'", "’")
        first_person = key == "i" or key.startswith("i'")  # "I" is a capital anywhere
        return new.capitalize() if word[0].isupper() and not first_person else new

    return re.sub(r"\b[A-Za-z]+(?:['’][a-z]+)?\b", said_back, text)


#: A personal pronoun among this many first words of a sentence points back at the sentence
#: before (:func:`leans_back`); further on, it mostly points at a noun of its own sentence ("The
#: call returns a promise that resolves when it finishes.").
POINTS_BACK_WORDS = 4


def leans_back(sentence: str) -> bool:
    """Whether ``sentence`` leans on the sentence before it: it opens with a back-reference word
    (``back_references``: "This", "Its", "Such"), holds a personal pronoun (``back_pronouns``)
    among its first :data:`POINTS_BACK_WORDS` words, or its first clause (up to a comma) names
    something with a demonstrative (``back_determiners``: "with this code") that is not the text
    itself (``self_references``: "this section"; ``data/question.yaml``).

    >>> leans_back("On day 20 it cancels."), leans_back("If none of them matches, ..."), leans_back("This is so.")
    (True, True, True)
    >>> leans_back("If the script exits with this code, the revision is skipped.")
    True
    >>> leans_back("A task waits until one of them is free."), leans_back("Four threads run.")
    (False, False)
    >>> leans_back("The options in this section apply to both."), leans_back("If it fails, this code is logged.")
    (False, True)
    >>> leans_back("If a task fails, this code is logged.")
    False
    """
    words = re.findall(r"\w+", sentence.lower())
    lex = lexicon()
    if not words:
        return False
    if words[0] in lex.back_references or any(w in lex.back_pronouns for w in words[:POINTS_BACK_WORDS]):
        return True
    clause = re.findall(r"\w+", sentence.split(",")[0].lower())
    return any(w in lex.back_determiners and nxt not in lex.self_references for w, nxt in zip(clause, clause[1:]))


def part_question(part: str, names: Sequence[str]) -> str:
    """A part of a compound question as a question of its own: a part that names nothing of its
    own (no identifier, no name by shape or rarity: :func:`citewise.text.rarity.name_words`)
    is about what the question named before, which is said again after it (``names``: the
    identifiers the whole question names, else the subject of the part before:
    :func:`said_before`); ``part`` otherwise ("How do I set up Okta SSO?" names its own).

    >>> part_question("how do I fix it?", ["E-1003"])
    'how do I fix it, E-1003?'
    >>> part_question("Show the manual's example.", ["brace expansion"])
    "Show the manual's example, brace expansion?"
    >>> part_question("how do I set up Okta SSO?", ["E-1006"])
    'how do I set up Okta SSO?'
    >>> part_question("what does E-1004 mean?", ["E-1003", "E-1004"])
    'what does E-1004 mean?'
    """
    if not names or names_own(part):
        return part
    return f"{part.rstrip(' ?.!？')}, {', '.join(names)}?"


def names_own(part: str) -> bool:
    """Whether a part of a compound question names something of its own: an identifier, or a
    name by shape or rarity (:func:`citewise.text.rarity.name_words`; a possessive's "s" is no
    part of a name: "the manual's example" names nothing)."""
    return bool(analyze_question(part).identifiers or name_words(re.sub(r"['’]s\b", "", part)))


def said_before(qa: "QuestionAnalysis", i: int) -> tuple[str, ...]:
    """What part ``i`` of a compound question may point back at: the identifiers the question
    names, else the subject of the part before it (none for the first part).

    >>> said_before(analyze_question("What is the daily payment limit on Pro and how do I raise it?"), 1)
    ('daily payment limit Pro',)
    """
    if qa.identifiers:
        return qa.identifiers
    if i == 0 or i > len(qa.parts) - 1:
        return ()
    subject = analyze_question(qa.parts[i - 1]).subject
    return (subject,) if subject else ()


@lru_cache(maxsize=4096)
def analyze_question(text: str) -> QuestionAnalysis:
    """The :class:`QuestionAnalysis` of ``text`` (cached per text; see module docstring)."""
    lex = lexicon()
    clean = ABBREVIATIONS.sub(" ", text)
    words = _lower_words(clean)
    kind = _kind(words, clean, lex)
    wants_code = kind == "how_to" or any(w in lex.code_words for w in words) or _phrase_at(words, "looks like") >= 0
    asks_default = any(w in lex.default_words for w in words) or _omission(words, lex)
    # "if I don't set one" asks for the default (``asks_default``), not a condition to check, and
    # its "never" ("if I never set HISTFILE") is no absolute claim
    found = _conditions(clean, lex)
    conditions = tuple(c for c in found if not _omission(_lower_words(c), lex))
    claim = clean  # an absolute word inside a condition ("if I never call it") is no claim
    for c in found:
        claim = claim.replace(c, " ")
    subject = _subject(clean, words, conditions, lex)
    terms = tuple(t for t in dict.fromkeys(analyze(clean)) if t not in lex.question_terms)
    ids: dict[str, str] = {}  # case-folded -> as written first (find_identifiers lower-cases)
    for name in code_names(clean) + find_identifiers(clean):
        ids.setdefault(name.lower(), name)
    english = any(w in lex.english for w in words) or len(words) <= 4 or _mostly_english(words)
    return QuestionAnalysis(
        text=text,
        kind=kind,
        expected=_expected(words, kind, lex, wants_code, asks_default),
        subject=subject,
        entities=_entities(clean),
        identifiers=tuple(ids.values()),
        conditions=conditions,
        absolute=_absolute(_lower_words(claim), lex),
        language="en" if english else "und",
        terms=terms,
        subject_terms=tuple(t for t in dict.fromkeys(analyze(subject)) if t not in lex.question_terms),
        wants_code=wants_code,
        asks_default=asks_default,
        parts=question_parts(text, lex),
    )
