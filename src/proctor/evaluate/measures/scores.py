"""The measures that read grades directly rather than labels: EXAM-Cover (`Cover(rel=3)@20`), n-EXAM
(`NEXAM(rel=3,norm=pool)@20`), the AutoNuggetizer scores of generated answers (`Nuggets(score=strict_vital)`)
and their citation support (`Citations(score=support_precision)`). Each is a declaration: a name, parameters
with their defaults and the values they take, and whether it takes a cutoff (`@k`: the budget); a `ScoreSpec`
binds them, is parsed from its ir_measures-style string and prints its canonical one. Older spellings are
aliases: `EXAM-Cover`, `n-EXAM`, `nuggets:SCORE`, `citations:SCORE`, `tau=` for `rel=`, `normalize=` for
`norm=`."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from proctor.errors import UsageError
from proctor.evaluate.cover import NEXAM_NORM
from proctor.evaluate.measures.base import MISSING
from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import MAX_GRADE

ScoreKind = Literal["cover", "nuggets", "citations"]

NUGGET_SCORES = ("all", "vital", "strict_all", "strict_vital", "weighted")
CITATION_SCORES = ("support_precision", "support_precision_partial", "citation_coverage")
NORMS = ("pool", "pool-per-query", "gold")


@dataclass(frozen=True)
class Param:
    """One parameter of a measure: the values it takes (`choices`; none: a grade 1..5 when `grade`, else any
    word, e.g. a run name), its default, whether it must be given (`required`: in the string, or bound by the
    leaderboard, as `rel` from `min_grade`), and whether the canonical string always writes it (`always`) or
    only when it differs from the default."""

    name: str
    choices: tuple[str, ...] = ()
    default: str | int | None = None
    grade: bool = False
    always: bool = False
    aliases: tuple[str, ...] = ()
    required: bool = False


@dataclass(frozen=True)
class ScoreMeasure:
    """A measure read from grades: its names, parameters and what it computes."""

    name: str
    kind: ScoreKind
    params: tuple[Param, ...]
    accepts_cutoff: bool
    description: str
    citation: str
    aliases: tuple[str, ...] = ()
    check: Callable[[dict[str, Any], str], dict[str, Any]] | None = None
    """Cross-parameter rules: returns the values completed, or raises a UsageError (`text`: the name given)."""

    @property
    def uses_relevance_level(self) -> bool:
        """True when the measure takes `rel` (the smallest grade that counts)."""
        return any(p.name == "rel" for p in self.params)

    def param(self, name: str) -> Param | None:
        """The parameter `name` (or one of its aliases), None when it takes none such."""
        return next((p for p in self.params if name == p.name or name in p.aliases), None)


@dataclass(frozen=True)
class ScoreSpec:
    """A measure read from grades with its parameters bound (unset ones are None until the leaderboard binds
    them: `rel` from `min_grade`, the cutoff from the budget)."""

    measure: ScoreMeasure
    values: tuple[tuple[str, Any], ...] = ()
    cutoff: int | None = None

    @property
    def kind(self) -> ScoreKind:
        """`cover`, `nuggets` or `citations`."""
        return self.measure.kind

    def get(self, name: str) -> Any:
        """A parameter's value: as written or bound, else its default."""
        given = dict(self.values)
        if name in given:
            return given[name]
        found = self.measure.param(name)
        return found.default if found else None

    @property
    def rel(self) -> int | None:
        """The smallest grade that counts (None when not bound yet, or when the measure takes none)."""
        return self.get("rel")

    @property
    def name(self) -> str:
        """The canonical string: `Cover(rel=3)@20`, `NEXAM(rel=3,norm=pool)@20`, `Nuggets(score=all)`."""
        given = dict(self.values)
        shown = [f"{p.name}={given.get(p.name, p.default)}" for p in self.measure.params
                 if (p.name in given and given[p.name] != p.default) or (p.always and self.get(p.name) is not None)]
        params = f"({','.join(shown)})" if shown else ""
        return f"{self.measure.name}{params}{f'@{self.cutoff}' if self.cutoff is not None else ''}"

    trec_name = name

    def bound(self, *, rel: int | None = None, missing: str | None = None, cutoff: int | None = None) -> ScoreSpec:
        """The spec with the leaderboard's values for parameters its string did not write; a written value that
        contradicts a given one is refused (naming both)."""
        given = dict(self.values)
        for key, value in (("rel", rel), ("missing", missing)):
            if value is None or self.measure.param(key) is None:
                continue
            if key in given and given[key] != value:
                param = "min_grade" if key == "rel" else key
                raise UsageError(f"{self.name} names {key}={given[key]} but {{{param}}} is {value}", params=(param,))
            given[key] = value
        if self.measure.accepts_cutoff and self.cutoff is None:
            cutoff = cutoff if cutoff is not None else EvaluationOptions.budget
        else:
            cutoff = self.cutoff
        order = [p.name for p in self.measure.params]
        return replace(self, values=tuple(sorted(given.items(), key=lambda kv: order.index(kv[0]))), cutoff=cutoff)

    def needs(self) -> str | None:
        """The first required parameter still unbound (`rel`, `score`), else None."""
        return next((p.name for p in self.measure.params if p.required and self.get(p.name) is None), None)


def _nexam_check(values: dict[str, Any], text: str) -> dict[str, Any]:
    gold, norm = values.get("gold"), values.get("norm")
    if gold is not None and norm not in (None, "gold"):
        raise UsageError(f"measure {text!r}: gold={gold} and norm={norm} are two different normalisers: choose one")
    if gold is not None:
        return {**values, "norm": "gold"}
    if norm == "gold":
        raise UsageError(f"measure {text!r}: norm=gold needs gold=RUN (the run whose cover divides)")
    return values


_REL = Param("rel", grade=True, always=True, aliases=("tau",), required=True)
_MISSING = Param("missing", MISSING, "zero")

COVER = ScoreMeasure(
    "Cover", "cover", (_REL, _MISSING), True,
    "EXAM-Cover: per query, the fraction of its questions that some passage among the system's first k (@k, the "
    "budget) answers with grade >= rel; the mean over queries (missing=zero: an unanswered query counts 0).",
    "Sander & Dietz 2021 (EXAM), 001 §3.1.2", aliases=("EXAM-Cover", "cover", "exam-cover"))
NEXAM = ScoreMeasure(
    "NEXAM", "cover", (_REL, Param("norm", NORMS, NEXAM_NORM, always=True, aliases=("normalize",)),
                       Param("gold"), _MISSING), True,
    "n-EXAM: EXAM-Cover divided by what the whole pool covers (norm=pool: a ratio of sums, EXAM's order; "
    "pool-per-query: the mean of per-query ratios, as exam_pp) or by what the run gold=RUN covers.",
    "001 §3.1.3", aliases=("n-EXAM", "n-EXAM-Cover", "nEXAM", "nexam", "n-exam"), check=_nexam_check)
NUGGETS = ScoreMeasure(
    "Nuggets", "nuggets", (Param("score", NUGGET_SCORES, always=True, required=True), _MISSING), False,
    "AutoNuggetizer scores of generated answers from a nugget-assign grade set (partial support 0.5 unless "
    "strict; weighted: vital 2, okay 1, as Auto-ARGUE); mean over topics.",
    "castorini/nuggetizer core/metrics.py; Auto-ARGUE", aliases=("nuggets",))
CITATIONS = ScoreMeasure(
    "Citations", "citations", (Param("score", CITATION_SCORES, always=True, required=True),), False,
    "Citation support of generated answers from a citation-support grade set; mean over the topics answered.",
    "docs/nuggets.md", aliases=("citations",))

SCORE_MEASURES: tuple[ScoreMeasure, ...] = (COVER, NEXAM, NUGGETS, CITATIONS)
_BY_NAME = {alias: m for m in SCORE_MEASURES for alias in (m.name, m.name.lower(), *m.aliases)}
_SHAPE = re.compile(r"^(?P<name>[A-Za-z][A-Za-z_-]*)(?:\((?P<params>[^()]*)\))?(?:@(?P<cut>\d+))?$")
_COLON = re.compile(r"^(?P<name>nuggets|citations):(?P<score>.*)$")


def parse_score(text: str) -> ScoreSpec | None:
    """The measure read from grades that `text` names (None when its name is none of theirs); a parameter or
    value it does not take is a UsageError naming the measure and the close matches."""
    colon = _COLON.match(text)
    if colon:  # AutoJudge's `nuggets:SCORE` / `citations:SCORE`
        text = f"{colon.group('name').capitalize()}(score={colon.group('score')})"
    match = _SHAPE.match(text)
    if match is None or match.group("name") not in _BY_NAME:
        return None
    measure = _BY_NAME[match.group("name")]
    cutoff = int(match.group("cut")) if match.group("cut") else None
    if cutoff is not None and not measure.accepts_cutoff:
        raise UsageError(f"measure {text!r}: {measure.name} takes no cutoff")
    if cutoff is not None and cutoff < 1:
        raise UsageError(f"measure {text!r}: the cutoff (the budget) must be at least 1")
    values = _values(measure, match.group("params") or "", text)
    if measure.check is not None:
        values = measure.check(values, text)
    order = [p.name for p in measure.params]
    return ScoreSpec(measure, tuple(sorted(values.items(), key=lambda kv: order.index(kv[0]))), cutoff)


def _values(measure: ScoreMeasure, written: str, text: str) -> dict[str, Any]:
    """`k=v,...` checked against the measure's parameters."""
    values: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in written.split(","))):
        key, equals, value = (s.strip() for s in part.partition("="))
        param = measure.param(key)
        if param is None:
            names = [p.name for p in measure.params]
            raise UsageError(f"measure {text!r}: {measure.name} takes no parameter {key!r}{_close(key, names)}; "
                             f"it takes {', '.join(names)}")
        if not equals or not value:
            raise UsageError(f"measure {text!r}: {param.name} needs a value ({param.name}=...)")
        if param.name in values:
            raise UsageError(f"measure {text!r}: {param.name} is given twice")
        values[param.name] = _value(measure, param, value, text)
    return values


def _value(measure: ScoreMeasure, param: Param, value: str, text: str) -> Any:
    if param.grade:
        if not value.lstrip("-").isdigit() or not 1 <= int(value) <= MAX_GRADE:
            raise UsageError(f"measure {text!r}: {measure.name} {param.name} must be a grade 1..{MAX_GRADE} "
                             f"(got {value})")
        return int(value)
    if param.choices and value not in param.choices:
        raise UsageError(f"measure {text!r}: {measure.name} {param.name} {value!r} is not one of "
                         f"{', '.join(param.choices)}{_close(value, param.choices)}")
    return value


def _close(word: str, known: Any) -> str:
    import difflib  # here: only a refused name needs it

    found = difflib.get_close_matches(word, list(known), n=3, cutoff=0.5)
    return f" (did you mean {', '.join(found)}?)" if found else ""


def score_names() -> list[str]:
    """Every alias of these measures, then their names (for close-match suggestions: the name last wins)."""
    names = [m.name for m in SCORE_MEASURES]
    return [*sorted(set(_BY_NAME) - set(names)), *names]
