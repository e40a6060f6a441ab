"""Agreement of predicted relevance labels with human judgments (004 §4, 002 §4): Cohen's κ on binary
merges, linearly weighted κ, Krippendorff's α (ordinal), and the graded confusion table.

κ follows scikit-learn's `cohen_kappa_score` (weights over the positions of the sorted label values);
α follows the `krippendorff` package (two coders, ordinal metric over the values that occur)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence


def cohen_kappa(a: Sequence[int], b: Sequence[int], weights: str | None = None) -> float:
    """Cohen's κ of two label lists; `weights="linear"` for linearly weighted κ. NaN when undefined."""
    if len(a) != len(b):
        raise ValueError("label lists differ in length")
    labels = sorted(set(a) | set(b))
    index = {label: i for i, label in enumerate(labels)}
    k, n = len(labels), len(a)
    if n == 0:
        return math.nan
    observed = [[0.0] * k for _ in range(k)]
    for (x, y), count in Counter(zip(a, b, strict=True)).items():  # whole counts: exact as floats
        observed[index[x]][index[y]] += count
    rows = [sum(r) for r in observed]
    cols = [sum(observed[i][j] for i in range(k)) for j in range(k)]

    def weight(i: int, j: int) -> float:
        if weights == "linear":
            return abs(i - j)
        return 0.0 if i == j else 1.0

    numerator = math.fsum(weight(i, j) * observed[i][j] for i in range(k) for j in range(k))
    denominator = math.fsum(weight(i, j) * rows[i] * cols[j] / n for i in range(k) for j in range(k))
    return 1 - numerator / denominator if denominator else math.nan


def krippendorff_alpha_ordinal(a: Sequence[int], b: Sequence[int]) -> float:
    """Krippendorff's α with the ordinal metric for two coders who labelled the same units."""
    values = sorted(set(a) | set(b))
    index = {v: i for i, v in enumerate(values)}
    k = len(values)
    coincidence = [[0.0] * k for _ in range(k)]
    for (x, y), count in Counter(zip(a, b, strict=True)).items():  # whole counts: exact as floats
        coincidence[index[x]][index[y]] += count
        coincidence[index[y]][index[x]] += count
    n_c = [sum(row) for row in coincidence]
    n = sum(n_c)
    if n < 2 or k < 2:
        return math.nan

    def delta(c: int, d: int) -> float:
        lo, hi = min(c, d), max(c, d)
        return (sum(n_c[lo:hi + 1]) - (n_c[c] + n_c[d]) / 2) ** 2

    observed = math.fsum(coincidence[c][d] * delta(c, d) for c in range(k) for d in range(k))
    expected = math.fsum(n_c[c] * n_c[d] * delta(c, d) for c in range(k) for d in range(k))
    return 1 - (n - 1) * observed / expected if expected else math.nan


def confusion(predicted: Sequence[int], judged: Sequence[int]) -> dict:
    """Counts of (predicted label, judgment) with row and column totals, as in 004 Tables 4–6."""
    counts = Counter(zip(predicted, judged, strict=True))
    rows, cols = sorted(set(predicted)), sorted(set(judged))
    return {
        "predicted_labels": rows,
        "judgments": cols,
        "counts": [[counts[(r, c)] for c in cols] for r in rows],
        "row_totals": [sum(counts[(r, c)] for c in cols) for r in rows],
        "column_totals": [sum(counts[(r, c)] for r in rows) for c in cols],
        "total": len(predicted),
    }


BINARY_MERGES = (">=1", ">=3", ">=4", "=5")
LLMJUDGE_CUTS = {"0|123": 1, "01|23": 2, "012|3": 3}


def _binary(labels: Sequence[int], rule: str) -> list[int]:
    """`labels` merged to 0/1 by a rule such as `>=4` or `=5`."""
    if rule.startswith("="):
        value = int(rule[1:])
        return [int(label == value) for label in labels]
    threshold = int(rule[2:])
    return [int(label >= threshold) for label in labels]


def agreement_report(
    predicted: Sequence[int], judged: Sequence[int], judged_relevant: int,
    merges: Sequence[str] = BINARY_MERGES,
) -> dict:
    """Every agreement figure for one set of (predicted label, judgment) pairs."""
    judged_binary = [int(j >= judged_relevant) for j in judged]
    out: dict = {
        "n_passages": len(predicted),
        "binary": [
            {"predicted": rule, "judged": f">={judged_relevant}",
             "cohen_kappa": cohen_kappa(_binary(predicted, rule), judged_binary)}
            for rule in merges
        ],
        "linear_weighted_kappa": cohen_kappa(predicted, judged, weights="linear"),
        "krippendorff_alpha_ordinal": krippendorff_alpha_ordinal(predicted, judged),
        "confusion": confusion(predicted, judged),
    }
    if predicted and max(predicted) <= 3 and min(predicted) >= 0:
        out["llmjudge_kappa"] = {
            cut: cohen_kappa([int(p >= t) for p in predicted], [int(j >= t) for j in judged])
            for cut, t in LLMJUDGE_CUTS.items()
        }
    else:
        out["llmjudge_kappa"] = None
        out["llmjudge_note"] = "LLMJudge binarisations apply to 0-3 labels; these labels reach " + str(
            max(predicted) if predicted else "nothing")
    return out


def validate_merge(rule: str) -> str:
    """Check a binary merge rule such as `>=4` or `=5`."""
    body = rule[2:] if rule.startswith(">=") else rule[1:] if rule.startswith("=") else None
    if body is None or not body.lstrip("-").isdigit():
        raise ValueError(f"bad merge rule {rule!r}: use >=T or =T")
    return rule
