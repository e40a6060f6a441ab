"""Calibration on a few human labels: sample N topics with human judgments, choose on them the labelling rule
(relevant when the grade reached by at least m questions is >= tau; a direct method has m = 1, so only its cut
tau) that agrees best with the humans (Cohen's kappa), apply it to the other topics and measure there: Cohen's
kappa (scikit-learn), Krippendorff's alpha (the `krippendorff` package) and the Kendall tau-b (scipy) of the
held-out P@k leaderboard with the human one. Repeated R times per budget, it draws the curve of how many judged
topics buy how much trust.

Everything that does not depend on the sample is computed once: per rule and topic the counts of (predicted,
judged) pairs, and per rule, run and topic the relevant passages in the run's first k. A repeat then sums a few
arrays, so the whole curve takes well under a second on DL19."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from proctor.analyze.agreement import kappa_of_counts
from proctor.errors import UsageError
from proctor.evaluate.labels import Qrels
from proctor.evaluate.sources import exam_qrels_each
from proctor.records import GradeSet
from proctor.store import Store

LOW, HIGH = 10, 90
"""The percentiles over repeats that `kappa_low` and `kappa_high` report."""
FIXED_TAUS, FIXED_MS = (1, 3, 4, 5), (1, 2, 5)
"""The fixed rules compared with: those of `proctor agreement`'s default table (merges >=1, >=3, >=4, =5 at
m = 1, 2, 5), which holds 004's lenient (>=1) and strict (>=4) rules at m = 2."""


@dataclass
class Pool:
    """What calibration works on: judged and labelled (query, passage) pairs, and the runs' first k."""

    topics: list[str]
    rules: list[tuple[int, int]]
    """(tau, m) of every candidate rule, m ascending then tau ascending (ties go to the first)."""
    topic: np.ndarray
    """(pairs,) topic index of each judged and labelled pair."""
    predicted: np.ndarray
    """(rules, pairs) bool: the rule's label says relevant."""
    human: np.ndarray
    """(pairs,) bool: the judgment says relevant."""
    counts: np.ndarray
    """(rules, topics, 4): pairs with (predicted, judged) = (0,0), (0,1), (1,0), (1,1) per rule and topic."""
    runs: list[str]
    hits: np.ndarray
    """(rules, runs, topics): passages relevant by the rule among the run's first k."""
    human_hits: np.ndarray
    """(runs, topics): passages judged relevant among the run's first k."""
    answered: np.ndarray
    """(runs, topics) bool: the run has a ranking for the topic."""
    depth: int


def build_pool(store: Store, grade_set: GradeSet, judgments: Qrels, judged_relevant: int,
               ranked: dict[str, dict[str, list[str]]], depth: int) -> Pool:
    """Labels of every candidate rule (the shared label code, `exam_qrels_each`) against the judgments."""
    most = max((n for n in _questions_per_passage(store, grade_set)), default=0)
    if most == 0:
        raise UsageError(f"grade set {grade_set.id} has no usable grades to make labels from")
    ms = list(range(1, most + 1))
    labels = exam_qrels_each(store, grade_set, ms)
    top = max((g for per in labels[1].values() for g in per.values()), default=0)
    if top < 1:
        raise UsageError(f"grade set {grade_set.id}: every label is 0, so no rule can call a passage relevant")
    rules = [(tau, m) for m in ms for tau in range(1, top + 1)]
    topics = sorted(set(judgments) & set(labels[1]))
    if len(topics) < 2:
        raise UsageError(f"grade set {grade_set.id} and the judgments share {len(topics)} topic(s); calibration "
                         "needs at least two (one to learn the rule on, one to test it)")
    pairs = [(t, p) for t in topics for p in sorted(judgments[t]) if p in labels[1][t]]
    index = {t: i for i, t in enumerate(topics)}
    topic = np.array([index[t] for t, _ in pairs], dtype=np.int64)
    human = np.array([judgments[t][p] >= judged_relevant for t, p in pairs])
    grid = {m: np.array([labels[m].get(t, {}).get(p, 0) for t, p in pairs]) for m in ms}
    predicted = np.stack([grid[m] >= tau for tau, m in rules]) if pairs else np.zeros((len(rules), 0), bool)
    cells = 2 * predicted.astype(np.int64) + human.astype(np.int64)  # (rules, pairs) in 0..3
    flat = (np.arange(len(rules))[:, None] * len(topics) + topic[None, :]) * 4 + cells
    counts = np.bincount(flat.ravel(), minlength=len(rules) * len(topics) * 4).reshape(len(rules), len(topics), 4)
    runs = sorted(ranked)
    hits, human_hits, answered = _run_hits(topics, runs, ranked, labels, rules, judgments, judged_relevant, depth)
    return Pool(topics, rules, topic, predicted, human, counts, runs, hits, human_hits, answered, depth)


def _questions_per_passage(store: Store, grade_set: GradeSet):
    """Usable grades of each (query, passage) of the grade set's label step."""
    key, n = None, 0
    for qid, pid, grade, count in store.tallies.label_histogram(grade_set.id, grade_set.step):
        if (qid, pid) != key:
            if key is not None:
                yield n
            key, n = (qid, pid), 0
        n += count if grade is not None else 0
    if key is not None:
        yield n


def _run_hits(topics: list[str], runs: list[str], ranked: dict[str, dict[str, list[str]]],
              labels: dict[int, Qrels], rules: list[tuple[int, int]], judgments: Qrels, judged_relevant: int,
              depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per rule, run and topic the rule-relevant passages in the first `depth`; the same for the judgments; and
    which runs answered which topics. A passage without label (or judgment) counts as not relevant."""
    universe: dict[tuple[str, str], int] = {}
    slots = np.full((len(runs), len(topics), depth), -1, dtype=np.int64)
    answered = np.zeros((len(runs), len(topics)), dtype=bool)
    for s, run in enumerate(runs):
        for t, qid in enumerate(topics):
            ranking = ranked[run].get(qid)
            if ranking is None:
                continue
            answered[s, t] = True
            for k, pid in enumerate(ranking[:depth]):
                slots[s, t, k] = universe.setdefault((qid, pid), len(universe))
    keys = list(universe) + [("", "")]  # the last column: an empty slot, relevant to no one
    grid = {m: np.array([labels[m].get(q, {}).get(p, 0) for q, p in keys]) for m in {m for _, m in rules}}
    relevant = np.stack([grid[m] >= tau for tau, m in rules]) if rules else np.zeros((0, len(keys)), bool)
    relevant[:, -1] = False
    judged = np.array([judgments.get(q, {}).get(p, 0) >= judged_relevant for q, p in keys])
    judged[-1] = False
    hits = relevant[:, slots].sum(axis=-1)
    return hits, judged[slots].sum(axis=-1), answered


def agreement_by_counts(counts: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each row of summed (0,0), (0,1), (1,0), (1,1) counts (the shared `kappa_of_counts`, once
    per distinct row: rules often label a sample alike)."""
    pairs = ((0, 0), (0, 1), (1, 0), (1, 1))
    if not len(counts):
        return np.zeros(0)
    distinct, where = np.unique(counts, axis=0, return_inverse=True)
    kappas = np.array([kappa_of_counts(Counter({pair: int(n) for pair, n in zip(pairs, row, strict=True) if n}))
                       for row in distinct])
    return kappas[where.reshape(-1)]


def choose(pool: Pool, sample: np.ndarray) -> int | str:
    """The rule that agrees best with the judgments of the sampled topics, or why none can be chosen there
    (undecided): when the judgments there do not vary (no sampled pair judged relevant, or none judged not
    relevant) Cohen's kappa is 0 or undefined for every rule, so it cannot tell one rule from another."""
    summed = pool.counts[:, sample].sum(axis=1)  # (rules, 4): (0,0), (0,1), (1,0), (1,1)
    reason = undecided(summed)
    if reason is not None:
        return reason
    return int(np.nanargmax(agreement_by_counts(summed)))  # the judgments vary: every rule's kappa is defined


def undecided(summed: np.ndarray) -> str | None:
    """Why no rule can be chosen from these summed counts (one row per rule), or None when one can."""
    judged = summed[0] if len(summed) else np.zeros(4, np.int64)  # the judgments are the same whatever the rule
    relevant, pairs = int(judged[1] + judged[3]), int(judged.sum())
    if pairs == 0:
        return "no judged pair with a label on the sampled topics"
    if relevant == 0:
        return "no sampled pair is judged relevant"
    if relevant == pairs:
        return "every sampled pair is judged relevant"
    return None


def held_out(pool: Pool, rule: int, held: np.ndarray) -> dict[str, float]:
    """Held-out Cohen's kappa (scikit-learn), Krippendorff's alpha and the leaderboard's Kendall tau of a rule."""
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    mask = np.isin(pool.topic, np.flatnonzero(held))
    predicted, human = pool.predicted[rule, mask].astype(int), pool.human[mask].astype(int)
    varied = len(np.unique(np.concatenate([predicted, human]))) > 1  # else both are undefined
    kappa = float(cohen_kappa_score(predicted, human)) if varied else float("nan")
    alpha = (float(krippendorff.alpha(reliability_data=np.vstack([predicted, human]).astype(float),
                                      level_of_measurement="nominal")) if varied else float("nan"))
    return {"kappa": kappa, "alpha": alpha, "tau": leaderboard_tau(pool, rule, held), "pairs": int(mask.sum())}


def leaderboard_tau(pool: Pool, rule: int, held: np.ndarray) -> float:
    """Kendall's tau-b of the held-out P@k leaderboard by the rule's labels with the one by the judgments (mean
    over the topics each run answered, as `leaderboard --missing skip`)."""
    from scipy.stats import kendalltau

    scores = system_scores(pool, rule, held)
    if scores is None:
        return float("nan")
    return float(kendalltau(scores[0], scores[1], variant="b").statistic)


def system_scores(pool: Pool, rule: int, held: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]] | None:
    """(predicted, human, systems) P@k of the runs that answered a held-out topic; None with fewer than 2."""
    answered = pool.answered[:, held]
    n = answered.sum(axis=1)
    keep = n > 0
    if keep.sum() < 2:
        return None
    predicted = (pool.hits[rule][:, held] * answered).sum(axis=1)[keep] / pool.depth / n[keep]
    human = (pool.human_hits[:, held] * answered).sum(axis=1)[keep] / pool.depth / n[keep]
    return predicted, human, [r for r, k in zip(pool.runs, keep, strict=True) if k]


def fixed(pool: Pool) -> list[int]:
    """The candidate rules that are fixed rules (`FIXED_TAUS` x `FIXED_MS`), best first by kappa on all topics."""
    kappas = agreement_by_counts(pool.counts.sum(axis=1))
    chosen = [r for r, (tau, m) in enumerate(pool.rules) if tau in FIXED_TAUS and m in FIXED_MS]
    return sorted(chosen, key=lambda r: (-np.nan_to_num(kappas[r], nan=-2.0), r))


def curve(pool: Pool, budgets: Sequence[int], repeats: int, seed: int) -> tuple[list[dict], list[dict]]:
    """One point per budget (medians and percentiles over the repeats) and every repeat's details."""
    rng = np.random.default_rng(seed)
    rules = fixed(pool)
    points, details = [], []
    for budget in budgets:
        rows = []
        for repeat in range(repeats):
            sample = np.zeros(len(pool.topics), dtype=bool)
            sample[rng.choice(len(pool.topics), size=budget, replace=False)] = True
            rule = choose(pool, sample)
            row: dict[str, Any] = {"topics": budget, "repeat": repeat,
                                   "sampled": [pool.topics[i] for i in np.flatnonzero(sample)]}
            if isinstance(rule, str):
                row["undecided"] = rule
            else:
                row.update(rule_of(pool, rule), **held_out(pool, rule, ~sample))
                kappas = agreement_by_counts(pool.counts[rules][:, ~sample].sum(axis=1))
                row["fixed"] = {_name(pool, r): float(k) for r, k in zip(rules, kappas, strict=True)}
                if rules:
                    row["kappa_best_fixed"], row["kappa_worst_fixed"] = float(kappas[0]), float(kappas[-1])
            rows.append(row)
        details += rows
        points.append(_point(budget, [r for r in rows if "kappa" in r], len(rows)))
    return points, details


def _name(pool: Pool, rule: int) -> str:
    tau, m = pool.rules[rule]
    return f"tau={tau},m={m}"


def _point(budget: int, rows: list[dict], repeats: int) -> dict[str, Any]:
    """Medians and the 10th/90th percentiles over the repeats that could choose a rule."""
    def stat(key: str, q: float) -> float | None:
        values = np.array([r[key] for r in rows], dtype=float)
        values = values[~np.isnan(values)]
        return float(np.percentile(values, q)) if len(values) else None

    chosen = Counter(f"tau={r['min_grade']},m={r['min_questions']}" for r in rows)
    names = rows[0].get("fixed", {}) if rows else {}
    return {"topics": budget, "kappa_median": stat("kappa", 50), "kappa_low": stat("kappa", LOW),
            "kappa_high": stat("kappa", HIGH), "alpha_median": stat("alpha", 50), "tau_median": stat("tau", 50),
            "tau_low": stat("tau", LOW), "tau_high": stat("tau", HIGH),
            "kappa_best_fixed_median": stat("kappa_best_fixed", 50),
            "kappa_worst_fixed_median": stat("kappa_worst_fixed", 50),
            "fixed_kappa_median": {n: _median([r["fixed"][n] for r in rows]) for n in names},
            "repeats": repeats, "undecided": repeats - len(rows), "rules_chosen": dict(chosen.most_common())}


def _median(values: list[float]) -> float | None:
    """The median of the defined values (None when none is)."""
    defined = [v for v in values if not np.isnan(v)]
    return float(np.median(defined)) if defined else None


def rule_of(pool: Pool, rule: int) -> dict[str, int]:
    """A rule as JSON: `min_grade` (tau) and `min_questions` (m)."""
    tau, m = pool.rules[rule]
    return {"min_grade": tau, "min_questions": m}


def fixed_rules(pool: Pool) -> list[dict[str, Any]]:
    """The fixed rules' kappa on all judged topics (what `proctor agreement` reports for them), best first."""
    kappas = agreement_by_counts(pool.counts.sum(axis=1))
    return [{**rule_of(pool, r), "kappa_all_topics": None if np.isnan(kappas[r]) else float(kappas[r])}
            for r in fixed(pool)]
