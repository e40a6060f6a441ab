"""The API and the CLI refuse the same things with the same words: every check of the evaluation commands is
made by the API, whose `UsageError` names its parameters (`min_grade`), and the command prints the same
message with its flags (`--min-grade`). The modes the CLI offers are the API's `Literal` types."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest

from conftest import seed_demo
from proctor import api
from proctor.api import commands
from proctor.api.types import (
    Agreement,
    BankDiff,
    Calibration,
    Correction,
    Correlation,
    Ensemble,
    LeaderboardFormat,
    Missing,
    ProbeReport,
    Rule,
    Tests,
    Ties,
)
from proctor.cli import build_parser
from proctor.options.evaluation import LeaderboardOptions, QrelsOptions
from proctor.options.intervals import IntervalOptions


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    """The demo store graded by replaying its recorded example grades, with a per-query leaderboard file."""
    from proctor.demo.write import write_collection

    folder = tmp_path_factory.mktemp("refusals")
    path = seed_demo(folder)
    recorded = write_collection(folder / "again")["exampp"]
    store = api.open_store(path)
    api.grade(store, "self-rating", f"replay:{recorded}", progress=False)
    (folder / "p3.json").write_text(api.render(api.leaderboard(store, "P@3", min_grade=4), "json",
                                               per_query=True))
    (folder / "official.json").write_text(json.dumps({"strong": 1, "middling": 2, "weak": 3}))
    store.close()
    return path


def _call(graded: Path, function: str, *args, **kwargs):
    """Call `api.FUNCTION(store, ...)` (or the command plumbing's `commands.FUNCTION`) on the graded store."""
    store = api.open_store(graded)
    try:
        return getattr(api if function in dir(api) else commands, function)(store, *args, **kwargs)
    finally:
        store.close()


CASES = [  # (API function, its arguments, the API's words; the command, its arguments, the CLI's words)
    ("qrels_report", {"options": QrelsOptions(binary=True)}, "binary needs min_grade T",
     ["qrels", "--binary"], "--binary needs --min-grade T"),
    ("qrels_report", {"options": QrelsOptions(min_grade=3)},
     "min_grade applies with binary only (graded labels keep every grade)",
     ["qrels", "--min-grade", "3"], "--min-grade applies with --binary only (graded labels keep every grade)"),
    ("leaderboard_report", {"options": LeaderboardOptions(measure=("P@3",), min_grade=4, per_query_scores=True)},
     "per_query needs fmt json",
     ["leaderboard", "--measure", "P@3", "--min-grade", "4", "--per-query"], "--per-query needs --format json"),
    ("leaderboard_report", {"options": LeaderboardOptions(measure=("P@3",), min_grade=4), "fmt": "trec",
                            "intervals": IntervalOptions(intervals=True)},
     "intervals needs fmt tsv, json or md",
     ["leaderboard", "--measure", "P@3", "--min-grade", "4", "--format", "trec", "--intervals"],
     "--intervals needs --format tsv, json or md"),
    ("leaderboard_report", {"options": LeaderboardOptions(measure=("P@3",), min_grade=4),
                            "intervals": IntervalOptions(confidence=0.9)},
     "confidence and resamples apply to intervals only",
     ["leaderboard", "--measure", "P@3", "--min-grade", "4", "--confidence", "0.9"],
     "--confidence and --resamples apply to --intervals only"),
    ("leaderboard_report", {"options": LeaderboardOptions(measure=("P@3",), min_grade=4),
                            "significance": api.SignificanceOptions()},
     "significance needs fmt json or md (or write fmt json per_query and run `proctor compare FILE`)",
     ["leaderboard", "--measure", "P@3", "--min-grade", "4", "--significance"],
     "--significance needs --format json or md (or write --format json --per-query and run `proctor compare FILE`)"),
    ("leaderboard_report", {"options": LeaderboardOptions(metric="cover", measure=("P@3",), min_grade=4)},
     "metric cover takes no measure or judgments (it reads the grades directly)",
     ["leaderboard", "--metric", "cover", "--measure", "P@3", "--min-grade", "4"],
     "--metric cover takes no --measure or --qrels (it reads the grades directly)"),
    ("leaderboard_report", {"options": LeaderboardOptions(metric="cover")},
     "metric cover needs min_grade T (the smallest grade that answers a question)",
     ["leaderboard", "--metric", "cover"],
     "--metric cover needs --min-grade T (the smallest grade that answers a question)"),
    ("leaderboard_report", {"options": LeaderboardOptions(measure=("P@3",), min_grade=4, gold="strong")},
     "gold applies to metric cover only",
     ["leaderboard", "--measure", "P@3", "--min-grade", "4", "--gold", "strong"],
     "--gold applies to --metric cover only"),
    ("leaderboard_report", {"options": LeaderboardOptions()}, "metric qrels needs measure M (e.g. P@20 or ndcg_cut.10)",
     ["leaderboard"], "--metric qrels needs --measure M (e.g. P@20 or ndcg_cut.10)"),
    ("leaderboard", {"measures": "NEXAM(rel=4,gold=nobody)@20"}, "gold nobody: no such run",
     ["leaderboard", "--metric", "cover", "--min-grade", "4", "--gold", "nobody"], "--gold nobody: no such run"),
    ("leaderboard_report", {"options": LeaderboardOptions(metric="nuggets", measure=("P@3",), score="all")},
     "metric nuggets takes no measure (it reads the answers' grades directly)",
     ["leaderboard", "--metric", "nuggets", "--measure", "P@3", "--score", "all"],
     "--metric nuggets takes no --measure (it reads the answers' grades directly)"),
    ("leaderboard_report", {"options": LeaderboardOptions(metric="nuggets")}, "metric nuggets needs score, one of",
     ["leaderboard", "--metric", "nuggets"], "--metric nuggets needs --score, one of"),
    ("leaderboard", {"measures": "P@3", "min_grade": 4, "labels": api.LabelChoice(grade_set="zzz")},
     "no grade set matches grade_set zzz",
     ["leaderboard", "--measure", "P@3", "--min-grade", "4", "--grade-set", "zzz"],
     "no grade set matches --grade-set zzz"),
    ("agreement", {"judged_relevant": 1, "min_questions": "0"}, "min_questions takes positive integers, e.g. 1,2,5",
     ["agreement", "--judged-relevant", "1", "--min-questions", "0"],
     "--min-questions takes positive integers, e.g. 1,2,5"),
    ("agreement", {"judged_relevant": 9}, "judged_relevant 9: no judgment reaches it",
     ["agreement", "--judged-relevant", "9"], "--judged-relevant 9: no judgment reaches it"),
    ("analyze", {"official": "{folder}/official.json", "out": "{folder}/report", "measures": ""},
     "measures is empty",
     ["analyze", "--official", "{folder}/official.json", "--out", "{folder}/report", "--measures", ""],
     "--measures is empty"),
    ("analyze", {"official": "{folder}/official.json", "out": "{folder}/report", "measures": "P@3",
                        "plot_measure": "AP"}, "plot_measure AP: not one of measures P@3",
     ["analyze", "--official", "{folder}/official.json", "--out", "{folder}/report", "--measures", "P@3",
      "--plot-measure", "AP"], "--plot-measure AP: not one of --measures P@3"),
    ("drop_grade_set", {"grade_set": ""}, "add yes to delete it with all its grades",
     ["grade-sets", "drop", ""], "add --yes to delete it with all its grades"),
    ("drop_grade_set", {"grade_set": "zzz", "yes": True}, "no grade set matches grade_set zzz",
     ["grade-sets", "drop", "zzz", "--yes"], "no grade set matches --grade-set zzz"),
    ("calibrate", {"budgets": "x"}, "budgets x: expected numbers of topics such as 5 or 1,2,3,5,10,20",
     ["calibrate", "--budget", "x"], "--budget x: expected numbers of topics such as 5 or 1,2,3,5,10,20"),
    ("calibrate", {"budgets": "1", "plot": "{folder}/curve.svg"}, "curve.svg: give a .png file name",
     ["calibrate", "--budget", "1", "--plot", "{folder}/curve.svg"], "curve.svg: give a .png file name"),
    ("calibrate", {"budgets": [1], "measure": "AP"}, "measure AP: calibrate's leaderboard is precision at a depth",
     ["calibrate", "--budget", "1", "--measure", "AP"],
     "--measure AP: calibrate's leaderboard is precision at a depth"),
    ("probe", {"grade_set": "", "attacks": "shout"}, "attacks 'shout': unknown attack; choose from",
     ["probe", "--grade-set", "", "--attack", "shout"], "--attack 'shout': unknown attack; choose from"),
    ("probe", {"grade_set": "", "attacks": ["injection"], "guards": "wall"}, "guards 'wall': unknown guard",
     ["probe", "--grade-set", "", "--attack", "injection", "--guard", "wall"], "--guard 'wall': unknown guard"),
    ("ensemble", {"grade_sets": [""], "rule": "mean"}, "an ensemble needs at least two different grade sets "
     "(grade_set A grade_set B)", ["ensemble", "--grade-set", "", "--rule", "mean"],
     "an ensemble needs at least two different grade sets (--grade-set A --grade-set B)"),
]


def _with_folder(value, folder: Path):
    if isinstance(value, str):
        return value.replace("{folder}", str(folder))
    return value


@pytest.mark.parametrize(("function", "kwargs", "api_words", "command", "cli_words"), CASES,
                         ids=[f"{c[0]}-{'-'.join(c[1])}" for c in CASES])
def test_the_api_names_parameters_and_the_cli_its_flags(graded, cli, function, kwargs, api_words, command,
                                                        cli_words):
    folder = graded.parent
    arguments = {k: _with_folder(v, folder) for k, v in kwargs.items()}
    with pytest.raises(api.UsageError) as refused:
        _call(graded, function, **arguments)
    assert api_words in str(refused.value)
    assert "--" not in str(refused.value).split("`")[0]  # no flag outside a quoted command line
    result = cli(*[_with_folder(a, folder) for a in command], "--store", graded)
    assert result.code == 2, result.out
    assert cli_words in result.err, result.err


def test_compare_and_correlate_refuse_in_the_api(graded, cli):
    folder = graded.parent
    with pytest.raises(api.UsageError, match=r"^baseline nobody: no such system"):
        api.compare(folder / "p3.json", api.SignificanceOptions(baseline="nobody"))
    refused = cli("compare", folder / "p3.json", "--baseline", "nobody")
    assert refused.code == 2 and "--baseline nobody: no such system" in refused.err
    with pytest.raises(api.UsageError, match=r"^give exactly one of official FILE and official_qrels FILE$"):
        api.correlate(folder / "p3.json")
    refused = cli("correlate", folder / "p3.json")
    assert refused.err == "proctor: error: give exactly one of --official FILE and --official-qrels FILE\n"
    with pytest.raises(api.UsageError, match=r"^official_qrels needs measure M$"):
        api.correlate(folder / "p3.json", official_qrels=folder / "qrels.txt")
    with pytest.raises(api.UsageError, match=r"^official_qrels needs the runs: store S or runs FILES$"):
        api.correlate(folder / "p3.json", official_qrels=folder / "qrels.txt", measure="P@3")
    refused = cli("correlate", folder / "p3.json", "--official-qrels", folder / "qrels.txt", "--measure", "P@3")
    assert refused.err == "proctor: error: --official-qrels needs the runs: --store S or --runs FILES\n"


def test_a_warning_names_the_parameter_in_python_and_the_flag_in_the_shell(graded, cli, tmp_path):
    folder = graded.parent
    tsv = tmp_path / "board.tsv"
    tsv.write_text("system\tscore\nstrong\t0.9\nmiddling\t0.5\nweak\t0.1\n")
    result = api.correlate(tsv, folder / "official.json", bootstrap=50)
    assert result.warnings[-1].startswith("bootstrap 50: no confidence intervals")
    done = cli("correlate", tsv, "--official", folder / "official.json", "--bootstrap", "50")
    assert done.code == 0 and json.loads(done.out)["warnings"][-1].startswith("--bootstrap 50: no confidence")
    assert "warning: --bootstrap 50: no confidence intervals" in done.err


def test_the_cli_offers_the_modes_of_the_api():
    from proctor.gradesets.ensemble import RULES
    from proctor.stats.correction import CORRECTIONS

    assert get_args(Correction) == CORRECTIONS and get_args(Rule) == RULES
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]

    def choices(command: str, dest: str) -> tuple:
        return tuple(next(a for a in commands[command]._actions if a.dest == dest).choices)

    assert choices("leaderboard", "missing") == choices("analyze", "missing") == get_args(Missing)
    nexam = next(row for row in api.measures().to_json() if row["name"] == "NEXAM")
    assert set(choices("leaderboard", "normalize")) < set(next(p for p in nexam["parameters"]
                                                               if p["name"] == "norm")["choices"])
    assert choices("leaderboard", "format") == get_args(LeaderboardFormat)
    assert choices("compare", "test") == choices("leaderboard", "test") == get_args(Tests)
    assert choices("correlate", "ties") == get_args(Ties)
    assert choices("ensemble", "rule") == get_args(Rule)
    for command, result in (("correlate", Correlation), ("agreement", Agreement),
                            ("calibrate", Calibration), ("probe", ProbeReport), ("ensemble", Ensemble)):
        assert choices(command, "format") == result.formats


def test_every_result_renders_through_api_render(graded):
    store = api.open_store(graded)
    try:
        info = api.info(store)
        assert api.render(info, "json") == json.dumps(store.counts(), indent=2) + "\n"
        assert api.render(info).startswith("store ")
        report = api.labels(store, binary_min_grade=4)
        assert api.render(report) == "".join(f"{q} 0 {p} {label}\n" for q in sorted(report.qrels)
                                             for p, label in sorted(report.qrels[q].items()))
        listing = api.grade_sets(store)
        assert json.loads(api.render(listing, "json"))[0]["id"] == listing.grade_sets[0][0].id
        board = commands.leaderboard_report(store, LeaderboardOptions(measure=("P@3",), min_grade=4), fmt="md",
                                            significance=api.SignificanceOptions(samples=100))
        assert "**Significance**" in api.render(board, "md")
        compared = api.compare(board.boards[0], samples=100)
        assert api.render(compared, "json") == api.render(compared.comparison, "json")
        assert json.loads(api.render(board, "json"))["significance"] == json.loads(api.render(compared, "json"))
    finally:
        store.close()


@pytest.mark.parametrize(("command", "words"), [
    (["calibrate", "--budget", "x"], "--budget x: expected numbers of topics"),
    (["probe", "--grade-set", "g", "--attack", "bogus"], "--attack 'bogus': unknown attack"),
    (["analyze", "--official", "OFFICIAL", "--out", "OUT"], "exists and is not a folder"),
])
def test_options_are_refused_before_the_store_is_opened(cli, tmp_path, command, words):
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"a": 1}))
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    args = [str(official) if a == "OFFICIAL" else str(a_file) if a == "OUT" else a for a in command]
    result = cli(*args, "--store", tmp_path / "no-such.db")  # the option's error, not the missing store's
    assert result.code == 2 and words in result.err and "no such store" not in result.err


def test_results_that_render_themselves_as_text_render_through_api_render():
    data = {"added": [], "removed": [], "reworded": [], "unchanged": 3}
    diff = BankDiff(data)
    assert api.render(diff, "json") == json.dumps(data, indent=2) + "\n" and diff.to_json() == data
    assert api.render(diff) == diff.render("text") == ("0 added, 0 removed, 0 reworded, 0 with a new importance, "
                                                       "3 unchanged\n")
