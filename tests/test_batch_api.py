"""`--llm openai-batch:MODEL` against a local test server with the files and batches endpoints: detach and
resume polling without submitting twice, grades equal to synchronous `openai:MODEL` (same grade set),
failed lines submitted again with --batch-wait."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from contextlib import closing

from conftest import ROOT
from fake_openai import FakeOpenAI, prompt_grade
from proctor.store import Store


def _batch(cli, store, server, *extra: str):
    result = cli("grade", "--store", store, "--method", "self-rating", "--llm", "openai-batch:m", "--base-url",
                 server.base_url, "--format", "json", *extra)
    assert result.code == 0, result.err
    return json.loads(result.out)


def _rows(path) -> dict:
    with closing(Store.open(path)) as store:
        [grade_set] = store.grades.grade_sets()
        return {grade_set.id: sorted(store.grades.grade_rows(grade_set.id, "self-rating"))}


def test_detached_batches_resume_polling_and_equal_synchronous_grades(cli, demo_store, tmp_path):
    direct = tmp_path / "direct.db"
    direct.write_bytes(demo_store.read_bytes())
    with FakeOpenAI() as server:
        assert cli("grade", "--store", direct, "--method", "self-rating", "--llm", "openai:m", "--base-url",
                   server.base_url).code == 0
        server.requests = 0
        server.hold_batches = True
        first = _batch(cli, demo_store, server)
        assert len(first["submitted"]) == 1 and first["open"] == first["submitted"]
        assert len(server.batches) == 1 and server.requests == 0
        again = _batch(cli, demo_store, server)  # interrupted or detached: polls, never submits again
        assert again["submitted"] == [] and again["open"] == first["submitted"] and len(server.batches) == 1
        server.hold_batches = False
        done = _batch(cli, demo_store, server)
        assert done["open"] == [] and done["batches"][first["submitted"][0]]["imported"]
        assert done["steps"][0]["graded_now"] == 72 and done["steps"][0]["failures"] == 0
        assert server.requests == 72  # every prompt answered once, inside the batch
        nothing = _batch(cli, demo_store, server)
        assert nothing["submitted"] == [] and nothing["batches"] == {} and len(server.batches) == 1
    assert _rows(demo_store) == _rows(direct)  # the same grade set, the same grades


def test_batch_wait_submits_failed_lines_again(cli, demo_store):
    def fail_first(prompt: str, attempt: int) -> str:
        return "500" if attempt == 1 and prompt_grade(prompt) == 0 else "ok"

    with FakeOpenAI(faults=fail_first) as server:
        data = _batch(cli, demo_store, server, "--batch-wait", "--batch-poll", "0.05")
        assert len(data["submitted"]) == 2 and len(server.batches) == 2 and data["open"] == []
    first, second = data["steps"]
    assert first["failures"] > 0 and second["graded_now"] == first["failures"] and second["failures"] == 0
    store = Store.open(demo_store)
    [grade_set] = store.grades.grade_sets()
    assert sum(1 for r in store.grades.grade_rows(grade_set.id, "self-rating") if r[3] is not None) == 72


def test_a_second_grade_during_the_submit_step_is_refused_not_submitted(cli, demo_store):
    """Two `grade --llm openai-batch:m` on one grade set, the first a process of its own: while it is uploading
    (the server holds its upload), the second is refused with a clear message; one batch is submitted, not two."""
    with FakeOpenAI() as server:
        args = ["grade", "--store", str(demo_store), "--method", "self-rating", "--llm", "openai-batch:m",
                "--base-url", server.base_url, "--format", "json"]
        server.hold_uploads = True
        first = subprocess.Popen([sys.executable, "-m", "proctor", *args], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        # should the second go on to upload, its upload is held too: released after a minute, it fails the test
        release = threading.Timer(60, setattr, (server, "hold_uploads", False))
        try:
            assert server.uploading.wait(60), "the first grade never reached its upload"
            release.start()
            second = cli(*args)
            assert server.uploads == 1, "the second grade went on to upload a batch of its own"
        finally:
            release.cancel()
            server.hold_uploads = False
            out, err = first.communicate(timeout=60)
        assert second.code == 2 and "Traceback" not in second.err, second.err
        assert f"is being graded by pid {first.pid}" in second.err
        assert first.returncode == 0, err
        data = json.loads(out)
        assert len(data["submitted"]) == 1 and data["steps"][0]["graded_now"] == 72 and len(server.batches) == 1
        after = _batch(cli, demo_store, server)  # run again: nothing left, nothing submitted
        assert after["submitted"] == [] and len(server.batches) == 1 and server.requests == 72
