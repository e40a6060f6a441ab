"""Many leaderboards from one store in one pass: τ = 1..5 × measures (EXAM-Qrels) and τ = 1..5 (EXAM-Cover).

Labels and runs are read once, each τ's cover table is aggregated in the store (never a list of every
grade); each leaderboard then only re-scores. This is what reports and
meta-evaluation build on.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from proctor.evaluate.labels import Qrels
from proctor.evaluate.leaderboard import Leaderboard, cover_leaderboard, measure_leaderboard
from proctor.evaluate.measures import parse_measure
from proctor.evaluate.measures.base import QueryLabels
from proctor.evaluate.sources import cover_tables, exam_qrels, per_passage
from proctor.gradesets.resolve import describe
from proctor.io.runs import Ranked
from proctor.options.evaluation import EvaluationOptions
from proctor.records import GradeSet
from proctor.store import Store

DEFAULT_MEASURES = ("P@20", "nDCG@10", "RR", "AP")

TAUS = (1, 2, 3, 4, 5)
"""The thresholds τ a sweep draws a leaderboard at."""
MISSING_COVER = "zero"
"""A query a system did not answer counts 0 for EXAM-Cover, as the papers."""


def sweep(
    store: Store, grade_set: GradeSet, runs: Ranked, *, taus: Sequence[int] = TAUS,
    measures: Sequence[str] = DEFAULT_MEASURES, budget: int = EvaluationOptions.budget,
    missing_cover: str = MISSING_COVER,
    qrels: Qrels | None = None,
) -> list[Leaderboard]:
    """EXAM-Qrels leaderboards for every τ × measure, then EXAM-Cover for every τ (`qrels`: the grade set's
    labels when the caller has them already)."""
    return list(sweep_boards(store, grade_set, runs, taus=taus, measures=measures, budget=budget,
                             missing_cover=missing_cover, qrels=qrels))


def sweep_boards(
    store: Store, grade_set: GradeSet, runs: Ranked, *, taus: Sequence[int] = TAUS,
    measures: Sequence[str] = DEFAULT_MEASURES, budget: int = EvaluationOptions.budget,
    missing_cover: str = MISSING_COVER,
    qrels: Qrels | None = None,
) -> Iterator[Leaderboard]:
    """`sweep`'s leaderboards one at a time, in the same order (a caller that keeps only what it needs of each
    holds one leaderboard's per-query values at a time, not every one's)."""
    description = describe(store, grade_set)
    qrels = exam_qrels(store, grade_set) if qrels is None else qrels
    qrels = {qid: QueryLabels(per, keep_gains=True) for qid, per in qrels.items()}  # R, labels kept across boards
    for tau in taus:
        for name in measures:
            spec = parse_measure(name)
            if not spec.measure.uses_relevance_level and tau != taus[0]:
                continue  # nDCG ignores τ: one leaderboard is enough
            yield measure_leaderboard(runs, qrels, spec, tau if spec.measure.uses_relevance_level else None,
                                      description=description)
    if per_passage(grade_set):
        return  # no per-question grades: no EXAM-Cover (sources.refuse_passage_cells)
    for table, notes in cover_tables(store, grade_set, taus):  # the store read once for every τ
        yield cover_leaderboard(runs, table, budget=budget, missing=missing_cover, description=description,
                                notes=notes)
