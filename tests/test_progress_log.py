"""Progress when standard error is not a terminal: a log line every N seconds with pairs
done, rate, failures and ETA; none with --no-progress."""

from __future__ import annotations

import functools
import io
import re

from fake_openai import FakeOpenAI
from proctor.grading import engine
from proctor.grading.progress import Progress


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Ticking(Clock):
    """A clock that moves `step` seconds each time it is read: a run's progress lines come after so many reads,
    not after real waits."""

    def __init__(self, step: float) -> None:
        super().__init__()
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_log_lines_instead_of_a_bar_off_a_terminal():
    stream, clock = io.StringIO(), Clock()
    progress = Progress(10, None, "self-rating · m", every=30.0, stream=stream, clock=clock)
    assert progress.bar is None
    clock.now += 29.9
    progress.update(2, failures=1)
    assert stream.getvalue() == ""  # not yet N seconds
    clock.now += 0.1
    progress.update(3)
    assert stream.getvalue() == ("proctor: self-rating · m: 5/10 pairs (50.0%), 0.2 pairs/s, 1 failed, 0 from the "
                                 "cache, elapsed 0m30s, ETA 0m30s\n")
    clock.now += 29.0
    progress.update(1)
    assert stream.getvalue().count("\n") == 1  # the next line only N seconds after the last one
    clock.now += 1.0
    progress.close()
    assert stream.getvalue().splitlines()[-1].startswith("proctor: self-rating · m: 6/10 pairs (60.0%), 0.1 pairs/s")
    quiet = io.StringIO()
    off = Progress(10, False, every=0.0, stream=quiet)
    off.update(10)
    off.close()
    assert quiet.getvalue() == ""


def test_grade_logs_progress_to_a_pipe(demo_store, cli, monkeypatch):
    monkeypatch.setattr(engine, "Progress", functools.partial(Progress, clock=Ticking(0.1)))
    with FakeOpenAI() as server:
        result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", "openai:m",
                     "--base-url", server.base_url, "--concurrency", "2", "--progress-every", "0.2")
    assert result.code == 0, result.err
    lines = [line for line in result.err.splitlines() if "pairs/s" in line and "ETA" in line]
    assert len(lines) >= 2, result.err
    done = [int(re.search(r"(\d+)/72 pairs", line).group(1)) for line in lines]
    assert done == sorted(done) and done[-1] == 72


def test_progress_every_must_be_positive(demo_store, cli):
    result = cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", "openai:m",
                 "--progress-every", "0")
    assert result.code == 2 and "--progress-every" in result.err
