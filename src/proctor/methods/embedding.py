"""Grades from embedding similarity: cosine(question, passage) with all-MiniLM-L6-v2, mapped to 0–5.

Thresholds are chosen from first principles, not fitted on DL19 (where they are checked). Sentence
embeddings of all-MiniLM-L6-v2 are trained so that cosine ≈ 0 for unrelated text; texts that share a
topic land around 0.3–0.5, and an answer-bearing passage for a question typically reaches 0.55–0.7 (the
model card's semantic-search examples; MS MARCO-style question/answer pairs were in its training data).
We cut the range in even 0.1 steps from 0.25 ("touches the topic") to 0.65 ("answers it directly")."""

from __future__ import annotations

from typing import Any

from proctor.methods.base import FAILED, SIMILARITY, Parsed

THRESHOLDS = ((0.65, 5), (0.55, 4), (0.45, 3), (0.35, 2), (0.25, 1))
"""(minimum cosine, grade), best first; below the last: grade 0."""


def grade_of(similarity: float) -> int:
    """The grade of a cosine similarity."""
    for minimum, grade in THRESHOLDS:
        if similarity >= minimum:
            return grade
    return 0


def grades_of(similarities: Any) -> Any:
    """`grade_of` of every similarity of a numpy array at once (the embedding method's bulk path)."""
    import numpy as np

    cuts = np.array([minimum for minimum, _ in reversed(THRESHOLDS)], dtype=np.float64)
    return np.searchsorted(cuts, np.asarray(similarities, dtype=np.float64), side="right")


def similarity_extra(similarity: float) -> str:
    """The stored `extra` of a similarity grade (`parse_similarity`'s, as canonical JSON), without a dict."""
    return f'{{"similarity": {round(similarity, 6)!r}}}'


def parse_similarity(reply: str | None, score: float | None) -> Parsed:
    """A grade from the backend's similarity score."""
    if score is None:
        return Parsed(None, FAILED, reply, {"reason": "no similarity"})
    return Parsed(grade_of(score), SIMILARITY, None, {"similarity": round(score, 6)})
