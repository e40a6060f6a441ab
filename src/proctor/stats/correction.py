"""Multiple-comparison corrections of a family of p-values: Bonferroni (p * m) and Holm's step-down
(Holm 1979), as adjusted p-values capped at 1; NaN p-values are left out of the family and stay NaN."""

from __future__ import annotations

import math
from collections.abc import Sequence

CORRECTIONS = ("holm", "bonferroni", "none")


def adjust(p_values: Sequence[float], method: str = "holm") -> list[float]:
    """Adjusted p-values in the input order."""
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r}: {', '.join(CORRECTIONS)}")
    valid = [(p, i) for i, p in enumerate(p_values) if not math.isnan(p)]
    out = [math.nan] * len(p_values)
    m = len(valid)
    if method == "none":
        for p, i in valid:
            out[i] = p
    elif method == "bonferroni":
        for p, i in valid:
            out[i] = min(1.0, p * m)
    else:
        running = 0.0
        for rank, (p, i) in enumerate(sorted(valid)):
            running = max(running, min(1.0, (m - rank) * p))
            out[i] = running
    return out
