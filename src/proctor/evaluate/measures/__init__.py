"""The measure registry: parse trec_eval names (`P.20`, `ndcg_cut.10`, `recip_rank`, `map`, `Rprec`) and
ir_measures names (`P@20`, `P(rel=3)@20`, `nDCG@10`, `RR`, `AP`, `Rprec`) into a `MeasureSpec`."""

from __future__ import annotations

import re

from proctor.errors import UsageError
from proctor.evaluate.measures.average_precision import AVERAGE_PRECISION
from proctor.evaluate.measures.base import Measure, MeasureSpec
from proctor.evaluate.measures.ndcg import NDCG
from proctor.evaluate.measures.precision import PRECISION
from proctor.evaluate.measures.r_precision import R_PRECISION
from proctor.evaluate.measures.reciprocal_rank import RECIPROCAL_RANK

MEASURES: tuple[Measure, ...] = (PRECISION, NDCG, RECIPROCAL_RANK, AVERAGE_PRECISION, R_PRECISION)

_ALIASES: dict[str, Measure] = {}
for _m in MEASURES:
    for _alias in {_m.name, _m.trec_name, _m.trec_name_no_cutoff, _m.name.lower(), _m.trec_name.lower()}:
        if _alias:
            _ALIASES[_alias] = _m
_ALIASES.update({"R-Prec": R_PRECISION, "rprec": R_PRECISION, "MAP": AVERAGE_PRECISION, "MRR": RECIPROCAL_RANK,
                 "ndcg": NDCG, "nDCG": NDCG, "P": PRECISION, "p": PRECISION})

_IR_MEASURES = re.compile(r"^(?P<name>[A-Za-z][A-Za-z_-]*)(?:\(rel=(?P<rel>-?\d+)\))?(?:@(?P<cut>\d+))?$")
_TREC = re.compile(r"^(?P<name>[A-Za-z][A-Za-z_-]*?)(?:[._](?P<cut>\d+))?$")


def parse_measure(text: str) -> MeasureSpec:
    """Parse a measure name in trec_eval or ir_measures form; unknown names are a usage error."""
    text = text.strip()
    match = _IR_MEASURES.match(text) if ("@" in text or "(" in text) else _TREC.match(text)
    if match is None or match.group("name") not in _ALIASES:
        raise UsageError(f"unknown measure {text!r}; known: {known_measures()}")
    measure = _ALIASES[match.group("name")]
    cutoff = int(match.group("cut")) if match.group("cut") else None
    rel = int(match.group("rel")) if match.groupdict().get("rel") else None
    if cutoff is None and measure.needs_cutoff:
        raise UsageError(f"measure {text!r} needs a cutoff, e.g. {measure.name}@20 or {measure.trec_name}.20")
    if cutoff is not None and not measure.accepts_cutoff:
        raise UsageError(f"measure {measure.name} takes no cutoff")
    if rel is not None and not 1 <= rel <= 5:
        raise UsageError(f"measure {text!r}: rel must be a grade 1..5 (got {rel})")
    if cutoff is not None and cutoff < 1:
        raise UsageError(f"measure {text!r}: the cutoff must be at least 1")
    return MeasureSpec(measure, cutoff, rel)


def known_measures() -> str:
    """A one-line list of accepted names, for error messages and --help."""
    return "P@k|P.k, nDCG@k|ndcg_cut.k, nDCG|ndcg, RR|recip_rank, AP|map, Rprec (ir_measures or trec_eval names)"


__all__ = ["MEASURES", "Measure", "MeasureSpec", "parse_measure", "known_measures"]
