"""One TLS context for every HTTP client citewise makes (chat, embeddings, rerank, web search).

``httpx.Client()`` builds a new ``ssl.SSLContext`` and loads the whole CA bundle into it each
time a client is made, even for an ``http://`` URL (about 40 ms of CPU a client); the context is
built once per process here and shared, which an ``SSLContext`` allows between clients and
threads. Verification is httpx's default: certifi's CA bundle, or ``SSL_CERT_FILE`` /
``SSL_CERT_DIR`` when set (read when the context is first built).
"""

from __future__ import annotations

import functools
import ssl


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The process's verifying TLS context (``httpx.create_ssl_context()``, built on first use);
    pass it as ``verify=`` to ``httpx.Client``."""
    import httpx

    return httpx.create_ssl_context()
