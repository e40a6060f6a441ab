"""The types of what the verbs of `proctor.api` return and take, for annotations and `isinstance` checks in a
notebook: the results (each renders itself: `render(fmt)`, `to_json()`), the modes a parameter takes (`Literal`
types) and the coverage floors' defaults. `from proctor.api.types import Leaderboard, Correlation, Missing`.
Each name is imported from its module when first used, as `proctor.api`'s are."""

from __future__ import annotations

from proctor.api.lazy import lazy_names

_NAMES: dict[str, str] = {
    "proctor.api.agreement": "Agreement",
    "proctor.api.bank_generation": "Generated",
    "proctor.api.banks": "BankDiff BankImpact",
    "proctor.api.correlation": "Correlation",
    "proctor.api.gradesets": "Ensemble GradeSetChange GradeSetListing",
    "proctor.api.grading": "Graded",
    "proctor.api.inputs": "Exported",
    "proctor.api.labels": "DEFAULT_FLOOR DEFAULT_MIN_GRADED DEFAULT_MIN_QUERIES Coverage QrelsReport",
    "proctor.api.leaderboards": "LeaderboardReport MeasureListing",
    "proctor.api.modes": "Correction LeaderboardFormat Missing Rule TableFormat Tests TextFormat Ties",
    "proctor.api.ppi": "PPICalibration PPILeaderboard",
    "proctor.api.rendering": "Leaderboards",
    "proctor.api.results": "DataResult Notice Report Result",
    "proctor.api.significance": "ComparisonReport",
    "proctor.api.stores": "StoreInfo",
    "proctor.api.trust": "Calibration ProbeReport",
    "proctor.api.verification": "Verification",
    "proctor.evaluate.leaderboard": "Leaderboard",
    "proctor.stats.pairs": "Comparison",
}
"""Module → the types it gives."""

_WHERE, __all__, __getattr__, __dir__ = lazy_names(__name__, _NAMES)
