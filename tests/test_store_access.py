"""Access to the store: a second writer (a process of its own) waits for the lock and then says so; a full
disk, a read-only store, a folder or a foreign SQLite file give one clear line and leave the store as it was."""

from __future__ import annotations

import json
import os
import sqlite3
import time

import pytest

from conftest import cap_file_size, held_write_lock, raw_rows, raw_write, run_process, seed_demo
from fake_openai import FakeOpenAI
from grading_fixture import grade_args
from proctor.store import Store


def test_a_second_writer_waits_for_the_lock_then_says_so(cli, demo_store, tmp_path):
    queries = tmp_path / "q.tsv"
    queries.write_text("q9\tanother query\n")
    with held_write_lock(demo_store):
        start = time.time()
        result = run_process("import", "queries", queries, "--store", demo_store, "--lock-timeout", "1")
        waited = time.time() - start
    assert result.code == 2 and "another process is writing to the store" in result.err, result.err
    assert "Traceback" not in result.err and 1 <= waited < 10
    assert cli("import", "queries", queries, "--store", demo_store).code == 0


def test_a_full_disk_is_one_clear_line_and_the_store_stays_usable(demo_store, cli, monkeypatch):
    import proctor.store as store_module

    connect = store_module._connect

    def small_disk(path, lock_timeout):
        db = connect(path, lock_timeout)
        cap_file_size(db, 2)
        return db

    with FakeOpenAI(reply=lambda prompt: "4 " + "x" * 3000) as server:
        monkeypatch.setattr(store_module, "_connect", small_disk)
        full = cli(*grade_args(demo_store, server))
        monkeypatch.setattr(store_module, "_connect", connect)
        assert full.code == 2 and "the disk is full" in full.err and "Traceback" not in full.err, full.err
        assert len(full.err.strip().splitlines()) <= 2
        assert raw_rows(demo_store, "PRAGMA integrity_check") == [("ok",)]
        resumed = cli(*grade_args(demo_store, server))
    assert resumed.code == 0 and json.loads(resumed.out)["graded_now"] + json.loads(resumed.out)[
        "already_graded"] == 72


def test_read_only_stores_can_be_read(cli, demo_store, tmp_path):
    assert cli("import", "bank", tmp_path / "collection" / "bank.jsonl", "--store", demo_store).code == 0
    store = Store.open(demo_store, read_only=True)
    assert store.counts()["queries"] == 4
    with pytest.raises(sqlite3.OperationalError):
        store.corpus.upsert_queries([("q9", "x")])
    store.close()
    if os.geteuid() != 0:  # root may write anyway: then the CLI path is the same as a writable file
        demo_store.chmod(0o444)
        demo_store.parent.chmod(0o555)
        try:
            assert cli("info", "--store", demo_store).code == 0
        finally:
            demo_store.parent.chmod(0o755)


@pytest.mark.parametrize("kind", ["folder", "foreign"])
def test_a_folder_or_a_foreign_sqlite_file_is_no_store(cli, tmp_path, kind):
    path = tmp_path / "x.db"
    if kind == "folder":
        path.mkdir()
    else:
        raw_write(path, "CREATE TABLE mine (a)")  # an SQLite file of another program
    queries = tmp_path / "q.tsv"
    queries.write_text("q1\tbees\n")
    for args in (("info",), ("import", "queries", queries)):
        result = cli(*args, "--store", path)
        assert result.code == 2 and "Traceback" not in result.err, result.err
        assert ("is a folder" if kind == "folder" else "not a Proctor store") in result.err
    if kind == "foreign":
        tables = raw_rows(path, "SELECT name FROM sqlite_master")
        assert tables == [("mine",)]


def test_demo_store_fixture_is_unaffected(tmp_path):
    assert Store.open(seed_demo(tmp_path)).counts()["passages"] == 24
