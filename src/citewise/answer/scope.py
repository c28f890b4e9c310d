"""The request contract of an ask: source scope, token budget, deadline, retrieval rounds.

A **source scope** says which documents an answer may be drawn from:

* whole corpus (no scope given);
* named documents (``--scope billing/refunds --scope client/payment-client``): exact doc ids;
* a folder prefix (``--scope provider/``, or any value that is not a doc id but starts the ids of
  some documents followed by ``/``).

The scope is resolved against the documents the principal may read (their groups intersect the
principal's) and only *current* versions are named (history ids ``id@version`` are reached by the
version filter of :mod:`citewise.answer.gaps`, never by scope). A requested id the principal
cannot see is reported exactly like one that does not exist (``unavailable``), so a scope never
tells a principal that a restricted document exists. The resolved ids become
``Filters.doc_ids``, and :func:`citewise.retrieval.retrievers.effective_filters` adds the
principal's groups on top, so a scope can only narrow what the principal may read, never widen it.

The answer states its scope (:meth:`SourceScope.describe`): "from the 4 documents you named",
"from the 3 documents under provider/", "from the corpus".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from citewise.core import CitewiseError, Filters, Principal

#: Rounds of retrieval an ask may use by default: the first search and one follow-up.
DEFAULT_MAX_ROUNDS = 2
#: Default token budget of the assembled evidence (o200k_base tokens).
DEFAULT_BUDGET_TOKENS = 4000


@dataclass(frozen=True)
class SourceScope:
    """A resolved source scope.

    Attributes:
        requested: the values the user gave (empty: whole corpus).
        doc_ids: the visible, current documents in scope, sorted (None: whole corpus).
        named: requested values that matched a document id exactly.
        folders: requested values that matched as a folder prefix (normalised to end in ``/``).
        unavailable: requested values with no visible document (missing or not permitted; the
            two are not told apart).
    """

    requested: tuple[str, ...] = ()
    doc_ids: tuple[str, ...] | None = None
    named: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    unavailable: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """``corpus`` | ``documents`` | ``folder`` | ``mixed`` (named documents and folders)."""
        if self.doc_ids is None:
            return "corpus"
        if self.folders and self.named:
            return "mixed"
        return "folder" if self.folders else "documents"

    def filters(self, base: Filters | None = None) -> Filters | None:
        """``base`` narrowed to this scope's documents (``base`` itself for the whole corpus).

        A ``base.doc_ids`` already given is intersected, never replaced.
        """
        if self.doc_ids is None:
            return base
        ids = self.doc_ids
        if base is not None and base.doc_ids is not None:
            keep = set(base.doc_ids)
            ids = tuple(d for d in ids if d in keep)
        return dataclasses.replace(base, doc_ids=ids) if base is not None else Filters(doc_ids=ids)

    def describe(self) -> str:
        """The phrase an answer opens with: "from the corpus", "from the 4 documents you named",
        "from the 3 documents under provider/", "from the 5 documents in your scope"."""
        if self.doc_ids is None:
            return "from the corpus"
        n = len(self.doc_ids)
        docs = "document" if n == 1 else "documents"
        if self.kind == "documents":
            return f"from the {n} {docs} you named" if n != 1 else "from the document you named"
        if self.kind == "folder" and len(self.folders) == 1:
            return f"from the {n} {docs} under {self.folders[0]}"
        return f"from the {n} {docs} in your scope"

    def as_dict(self) -> dict:
        """JSON form: kind, requested, doc_ids, unavailable, description."""
        return {
            "kind": self.kind,
            "requested": list(self.requested),
            "doc_ids": None if self.doc_ids is None else list(self.doc_ids),
            "unavailable": list(self.unavailable),
            "description": self.describe(),
        }


def visible_documents(store, principal: Principal | None) -> list[str]:
    """Current documents of ``store`` that ``principal`` may read (their groups intersect the
    principal's groups plus ``public``), sorted."""
    groups = set((principal or Principal()).all_groups())
    return sorted(d for d, e in store.documents().items() if "@" not in d and groups & set(e.groups))


def resolve_scope(values, store, principal: Principal | None = None) -> SourceScope:
    """Resolve ``--scope`` values into a :class:`SourceScope` for ``principal``.

    Args:
        values: doc ids or folder prefixes (None or empty: whole corpus).
        store: the Store (its :meth:`documents` are read once).
        principal: who asks (None: anonymous, public documents only).

    Raises:
        CitewiseError: a blank value or one naming a history version (``id@version``).
    """
    values = [v for v in (values or [])]
    if not values:
        return SourceScope()
    for v in values:
        if not str(v).strip():
            raise CitewiseError("--scope: empty value (give a document id or a folder prefix such as provider/)")
        if "@" in v:
            raise CitewiseError(
                f"--scope {v!r}: a scope names documents, not versions "
                "(ask about the current one, or use --version / --as-of)"
            )
    visible = visible_documents(store, principal)
    vis = set(visible)
    chosen: set[str] = set()
    named: list[str] = []
    folders: list[str] = []
    unavailable: list[str] = []
    for raw in values:
        v = raw.strip()
        if v in vis and not v.endswith("/"):
            chosen.add(v)
            named.append(v)
            continue
        prefix = v.rstrip("/") + "/"
        under = [d for d in visible if d.startswith(prefix)]
        if under:
            chosen.update(under)
            folders.append(prefix)
        else:
            unavailable.append(v)
    return SourceScope(tuple(values), tuple(sorted(chosen)), tuple(named), tuple(folders), tuple(unavailable))


@dataclass(frozen=True)
class AskRequest:
    """What one ask may use.

    Attributes:
        scope: the resolved :class:`SourceScope`.
        budget_tokens: o200k_base token budget of the assembled evidence (≥ 1).
        deadline_ms: wall-clock milliseconds after which no further retrieval round starts
            (None: no deadline). A round already running finishes.
        max_rounds: retrieval rounds allowed, the first search included (≥ 1).
        k: chunks retrieved per search.

    Raises:
        CitewiseError: a value out of range (the message names the option).
    """

    scope: SourceScope = field(default_factory=SourceScope)
    budget_tokens: int = DEFAULT_BUDGET_TOKENS
    deadline_ms: float | None = None
    max_rounds: int = DEFAULT_MAX_ROUNDS
    k: int = 5

    def __post_init__(self) -> None:
        if self.max_rounds < 1:
            raise CitewiseError(f"--max-rounds must be at least 1 (the first search), got {self.max_rounds}")
        if self.deadline_ms is not None and self.deadline_ms < 0:
            raise CitewiseError(f"--deadline-ms must be 0 or more, got {self.deadline_ms}")
        if self.budget_tokens < 1:
            raise CitewiseError(f"--budget-tokens must be at least 1, got {self.budget_tokens}")
        if self.k < 1:
            raise CitewiseError(f"--k must be at least 1, got {self.k}")
