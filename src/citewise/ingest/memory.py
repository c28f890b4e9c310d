"""Handing memory that an ingest stage freed back to the operating system.

CPython's objects of more than 512 bytes (a chunk's text), NumPy arrays and the Rust threads of
LanceDB take their memory from the C library's ``malloc``. glibc keeps what they free in its
heaps (one per thread that allocated, up to eight per core) for later reuse, so after chunking a
huge document, or after LanceDB's write threads buffered its rows, the process kept that memory
resident while the next stage (index building, on other threads) allocated more beside it.
``malloc_trim(0)`` returns the free pages of every heap to the system (glibc's ``madvise``
of whole free pages; the heaps' contents are not moved). Elsewhere (another C library, or not
Linux) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from functools import lru_cache


@lru_cache(maxsize=1)
def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None  # glibc only (musl has none)


def release_freed_memory() -> bool:
    """Return the C heaps' free pages to the system; True when glibc released any."""
    libc = _libc()
    if libc is None:
        return False
    return bool(libc.malloc_trim(0))
