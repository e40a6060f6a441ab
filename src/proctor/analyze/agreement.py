"""Agreement of predicted relevance labels with human judgments (004 §4, 002 §4): Cohen's κ on binary
merges, linearly weighted κ, Krippendorff's α (ordinal), and the graded confusion table.

κ is scikit-learn's `cohen_kappa_score` (weights over the positions of the sorted label values) and α is the
`krippendorff` package's (two coders, ordinal metric over the values that occur), each computed by its package's
formula (κ from the confusion matrix, α from the coincidence matrix) from the counts of the distinct (label a,
label b) pairs: tests check both against the packages, to the last bit."""

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
    """`cohen_kappa` from the counts of (label a, label b) pairs: scikit-learn's `cohen_kappa_score` of the
    distinct pairs weighted by their counts, by its formula over the confusion matrix of the sorted label values
    (every number computed as scikit-learn computes it, so the result is its to the last bit: tests compare; its
    call cost 1 ms, most of it checking and converting arguments). NaN without pairs or when both sides use one
    same label."""
    import numpy as np

    pairs = +pairs  # pairs counted 0 or less are no pairs
    values = sorted({label for pair in pairs for label in pair})
    if len(values) < 2:
        return math.nan
    where, size = {value: i for i, value in enumerate(values)}, len(values)
    confusion = np.zeros((size, size))
    for (x, y), count in pairs.items():  # integer counts: exact, as scikit-learn's integer confusion matrix
        confusion[where[x], where[y]] += count
    sum0, sum1 = np.sum(confusion, axis=0), np.sum(confusion, axis=1)
    expected = np.outer(sum0, sum1) / np.sum(sum0)
    if weights is None:
        weight = np.ones((size, size))
        np.fill_diagonal(weight, 0)
    else:  # "linear" or "quadratic": over the positions of the sorted values
        weight = np.zeros((size, size)) + np.arange(size)
        weight = np.abs(weight - weight.T) if weights == "linear" else (weight - weight.T) ** 2
    denominator = np.sum(weight * expected)
    if denominator == 0:  # scikit-learn's undefined case (its default answer)
        return math.nan
    return float(1 - np.sum(weight * confusion) / denominator)


def krippendorff_alpha_ordinal(a: Sequence[int], b: Sequence[int]) -> float:
    """Krippendorff's α with the ordinal metric for two coders who labelled the same units."""
    return alpha_of_counts(Counter(zip(a, b, strict=True)))


def alpha_of_counts(pairs: Counter) -> float:
    """`krippendorff_alpha_ordinal` from the counts of (label a, label b) pairs: the `krippendorff` package's α
    of one unit per pair counted, by its formula over the coincidence matrix the pairs make (a unit (x, y) adds 1
    to o[x, y] and to o[y, x]), so a million passages cost what their few distinct pairs do (the package's own
    call holds units × values × values numbers: gigabytes at TREC scale). Every number is computed as the
    package computes it, so the result is the package's to the last bit (tests compare). NaN without pairs or
    below 2 values."""
    import numpy as np

    pairs = +pairs
    values = sorted({label for pair in pairs for label in pair})
    if not pairs or len(values) < 2:
        return math.nan
    where = {value: i for i, value in enumerate(values)}
    o = np.zeros((len(values), len(values)))
    for (x, y), count in pairs.items():  # integers: exact, in any order, as the package's sum over units
        o[where[x], where[y]] += count
        o[where[y], where[x]] += count
    n_v = o.sum(axis=0)
    e = np.divide(np.outer(n_v, n_v) - np.diagflat(n_v), n_v.sum() - 1)
    d = _ordinal_distances(n_v)
    return float(1 - (o * d).sum() / (e * d).sum())


def _ordinal_distances(n_v):
    """Krippendorff's squared ordinal distances between the values, from how often each occurs (`n_v`): the sum
    of the counts from one value to the other minus half the two values' own counts, squared."""
    import numpy as np

    i = np.arange(len(n_v))
    low, high = np.minimum.outer(i, i), np.maximum.outer(i, i)
    cumulative = np.concatenate(([0.0], np.cumsum(n_v)))  # integers: exact sums
    return (cumulative[high + 1] - cumulative[low] - np.divide(n_v[low] + n_v[high], 2)) ** 2


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
