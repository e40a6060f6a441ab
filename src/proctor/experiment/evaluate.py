"""The evaluate step: per grader its EXAM-Qrels, its leaderboards (every measure × τ, EXAM-Cover for every
τ × budget), the human-judgment leaderboards, the correlations with the official leaderboard and the
`analyze` report — each through the Python API, each with the command that writes the same file."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proctor import api
from proctor.api.experiments import folder_target, write_qrels_file, write_text
from proctor.experiment.plan import command
from proctor.experiment.schema import Evaluation, Experiment

if TYPE_CHECKING:
    from proctor.api import Store


@dataclass
class Outputs:
    """What the step wrote and the commands that write the same."""

    files: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    correlations: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What the leaderboards say about how they were made (systems left out, queries skipped, ...)."""


def boards_of(evaluation: Evaluation) -> list[tuple[str, dict[str, Any], list[str]]]:
    """`(file stem, leaderboard options, CLI flags)` of every leaderboard of one grade set: each measure of
    `measures` (read by the one registry, `api.measures()`) at every τ of `min_grade` when it takes a relevance
    level and names none, and EXAM-Cover (`Cover(rel=T)@K`) for every τ × `cover_budget`."""
    registry = api.measures()
    out = []
    for measure in evaluation.measures:
        spec = registry.parse(measure)
        graded = spec.measure.uses_relevance_level and spec.rel is None
        missing = "skip" if spec.kind == "qrels" else None
        for tau in evaluation.min_grades if graded else (None,):
            stem = measure if tau is None else f"{measure}.t{tau}"
            flags = ["--measure", measure] + (["--min-grade", str(tau)] if tau is not None else [])
            out.append((stem, {"measures": measure, "min_grade": tau, "missing": missing}, flags))
    for tau in evaluation.min_grades:
        for budget in evaluation.cover_budgets:
            flags = ["--metric", "cover", "--min-grade", str(tau), "--budget", str(budget), "--missing",
                     evaluation.missing]
            out.append((f"cover.t{tau}.k{budget}", {"measures": f"Cover(rel={tau},missing={evaluation.missing})"
                                                   f"@{budget}", "min_grade": tau}, flags))
    return out


def label_measures(evaluation: Evaluation) -> list[str]:
    """The measures of `measures` over labels (those the human judgments and the `analyze` report score)."""
    registry = api.measures()
    return [m for m in evaluation.measures if registry.parse(m).kind == "qrels"]


def evaluate(store: Store, experiment: Experiment, grade_sets: dict[str, str]) -> Outputs:
    """Write every output of the `[evaluate]` table into the experiment's out folder."""
    evaluation, out = experiment.evaluation, experiment.out
    result = Outputs()
    boards_dir = folder_target(out / "leaderboards", "out")
    for name, grade_set in grade_sets.items():
        labels = api.LabelChoice(grade_set=grade_set, min_questions=evaluation.min_questions)
        label_flags = ["--grade-set", grade_set, "--min-questions", str(evaluation.min_questions)]
        if evaluation.qrels:
            _qrels(store, experiment, name, labels, label_flags, result)
        for stem, options, flags in boards_of(evaluation):
            board = api.leaderboard(store, labels=labels, **options)
            _write_board(board, boards_dir / f"{name}.{stem}", experiment, [*flags, *label_flags], result)
    if evaluation.human:
        registry = api.measures()
        for measure in label_measures(evaluation):
            graded = registry.parse(measure).measure.uses_relevance_level
            tau = evaluation.judged_relevant if graded else None
            board = api.leaderboard(store, measure, min_grade=tau, judgments="official")
            flags = ["--measure", measure, "--qrels", "official"] + (["--min-grade", str(tau)] if tau else [])
            _write_board(board, boards_dir / f"human.{measure}", experiment, flags, result)
    if evaluation.correlations and evaluation.official is not None:
        _correlations(experiment, result)
    if evaluation.report and evaluation.official is not None:
        _report(store, experiment, result)
    return result


def _qrels(store: Store, experiment: Experiment, name: str, labels, flags: list[str], result: Outputs) -> None:
    target = folder_target(experiment.out / "qrels", "out") / f"{name}.qrels"
    write_qrels_file(store, labels, target)
    result.files.append(str(target))
    result.commands.append(f"{command('qrels', '--store', experiment.store, *flags)} > {target}")


def _write_board(board, stem: Path, experiment: Experiment, flags: list[str], result: Outputs) -> None:
    result.notes += [f"{stem.name}: {note}" for note in board.notes]
    formats = list(experiment.evaluation.formats)
    if experiment.evaluation.correlations and experiment.evaluation.official is not None and "json" not in formats:
        formats.append("json")  # what `proctor correlate` reads (with per-query scores for the intervals)
    for fmt in formats:
        target = stem.with_name(f"{stem.name}.{fmt}")
        write_text(target, api.render(board, fmt, per_query=fmt == "json"))
        result.files.append(str(target))
        extra = ["--per-query"] if fmt == "json" else []
        result.commands.append(f"{command('leaderboard', '--store', experiment.store, *flags, '--format', fmt, *extra)}"
                               f" > {target}")
    if experiment.evaluation.correlations and experiment.evaluation.official is not None:
        result.correlations.append({"leaderboard": stem.name, "board": board})


def _correlations(experiment: Experiment, result: Outputs) -> None:
    evaluation, official = experiment.evaluation, experiment.evaluation.official
    rows = []
    for entry in result.correlations:
        corr = api.correlate(entry.pop("board"), official, bootstrap=evaluation.bootstrap,  # type: ignore[arg-type]
                             seed=evaluation.seed)
        ci = corr.get("confidence_intervals") or {}
        rows.append({"leaderboard": entry["leaderboard"], "spearman": corr["spearman"], "kendall": corr["kendall"],
                     "tau_ap": corr["tau_ap"], "n_systems": corr["n_systems"], "spearman_ci": ci.get("spearman"),
                     "kendall_ci": ci.get("kendall"), "missing": corr["missing"]})
        source = experiment.out / "leaderboards" / f"{entry['leaderboard']}.json"
        result.commands.append(command("correlate", source, "--official", official, "--bootstrap",
                                       evaluation.bootstrap, "--seed", evaluation.seed))
    result.correlations = rows
    write_text(experiment.out / "correlations.json", json.dumps(rows, indent=2) + "\n")
    lines = ["leaderboard\tspearman\tkendall\ttau_ap\tn_systems"]
    lines += [f"{r['leaderboard']}\t{_number(r['spearman'])}\t{_number(r['kendall'])}\t{_number(r['tau_ap'])}\t"
              f"{r['n_systems']}" for r in rows]
    write_text(experiment.out / "correlations.tsv", "\n".join(lines) + "\n")
    result.files += [str(experiment.out / "correlations.json"), str(experiment.out / "correlations.tsv")]


def _number(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.4f}"  # null in JSON: a side ranks every system the same


def _report(store: Store, experiment: Experiment, result: Outputs) -> None:
    evaluation, folder = experiment.evaluation, experiment.out / "report"
    options = api.AnalysisOptions(judged_relevant=evaluation.judged_relevant,
                                  measures=tuple(label_measures(evaluation)), budget=evaluation.cover_budgets[0],
                                  missing=evaluation.missing)
    report = api.analyze(store, evaluation.official, folder, options)  # type: ignore[arg-type]
    result.files += [str(f) for f in report.files]
    result.commands.append(command("analyze", "--store", experiment.store, "--official", evaluation.official,
                                   "--out", folder, "--judged-relevant", evaluation.judged_relevant, "--measures",
                                   ",".join(label_measures(evaluation)), "--budget", evaluation.cover_budgets[0],
                                   "--missing", evaluation.missing))
