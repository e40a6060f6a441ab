"""Fidelity on TREC DL 2019 (needs ../shared/data/dl19): Proctor's figures next to the papers' published ones.

Imports the DL19 pool with its recorded FLAN-T5-large self-ratings into a temporary store and prints, for
every check, the published value, Proctor's value and whether they agree. docs/fidelity.md quotes its output.
The published values below are copied from the papers in ../shared/papers (table and line named).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DL19 = Path(os.environ.get("PROCTOR_SHARED", ROOT.parent / "shared")) / "data" / "dl19"
OFFICIAL = DL19 / "dl19-official-leaderboard.json"

# 004 (FLAN-T5-EXAM), the DL19 agreement table (TREC DL 2019, 9,260 passages): label x judgment counts, kappa.
AGREEMENT_004 = {"lenient (label >= 1 vs judgment >= 2)": (">=1", 1627, 1809, 874, 4950, 0.34),
                 "strict (label >= 4 vs judgment >= 2)": (">=4", 1439, 1356, 1062, 5403, 0.36)}
# 003 (RUBRIC) Table 3, TREC DL 2019 columns: (Question) RUBRIC at tau 1, 4, 5.
RUBRIC_003 = {1: {"nDCG@10 S": 0.961, "nDCG@10 K": 0.848, "AP S": 0.440, "RR S": 0.850},
              4: {"nDCG@10 S": 0.961, "nDCG@10 K": 0.848, "AP S": 0.467, "RR S": 0.696},
              5: {"nDCG@10 S": 0.961, "nDCG@10 K": 0.848, "AP S": 0.882, "RR S": 0.795}}


def proctor(*args: str) -> str:
    """Run one command; its standard output."""
    proc = subprocess.run([sys.executable, "-m", "proctor", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"proctor {' '.join(args)}: {proc.stderr}")
    return proc.stdout


def row(check: str, published: float | str, ours: float | str, tolerance: float = 0.0005) -> None:
    """Print one comparison line."""
    if isinstance(published, float) and isinstance(ours, float):
        verdict = "exact" if abs(published - ours) <= tolerance else f"differs by {ours - published:+.3f}"
        print(f"| {check} | {published:.3f} | {ours:.4f} | {verdict} |")
    else:
        print(f"| {check} | {published} | {ours} | {'exact' if published == ours else 'differs'} |")


def agreement(store: str) -> None:
    """004's DL19 agreement table: labels from at least 2 questions (2nd-largest grade) vs NIST judgments."""
    data = json.loads(proctor("agreement", "--store", store, "--judged-relevant", "2", "--min-questions", "2",
                              "--format", "json"))
    result = data["grade_sets"][0]["at_least_m_questions"]["2"]
    counts = result["confusion"]["counts"]  # rows: labels 0..5, columns: judgments 0..3
    kappas = {b["predicted"]: b["cohen_kappa"] for b in result["binary"]}
    for name, (merge, tp, fp, fn, tn, kappa) in AGREEMENT_004.items():
        cut = int(merge[2:])
        ours = (sum(sum(r[2:]) for r in counts[cut:]), sum(sum(r[:2]) for r in counts[cut:]),
                sum(sum(r[2:]) for r in counts[:cut]), sum(sum(r[:2]) for r in counts[:cut]))
        row(f"004 DL19 agreement {name}: counts", str((tp, fp, fn, tn)), str(ours))
        row(f"004 DL19 agreement {name}: Cohen's kappa (2 decimals)", kappa, round(kappas[merge], 2), 0.0)


def rubric_table3(store: str, tmp: Path) -> None:
    """003 Table 3 (DL19): correlation of RUBRIC leaderboards with the official one of the same measure."""
    for tau, published in RUBRIC_003.items():
        for measure in ("nDCG@10", "AP", "RR"):
            official, ours = tmp / f"official-{measure}.tsv", tmp / f"rubric-{measure}-{tau}.tsv"
            official.write_text(proctor("leaderboard", "--store", store, "--measure", measure, "--qrels", "official",
                                        "--format", "tsv"))
            ours.write_text(proctor("leaderboard", "--store", store, "--measure", measure, "--min-grade", str(tau),
                                    "--format", "tsv"))
            corr = json.loads(proctor("correlate", str(ours), "--official", str(official), "--format", "json"))
            for key, value in (("S", corr["spearman"]), ("K", corr["kendall"])):
                if f"{measure} {key}" in published:
                    row(f"003 Table 3 DL19 RUBRIC tau={tau} {measure} {key}", published[f"{measure} {key}"], value)


def n_exam(store: str) -> None:
    """001 §3.1.3: n-EXAM is a ratio of sums, so it orders systems exactly as EXAM-Cover."""
    def board(*extra: str) -> dict:
        return json.loads(proctor("leaderboard", "--store", store, "--metric", "cover", "--min-grade", "3",
                                  "--budget", "20", "--format", "json", "--per-query", *extra))

    from proctor.analyze.correlation import kendall_tau_b

    plain, normalised = board(), board("--normalize", "pool")
    cover = {r["system"]: r["score"] for r in plain["systems"]}
    scaled = {r["system"]: r["score"] for r in normalised["systems"]}
    systems = sorted(cover)
    row("001 n-EXAM vs EXAM-Cover order (Kendall, DL19 tau=3 k=20)", 1.0,
        kendall_tau_b([cover[s] for s in systems], [scaled[s] for s in systems]))


def official_order(store: str, tmp: Path) -> None:
    """The data README: official nDCG@10 from the judgments reproduces the official order."""
    board = tmp / "official-ndcg.tsv"
    board.write_text(proctor("leaderboard", "--store", store, "--measure", "ndcg_cut.10", "--qrels", "official",
                             "--format", "tsv"))
    corr = json.loads(proctor("correlate", str(board), "--official", str(OFFICIAL), "--format", "json"))
    row("official nDCG@10 vs official ranks, Spearman (data README)", 1.000, corr["spearman"])
    row("official nDCG@10 vs official ranks, Kendall (data README)", 0.997, corr["kendall"])


@contextmanager
def dl19_store() -> Iterator[tuple[Path, str]]:
    """A temporary folder and the store in it (`dl19.db`) holding DL19's graded pool."""
    pool = DL19 / "dl19-pool-graded-flan-t5-large.jsonl.gz"
    if not pool.exists():
        raise SystemExit(f"{pool} is missing: the script needs the DL19 data")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        store = str(tmp / "dl19.db")
        proctor("import", "exampp", str(pool), "--store", store)
        yield tmp, store


def main() -> None:
    """Import DL19 once and print every comparison as a Markdown table."""
    with dl19_store() as (tmp, store):
        print("| check | published | Proctor | verdict |\n|---|---|---|---|")
        agreement(store)
        n_exam(store)
        official_order(store, tmp)
        rubric_table3(store, tmp)


if __name__ == "__main__":
    main()
