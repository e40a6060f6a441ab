"""A measure over labels scored with `missing="zero"` (a query a run did not answer counts 0, trec_eval -c) can
give other numbers than the default, skip (left out, trec_eval without -c): the demo's `partial` run answers
some queries only. So the measure string every output carries (TSV's `measure` column, JSON's `measure_id`)
says it, in the registry's own parameter syntax, `P(rel=1,missing=zero)@3`, only when it is not the default;
the registry parses it back, and the same string gives the same numbers."""

from __future__ import annotations

import json

import pytest

from proctor import api
from proctor.errors import UsageError
from proctor.evaluate.leaderboard_rows import same_measure
from proctor.evaluate.measures import parse_any_measure, parse_measure


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from conftest import seed_demo

    opened = api.open_store(seed_demo(tmp_path_factory.mktemp("missing")))
    yield opened
    opened.close()


def _rows(tsv: str) -> list[list[str]]:
    return [line.split("\t") for line in tsv.splitlines()[1:]]


@pytest.mark.parametrize(("measure", "skipped", "zero"), [
    ("P@3", "P(rel=1)@3", "P(rel=1,missing=zero)@3"),
    ("nDCG@3", "nDCG@3", "nDCG(missing=zero)@3"),
    ("R@5", "R(rel=1)@5", "R(rel=1,missing=zero)@5"),  # computed by ir_measures
])
def test_the_two_ways_differ_and_the_string_says_which(store, measure, skipped, zero):
    skip = api.leaderboard(store, measure, judgments="official")
    counted = api.leaderboard(store, measure, judgments="official", missing="zero")
    assert skip.scores()["partial"] != counted.scores()["partial"]  # the same run, two numbers
    assert {e.system: e.n_queries for e in skip.entries}["partial"] < \
        {e.system: e.n_queries for e in counted.entries}["partial"]
    assert {row[4] for row in _rows(api.render(skip, "tsv"))} == {skipped}  # the default's string is unchanged
    assert {row[4] for row in _rows(api.render(counted, "tsv"))} == {zero}
    assert json.loads(api.render(counted, "json"))["measure_id"] == zero
    again = api.leaderboard(store, zero, judgments="official")  # the string parsed back: the same numbers
    assert again.scores() == counted.scores() and again.description["measure_id"] == zero
    assert api.render(again, "tsv") == api.render(counted, "tsv")
    assert api.leaderboard(store, zero, judgments="official", missing="zero").scores() == counted.scores()


def test_the_registry_reads_and_writes_the_parameter():
    assert parse_any_measure("P(rel=3,missing=zero)@20").name == "P(rel=3,missing=zero)@20"
    assert parse_any_measure("P(missing=zero,rel=3)@20").name == "P(rel=3,missing=zero)@20"
    assert parse_any_measure("P(missing=skip)@20").name == "P@20"  # the default is not written
    assert parse_any_measure("P.20").missing is None and parse_any_measure("Bpref(missing=zero)").name == \
        "Bpref(missing=zero)"
    for wrong, words in (("P(missing=none)@20", "missing 'none' is not one of zero, skip"),
                         ("P(missing=zero,missing=skip)@20", "missing is given twice")):
        with pytest.raises(UsageError, match=words):
            parse_any_measure(wrong)
    rows = {row["name"]: row for row in api.measures().to_json()}
    assert {"name": "missing", "default": "skip", "choices": ["zero", "skip"]} in rows["P"]["parameters"]


def test_a_written_missing_that_contradicts_the_leaderboards_is_refused(store, cli):
    with pytest.raises(UsageError) as refused:
        api.leaderboard(store, "P(missing=zero)@3", judgments="official", missing="skip")
    assert str(refused.value) == "P(missing=zero)@3 names missing=zero but missing is skip"
    shell = cli("leaderboard", "--store", store.path, "--measure", "P(missing=zero)@3", "--qrels", "official",
                "--missing", "skip")
    assert shell.code == 2 and shell.err == ("proctor: error: P(missing=zero)@3 names missing=zero but --missing is "
                                             "skip\n")


def test_where_the_parameter_is_not_read_it_is_refused_not_dropped():
    with pytest.raises(UsageError, match=r"missing= is taken by leaderboards .* only"):
        parse_measure("P(missing=zero)@20")
    with pytest.raises(UsageError, match=r"missing= is taken by leaderboards .*; given as measures$"):
        api.AnalysisOptions(measures="P(missing=zero)@20")
    with pytest.raises(UsageError, match=r"missing= is taken by leaderboards"):
        api.CalibrationOptions(ppi=True, measure="P(missing=zero)@20")


def test_a_file_read_back_finds_the_measure_by_either_string():
    assert same_measure("P@3", "P(rel=1,missing=zero)@3")  # what is left out matches any
    assert same_measure("P(missing=zero)@3", "P(rel=1,missing=zero)@3")
    assert same_measure("P(missing=skip)@3", "P(rel=1)@3")
    assert not same_measure("P(missing=zero)@3", "P(rel=1)@3")
    assert not same_measure("P(missing=skip)@3", "P(rel=1,missing=zero)@3")


def test_an_experiment_refuses_the_parameter_at_load(tmp_path, cli):
    from proctor.demo.write import write_collection

    write_collection(tmp_path / "collection")
    experiment = tmp_path / "e.toml"
    experiment.write_text('[inputs]\nqueries = "collection/queries.tsv"\ncorpus = "collection/corpus.jsonl"\n'
                          'qrels = "collection/qrels.txt"\nruns = "collection/runs"\nbanks = "collection/bank.jsonl"\n'
                          '\n[[grade]]\nmethod = "self-rating"\nllm = "replay:collection/grades.jsonl"\n\n'
                          '[evaluate]\nmeasures = ["P(missing=zero)@3"]\nmin_grade = [4]\n')
    refused = cli("run", experiment)
    assert refused.code == 2 and "evaluate.measures: 'P(missing=zero)@3': an experiment skips a query" in refused.err
    assert not (tmp_path / "e-out").exists() and not (tmp_path / "e.db").exists()


def test_a_file_holding_both_ways_is_read_for_the_one_named(store, tmp_path):
    from proctor.evaluate.leaderboard_files import read_leaderboard

    skip, zero = (api.leaderboard(store, "P@3", judgments="official", missing=m) for m in ("skip", "zero"))
    board_file = tmp_path / "boards.tsv"
    board_file.write_text(api.render(skip, "tsv") + "".join(api.render(zero, "tsv").splitlines(True)[1:]))
    read = read_leaderboard(board_file, "P(rel=1,missing=zero)@3")
    assert read.scores == pytest.approx(zero.scores(), abs=1e-6) and read.scores != pytest.approx(skip.scores())
    assert read_leaderboard(board_file, "P(missing=skip)@3").scores == pytest.approx(skip.scores(), abs=1e-6)
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"strong": 1, "middling": 2, "weak": 3, "partial": 4}))
    with pytest.raises(UsageError, match=r"holds 2 measures \(P\(rel=1\)@3, P\(rel=1,missing=zero\)@3\)"):
        api.correlate(board_file, official, measure="P@3")  # what is left out matches both: name one


@pytest.mark.parametrize("fmt", ["json", "trec", "ir-measures", "jsonl"])
def test_a_file_is_not_read_for_a_way_it_does_not_say(store, tmp_path, fmt):
    """trec_eval's names (`P_3`, in the trec, ir-measures and jsonl formats) do not say how a missing query counted,
    and a JSON of one leaderboard says it in its measure_id: a file of the zero board named `P(missing=skip)@3` is
    refused, not read as skip; named `P@3` (the way left out) it is read."""
    from proctor.evaluate.leaderboard_files import read_leaderboard

    zero = api.leaderboard(store, "P@3", judgments="official", missing="zero")
    board_file = tmp_path / f"zero.{fmt}"
    board_file.write_text(api.render(zero, fmt))
    with pytest.raises(UsageError, match="holds no measure of that name"):
        read_leaderboard(board_file, "P(missing=skip)@3")
    assert read_leaderboard(board_file, "P@3").scores == pytest.approx(zero.scores(), abs=1e-12)
