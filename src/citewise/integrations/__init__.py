"""Framework adapters: citewise retrieval where users already work.

* :mod:`citewise.integrations.langchain`: ``CitewiseRetriever``, a LangChain ``BaseRetriever``
  (extra ``langchain``);
* :mod:`citewise.integrations.llama_index`: ``CitewiseRetriever``, a LlamaIndex ``BaseRetriever``
  (extra ``llama-index``);
* :mod:`citewise.integrations.haystack`: ``CitewiseRetriever``, a Haystack ``@component``
  (extra ``haystack``).

Each returns the framework's documents with the chunk text and the fields of
:class:`citewise.core.SearchResult` as metadata, searches as a given principal (permissions
applied inside the store's query, as everywhere), and takes metadata filters (citewise
expressions such as ``department=finance`` or the framework's own filter objects). Each module
also turns the framework's documents into citewise documents for
:meth:`citewise.ingest.Ingestor.ingest_documents` (:func:`citewise.integrations.common.to_document`).
docs/integrations.md has an example per framework.
"""
