"""Errors a user can act on: bad input (file and line) and bad usage. The CLI turns them into exit status 2."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


class ProctorError(Exception):
    """An error with a message meant for the user; the CLI prints it without a traceback."""


class InputError(ProctorError):
    """Bad input: names the file and, where known, the line."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


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
        text = self.template
        for param in self.params:
            text = text.replace("{" + param + "}", names.get(param, param))
        return text

    def as_options(self) -> str:
        """The message with each parameter spelled as the command-line option of that name (`min_grade` →
        `--min-grade`), as Proctor's command line and review app say it."""
        return self.spelled({p: "--" + p.replace("_", "-") for p in self.params})
