"""What the commands use and a notebook does not: the checked requests and whole-command reports (`*_request`,
`*_report`, `grade_job`, ...) that `proctor.cli` and the review app build from a command line or a form, and the
formats and kinds their options offer. `proctor.api` keeps the verbs; `proctor.api.commands` is imported by the
command line and the review app only (a test keeps it so). Each name is imported from its module when first
used, as `proctor.api`'s are."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_NAMES: dict[str, str] = {
    "proctor.api.correlation": "official_leaderboard",
    "proctor.api.significance": "ComparisonReport significance",
    "proctor.api.trust": "CalibrationRequest calibration_request",
}
"""Module → the command plumbing it gives (moved here from `proctor.api`'s names)."""

_WHERE = {name: module for module, names in _NAMES.items() for name in names.split()}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    """`commands.leaderboard_report`, ...: imported from its module when first used, then kept here."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The command plumbing's names, loaded or not."""
    return sorted(set(globals()) | set(_WHERE))
