"""Every measure a user knows: the ones Proctor does not compute itself go through ir_measures (pytrec_eval
provider) and equal pytrec_eval; several measures in one call; close matches for unknown names; trec_eval's
per-query output; TSV/JSON say which measure and labels they hold."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict

import pytest
import pytrec_eval

from proctor.errors import UsageError
from proctor.evaluate.measures import ExternalSpec, MeasureSpec, parse_measure


def _board(result) -> dict[str, dict]:
    assert result.code == 0, result.err
    return {row["system"]: row for row in json.loads(result.out)["systems"]}


@pytest.mark.parametrize("text, name, cls", [
    ("R@100", "R@100", ExternalSpec), ("recall.100", "R@100", ExternalSpec), ("bpref", "Bpref", ExternalSpec),
    ("infAP", "infAP", ExternalSpec), ("Judged@10", "Judged@10", ExternalSpec),
    ("success.10", "Success@10", ExternalSpec), ("P@20", "P@20", MeasureSpec), ("ndcg_cut.10", "nDCG@10", MeasureSpec),
])
def test_names_resolve_to_in_process_or_ir_measures(text, name, cls):
    spec = parse_measure(text)
    assert isinstance(spec, cls) and spec.name == name


@pytest.mark.parametrize("text, suggestion", [("ndgc@10", "nDCG@10"), ("bpre", "bpref"), ("judge@10", "Judged@10"),
                                              ("recal.100", "recall.100")])
def test_unknown_names_list_close_matches(text, suggestion):
    with pytest.raises(UsageError, match="did you mean") as info:
        parse_measure(text)
    assert suggestion in str(info.value).split("did you mean")[1].split("?")[0]


def test_several_names_in_one_trec_measure_are_refused_with_the_way_out():
    with pytest.raises(UsageError, match="--measure P@5 --measure P@10"):
        parse_measure("P.5,10")


def _pytrec(qrels: dict, runs: dict, measure: str, level: int = 1) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {measure}, relevance_level=level)
    return {run: {qid: values[measure] for qid, values in evaluator.evaluate(per_query).items()}
            for run, per_query in runs.items()}


def _demo_inputs(folder):
    from proctor.demo.write import write_collection
    from proctor.io.trec import qrels_dict, read_qrels, read_runs

    paths = write_collection(folder / "collection")
    return qrels_dict(read_qrels(paths["qrels"])), read_runs([paths["runs"]])


@pytest.mark.parametrize("measure, trec, level, measure_id", [
    ("R@3", "recall_3", 1, "R(rel=1)@3"), ("bpref", "bpref", 2, "Bpref(rel=2)"), ("infAP", "infAP", 1, "infAP(rel=1)"),
    ("success.1", "success_1", 2, "Success(rel=2)@1")])
def test_external_measures_equal_pytrec_eval_on_the_demo(cli, demo_store, tmp_path, measure, trec, level, measure_id):
    qrels, runs = _demo_inputs(tmp_path)
    result = cli("leaderboard", "--store", demo_store, "--measure", measure, "--qrels", "official",
                         "--min-grade", level, "--format", "json", "--per-query")
    ours = _board(result)
    assert json.loads(result.out)["measure_id"] == measure_id
    assert json.loads(result.out)["computed_by"] == "ir_measures/pytrec_eval"
    expected = _pytrec(qrels, runs, trec, level)
    assert set(ours) == set(expected)
    for run, per_query in expected.items():
        assert ours[run]["per_query"] == pytest.approx(per_query, abs=1e-12), run


def test_several_measures_in_one_call_tsv_json_and_trec(cli, demo_store):
    args = ("leaderboard", "--store", demo_store, "--qrels", "official", "--measure", "nDCG@3", "--measure", "P@2")
    tsv = cli(*args)
    assert tsv.code == 0, tsv.err
    rows = [line.split("\t") for line in tsv.out.splitlines()]
    assert rows[0] == ["system", "score", "stderr", "n_queries", "measure", "labels"]
    assert {r[4] for r in rows[1:]} == {"nDCG@3", "P(rel=1)@2"} and {r[5] for r in rows[1:]} == {"official"}
    single = cli("leaderboard", "--store", demo_store, "--qrels", "official", "--measure", "P@2")
    assert [r for r in rows[1:] if r[4] == "P(rel=1)@2"] == [line.split("\t") for line in single.out.splitlines()[1:]]
    boards = json.loads(cli(*args, "--format", "json", "--per-query").out)["leaderboards"]
    assert [(b["measure"], b["measure_id"], b["labels_id"]) for b in boards] == [
        ("nDCG@3", "nDCG@3", "official"), ("P@2", "P(rel=1)@2", "official")]
    trec = cli(*args, "--format", "trec").out.splitlines()
    for board, name in zip(boards, ("ndcg_cut_3", "P_2"), strict=True):
        for system in board["systems"]:
            mine = [line.split("\t") for line in trec if line.startswith(f"{system['system']}\t{name}\t")]
            assert [m[2] for m in mine] == [*sorted(system["per_query"]), "all"]
            assert float(mine[-1][3]) == pytest.approx(system["score"], abs=1e-6)
            assert [float(m[3]) for m in mine[:-1]] == pytest.approx(
                [system["per_query"][q] for q in sorted(system["per_query"])], abs=1e-6)


def test_a_file_of_several_measures_is_read_for_the_measure_chosen(cli, demo_store, tmp_path):
    board = tmp_path / "two.tsv"
    board.write_text(cli("leaderboard", "--store", demo_store, "--qrels", "official", "--measure", "P@2",
                                 "--measure", "RR").out)
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"strong": 1, "middling": 2, "weak": 3, "partial": 4}))
    result = cli("correlate", board, "--official", official)
    assert result.code == 2 and "two.tsv: holds 2 measures (P(rel=1)@2, RR(rel=1)); choose one with --measure" \
        in result.err
    chosen = cli("correlate", board, "--official", official, "--measure", "RR", "--format", "json")
    assert chosen.code == 0, chosen.err
    assert json.loads(chosen.out)["n_systems"] == 4


def test_cover_tsv_says_its_parameters_and_grade_set(cli, demo_store, tmp_path):
    from proctor.demo.write import write_collection

    paths = write_collection(tmp_path / "c2")
    assert cli("import", "exampp", paths["exampp"], "--store", demo_store, "--bank", "bank").code == 0
    result = cli("leaderboard", "--store", demo_store, "--metric", "cover", "--min-grade", "4",
                         "--budget", "3")
    rows = [line.split("\t") for line in result.out.splitlines()[1:]]
    grade_set = json.loads(cli("info", "--store", demo_store, "--format", "json").out)["grade_sets"][0]["id"]
    assert {(r[4], r[5]) for r in rows} == {("Cover(rel=4)@3", grade_set)}  # the registry's canonical string
    skip = cli("leaderboard", "--store", demo_store, "--metric", "cover", "--min-grade", "4", "--budget", "3",
               "--missing", "skip", "--normalize", "pool")
    assert {line.split("\t")[4] for line in skip.out.splitlines()[1:]} == {"NEXAM(rel=4,norm=pool,missing=skip)@3"}


# -- DL19: the must-show commands ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def official(dl19_pool):
    """NIST judgments and the 37 runs, read from the pool file directly (not through Proctor)."""
    runs: dict = defaultdict(lambda: defaultdict(dict))
    qrels: dict = defaultdict(dict)
    with gzip.open(dl19_pool, "rt") as handle:
        for line in handle:
            qid, paragraphs = json.loads(line)
            for p in paragraphs:
                for j in p["paragraph_data"]["judgments"]:
                    qrels[qid][p["paragraph_id"]] = int(j["relevance"])
                for r in p["paragraph_data"]["rankings"]:
                    runs[r["method"]][qid][p["paragraph_id"]] = float(r["score"])
    return dict(qrels), {run: dict(per) for run, per in runs.items()}


@pytest.mark.parametrize("measure, trec", [("bpref", "bpref"), ("R@100", "recall_100")])
def test_dl19_official_bpref_and_recall_equal_pytrec_eval(cli, dl19_store, official, measure, trec):
    qrels, runs = official
    result = cli("leaderboard", "--store", dl19_store, "--measure", measure, "--qrels", "official",
                 "--format", "json", "--per-query")
    ours = _board(result)
    expected = _pytrec(qrels, runs, trec)
    assert len(ours) == len(expected) == 37
    for run, per_query in expected.items():
        assert ours[run]["per_query"] == pytest.approx(per_query, abs=1e-12), run
        assert ours[run]["score"] == pytest.approx(sum(per_query.values()) / len(per_query), abs=1e-12), run


def test_a_measure_without_relevance_level_says_so(cli, demo_store):
    result = cli("leaderboard", "--store", demo_store, "--qrels", "official", "--measure", "Judged@2",
                 "--min-grade", "2")
    assert result.code == 0, result.err
    assert "Judged@2 takes no relevance level; --min-grade 2 has no effect on it" in result.err
    assert {line.split("\t")[4] for line in result.out.splitlines()[1:]} == {"Judged@2"}
