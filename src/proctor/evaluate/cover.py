"""EXAM-Cover (001 §3.1.2, 004 §3.3.1): per query, the fraction of its questions that some passage among
the system's first k answers with grade >= τ; a system's score is the mean over queries.

A query's questions are those graded for it (by the chosen method and model). A query the system did not
answer counts 0 (`missing="zero"`, as the papers) or is left out (`missing="skip"`, as the original
workbench). n-EXAM divides by what the whole graded pool of the query covers (`normalize="pool"`) or by
what a gold run — e.g. the gold articles of 001 §3.1.3 — covers within the same budget (`normalize="gold"`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class CoverTable:
    """Per query: its questions, and which questions each graded passage answers with grade >= τ."""

    questions: dict[str, set[str]] = field(default_factory=dict)
    answered: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)
    tau: int = 1

    @classmethod
    def build(cls, grade_rows: Iterable[tuple[str, str, str, int | None]], tau: int) -> CoverTable:
        """From `(query, passage, question, grade)` rows; failed grades answer nothing."""
        questions: dict[str, set[str]] = defaultdict(set)
        answered: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for qid, pid, question_id, grade in grade_rows:
            questions[qid].add(question_id)
            if grade is not None and grade >= tau:
                answered[qid][pid].add(question_id)
        frozen = {qid: {pid: frozenset(qs) for pid, qs in per.items()} for qid, per in answered.items()}
        return cls(dict(questions), frozen, tau)

    def covered(self, qid: str, passages: Iterable[str]) -> set[str]:
        """The questions of `qid` answered by any of `passages`."""
        answered = self.answered.get(qid, {})
        out: set[str] = set()
        for pid in passages:
            out |= answered.get(pid, frozenset())
        return out

    def pool_covered(self, qid: str) -> set[str]:
        """The questions of `qid` that any graded passage answers."""
        return self.covered(qid, self.answered.get(qid, {}))


def cover_per_query(
    ranked: dict[str, list[str]],
    table: CoverTable,
    *,
    budget: int = 20,
    missing: str = "zero",
    normalize: str | None = None,
    gold: dict[str, list[str]] | None = None,
) -> tuple[dict[str, float], list[str]]:
    """One system's per-query cover and the queries left out (n-EXAM: the normaliser covers nothing)."""
    scores: dict[str, float] = {}
    left_out: list[str] = []
    for qid, questions in table.questions.items():
        denominator = len(questions)
        if normalize == "pool":
            denominator = len(table.pool_covered(qid))
        elif normalize == "gold":
            denominator = len(table.covered(qid, (gold or {}).get(qid, [])[:budget]))
        if denominator == 0:
            left_out.append(qid)
            continue
        if qid not in ranked:
            if missing == "zero":
                scores[qid] = 0.0
            continue
        scores[qid] = len(table.covered(qid, ranked[qid][:budget])) / denominator
    return scores, left_out
