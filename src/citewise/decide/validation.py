"""Validation helpers of the decide package: every error names the field; callers put the file
(or class) in front."""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any, Iterable, Mapping

from citewise.core import InputError


def _check_int(value: Any, key: str, source: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(source, f"{key}: must be a whole number >= {minimum}, got {value!r}")
    if isinstance(value, float):
        if not value.is_integer():
            raise InputError(source, f"{key}: must be a whole number >= {minimum}, got {value!r}")
        value = int(value)
    if value < minimum:
        raise InputError(source, f"{key}: must be >= {minimum}, got {value!r}")
    return value


def _check_fraction(value: Any, key: str, source: str) -> float:
    """A share in [0, 1); anything else (a token count such as 2000, 1.5, 1) is refused by name."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(source, f"{key}: must be a fraction of the context window (0.10 = 10%), got {value!r}")
    if value < 0:
        raise InputError(source, f"{key}: must be >= 0, got {value!r}")
    if value >= 1:
        hint = f"; for a number of tokens write safety_margin_tokens: {int(value)}" if float(value).is_integer() else ""
        raise InputError(
            source,
            (
                f"{key}: {value!r} is ambiguous: safety_margin is a fraction of the context "
                f"window, 0 <= safety_margin < 1 (0.10 = 10%){hint}"
            ),
        )
    return float(value)


def _check_number(value: Any, key: str, source: str, minimum: float = 0.0, maximum: float | None = None) -> float:
    if value is None:
        raise InputError(source, f"{key}: missing (a number is required)")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(source, f"{key}: must be a number, got {value!r}")
    if value < minimum:
        raise InputError(source, f"{key}: must be >= {minimum:g}, got {value!r}")
    if maximum is not None and value > maximum:
        raise InputError(source, f"{key}: must be <= {maximum:g}, got {value!r}")
    return float(value)


def _check_keys(data: Any, cls: type, source: str, prefix: str, optional: Iterable[str] = ()) -> dict:
    where = prefix.rstrip(".") or "the workload"
    if not isinstance(data, Mapping):
        raise InputError(source, f"{where}: must be a mapping of 'key: value' lines, got {type(data).__name__}")
    names = [f.name for f in fields(cls)]
    unknown = sorted(str(k) for k in data if k not in names)
    if unknown:
        raise InputError(source, f"{prefix}{unknown[0]}: unknown key (expected one of: {', '.join(names)})")
    missing = [n for n in names if n not in data and n not in optional]
    if missing:
        raise InputError(source, f"{prefix}{missing[0]}: missing key")
    return dict(data)


def _from_mapping(cls, data: Any, source: str, prefix: str, optional: Iterable[str] = ()):
    values = _check_keys(data, cls, source, prefix, optional)
    try:
        return cls(**values)
    except InputError as e:  # re-point the error at the file and the dotted key
        raise InputError(source, prefix + e.reason) from None
