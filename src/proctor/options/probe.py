"""The probe options: how a grade set's judge is probed with attacked passages (`proctor probe`, `api.probe`),
one field each; the grade set and the attacks are the verb's own arguments, the backend's options are
`BackendOptions`."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import NOT_IN_TOML, Checked, borrow, int_in, option
from proctor.options.selection import LabelChoice


@dataclass(frozen=True, kw_only=True)
class ProbeTarget(Checked):
    """What `proctor probe` probes (both required on its command line; `api.probe` takes them as its `grade_set`
    and `attacks` arguments)."""

    grade_set: str | None = borrow(LabelChoice, "grade_set", help="the grade set to probe (its id or a prefix)")
    attack: str | None = option(metavar="ATTACK[,ATTACK...]", toml=NOT_IN_TOML,
                                help="the attacks, comma-separated (listed above)")


@dataclass(frozen=True, kw_only=True)
class ProbeOptions(Checked):
    """Every option of a probe but its grade set, attacks and backend options."""

    guards: str | tuple[str, ...] | None = option(flag="--guard", metavar="GUARD[,GUARD...]",
                                                  help="also measure with these guards: detect, harden")
    sample: int = option(20, parse=int_in(1), metavar="N", help="passages to probe (default {default})")
    seed: int = borrow(EvaluationOptions, "seed")
    llm: str | None = option(metavar="SPEC", help="backend spec (default: the grade set's backend and model)")
