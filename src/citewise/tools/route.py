"""The routing decision: :class:`Route` (kind, planned calls, missing parameters)."""

from __future__ import annotations

from dataclasses import dataclass, field

#: Route kinds (see :mod:`citewise.tools.router`).
KINDS = ("record", "document", "both", "live", "none")


@dataclass(frozen=True)
class PlannedCall:
    """One tool call a route plans: tool name and JSON arguments."""

    name: str
    arguments: dict


@dataclass
class Route:
    """A routing decision.

    Attributes:
        kind: ``record`` | ``both`` | ``live`` | ``document`` | ``none``.
        calls: planned tool calls (record tool first, then ``vector_search`` for ``both``).
        reason: a short human explanation.
        scores: tool name -> score used in the decision.
        missing: required parameters of the primary call the question does not give.
    """

    kind: str
    calls: list[PlannedCall] = field(default_factory=list)
    reason: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    @property
    def tool(self) -> str | None:
        """The primary tool: the record tool for record/both, ``web_search`` for live,
        ``vector_search`` for document."""
        return self.calls[0].name if self.calls else None

    @property
    def arguments(self) -> dict:
        return dict(self.calls[0].arguments) if self.calls else {}
