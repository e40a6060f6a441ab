"""The Python API: what the command line does, for notebooks and scripts. The CLI and the demo are thin
layers over it.

    from proctor import api
    store = api.open_store("dl19.db")
    board = api.leaderboard(store, measure="P@20", min_grade=3)        # one grade set, or UsageError
    print(api.render(board, "md"))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

# grading, banks, verification, imports and exports (`proctor grade`, `bank`, `verify`, `import`, `export`)
from proctor.api.bank_generation import Generated as Generated
from proctor.api.bank_generation import GenerationRequest as GenerationRequest
from proctor.api.bank_generation import generate_bank as generate_bank
from proctor.api.bank_generation import generate_bank_file as generate_bank_file
from proctor.api.bank_generation import generation_request as generation_request
from proctor.api.banks import BANK_FORMATS as BANK_FORMATS
from proctor.api.banks import BankDiff as BankDiff
from proctor.api.banks import BankExport as BankExport
from proctor.api.banks import BankImpact as BankImpact
from proctor.api.banks import ImpactRequest as ImpactRequest
from proctor.api.banks import diff_banks as diff_banks
from proctor.api.banks import export_bank as export_bank
from proctor.api.banks import impact_request as impact_request
from proctor.api.banks import load_bank_file as load_bank_file
from proctor.api.grading import ANSWER_METHODS as ANSWER_METHODS
from proctor.api.grading import METHOD_NAMES as METHOD_NAMES
from proctor.api.grading import Graded as Graded
from proctor.api.grading import GradeJob as GradeJob
from proctor.api.grading import GradeOutcome as GradeOutcome
from proctor.api.grading import grade as grade
from proctor.api.grading import grade_job as grade_job
from proctor.api.grading import grade_request as grade_request
from proctor.api.grading import run_grade_job as run_grade_job
from proctor.api.grading import ungraded as ungraded
from proctor.api.inputs import EXPORT_KINDS as EXPORT_KINDS
from proctor.api.inputs import IMPORT_KINDS as IMPORT_KINDS
from proctor.api.inputs import Exported as Exported
from proctor.api.inputs import ExportRequest as ExportRequest
from proctor.api.inputs import ImportOptions as ImportOptions
from proctor.api.inputs import ImportRequest as ImportRequest
from proctor.api.inputs import export_judgments as export_judgments
from proctor.api.inputs import export_request as export_request
from proctor.api.inputs import export_runs as export_runs
from proctor.api.inputs import import_into as import_into
from proctor.api.inputs import import_request as import_request
from proctor.api.verification import VERIFY_REPORTS as VERIFY_REPORTS
from proctor.api.verification import Verification as Verification
from proctor.api.verification import verify as verify
from proctor.errors import UsageError
from proctor.evaluate import stored_coverage
from proctor.evaluate.boards import answer_leaderboard, check_leaderboard
from proctor.evaluate.coverage import DEFAULT_FLOOR, Coverage, Floor, leaderboard_coverage
from proctor.evaluate.intervals import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, bootstrap
from proctor.evaluate.labels import LabelStats, binarize
from proctor.evaluate.leaderboard import Leaderboard, cover_leaderboard, measure_leaderboard
from proctor.evaluate.leaderboard_files import read_leaderboard
from proctor.evaluate.render import to_ir_measures, to_json, to_jsonl, to_markdown, to_trec, to_tsv
from proctor.evaluate.sources import (
    cover_table,
    exam_qrels,
    load_runs,
    note_flagged,
    official_or_file_qrels,
    with_unjudgeable,
)
from proctor.evaluate.stored_coverage import query_counts
from proctor.gradesets.ensemble import check_min_grade
from proctor.gradesets.resolve import describe, resolve_grade_set
from proctor.numeric_options import check_numbers
from proctor.records import GradeSet
from proctor.store import Store
from proctor.trust.door import calibrate as calibrate
from proctor.trust.door import ensemble as ensemble
from proctor.trust.door import probe as probe
from proctor.trust.door import render_probe as render_probe
from proctor.trust.door import to_review as to_review

if TYPE_CHECKING:  # numpy (the randomization test) loads only when a comparison is made
    from proctor.stats.pairs import Comparison


def open_store(path: str | Path, *, create: bool = False) -> Store:
    """Open a store (creating it with `create`)."""
    return Store.create_or_open(path) if create else Store.open(path)


@dataclass(frozen=True)
class LabelChoice:
    """Which grade set, and how its grades become labels."""

    grade_set: str | None = None
    method: str | None = None
    model: str | None = None
    bank: str | None = None
    min_questions: int = 1
    facets: bool = False

    def resolve(self, store: Store) -> GradeSet:
        """The one grade set this choice names (else a UsageError listing the candidates)."""
        return resolve_grade_set(store, self.grade_set, self.method, self.model, self.bank)


def qrels(store: Store, labels: LabelChoice = LabelChoice(), *, binary_min_grade: int | None = None,
          stats: LabelStats | None = None) -> tuple[GradeSet, dict[str, dict[str, int]]]:
    """EXAM-Qrels of one grade set (binary at `binary_min_grade` when given)."""
    grade_set = labels.resolve(store)
    check_min_grade(grade_set, binary_min_grade)
    result = exam_qrels(store, grade_set, min_questions=labels.min_questions, facets=labels.facets, stats=stats)
    return grade_set, binarize(result, binary_min_grade) if binary_min_grade is not None else result


def labels_coverage(store: Store, grade_set: GradeSet | None, labels: dict, pool: dict | None = None, *,
                    floor: Floor = DEFAULT_FLOOR) -> Coverage:
    """What labels (qrels of a grade set, or judgments) rest on: their queries, and the pool pairs (`pool`,
    default: every passage the stored runs rank) that have a label, judged against `floor`."""
    return stored_coverage.labels_coverage(store, grade_set, labels, pool, floor=floor)


def leaderboard(store: Store, *, measure: str | None = None, min_grade: int | None = None, metric: str = "qrels",
                labels: LabelChoice = LabelChoice(), judgments: str | None = None, budget: int = 20,
                missing: str | None = None, normalize: str | None = None, gold: str | None = None,
                runs: Sequence[str] | None = None, score: str | None = None,
                floor: Floor = DEFAULT_FLOOR) -> Leaderboard:
    """An EXAM-Qrels leaderboard (`measure`, `min_grade`; `judgments="official"` or a qrels file scores
    with human judgments instead), an EXAM-Cover one (`metric="cover"`, `min_grade`, `budget`), or the
    generated answers' AutoNuggetizer scores (`metric="nuggets"`, `score`) or citation support
    (`metric="citations"`, `score`)."""
    if metric in ("nuggets", "citations"):
        return answer_leaderboard(store, metric, score, labels=labels, missing=missing, floor=floor,
                                  conflicting={"--measure": measure, "--min-grade": min_grade, "--qrels": judgments,
                                               "--normalize": normalize, "--gold": gold, "--runs": runs})
    if score is not None:
        raise UsageError("{score} applies to {metric} nuggets and {metric} citations only", params=("score", "metric"))
    return leaderboards(store, measures=[measure] if measure else [], min_grade=min_grade, metric=metric,
                        labels=labels, judgments=judgments, budget=budget, missing=missing, normalize=normalize,
                        gold=gold, runs=runs, floor=floor)[0]


def leaderboards(store: Store, *, measures: Sequence[str] = (), min_grade: int | None = None, metric: str = "qrels",
                 labels: LabelChoice = LabelChoice(), judgments: str | None = None, budget: int = 20,
                 missing: str | None = None, normalize: str | None = None, gold: str | None = None,
                 runs: Sequence[str] | None = None, floor: Floor = DEFAULT_FLOOR) -> list[Leaderboard]:
    """One leaderboard per measure (labels and runs read once), or the one EXAM-Cover leaderboard, each with
    its coverage (what it rests on, judged against `floor`); the other options are those of `leaderboard`."""
    floor.check()
    specs = [check_leaderboard(measure=m, min_grade=min_grade, metric=metric, judgments=judgments, budget=budget,
                               normalize=normalize, gold=gold) for m in (measures or [None])]
    if not judgments:  # the threshold of --min-grade or of a measure's own rel=T, on the grade set's scale
        for spec in specs:
            own = spec is not None and spec.rel is not None
            check_min_grade(labels.resolve(store), spec.rel if own else min_grade,  # type: ignore[union-attr]
                            f"{spec.name}: rel=" if own else "--min-grade")  # type: ignore[union-attr]
    ranked = load_runs(store, runs)
    if metric == "cover":
        grade_set = labels.resolve(store)
        if gold and gold not in ranked:
            raise UsageError(f"--gold {gold}: no such run (runs: {', '.join(sorted(ranked))})")
        table, notes = cover_table(store, grade_set, min_grade)  # type: ignore[arg-type]
        board = cover_leaderboard(ranked, table, budget=budget, missing=missing or "zero", normalize=normalize,
                                  gold=gold, description=describe(store, grade_set), notes=notes)
        graded = exam_qrels(store, grade_set)
        board.coverage = leaderboard_coverage(board, ranked, graded, query_counts(store, grade_set, graded),
                                              depth=budget, labelled_by="graded", floor=floor)
        return note_flagged(with_unjudgeable(store, ranked, not runs, [board]))
    grade_set = None
    if judgments:
        qrels_ = official_or_file_qrels(store, judgments)
        description = {"labels": "human judgments" if judgments == "official" else f"qrels file {judgments}",
                       "labels_id": judgments}
    else:
        grade_set, qrels_ = qrels(store, labels)
        description = describe(store, grade_set)
        description["label_rule"] = ("max grade over questions" if labels.min_questions == 1
                                     else f"{labels.min_questions}-th largest grade")
    judged = qrels_ if judgments not in (None, "official") else None  # a qrels file: its own judged queries
    counts = query_counts(store, grade_set, qrels_ if grade_set else None, judged)
    boards = [measure_leaderboard(ranked, qrels_, spec, min_grade, missing=missing or "skip", description=description)
              for spec in specs if spec is not None]
    note_flagged(boards)
    for board, spec in zip(boards, [s for s in specs if s is not None], strict=True):
        board.coverage = leaderboard_coverage(board, ranked, qrels_, counts, depth=getattr(spec, "cutoff", None),
                                              labelled_by="graded" if grade_set else "judged", floor=floor)
    return with_unjudgeable(store, ranked, not runs, boards)


def add_intervals(board: Leaderboard, *, confidence: float = DEFAULT_CONFIDENCE, resamples: int = DEFAULT_RESAMPLES,
                  seed: int = 0) -> Leaderboard:
    """Give a leaderboard bootstrap intervals over topics: each system's score interval and rank interval
    (`proctor.evaluate.intervals`); returns the same leaderboard."""
    check_numbers({"confidence": confidence, "resamples": resamples, "seed": seed})
    board.intervals = bootstrap({e.system: e.per_query for e in board.entries}, [e.system for e in board.entries],
                                confidence=confidence, resamples=resamples, seed=seed)
    return board


def significance(board: Leaderboard, *, tests: Sequence[str] = ("t", "randomization"), correction: str = "holm",
                 alpha: float = 0.05, baseline: str | None = None, samples: int = 10_000, seed: int = 0) -> Comparison:
    """Paired t-tests and randomization tests between the systems of a leaderboard (every pair, or each system
    against `baseline`), corrected for multiple comparisons."""
    check_numbers({"alpha": alpha, "samples": samples})
    per_query = {e.system: e.per_query for e in board.entries}
    comparison = _compare(per_query, [e.system for e in board.entries], tests, correction, alpha, baseline, samples,
                          seed)
    return _source(comparison, board.description)


def compare_file(path: str | Path, *, tests: Sequence[str] = ("t", "randomization"), correction: str = "holm",
                 alpha: float = 0.05, baseline: str | None = None, samples: int = 10_000, seed: int = 0,
                 measure: str | None = None) -> Comparison:
    """`significance` for a leaderboard file with per-query scores (read for `measure` when it holds several)."""
    check_numbers({"alpha": alpha, "samples": samples})
    board = read_leaderboard(path, measure)
    if not board.per_query:
        raise UsageError(f"{path}: no per-query scores; write the leaderboard with `proctor leaderboard --format json "
                         "--per-query` (or --format trec, ir-measures, jsonl)")
    order = sorted(board.per_query, key=lambda s: (-board.scores.get(s, 0.0), s))
    return _source(_compare(board.per_query, order, tests, correction, alpha, baseline, samples, seed),
                   board.description)


def _source(comparison: Comparison, description: dict) -> Comparison:
    """Name the measure and the labels (grade set, official judgments, qrels file) the scores were made with."""
    from proctor.evaluate.render import labels_of_description, measure_of_description

    if description:
        comparison.settings["measure"] = measure_of_description(description)
        comparison.settings["labels"] = labels_of_description(description)
    return comparison


def _compare(per_query: dict[str, dict[str, float]], order: list[str], tests: Sequence[str], correction: str,
             alpha: float, baseline: str | None, samples: int, seed: int) -> Comparison:
    if baseline is not None and baseline not in per_query:
        raise UsageError(f"--baseline {baseline}: no such system (systems: {', '.join(order)})")
    from proctor.stats.pairs import compare_systems

    return compare_systems(per_query, order=order, baseline=baseline, tests=tuple(tests), correction=correction,
                           alpha=alpha, samples=samples, seed=seed)


def render(board: Leaderboard | Sequence[Leaderboard], fmt: str = "tsv", *, per_query: bool = False) -> str:
    """One or several leaderboards as `tsv`, `json`, `md` or `trec` (trec_eval's per-query lines) text."""
    if fmt == "tsv":
        return to_tsv(board)
    if fmt == "json":
        return to_json(board, per_query=per_query)
    if fmt == "md":
        return to_markdown(board)
    writers = {"trec": to_trec, "tot": to_trec, "ir-measures": to_ir_measures, "jsonl": to_jsonl}
    if fmt in writers:
        return writers[fmt](board)
    raise UsageError(f"unknown format {fmt!r}: tsv, json, md, trec (= tot), ir-measures or jsonl")


def correlate(board: Leaderboard | str | Path, official: Any, *, bootstrap: int = 1000, seed: int = 0,
              ties: str = "average", repeats: int = 10, official_name: str | None = None,
              measure: str | None = None, floor: Floor = DEFAULT_FLOOR) -> dict[str, Any]:
    """Spearman, Kendall τ-b, τ_AP and the other statistics of `STATISTICS` of a leaderboard (or a leaderboard
    file, read for `measure` when it holds several) with the official leaderboard (a file, or a
    `LeaderboardFile`), with bootstrap intervals over queries, the pairs of systems ordered against the official
    order, and what it rests on (judged against `floor`); what `proctor correlate` prints as JSON."""
    from proctor.analyze.compare import compare, per_query_correlation
    from proctor.evaluate.leaderboard_files import LeaderboardFile, read_leaderboard, read_official

    check_numbers({"bootstrap": bootstrap, "repeats": repeats})
    if isinstance(board, Leaderboard):
        coverage = {"coverage": board.coverage.as_dict()} if board.coverage is not None else {}
        predicted = LeaderboardFile(board.scores(), {e.system: e.per_query for e in board.entries},
                                    {**board.description, **coverage})
    else:
        predicted = read_leaderboard(board, measure)
    reference = official if isinstance(official, LeaderboardFile) else read_official(official)
    result = {"leaderboard": str(board) if not isinstance(board, Leaderboard) else "(in memory)",
              "leaderboard_made_by": predicted.description or None, "official": official_name or str(official),
              **compare(predicted, reference, samples=bootstrap, seed=seed, ties=ties, repeats=repeats, floor=floor)}
    if predicted.per_query and reference.per_query:
        result["per_query"] = per_query_correlation(predicted.per_query, reference.per_query)
    return result


def as_rows(board: Leaderboard) -> list[dict[str, Any]]:
    """A leaderboard as plain rows `{system, score, stderr, n_queries}`, best first."""
    return [{"system": e.system, "score": e.score, "stderr": e.stderr, "n_queries": e.n_queries}
            for e in board.entries]


def to_frame(value: Leaderboard | dict | list) -> Any:
    """A pandas DataFrame of a leaderboard (`system, score, stderr, n_queries`), qrels `{qid: {pid: label}}`
    (`query_id, passage_id, label`) or a list of plain rows; needs pandas (an optional dependency)."""
    try:
        import pandas
    except ImportError:
        raise UsageError("to_frame needs pandas (pip install pandas); the plain objects need nothing") from None
    if isinstance(value, Leaderboard):
        return pandas.DataFrame(as_rows(value), columns=["system", "score", "stderr", "n_queries"])
    if isinstance(value, dict):
        rows = [{"query_id": q, "passage_id": p, "label": label} for q, per in value.items()
                for p, label in per.items()]
        return pandas.DataFrame(rows, columns=["query_id", "passage_id", "label"])
    return pandas.DataFrame(list(value))


def info_text(counts: dict[str, Any]) -> str:
    """What `proctor info` prints: counts, bank versions, grade sets."""
    lines = [f"{key:<14} {counts[key]}" for key in ("store", "queries", "passages", "runs", "generated_runs",
                                                     "rankings", "judgments", "banks", "questions", "grades",
                                                     "failures", "unjudgeable")]
    for bank in counts["bank_versions"]:
        latest = " (latest)" if bank["latest"] else ""
        lines.append(f"bank           {bank['bank']}@{bank['version']}{latest}: {bank['questions']} items "
                     f"({bank['nuggets']} nuggets) from {bank['source']}")
    for s in counts["grade_sets"]:
        hidden = (" (intermediate)" if s.get("intermediate") else "") + (" (empty)" if s.get("empty") else "")
        lines.append(f"grade set      {s['id']}  {s['method']} / {s['model']}  bank {s['bank']}  prompt "
                     f"{s['prompt_version']}  {s['grades']} grades ({s['failures']} failed){hidden}")
    for grade_set, why in counts["stale_grades"].items():
        lines.append(f"stale grades   {grade_set}  " + ", ".join(f"{n} ({reason})" for reason, n in why.items())
                     + ": not counted; the next `grade` grades those pairs again")
    return "\n".join(lines) + "\n"
