"""Names imported from their modules when first used: the one mechanism behind `proctor.api`, `proctor.api.types`
and `proctor.api.commands`, so `from proctor import api` loads only what a caller uses (a command only what it
runs)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_names(module: str, names: Mapping[str, str]) -> tuple[dict[str, str], list[str], Callable[[str], Any],
                                                                  Callable[[], list[str]]]:
    """For the module named `module` and its `names` (module → its names, space-separated): where each name lives,
    the sorted names (`__all__`), and the module's `__getattr__` and `__dir__`."""
    where = {name: source for source, listed in names.items() for name in listed.split()}

    def __getattr__(name: str) -> Any:
        """The name imported from its module when first used, then kept in this module."""
        if name not in where:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(import_module(where[name]), name)
        setattr(sys.modules[module], name, value)
        return value

    def __dir__() -> list[str]:
        """The names, loaded or not."""
        return sorted(set(vars(sys.modules[module])) | set(where))

    return where, sorted(where), __getattr__, __dir__
