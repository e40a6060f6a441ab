"""A probe's figures: per (attack, guard) the passages probed, the mean label change against the probed grade
set's own labels, the share flipped to relevant at the grade set's usual thresholds, and how many were flagged;
the same for the control (the unmodified passages graded again) and for the control under each guard (the
guard's cost). Rendered as JSON, TSV or Markdown."""

from __future__ import annotations

import json
from statistics import fmean
from typing import Any

from proctor.errors import UsageError
from proctor.methods import Method
from proctor.records import GradeSet, grade_set_id
from proctor.robustness.attacks import ATTACKS
from proctor.robustness.sample import CONTROL, Pair, ProbeOptions, Sample, Variant

PROBE_FORMAT = "tsv"
"""The format a probe report is written in when none is named."""


def probe_set_id(grade_set: GradeSet, variant: Variant, sample: int, seed: int) -> str:
    """The id of one probe grade set: the probed grade set's identity plus what was probed."""
    params = {**grade_set.params, "probe_of": grade_set.id, "variant": variant.name, "guard": variant.guard,
              "sample": sample, "seed": seed}
    return grade_set_id(grade_set.method, grade_set.model, variant.prompt_version, grade_set.bank,
                        grade_set.bank_version, params)


def usual_thresholds(method: Method) -> list[int]:
    """The grade set's usual relevance thresholds: the top two grades of its scale (0-5: 4 and 5, the EXAM /
    RUBRIC relevance levels; 0-3: 2 and 3; 0-2: 1 and 2), the top one on a binary scale."""
    return [t for t in (method.high - 1, method.high) if t > method.low]


def labels_of(variant: Variant, pairs: list[Pair]) -> dict[Pair, int | None]:
    """The label of each pair (the maximum grade over its items, failed grades left out; None when every grade
    failed or the pair was flagged)."""
    best: dict[Pair, int | None] = {pair: None for pair in pairs}
    for (qid, pid, _), (grade, _, _) in variant.grades.items():
        if grade is not None and (qid, pid) in best:
            current = best[(qid, pid)]
            best[(qid, pid)] = grade if current is None else max(current, grade)
    return best


def figures(variant: Variant, sample: Sample, thresholds: list[int], ident: str) -> dict[str, Any]:
    """One row: `mean_label_change` over the passages that got a label; `flipped_to_relevant` (per threshold τ)
    the share of the probed passages that did not fail whose original label was below τ and whose probe label
    reaches it (a flagged passage gets no grade, so it never flips; None when every passage failed)."""
    labels = labels_of(variant, sample.pairs)
    labelled = {pair: label for pair, label in labels.items() if label is not None}
    changes = [label - sample.labels[pair] for pair, label in labelled.items()]
    n = len(sample.pairs)
    counted = len(labelled) + len(variant.flagged)  # a failed passage is unknown, not "not flipped"
    flipped = {str(t): round(sum(1 for pair, label in labelled.items() if sample.labels[pair] < t <= label)
                             / counted, 4) if counted else None for t in thresholds}
    return {"attack": variant.name, "guard": variant.guard, "passages": n,
            "mean_label_change": round(fmean(changes), 4) if changes else None,
            "flipped_to_relevant": flipped, "flagged": len(variant.flagged), "labelled": len(labelled),
            "failed": n - len(labelled) - len(variant.flagged), "prompt_version": variant.prompt_version,
            "probe_grade_set": ident}


def build_report(grade_set: GradeSet, method: Method, sample: Sample, results: list[Variant],
                 options: ProbeOptions) -> dict[str, Any]:
    """The probe report (what `proctor probe --format json` prints)."""
    thresholds = usual_thresholds(method)
    rows = [figures(v, sample, thresholds, probe_set_id(grade_set, v, options.sample, options.seed))
            for v in results]
    flagged = [{"attack": v.name, "query_id": q, "passage_id": p, "reason": reason}
               for v in results for (q, p), reason in sorted(v.flagged.items())]
    return {
        "grade_set": {"id": grade_set.id, "method": grade_set.method, "model": grade_set.model,
                      "prompt_version": grade_set.prompt_version, "bank": grade_set.bank_label},
        "sample": {"asked": options.sample, "probed": len(sample.pairs), "available": sample.available,
                   "basis": sample.basis, "seed": options.seed},
        "thresholds": thresholds,
        "attacks": [r for r in rows if r["attack"] != CONTROL],
        "control": next(r for r in rows if r["attack"] == CONTROL and r["guard"] is None),
        "guard_costs": [r for r in rows if r["attack"] == CONTROL and r["guard"] is not None],
        "flagged_pairs": flagged,
        "sources": {name: ATTACKS[name].source for name in options.attacks},
        "note": "mean_label_change: probe label minus the grade set's label, over passages that got a label; "
                "flipped_to_relevant: share of the probed passages that did not fail (labelled or flagged) below "
                "the threshold before and at or above it after (null when every one failed); control: the unmodified "
                "passages graded again; guard_costs: the control under each guard",
    }


def _rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [*report["attacks"], report["control"], *report.get("guard_costs", [])]


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def render_report(report: dict[str, Any], fmt: str = PROBE_FORMAT) -> str:
    """The report as `json`, `tsv` (one row per attack and guard, then the controls) or `md`."""
    if fmt == "json":
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if fmt not in ("tsv", "md"):
        raise UsageError(f"unknown format {fmt!r}: tsv, json or md")
    taus = [str(t) for t in report["thresholds"]]
    header = ["attack", "guard", "passages", "mean_label_change", *(f"flipped@{t}" for t in taus), "flagged",
              "failed"]
    lines = [[r["attack"], r["guard"] or "-", str(r["passages"]), _num(r["mean_label_change"]),
              *(_share(r["flipped_to_relevant"][t]) for t in taus), str(r["flagged"]), str(r["failed"])]
             for r in _rows(report)]
    if fmt == "tsv":
        return "\n".join("\t".join(row) for row in [header, *lines]) + "\n"
    gs, sample = report["grade_set"], report["sample"]
    title = (f"Probe of grade set {gs['id']} ({gs['method']} / {gs['model']}, prompt {gs['prompt_version']}, bank "
             f"{gs['bank']}): {sample['probed']} passages {sample['basis']}, seed {sample['seed']}\n\n")
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    table += ["| " + " | ".join(row) + " |" for row in lines]
    return title + "\n".join(table) + "\n"
