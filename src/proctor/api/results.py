"""What the API's reports have in common: a JSON object (a `dict`, as the API has always returned it) that
knows how to render itself, with typed properties for what a caller reads from it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import ClassVar, Protocol

from proctor.errors import UsageError

JSON = str | int | float | bool | None | list["JSON"] | dict[str, "JSON"]
"""A value of a JSON document, as the reports hold them."""


class Rendered(Protocol):
    """What `api.render` writes: a result that renders itself in one of its formats."""

    def render(self, fmt: str | None = None) -> str:
        """The result as text in `fmt` (None: its default)."""
        ...


class Report(dict[str, JSON]):
    """A report: the JSON object `--format json` prints, rendered by `render(fmt)` in its `formats`."""

    formats: ClassVar[tuple[str, ...]] = ("json",)

    def render(self, fmt: str | None = None) -> str:
        """The report as text in `fmt` (default: the first of `formats`)."""
        fmt = fmt or self.formats[0]
        if fmt not in self.formats:
            raise UsageError(f"unknown format {fmt!r}: {', '.join(self.formats)}")
        return self.as_json() if fmt == "json" else self.as_text(fmt)

    def as_json(self) -> str:
        """The report as indented JSON, with a final newline."""
        return json.dumps(self, indent=2) + "\n"

    def as_text(self, fmt: str) -> str:
        """The report in a format other than JSON (each report its own)."""
        raise NotImplementedError(fmt)


class Notice(str):
    """A sentence of a report that names parameters as `{name}` markers, as `UsageError` does: as a `str` it
    spells them as the API's parameter names; `spelled(names)` as the caller writes them (the CLI: its flags)."""

    template: str
    params: tuple[str, ...]

    def __new__(cls, template: str, params: Sequence[str] = ()) -> Notice:
        """The notice, spelled with the parameter names."""
        notice = super().__new__(cls, _spell(template, params, {}))
        notice.template, notice.params = template, tuple(params)
        return notice

    def spelled(self, names: Mapping[str, str]) -> str:
        """The sentence with each parameter named by `names` (parameter → how the caller writes it)."""
        return _spell(self.template, self.params, names)


def _spell(template: str, params: Sequence[str], names: Mapping[str, str]) -> str:
    for param in params:
        template = template.replace("{" + param + "}", names.get(param, param))
    return template
