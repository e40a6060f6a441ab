"""What a probe works on: its options, the sampled pairs with their texts, and each probe grade set's results."""

from __future__ import annotations

from dataclasses import dataclass, field

Pair = tuple[str, str]
Key = tuple[str, str, str]

CONTROL = "control"
"""The variant that is the unmodified passage."""


@dataclass
class Variant:
    """One probe grade set's results: the variant (`control` or an attack), the guard, the prompt version, the
    grades `{(query, passage, item): (grade, status, reply)}` and the flagged pairs `{pair: reason}`."""

    name: str
    guard: str | None
    prompt_version: str
    grades: dict[tuple[str, str, str], tuple[int | None, str, str | None]]
    flagged: dict[Pair, str]


@dataclass(frozen=True)
class ProbeOptions:
    """What to probe: attacks (names of `ATTACKS`), guards (`detect`, `harden`), sample size and seed."""

    attacks: tuple[str, ...]
    guards: tuple[str, ...] = ()
    sample: int = 20
    seed: int = 0


@dataclass
class Sample:
    """The probed pairs, why they were chosen, their original labels, their items and texts."""

    pairs: list[Pair]
    basis: str
    available: int
    labels: dict[Pair, int]
    items: dict[str, list[tuple[str, str, list[str] | None]]]
    texts: dict[Pair, dict[str, str]] = field(default_factory=dict)
    """`{pair: {variant: text}}`: the control's text and every attack's copy."""


