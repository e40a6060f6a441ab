"""What a bank change does: the labels that change, each system's score, and the leaderboard correlation.

Labels and leaderboards are computed twice from the same stored grades — once with the old bank's
questions, once with the new bank's — after grading whatever the new bank adds (cached grades reused)."""

from __future__ import annotations

from typing import Any

from proctor.analyze.compare import compare
from proctor.evaluate.labels import exam_labels
from proctor.evaluate.leaderboard import measure_leaderboard
from proctor.evaluate.measures import parse_measure
from proctor.evaluate.runs import Ranked
from proctor.io.leaderboards import LeaderboardFile
from proctor.store import Store


def bank_impact(
    store: Store, method: str, model: str, old_ids: set[str], new_ids: set[str], runs: Ranked, *,
    measure: str = "P@20", min_grade: int = 3, official: LeaderboardFile | None = None, limit: int = 50,
) -> dict[str, Any]:
    """Compare labels and leaderboards under the old and the new question set."""
    rows = [r for r in store.grade_rows(method, model)]
    old_labels = exam_labels([r for r in rows if r[2] in old_ids])
    new_labels = exam_labels([r for r in rows if r[2] in new_ids])
    changed = []
    for qid in sorted(set(old_labels) | set(new_labels)):
        before, after = old_labels.get(qid, {}), new_labels.get(qid, {})
        for pid in sorted(set(before) | set(after)):
            if before.get(pid) != after.get(pid):
                changed.append({"query_id": qid, "passage_id": pid, "old_label": before.get(pid),
                                "new_label": after.get(pid)})
    spec = parse_measure(measure)
    level = min_grade if spec.measure.uses_relevance_level else None
    old_board = measure_leaderboard(runs, old_labels, spec, level)
    new_board = measure_leaderboard(runs, new_labels, spec, level)
    old_scores, new_scores = old_board.scores(), new_board.scores()
    old_rank = {e.system: i + 1 for i, e in enumerate(old_board.entries)}
    new_rank = {e.system: i + 1 for i, e in enumerate(new_board.entries)}
    systems = [{"system": s, "old_score": old_scores.get(s), "new_score": new_scores.get(s),
                "change": (new_scores.get(s) or 0.0) - (old_scores.get(s) or 0.0),
                "old_rank": old_rank.get(s), "new_rank": new_rank.get(s)} for s in sorted(new_scores, key=new_rank.get)]
    result: dict[str, Any] = {
        "method": method, "model": model, "measure": spec.name, "min_grade": level,
        "questions": {"old": len(old_ids), "new": len(new_ids)},
        "changed_labels": len(changed), "changed": changed[:limit],
        "label_changes_by_direction": {"up": sum(1 for c in changed if _gain(c) > 0),
                                       "down": sum(1 for c in changed if _gain(c) < 0)},
        "systems": systems,
    }
    if official is not None:
        result["correlation"] = {
            "old": _corr(compare(LeaderboardFile(old_scores), official, samples=0)),
            "new": _corr(compare(LeaderboardFile(new_scores), official, samples=0)),
        }
    return result


def _gain(change: dict[str, Any]) -> int:
    return (change["new_label"] or 0) - (change["old_label"] or 0)


def _corr(result: dict[str, Any]) -> dict[str, Any]:
    return {k: result[k] for k in ("spearman", "kendall", "tau_ap", "n_systems")}


def render_impact(result: dict[str, Any]) -> str:
    """A Markdown summary."""
    lines = [f"**Bank impact** — method={result['method']}, model={result['model']}, {result['measure']}"
             + (f" at grade >= {result['min_grade']}" if result["min_grade"] is not None else "")
             + f"; questions {result['questions']['old']} → {result['questions']['new']}", "",
             f"{result['changed_labels']} passage labels change ({result['label_changes_by_direction']['up']} up, "
             f"{result['label_changes_by_direction']['down']} down)."]
    if "correlation" in result:
        old, new = result["correlation"]["old"], result["correlation"]["new"]
        lines.append(f"Correlation with the official leaderboard: Spearman {_f(old['spearman'])} → "
                     f"{_f(new['spearman'])}, Kendall {_f(old['kendall'])} → {_f(new['kendall'])} "
                     f"({new['n_systems']} systems).")
    lines += ["", "| query | passage | old label | new label |", "|---|---|---:|---:|"]
    lines += [f"| {c['query_id']} | {c['passage_id']} | {_f(c['old_label'])} | {_f(c['new_label'])} |"
              for c in result["changed"]]
    if result["changed_labels"] > len(result["changed"]):
        lines.append(f"\n({result['changed_labels'] - len(result['changed'])} more changes in the JSON output)")
    lines += ["", "| system | old score | new score | change | old rank | new rank |", "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {s['system']} | {_f(s['old_score'])} | {_f(s['new_score'])} | {s['change']:+.4f} | "
              f"{s['old_rank']} | {s['new_rank']} |" for s in result["systems"]]
    return "\n".join(lines) + "\n"


def _f(value) -> str:
    if value is None:
        return "—"
    return f"{value:.4f}" if isinstance(value, float) else str(value)
