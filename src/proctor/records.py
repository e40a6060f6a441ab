"""Plain records shared by readers, the store and the engine: a grade, and a grade set (one experiment's
identity). No I/O here."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn


@dataclass(frozen=True)
class Grade:
    """One grade: how well `passage_id` answers `question_id` (empty for direct relevance methods).

    `method` is the step that produced it (the method itself for single-step methods); `model` and
    `prompt_version` describe the reply's origin and come from the grade set when read back."""

    query_id: str
    passage_id: str
    question_id: str
    method: str
    model: str
    prompt_version: str
    grade: int | None
    parse_status: str
    raw_reply: str | None = None
    answer: str | None = None
    correct: bool | None = None
    extra: dict[str, Any] | None = None


def grade_set_id(method: str, model: str, prompt_version: str, bank: str | None, bank_version: str | None,
                 params: dict[str, Any]) -> str:
    """The short stable id of a grade set: a digest of everything that changes its grades."""
    blob = json.dumps({"method": method, "model": model, "prompt_version": prompt_version, "bank": bank,
                       "bank_version": bank_version, "params": params}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:10]


@dataclass(frozen=True)
class GradeSet:
    """What one experiment produced: bank version + method + model + prompt version + reply-changing
    parameters. `label_step` is the step whose grades become labels."""

    method: str
    model: str
    prompt_version: str
    bank: str | None
    bank_version: str | None
    params: dict[str, Any] = field(default_factory=dict)
    label_step: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    grades: int = 0
    failures: int = 0
    created: str | None = None

    @property
    def id(self) -> str:
        """The grade set's id (see `grade_set_id`)."""
        return grade_set_id(self.method, self.model, self.prompt_version, self.bank, self.bank_version,
                            self.params)

    @property
    def step(self) -> str:
        """The step whose grades are the labels."""
        return self.label_step or self.method

    @property
    def is_ensemble(self) -> bool:
        """A derived grade set combining others (`proctor ensemble`): method `ensemble`, marked so in its info."""
        return self.method == "ensemble" and bool(self.info.get("ensemble"))

    @property
    def members(self) -> list[str]:
        """An ensemble's member grade set ids, in its order (none for other grade sets)."""
        return list(self.params.get("members", [])) if self.is_ensemble else []

    @property
    def variant(self) -> str:
        """The method's name as reports show it: its label step where that names a variant
        (`four-prompts-sum`), else the method."""
        return self.step if self.step.startswith(self.method) else self.method

    @property
    def bank_label(self) -> str:
        """`name@version`, or `-` for grade sets that grade the query itself."""
        if self.bank is None:
            return "-"
        return f"{self.bank}@{self.bank_version}" if self.bank_version else self.bank

    @property
    def intermediate(self) -> bool:
        """Grade sets kept only as input to another step (migrated stores' `criteria`, generated queries)."""
        return bool(self.info.get("intermediate"))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, with the fields every output names."""
        return {"id": self.id, "method": self.method, "model": self.model, "bank": self.bank_label,
                "prompt_version": self.prompt_version, "params": self.params, "label_step": self.step,
                "grades": self.grades, "failures": self.failures, "created": self.created,
                **({"intermediate": True} if self.intermediate else {}), **({"empty": True} if not self.grades else {})}

    def identity(self) -> dict[str, Any]:
        """Every recorded field of the grade set with its id (what an exam_pp export carries in its `proctor`
        extension, so that an import gives the same grade set back)."""
        return {"id": self.id, "method": self.method, "model": self.model, "prompt_version": self.prompt_version,
                "bank": self.bank, "bank_version": self.bank_version, "params": self.params,
                "label_step": self.step, "info": self.info}

    def describe(self) -> str:
        """One line for listings and notes."""
        return (f"{self.id}  {self.method} / {self.model}  bank {self.bank_label}  prompt {self.prompt_version}  "
                f"{self.grades} grades, {self.failures} failed{'' if self.grades else ' (empty)'}")


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(f"a {type(self).__name__} is frozen: make a new one (`replace(...)`) instead")


class FrozenDict(dict[str, Any]):
    """A JSON object that cannot be changed (its objects and arrays neither); JSON writes it as a dict."""

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __init__(self, data: Mapping[str, Any] | Iterable[tuple[str, Any]] = (), /) -> None:
        dict.__init__(self, ((key, frozen(value)) for key, value in dict(data).items()))

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (dict(self),), None

    def __setattr__(self, name: str, value: object) -> None:
        _refuse(self)


class FrozenList(list[Any]):
    """A JSON array that cannot be changed; JSON writes it as a list."""

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = clear = extend = insert = pop = remove = reverse = sort = _refuse

    def __init__(self, items: Iterable[Any] = (), /) -> None:
        list.extend(self, (frozen(item) for item in items))

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (list(self),)


def frozen(value: Any) -> Any:
    """A JSON value that cannot be changed: objects as `FrozenDict`, arrays as `FrozenList`, the rest as is."""
    if isinstance(value, FrozenDict | FrozenList):
        return value
    if isinstance(value, Mapping):
        return FrozenDict(value)
    if isinstance(value, list):
        return FrozenList(value)
    return value
