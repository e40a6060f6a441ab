"""Correlation of a leaderboard with the official one (`proctor correlate`): rank correlations with bootstrap
intervals, the pairs of systems ordered against the official order, and what they rest on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from proctor.api.modes import Ties
from proctor.api.results import JSON, Notice, Report
from proctor.errors import UsageError
from proctor.evaluate.coverage import DEFAULT_FLOOR, Floor
from proctor.evaluate.leaderboard import Leaderboard, measure_leaderboard
from proctor.evaluate.leaderboard_files import LeaderboardFile, read_leaderboard, read_official
from proctor.markdown import escape
from proctor.options.numeric import check_numbers
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


def correlate(board: Leaderboard | str | Path, official: LeaderboardFile | str | Path, *, bootstrap: int = 1000,
              seed: int = 0, ties: Ties = "average", repeats: int = 10, official_name: str | None = None,
              measure: str | None = None, floor: Floor = DEFAULT_FLOOR) -> Correlation:
    """Spearman, Kendall τ-b, τ_AP and the other statistics of `STATISTICS` of a leaderboard (or a leaderboard
    file, read for `measure` when it holds several) with the official leaderboard (a file, or a
    `LeaderboardFile`), with bootstrap intervals over queries, the pairs of systems ordered against the official
    order, and what it rests on (judged against `floor`); what `proctor correlate` prints as JSON."""
    from proctor.analyze.leaderboard_correlation import correlate_leaderboards, per_query_correlation

    check_numbers({"bootstrap": bootstrap, "repeats": repeats})
    if isinstance(board, Leaderboard):
        coverage = {"coverage": board.coverage.as_dict()} if board.coverage is not None else {}
        predicted = LeaderboardFile(board.scores(), {e.system: e.per_query for e in board.entries},
                                    {**board.description, **coverage})
    else:
        predicted = read_leaderboard(board, measure)
    reference = official if isinstance(official, LeaderboardFile) else read_official(official)
    result = Correlation({"leaderboard": str(board) if not isinstance(board, Leaderboard) else "(in memory)",
                          "leaderboard_made_by": predicted.description or None,
                          "official": official_name or str(official),
                          **correlate_leaderboards(predicted, reference, samples=bootstrap, seed=seed, ties=ties,
                                                   repeats=repeats, floor=floor)})
    if predicted.per_query and reference.per_query:
        result = result.replace(per_query=per_query_correlation(predicted.per_query, reference.per_query))
    return result


def official_leaderboard(*, official: str | Path | None = None, official_measure: str | None = None,
                         official_qrels: str | Path | None = None, measure: str | None = None,
                         judged_relevant: int = 1, store: Store | str | Path | None = None,
                         runs: Sequence[str] | None = None) -> LeaderboardFile:
    """The official leaderboard: a file (`official`, read for `official_measure` when it holds several), or
    computed from judgments (`official_qrels`) with `measure` over the runs of `runs` (files) or of `store` (a
    store, or the path of one)."""
    from proctor.evaluate.measures import parse_measure
    from proctor.io.runs import order_runs
    from proctor.io.trec import qrels_dict, read_qrels, read_runs

    if (official is None) == (official_qrels is None):
        raise UsageError("give exactly one of {official} FILE and {official_qrels} FILE",
                         params=("official", "official_qrels"))
    if official is not None:
        return read_official(official, official_measure)
    if not measure:
        raise UsageError("{official_qrels} needs {measure} M", params=("official_qrels", "measure"))
    spec = parse_measure(measure)
    if runs:
        ranked = order_runs(read_runs(list(runs)))
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
    board = measure_leaderboard(ranked, qrels_dict(read_qrels(official_qrels)), spec, judged_relevant)
    return LeaderboardFile({e.system: e.score for e in board.entries},
                           {e.system: e.per_query for e in board.entries}, board.description)


def correlation(leaderboard: str | Path, *, official: str | Path | None = None, official_measure: str | None = None,
                official_qrels: str | Path | None = None, measure: str | None = None, judged_relevant: int = 1,
                store: str | Path | None = None, runs: Sequence[str] | None = None, bootstrap: int | None = None,
                seed: int = 0, ties: Ties = "average", repeats: int = 10,
                floor: Floor = DEFAULT_FLOOR) -> Correlation:
    """`proctor correlate`: a leaderboard file against the official leaderboard (`official_leaderboard`'s
    parameters; the runs of the store at the path `store`), with `bootstrap` samples (default 1000; a warning
    saying why there are no intervals when asked for, or when the file has per-query values too few to
    resample)."""
    from proctor.analyze.leaderboard_correlation import NO_PER_QUERY

    reference = official_leaderboard(official=official, official_measure=official_measure,
                                     official_qrels=official_qrels, measure=measure, judged_relevant=judged_relevant,
                                     store=store, runs=runs)
    result = correlate(leaderboard, reference, bootstrap=1000 if bootstrap is None else bootstrap, seed=seed,
                       ties=ties, repeats=repeats, measure=measure, floor=floor,
                       official_name=str(official) if official else f"{official_qrels} ({measure})")
    reason = result["no_intervals_because"]
    if reason and (bootstrap or reason != NO_PER_QUERY):  # asked for, or the file was written for them
        asked = f"{{bootstrap}} {bootstrap}" if bootstrap else "{bootstrap} (default 1000)"
        notice = Notice(f"{asked}: no confidence intervals, {leaderboard} {reason}", ("bootstrap",))
        result = result.replace(warnings=[*result.warnings, notice])
    return result


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
