"""The generated answers' part of `proctor analyze`: every nugget-assign grade set's AutoNuggetizer scores
(all five) and every citation-support grade set's scores, each as a leaderboard correlated with the official
one, in one table."""

from __future__ import annotations

from typing import Any

from proctor.analyze.leaderboard_correlation import correlate_leaderboards
from proctor.analyze.tables import Table
from proctor.evaluate.citations import CITATION_SCORES, citation_leaderboard, citation_table
from proctor.evaluate.leaderboard_files import LeaderboardFile
from proctor.evaluate.nuggets import SCORES, nugget_leaderboard, nugget_table
from proctor.methods import ANSWER_METHODS
from proctor.records import GradeSet
from proctor.store import Store


def is_answer_set(grade_set: GradeSet) -> bool:
    """Whether a grade set graded whole answers or cited sentences (no passage labels to sweep)."""
    return grade_set.method in ANSWER_METHODS


def answer_correlations(store: Store, official: LeaderboardFile, grade_sets: list[GradeSet]
                        ) -> tuple[list[dict[str, Any]], Table]:
    """One row per (grade set, score): its leaderboard's correlation with the official one. Scores that
    cannot be computed (nuggets without importance) are listed with the reason."""
    from proctor.errors import UsageError

    rows: list[dict[str, Any]] = []
    for grade_set in grade_sets:
        nuggets = grade_set.method == "nugget-assign"
        table = nugget_table(store, grade_set) if nuggets else citation_table(store, grade_set)
        for score in SCORES if nuggets else CITATION_SCORES:
            try:
                board = (nugget_leaderboard(table, score) if nuggets  # type: ignore[arg-type]
                         else citation_leaderboard(table, score))  # type: ignore[arg-type]
            except UsageError as exc:
                rows.append({"grade_set": grade_set.id, "method": grade_set.method, "model": grade_set.model,
                             "score": score, "skipped": str(exc)})
                continue
            result = correlate_leaderboards(LeaderboardFile(board.scores()), official, samples=0)
            rows.append({"grade_set": grade_set.id, "method": grade_set.method, "model": grade_set.model,
                         "score": score, "spearman": result["spearman"], "kendall": result["kendall"],
                         "tau_ap": result["tau_ap"], "n_systems": result["n_systems"], "scores": board.scores(),
                         "notes": board.notes})
    table = Table(["method", "model", "score", "Spearman ρ", "Kendall τ", "systems", "grade set"],
                  [[r["method"], r["model"], r["score"], r.get("spearman"), r.get("kendall"), r.get("n_systems"),
                    r["grade_set"]] for r in rows],
                  caption="Generated answers: AutoNuggetizer scores (nugget-assign) and citation support "
                  "(citation-support) correlated with the official leaderboard")
    return rows, table
