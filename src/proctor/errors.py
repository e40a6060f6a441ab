"""Errors a user can act on: bad input (file and line) and bad usage. The CLI turns them into exit status 2."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence


class ProctorError(Exception):
    """An error with a message meant for the user; the CLI prints it without a traceback."""

    params: tuple[str, ...] = ()
    """The parameters the message names as `{name}` markers (see `UsageError`)."""

    def spelled(self, names: Mapping[str, str]) -> str:
        """The message with each parameter named by `names` (an error naming none: its message)."""
        return str(self)


def _spell(template: str, params: Sequence[str], names: Mapping[str, str]) -> str:
    for param in params:
        template = template.replace("{" + param + "}", names.get(param, param))
    return template


class InputError(ProctorError):
    """Bad input: names the file and, where known, the line. A message that tells which parameter would accept
    the input names it as a `{name}` marker listed in `params`, as `UsageError`'s do."""

    def __init__(self, path: str, line: int | None, message: str, *, params: Sequence[str] = ()) -> None:
        self.path = str(path)
        self.line = line
        self.template = message
        self.params = tuple(params)
        self.message = _spell(message, self.params, {})
        super().__init__(self.spelled({}))

    def spelled(self, names: Mapping[str, str]) -> str:
        """The message (file, line and what is wrong) with each parameter named by `names`."""
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {_spell(self.template, self.params, names)}"


class UsageError(ProctorError):
    """A request that cannot be carried out as asked (missing store, ambiguous method, ...).

    A message about parameters names them as `{name}` markers listed in `params`: `str(error)` spells them as
    the API's parameter names, and the CLI spells them as its flags (`spelled`), so both refuse the same thing
    with the same words: `UsageError("{metric} cover takes no {measure}", params=("metric", "measure"))` reads
    "metric cover takes no measure" from Python and "--metric cover takes no --measure" from the shell.
    """

    def __init__(self, message: str, *, params: Sequence[str] = ()) -> None:
        self.template = message
        self.params = tuple(params)
        super().__init__(self.spelled({}))

    def spelled(self, names: Mapping[str, str]) -> str:
        """The message with each parameter named by `names` (parameter → how the caller writes it)."""
        return _spell(self.template, self.params, names)

    def as_options(self) -> str:
        """The message with each parameter spelled as the command-line option of that name (`min_grade` →
        `--min-grade`), as Proctor's command line and review app say it."""
        return self.spelled({p: "--" + p.replace("_", "-") for p in self.params})


def code_point(char: str) -> str:
    """A character as a user can look it up: `U+200B (ZERO WIDTH SPACE)`."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name})" if name else "")


def text_difference(old: str, new: str, limit: int = 8) -> str:
    """Where two texts that may read the same differ, as code points (at most `limit` of each): "they differ at
    character 4: U+00E9 vs U+0065 U+0301 (the same text in another Unicode normalization)"."""
    start, shortest = 0, min(len(old), len(new))
    while start < shortest and old[start] == new[start]:
        start += 1
    end = 0
    while end < shortest - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1

    def points(part: str) -> str:
        shown = " ".join(f"U+{ord(c):04X}" for c in part[:limit]) + (" …" if len(part) > limit else "")
        return shown or "nothing"

    same = unicodedata.normalize("NFC", old) == unicodedata.normalize("NFC", new)
    return (f"they differ at character {start + 1}: {points(old[start:len(old) - end])} vs "
            f"{points(new[start:len(new) - end])}" + (" (the same text in another Unicode normalization)" if same
                                                       else ""))
