"""The impact view's data: the impact of a new bank version (`commands.review_impact`: labels that changed,
each system's score and rank before and after, correlation with the official leaderboard, Kendall's tau between
the two leaderboards) for two grade sets named in the page's address."""

from __future__ import annotations

from typing import Any

from proctor.api import Store, commands
from proctor.errors import UsageError


def impact_data(store: Store, old_id: str, new_id: str, measure: str, min_grade: str,
                official: commands.LeaderboardFile | None) -> dict[str, Any]:
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
    result = commands.review_impact(store, old, new, measure, level, official)
    result["old_set"], result["new_set"] = old.as_dict(), new.as_dict()
    return result
