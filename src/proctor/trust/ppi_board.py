"""The prediction-powered leaderboard: which topics the humans judged (drawn or named), every system's estimate
with its interval beside the judge-only and human-only scores, rank intervals, and the sentence that says how it
was made; as JSON, TSV and Markdown."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from proctor.errors import UsageError
from proctor.markdown import escape
from proctor.trust.ppi import TUNE_FROM, Estimate, estimate, rank_intervals

PerTopic = Mapping[str, Mapping[str, float]]
"""{system: {topic: score}}."""

COLUMNS = ("ppi", "ppi_low", "ppi_high", "ppi_weight", "judge", "human", "human_low", "human_high", "rank_low",
           "rank_high")
"""The columns every format carries after `system score stderr n_queries measure labels`."""


def choose_topics(available: Sequence[str], wanted: int | Sequence[str] | None, seed: int) -> list[str]:
    """The judged topics: all `available` ones (None), `wanted` drawn at random (seeded, without replacement,
    Python's `random.Random(seed).sample` of the sorted topics), or the named ones, each checked."""
    pool = sorted(available)
    if wanted is None:
        chosen = pool
    elif isinstance(wanted, int):
        if wanted > len(pool):
            raise UsageError(f"{{human_topics}} {wanted}: only {len(pool)} topics have human judgments and judge "
                             "scores", params=("human_topics",))
        chosen = sorted(random.Random(seed).sample(pool, wanted))
    else:
        missing = [t for t in dict.fromkeys(wanted) if t not in set(pool)]
        if missing:
            raise UsageError(f"{{human_topics}}: no human judgments (or no judge scores) for topic(s) "
                             f"{', '.join(missing)}", params=("human_topics",))
        chosen = sorted(dict.fromkeys(wanted))
    if len(chosen) < 2:
        raise UsageError(f"{{human_topics}}: {len(chosen)} judged topic(s); a prediction-powered interval needs at "
                         "least 2 (its spread is estimated from them)", params=("human_topics",))
    return chosen


def parse_topics(text: str | int | Sequence[str] | None) -> int | list[str] | None:
    """`--human-topics`: a number of topics to draw, or topic ids separated by commas."""
    if text is None or isinstance(text, int):
        return text
    if not isinstance(text, str):
        return list(text)
    if text.strip().isdigit():
        return int(text)
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise UsageError(f"{{human_topics}} {text!r}: give a number of topics or topic ids such as 19335,47923",
                         params=("human_topics",))
    return names


def estimates(judge: PerTopic, human: PerTopic, judged: Sequence[str], confidence: float
              ) -> tuple[dict[str, Estimate], list[str]]:
    """Every system's estimate (systems with fewer than 2 judged topics are left out, and named)."""
    out, left_out = {}, []
    for system, per in judge.items():
        scored = {t: human[system][t] for t in judged if t in per and t in human.get(system, {})}
        if len(scored) < 2:
            left_out.append(system)
            continue
        out[system] = estimate(per, scored, confidence)
    return out, sorted(left_out)


def board(judge: PerTopic, human: PerTopic, judged: Sequence[str], confidence: float,
          description: Mapping[str, Any]) -> dict[str, Any]:
    """The leaderboard as the JSON object `leaderboard --human-qrels --format json` prints (best ppi first)."""
    found, left_out = estimates(judge, human, judged, confidence)
    ranks = rank_intervals(found, confidence)
    order = sorted(found, key=lambda s: (-found[s].ppi, s))
    systems = [_row(s, found[s], ranks[s]) for s in order]
    topics = sorted({t for per in judge.values() for t in per})
    notes = [f"left out, fewer than 2 judged topics scored: {', '.join(left_out)}"] if left_out else []
    return {**description, "human_topics": list(judged), "n_judged": len(judged), "n_topics": len(topics),
            "confidence": confidence, "method": method(len(judged), len(topics), confidence),
            "notes": notes, "systems": systems}


def _row(system: str, e: Estimate, ranks: tuple[int, int]) -> dict[str, Any]:
    return {"system": system, "score": e.ppi, "stderr": e.ppi_stderr, "n_queries": e.n_topics, "ppi": e.ppi,
            "ppi_low": e.ppi_low, "ppi_high": e.ppi_high, "ppi_weight": e.ppi_weight, "judge": e.judge,
            "human": e.human, "human_low": e.human_low, "human_high": e.human_high, "n_judged": e.n_judged,
            "rank_low": ranks[0], "rank_high": ranks[1]}


def method(n: int | None, total: int, confidence: float) -> str:
    """How the estimates were made, in one paragraph (`n` None: any number of judged topics)."""
    tuned = n is not None and n >= TUNE_FROM
    weight = ("the weight on the judge fitted per system (PPI++: covariance of human and judge scores on the "
              "judged topics over the judge's variance on all topics, clipped to [0, 1]; t quantile with n-2 "
              "degrees of freedom)" if tuned else
              f"the weight on the judge fixed at 1 (classic PPI: fewer than {TUNE_FROM} judged topics, too few to "
              "fit it without losing coverage; t quantile with n-1 degrees of freedom)")
    n = n if n is not None else "n"  # type: ignore[assignment]
    return (f"prediction-powered inference (Angelopoulos et al. 2023; PPI++ arXiv 2311.01453): ppi = weight * "
            f"mean over all {total} topics of the judge's per-topic scores + mean over the {n} human-judged topics "
            f"of (human - weight * judge); {weight}; {confidence:g} interval with the finite-population correction "
            f"(1 - {n}/{total}) for the humans' mean over these {total} topics (Cochran 1977, ch. 7), assuming the "
            "judged topics were drawn at random from them. human: mean of the humans' per-topic scores on the "
            "judged topics, t interval with the same correction. judge: the judge-only score on all topics. Rank "
            "intervals: pairwise intervals of the difference of two systems' estimates (paired on the judged "
            "topics, each pair at the same confidence, not simultaneous)")


def tsv(boards: Sequence[Mapping[str, Any]]) -> str:
    """`system score stderr n_queries measure labels` then the prediction-powered columns, one row per system."""
    rows = ["\t".join(("system", "score", "stderr", "n_queries", "measure", "labels", *COLUMNS))]
    for b in boards:
        for s in b["systems"]:
            rows.append("\t".join([s["system"], _num(s["score"]), _num(s["stderr"]), str(s["n_queries"]),
                                   str(b.get("measure_id")), str(b.get("labels_id")),
                                   *(_num(s[c]) if isinstance(s[c], float) else str(s[c]) for c in COLUMNS)]))
    return "\n".join(rows) + "\n"


def markdown(boards: Sequence[Mapping[str, Any]]) -> str:
    """A caption that says what the estimates rest on, then one table per leaderboard."""
    out = []
    for b in boards:
        lines = [f"**Prediction-powered leaderboard** — {escape(str(b.get('measure_id')))}, judge "
                 f"{escape(str(b.get('labels_id')))}, humans: {escape(str(b.get('human_qrels')))}; "
                 f"{b['n_judged']} of {b['n_topics']} topics judged by humans "
                 f"({escape(', '.join(b['human_topics']))}), {b['confidence']:g} intervals", "",
                 f"> {escape(b['method'])}", ""]
        lines += [f"> {escape(n)}" for n in b["notes"]] + ([""] if b["notes"] else [])
        lines += ["| rank | system | " + " | ".join(COLUMNS) + " |", "|---:|---|" + "---:|" * len(COLUMNS)]
        lines += [f"| {i} | {escape(s['system'])} | " + " | ".join(
            _num(s[c]) if isinstance(s[c], float) else str(s[c]) for c in COLUMNS) + " |"
            for i, s in enumerate(b["systems"], start=1)]
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def _num(value: float) -> str:
    return "nan" if math.isnan(value) else f"{value:.6f}"


def section_table(made: Mapping[str, Any]) -> tuple[str, list[str], list[list[object]]]:
    """A leaderboard as the caption, header and rows of a report table (`analyze`)."""
    caption = (f"{made.get('measure_id')} of grade set {made.get('labels_id')} corrected by {made.get('human_qrels')} "
               f"on {made['n_judged']} of {made['n_topics']} topics ({', '.join(made['human_topics'])}). "
               f"{made['method']}")
    header = ["rank", "system", "ppi", "interval", "weight", "judge", "human", "human interval", "ranks"]
    rows: list[list[object]] = [[str(i), s["system"], f"{s['ppi']:.4f}", f"[{s['ppi_low']:.4f}, {s['ppi_high']:.4f}]",
                                 f"{s['ppi_weight']:.2f}", f"{s['judge']:.4f}", f"{s['human']:.4f}",
                                 f"[{s['human_low']:.4f}, {s['human_high']:.4f}]", f"{s['rank_low']}–{s['rank_high']}"]
                                for i, s in enumerate(made["systems"], start=1)]
    return caption, header, rows


def rests_on(made: Mapping[str, Any]) -> str:
    """What a prediction-powered leaderboard's numbers rest on, in one paragraph (`analyze` shows it above the
    table): the judge's measure and threshold, which topics the humans judged and how they were chosen, the
    confidence and the estimator."""
    threshold = made.get("relevance_level")
    judge = f"{made.get('measure')} ({made.get('measure_id')}" + (
        f": label ≥ {threshold} counted relevant)" if threshold is not None else ")")
    drawn = f", drawn at random with seed {made.get('seed')}" if made.get("human_topics_drawn") else ""
    estimator = ("PPI++, the weight on the judge fitted per system" if made["n_judged"] >= TUNE_FROM else
                 "classic PPI, weight 1 on the judge")
    return (f"The judge's {judge}, grade set {made.get('labels_id')} ({made.get('judge_method')} / "
            f"{made.get('model')}), on all {made['n_topics']} topics, corrected by {made.get('human_judgments')} "
            f"(relevance ≥ {made.get('judged_relevant')} counted relevant) on {made['n_judged']} of "
            f"{made['n_topics']} topics{drawn}: {', '.join(made['human_topics'])}. {made['confidence'] * 100:g}% "
            f"intervals; {estimator}. ppi: the estimate of the humans' score on all {made['n_topics']} topics; "
            f"judge: the judge alone on all topics; human: the humans alone on the {made['n_judged']} judged "
            f"topics; ranks: {made['confidence'] * 100:g}% rank intervals (pairwise, not simultaneous). The table's "
            "caption says how.")
