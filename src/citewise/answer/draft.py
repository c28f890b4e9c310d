"""A generator's output before the citation check (:mod:`citewise.answer.citations`)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Draft:
    """A generator's output before the citation check.

    Attributes:
        text: sentences with ``[doc:ID]`` / ``[chunk:ID]`` markers (or the abstention text).
        generator: the generator's name.
        spans: ``{sentence: (start, end)}`` offsets inside the quoted chunk's text, when known.
        short: a short answer span (extractive only; '' when none), for span-level evaluation.
        messages: the chat messages sent (LLM only), kept for audit and tests.
    """

    text: str
    generator: str
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    short: str = ""
    messages: list[dict] = field(default_factory=list)
