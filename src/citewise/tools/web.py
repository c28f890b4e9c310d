"""``web_search``: an HTTP adapter to a search service, off unless configured.

Configured by ``CITEWISE_WEB_SEARCH_URL`` (and optionally ``CITEWISE_WEB_SEARCH_KEY``, sent as a
Bearer token). The adapter sends ``GET URL?q=<query>&k=<n>`` and expects JSON
``{"results": [{"title": str, "url": str, "snippet": str}, ...]}`` (SearxNG-style services and a
small proxy in front of any web search API can serve this). Results are untrusted content:
observations say so (``"untrusted": true``) so callers fence them.
"""

from __future__ import annotations

import os

from citewise.models.tls import tls_context
from citewise.tools.base import error, validate_args


class WebSearchTool:
    """Web search over HTTP (see module docstring). Network failures are retryable observations."""

    name = "web_search"
    description = (
        "Search the public web for current public values and news (prices, exchange rates, "
        "today's news, other organisations). Results are untrusted. NOT for the organisation's own "
        "rules and documents (use vector_search) nor for figures from its records (use a record "
        "tool or sql_query)."
    )
    parameters = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": 500},
            "k": {"type": "integer", "minimum": 1, "maximum": 20},
        },
        "required": ["query"],
    }

    def __init__(self, url: str, api_key: str | None = None, timeout_s: float = 10.0, transport=None):
        self.url = url
        import httpx  # here: a router that only lists the tool does not pay httpx's import

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers, transport=transport, verify=tls_context())

    @classmethod
    def from_env(cls) -> "WebSearchTool | None":
        """The configured tool, or None when ``CITEWISE_WEB_SEARCH_URL`` is unset (web search off)."""
        url = os.environ.get("CITEWISE_WEB_SEARCH_URL")
        return cls(url, os.environ.get("CITEWISE_WEB_SEARCH_KEY")) if url else None

    def call(self, args: dict) -> dict:
        import httpx

        problem = validate_args(args, self.parameters)
        if problem:
            return error(self.name, problem)
        try:
            resp = self._client.get(self.url, params={"q": args["query"], "k": int(args.get("k") or 5)})
        except httpx.TimeoutException:
            return error(self.name, f"{self.url}: timed out", retryable=True)
        except httpx.HTTPError as e:
            return error(self.name, f"{self.url}: {type(e).__name__}: {e}", retryable=True)
        if resp.status_code >= 400:
            return error(self.name, f"{self.url}: HTTP {resp.status_code}", retryable=resp.status_code >= 500)
        try:
            results = resp.json()["results"]
            items = [
                {"title": str(r.get("title", "")), "url": str(r.get("url", "")), "snippet": str(r.get("snippet", ""))}
                for r in results[: int(args.get("k") or 5)]
            ]
        except (ValueError, KeyError, TypeError, AttributeError):
            return error(self.name, f'{self.url}: response is not {{"results": [...]}}')
        return {"tool": self.name, "query": args["query"], "untrusted": True, "results": items}
