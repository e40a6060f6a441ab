"""Progress when standard error is not a terminal (issue 18 item 11): a log line every N seconds with pairs
done, rate, failures and ETA; none with --no-progress."""

from __future__ import annotations

import io
import re
import time

from conftest import run_process
from fake_openai import FakeOpenAI
from proctor.grading.progress import Progress


def test_log_lines_instead_of_a_bar_off_a_terminal():
    stream = io.StringIO()
    progress = Progress(10, None, "self-rating · m", every=0.05, stream=stream)
    assert progress.bar is None
    progress.update(2, failures=1)
    assert stream.getvalue() == ""  # not yet N seconds
    time.sleep(0.06)
    progress.update(3)
    line = stream.getvalue().strip()
    assert re.fullmatch(r"proctor: self-rating · m: 5/10 pairs \(50\.0%\), [\d.]+ pairs/s, 1 failed, 0 from the "
                        r"cache, elapsed 0m00s, ETA 0m00s", line), line
    quiet = io.StringIO()
    off = Progress(10, False, every=0.0, stream=quiet)
    off.update(10)
    off.close()
    assert quiet.getvalue() == ""


def test_grade_logs_progress_to_a_pipe(demo_store):
    with FakeOpenAI(latency=0.02) as server:
        result = run_process("grade", "--store", demo_store, "--method", "self-rating", "--llm", "openai:m",
                             "--base-url", server.base_url, "--concurrency", "2", "--progress-every", "0.2")
    assert result.code == 0, result.err
    lines = [line for line in result.err.splitlines() if "pairs/s" in line and "ETA" in line]
    assert len(lines) >= 2, result.err
    done = [int(re.search(r"(\d+)/72 pairs", line).group(1)) for line in lines]
    assert done == sorted(done) and done[-1] == 72


def test_progress_every_must_be_positive(demo_store):
    result = run_process("grade", "--store", demo_store, "--method", "self-rating", "--llm", "openai:m",
                         "--progress-every", "0")
    assert result.code == 2 and "--progress-every" in result.err
