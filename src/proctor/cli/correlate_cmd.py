"""`proctor correlate LEADERBOARD --official OFFICIAL`: how well a leaderboard agrees with the official one."""

from __future__ import annotations

import argparse
import json

from proctor.cli.common import add_floor_options, add_format, emit, floor_of, int_in, note, readable_store
from proctor.errors import UsageError
from proctor.evaluate.leaderboard import measure_leaderboard
from proctor.evaluate.leaderboard_files import LeaderboardFile, read_official
from proctor.evaluate.measures import parse_measure
from proctor.io.runs import order_runs
from proctor.io.trec import qrels_dict, read_qrels, read_runs
from proctor.markdown import escape
from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import add_options
from proctor.papers import EXAM

DESCRIPTION = """\
Correlate a leaderboard with the official one: Spearman's rho and Kendall's tau-b exactly as scipy computes
them (scores ranked with average ranks), tau_AP (top-weighted), and TREC AutoJudge's tauap_b and kendall@10
(tau-b over the official top 10) as autojudge-evaluate computes them. Systems found in one leaderboard only
are listed under `missing`, never dropped silently.

LEADERBOARD: any format `proctor leaderboard` writes (tsv, json, md, trec/tot, ir-measures, jsonl; per-query
rows or JSON with --per-query enable bootstrap confidence intervals over queries and per-query correlation),
trec_eval's output (`-q` or not; several runs concatenated, each named by its `runid` line), or any
`system<TAB>score` TSV. A file holding several measures is read for the one --measure names.
OFFICIAL: --official FILE (JSON {run: rank}, ties and fractional ranks allowed, a TSV of scores, or any of the
leaderboard formats above, e.g. trec_eval's output of the official runs, with --official-measure M), or
--official-qrels FILE --measure M (the official leaderboard computed from judgments and the runs of
--store S or --runs)."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `correlate` command."""
    p = commands.add_parser("correlate", help="rank correlation of a leaderboard with the official one",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("leaderboard", metavar="LEADERBOARD", help="leaderboard file (TSV or JSON)")
    add_options(p, EvaluationOptions, "official")
    p.add_argument("--official-measure", metavar="M",
                   help="with --official: the measure read from the official file when it holds several "
                   "(e.g. trec_eval's output of the official runs)")
    p.add_argument("--official-qrels", metavar="FILE", help="compute the official leaderboard from these qrels")
    p.add_argument("--measure", help="the measure read from LEADERBOARD when it holds several (trec_eval or "
                   "ir_measures name); with --official-qrels also the measure computed, e.g. nDCG@10")
    p.add_argument("--judged-relevant", type=int_in(1), default=1, metavar="J",
                   help="with --official-qrels: relevance level of binary measures (default 1)")
    p.add_argument("--store", help="with --official-qrels: take the runs from this store")
    p.add_argument("--runs", nargs="+", metavar="DIR|FILE", help="with --official-qrels: take the runs from files")
    add_options(p, EvaluationOptions, "bootstrap", bootstrap=None)
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and of random tie-breaking (default 0)")
    p.add_argument("--ties", choices=("average", "random"), default="average",
                   help="tied predicted scores: average ranks as scipy (default), or broken at random and the "
                   f"correlations averaged over --repeats repetitions ({EXAM}, §4.1.1)")
    p.add_argument("--repeats", type=int_in(1), default=10, help="--ties random: repetitions (default 10)")
    add_format(p, ("json", "tsv", "md"), "json")
    add_floor_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Compare and print."""
    from proctor import api

    bootstrap = 1000 if args.bootstrap is None else args.bootstrap
    result = api.correlate(args.leaderboard, _official(args), bootstrap=bootstrap, seed=args.seed,
                           ties=args.ties, repeats=args.repeats, measure=args.measure,
                           official_name=args.official or f"{args.official_qrels} ({args.measure})",
                           floor=floor_of(args))
    if args.bootstrap and result["confidence_intervals"] is None:  # asked for, and nothing to resample
        result["warnings"].append(f"--bootstrap {args.bootstrap}: no confidence intervals, {args.leaderboard} has no "
                                  "per-query values (write it with `proctor leaderboard ... --per-query`)")
    for warning in result["warnings"]:
        note(f"warning: {warning}")
    missing = result["missing"]
    if missing["only_in_leaderboard"] or missing["only_in_official"]:
        note(f"systems in one leaderboard only (left out of the correlation): "
             f"leaderboard {missing['only_in_leaderboard']}, official {missing['only_in_official']}")
    emit(render(result, args.format), args.format)
    return 0


def _official(args: argparse.Namespace) -> LeaderboardFile:
    if bool(args.official) == bool(args.official_qrels):
        raise UsageError("give exactly one of --official FILE and --official-qrels FILE")
    if args.official:
        return read_official(args.official, args.official_measure)
    if not args.measure:
        raise UsageError("--official-qrels needs --measure M")
    spec = parse_measure(args.measure)
    if args.runs:
        runs = order_runs(read_runs(args.runs))
    elif args.store:
        with readable_store(args.store) as store:
            runs = order_runs(store.corpus.rankings())
    else:
        raise UsageError("--official-qrels needs the runs: --store S or --runs FILES")
    board = measure_leaderboard(runs, qrels_dict(read_qrels(args.official_qrels)), spec, args.judged_relevant)
    return LeaderboardFile({e.system: e.score for e in board.entries},
                           {e.system: e.per_query for e in board.entries}, board.description)


def render(result: dict, fmt: str) -> str:
    """JSON (everything), TSV (one row of coefficients), or Markdown."""
    if fmt == "json":
        return json.dumps(result, indent=2) + "\n"
    ci = result.get("confidence_intervals") or {}
    fields = ["spearman", "kendall", "tau_ap", "tauap_b", "kendall@10", "n_systems"]
    if fmt == "tsv":
        header = fields + ["spearman_ci", "kendall_ci", "missing", "discordant_pairs", "queries"]
        missing = ",".join(result["missing"]["only_in_leaderboard"] + result["missing"]["only_in_official"])
        values = [_fmt(result[f]) for f in fields] + [_ci(ci.get("spearman")), _ci(ci.get("kendall")), missing,
                                                      str(len(result["discordant_pairs"])),
                                                      _fmt(result["coverage"]["queries"].get("scored"))]
        return "\t".join(header) + "\n" + "\t".join(values) + "\n"
    lines = [f"**Correlation** of {escape(result['leaderboard'])} with {escape(result['official'])} "
             f"({escape(result['method'])})", "",
             "| Spearman | Kendall τ-b | τ_AP | tauap_b | kendall@10 | systems |", "|---:|---:|---:|---:|---:|---:|",
             f"| {_fmt(result['spearman'])} {_ci(ci.get('spearman'))} | {_fmt(result['kendall'])} "
             f"{_ci(ci.get('kendall'))} | {_fmt(result['tau_ap'])} {_ci(ci.get('tau_ap'))} | "
             f"{_fmt(result['tauap_b'])} {_ci(ci.get('tauap_b'))} | {_fmt(result['kendall@10'])} "
             f"{_ci(ci.get('kendall@10'))} | {result['n_systems']} |"]
    for side, systems in result["missing"].items():
        if systems:
            lines.append(f"\nMissing ({side.replace('_', ' ')}): {', '.join(escape(s) for s in systems)}")
    lines += [f"\n> **Warning:** {escape(w)}" for w in result["coverage"]["warnings"]]
    return "\n".join(lines + discordant_lines(result["discordant_pairs"])) + "\n"


def discordant_lines(pairs: list[dict]) -> list[str]:
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


def _fmt(value) -> str:
    return "nan" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)


def _ci(interval) -> str:
    return f"[{interval[0]:.3f}, {interval[1]:.3f}]" if interval else ""
