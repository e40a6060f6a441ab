"""The probe options: how a grade set's judge is probed with attacked passages (`proctor probe`, `api.probe`),
one field each; the grade set and the attacks are the verb's own arguments, the backend's options are
`BackendOptions`."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import borrow, int_in, option


@dataclass(frozen=True, kw_only=True)
class ProbeOptions:
    """Every option of a probe but its grade set, attacks and backend options."""

    guards: str | tuple[str, ...] | None = option(flag="--guard", metavar="GUARD[,GUARD...]",
                                                  help="also measure with these guards: detect, harden")
    sample: int = option(20, parse=int_in(1), metavar="N", help="passages to probe (default {default})")
    seed: int = borrow(EvaluationOptions, "seed")
    llm: str | None = option(metavar="SPEC", help="backend spec (default: the grade set's backend and model)")
