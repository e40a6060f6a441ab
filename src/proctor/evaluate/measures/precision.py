"""P@k: the fraction of the first k passages that are relevant (trec_eval `P.k`)."""

from __future__ import annotations

from proctor.evaluate.measures.base import Measure, gains


def _precision(ranked: list[str], qrels: dict[str, int], rel_level: int, cutoff: int | None) -> float:
    k = cutoff if cutoff is not None else len(ranked)
    if k == 0:
        return 0.0
    return sum(1 for label in gains(ranked, qrels, k)[:k] if label >= rel_level) / k


PRECISION = Measure(
    name="P",
    trec_name="P",
    description="Precision at k: relevant passages among the first k, divided by k (a short list still "
    "divides by k, as trec_eval does). Relevant: label >= the relevance level.",
    citation="trec_eval m_P.c",
    needs_cutoff=True,
    accepts_cutoff=True,
    uses_relevance_level=True,
    compute=_precision,
)
