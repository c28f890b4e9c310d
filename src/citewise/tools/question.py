"""What kind of answer a question asks for, from word lists in a data file.

The lists (``question_cues.yaml`` beside this module, or a file named by ``routing.cues``) hold
general cues only: aggregates ("how many", "total", "average", "largest"), listings, collective
speech ("did we"), record states, comparators, rule words ("limit", "exceeded"), document cues
("how do I", "what does ... mean", "may"), live values ("price", "exchange rate") and their
"now" words ("today", "current"). Everything about one database (table and column names, its
values, entity patterns) comes from a :class:`~citewise.tools.catalog.RecordsCatalog`.

:func:`analyze` returns a :class:`QuestionKind` with the features a router decides on.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import Stemmer
import yaml

from citewise.core import InputError
from citewise.tools.slots import has_phrase, phrase_spans

_WORD = re.compile(r"[a-z][a-z0-9']*")


@functools.lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word (possessive ``'s`` dropped)."""
    return _stemmer().stemWord(word.lower().removesuffix("'s").removesuffix("’s"))


def words(text: str) -> list[tuple[str, tuple[int, int]]]:
    """Lower-case words of ``text`` with their spans."""
    return [(m.group(0).removesuffix("'s"), m.span()) for m in _WORD.finditer(text.lower())]


def stems_of(text: str) -> set[str]:
    """Stems of the words of ``text`` (identifiers such as ``unit_price`` split at ``_``)."""
    return {stem(w) for w, _ in words(text.replace("_", " "))}


@dataclass(frozen=True)
class Cues:
    """The word lists of a cues file (module docstring)."""

    aggregate: dict[str, tuple[str, ...]]
    listing: tuple[str, ...]
    collective: tuple[str, ...]
    states: tuple[str, ...]
    comparators: tuple[str, ...]
    rule: tuple[str, ...]
    conditions: tuple[str, ...]
    money: tuple[str, ...]
    deictic: tuple[str, ...]
    document: tuple[str, ...]
    live_values: tuple[str, ...]
    live_now: tuple[str, ...]
    declares: dict[str, tuple[str, ...]]
    stopwords: frozenset[str]


DEFAULT_CUES = Path(__file__).with_name("question_cues.yaml")


@functools.lru_cache(maxsize=8)
def load_cues(path: str | Path | None = None) -> Cues:
    """Read a cues file (default: the bundled ``question_cues.yaml``).

    Raises:
        InputError: the file cannot be read, is not YAML, or misses a list (file and key named).
    """
    path = Path(path) if path else DEFAULT_CUES
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise InputError(str(path), f"cannot read question cues: {str(e).splitlines()[0]}") from None

    def lst(key, node=None):
        value = (data if node is None else node).get(key) if isinstance(data if node is None else node, dict) else None
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise InputError(str(path), f"'{key}' must be a list of phrases")
        return tuple(v.lower() for v in value)

    def table(key):
        node = data.get(key) if isinstance(data, dict) else None
        if not isinstance(node, dict):
            raise InputError(str(path), f"'{key}' must be a mapping of lists")
        return {k: lst(k, node) for k in node}

    live = data.get("live") if isinstance(data, dict) else None
    if not isinstance(live, dict):
        raise InputError(str(path), "'live' must be a mapping with 'values' and 'now'")
    return Cues(
        table("aggregate"),
        lst("listing"),
        lst("collective"),
        lst("states"),
        lst("comparators"),
        lst("rule"),
        lst("conditions"),
        lst("money"),
        lst("deictic"),
        lst("document"),
        lst("values", live),
        lst("now", live),
        table("declares"),
        frozenset(lst("stopwords")),
    )


def _first(low: str, phrases) -> tuple[str, tuple[int, int]] | None:
    best = None
    for p in phrases:
        for span in phrase_spans(low, p):
            if best is None or span[0] < best[1][0] or (span[0] == best[1][0] and span[1] > best[1][1]):
                best = (p, span)
    return best


@dataclass
class QuestionKind:
    """Features of one question (see :func:`analyze`).

    Attributes:
        aggregate: ``count`` | ``sum`` | ``average`` | ``extreme`` | None, and ``aggregate_span``.
        asked: stems of the words right after the aggregate cue (what is counted or summed),
            filler and filled values skipped; empty without an aggregate.
        listing, collective, state, comparator, condition, rule, deictic, document: whether each cue occurs.
        live: a live value with a "now" word (``live_value``, ``live_now``: the cues).
        content: stems of the question's content words (stop words and cue words removed).
    """

    aggregate: str | None = None
    aggregate_span: tuple[int, int] | None = None
    asked: list[str] = field(default_factory=list)
    listing: bool = False
    collective: bool = False
    state: bool = False
    comparator: bool = False
    condition: bool = False
    rule: str | None = None
    deictic: str | None = None
    document: str | None = None
    live_value: str | None = None
    live_now: str | None = None
    content: list[tuple[str, tuple[int, int]]] = field(default_factory=list)

    @property
    def live(self) -> bool:
        return bool(self.live_value and self.live_now)


def analyze(
    question: str,
    cues: Cues,
    *,
    extra_rule: tuple[str, ...] = (),
    extra_states: tuple[str, ...] = (),
    record_nouns: frozenset[str] = frozenset(),
) -> QuestionKind:
    """The cue features of ``question``.

    ``extra_rule``: rule words of the configured tools' policies (``policy.cues``);
    ``extra_states``: state values of the database; ``record_nouns``: stems of the records'
    nouns (tables, columns, tool vocabulary), which a deictic reference ("this customer") must
    name to count.
    """
    low = question.lower().replace("’", "'")
    k = QuestionKind()
    best = None
    for kind, phrases in cues.aggregate.items():
        hit = _first(low, phrases)
        if hit and (best is None or hit[1][0] < best[2][0]):
            best = (kind, hit[0], hit[1])
    if best:
        k.aggregate, k.aggregate_span = best[0], best[2]
    k.listing = any(has_phrase(low, p) for p in cues.listing)
    k.collective = any(has_phrase(low, p) for p in cues.collective)
    k.state = any(has_phrase(low, p) for p in cues.states + tuple(s.lower() for s in extra_states))
    k.comparator = any(has_phrase(low, p) for p in cues.comparators)
    k.condition = any(has_phrase(low, p) for p in cues.conditions)
    rule = _first(low, cues.rule + tuple(c.lower() for c in extra_rule))
    k.rule = rule[0] if rule else None
    doc = _first(low, cues.document)
    k.document = doc[0] if doc else None
    lv = _first(low, cues.live_values)
    k.live_value = lv[0] if lv else None
    now = _first(low, cues.live_now)
    k.live_now = now[0] if now else None
    toks = words(question)
    for i, (w, _span) in enumerate(toks):
        if w in cues.deictic and i + 1 < len(toks):
            nxt = stem(toks[i + 1][0])
            if nxt in record_nouns:
                k.deictic = f"{w} {toks[i + 1][0]}"
                break
    cue_words = {
        w for phrases in (*cues.aggregate.values(), cues.listing, cues.collective) for p in phrases for w in p.split()
    }
    k.content = [
        (stem(w), span) for w, span in toks if w not in cues.stopwords and w not in cue_words and not w.isdigit()
    ]
    return k
