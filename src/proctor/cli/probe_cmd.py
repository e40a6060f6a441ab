"""`proctor probe --store S --grade-set ID --attack A[,B...]`: how much each attack inflates a grade set's labels,
without and with safeguards, beside a control."""

from __future__ import annotations

import argparse

from proctor import api
from proctor.api import commands
from proctor.api.types import ProbeReport
from proctor.cli.common import add_format, add_store, note, spelled
from proctor.options.backend import add_backend_options, given
from proctor.options.model import add_options, from_args
from proctor.options.probe import ProbeOptions, ProbeTarget

DESCRIPTION = f"""\
Sample --sample N pool passages the humans judged non-relevant (judgment 0; without judgments: those the grade
set labels lowest), make attacked copies, and grade them with exactly the grade set's method, prompt version,
model and parameters (the backend options must reproduce the grade set; --llm defaults to its backend and model).
Each attack (and each guard) is a probe grade set linked to the original: nothing of the original changes, and
probe grade sets never enter leaderboards or grade-set resolution. The unmodified passages are graded again as the
control (replies are not taken from the cache). Per attack: passages, mean label change (probe label minus the
grade set's label), the share flipped to relevant at the grade set's usual thresholds (its top two grades), and
how many the guard flagged. See docs/robustness.md.

attacks:  {', '.join(commands.ATTACKS)}
guards:   detect (flags passages that address the judge or copy rubric text verbatim: no grade, listed, counted)
          harden (the prompt fences the passage as data and says to ignore instructions in it; prompt version
          +proctor-harden-1, ours)"""


def register(parsers: argparse._SubParsersAction) -> None:
    """Add the `probe` command."""
    p = parsers.add_parser("probe", help="measure how much attacks inflate a grade set's labels (and guards)",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store(p)
    for action in add_options(p, ProbeTarget):
        action.required = True
    add_options(p, ProbeOptions, "guards", "sample", "seed", "llm")
    add_backend_options(p)
    add_format(p, ProbeReport.formats, "tsv")
    p.set_defaults(func=run, param_flags={"attacks": "--attack", "guards": "--guard"})


def run(args: argparse.Namespace) -> int:
    """Probe and print the report."""
    request = commands.probe_request(args.grade_set, args.attack, from_args(ProbeOptions, args),
                                     **given(args))  # checked before the store is opened
    store = api.open_store(args.store, lock_timeout=args.lock_timeout)
    try:
        report = request.run(store)
    finally:
        store.close()
    print(api.render(report, args.format), end="")
    for line in report.notes():
        note(spelled(args, line))
    return 0
