"""Parsers of direct relevance labels (000 Appendix A, 002 §4.1):

- Yes/No prompts (FaggioliB, HELM, Sun, their few-shot variants): "Yes", "Yes.", "yes," … → 1, "No" … → 0;
  anything else gets label 0 with status `invalid` (002 §4.1), counted and shown; an empty reply or a backend
  error is a failure (retried).
- Graded prompts (Thomas 0–2, UMBRELA 0–3, the Four Prompts criteria and aggregations, query similarity):
  the first standalone number in range (UMBRELA's "##final score: N" first); otherwise label 0, recorded
  with status `invalid` and counted — never silent.
- Generated queries (passage-to-query generation) are kept as text for the next step.
"""

from __future__ import annotations

import re

from proctor.methods.base import FAILED, NUMBER, Parsed
from proctor.methods.unanswerable import normalise

INVALID = "invalid"
YES_NO = "yes-no"
GENERATED = "generated"
_FINAL_SCORE = re.compile(r"final score\s*:\s*(-?\d+)", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.\-/])(-?\d+)(?![\w]|[.\-:]\d)")


def parse_yes_no(reply: str | None) -> Parsed:
    """1 for yes, 0 for no (first word, case and punctuation ignored); otherwise a failure."""
    words = normalise(reply or "").split()
    if words and words[0] in ("yes", "no"):
        return Parsed(int(words[0] == "yes"), YES_NO, (reply or "").strip())
    if not words:
        return Parsed(None, FAILED, reply, {"reason": "empty reply"})
    return Parsed(0, INVALID, (reply or "").strip(), {"reason": "neither yes nor no: label 0 (002 §4.1)"})


def parse_in_range(reply: str | None, low: int, high: int) -> Parsed:
    """The first standalone number within [low, high]; otherwise label 0 with status `invalid`."""
    text = reply or ""
    final = _FINAL_SCORE.search(text)
    candidates = [final.group(1)] if final else []
    candidates += [m.group(1) for m in _NUMBER.finditer(text)]
    for candidate in candidates:
        value = int(candidate)
        if low <= value <= high:
            return Parsed(value, NUMBER, text.strip())
    return Parsed(0, INVALID, text.strip() or None, {"reason": f"no number in {low}-{high}: label 0 (002 §4.1)"})


def within_scale(parsed: Parsed, low: int, high: int) -> Parsed:
    """`parsed` when its grade is on the scale `low`-`high` (or it has none); otherwise label 0 with status
    `invalid`, the reply kept and the reason said, like a reply without a number in range."""
    if parsed.grade is None or low <= parsed.grade <= high or parsed.status == INVALID:
        return parsed
    return Parsed(0, INVALID, parsed.answer, {**parsed.extra, "reason": f"grade {parsed.grade} is outside the "
                                                f"declared scale {low}-{high}: label 0 (002 §4.1)"})


def parse_generated(reply: str | None) -> Parsed:
    """A generated query (first non-empty line, quotes stripped) for the next step; empty is a failure."""
    line = next((ln.strip().strip("'\"“”‘’").strip() for ln in (reply or "").splitlines() if ln.strip()), "")
    if not line:
        return Parsed(None, FAILED, reply, {"reason": "empty reply"})
    return Parsed(None, GENERATED, line)
