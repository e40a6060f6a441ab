"""The `proctor` command line: one module per verb; errors a user can act on exit with status 2."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Sequence
from importlib import import_module

from proctor import __version__
from proctor.cli.common import flag_names
from proctor.errors import ProctorError
from proctor.options.numeric import check_numbers

COMMANDS = {name: f"proctor.cli.{module}_cmd" for name, module in (
    ("import", "import"), ("export", "export"), ("info", "info"), ("grade", "grade"),
    ("grade-sets", "grade_sets"), ("qrels", "qrels"), ("leaderboard", "leaderboard"), ("compare", "compare"),
    ("correlate", "correlate"), ("agreement", "agreement"), ("analyze", "analyze"), ("ensemble", "ensemble"),
    ("calibrate", "calibrate"), ("probe", "probe"), ("bank", "bank"), ("verify", "verify"), ("review", "review"),
    ("run", "run"), ("demo", "demo"))}
"""Command name → the module that registers and runs it (`register(commands)`), in the order `--help` lists
them. A command line imports only its own command's module: the others are named, not built."""


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser: every command complete, or, when `argv` names a command, that one complete and the
    others by name only (so that `proctor leaderboard ...` imports nothing the leaderboard does not need)."""
    parser = argparse.ArgumentParser(
        prog="proctor",
        description="Evaluate search, generation and RAG systems with LLM-graded exam questions "
        "(EXAM, EXAM++, RUBRIC): import runs and grades, build EXAM-Qrels and EXAM-Cover leaderboards.",
    )
    parser.add_argument("--version", action="version", version=f"proctor {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen, placeholder = _command_of(argv), None
    for name, module in COMMANDS.items():
        if chosen in (None, name):
            import_module(module).register(commands)
        else:  # a choice argparse knows, never chosen: the command line names another (one parser stands for all)
            placeholder = placeholder or commands.add_parser(name)
            commands.choices[name] = placeholder
    _record_flags(parser)
    return parser


def _command_of(argv: Sequence[str] | None) -> str | None:
    """The command a command line runs, when its first word names one (`proctor --help leaderboard` names none:
    it prints the list of every command)."""
    return argv[0] if argv and argv[0] in COMMANDS else None


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
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        check_numbers({k: v for k, v in vars(args).items() if isinstance(v, int | float)})  # lists: own checks
        return args.func(args)
    except sqlite3.OperationalError as exc:  # locked beyond --lock-timeout, disk full, read-only
        from proctor.api.commands import StoreError

        error = StoreError(getattr(args, "store", None) or "store", exc)
        print(f"proctor: error: {error.spelled(flag_names(args, error.params))}", file=sys.stderr)
        return 2
    except ProctorError as exc:  # parameters the message names, as this command's flags
        print(f"proctor: error: {exc.spelled(flag_names(args, exc.params))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("proctor: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return 0
