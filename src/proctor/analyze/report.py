"""`proctor analyze`: the whole meta-evaluation of a store in one pass, written as Markdown, TSV/JSON,
PNG plots and one self-contained HTML page.

For every grade set (method, model) it sweeps τ × measures (EXAM-Qrels) and τ (EXAM-Cover), correlates
each leaderboard with the official one (a table like 003 Table 3, best per column marked), computes the
agreement with the human judgments, correlates query by query, and draws the plots."""

from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.analyze import plots
from proctor.analyze.agreement_render import html_text as agreement_html
from proctor.analyze.agreement_render import markdown as agreement_markdown
from proctor.analyze.answers import answer_correlations, is_answer_set
from proctor.analyze.compare import compare, per_query_correlation
from proctor.analyze.judges import store_agreement
from proctor.analyze.tables import Table
from proctor.errors import UsageError
from proctor.evaluate.leaderboard import Leaderboard, measure_leaderboard
from proctor.evaluate.measures import parse_measure
from proctor.evaluate.sources import exam_qrels, load_runs
from proctor.evaluate.sweep import sweep
from proctor.io.leaderboards import LeaderboardFile
from proctor.markdown import escape
from proctor.outputs import folder_target, write_text
from proctor.records import GradeSet
from proctor.store import Store

MEASURES = ("P@20", "nDCG@10", "RR", "AP", "Rprec")
TAUS = (1, 2, 3, 4, 5)


@dataclass
class AnalyzeOptions:
    """What `proctor analyze` sweeps and against what."""

    official_name: str
    judged_relevant: int = 2
    measures: tuple[str, ...] = MEASURES
    taus: tuple[int, ...] = TAUS
    budget: int = 20
    missing_cover: str = "zero"
    per_query_measure: str = "nDCG@10"
    per_query_tau: int = 3


@dataclass
class Report:
    """Everything the report shows, kept as data until it is written."""

    correlations: list[dict[str, Any]] = field(default_factory=list)
    sections: list[tuple[str, str, str]] = field(default_factory=list)
    """(title, markdown, html) in order."""
    images: dict[str, Path] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    slugs: dict[str, str] = field(default_factory=dict)
    """File-name part of every grade set's plots and tables."""


def analyze(store: Store, official: LeaderboardFile, options: AnalyzeOptions, out: Path) -> Report:
    """Run the meta-evaluation and write it into `out`; returns what was written."""
    folder_target(out)
    if (out / "plots").is_symlink():
        raise UsageError(f"--out {out}: plots is a symlink; Proctor writes only into folders of its own")
    (out / "plots").mkdir(exist_ok=True)
    report = Report()
    runs = load_runs(store, None)
    judgments = store.judgments()
    every = [s for s in store.grade_sets() if not s.intermediate]
    grade_sets = [s for s in every if not is_answer_set(s)]
    report.slugs = _slugs(every)
    _section_grade_sets(report, every, store)
    correlation_table = Table(["method", "model", "τ"] + [f"{m} {c}" for m in options.measures for c in ("ρ", "τ")]
                              + ["Cover ρ", "Cover τ", "grade set"],
                              caption=f"Leaderboard correlation with {options.official_name} (Spearman ρ, "
                              f"Kendall τ-b); EXAM-Qrels at relevance level τ, EXAM-Cover at grade ≥ τ with "
                              f"budget {options.budget}, missing queries: {options.missing_cover}. Bold: best "
                              "per column. nDCG ignores τ.")
    missing: dict[str, list[str]] = {}
    labels: dict[str, dict[str, dict[str, int]]] = {}
    for grade_set in grade_sets:
        labels[grade_set.id] = exam_qrels(store, grade_set)  # computed once, used by every step below
        boards = sweep(store, grade_set, runs, taus=options.taus, measures=options.measures,
                       budget=options.budget, missing_cover=options.missing_cover, qrels=labels[grade_set.id])
        rows = [_correlate(board, official, grade_set) for board in boards]
        report.correlations.extend(rows)
        missing = rows[0]["missing"] if rows else missing
        for tau in options.taus:
            row: list[object] = [grade_set.variant, grade_set.model, tau]
            for name in options.measures:
                hit = _find(rows, "EXAM-Qrels", parse_measure(name).name, tau)
                row += [hit["spearman"], hit["kendall"]] if hit else [None, None]
            hit = _find(rows, "EXAM-Cover", "cover", tau)
            row += [hit["spearman"], hit["kendall"]] if hit else [None, None]
            correlation_table.rows.append([*row, grade_set.id])
        _plots(report, out, official, grade_set, boards, rows)
        if judgments:
            _per_query(report, out, labels[grade_set.id], grade_set, runs, judgments, options)
    correlation_table.mark_best_per_column(list(range(3, len(correlation_table.header) - 1)))
    left_out = _missing_text(missing)
    report.sections.insert(1, ("Leaderboard correlation (like RUBRIC Table 3)",
                               correlation_table.markdown() + (f"\n{escape(left_out)}\n" if left_out else ""),
                               correlation_table.html() + (f"<p>{html.escape(left_out)}</p>" if left_out else "")))
    _answers_section(report, store, official, [s for s in every if is_answer_set(s)], out)
    write_text(out / "correlations.tsv", correlation_table.tsv())
    write_text(out / "correlations.json", json.dumps(report.correlations, indent=2))
    report.files += [out / "correlations.tsv", out / "correlations.json"]
    if judgments and grade_sets:
        agreement = store_agreement(store, options.judged_relevant, labels={(k, 1): v for k, v in labels.items()})
        write_text(out / "agreement.json", json.dumps(agreement, indent=2))
        text = agreement_markdown(agreement)
        write_text(out / "agreement.md", text)
        report.files += [out / "agreement.json", out / "agreement.md"]
        report.sections.append(("Agreement with human judgments", text, agreement_html(agreement)))
    _write_report(report, out, options)
    return report


def _answers_section(report: Report, store: Store, official: LeaderboardFile, answer_sets: list[GradeSet],
                     out: Path) -> None:
    """The generated answers' scores (nugget-assign, citation-support grade sets) against the official ranking."""
    if not answer_sets:
        return
    rows, table = answer_correlations(store, official, answer_sets)
    write_text(out / "answers.json", json.dumps(rows, indent=2))
    write_text(out / "answers.tsv", table.tsv())
    report.files += [out / "answers.json", out / "answers.tsv"]
    report.sections.append(("Generated answers (nuggets, citations)", table.markdown(), table.html()))


def _correlate(board: Leaderboard, official: LeaderboardFile, grade_set: GradeSet) -> dict[str, Any]:
    d = board.description
    cover = board.kind == "cover"
    result = compare(LeaderboardFile(board.scores()), official, samples=0)
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


def _best(rows: list[dict], metric: str) -> dict | None:
    candidates = [r for r in rows if r["metric"] == metric and r["kendall"] is not None]
    return max(candidates, key=lambda r: r["kendall"]) if candidates else None


def _label(row: dict) -> str:
    tau = "" if row["tau"] is None else f", τ={row['tau']}"
    return f"{row['metric']} {row['measure']}{tau} (Kendall {row['kendall']:.3f})"


def _slugs(grade_sets: list[GradeSet]) -> dict[str, str]:
    """File-name parts per grade set id: `variant_model`, plus the id where two sets would share them."""
    names = [f"{s.variant}_{s.model}" for s in grade_sets]
    out = {}
    for grade_set, name in zip(grade_sets, names, strict=True):
        if names.count(name) > 1:
            name += f"_{grade_set.id}"
        out[grade_set.id] = "".join(c if c.isalnum() else "-" for c in name)
    return out


def _plots(report: Report, out: Path, official: LeaderboardFile, grade_set: GradeSet, boards, rows) -> None:
    best = [b for b in (_best(rows, "EXAM-Qrels"), _best(rows, "EXAM-Cover")) if b]
    if not best:
        return
    name = f"{grade_set.variant} / {grade_set.model} ({grade_set.id})"
    scatter_path = out / "plots" / f"scatter_{report.slugs[grade_set.id]}.png"
    plots.scatter(scatter_path, official.scores, {_label(b): b["scores"] for b in best}, official.kind,
                  f"Official vs predicted leaderboard — {name}")
    renorm_path = out / "plots" / f"renormalised_{report.slugs[grade_set.id]}.png"
    plots.renormalised(renorm_path, official.scores, {_label(b): b["scores"] for b in best},
                       f"Renormalised leaderboards, systems in official order — {name}")
    report.images[f"Official vs predicted — {name}"] = scatter_path
    report.images[f"Renormalised leaderboards — {name}"] = renorm_path


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
    path = out / "plots" / f"per_query_{slug}.png"
    plots.distribution(path, values, f"Per-query Kendall τ, {spec.name} — {grade_set.variant} / "
                       f"{grade_set.model} ({grade_set.id})", "Kendall τ-b of one query's leaderboard")
    report.images[f"Per-query correlation — {grade_set.variant} / {grade_set.model} ({grade_set.id})"] = path
    undefined = len(per_query) - len(values)
    note = f"\n{undefined} queries have an undefined τ (every system scores the same).\n" if undefined else ""
    report.sections.append((f"Per-query correlation — {grade_set.variant} / {grade_set.model} ({grade_set.id})",
                            table.markdown() + note, table.html() + html.escape(note)))


def _section_grade_sets(report: Report, grade_sets: list[GradeSet], store: Store) -> None:
    defaulted = ("defaulted", "invalid", "unanswerable")
    rows = []
    for s in grade_sets:
        statuses = store.step_statuses(s.id).get(s.step, {})
        rows.append([s.id, s.variant, s.model, s.bank_label, s.prompt_version, s.grades, s.failures,
                     sum(statuses.get(k, 0) for k in defaulted)])
    table = Table(["grade set", "method", "model", "bank", "prompt version", "grades", "parse failures",
                   "defaulted (no number)"], rows,
                  caption=f"Grade sets in {store.path}. Parse failures have no grade; defaulted replies got the "
                  "papers' default label (self-rating: 1, or 0 for unanswerable; graded prompts: 0, 002 §4.1)")
    report.sections.insert(0, ("Grade sets", table.markdown(), table.html()))


def _missing_text(missing: dict[str, list[str]]) -> str:
    parts = [f"{side.replace('_', ' ')}: {', '.join(systems)}" for side, systems in missing.items() if systems]
    return ("Systems left out of the correlations (" + "; ".join(parts) + ").") if parts else ""


def _write_report(report: Report, out: Path, options: AnalyzeOptions) -> None:
    about = (f"Official leaderboard: {options.official_name}. Measures {', '.join(options.measures)}; τ = "
             f"{', '.join(map(str, options.taus))}; cover budget {options.budget}; judgments >= "
             f"{options.judged_relevant} count as relevant.")
    md = [f"# Proctor meta-evaluation\n\n{escape(about)}\n"]
    for title, text, _ in report.sections:
        md += [f"## {escape(title)}\n", text]
    md.append("## Plots\n")
    md += [f"### {escape(title)}\n\n![{escape(title)}](plots/{path.name})\n" for title, path in report.images.items()]
    write_text(out / "report.md", "\n".join(md))
    body = [f"<h1>Proctor meta-evaluation</h1><p>{html.escape(about)}</p>"]
    for title, _, fragment in report.sections:
        body.append(f"<h2>{html.escape(title)}</h2>\n{fragment}")
    body.append("<h2>Plots</h2>")
    for title, path in report.images.items():
        data = base64.b64encode(path.read_bytes()).decode()
        body.append(f"<figure><img alt=\"{html.escape(title)}\" src=\"data:image/png;base64,{data}\">"
                    f"<figcaption>{html.escape(title)}</figcaption></figure>")
    page = ("<!doctype html><html><head><meta charset=\"utf-8\"><title>Proctor meta-evaluation</title><style>"
            "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}"
            "table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;"
            "text-align:right}th{background:#f3f3f3}caption{caption-side:top;text-align:left;font-style:italic}"
            "img{max-width:100%}</style></head><body>" + "\n".join(body) + "</body></html>")
    write_text(out / "report.html", page)
    report.files += [out / "report.md", out / "report.html", *report.images.values()]

