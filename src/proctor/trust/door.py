"""The API's door to trust in a judge: ensembles, calibration on a few human labels, the review queue and
robustness probes (re-exported by `proctor.api`; heavy modules load on first use)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from proctor.errors import UsageError
from proctor.gradesets.resolve import resolve_grade_set
from proctor.store import Store


def ensemble(store: Store, grade_sets: Sequence[str], rule: str, *, name: str | None = None,
             show: int = 10) -> dict[str, Any]:
    """Make (or derive again) the ensemble of grade sets (ids or unique prefixes) combined by `rule` (mean,
    median, max, min, majority): a grade set like any other. Returns it with its members, the counts of cells
    where members disagree, and the `show` cells of largest spread."""
    from proctor.gradesets.ensemble import derive, disagreements

    members = [resolve_grade_set(store, g) for g in grade_sets]
    if store.read_only:
        raise UsageError(f"{store.path}: the store cannot be written (read-only file or folder)")
    grade_set, summary = derive(store, members, rule, name)
    return {"grade_set": grade_set.as_dict(), "name": name, "rule": rule, "level": grade_set.params["level"],
            "scale": grade_set.params["scale"],
            "members": [m.as_dict() for m in sorted(members, key=lambda m: m.id)], "summary": summary,
            "disagreements": disagreements(store, grade_set, show)}

def calibrate(store: Store, grade_set: str | None = None, *, qrels: str = "official",
              budgets: Sequence[int] = (5,), repeats: int = 10, seed: int = 0, judged_relevant: int = 1,
              measure: str = "P@20") -> dict[str, Any]:
    """Calibration on a few human labels: per budget N, `repeats` samples of N judged topics choose the labelling
    rule; held-out Cohen's kappa, Krippendorff's alpha and leaderboard Kendall tau (`curve`, one point per
    budget). `qrels`: official, reviewers, official+reviewers or a qrels file."""
    from proctor.trust.calibration import calibration, check_options

    check_options(budgets, repeats, judged_relevant, measure, seed)  # before the store is read
    chosen = resolve_grade_set(store, grade_set)
    return calibration(store, chosen, qrels=qrels, budgets=budgets, repeats=repeats, seed=seed,
                       judged_relevant=judged_relevant, measure=measure)

def to_review(store: Store, grade_set: str | None = None, *, min_grade: int = 4, depth: int = 20,
              limit: int = 50) -> dict[str, Any]:
    """The review app's "to review" queue: labelled passages ordered by how much a human verdict would change
    (pairs of systems it alone decides on P@depth, ensemble members' spread, label at `min_grade`)."""
    from proctor.gradesets.ensemble import check_min_grade
    from proctor.trust.review_queue import review_queue

    if limit < 1 or depth < 1:
        raise UsageError("limit and depth must be at least 1")
    chosen = resolve_grade_set(store, grade_set)
    check_min_grade(chosen, min_grade)
    return review_queue(store, chosen, min_grade=min_grade, depth=depth, limit=limit)


def probe(store: Store, grade_set: str, attacks: Sequence[str], *, guards: Sequence[str] = (), sample: int = 20,
          seed: int = 0, llm: str | None = None, **backend: Any) -> dict[str, Any]:
    """Probe a grade set's judge with attacked copies of non-relevant pool passages (`attacks`), without and with
    each guard (`detect`, `harden`); `llm` defaults to the grade set's backend and model, `backend` are
    `BackendConfig` fields. Returns the report (what `proctor probe --format json` prints)."""
    from proctor.robustness.probe import probe_grade_set

    return asyncio.run(probe_grade_set(store, resolve_grade_set(store, grade_set), attacks, guards, sample, seed, llm,
                                       backend))

def render_probe(report: dict[str, Any], fmt: str = "tsv") -> str:
    """A probe report as `tsv`, `json` or `md`."""
    from proctor.robustness.report import render_report

    return render_report(report, fmt)
