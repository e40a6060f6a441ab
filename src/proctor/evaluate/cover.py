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
`normalize="pool-per-query"` is the mean of per-query ratios instead (queries the pool covers nothing of left
out), which is not the paper's definition and can reorder systems.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction


@dataclass
class CoverTable:
    """Per query: its questions, and which questions each graded passage answers with grade >= τ."""

    questions: dict[str, set[str]] = field(default_factory=dict)
    answered: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)
    tau: int = 1
    _pool: dict[str, set[str]] = field(default_factory=dict, repr=False, compare=False)

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
        frozen = {qid: {pid: frozenset(qs) for pid, qs in per.items()} for qid, per in answered.items()}
        table = cls(dict(questions), frozen, tau)
        table.add_bank(bank or {})
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
        frozen = {qid: {pid: frozenset(qs) for pid, qs in per.items()} for qid, per in by_passage.items()}
        return cls(dict(per_query), frozen, tau)

    def covered(self, qid: str, passages: Iterable[str]) -> set[str]:
        """The questions of `qid` answered by any of `passages`."""
        answered = self.answered.get(qid, {})
        out: set[str] = set()
        for pid in passages:
            out |= answered.get(pid, frozenset())
        return out

    def pool_covered(self, qid: str) -> set[str]:
        """The questions of `qid` that any graded passage answers (computed once per query)."""
        if qid not in self._pool:
            self._pool[qid] = self.covered(qid, self.answered.get(qid, {}))
        return self._pool[qid]


def cover_per_query(
    ranked: dict[str, list[str]],
    table: CoverTable,
    *,
    budget: int = 20,
    missing: str = "zero",
    normalize: str | None = None,
    gold: dict[str, list[str]] | None = None,
) -> tuple[dict[str, float], list[str]]:
    """One system's per-query cover (scaled for n-EXAM) and the queries left out (per-query ratios only)."""
    if normalize == "pool-per-query":
        return _per_query_ratios(ranked, table, budget, missing)
    if normalize not in ("pool", "gold"):
        return {qid: len(table.covered(qid, ranked.get(qid, [])[:budget])) / len(questions)
                for qid, questions in table.questions.items() if qid in ranked or missing == "zero"}, []
    covered, reference = _fractions(ranked, table, budget, missing, normalize, gold)
    if reference == 0:
        return {}, sorted(covered)
    scale = len(covered) / reference
    return {qid: float(value * scale) for qid, value in covered.items()}, []


def n_exam(ranked: dict[str, list[str]], table: CoverTable, *, budget: int = 20, missing: str = "zero",
           normalize: str = "pool", gold: dict[str, list[str]] | None = None) -> float | None:
    """n-EXAM exactly: Σ_q EXAM(d_q|S) / Σ_q EXAM(d*_q) over the queries the system is scored on (rationals,
    so systems tied on EXAM-Cover stay tied); None when the reference covers nothing."""
    covered, reference = _fractions(ranked, table, budget, missing, normalize, gold)
    return float(sum(covered.values(), Fraction(0)) / reference) if reference else None


def _fractions(ranked: dict[str, list[str]], table: CoverTable, budget: int, missing: str, normalize: str | None,
               gold: dict[str, list[str]] | None) -> tuple[dict[str, Fraction], Fraction]:
    covered: dict[str, Fraction] = {}
    reference = Fraction(0)
    for qid, questions in table.questions.items():
        if qid not in ranked and missing != "zero":
            continue
        reference += Fraction(_reference(table, qid, normalize, gold, budget), len(questions))
        covered[qid] = Fraction(len(table.covered(qid, ranked.get(qid, [])[:budget])), len(questions))
    return covered, reference


def reference_cover(table: CoverTable, *, budget: int = 20, gold: dict[str, list[str]] | None = None
                    ) -> dict[str, float]:
    """Per query, what the whole pool (or the gold run within the budget) covers: the `_overall_` row."""
    return {qid: _reference(table, qid, "gold" if gold is not None else "pool", gold, budget) / len(questions)
            for qid, questions in table.questions.items()}


def _reference(table: CoverTable, qid: str, normalize: str | None, gold: dict[str, list[str]] | None,
               budget: int) -> int:
    if normalize == "gold":
        return len(table.covered(qid, (gold or {}).get(qid, [])[:budget]))
    return len(table.pool_covered(qid))


def _per_query_ratios(ranked: dict[str, list[str]], table: CoverTable, budget: int, missing: str
                      ) -> tuple[dict[str, float], list[str]]:
    scores: dict[str, float] = {}
    left_out: list[str] = []
    for qid in table.questions:
        denominator = len(table.pool_covered(qid))
        if denominator == 0:
            left_out.append(qid)
        elif qid in ranked:
            scores[qid] = len(table.covered(qid, ranked[qid][:budget])) / denominator
        elif missing == "zero":
            scores[qid] = 0.0
    return scores, left_out
