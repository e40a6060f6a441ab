"""Stores: opening them, and what they hold (`proctor info`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from proctor.api.results import JSON, Report
from proctor.errors import UsageError
from proctor.options.numeric import check_numbers
from proctor.store import DEFAULT_LOCK_TIMEOUT as DEFAULT_LOCK_TIMEOUT
from proctor.store import Store as Store
from proctor.store import StoreError as StoreError


def open_store(path: str | Path, *, create: bool = False, lock_timeout: float | None = None) -> Store:
    """Open a store (creating it with `create`); `lock_timeout`: seconds to wait while another process writes."""
    timeout = DEFAULT_LOCK_TIMEOUT if lock_timeout is None else lock_timeout
    return Store.create_or_open(path, lock_timeout=timeout) if create else Store.open(path, lock_timeout=timeout)


class StoreInfo(Report):
    """What a store holds (`Store.counts`): counts, bank versions, grade sets, stale grades."""

    formats: ClassVar[tuple[str, ...]] = ("text", "json")

    def as_text(self, fmt: str) -> str:
        """What `proctor info` prints."""
        return info_text(self)


def info(store: Store) -> StoreInfo:
    """What the store holds: counts, bank versions, grade sets (`api.render(info, "text" | "json")`)."""
    return StoreInfo(store.counts())


def info_text(counts: Mapping[str, JSON]) -> str:
    """What `proctor info` prints: counts, bank versions, grade sets."""
    lines = [f"{key:<14} {counts[key]}" for key in ("store", "queries", "passages", "runs", "generated_runs",
                                                     "rankings", "judgments", "banks", "questions", "grades",
                                                     "failures", "unjudgeable")]
    for bank in counts["bank_versions"]:
        latest = " (latest)" if bank["latest"] else ""
        lines.append(f"bank           {bank['bank']}@{bank['version']}{latest}: {bank['questions']} items "
                     f"({bank['nuggets']} nuggets) from {bank['source']}")
    for s in counts["grade_sets"]:
        hidden = (" (intermediate)" if s.get("intermediate") else "") + (" (empty)" if s.get("empty") else "")
        lines.append(f"grade set      {s['id']}  {s['method']} / {s['model']}  bank {s['bank']}  prompt "
                     f"{s['prompt_version']}  {s['grades']} grades ({s['failures']} failed){hidden}")
    methods = {s["id"]: s["method"] for s in counts["grade_sets"]}
    for grade_set, why in counts["stale_grades"].items():
        lines.append(f"stale grades   {grade_set}  " + ", ".join(f"{n} ({reason})" for reason, n in why.items())
                     + f": not counted; {stale_fate(methods.get(grade_set))}")
    return "\n".join(lines) + "\n"


def stale_fate(method: str | None) -> str:
    """What becomes of a grade set's stale grades, in words: the next `grade` grades those pairs again; an
    ensemble is never graded, it is derived again from its members' grades."""
    if method == "ensemble":
        return ("an ensemble is never graded: it is derived again from its members' grades, so these cells come "
                "back once its members grade those pairs again (`grade` with each member's options)")
    return "the next `grade` grades those pairs again"


def check_judged_relevant(store: Store, judged_relevant: int) -> None:
    """A relevance level of human judgments must be reachable by the store's judgments (else every passage is
    non-relevant), and 1 or more (at 0 every judged passage would count as relevant)."""
    check_numbers({"judged_relevant": judged_relevant})
    top = store.corpus.max_judgment()
    if top is not None and judged_relevant > top:
        raise UsageError(f"{{judged_relevant}} {judged_relevant}: no judgment reaches it (the store's judgments go up "
                         f"to {top})", params=("judged_relevant",))
