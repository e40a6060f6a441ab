"""What a reviewer reads in `proctor review` about verdicts, read in chromium as a person sees it (inner text, not
HTML): the Calibration page with no, one and several reviewer-judged topics (a refusal is a sentence that says what
to do; the leaderboard says what it rests on), a stale verdict on the cell page and in the query matrix, the 409
pages (who, what, when, the verdict not recorded, a way back), and a cell page opened without a question."""

from __future__ import annotations

import pytest

from inprocess import run_in_thread
from test_review import Server, _follow, _page, browser  # noqa: F401  (the module's chromium fixture)
from test_review_verdicts import graded_template, served  # noqa: F401  (the graded demo store, served)


def _judge(page, server: Server, qid: str, pid: str, relevance: int) -> None:
    page.goto(f"{server.url}/cell?q={qid}&p={pid}&k=")
    page.select_option("#judge select[name=relevance]", str(relevance))
    _follow(page, "#judge button")


def _replace_passage(store, pid: str) -> str:
    path = store.parent / "corrected.jsonl"
    path.write_text(f'{{"id": "{pid}", "text": "Bees make honey from nectar (a corrected passage)."}}\n')
    result = run_in_thread("import", "corpus", path, "--store", store, "--replace")
    assert result.code == 0, result.err
    return str(path)


@pytest.mark.slow
def test_the_calibration_page_says_why_it_refuses_and_what_its_numbers_rest_on(served, browser):  # noqa: F811
    store, server = served
    page = _page(browser, server, "alice")

    def shown() -> str:
        page.goto(server.url + "/calibration")
        return page.locator("main").inner_text()

    text = shown()
    assert "No topic has a reviewer verdict yet: a prediction-powered leaderboard needs verdicts on at least 2 " \
           "topics" in text and "Record verdicts on passages of 2 more topics" in text
    _judge(page, server, "q1", "d101", 2)
    text = shown()
    assert "Only 1 topic (q1) has reviewer verdicts" in text and "of 1 more topic (e.g. from To review)" in text
    for pid in ("d201", "d202"):
        _judge(page, server, "q2", pid, 3)
    text = shown()
    # the run `partial` ranks passages of q1 and q3 only, one judged topic: left out, and the page says so
    assert page.locator("#calibration tbody tr").all_inner_texts()[0].split("\t")[:2] == ["1", "middling"]
    assert page.locator("#calibration tbody tr").count() == 3
    assert page.locator(".calibration-note").inner_text() == \
        "left out, fewer than 2 judged topics scored: partial"
    counts = page.locator("#calibration-counts").inner_text()
    assert counts.startswith("Rests on 3 reviewer verdicts on 2 of 4 topics (q1, q2), a verdict ≥ 1 counting as "
                             "relevant; the judge: grade set ")
    assert "label ≥ 4, on all 4 topics; 95% intervals" in counts
    assert page.locator("#calibration-method").inner_text().startswith("Method: prediction-powered inference")
    headers = page.locator("#calibration thead th").all_inner_texts()
    assert [" ".join(h.split()) for h in headers[2:]] == [
        "corrected all 4 topics", "95% interval", "weight on the judge", "judge only all 4 topics",
        "reviewers only 2 judged topics", "95% interval", "rank interval"]
    _replace_passage(store, "d101")  # q1's only verdict goes stale: one judged topic again
    text = shown()
    assert "Only 1 topic (q2) has reviewer verdicts" in text
    assert "1 stale verdict (given on a text replaced since) is left out." in text
    assert "Traceback" not in text and "human_topics" not in text
    _judge(page, server, "q1", "d102", 1)
    _judge(page, server, "q3", "d301", 1)
    shown()
    assert page.locator("#calibration-counts").inner_text().endswith(
        "(1 stale verdicts left out: their texts were replaced since).")
    partial = page.locator("#calibration tbody tr", has_text="partial").locator("td").nth(1)
    assert partial.inner_text() == "partial (2 topics, 2 judged)"  # scored on the topics it ranks, and says so
    assert page.locator("#calibration-partial").inner_text().startswith("A system that ranks passages of fewer")


@pytest.mark.slow
def test_409_pages_and_stale_verdicts_say_who_what_and_when(served, browser):  # noqa: F811
    store, server = served
    alice, bob = _page(browser, server, "alice"), _page(browser, server, "bob")
    cell = f"{server.url}/cell?q=q1&p=d102&k="
    bob.goto(cell)
    _judge(alice, server, "q1", "d102", 3)
    bob.select_option("#judge select[name=relevance]", "0")
    _follow(bob, "#judge button")
    conflict = bob.locator("main").inner_text()
    assert "alice recorded relevance 3 (perfectly relevant) for passage d102 (query q1) at " in conflict
    assert "was shown. Reload the page" in conflict  # sentences apart, not "shown.Reload"
    assert "Your verdict (bob), not recorded: relevance 0 (not relevant) for passage d102 (query q1)." in conflict
    _follow(bob, "#back")
    assert "/cell?" in bob.url and "3 by alice at " in bob.locator("main").inner_text()
    path = _replace_passage(store, "d102")  # bob's page was shown before the text changed
    bob.select_option("#judge select[name=relevance]", "1")
    _follow(bob, "#judge button")
    conflict = bob.locator("#conflict").inner_text()
    assert conflict.startswith(f"The passage text of passage d102 for query q1 was replaced after the page you judged "
                               f"on was shown, by import corpus {path} at ")
    alice.goto(cell)
    stale = alice.locator("main").inner_text()
    assert "3 by alice at " in stale and " stale: the passage text changed since it was given, so it counts nowhere" \
        in stale and "+00:00stale" not in stale
    alice.goto(server.url + "/query/q1")
    row = alice.locator("#matrix tbody tr", has=alice.locator("th.pid", has_text="d102"))
    reviewer = row.locator("td").nth(2)
    assert reviewer.inner_text() == "3 stale" and reviewer.locator("s").inner_text() == "3"
    assert reviewer.get_attribute("title").startswith("3 by alice at ")
    assert "stale: the passage text changed since it was given; it counts nowhere" in reviewer.get_attribute("title")


@pytest.mark.slow
def test_a_cell_page_without_a_question_shows_no_prompt_and_unknown_ids_are_refused(served, browser):  # noqa: F811
    _, server = served
    page = _page(browser, server, "alice")
    page.goto(f"{server.url}/cell?q=q1&p=d103&k=")
    assert page.locator("h1").inner_text() == "Passage d103 (query q1)"
    assert page.locator("#prompt").count() == 0 and page.locator("#cell-question").count() == 0
    assert page.locator("#no-question").inner_text().startswith("No question chosen")
    for wanted, said in (("q=q1&p=nope&k=", "the store has no passage nope"),
                         ("q=q9&p=d103&k=", "the store has no query q9"),
                         ("q=q1&p=d103&k=q1/nope", "the store has no question q1/nope")):
        response = page.goto(f"{server.url}/cell?{wanted}")
        assert response.status == 400 and page.locator("#message").inner_text() == said
