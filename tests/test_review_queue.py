"""The review app's "to review" queue: the pairs a passage decides are checked by flipping its label and
recomputing the leaderboard; an ensemble's disagreeing cells come first; a verdict recorded from the queue is a
reviewer judgment that leaves the queue and feeds `calibrate --qrels reviewers` (a real server and chromium)."""

from __future__ import annotations

import shutil
from itertools import combinations
from pathlib import Path

import pytest

from conftest import seed_demo
from fake_openai import FakeOpenAI
from inprocess import copy_store
from proctor import api
from proctor.api.labels import grade_set_of
from proctor.evaluate.leaderboard import measure_leaderboard
from proctor.evaluate.measures import parse_measure
from proctor.trust.review_queue import deciding_passages, review_queue
from test_ensembles import V2  # the second wording
from test_review import Server, _follow, _page, browser  # noqa: F401  (the module's chromium fixture)


def _order(scores: dict[str, float], a: str, b: str) -> int:
    """The pair's order by score; scores equal up to float rounding are ties (they are exact fractions)."""
    x, y = round(scores[a], 9), round(scores[b], 9)
    return (x > y) - (x < y)


def test_the_pairs_a_passage_decides_are_those_its_flipped_label_reorders(dl19_store):
    store = api.open_store(dl19_store)
    labels = api.labels(store).qrels
    labels = {q: labels[q] for q in sorted(labels)[:3]}
    ranked = store.corpus.ranked_lists()
    store.close()
    p20, tau = parse_measure("P@20"), 3
    before = measure_leaderboard(ranked, labels, p20, tau).scores()
    systems = sorted(before)
    decided = deciding_passages(ranked, labels, tau, 20)
    assert decided  # DL19's close pairs make some passages decisive
    pool = {(q, p) for run in ranked.values() for q in labels for p in run.get(q, [])[:20]}
    for qid, pid in sorted(pool):
        flipped = {q: dict(per) for q, per in labels.items()}
        flipped[qid][pid] = 0 if labels[qid].get(pid, 0) >= tau else tau
        after = measure_leaderboard(ranked, flipped, p20, tau).scores()
        changed = {frozenset(pair) for pair in combinations(systems, 2)
                   if _order(before, *pair) != _order(after, *pair)}
        assert {frozenset(pair) for pair in decided.get((qid, pid), [])} == changed, (qid, pid)


def _ensemble(folder: Path) -> tuple[Path, str]:
    """The demo store graded with two prompt versions by the test server, and their mean ensemble."""
    from proctor.cli import main

    store = seed_demo(folder)
    template = folder / "v2.yaml"
    template.write_text(V2)
    with FakeOpenAI() as server:
        for extra in ([], ["--template", str(template)]):
            assert main(["grade", "--store", str(store), "--method", "self-rating", "--llm", "openai:judge",
                         "--base-url", server.base_url, *extra]) == 0
    opened = api.open_store(store)
    members = [s.id for s in opened.grades.grade_sets()]
    made = api.ensemble(opened, members, "mean")
    opened.close()
    return store, made["grade_set"]["id"]


@pytest.fixture(scope="module")
def ensemble_template(tmp_path_factory) -> tuple[Path, str]:
    """The ensemble store made once for the module, before its chromium starts (whose event loop would be running
    on this thread); each test writes to a copy of its own."""
    return _ensemble(tmp_path_factory.mktemp("queue"))


def _copy_of(template: tuple[Path, str], folder: Path) -> tuple[Path, str]:
    store, eid = template
    shutil.copytree(store.parent / "collection", folder / "collection")
    return copy_store(store, folder / store.name), eid


@pytest.fixture
def ensemble_store(ensemble_template, tmp_path) -> tuple[Path, str]:
    return _copy_of(ensemble_template, tmp_path)


@pytest.fixture
def served_store(ensemble_template, tmp_path) -> tuple[Path, str]:
    """A copy of the ensemble store, for the review server."""
    return _copy_of(ensemble_template, tmp_path)


def test_the_queue_puts_disagreeing_members_first_and_leaves_reviewed_passages_out(ensemble_store):
    path, eid = ensemble_store
    store = api.open_store(path)
    grade_set = grade_set_of(store, api.LabelChoice(grade_set=eid))
    queue = api.review_queue(store, eid, min_grade=4, limit=100)
    items = queue["items"]
    assert items and queue["queued"] == len(items) and queue["reviewed"] == 0
    assert [i["priority"] for i in items] == sorted((i["priority"] for i in items), reverse=True)
    widest = max(i["spread"] for i in items)
    assert items[0]["spread"] == widest == 5 and "ensemble members disagree by 5" in items[0]["reasons"][0]
    for i in items:
        at = 1.0 if i["label"] in (3, 4) else 0.5 if i["label"] in (2, 5) else 0.0
        assert i["priority"] == pytest.approx(i["decided"] + i["spread"] / 5 + at)
    store.review.add_review_judgment(items[0]["query_id"], items[0]["passage_id"], 2, "tester", eid)
    again = review_queue(store, grade_set, min_grade=4, limit=100)
    assert again["reviewed"] == 1 and len(again["items"]) == len(items) - 1
    assert (items[0]["query_id"], items[0]["passage_id"]) not in {(i["query_id"], i["passage_id"])
                                                                  for i in again["items"]}
    store.close()


@pytest.mark.slow
def test_a_verdict_from_the_queue_page_is_a_reviewer_judgment_that_feeds_calibrate(served_store, browser,  # noqa: F811
                                                                                   tmp_path):
    path, eid = served_store
    server = Server(path, in_process=True)
    try:
        page = _page(browser, server, "alice")
        _follow(page, "nav a:text('To review')")
        page.goto(f"{server.url}/to-review?gs={eid}")
        rows = page.locator("#to-review tbody tr")
        assert rows.count() == 24 and "ensemble members disagree by 5" in rows.nth(0).inner_text()
        page.screenshot(path=str(tmp_path / "to-review.png"))
        first = rows.nth(0).locator("td").nth(2).inner_text()
        rows.nth(0).locator("select[name=relevance]").select_option("3")
        _follow(page, rows.nth(0).locator("button"))
        assert "/to-review" in page.url and page.locator("#to-review tbody tr").count() == 23
        assert first not in page.locator("#to-review").inner_text().split()
    finally:
        server.stop()
    store = api.open_store(path)
    reviewed = store.review.review_judgments()
    store.close()
    assert [(p, v["relevance"], v["reviewer"]) for per in reviewed.values() for p, v in per.items()] == [
        (first, 3, "alice")]
    store = api.open_store(path)
    calibrated = api.calibrate(store, eid, qrels="official+reviewers", budgets=[1], repeats=2)
    store.close()
    assert calibrated["judgments"].startswith("official judgments, reviewer verdicts")
