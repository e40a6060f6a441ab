"""Client-side rate limits (requests and tokens per minute) and capped exponential backoff with jitter."""

from __future__ import annotations

import asyncio
import random
import time


class RateLimiter:
    """A token bucket refilled continuously at `per_minute / 60` per second; `None` means unlimited."""

    def __init__(self, per_minute: float | None) -> None:
        self.rate = per_minute / 60.0 if per_minute else None
        self.capacity = per_minute or 0.0
        self.level = self.capacity
        self.updated = time.monotonic()
        self.lock = asyncio.Lock()

    async def acquire(self, amount: float = 1.0) -> None:
        """Wait until `amount` units are available, then take them."""
        if self.rate is None:
            return
        amount = min(amount, self.capacity)
        async with self.lock:
            while True:
                now = time.monotonic()
                self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
                self.updated = now
                if self.level >= amount:
                    self.level -= amount
                    return
                await asyncio.sleep((amount - self.level) / self.rate)


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random | None = None) -> float:
    """Full-jitter exponential backoff: uniform in [0, min(cap, base * 2**attempt)]."""
    return (rng or random).uniform(0, min(cap, base * (2 ** attempt)))
