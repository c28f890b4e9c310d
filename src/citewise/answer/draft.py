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
        notes: lines for the reader about what the check changed or why the model was not used.
        withdrawn: sentences of the model's reply that no source supports (removed).
        llm: the LLM call: prompt tokens and budget, sources shown, usage, seconds, attribution.
        reason: why the draft is an abstention, when the generator knows (None: the check decides).
        fabricated: ids the model cited that are not among its sources.
    """

    text: str
    generator: str
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    short: str = ""
    messages: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    withdrawn: list[str] = field(default_factory=list)
    llm: dict = field(default_factory=dict)
    reason: object = None
    fabricated: list[str] = field(default_factory=list)
