"""What a number rests on: every leaderboard carries a `coverage` object (queries, graded pairs / pool pairs,
systems that differ), and below the floor it warns on standard error and in reports."""

from __future__ import annotations

import json

import pytest

from inprocess import copy_store
from trust_fixture import tiny_store

# Two graded queries of 43; runs A and B rank two passages on q1, q2; B also ranks an ungraded passage.
RATINGS = {"q1": {"p1": 4, "p2": 1}, "q2": {"p1": 5, "p3": 0}}
RUNS = {"A": {"q1": ["p1", "p2"], "q2": ["p1", "p3"]},
        "B": {"q1": ["p2", "x9"], "q2": ["p3", "p1"]}}


@pytest.fixture(scope="module")
def sparse_template(tmp_path_factory):
    """The module's tiny store, built once: read only (`sparse` gives each test a copy)."""
    return tiny_store(tmp_path_factory.mktemp("tiny"), RATINGS, RUNS, queries=43,
                      judgments={"q1": {"p1": 1}, "q3": {"p2": 0}})


@pytest.fixture
def sparse(sparse_template, tmp_path):
    return copy_store(sparse_template, tmp_path / "s.db")


def test_a_leaderboard_from_2_graded_queries_of_43_warns_and_says_so(cli, sparse):
    r = cli("leaderboard", "--store", sparse, "--measure", "P@2", "--min-grade", "3", "--format", "json")
    assert r.code == 0
    assert "warning: rests on 2 of 43 queries (fewer than 10)" in r.err
    coverage = json.loads(r.out)["coverage"]
    assert coverage["queries"] == {"scored": 2, "with_grades": 2, "in_bank": None, "with_judgments": 2,
                                   "in_store": 43, "of": 43}
    assert coverage["below_floor"] is True and coverage["floor"] == {"min_queries": 10, "min_graded": 0.9}


def test_graded_and_pool_pairs_and_the_system_that_differs(cli, sparse):
    r = cli("leaderboard", "--store", sparse, "--measure", "P@2", "--min-grade", "3", "--format", "json",
            "--floor-queries", "0", "--floor-graded", "0.5")
    coverage = json.loads(r.out)["coverage"]
    # pool within depth 2: q1 {p1, p2, x9}, q2 {p1, p3} = 5 pairs, 4 of them graded
    assert coverage["pairs"] == {"graded": 4, "pool": 5, "depth": 2, "labelled_by": "graded", "fraction": 0.8,
                                 "pool_is": "the first 2 passages of every run"}
    assert coverage["warnings"] == [] and "warning" not in r.err
    strict = cli("leaderboard", "--store", sparse, "--measure", "P@2", "--min-grade", "3", "--format", "json",
                 "--floor-queries", "0")
    data = json.loads(strict.out)["coverage"]
    assert data["warnings"] == ["only 4 of 5 pool pairs graded (80.0%, under 90%)"]
    assert "warning: only 4 of 5 pool pairs graded" in strict.err
    assert data["per_system"] == {}  # 80% overall is itself under the floor: no system singled out
    depth1 = json.loads(cli("leaderboard", "--store", sparse, "--measure", "P@1", "--min-grade", "3", "--format",
                            "json", "--floor-queries", "0").out)["coverage"]
    assert depth1["pairs"]["pool"] == 4 and depth1["pairs"]["graded"] == 4  # top-1 only: p1, p2 | p1, p3


def test_official_judgments_count_judged_pairs(cli, sparse):
    r = cli("leaderboard", "--store", sparse, "--measure", "P@2", "--qrels", "official", "--format", "json")
    coverage = json.loads(r.out)["coverage"]
    assert coverage["queries"]["with_grades"] is None and coverage["queries"]["with_judgments"] == 2
    assert coverage["pairs"]["labelled_by"] == "judged" and coverage["pairs"]["graded"] == 1
    assert "pool pairs judged" in r.err


def test_cover_leaderboard_has_coverage(cli, sparse):
    r = cli("leaderboard", "--store", sparse, "--metric", "cover", "--min-grade", "3", "--format", "json")
    coverage = json.loads(r.out)["coverage"]
    assert coverage["queries"]["with_grades"] == 2 and coverage["queries"]["of"] == 43
    assert coverage["pairs"]["depth"] == 20 and coverage["pairs"]["graded"] == 4
    assert "rests on 2 of 43 queries" in r.err


def test_markdown_shows_a_banner_and_tsv_stays_clean(cli, sparse):
    md = cli("leaderboard", "--store", sparse, "--measure", "P@2", "--min-grade", "3", "--format", "md")
    assert "> **Warning:** rests on 2 of 43 queries \\(fewer than 10\\)\n" in md.out
    assert "> Rests on: 2 of 43 queries" in md.out
    tsv = cli("leaderboard", "--store", sparse, "--measure", "P@2", "--min-grade", "3")
    assert tsv.out.splitlines()[0] == "system\tscore\tstderr\tn_queries\tmeasure\tlabels"
    assert "rests on 2 of 43" in tsv.err


def test_a_leaderboard_over_enough_queries_does_not_warn(cli, tmp_path):
    ratings = {f"q{i}": {"p1": 4} for i in range(1, 13)}
    store = tiny_store(tmp_path, ratings, {"A": {q: ["p1"] for q in ratings}})
    r = cli("leaderboard", "--store", store, "--measure", "P@1", "--min-grade", "3", "--format", "json")
    assert "warning" not in r.err
    assert json.loads(r.out)["coverage"]["below_floor"] is False


def test_floor_options_are_checked(cli, sparse):
    r = cli("leaderboard", "--store", sparse, "--measure", "P@2", "--min-grade", "3", "--floor-graded", "1.5")
    assert r.code == 2 and "between 0 and 1" in r.err


def test_qrels_say_what_they_rest_on(cli, sparse):
    r = cli("qrels", "--store", sparse)
    assert r.code == 0 and len(r.out.splitlines()) == 4  # stdout: the qrels only
    assert "rests on: 2 of 43 queries (with grades: 2, with judgments: 2, in store: 43)" in r.err
    assert "4 of 5 pool pairs (every passage the stored runs rank) graded" in r.err
    assert "warning: rests on 2 of 43 queries (fewer than 10)" in r.err
    assert "warning" not in cli("qrels", "--store", sparse, "--floor-queries", "2", "--floor-graded", "0.5").err


def test_agreement_says_what_it_rests_on(cli, sparse):
    r = cli("agreement", "--store", sparse, "--judged-relevant", "1", "--min-questions", "1")
    coverage = json.loads(r.out)["grade_sets"][0]["coverage"]
    # judged pairs: (q1, p1) graded, (q3, p2) not: q3 has no grade
    assert coverage["pairs"]["pool"] == 2 and coverage["pairs"]["graded"] == 1
    assert coverage["queries"]["scored"] == 1 and coverage["queries"]["with_judgments"] == 2
    assert "only 1 of 2 pool pairs graded" in r.err and "rests on 1 of 43 queries" in r.err
    md = cli("agreement", "--store", sparse, "--judged-relevant", "1", "--min-questions", "1", "--format", "md").out
    assert "> **Warning:** rests on 1 of 43 queries" in md and "> Rests on: 1 of 43 queries" in md


@pytest.mark.usefixtures("stand_in_plots")  # asserts nothing about the plot files
def test_analyze_flags_a_grade_set_below_the_floor(cli, sparse, tmp_path):
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"A": 1, "B": 2}))
    out = tmp_path / "report"
    r = cli("analyze", "--store", sparse, "--official", official, "--out", out, "--judged-relevant", "1",
            "--measures", "P@2", "--per-query-measure", "P@2")
    assert r.code == 0, r.err
    assert "warning: self-rating / m (" in r.err and "rests on 2 of 43 queries" in r.err
    report = (out / "report.md").read_text()
    assert report.index("## Below the floor") < report.index("## Grade sets")
    assert "| 2 of 43 | 4 of 5 \\(80%\\) |" in report  # whole rankings: x9 (ranked by B) has no grade
    assert "Below the floor: numbers that rest on little" in (out / "report.html").read_text()


def test_the_review_overview_says_what_the_grade_set_rests_on(sparse):
    from jinja2 import Environment, PackageLoader

    from proctor.review import pages
    from proctor.store import Store

    store = Store.open(sparse)
    try:
        sets = pages.visible_sets(store)
        data = pages.overview(store, pages.Cache(), sets[0], pages.Thresholds(), sets)
    finally:
        store.close()
    # the judgment pool: the runs' top 20 (q1 p1 p2 x9, q2 p1 p3) and the judged (q3 p2): 6 pairs, 4 graded
    assert data["coverage"]["summary"] == ("2 of 43 queries (with grades: 2, with judgments: 2, in store: 43); 4 of 6 "
                                           "pool pairs (the judgment pool: judged passages and the runs' first "
                                           "passages) graded (66.7%)")
    assert data["coverage"]["warnings"][0] == "rests on 2 of 43 queries (fewer than 10)"
    html = Environment(loader=PackageLoader("proctor.review", "templates"), autoescape=True).get_template(
        "overview.html").render(data=data, running=None, backend=None, official=False, csrf="x",
                                thresholds=pages.Thresholds(), reviewer=None, request=None)
    assert 'id="coverage"' in html and "Warning: rests on 2 of 43 queries" in html


def test_a_system_with_fewer_queries_is_named(cli, tmp_path):
    ratings = {f"q{i}": {"p1": 4} for i in range(1, 13)}
    runs = {"A": {q: ["p1"] for q in ratings}, "B": {"q1": ["p1"], "q2": ["p1"]}}
    store = tiny_store(tmp_path, ratings, runs)
    r = cli("leaderboard", "--store", store, "--measure", "P@1", "--min-grade", "3", "--format", "json")
    coverage = json.loads(r.out)["coverage"]
    assert coverage["per_system"] == {"B": {"queries": 2, "graded_pairs": 2, "pool_pairs": 2}}
    assert coverage["warnings"] == []  # the leaderboard rests on 12 queries; B alone on 2
    assert "systems that rest on less: B: 2 queries, 2 of 2 pairs graded" in r.err
    md = cli("leaderboard", "--store", store, "--measure", "P@1", "--min-grade", "3", "--format", "md").out
    assert "> Systems that rest on less: B: 2 queries" in md


@pytest.mark.parametrize("measure, pool_is", [("P@1", "the first passage of every run"),
                                              ("P@2", "the first 2 passages of every run")])
def test_the_pool_is_named_in_plain_words(cli, tmp_path, measure, pool_is):
    store = tiny_store(tmp_path, {"q1": {"a": 4, "b": 1}}, {"A": {"q1": ["a", "b"]}})
    r = cli("leaderboard", "--store", store, "--measure", measure, "--min-grade", "3", "--format", "json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["coverage"]["pairs"]["pool_is"] == pool_is and pool_is in r.err


def test_several_measures_each_carry_their_own_coverage(sparse):
    from proctor import api
    from proctor.store import Store

    store = Store.open(sparse)
    boards = api.leaderboard(store, ["P@1", "P@2", "MAP"], min_grade=3)
    single = [api.leaderboard(store, m, min_grade=3) for m in ("P@1", "P@2", "MAP")]
    assert [b.coverage.pairs for b in boards] == [b.coverage.pairs for b in single]
    assert [b.coverage.pairs["depth"] for b in boards] == [1, 2, None]  # one graded-pair set, each its own depth
    assert [(b.coverage.pairs["graded"], b.coverage.pairs["pool"]) for b in boards] == [(4, 4), (4, 5), (4, 5)]


def _two_question_store(folder, cli):
    """q1 has two questions; p1 is rated on both, p2 on the first only (its second grade never made), p3 on
    none; runs A and B rank p1..p3."""
    def passage(pid, ratings):
        return {"paragraph_id": pid, "text": f"text of {pid}", "paragraph_data": {"judgments": [], "rankings": []},
                "exam_grades": [{"llm": "m", "prompt_info": {"is_self_rated": True, "prompt_class": "P"},
                                 "self_ratings": [{"question_id": q, "self_rating": r} for q, r in ratings.items()],
                                 "answers": [[q, "x"] for q in ratings]}]}

    (folder / "q.tsv").write_text("q1\ttopic q1\n")
    line = ["q1", [passage("p1", {"q1/a": 2, "q1/b": 5}), passage("p2", {"q1/a": 4})]]
    (folder / "g.jsonl").write_text(json.dumps(line) + "\n")
    (folder / "A.run").write_text("q1 Q0 p1 1 3 A\nq1 Q0 p2 2 2 A\nq1 Q0 p3 3 1 A\n")
    store = folder / "s.db"
    for kind, path in (("queries", "q.tsv"), ("exampp", "g.jsonl"), ("runs", "A.run")):
        assert cli("import", kind, folder / path, "--store", store).code == 0
    return store


def test_the_pairs_counted_graded_are_exactly_the_pairs_with_a_label(cli, tmp_path):
    """A pair with a usable grade from one of its query's two questions has a label (labels need one grade), so
    it counts as labelled; that its label rests on part of the questions is counted and warned of apart."""
    from proctor import api

    store_path = _two_question_store(tmp_path, cli)
    store = api.open_store(store_path)
    try:
        labels = api.labels(store)
        board = api.leaderboard(store, "P@3", min_grade=3)
        cover = api.leaderboard(store, "Cover(rel=3)@3")
    finally:
        store.close()
    assert labels.qrels == {"q1": {"p1": 5, "p2": 4}}
    for coverage in (labels.coverage, board.coverage, cover.coverage):
        assert (coverage.pairs["graded"], coverage.pairs["pool"]) == (2, 3)  # p1, p2 labelled; p3 not
        assert coverage.counts["partly_graded"] == 1  # p2: one of q1's two questions
        assert any("1 of the 2 labelled pool pairs have grades from only some" in w for w in coverage.warnings)
    r = cli("leaderboard", "--store", store_path, "--measure", "P@3", "--min-grade", "3", "--floor-queries", "0",
            "--floor-graded", "0")
    assert r.code == 0 and "warning: 1 of the 2 labelled pool pairs have grades from only some" in r.err
    assert "2 of 3 pool pairs (the first 3 passages of every run) graded (66.7%)" in r.err
