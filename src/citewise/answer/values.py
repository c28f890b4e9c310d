"""Typed values stated in a sentence: quantities (numbers, durations, amounts, percentages) and
calendar dates, normalised so that two sentences can be compared.

A :class:`Value` is a number with its unit, or a date. Normalisation, so that the same value in
other words compares equal and different values compare different:

* numbers: digits with thousands separators (``50,000``), decimals, ranges (``5 to 10``,
  ``5-10``), and English number words up to the hundreds (``thirty``, ``twenty-four``);
* unit: the word after the number, lower case, singular (``days`` / ``day`` / ``30-day``), and a
  rate's period (``600 requests per minute``: ``request/minute``); a currency sign or code
  (``$39``, ``39 USD``) is the unit ``usd`` (``eur``, ``gbp``), then its rate (``$39 per month``:
  ``usd/month``); ``%`` and ``percent`` are ``%``; a number followed by a function word has no
  unit (``''``);
* dates: ISO (``2024-03-01``), ``March 1, 2024`` and ``1 March 2024``, as ISO strings.

A number that is part of an identifier, a version, a clock time or a date (``v2``, ``4.2.1``,
``08:00``, ``2024-03-01``) is not a quantity.

>>> [(v.amount, v.unit) for v in quantities("The refund window is 30 days; thirty-day trials exist.")]
[(30.0, 'day'), (30.0, 'day')]
>>> [(v.amount, v.unit) for v in quantities("Pro: $39 per month, up to five users.")]
[(39.0, 'usd/month'), (5.0, 'user')]
>>> [(v.amount, v.unit) for v in quantities("Refunds arrive within 5 to 10 business days.")]
[((5.0, 10.0), 'business')]
>>> [v.amount for v in dates("Released on March 3, 2024 and 2024-04-01.")]
['2024-03-03', '2024-04-01']
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from functools import lru_cache

#: English number words (units, teens, tens) and multipliers.
_SMALL = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen".split()
    )
}
_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_WORD_NUMBER = (
    r"(?:(?:" + "|".join(_TENS) + r")(?:[-\s](?:" + "|".join(list(_SMALL)[1:10]) + r"))?"
    r"|" + "|".join(sorted(_SMALL, key=len, reverse=True)) + r")(?:\s+hundred)?"
)
_DIGITS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_CURRENCY_SIGN = {"$": "usd", "€": "eur", "£": "gbp"}
_CURRENCY_CODE = {"usd": "usd", "dollar": "usd", "eur": "eur", "euro": "eur", "gbp": "gbp", "pound": "gbp"}
_QUANTITY = re.compile(
    rf"(?<![\w.:/@#-])(?P<sign>[$€£]\s?)?(?P<n>{_DIGITS}|{_WORD_NUMBER})"
    rf"(?:\s*(?:to|-|–|and)\s*(?P<sign2>[$€£]\s?)?(?P<n2>{_DIGITS}|{_WORD_NUMBER}))?"
    r"(?![\w]|[.:/,-]\d)"
    r"(?P<pct>\s?%|\s+per\s?cent\b)?"
    r"(?:[-\s]+(?!(?:per|an?|each|every)\b)(?P<unit>[a-z][a-z]+))?"
    r"(?:\s+(?:per|a|an|each|every)\s+(?P<per>[a-z]+))?",
    re.I,
)
_MONTHS = "|".join(calendar.month_name[1:])
_DATE = re.compile(
    rf"\b(?:(?P<iso>\d{{4}}-\d{{2}}-\d{{2}})|(?P<m1>{_MONTHS})\s+(?P<d1>\d{{1,2}}),?\s+(?P<y1>\d{{4}})"
    rf"|(?P<d2>\d{{1,2}})\s+(?P<m2>{_MONTHS})\s+(?P<y2>\d{{4}}))\b"
)


@dataclass(frozen=True)
class Value:
    """A value stated in a text.

    Attributes:
        kind: ``quantity`` | ``date``.
        amount: the number (float), a range ``(low, high)``, or an ISO date string.
        unit: the normalised unit (module docstring); ``date`` for dates.
        start, end: character span in the text.
    """

    kind: str
    amount: float | tuple[float, float] | str
    unit: str
    start: int
    end: int


@lru_cache(maxsize=1)
def _function_words() -> frozenset[str]:
    from citewise.answer.question import lexicon

    return lexicon().english | lexicon().question_words


def _number(text: str) -> float:
    t = text.lower().replace(",", "")
    if t[0].isdigit():
        return float(t)
    hundred = t.endswith("hundred")
    t = t.removesuffix("hundred").strip()
    n = 0
    for part in re.split(r"[-\s]+", t):
        n += _TENS.get(part, _SMALL.get(part, 0))
    return float(n * 100 if hundred else n)


def _singular(word: str) -> str:
    w = word.lower()
    if len(w) > 3 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def quantities(text: str) -> list[Value]:
    """The quantities stated in ``text``, in order (module docstring)."""
    fw = _function_words()
    blank = _DATE.sub(lambda m: " " * len(m.group(0)), text)  # a date's numbers are no quantities
    out: list[Value] = []
    for m in _QUANTITY.finditer(blank):
        sign = (m.group("sign") or m.group("sign2") or "").strip()
        low = _number(m.group("n"))
        amount: float | tuple[float, float] = low if not m.group("n2") else (low, _number(m.group("n2")))
        word = (m.group("unit") or "").lower()
        per = (m.group("per") or "").lower()
        end = m.end()
        if word in fw:  # "30 and", "5 of": no unit, and the words after it are not the number's
            word, per = "", ""
            end = m.end("pct") if m.group("pct") else m.end("n2") if m.group("n2") else m.end("n")
        if m.group("pct"):
            unit = "%"
            if m.group("unit") and word:
                end = m.end("pct")
            word = ""
        elif sign:
            unit = _CURRENCY_SIGN[sign]
        elif _CURRENCY_CODE.get(_singular(word)):
            unit = _CURRENCY_CODE[_singular(word)]
        else:
            unit = _singular(word)
        if per and unit:
            unit = f"{unit}/{_singular(per)}"
        out.append(Value("quantity", amount, unit, m.start(), end))
    return out


def dates(text: str) -> list[Value]:
    """The calendar dates stated in ``text``, as ISO strings, in order (module docstring)."""
    months = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
    out = []
    for m in _DATE.finditer(text):
        if m.group("iso"):
            iso = m.group("iso")
        else:
            mon = m.group("m1") or m.group("m2")
            day, year = (m.group("d1"), m.group("y1")) if m.group("m1") else (m.group("d2"), m.group("y2"))
            iso = f"{int(year):04d}-{months[mon.lower()]:02d}-{int(day):02d}"
        out.append(Value("date", iso, "date", m.start(), m.end()))
    return out


def values_of_type(text: str, expected: str) -> list[Value]:
    """The values of ``text`` an answer of type ``expected`` gives: quantities for ``number``;
    dates, and quantities with a unit (``90 days after ...``), for ``date``; [] for other types."""
    if expected == "number":
        return quantities(text)
    if expected == "date":
        return sorted(dates(text) + [v for v in quantities(text) if v.unit], key=lambda v: v.start)
    return []
