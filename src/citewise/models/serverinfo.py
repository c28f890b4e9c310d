"""What an OpenAI-compatible server says about its model: the context window, and the window
named in a context-overflow error.

Context window, first found wins:

1. llama.cpp server ``GET /props`` (at the server root, beside ``/v1``):
   ``default_generation_settings.n_ctx`` or ``n_ctx``;
2. ``GET {base_url}/models``, the entry of the configured model (else the only one):
   ``max_model_len`` (vLLM), ``context_length`` / ``context_window`` / ``max_context_length``
   (LM Studio, OpenRouter and others), ``meta.n_ctx`` and then ``meta.n_ctx_train`` (llama.cpp);
3. nothing: None (llama-cpp-python's server reports none; the window is then learned from its
   first context-overflow error, :func:`overflow_window`).

Context-overflow errors (HTTP 400) name the window in the server's words:
``This model's maximum context length is 2048 tokens`` (OpenAI, vLLM, llama-cpp-python),
``Requested tokens (2130) exceed context window of 2048`` (llama-cpp-python), a JSON ``n_ctx``
field (llama.cpp ``exceed_context_size_error``), ``context size (2048)``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

_WINDOW = [
    re.compile(r"maximum context length (?:is|of) (\d+)", re.I),
    re.compile(r"context window of (\d+)", re.I),
    re.compile(r'"n_ctx"\s*:\s*(\d+)'),
    re.compile(r"context (?:size|length|window) (?:of |is )?\(?(\d+)\)?", re.I),
]
_PROMPT = [
    re.compile(r"\((\d+) in the messages", re.I),
    re.compile(r"Requested tokens \((\d+)\)", re.I),
    re.compile(r'"n_prompt_tokens"\s*:\s*(\d+)'),
    re.compile(r"you requested (\d+) tokens", re.I),
]
_OVERFLOW = re.compile(
    r"context[_ ]length[_ ]exceeded|exceed_context_size|maximum context length|"
    r"exceeds? (?:the )?(?:available )?context|context window|too many tokens|prompt is too long",
    re.I,
)


def is_overflow(status: int, body: str) -> bool:
    """Whether an HTTP error is a context overflow (400/413 with one of the known messages)."""
    return status in (400, 413, 422) and bool(_OVERFLOW.search(body or ""))


def overflow_window(body: str) -> tuple[int | None, int | None]:
    """``(context window, prompt tokens)`` named in an overflow error body (None when not named).

    >>> overflow_window("This model's maximum context length is 2048 tokens. However, you requested "
    ...                 "2180 tokens (2130 in the messages, 50 in the completion).")
    (2048, 2130)
    """
    window = next((int(m.group(1)) for p in _WINDOW if (m := p.search(body or ""))), None)
    prompt = next((int(m.group(1)) for p in _PROMPT if (m := p.search(body or ""))), None)
    return window, prompt


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def window_from_models(data: Any, model: str) -> int | None:
    """The context window in a ``/v1/models`` body for ``model`` (module docstring, step 2)."""
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        return None
    entry = next((e for e in entries if isinstance(e, dict) and e.get("id") == model), None)
    if entry is None and len(entries) == 1 and isinstance(entries[0], dict):
        entry = entries[0]
    if entry is None:
        return None
    for key in ("max_model_len", "context_length", "context_window", "max_context_length"):
        if _int(entry.get(key)):
            return entry[key]
    meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
    return _int(meta.get("n_ctx")) or _int(meta.get("n_ctx_train"))


def window_from_props(data: Any) -> int | None:
    """The context window in a llama.cpp ``/props`` body."""
    if not isinstance(data, dict):
        return None
    dgs = data.get("default_generation_settings")
    return (_int(dgs.get("n_ctx")) if isinstance(dgs, dict) else None) or _int(data.get("n_ctx"))


def probe_window(client: httpx.Client, base_url: str, model: str) -> int | None:
    """Ask the server for its context window (module docstring); None when it does not say or
    cannot be reached (the caller then uses its default; a failure here is never an error)."""
    root = re.sub(r"/v\d+/?$", "", base_url.rstrip("/"))
    for url, read in (
        (root + "/props", window_from_props),
        (base_url.rstrip("/") + "/models", lambda d: window_from_models(d, model)),
    ):
        try:
            resp = client.get(url)
            if resp.status_code == 200:
                found = read(resp.json())
                if found:
                    return found
        except (httpx.HTTPError, ValueError, json.JSONDecodeError):
            continue
    return None
