"""AP: mean of the precision at each relevant passage's rank over all R relevant passages (trec_eval `map`)."""

from __future__ import annotations

from proctor.evaluate.measures.base import Measure, gains, relevant_count


def _average_precision(ranked: list[str], qrels: dict[str, int], rel_level: int, cutoff: int | None) -> float:
    total_relevant = relevant_count(qrels, rel_level)
    if total_relevant == 0:
        return 0.0
    hits, precision_sum = 0, 0.0
    for i, label in enumerate(gains(ranked, qrels, cutoff)[:cutoff]):
        if label >= rel_level:
            hits += 1
            precision_sum += hits / (i + 1)
    return precision_sum / total_relevant


AVERAGE_PRECISION = Measure(
    name="AP",
    trec_name="map_cut",
    trec_name_no_cutoff="map",
    description="Average precision: precision at the rank of each relevant passage retrieved, summed and "
    "divided by the number R of relevant labelled passages (label >= the relevance level).",
    citation="trec_eval m_map.c",
    needs_cutoff=False,
    accepts_cutoff=True,
    uses_relevance_level=True,
    compute=_average_precision,
)
