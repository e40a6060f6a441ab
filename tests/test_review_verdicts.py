"""Reviewer verdicts (relevance judgments recorded in `proctor review`) over HTTP against a real server: a verdict
keeps the digests of the query and passage texts it was given on, so a replaced text makes it stale (out of
`/judgments.qrels` and `calibrate --qrels reviewers`, shown as stale); a form shown before a text changed, or
before another reviewer's verdict on the same pair, is refused with 409; a pair outside the query's pool with
400. Every refused POST leaves the store's dump as it was."""

from __future__ import annotations

import http.cookiejar
import json
import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from conftest import seed_demo, store_dump
from fake_openai import FakeOpenAI
from inprocess import run_in_thread
from proctor.grading.pool import judgment_pool
from proctor.store import Store
from test_review import Server


class Reviewer:
    """A browser as far as the server can tell: its own cookies (session, reviewer name) and the forms it was
    shown."""

    def __init__(self, server: Server, name: str) -> None:
        self.server = server
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        page = self.get("/")[1]
        assert self.post("/reviewer", {"csrf": _csrf(page), "reviewer": name, "next": "/"})[0] == 200

    def get(self, path: str) -> tuple[int, str]:
        return self._open(urllib.request.Request(self.server.url + path))

    def post(self, path: str, fields: dict[str, str]) -> tuple[int, str]:
        data = urllib.parse.urlencode(fields).encode()
        return self._open(urllib.request.Request(self.server.url + path, data=data, method="POST"))

    def _open(self, request) -> tuple[int, str]:
        try:
            with self.opener.open(request) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def verdict_form(self, qid: str, pid: str) -> dict[str, str]:
        """The judgment form of a cell page, as the page renders it (every hidden field)."""
        status, page = self.get(f"/cell?q={qid}&p={pid}&k=")
        assert status == 200, page
        form = page[page.index('id="judge"'):]
        form = form[:form.index("</form>")]
        fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))
        return {k: v.replace("&amp;", "&") for k, v in fields.items()}

    def judge(self, form: dict[str, str], relevance: int) -> tuple[int, str]:
        return self.post("/judgment", {**form, "relevance": str(relevance)})


def _csrf(page: str) -> str:
    return re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)


@pytest.fixture(scope="module")
def graded_template(tmp_path_factory) -> Path:
    """The demo store graded by the test server (copied for each test)."""
    root = tmp_path_factory.mktemp("verdicts")
    store = seed_demo(root)
    with FakeOpenAI() as llm:
        graded = run_in_thread("grade", "--store", store, "--method", "self-rating", "--llm", "openai:judge",
                               "--base-url", llm.base_url)
    assert graded.code == 0, graded.err
    return store


@pytest.fixture
def served(graded_template, tmp_path):
    """A copy of the graded demo store and a review server over it."""
    store = tmp_path / "s.db"
    shutil.copyfile(graded_template, store)
    shutil.copytree(graded_template.parent / "collection", tmp_path / "collection")
    server = Server(store, in_process=True)
    try:
        yield store, server
    finally:
        server.stop()


def _replace(store: Path, kind: str, record: str) -> None:
    path = store.parent / f"changed.{'jsonl' if kind == 'corpus' else 'tsv'}"
    path.write_text(record + "\n")
    result = run_in_thread("import", kind, path, "--store", store, "--replace")
    assert result.code == 0, result.err


REPLACED = [
    ("corpus", '{"id": "d101", "text": "Bees make honey from nectar (a corrected passage)."}', "passage"),
    ("queries", "q1\thow do honey bees make honey", "query"),
]


@pytest.mark.parametrize(("kind", "record", "which"), REPLACED, ids=["passage text", "query text"])
def test_a_form_shown_before_a_text_changed_is_refused_and_an_older_verdict_goes_stale(served, kind, record,
                                                                                       which):
    store, server = served
    alice = Reviewer(server, "alice")
    given = alice.judge(alice.verdict_form("q1", "d101"), 3)
    assert given[0] == 200 and alice.get("/judgments.qrels")[1] == "q1 0 d101 3\n"
    shown = alice.verdict_form("q1", "d101")
    _replace(store, kind, record)
    before = store_dump(store)
    status, page = alice.judge(shown, 0)
    assert status == 409 and "the texts changed since this page was shown" in page, page
    assert store_dump(store) == before
    # the verdict given on the old text is stale: in no qrels, not in calibrate, shown as stale
    assert alice.get("/judgments.qrels")[1] == ""
    cell = alice.get("/cell?q=q1&p=d101&k=")[1]
    assert f"stale: the {which} text changed since it was given" in cell
    calibrated = run_in_thread("calibrate", "--store", store, "--qrels", "reviewers", "--budget", "1")
    assert calibrated.code == 2 and "holds no reviewer judgments" in calibrated.err
    assert "1 stale verdicts left out" in calibrated.err
    # judged again on the new text: valid again
    assert alice.judge(alice.verdict_form("q1", "d101"), 1)[0] == 200
    assert alice.get("/judgments.qrels")[1] == "q1 0 d101 1\n"


def _outside_pool(store: Path) -> tuple[str, str, str]:
    """A query, a passage of another query's pool that no run ranks for it, no judgment names and no grade set
    graded for it, and that other query."""
    opened = Store.open(store)
    try:
        pool = judgment_pool(opened)
        for qid, mine in pool.items():
            for other, pid in ((o, p) for o, ps in pool.items() if o != qid for p in ps):
                if pid not in mine and not opened.review.graded_pair(qid, pid):
                    return qid, pid, other
    finally:
        opened.close()
    raise AssertionError("every passage is in every pool")


def test_a_pair_outside_the_querys_pool_is_refused(served):
    store, server = served
    qid, pid, own = _outside_pool(store)
    alice = Reviewer(server, "alice")
    form = alice.verdict_form(own, pid)  # a real form of the passage, on the query whose pool holds it
    before = store_dump(store)
    status, page = alice.judge({**form, "query_id": qid}, 3)
    assert status == 400 and f"passage {pid} is not in the pool of query {qid}" in page, page
    assert store_dump(store) == before
    assert alice.get("/judgments.qrels")[1] == ""


def test_a_form_that_does_not_say_what_it_showed_is_refused(served):
    store, server = served
    alice = Reviewer(server, "alice")
    form = alice.verdict_form("q1", "d101")
    before = store_dump(store)
    for missing in ("texts", "verdict"):
        status, page = alice.judge({k: v for k, v in form.items() if k != missing}, 2)
        assert status == 400 and "the form does not say what it showed" in page, page
    assert store_dump(store) == before


def test_a_second_reviewer_on_a_stale_view_gets_409_not_a_silent_last_win(served):
    store, server = served
    alice, bob = Reviewer(server, "alice"), Reviewer(server, "bob")
    alice_form, bob_form = alice.verdict_form("q1", "d102"), bob.verdict_form("q1", "d102")
    assert alice.judge(alice_form, 3)[0] == 200
    before = store_dump(store)
    status, page = bob.judge(bob_form, 0)
    assert status == 409 and "another reviewer judged this passage first" in page, page
    assert "alice recorded relevance 3" in page and '<span id="mine">0</span>' in page
    assert store_dump(store) == before
    assert alice.get("/judgments.qrels")[1] == "q1 0 d102 3\n"
    # alice again from her old page is refused too: her own verdict came after it was shown
    assert alice.judge(alice_form, 2)[0] == 409
    # bob reloads, sees alice's verdict, and disagrees on purpose: recorded
    assert bob.judge(bob.verdict_form("q1", "d102"), 0)[0] == 200
    assert alice.get("/judgments.qrels")[1] == "q1 0 d102 0\n"
    opened = Store.open(store)
    assert [e["after"]["relevance"] for e in reversed(opened.review.audit()) if e["action"] == "judge"] == [3, 0]
    opened.close()


def test_verdicts_of_a_schema_5_store_are_judged_by_when_their_texts_were_imported(graded_template, tmp_path):
    """A store of schema 5 kept no digests: after the migration a verdict counts unless an import wrote its query
    or passage text after it; read-only, the store is read as it is with the same rule."""
    from conftest import raw_script

    store = tmp_path / "s.db"
    shutil.copyfile(graded_template, store)
    raw_script(store, "DROP TABLE review_judgment_texts", "UPDATE meta SET value = '5' WHERE key = 'schema_version'",
               "INSERT INTO review_judgments (query_id, passage_id, relevance, reviewer, at) VALUES"
               " ('q1', 'd101', 3, 'old', '2000-01-01T00:00:00+00:00'), ('q1', 'd102', 2, 'old', '2999-01-01')")
    reader = Store.open(store, read_only=True)
    assert reader.schema.version() == 5
    assert json.dumps(reader.review.review_judgments()) == json.dumps({"q1": {"d102": {
        "relevance": 2, "reviewer": "old", "at": "2999-01-01"}}})
    assert set(reader.review.stale_review_judgments()["q1"]) == {"d101"}
    reader.close()
    migrated = Store.open(store)
    assert migrated.schema.version() == 7 and "review_judgment_texts" in migrated.schema.names()
    assert set(migrated.review.review_judgments()["q1"]) == {"d102"}
    migrated.close()


def test_a_passage_whose_verdict_went_stale_comes_back_to_the_review_queue(graded_template, tmp_path):
    from proctor import api

    store_path = tmp_path / "s.db"
    shutil.copyfile(graded_template, store_path)
    store = api.open_store(store_path)
    try:
        first = api.review_queue(store, min_grade=3, limit=100)["items"][0]
        pair = (first["query_id"], first["passage_id"])
        with store.transaction():
            store.review.add_review_judgment(*pair, 2, "alice", None)
        queued = {(i["query_id"], i["passage_id"]) for i in api.review_queue(store, min_grade=3, limit=100)["items"]}
        assert pair not in queued
        with store.transaction():
            store.corpus.upsert_passages([(pair[1], "A corrected text of the passage.")])
        again = api.review_queue(store, min_grade=3, limit=100)
        assert pair in {(i["query_id"], i["passage_id"]) for i in again["items"]} and again["reviewed"] == 0
        assert store.review.stale_review_judgments()[pair[0]][pair[1]]["stale"] == "the passage text changed since"
    finally:
        store.close()
