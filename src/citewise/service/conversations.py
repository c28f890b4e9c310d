"""Conversations on the web page: a question and its follow-ups, kept in memory per server.

A conversation belongs to the principal that started it (name and groups: a follow-up under
another sign-in finds no conversation) and fixes what every turn searches: its scope (document
ids or folder prefixes), metadata filters and "as of" date, chosen with the first question. Its
id is 128 random bits. At most :data:`MAX_CONVERSATIONS` are kept (the least recently used go
first) with at most :data:`MAX_TURNS` turns each; a server restart forgets them.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from citewise.core import Principal

MAX_CONVERSATIONS = 1000
MAX_TURNS = 50


@dataclass
class Turn:
    """One question and its answer (the ``citewise ask --json`` payload) and its source cards."""

    question: str
    payload: dict
    cards: list[dict] = field(default_factory=list)


@dataclass
class Conversation:
    """A conversation's fixed scope and its turns (see module docstring)."""

    id: str
    owner: tuple[str, tuple[str, ...]]
    scope: tuple[str, ...] = ()
    filters: tuple[str, ...] = ()
    as_of: str = ""
    turns: list[Turn] = field(default_factory=list)

    @property
    def narrowed(self) -> bool:
        return bool(self.scope or self.filters or self.as_of)


class Conversations:
    """The in-memory conversation store of one server (thread-safe)."""

    def __init__(self, limit: int = MAX_CONVERSATIONS):
        self.limit = limit
        self._items: OrderedDict[str, Conversation] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _owner(principal: Principal) -> tuple[str, tuple[str, ...]]:
        return principal.name, principal.all_groups()

    def start(self, principal: Principal, scope=(), filters=(), as_of: str = "") -> Conversation:
        """A new, empty conversation of ``principal``."""
        conv = Conversation(secrets.token_hex(16), self._owner(principal), tuple(scope), tuple(filters), as_of)
        with self._lock:
            self._items[conv.id] = conv
            while len(self._items) > self.limit:
                self._items.popitem(last=False)
        return conv

    def get(self, conv_id: str, principal: Principal) -> Conversation | None:
        """The conversation ``conv_id`` if ``principal`` started it, else None."""
        with self._lock:
            conv = self._items.get(conv_id)
            if conv is None or conv.owner != self._owner(principal):
                return None
            self._items.move_to_end(conv_id)
            return conv

    def add(self, conv: Conversation, turn: Turn) -> int:
        """Append ``turn`` (the oldest turn goes past :data:`MAX_TURNS`); returns its 1-based number."""
        with self._lock:
            conv.turns.append(turn)
            del conv.turns[:-MAX_TURNS]
            return len(conv.turns)
