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


_PREFIX = b'{"similarity": '
_DIGITS = 6
"""Decimals of a stored similarity (`round(similarity, 6)`)."""


def similarity_extras(similarities: Any) -> list[str]:
    """`similarity_extra` of every similarity of a float64 numpy array, byte for byte, made in one vectorised step
    (the embedding method's bulk path): each value scaled by 10⁶ and rounded to an integer k, whose digits give
    the repr of k / 10⁶ (fixed notation, trailing zeros dropped, "-0.0" for a negative value rounding to 0); the
    few where that could differ from Python's correctly rounded `round` (within 10⁻⁶ of a tie of the scaled
    value, whose float product is exact to ~10⁻¹⁰), whose repr is in exponent notation (0 < |k| < 100), or not
    within ±1.04 (or not finite) are made by `similarity_extra` itself."""
    import numpy as np

    values = np.asarray(similarities, dtype=np.float64)
    if values.ndim != 1 or not len(values):
        return [similarity_extra(float(v)) for v in values.reshape(-1)]
    with np.errstate(invalid="ignore"):
        scaled = values * 1e6
        whole = np.floor(scaled + 0.5)
        magnitude = np.abs(whole)
        own = ~(np.abs(values) < 1.04) | (np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6) \
            | ((magnitude > 0) & (magnitude < 100))
    k = np.where(own, 0, magnitude).astype(np.int64)
    rows = len(values)
    width = len(_PREFIX) + 1 + 1 + 1 + _DIGITS + 2  # prefix, sign, units, point, decimals, "}", newline
    text = np.empty((rows, width), dtype=np.uint8)
    keep = np.ones((rows, width), dtype=bool)
    text[:, :len(_PREFIX)] = np.frombuffer(_PREFIX, dtype=np.uint8)
    at = len(_PREFIX)
    text[:, at] = ord("-")
    keep[:, at] = np.signbit(values)
    text[:, at + 1] = ord("0") + k // 10 ** _DIGITS
    text[:, at + 2] = ord(".")
    decimals = np.stack([(k // 10 ** (_DIGITS - 1 - d)) % 10 for d in range(_DIGITS)], axis=1)
    text[:, at + 3:at + 3 + _DIGITS] = ord("0") + decimals
    # a decimal is kept while a non-zero one follows it (or is it); the first always
    keep[:, at + 4:at + 3 + _DIGITS] = np.flip(np.logical_or.accumulate(np.flip(decimals[:, 1:] != 0, axis=1),
                                                                         axis=1), axis=1)
    text[:, -2:] = np.frombuffer(b"}\n", dtype=np.uint8)
    out = text[keep].tobytes().decode("ascii").split("\n")[:-1]
    for n in np.flatnonzero(own).tolist():
        out[n] = similarity_extra(float(values[n]))
    return out


def parse_similarity(reply: str | None, score: float | None) -> Parsed:
    """A grade from the backend's similarity score."""
    if score is None:
        return Parsed(None, FAILED, reply, {"reason": "no similarity"})
    return Parsed(grade_of(score), SIMILARITY, None, {"similarity": round(score, 6)})
