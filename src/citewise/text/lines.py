"""Reading line-oriented files (TSV, TREC, JSON Lines) with errors that name the file and line.

Every reader of qrels, runs, golden sets, routing sets and question lists goes through these two
functions, so an unreadable file, a non-UTF-8 byte or a line that is not JSON is reported the same
way everywhere: one :class:`citewise.core.InputError` naming the file (and line).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from citewise.core import InputError


def numbered_lines(path: str | Path, what: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for every non-blank line of a UTF-8 text file (1-based numbers).

    Args:
        what: what the file holds, for the error message (``qrels``, ``golden set``...).

    Raises:
        InputError: the file cannot be read or is not UTF-8.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(str(path), f"cannot read {what}: {getattr(e, 'strerror', None) or e}") from None
    for n, line in enumerate(lines, start=1):
        if line.strip():
            yield n, line


def jsonl_rows(path: str | Path, what: str, max_text: int | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a JSON Lines file.

    ``max_text``: the longest string ``text`` field accepted (question files pass
    :data:`citewise.core.MAX_QUERY_CHARS`, so a question the index would refuse is named with its
    file and line before any question is answered).

    Raises:
        InputError: unreadable file, a line that is not JSON, JSON that is not an object, or a
            ``text`` longer than ``max_text`` (naming the line).
    """
    for n, line in numbered_lines(path, what):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(str(path), f"invalid JSON ({e.msg} at column {e.colno})", n) from None
        if not isinstance(row, dict):
            raise InputError(str(path), f"expected a JSON object, got {type(row).__name__}", n)
        text = row.get("text")
        if max_text is not None and isinstance(text, str) and len(text) > max_text:
            raise InputError(
                str(path),
                f"field 'text' is {len(text):,} characters; the limit is {max_text:,} (question '{row.get('id', '')}')",
                n,
            )
        yield n, row
