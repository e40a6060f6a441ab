"""The `proctor` command line: one module per verb; errors a user can act on exit with status 2."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Sequence

from proctor import __version__
from proctor.api import StoreError
from proctor.cli import (
    agreement_cmd,
    analyze_cmd,
    bank_cmd,
    calibrate_cmd,
    compare_cmd,
    correlate_cmd,
    demo_cmd,
    ensemble_cmd,
    export_cmd,
    grade_cmd,
    grade_sets_cmd,
    import_cmd,
    info_cmd,
    leaderboard_cmd,
    probe_cmd,
    qrels_cmd,
    review_cmd,
    run_cmd,
    verify_cmd,
)
from proctor.cli.common import flag_names
from proctor.errors import ProctorError, UsageError
from proctor.options.numeric import check_numbers

COMMANDS = (
    import_cmd, export_cmd, info_cmd, grade_cmd, grade_sets_cmd, qrels_cmd, leaderboard_cmd, compare_cmd,
    correlate_cmd, agreement_cmd, analyze_cmd, ensemble_cmd, calibrate_cmd, probe_cmd, bank_cmd, verify_cmd,
    review_cmd, run_cmd, demo_cmd,
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command."""
    parser = argparse.ArgumentParser(
        prog="proctor",
        description="Evaluate search, generation and RAG systems with LLM-graded exam questions "
        "(EXAM, EXAM++, RUBRIC): import runs and grades, build EXAM-Qrels and EXAM-Cover leaderboards.",
    )
    parser.add_argument("--version", action="version", version=f"proctor {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        module.register(commands)
    _record_flags(parser)
    return parser


def _record_flags(parser: argparse.ArgumentParser) -> None:
    """Give every (sub)command's namespace `flags`: parameter name → the flag that sets it, so that an API error
    naming parameters (`UsageError.params`) reads in the words of the shell (`--min-grade`, `STORE`). A command
    whose API parameter has another name than its option's `dest` adds `param_flags={"judgments": "--qrels"}`
    to its own defaults; `--format` also sets the API's `fmt`."""
    flags = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                _record_flags(sub)
        elif action.option_strings:
            longs = [o for o in action.option_strings if o.startswith("--")]
            flags[action.dest] = (longs or action.option_strings)[0]
        elif action.dest != argparse.SUPPRESS:
            flags[action.dest] = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
    if "format" in flags:
        flags.setdefault("fmt", flags["format"])
    parser.set_defaults(flags=flags)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        check_numbers({k: v for k, v in vars(args).items() if isinstance(v, int | float)})  # lists: own checks
        return args.func(args)
    except sqlite3.OperationalError as exc:  # locked beyond --lock-timeout, disk full, read-only
        print(f"proctor: error: {StoreError(getattr(args, 'store', None) or 'store', exc)}", file=sys.stderr)
        return 2
    except UsageError as exc:
        print(f"proctor: error: {exc.spelled(flag_names(args, exc.params))}", file=sys.stderr)
        return 2
    except ProctorError as exc:
        print(f"proctor: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("proctor: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return 0
