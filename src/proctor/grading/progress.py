"""Progress on standard error: a bar (tqdm) when it is a terminal, otherwise one log line every N seconds
(pairs done of all, rate, failures, ETA) — for runs under nohup, Slurm, CI or a pipe."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

LOG_EVERY = 30.0
"""Seconds between progress log lines when standard error is not a terminal."""


class Progress:
    """Counts what the engine did and shows it."""

    def __init__(self, total: int, enabled: bool | None = None, label: str = "grading",
                 every: float | None = LOG_EVERY, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.label = label
        self.done = self.failures = self.tokens = self.cached = self.calls = 0
        self.clock = clock
        """Seconds from a monotonic origin (injectable, so tests need not wait)."""
        self.started = self.logged = clock()
        self.stream = stream or sys.stderr
        bar = self.stream.isatty() if enabled is None else enabled
        self.every = every if enabled is None and not bar else None
        """Log lines instead of a bar: when not asked either way and standard error is not a terminal."""
        self.bar = None
        if bar:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=label, unit="pair", file=self.stream, dynamic_ncols=True,
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
        elif self.every is not None and self.clock() - self.logged >= self.every:
            self.log()

    def log(self) -> None:
        """One progress line: done of total, rate, failures, cache hits, ETA."""
        self.logged = self.clock()
        elapsed = self.elapsed
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = max(self.total - self.done, 0)
        eta = _duration(left / rate) if rate > 0 else "unknown"
        share = f" ({100 * self.done / self.total:.1f}%)" if self.total else ""
        print(f"proctor: {self.label}: {self.done}/{self.total} pairs{share}, {rate:.1f} pairs/s, "
              f"{self.failures} failed, {self.cached} from the cache, elapsed {_duration(elapsed)}, ETA {eta}",
              file=self.stream, flush=True)

    def close(self) -> None:
        """Finish the bar (or write the last log line when any was written)."""
        if self.bar is not None:
            self.bar.close()
        elif self.every is not None and self.done and self.elapsed >= self.every:
            self.log()

    @property
    def elapsed(self) -> float:
        """Seconds since the start."""
        return self.clock() - self.started


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"
