"""`proctor agreement --store S`: agreement of predicted labels with human judgments."""

from __future__ import annotations

import argparse

from proctor import api
from proctor.api.types import Agreement
from proctor.cli.common import add_floor_options, add_format, add_store, emit, floor_of, note, readable_store
from proctor.options.correlation import AgreementOptions
from proctor.options.model import add_options, from_args

DESCRIPTION = """\
Agreement of the labels made from grades with the store's human judgments, for every grade set (method,
model) and for labels from "at least m questions" (m-th largest grade):
  Cohen's kappa of binary merges (predicted label vs judgment >= J; --merges), LLMJudge binarisations
  0|123, 01|23, 012|3 (for 0-3 labels), linearly weighted kappa, Krippendorff's alpha (ordinal), and
  the graded confusion table (predicted label x judgment).
Rows follow each method's own scale and labelling rule: 0-5 grades over questions get the merges >=1, >=3,
>=4, =5 and every m; a method that labels the passage itself (thomas 0-2, umbrela 0-3, sun 0-1, ...) gets
every cut of its scale (thomas: >=1, >=2) and m = 1 only (one label per passage, no questions)."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `agreement` command."""
    p = commands.add_parser("agreement", help="agreement (kappa, alpha, confusion) with human judgments",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store(p)
    add_options(p, AgreementOptions)
    add_format(p, Agreement.formats, "json")
    add_floor_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Compute and print."""
    with readable_store(args.store, args.lock_timeout) as store:
        result = api.agreement(store, from_args(AgreementOptions, args), floor=floor_of(args))
    for grade_set, warning in result.warnings():
        note(f"warning: grade set {grade_set}: {warning}")
    emit(api.render(result, args.format), args.format)
    return 0
