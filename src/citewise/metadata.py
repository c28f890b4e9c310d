"""Document metadata: any front matter key beyond the built-in ones, stored and filterable.

A document's metadata is a flat mapping of keys to JSON values (:func:`normalize`): text,
numbers, booleans, ISO dates (as ``YYYY-MM-DD`` text), lists of those; a nested mapping becomes
dotted keys (``owner: {team: x}`` is ``owner.team``). Stores keep it three ways on every chunk
row of the document:

* the mapping itself (shown with search results);
* **terms** (:func:`terms`): ``key=value`` strings, one per scalar value or list item, with the
  value in canonical text (:func:`canonical`: ``2025``, ``2.5``, ``true``), for equality and
  membership: a list-valued key matches when one of its items does;
* **ranges** (:func:`ranges`): ``n:key`` -> number for numeric values and ``d:key`` -> date text
  for ISO-date values (scalars only), for ``>``, ``>=``, ``<``, ``<=``. Keeping the two kinds
  apart means a range never compares a number with text.

Filters are written ``key=value`` (membership: ``key=a,b``), ``key>=value``, ``key>value``,
``key<=value``, ``key<value`` (:func:`parse_filter`); a range value must be a number or a
``YYYY-MM-DD`` date. ``updated`` and ``effective`` name the documents' built-in dates.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from typing import Any, Iterable

from citewise.core import CitewiseError, MetaCondition

#: Front matter keys with a meaning of their own; never metadata.
BUILTIN_KEYS = ("id", "title", "version", "updated", "effective", "permissions")
#: Built-in date columns a filter may name like a metadata key.
DATE_COLUMNS = ("updated", "effective")
#: A key that can be filtered on: a letter, digit or ``_`` first, then those and ``.`` ``-``.
KEY = re.compile(r"[^\W][\w.-]*\Z")
#: Longest metadata of one document, as JSON (it is stored on each of its chunk rows).
MAX_METADATA_BYTES = 16 * 1024

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
_INT = re.compile(r"[+-]?\d+\Z")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")
_FILTER = re.compile(r"\s*([^\s=<>!]+)\s*(>=|<=|>|<|=)\s*(.*?)\s*\Z", re.S)
_OPS = {">=": "ge", ">": "gt", "<=": "le", "<": "lt", "=": "eq"}
#: SQL comparison of each range operator.
SQL_OPS = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}


class YamlFloat(str):
    """A YAML float as written (``1.10``): the front matter loader keeps floats as text so a
    version stays as typed; :func:`normalize` reads this one as a number."""


def is_date(text: str) -> bool:
    """Whether ``text`` is a real ``YYYY-MM-DD`` date.

    >>> is_date("2025-02-28"), is_date("2025-02-30"), is_date("2025")
    (True, False, False)
    """
    if not isinstance(text, str) or not _ISO_DATE.match(text):
        return False
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _number_text(x: float | int) -> str:
    if isinstance(x, int):
        return str(x)
    return str(int(x)) if x.is_integer() and abs(x) < 2**53 else repr(x)


def canonical(value: Any) -> str:
    """A scalar's canonical text, the form terms and filter values are compared in.

    >>> canonical(2025), canonical(2.50), canonical(True), canonical(" finance ")
    ('2025', '2.5', 'true', 'finance')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _number_text(value)
    return str(value).strip()


def _scalar(value: Any) -> Any:
    if isinstance(value, YamlFloat):
        try:
            x = float(value)
        except ValueError:
            return str(value)
        return x if math.isfinite(x) else str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return str(value).strip() if isinstance(value, str) else str(value)


def normalize(meta: dict, prefix: str = "") -> dict:
    """JSON-ready metadata from front matter values (see the module docstring): nested mappings
    become dotted keys, list items are scalars (a nested item is kept as its JSON text).

    >>> normalize({"Team": {"lead": "ana"}, "tags": ["a", 1], "when": dt.date(2025, 1, 2)})
    {'Team.lead': 'ana', 'tags': ['a', 1], 'when': '2025-01-02'}
    """
    out: dict = {}
    for k, v in meta.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(normalize(v, key + "."))
        elif isinstance(v, (list, tuple)):
            out[key] = [_scalar(x) if not isinstance(x, (list, tuple, dict)) else json.dumps(x, default=str) for x in v]
        else:
            out[key] = _scalar(v)
    return out


def _items(metadata: dict) -> Iterable[tuple[str, Any]]:
    for k, v in sorted(metadata.items()):
        if not KEY.match(k):
            continue
        for x in v if isinstance(v, list) else [v]:
            if x is not None and not isinstance(x, (list, dict)):
                yield k, x


def terms(metadata: dict) -> list[str]:
    """The ``key=value`` terms of ``metadata`` (sorted, unique), for equality and membership.

    >>> terms({"tags": ["b", "a"], "year": 2025, "draft": False, "x": None})
    ['draft=false', 'tags=a', 'tags=b', 'year=2025']
    """
    return sorted({f"{k}={canonical(x)}" for k, x in _items(metadata)})


def ranges(metadata: dict) -> dict[str, float | str]:
    """``{"n:key": number}`` for numeric scalars and ``{"d:key": "YYYY-MM-DD"}`` for date
    scalars, for range filters (list values have no range entry).

    >>> ranges({"year": 2025, "date": "2025-03-01", "tags": [1, 2], "name": "x", "ok": True})
    {'n:year': 2025.0, 'd:date': '2025-03-01'}
    """
    out: dict[str, float | str] = {}
    for k, v in metadata.items():
        if not KEY.match(k) or isinstance(v, bool):
            continue
        if isinstance(v, (int, float)):
            out[f"n:{k}"] = float(v)
        elif is_date(v):
            out[f"d:{k}"] = v
    return out


def to_json(metadata: dict) -> str:
    """``metadata`` as compact JSON with sorted keys (how stores keep it)."""
    return json.dumps(metadata or {}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def spellings(text: str) -> list[str]:
    """The canonical texts a filter value may match: as typed, and as a canonical number when
    it reads as one (``2.50`` also matches a stored ``2.5``, ``007`` a stored ``7``).

    >>> spellings("2.50"), spellings("finance"), spellings("007")
    (['2.50', '2.5'], ['finance'], ['007', '7'])
    """
    text = text.strip()
    out = [text]
    if _INT.match(text):
        out.append(str(int(text)))
    elif _NUMBER.match(text):
        out.append(_number_text(float(text)))
    return list(dict.fromkeys(out))


def parse_filter(text: str, where: str = "--filter") -> MetaCondition:
    """One filter expression as a :class:`~citewise.core.MetaCondition`.

    >>> parse_filter("tags=security,billing")
    MetaCondition(key='tags', op='eq', values=('security', 'billing'))
    >>> parse_filter("date>=2025-01-01").values, parse_filter("year < 2020").values
    ((datetime.date(2025, 1, 1),), (2020.0,))

    Raises:
        CitewiseError: no operator, a key that cannot be filtered on, an empty value, or a range
            value that is neither a number nor a ``YYYY-MM-DD`` date (the message names ``where``).
    """
    m = _FILTER.match(text or "")
    if not m:
        raise CitewiseError(
            f"{where} {text!r}: write key=value, key=a,b, key>=value, key>value, key<=value "
            "or key<value (e.g. department=finance, date>=2025-01-01)"
        )
    key, op, raw = m.group(1), _OPS[m.group(2)], m.group(3)
    if not KEY.match(key):
        raise CitewiseError(f"{where} {text!r}: the key {key!r} must be letters, digits, '_', '.' or '-'")
    if key in ("id", "title", "version", "permissions"):
        hint = {
            "version": " (use --version)",
            "permissions": " (permissions come from the principal)",
            "id": " (use --scope)",
            "title": "",
        }[key]
        raise CitewiseError(f"{where} {text!r}: '{key}' cannot be filtered on here{hint}")
    if op == "eq":
        values = tuple(v.strip() for v in raw.split(","))
        if not raw.strip() or any(not v for v in values):
            raise CitewiseError(f"{where} {text!r}: a value is empty (key=value, or key=a,b for any of several)")
        return MetaCondition(key, "eq", tuple(dict.fromkeys(values)))
    raw = raw.strip()
    if is_date(raw):
        value: Any = dt.date.fromisoformat(raw)
    elif _NUMBER.match(raw):
        value = float(raw)
    else:
        raise CitewiseError(f"{where} {text!r}: a range needs a number or a YYYY-MM-DD date, got {raw!r}")
    if key in DATE_COLUMNS and not isinstance(value, dt.date):
        raise CitewiseError(f"{where} {text!r}: '{key}' is a date; compare it with a YYYY-MM-DD date")
    return MetaCondition(key, op, (value,))


def parse_filters(texts: Iterable[str] | None, where: str = "--filter") -> tuple[MetaCondition, ...]:
    """:func:`parse_filter` of each expression (all must hold)."""
    return tuple(parse_filter(t, where) for t in texts or ())


def condition_text(c: MetaCondition) -> str:
    """A condition written back as a filter expression (``tags=a,b``, ``date>=2025-01-01``)."""
    if c.op == "eq":
        return f"{c.key}={','.join(str(v) for v in c.values)}"
    v = c.values[0]
    return f"{c.key}{SQL_OPS[c.op]}{v.isoformat() if isinstance(v, dt.date) else _number_text(v)}"


def range_key(c: MetaCondition) -> str:
    """The :func:`ranges` key a range condition reads (``n:year``, ``d:date``)."""
    return ("d:" if isinstance(c.values[0], dt.date) else "n:") + c.key


def range_value(c: MetaCondition) -> float | str:
    """A range condition's value as stored: a float, or ISO date text."""
    v = c.values[0]
    return v.isoformat() if isinstance(v, dt.date) else float(v)


def eq_terms(c: MetaCondition) -> list[str]:
    """The terms an ``eq`` condition accepts (each value in each of its :func:`spellings`)."""
    return [f"{c.key}={s}" for v in c.values for s in spellings(str(v))]


def eq_dates(c: MetaCondition) -> list[str]:
    """The dates an ``eq`` condition on a built-in date column accepts."""
    return [str(v).strip() for v in c.values]
