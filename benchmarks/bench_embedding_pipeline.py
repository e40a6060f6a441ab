"""The embedding grader's own CPU cost per pair, with the model's cost taken away (issue 36: on a GPU the model is
cheap and Proctor's per-pair work sets the pace). `EmbeddingBackend.encode` is replaced by a lookup of unit vectors
computed once beforehand with a tiny random-weight encoder (bench_local_paths' 2 layers of width 64), so what is
left is the pipeline: planning, the similarity step (`grading.similarity`), the grade rows and the store. The bare
loop does the same lookups per query and maps similarities to grades with numpy (bench_local_paths'
`bare_embedding` with the same free encoder); it writes nothing. Grades all of DL19 (92,600 pairs; needs
../shared/data/dl19). Prints pairs/s (Proctor's steady clock and its whole `grade` call) and CPU µs per pair
(getrusage of the process, every thread: over Proctor's grading clock, the model loaded, and over its whole
`grade` call, planning included; the bare loop's over its loop), best of
`--rounds`, alternately; asserts nothing. `--dump FILE` also writes a digest of each table of the graded
store (`Store.dump`, the writing times left out; the tiny encoder is kept beside `--store`, so its
grade set id is the same in both) for an A/B of two checkouts (run each with its own PYTHONPATH).

Figures (2 shared CPU cores, 2026-11-27; before = main at 9bf6140, runs of each interleaved, CPU µs a pair over
the grading clock, then the whole `grade` call): before 20.1 / 23.7, after 11.2 / 14.2 (median of 5 each, a busy
machine); before 13.1 / 15.5, after 8.8 / 10.9 (median of 3 each, quieter); the bare loop 0.5–1.6. The store's
`Store.dump` digests identical before and after. Details: docs/grading.md, "Local models: speed".
Usage: python benchmarks/bench_embedding_pipeline.py [--rounds 3] [--queries N] [--dump FILE] [--store FILE]"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_local_paths import DL19, TINY_BERT, build_encoder, clock_cpu, cpu, dl19_store  # noqa: E402


def free_encoder(store: Path, encoder_path: Path) -> dict:
    """Every question's and passage's unit vector, computed once (the lookup table `encode` answers from)."""
    from sentence_transformers import SentenceTransformer

    from proctor.store import Store

    opened = Store.open(store, read_only=True)
    try:
        texts = list(opened.corpus.passage_texts().values())
        bank = opened.banks.bank_version(None)
        texts += [item[1] for items in opened.banks.bank_items("question", *bank).values() for item in items]
    finally:
        opened.close()
    texts = list(dict.fromkeys(texts))
    model = SentenceTransformer(str(encoder_path), device="cpu", local_files_only=True)
    vectors = model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                           show_progress_bar=False)
    return dict(zip(texts, vectors, strict=True))


def lookup(table: dict, texts: list[str]):
    import numpy as np

    return np.stack([table[t] for t in texts])


def proctor_round(store: Path, copy: Path, encoder_path: Path, queries: int | None, dump: Path | None) -> tuple:
    from proctor import api
    from proctor.store import Store

    shutil.copy(store, copy)
    opened = Store.open(copy)
    try:
        before, start = cpu(), time.perf_counter()
        graded = api.grade(opened, "embedding", f"embed:{encoder_path}", progress=False, max_queries=queries)
        wall, used = time.perf_counter() - start, cpu() - before
        summary = graded.summaries[-1].as_dict()
        grades = list(opened.grades.records(graded.grade_set))
        if dump is not None:  # the writing times left out: grades' column 11, grade sets' last
            tables = opened.dump()
            tables["grades"] = [row[:11] + row[12:] for row in tables["grades"]]
            tables["grade_sets"] = [row[:-1] for row in tables["grade_sets"]]
            dump.write_text("".join(f"{name} {len(rows)} rows {hashlib.sha256(repr(rows).encode()).hexdigest()}\n"
                                    for name, rows in tables.items()))
    finally:
        opened.close()
    return summary, wall, used, grades


def bare_round(table: dict, by_query: dict) -> tuple[float, float, int]:
    import numpy as np

    from proctor.methods.embedding import THRESHOLDS

    cuts = np.array([m for m, _ in reversed(THRESHOLDS)])
    before, start, n = cpu(), time.perf_counter(), 0
    for rows in by_query.values():
        questions = list(dict.fromkeys(q for q, _ in rows))
        passages = list(dict.fromkeys(p for _, p in rows))
        vectors = lookup(table, questions + passages)
        qpos, ppos = {q: i for i, q in enumerate(questions)}, {p: len(questions) + i for i, p in enumerate(passages)}
        scores = np.einsum("ij,ij->i", vectors[[qpos[q] for q, _ in rows]], vectors[[ppos[p] for _, p in rows]])
        n += len(np.searchsorted(cuts, scores, side="right").tolist())
    return time.perf_counter() - start, cpu() - before, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, help="grade only the first N queries")
    parser.add_argument("--dump", type=Path, help="write a digest of the graded grades here")
    parser.add_argument("--store", type=Path, help="a DL19 store made before (kept; made here when missing)")
    args = parser.parse_args()
    if not DL19.is_dir():
        raise SystemExit(f"{DL19}: the DL19 data is needed (see ../shared/data/README.md)")
    import torch

    from proctor.llm.embed import EmbeddingBackend

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        store = args.store or tmp / "dl19.db"
        if not store.exists():
            shutil.move(dl19_store(tmp), store)
        encoder_path = store.parent / "tiny-encoder" / "encoder"  # beside the store: the same grade set id again
        if not encoder_path.is_dir():
            build_encoder(encoder_path.parent, TINY_BERT)
        table = free_encoder(store, encoder_path)
        EmbeddingBackend.encode = lambda self, texts: lookup(table, texts)  # the model's cost taken away
        clock = clock_cpu()
        print(f"free encoder, one torch thread, best of {args.rounds}; {time.strftime('%Y-%m-%d %H:%M')}", flush=True)
        best = {"steady": 0.0, "wall": 0.0, "cpu": float("inf"), "clock_cpu": float("inf"), "bare": 0.0,
                "bare_cpu": float("inf")}
        for n in range(args.rounds):
            summary, wall, used, grades = proctor_round(store, tmp / "g.db", encoder_path, args.queries,
                                                        args.dump if n == 0 else None)
            pairs = summary["graded_now"]
            best["steady"] = max(best["steady"], summary["pairs_per_second"])
            best["wall"] = max(best["wall"], pairs / wall)
            best["cpu"] = min(best["cpu"], used / pairs * 1e6)
            best["clock_cpu"] = min(best["clock_cpu"], clock["cpu"] / pairs * 1e6)
            by_query: dict[str, list] = {}
            for g in grades:
                by_query.setdefault(g.query_id, []).append((questions_of(store)[g.question_id], passages_of(store)[
                    g.passage_id]))
            seconds, used, n_bare = bare_round(table, by_query)
            best["bare"] = max(best["bare"], n_bare / seconds)
            best["bare_cpu"] = min(best["bare_cpu"], used / n_bare * 1e6)
        print(f"Proctor {best['steady']:8.0f} pairs/s steady, {best['wall']:8.0f} wall; CPU us/pair "
              f"{best['clock_cpu']:5.1f} steady, {best['cpu']:5.1f} whole grade call"
              f" | bare {best['bare']:8.0f} pairs/s, {best['bare_cpu']:6.1f} CPU us/pair | ratio "
              f"{best['steady'] / best['bare']:.2f} steady, {best['wall'] / best['bare']:.2f} wall ({pairs} pairs)")


_TEXTS: dict = {}


def questions_of(store: Path) -> dict:
    if "q" not in _TEXTS:
        from proctor.store import Store

        opened = Store.open(store, read_only=True)
        bank = opened.banks.bank_version(None)
        _TEXTS["q"] = {item[0]: item[1] for items in opened.banks.bank_items("question", *bank).values()
                       for item in items}
        _TEXTS["p"] = opened.corpus.passage_texts()
        opened.close()
    return _TEXTS["q"]


def passages_of(store: Path) -> dict:
    questions_of(store)
    return _TEXTS["p"]


if __name__ == "__main__":
    main()
