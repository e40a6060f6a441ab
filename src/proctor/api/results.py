"""What every result of the API has in common (`Result`): it is frozen, `to_json()` gives the JSON-ready data
that `--format json` prints (parsed), and `render(fmt)` writes it as text in one of its `formats`. `Report` is the
base of the results that are a JSON object (a read-only `dict`, as the API has always returned them) with typed
properties for what a caller reads from it; `DataResult` the base of frozen dataclasses whose JSON is one field."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

from proctor.outputs import format_of, json_text
from proctor.records import FrozenDict, frozen

JSON = str | int | float | bool | None | list["JSON"] | dict[str, "JSON"]
"""A value of a JSON document, as the reports hold them."""


@runtime_checkable
class Result(Protocol):
    """A result of the API: frozen, with its JSON-ready data and its text in each of its formats."""

    formats: ClassVar[tuple[str, ...]]
    """The formats `render` writes, the default first."""

    def to_json(self) -> JSON:
        """The JSON-ready data (dicts, lists, strings, numbers): what `render("json")` writes, parsed."""
        ...

    def render(self, fmt: str | None = None) -> str:
        """The result as text in `fmt` (None: the first of `formats`)."""
        ...


class Report(FrozenDict):
    """A report: the JSON object `--format json` prints (read-only), rendered by `render(fmt)` in its `formats`.
    Attributes beside the JSON (declared in `attributes`, e.g. the plot drawn of it) are given as keywords."""

    formats: ClassVar[tuple[str, ...]] = ("json",)
    attributes: ClassVar[tuple[str, ...]] = ()

    def __init__(self, data: Mapping[str, Any] | Iterable[tuple[str, Any]], /, **attributes: Any) -> None:
        super().__init__(data)
        for name in self.attributes:
            object.__setattr__(self, name, attributes.pop(name, getattr(type(self), name, None)))
        if attributes:
            raise TypeError(f"{type(self).__name__} has no attribute {', '.join(attributes)}")

    def __reduce__(self) -> tuple[Any, ...]:
        return _report, (type(self), dict(self), {name: getattr(self, name) for name in self.attributes})

    def replace(self, **changes: Any) -> Any:
        """The same report (and attributes) with the keys or attributes of `changes` changed."""
        data = {**self, **{k: v for k, v in changes.items() if k not in self.attributes}}
        kept = {name: changes.get(name, getattr(self, name)) for name in self.attributes}
        return type(self)(data, **kept)

    def to_json(self) -> JSON:
        """The report as plain JSON data: what `render("json")` writes, parsed."""
        return json.loads(self.as_json())

    def render(self, fmt: str | None = None) -> str:
        """The report as text in `fmt` (default: the first of `formats`)."""
        fmt = format_of(self, fmt)
        return self.as_json() if fmt == "json" else self.as_text(fmt)

    def as_json(self) -> str:
        """The report as indented JSON, with a final newline."""
        return json_text(self)

    def as_text(self, fmt: str) -> str:
        """The report in a format other than JSON (each report its own)."""
        raise NotImplementedError(fmt)


def _report(cls: type[Report], data: dict[str, Any], attributes: dict[str, Any]) -> Report:
    return cls(data, **attributes)


class DataResult:
    """The base of results that are frozen dataclasses whose JSON is one of their fields (`json_field`, a JSON
    object or array, frozen when the result is made): `render` writes it as JSON or with `as_text`."""

    formats: ClassVar[tuple[str, ...]] = ("json",)
    json_field: ClassVar[str] = "data"

    def __post_init__(self) -> None:
        object.__setattr__(self, self.json_field, frozen(getattr(self, self.json_field)))

    def to_json(self) -> JSON:
        """The JSON-ready data: what `render("json")` writes, parsed."""
        return json.loads(json_text(getattr(self, self.json_field)))

    def render(self, fmt: str | None = None) -> str:
        """The result as text in `fmt` (default: the first of `formats`)."""
        fmt = format_of(self, fmt)  # type: ignore[arg-type]
        return json_text(getattr(self, self.json_field)) if fmt == "json" else self.as_text(fmt)

    def as_text(self, fmt: str) -> str:
        """The result in a format other than JSON (each its own)."""
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
