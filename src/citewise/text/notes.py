"""What the loaders drop as navigation or page furniture, told to whoever is listening.

A loader calls :func:`dropped` for each thing it leaves out of a document's text (a table of
contents, a Prev/Next bar, a running header); nothing is kept unless a caller collects them with
:func:`collecting` (``citewise inspect`` does), so ingest pays nothing for it.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Iterator


@dataclass(frozen=True)
class Dropped:
    """One thing left out of a document: where (``lines 15-231``, ``page 4``, an HTML element),
    why (``table of contents (section numbers)``), and the start of its text."""

    source: str
    where: str
    reason: str
    text: str = ""


_notes: ContextVar[list[Dropped] | None] = ContextVar("citewise_dropped", default=None)


def dropped(source: str, where: str, reason: str, text: str = "") -> None:
    """Record that ``source`` lost something at ``where`` for ``reason`` (no-op unless collected)."""
    got = _notes.get()
    if got is not None:
        got.append(Dropped(source, where, reason, " ".join(text.split())[:100]))


@contextmanager
def collecting() -> Iterator[list[Dropped]]:
    """Collect every :func:`dropped` call made inside the ``with`` block (this thread/task)."""
    token = _notes.set([])
    try:
        yield _notes.get()
    finally:
        _notes.reset(token)
