"""Report plots (matplotlib, headless), each as a 300-dpi PNG with a PDF and an SVG beside it (vector files
for papers): official vs predicted scatter, renormalised leaderboards (000 Figure 2: systems on the x-axis
in official order), and the distribution of per-query correlations. Titles are wrapped, never cut."""

from __future__ import annotations

import os
import textwrap
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
        ax.set_xlabel("official rank (1 = best, on the right)" if official_kind == "ranks" else "official score")
        if official_kind == "ranks":
            ax.invert_xaxis()
            ax.xaxis.get_major_locator().set_params(integer=True)
        ax.set_ylabel("predicted score")
        ax.set_title(_wrap(label, 45), fontsize=9)
        ax.grid(alpha=0.3)
    fig.suptitle(_wrap(title, 40 * len(predicted) + 30), fontsize=10)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def renormalised(path: Path, official: dict[str, float], boards: dict[str, dict[str, float]], title: str,
                 official_kind: str = "scores") -> None:
    """Every leaderboard min-max normalised to [0, 1], systems in official order on the x-axis."""
    plt = _pyplot()
    systems = sorted(official, key=lambda s: -official[s])
    fig, ax = plt.subplots(figsize=(max(8, len(systems) * 0.28), 4.5))

    def norm(scores: dict[str, float]) -> list[float | None]:
        values = [scores[s] for s in systems if s in scores]
        lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
        span = (hi - lo) or 1.0
        return [(scores[s] - lo) / span if s in scores else None for s in systems]

    ax.plot(range(len(systems)), norm(official), marker="o", color="black", linewidth=2,
            label="official (ranks reversed: best = 1)" if official_kind == "ranks" else "official")
    for label, scores in boards.items():
        ys = norm(scores)
        ax.plot([i for i, y in enumerate(ys) if y is not None], [y for y in ys if y is not None], marker=".",
                label=label, alpha=0.8)
    ax.set_xticks(range(len(systems)))
    ax.set_xticklabels(systems, rotation=90, fontsize=7)
    ax.set_xlabel("system, in official order (best first)")
    ax.set_ylabel("score, min-max normalised per leaderboard")
    ax.set_title(_wrap(title, 100), fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def distribution(path: Path, values: list[float], title: str, xlabel: str) -> None:
    """Histogram of per-query correlations."""
    fig = distribution_figure(values, title, xlabel)
    _save(fig, path)
    _pyplot().close(fig)


def distribution_figure(values: list[float], title: str, xlabel: str):
    """The histogram's figure: per-query values on x, a count of queries (whole numbers) on y."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.hist(values, bins=20, range=(-1, 1), color="#2ca02c", edgecolor="white")
    if values:
        mean = sum(values) / len(values)
        ax.axvline(mean, color="black", linestyle="--", label=f"mean {mean:.3f} ({len(values)} queries)")
        ax.legend(fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("queries")
    ax.yaxis.get_major_locator().set_params(integer=True)  # a count: no "1.25 queries"
    ax.set_title(_wrap(title, 60), fontsize=10)
    fig.tight_layout()
    return fig


FORMATS = ("png", "pdf", "svg")
"""Every plot in every one of these (the PNG at 300 dpi); the HTML page embeds the SVG."""


def vector_files(path: Path) -> list[Path]:
    """The PDF and SVG written beside a plot's PNG."""
    return [path.with_suffix(f".{kind}") for kind in FORMATS[1:]]


def _save(fig, path: Path) -> None:
    """Save as PNG (300 dpi), PDF and SVG, each atomically (never through a symlink), titles never cut."""
    import matplotlib

    targets = [(path, "png", 300), *((p, p.suffix[1:], None) for p in vector_files(path))]
    for target, kind, dpi in targets:
        tmp = temporary_path(target)
        try:
            with matplotlib.rc_context({"svg.hashsalt": "proctor"}):  # SVG element ids from the content, not random
                fig.savefig(tmp, dpi=dpi, format=kind, bbox_inches="tight", metadata=_metadata(kind))
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)


def _metadata(kind: str) -> dict[str, str | None]:
    """No creation dates in vector files, so the same data gives the same bytes."""
    if kind == "pdf":
        return {"CreationDate": None}
    if kind == "svg":
        return {"Date": None}
    return {}


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text


def intervals(path: Path, rows: list[tuple[str, float, float, float]], title: str) -> None:
    """Systems best first on the x-axis, each score a dot with its bootstrap interval as an error bar."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(8, len(rows) * 0.28), 4.5))
    xs = list(range(len(rows)))
    scores = [r[1] for r in rows]
    below = [max(0.0, r[1] - r[2]) for r in rows]
    above = [max(0.0, r[3] - r[1]) for r in rows]
    ax.errorbar(xs, scores, yerr=[below, above], fmt="o", markersize=4, color="#1f77b4", ecolor="#7f7f7f",
                capsize=2, linewidth=1)
    ax.set_xticks(xs)
    ax.set_xticklabels([r[0] for r in rows], rotation=90, fontsize=7)
    ax.set_xlabel("system, best first")
    ax.set_ylabel("score (dot) and bootstrap interval (bar)")
    ax.set_title(_wrap(title, 100), fontsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
