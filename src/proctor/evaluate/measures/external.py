"""Any other measure a user knows from ir_measures or trec_eval (`R@100`, `recall.100`, `bpref`, `Judged@10`,
`infAP`, `Success@10`, ...), computed by the `ir_measures` package (MacAvaney, Macdonald & Ounis, ECIR 2022)
through its pytrec_eval provider (trec_eval itself) where that provider supports the measure, else the first
provider of ir_measures' default pipeline that does (e.g. `judged` for Judged@k).

Runs are handed over with scores that keep Proctor's trec_eval order exactly; qrels only for the queries the
run answers, so that a query the run lacks is left out (trec_eval without -c) unless the leaderboard counts it 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from proctor.errors import UsageError
from proctor.evaluate.measures.base import with_missing


@dataclass(frozen=True)
class ExternalMeasure:
    """What a leaderboard needs to know of a measure computed by ir_measures."""

    name: str
    uses_relevance_level: bool
    """True when the measure takes ir_measures' `rel` parameter (binary relevance at a level)."""
    provider: str
    description: str = "computed by ir_measures"
    citation: str = "ir_measures (MacAvaney, Macdonald & Ounis, ECIR 2022)"


@dataclass(frozen=True)
class ExternalSpec:
    """An ir_measures measure with its parameters, as the user wrote it (`rel` bound at scoring time)."""

    ir: Any = field(compare=False)
    text: str
    trec_form: bool = False
    missing: str | None = None
    """How a query the system did not answer counts, when written into the name (`Bpref(missing=zero)`)."""
    kind = "qrels"
    """A measure over labels."""

    @property
    def measure(self) -> ExternalMeasure:
        """Name, provider and whether it uses the relevance level."""
        return ExternalMeasure(self.ir.NAME, "rel" in self.ir.SUPPORTED_PARAMS, _provider(self.ir).NAME)

    @property
    def rel(self) -> int | None:
        """A relevance level written into the name (`P(rel=3)@20`)."""
        return self.ir.params.get("rel")

    @property
    def cutoff(self) -> int | None:
        """The cutoff, if any."""
        return self.ir.params.get("cutoff")

    @property
    def name(self) -> str:
        """The ir_measures form (`R@100`, `Bpref`, `Judged@10`; `Bpref(missing=zero)` when written so)."""
        return with_missing(str(self.ir), self.missing)

    @property
    def trec_name(self) -> str:
        """The name as trec_eval prints it where the pytrec_eval provider computes it, else the ir_measures form."""
        return trec_output_name(self.ir) or self.name

    def bound(self, rel_level: int) -> Any:
        """The ir_measures measure with the relevance level bound (when it takes one and none was written)."""
        if self.measure.uses_relevance_level and self.rel is None:
            return self.ir(rel=rel_level)
        return self.ir

    def bound_name(self, rel_level: int) -> str:
        """The name with the relevance level it is scored at always written (`R(rel=1)@100`), unlike
        ir_measures, which leaves out a default rel=1."""
        name = str(self.bound(rel_level))
        if not self.measure.uses_relevance_level or "rel=" in name:
            return name
        base, at, cutoff = name.partition("@")
        base = base.replace("(", f"(rel={rel_level},", 1) if "(" in base else f"{base}(rel={rel_level})"
        return f"{base}{at}{cutoff}"

    def per_system(self, ranked: dict[str, list[str]], qrels: dict[str, dict[str, int]], rel_level: int
                   ) -> dict[str, float]:
        """Per-query values for the queries in both the run and the qrels."""
        run = {qid: {pid: float(len(pids) - i) for i, pid in enumerate(pids)} for qid, pids in ranked.items()
               if qid in qrels}
        if not run:
            return {}
        measure = self.bound(rel_level)
        provider = _provider(self.ir)
        try:
            evaluator = provider.evaluator([measure], {qid: qrels[qid] for qid in run})
            return {m.query_id: float(m.value) for m in evaluator.iter_calc(run)}
        except Exception as exc:  # a provider's own failure (a missing tool, a bad parameter) as one message
            raise UsageError(f"measure {self.text!r}: ir_measures' {provider.NAME} provider failed: "
                             f"{type(exc).__name__}: {exc}") from None

    def per_query(self, ranked: list[str], qrels: dict[str, int], rel_level: int) -> float:
        """The measure's value for one query."""
        return self.per_system({"q": ranked}, {"q": qrels}, rel_level).get("q", 0.0)


def parse_external(text: str) -> ExternalSpec | None:
    """An ir_measures name (`R@100`, `Bpref`) or a trec_eval name (`recall.100`, `bpref`), else None."""
    import ir_measures

    for parse, trec_form in ((ir_measures.parse_measure, False), (ir_measures.parse_trec_measure, True)):
        try:
            parsed = parse(text)
        except (NameError, ValueError, TypeError, AssertionError, SyntaxError, KeyError):
            continue
        measures = parsed if isinstance(parsed, list) else [parsed]
        if len(measures) != 1:
            names = " ".join(f"--measure {m}" for m in measures)
            raise UsageError(f"measure {text!r} names {len(measures)} measures; give them one by one: {names}")
        spec = ExternalSpec(measures[0], text, trec_form)
        if _provider(spec.ir) is None:
            raise UsageError(f"measure {text!r}: no available ir_measures provider computes {spec.name}")
        return spec
    return None


@cache
def _provider_cached(key: str, measure: Any) -> Any:
    import ir_measures

    for provider in ir_measures.DefaultPipeline.providers:
        if provider.NAME == "runtime":
            continue
        try:
            if provider.supports(measure) and provider.is_available():
                return provider
        except (AssertionError, ValueError, TypeError):
            continue
    return None


def _provider(measure: Any) -> Any:
    return _provider_cached(repr(measure), measure)


def trec_output_name(measure: Any) -> str | None:
    """The name trec_eval prints for a measure the pytrec_eval provider computes (`recall_100`, `bpref`)."""
    import ir_measures

    if _provider(measure) is not ir_measures.pytrec_eval:
        return None
    try:
        invokers = ir_measures.pytrec_eval._build_invokers([measure], {})
        return next(iter(invokers[0].measure_map.values()))[1]
    except (AttributeError, IndexError, KeyError, TypeError, ValueError, StopIteration):
        return None


def known_names() -> list[str]:
    """Every measure name ir_measures knows (for close-match suggestions)."""
    import ir_measures

    names = set(ir_measures.measures.registry)
    try:
        import pytrec_eval

        names |= set(pytrec_eval.supported_measures)
    except ImportError:
        pass
    return sorted(names)
