"""Parse self-rating replies (003 §4.2.1, 000 §4.2.2): the first standalone integer 0–5; no number: an
unanswerability expression gives 0, any other text the papers' default 1; an empty reply fails.

(The original workbench inverts the no-number rule — text gives 0, "unanswerable" 1. Proctor follows the
papers.) A reply that comes with the probabilities of the grade tokens is graded by the most likely token,
and the expected grade is kept."""

from __future__ import annotations

import re

from proctor.methods.base import DEFAULTED, DISTRIBUTION, FAILED, NUMBER, UNANSWERABLE, Parsed
from proctor.methods.unanswerable import is_unanswerable

_STANDALONE = re.compile(r"(?<![\w.\-/])([0-5])(?![\w]|[.\-:]\d)")
DEFAULT_GRADE = 1


def parse_rating(reply: str | None, probabilities: dict[int, float] | None = None) -> Parsed:
    """A 0–5 grade from a reply (or from grade-token probabilities when given)."""
    if probabilities:
        total = sum(probabilities.values())
        grades = sorted(probabilities)
        best = max(grades, key=probabilities.__getitem__)  # the first (lowest) grade of the most likely
        expected = sum(g * p for g, p in probabilities.items()) / total if total else None
        extra = {"expected_grade": expected, "probabilities": {str(g): probabilities[g] for g in grades}}
        text_parse = parse_rating(reply) if reply is not None else None
        if text_parse is not None and text_parse.grade != best:
            extra["text_parse"] = {"grade": text_parse.grade, "status": text_parse.status}
        return Parsed(best, DISTRIBUTION, reply, extra)
    if reply is None or not reply.strip():
        return Parsed(None, FAILED, reply, {"reason": "empty reply"})
    match = _STANDALONE.search(reply)
    if match:
        return Parsed(int(match.group(1)), NUMBER, reply.strip())
    if is_unanswerable(reply):
        return Parsed(0, UNANSWERABLE, reply.strip())
    return Parsed(DEFAULT_GRADE, DEFAULTED, reply.strip())
