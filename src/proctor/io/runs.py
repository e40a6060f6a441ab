"""Turn stored or read rankings into ranked lists in the order trec_eval uses.

trec_eval ignores the rank column: it sorts by score, highest first, and breaks ties by passage id in
*descending* string order (`comp_sim_docno` in trec_eval's `form_res_rels.c`). Proctor does the same, so
its measures equal trec_eval's on runs with ties.
"""

from __future__ import annotations

Scores = dict[str, dict[str, dict[str, float]]]
Ranked = dict[str, dict[str, list[str]]]


def order(scores: dict[str, float]) -> list[str]:
    """Passage ids of one query's ranking in trec_eval order."""
    if any(score != score for score in scores.values()):  # NaN: keep the pairwise comparison
        return [pid for pid, _ in sorted(scores.items(), key=lambda item: (-item[1], _Desc(item[0])))]
    by_id = sorted(scores, reverse=True)  # passage ids descending, then a stable sort by score, highest first
    return sorted(by_id, key=scores.__getitem__, reverse=True)


def order_runs(runs: Scores) -> Ranked:
    """`{run: {query: [passage, ...]}}` in trec_eval order from `{run: {query: {passage: score}}}`."""
    return {run: {qid: order(per) for qid, per in per_query.items()} for run, per_query in runs.items()}


class _Desc(str):
    """A string that sorts in reverse order."""

    __slots__ = ()

    def __lt__(self, other: str) -> bool:  # type: ignore[override]
        return str.__gt__(self, other)
