"""The validation of prediction-powered leaderboards (`proctor calibrate --ppi`): for each budget N, draw N judged
topics R times, make every system's estimate and interval exactly as `leaderboard --human-qrels` does, and
measure them against the humans' all-topic scores (the leaderboard with the human judgments on every topic they
judged): empirical coverage, median width, beside the human-only t interval on the same topics and the judge-only
error; and the Kendall tau of each leaderboard with the humans' all-topic one. As JSON (`curve_ppi`), a table and
a plot."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from proctor.analyze.correlation import kendall_tau_b as kendall
from proctor.trust.ppi_board import PerTopic, estimates

COLUMNS = ("topics", "coverage_ppi", "coverage_human", "width_ppi_median", "width_human_median",
           "width_ratio_median", "error_ppi_median", "error_human_median", "error_judge_median", "tau_ppi_median",
           "tau_human_median", "tau_judge", "weight_median", "coverage_ppi_worst_system")


def curve(judge: PerTopic, human: PerTopic, budgets: Sequence[int], repeats: int, seed: int,
          confidence: float) -> list[dict[str, Any]]:
    """One point per budget; `judge` and `human` hold every system's per-topic scores on the same topics (those
    the humans judged), so the target is each system's mean of `human`."""
    topics = sorted({t for per in human.values() for t in per})
    systems = sorted(s for s in judge if len(human.get(s, {})) >= 2)
    target = {s: float(np.mean(list(human[s].values()))) for s in systems}
    judge_score = {s: float(np.mean(list(judge[s].values()))) for s in systems}
    rng = np.random.default_rng(seed)
    order = [target[s] for s in systems]
    tau_judge = kendall([judge_score[s] for s in systems], order)
    error_judge = float(np.median([abs(judge_score[s] - target[s]) for s in systems])) if systems else math.nan
    points = []
    for budget in budgets:
        draws = [sorted(topics[i] for i in rng.choice(len(topics), size=budget, replace=False))
                 for _ in range(repeats)]
        points.append(_point(budget, draws, judge, human, systems, target, confidence) |
                      {"tau_judge": tau_judge, "error_judge_median": error_judge})
    return points


def _point(budget: int, draws: list[list[str]], judge: PerTopic, human: PerTopic, systems: list[str],
           target: Mapping[str, float], confidence: float) -> dict[str, Any]:
    """Coverage, widths, errors and taus over the draws of one budget (intervals need 2 judged topics)."""
    rows: dict[str, list[float]] = {k: [] for k in ("cov", "hcov", "w", "hw", "ratio", "err", "herr", "lam")}
    taus: dict[str, list[float]] = {"ppi": [], "human": []}
    covered = {s: [] for s in systems}
    for judged in draws:
        chosen = set(judged)
        if budget >= 2:
            found, _ = estimates({s: judge[s] for s in systems}, human, judged, confidence)
        else:  # one topic: the point estimates only (no spread to estimate an interval from)
            found = {}
        for s in systems:
            e = found.get(s)
            h = [human[s][t] for t in judged if t in human[s]]
            if e is None:
                if h and chosen <= set(judge[s]):
                    point = float(np.mean(list(judge[s].values()))) + float(np.mean([human[s][t] - judge[s][t]
                                                                                     for t in judged]))
                    rows["err"].append(abs(point - target[s]))
                    rows["herr"].append(abs(float(np.mean(h)) - target[s]))
                continue
            hit = e.ppi_low <= target[s] <= e.ppi_high
            covered[s].append(hit)
            rows["cov"].append(hit)
            rows["hcov"].append(e.human_low <= target[s] <= e.human_high)
            rows["w"].append(e.ppi_high - e.ppi_low)
            rows["hw"].append(e.human_high - e.human_low)
            if e.human_high > e.human_low:
                rows["ratio"].append((e.ppi_high - e.ppi_low) / (e.human_high - e.human_low))
            rows["err"].append(abs(e.ppi - target[s]))
            rows["herr"].append(abs(e.human - target[s]))
            rows["lam"].append(e.ppi_weight)
        if len(found) >= 2:
            ranked = sorted(found)
            truth = [target[s] for s in ranked]
            taus["ppi"].append(kendall([found[s].ppi for s in ranked], truth))
            taus["human"].append(kendall([found[s].human for s in ranked], truth))
    worst = [float(np.mean(v)) for v in covered.values() if v]
    return {"topics": budget, "repeats": len(draws), "coverage_ppi": _mean(rows["cov"]),
            "coverage_human": _mean(rows["hcov"]), "width_ppi_median": _median(rows["w"]),
            "width_human_median": _median(rows["hw"]), "width_ratio_median": _median(rows["ratio"]),
            "error_ppi_median": _median(rows["err"]), "error_human_median": _median(rows["herr"]),
            "tau_ppi_median": _median(taus["ppi"]), "tau_human_median": _median(taus["human"]),
            "weight_median": _median(rows["lam"]), "coverage_ppi_worst_system": min(worst) if worst else None}


def _mean(values: list) -> float | None:
    return float(np.mean(values)) if values else None


def _median(values: list[float]) -> float | None:
    defined = [v for v in values if not math.isnan(v)]
    return float(np.median(defined)) if defined else None


def _cell(value: Any) -> str:
    return "-" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)


def tsv(result: Mapping[str, Any]) -> str:
    """One line per budget."""
    lines = ["\t".join(COLUMNS)] + ["\t".join(_cell(p.get(c)) for c in COLUMNS) for p in result["curve_ppi"]]
    return "\n".join(lines) + "\n"


def markdown(result: Mapping[str, Any]) -> str:
    """The curve as a table under a caption that says what it rests on."""
    g = result["grade_set"]
    caption = (f"Prediction-powered intervals of grade set {g['grade_set']} ({g['method']} / {g['model']}), "
               f"{result['measure_id']}, humans: {result['judgments']} (relevant: judgment >= "
               f"{result['judged_relevant']}); {result['n_topics']} topics, {result['systems']} systems, "
               f"{result['repeats']} draws per budget, seed {result['seed']}, nominal {result['confidence']:g}. "
               f"{result['method']}")
    header = "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS) + "\n"
    rows = "".join("| " + " | ".join(_cell(p.get(c)) for c in COLUMNS) + " |\n" for p in result["curve_ppi"])
    return caption + "\n\n" + header + rows


def plot(result: Mapping[str, Any], path: Path) -> None:
    """Coverage against the nominal level (left) and median widths (right) per budget, as a PNG (PDF and SVG
    beside it)."""
    from proctor.analyze.plots import _pyplot, _save

    plt = _pyplot()
    points = [p for p in result["curve_ppi"] if p["coverage_ppi"] is not None]
    xs = [p["topics"] for p in points]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    left.plot(xs, [p["coverage_ppi"] for p in points], "o-", color="#1f77b4", label="prediction-powered")
    left.plot(xs, [p["coverage_human"] for p in points], "s--", color="#555555", label="human-only t")
    left.axhline(result["confidence"], color="#d62728", lw=1, label=f"nominal {result['confidence']:g}")
    left.set_ylabel("empirical coverage (mean over systems)")
    left.set_ylim(0.5, 1.0)
    right.plot(xs, [p["width_ppi_median"] for p in points], "o-", color="#1f77b4", label="prediction-powered")
    right.plot(xs, [p["width_human_median"] for p in points], "s--", color="#555555", label="human-only t")
    right.plot(xs, [2 * p["error_judge_median"] for p in points], ":", color="#2ca02c",
               label="judge-only: 2 x median error")
    right.set_ylabel("median interval width (log scale)")
    right.set_yscale("log")
    for ax in (left, right):
        ax.set_xlabel("human-judged topics")
        ax.set_xticks(xs, [str(x) for x in xs])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"Prediction-powered {result['measure_id']} of {result['grade_set']['grade_set']} on "
                 f"{result['judgments']}: {result['repeats']} draws per budget", fontsize=10)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
