"""The rank correlation of a predicted leaderboard with the official one (`correlate_leaderboards`): align
systems (listing the ones that are in one only), correlate, bootstrap over queries, and correlate query by query.
(Not significance, which compares the systems of one leaderboard: `proctor.stats`.)"""

from __future__ import annotations

import math
from typing import Any

from proctor.analyze.correlation import (
    STATISTICS,
    TOP_K,
    bootstrap_intervals,
    correlate_scores,
    discordant_pairs,
    most_undefined,
    random_ties,
    resampling_problem,
)
from proctor.evaluate.coverage import DEFAULT_FLOOR, Floor, file_coverage
from proctor.evaluate.leaderboard_files import LeaderboardFile
from proctor.options.correlation import CorrelationOptions
from proctor.options.evaluation import EvaluationOptions


def correlate_leaderboards(
    predicted: LeaderboardFile, official: LeaderboardFile, *, samples: int = EvaluationOptions.bootstrap,
    seed: int = EvaluationOptions.seed, ties: str = CorrelationOptions.ties, repeats: int = CorrelationOptions.repeats,
    floor: Floor = DEFAULT_FLOOR,
) -> dict[str, Any]:
    """Spearman, Kendall τ-b and τ_AP over the systems in both, with bootstrap intervals when per-query
    scores are available, the pairs of systems ordered against the official order, the systems missing from
    either side, and what it rests on (`coverage`)."""
    common = sorted(set(predicted.scores) & set(official.scores))
    pred = [predicted.scores[s] for s in common]
    off = [official.scores[s] for s in common]
    corr = (random_ties(pred, off, repeats=repeats, seed=seed) if ties == "random" else correlate_scores(pred, off))
    result: dict[str, Any] = {
        "spearman": _clean(corr.spearman),
        "kendall": _clean(corr.kendall),
        "tau_ap": _clean(corr.tau_ap),
        **{name: _clean(STATISTICS[name](pred, off)) for name in ("tauap_b", f"kendall@{TOP_K}")},
        "n_systems": len(common),
        "missing": {
            "only_in_leaderboard": sorted(set(predicted.scores) - set(official.scores)),
            "only_in_official": sorted(set(official.scores) - set(predicted.scores)),
        },
        "official_kind": official.kind,
        "method": ("scipy semantics: scores ranked with average ranks" if ties == "average" else
                   f"ties among predicted scores broken at random, averaged over {repeats} repetitions (seed "
                   f"{seed}; 001 §4.1.1)") + "; Kendall tau-b; tau_AP top-weighted (Yilmaz et al. 2008), official "
                  f"ties count one half; tauap_b and kendall@{TOP_K} (tau-b over the official top {TOP_K}) as TREC "
                  "AutoJudge's autojudge-evaluate computes them",
        "ties": ties,
        "confidence_intervals": None,
        "no_intervals_because": None,
        "warnings": _warnings(len(common), corr),
        "discordant_pairs": _discordant(predicted, official, common),
    }
    coverage = file_coverage(predicted.description, predicted.per_query, len(common), floor)
    result["coverage"] = coverage.as_dict()
    result["warnings"] += [f"coverage: {w}" for w in coverage.warnings]
    result["confidence_intervals"], result["no_intervals_because"], notes = _intervals(
        predicted, official, common, samples, seed)
    result["warnings"] += notes
    return result


NO_PER_QUERY = "has no per-query values (write it with `proctor leaderboard ... --per-query`)"
"""Why a leaderboard file without per-query values gets no bootstrap intervals."""


def _intervals(predicted: LeaderboardFile, official: LeaderboardFile, common: list[str], samples: int, seed: int
               ) -> tuple[dict[str, Any] | None, str | None, list[str]]:
    """`confidence_intervals` (None when there are none), why there are none (None when there are, or none were
    asked for), and warnings about the resamples in which a statistic was undefined."""
    if samples <= 0:
        return None, None, []
    if not predicted.per_query:
        return None, NO_PER_QUERY, []
    pred_pq = {s: predicted.per_query[s] for s in common if s in predicted.per_query}
    if official.per_query:
        off_source: dict = {s: official.per_query[s] for s in pred_pq if s in official.per_query}
    else:
        off_source = {s: official.scores[s] for s in pred_pq}
    pred_pq = {s: v for s, v in pred_pq.items() if s in off_source}
    problem = resampling_problem(len(pred_pq), len({q for per in pred_pq.values() for q in per}))
    if problem is not None:
        return None, problem, []
    boot = bootstrap_intervals(pred_pq, off_source, samples=samples, seed=seed)
    share = most_undefined(boot.level)
    groups: dict[tuple[int, bool], list[str]] = {}
    for name, n in boot.undefined.items():
        if n:
            groups.setdefault((n, boot.intervals[name] is None), []).append(name)
    notes = [f"bootstrap: {', '.join(names)} undefined (a side ranks all the systems compared the same, or a "
             f"system has none of the drawn queries) in {n} of {samples} resamples"
             + (f", more than {share:.1%}: no interval" if dropped else ", left out of the interval")
             for (n, dropped), names in groups.items()]
    return {"level": boot.level, "samples": samples, "seed": seed, "resampled": "queries",
            "undefined_resamples": boot.undefined,
            "rule": f"a statistic undefined in a resample is left out of its interval; more than {share:.1%} of the "
                    "resamples undefined: no interval (null)",
            **{k: None if v is None else list(v) for k, v in boot.intervals.items()}}, None, notes


def _discordant(predicted: LeaderboardFile, official: LeaderboardFile, common: list[str]) -> list[dict[str, Any]]:
    """`discordant_pairs`, with the official side as ranks when the official file gave ranks."""
    pairs = discordant_pairs({s: predicted.scores[s] for s in common}, {s: official.scores[s] for s in common})
    key = "official_rank" if official.kind == "ranks" else "official_score"
    for pair in pairs:
        values = pair.pop("official")
        pair[key] = [-v for v in values] if official.kind == "ranks" else values  # type: ignore[union-attr]
        pair["judge_score"] = pair.pop("judge")
    return pairs


def per_query_correlation(
    predicted: dict[str, dict[str, float]], official: dict[str, dict[str, float]]
) -> dict[str, dict[str, Any]]:
    """For every query (ids matched exactly), the correlation of the systems' scores on that query alone."""
    queries = sorted({q for per in predicted.values() for q in per} & {q for per in official.values() for q in per})
    out = {}
    for qid in queries:
        systems = sorted(s for s in predicted if qid in predicted[s] and qid in official.get(s, {}))
        corr = correlate_scores([predicted[s][qid] for s in systems], [official[s][qid] for s in systems])
        out[qid] = {"spearman": _clean(corr.spearman), "kendall": _clean(corr.kendall), "n_systems": len(systems)}
    return out


def _warnings(n: int, corr) -> list[str]:
    out = []
    if n < 3:
        out.append(f"only {n} systems in both leaderboards: a rank correlation of {n} systems is meaningless")
    if n >= 2 and math.isnan(corr.kendall):
        out.append("one side ranks every system the same: the correlations are undefined (null)")
    return out


def _clean(value: float) -> float | None:
    return None if math.isnan(value) else value
