"""Correlation of a leaderboard with the official one (`proctor correlate`): rank correlations with bootstrap
intervals, the pairs of systems ordered against the official order, and what they rest on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from proctor.api.results import JSON, Notice, Report
from proctor.errors import UsageError
from proctor.evaluate.coverage import DEFAULT_FLOOR, Floor
from proctor.evaluate.leaderboard import Leaderboard, measure_leaderboard
from proctor.evaluate.leaderboard_files import LeaderboardFile, read_leaderboard, read_official
from proctor.markdown import escape
from proctor.options.correlation import CorrelationOptions
from proctor.options.evaluation import EvaluationOptions
from proctor.store import Store


class Correlation(Report):
    """The statistics of `analyze.leaderboard_correlation` (Spearman, Kendall τ-b, τ_AP, ...) with the
    leaderboard, the official leaderboard, warnings, missing systems and discordant pairs: what `proctor correlate`
    prints as JSON."""

    formats: ClassVar[tuple[str, ...]] = ("json", "tsv", "md")

    @property
    def warnings(self) -> list[str]:
        """What the correlation rests on, when that is little (each a sentence)."""
        return self["warnings"]

    @property
    def only_in_leaderboard(self) -> list[str]:
        """Systems of the leaderboard that the official one lacks (left out of the correlation)."""
        return self["missing"]["only_in_leaderboard"]

    @property
    def only_in_official(self) -> list[str]:
        """Systems of the official leaderboard that the leaderboard lacks (left out of the correlation)."""
        return self["missing"]["only_in_official"]

    def spelled(self, names: Mapping[str, str]) -> Correlation:
        """The same correlation with the parameters its warnings name spelled by `names` (the CLI: its flags)."""
        return Correlation({**self, "warnings": [w.spelled(names) if isinstance(w, Notice) else w
                                                 for w in self.warnings]})

    def as_text(self, fmt: str) -> str:
        """TSV (one row of coefficients) or Markdown."""
        return _tsv(self) if fmt == "tsv" else _markdown(self)


def correlate(leaderboard: Leaderboard | str | Path, official: LeaderboardFile | str | Path | None = None,
              options: CorrelationOptions | None = None, *, store: Store | None = None, floor: Floor = DEFAULT_FLOOR,
              **settings: Any) -> Correlation:
    """Spearman, Kendall τ-b, τ_AP and the other statistics of `STATISTICS` of a leaderboard (in memory, or a
    file read for `options.measure` when it holds several) with the official leaderboard: `official` (a file,
    read for `options.official_measure`, or a `LeaderboardFile`), or one computed from `options.official_qrels`
    with `options.measure` over the runs of `options.runs` or of the store (`store`, open, or `options.store`,
    a path); with bootstrap intervals over queries, the pairs of systems ordered against the official order, and
    what it rests on (judged against `floor`): what `proctor correlate` prints as JSON. `settings` are
    `CorrelationOptions` fields replacing those of `options` (`correlate(board, "official.json", bootstrap=100)`).
    A warning says why there are no intervals when `bootstrap` was given (None: the default, and a warning only
    when the file was written for intervals)."""
    from proctor.analyze.leaderboard_correlation import NO_PER_QUERY, correlate_leaderboards, per_query_correlation

    chosen = replace(options or CorrelationOptions(), **settings)  # numbers and ties checked when built
    if isinstance(official, LeaderboardFile):
        reference, official_name = official, "(in memory)"
    else:
        reference = official_leaderboard(official, chosen, store)
        official_name = str(official) if official else f"{chosen.official_qrels} ({chosen.measure})"
    if isinstance(leaderboard, Leaderboard):
        coverage = {"coverage": leaderboard.coverage.as_dict()} if leaderboard.coverage is not None else {}
        predicted = LeaderboardFile(leaderboard.scores(), {e.system: e.per_query for e in leaderboard.entries},
                                    {**leaderboard.description, **coverage})
    else:
        predicted = read_leaderboard(leaderboard, chosen.measure)
    bootstrap = EvaluationOptions.bootstrap if chosen.bootstrap is None else chosen.bootstrap
    name = str(leaderboard) if not isinstance(leaderboard, Leaderboard) else "(in memory)"
    result = Correlation({"leaderboard": name, "leaderboard_made_by": predicted.description or None,
                          "official": official_name,
                          **correlate_leaderboards(predicted, reference, samples=bootstrap, seed=chosen.seed,
                                                   ties=chosen.ties, repeats=chosen.repeats, floor=floor)})
    if predicted.per_query and reference.per_query:
        result = result.replace(per_query=per_query_correlation(predicted.per_query, reference.per_query))
    reason = result["no_intervals_because"]
    if reason and (chosen.bootstrap or reason != NO_PER_QUERY):  # asked for, or the file was written for them
        asked = (f"{{bootstrap}} {chosen.bootstrap}" if chosen.bootstrap else
                 f"{{bootstrap}} (default {EvaluationOptions.bootstrap})")
        notice = Notice(f"{asked}: no confidence intervals, {name} {reason}", ("bootstrap",))
        result = result.replace(warnings=[*result.warnings, notice])
    return result


def official_leaderboard(official: str | Path | None, options: CorrelationOptions | None = None,
                         store: Store | str | Path | None = None) -> LeaderboardFile:
    """The official leaderboard: a file (`official`, read for `options.official_measure` when it holds several),
    or computed from judgments (`options.official_qrels`, a judgment >= `options.judged_relevant` relevant) with
    `options.measure` over the runs of `options.runs` (files) or of `store` (a store, or the path of one; default
    `options.store`)."""
    from proctor.evaluate.measures import parse_measure
    from proctor.io.runs import order_runs
    from proctor.io.trec import qrels_dict, read_qrels, read_runs

    options = options or CorrelationOptions()
    qrels_file, measure = options.official_qrels, options.measure
    if (official is None) == (qrels_file is None):
        raise UsageError("give exactly one of {official} FILE and {official_qrels} FILE",
                         params=("official", "official_qrels"))
    if official is not None:
        return read_official(official, options.official_measure)
    if not measure:
        raise UsageError("{official_qrels} needs {measure} M", params=("official_qrels", "measure"))
    spec = parse_measure(measure)
    store = store if store is not None else options.store
    if options.runs:
        ranked = order_runs(read_runs(list(options.runs)))
    elif isinstance(store, Store):
        ranked = order_runs(store.corpus.rankings())
    elif store is not None:
        opened = Store.open(store)
        try:
            ranked = order_runs(opened.corpus.rankings())
        finally:
            opened.close()
    else:
        raise UsageError("{official_qrels} needs the runs: {store} S or {runs} FILES",
                         params=("official_qrels", "store", "runs"))
    board = measure_leaderboard(ranked, qrels_dict(read_qrels(qrels_file)), spec, options.judged_relevant)
    return LeaderboardFile({e.system: e.score for e in board.entries},
                           {e.system: e.per_query for e in board.entries}, board.description)


def _tsv(result: Correlation) -> str:
    """One row of coefficients under a header."""
    ci = result.get("confidence_intervals") or {}
    fields = ["spearman", "kendall", "tau_ap", "tauap_b", "kendall@10", "n_systems"]
    header = fields + ["spearman_ci", "kendall_ci", "missing", "discordant_pairs", "queries"]
    missing = ",".join(result["missing"]["only_in_leaderboard"] + result["missing"]["only_in_official"])
    values = [_coefficient(result[f]) for f in fields[:-1]] + [str(result["n_systems"]),
                                                               _ci(ci, "spearman"), _ci(ci, "kendall"), missing,
                                                  str(len(result["discordant_pairs"])),
                                                  _fmt(result["coverage"]["queries"].get("scored"))]
    return "\t".join(header) + "\n" + "\t".join(values) + "\n"


def _markdown(result: Correlation) -> str:
    """The coefficients, missing systems, warnings and discordant pairs as Markdown."""
    ci = result.get("confidence_intervals") or {}
    lines = [f"**Correlation** of {escape(result['leaderboard'])} with {escape(result['official'])} "
             f"({escape(result['method'])})", "",
             "| Spearman | Kendall τ-b | τ_AP | tauap_b | kendall@10 | systems |", "|---:|---:|---:|---:|---:|---:|",
             "| " + " | ".join(f"{_coefficient(result[name])} {_ci(ci, name)}".strip() if result[name] is not None
                               else "undefined" for name in ("spearman", "kendall", "tau_ap", "tauap_b", "kendall@10"))
             + f" | {result['n_systems']} |"]
    for side, systems in result["missing"].items():
        if systems:
            lines.append(f"\nMissing ({side.replace('_', ' ')}): {', '.join(escape(s) for s in systems)}")
    lines += [f"\n> **Warning:** {escape(w)}" for w in result["coverage"]["warnings"]]
    undefined = {name: n for name, n in ci.get("undefined_resamples", {}).items() if n}
    if undefined:
        lines.append(f"\nUndefined in some of the {ci['samples']} resamples ({escape(ci['rule'])}): "
                     + ", ".join(f"{escape(name)} {n}" for name, n in undefined.items()))
    return "\n".join(lines + discordant_lines(result["discordant_pairs"])) + "\n"


def discordant_lines(pairs: list[dict[str, JSON]]) -> list[str]:
    """Markdown: the pairs of systems the leaderboard orders against the official order."""
    if not pairs:
        return ["", "No pair of systems is ordered against the official order."]
    key = "official_rank" if "official_rank" in pairs[0] else "official_score"
    lines = ["", f"**{len(pairs)} pairs ordered against the official order**", "",
             f"| officially better | judged better | {key.replace('_', ' ')}s | judge's scores |",
             "|---|---|---|---|"]
    lines += [f"| {escape(p['official_better'])} | {escape(p['judge_better'])} | "
              f"{' / '.join(f'{v:g}' if key == 'official_rank' else _fmt(v) for v in p[key])} | "
              f"{' / '.join(_fmt(v) for v in p['judge_score'])} |" for p in pairs]
    return lines


def _fmt(value: object) -> str:
    return "nan" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)


def _coefficient(value: float | None) -> str:
    """A correlation as text: `undefined` where JSON has null (a side ranks every system the same)."""
    return "undefined" if value is None else f"{value:.4f}"


def _ci(intervals: dict, name: str) -> str:
    """A statistic's interval as text: `[low, high]`, `[undefined]` when too many resamples left it undefined
    (the warnings say how many), empty without a bootstrap."""
    interval = intervals.get(name)
    if interval:
        return f"[{interval[0]:.3f}, {interval[1]:.3f}]"
    return "[undefined]" if intervals.get("undefined_resamples", {}).get(name) else ""
