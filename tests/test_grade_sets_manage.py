"""`proctor grade-sets list | drop ID --yes | retry-failed ID` (issue 18 item 12)."""

from __future__ import annotations

import json

from conftest import opened_store
from fake_openai import FakeOpenAI


def _grade(cli, store, server):
    return cli("grade", "--store", store, "--method", "self-rating", "--llm", "openai:m", "--base-url",
               server.base_url, "--max-retries", "0", "--max-attempts", "1", "--format", "json")



def test_list_retry_failed_and_drop(cli, demo_store):
    with FakeOpenAI(faults=lambda p, a: "empty" if a == 1 and len(p) % 3 == 0 else "ok") as server:
        first = json.loads(_grade(cli, demo_store, server).out)
        failed = first["failures"]
        assert 0 < failed < 72
        listing = json.loads(cli("grade-sets", "list", "--store", demo_store, "--format", "json").out)
        assert len(listing) == 1 and listing[0]["failures"] == failed
        assert listing[0]["steps"]["self-rating"]["failed"] == failed
        gid = listing[0]["id"]
        # given up after --max-attempts 1: a plain re-run sends nothing
        again = json.loads(_grade(cli, demo_store, server).out)
        assert again["graded_now"] == 0 and again["given_up"] == failed
        retry = cli("grade-sets", "retry-failed", gid[:6], "--store", demo_store)
        assert retry.code == 0 and f"{failed} failed grades forgotten" in retry.err
        asked = server.requests
        third = json.loads(_grade(cli, demo_store, server).out)
        assert third["graded_now"] == failed and third["failures"] == 0 and server.requests == asked + failed
    text = cli("grade-sets", "list", "--store", demo_store)
    assert gid in text.out and "number" in text.out
    refused = cli("grade-sets", "drop", gid, "--store", demo_store)
    assert refused.code == 2 and "--yes" in refused.err
    with opened_store(demo_store) as store:
        assert store.counts()["grades"] == 72
    dropped = cli("grade-sets", "drop", gid, "--yes", "--store", demo_store)
    assert dropped.code == 0 and "72 grades deleted" in dropped.err
    with opened_store(demo_store) as store:
        assert store.counts()["grades"] == 0 and store.grades.grade_sets() == []
        assert store.caches.cache_count() == 72  # cached replies stay
    unknown = cli("grade-sets", "drop", "ffff", "--yes", "--store", demo_store)
    assert unknown.code == 2 and "no grades" in unknown.err


def test_drop_is_refused_while_grading(cli, demo_store):
    with FakeOpenAI() as server:
        _grade(cli, demo_store, server)
    gid = json.loads(cli("grade-sets", "list", "--store", demo_store, "--format", "json").out)[0]["id"]
    with opened_store(demo_store) as store:  # process 1 of this host grades it
        assert store.grades.lock_grade_set(gid, 1, __import__("socket").gethostname(), lambda pid: True) is None
    refused = cli("grade-sets", "drop", gid, "--yes", "--store", demo_store)
    assert refused.code == 2 and "being graded by pid 1" in refused.err
