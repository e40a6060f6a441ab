"""Every number the statistics code computes on TREC DL 2019 (needs ../shared/data/dl19), dumped to JSON, so two
versions of the code can be shown to agree: `dump OUT.json` on each version, then `diff OLD.json NEW.json`
prints the largest absolute difference of any number (and any value that is not a number and differs).

Covers `proctor correlate` (with bootstrap intervals, average and random ties, per-query official scores),
`proctor agreement` (Cohen's kappa, weighted kappa, Krippendorff's alpha), `proctor compare` (t-test,
randomization test, Holm and Bonferroni), `proctor calibrate` and the `analyze` tables, plus the functions
themselves on score lists read from DL19 leaderboards (Pearson, Spearman, Kendall tau-b, ranks, t-test p-values,
corrections, kappa and alpha of many label pairings)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DL19 = Path(os.environ.get("PROCTOR_SHARED", ROOT.parent / "shared")) / "data" / "dl19"
OFFICIAL = DL19 / "dl19-official-leaderboard.json"


def proctor(*args: str) -> str:
    """Run one command; its standard output."""
    proc = subprocess.run([sys.executable, "-m", "proctor", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"proctor {' '.join(args)}: {proc.stderr}")
    return proc.stdout


def commands(store: str, tmp: Path) -> dict:
    """The JSON outputs of the commands whose numbers come from the statistics code."""
    out: dict = {}
    boards = {}
    for name, args in (("p20", ("--measure", "P@20", "--min-grade", "3")),
                       ("ndcg", ("--measure", "nDCG@10", "--min-grade", "4")),
                       ("official", ("--measure", "ndcg_cut.10", "--qrels", "official"))):
        path = tmp / f"{name}.json"
        path.write_text(proctor("leaderboard", "--store", store, *args, "--format", "json", "--per-query"))
        boards[name] = path
    for name in ("p20", "ndcg"):
        b = str(boards[name])
        out[f"correlate {name}"] = json.loads(proctor("correlate", b, "--official", str(OFFICIAL), "--bootstrap",
                                                      "200", "--format", "json"))
        out[f"correlate {name} per-query official"] = json.loads(proctor(
            "correlate", b, "--official", str(boards["official"]), "--bootstrap", "200", "--format", "json"))
        out[f"correlate {name} random ties"] = json.loads(proctor(
            "correlate", b, "--official", str(OFFICIAL), "--ties", "random", "--format", "json"))
        for correction in ("holm", "bonferroni"):
            out[f"compare {name} {correction}"] = json.loads(proctor(
                "compare", b, "--correction", correction, "--samples", "2000", "--format", "json"))
    for m in ("1", "2"):
        out[f"agreement m={m}"] = json.loads(proctor("agreement", "--store", store, "--judged-relevant", "2",
                                                     "--min-questions", m, "--format", "json"))
    out["calibrate"] = json.loads(proctor("calibrate", "--store", store, "--budget", "3,10", "--repeats", "5",
                                          "--format", "json"))
    report = tmp / "analyze"
    proctor("analyze", "--store", store, "--official", str(OFFICIAL), "--out", str(report),
            "--measures", "P@20,nDCG@10")
    for name in ("correlations.json", "agreement.json"):
        out[f"analyze {name}"] = json.loads((report / name).read_text())
    return out


def functions(boards: dict) -> dict:
    """The functions themselves on the per-query and overall scores of the DL19 leaderboards."""
    from proctor.analyze import agreement, correlation
    from proctor.stats.correction import adjust
    from proctor.stats.ttest import paired_t_test

    out: dict = {}
    scores = {name: {r["system"]: r["score"] for r in board["systems"]} for name, board in boards.items()}
    systems = sorted(scores["official"])
    lists = {name: [s[x] for x in systems] for name, s in scores.items()}
    for a in lists:
        out[f"ranks {a}"] = correlation.average_ranks(lists[a])
        for b in lists:
            for f in ("pearson", "spearman", "kendall_tau_b", "tau_ap"):
                out[f"{f} {a} {b}"] = getattr(correlation, f)(lists[a], lists[b])
    per_query = {name: {r["system"]: r["per_query"] for r in board["systems"]} for name, board in boards.items()}
    p_values = []
    for a in systems[:12]:
        for b in systems[:12]:
            qs = sorted(set(per_query["p20"][a]) & set(per_query["p20"][b]))
            result = paired_t_test([per_query["p20"][a][q] for q in qs], [per_query["p20"][b][q] for q in qs])
            out[f"t {a} {b}"] = [result.statistic, result.p_value]
            p_values.append(result.p_value)
    for method in ("holm", "bonferroni", "none"):
        out[f"adjust {method}"] = adjust(p_values, method)
    for cut in (0.1, 0.2, 0.3, 0.5):
        for name in ("p20", "ndcg"):
            a = [min(3, int(v / cut)) for q in sorted(per_query[name][systems[0]]) for v in
                 [per_query[name][s].get(q, 0.0) for s in systems]]
            b = [min(3, int(v / 0.25)) for q in sorted(per_query["official"][systems[0]]) for v in
                 [per_query["official"][s].get(q, 0.0) for s in systems]]
            n = min(len(a), len(b))
            out[f"kappa {name} {cut}"] = agreement.cohen_kappa(a[:n], b[:n])
            out[f"weighted kappa {name} {cut}"] = agreement.cohen_kappa(a[:n], b[:n], weights="linear")
            out[f"alpha {name} {cut}"] = agreement.krippendorff_alpha_ordinal(a[:n], b[:n])
    return out


def dump(target: Path) -> None:
    """Import DL19 once, compute everything, write it as JSON."""
    from fidelity_dl19 import dl19_store  # the same DL19 store as the fidelity benchmark

    with dl19_store() as (tmp, store):
        folder = str(tmp)
        out = commands(store, tmp)
        boards = {name: json.loads((tmp / f"{name}.json").read_text()) for name in ("p20", "ndcg", "official")}
        out["functions"] = functions(boards)
        text = json.dumps(out, indent=1, sort_keys=True, default=str)
    target.write_text(text.replace(folder, "<tmp>"))  # the temporary folder's name is no result


def leaves(value, path: str = ""):
    """(path, value) of every leaf of a JSON value."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, f"{path}/{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def diff(old: Path, new: Path) -> None:
    """The largest absolute difference of any number, and every other leaf that differs."""
    a, b = (dict(leaves(json.loads(p.read_text()))) for p in (old, new))
    worst, where, numbers, others = 0.0, None, 0, []
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key, "<missing>"), b.get(key, "<missing>")
        if isinstance(x, float | int) and isinstance(y, float | int) and not isinstance(x, bool):
            numbers += 1
            if math.isnan(x) or math.isnan(y):
                if not (math.isnan(x) and math.isnan(y)):
                    others.append((key, x, y))
                continue
            if abs(x - y) > worst:
                worst, where = abs(x - y), key
        elif x != y and not (key.endswith("/seconds") or "elapsed" in key):
            others.append((key, x, y))
    print(f"{numbers} numbers compared; largest absolute difference {worst:.3g}" + (f" at {where}" if where else ""))
    for key, x, y in others[:50]:
        print(f"differs: {key}: {x!r} -> {y!r}")
    print(f"{len(others)} other values differ")
    raise SystemExit(0 if worst <= 1e-12 and not others else 1)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "dump":
        dump(Path(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "diff":
        diff(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        raise SystemExit("usage: numerics_identical.py dump OUT.json | diff OLD.json NEW.json")
