"""The DL19 pool with the 430 generated questions, graded by replaying the recorded FLAN-T5-large
self-ratings, built once per test run (one xdist worker builds it, each copies it; replaying reads the whole
graded pool, the costly part) and shared by the bank and grade-set tests. A test that writes copies the store first
(`dl19_replay` does). A test module imports the fixtures it uses (`dl19_replay_fixture` for `dl19_replay`,
and `dl19_replay_store_fixture`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import DL19
from inprocess import built_once, copy_store, run_cli

DL19_BANK = DL19 / "dl19-questions-graded.jsonl.gz"


@pytest.fixture(scope="session", name="dl19_replay_store")
def dl19_replay_store_fixture(dl19_pool, tmp_path_factory) -> Path:
    """The DL19 pool imported without its grades, the bank of generated questions (its name: the file's),
    and the grade set of the replayed recorded self-ratings, built once per test run (`inprocess.built_once`);
    what `grade --format json` printed is in `grade.json` beside it. Read only."""

    def build(folder: Path) -> Path:
        store = folder / "g.db"
        assert run_cli("import", "exampp", dl19_pool, "--store", store, "--no-grades").code == 0
        assert run_cli("import", "bank", DL19_BANK, "--store", store).code == 0
        graded = run_cli("grade", "--store", store, "--method", "self-rating", "--llm", f"replay:{dl19_pool}",
                         "--format", "json")
        assert graded.code == 0, graded.err
        (folder / "grade.json").write_text(graded.out)
        return store

    return built_once("dl19_replay_store", tmp_path_factory, build)


@pytest.fixture(name="dl19_replay")
def dl19_replay_fixture(dl19_replay_store, tmp_path) -> Path:
    """A fresh copy of the DL19 replay store, for a test that writes to it."""
    return copy_store(dl19_replay_store, tmp_path / "replay" / "g.db")
