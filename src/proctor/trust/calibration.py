"""`calibrate`'s whole computation: options checked, the human judgments chosen (official, the reviewers' own,
or a qrels file), the pool built once, the curve drawn, and everything said about how it was made."""

from __future__ import annotations

import math
from typing import Any

from proctor.errors import UsageError
from proctor.evaluate.labels import Qrels
from proctor.evaluate.measures import parse_measure
from proctor.evaluate.sources import load_runs, official_or_file_qrels
from proctor.gradesets.resolve import describe
from proctor.options.calibration import CalibrationOptions
from proctor.options.numeric import check_numbers
from proctor.records import GradeSet
from proctor.store import Store
from proctor.trust.calibrate import HIGH, LOW, build_pool, curve, fixed_rules


def human_judgments(store: Store, which: str) -> tuple[Qrels, str]:
    """`official` (imported judgments), `reviewers` (the newest judgment of each passage that reviewers recorded
    in `proctor review`), `official+reviewers` (a reviewer's verdict replacing the imported one), or a qrels
    file; with a description."""
    if which in ("reviewers", "official+reviewers"):
        reviewed = {q: {p: v["relevance"] for p, v in per.items()} for q,
                    per in store.review.review_judgments().items()}
        stale = sum(len(per) for per in store.review.stale_review_judgments().values())
        left = f" ({stale} stale verdicts left out: their texts were replaced since)" if stale else ""
        if which == "reviewers":
            if not reviewed:
                raise UsageError(f"{{qrels}} reviewers: {store.path} holds no reviewer judgments (record them in "
                                 f"`proctor review`){left}", params=("qrels",))
            return reviewed, f"reviewer judgments (proctor review){left}"
        merged = {q: dict(per) for q, per in official_or_file_qrels(store, "official").items()}
        for q, per in reviewed.items():
            merged.setdefault(q, {}).update(per)
        return merged, f"official judgments, reviewer verdicts replacing them{left}"
    qrels = official_or_file_qrels(store, which)
    return qrels, "official judgments" if which == "official" else f"qrels file {which}"


def check_options(options: CalibrationOptions) -> int:
    """Refuse bad options before any work (`budgets` a list); returns the leaderboard's depth k (P@k)."""
    budgets, repeats, judged_relevant, measure = options.budgets, options.repeats, options.judged_relevant, \
        options.measure
    check_numbers({"repeats": repeats, "judged_relevant": judged_relevant, "seed": options.seed})
    if not budgets or any(b < 1 for b in budgets):
        raise UsageError("{budgets} takes positive numbers of topics, e.g. 5 or 1,2,3,5,10,20", params=("budgets",))
    spec = parse_measure(measure)
    if spec.measure.name != "P" or spec.cutoff is None or spec.rel is not None:
        raise UsageError(f"{{measure}} {measure}: calibrate's leaderboard is precision at a depth, P@k (e.g. P@20)",
                         params=("measure",))
    return spec.cutoff


def calibration(store: Store, grade_set: GradeSet, options: CalibrationOptions) -> dict[str, Any]:
    """The calibration curve of a grade set (what `proctor calibrate` prints as JSON; `options.budgets` a
    list)."""
    depth = check_options(options)
    qrels, budgets, repeats, seed = options.qrels, list(options.budgets), options.repeats, options.seed
    judged_relevant = options.judged_relevant
    judgments, source = human_judgments(store, qrels)
    top = max((r for per in judgments.values() for r in per.values()), default=0)
    if judged_relevant > top:
        raise UsageError(f"{{judged_relevant}} {judged_relevant}: no judgment reaches it (they go up to {top})",
                         params=("judged_relevant",))
    pool = build_pool(store, grade_set, judgments, judged_relevant, load_runs(store, None), depth)
    too_many = [b for b in budgets if b >= len(pool.topics)]
    if too_many:
        raise UsageError(f"{{budgets}} {too_many[0]}: the grade set and the judgments share {len(pool.topics)} "
                         f"topics, and a budget must leave one held out (at most {len(pool.topics) - 1})",
                         params=("budgets",))
    points, details = _clean(curve(pool, sorted(set(budgets)), repeats, seed))
    fixed = fixed_rules(pool)
    return {
        "grade_set": describe(store, grade_set), "judgments": source, "qrels": qrels,
        "judged_relevant": judged_relevant, "measure": f"P@{depth}", "repeats": repeats, "seed": seed,
        "topics": len(pool.topics), "judged_labelled_pairs": int(len(pool.human)), "runs": len(pool.runs),
        "rules": len(pool.rules), "curve": points, "fixed_rules": fixed,
        "best_fixed": fixed[0] if fixed else None, "worst_fixed": fixed[-1] if fixed else None,
        "method": (f"per budget N, {repeats} repeats (seed {seed}): N topics drawn without replacement from the "
                   f"{len(pool.topics)} topics with grades and judgments; on them the rule (label >= tau, the label "
                   "being the grade reached by at least m questions) with the largest Cohen's kappa against "
                   f"judgment >= {judged_relevant} is chosen (ties: smallest m, then smallest tau; a draw whose pairs "
                   "are all judged relevant or all not relevant is undecided: every rule's kappa is 0 or undefined "
                   "there, and it is left out of the medians) and applied to "
                   "the other topics: Cohen's kappa (scikit-learn), Krippendorff's alpha (nominal, krippendorff) of "
                   f"the held-out pairs, Kendall's tau-b (scipy) of the held-out P@{depth} leaderboard (mean over "
                   "the topics each run answered) with the one from the judgments. kappa_low/high, tau_low/high: "
                   f"the {LOW}th/{HIGH}th percentiles over the repeats. Fixed rules: tau in 1,3,4,5 and m in 1,2,5 "
                   "(`proctor agreement`'s default table, 004's lenient and strict rules at m=2), measured on "
                   "the same held-out topics; best/worst: the fixed rules of largest/smallest kappa on all topics"),
        "repeats_detail": details,
    }


def _clean(value: Any) -> Any:
    """NaN (an agreement undefined for want of variation) as null, so the JSON stays JSON."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_clean(v) for v in value)
    return value
