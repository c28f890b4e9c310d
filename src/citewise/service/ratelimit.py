"""Per-caller rate limit: a token bucket per key (the classic algorithm: a bucket of ``burst``
tokens refilled at ``rate`` tokens per second; a request takes one token or is refused).

Own code because it is twelve lines; a refused request learns how long to wait (``Retry-After``).
"""

from __future__ import annotations

import threading
import time


class TokenBuckets:
    """Token buckets by key.

    Args:
        rate: tokens added per second (sustained requests per second per key); 0 or less turns
            limiting off.
        burst: bucket size (requests allowed at once after a quiet period); at least 1.
        clock: seconds, monotonic (injectable for tests).
    """

    def __init__(self, rate: float, burst: int, clock=time.monotonic):
        self.rate = float(rate)
        self.burst = max(1, int(burst))
        self.clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, last refill time)

    def take(self, key: str) -> float:
        """Take one token for ``key``. Returns 0.0 when allowed, else the seconds until a token is
        available (the request must be refused)."""
        if self.rate <= 0:
            return 0.0
        now = self.clock()
        with self._lock:
            tokens, last = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate
