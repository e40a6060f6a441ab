"""What the review app shows of robustness probes: the chosen grade set's latest probe report (beside its
state and correlations) and the pairs a `detect` guard flagged, as items of the review queue."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from proctor.api import Store, commands
from proctor.records import GradeSet


def probe_view(store: Store, grade_set: GradeSet | None) -> dict[str, Any] | None:
    """The grade set's probe table and flagged pairs, or None when it was never probed."""
    if grade_set is None:
        return None
    report = store.probes.probe_report(grade_set.id)
    flagged = flagged_queue(store, grade_set.id)
    if report is None and not flagged:
        return None
    header, rows = commands.probe_table(report)
    return {"header": header, "rows": rows, "sample": (report or {}).get("sample"),
            "flagged": flagged}


def flagged_queue(store: Store, grade_set_id: str | None = None) -> list[dict[str, Any]]:
    """Items for the review queue: every pair a `detect` guard flagged (of one grade set, or all) — pool pairs
    of `grade --guard detect` (attack None) and attacked copies of `probe` — with why and a link to its query:
    `{kind: "flagged", grade_set, attack, query_id, passage_id, reason, text, href}`."""
    rows = [*({**row, "attack": None, "text": None} for row in store.probes.pool_flags(grade_set_id)),
            *store.probes.flagged_pairs(grade_set_id)]
    return [{"kind": "flagged", **row, "href": f"/query/{quote(row['query_id'], safe='')}?gs={row['grade_set']}"}
            for row in rows]
