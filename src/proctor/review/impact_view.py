"""The impact view's data: `bank.impact.bank_impact` (labels that changed, each system's score and rank before
and after, correlation with the official leaderboard) plus Kendall's tau between the two leaderboards."""

from __future__ import annotations

from typing import Any

from proctor.analyze.bank_impact import bank_impact
from proctor.analyze.compare import compare
from proctor.errors import UsageError
from proctor.evaluate.leaderboard_files import LeaderboardFile
from proctor.evaluate.sources import load_runs
from proctor.options.banks import BankImpactOptions
from proctor.store import Store


def impact_data(store: Store, old_id: str, new_id: str, measure: str, min_grade: str,
                official: LeaderboardFile | None) -> dict[str, Any]:
    """Before (grade set `old_id`, its bank version's questions) against after (`new_id`)."""
    sets = {s.id: s for s in store.grades.grade_sets()}
    if old_id not in sets or new_id not in sets:
        raise UsageError("name two grade sets: ?old=ID&new=ID (see the overview)")
    try:
        level = int(min_grade)
    except ValueError:
        raise UsageError("min_grade must be a grade 0-5") from None
    if not 0 <= level <= 5:
        raise UsageError("min_grade must be a grade 0-5")
    old, new = sets[old_id], sets[new_id]
    if old.bank is None or new.bank is None:
        raise UsageError("both grade sets must grade a bank")
    old_ids = {q["question_id"] for q in store.banks.bank_questions(old.bank, old.bank_version)}
    new_ids = {q["question_id"] for q in store.banks.bank_questions(new.bank, new.bank_version)}
    result = bank_impact(store, old, new, old_ids, new_ids, load_runs(store, None),
                         options=BankImpactOptions(measure=measure, min_grade=level, listed=200), official=official)
    before = {s["system"]: s["old_score"] for s in result["systems"] if s["old_score"] is not None}
    after = {s["system"]: s["new_score"] for s in result["systems"] if s["new_score"] is not None}
    between = compare(LeaderboardFile(before), LeaderboardFile(after), samples=0)
    result["between"] = {k: between[k] for k in ("kendall", "spearman", "tau_ap", "n_systems")}
    result["old_set"], result["new_set"] = old.as_dict(), new.as_dict()
    return result
