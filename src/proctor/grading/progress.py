"""A progress bar on standard error: pairs/s, ETA, tokens and failures (tqdm; off when not a terminal
unless asked)."""

from __future__ import annotations

import sys
import time


class Progress:
    """Counts what the engine did and shows it."""

    def __init__(self, total: int, enabled: bool | None = None, label: str = "grading") -> None:
        self.total = total
        self.done = self.failures = self.tokens = self.cached = self.calls = 0
        self.started = time.monotonic()
        show = sys.stderr.isatty() if enabled is None else enabled
        self.bar = None
        if show:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=label, unit="pair", file=sys.stderr, dynamic_ncols=True,
                            smoothing=0.1)

    def update(self, pairs: int, failures: int = 0, tokens: int = 0, cached: int = 0, calls: int = 0) -> None:
        """Record finished pairs."""
        self.done += pairs
        self.failures += failures
        self.tokens += tokens
        self.cached += cached
        self.calls += calls
        if self.bar is not None:
            self.bar.update(pairs)
            self.bar.set_postfix(failures=self.failures, tokens=self.tokens, cached=self.cached, refresh=False)

    def close(self) -> None:
        """Finish the bar."""
        if self.bar is not None:
            self.bar.close()

    @property
    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.monotonic() - self.started
