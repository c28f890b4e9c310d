"""Search snippets: the passage of a hit that best matches the query, with its source offsets.

A chunk is cut into *segments*: its lines, and each line into sentences (a ``.``, ``!`` or ``?``
followed by whitespace ends one). Candidate passages are runs of consecutive segments no longer
than ``max_chars``; a segment longer than that on its own contributes word-aligned windows of at
most ``max_chars`` instead. Each candidate is scored by how many *distinct* query terms it holds,
both sides going through the project analyzer (:func:`citewise.text.analyzer.analyze`, so
``refunds`` matches ``refund`` and ``E-1004`` stays whole). The best candidate wins; ties go to
fewer Markdown heading lines (``# ...``, already shown as the chunk's heading path), then to fewer
segments, then to the earliest start, so the result is deterministic. With no query term
in the chunk, the first segment that is not a heading is the snippet.

The snippet is always an exact slice of the chunk text (``text[start:end]``); a chunk's offsets
into its source file are ``chunk.start + start`` (see :func:`chunk_snippet`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from citewise.core import source_span
from citewise.text.analyzer import analyze
from citewise.text.sentences import trim_span

#: Longest snippet, in characters.
MAX_CHARS = 240

_SEGMENT = re.compile(r"[^\n]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Snippet:
    """A passage and its ``[start, end)`` character offsets (into the chunk text, or into the
    source file for :func:`chunk_snippet`)."""

    text: str
    start: int
    end: int


def segments(text: str) -> list[tuple[int, int]]:
    """``[(start, end)]`` of the non-blank lines of ``text``, each split into sentences, with
    surrounding whitespace trimmed."""
    out: list[tuple[int, int]] = []
    for line in _SEGMENT.finditer(text):
        s = line.start()
        for m in [*_SENTENCE_END.finditer(text, line.start(), line.end()), None]:
            span = trim_span(text, s, m.start() if m else line.end())
            if span:
                out.append(span)
            if m:
                s = m.end()
    return out


def _windows(text: str, s: int, e: int, max_chars: int) -> list[tuple[int, int]]:
    """Word-aligned windows of at most ``max_chars`` inside an over-long segment."""
    words = [(m.start(), m.end()) for m in _WORD.finditer(text, s, e)]
    out = []
    for i, (ws, _) in enumerate(words):
        end = None
        for _, we in words[i:]:
            if we - ws > max_chars:
                break
            end = we
        out.append((ws, end if end is not None else min(ws + max_chars, e)))
    return out


def best_snippet(text: str, query: str, max_chars: int = MAX_CHARS) -> Snippet:
    """The passage of ``text`` that best matches ``query`` (offsets into ``text``).

    See the module docstring for the rule. An empty ``text`` gives an empty snippet at 0.

    >>> s = best_snippet("Intro line.\\nRefunds take 30 days. Cards are charged monthly.", "refund days")
    >>> (s.text, s.start, s.end)
    ('Refunds take 30 days.', 12, 33)
    """
    segs = segments(text)
    if not segs:
        return Snippet("", 0, 0)
    wanted = set(analyze(query))
    best_key, best_span = None, segs[0]

    heading = [text[s] == "#" for s, _ in segs]
    # the query terms of each segment, analyzed once: a passage's terms are the union of its
    # segments' (no token spans the whitespace between two segments), and heading lines say
    # nothing the heading path does not, so their terms do not count
    found = [wanted & set(analyze(text[a:b])) if wanted and not heading[k] else set() for k, (a, b) in enumerate(segs)]

    def consider(s: int, e: int, first: int, n_segments: int, terms: set[str]) -> None:
        nonlocal best_key, best_span
        n_headings = sum(heading[first : first + n_segments])
        key = (-len(terms), n_headings, n_segments, s)
        if best_key is None or key < best_key:
            best_key, best_span = key, (s, e)

    for i, (s, e) in enumerate(segs):
        if e - s > max_chars:
            for ws, we in _windows(text, s, e, max_chars):
                consider(ws, we, i, 1, wanted & set(analyze(text[ws:we])) if wanted and not heading[i] else set())
            continue
        terms: set[str] = set()
        for j in range(i, len(segs)):
            if segs[j][1] - s > max_chars:
                break
            terms |= found[j]
            consider(s, segs[j][1], i, j - i + 1, terms)
    s, e = best_span
    return Snippet(text[s:e], s, e)


class _Located(Protocol):
    """A chunk as :func:`chunk_snippet` reads it: its text and its start offset in the source."""

    @property
    def text(self) -> str: ...

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


def chunk_snippet(chunk: _Located, query: str, max_chars: int = MAX_CHARS) -> Snippet:
    """:func:`best_snippet` of a chunk (anything with ``text``, ``start`` and ``end``), with
    offsets into the chunk's source file (``chunk.start`` + the offset in the chunk text, less
    the copied prefix a chunk text may open with: ``len(text) - (end - start)`` characters; an
    offset inside it maps to ``chunk.start``)."""
    sn = best_snippet(chunk.text, query, max_chars)
    return Snippet(sn.text, *source_span(chunk.text, chunk.start, chunk.end, sn.start, sn.end))
