"""Typed values named in a question (slots) and tool arguments filled from them.

:func:`extract_slots` finds dates (ISO, ``today``/``yesterday``), years (``this year``/``last
year``), months (``March``), quarters (``Q3``), amounts (``$20,000``, ``100k USD``), enum values
(with a synonym table, e.g. ``overdue`` -> ``past_due``) and quoted names. :func:`fill_arguments`
maps them onto a tool's JSON Schema parameters; each filled value remembers the character span it
came from, so a router can tell which parts of a question a tool's call does not express.

Parameter hints a records configuration may give (JSON Schema extension keywords):

* ``x-values``: the parameter's values are the database's values of a column (``table.column``
  or one guarded SELECT of one column); a question naming one (longest first, whole words,
  case-insensitive) fills it;
* ``default: today``: an unfilled date parameter takes the question's ``today``;
* an *entity pattern* (``[records.entities]``, parameter name -> regular expression; group 1 is
  the value when the pattern has a group) fills the parameter of that name.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from dataclasses import dataclass, field

_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
#: Numbers that are identifiers, not years: "#2017", "invoice 2017", "order no. 2017".
_NUMBERED = re.compile(r"#\s*\d+|\b(?:invoice|order|contract|ticket|number|no\.?)\s*#?\s*\d+", re.IGNORECASE)
_YEAR = re.compile(r"(?<![\w-])((?:19|20)\d{2})(?![\w-])")
_AMOUNT = re.compile(
    r"(?:\$\s?(\d[\d,]*(?:\.\d+)?)\s*([km])?\b)|(?:\b(\d[\d,]*(?:\.\d+)?)\s*([km])?\s?(?:USD|usd|dollars|EUR|eur|€)(?![\w]))",
    re.IGNORECASE,
)
_QUARTER = re.compile(r"\bQ([1-4])\b|\b(first|second|third|fourth)\s+quarter\b", re.IGNORECASE)
_QUOTED = re.compile(r"[\"“']([^\"”']{2,80})[\"”']")
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTH = re.compile(r"\b(" + "|".join(_MONTHS) + r")\b", re.IGNORECASE)


@dataclass
class Slots:
    """What :func:`extract_slots` found; each list keeps ``(value, (start, end))`` in question order."""

    text: str
    dates: list = field(default_factory=list)
    years: list = field(default_factory=list)
    months: list = field(default_factory=list)
    quarters: list = field(default_factory=list)
    amounts: list = field(default_factory=list)
    enums: list = field(default_factory=list)
    quoted: list = field(default_factory=list)
    today: _dt.date | None = None

    def __getitem__(self, key: str):  # the old dict interface: values only ("text" is the question)
        return self.text if key == "text" else [v for v, _ in getattr(self, key)]

    def filters(self) -> list[tuple[str, tuple[int, int]]]:
        """Every filter-like slot as ``(kind, span)``: the parts of the question a tool's call must
        express (dates, years, months, quarters, amounts, enum values, quoted names)."""
        out = []
        for kind in ("dates", "years", "months", "quarters", "amounts", "enums", "quoted"):
            out += [(kind, span) for _, span in getattr(self, kind)]
        return sorted(out, key=lambda x: x[1])


def has_phrase(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in lower-cased ``text`` as whole words."""
    if not phrase[0].isalnum():
        return phrase in text
    return re.search(r"(?<![\w-])" + re.escape(phrase) + r"(?![\w-])", text) is not None


def phrase_spans(text: str, phrase: str) -> list[tuple[int, int]]:
    """Spans of ``phrase`` in lower-cased ``text`` as whole words."""
    return [m.span() for m in re.finditer(r"(?<![\w-])" + re.escape(phrase) + r"(?![\w'’-])", text)]


def extract_slots(question: str, today: _dt.date | None = None, synonyms: dict[str, str] | None = None) -> Slots:
    """Typed values named in a question (module docstring).

    ``synonyms``: phrase -> canonical enum value (a tool file's ``synonyms``); enum values
    themselves are matched by :func:`fill_arguments` from each parameter's ``enum``.
    """
    today = today or _dt.datetime.now(_dt.timezone.utc).date()
    low = question.lower()
    s = Slots(question, today=today)
    s.dates = [(m.group(1), m.span()) for m in _DATE.finditer(question)]
    for word, delta in (("today", 0), ("yesterday", 1)):
        for span in phrase_spans(low, word):
            s.dates.append(((today - _dt.timedelta(days=delta)).isoformat(), span))
    blank = _NUMBERED.sub(lambda m: " " * len(m.group(0)), _DATE.sub(lambda m: " " * len(m.group(0)), question))
    s.years = [(int(m.group(1)), m.span()) for m in _YEAR.finditer(blank)]
    for phrase, delta in (("this year", 0), ("last year", 1)):
        s.years += [(today.year - delta, span) for span in phrase_spans(low, phrase)]
    s.months = [
        (_MONTHS[m.group(1).lower()], m.span())
        for m in _MONTH.finditer(question)
        if not (m.group(1).lower() == "may" and not _may_is_month(question, m))
    ]
    for phrase, delta in (("this month", 0), ("last month", 1)):
        for span in phrase_spans(low, phrase):
            month = (today.month - 1 - delta) % 12 + 1
            s.months.append((month, span))
    s.quarters = [
        (
            int(m.group(1)) if m.group(1) else ("first", "second", "third", "fourth").index(m.group(2).lower()) + 1,
            m.span(),
        )
        for m in _QUARTER.finditer(question)
    ]
    for m in _AMOUNT.finditer(question):
        number, suffix = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        value = float(number.replace(",", "")) * {"k": 1e3, "m": 1e6}.get((suffix or "").lower(), 1)
        s.amounts.append((value, m.span()))
    s.quoted = [
        (m.group(1), m.span(1))
        for m in _QUOTED.finditer(question)
        if not m.group(1)[:1].isspace() and not re.match(r"s\b", m.group(1))
    ]
    taken: list[tuple[int, int]] = []
    for phrase in sorted(synonyms or {}, key=lambda p: (-len(p), p)):
        for span in phrase_spans(low, phrase.lower()):
            if any(a < span[1] and span[0] < b for a, b in taken):
                continue
            taken.append(span)
            s.enums.append(((synonyms or {})[phrase], span))
    s.enums.sort(key=lambda x: x[1])
    for kind in ("dates", "years", "months", "quarters", "amounts"):
        getattr(s, kind).sort(key=lambda x: x[1])
    return s


def _may_is_month(question: str, m: re.Match) -> bool:
    """ "May" is the month when it stands next to a year or day number or after in/of/since."""
    before, after = question[: m.start()].lower().split()[-1:], question[m.end() :].split()[:1]
    return bool(
        (after and re.fullmatch(r"\d{1,4}[,.]?", after[0]))
        or (before and before[0] in ("in", "of", "since", "until", "during"))
    )


def value_spans(text: str, values, min_len: int = 3) -> list[tuple[str, tuple[int, int]]]:
    """``(value, span)`` of each of ``values`` named in ``text`` as whole words, case-insensitively,
    longest values first, never overlapping."""
    low = text.lower()
    out: list[tuple[str, tuple[int, int]]] = []
    for v in sorted({str(v) for v in values if v is not None and len(str(v)) >= min_len}, key=lambda v: (-len(v), v)):
        for span in phrase_spans(low, v.lower()):
            if not any(a < span[1] and span[0] < b for _, (a, b) in out):
                out.append((v, span))
    return sorted(out, key=lambda x: x[1])


def _noun_pattern(noun: str) -> str:
    """A noun, its plural, or an abbreviation of at least 3 letters ("inv" for invoice)."""
    noun = noun.replace("_", " ")
    if len(noun) <= 3 or " " in noun:
        return re.escape(noun) + "s?"
    rest = noun[3:]
    tail = "".join(f"(?:{re.escape(c)}" for c in rest) + ")?" * len(rest)
    return re.escape(noun[:3]) + tail + "s?"


def fill_arguments(
    tool, slots: Slots, *, entities: dict[str, re.Pattern] | None = None, values: dict[str, list[str]] | None = None
) -> tuple[dict, bool]:
    """Arguments for ``tool`` from ``slots``; returns ``(arguments, feasible)``.

    :func:`fill_spans` without the spans.
    """
    args, _, feasible = fill_spans(tool, slots, entities=entities, values=values)
    return args, feasible


def fill_spans(
    tool, slots: Slots, *, entities: dict[str, re.Pattern] | None = None, values: dict[str, list[str]] | None = None
) -> tuple[dict, dict[str, tuple[int, int]], bool]:
    """Arguments for ``tool`` from ``slots``, the question span each came from (by parameter; a
    defaulted argument has none), and whether every required parameter was filled.

    Per parameter (JSON Schema), first match wins: an entity pattern of the parameter's name;
    ``x-values`` (``values[param]``); ``format: date`` -> first date (``default: today`` -> the
    question's today); ``enum`` -> an enum slot, else an enum value named in the question
    (``past_due`` read as "past due"); integer ``year`` -> first year; integer ``month`` -> first
    month; integer ``quarter`` -> first quarter; string with ``pattern`` -> first token matching
    it; integer ``<noun>_id`` -> the number after ``<noun>``; number named ``*amount*`` -> first
    amount.
    """
    props = tool.parameters.get("properties") or {}
    required = tool.parameters.get("required") or []
    text = slots.text
    args: dict = {}
    spans: dict[str, tuple[int, int]] = {}
    for name, schema in props.items():
        value, span = None, None
        typ = schema.get("type")
        if entities and name in entities:
            m = entities[name].search(text)
            if m:
                raw = m.group(1) if m.re.groups else m.group(0)
                value, span = (int(raw) if typ == "integer" and raw.isdigit() else raw), m.span()
        elif values is not None and name in values:
            found = value_spans(text, values[name])
            if found:
                value, span = found[0]
        elif schema.get("format") == "date":
            if slots.dates:
                value, span = slots.dates[0]
            elif schema.get("default") == "today" and slots.today is not None:
                value = slots.today.isoformat()
        elif "enum" in schema:
            hit = next(((v, sp) for v, sp in slots.enums if v in schema["enum"]), None)
            if hit is None:
                named = value_spans(text, [str(e).replace("_", " ") for e in schema["enum"]], min_len=2)
                if named:
                    hit = (named[0][0].replace(" ", "_"), named[0][1])
                    hit = (next(e for e in schema["enum"] if str(e) == hit[0]), hit[1])
            if hit:
                value, span = hit
        elif typ == "integer" and name == "year" and slots.years:
            value, span = slots.years[0]
        elif typ == "integer" and name == "month" and slots.months:
            value, span = slots.months[0]
        elif typ == "integer" and name == "quarter" and slots.quarters:
            value, span = slots.quarters[0]
        elif typ == "string" and "pattern" in schema:
            core = schema["pattern"].lstrip("^").rstrip("$")
            m = re.search(r"(?<![\w-])" + core + r"(?![\w-])", text, re.IGNORECASE)
            if m:
                value, span = (m.group(0).upper() if core.upper() == core else m.group(0)), m.span()
        elif typ == "integer" and name.endswith("_id"):
            m = re.search(
                rf"\b{_noun_pattern(name[:-3])}\.?\s*(?:(?:no\.?|number|#)\s*)?(?:#\s*)?(\d+)\b", text, re.IGNORECASE
            )
            if m:
                value, span = int(m.group(1)), m.span()
        elif typ == "number" and "amount" in name and slots.amounts:
            value, span = slots.amounts[0]
        if value is not None:
            args[name] = value
            if span is not None:
                spans[name] = span
    return args, spans, all(r in args for r in required)
