"""`proctor analyze`: the whole meta-evaluation of a store in one pass, written as Markdown, TSV/JSON,
plots (PNG, PDF, SVG) and one self-contained HTML page (Jinja2 template, `analyze/html_report.py`).

For every grade set (method, model) it sweeps τ × measures (EXAM-Qrels) and τ (EXAM-Cover), correlates
each leaderboard with the official one (a table like 003 Table 3, best per column marked), computes the
agreement with the human judgments, correlates query by query, and draws the plots — of the configuration
the user chose (`--plot-measure`, `--plot-tau`), never silently the best of the sweep."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from proctor.analyze import agreement_render, plots
from proctor.analyze.answers_section import answer_correlations, is_answer_set
from proctor.analyze.html_report import Figure, Section, render
from proctor.analyze.judges import store_agreement
from proctor.analyze.leaderboard_correlation import correlate_leaderboards, per_query_correlation
from proctor.analyze.robustness_section import probe_section
from proctor.analyze.tables import Table
from proctor.analyze.trust_section import coverage_cells, grade_set_coverage, intervals_part, warnings_section
from proctor.errors import UsageError
from proctor.evaluate.coverage import Coverage, Floor
from proctor.evaluate.leaderboard import Leaderboard, measure_leaderboard
from proctor.evaluate.leaderboard_files import LeaderboardFile
from proctor.evaluate.measures import parse_measure
from proctor.evaluate.sources import exam_qrels, load_runs
from proctor.evaluate.sweep import sweep_boards
from proctor.gradesets.ensemble import fresh_grade_sets
from proctor.markdown import escape
from proctor.options.analysis import AnalysisOptions
from proctor.outputs import folder_target, write_text
from proctor.records import GradeSet
from proctor.store import Store

TAUS = (1, 2, 3, 4, 5)
"""The relevance levels τ the report sweeps."""


@dataclass
class Report:
    """Everything the report shows, kept as data until it is written."""

    correlations: list[dict[str, Any]] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    plot_notes: list[str] = field(default_factory=list)
    """Why a plot is missing (a grade set without grades, no system in common with the official board)."""
    files: list[Path] = field(default_factory=list)
    slugs: dict[str, str] = field(default_factory=dict)
    """File-name part of every grade set's plots and tables."""
    coverage: dict[str, Coverage] = field(default_factory=dict)
    """What every grade set's labels rest on (grade sets of passages with grades)."""
    warnings: list[str] = field(default_factory=list)
    """Grade sets below the floor, one line each (the command prints them on standard error)."""

    formats: ClassVar[tuple[str, ...]] = ("text", "json")
    """The formats `render` writes, the default first (the report itself is the files in `files`)."""

    def to_json(self) -> dict[str, Any]:
        """What was written, as plain JSON data: correlations, section titles, figures, plot notes, files, grade
        set slugs, coverage per grade set and warnings."""
        data = {"correlations": self.correlations, "sections": [s.title for s in self.sections],
                "figures": [{"title": f.title, "png": str(f.png), "how": f.how} for f in self.figures],
                "plot_notes": self.plot_notes, "files": [str(f) for f in self.files], "slugs": self.slugs,
                "coverage": {gid: c.as_dict() for gid, c in self.coverage.items()}, "warnings": self.warnings}
        return json.loads(json.dumps(data))

    def render(self, fmt: str | None = None) -> str:
        """`text` (the warnings, the plot notes and the files written, a line each) or `json` (`to_json`)."""
        if fmt == "json":
            return json.dumps(self.to_json(), indent=2) + "\n"
        if fmt not in (None, "text"):
            raise UsageError(f"unknown format {fmt!r}: {', '.join(self.formats)}")
        lines = [*(f"warning: {w}" for w in self.warnings), *self.plot_notes, f"wrote {len(self.files)} files:",
                 *(f"  {f}" for f in self.files)]
        return "\n".join(lines) + "\n"


def analyze(store: Store, official: LeaderboardFile, official_name: str, options: AnalysisOptions, out: Path, *,
            extra_sections: tuple[Section, ...] = ()) -> Report:
    """Run the meta-evaluation against the `official` leaderboard (read from the file `official_name`) and write
    it into `out`, with the `extra_sections` the layers above add at the end (the prediction-powered
    leaderboards of `api.reports`); returns what was written."""
    folder_target(out, "{out}")
    if (out / "plots").is_symlink():
        raise UsageError(f"{{out}} {out}: plots is a symlink; Proctor writes only into folders of its own",
                         params=("out",))
    (out / "plots").mkdir(exist_ok=True)
    report = Report()
    floor = Floor(options.floor_queries, options.floor_graded)
    runs = load_runs(store, None)
    judgments = store.corpus.judgments()
    every = [s for s in fresh_grade_sets(store) if not s.intermediate]
    grade_sets = [s for s in every if not is_answer_set(s)]
    report.slugs = _slugs(every)
    correlation_table = Table(["method", "model", "τ"] + [f"{m} {c}" for m in options.measures for c in ("ρ", "τ")]
                              + ["Cover ρ", "Cover τ", "grade set"],
                              caption=f"Leaderboard correlation with {official_name} (Spearman ρ, "
                              f"Kendall τ-b); EXAM-Qrels at relevance level τ, EXAM-Cover at grade ≥ τ with "
                              f"budget {options.budget}, missing queries: {options.missing}. Bold: best "
                              "per column where the column's values differ. nDCG ignores τ.")
    missing: dict[str, list[str]] = {}
    labels: dict[str, dict[str, dict[str, int]]] = {}
    for grade_set in grade_sets:
        if not grade_set.grades:
            report.plot_notes.append(f"Grade set {grade_set.id} ({grade_set.variant} / {grade_set.model}) has no "
                                     "grades: no leaderboards, plots or per-query correlations for it.")
            continue
        labels[grade_set.id] = exam_qrels(store, grade_set)  # computed once, used by every step below
        report.coverage[grade_set.id] = grade_set_coverage(store, grade_set, labels[grade_set.id], floor)
        boards = sweep_boards(store, grade_set, runs, taus=TAUS, measures=options.measures,
                              budget=options.budget, missing_cover=options.missing, qrels=labels[grade_set.id])
        rows = [_correlate(board, official, grade_set) for board in boards]  # one leaderboard held at a time
        report.correlations.extend(rows)
        missing = rows[0]["missing"] if rows else missing
        correlation_table.rows.extend(_correlation_rows(grade_set, rows, options))
        _plots(report, out, official, grade_set, rows, options)
        _intervals(report, out, grade_set, runs, labels[grade_set.id], options)
        if judgments:
            _per_query(report, out, labels[grade_set.id], grade_set, runs, judgments, options)
    _section_grade_sets(report, every, store)
    correlation_table.mark_best_per_column(list(range(3, len(correlation_table.header) - 1)))
    left_out = _missing_text(missing)
    report.sections.insert(1, Section("Leaderboard correlation (like RUBRIC Table 3)",
                                      correlation_table.markdown() + (f"\n{escape(left_out)}\n" if left_out else ""),
                                      [(None, correlation_table)], notes=[left_out] if left_out else []))
    _probes(report, store, grade_sets, out)
    _answers_section(report, store, official, [s for s in every if is_answer_set(s)], out)
    _write_correlations(report, out, correlation_table)
    if judgments and grade_sets:
        _agreement(report, store, out, labels, judgments, options.judged_relevant)
    report.sections += extra_sections
    _write_report(report, out, official_name, options)
    return report


def _agreement(report: Report, store: Store, out: Path, labels: dict, judgments: dict, judged_relevant: int) -> None:
    """Agreement of every grade set's labels with the human judgments (>= `judged_relevant` relevant)."""
    agreement = store_agreement(store, judged_relevant, labels={(k, 1): v for k, v in labels.items()},
                                judgments=judgments)
    write_text(out / "agreement.json", json.dumps(agreement, indent=2))
    text = agreement_render.markdown(agreement)
    write_text(out / "agreement.md", text)
    report.files += [out / "agreement.json", out / "agreement.md"]
    tables = [(heading if n == 0 else None, t) for heading, group in agreement_render.sections(agreement)
              for n, t in enumerate(group)]
    report.sections.append(Section("Agreement with human judgments", text, tables, [agreement_render.title(agreement)]))


def _intervals(report: Report, out: Path, grade_set: GradeSet, runs: Any, labels: dict,
               options: AnalysisOptions) -> None:
    """The plotted measure's leaderboard with bootstrap intervals: a figure and a table section."""
    name = f"{grade_set.variant} / {grade_set.model} ({grade_set.id})"
    figure, section = intervals_part(out, report.slugs[grade_set.id], name, grade_set, runs, labels,
                                     options.plotted, options.plot_tau)
    report.figures.append(figure)
    report.sections.append(section)


def _write_correlations(report: Report, out: Path, table: Table) -> None:
    """correlations.tsv (the table) and correlations.json (every row)."""
    write_text(out / "correlations.tsv", table.tsv())
    write_text(out / "correlations.json", json.dumps(report.correlations, indent=2))
    report.files += [out / "correlations.tsv", out / "correlations.json"]


def _probes(report: Report, store: Store, grade_sets: list[GradeSet], out: Path) -> None:
    """The probe results of the grade sets that were probed, beside the correlations (and in probes.json)."""
    probes, probe_reports = probe_section(store, grade_sets)
    if probes is not None:
        report.sections.insert(2, probes)
        write_text(out / "probes.json", json.dumps(probe_reports, indent=2, ensure_ascii=False))
        report.files.append(out / "probes.json")


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


def _answers_section(report: Report, store: Store, official: LeaderboardFile, answer_sets: list[GradeSet],
                     out: Path) -> None:
    """The generated answers' scores (nugget-assign, citation-support grade sets) against the official ranking."""
    if not answer_sets:
        return
    rows, table = answer_correlations(store, official, answer_sets)
    write_text(out / "answers.json", json.dumps(rows, indent=2))
    write_text(out / "answers.tsv", table.tsv())
    report.files += [out / "answers.json", out / "answers.tsv"]
    report.sections.append(Section("Generated answers (nuggets, citations)", table.markdown(), [(None, table)]))


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


def _slugs(grade_sets: list[GradeSet]) -> dict[str, str]:
    """File-name parts per grade set id: `variant_model`, plus the id where two sets would share them."""
    names = [f"{s.variant}_{s.model}" for s in grade_sets]
    out = {}
    for grade_set, name in zip(grade_sets, names, strict=True):
        if names.count(name) > 1:
            name += f"_{grade_set.id}"
        out[grade_set.id] = "".join(c if c.isalnum() else "-" for c in name)
    return out


def _plots(report: Report, out: Path, official: LeaderboardFile, grade_set: GradeSet, rows: list[dict],
           options: AnalysisOptions) -> None:
    """Scatter and renormalised plots of the chosen configuration (never the best of the sweep)."""
    measure = parse_measure(options.plotted).name
    chosen = [r for r in (_find(rows, "EXAM-Qrels", measure, options.plot_tau),
                          _find(rows, "EXAM-Cover", "cover", options.plot_tau)) if r]
    name = f"{grade_set.variant} / {grade_set.model} ({grade_set.id})"
    chosen = [r for r in chosen if set(r["scores"]) & set(official.scores)]
    if not chosen:
        report.plot_notes.append(f"{name}: no system of its leaderboards is on the official leaderboard; no plots.")
        return
    how = (f"Shown: EXAM-Qrels {measure} and EXAM-Cover at τ = {options.plot_tau}, as chosen with --plot-measure "
           "and --plot-tau (not selected by their correlation; the table above has every configuration).")
    boards = {_label(r): r["scores"] for r in chosen}
    scatter_path = out / "plots" / f"scatter_{report.slugs[grade_set.id]}.png"
    plots.scatter(scatter_path, official.scores, boards, official.kind, f"Official vs predicted leaderboard — {name}")
    renorm_path = out / "plots" / f"renormalised_{report.slugs[grade_set.id]}.png"
    plots.renormalised(renorm_path, official.scores, boards,
                       f"Renormalised leaderboards, systems in official order — {name}", official.kind)
    report.figures += [Figure(f"Official vs predicted — {name}", scatter_path, how),
                       Figure(f"Renormalised leaderboards — {name}", renorm_path, how)]


def _per_query(report: Report, out: Path, labels, grade_set: GradeSet, runs, judgments, options) -> None:
    spec = parse_measure(options.per_query_measure)
    level = options.per_query_tau if spec.measure.uses_relevance_level else None
    predicted = measure_leaderboard(runs, labels, spec, level)
    official = measure_leaderboard(runs, judgments, spec, options.judged_relevant)
    per_query = per_query_correlation({e.system: e.per_query for e in predicted.entries},
                                      {e.system: e.per_query for e in official.entries})
    slug = report.slugs[grade_set.id]
    table = Table(["query", "Spearman ρ", "Kendall τ", "systems"],
                  [[q, v["spearman"], v["kendall"], v["n_systems"]] for q, v in per_query.items()],
                  caption=f"Per-query correlation of {spec.name} with EXAM-Qrels "
                  f"({'graded labels' if level is None else f'relevant at grade >= {level}'}) vs the same measure "
                  f"with the human judgments (relevant >= {options.judged_relevant}), query ids matched exactly")
    write_text(out / f"per_query_{slug}.tsv", table.tsv())
    report.files.append(out / f"per_query_{slug}.tsv")
    values = [v["kendall"] for v in per_query.values() if v["kendall"] is not None]
    name = f"{grade_set.variant} / {grade_set.model} ({grade_set.id})"
    if values:
        path = out / "plots" / f"per_query_{slug}.png"
        plots.distribution(path, values, f"Per-query Kendall τ, {spec.name} — {name}",
                           "Kendall τ-b of one query's leaderboard")
        report.figures.append(Figure(f"Per-query correlation — {name}", path,
                                     f"{spec.name} as chosen with --per-query-measure and --per-query-tau."))
    else:
        report.plot_notes.append(f"Per-query correlation — {name}: τ is undefined for every query; no plot.")
    undefined = len(per_query) - len(values)
    note = f"{undefined} queries have an undefined τ (every system scores the same)." if undefined else ""
    text = table.markdown() + (f"\n{note}\n" if note else "")
    report.sections.append(Section(f"Per-query correlation — {name}", text, [(None, table)],
                                   notes=[note] if note else []))


def _section_grade_sets(report: Report, grade_sets: list[GradeSet], store: Store) -> None:
    defaulted = ("defaulted", "invalid", "unanswerable")
    rows = []
    for s in grade_sets:
        statuses = store.grades.step_statuses(s.id).get(s.step, {})
        rows.append([s.id, s.variant, s.model, s.bank_label, s.prompt_version, s.grades, s.failures,
                     sum(statuses.get(k, 0) for k in defaulted), *coverage_cells(report.coverage.get(s.id))])
    table = Table(["grade set", "method", "model", "bank", "prompt version", "grades", "parse failures",
                   "defaulted (no number)", "queries graded", "pool pairs graded"], rows,
                  caption=f"Grade sets in {store.path}. Parse failures have no grade; defaulted replies got the "
                  "papers' default label (self-rating: 1, or 0 for unanswerable; graded prompts: 0, 002 §4.1). "
                  "Queries graded: of the bank's topics, else of the store's queries; pool pairs: every passage "
                  "the stored runs rank, and how many of them have a grade (docs/trust.md)")
    report.sections.insert(0, Section("Grade sets", table.markdown(), [(None, table)]))
    banner = warnings_section(report.coverage, {s.id: f"{s.variant} / {s.model} ({s.id})" for s in grade_sets})
    if banner is not None:
        report.sections.insert(0, banner)
        report.warnings += banner.notes


def _missing_text(missing: dict[str, list[str]]) -> str:
    parts = [f"{side.replace('_', ' ')}: {', '.join(systems)}" for side, systems in missing.items() if systems]
    return ("Systems left out of the correlations (" + "; ".join(parts) + ").") if parts else ""


def _write_report(report: Report, out: Path, official_name: str, options: AnalysisOptions) -> None:
    about = (f"Official leaderboard: {official_name}. Measures {', '.join(options.measures)}; τ = "
             f"{', '.join(map(str, TAUS))}; cover budget {options.budget}; judgments >= "
             f"{options.judged_relevant} count as relevant.")
    md = [f"# Proctor meta-evaluation\n\n{escape(about)}\n"]
    for section in report.sections:
        md += [f"## {escape(section.title)}\n", section.markdown]
    md.append("## Plots\n")
    md += [f"{escape(n)}\n" for n in report.plot_notes]
    for figure in report.figures:
        links = ", ".join(f"[{p.suffix[1:].upper()}](plots/{p.name})" for p in figure.files())
        md.append(f"### {escape(figure.title)}\n\n![{escape(figure.title)}](plots/{figure.png.name})\n\n"
                  f"{escape(figure.how)} Files: {links}.\n")
    write_text(out / "report.md", "\n".join(md))
    write_text(out / "report.html", render(about, report.sections, report.figures, report.plot_notes))
    report.files += [out / "report.md", out / "report.html", *(p for f in report.figures for p in f.files())]
