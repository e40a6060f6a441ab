"""Rprec: precision at rank R, R being the number of relevant labelled passages (trec_eval `Rprec`)."""

from __future__ import annotations

from proctor.evaluate.measures.base import Measure, gains, relevant_count


def _r_precision(ranked: list[str], qrels: dict[str, int], rel_level: int, cutoff: int | None) -> float:
    total_relevant = relevant_count(qrels, rel_level)
    if total_relevant == 0:
        return 0.0
    top = gains(ranked, qrels, total_relevant)[:total_relevant]
    return sum(1 for label in top if label >= rel_level) / total_relevant


R_PRECISION = Measure(
    name="Rprec",
    trec_name="Rprec",
    description="Precision after R passages, R = the number of relevant labelled passages.",
    citation="trec_eval m_Rprec.c",
    needs_cutoff=False,
    accepts_cutoff=False,
    uses_relevance_level=True,
    compute=_r_precision,
)
