"""Response-level grading on a hand-made fixture of 3 RAG runs x 2 topics (tests/rag_fixture.py) against a
local OpenAI-compatible server with known replies: nugget-assign (AutoNuggetizer scores, all five variants,
computed by hand) and citation-support (support precision and citation coverage, computed by hand)."""

from __future__ import annotations

import json
from fractions import Fraction as F

import pytest

import rag_fixture
from fake_openai import FakeOpenAI

# Hand-computed from rag_fixture.ASSIGNMENTS (support 1, partial 0.5 unless strict; vital 2, okay 1):
#   r1 t1: a=S b=P c=N   all 1.5/3   vital 1.5/2  strict_all 1/3  strict_vital 1/2  weighted (2+1)/5
#   r1 t2: d=N e=S       all 1/2     vital 0      strict_all 1/2  strict_vital 0    weighted 1/3
#   r2 t1: S S S         1, 1, 1, 1, 1
#   r2 t2: d=P e=P       all 1/2     vital 1/2    strict_all 0    strict_vital 0    weighted 1.5/3
#   r3 t1: a=N b=N c=P   all 0.5/3   vital 0      strict_all 0    strict_vital 0    weighted 0.5/5
#   r3 t2: d=S e=N       all 1/2     vital 1      strict_all 1/2  strict_vital 1    weighted 2/3
PER_TOPIC = {
    "all": {"r1": (F(1, 2), F(1, 2)), "r2": (F(1), F(1, 2)), "r3": (F(1, 6), F(1, 2))},
    "vital": {"r1": (F(3, 4), F(0)), "r2": (F(1), F(1, 2)), "r3": (F(0), F(1))},
    "strict_all": {"r1": (F(1, 3), F(1, 2)), "r2": (F(1), F(0)), "r3": (F(0), F(1, 2))},
    "strict_vital": {"r1": (F(1, 2), F(0)), "r2": (F(1), F(0)), "r3": (F(0), F(1))},
    "weighted": {"r1": (F(3, 5), F(1, 3)), "r2": (F(1), F(1, 2)), "r3": (F(1, 10), F(2, 3))},
}
MEANS = {  # the same, averaged over the two topics by hand
    "all": {"r1": F(1, 2), "r2": F(3, 4), "r3": F(1, 3)},
    "vital": {"r1": F(3, 8), "r2": F(3, 4), "r3": F(1, 2)},
    "strict_all": {"r1": F(5, 12), "r2": F(1, 2), "r3": F(1, 4)},
    "strict_vital": {"r1": F(1, 4), "r2": F(1, 2), "r3": F(1, 2)},
    "weighted": {"r1": F(7, 15), "r2": F(3, 4), "r3": F(23, 60)},
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A store with the fixture imported and both methods graded against the known-reply server."""
    from proctor.cli import main

    folder = tmp_path_factory.mktemp("rag")
    paths = rag_fixture.write(folder / "in")
    store = folder / "s.db"
    for kind, key in (("queries", "queries"), ("corpus", "corpus"), ("bank", "bank"), ("responses", "answers")):
        assert main(["import", kind, str(paths[key]), "--store", str(store)]) == 0
    with FakeOpenAI(reply=rag_fixture.reply) as server:
        for method in ("nugget-assign", "citation-support"):
            assert main(["grade", "--store", str(store), "--method", method, "--llm", "openai:judge",
                         "--base-url", server.base_url]) == 0
        calls = server.requests
    return store, calls


@pytest.mark.parametrize("score", sorted(MEANS))
def test_nugget_scores_match_the_hand_computed_ones(graded, cli, score):
    store, _ = graded
    result = cli("leaderboard", "--store", store, "--metric", "nuggets", "--score", score, "--format", "json",
                 "--per-query")
    assert result.code == 0, result.err
    board = json.loads(result.out)
    assert board["method"] == "nugget-assign" and board["score"] == score
    assert board["prompt_version"] == "nuggetizer-assigner_template" and board["failed_assignments"] == 0
    got = {row["system"]: row for row in board["systems"]}
    assert set(got) == {"r1", "r2", "r3"}
    for run, expected in MEANS[score].items():
        assert got[run]["score"] == pytest.approx(float(expected), abs=1e-12)
        t1, t2 = PER_TOPIC[score][run]
        assert got[run]["per_query"] == pytest.approx({"t1": float(t1), "t2": float(t2)}, abs=1e-12)
    # two topics: below the floor of 10 queries, said in JSON and on standard error
    assert board["coverage"]["queries"]["scored"] == 2 and board["coverage"]["below_floor"] is True
    assert "warning: rests on 2 of 2 queries (fewer than 10)" in result.err
    ranked = [row["system"] for row in board["systems"]]
    assert ranked == sorted(MEANS[score], key=lambda r: (-MEANS[score][r], r))


def test_nugget_assign_sends_nuggetizer_prompt_once_per_answer_and_resumes(graded, tmp_path):
    store, calls = graded
    assert calls == 6 + 7  # one assignment prompt per answer (<= 10 nuggets); one per judgeable cited sentence
    from proctor.cli import main

    with FakeOpenAI(reply=rag_fixture.reply) as server:
        assert main(["grade", "--store", str(store), "--method", "nugget-assign", "--llm", "openai:judge",
                     "--base-url", server.base_url]) == 0
        assert server.requests == 0  # everything graded already


def test_leaderboard_formats_for_autojudge(graded, cli):
    store, _ = graded
    out = {}
    for fmt in ("tot", "ir-measures", "jsonl"):
        result = cli("leaderboard", "--store", store, "--metric", "nuggets", "--score", "weighted", "--format", fmt)
        assert result.code == 0, result.err
        out[fmt] = result.out.splitlines()
    records = [json.loads(line) for line in out["jsonl"]]
    assert all(list(r) == ["run_id", "topic_id", "measure", "value"] for r in records)
    values = {(r["run_id"], r["topic_id"]): r["value"] for r in records}
    assert values[("r1", "t1")] == pytest.approx(0.6) and values[("r1", "all")] == pytest.approx(7 / 15)
    assert {r["measure"] for r in records} == {"nugget_coverage_weighted"}
    assert "r1\tnugget_coverage_weighted\tt1\t0.6" in out["tot"]
    rows = {tuple(line.split("\t")[:3]): float(line.split("\t")[3]) for line in out["ir-measures"]}
    assert rows[("r3", "all", "nugget_coverage_weighted")] == pytest.approx(23 / 60, abs=1e-12)
    assert len(rows) == len(out["tot"]) == 9  # 3 runs x (2 topics + all)


CITATIONS = {  # hand-computed from rag_fixture.ANSWERS (means over the topics with a value)
    "support_precision": {"r1": F(1, 2), "r2": F(3, 4), "r3": F(1, 2)},
    "support_precision_partial": {"r1": F(5, 8), "r2": F(3, 4), "r3": F(1, 2)},
    "citation_coverage": {"r1": F(3, 4), "r2": F(1), "r3": F(1, 3)},
}


@pytest.mark.parametrize("score", sorted(CITATIONS))
def test_citation_support_matches_the_hand_computed_values(graded, cli, score):
    store, _ = graded
    result = cli("leaderboard", "--store", store, "--metric", "citations", "--score", score, "--format", "json")
    assert result.code == 0, result.err
    board = json.loads(result.out)
    got = {row["system"]: row["score"] for row in board["systems"]}
    assert got == pytest.approx({run: float(v) for run, v in CITATIONS[score].items()}, abs=1e-12)
    counts = board["counts"]
    assert counts["r1"] == {"sentences": 4, "cited": 3, "full": 1, "partial": 1, "none": 0, "failed": 0,
                            "citing_missing": 1, "unjudgeable": 1}
    assert counts["r2"]["citing_missing"] == 1 and counts["r2"]["unjudgeable"] == 0
    assert any("missing from the corpus" in note for note in board["notes"])


def test_nugget_scores_refuse_what_they_cannot_compute(graded, cli):
    store, _ = graded
    assert cli("leaderboard", "--store", store, "--metric", "nuggets").code == 2
    result = cli("leaderboard", "--store", store, "--metric", "nuggets", "--score", "vital", "--measure", "P@20")
    assert result.code == 2 and "--measure" in result.err


def test_correlate_and_analyze_read_answer_leaderboards(graded, cli, tmp_path):
    store, _ = graded
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"r2": 1, "r1": 2, "r3": 3}))
    board = tmp_path / "nuggets.tsv"
    result = cli("leaderboard", "--store", store, "--metric", "nuggets", "--score", "all")
    board.write_text(result.out)
    result = cli("correlate", board, "--official", official, "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["kendall"] == pytest.approx(1.0)  # all: r2 .75 > r1 .5 > r3 .33
    result = cli("analyze", "--store", store, "--official", official, "--out", tmp_path / "report")
    assert result.code == 0, result.err
    rows = json.loads((tmp_path / "report" / "answers.json").read_text())
    assert {(r["method"], r["score"]) for r in rows} == {("nugget-assign", s) for s in MEANS} | {
        ("citation-support", s) for s in CITATIONS}
    vital = next(r for r in rows if r["score"] == "vital")
    assert vital["scores"] == pytest.approx({r: float(v) for r, v in MEANS["vital"].items()})
    assert "Generated answers" in (tmp_path / "report" / "report.md").read_text()


def test_unusable_assignment_replies_are_recorded_counted_and_asked_again(tmp_path, cli):
    paths = rag_fixture.write(tmp_path / "in")
    store = tmp_path / "s.db"
    for kind, key in (("queries", "queries"), ("bank", "bank"), ("responses", "answers")):
        assert cli("import", kind, paths[key], "--store", store).code == 0

    def broken(prompt: str) -> str:
        if "R1 says bees gather nectar." in prompt:
            return "['support']"  # one label for three nuggets
        return rag_fixture.reply(prompt)

    with FakeOpenAI(reply=broken) as server:
        result = cli("grade", "--store", store, "--method", "nugget-assign", "--llm", "openai:judge", "--base-url",
                     server.base_url, "--format", "json")
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert summary["failures"] == 3 and summary["by_status"]["failed"] == 3
    assert any("1 labels for 3 items" in reason for reason in summary["failure_reasons"])
    board = json.loads(cli("leaderboard", "--store", store, "--metric", "nuggets", "--score", "all", "--format",
                           "json").out)
    assert board["failed_assignments"] == 3 and any("failed" in n for n in board["notes"])
    with FakeOpenAI(reply=rag_fixture.reply) as server:
        assert cli("grade", "--store", store, "--method", "nugget-assign", "--llm", "openai:judge", "--base-url",
                   server.base_url).code == 0
        assert server.requests == 1  # only the failed window is asked again (the bad reply was not cached)
    board = json.loads(cli("leaderboard", "--store", store, "--metric", "nuggets", "--score", "all", "--format",
                           "json").out)
    assert board["failed_assignments"] == 0
    assert {r["system"]: r["score"] for r in board["systems"]} == pytest.approx(
        {r: float(v) for r, v in MEANS["all"].items()})


def test_malformed_answers_name_file_and_line_or_are_skipped(tmp_path, cli):
    paths = rag_fixture.write(tmp_path / "in")
    lines = paths["answers"].read_text().splitlines()
    bad = json.loads(lines[1])
    bad["answer"][0]["citations"] = [7]  # out of range
    worse = json.loads(lines[3])
    worse["references"] = [None, "d3"]  # a cited passage without an id
    lines[1], lines[3] = json.dumps(bad), json.dumps(worse)
    paths["answers"].write_text("\n".join(lines) + "\n")
    store = tmp_path / "s.db"
    assert cli("import", "queries", paths["queries"], "--store", store).code == 0
    before = cli("info", "--store", store, "--format", "json").out
    result = cli("import", "responses", paths["answers"], "--store", store)
    assert result.code == 2 and "answers.jsonl:2:" in result.err and "cites index 7" in result.err
    assert cli("info", "--store", store, "--format", "json").out == before
    result = cli("import", "responses", paths["answers"], "--store", store, "--on-error", "skip")
    assert result.code == 0 and "answers.jsonl:2:" in result.err and "answers.jsonl:4:" in result.err


def test_answer_grade_sets_are_not_passage_labels(graded, cli):
    store, _ = graded
    result = cli("qrels", "--store", store, "--method", "nugget-assign")
    assert result.code == 2 and "--metric nuggets" in result.err


def test_autojudge_report_formats_import(tmp_path, cli):
    reports = [
        {"metadata": {"team_id": "t", "run_id": "rt", "topic_id": "t1", "narrative_id": "t1"},
         "responses": [{"text": "Bees gather nectar.", "citations": {"d3": 0.2, "d1": 0.9}},
                       {"text": "No citation here.", "citations": None}]},
        {"metadata": {"team_id": "t", "run_id": "rt", "request_id": "t2"},
         "answer": [{"text": "Blue scatters.", "citations": ["d2"]}]},
        {"metadata": {"team_id": "t", "run_id": "rt", "topic_id": "t3", "narrative_id": "t4"},
         "answer": [{"text": "x", "citations": []}]},
    ]
    path = tmp_path / "reports.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in reports))
    store = tmp_path / "s.db"
    result = cli("import", "responses", path, "--store", store, "--on-error", "skip")
    assert result.code == 0, result.err
    assert "reports.jsonl:3:" in result.err and "name different topics" in result.err
    from proctor.store import Store

    opened = Store.open(store)
    segments = opened.corpus.segments()
    opened.close()
    assert segments["rt/t1/0"]["citations"] == ["d1", "d3"]  # most confident first
    assert segments["rt/t1/1"]["citations"] == [] and segments["rt/t2/0"]["citations"] == ["d2"]


def test_python_api_grades_and_scores_answers(graded):
    from proctor import api

    store_path, _ = graded
    store = api.open_store(store_path)
    try:
        with FakeOpenAI(reply=rag_fixture.reply) as server:
            grade_set, summaries = api.grade(store, "nugget-assign", "openai:judge", base_url=server.base_url,
                                             progress=False)
        assert grade_set.method == "nugget-assign" and summaries[0].already_graded == 15
        board = api.leaderboard(store, "Nuggets(score=strict_all)")
        assert board.scores() == pytest.approx({r: float(v) for r, v in MEANS["strict_all"].items()})
        assert board.description["labels"] == "nugget assignments"
        assert board.description["measure_id"] == "Nuggets(score=strict_all)"  # the registry's canonical string
        same = api.leaderboard(store, "nuggets:strict_all")  # AutoJudge's spelling: an alias, same measure
        assert same.scores() == board.scores() and same.description["measure_id"] == "Nuggets(score=strict_all)"
    finally:
        store.close()


def test_importance_edit_rescores_without_asking_again(tmp_path, cli):
    paths = rag_fixture.write(tmp_path / "in")
    store = tmp_path / "s.db"
    for kind, key in (("queries", "queries"), ("bank", "bank"), ("responses", "answers")):
        assert cli("import", kind, paths[key], "--store", store).code == 0
    with FakeOpenAI(reply=rag_fixture.reply) as server:
        assert cli("grade", "--store", store, "--method", "nugget-assign", "--llm", "openai:judge", "--base-url",
                   server.base_url).code == 0
    edited = paths["bank"].read_text().replace('"t1-c", "text": "Honey is stored in wax combs", "importance": '
                                               '"okay"', '"t1-c", "text": "Honey is stored in wax combs", '
                                               '"importance": "vital"')
    assert edited != paths["bank"].read_text()
    (tmp_path / "edited.yaml").write_text(edited)
    result = cli("import", "bank", tmp_path / "edited.yaml", "--store", store, "--name", "rag")
    version = result.err.split("bank rag@")[1].split()[0].rstrip(";")
    with FakeOpenAI(reply=rag_fixture.reply) as server:
        result = cli("grade", "--store", store, "--method", "nugget-assign", "--llm", "openai:judge", "--base-url",
                     server.base_url, "--bank", f"rag@{version}", "--format", "json")
        assert server.requests == 0  # every assignment carried over from the first version
    assert json.loads(result.out)["by_status"]["carried over"] == 15
    board = json.loads(cli("leaderboard", "--store", store, "--metric", "nuggets", "--score", "vital", "--bank",
                           f"rag@{version}", "--format", "json", "--per-query").out)
    r1 = next(row for row in board["systems"] if row["system"] == "r1")
    assert r1["per_query"]["t1"] == pytest.approx(0.5)  # a=S b=P c=N, now all three vital: 1.5 / 3


@pytest.mark.parametrize(("args", "message"), [
    (("--method", "nugget-assign", "--llm", "replay:x.db"), "text-generating backend"),
    (("--method", "citation-support", "--llm", "openai:m", "--bank", "rag"), "not bank items"),
    (("--method", "nugget-assign", "--llm", "openai:m", "--template", "x.yaml"), "no --template"),
])
def test_answer_methods_refuse_options_they_cannot_honour(graded, cli, args, message):
    store, _ = graded
    result = cli("grade", "--store", store, *args)
    assert result.code == 2 and message in result.err
