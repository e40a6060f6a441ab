"""Import files into the store: one function per kind (`importing.kinds`, `importing.exampp`), each inside one
transaction, each returning its counts; the frozen `ImportReport` of each file is made when it is done
(`importing.report`).

Unknown query ids (rankings, judgments or questions for a query the store does not know, once it knows
some) are errors naming the file and line, unless the caller asks to skip them; skipped lines are counted.

Nothing stored is silently replaced (`store.integrity`): a file that contradicts the store (another text, score,
judgment or grade for the same key; a run that exists with other rankings) is refused naming its line, what the
store holds and which import wrote it, unless `replace` is asked; then what it replaced is counted, logged, and
the grades made from a replaced text are set aside as stale (graded again by the next `grade`).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from proctor.errors import InputError, UsageError
from proctor.import_checks import note_unjudgeable, set_stale
from proctor.importing.exampp import import_exampp
from proctor.importing.kinds import (
    Counts,
    import_bank,
    import_corpus,
    import_qrels,
    import_queries,
    import_responses,
    import_runs,
)
from proctor.importing.report import ImportReport, Tally
from proctor.options.inputs import ImportOptions
from proctor.store import Store, now
from proctor.store.integrity import Guard

__all__ = ["KINDS", "ImportOptions", "ImportReport", "import_files"]

KINDS = ("queries", "runs", "qrels", "corpus", "bank", "exampp", "responses")


def import_files(
    store: Store, kind: str, paths: list[str | Path], options: ImportOptions | None = None
) -> list[ImportReport]:
    """Import files of `kind` in one transaction: on any error the store is left unchanged."""
    if kind not in _IMPORTERS:
        raise UsageError(f"unknown import kind {kind!r}; choose one of {', '.join(KINDS)}")
    options = options or ImportOptions()
    store.imports.command_entries = frozenset()
    with store.bulk_transaction():
        reports = [_import_one(store, kind, path, options) for path in map(Path, paths)]
        store.tallies.grade_counts()  # counted once here, inside the import, so that readers find them kept
        if kind == "exampp":  # and what a leaderboard reads: the first one after a large import reads kept rows
            store.caches.keep_for_leaderboards()
    return reports


def _import_one(store: Store, kind: str, path: Path, options: ImportOptions) -> ImportReport:
    """Import one file under the guard (inside the caller's transaction); log it when it changed anything."""
    tally = Tally(kind, str(path), now())
    digest = _Digest(path)
    tally.reading = digest.start
    if kind != "exampp":
        digest.start()
    entry = store.imports.begin_import(kind, str(path), "", tally.imported_at)  # its digest comes at the end
    before = store.db.total_changes
    store.origin = entry
    try:
        with digest, store.imports.guarded(options.replace) as guard:
            try:
                counts = _IMPORTERS[kind](store, path, options, tally, guard)
            except sqlite3.IntegrityError:
                if guard.refused is None:
                    raise
                stale = (" (the grades made from a replaced text become stale)"
                         if guard.refused.table in ("queries", "passages") else "")
                raise InputError(str(path), guard.refused.line,
                                 f"{store.imports.describe(guard.refused)}; importing it "
                                 f"would replace what the store holds: pass {{replace}} to replace it{stale}",
                                 params=("replace",)) from None
    finally:
        store.origin = None
    set_stale(store, guard, tally)
    stale = tally.replaced.pop("stale grades", 0)
    for table, n in guard.replaced().items():
        tally.replaced[table] = tally.replaced.get(table, 0) + n
    if guard.replaced_questions:  # a bank's --replace: the question texts it changed (everywhere they are held)
        tally.replaced["questions"] = len(guard.replaced_questions)
    if stale:
        tally.replaced["stale grades"] = stale
        tally.notes.append(f"{tally.path}: {tally.replaced['stale grades']} grades were made from a text this "
                           "import replaced: set aside as stale (not counted anywhere; the next `grade` grades "
                           "those pairs again)")
    changed = store.db.total_changes - tally.bookkeeping != before
    store.imports.finish_import(entry, counts, tally.replaced, changed=changed, sha256=digest.value())
    if changed:  # the same content again (gzipped, CRLF, another path) leaves no trace either
        store.imports.record_import(kind, digest.value(), str(path))
    note_unjudgeable(store, tally)
    return tally.report(counts, unchanged=not changed)


_IMPORTERS: dict[str, Callable[[Store, Path, ImportOptions, Tally, Guard], Counts]] = {
    "queries": import_queries,
    "runs": import_runs,
    "qrels": import_qrels,
    "corpus": import_corpus,
    "bank": import_bank,
    "exampp": import_exampp,
    "responses": import_responses,
}


class _Digest:
    """The SHA-256 of a file's bytes, or of a folder's file names and bytes (`""` for a path that is none: the
    reader says what is wrong), computed in a thread beside the import — hashlib lets go of
    the GIL while it hashes, so a large file's digest costs the import no time of its own. Leaving the `with`
    block by an error stops it."""

    def __init__(self, path: Path) -> None:
        self._path, self._stop, self._digest = path, threading.Event(), ""
        self._error: Exception | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        """Start hashing (once; an exam_pp import starts it after forking its reader: no thread at the fork)."""
        if self._thread.ident is None:
            self._thread.start()

    def __enter__(self) -> _Digest:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is not None:
            self._stop.set()

    def value(self) -> str:
        """The digest (waiting for the thread); a file the reader read but the digest could not is refused, never
        recorded with an empty digest."""
        self.start()
        self._thread.join()
        if self._error is not None:
            raise InputError(str(self._path), None, f"cannot read it to record its digest: {self._error}")
        return self._digest

    def _run(self) -> None:
        path, digest = self._path, hashlib.sha256()
        try:
            if not path.exists():
                return  # the import's reader says so
            files = sorted(f for f in path.rglob("*") if f.is_file()) if path.is_dir() else [path]
            for file in files:
                if path.is_dir():
                    digest.update(str(file.relative_to(path)).encode("utf-8", "surrogateescape") + b"\0")
                with open(file, "rb") as handle:
                    while (block := handle.read(1 << 20)) and not self._stop.is_set():
                        digest.update(block)
        except Exception as exc:  # noqa: BLE001 - raised in the importing thread by `value`
            self._error = exc
            return
        self._digest = digest.hexdigest()
