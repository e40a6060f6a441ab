"""Where a leaderboard's inputs come from: the labels of a grade set (resolved, never mixed, by
`proctor.gradesets.resolve`), cover tables, runs and official judgments."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from proctor.errors import UsageError
from proctor.evaluate.cover import CoverTable
from proctor.evaluate.labels import (
    LabelStats,
    Qrels,
    exam_labels,
    labels_for_each,
    labels_from_top,
)
from proctor.evaluate.leaderboard import Leaderboard
from proctor.io.banks import is_spurious
from proctor.io.runs import Ranked, order_runs
from proctor.io.trec import qrels_dict, read_qrels, read_runs
from proctor.methods import ANSWER_METHODS
from proctor.options.evaluation import EvaluationOptions
from proctor.records import GradeSet
from proctor.store import Store
from proctor.store.cover_cache import CoverGrades, answered_masks, labels_at


def exam_qrels(
    store: Store, grade_set: GradeSet, *, min_questions: int = EvaluationOptions.min_questions, facets: bool = False,
    stats: LabelStats | None = None,
) -> Qrels:
    """EXAM-Qrels labels from one grade set (its label step)."""
    if not facets:
        return exam_qrels_each(store, grade_set, [min_questions], stats=stats)[min_questions]
    refuse_answer_set(grade_set)
    refuse_passage_cells(grade_set, "labels per facet ({facets})", ("facets",))
    rows = store.grades.grade_rows(grade_set.id, grade_set.step)
    return exam_labels(rows, min_questions=min_questions, facets=store.banks.question_facets(), stats=stats)


def exam_qrels_each(store: Store, grade_set: GradeSet, min_questions: Sequence[int], *,
                    stats: LabelStats | None = None) -> dict[int, Qrels]:
    """`exam_qrels` (without facets) for several `min_questions`, reading the store once for all m > 1: one
    question from the kept largest grades; more from the cover cache, else one pass over the grade set's
    histogram (SQLite's aggregate: a row per (query, passage) and grade, not one per grade). `stats` counts the
    grades once, with the first labels made."""
    refuse_answer_set(grade_set)
    if any(m < 1 for m in min_questions):
        raise UsageError("{min_questions} must be at least 1", params=("min_questions",))
    if any(m > 1 for m in min_questions):
        refuse_passage_cells(grade_set, f"{{min_questions}} {max(min_questions)}", ("min_questions",))
    out: dict[int, Qrels] = {}
    if 1 in min_questions:
        out[1] = labels_from_top(store.caches.top_grades(grade_set.id, grade_set.step), stats=stats)
        stats = None
    more = [m for m in dict.fromkeys(min_questions) if m != 1]
    if more:
        kept = store.caches.cover_grades(grade_set.id, grade_set.step)
        if kept is not None:  # every passage's grades, one character each (the EXAM-Cover cache)
            out.update({m: labels_from_kept(kept, m, stats if n == 0 else None) for n, m in enumerate(more)})
        else:
            out.update(labels_for_each(store.tallies.label_histogram(grade_set.id, grade_set.step), more, stats=stats))
    return out


def labels_from_kept(kept: CoverGrades, min_questions: int, stats: LabelStats | None = None) -> Qrels:
    """The labels `labels_from_histogram` gives, from the cover cache's rows (`Store.caches.cover_grades`)."""
    stats = stats if stats is not None else LabelStats()
    qrels: Qrels = {}
    for qid, questions, passages, grades in kept:
        labels, usable, failed, without = labels_at(passages, grades, len(questions), min_questions)
        stats.grades += usable
        stats.failed += failed
        stats.passages += len(labels)
        stats.passages_without_grade += without
        if labels:
            qrels[qid] = labels
    return qrels


def refuse_answer_set(grade_set: GradeSet) -> None:
    """Grade sets of whole answers (nugget-assign) or cited sentences (citation-support) give no passage labels."""
    if grade_set.method in ANSWER_METHODS:
        metric = "nuggets" if grade_set.method == "nugget-assign" else "citations"
        raise UsageError(f"grade set {grade_set.id} is {grade_set.method}: it grades generated answers, not pool "
                         f"passages; read it with the leaderboard's {{metric}} {metric} {{score}} S (the measure "
                         f"{metric.capitalize()}(score=S))", params=("metric", "score"))


def per_passage(grade_set: GradeSet) -> bool:
    """Whether a grade set holds one grade per (query, passage) of a bank's questions' labels, not per question:
    an ensemble across bank versions (`level` label, docs/trust.md)."""
    return grade_set.params.get("level") == "label" and bool(grade_set.info.get("ensemble"))


def refuse_passage_cells(grade_set: GradeSet, what: str, params: tuple[str, ...] = ()) -> None:
    """EXAM-Cover, the m-th largest grade (m > 1) and facet labels need per-question grades: refused on a grade
    set that has one cell per passage, which would otherwise give Success@k under the name EXAM-Cover, or every
    label 0."""
    if per_passage(grade_set):
        raise UsageError(f"{what}: grade set {grade_set.id} is an ensemble across bank versions (level label): it "
                         "holds one grade per (query, passage), each member's label, not per question, so "
                         "EXAM-Cover, {min_questions} above 1 and facets cannot be computed from it (docs/trust.md, "
                         "\"Ensembles\"); combine grade sets of one bank version, or read its labels (m = 1)",
                         params=tuple(dict.fromkeys((*params, "min_questions"))))


def refuse_cover(grade_set: GradeSet) -> None:
    """EXAM-Cover counts the questions a passage answers: refused on grade sets without per-question grades of
    pool passages (answer grade sets, ensembles across bank versions)."""
    refuse_answer_set(grade_set)
    refuse_passage_cells(grade_set, "EXAM-Cover ({metric} cover)", ("metric",))


def grade_rows(store: Store, grade_set: GradeSet) -> Iterator[tuple[str, str, str, int | None]]:
    """(query, passage, question, grade) of a grade set's label step, streamed from the store."""
    refuse_answer_set(grade_set)
    return store.grades.grade_rows(grade_set.id, grade_set.step)


def banked_items(store: Store, grade_set: GradeSet, graded: set[str]) -> dict[str, set[str]] | None:
    """`{query: item ids}` of the grade set's bank version, of the kinds (questions, nuggets) it graded —
    the queries EXAM-Cover scores; None for a grade set without a bank."""
    if grade_set.bank is None:
        return None
    records = [r for r in store.banks.bank_questions(grade_set.bank, grade_set.bank_version)
               if not is_spurious(r) and not (r["info"] or {}).get("nugget_of")]  # answer nuggets: not EXAM items
    kinds = {r["kind"] for r in records if r["question_id"] in graded} or {r["kind"] for r in records}
    out: dict[str, set[str]] = {}
    for r in records:
        if r["kind"] in kinds:
            out.setdefault(r["query_id"], set()).add(r["question_id"])
    return out


def cover_table(store: Store, grade_set: GradeSet, tau: int) -> tuple[CoverTable, list[str]]:
    """The EXAM-Cover table of a grade set's label step at grade >= τ, read from the store without reading
    every grade, with every topic of its bank, and notes on topics that were never graded or a missing bank."""
    return next(cover_tables(store, grade_set, [tau]))


def cover_tables(store: Store, grade_set: GradeSet, taus: Sequence[int]
                 ) -> Iterator[tuple[CoverTable, list[str]]]:
    """`cover_table` at each τ in turn, the store read once (its kept cover rows, else the graded questions)."""
    refuse_cover(grade_set)
    kept = store.caches.cover_grades(grade_set.id, grade_set.step)
    questions = graded_questions(store, grade_set) if kept is None else {}
    for tau in taus:
        if kept is not None:
            table = CoverTable.from_masks(((qid, names[::-1], answered_masks(passages, grades, len(names), tau))
                                           for qid, names, passages, grades in kept), tau)
        else:
            own = {qid: set(items) for qid, items in questions.items()}  # add_bank extends it
            table = CoverTable.from_answered(own, store.tallies.answered(grade_set.id, grade_set.step, tau), tau)
        yield table, _add_bank(store, grade_set, table)


def _add_bank(store: Store, grade_set: GradeSet, table: CoverTable) -> list[str]:
    bank = banked_items(store, grade_set, table.item_ids())
    if bank is None:
        return ["EXAM-Cover: the grade set has no bank; the queries scored are those with grades "
                f"({len(table.questions)})"]
    ungraded = table.add_bank(bank)
    notes = [f"EXAM-Cover: the queries scored are the {len(bank)} topics of bank {grade_set.bank_label}"]
    if ungraded:
        shown = ", ".join(ungraded[:10]) + (", ..." if len(ungraded) > 10 else "")
        notes.append(f"EXAM-Cover: {len(ungraded)} banked topics have no grade in this grade set and cover "
                     f"nothing: {shown}")
    return notes


def graded_questions(store: Store, grade_set: GradeSet) -> dict[str, set[str]]:
    """`{query: questions graded for it}` of a grade set's label step."""
    out: dict[str, set[str]] = {}
    for qid, question_id in store.tallies.graded_questions(grade_set.id, grade_set.step):
        out.setdefault(qid, set()).add(question_id)
    return out


def official_or_file_qrels(store: Store, which: str) -> Qrels:
    """`official`: the store's judgments; anything else: a qrels file."""
    if which == "official":
        qrels = store.corpus.judgments()
        if not qrels:
            raise UsageError(f"{store.path}: the store holds no judgments (import qrels or an exam_pp file)")
        return qrels
    return qrels_dict(read_qrels(which))


def load_runs(store: Store, run_paths: Sequence[str] | None) -> Ranked:
    """Ranked runs from files/folders when given, else from the store."""
    if run_paths:
        return order_runs(read_runs(run_paths))
    ranked = store.corpus.ranked_lists()  # already in trec_eval order
    if not ranked:
        raise UsageError(f"{store.path}: the store holds no rankings (import runs, or pass {{runs}})", params=("runs",))
    return ranked


def note_flagged(boards: list[Leaderboard]) -> list[Leaderboard]:
    """Each leaderboard again, saying how many of its grade set's pool pairs `--guard detect` flagged (no grade)."""
    return [_flagged(board) for board in boards]


def _flagged(board: Leaderboard) -> Leaderboard:
    """One leaderboard with its flagged pairs counted and noted (itself when it has none)."""
    flagged = board.description.get("flagged_pairs")
    if not flagged:
        return board
    coverage = board.coverage.with_count("flagged", flagged) if board.coverage is not None else None
    return replace(board, coverage=coverage, notes=[*board.notes, f"{flagged} pool pairs flagged by --guard detect "
                                                    "have no grade (unjudged here); they are listed for review "
                                                    "(docs/robustness.md)"])


def with_unjudgeable(store: Store, ranked: Ranked, stored: bool, boards: list[Leaderboard]) -> list[Leaderboard]:
    """Each leaderboard again, saying how many ranked pairs of its runs name a passage without text
    (`unjudgeable`)."""
    n = store.corpus.unjudgeable_in(ranked, stored=stored)
    note = (f"unjudgeable: {n} ranked (query, passage) pairs name a passage the store has no text for: never "
            "graded, not in EXAM-Qrels, unjudged for every measure (as trec_eval treats documents missing from "
            "qrels)")
    return [replace(board, description={**board.description, "unjudgeable": n},
                    coverage=board.coverage.with_count("unjudgeable", n)
                    if n and board.coverage is not None else board.coverage,
                    notes=[*board.notes, note] if n else board.notes) for board in boards]
