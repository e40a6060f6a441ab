"""One grade set's part of `proctor analyze`: its sweep of leaderboards (EXAM-Qrels at τ × measures, EXAM-Cover at
τ) correlated with the official leaderboard, the plots of the configuration the user chose (never the best of the
sweep), the plotted measure's bootstrap intervals and the per-query correlation, each returned as data (figures,
sections, files, notes) after its files are written."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from proctor.analyze import plots
from proctor.analyze.html_report import Figure, Section
from proctor.analyze.leaderboard_correlation import correlate_leaderboards, per_query_correlation
from proctor.analyze.tables import Table
from proctor.analyze.trust_section import grade_set_coverage, intervals_part
from proctor.evaluate.coverage import Coverage, Floor
from proctor.evaluate.leaderboard import Leaderboard, measure_leaderboard
from proctor.evaluate.leaderboard_files import LeaderboardFile
from proctor.evaluate.measures import parse_measure
from proctor.evaluate.sources import exam_qrels
from proctor.evaluate.sweep import sweep_boards
from proctor.options.analysis import AnalysisOptions
from proctor.outputs import write_text
from proctor.records import GradeSet
from proctor.store import Store

TAUS = (1, 2, 3, 4, 5)
"""The relevance levels τ the report sweeps."""


class GradeSetPart(NamedTuple):
    """What one grade set adds to the report: its correlations and rows of the correlation table, its figures,
    sections, files and plot notes, what its labels rest on."""

    correlations: list[dict[str, Any]]
    table_rows: list[list[object]]
    figures: list[Figure]
    sections: list[Section]
    files: list[Path]
    notes: list[str]
    labels: dict[str, dict[str, int]] | None = None
    coverage: Coverage | None = None


def grade_set_part(store: Store, out: Path, official: LeaderboardFile, grade_set: GradeSet, runs: Any,
                   judgments: dict, slug: str, floor: Floor, options: AnalysisOptions) -> GradeSetPart:
    """One grade set's sweep correlated with the official leaderboard, its plots, intervals and per-query
    correlation (files written into `out`)."""
    if not grade_set.grades:
        return GradeSetPart([], [], [], [], [], [f"Grade set {grade_set.id} ({grade_set.variant} / {grade_set.model}) "
                                                 "has no grades: no leaderboards, plots or per-query correlations for "
                                                 "it."])
    labels = exam_qrels(store, grade_set)  # computed once, used by every step below
    coverage = grade_set_coverage(store, grade_set, labels, floor)
    boards = sweep_boards(store, grade_set, runs, taus=TAUS, measures=options.measures, budget=options.budget,
                          missing_cover=options.missing, qrels=labels)
    rows = [_correlate(board, official, grade_set) for board in boards]  # one leaderboard held at a time
    figures, notes = _plots(out, official, grade_set, slug, rows, options)
    interval_figure, interval_section = _intervals(out, grade_set, slug, runs, labels, options)
    part = GradeSetPart(rows, _correlation_rows(grade_set, rows, options), [*figures, interval_figure],
                        [interval_section], [], notes, labels, coverage)
    if judgments:
        figure, section, tsv, note = _per_query(out, labels, grade_set, slug, runs, judgments, options)
        part.figures.extend(figure)
        part.sections.append(section)
        part.files.append(tsv)
        part.notes.extend(note)
    return part


def _intervals(out: Path, grade_set: GradeSet, slug: str, runs: Any, labels: dict,
               options: AnalysisOptions) -> tuple[Figure, Section]:
    """The plotted measure's leaderboard with bootstrap intervals: a figure and a table section."""
    name = f"{grade_set.variant} / {grade_set.model} ({grade_set.id})"
    return intervals_part(out, slug, name, grade_set, runs, labels, options.plotted, options.plot_tau)


def _correlation_rows(grade_set: GradeSet, rows: list[dict], options: AnalysisOptions) -> list[list[object]]:
    """One row of the correlation table per τ: ρ and τ of every measure, then of EXAM-Cover."""
    table = []
    for tau in TAUS:
        row: list[object] = [grade_set.variant, grade_set.model, tau]
        for name in options.measures:
            hit = _find(rows, "EXAM-Qrels", parse_measure(name).name, tau)
            row += [hit["spearman"], hit["kendall"]] if hit else [None, None]
        hit = _find(rows, "EXAM-Cover", "cover", tau)
        row += [hit["spearman"], hit["kendall"]] if hit else [None, None]
        table.append([*row, grade_set.id])
    return table


def _correlate(board: Leaderboard, official: LeaderboardFile, grade_set: GradeSet) -> dict[str, Any]:
    d = board.description
    cover = board.kind == "cover"
    result = correlate_leaderboards(LeaderboardFile(board.scores()), official, samples=0)
    return {
        "grade_set": grade_set.id, "method": grade_set.variant, "model": grade_set.model,
        "metric": "EXAM-Cover" if cover else "EXAM-Qrels",
        "measure": "cover" if cover else d["measure"],
        "tau": d["min_grade"] if cover else d["relevance_level"],
        "spearman": result["spearman"], "kendall": result["kendall"], "tau_ap": result["tau_ap"],
        "n_systems": result["n_systems"], "missing": result["missing"],
        "scores": board.scores(),
    }


def _find(rows: list[dict], metric: str, measure: str, tau: int) -> dict | None:
    for row in rows:
        if row["metric"] == metric and row["measure"] == measure and (row["tau"] in (tau, None)):
            return row
    return None


def _label(row: dict) -> str:
    tau = "" if row["tau"] is None else f", τ={row['tau']}"
    kendall = "undefined" if row["kendall"] is None else f"{row['kendall']:.3f}"
    name = row["metric"] if row["measure"] == "cover" else f"{row['metric']} {row['measure']}"  # not "EXAM-Cover cover"
    return f"{name}{tau} (Kendall {kendall})"


def _plots(out: Path, official: LeaderboardFile, grade_set: GradeSet, slug: str, rows: list[dict],
           options: AnalysisOptions) -> tuple[list[Figure], list[str]]:
    """Scatter and renormalised plots of the chosen configuration (never the best of the sweep): their figures,
    or a note saying why there are none."""
    measure = parse_measure(options.plotted).name
    chosen = [r for r in (_find(rows, "EXAM-Qrels", measure, options.plot_tau),
                          _find(rows, "EXAM-Cover", "cover", options.plot_tau)) if r]
    name = f"{grade_set.variant} / {grade_set.model} ({grade_set.id})"
    chosen = [r for r in chosen if set(r["scores"]) & set(official.scores)]
    if not chosen:
        return [], [f"{name}: no system of its leaderboards is on the official leaderboard; no plots."]
    how = (f"Shown: EXAM-Qrels {measure} and EXAM-Cover at τ = {options.plot_tau}, as chosen with --plot-measure "
           "and --plot-tau (not selected by their correlation; the table above has every configuration).")
    boards = {_label(r): r["scores"] for r in chosen}
    scatter_path = out / "plots" / f"scatter_{slug}.png"
    plots.scatter(scatter_path, official.scores, boards, official.kind, f"Official vs predicted leaderboard — {name}")
    renorm_path = out / "plots" / f"renormalised_{slug}.png"
    plots.renormalised(renorm_path, official.scores, boards,
                       f"Renormalised leaderboards, systems in official order — {name}", official.kind)
    return [Figure(f"Official vs predicted — {name}", scatter_path, how),
            Figure(f"Renormalised leaderboards — {name}", renorm_path, how)], []


def _per_query(out: Path, labels: dict, grade_set: GradeSet, slug: str, runs: Any, judgments: dict,
               options: AnalysisOptions) -> tuple[list[Figure], Section, Path, list[str]]:
    """The per-query correlation of one grade set: its figure (or a note why there is none), its section and its
    TSV file."""
    spec = parse_measure(options.per_query_measure)
    level = options.per_query_tau if spec.measure.uses_relevance_level else None
    predicted = measure_leaderboard(runs, labels, spec, level)
    official = measure_leaderboard(runs, judgments, spec, options.judged_relevant)
    per_query = per_query_correlation({e.system: e.per_query for e in predicted.entries},
                                      {e.system: e.per_query for e in official.entries})
    table = Table(["query", "Spearman ρ", "Kendall τ", "systems"],
                  [[q, v["spearman"], v["kendall"], v["n_systems"]] for q, v in per_query.items()],
                  caption=f"Per-query correlation of {spec.name} with EXAM-Qrels "
                  f"({'graded labels' if level is None else f'relevant at grade >= {level}'}) vs the same measure "
                  f"with the human judgments (relevant >= {options.judged_relevant}), query ids matched exactly")
    write_text(out / f"per_query_{slug}.tsv", table.tsv())
    values = [v["kendall"] for v in per_query.values() if v["kendall"] is not None]
    name = f"{grade_set.variant} / {grade_set.model} ({grade_set.id})"
    if values:
        path = out / "plots" / f"per_query_{slug}.png"
        plots.distribution(path, values, f"Per-query Kendall τ, {spec.name} — {name}",
                           "Kendall τ-b of one query's leaderboard")
        figures = [Figure(f"Per-query correlation — {name}", path,
                          f"{spec.name} as chosen with --per-query-measure and --per-query-tau.")]
        notes = []
    else:
        figures, notes = [], [f"Per-query correlation — {name}: τ is undefined for every query; no plot."]
    undefined = len(per_query) - len(values)
    note = f"{undefined} queries have an undefined τ (every system scores the same)." if undefined else ""
    text = table.markdown() + (f"\n{note}\n" if note else "")
    return (figures, Section(f"Per-query correlation — {name}", text, [(None, table)], notes=[note] if note else []),
            out / f"per_query_{slug}.tsv", notes)
