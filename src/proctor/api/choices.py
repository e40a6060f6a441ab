"""The one check of the API's modes (`Literal` parameters): a value outside them is refused naming the parameter,
as argparse's `choices` refuse it on the command line."""

from __future__ import annotations

from typing import Any, get_args

from proctor.errors import UsageError


def check_choice(name: str, value: Any, mode: Any) -> None:
    """Refuse `value` for parameter `name` unless it is one of the `Literal` `mode`'s values (None passes)."""
    allowed = get_args(mode)
    if value is not None and value not in allowed:
        raise UsageError(f"{{{name}}} {value!r}: choose one of {', '.join(allowed)}", params=(name,))
