"""`run_cli`: a command run in-process, as `conftest.run_process` runs it as a real process, for the tests
where a process is not the point and for fixtures wider than a test (where the `cli` fixture is not
available)."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from typing import Any

from conftest import Result
from proctor.cli import main


def run_cli(*args: Any) -> Result:
    """Run `proctor ARGS` in-process with stdout and stderr captured; returns a Result."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    return Result(code, out.getvalue(), err.getvalue())
