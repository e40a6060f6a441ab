"""The checks of the kinds of option values the options layer cannot judge itself (`proctor.options.kinds`):
measure names, by the measure registry (`proctor.evaluate.measures`, loaded when a model names a measure other
than its default). The door, `proctor.api`, imports this module, so a model built by a notebook or a command is
refused an unknown measure when it is built."""

from __future__ import annotations

from proctor.options.kinds import register_kind


def measure_name(text: str) -> str:
    """The canonical name of a measure over labels (`P.20` → `P@20`); an unknown one is a `UsageError`."""
    from proctor.evaluate.measures import parse_measure

    return parse_measure(text).name


def any_measure_name(text: str) -> str:
    """The canonical name of any measure a leaderboard scores (over labels, or read from grades: `Cover(rel=3)@20`)."""
    from proctor.evaluate.measures import parse_any_measure

    return parse_any_measure(text).name


register_kind("measure", measure_name)
register_kind("any measure", any_measure_name)
