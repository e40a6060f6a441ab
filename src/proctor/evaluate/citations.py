"""Citation support of generated answers from a `citation-support` grade set, per run and topic:

- `support_precision`: sentences fully supported by their cited passages / cited sentences;
- `support_precision_partial`: the same with partial support counting 0.5;
- `citation_coverage`: cited sentences / sentences.

A run's score is the mean over the topics it answered (topics without cited sentences have no precision and
are left out of the precision scores, counted in the notes). A cited sentence whose judgment failed, was never
made, or could not be made because none of its cited passages is in the corpus counts as not supported; every
sentence citing a passage missing from the corpus is counted per run (`counts` in the description)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from proctor.errors import UsageError
from proctor.evaluate.leaderboard import Leaderboard, ranked_entries
from proctor.grading.citation_support import answer_sentences
from proctor.records import GradeSet
from proctor.store import Store

CITATION_SCORES = ("support_precision", "support_precision_partial", "citation_coverage")


def citation_table(store: Store, grade_set: GradeSet) -> dict[tuple[str, str], Counter]:
    """`{(run, topic): counts}`: sentences, cited, full, partial, none, failed (judgment failed or missing),
    citing_missing (cites a passage the corpus lacks), unjudgeable (cites only such passages)."""
    if grade_set.method != "citation-support":
        raise UsageError(f"grade set {grade_set.id} is {grade_set.method}; Citations(score=...) reads a "
                         "citation-support grade set (grade with the method citation-support)")
    grades = {pid: grade for _, pid, _, grade in store.grades.grade_rows(grade_set.id, "citation-support")}
    table: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for s in answer_sentences(store):
        counts = table[(s.run, s.query_id)]
        counts["sentences"] += 1
        if not s.cited:
            continue
        counts["cited"] += 1
        counts["citing_missing"] += bool(s.missing)
        if len(s.missing) == len(s.cited):
            counts["unjudgeable"] += 1
            continue
        grade = grades.get(s.passage_id)
        counts[{2: "full", 1: "partial", 0: "none"}.get(grade, "failed") if grade is not None else "failed"] += 1
    return dict(table)


def topic_value(counts: Counter, score: str) -> float | None:
    """One topic's score from its counts (None: no cited sentence, so no precision)."""
    if score == "citation_coverage":
        return counts["cited"] / counts["sentences"] if counts["sentences"] else None
    if not counts["cited"]:
        return None
    credit = counts["full"] + (0.5 * counts["partial"] if score == "support_precision_partial" else 0)
    return credit / counts["cited"]


def citation_leaderboard(table: dict[tuple[str, str], Counter], score: str, *,
                         description: dict[str, Any] | None = None) -> Leaderboard:
    """One citation score as a leaderboard (mean over the topics each run answered)."""
    if score not in CITATION_SCORES:
        raise UsageError(f"{{score}} {score!r}: choose one of {', '.join(CITATION_SCORES)}", params=("score",))
    per_run: dict[str, dict[str, float]] = defaultdict(dict)
    totals: dict[str, Counter] = defaultdict(Counter)
    no_precision = 0
    for (run, topic), counts in sorted(table.items()):
        totals[run].update(counts)
        value = topic_value(counts, score)
        if value is None:
            no_precision += 1
            per_run.setdefault(run, {})
            continue
        per_run[run][topic] = value
    notes = []
    if no_precision and score != "citation_coverage":
        notes.append(f"{no_precision} (run, topic) answers cite nothing: no precision, left out of the mean")
    missing = sum(t["citing_missing"] for t in totals.values())
    if missing:
        notes.append(f"{missing} cited sentences cite passages missing from the corpus "
                     f"({sum(t['unjudgeable'] for t in totals.values())} cite nothing else and count as not "
                     "supported); import the corpus to judge them")
    failed = sum(t["failed"] for t in totals.values())
    if failed:
        notes.append(f"{failed} cited sentences have no usable judgment (failed or not graded yet): they count as "
                     "not supported; grade again to fill them in")
    counts_out = {run: {k: t[k] for k in ("sentences", "cited", "full", "partial", "none", "failed",
                                          "citing_missing", "unjudgeable")} for run, t in sorted(totals.items())}
    desc = {"metric": "citations", "score": score, **(description or {}), "counts": counts_out}
    return Leaderboard(ranked_entries(dict(per_run), notes), desc, notes, "citations")
