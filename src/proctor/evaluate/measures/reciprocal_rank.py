"""RR: 1 / rank of the first relevant passage, 0 if none (trec_eval `recip_rank`; `RR@k` cuts at k)."""

from __future__ import annotations

from proctor.evaluate.measures.base import Measure, gains


def _reciprocal_rank(ranked: list[str], qrels: dict[str, int], rel_level: int, cutoff: int | None) -> float:
    for i, label in enumerate(gains(ranked, qrels, cutoff)[:cutoff]):
        if label >= rel_level:
            return 1.0 / (i + 1)
    return 0.0


RECIPROCAL_RANK = Measure(
    name="RR",
    trec_name="recip_rank",
    description="Reciprocal rank of the first relevant passage (label >= the relevance level).",
    citation="Kantor & Voorhees 2000; trec_eval m_recip_rank.c",
    needs_cutoff=False,
    accepts_cutoff=True,
    uses_relevance_level=True,
    compute=_reciprocal_rank,
)
