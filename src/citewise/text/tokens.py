"""Token counting with OpenAI's ``o200k_base`` encoding, offline.

``quicktok-v1`` ships ``o200k_base`` byte-identical to tiktoken's vocabulary (tiktoken itself
downloads it at first use and fails offline). Counts are of ordinary text: special tokens in the
text are counted as plain text, as ``tiktoken.encode_ordinary`` does.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

import numpy as np

ENCODING = "o200k_base"


@lru_cache(maxsize=1)
def _encoding():
    import quicktok

    return quicktok.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    """Number of ``o200k_base`` tokens in ``text`` (0 for the empty string)."""
    if not text:
        return 0
    enc = _encoding()
    try:
        return enc.count(text)  # no token list built: ~1.6x faster than len(encode(text))
    except ValueError:  # not seen (count treats special-token text as plain text); to be safe
        return len(enc.encode_ordinary(text))


def count_tokens_batch(texts: Iterable[str]) -> np.ndarray:
    """Token counts for many texts at once; int64 array of shape (n,)."""
    import quicktok

    items = list(texts)
    if not items:
        return np.zeros(0, dtype=np.int64)
    return np.asarray(quicktok.count_batch(_encoding(), items), dtype=np.int64)


def truncate_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` with at most ``max_tokens`` tokens (decoded back to text)."""
    enc = _encoding()
    ids = enc.encode(text)
    if len(ids) <= max_tokens:
        return text
    return enc.decode(ids[:max_tokens])
