"""Errors a user can act on: bad input (file and line) and bad usage. The CLI turns them into exit status 2."""

from __future__ import annotations


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
    """A request that cannot be carried out as asked (missing store, ambiguous method, ...)."""
