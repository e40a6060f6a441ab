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
    return kappa_of_counts(Counter(zip(a, b, strict=True)), weights)


def kappa_of_counts(pairs: Counter, weights: str | None = None) -> float:
    """`cohen_kappa` from the counts of (label a, label b) pairs (the same figure: counts are whole numbers)."""
    labels = sorted({x for x, _ in pairs} | {y for _, y in pairs})
    index = {label: i for i, label in enumerate(labels)}
    k, n = len(labels), sum(pairs.values())
    if n == 0:
        return math.nan
    observed = [[0.0] * k for _ in range(k)]
    for (x, y), count in pairs.items():
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
    return alpha_of_counts(Counter(zip(a, b, strict=True)))


def alpha_of_counts(pairs: Counter) -> float:
    """`krippendorff_alpha_ordinal` from the counts of (label a, label b) pairs."""
    values = sorted({x for x, _ in pairs} | {y for _, y in pairs})
    index = {v: i for i, v in enumerate(values)}
    k = len(values)
    coincidence = [[0.0] * k for _ in range(k)]
    for (x, y), count in pairs.items():
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


def _binary(label: int, rule: str) -> int:
    return int(label == int(rule[1:])) if rule.startswith("=") else int(label >= int(rule[2:]))


def merges_for_scale(low: int, high: int) -> tuple[str, ...]:
    """The binary merges that mean something on a label scale low..high: the 0-5 grades' >=1, >=3, >=4, =5;
    on any other scale every cut `>=t` (t = low+1..high), e.g. thomas 0-2: >=1, >=2; umbrela 0-3: >=1, >=2, >=3."""
    if (low, high) == (0, 5):
        return BINARY_MERGES
    return tuple(f">={t}" for t in range(low + 1, high + 1))


def merge_threshold(rule: str) -> int:
    """The grade a merge rule starts from (`>=4` → 4, `=5` → 5)."""
    return int(rule[2:] if rule.startswith(">=") else rule[1:])


def agreement_report(
    predicted: Sequence[int], judged: Sequence[int], judged_relevant: int,
    merges: Sequence[str] = BINARY_MERGES, llmjudge: bool | None = None,
) -> dict:
    """Every agreement figure for one set of (predicted label, judgment) pairs (each computed from the counts of
    the distinct pairs, so a million passages cost what a few dozen distinct pairs do). `llmjudge`: whether the
    labels are on LLMJudge's 0-3 scale (None: when every label is 0-3)."""
    pairs = Counter(zip(predicted, judged, strict=True))
    out: dict = {
        "n_passages": len(predicted),
        "binary": [
            {"predicted": rule, "judged": f">={judged_relevant}",
             "cohen_kappa": kappa_of_counts(_merged(pairs, lambda p, r=rule: _binary(p, r),
                                                    lambda j: int(j >= judged_relevant)))}
            for rule in merges
        ],
        "linear_weighted_kappa": kappa_of_counts(pairs, weights="linear"),
        "krippendorff_alpha_ordinal": alpha_of_counts(pairs),
        "confusion": confusion(predicted, judged),
    }
    if llmjudge is None:
        llmjudge = bool(predicted) and max(predicted) <= 3 and min(predicted) >= 0
    if llmjudge:
        out["llmjudge_kappa"] = {
            cut: kappa_of_counts(_merged(pairs, lambda p, t=t: int(p >= t), lambda j, t=t: int(j >= t)))
            for cut, t in LLMJUDGE_CUTS.items()
        }
    else:
        out["llmjudge_kappa"] = None
        out["llmjudge_note"] = "LLMJudge binarisations apply to 0-3 labels; these labels reach " + str(
            max(predicted) if predicted else "nothing") + ("" if not predicted or max(predicted) > 3 else
                                                           " on a scale that is not 0-3")
    return out


def _merged(pairs: Counter, left, right) -> Counter:
    """The pair counts with each side's labels mapped (binary merges)."""
    out: Counter = Counter()
    for (x, y), count in pairs.items():
        out[(left(x), right(y))] += count
    return out


def validate_merge(rule: str) -> str:
    """Check a binary merge rule such as `>=4` or `=5`."""
    body = rule[2:] if rule.startswith(">=") else rule[1:] if rule.startswith("=") else None
    if body is None or not body.lstrip("-").isdigit():
        raise ValueError(f"bad merge rule {rule!r}: use >=T or =T")
    return rule
