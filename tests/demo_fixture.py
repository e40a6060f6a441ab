"""The demo collection built once per test run (one xdist worker builds it, each copies it) and shared by the
tests that only read it: the output of `proctor demo`, and the demo store graded with the embedded default
grader. A test that writes copies the store first (`copy_store`). A test module imports the fixtures it uses
(`demo_run_fixture` for `demo_run`, ...). Everything runs in-process (`inprocess.run_cli`): the embedding model
is loaded by the process that builds, where a process per command loaded torch and the model every time."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Result, seed_demo
from inprocess import built_once, copy_store, once, run_cli


@pytest.fixture(scope="session", name="demo_run")
def demo_run_fixture(tmp_path_factory) -> Result:
    """`proctor demo --out ROOT` run once per test run (`inprocess.built_once`: one run, a copy of its folder per
    xdist worker); the Result, with the folder as its attribute `root`. Read only."""

    def build(folder: Path) -> Path:
        result = run_cli("demo", "--out", folder)
        assert result.code == 0, result.err
        (folder / "demo.out.txt").write_text(result.out)
        (folder / "demo.err.txt").write_text(result.err)
        return folder / "demo.db"

    root = built_once("demo_run", tmp_path_factory, build).parent

    def result() -> Result:
        done = Result(0, (root / "demo.out.txt").read_text(), (root / "demo.err.txt").read_text())
        done.root = root  # type: ignore[attr-defined]
        return done

    return once("demo_run", result)


@pytest.fixture(scope="session", name="graded_demo_store")
def graded_demo_store_fixture(tmp_path_factory) -> Path:
    """The demo collection (`seed_demo`) graded with `grade --method embedding`, built once per test run
    (`inprocess.built_once`). Read only: copy it with `copy_store` to write."""

    def build(folder: Path) -> Path:
        store = seed_demo(folder)
        result = run_cli("grade", "--store", store, "--method", "embedding")
        assert result.code == 0, result.err
        return store

    return built_once("graded_demo_store", tmp_path_factory, build)


@pytest.fixture(name="graded_demo")
def graded_demo_fixture(graded_demo_store, tmp_path) -> Path:
    """A fresh copy of the graded demo store, for a test that writes to it."""
    return copy_store(graded_demo_store, tmp_path / "graded" / "s.db")
