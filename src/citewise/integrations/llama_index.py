"""A LlamaIndex retriever over a citewise index (extra ``llama-index``).

>>> from citewise.integrations.llama_index import CitewiseRetriever     # doctest: +SKIP
>>> r = CitewiseRetriever(index="./my-index", k=4, groups=["finance"])   # doctest: +SKIP
>>> nodes = r.retrieve("Who approves refunds over 5,000 USD?")          # doctest: +SKIP
>>> nodes[0].score, nodes[0].node.get_content(), nodes[0].node.metadata["doc_id"]  # doctest: +SKIP

``retrieve`` returns ``NodeWithScore`` items: a ``TextNode`` (id = chunk id, text = chunk text,
metadata = :func:`citewise.integrations.common.result_metadata`) and the citewise score. The
principal (``principal=`` or ``groups=``) and the metadata filters (citewise expressions, or
LlamaIndex ``MetadataFilters`` with ``==``, ``in``, ``>``, ``>=``, ``<``, ``<=`` joined by AND)
are applied inside the store's query. :func:`from_documents` turns LlamaIndex documents into
citewise documents for :meth:`citewise.ingest.Ingestor.ingest_documents`.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

try:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as e:  # the optional extra is not installed
    raise ImportError(
        f"citewise.integrations.llama_index needs llama-index-core: pip install 'citewise[llama-index]' ({e})"
    ) from None

from citewise.core import CitewiseError, Document, Filters, Principal
from citewise.integrations.common import make_filters, open_citewise, principal_of, result_metadata, to_document

_OPS = {"==": "=", "in": "=", ">": ">", ">=": ">=", "<": "<", "<=": "<="}


def metadata_filters(filters) -> Filters | None:
    """:class:`Filters` from LlamaIndex ``MetadataFilters`` (AND of ``==`` / ``in`` / ``>`` /
    ``>=`` / ``<`` / ``<=`` on metadata keys), citewise expressions, or None.

    Raises:
        CitewiseError: an OR condition, another operator, or a bad value.
    """
    from llama_index.core.vector_stores.types import MetadataFilters

    if not isinstance(filters, MetadataFilters):
        return make_filters(filters)
    from citewise.metadata import canonical

    if str(getattr(filters.condition, "value", filters.condition)).lower() not in ("and", "none"):
        raise CitewiseError("filters: only AND of metadata conditions is supported")
    exprs = []
    for f in filters.filters:
        if isinstance(f, MetadataFilters):
            raise CitewiseError("filters: nested filter groups are not supported")
        op = str(getattr(f.operator, "value", f.operator))
        if op not in _OPS:
            raise CitewiseError(f"filters: operator {op!r} is not supported (==, in, >, >=, <, <=)")
        values = f.value if isinstance(f.value, list) else [f.value]
        exprs.append(f"{f.key}{_OPS[op]}{','.join(canonical(v) for v in values)}")
    return make_filters(exprs)


class CitewiseRetriever(BaseRetriever):
    """LlamaIndex ``BaseRetriever`` over citewise search (see module docstring).

    Args:
        citewise: an open :class:`citewise.api.Citewise` (or give ``index``, a folder).
        k: nodes per query; ``retriever``: citewise retriever name (None: the setting).
        principal / groups: who searches; filters: citewise expressions or ``MetadataFilters``.
    """

    def __init__(
        self,
        citewise=None,
        *,
        index: str | None = None,
        k: int = 5,
        retriever: str | None = None,
        principal: Principal | None = None,
        groups: Sequence[str] | None = None,
        filters: Any = None,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self._cw = open_citewise(citewise, index)
        self._k, self._retriever = k, retriever
        self._principal = principal_of(principal, groups)
        self._filters = metadata_filters(filters)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        results = self._cw.search(
            query_bundle.query_str, self._principal, k=self._k, retriever=self._retriever, filters=self._filters
        )
        return [
            NodeWithScore(node=TextNode(id_=r.chunk_id, text=r.text, metadata=result_metadata(r)), score=r.score)
            for r in results
        ]


def from_documents(docs: Iterable) -> list[Document]:
    """LlamaIndex documents (``Document`` / ``TextNode``) as citewise documents
    (:func:`citewise.integrations.common.to_document`; id from ``metadata['file_path']`` or
    ``source``, else the document's ``id_``)."""
    out = []
    for d in docs:
        meta = dict(d.metadata or {})
        if "source" not in meta and meta.get("file_path"):
            meta["source"] = meta.pop("file_path")
        out.append(to_document(d.get_content(), {"id": d.id_, **meta} if "source" not in meta else meta))
    return out
