"""``vector_search``: the citewise retriever as a tool (the indexed documents: rules, how-to, definitions)."""

from __future__ import annotations

from citewise.core import Principal
from citewise.tools.base import error, validate_args


class VectorSearchTool:
    """Search the document index with a Retriever; observations carry chunk text and ids.

    Args:
        retriever: any citewise Retriever (``Index.retriever('shipped')``).
        store: the Store the retriever searches (for chunk text).
        principal: whose permissions apply (None = anonymous: public documents only).
        k: default number of hits; ``max_chars`` caps each chunk's text in the observation.

    ``call({"query": str, "k": int?})`` returns ``{"tool", "query", "hits": [{"doc_id",
    "chunk_id", "title", "score", "rank", "text"}]}``.
    """

    name = "vector_search"
    description = (
        "Search the indexed documents (policies, procedures, rules and their exceptions, "
        "definitions, how-to pages, error codes, release notes) and return cited passages. Use "
        "for rules, limits as documented, how-to, definitions and 'what does X mean'. NOT for "
        "figures from the records (counts, totals, a record's status): use a record tool or "
        "sql_query; NOT for current prices, rates or news: use web_search."
    )
    parameters = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": 2000, "description": "What to look for, in words."},
            "k": {"type": "integer", "minimum": 1, "maximum": 50, "description": "How many passages (default 5)."},
        },
        "required": ["query"],
    }

    def __init__(self, retriever, store, principal: Principal | None = None, k: int = 5, max_chars: int = 1200):
        self.retriever = retriever
        self.store = store
        self.principal = principal
        self.k = k
        self.max_chars = max_chars

    def call(self, args: dict) -> dict:
        problem = validate_args(args, self.parameters)
        if problem:
            return error(self.name, problem)
        try:
            hits = self.retriever.search(args["query"], int(args.get("k") or self.k), principal=self.principal)
            chunks = self.store.get_chunks([h.chunk_id for h in hits])
        except Exception as e:  # a failing store is an observation, not a crash
            return error(self.name, f"{type(e).__name__}: {e}", retryable=True)
        return {
            "tool": self.name,
            "query": args["query"],
            "hits": [
                {
                    "doc_id": h.doc_id,
                    "chunk_id": h.chunk_id,
                    "title": h.title,
                    "score": round(float(h.score), 6),
                    "rank": h.rank,
                    "text": (chunks[h.chunk_id].text[: self.max_chars] if h.chunk_id in chunks else ""),
                }
                for h in hits
            ],
        }
