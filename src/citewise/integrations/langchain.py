"""A LangChain retriever over a citewise index (extra ``langchain``: ``pip install 'citewise[langchain]'``).

>>> from citewise.integrations.langchain import CitewiseRetriever       # doctest: +SKIP
>>> r = CitewiseRetriever(index="./my-index", k=4, groups=["finance"],
...                       filters=["department=finance"])                  # doctest: +SKIP
>>> docs = r.invoke("Who approves refunds over 5,000 USD?")               # doctest: +SKIP
>>> docs[0].page_content, docs[0].metadata["doc_id"], docs[0].metadata["snippet"]  # doctest: +SKIP

Each ``invoke`` is one :meth:`citewise.api.Citewise.search` as the retriever's principal
(``principal=`` or ``groups=``; neither: public documents only), with its metadata filters applied
inside the store's query. ``invoke(query, k=..., filters=..., principal=...)`` overrides them for
one call. Documents carry the chunk text as ``page_content``, the chunk id as ``id`` and
:func:`citewise.integrations.common.result_metadata` as ``metadata``.

:func:`from_documents` turns LangChain documents (from any LangChain loader) into citewise
documents for :meth:`citewise.ingest.Ingestor.ingest_documents`.
"""

from __future__ import annotations

from typing import Any, Iterable

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document as LCDocument
    from langchain_core.retrievers import BaseRetriever
except ImportError as e:  # the optional extra is not installed
    raise ImportError(
        f"citewise.integrations.langchain needs langchain-core: pip install 'citewise[langchain]' ({e})"
    ) from None
from pydantic import ConfigDict, PrivateAttr

from citewise.core import Document, Principal
from citewise.integrations.common import make_filters, open_citewise, principal_of, result_metadata, to_document


class CitewiseRetriever(BaseRetriever):
    """LangChain ``BaseRetriever`` over citewise search (see module docstring).

    Attributes:
        citewise: an open :class:`citewise.api.Citewise` (or give ``index``).
        index: an index folder, opened read-only when ``citewise`` is not given.
        k: documents per query.
        retriever: citewise retriever name (None: the index's ``search.retriever`` setting).
        principal / groups: who searches (permissions applied inside the query).
        filters: metadata filter expressions (``"department=finance"``, ``"date>=2025-01-01"``).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    citewise: Any = None
    index: str | None = None
    k: int = 5
    retriever: str | None = None
    principal: Principal | None = None
    groups: list[str] | None = None
    filters: list[str] | None = None
    _cw: Any = PrivateAttr(default=None)

    def model_post_init(self, context: Any) -> None:
        self._cw = open_citewise(self.citewise, self.index)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[LCDocument]:
        k = int(kwargs.get("k", self.k))
        principal = principal_of(kwargs.get("principal", self.principal), kwargs.get("groups", self.groups))
        filters = make_filters(kwargs.get("filters", self.filters))
        results = self._cw.search(
            query, principal, k=k, retriever=kwargs.get("retriever", self.retriever), filters=filters
        )
        return [LCDocument(page_content=r.text, metadata=result_metadata(r), id=r.chunk_id) for r in results]


def from_documents(docs: Iterable[LCDocument]) -> list[Document]:
    """LangChain documents as citewise documents (:func:`citewise.integrations.common.to_document`:
    id from ``metadata['source']`` or ``id``, fields from ``title`` / ``version`` / ``updated`` /
    ``permissions``, the rest metadata)."""
    return [to_document(d.page_content, {**({"id": d.id} if d.id else {}), **d.metadata}) for d in docs]
