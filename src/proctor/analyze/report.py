"""`proctor analyze`: the whole meta-evaluation of a store in one pass, written as Markdown, TSV/JSON,
plots (PNG, PDF, SVG) and one self-contained HTML page (Jinja2 template, `analyze/html_report.py`).

For every grade set (method, model) it sweeps τ × measures (EXAM-Qrels) and τ (EXAM-Cover), correlates
each leaderboard with the official one (a table like 003 Table 3, best per column marked), computes the
agreement with the human judgments, correlates query by query, and draws the plots — of the configuration
the user chose (`--plot-measure`, `--plot-tau`), never silently the best of the sweep."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from proctor.analyze import agreement_render
from proctor.analyze.answers_section import answer_correlations, is_answer_set
from proctor.analyze.html_report import Figure, Section, render
from proctor.analyze.judges import store_agreement
from proctor.analyze.robustness_section import probe_section
from proctor.analyze.sweep_section import TAUS, GradeSetPart, grade_set_part
from proctor.analyze.tables import Table
from proctor.analyze.trust_section import coverage_cells, warnings_section
from proctor.errors import UsageError
from proctor.evaluate.coverage import Coverage, Floor
from proctor.evaluate.leaderboard_files import LeaderboardFile
from proctor.evaluate.sources import load_runs
from proctor.gradesets.ensemble import fresh_grade_sets
from proctor.markdown import escape
from proctor.options.analysis import AnalysisOptions
from proctor.outputs import folder_target, format_of, json_text, write_text
from proctor.records import FrozenDict, GradeSet, frozen
from proctor.store import Store


@dataclass(frozen=True)
class AnalysisReport:
    """Everything the report shows, as data: made once, when every file is written (`analyze`), and frozen (the
    sequences given are kept as tuples, the mappings and the correlations' rows as read-only JSON)."""

    correlations: Sequence[Mapping[str, Any]] = ()
    """Every leaderboard of the sweep correlated with the official one (`correlations.json`'s rows)."""
    sections: Sequence[Section] = ()
    figures: Sequence[Figure] = ()
    plot_notes: Sequence[str] = ()
    """Why a plot is missing (a grade set without grades, no system in common with the official board)."""
    files: Sequence[Path] = ()
    slugs: Mapping[str, str] = field(default_factory=FrozenDict)
    """File-name part of every grade set's plots and tables."""
    coverage: Mapping[str, Coverage] = field(default_factory=FrozenDict)
    """What every grade set's labels rest on (grade sets of passages with grades)."""
    warnings: Sequence[str] = ()
    """Grade sets below the floor, one line each (the command prints them on standard error)."""

    formats: ClassVar[tuple[str, ...]] = ("text", "json")
    """The formats `render` writes, the default first (the report itself is the files in `files`)."""

    def __post_init__(self) -> None:
        for name in ("sections", "figures", "plot_notes", "files", "warnings"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "correlations", frozen(list(self.correlations)))
        object.__setattr__(self, "slugs", FrozenDict(self.slugs))
        object.__setattr__(self, "coverage", FrozenDict(self.coverage))

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
        if format_of(self, fmt) == "json":
            return json_text(self.to_json())
        lines = [*(f"warning: {w}" for w in self.warnings), *self.plot_notes, f"wrote {len(self.files)} files:",
                 *(f"  {f}" for f in self.files)]
        return "\n".join(lines) + "\n"


def analyze(store: Store, official: LeaderboardFile, official_name: str, options: AnalysisOptions, out: Path, *,
            extra_sections: tuple[Section, ...] = ()) -> AnalysisReport:
    """Run the meta-evaluation against the `official` leaderboard (read from the file `official_name`) and write
    it into `out`, with the `extra_sections` the layers above add at the end (the prediction-powered
    leaderboards of `api.reports`); returns what was written."""
    folder_target(out, "{out}")
    if (out / "plots").is_symlink():
        raise UsageError(f"{{out}} {out}: plots is a symlink; Proctor writes only into folders of its own",
                         params=("out",))
    (out / "plots").mkdir(exist_ok=True)
    floor = Floor(options.floor_queries, options.floor_graded)
    runs = load_runs(store, None)
    judgments = store.corpus.judgments()
    every = [s for s in fresh_grade_sets(store) if not s.intermediate]
    grade_sets = [s for s in every if not is_answer_set(s)]
    slugs = _slugs(every)
    parts = [grade_set_part(store, out, official, s, runs, judgments, slugs[s.id], floor, options)
             for s in grade_sets]
    coverage = {s.id: part.coverage for s, part in zip(grade_sets, parts, strict=True) if part.coverage is not None}
    correlations = [row for part in parts for row in part.correlations]
    table = _correlation_table(official_name, options, parts)
    head, warnings = _section_grade_sets(every, store, coverage)
    sections = [*head, *(section for part in parts for section in part.sections)]
    sections.insert(1, _correlation_section(table, parts))
    probes, probe_files = _probes(store, grade_sets, out)
    if probes is not None:
        sections.insert(2, probes)
    answers, answer_files = _answers_section(store, official, [s for s in every if is_answer_set(s)], out)
    sections += answers
    files = [*(f for part in parts for f in part.files), *probe_files, *answer_files,
             *_write_correlations(out, table, correlations)]
    if judgments and grade_sets:
        labels = {s.id: part.labels for s, part in zip(grade_sets, parts, strict=True) if part.labels is not None}
        agreement, agreement_files = _agreement(store, out, labels, judgments, options.judged_relevant)
        sections.append(agreement)
        files += agreement_files
    sections += extra_sections
    figures = [figure for part in parts for figure in part.figures]
    notes = [note for part in parts for note in part.notes]
    files += _write_report(out, official_name, options, sections, figures, notes)
    return AnalysisReport(correlations, sections, figures, notes, files, slugs, coverage, warnings)


def _correlation_table(official_name: str, options: AnalysisOptions, parts: list[GradeSetPart]) -> Table:
    """Every grade set's rows of the sweep's correlations, the best per column marked."""
    table = Table(["method", "model", "τ"] + [f"{m} {c}" for m in options.measures for c in ("ρ", "τ")]
                  + ["Cover ρ", "Cover τ", "grade set"], [row for part in parts for row in part.table_rows],
                  caption=f"Leaderboard correlation with {official_name} (Spearman ρ, Kendall τ-b); EXAM-Qrels at "
                  f"relevance level τ, EXAM-Cover at grade ≥ τ with budget {options.budget}, missing queries: "
                  f"{options.missing}. Bold: best per column where the column's values differ. nDCG ignores τ.")
    return table.with_best_per_column(range(3, len(table.header) - 1))


def _correlation_section(table: Table, parts: list[GradeSetPart]) -> Section:
    """The correlation table, with the systems left out (those of the last grade set correlated)."""
    missing = next((part.correlations[0]["missing"] for part in reversed(parts) if part.correlations), {})
    left_out = _missing_text(missing)
    return Section("Leaderboard correlation (like RUBRIC Table 3)",
                   table.markdown() + (f"\n{escape(left_out)}\n" if left_out else ""), [(None, table)],
                   notes=[left_out] if left_out else [])


def _agreement(store: Store, out: Path, labels: dict, judgments: dict, judged_relevant: int
               ) -> tuple[Section, list[Path]]:
    """Agreement of every grade set's labels with the human judgments (>= `judged_relevant` relevant): the section,
    and agreement.json and agreement.md written."""
    agreement = store_agreement(store, judged_relevant, labels={(k, 1): v for k, v in labels.items()},
                                judgments=judgments)
    write_text(out / "agreement.json", json.dumps(agreement, indent=2))
    text = agreement_render.markdown(agreement)
    write_text(out / "agreement.md", text)
    tables = [(heading if n == 0 else None, t) for heading, group in agreement_render.sections(agreement)
              for n, t in enumerate(group)]
    return (Section("Agreement with human judgments", text, tables, [agreement_render.title(agreement)]),
            [out / "agreement.json", out / "agreement.md"])


def _write_correlations(out: Path, table: Table, correlations: list[dict[str, Any]]) -> list[Path]:
    """correlations.tsv (the table) and correlations.json (every row)."""
    write_text(out / "correlations.tsv", table.tsv())
    write_text(out / "correlations.json", json.dumps(correlations, indent=2))
    return [out / "correlations.tsv", out / "correlations.json"]


def _probes(store: Store, grade_sets: list[GradeSet], out: Path) -> tuple[Section | None, list[Path]]:
    """The probe results of the grade sets that were probed, beside the correlations (and in probes.json)."""
    probes, probe_reports = probe_section(store, grade_sets)
    if probes is None:
        return None, []
    write_text(out / "probes.json", json.dumps(probe_reports, indent=2, ensure_ascii=False))
    return probes, [out / "probes.json"]


def _answers_section(store: Store, official: LeaderboardFile, answer_sets: list[GradeSet],
                    out: Path) -> tuple[list[Section], list[Path]]:
    """The generated answers' scores (nugget-assign, citation-support grade sets) against the official ranking:
    its section (none without such grade sets) and the files written."""
    if not answer_sets:
        return [], []
    rows, table = answer_correlations(store, official, answer_sets)
    write_text(out / "answers.json", json.dumps(rows, indent=2))
    write_text(out / "answers.tsv", table.tsv())
    return ([Section("Generated answers (nuggets, citations)", table.markdown(), [(None, table)])],
            [out / "answers.json", out / "answers.tsv"])


def _slugs(grade_sets: list[GradeSet]) -> dict[str, str]:
    """File-name parts per grade set id: `variant_model`, plus the id where two sets would share them."""
    names = [f"{s.variant}_{s.model}" for s in grade_sets]
    out = {}
    for grade_set, name in zip(grade_sets, names, strict=True):
        if names.count(name) > 1:
            name += f"_{grade_set.id}"
        out[grade_set.id] = "".join(c if c.isalnum() else "-" for c in name)
    return out


def _section_grade_sets(grade_sets: list[GradeSet], store: Store, coverage: dict[str, Coverage]
                        ) -> tuple[list[Section], list[str]]:
    """The grade sets' table (with the banner of those below the floor before it) and the banner's warnings."""
    defaulted = ("defaulted", "invalid", "unanswerable")
    rows = []
    for s in grade_sets:
        statuses = store.grades.step_statuses(s.id).get(s.step, {})
        rows.append([s.id, s.variant, s.model, s.bank_label, s.prompt_version, s.grades, s.failures,
                     sum(statuses.get(k, 0) for k in defaulted), *coverage_cells(coverage.get(s.id))])
    table = Table(["grade set", "method", "model", "bank", "prompt version", "grades", "parse failures",
                   "defaulted (no number)", "queries graded", "pool pairs graded"], rows,
                  caption=f"Grade sets in {store.path}. Parse failures have no grade; defaulted replies got the "
                  "papers' default label (self-rating: 1, or 0 for unanswerable; graded prompts: 0, 002 §4.1). "
                  "Queries graded: of the bank's topics, else of the store's queries; pool pairs: every passage "
                  "the stored runs rank, and how many of them have a grade (docs/trust.md)")
    section = Section("Grade sets", table.markdown(), [(None, table)])
    banner = warnings_section(coverage, {s.id: f"{s.variant} / {s.model} ({s.id})" for s in grade_sets})
    if banner is None:
        return [section], []
    return [banner, section], list(banner.notes)


def _missing_text(missing: dict[str, list[str]]) -> str:
    parts = [f"{side.replace('_', ' ')}: {', '.join(systems)}" for side, systems in missing.items() if systems]
    return ("Systems left out of the correlations (" + "; ".join(parts) + ").") if parts else ""


def _write_report(out: Path, official_name: str, options: AnalysisOptions, sections: list[Section],
                  figures: list[Figure], plot_notes: list[str]) -> list[Path]:
    """report.md and report.html; returns them and the figures' files."""
    about = (f"Official leaderboard: {official_name}. Measures {', '.join(options.measures)}; τ = "
             f"{', '.join(map(str, TAUS))}; cover budget {options.budget}; judgments >= "
             f"{options.judged_relevant} count as relevant.")
    md = [f"# Proctor meta-evaluation\n\n{escape(about)}\n"]
    for section in sections:
        md += [f"## {escape(section.title)}\n", section.markdown]
    md.append("## Plots\n")
    md += [f"{escape(n)}\n" for n in plot_notes]
    for figure in figures:
        links = ", ".join(f"[{p.suffix[1:].upper()}](plots/{p.name})" for p in figure.files())
        md.append(f"### {escape(figure.title)}\n\n![{escape(figure.title)}](plots/{figure.png.name})\n\n"
                  f"{escape(figure.how)} Files: {links}.\n")
    write_text(out / "report.md", "\n".join(md))
    write_text(out / "report.html", render(about, sections, figures, plot_notes))
    return [out / "report.md", out / "report.html", *(p for f in figures for p in f.files())]
