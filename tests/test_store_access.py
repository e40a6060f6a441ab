"""Access to the store: a second writer (a process of its own) waits for the lock and then says so; a full
disk, a read-only store, a folder or a foreign SQLite file give one clear line and leave the store as it was."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import RawConnection, cap_file_size, held_write_lock, raw_rows, raw_write, seed_demo
from fake_openai import FakeOpenAI
from grading_fixture import grade_args
from proctor.store import Store


def test_a_second_writer_waits_for_the_lock_then_says_so(cli, demo_store, tmp_path):
    queries = tmp_path / "q.tsv"
    queries.write_text("q9\tanother query\n")
    with held_write_lock(demo_store):
        other = subprocess.Popen([sys.executable, "-m", "proctor", "import", "queries", str(queries), "--store",
                                  str(demo_store), "--lock-timeout", "0.3"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        _until_open(other, demo_store)
        start = time.monotonic()  # from when it has the store open: its start-up is not waiting
        _, err = other.communicate(timeout=60)
        waited = time.monotonic() - start
    assert other.returncode == 2 and "another process is writing to the store" in err, err
    assert "Traceback" not in err and 0.3 <= waited < 10
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


READ_COMMANDS = [
    ("info",), ("grade-sets", "list"), ("qrels",), ("leaderboard", "--measure", "P@3"),
    ("export", "exampp", "--out", "OUT/x.jsonl"), ("agreement", "--judged-relevant", "1"), ("verify", "spurious"),
    ("calibrate", "--budget", "1"), ("analyze", "--official", "OUT/official.json", "--out", "OUT/report"),
    ("review", "--port", "PORT"),
]
"""Commands that only read a store (the review app writes only reviewers' work into a store that is one)."""


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_an_empty_file_is_refused_by_every_read_command_and_left_untouched(cli, tmp_path, command):
    empty = tmp_path / "empty.db"
    empty.touch()
    (tmp_path / "official.json").write_text('{"a": 1, "b": 2}')
    port = socket.socket()
    port.bind(("127.0.0.1", 0))
    names = {"PORT": str(port.getsockname()[1])}
    port.close()
    result = cli(*[names.get(a, a.replace("OUT", str(tmp_path))) for a in command], "--store", empty)
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert f"{empty}: an empty file, not a Proctor store" in result.err, result.err
    assert empty.stat().st_size == 0 and [p.name for p in tmp_path.glob("empty.db*")] == ["empty.db"]


def test_a_write_command_makes_a_store_of_an_empty_file(cli, tmp_path):
    empty = tmp_path / "empty.db"
    empty.touch()
    queries = tmp_path / "q.tsv"
    queries.write_text("q1\tbees\n")
    assert cli("import", "queries", queries, "--store", empty).code == 0
    assert cli("info", "--store", empty).code == 0


def _mount_namespace() -> bool:
    """Whether this process may mount a small file system in a mount namespace of its own (root, unshare)."""
    import shutil

    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.parametrize("spare_kib", [4, 16, 100, 400])
def test_a_really_full_disk_during_grade_says_the_disk_is_full_and_resumes(demo_store, tmp_path, spare_kib):
    """`grade` on a store in a file system with `spare_kib` KiB free: SQLite fails at opening (the WAL index
    cannot grow: SQLITE_IOERR_SHMSIZE, 'disk I/O error') or while committing (SQLITE_FULL); either way the user
    reads that the disk is full and how to resume, as `import` says; the same command on a larger disk resumes."""

    if not _mount_namespace():
        pytest.skip("needs root and unshare to mount a small file system")
    mount, copy = tmp_path / "mnt", tmp_path / "after" / "s.db"
    mount.mkdir()
    copy.parent.mkdir()
    size = demo_store.stat().st_size // 1024 + spare_kib
    with FakeOpenAI(reply=lambda prompt: "4 " + "x" * 3000) as server:
        grade = " ".join([sys.executable, "-m", "proctor", *grade_args(mount / "s.db", server)])
        script = (f"mount -t tmpfs -o size={size}k tmpfs {mount} && cp {demo_store} {mount}/s.db && "
                  f"{grade} >{tmp_path}/full.out 2>{tmp_path}/full.err; echo $? >{tmp_path}/full.code; "
                  f"cp {mount}/s.db* {copy.parent}; mount -o remount,size=16m {mount} && "
                  f"{grade} >{tmp_path}/resumed.out 2>{tmp_path}/resumed.err; echo $? >{tmp_path}/resumed.code")
        subprocess.run(["unshare", "-m", "sh", "-c", script], check=True,
                       env={**os.environ, "HF_HUB_OFFLINE": "1"}, cwd=tmp_path)
    full = (tmp_path / "full.err").read_text()
    assert (tmp_path / "full.code").read_text().strip() == "2", full
    assert "the disk is full" in full and "run the same command again to resume" in full, full
    assert "Traceback" not in full and len(full.strip().splitlines()) <= 2, full
    assert raw_rows(copy, "PRAGMA integrity_check") == [("ok",)]
    resumed = json.loads((tmp_path / "resumed.out").read_text())
    assert (tmp_path / "resumed.code").read_text().strip() == "0"
    assert resumed["graded_now"] + resumed["already_graded"] == 72


HOLD = 0.5
"""Seconds the bulk import keeps the lock once the waiting command has the store open (a command that gave up at
once would have failed within them)."""


def _until_open(proc, path, timeout: float = 60.0) -> None:
    """Until process `proc` has the file `path` open (/proc has no event for it: look every few milliseconds)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with contextlib.suppress(OSError):
            if any(os.readlink(fd) == str(path) for fd in Path(f"/proc/{proc.pid}/fd").iterdir()):
                return
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.005)
    raise AssertionError(f"{path} was never opened")


WAITING_COMMANDS = [("info",), ("grade-sets", "list"), ("import", "bank", "BANK"), ("import", "queries", "QUERIES")]
"""Commands run while another process writes a large import under a rollback journal."""


@pytest.mark.parametrize("command", WAITING_COMMANDS, ids=lambda c: " ".join(c))
def test_a_command_waits_for_a_bulk_import_within_lock_timeout(demo_store, tmp_path, command):
    """A bulk import (`Store.bulk_transaction`: a rollback journal while no one else has the store open) holds the
    write lock for HOLD seconds after a second process has opened the store; that process must wait (its switch
    back to WAL needs the lock, which SQLite's busy handler does not wait for), not give up at once."""

    queries = tmp_path / "q.tsv"
    queries.write_text("q9\tanother query\n")
    names = {"BANK": str(tmp_path / "collection" / "bank.jsonl"), "QUERIES": str(queries)}
    args = [names.get(a, a) for a in command]
    ready = ("import sys; from proctor.cli import main; print('ready', flush=True); sys.stdin.readline(); "
             "sys.exit(main(sys.argv[1:]))")  # started (imports done) before the lock is taken: it meets the lock
    other = subprocess.Popen([sys.executable, "-c", ready, *args, "--store", str(demo_store), "--lock-timeout", "30"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert other.stdout.readline() == "ready\n"
    writer = Store.open(demo_store)
    with writer.bulk_transaction():
        writer.corpus.upsert_queries([("q8", "a query of the bulk import")])
        assert writer.schema.journal_mode() == "delete"
        other.stdin.write("go\n")
        other.stdin.flush()
        _until_open(other, demo_store)  # it has opened the store: its next step meets the lock
        started = time.monotonic()
        time.sleep(HOLD)
        assert other.poll() is None, other.communicate()[1]  # still waiting, not given up
    writer.close()
    out, err = other.communicate(timeout=60)
    assert other.returncode == 0 and "did not finish within --lock-timeout" not in err, err
    assert time.monotonic() - started >= HOLD
    after = Store.open(demo_store)
    assert "q8" in after.corpus.queries()
    after.close()


@pytest.mark.slow
def test_info_and_import_bank_wait_for_import_exampp_of_dl19(dl19_pool, tmp_path):
    """The case as a user meets it: `import exampp` of the DL19 pool runs; `info` and `import bank` started while
    its rollback journal exists wait with --lock-timeout 30 and succeed."""

    from conftest import SHARED

    store = tmp_path / "s.db"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    writer = subprocess.Popen([sys.executable, "-m", "proctor", "import", "exampp", str(dl19_pool), "--store",
                               str(store)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    journal = tmp_path / "s.db-journal"
    deadline = time.monotonic() + 60
    while not journal.exists() and writer.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert journal.exists(), "the import never wrote under a rollback journal"
    others = [subprocess.Popen([sys.executable, "-m", "proctor", *args, "--store", str(store), "--lock-timeout", "30"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
              for args in (("info",), ("import", "bank", str(SHARED / "dl19" / "dl19-questions-graded.jsonl.gz")))]
    assert writer.wait(120) == 0
    for other in others:
        out, err = other.communicate(timeout=60)
        assert other.returncode == 0, err


def test_a_command_waits_for_the_import_that_is_making_the_store(tmp_path):
    """A command started while another process makes the store (its schema written, not yet committed, under a
    rollback journal: a fresh import's first moments) waits for that writer's lock and finds the store, instead of
    calling the file empty or no store."""
    import threading

    from proctor.store.schema import SCHEMA, SCHEMA_VERSION

    path = tmp_path / "s.db"
    written, release = threading.Event(), threading.Event()

    def make() -> None:
        """Write the schema in a transaction and hold it (asleep, no CPU spent) until released, then commit."""
        with RawConnection(path) as other:
            other.rows("BEGIN")
            for statement in (*SCHEMA, ("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))):
                other.rows(*((statement,) if isinstance(statement, str) else statement))
            written.set()
            release.wait(60)
            other.rows("COMMIT")

    making = threading.Thread(target=make)
    making.start()
    try:
        assert written.wait(30) and (tmp_path / "s.db-journal").exists(), \
            "the schema was never written under a rollback journal"
        releasing = threading.Timer(HOLD, release.set)  # the writer commits HOLD seconds after the open begins
        started = time.monotonic()
        releasing.start()
        store = Store.open(path, lock_timeout=30)
        assert time.monotonic() - started >= HOLD  # it waited for the writer, and then found the store
        assert store.corpus.queries() == {}
        store.close()
    finally:
        release.set()
        making.join()


def test_an_empty_file_with_a_journal_left_beside_it_is_refused_as_found(cli, tmp_path):
    """A rollback journal beside an empty store file makes a command wait for the writer that may be making it;
    with no writer (the journal left over) the file is refused as an empty file and stays empty."""
    path = tmp_path / "s.db"
    path.write_bytes(b"")
    (tmp_path / "s.db-journal").write_bytes(b"")
    result = cli("info", "--store", str(path))
    assert result.code == 2 and "an empty file, not a Proctor store" in result.err and "Traceback" not in result.err
    assert path.stat().st_size == 0 and not (tmp_path / "s.db-wal").exists()


def test_a_store_still_being_made_after_the_lock_timeout_says_it_is_locked(cli, tmp_path):
    """The writer making the store holds its lock past `--lock-timeout`: the command says another process is writing
    (not that the file is empty or no store), exit 2."""
    from proctor.store.schema import SCHEMA

    path = tmp_path / "s.db"
    with RawConnection(path) as other:
        other.rows("BEGIN")
        for statement in SCHEMA:
            other.rows(statement)
        assert (tmp_path / "s.db-journal").exists()
        result = cli("info", "--store", str(path), "--lock-timeout", "0.2")
        other.rows("ROLLBACK")
    assert result.code == 2 and "another process is writing to the store" in result.err, result.err
    assert "Traceback" not in result.err
