"""Checks of option values the options layer cannot judge itself: a measure name is known to the measure registry
(`proctor.evaluate.measures`), a layer above this one. That layer's door, `proctor.api`, registers the check of each
kind here when it is imported (cheaply: the registry itself loads when a value is checked); a model built before
it was imported leaves such values to the verb that reads them, which checks them before any work."""

from __future__ import annotations

from collections.abc import Callable

from proctor.errors import UsageError

KINDS: dict[str, Callable[[str], str]] = {}
"""The check of each kind of value by its name (`measure`, `any measure`): it returns the value's canonical name
(`P.20` → `P@20`) or raises a `UsageError` saying what is wrong."""


def register_kind(kind: str, check: Callable[[str], str]) -> None:
    """Check values of `kind` with `check` from now on."""
    KINDS[kind] = check


def canonical(kind: str, value: str, name: str | None = None) -> str | None:
    """The canonical name of `value` (a `UsageError` when it is wrong), or None when no check of `kind` is
    registered. With `name` (the parameter that gave it) the refusal ends by naming it: the check's own words,
    then `; given as {name}`, which the command line spells as its flag (`; given as --plot-measure`)."""
    check = KINDS.get(kind)
    if check is None:
        return None
    if name is None:
        return check(value)
    try:
        return check(value)
    except UsageError as refused:
        raise UsageError(f"{refused.template}; given as {{{name}}}", params=(*refused.params, name)) from None
