"""ir_datasets ids as inputs (`queries = "irds:ID"`, also `qrels`, `corpus`): with the optional
`ir_datasets` package and the dataset's files already in its local copy, the records are written once to
plain files (queries TSV, TREC qrels, corpus JSONL) that are imported and hashed like any other input.
Proctor never downloads: any download ir_datasets would start is refused and reported with what is
missing and how to give files instead."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from proctor.api.experiments import atomic_file
from proctor.errors import ProctorError
from proctor.experiment.schema import Experiment, Source

SUFFIX = {"queries": "queries.tsv", "qrels": "qrels.txt", "corpus": "corpus.jsonl"}
FILES_INSTEAD = {"queries": 'queries = "queries.tsv" (id<TAB>text)', "qrels": 'qrels = "qrels.txt" (TREC qrels)',
                 "corpus": 'corpus = "corpus.jsonl" ({"id", "text"} per line)'}


class _Refused(Exception):
    """A download ir_datasets tried to start."""


def materialise(experiment: Experiment, folder: Path) -> dict[Source, list[Path]]:
    """`{source: [file]}` for every `irds:` source, written into `folder` (once: a file already there, or in
    OUT/inputs, is kept)."""
    wanted = [s for s in experiment.sources if s.dataset]
    if not wanted:
        return {}
    try:
        import ir_datasets
    except ImportError:  # pragma: no cover - exercised by hiding the package
        raise experiment.error(("inputs",), wanted[0].kind, f"irds:{wanted[0].dataset} needs the optional "
                               "ir_datasets package (in a Proctor checkout: pip install -e '.[irds]'); or give files "
                               "instead: "
                               f"{FILES_INSTEAD[wanted[0].kind]}") from None
    out: dict[Source, list[Path]] = {}
    with tempfile.TemporaryDirectory(prefix="proctor-irds-") as scratch:
        pending = []
        for source in wanted:
            assert source.dataset is not None
            name = f"{re.sub(r'[^A-Za-z0-9._-]+', '_', source.dataset)}.{SUFFIX[source.kind]}"
            target = experiment.out / "inputs" / name
            if not target.exists():
                target = folder / name
            if not target.exists():
                try:
                    _write(ir_datasets, source, Path(scratch) / name)
                except ProctorError as exc:
                    raise experiment.error(("inputs",), source.kind, str(exc)) from None
                pending.append((Path(scratch) / name, target))
            out[source] = [target]
        for written, target in pending:  # all or nothing: written once every dataset could be read
            target.parent.mkdir(parents=True, exist_ok=True)
            with atomic_file(target, binary=True) as handle, written.open("rb") as source_file:
                shutil.copyfileobj(source_file, handle)
    return out


def _write(ir_datasets: Any, source: Source, target: Path) -> None:
    try:
        dataset = ir_datasets.load(source.dataset)
    except KeyError:
        raise ProctorError(f"irds:{source.dataset}: ir_datasets knows no such dataset") from None
    has = {"queries": "has_queries", "qrels": "has_qrels", "corpus": "has_docs"}[source.kind]
    if not getattr(dataset, has)():
        raise ProctorError(f"irds:{source.dataset}: the dataset has no {source.kind}")
    attempted: list[str] = []
    try:
        with _no_downloads(ir_datasets, attempted), target.open("w", encoding="utf-8") as handle:
            _records(dataset, source.kind, handle)
    except Exception as exc:
        if not attempted and not isinstance(exc, _Refused):
            raise
        home = ir_datasets.util.home_path()
        raise ProctorError(f"irds:{source.dataset}: its {source.kind} are not in the local copy of ir_datasets "
                           f"({home}) and Proctor never downloads (it would fetch {attempted[0] if attempted else '?'})"
                           f"; put the dataset's files there (ir_datasets documents where), or give files "
                           f"instead: {FILES_INSTEAD[source.kind]}") from None


def _records(dataset: Any, kind: str, handle) -> None:
    if kind == "queries":
        for query in dataset.queries_iter():
            handle.write(f"{query.query_id}\t{_one_line(_text(query))}\n")
    elif kind == "qrels":
        for qrel in dataset.qrels_iter():
            handle.write(f"{qrel.query_id} 0 {qrel.doc_id} {qrel.relevance}\n")
    else:
        for doc in dataset.docs_iter():
            handle.write(json.dumps({"id": doc.doc_id, "text": _text(doc)}, ensure_ascii=False) + "\n")


def _text(record: Any) -> str:
    if hasattr(record, "default_text"):
        return record.default_text()
    return str(getattr(record, "text", ""))


def _one_line(text: str) -> str:
    return " ".join(text.split())


@contextlib.contextmanager
def _no_downloads(ir_datasets: Any, attempted: list[str]) -> Iterator[None]:
    """Every remote download class of ir_datasets refuses to stream (local files still open)."""
    module = ir_datasets.util.download
    remote = [c for c in vars(module).values() if isinstance(c, type) and issubclass(c, module.BaseDownload)
              and c not in (module.BaseDownload, module.LocalDownload)]
    saved = {c: c.__dict__.get("stream") for c in remote}

    def refuse(self):
        attempted.append(str(getattr(self, "url", None) or getattr(self, "_url", None) or type(self).__name__))
        raise _Refused(attempted[-1])

    for cls in remote:
        cls.stream = refuse
    try:
        yield
    finally:
        for cls, original in saved.items():
            if original is None:
                delattr(cls, "stream")
            else:
                cls.stream = original
