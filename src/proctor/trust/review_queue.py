"""The "to review" queue: passages ordered by how much a human verdict on them would change, from three signs —
an ensemble's members disagree on the passage, its label sits at the threshold, and its label alone decides the
order of a close pair of systems on the P@k leaderboard. A reviewer's verdict is a review judgment (it then
feeds `proctor calibrate --qrels reviewers`); judged passages leave the queue.

A passage decides a pair (A, B) when flipping its binary label (label >= tau) alone changes the pair's order
(ahead, tied, behind) by P@k over the queries each system answered. With H the relevant passages in a system's
first k over its n answered queries, A's score is H_A / (k n_A), so the order is the sign of H_A n_B - H_B n_A:
integers, no rounding. Priority = pairs decided + spread / scale width + closeness to the threshold (1 for a
label at tau or tau - 1, 0.5 one further away, else 0)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from proctor.evaluate.labels import Qrels
from proctor.evaluate.sources import exam_qrels
from proctor.gradesets.ensemble import METHOD, STEP
from proctor.options.review import ReviewOptions
from proctor.records import GradeSet
from proctor.store import Store

QUEUE_LIMIT = 50
"""How many pairs the review queue lists by default."""


@dataclass
class Item:
    """One passage of the queue with the reasons it is there."""

    query_id: str
    passage_id: str
    label: int
    question_id: str = ""
    spread: int = 0
    pairs: list[tuple[str, str]] = field(default_factory=list)
    decided: int = 0
    priority: float = 0.0
    reasons: list[str] = field(default_factory=list)


def deciding_passages(ranked: dict[str, dict[str, list[str]]], labels: Qrels, min_grade: int, depth: int
                      ) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """`{(query, passage): [(system A, system B), ...]}`: the pairs whose P@depth order flipping the passage's
    binary label alone would change (A ahead of or tied with B before the flip)."""
    runs = sorted(ranked)
    topics = sorted(labels)
    hits = np.zeros(len(runs), dtype=np.int64)
    answered = np.zeros(len(runs), dtype=np.int64)
    tops = {}
    for s, run in enumerate(runs):
        for qid in topics:
            top = ranked[run].get(qid)
            if top is not None:
                answered[s] += 1
                tops[(s, qid)] = top[:depth]
                hits[s] += sum(1 for p in top[:depth] if labels[qid].get(p, 0) >= min_grade)
    a, b = np.triu_indices(len(runs), k=1)
    keep = (answered[a] > 0) & (answered[b] > 0)
    a, b = a[keep], b[keep]
    base = hits[a] * answered[b] - hits[b] * answered[a]
    out: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for qid in topics:
        passages = sorted({p for s in range(len(runs)) for p in tops.get((s, qid), [])})
        if not passages:
            continue
        column = {p: i for i, p in enumerate(passages)}
        member = np.zeros((len(runs), len(passages)), dtype=np.int64)
        for s in range(len(runs)):
            for p in tops.get((s, qid), []):
                member[s, column[p]] = 1
        flip = np.array([-1 if labels[qid].get(p, 0) >= min_grade else 1 for p in passages])
        after = base[:, None] + flip[None, :] * (member[a] * answered[b][:, None] - member[b] * answered[a][:, None])
        changed = np.sign(after) != np.sign(base)[:, None]
        for pair, col in zip(*np.nonzero(changed), strict=True):
            first, second = (a[pair], b[pair]) if base[pair] >= 0 else (b[pair], a[pair])
            out[(qid, passages[col])].append((runs[first], runs[second]))
    return dict(out)


def spreads(store: Store, grade_set: GradeSet) -> dict[tuple[str, str], int]:
    """`{(query, passage): largest spread of its cells}` of an ensemble (empty for other grade sets)."""
    if grade_set.method != METHOD:
        return {}
    out: dict[tuple[str, str], int] = {}
    for g in store.grades.records(grade_set, STEP):
        spread = (g.extra or {}).get("spread") or 0
        key = (g.query_id, g.passage_id)
        out[key] = max(out.get(key, 0), spread)
    return out


def top_questions(store: Store, grade_set: GradeSet) -> dict[tuple[str, str], str]:
    """The question whose grade makes each passage's label (the first of the largest), for linking its cell."""
    best: dict[tuple[str, str], tuple[int, str]] = {}
    for qid, pid, question, grade in store.grades.grade_rows(grade_set.id, grade_set.step):
        kept = best.get((qid, pid))
        if grade is not None and (kept is None or grade > kept[0]):
            best[(qid, pid)] = (grade, question)
    return {key: question for key, (_, question) in best.items()}


def review_queue(store: Store, grade_set: GradeSet, *, min_grade: int, depth: int = ReviewOptions.depth,
                 limit: int = QUEUE_LIMIT, width: int = 5) -> dict[str, Any]:
    """The queue (highest priority first, `limit` items) with counts of every sign over all passages."""
    labels = exam_qrels(store, grade_set)
    ranked = store.corpus.ranked_lists()
    decided = deciding_passages(ranked, labels, min_grade, depth)
    spread = spreads(store, grade_set)
    if grade_set.method == METHOD:
        width = grade_set.params["scale"][1] - grade_set.params["scale"][0]
    reviewed = store.review.review_judgments()
    items, skipped = [], 0
    for qid, per in labels.items():
        for pid, label in per.items():
            if pid in reviewed.get(qid, {}):
                skipped += 1
                continue
            item = _item(qid, pid, label, min_grade, spread.get((qid, pid), 0), decided.get((qid, pid), []), width)
            if item.priority > 0:
                items.append(item)
    items.sort(key=lambda i: (-i.priority, i.query_id, i.passage_id))
    questions = top_questions(store, grade_set)
    for item in items[:limit]:
        item.question_id = questions.get((item.query_id, item.passage_id), "")
    return {"grade_set": grade_set.as_dict(), "min_grade": min_grade, "depth": depth, "limit": limit,
            "passages": sum(len(per) for per in labels.values()), "reviewed": skipped, "queued": len(items),
            "disagreeing": sum(1 for i in items if i.spread),
            "at_threshold": sum(1 for i in items if i.label in (min_grade - 1, min_grade)),
            "deciding": sum(1 for i in items if i.decided), "items": [i.__dict__ for i in items[:limit]]}


def _item(qid: str, pid: str, label: int, tau: int, spread: int, pairs: list[tuple[str, str]], width: int) -> Item:
    """One passage's priority and the reasons for it."""
    distance = abs(label - (tau - 0.5)) - 0.5  # 0 at tau - 1 and tau
    closeness = 1.0 if distance == 0 else 0.5 if distance == 1 else 0.0
    item = Item(qid, pid, label, spread=spread, pairs=pairs[:3], decided=len(pairs),
                priority=len(pairs) + spread / max(width, 1) + closeness)
    if pairs:
        shown = "; ".join(f"{x} vs {y}" for x, y in pairs[:3]) + (" …" if len(pairs) > 3 else "")
        item.reasons.append(f"decides {len(pairs)} close pair(s) of systems: {shown}")
    if spread:
        item.reasons.append(f"ensemble members disagree by {spread}")
    if closeness:
        item.reasons.append(f"label {label} {'at' if closeness == 1 else 'near'} the threshold {tau}")
    return item
