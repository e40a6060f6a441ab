"""Planning: which (passage, item) pairs of the judgment pool one step of a grade set still has to grade.

Items are a bank version's questions or nuggets, the query itself (direct relevance methods) or the four
criteria (Four Prompts). Pairs with a usable grade in this grade set and step are done; their results are
kept for later steps."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

from proctor.errors import UsageError
from proctor.grading.pool import judgment_pool
from proctor.methods import Method
from proctor.methods.steps import Key, Variables
from proctor.store import Store


class Limits(Protocol):
    """How much of the pool a plan covers (the engine's `GradeOptions` are such limits)."""

    depth: int
    max_queries: int | None
    max_passages: int | None

Items = dict[str, list[tuple[str, str, list[str] | None]]]
_NO_VARIABLES: dict[str, str] = {}
"""The variables of a pair of a step that uses no earlier step (shared, never written)."""


@dataclass(frozen=True)
class WorkItem:
    """One pair to grade."""

    query_id: str
    passage_id: str
    question_id: str
    question: str
    passage: str
    answers: tuple[str, ...] | None
    variables: dict[str, str] = field(default_factory=dict)


@dataclass
class Plan:
    """The pairs of one step: per query its pool passages and items; what is done already."""

    queries: list[tuple[str, list[str], list[tuple[str, str, list[str] | None]]]]
    done: dict[Key, tuple[int | None, str | None]]
    pairs: int
    already: int
    variables: Variables | None = None
    exhausted: set[Key] = field(default_factory=set)
    needs_answer_key: bool = False
    """Only items with gold answers are graded (the prompt shows them)."""
    """Failed pairs tried `max_attempts` times: kept as failed, not sent again."""
    given_up: int = 0
    unjudgeable: int = 0
    """Pool passages without text: never graded."""
    only: set[Key] | None = None
    """When set, only these pairs are graded (a batch import grades the pairs its result files answer)."""
    flagged: set[tuple[str, str]] = field(default_factory=set)
    """(query, passage) pairs the `detect` guard flagged: never graded, not counted as pairs to grade."""

    by_length: bool = False
    """Hand the pairs out shortest prompt first over the whole plan (a backend that batches on a device pads
    every prompt of a batch to its longest): `work` then holds the plan's pairs in memory at once."""

    def pending(self, store: Store) -> Iterator[tuple[str, str, str, tuple[str, str, list[str] | None], dict]]:
        """(query, passage, passage text, item, the step's variables) of every pair still to grade, query by query
        in the plan's order, lazily."""
        texts = store.corpus.passage_texts()
        for qid, passages, items in self.queries:
            for pid in passages:
                if (qid, pid) in self.flagged:
                    continue
                text = texts.get(pid) or ""
                for item in items:
                    key = (qid, pid, item[0])
                    if key in self.done or key in self.exhausted or (self.only is not None and key not in self.only):
                        continue
                    if self.needs_answer_key and not item[2]:
                        continue
                    more = self.variables(qid, pid, item[0]) if self.variables is not None else _NO_VARIABLES
                    if more is not None:
                        yield qid, pid, text, item, more

    def work(self, store: Store) -> Iterator[WorkItem]:
        """The pairs still to grade, lazily (memory stays flat however large the pool), or all at once, shortest
        first, when `by_length` is set."""
        query_texts = store.corpus.queries()
        pending = self.pending(store)
        if self.by_length:  # the rows only (WorkItems are made as they are handed out); stable: ties keep plan order
            pending = iter(sorted(pending, key=lambda row: len(row[2]) + len(row[3][1])))
        return (WorkItem(qid, pid, item_id, question, text, tuple(answers) if answers else None,
                         {"query": query_texts.get(qid) or qid, "criterion_name": item_id,
                          "gold": " / ".join(answers or ()), **more})
                for qid, pid, text, (item_id, question, answers), more in pending)


def items_of(store: Store, method: Method, bank: tuple[str, str] | None) -> Items:
    """What is graded per passage of each query: bank items, the query itself, or the four criteria."""
    kind = method.items
    if kind in ("question", "nugget"):
        items = store.banks.bank_items(kind, *bank) if bank else {}
        if kind == "nugget" and bank:  # answer nuggets (of AND/OR questions) are nugget assignment's alone
            answers = {r["question_id"] for r in store.banks.bank_questions(*bank)
                       if (r["info"] or {}).get("nugget_of")}
            items = {q: kept for q, found in items.items() if (kept := [i for i in found if i[0] not in answers])}
        if not items:
            where = f"bank {bank[0]}@{bank[1]}" if bank else "the store's banks"
            raise UsageError(f"{store.path}: no {kind}s in {where} (import a bank with `proctor import bank`); "
                             f"method {method.name} grades {kind}s")
        return items
    queries = {qid: text for qid, text in store.corpus.queries().items() if text}
    if not queries:
        raise UsageError(f"{store.path}: no query texts in the store; method {method.name} shows the query to the "
                         "LLM (import them with `proctor import queries FILE`)")
    if kind == "query":
        return {qid: [("", text, None)] for qid, text in queries.items()}
    criteria = method.template.extra["criteria"]
    return {qid: [(name, description, None) for name, description in criteria.items()] for qid in queries}


def make_plan(store: Store, items: Items, done: dict[Key, tuple[int | None, str | None]], limits: Limits, *,
              variables: Variables | None = None, exhausted: set[Key] | None = None, needs_answer_key: bool = False,
              flagged: set[tuple[str, str]] | None = None) -> Plan:
    """The plan over the judgment pool (every judged passage plus the top `limits.depth` of every run, the first
    `limits.max_queries` queries and `limits.max_passages` passages of each when set); pairs in `done` have a
    usable grade, pairs in `exhausted` failed too often to be tried again."""
    depth, max_queries, max_passages = limits.depth, limits.max_queries, limits.max_passages
    pool = judgment_pool(store, depth)
    queries = sorted(q for q in pool if q in items)
    if max_queries is not None:
        queries = queries[:max_queries]
    plan = Plan([], done, 0, 0, variables, exhausted or set(), needs_answer_key, flagged=flagged or set())
    textless = store.corpus.textless_passages()  # unjudgeable: never graded
    for qid in queries:
        judgeable = [p for p in pool[qid] if p not in textless]
        plan.unjudgeable += len(pool[qid]) - len(judgeable)
        passages = judgeable[:max_passages] if max_passages else judgeable
        plan.queries.append((qid, passages, items[qid]))
        pairs = [(p, item[0]) for p in passages for item in items[qid] if (qid, p) not in plan.flagged
                 and (variables is None or variables(qid, p, item[0]) is not None)
                 and (item[2] or not needs_answer_key)]
        plan.pairs += len(pairs)
        plan.already += sum(1 for p, item_id in pairs if (qid, p, item_id) in done)
        plan.given_up += sum(1 for p, item_id in pairs if (qid, p, item_id) in plan.exhausted)
    return plan
