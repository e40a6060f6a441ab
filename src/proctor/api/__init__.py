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
from pathlib import Path
from typing import Any

# the API's concepts, one module each (proctor.api.<module>), re-exported here
from proctor.api.agreement import Agreement as Agreement
from proctor.api.agreement import agreement as agreement
from proctor.api.correlation import Correlation as Correlation
from proctor.api.correlation import correlate as correlate
from proctor.api.correlation import correlation as correlation
from proctor.api.correlation import official_leaderboard as official_leaderboard
from proctor.api.gradesets import Ensemble as Ensemble
from proctor.api.gradesets import GradeSetChange as GradeSetChange
from proctor.api.gradesets import GradeSetListing as GradeSetListing
from proctor.api.gradesets import drop_grade_set as drop_grade_set
from proctor.api.gradesets import ensemble as ensemble
from proctor.api.gradesets import grade_sets as grade_sets
from proctor.api.gradesets import retry_failed as retry_failed
from proctor.api.labels import DEFAULT_FLOOR as DEFAULT_FLOOR
from proctor.api.labels import DEFAULT_MIN_GRADED as DEFAULT_MIN_GRADED
from proctor.api.labels import DEFAULT_MIN_QUERIES as DEFAULT_MIN_QUERIES
from proctor.api.labels import Coverage as Coverage
from proctor.api.labels import Floor as Floor
from proctor.api.labels import LabelChoice as LabelChoice
from proctor.api.labels import QrelsReport as QrelsReport
from proctor.api.labels import labels_coverage as labels_coverage
from proctor.api.labels import qrels as qrels
from proctor.api.labels import qrels_report as qrels_report
from proctor.api.leaderboards import LeaderboardReport as LeaderboardReport
from proctor.api.leaderboards import add_intervals as add_intervals
from proctor.api.leaderboards import known_measures as known_measures
from proctor.api.leaderboards import leaderboard as leaderboard
from proctor.api.leaderboards import leaderboard_report as leaderboard_report
from proctor.api.leaderboards import leaderboards as leaderboards
from proctor.api.modes import Correction as Correction
from proctor.api.modes import LeaderboardFormat as LeaderboardFormat
from proctor.api.modes import Metric as Metric
from proctor.api.modes import Missing as Missing
from proctor.api.modes import Normalize as Normalize
from proctor.api.modes import Rule as Rule
from proctor.api.modes import TableFormat as TableFormat
from proctor.api.modes import Tests as Tests
from proctor.api.modes import TextFormat as TextFormat
from proctor.api.modes import Ties as Ties
from proctor.api.rendering import as_rows as as_rows
from proctor.api.rendering import render as render
from proctor.api.rendering import to_frame as to_frame
from proctor.api.reports import DEFAULT_MEASURES as DEFAULT_MEASURES
from proctor.api.reports import analyze_report as analyze_report
from proctor.api.results import Notice as Notice
from proctor.api.results import Report as Report
from proctor.api.significance import ComparisonReport as ComparisonReport
from proctor.api.significance import SignificanceSettings as SignificanceSettings
from proctor.api.significance import compare as compare
from proctor.api.significance import compare_file as compare_file
from proctor.api.significance import significance as significance
from proctor.api.stores import DEFAULT_LOCK_TIMEOUT as DEFAULT_LOCK_TIMEOUT
from proctor.api.stores import StoreError as StoreError
from proctor.api.stores import StoreInfo as StoreInfo
from proctor.api.stores import info as info
from proctor.api.stores import info_text as info_text
from proctor.api.stores import open_store as open_store
from proctor.api.trust import ATTACKS as ATTACKS
from proctor.api.trust import GUARDS as GUARDS
from proctor.api.trust import Calibration as Calibration
from proctor.api.trust import ProbeReport as ProbeReport
from proctor.api.trust import calibrate as calibrate
from proctor.api.trust import probe as probe
from proctor.api.trust import render_probe as render_probe
from proctor.api.trust import to_review as to_review
from proctor.bank.generate import generate_bank as generate_bank  # `proctor bank generate` for (query_id, text)
from proctor.errors import UsageError
from proctor.importing import ImportOptions, ImportReport, import_files
from proctor.records import GradeSet
from proctor.store import Store


def import_into(store: Store, kind: str, paths: Sequence[str | Path], **options: Any) -> list[ImportReport]:
    """Import files of one kind (see `ImportOptions` for the options), all or nothing."""
    return import_files(store, kind, list(paths), ImportOptions(**options))


def grade(store: Store, method: str, llm: str, **options: Any) -> tuple[GradeSet, list]:
    """Grade one grade set; `options` are `GradeOptions` fields, `BackendConfig` fields and `aggregate`,
    `thresholds`, `templates`, `prefilter`. Returns the grade set and one summary per step."""
    from proctor.grading import grade as grade_async

    request = grade_request(method, llm, **options)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(grade_async(store, request))
    return _in_own_thread(store, request)


def grade_request(method: str, llm: str, **options: Any):
    """The `GradeRequest` that `grade` runs (options as for `grade`), checked before any work."""
    from proctor.grading import GradeOptions, GradeRequest
    from proctor.llm.config import BackendConfig

    backend = {k: options.pop(k) for k in list(options) if k in BackendConfig.__dataclass_fields__}
    request_fields = {k: options.pop(k) for k in list(options) if k in ("aggregate", "thresholds", "templates",
                                                                         "prefilter")}
    config = BackendConfig(spec=llm, **backend)
    config.check()
    return GradeRequest(method, config, GradeOptions(**options), **request_fields)


def ungraded(store: Store, method: str, llm: str, **options: Any) -> list[tuple[str, str, str]]:
    """The (query, passage, item) pairs `grade` (same arguments) would still send to the LLM; sends nothing."""
    from proctor.grading import ungraded

    return ungraded(store, grade_request(method, llm, **options))


def _in_own_thread(store: Store, request) -> tuple[GradeSet, list]:
    """Inside a running event loop (Jupyter) the grading runs on a thread of its own, with its own loop and
    its own connection to the same store (SQLite connections stay in the thread that made them)."""
    from concurrent.futures import ThreadPoolExecutor

    from proctor.grading import grade as grade_async

    def work() -> tuple[GradeSet, list]:
        own = Store.open(store.path)
        try:
            return asyncio.run(grade_async(own, request))
        finally:
            own.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(work).result()


def export_runs(store: Store, folder: str | Path) -> dict[str, int]:
    """Write every stored run as a TREC run file named as the run into `folder` (what `proctor export runs`
    does); returns the lines written per run."""
    from proctor.exporting import write_runs

    return write_runs(store, folder)


def export_judgments(store: Store) -> str:
    """The imported human judgments as a qrels text (`qid 0 docid rel`; what `proctor export judgments`
    prints)."""
    from proctor.exporting import judgment_lines

    lines = judgment_lines(store)
    if not lines:
        raise UsageError(f"{store.path}: no judgments in the store (import them with `proctor import qrels`)")
    return "".join(lines)
