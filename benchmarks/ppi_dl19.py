"""Prediction-powered leaderboards on DL19 (FLAN-T5-large grades, official judgments): the figures of docs/trust.md.

For P@20 (judge label >= 3, judgment >= 2) and nDCG@10: the built-in validation (`calibrate --ppi`, 200 draws per
budget 1, 2, 3, 5, 10, 15, 20); at 10, 15 and 20 judged topics the interval with λ fitted against λ = 1 on the
same draws; at 5 judged topics the coverage over all C(43, 5) = 962,598 draws (numpy, the
formulas written again here); the alternatives the choice was made against (textbook PPI with a normal quantile,
PPI++ with the weight fitted on the same topics, the weight known in advance: the bound on any per-system
method); and the Kendall tau with the official DL19 leaderboard of the corrected, judge-only and human-only
leaderboards.

    python benchmarks/ppi_dl19.py [--store dl19.db]   (imports the pool into a temporary store without one)
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
DL19 = ROOT.parent / "shared" / "data" / "dl19"

from proctor import api  # noqa: E402
from proctor.cli import main  # noqa: E402
from proctor.evaluate.leaderboard import measure_leaderboard  # noqa: E402
from proctor.evaluate.measures import parse_measure  # noqa: E402
from proctor.trust.ppi_board import estimates  # noqa: E402

SETTINGS = (("P@20", 3, 2), ("nDCG@10", None, 1))
N_JUDGED, DRAWS, SEED = 5, 200, 0


def matrices(store, measure: str, tau: int | None, rel: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Systems and their judge and human per-topic scores (systems x 43 topics)."""
    judge = api.leaderboard(store, measure, min_grade=tau)
    qrels = store.corpus.judgments()
    human = measure_leaderboard(store.corpus.ranked_lists(), qrels, parse_measure(measure), rel)
    systems = sorted(e.system for e in judge.entries)
    topics = sorted(qrels)
    by_j, by_h = {e.system: e.per_query for e in judge.entries}, {e.system: e.per_query for e in human.entries}
    return (systems, np.array([[by_j[s][t] for t in topics] for s in systems]),
            np.array([[by_h[s][t] for t in topics] for s in systems]))


def exact(judge: np.ndarray, human: np.ndarray, n: int) -> dict[str, float]:
    """Coverage over every draw of n topics: the chosen interval (weight 1, t with n-1, finite-population
    correction) and the human-only t interval with the same correction; median widths."""
    total = judge.shape[1]
    q, fpc, theta = stats.t.ppf(0.975, n - 1), 1 - n / total, human.mean(1)
    hits, hhits, widths, hwidths, count = 0, 0, [], [], 0
    combos = np.array(list(itertools.combinations(range(total), n)), dtype=np.int16)
    for start in range(0, len(combos), 40000):
        c = combos[start:start + 40000]
        h, d = human[:, c], human[:, c] - judge[:, c]
        half = q * np.sqrt(fpc * d.var(2, ddof=1) / n)
        hhalf = q * np.sqrt(fpc * h.var(2, ddof=1) / n)
        hits += int((np.abs(judge.mean(1)[:, None] + d.mean(2) - theta[:, None]) <= half + 1e-12).sum())
        hhits += int((np.abs(h.mean(2) - theta[:, None]) <= hhalf + 1e-12).sum())
        widths.append(np.median(2 * half, axis=0))
        hwidths.append(np.median(2 * hhalf, axis=0))
        count += c.shape[0] * judge.shape[0]
    w, hw = np.median(np.concatenate(widths)), np.median(np.concatenate(hwidths))
    return {"draws": len(combos), "coverage": hits / count, "coverage_human": hhits / count,
            "width_ratio": float(w / hw)}


def alternatives(judge: np.ndarray, human: np.ndarray, n: int) -> dict[str, tuple[float, float]]:
    """(coverage, median width / median human-only t width) over DRAWS draws of the intervals not chosen."""
    total = judge.shape[1]
    rng = np.random.default_rng(SEED)
    theta, jbar, jvar = human.mean(1), judge.mean(1), judge.var(1, ddof=1)
    oracle = np.array([np.cov(human[s], judge[s])[0, 1] for s in range(len(judge))]) / jvar
    z, t1, fpc = stats.norm.ppf(0.975), stats.t.ppf(0.975, n - 1), 1 - n / total
    out: dict[str, list] = {k: [[], []] for k in ("textbook", "naive++", "known weight", "chosen", "human")}
    for _ in range(DRAWS):
        idx = rng.choice(total, n, replace=False)
        h, j = human[:, idx], judge[:, idx]
        naive = np.array([np.cov(h[s], j[s])[0, 1] for s in range(len(h))]) / ((1 + n / total) * jvar)
        for name, lam, quant, extra, corr in (("textbook", np.ones(len(h)), z, jvar / total, 1.0),
                                              ("naive++", naive, z, naive ** 2 * jvar / total, 1.0),
                                              ("known weight", oracle, t1, 0.0, fpc),
                                              ("chosen", np.ones(len(h)), t1, 0.0, fpc),
                                              ("human", np.zeros(len(h)), t1, 0.0, fpc)):
            r = h - lam[:, None] * j
            half = quant * np.sqrt(corr * r.var(1, ddof=1) / n + extra)
            out[name][0].append(np.abs(lam * jbar + r.mean(1) - theta) <= half + 1e-12)
            out[name][1].append(2 * half)
    hw = np.median(out["human"][1])
    return {k: (float(np.mean(c)), float(np.median(w) / hw)) for k, (c, w) in out.items()}


def fitted_or_not(judge: np.ndarray, human: np.ndarray, n: int, draws: int = 1000) -> dict[str, tuple[float, float]]:
    """At n judged topics, the product's interval with λ fitted (PPI++) and with λ = 1, over the same draws:
    (coverage, median width / median human-only width)."""
    from proctor.trust.ppi import estimate

    rng = np.random.default_rng(SEED)
    topics = [f"t{i}" for i in range(judge.shape[1])]
    rows: dict[str, list] = {"fitted": [[], []], "weight 1": [[], []], "human": [[], []]}
    for _ in range(draws):
        judged = [topics[i] for i in rng.choice(len(topics), n, replace=False)]
        for s in range(len(judge)):
            j_all, h = dict(zip(topics, judge[s], strict=True)), dict(zip(topics, human[s], strict=True))
            target = float(human[s].mean())
            for name, tune_from in (("fitted", 0), ("weight 1", 10 ** 9)):
                e = estimate(j_all, {t: h[t] for t in judged}, tune_from=tune_from)
                rows[name][0].append(e.ppi_low <= target <= e.ppi_high)
                rows[name][1].append(e.ppi_high - e.ppi_low)
            rows["human"][1].append(e.human_high - e.human_low)
    hw = np.median(rows["human"][1])
    return {k: (float(np.mean(c)), float(np.median(w) / hw)) for k, (c, w) in rows.items() if c}


def official_taus(store, measure: str, tau: int | None, rel: int, official: dict[str, int]) -> dict[str, float]:
    """Kendall tau-b with the official leaderboard: judge-only, human on all topics, and the medians over the
    same DRAWS draws of the corrected and the human-only leaderboards at N_JUDGED topics."""
    def tau_of(scores: dict[str, float]) -> float:
        common = sorted(set(scores) & set(official))
        return float(stats.kendalltau([scores[s] for s in common], [-official[s] for s in common]).statistic)

    systems, judge, human = matrices(store, measure, tau, rel)
    topics = sorted(store.corpus.judgments())
    per_judge = {s: dict(zip(topics, row, strict=True)) for s, row in zip(systems, judge.tolist(), strict=True)}
    per_human = {s: dict(zip(topics, row, strict=True)) for s, row in zip(systems, human.tolist(), strict=True)}
    rng = np.random.default_rng(SEED)
    ppi, only = [], []
    for _ in range(DRAWS):  # the estimates `leaderboard --human-qrels --human-topics T1,...` makes
        judged = [topics[i] for i in sorted(rng.choice(len(topics), N_JUDGED, replace=False))]
        found, _ = estimates(per_judge, per_human, judged, 0.95)
        ppi.append(tau_of({s: e.ppi for s, e in found.items()}))
        only.append(tau_of({s: e.human for s, e in found.items()}))
    return {"judge": tau_of(dict(zip(systems, judge.mean(1), strict=True))),
            "human_all_topics": tau_of(dict(zip(systems, human.mean(1), strict=True))),
            "ppi_median": float(np.median(ppi)), "human_only_median": float(np.median(only))}


def run(store_path: Path) -> None:
    """Print every figure."""
    store = api.open_store(store_path)
    official = json.loads((DL19 / "dl19-official-leaderboard.json").read_text())
    for measure, tau, rel in SETTINGS:
        print(f"== {measure}" + (f" (judge label >= {tau}, judgment >= {rel})" if tau else ""))
        curve = api.calibrate(store, ppi=True, budgets=[1, 2, 3, 5, 10, 15, 20], repeats=DRAWS, seed=SEED,
                              measure=measure, min_grade=tau, judged_relevant=rel)
        print(curve.render("md").split("\n\n", 1)[1])
        systems, judge, human = matrices(store, measure, tau, rel)
        print(f"every draw of {N_JUDGED} of 43 topics: {exact(judge, human, N_JUDGED)}")
        for name, (cov, ratio) in alternatives(judge, human, N_JUDGED).items():
            print(f"  {name:13s} coverage {cov:.3f}  median width / human-only t's {ratio:.3f}")
        for n in (10, 15, 20):
            print(f"  at {n} judged topics (1000 draws): {fitted_or_not(judge, human, n)}")
        print(f"Kendall tau with the official leaderboard: {official_taus(store, measure, tau, rel, official)}")
    store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, help="a store with the DL19 pool imported (default: import it)")
    args = parser.parse_args()
    if args.store:
        run(args.store)
    else:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "dl19.db"
            assert main(["import", "exampp", str(DL19 / "dl19-pool-graded-flan-t5-large.jsonl.gz"), "--store",
                         str(path)]) == 0
            run(path)
