"""Time of Cohen's kappa from pair counts (`analyze.agreement.kappa_of_counts`, scikit-learn's formula over the
confusion matrix) beside scikit-learn's own `cohen_kappa_score` of the same pairs (its parameter checks skipped,
as Proctor called it before), on the count rows `calibrate` asks for: binary (predicted, judged) counts of a
DL19-sized sample, plain and linearly weighted; the two must give the same bits.

    python benchmarks/bench_kappa.py [ROWS]     (default: 2000 rows)
"""

from __future__ import annotations

import sys
import time
from collections import Counter

import numpy as np


def rows(n: int) -> list[Counter]:
    """`n` seeded count tables of (predicted, judged) pairs, 0/1 each, about 200 pairs a table."""
    rng = np.random.default_rng(0)
    pairs = ((0, 0), (0, 1), (1, 0), (1, 1))
    return [Counter({p: int(c) for p, c in zip(pairs, rng.integers(0, 120, 4), strict=True) if c}) for _ in range(n)]


def sklearn_kappa(counts: Counter, weights: str | None) -> float:
    """scikit-learn's `cohen_kappa_score` of the distinct pairs weighted by their counts."""
    from sklearn import config_context
    from sklearn.metrics import cohen_kappa_score

    keys = list(counts)
    with config_context(skip_parameter_validation=True):
        return float(cohen_kappa_score([x for x, _ in keys], [y for _, y in keys], weights=weights,
                                       sample_weight=[counts[k] for k in keys]))


def main(n: int) -> None:
    """Time both on the same rows; say whether every result has the same bits."""
    from proctor.analyze.agreement import kappa_of_counts

    tables = rows(n)
    sklearn_kappa(tables[0], None)  # scikit-learn loaded before timing
    for weights in (None, "linear"):
        timings, results = {}, {}
        for name, kappa in (("kappa_of_counts", kappa_of_counts), ("scikit-learn", sklearn_kappa)):
            start = time.process_time()
            results[name] = [kappa(t, weights) for t in tables]
            timings[name] = (time.process_time() - start) / n * 1e3
        same = all(a == b or (a != a and b != b) for a, b in zip(*results.values(), strict=True))
        print(f"weights={weights}: kappa_of_counts {timings['kappa_of_counts']:.3f} ms a call, scikit-learn "
              f"{timings['scikit-learn']:.3f} ms ({n} tables); same bits: {same}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
