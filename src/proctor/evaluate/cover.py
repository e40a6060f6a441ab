"""EXAM-Cover (001 §3.1.2, 004 §3.3.1): per query, the fraction of its questions that some passage among
the system's first k answers with grade >= τ; a system's score is the mean over queries.

A query's questions are its bank's items of the kinds the grade set grades, together with any other
question graded for it; so the queries scored are every topic with questions in the grade set's bank, not
only the topics some passage of the pool was graded for (without a bank: the topics graded). A query the
system did not answer counts 0 (`missing="zero"`, as the papers) or is left out (`missing="skip"`, as the
original workbench).

n-EXAM (001 §3.1.3) is a ratio of sums over queries, Σ_q EXAM(d_q|S) / Σ_q EXAM(d*_q), with d* the whole
graded pool of the query (`normalize="pool"`) or a gold run — e.g. the gold articles of 001 §3.1.3 — within
the same budget (`normalize="gold"`); so it keeps EXAM-Cover's order of systems. Each per-query value is the
system's cover of that query scaled by n / Σ_q EXAM(d*_q), so that their mean is that ratio.
`normalize="pool-per-query"` is the mean of per-query ratios instead, as exam_pp 0.1.2 computes its `n-exam`
(a query the pool covers nothing of counts 0): not the paper's definition, and it can reorder systems.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import reduce
from itertools import repeat
from operator import or_

from proctor.options.evaluation import EvaluationOptions

NEXAM_NORM = "pool"
"""n-EXAM's normaliser unless one is named: the whole graded pool, a ratio of sums (`NEXAM(rel=T)@K`)."""


@dataclass
class CoverTable:
    """Per query: its questions, and which questions each graded passage answers with grade >= τ, as a bitmask
    over the query's graded questions (bit i: `order[query][i]`), so a system's cover is an OR and a bit count."""

    questions: dict[str, set[str]] = field(default_factory=dict)
    answered: dict[str, dict[str, int]] = field(default_factory=dict)
    tau: int = 1
    order: dict[str, list[str]] = field(default_factory=dict)
    _pool: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, grade_rows: Iterable[tuple[str, str, str, int | None]], tau: int,
              bank: dict[str, set[str]] | None = None) -> CoverTable:
        """From `(query, passage, question, grade)` rows and the bank's items per query (see `add_bank`);
        failed grades answer nothing."""
        questions: dict[str, set[str]] = defaultdict(set)
        answered: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for qid, pid, question_id, grade in grade_rows:
            questions[qid].add(question_id)
            if grade is not None and grade >= tau:
                answered[qid][pid].add(question_id)
        table = cls._from_sets(dict(questions), answered, tau)
        table.add_bank(bank or {})
        return table

    @classmethod
    def from_answered(cls, questions: Iterable[tuple[str, str]] | dict[str, set[str]],
                      answered: Iterable[tuple[str, str, str]], tau: int) -> CoverTable:
        """From every graded (query, question) (or `{query: questions}`, which tables of several τ may share)
        and the (query, passage, question) answered with grade >= τ: the table `build` makes, without reading
        every grade."""
        if isinstance(questions, dict):
            per_query = questions
        else:
            per_query = defaultdict(set)
            for qid, question_id in questions:
                per_query[qid].add(question_id)
        by_passage: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for qid, pid, question_id in answered:
            by_passage[qid][pid].add(question_id)
        return cls._from_sets(dict(per_query), by_passage, tau)

    @classmethod
    def from_masks(cls, rows: Iterable[tuple[str, list[str], dict[str, int]]], tau: int) -> CoverTable:
        """From (query, its graded questions, `{passage: bitmask of the questions it answers}`) rows."""
        table = cls(tau=tau)
        for qid, questions, masks in rows:
            table.questions[qid] = set(questions)
            table.order[qid] = questions
            table.answered[qid] = masks
        return table

    @classmethod
    def _from_sets(cls, questions: dict[str, set[str]], answered: dict[str, dict[str, set[str]]], tau: int
                   ) -> CoverTable:
        table = cls(questions, {}, tau)
        for qid, per in answered.items():
            order = sorted(questions.get(qid, ()))
            order += sorted(set().union(*per.values()).difference(order))  # answered yet not listed: still counted
            bit = {question_id: 1 << n for n, question_id in enumerate(order)}
            table.order[qid] = order
            table.answered[qid] = {pid: sum(bit[q] for q in qs) for pid, qs in per.items()}
        return table

    def add_bank(self, bank: dict[str, set[str]]) -> list[str]:
        """Add the bank's items per query, so that every banked query is scored (a query nothing was graded
        for covers nothing); returns the banked queries that have no grade, sorted."""
        ungraded = sorted(qid for qid in bank if qid not in self.questions)
        for qid, items in bank.items():
            self.questions.setdefault(qid, set()).update(items)
        self._pool.clear()
        return ungraded

    def item_ids(self) -> set[str]:
        """Every question id of the table (before `add_bank`: those some grade names)."""
        return set().union(*self.questions.values()) if self.questions else set()

    def covered_count(self, qid: str, passages: Iterable[str]) -> int:
        """How many questions of `qid` any of `passages` answers."""
        masks = self.answered.get(qid)
        return reduce(or_, map(masks.get, passages, repeat(0)), 0).bit_count() if masks else 0

    def covered(self, qid: str, passages: Iterable[str]) -> set[str]:
        """The questions of `qid` answered by any of `passages`."""
        masks = self.answered.get(qid, {})
        return self._names(qid, reduce(or_, (masks.get(pid, 0) for pid in passages), 0))

    def pool_count(self, qid: str) -> int:
        """How many questions of `qid` any graded passage answers (computed once per query)."""
        return self._pool_mask(qid).bit_count()

    def pool_covered(self, qid: str) -> set[str]:
        """The questions of `qid` that any graded passage answers."""
        return self._names(qid, self._pool_mask(qid))

    def _pool_mask(self, qid: str) -> int:
        if qid not in self._pool:
            self._pool[qid] = reduce(or_, self.answered.get(qid, {}).values(), 0)
        return self._pool[qid]

    def _names(self, qid: str, mask: int) -> set[str]:
        return {question_id for n, question_id in enumerate(self.order.get(qid, ())) if mask >> n & 1}


def covered_counts(runs: dict[str, dict[str, list[str]]], table: CoverTable, budget: int
                   ) -> dict[str, dict[str, int]]:
    """`{system: {query: questions its first `budget` passages answer}}` for the queries each system answered,
    computed query by query (one query's bitmasks stay in the processor's cache while every system reads them)."""
    out: dict[str, dict[str, int]] = {run: {} for run in runs}
    for qid in table.questions:
        for run, ranked in runs.items():
            passages = ranked.get(qid)
            if passages is not None:
                out[run][qid] = table.covered_count(qid, passages[:budget])
    return out


def cover_per_query(
    ranked: dict[str, list[str]],
    table: CoverTable,
    *,
    budget: int = EvaluationOptions.budget,
    missing: str = EvaluationOptions.missing,
    normalize: str | None = None,
    gold: dict[str, list[str]] | None = None,
    counts: dict[str, int] | None = None,
) -> tuple[dict[str, float], list[str]]:
    """One system's per-query cover (scaled for n-EXAM) and the queries left out, or counted 0 by per-query
    ratios, because the reference covers nothing of them;
    `counts`: this system's `covered_counts`, when computed for every system at once."""
    count = _counter(ranked, table, budget, counts)
    if normalize == "pool-per-query":
        return _per_query_ratios(ranked, table, count, missing)
    if normalize not in ("pool", "gold"):
        return {qid: count(qid) / len(questions)
                for qid, questions in table.questions.items() if qid in ranked or missing == "zero"}, []
    covered, reference = _fractions(ranked, table, count, budget, missing, normalize, gold)
    if reference == 0:
        return {}, sorted(covered)
    scale = len(covered) / reference
    return {qid: float(value * scale) for qid, value in covered.items()}, []


def n_exam(ranked: dict[str, list[str]], table: CoverTable, *, budget: int = EvaluationOptions.budget,
           missing: str = EvaluationOptions.missing, normalize: str = NEXAM_NORM,
           gold: dict[str, list[str]] | None = None, counts: dict[str, int] | None = None
           ) -> float | None:
    """n-EXAM exactly: Σ_q EXAM(d_q|S) / Σ_q EXAM(d*_q) over the queries the system is scored on (rationals,
    so systems tied on EXAM-Cover stay tied); None when the reference covers nothing."""
    count = _counter(ranked, table, budget, counts)
    covered, reference = _fractions(ranked, table, count, budget, missing, normalize, gold)
    return float(sum(covered.values(), Fraction(0)) / reference) if reference else None


def _counter(ranked: dict[str, list[str]], table: CoverTable, budget: int, counts: dict[str, int] | None
             ) -> Callable[[str], int]:
    """Query → questions the system's first `budget` passages answer (0 for a query it did not answer)."""
    if counts is not None:
        return lambda qid: counts.get(qid, 0)
    return lambda qid: table.covered_count(qid, ranked.get(qid, [])[:budget])


def _fractions(ranked: dict[str, list[str]], table: CoverTable, count: Callable[[str], int], budget: int,
               missing: str, normalize: str | None, gold: dict[str, list[str]] | None
               ) -> tuple[dict[str, Fraction], Fraction]:
    covered: dict[str, Fraction] = {}
    reference = Fraction(0)
    for qid, questions in table.questions.items():
        if qid not in ranked and missing != "zero":
            continue
        reference += Fraction(_reference(table, qid, normalize, gold, budget), len(questions))
        covered[qid] = Fraction(count(qid), len(questions))
    return covered, reference


def reference_cover(table: CoverTable, *, budget: int = EvaluationOptions.budget,
                    gold: dict[str, list[str]] | None = None) -> dict[str, float]:
    """Per query, what the whole pool (or the gold run within the budget) covers: the `_overall_` row."""
    return {qid: _reference(table, qid, "gold" if gold is not None else "pool", gold, budget) / len(questions)
            for qid, questions in table.questions.items()}


def _reference(table: CoverTable, qid: str, normalize: str | None, gold: dict[str, list[str]] | None,
               budget: int) -> int:
    if normalize == "gold":
        return table.covered_count(qid, (gold or {}).get(qid, [])[:budget])
    return table.pool_count(qid)


def _per_query_ratios(ranked: dict[str, list[str]], table: CoverTable, count: Callable[[str], int], missing: str
                      ) -> tuple[dict[str, float], list[str]]:
    """exam_pp's `n-exam` per query: cover / pool cover, 0 where the pool covers nothing (its `frac`); also
    the queries the pool covers nothing of."""
    scores: dict[str, float] = {}
    uncovered: list[str] = []
    for qid in table.questions:
        denominator = table.pool_count(qid)
        if denominator == 0:
            uncovered.append(qid)
        if qid in ranked:
            scores[qid] = count(qid) / denominator if denominator else 0.0
        elif missing == "zero":
            scores[qid] = 0.0
    return scores, uncovered
