"""The counts coverage needs from the store (queries in it, with judgments, in a bank) and the coverage of
labels that are not a leaderboard (qrels, agreement, a grade set in `analyze`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from proctor.evaluate.coverage import DEFAULT_FLOOR, Coverage, Floor, pool_counts
from proctor.records import GradeSet
from proctor.store import Store


def query_counts(store: Store, grade_set: GradeSet | None, graded: Mapping | None,
                 judged: Mapping | None = None) -> dict[str, int | None]:
    """Queries with grades (`graded`'s queries; None for judgments), in the grade set's bank, with judgments
    (`judged`'s queries when the judgments are a qrels file, else the store's), in the store."""
    counts = (store.corpus.query_counts(grade_set.bank, grade_set.bank_version) if grade_set and grade_set.bank
              else store.corpus.query_counts())
    return {"with_grades": len(graded) if graded is not None else None, "in_bank": counts["in_bank"],
            "with_judgments": len(judged) if judged is not None else counts["with_judgments"],
            "in_store": counts["in_store"]}


def partly_graded(store: Store, grade_set: GradeSet, labels: Mapping[str, Collection[str]]) -> dict[str, set[str]]:
    """The pairs of `labels` whose label rests on only some of their query's questions: the others' grades
    failed or were never made (a bank version graded only in part), so the label may be lower than a full
    grading gives. A query's questions are its items in the grade set's bank version, else those the grade set
    graded for it (a direct method's one item is the query itself)."""
    from proctor.evaluate.sources import banked_items, graded_questions

    graded = graded_questions(store, grade_set)
    bank = banked_items(store, grade_set, {q for per in graded.values() for q in per}) or {}
    needed = {qid: len(bank.get(qid) or questions) for qid, questions in graded.items()}
    out: dict[str, set[str]] = {}
    for qid, pid, _, usable, _ in store.caches.top_grades(grade_set.id, grade_set.step):
        if usable < needed.get(qid, 1) and pid in labels.get(qid, ()):
            out.setdefault(qid, set()).add(pid)
    return out


def note_partly_graded(coverage: Coverage, partly: Mapping[str, Collection[str]],
                       runs: Mapping[str, Mapping[str, list[str]]] | None, depth: int | None) -> Coverage:
    """Count (and warn of) the labelled pool pairs whose label rests on only some of their query's questions
    (`partly_graded`): they count as labelled, as they have a label, but a full grading could raise it. The pool
    is the runs' first `depth` passages (`runs` None: `partly` is already within the pool)."""
    if not partly:
        return coverage
    within = pool_counts(runs, partly, depth)[0]["graded"] if runs is not None else sum(map(len, partly.values()))
    if within:
        return coverage.with_count("partly_graded", within, f"{within} of the {coverage.pairs.get('graded')} "
                                   "labelled pool pairs have grades from only some of their query's questions (the "
                                   "others failed or were not graded): their labels may be too low; grade again to "
                                   "complete them")
    return coverage


def labels_coverage(store: Store, grade_set: GradeSet | None, labels: Mapping[str, Collection[str]],
                    pool: Mapping[str, Collection[str]] | None = None, *, scored: int | None = None,
                    floor: Floor = DEFAULT_FLOOR, pool_is: str = "the judged pairs") -> Coverage:
    """What labels rest on: their queries against the store's, and the pool pairs (`pool`, `{query:
    passages}`, described as `pool_is`; default: every passage the stored runs rank) that have a label.
    `scored`: the queries the number is computed on (default: the labels' queries)."""
    labelled = labels
    if pool is None:
        ranked = store.corpus.ranked_lists()
        pairs, _ = pool_counts(ranked, labelled, None) if ranked else ({"graded": 0, "pool": 0}, {})
        depth_what = "every passage the stored runs rank"
    else:
        pairs = {"pool": sum(len(p) for p in pool.values()),
                 "graded": sum(len(set(p).intersection(labelled.get(q, ()))) for q, p in pool.items())}
        depth_what = pool_is
    counts = query_counts(store, grade_set, labels if grade_set is not None else None)
    coverage = Coverage({"scored": len(labels) if scored is None else scored, **counts},
                        {**pairs, "depth": None, "pool_is": depth_what,
                         "labelled_by": "graded" if grade_set is not None else "judged"}, floor=floor)
    if grade_set is not None:
        partly = partly_graded(store, grade_set, labels)
        if pool is None:
            coverage = note_partly_graded(coverage, partly, ranked, None)
        else:
            within = {q: set(p).intersection(partly.get(q, ())) for q, p in pool.items()}
            coverage = note_partly_graded(coverage, within, None, None)
    return coverage.judge()
