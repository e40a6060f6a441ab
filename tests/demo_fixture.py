"""The demo collection built once per test session (per xdist worker) and shared by the tests that only read
it: the output of `proctor demo`, and the demo store graded with the embedded default grader. A test that
writes copies the store first (`copy_store`). A test module imports the fixtures it uses (`demo_run_fixture`
for `demo_run`, ...). Everything runs in-process (`inprocess.run_cli`): the embedding model is loaded once per
process, where a process per command loaded torch and the model every time."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Result, seed_demo
from inprocess import copy_store, once, run_cli


@pytest.fixture(scope="session", name="demo_run")
def demo_run_fixture(tmp_path_factory) -> Result:
    """`proctor demo --out ROOT` run once; the Result, with the folder as its attribute `root`. Read only."""

    def build() -> Result:
        root = tmp_path_factory.mktemp("demo-run")
        result = run_cli("demo", "--out", root)
        assert result.code == 0, result.err
        result.root = root  # type: ignore[attr-defined]
        return result

    return once("demo_run", build)


@pytest.fixture(scope="session", name="graded_demo_store")
def graded_demo_store_fixture(tmp_path_factory) -> Path:
    """The demo collection (`seed_demo`) graded with `grade --method embedding`, built once. Read only: copy it
    with `copy_store` to write."""

    def build() -> Path:
        store = seed_demo(tmp_path_factory.mktemp("graded-demo"))
        result = run_cli("grade", "--store", store, "--method", "embedding")
        assert result.code == 0, result.err
        return store

    return once("graded_demo_store", build)


@pytest.fixture(name="graded_demo")
def graded_demo_fixture(graded_demo_store, tmp_path) -> Path:
    """A fresh copy of the graded demo store, for a test that writes to it."""
    return copy_store(graded_demo_store, tmp_path / "graded" / "s.db")
