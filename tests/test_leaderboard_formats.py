"""Every leaderboard format Proctor writes is read back by `correlate` and `compare` (round trips), and so is
trec_eval's output; a file with several measures is read for the one --measure names; anything else is an
error naming file and line."""

from __future__ import annotations

import json

import pytest

from conftest import seed_demo
from inprocess import run_cli
from proctor.errors import UsageError
from proctor.evaluate.leaderboard_files import read_leaderboard, read_official

OFFICIAL = {"strong": 1, "middling": 2, "weak": 3, "partial": 4}
FORMATS = ("tsv", "json", "md", "trec", "tot", "ir-measures", "jsonl")
PER_QUERY = ("json", "trec", "tot", "ir-measures", "jsonl")


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The demo's P@2 leaderboard (official judgments) in every format, and as JSON with per-query scores,
    written once for the module (the tests only read them)."""
    tmp_path = tmp_path_factory.mktemp("boards")
    demo_store = seed_demo(tmp_path)
    files = {}
    for fmt in FORMATS:
        result = run_cli("leaderboard", "--store", demo_store, "--qrels", "official", "--measure", "P@2", "--format",
                         fmt, *(["--per-query"] if fmt == "json" else []))
        assert result.code == 0, (fmt, result.err)
        files[fmt] = tmp_path / f"board.{fmt}"
        files[fmt].write_text(result.out)
    official = tmp_path / "official.json"
    official.write_text(json.dumps(OFFICIAL))
    return files, official, json.loads(files["json"].read_text())


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_reads_back(written, fmt):
    files, _, truth = written
    board = read_leaderboard(files[fmt])
    exact = {row["system"]: row["score"] for row in truth["systems"]}
    precision = 1e-6 if fmt in ("tsv", "md") else 0  # six decimals in the tables, full precision per line
    assert set(board.scores) == set(exact)
    for system, score in exact.items():
        assert board.scores[system] == pytest.approx(score, rel=0, abs=precision)
    if fmt in PER_QUERY:
        assert board.per_query == {row["system"]: row["per_query"] for row in truth["systems"]}
    assert "P" in str(board.description.get("measure_id"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_measure_the_file_does_not_hold_is_refused(written, fmt):
    """The measure named is the one read, in every format and as the official leaderboard too: a file of P@2 read
    for nDCG@10 is refused (a JSON of one leaderboard was read whatever was named); read for P@2, its scores."""
    files, _, _ = written
    for read in (read_leaderboard, read_official):
        with pytest.raises(UsageError, match="holds no measure of that name"):
            read(files[fmt], "nDCG@10")
        assert read(files[fmt], "P@2").scores == read(files[fmt]).scores


@pytest.mark.parametrize("fmt", FORMATS)
def test_correlate_reads_every_format(cli, written, fmt):
    files, official, _ = written
    result = cli("correlate", files[fmt], "--official", official, "--format", "json", "--bootstrap", "0")
    assert result.code == 0, result.err
    reference = cli("correlate", files["json"], "--official", official, "--format", "json", "--bootstrap", "0")
    got, want = json.loads(result.out), json.loads(reference.out)
    assert (got["spearman"], got["kendall"], got["n_systems"]) == (want["spearman"], want["kendall"], 4)


@pytest.mark.parametrize("fmt", PER_QUERY)
def test_compare_reads_every_per_query_format(cli, written, fmt):
    files, _, _ = written
    result = cli("compare", files[fmt], "--format", "json")
    reference = cli("compare", files["json"], "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["pairs"] == json.loads(reference.out)["pairs"]


TREC_EVAL = """P_20                  \t301\t0.5000
map                   \t301\t0.2500
P_20                  \t302\t0.1000
map                   \t302\t0.0500
runid                 \tall\t{run}
num_q                 \tall\t2
P_20                  \tall\t{p20}
map                   \tall\t{map}
"""


def test_trec_eval_output_of_several_runs(cli, tmp_path):
    path = tmp_path / "trec_eval.q"
    path.write_text(TREC_EVAL.format(run="a", p20="0.3000", map="0.1500")
                    + TREC_EVAL.format(run="b", p20="0.2000", map="0.2500").replace("0.5000", "0.3000"))
    with pytest.raises(Exception, match="holds 3 measures \\(P_20, map, num_q\\); choose one with measure$"):
        read_leaderboard(path)  # the reader names the parameter; the command its flag
    refused = cli("compare", path)
    assert refused.code == 2 and refused.err.rstrip().endswith("holds 3 measures (P_20, map, num_q); choose one with "
                                                               "--measure")
    board = read_leaderboard(path, "P@20")  # ir_measures' name of trec_eval's P_20
    assert board.scores == {"a": 0.3, "b": 0.2}
    assert board.per_query == {"a": {"301": 0.5, "302": 0.1}, "b": {"301": 0.3, "302": 0.1}}
    assert read_leaderboard(path, "AP").scores == {"a": 0.15, "b": 0.25}
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"a": 2, "b": 1}))
    result = cli("correlate", path, "--official", official, "--measure", "map", "--format", "json",
                 "--bootstrap", "0")
    assert result.code == 0, result.err
    assert json.loads(result.out)["spearman"] == pytest.approx(1.0, rel=0, abs=1e-12)  # scipy's, to rounding
    # trec_eval's output as the official leaderboard too: its measure chosen apart from the leaderboard's
    both = cli("correlate", path, "--measure", "map", "--official", path, "--official-measure", "P_20",
               "--format", "json", "--bootstrap", "0")
    assert both.code == 0, both.err
    assert json.loads(both.out)["spearman"] == pytest.approx(-1.0, rel=0, abs=1e-12)


def test_trec_eval_summaries_without_q(tmp_path):
    path = tmp_path / "trec_eval.txt"
    path.write_text("runid\tall\ta\nnum_q\tall\t2\nmap\tall\t0.3\nrunid\tall\tb\nnum_q\tall\t2\nmap\tall\t0.1\n")
    board = read_leaderboard(path, "map")
    assert board.scores == {"a": 0.3, "b": 0.1} and board.per_query is None


@pytest.mark.parametrize(("name", "text", "message"), [
    ("bad.trec", "a\tP_20\t301\t0.5\na\tP_20\tall\tlots\n", "bad.trec:2: value 'lots' is not a number"),
    ("twice.trec", "a\tP_20\t301\t0.5\na\tP_20\t301\t0.5\na\tP_20\tall\t0.5\n",
     "twice.trec:2: run 'a', topic '301', measure 'P_20' listed twice (first on line 1)"),
    ("noall.trec", "a\tP_20\t301\t0.5\nb\tP_20\tall\t0.5\n",
     "noall.trec:1: run 'a' has per-query rows of 'P_20' but no `all` row"),
    ("short.trec", "a\tP_20\tall\t0.5\na\tP_20\t301\n", "short.trec:2: expected 4 columns"),
    ("bad.jsonl", '{"run_id": "a", "topic_id": "all", "measure": "P", "value": 1}\n{"run_id": "a"}\n',
     'bad.jsonl:2: expected {"run_id", "topic_id", "measure", "value"}'),
    ("unnamed.q", "P_20\t301\t0.5\nP_20\tall\t0.5\nrunid\tall\ta\nP_20\t302\t0.1\nP_20\tall\t0.1\n",
     "unnamed.q:4: trec_eval rows without a `runid all NAME` line"),
])
def test_malformed_rows_name_file_and_line(cli, tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"a": 1, "b": 2}))
    result = cli("correlate", path, "--official", official)
    assert result.code == 2 and message in result.err and "Traceback" not in result.err
