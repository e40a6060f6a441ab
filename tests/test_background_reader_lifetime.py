"""The forked background reader of `import exampp` dies with its parent: a `kill -9` of the importing process, at
any moment of the reading, leaves no reader alive (holding the input file and the deleted store open)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proctor.io import background

pytestmark = pytest.mark.skipif(not background.background_available(), reason="no fork here")

ROOT = Path(__file__).resolve().parents[1]
DEADLINE = 60.0


def _line(q: int | str, passages: int) -> str:
    qid = f"q{q}"
    return json.dumps([qid, [{
        "paragraph_id": f"p{q}-{p}", "text": f"passage {p} of {qid} " + "word " * 80,
        "paragraph_data": {"judgments": [], "rankings": [{"method": "run", "queryId": qid, "rank": p + 1,
                                                          "score": 1.0 / (p + 1)}]},
        "exam_grades": [{"llm": "m", "prompt_info": {"is_self_rated": True, "prompt_class": "P"},
                         "self_ratings": [{"question_id": f"{qid}/{k}", "self_rating": (p + k) % 6} for k in range(8)],
                         "answers": [[f"{qid}/{k}", "ans"] for k in range(8)]}]} for p in range(60)]])


@pytest.fixture(scope="module")
def big_exampp(tmp_path_factory) -> Path:
    """An exam_pp file well above the size read in the background."""
    path = tmp_path_factory.mktemp("big") / "big.jsonl"
    line = _line("@", 60)  # each query's line is this one with its number for @ (which nothing else holds)
    with path.open("w") as out:
        out.writelines(line.replace("@", str(q)) + "\n" for q in range(400))
    assert path.stat().st_size > 8 * background.MIN_BYTES
    return path


def _group(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def _has_children(pid: int) -> bool:
    """Whether process `pid` has a child process (of any of its threads): cheap, where a scan of /proc is not."""
    try:
        return any((task / "children").read_text().strip() for task in Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return False


def _position(pid: int, path: Path) -> int | None:
    """How far process `pid` has read `path` (None while it has not opened it)."""
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            if os.readlink(fd) == str(path):
                info = Path(f"/proc/{pid}/fdinfo/{fd.name}").read_text()
                return int(info.split("pos:")[1].split()[0])
    except OSError:
        return None
    return None


def _until_read(proc: subprocess.Popen, condition, what: str):
    """Poll `condition` (how far the reader has read: /proc has no event for it) until it holds (returns its
    value) or the deadline passes; between two looks, wait on the importing process, which must not end first.
    A look every half millisecond: the reader's first pass over the input (4 MiB reads) goes from 86% to closed
    within ~3 ms, and a kill missed there waits for the slow second pass (~1.5 s more of the import's CPU)."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        try:
            status = proc.wait(0.0005)
        except subprocess.TimeoutExpired:
            continue
        raise AssertionError(f"the import ended (status {status}) before {what}")
    raise AssertionError(f"timed out waiting for {what}")


def _wait_dead(pid: int, what: str) -> None:
    """Wait until process `pid` has ended (its pidfd becomes readable: an event, no polling)."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        if not select.select([handle], [], [], DEADLINE)[0]:
            raise AssertionError(f"timed out waiting for {what}")
    finally:
        os.close(handle)


# the moment of the kill: the share of the input the reader has read by then (0: as soon as it exists)
MOMENTS = [0.0, 0.05, 0.3, 0.6, 0.9]


@pytest.mark.parametrize("share", MOMENTS, ids=[f"read {int(100 * m)}%" for m in MOMENTS])
def test_kill_9_of_the_import_leaves_no_reader_alive(big_exampp, tmp_path, share):
    proc = subprocess.Popen([sys.executable, "-m", "proctor", "import", "exampp", str(big_exampp), "--store",
                             str(tmp_path / "s.db")], cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    try:
        size = big_exampp.stat().st_size

        readers: list[int] = []  # the group's processes that have the input open, once one has been seen

        def reader_far_enough() -> int | None:
            """The reader, once it has read `share` of the input. The whole of /proc is scanned only once the
            import has a child process and only until a process of the group has the input open; from then on
            only that process's position is read (a scan of /proc every few milliseconds, through the import's
            start-up, costs the import the CPU it needs)."""
            if not readers and _has_children(proc.pid):
                readers.extend(pid for pid in _group(proc.pid)
                               if pid != proc.pid and _position(pid, big_exampp) is not None)
            for pid in readers:
                position = _position(pid, big_exampp)
                if position is not None and position >= share * size:
                    return pid
            if readers and all(_position(pid, big_exampp) is None for pid in readers):
                readers.clear()  # closed (or gone) between two looks: scan the group again
            return None

        reader = _until_read(proc, reader_far_enough, f"the reader read {share:.0%} of the input")
        proc.send_signal(signal.SIGKILL)
        proc.wait(DEADLINE)
        _wait_dead(reader, "the reader to die with its parent")
        assert _group(proc.pid) == []
    finally:
        for pid in _group(proc.pid):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
