"""What changed between two versions of a bank: added, removed and reworded items, and nuggets whose
importance (vital/okay) changed.

Items with the same id and text are unchanged; the same id with new text is reworded. Because workbench
ids hash the text, a reworded question usually gets a new id: a removed and an added item of the same
query (and facet) whose texts are similar (difflib ratio >= 0.6, best pairs first) count as reworded."""

from __future__ import annotations

from collections import defaultdict
from difflib import SequenceMatcher
from typing import Any

from proctor.markdown import escape

SIMILAR = 0.6


def diff_banks(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """`{"added": [...], "removed": [...], "reworded": [...], "unchanged": n}` from two question lists."""
    a = {q["question_id"]: q for q in old}
    b = {q["question_id"]: q for q in new}
    reworded = [{"query_id": b[k]["query_id"], "old_id": k, "new_id": k, "old": a[k]["text"], "new": b[k]["text"]}
                for k in sorted(a.keys() & b.keys()) if a[k]["text"] != b[k]["text"]]
    importance = [{"query_id": b[k]["query_id"], "question_id": k, "text": b[k]["text"], "old": _importance(a[k]),
                   "new": _importance(b[k])}
                  for k in sorted(a.keys() & b.keys()) if _importance(a[k]) != _importance(b[k])]
    unchanged = sum(1 for k in a.keys() & b.keys() if a[k]["text"] == b[k]["text"]
                    and _importance(a[k]) == _importance(b[k]))
    removed = [a[k] for k in sorted(a.keys() - b.keys())]
    added = [b[k] for k in sorted(b.keys() - a.keys())]
    by_group: dict[tuple, list] = defaultdict(list)
    for q in added:
        by_group[(q["query_id"], q.get("facet_id"))].append(q)
    pairs = []
    for q in removed:
        for candidate in by_group.get((q["query_id"], q.get("facet_id")), []):
            ratio = SequenceMatcher(None, q["text"].lower(), candidate["text"].lower()).ratio()
            if ratio >= SIMILAR:
                pairs.append((ratio, q["question_id"], candidate["question_id"], q, candidate))
    used_old, used_new = set(), set()
    for ratio, old_id, new_id, q, candidate in sorted(pairs, key=lambda p: (-p[0], p[1], p[2])):
        if old_id in used_old or new_id in used_new:
            continue
        used_old.add(old_id)
        used_new.add(new_id)
        reworded.append({"query_id": q["query_id"], "old_id": old_id, "new_id": new_id, "old": q["text"],
                         "new": candidate["text"], "similarity": round(ratio, 3)})
    return {
        "added": [_brief(q) for q in added if q["question_id"] not in used_new],
        "removed": [_brief(q) for q in removed if q["question_id"] not in used_old],
        "reworded": sorted(reworded, key=lambda r: (r["query_id"], r["old_id"])),
        "importance": importance,
        "unchanged": unchanged,
    }


def _importance(q: dict[str, Any]) -> str | None:
    return (q.get("info") or {}).get("importance")


def _brief(q: dict[str, Any]) -> dict[str, Any]:
    return {"query_id": q["query_id"], "facet_id": q.get("facet_id"), "question_id": q["question_id"],
            "kind": q["kind"], "text": q["text"]}


def render_diff(result: dict[str, Any], fmt: str) -> str:
    """Text or Markdown listing of a diff."""
    lines = [f"{len(result['added'])} added, {len(result['removed'])} removed, {len(result['reworded'])} reworded, "
             f"{len(result.get('importance', []))} with a new importance, {result['unchanged']} unchanged"]
    bullet = "- " if fmt == "md" else "  "
    e = escape if fmt == "md" else str
    for title, key in (("Added", "added"), ("Removed", "removed")):
        if result[key]:
            lines.append(f"\n{'### ' if fmt == 'md' else ''}{title}")
            lines += [f"{bullet}{e(q['query_id'])}: {e(q['text'])} ({e(q['question_id'])})" for q in result[key]]
    if result["reworded"]:
        lines.append(f"\n{'### ' if fmt == 'md' else ''}Reworded")
        lines += [f"{bullet}{e(r['query_id'])}: {e(repr(r['old']))} → {e(repr(r['new']))}" for r in result["reworded"]]
    if result.get("importance"):
        lines.append(f"\n{'### ' if fmt == 'md' else ''}Importance")
        lines += [f"{bullet}{e(r['query_id'])}: {e(r['text'])}: {r['old'] or 'none'} → {r['new'] or 'none'}"
                  for r in result["importance"]]
    return "\n".join(lines) + "\n"
