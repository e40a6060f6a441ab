"""AutoNuggetizer scores of generated answers from a `nugget-assign` grade set (castorini/nuggetizer
`core/metrics.py`, and Auto-ARGUE's weighted coverage), per run and topic:

- `all`: (support + 0.5 × partial_support) / nuggets;       `strict_all`: support / nuggets;
- `vital`: the same over vital nuggets only;                 `strict_vital`: support / vital nuggets;
- `weighted`: Σ weight × credit / Σ weight, vital 2 and okay 1 (Auto-ARGUE's `nugget_coverage_weighted`),
  credit 1 / 0.5 / 0 for support / partial / none.

A question of an AutoJudge bank whose `aggregator_type` is AND or OR (RAGTIME 2026) is one nugget made of
its answers (`proctor.io.nugget_banks`: one answer nugget each, labelled on its own): AND gives it the lowest
label of its answers (supported when all are), OR the highest (supported when one is); a failed answer counts
as not supported. As in nuggetizer, a topic without vital nuggets scores 0 on `vital`/`strict_vital`, and a nugget whose
assignment failed counts as not supported — Proctor counts such nuggets and says so in the notes. Scores
that use importance refuse banks with nuggets lacking it. A run without an answer to a topic scores 0 on
it (`missing="zero"`, the papers' way) or the topic is skipped (`missing="skip"`)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from proctor.errors import UsageError
from proctor.evaluate.leaderboard import Leaderboard, ranked_entries
from proctor.options.evaluation import EvaluationOptions
from proctor.records import GradeSet
from proctor.store import Store

SCORES = ("all", "vital", "strict_all", "strict_vital", "weighted")
WEIGHTS = {"vital": 2, "okay": 1}
_CREDIT = {2: 1.0, 1: 0.5}


def topic_scores(labels: dict[str, int | None], importance: dict[str, str | None]) -> dict[str, float]:
    """The five scores of one answer: `labels` maps each of the topic's nuggets to its grade (2 support,
    1 partial, 0 none, None failed or missing), `importance` to vital/okay/None."""
    def credit(nugget: str, strict: bool) -> float:
        grade = labels.get(nugget)
        return 1.0 if grade == 2 else (0.0 if strict else _CREDIT.get(grade or 0, 0.0))

    nuggets = list(labels)
    vital = [n for n in nuggets if importance.get(n) == "vital"]

    def mean(group: list[str], strict: bool) -> float:
        return sum(credit(n, strict) for n in group) / len(group) if group else 0.0

    weights = {n: WEIGHTS.get(importance.get(n) or "", 0) for n in nuggets}
    total = sum(weights.values())
    weighted = sum(weights[n] * credit(n, False) for n in nuggets) / total if total else 0.0
    return {"all": mean(nuggets, False), "vital": mean(vital, False), "strict_all": mean(nuggets, True),
            "strict_vital": mean(vital, True), "weighted": weighted}


def nugget_table(store: Store, grade_set: GradeSet) -> dict[str, Any]:
    """Everything the scores need: nuggets and importance per topic, labels per answer, answered topics."""
    if grade_set.method != "nugget-assign":
        raise UsageError(f"grade set {grade_set.id} is {grade_set.method}; Nuggets(score=...) reads a nugget-assign "
                         "grade set (grade with the method nugget-assign)")
    bank = (grade_set.bank or "", grade_set.bank_version or "")
    nuggets = {q: [item for item, _, _ in items] for q, items in store.banks.bank_items("nugget", *bank).items()}
    answers = {(s["run"], s["query_id"]) for s in store.corpus.segments().values()}
    labels: dict[tuple[str, str], dict[str, int | None]] = defaultdict(dict)
    by_pid = {f"{run}/{qid}": (run, qid) for run, qid in answers}
    for qid, pid, nugget, grade in store.grades.grade_rows(grade_set.id, "nugget-assign"):
        if pid in by_pid and by_pid[pid][1] == qid:
            labels[by_pid[pid]][nugget] = grade
    infos = {q["question_id"]: q["info"] or {} for q in store.banks.bank_questions(*bank) if q["kind"] == "nugget"}
    groups = {item: (info["nugget_of"], info["aggregator"]) for item, info in infos.items() if info.get("nugget_of")}
    return {"nuggets": nuggets, "importance": store.banks.nugget_importance(*bank), "answers": answers,
            "labels": labels, "groups": groups}


def combined(labels: dict[str, int | None], groups: dict[str, tuple[str, str]]) -> dict[str, int | None]:
    """Each nugget's label: an answer nugget's label goes to its question, combined with its siblings' by the
    question's aggregator (AND: the lowest, OR: the highest; a failed or missing answer label counts 0 in
    both); other nuggets keep theirs."""
    out: dict[str, int | None] = {}
    answers: dict[str, list[int]] = defaultdict(list)
    rule: dict[str, str] = {}
    for nugget, label in labels.items():
        if nugget in groups:
            parent, rule[parent] = groups[nugget]
            answers[parent].append(label or 0)
        else:
            out[nugget] = label
    for parent, values in answers.items():
        out[parent] = min(values) if rule[parent] == "AND" else max(values)
    return out


def nugget_leaderboard(table: dict[str, Any], score: str, *, missing: str = EvaluationOptions.missing,
                       description: dict[str, Any] | None = None) -> Leaderboard:
    """One AutoNuggetizer score as a leaderboard (mean over topics), with notes on failed and ungraded pairs."""
    if score not in SCORES:
        raise UsageError(f"{{score}} {score!r}: choose one of {', '.join(SCORES)}", params=("score",))
    nuggets, importance, answers, labels = (table[k] for k in ("nuggets", "importance", "answers", "labels"))
    topics = sorted({q for _, q in answers if q in nuggets})
    if score != "all" and score != "strict_all":
        lacking = sum(1 for q in topics for n in nuggets[q] if importance.get(n) is None)
        if lacking:
            raise UsageError(f"{{score}} {score} needs every nugget's importance; {lacking} nuggets of the graded "
                             "topics have none (label them: generate the nuggets with importance, or edit the bank)",
                             params=("score",))
    per_run: dict[str, dict[str, float]] = {run: {} for run, _ in answers}
    failed = ungraded = 0
    for run in per_run:
        for qid in topics:
            if (run, qid) not in answers:
                if missing == "zero":
                    per_run[run][qid] = 0.0
                continue
            got = labels.get((run, qid), {})
            row = {n: got.get(n) for n in nuggets[qid]}
            failed += sum(1 for n in nuggets[qid] if n in got and got[n] is None)
            ungraded += sum(1 for n in nuggets[qid] if n not in got)
            units = combined(row, table.get("groups", {}))
            weights = {table.get("groups", {}).get(n, (n,))[0]: importance.get(n) for n in nuggets[qid]}
            per_run[run][qid] = topic_scores(units, weights)[score]
    notes = [f"nuggets {score}: topics a run did not answer are "
             f"{'counted as 0' if missing == 'zero' else 'skipped'} (--missing {missing})"]
    if failed or ungraded:
        notes.append(f"{failed} (answer, nugget) assignments failed and {ungraded} were never graded: they count "
                     "as not supported (as in nuggetizer); grade again to fill them in")
    desc = {"metric": "nuggets", "score": score, "missing": missing, "failed_assignments": failed,
            "ungraded_assignments": ungraded, **(description or {})}
    return Leaderboard(ranked_entries(per_run, notes), desc, notes, "nuggets")
