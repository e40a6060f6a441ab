"""Shared fixtures: running the CLI in-process and as a real process, and the DL19 data when present."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from inprocess import Result, built_once, run_main
from proctor.cli import main

# One thread per process for the native libraries (torch's and numpy's OpenMP/BLAS pools): `make test` runs two
# processes on two cores, and pools sized to every core spin against each other (tests/test_hf_backend.py: 31 ->
# 21 s of CPU). Read when those libraries load, so set before anything imports them; a value given wins.
for _pool in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_pool, "1")

os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PROCTOR_SHARED", ROOT.parent / "shared")) / "data"  # a worktree elsewhere: set it
DL19 = SHARED / "dl19"
DL19_POOL = DL19 / "dl19-pool-graded-flan-t5-large.jsonl.gz"


LONGEST_FIRST = ("test_ray_engine.py", "test_autojudge.py", "test_bank.py", "test_wheel.py", "test_review.py",
                 "test_analyze.py", "test_dl19.py", "test_store_access.py", "test_experiment_dl19.py",
                 "test_calibration.py", "test_grading_resume.py", "test_response_cache.py",
                 "test_review_verdict_pages.py", "test_hf_backend.py", "test_grading_local.py", "test_ppi.py",
                 "test_grade_sets.py", "test_relevance.py", "test_starter_kit_checks.py", "test_exampp_round_trip.py",
                 "test_openai_client.py", "test_background_reader_lifetime.py")
"""The files that take longest (their tests' time in a `make test` run, 2026-11-27), longest first: `make test` (xdist,
one file per process) hands them out first, so no long file is left running alone at the end. Every other file
follows, those with more tests first (xdist's own rule). A stale list costs only balance, never a test."""


ONE_WORKER = ("test_analyze.py", "test_autojudge.py", "test_autojudge_submission.py", "test_batched_grading_edges.py",
              "test_demo.py", "test_dropping_members.py", "test_embedding_bulk.py", "test_exampp_round_trip.py",
              "test_experiment_dl19.py", "test_experiment_dry_run.py", "test_extractive_qa.py",
              "test_grading_local.py", "test_hf_backend.py", "test_markdown_escaping.py", "test_measure_registry.py",
              "test_output_files.py", "test_response_cache.py", "test_responses.py", "test_sweep.py")
"""The files whose tests load torch in the test process (the embedding grader, `hf:`, the demo's stores; each file
run alone, 2026-11-27): `make test` hands them to one xdist worker as one unit of work, so only that worker pays for
importing torch, transformers and sentence-transformers (about 8 s of CPU). A stale list costs only time, never a
test."""


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile`, except that the files of `ONE_WORKER` are one unit of work: one worker runs them all."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class OneWorkerForTorch(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "ONE_WORKER" if path.rsplit("/", 1)[-1] in ONE_WORKER else path

    return OneWorkerForTorch(config, log)


def pytest_sessionstart(session) -> None:
    """NLTK's downloader keeps the sys.stderr it is first imported under as its default stream. Commands run
    in-process: imported inside a test's captured output, that stream is closed when the test ends, and the next
    import of a peer (autojudge-base asks the downloader for punkt) fails writing to it. So each process that runs
    tests imports it once, first, here; xdist's controller runs none and does not (2.7 s of CPU before the
    workers start)."""
    if session.config.pluginmanager.hasplugin("dsession"):
        return
    with contextlib.suppress(ImportError):
        import nltk.downloader  # noqa: F401
    fewer_collections()


def fewer_collections() -> None:
    """Python's cyclic garbage collector, run less often in a process that runs tests: what is loaded at start
    is frozen (never scanned again) and a young collection waits for 20,000 new containers instead of 700. The
    DL19 tests build and parse millions of dicts and lists (a pool, an export, 92,600 grades), and with the
    default thresholds the collector rescanned them over and over: about a third of such a test's CPU
    (test_dl19.py::test_export_import_round_trip 7.4-8.1 -> 4.7-6.1 s). Only the timing of freeing cycles
    changes, never a result; the peak memory of those files stayed the same (639 MB)."""
    import gc

    gc.freeze()
    gc.set_threshold(20_000, 10, 10)


def pytest_configure(config) -> None:
    """Let xdist hand files out in the order `pytest_collection_modifyitems` gives (it sorts by test count)."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items) -> None:
    """Files in the order of `LONGEST_FIRST`, then by number of tests; each file's tests in their own order."""
    counts: dict[Path, int] = {}
    for item in items:
        counts[item.path] = counts.get(item.path, 0) + 1

    def rank(item) -> tuple[int, int]:
        name = item.path.name
        return (LONGEST_FIRST.index(name), 0) if name in LONGEST_FIRST else (len(LONGEST_FIRST), -counts[item.path])

    items.sort(key=rank)


@pytest.fixture
def cli(capsys):
    """Run `proctor ARGS` in-process (`inprocess.run_main`); returns a Result, as `run_process` does. The output
    goes through pytest's capture, not `run_cli`'s own streams, so a test may patch `sys.stdout` (e.g. `isatty`)
    before the call."""

    def run(*args: str) -> Result:
        capsys.readouterr()
        code = run_main(*args)
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def run_process(*args: str, cwd: Path | None = None) -> Result:
    """Run `proctor ARGS` as a real process (as a user would)."""
    proc = subprocess.run([sys.executable, "-m", "proctor", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return Result(proc.returncode, proc.stdout, proc.stderr)


def seed_demo(folder: Path, runs: list[str] | None = None) -> Path:
    """A store with the demo collection's queries, passages, judgments, bank and runs (all, or `runs`): a copy of
    the one this test process imported first (the paths the store records made this folder's), the same rows
    as a fresh import, at the cost of a file copy."""
    key = None if runs is None else tuple(runs)
    store = folder / "s.db"
    if store.exists():  # importing into a store already there: no copy stands in for that
        return _import_demo(folder, runs)
    if key not in _DEMO_TEMPLATES:
        _DEMO_TEMPLATES[key] = Path(tempfile.mkdtemp(prefix="proctor-demo-"))
        atexit.register(shutil.rmtree, _DEMO_TEMPLATES[key], True)
        _import_demo(_DEMO_TEMPLATES[key], runs)
    template = _DEMO_TEMPLATES[key]
    shutil.copytree(template / "collection", folder / "collection", dirs_exist_ok=True)
    shutil.copyfile(template / "s.db", store)
    _move_paths(store, str(template), str(folder))
    return store


_DEMO_TEMPLATES: dict[tuple[str, ...] | None, Path] = {}
"""The demo stores imported once per test process, by the runs they hold."""


def _import_demo(folder: Path, runs: list[str] | None) -> Path:
    """The demo collection written to `folder` and imported into `folder`/s.db as a user would."""
    from proctor.demo.write import write_collection

    paths = write_collection(folder / "collection")
    store = folder / "s.db"
    for kind in ("queries", "corpus", "qrels", "bank"):
        assert main(["import", kind, str(paths[kind]), "--store", str(store)]) == 0
    files = sorted(paths["runs"].iterdir()) if runs is None else [paths["runs"] / f"{r}.run" for r in runs]
    assert main(["import", "runs", *map(str, files), "--store", str(store)]) == 0
    return store


def _move_paths(store: Path, old: str, new: str) -> None:
    """Every text in the store under folder `old` (the paths of the imported files) is under `new` instead."""
    import sqlite3

    old, new = old + os.sep, new + os.sep
    db = sqlite3.connect(store)
    try:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        with db:
            for table in tables:
                for column in [row[1] for row in db.execute(f"PRAGMA table_info({table})") if row[2] == "TEXT"]:
                    db.execute(f"UPDATE {table} SET {column} = ? || substr({column}, ?)"
                               f" WHERE substr({column}, 1, ?) = ?", (new, len(old) + 1, len(old), old))
    finally:
        db.close()


@pytest.fixture
def demo_store(tmp_path) -> Path:
    """The demo collection without grades, in a fresh store."""
    return seed_demo(tmp_path)


STAND_IN_PLOTS = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF-1.4\n%%EOF\n",
                  "svg": b'<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'}
"""What `stand_in_plots` writes for each plot file, by format."""


@pytest.fixture
def stand_in_plots(monkeypatch) -> None:
    """Commands run in-process build every figure as they would (data, axes, layout) but write a stand-in
    file (`STAND_IN_PLOTS`) where matplotlib would render a PNG, PDF and SVG of it (the costly part: 3 renders
    per plot, tens of plots per report). For tests that assert nothing about the plot files; the plot files
    themselves are checked by tests/test_analyze.py and the calibration tests, which render them."""
    from matplotlib.figure import Figure

    def savefig(self, fname, *, format: str, **options) -> None:  # noqa: A002 (matplotlib's name)
        Path(fname).write_bytes(STAND_IN_PLOTS[format])

    monkeypatch.setattr(Figure, "savefig", savefig)


def on_ci() -> bool:
    """Whether the tests run on CI (the environment variable CI is set to true, as CI services do)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def require_shared(path: Path) -> Path:
    """PATH of the shared data: a test that needs it skips when it is absent, except on CI, where a missing
    ../shared is an error (a skip there would silently lose the tests that check numbers against DL19)."""
    if not path.exists():
        message = (f"{path} is not present: the shared data is looked for at ../shared/data beside the repository "
                   "(set PROCTOR_SHARED to the folder that holds data/ when the checkout is elsewhere)")
        if on_ci():
            pytest.fail(f"CI is set and {message}", pytrace=False)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def dl19_pool() -> Path:
    """The graded DL19 pool; tests using it skip when ../shared is absent (fail on CI)."""
    return require_shared(DL19_POOL)


@pytest.fixture(scope="session")
def dl19_store(dl19_pool, tmp_path_factory) -> Path:
    """A store with the DL19 pool imported once per test run (`inprocess.built_once`: one import, a copy per
    xdist worker)."""

    def build(folder: Path) -> Path:
        store = folder / "dl19.db"
        assert main(["import", "exampp", str(dl19_pool), "--store", str(store)]) == 0
        return store

    return built_once("dl19_store", tmp_path_factory, build)


def grades_of(path: Path, method: str, model: str | None = None, step: str | None = None, **params) -> list:
    """The grades of the one grade set of `method` (and `model`, and these params) in a store, of its label
    step or of `step`."""
    from proctor.store import Store

    store = Store.open(path)
    try:
        sets = [s for s in store.grades.grade_sets() if s.method == method and model in (None, s.model)
                and all(s.params.get(k) == v for k, v in params.items())]
        assert len(sets) == 1, [s.describe() for s in sets]
        return list(store.grades.records(sets[0], step or sets[0].step))
    finally:
        store.close()


@contextmanager
def opened_store(path: Path | str, **options) -> Iterator:
    """The store at `path` (`Store.open` with `options`), open while the block runs: tests read it through its
    repositories."""
    from proctor.store import Store

    store = Store.open(path, **options)
    try:
        yield store
    finally:
        store.close()


def store_dump(path: Path) -> str:
    """The store's content as SQL text (`sqlite3 .dump`), to compare a store before and after a refused command;
    '' when there is no store file."""
    import sqlite3

    if not Path(path).exists():
        return ""
    db = sqlite3.connect(path)
    try:
        return "\n".join(db.iterdump())
    finally:
        db.close()


def raw_write(path: Path, sql: str, args: tuple = ()) -> int:
    """Run one statement on a store file through a connection of its own and commit it, as a program other than
    Proctor would (what the store keeps must notice it), or to make a file of an earlier release; returns the
    rows it changed."""
    import sqlite3

    db = sqlite3.connect(path)
    try:
        changed = db.execute(sql, args).rowcount
        db.commit()
        return changed
    finally:
        db.close()


def top_grades_of(store, grade_set_id: str, step: str) -> list[tuple]:
    """(query, passage, largest grade, usable grades, failed grades) of one step, counted from its grade rows:
    what the label cache must give."""
    out: dict[tuple[str, str], list] = {}
    for qid, pid, _, grade in store.grades.grade_rows(grade_set_id, step):
        row = out.setdefault((qid, pid), [None, 0, 0])
        if grade is None:
            row[2] += 1
        else:
            row[0], row[1] = grade if row[0] is None else max(row[0], grade), row[1] + 1
    return [(qid, pid, *row) for (qid, pid), row in sorted(out.items())]


class RawConnection:
    """A connection of its own to a store file, held open as another program would hold one: its reads see what
    is committed, its write lock keeps Proctor's writers out. Tests use raw SQL only through this class and the
    helpers below, where SQL is the point (the file's layout, another writer, a file of an earlier schema)."""

    def __init__(self, path: Path | str) -> None:
        import sqlite3

        self._db = sqlite3.connect(path, isolation_level=None)

    def rows(self, sql: str, args: tuple = ()) -> list[tuple]:
        """Rows of one statement."""
        return self._db.execute(sql, args).fetchall()

    def write(self, *statements: str | tuple[str, tuple]) -> int:
        """Run statements (SQL, or (SQL, args)) in one transaction and commit; returns the rows the last changed."""
        changed = 0
        self._db.execute("BEGIN")
        try:
            for statement in statements:
                sql, args = (statement, ()) if isinstance(statement, str) else statement
                changed = self._db.execute(sql, args).rowcount
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        return changed

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Hold the file's write lock (BEGIN IMMEDIATE) while the block runs, then let it go unchanged."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            self._db.execute("ROLLBACK")

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def __enter__(self) -> RawConnection:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@contextmanager
def held_write_lock(path: Path | str) -> Iterator[None]:
    """Another program holds the store file's write lock while the block runs."""
    with RawConnection(path) as other, other.write_lock():
        yield


def raw_script(path: Path | str, *statements: str | tuple[str, tuple]) -> int:
    """Run statements on a store file in one transaction of a connection of its own, as another program would or to
    make a file of an earlier release; returns the rows the last statement changed."""
    with RawConnection(path) as db:
        return db.write(*statements)


def cap_file_size(db, pages: int) -> None:
    """Let the file of connection `db` grow by `pages` pages at most, as a full disk would."""
    size = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {size + pages}")


def raw_rows(path: Path, sql: str, args: tuple = ()) -> list[tuple]:
    """Rows of a statement on a store file through a connection of its own: what a program other than Proctor
    wrote there, or the file's own layout behind the repositories (the compact grade rows)."""
    import sqlite3

    db = sqlite3.connect(path)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


@pytest.fixture(scope="session")
def peer_nltk(tmp_path_factory) -> Iterator[Path]:
    """A local NLTK data folder with an empty English stopword list, for the peers that read NLTK data at
    import (autojudge, exam_pp): nothing is downloaded. NLTK's search path is restored afterwards."""
    import nltk

    folder = tmp_path_factory.mktemp("nltk_data")
    (folder / "corpora" / "stopwords").mkdir(parents=True)
    (folder / "corpora" / "stopwords" / "english").write_text("")
    before = os.environ.get("NLTK_DATA")
    os.environ["NLTK_DATA"] = str(folder)
    nltk.data.path.insert(0, str(folder))
    yield folder
    nltk.data.path.remove(str(folder))
    if before is None:
        os.environ.pop("NLTK_DATA", None)
    else:
        os.environ["NLTK_DATA"] = before
