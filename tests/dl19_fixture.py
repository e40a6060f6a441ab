"""The DL19 pool with the 430 generated questions, graded by replaying the recorded FLAN-T5-large
self-ratings, built once per test session (per xdist worker; replaying reads the whole graded pool, the
costly part) and shared by the bank and grade-set tests. A test that writes copies the store first
(`dl19_replay` does). A test module imports the fixtures it uses (`dl19_replay_fixture` for `dl19_replay`,
and `dl19_replay_store_fixture`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import DL19
from inprocess import copy_store, once, run_cli

DL19_BANK = DL19 / "dl19-questions-graded.jsonl.gz"


@pytest.fixture(scope="session", name="dl19_replay_store")
def dl19_replay_store_fixture(dl19_pool, tmp_path_factory) -> Path:
    """The DL19 pool imported without its grades, the bank of generated questions (its name: the file's),
    and the grade set of the replayed recorded self-ratings. Read only."""

    def build() -> Path:
        store = tmp_path_factory.mktemp("dl19-replay") / "g.db"
        assert run_cli("import", "exampp", dl19_pool, "--store", store, "--no-grades").code == 0
        assert run_cli("import", "bank", DL19_BANK, "--store", store).code == 0
        graded = run_cli("grade", "--store", store, "--method", "self-rating", "--llm", f"replay:{dl19_pool}")
        assert graded.code == 0, graded.err
        return store

    return once("dl19_replay_store", build)


@pytest.fixture(name="dl19_replay")
def dl19_replay_fixture(dl19_replay_store, tmp_path) -> Path:
    """A fresh copy of the DL19 replay store, for a test that writes to it."""
    return copy_store(dl19_replay_store, tmp_path / "replay" / "g.db")
