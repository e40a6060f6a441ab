"""Every result the API returns has one protocol (`proctor.api.results.Result`): it is frozen, `render(fmt)`
writes each of its `formats` (refusing others), and where JSON is a format `json.loads(render("json"))` is
`to_json()`, plain JSON data. The results are made by the API's own verbs on the demo store (graded by replaying
its recorded grades and by the test server), and a test keeps the list whole: every type an API function is
declared to return is either checked here or named as no result (a store, a request, an input)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from conftest import seed_demo
from fake_openai import FakeOpenAI
from proctor import api
from proctor.api import commands
from proctor.api.rendering import Leaderboards
from proctor.api.results import Result
from proctor.errors import UsageError

NOT_RESULTS = {
    "Store", "GradeSet", "GradeRequest", "GradeJob", "GenerationRequest", "ImpactRequest", "ExportRequest",
    "ImportRequest", "AnalyzeRequest", "CalibrationRequest", "ProbeRequest", "LeaderboardFile", "Bank", "Outcome",
    "JSON", "Qrels", "str", "int", "float", "bool", "None", "list", "dict", "tuple", "Any", "Path",
    "BackendConfig", "Counter", "Coroutine", "object", "set", "IO", "Iterator",
}
"""What API functions return that is no result to render: the store and its records, the checked requests (their
`run` returns the result), inputs read from files (a leaderboard file, a bank), bank lines in memory
(`generate_bank`'s `Outcome`, whose file is `Generated`), plain data (qrels, `review_queue`'s queue, exported
text), what the review app's plumbing (`api.review`) hands the app (a backend configuration, counts, jobs), and
what experiments and the judge read and write through `api.experiments`/`api.autojudge` (files, records)."""

NOT_FROZEN_YET: dict[str, str] = {}
"""Results still filled in place by the layer that makes them: none now (every result is built in one go and
frozen); a new result that is not must be listed here with the reason."""


def _door(name: str):
    """An API name, from the notebook verbs or the command plumbing (`api.commands`), wherever it lives now."""
    return getattr(api, name) if name in api.__all__ else getattr(commands, name)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, object]:
    """One of every result, made by the API on the demo store (two grade sets: replayed and the test server's)."""
    from proctor.demo.write import write_collection

    folder = tmp_path_factory.mktemp("results")
    path = seed_demo(folder)
    recorded = write_collection(folder / "again")["exampp"]
    store = api.open_store(path)
    made: dict[str, object] = {"Graded": api.grade(store, "self-rating", f"replay:{recorded}", progress=False)}
    replayed = made["Graded"].grade_set  # type: ignore[attr-defined]
    with FakeOpenAI() as server:
        job = _door("grade_job")("self-rating", "openai:judge", base_url=server.base_url, progress=False)
        made["GradeOutcome"] = _door("run_grade_job")(store, job)
        served = made["GradeOutcome"].grade_set  # type: ignore[attr-defined]
        made["ProbeReport"] = api.probe(store, served.id, "injection", sample=2, llm="openai:judge",
                                        base_url=server.base_url)
        request = _door("generation_request")("openai:judge", str(folder / "generated.jsonl"), retries=1,
                                              queries=str(folder / "collection" / "queries.tsv"),
                                              base_url=server.base_url)
        made["Generated"] = _door("generate_bank_file")(request)
    labels = api.LabelChoice(grade_set=replayed.id)
    board = api.leaderboard(store, "P@3", min_grade=4, labels=labels)
    (folder / "p3.json").write_text(board.render("json", per_query=True))
    (folder / "official.json").write_text(json.dumps({"strong": 1, "middling": 2, "weak": 3}))
    made["AnalysisReport"] = _analyzed(store, folder)  # of the two grade sets (before the ensemble of them)
    made |= {
        "StoreInfo": api.info(store), "Leaderboard": board,
        "Leaderboards": Leaderboards(tuple(api.leaderboard(store, ["P@3", "RR"], min_grade=4, labels=labels))),
        "LeaderboardReport": _door("leaderboard_report")(store, commands.LeaderboardOptions(measure=("P@3",),
                                                                                              min_grade=4),
                                                         labels=labels, fmt="json",
                                                         significance=api.SignificanceOptions(samples=100)),
        "QrelsReport": _door("qrels_report")(store, labels, commands.QrelsOptions(binary=True, min_grade=4)),
        "Coverage": api.labels(store, labels).coverage,
        "MeasureListing": api.measures(),
        "Comparison": commands.significance(board, samples=100),
        "ComparisonReport": api.compare(folder / "p3.json", api.SignificanceOptions(samples=100)),
        "Correlation": api.correlate(board, folder / "official.json", bootstrap=20),
        "Agreement": api.agreement(store, judged_relevant=1, grade_set=replayed.id),
        "Calibration": api.calibrate(store, replayed.id, budgets=[1], repeats=2),
        "PPILeaderboard": api.ppi(store, ["P@3"], labels, min_grade=4, human_topics=2),
        "PPICalibration": api.calibrate(store, replayed.id, ppi=True, budgets=[2], repeats=2, min_grade=4),
        "Verification": api.verify(store, "distribution", grade_set=replayed.id),
        "GradeSetListing": api.grade_sets(store),
        "GradeSetChange": api.retry_failed(store, served.id),
        "Ensemble": api.ensemble(store, [replayed.id, served.id], "mean"),
        "BankExport": _door("export_bank")(store, str(folder / "bank.yaml"), "yaml"),
        "Exported": _door("export_request")("judgments").run(store),
    }
    made["BankDiff"] = api.bank_diff(folder / "bank.yaml", folder / "bank.yaml")
    made["BankImpact"] = _door("impact_request")(folder / "collection" / "bank.jsonl", folder / "bank.yaml",
                                                 grade_set=replayed.id, measure="P@3", min_grade=4).run(store)
    made["ImportReport"] = api.import_files(store, "queries", [folder / "collection" / "queries.tsv"])[0]
    store.close()
    return made


def _analyzed(store, folder: Path):
    """`analyze`'s report of the store (both grade sets), its plots written as stand-ins (`stand_in_plots`)."""
    from matplotlib.figure import Figure

    from conftest import STAND_IN_PLOTS

    def savefig(self, fname, *, format: str, **options) -> None:  # noqa: A002 (matplotlib's name)
        Path(fname).write_bytes(STAND_IN_PLOTS[format])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Figure, "savefig", savefig)
        return api.analyze(store, folder / "official.json", folder / "report", measures="P@3,RR", budget=3)


def test_the_analyze_report_is_what_it_wrote(results):
    report = results["AnalysisReport"]
    assert len(report.figures) == 8 and {f.suffix for f in report.files} >= {".md", ".html", ".json", ".tsv", ".svg"}
    assert all(Path(f).is_file() for f in report.files) and report.to_json()["files"] == [str(f) for f in report.files]
    assert report.render().splitlines()[-len(report.files) - 1] == f"wrote {len(report.files)} files:"
    assert len(report.warnings) == 2 and report.render().startswith(f"warning: {report.warnings[0]}\n")  # 4 queries
    changed = dataclasses.replace(report, warnings=[*report.warnings, "one more"])
    assert changed.warnings[-1] == "one more" and "one more" not in report.warnings and changed.files == report.files
    with pytest.raises(TypeError, match="frozen"):
        report.correlations[0]["spearman"] = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.sections[0].notes = ()
    table = next(t for s in report.sections for _, t in s.tables)
    assert isinstance(table.rows, tuple) and all(isinstance(row, tuple) for row in table.rows)
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.bold = frozenset()


def test_an_import_report_renders_what_the_import_command_prints(results):
    report = results["ImportReport"]
    assert report.render().splitlines()[-1] == report.summary() == report.to_json()["summary"]
    assert report.to_json()["kind"] == "queries" and report.to_json()["unchanged"] is True


def _declared_results() -> set[str]:
    """The names of the types the API's functions are declared to return (and their requests' `run`)."""
    names = set()
    for name in [*api.__all__, *commands.__all__]:
        value = _door(name)
        annotated = [value] if callable(value) and not isinstance(value, type) else []
        if isinstance(value, type) and hasattr(value, "run"):
            annotated.append(value.run)
        for function in annotated:
            names |= set(re.findall(r"[A-Za-z_]\w*", str(getattr(function, "__annotations__", {}).get("return", ""))))
    return names


def test_every_result_the_api_returns_is_checked(results):
    unclassified = _declared_results() - set(results) - NOT_RESULTS - set(NOT_FROZEN_YET)
    assert unclassified == set(), "a result type this test does not make: add it to `results` (or NOT_RESULTS)"


def test_every_result_is_frozen_and_renders_each_of_its_formats(results):
    for name, result in results.items():
        assert isinstance(result, Result), name
        assert name in NOT_FROZEN_YET or _is_frozen(result), f"{name} can be changed"
        assert result.render() == result.render(result.formats[0]) == api.render(result), name
        for fmt in result.formats:
            assert isinstance(result.render(fmt), str), (name, fmt)
        with pytest.raises(UsageError, match="unknown format 'xml'"):
            result.render("xml")
        data = result.to_json()
        assert json.loads(json.dumps(data)) == data, name  # plain JSON: no tuples, no non-string keys
        if "json" in result.formats:
            assert json.loads(result.render("json")) == data, name


def _is_frozen(result: object) -> bool:
    """Whether neither the result nor the JSON it holds can be changed in place."""
    if dataclasses.is_dataclass(result):
        field = dataclasses.fields(result)[0].name
        try:
            setattr(result, field, None)
        except dataclasses.FrozenInstanceError:
            return True
        return False
    if isinstance(result, tuple):  # a NamedTuple
        return True
    for change in (lambda: result.__setitem__("x", 1), lambda: result.update(x=1), lambda: result.pop("x", None),
                   lambda: setattr(result, "plotted", None)):
        with pytest.raises(TypeError, match="frozen"):
            change()
    inner = next(v for v in result.values() if isinstance(v, dict | list))  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="frozen"):
        inner.clear()
    return True


def test_a_report_is_changed_by_making_another(results):
    correlation = results["Correlation"]
    changed = correlation.replace(warnings=[*correlation.warnings, "one more"])
    assert changed.warnings[-1] == "one more" and "one more" not in correlation.warnings
    assert type(changed) is type(correlation) and changed["spearman"] == correlation["spearman"]
    calibration = results["Calibration"]
    assert calibration.replace(plotted=Path("curve.png")).plotted == Path("curve.png") and calibration.plotted is None
    import pickle

    again = pickle.loads(pickle.dumps(results["PPILeaderboard"]))
    assert again == results["PPILeaderboard"] and len(again.judge_boards) == 1


def test_a_list_of_leaderboards_renders_as_leaderboards(results):
    boards = results["Leaderboards"]
    assert api.render(list(boards.boards), "md") == boards.render("md")
    assert [b["measure_id"] for b in boards.to_json()["leaderboards"]] == [b.render("json") and
                                                                          b.to_json()["measure_id"]
                                                                          for b in boards.boards]
    single = results["Leaderboard"]
    assert api.render([single], "json", per_query=True) == single.render("json", per_query=True)


def test_what_grade_says_is_its_render(results):
    graded, outcome = results["Graded"], results["GradeOutcome"]
    text = graded.render("text")
    assert text.startswith(f"grade set {graded.grade_set.id}: self-rating / ") and "pairs in the pool" in text
    data = outcome.to_json()
    assert data["grade_set"]["id"] == outcome.grade_set.id and data["exit_status"] == outcome.exit_status == 0
    assert "".join(line + "\n" for line in outcome.said()) == outcome.render("text")
