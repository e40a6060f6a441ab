"""The measure registry: parse trec_eval names (`P.20`, `ndcg_cut.10`, `recip_rank`, `map`, `Rprec`) and
ir_measures names (`P@20`, `P(rel=3)@20`, `nDCG@10`, `RR`, `AP`, `Rprec`) into a `MeasureSpec` computed
in-process; any other name ir_measures or trec_eval knows (`R@100`, `recall.100`, `bpref`, `Judged@10`, ...)
into an `ExternalSpec` computed by ir_measures (`external.py`); and the measures read from grades rather than
labels (`scores.py`: `Cover(rel=3)@20`, `NEXAM(rel=3,norm=pool)@20`, `Nuggets(score=all)`,
`Citations(score=support_precision)`) into a `ScoreSpec`. `parse_measure` takes measures over labels only,
`parse_any_measure` every kind. Unknown names list the close matches."""

from __future__ import annotations

import re
from dataclasses import replace

from proctor.errors import UsageError
from proctor.evaluate.measures.average_precision import AVERAGE_PRECISION
from proctor.evaluate.measures.base import MISSING, Measure, MeasureSpec
from proctor.evaluate.measures.external import ExternalSpec, known_names, parse_external
from proctor.evaluate.measures.ndcg import NDCG
from proctor.evaluate.measures.precision import PRECISION
from proctor.evaluate.measures.r_precision import R_PRECISION
from proctor.evaluate.measures.reciprocal_rank import RECIPROCAL_RANK
from proctor.evaluate.measures.scores import SCORE_MEASURES, ScoreMeasure, ScoreSpec, parse_score, score_names

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
_PARAMS = re.compile(r"^(?P<head>[^(]*)\((?P<params>[^()]*)\)(?P<tail>.*)$")


AnySpec = MeasureSpec | ExternalSpec
"""A measure over labels (qrels)."""

BoardSpec = MeasureSpec | ExternalSpec | ScoreSpec
"""Any measure a leaderboard scores: over labels, or read from grades (EXAM-Cover, n-EXAM, nuggets, citations)."""


def parse_measure(text: str, *, missing: bool = False) -> AnySpec:
    """Parse a measure over labels in trec_eval or ir_measures form: one of the in-process measures, else any
    measure ir_measures computes; unknown names are a usage error that lists the close matches. A `missing=`
    parameter (how a leaderboard counts a query a system did not answer) is refused unless `missing` (the
    leaderboards, and the measure names their files carry)."""
    spec = parse_any_measure(text)
    if isinstance(spec, ScoreSpec):
        raise UsageError(f"measure {text.strip()!r} reads grades, not labels ({spec.measure.description.split(':')[0]}"
                         "): only a leaderboard scores it; here give a measure over labels, e.g. P@20 or nDCG@10")
    if spec.missing is not None and not missing:
        raise UsageError(f"measure {text.strip()!r}: missing= is taken by leaderboards (`leaderboard`, "
                         "`api.leaderboard`) only; here give the measure without it")
    return spec


def parse_any_measure(text: str) -> BoardSpec:
    """Parse any measure a leaderboard scores: `parse_measure`'s, or one read from grades (`Cover(rel=3)@20`,
    `NEXAM(rel=3,norm=pool)@20`, `Nuggets(score=all)`, `Citations(score=support_precision)`, and their
    older spellings `EXAM-Cover`, `n-EXAM`, `nuggets:SCORE`, `citations:SCORE`)."""
    text = text.strip()
    spec = parse_score(text) or _parse(text)
    if spec is None:
        raise UsageError(f"unknown measure {text!r}{_close_matches(text)}; known: {known_measures()}")
    return spec


def _parse(text: str) -> AnySpec | None:
    """The measure `text` names, None when no measure has that name (other problems: UsageError); a `missing=`
    among its parameters is kept on the spec (`P(rel=3,missing=zero)@20`)."""
    bare, missing = _without_missing(text)
    spec = _parse_bare(bare)
    return replace(spec, missing=missing) if spec is not None and missing is not None else spec


def _without_missing(text: str) -> tuple[str, str | None]:
    """The measure's text without its `missing=` parameter, and that parameter's value (None: not written)."""
    match = _PARAMS.match(text)
    if match is None:
        return text, None
    params = [p.strip() for p in match.group("params").split(",")]
    given = [p.partition("=")[2].strip() for p in params if p.partition("=")[0].strip() == "missing"]
    if not given:
        return text, None
    if len(given) > 1:
        raise UsageError(f"measure {text!r}: missing is given twice")
    if given[0] not in MISSING:
        raise UsageError(f"measure {text!r}: missing {given[0]!r} is not one of {', '.join(MISSING)}")
    kept = ",".join(p for p in params if p.partition("=")[0].strip() != "missing")
    return f"{match.group('head')}{f'({kept})' if kept else ''}{match.group('tail')}", given[0]


def _parse_bare(text: str) -> AnySpec | None:
    """`_parse` of a text without `missing=`."""
    match = _IR_MEASURES.match(text) if ("@" in text or "(" in text) else _TREC.match(text)
    if match is None or match.group("name") not in _ALIASES:
        external = parse_external(text) if text else None
        if external is not None:
            _check_rel(text, external.rel)
        return external
    measure = _ALIASES[match.group("name")]
    cutoff = int(match.group("cut")) if match.group("cut") else None
    rel = int(match.group("rel")) if match.groupdict().get("rel") else None
    if cutoff is None and measure.needs_cutoff:
        raise UsageError(f"measure {text!r} needs a cutoff, e.g. {measure.name}@20 or {measure.trec_name}.20")
    if cutoff is not None and not measure.accepts_cutoff:
        raise UsageError(f"measure {measure.name} takes no cutoff")
    _check_rel(text, rel)
    if cutoff is not None and cutoff < 1:
        raise UsageError(f"measure {text!r}: the cutoff must be at least 1")
    return MeasureSpec(measure, cutoff, rel)


def _check_rel(text: str, rel: int | None) -> None:
    if rel is not None and not 1 <= rel <= 5:
        raise UsageError(f"measure {text!r}: rel must be a grade 1..5 (got {rel})")


def _close_matches(text: str) -> str:
    """`; did you mean ...` with the names closest to the measure's base name (its cutoff kept)."""
    import difflib  # here: only a refused measure needs it

    base = re.split(r"[@(.]", text, maxsplit=1)[0]
    suffix = text[len(base):]
    names = {name.lower(): name for name in [*_ALIASES, *known_names(), *(m.name for m in MEASURES), *score_names()]}
    found: list[str] = []
    for close in difflib.get_close_matches(base.lower(), list(names), n=8, cutoff=0.6):
        for candidate in (names[close] + suffix, names[close] + suffix.replace("@", "."),
                          names[close] + suffix.replace(".", "@")):
            if candidate not in found and _parses(candidate):
                found.append(candidate)
                break
    return f"; did you mean {', '.join(found[:5])}?" if found else ""


def _parses(text: str) -> bool:
    try:
        return (parse_score(text) or _parse(text)) is not None
    except UsageError:
        return False


def known_measures() -> str:
    """A one-line list of accepted names, for error messages and --help."""
    return ("in-process: P@k|P.k, nDCG@k|ndcg_cut.k, nDCG|ndcg, RR|recip_rank, AP|map, Rprec; any other "
            "ir_measures or trec_eval measure through ir_measures, e.g. R@100|recall.100, Bpref|bpref, infAP, "
            "Judged@10, Success@10|success.10; read from grades: Cover(rel=T)@K (EXAM-Cover), "
            "NEXAM(rel=T,norm=pool|pool-per-query)@K or NEXAM(rel=T,gold=RUN)@K (n-EXAM), "
            "Nuggets(score=all|vital|strict_all|strict_vital|weighted), "
            "Citations(score=support_precision|support_precision_partial|citation_coverage)")


__all__ = ["MEASURES", "SCORE_MEASURES", "AnySpec", "BoardSpec", "ExternalSpec", "Measure", "MeasureSpec",
           "ScoreMeasure", "ScoreSpec", "parse_measure", "parse_any_measure", "known_measures"]
