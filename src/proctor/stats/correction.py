"""Multiple-comparison corrections of a family of p-values: Bonferroni (p * m) and Holm's step-down
(Holm 1979), as adjusted p-values capped at 1; NaN p-values are left out of the family and stay NaN.
(scipy has no Holm: its `false_discovery_control` is Benjamini-Hochberg/Yekutieli.)"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from proctor.options.significance import CORRECTIONS, SignificanceOptions


def adjust(p_values: Sequence[float], method: str = SignificanceOptions.correction) -> list[float]:
    """Adjusted p-values in the input order."""
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r}: {', '.join(CORRECTIONS)}")
    p = np.asarray(p_values, dtype=float)
    out = p.copy()
    valid = np.flatnonzero(~np.isnan(p))
    m = len(valid)
    if method == "bonferroni":
        out[valid] = np.minimum(1.0, p[valid] * m)
    elif method == "holm":
        order = valid[np.argsort(p[valid], kind="stable")]  # ties in input order, as the step-down reads them
        out[order] = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    return out.tolist()
