"""The robustness section of `proctor analyze`: each grade set's latest probe report (`proctor probe`), shown
beside its correlations, and written as `probes.json`."""

from __future__ import annotations

from typing import Any

from proctor.analyze.html_report import Section
from proctor.analyze.tables import Table
from proctor.records import GradeSet
from proctor.store import Store


def probe_rows(report: dict[str, Any]) -> list[list[object]]:
    """One row per attack and guard, then the control and the control under each guard: attack, guard,
    passages, mean label change, flipped to relevant at each threshold (`τ=share` joined), flagged, failed."""
    rows = []
    for row in [*report["attacks"], report["control"], *report.get("guard_costs", [])]:
        flipped = ", ".join(f"τ={t}: " + ("-" if share is None else f"{share:.2f}")
                            for t, share in row["flipped_to_relevant"].items())
        change = row["mean_label_change"]
        rows.append([row["attack"], row["guard"] or "-", row["passages"],
                     "-" if change is None else round(change, 3), flipped, row["flagged"], row["failed"]])
    return rows


HEADER = ["attack", "guard", "passages", "mean label change", "flipped to relevant", "flagged", "failed"]


def probe_section(store: Store, grade_sets: list[GradeSet]) -> tuple[Section | None, dict[str, Any]]:
    """The section (None when no grade set was probed) and the reports by grade set id."""
    reports = {s.id: r for s in grade_sets if (r := store.probes.probe_report(s.id)) is not None}
    if not reports:
        return None, {}
    tables: list[tuple[str | None, Table]] = []
    for grade_set_id, report in reports.items():
        gs, sample = report["grade_set"], report["sample"]
        caption = (f"Probe of {grade_set_id} ({gs['method']} / {gs['model']}): {sample['probed']} passages "
                   f"{sample['basis']}, seed {sample['seed']}. Mean label change: probe label minus the grade set's "
                   "label; flipped: share of the probed passages raised to at least τ; control: the unmodified "
                   "passages graded again.")
        tables.append((f"Grade set {grade_set_id}", Table(HEADER, probe_rows(report), caption=caption)))
    markdown = "\n".join(f"### {title}\n\n{table.markdown()}" for title, table in tables)
    return Section("Robustness probes (proctor probe)", markdown, tables), reports
