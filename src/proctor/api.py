"""The Python API: what the command line does, for notebooks and scripts. The CLI and the demo are thin
layers over it.

    from proctor import api
    store = api.open_store("dl19.db")
    board = api.leaderboard(store, measure="P@20", min_grade=3)        # one grade set, or UsageError
    print(api.render(board, "md"))
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proctor.errors import UsageError
from proctor.evaluate.labels import LabelStats, binarize
from proctor.evaluate.leaderboard import Leaderboard, cover_leaderboard, measure_leaderboard
from proctor.evaluate.measures import MeasureSpec, parse_measure
from proctor.evaluate.render import to_json, to_markdown, to_tsv
from proctor.evaluate.sources import (
    cover_table,
    describe,
    exam_qrels,
    load_runs,
    official_or_file_qrels,
    resolve_grade_set,
)
from proctor.importing import ImportOptions, ImportReport, import_files
from proctor.records import GradeSet
from proctor.store import Store


def open_store(path: str | Path, *, create: bool = False) -> Store:
    """Open a store (creating it with `create`)."""
    return Store.create_or_open(path) if create else Store.open(path)


def import_into(store: Store, kind: str, paths: Sequence[str | Path], **options: Any) -> list[ImportReport]:
    """Import files of one kind (see `ImportOptions` for the options), all or nothing."""
    return import_files(store, kind, list(paths), ImportOptions(**options))


def grade(store: Store, method: str, llm: str, **options: Any) -> tuple[GradeSet, list]:
    """Grade one grade set; `options` are `GradeOptions` fields, `BackendConfig` fields and `aggregate`,
    `thresholds`, `templates`, `prefilter`. Returns the grade set and one summary per step."""
    from proctor.grading import GradeOptions, GradeRequest
    from proctor.grading import grade as grade_async
    from proctor.llm.config import BackendConfig

    backend = {k: options.pop(k) for k in list(options) if k in BackendConfig.__dataclass_fields__}
    request_fields = {k: options.pop(k) for k in list(options) if k in ("aggregate", "thresholds", "templates",
                                                                         "prefilter")}
    config = BackendConfig(spec=llm, **backend)
    config.check()
    request = GradeRequest(method, config, GradeOptions(**options), **request_fields)
    return asyncio.run(grade_async(store, request))


@dataclass(frozen=True)
class LabelChoice:
    """Which grade set, and how its grades become labels."""

    grade_set: str | None = None
    method: str | None = None
    model: str | None = None
    bank: str | None = None
    min_questions: int = 1
    facets: bool = False

    def resolve(self, store: Store) -> GradeSet:
        """The one grade set this choice names (else a UsageError listing the candidates)."""
        return resolve_grade_set(store, self.grade_set, self.method, self.model, self.bank)


def qrels(store: Store, labels: LabelChoice = LabelChoice(), *, binary_min_grade: int | None = None,
          stats: LabelStats | None = None) -> tuple[GradeSet, dict[str, dict[str, int]]]:
    """EXAM-Qrels of one grade set (binary at `binary_min_grade` when given)."""
    grade_set = labels.resolve(store)
    result = exam_qrels(store, grade_set, min_questions=labels.min_questions, facets=labels.facets, stats=stats)
    return grade_set, binarize(result, binary_min_grade) if binary_min_grade is not None else result


def leaderboard(store: Store, *, measure: str | None = None, min_grade: int | None = None, metric: str = "qrels",
                labels: LabelChoice = LabelChoice(), judgments: str | None = None, budget: int = 20,
                missing: str | None = None, normalize: str | None = None, gold: str | None = None,
                runs: Sequence[str] | None = None) -> Leaderboard:
    """An EXAM-Qrels leaderboard (`measure`, `min_grade`; `judgments="official"` or a qrels file scores
    with human judgments instead) or an EXAM-Cover one (`metric="cover"`, `min_grade`, `budget`)."""
    spec = check_leaderboard(measure=measure, min_grade=min_grade, metric=metric, judgments=judgments,
                             budget=budget, normalize=normalize, gold=gold)
    ranked = load_runs(store, runs)
    if spec is None:
        grade_set = labels.resolve(store)
        if gold and gold not in ranked:
            raise UsageError(f"--gold {gold}: no such run (runs: {', '.join(sorted(ranked))})")
        table = cover_table(store, grade_set, min_grade)  # type: ignore[arg-type]
        return cover_leaderboard(ranked, table, budget=budget, missing=missing or "zero", normalize=normalize,
                                 gold=gold, description=describe(store, grade_set))
    if judgments:
        qrels_ = official_or_file_qrels(store, judgments)
        description = {"labels": "human judgments" if judgments == "official" else f"qrels file {judgments}"}
    else:
        grade_set, qrels_ = qrels(store, labels)
        description = describe(store, grade_set)
        description["label_rule"] = ("max grade over questions" if labels.min_questions == 1
                                     else f"{labels.min_questions}-th largest grade")
    return measure_leaderboard(ranked, qrels_, spec, min_grade, missing=missing or "skip", description=description)


def check_leaderboard(*, measure: str | None, min_grade: int | None, metric: str, judgments: str | None,
                      budget: int, normalize: str | None, gold: str | None) -> MeasureSpec | None:
    """Refuse contradictory options before any work; returns the measure (None for cover)."""
    if metric == "cover":
        if measure or judgments:
            raise UsageError("--metric cover takes no --measure or --qrels (it reads the grades directly)")
        if min_grade is None:
            raise UsageError("--metric cover needs --min-grade T (the smallest grade that answers a question)")
        if budget < 1:
            raise UsageError("--budget must be at least 1")
        if gold and normalize:
            raise UsageError("--gold RUN and --normalize pool are two different normalisers: choose one")
        return None
    if gold:
        raise UsageError("--gold applies to --metric cover only")
    if not measure:
        raise UsageError("--metric qrels needs --measure M (e.g. P@20 or ndcg_cut.10)")
    if normalize:
        raise UsageError("--normalize applies to --metric cover only")
    spec = parse_measure(measure)
    if spec.rel is not None and min_grade is not None and spec.rel != min_grade:
        raise UsageError(f"{measure} names rel={spec.rel} but --min-grade is {min_grade}")
    if not judgments and spec.rel is None and min_grade is None and spec.measure.uses_relevance_level:
        raise UsageError(f"{spec.name} on EXAM-Qrels needs --min-grade T (the smallest relevant grade)")
    return spec


def render(board: Leaderboard, fmt: str = "tsv", *, per_query: bool = False) -> str:
    """A leaderboard as `tsv`, `json` or `md` text."""
    if fmt == "tsv":
        return to_tsv(board)
    if fmt == "json":
        return to_json(board, per_query=per_query)
    if fmt == "md":
        return to_markdown(board)
    raise UsageError(f"unknown format {fmt!r}: tsv, json or md")


def info_text(counts: dict[str, Any]) -> str:
    """What `proctor info` prints: counts, bank versions, grade sets."""
    lines = [f"{key:<14} {counts[key]}" for key in ("store", "queries", "passages", "runs", "generated_runs",
                                                     "rankings", "judgments", "banks", "questions", "grades",
                                                     "failures")]
    for bank in counts["bank_versions"]:
        latest = " (latest)" if bank["latest"] else ""
        lines.append(f"bank           {bank['bank']}@{bank['version']}{latest}: {bank['questions']} items "
                     f"({bank['nuggets']} nuggets) from {bank['source']}")
    for s in counts["grade_sets"]:
        hidden = " (intermediate)" if s.get("intermediate") else ""
        lines.append(f"grade set      {s['id']}  {s['method']} / {s['model']}  bank {s['bank']}  prompt "
                     f"{s['prompt_version']}  {s['grades']} grades ({s['failures']} failed){hidden}")
    return "\n".join(lines) + "\n"
