"""Retrievers by name: each retriever class registers itself (``@register("hybrid")``) and
:func:`make_retriever` builds one by name.

Registration runs when a retriever's module is imported. The built-in modules are listed by
name in :data:`BUILTIN_MODULES` and imported on the first lookup of a name not yet registered
(so this module imports none of them, and none of them imports a factory that imports it
back); a third-party retriever registers from its own module, imported before use, or from an
entry point in the ``citewise.retrievers`` group (``name = "package.module"``).

A registered factory is called as ``factory(store, embedder)``.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any, Callable

from citewise.core import CitewiseError

#: Modules that register the built-in retrievers, in the order their names are listed.
BUILTIN_MODULES = (
    "citewise.retrieval.retrievers",
    "citewise.retrieval.convex",
    "citewise.retrieval.hierarchical",
    "citewise.retrieval.fusion_learned",
    "citewise.retrieval.raptor",
)
#: Entry-point group of third-party retrievers.
ENTRY_POINT_GROUP = "citewise.retrievers"

_REGISTRY: dict[str, Callable[..., Any]] = {}
_loaded = False


def register(*names: str) -> Callable[[Any], Any]:
    """Class decorator: make the class buildable by each of ``names``
    (``make_retriever(name, store, embedder)`` calls ``cls(store, embedder)``, or
    ``cls.from_name(name, store, embedder)`` when the class serves several names).

    Raises:
        ValueError: a name is already registered by another class.
    """

    def decorate(cls: Any) -> Any:
        for name in names:
            old = _REGISTRY.get(name)
            if old is not None and old is not cls:
                raise ValueError(f"retriever name {name!r} is registered twice ({old.__name__}, {cls.__name__})")
            _REGISTRY[name] = cls
        return cls

    return decorate


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        importlib.import_module(ep.value.split(":")[0])


def retriever_names() -> tuple[str, ...]:
    """Every registered name, sorted."""
    _load()
    return tuple(sorted(_REGISTRY))


def registered(name: str) -> Callable[..., Any]:
    """The class registered as ``name`` (for a retriever that builds another with its own
    parameters, e.g. the tuned retriever's convex fusion).

    Raises:
        CitewiseError: unknown name.
    """
    if name not in _REGISTRY:
        _load()
    if name not in _REGISTRY:
        raise CitewiseError(f"unknown retriever '{name}' (valid: {', '.join(retriever_names())})")
    return _REGISTRY[name]


def make_retriever(
    name: str, store: Any, embedder: Any, *, reranker: Any = None, rerank_depth: int | None = None
) -> Any:
    """Build the retriever registered as ``name`` over ``store`` and ``embedder``.

    ``reranker``: a :class:`citewise.retrieval.rerank.Reranker` or a spec string
    (:func:`citewise.retrieval.rerank.make_reranker`); the retriever's top ``rerank_depth``
    (default :data:`citewise.retrieval.rerank.RERANK_DEPTH`) are then reordered by it. A name
    ending in ``+rerank`` without a reranker is an error.

    Raises:
        CitewiseError: unknown name (the message lists the valid ones), a bad reranker spec.
    """
    if name.endswith("+rerank") or reranker is not None:
        from citewise.retrieval.rerank import RERANK_DEPTH, RerankingRetriever, make_reranker

        if reranker is None:
            raise CitewiseError(f"retriever '{name}' needs a reranker (--reranker)")
        base = make_retriever(name.removesuffix("+rerank"), store, embedder)
        rr = make_reranker(reranker) if isinstance(reranker, str) else reranker
        return RerankingRetriever(base, rr, store, rerank_depth or RERANK_DEPTH)
    cls = registered(name)
    if hasattr(cls, "from_name"):
        return cls.from_name(name, store, embedder)
    return cls(store, embedder)
