"""Aggregations of the four criterion grades into a 0–3 relevance label that need no LLM (002 §2.2–2.3):
the summation table, and Gaussian Naive Bayes trained with query-level cross-validation — a query's own
judgments never predict its labels."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from proctor.options.grading import GradingOptions

CRITERIA = ("Exactness", "Coverage", "Topicality", "Contextual Fit")
SUM_THRESHOLDS: tuple[int, ...] = GradingOptions.sum_thresholds
"""Table 4: sum 10–12 → 3, 7–9 → 2, 5–6 → 1, 0–4 → 0 (minimum sums for labels 3, 2, 1)."""


def sum_label(grades: Sequence[int], thresholds: Sequence[int] = SUM_THRESHOLDS) -> int:
    """The label of a criterion-grade sum."""
    total = sum(grades)
    for label, minimum in zip((3, 2, 1), thresholds, strict=True):
        if total >= minimum:
            return label
    return 0


@dataclass
class GaussianNB:
    """Gaussian Naive Bayes as scikit-learn's `GaussianNB` (variance smoothing 1e-9 × the largest variance)."""

    classes: list[int]
    priors: list[float]
    means: list[list[float]]
    variances: list[list[float]]

    @classmethod
    def fit(cls, features: Sequence[Sequence[float]], labels: Sequence[int], var_smoothing: float = 1e-9) -> GaussianNB:
        """Train on rows of features with their labels."""
        n = len(features)
        columns = list(zip(*features, strict=True))
        # As scikit-learn; when every feature is constant its epsilon would be 0 (and the model undefined).
        epsilon = var_smoothing * max(_variance(c) for c in columns) or var_smoothing
        classes = sorted(set(labels))
        priors, means, variances = [], [], []
        for c in classes:
            rows = [f for f, label in zip(features, labels, strict=True) if label == c]
            priors.append(len(rows) / n)
            cols = list(zip(*rows, strict=True))
            means.append([sum(col) / len(col) for col in cols])
            variances.append([_variance(col) + epsilon for col in cols])
        return cls(classes, priors, means, variances)

    def predict(self, row: Sequence[float]) -> int:
        """The most likely class of one row."""
        best, best_score = self.classes[0], -math.inf
        for c, prior, mean, var in zip(self.classes, self.priors, self.means, self.variances, strict=True):
            score = math.log(prior) - 0.5 * sum(math.log(2 * math.pi * v) + (x - m) ** 2 / v
                                                for x, m, v in zip(row, mean, var, strict=True))
            if score > best_score:
                best, best_score = c, score
        return best


def _variance(values: Sequence[float]) -> float:
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / len(values)


Row = tuple[str, str, tuple[float, ...], int | None]
"""(query, passage, criterion grades, judgment or None)."""


def cross_validated(
    rows: Sequence[Row],
    fit: Callable[[list[tuple[float, ...]], list[int]], object] = GaussianNB.fit,
    on_train: Callable[[str, set[str]], None] | None = None,
) -> dict[tuple[str, str], tuple[int, int]]:
    """Leave-one-query-out: every passage of query q is labelled by a model trained on the judged passages
    of all other queries. Returns `{(query, passage): (label, training rows)}`; `on_train(q, queries)` sees
    which queries each model was trained on."""
    out: dict[tuple[str, str], tuple[int, int]] = {}
    queries = sorted({r[0] for r in rows})
    for query in queries:
        training = [r for r in rows if r[0] != query and r[3] is not None]
        if not training:
            continue
        if on_train is not None:
            on_train(query, {r[0] for r in training})
        model = fit([list(r[2]) for r in training], [r[3] for r in training])
        for qid, pid, features, _ in rows:
            if qid == query:
                out[(qid, pid)] = (model.predict(features), len(training))  # type: ignore[attr-defined]
    return out
