"""Rules the tests themselves keep: a test reads and writes a store through its repositories (`proctor.store`);
raw SQL goes only through the named helpers of conftest (`raw_rows`, `raw_write`, `raw_script`, `RawConnection`,
`held_write_lock`, `cap_file_size`, `store_dump`), and only where SQL is the point: the file's own layout, another
program writing or holding the lock, a file of an earlier release or schema, a file that is no store."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent

RAW_SQL_ALLOWED = {
    "conftest.py": "holds the raw-SQL helpers themselves",
    # builds stores of schema 2 as the previous release wrote them (its whole schema script, ATTACH of the new
    # store, its triggers) and measures the grade tables' pages on disk (dbstat): the file's layout is the point
    "test_compact_grade_rows.py": "writes files of schema 2 and measures the grade rows on disk",
}
"""Test modules that may open their own SQLite connections and run SQL on them, each with its reason."""

SQL_CALLS = {"execute", "executemany", "executescript"}


def _raw_sql(path: Path) -> list[str]:
    """`file:line call` of every direct SQL call (`.execute(`, `.executemany(`, `.executescript(`) and every
    `sqlite3.connect(` of a test module."""
    found, text = [], path.read_text(encoding="utf-8")
    if not any(name in text for name in (*SQL_CALLS, "connect")):  # no such call is written without its name
        return found  # (most modules: parsing all 143 cost 0.7 s)
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            owner = node.func.value
            if name in SQL_CALLS or (name == "connect" and isinstance(owner, ast.Name) and owner.id == "sqlite3"):
                found.append(f"{path.name}:{node.lineno} .{name}(")
    return found


def test_tests_run_sql_only_through_the_conftest_helpers():
    found = [hit for path in sorted(TESTS.rglob("*.py")) if path.name not in RAW_SQL_ALLOWED
             for hit in _raw_sql(path)]
    assert not found, ("tests read and write stores through the repositories (add a small read method to the right "
                       "one in proctor.store), or, where SQL is the point, through conftest's raw_rows, raw_write, "
                       "raw_script, RawConnection or held_write_lock:\n" + "\n".join(found))


def test_the_allowed_modules_still_need_their_place():
    unused = [name for name in RAW_SQL_ALLOWED if not _raw_sql(TESTS / name)]
    assert not unused, f"no raw SQL left in {unused}: take them off RAW_SQL_ALLOWED"


def test_the_rule_sees_a_direct_call(tmp_path):
    sample = tmp_path / "test_sample.py"
    sample.write_text("import sqlite3\n\ndb = sqlite3.connect('s.db')\ndb.execute('SELECT 1')\n")
    assert _raw_sql(sample) == ["test_sample.py:3 .connect(", "test_sample.py:4 .execute("]
