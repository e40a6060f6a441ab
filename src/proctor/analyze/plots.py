"""Report plots as PNG (matplotlib, headless): official vs predicted scatter, renormalised leaderboards
(000 Figure 2: systems on the x-axis in official order), and the distribution of per-query correlations."""

from __future__ import annotations

import os
from pathlib import Path

from proctor.outputs import temporary_path


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def scatter(path: Path, official: dict[str, float], predicted: dict[str, dict[str, float]], official_kind: str,
            title: str) -> None:
    """One panel per predicted leaderboard: official (rank or score) on x, predicted score on y."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(predicted), figsize=(5 * len(predicted), 4.2), squeeze=False)
    for ax, (label, scores) in zip(axes[0], predicted.items(), strict=True):
        systems = [s for s in scores if s in official]
        xs = [-official[s] if official_kind == "ranks" else official[s] for s in systems]
        ax.scatter(xs, [scores[s] for s in systems], s=18, color="#1f77b4")
        ax.set_xlabel("official rank" if official_kind == "ranks" else "official score")
        if official_kind == "ranks":
            ax.invert_xaxis()
        ax.set_ylabel("predicted score")
        ax.set_title(label, fontsize=9)
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def renormalised(path: Path, official: dict[str, float], boards: dict[str, dict[str, float]], title: str) -> None:
    """Every leaderboard min-max normalised to [0, 1], systems in official order on the x-axis."""
    plt = _pyplot()
    systems = sorted(official, key=lambda s: -official[s])
    fig, ax = plt.subplots(figsize=(max(8, len(systems) * 0.28), 4.5))

    def norm(scores: dict[str, float]) -> list[float | None]:
        values = [scores[s] for s in systems if s in scores]
        lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
        span = (hi - lo) or 1.0
        return [(scores[s] - lo) / span if s in scores else None for s in systems]

    ax.plot(range(len(systems)), norm(official), marker="o", color="black", label="official", linewidth=2)
    for label, scores in boards.items():
        ys = norm(scores)
        ax.plot([i for i, y in enumerate(ys) if y is not None], [y for y in ys if y is not None], marker=".",
                label=label, alpha=0.8)
    ax.set_xticks(range(len(systems)))
    ax.set_xticklabels(systems, rotation=90, fontsize=7)
    ax.set_ylabel("score, min-max normalised")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def distribution(path: Path, values: list[float], title: str, xlabel: str) -> None:
    """Histogram of per-query correlations."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.hist(values, bins=20, range=(-1, 1), color="#2ca02c", edgecolor="white")
    if values:
        mean = sum(values) / len(values)
        ax.axvline(mean, color="black", linestyle="--", label=f"mean {mean:.3f} ({len(values)} queries)")
        ax.legend(fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("queries")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def _save(fig, path: Path) -> None:
    """Save atomically next to the target (never through a symlink)."""
    tmp = temporary_path(path)
    try:
        fig.savefig(tmp, dpi=90, format="png")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
