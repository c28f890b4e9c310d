"""A documented rule read from a passage, and a record value compared with it in code.

The *both* route (:mod:`citewise.tools.pipeline`) gets a record row from a tool and passages from
the documents; this module reads, from the passage text only:

* the **limit**: with a ``key_field`` (the record's plan, job title ...), the first line that
  names the key as whole words and, after it, a number with the policy's ``unit`` (a table row
  ``| Starter | 5,000 USD |``, ``| Sales Support Agent | 20 customers |``); without one, the
  first sentence with a rule word ("above", "at most", "limit", "cap", "threshold" ...) and such
  a number that states no exception window;
* **exceptions** with a time window: a sentence "(for|during|in) the first N days|weeks|months
  after|since|of EVENT ..." with its own value: an amount for the key ("2,500 USD on Starter",
  "a Sales Support Agent may be assigned at most 10 customers"), one amount that applies to any
  key (the sentence names no other key), or a fraction of the normal limit ("half", "a third",
  "N%"). EVENT is matched to the record's date field whose name shares the most word stems with
  it (``verified_on`` for "business verification", ``hire_date`` for "their hire date"); the
  window holds when that date <= the as-of date < that date + N. The as-of date is the record's
  ``as_of_field`` (the day asked about, the order date), else the question's today.

:func:`compare` returns ``used > limit`` (the rule is an upper limit: "above", "at most",
"no more than"). Every number shown is one of these three: the value (tool), the limit and the
exception (passage), the comparison (code).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

from citewise.tools.question import stem, words

_NUMBER = r"(\d[\d,]*(?:\.\d+)?)"
_WINDOW = re.compile(
    r"\b(?:for|during|in|within)\s+(?:the\s+)?first\s+(\d+)\s+(day|week|month)s?\s+(?:after|since|of|from)\s+"
    r"(?P<event>[^.,:;]+)",
    re.IGNORECASE,
)
_FRACTIONS = {
    "half": 0.5,
    "a half": 0.5,
    "a third": 1 / 3,
    "one third": 1 / 3,
    "a quarter": 0.25,
    "one quarter": 0.25,
    "two thirds": 2 / 3,
    "three quarters": 0.75,
}
_PERCENT = re.compile(
    r"\b(\d{1,3})\s?%\s+of\s+(?:(?:its|the|their|your)\s*)?(?:(?:normal|usual|standard|regular)\s*)?(?:limit|value|cap|threshold)",
    re.I,
)
_RULE_WORDS = re.compile(
    r"\b(?:above|over|exceed\w*|more than|at most|no more than|up to|maximum|max|limit\w*|caps?|capped|threshold|"
    r"not exceed|below|under)\b",
    re.I,
)
_GENERIC_FIELD_WORDS = {"date", "on", "at", "day", "time", "id"}


@dataclass(frozen=True)
class RuleValue:
    """A number read from a passage: value, and the line's or sentence's character span there."""

    value: float
    start: int
    end: int


@dataclass(frozen=True)
class Exception_:
    """An exception with a time window (module docstring); ``start``/``end``: its line in the text."""

    days: int
    event: str
    field: str | None  # the record's date field matched to the event
    value: float  # the limit while the window holds
    start: int
    end: int
    applies: bool  # whether the window holds for this record


@dataclass(frozen=True)
class Rule:
    """The limit that applies to one record: the normal limit, and the exception when one holds."""

    normal: RuleValue
    exception: Exception_ | None

    @property
    def limit(self) -> float:
        return self.exception.value if self.exception and self.exception.applies else self.normal.value


@dataclass(frozen=True)
class Comparison:
    """The check computed in code: ``used`` against ``limit`` (same unit)."""

    used: float
    limit: float
    exceeded: bool
    difference: float  # used - limit


def _unit_number(unit: str) -> re.Pattern:
    """A number with ``unit`` after it (``USD`` also as ``$N``), group 1 or 2 the number."""
    u = re.escape(unit)
    words_ = rf"{u}s?" if unit[-1:].isalpha() and not unit.isupper() else u
    dollar = r"|\$\s?" + _NUMBER if unit.upper() == "USD" else ""
    return re.compile(rf"(?:{_NUMBER}\s*{words_}\b{dollar})", re.IGNORECASE)


def _num(m: re.Match) -> float:
    return float(next(g for g in m.groups() if g).replace(",", ""))


def _sentences(text: str):
    """``(start, end)`` of each sentence or line of ``text``."""
    for m in re.finditer(r"[^\n.!?]+(?:\.(?=\d)[^\n.!?]+)*[.!?]?", text):
        if m.group(0).strip():
            yield m.start(), m.end()


def _names(text: str, key: str) -> re.Match | None:
    return re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", text, re.IGNORECASE)


def find_rule_value(text: str, key: str, unit: str = "USD") -> tuple[float, int, int] | None:
    """The first number with ``unit`` after ``key`` on a line of ``text`` that names ``key`` as
    whole words: ``(value, start, end)`` with the line's character offsets, or None."""
    num = _unit_number(unit)
    pos = 0
    for line in text.splitlines(keepends=True):
        m = _names(line, key)
        if m and not _WINDOW.search(line):
            found = num.search(line, m.end())
            if found:
                return _num(found), pos, pos + len(line.rstrip("\n"))
        pos += len(line)
    return None


def find_general_value(text: str, unit: str) -> RuleValue | None:
    """The first sentence with a rule word and a number with ``unit`` that states no exception
    window (a rule without a per-key table: "an order above 15.00 USD is held")."""
    num = _unit_number(unit)
    for s, e in _sentences(text):
        sent = text[s:e]
        if _WINDOW.search(sent) or not _RULE_WORDS.search(sent):
            continue
        found = num.search(sent)
        if found:
            return RuleValue(_num(found), s, e)
    return None


def _field_for(event: str, row: dict) -> str | None:
    """The row's date field whose name shares the most word stems with ``event`` (none shared: None)."""
    ev = {stem(w) for w, _ in words(event)} - {"the", "a", "their", "your"}
    best, best_n = None, 0
    for name, value in row.items():
        if not isinstance(value, str) or not re.match(r"\d{4}-\d{2}-\d{2}", value):
            continue
        parts = {stem(w) for w, _ in words(name.replace("_", " "))} - _GENERIC_FIELD_WORDS
        n = sum(any(p[:4] == e[:4] and min(len(p), len(e)) >= 4 or p == e for e in ev) for p in parts)
        if n > best_n or (n == best_n and n and name < (best or "")):
            best, best_n = name, n
    return best


def _window_days(n: int, unit: str) -> int:
    return n * {"day": 1, "week": 7, "month": 30}[unit.lower()]


def find_exception(
    text: str, *, key: str | None, keys: tuple[str, ...], unit: str, normal: float, row: dict, as_of: _dt.date
) -> Exception_ | None:
    """The first exception with a time window in ``text`` that gives a value for ``key`` (module
    docstring); ``keys`` are the other keys of the rule's table (a sentence naming only other
    keys does not apply)."""
    num = _unit_number(unit)
    for s, e in _sentences(text):
        sent = text[s:e]
        w = _WINDOW.search(sent)
        if not w:
            continue
        value = None
        if key:
            for m in num.finditer(sent):  # "2,500 USD on Starter"
                after = sent[m.end() : m.end() + 40]
                if re.match(rf"\s*(?:on|for|in)\s+(?:the\s+)?{re.escape(key)}\b", after, re.IGNORECASE):
                    value = _num(m)
                    break
            if value is None and _names(sent, key):  # "a Sales Support Agent may be assigned at most 10 customers"
                found = num.search(sent, _names(sent, key).end())
                value = _num(found) if found else None
        if value is None:
            named_other = any(_names(sent, k) for k in keys if k and k != key)
            amounts = list(num.finditer(sent))
            if len(amounts) == 1 and not named_other:
                value = _num(amounts[0])
            else:
                low = sent.lower()
                frac = next(
                    (
                        f
                        for word, f in sorted(_FRACTIONS.items(), key=lambda x: -len(x[0]))
                        if re.search(rf"\b{word}\b\s+(?:its|the|their|your)?\s*(?:normal|usual|standard)?", low)
                    ),
                    None,
                )
                pct = _PERCENT.search(sent)
                if pct:
                    frac = int(pct.group(1)) / 100
                if frac is not None:
                    value = round(normal * frac, 2)
        if value is None:
            continue
        field = _field_for(w.group("event"), row)
        applies = False
        if field:
            try:
                start = _dt.date.fromisoformat(str(row[field])[:10])
                applies = start <= as_of < start + _dt.timedelta(days=_window_days(int(w.group(1)), w.group(2)))
            except ValueError:
                applies = False
        line_start = text.rfind("\n", 0, s) + 1  # cite the whole line (a list item) the sentence is on
        line_end = text.find("\n", e)
        return Exception_(
            _window_days(int(w.group(1)), w.group(2)),
            w.group("event").strip(),
            field,
            value,
            line_start,
            len(text) if line_end == -1 else line_end,
            applies,
        )
    return None


def compare(used: float, limit: float) -> Comparison:
    """``used`` against an upper ``limit``."""
    return Comparison(used, limit, used > limit, round(used - limit, 2))
