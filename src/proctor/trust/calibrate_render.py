"""The calibration curve as a table (TSV, Markdown) and a plot (PNG): held-out kappa with its 10th-90th
percentile band against the number of judged topics, the best and worst fixed rules beside it, and the
leaderboard's Kendall tau."""

from __future__ import annotations

from pathlib import Path
from typing import Any

COLUMNS = ("topics", "kappa_median", "kappa_low", "kappa_high", "alpha_median", "tau_median", "tau_low", "tau_high",
           "kappa_best_fixed_median", "kappa_worst_fixed_median", "undecided")


def _cell(value: Any) -> str:
    return "-" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)


def tsv(result: dict[str, Any]) -> str:
    """One line per budget."""
    lines = ["\t".join(COLUMNS)] + ["\t".join(_cell(p[c]) for c in COLUMNS) for p in result["curve"]]
    return "\n".join(lines) + "\n"


def markdown(result: dict[str, Any]) -> str:
    """The table with a caption saying what it rests on."""
    g = result["grade_set"]
    best, worst = result["best_fixed"], result["worst_fixed"]
    caption = (f"Calibration of grade set {g['grade_set']} ({g['method']} / {g['model']}) on {result['judgments']} "
               f"(relevant: judgment >= {result['judged_relevant']}); {result['topics']} topics, "
               f"{result['judged_labelled_pairs']} judged pairs, {result['runs']} runs, {result['repeats']} repeats, "
               f"seed {result['seed']}, leaderboard {result['measure']}.")
    if best and worst:
        caption += (f" Fixed rules on all topics: best tau={best['min_grade']}, m={best['min_questions']} "
                    f"(kappa {best['kappa_all_topics']:.4f}); worst tau={worst['min_grade']}, "
                    f"m={worst['min_questions']} (kappa {worst['kappa_all_topics']:.4f}).")
    header = "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS) + "\n"
    rows = "".join("| " + " | ".join(_cell(p[c]) for c in COLUMNS) + " |\n" for p in result["curve"])
    return caption + "\n\n" + header + rows


def plot(result: dict[str, Any], path: Path) -> None:
    """The curve as a PNG (with a PDF and an SVG beside it, as every report plot), each written atomically."""
    from proctor.analyze.plots import _pyplot, _save

    plt = _pyplot()
    points = [p for p in result["curve"] if p["kappa_median"] is not None]
    xs = [p["topics"] for p in points]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    left.fill_between(xs, [p["kappa_low"] for p in points], [p["kappa_high"] for p in points], alpha=0.25,
                      color="#1f77b4", label=f"calibrated, {_band()}")
    left.plot(xs, [p["kappa_median"] for p in points], "o-", color="#1f77b4", label="calibrated, median")
    for key, style, label in (("kappa_best_fixed_median", "--", "best fixed rule"),
                              ("kappa_worst_fixed_median", ":", "worst fixed rule")):
        left.plot(xs, [p[key] for p in points], style, color="#555555", label=label)
    left.set_xlabel("judged topics used to choose the rule")
    left.set_ylabel("held-out Cohen's kappa")
    left.legend(fontsize=8)
    right.fill_between(xs, [p["tau_low"] for p in points], [p["tau_high"] for p in points], alpha=0.25,
                       color="#2ca02c")
    right.plot(xs, [p["tau_median"] for p in points], "o-", color="#2ca02c")
    right.set_xlabel("judged topics used to choose the rule")
    right.set_ylabel(f"Kendall tau, held-out {result['measure']} leaderboard")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xticks(xs, [str(x) for x in xs])
        ax.grid(alpha=0.3)
    g = result["grade_set"]
    fig.suptitle(f"Calibration of {g['grade_set']} ({g['model']}) on {result['judgments']}: "
                 f"{result['repeats']} repeats per budget", fontsize=10)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def _band() -> str:
    from proctor.trust.calibrate import HIGH, LOW

    return f"{LOW}th-{HIGH}th percentile"
