"""nDCG@k with the labels as gains and log2(rank+1) discounts (trec_eval `ndcg_cut.k`, `ndcg`).

trec_eval ignores the relevance level for nDCG: every positive label is its own gain. So does Proctor,
and the leaderboard says so when a threshold is given.
"""

from __future__ import annotations

import math

from proctor.evaluate.measures.base import Measure, gains, remembered

_DISCOUNTS = [1.0 / math.log2(i + 2) for i in range(1000)]


def _discount(i: int) -> float:
    return _DISCOUNTS[i] if i < len(_DISCOUNTS) else 1.0 / math.log2(i + 2)


def _ndcg(ranked: list[str], qrels: dict[str, int], rel_level: int, cutoff: int | None) -> float:
    dcg = sum(label * _discount(i) for i, label in enumerate(gains(ranked, qrels, cutoff)[:cutoff]) if label > 0)
    ideal = remembered(qrels, ("ideal DCG", cutoff), lambda: _ideal(qrels, cutoff))
    return dcg / ideal if ideal > 0 else 0.0


def _ideal(qrels: dict[str, int], cutoff: int | None) -> float:
    ideal_gains = sorted((label for label in qrels.values() if label > 0), reverse=True)
    if cutoff is not None:
        ideal_gains = ideal_gains[:cutoff]
    return sum(gain * _discount(i) for i, gain in enumerate(ideal_gains))


NDCG = Measure(
    name="nDCG",
    trec_name="ndcg_cut",
    trec_name_no_cutoff="ndcg",
    description="Normalised discounted cumulative gain: gain = the passage's label, discount "
    "1/log2(rank+1), divided by the ideal ordering of all labelled passages. Ignores the relevance level.",
    citation="Järvelin & Kekäläinen 2002; trec_eval m_ndcg_cut.c",
    needs_cutoff=False,
    accepts_cutoff=True,
    uses_relevance_level=False,
    compute=_ndcg,
)
