"""The Python API: what the command line does, for notebooks and scripts. The CLI and the demo are thin
layers over it.

    from proctor import api
    store = api.open_store("dl19.db")
    board = api.leaderboard(store, "P@20", min_grade=3)                # one grade set, or UsageError
    print(api.render(board, "md"))

`from proctor import api` is cheap: each name is imported from its module (`proctor.api.<module>`, one concept
each) when first used, so a command loads only what it runs (`proctor leaderboard` never imports bank generation
or the grading engine). Type checkers read the same names from the imports under `TYPE_CHECKING` below; a test
keeps the two lists equal.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from proctor.api import kinds as _kinds  # noqa: F401  (registers the option models' measure checks)
from proctor.api.lazy import lazy_names

_NAMES = {
    "proctor.api.agreement": "agreement",
    "proctor.api.bank_generation": "generate_bank",
    "proctor.api.banks": "bank_diff bank_impact",
    "proctor.api.correlation": "correlate",
    "proctor.api.gradesets": "drop_grade_set ensemble grade_sets retry_failed",
    "proctor.api.grading": "grade ungraded",
    "proctor.api.inputs": "export import_files",
    "proctor.api.labels": "Floor LabelChoice labels",
    "proctor.api.leaderboards": "leaderboard measures",
    "proctor.api.ppi": "ppi",
    "proctor.api.rendering": "as_rows render to_frame",
    "proctor.api.reports": "analyze",
    "proctor.api.significance": "compare",
    "proctor.api.stores": "info open_store",
    "proctor.api.trust": "calibrate probe review_queue",
    "proctor.api.verification": "verify",
    "proctor.errors": "UsageError",
    "proctor.options.analysis": "AnalysisOptions VerifyOptions",
    "proctor.options.backend": "BackendOptions",
    "proctor.options.calibration": "CalibrationOptions PPIOptions",
    "proctor.options.correlation": "AgreementOptions CorrelationOptions",
    "proctor.options.grading": "GradingOptions",
    "proctor.options.inputs": "ImportOptions",
    "proctor.options.probe": "ProbeOptions",
    "proctor.options.review": "ReviewOptions",
    "proctor.options.significance": "SignificanceOptions",
    "proctor.records": "GradeSet",
    "proctor.store": "Store",
}
"""Module → the public names it gives the API."""

_WHERE, __all__, __getattr__, __dir__ = lazy_names(__name__, _NAMES)


class _Api(ModuleType):
    """This package, whose functions `agreement`, `labels` and `ppi` share their
    names with the modules that define them: importing such a module must not put it in the function's place (as
    the import system does with a package's submodules), so the name keeps meaning the function."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, ModuleType) and name in _WHERE and value.__name__ == f"{__name__}.{name}":
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Api

if TYPE_CHECKING:  # the names of `_NAMES`, for type checkers and editors
    from proctor.api.agreement import agreement as agreement
    from proctor.api.bank_generation import generate_bank as generate_bank
    from proctor.api.banks import bank_diff as bank_diff
    from proctor.api.banks import bank_impact as bank_impact
    from proctor.api.correlation import correlate as correlate
    from proctor.api.gradesets import drop_grade_set as drop_grade_set
    from proctor.api.gradesets import ensemble as ensemble
    from proctor.api.gradesets import grade_sets as grade_sets
    from proctor.api.gradesets import retry_failed as retry_failed
    from proctor.api.grading import grade as grade
    from proctor.api.grading import ungraded as ungraded
    from proctor.api.inputs import export as export
    from proctor.api.inputs import import_files as import_files
    from proctor.api.labels import Floor as Floor
    from proctor.api.labels import LabelChoice as LabelChoice
    from proctor.api.labels import labels as labels
    from proctor.api.leaderboards import leaderboard as leaderboard
    from proctor.api.leaderboards import measures as measures
    from proctor.api.ppi import ppi as ppi
    from proctor.api.rendering import as_rows as as_rows
    from proctor.api.rendering import render as render
    from proctor.api.rendering import to_frame as to_frame
    from proctor.api.reports import analyze as analyze
    from proctor.api.significance import compare as compare
    from proctor.api.stores import info as info
    from proctor.api.stores import open_store as open_store
    from proctor.api.trust import calibrate as calibrate
    from proctor.api.trust import probe as probe
    from proctor.api.trust import review_queue as review_queue
    from proctor.api.verification import verify as verify
    from proctor.errors import UsageError as UsageError
    from proctor.options.analysis import AnalysisOptions as AnalysisOptions
    from proctor.options.analysis import VerifyOptions as VerifyOptions
    from proctor.options.backend import BackendOptions as BackendOptions
    from proctor.options.calibration import CalibrationOptions as CalibrationOptions
    from proctor.options.calibration import PPIOptions as PPIOptions
    from proctor.options.correlation import AgreementOptions as AgreementOptions
    from proctor.options.correlation import CorrelationOptions as CorrelationOptions
    from proctor.options.grading import GradingOptions as GradingOptions
    from proctor.options.inputs import ImportOptions as ImportOptions
    from proctor.options.probe import ProbeOptions as ProbeOptions
    from proctor.options.review import ReviewOptions as ReviewOptions
    from proctor.options.significance import SignificanceOptions as SignificanceOptions
    from proctor.records import GradeSet as GradeSet
    from proctor.store import Store as Store
