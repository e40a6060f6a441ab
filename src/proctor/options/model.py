"""The one adapter between an options model and its doors. A model is a frozen dataclass whose fields are
declared with `option(...)`: the field gives the name, the type and the default, its `Option` the help text,
the flag's spelling, the argparse type and which backends or methods it applies to; the numeric rule is the
one of `proctor.options.numeric.RULES` under the same name. From a model this module derives the argparse
arguments (`add_options`), the keys of an experiment file's table with their types (`toml_keys`, checked by
`toml_value`), and AutoJudge workflow settings (`borrow`, coerced by `setting_value`)."""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from proctor.errors import UsageError
from proctor.options.kinds import canonical
from proctor.options.numeric import RULES, Rule, range_words, rule_problem

PATHS = "path or list of paths"
STRINGS = "string or list of strings"
INTS = "integer or list of integers"
"""The list types of experiment files: one value or a list of them."""

NOT_IN_TOML = "-"
"""`Option.toml` for an option the experiment file does not take."""


@dataclass(frozen=True)
class Option:
    """How one field of a model meets the outside: `help` (`{default}` is replaced by the default), `flag` (the
    command-line spelling; default `--name-with-dashes`; None with `cli=False`), `parse` (the argparse type;
    default the field's type), `action` (`store_true` for a flag without value, `append`, an argparse action
    class), `metavar`, `nargs`, `choices`,
    `toml` (the experiment file's type when it is not the field's: `PATHS`, `INTS`, ..., or `NOT_IN_TOML`),
    `toml_key` (its key there when it is not the field's name), `applies` (the backends or methods that use it),
    `cli_default` (the argparse default when it is not the field's: the text form of a list), `nargs` (argparse's,
    for an option that takes several words: `--runs A B`). Braces in `help` other than `{default}` are doubled."""

    help: str = ""
    flag: str | None = None
    parse: Callable[[str], Any] | None = None
    action: Any = None
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    toml: Any = None
    toml_key: str | None = None
    applies: tuple[str, ...] = ()
    cli: bool = True
    cli_default: Any = None
    nargs: str | None = None
    """argparse's `nargs` (`+`: one or more values after the flag)."""
    kind: str | None = None
    """A kind of value checked by a layer above (`measure`, `any measure`: `proctor.options.kinds`)."""


class Checked:
    """The base of every options model: a model is checked when it is built (and so when `replace` or `from_args`
    builds one), each value its field's rule: one of its `choices`, a number within its rule
    (`options.numeric.RULES` by name, else the range of its `int_in` parse), a name of its `kind`; then the model's
    own rules across its fields (`check`). A value left None (not given, or filled in later by the verb) is not
    checked; a model at its defaults costs one comparison per field (the defaults are checked by the tests)."""

    def __post_init__(self) -> None:
        check_model(self)

    def check(self) -> None:
        """The model's own rules across its fields (none unless the model says)."""


def check_model(options: Any, every: bool = False) -> None:
    """Refuse a model's values that break their field's rule (only those that differ from the default, unless
    `every`), then its rules across fields: a `UsageError` naming the parameter (`{name}`)."""
    model = type(options)
    given = [(name, getattr(options, name)) for name, found in fields_of(model).items()
             if every or not _is_default(getattr(options, name), found.default)]
    if not given:
        return
    for name, value in given:
        check_value(model, name, value)
    options.check()


def _is_default(value: Any, default: Any) -> bool:
    """The field's default itself, not a value equal to it of another type (`1.0` or `True` for `1`)."""
    return type(value) is type(default) and value == default


def check_value(model: type, name: str, value: Any) -> None:
    """Refuse `value` for the model's field `name` unless its choices, numeric rule and kind accept it (None
    passes)."""
    if value is None:
        return
    opt = spec(model, name)
    items = value if isinstance(value, tuple | list) else (value,)
    for item in items if opt.choices else ():
        if item not in opt.choices:  # type: ignore[operator]
            raise UsageError(f"{{{name}}} {item!r}: choose one of {', '.join(opt.choices)}", params=(name,))
    rule = numeric_rule(model, name)
    problem = rule_problem(rule, value) if rule is not None else None
    if problem is not None:
        raise UsageError("{" + name + "} " + problem, params=(name,))
    for item in items if opt.kind else ():
        canonical(opt.kind, item, name)  # type: ignore[arg-type]


def numeric_rule(model: type, name: str) -> Rule | None:
    """The rule of a numeric field: `RULES`' of its name, else its `int_in` parse's range (None: no rule)."""
    if base_type(type_of(model, name)) not in (int, float):
        return None
    return RULES.get(name) or getattr(spec(model, name).parse, "rule", None)


def option(default: Any = None, **settings: Any) -> Any:
    """A model's field: its default, and the `Option` (keyword arguments) that says how it meets the outside."""
    return dataclasses.field(default=default, metadata={"option": Option(**settings)})


def borrow(model: type, name: str, **changes: Any) -> Any:
    """A field declared by another model (its default and `Option`), for a model that takes some of its options
    (the AutoJudge settings, the seed of every command); `changes` replace settings of its `Option` other than the
    default (the help a command words its own way, `cli=True`)."""
    found = fields_of(model)[name]
    metadata = {**found.metadata, "from": model}
    if changes:
        metadata["option"] = dataclasses.replace(spec(model, name), **changes)
    return dataclasses.field(default=found.default, metadata=metadata)


@cache
def fields_of(model: type) -> dict[str, dataclasses.Field]:
    """The model's fields by name, in declaration order."""
    return {f.name: f for f in dataclasses.fields(model)}


@cache
def _hints(model: type) -> dict[str, Any]:
    return typing.get_type_hints(model)


def type_of(model: type, name: str) -> Any:
    """The type of a model's field, resolved (`int | None`)."""
    return _hints(model)[name]


def spec(model: type, name: str) -> Option:
    """The `Option` of a model's field (an empty one for a field declared without `option`)."""
    return fields_of(model)[name].metadata.get("option", Option())


def default(model: type, name: str) -> Any:
    """The default of a model's field: the one place it is written."""
    return fields_of(model)[name].default


def names(model: type) -> tuple[str, ...]:
    """The model's option names, in declaration order."""
    return tuple(fields_of(model))


def base_type(kind: Any) -> Any:
    """`int | None` → int; `tuple[str, ...]` stays itself."""
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        kinds = [k for k in typing.get_args(kind) if k is not type(None)]
        return kinds[0]
    return kind


def flag(model: type, name: str) -> str:
    """The command-line spelling of an option (`backoff_max` → `--backoff-max` unless declared otherwise)."""
    return spec(model, name).flag or "--" + name.replace("_", "-")


def add_options(parser: Any, model: type, *chosen: str, **defaults: Any) -> list[argparse.Action]:
    """Add the model's options `chosen` (every command-line option of the model when none is named), in that
    order, to an argparse parser or group; `defaults` replace the model's defaults for this command (None: no
    default). A repeatable option (`append`) has none: the values given replace the model's default. Returns the
    arguments added, in that order (a command may mark one required)."""
    added = []
    for name in chosen or [n for n in names(model) if spec(model, n).cli]:
        opt = spec(model, name)
        modelled = opt.cli_default if opt.cli_default is not None else default(model, name)
        value = defaults.get(name, None if opt.action == "append" else modelled)
        kwargs: dict[str, Any] = {"help": opt.help.format(default=modelled if value is None else value)}
        if flag(model, name) != "--" + name.replace("_", "-"):
            kwargs["dest"] = name
        if opt.action:
            kwargs["action"] = opt.action
        if opt.nargs:
            kwargs["nargs"] = opt.nargs
        if opt.action != "store_true":
            single = base_type(type_of(model, name))
            if opt.parse or (opt.action != "append" and single in (int, float)):
                kwargs["type"] = opt.parse or single
            if value is not None:
                kwargs["default"] = value
            for key in ("metavar", "choices", "nargs"):
                if getattr(opt, key) is not None:
                    kwargs[key] = getattr(opt, key)
        added.append(parser.add_argument(flag(model, name), **kwargs))
    return added


def from_args(model: type, args: argparse.Namespace, **given: Any) -> Any:
    """The model's instance from a parsed command line: each field the command added (by `add_options`) from its
    option, `given` for fields the command sets itself, the model's default for the rest."""
    values = {n: getattr(args, n) for n in names(model) if hasattr(args, n)}
    return model(**{**values, **given})


def toml_type(model: type, name: str) -> Any:
    """The type an experiment file's key takes (str, int, float, bool or a list type), or None."""
    opt = spec(model, name)
    if opt.toml == NOT_IN_TOML:
        return None
    if opt.toml is not None:
        return opt.toml
    single = base_type(type_of(model, name))
    if typing.get_origin(single) is tuple:
        return INTS if typing.get_args(single)[0] is int else STRINGS
    return single


def toml_keys(model: type) -> dict[str, Any]:
    """{key: type} of the experiment file's table for the model, in declaration order."""
    keys = {}
    for name in names(model):
        kind = toml_type(model, name)
        if kind is not None:
            keys[spec(model, name).toml_key or name] = kind
    return keys


def choices(model: type) -> dict[str, tuple[str, ...]]:
    """{key: the words it takes} for the experiment file's keys of the model that take one of a few words."""
    return {spec(model, n).toml_key or n: spec(model, n).choices or () for n in names(model)
            if spec(model, n).choices and toml_type(model, n) is str}


def toml_value(value: Any, expected: Any) -> Any:
    """The value in its canonical form (tuples for list types), or None when it has the wrong type."""
    if expected in (PATHS, STRINGS):
        values = [value] if isinstance(value, str) else value
        ok = isinstance(values, list) and all(isinstance(v, str) and v for v in values)
        return tuple(values) if ok else None
    if expected == INTS:
        values = [value] if isinstance(value, int) and not isinstance(value, bool) else value
        ok = isinstance(values, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in values)
        return tuple(values) if ok and values else None
    if expected is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return float(value) if ok else None
    if expected is int:
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    return value if isinstance(value, expected) else None


def type_name(expected: Any) -> str:
    """How an experiment file's type is named in messages."""
    if isinstance(expected, str):
        return f"{'an' if expected[0] in 'aeiou' else 'a'} {expected}"
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}[expected]


def setting_value(key: str, value: Any, kind: Any) -> Any:
    """A workflow setting's YAML value as the field's type (`--set k=v` gives strings and numbers)."""
    kind = str(kind)
    if kind.startswith("tuple"):
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not all(isinstance(v, str) for v in items):
            raise UsageError(f"workflow setting {key}: a measure name or a list of them, not {value!r}")
        return tuple(items)
    if kind == "int" and not isinstance(value, bool):
        if isinstance(value, int):
            return value
    elif kind == "float" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    elif kind.startswith("str") and (isinstance(value, str) or (value is None and "None" in kind)):
        return value
    raise UsageError(f"workflow setting {key}={value!r}: expected {kind.replace(' | None', '')}")


def int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer within [low, high]; anything else exits 2 naming the option and range."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {range_words(low, high)} (got {value})")
        return value
    parse.__name__ = "integer"
    parse.rule = Rule(low, high, integer=True)  # type: ignore[attr-defined]  (the model's check at construction)
    return parse


def fraction(text: str) -> float:
    """An argparse type: a number between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}")
    return value


MAX_GRADE = 5
"""Grades and labels are 0-5 (direct relevance methods use part of that range)."""

GRADE = int_in(1, MAX_GRADE)
"""A threshold τ on grades: 1..5."""
