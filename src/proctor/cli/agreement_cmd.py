"""`proctor agreement --store S --judged-relevant J`: agreement of predicted labels with human judgments."""

from __future__ import annotations

import argparse
import json
import sys

from proctor.analyze.agreement import BINARY_MERGES, validate_merge
from proctor.analyze.judges import store_agreement
from proctor.cli.common import add_format, add_store, readable_store
from proctor.errors import UsageError

DESCRIPTION = """\
Agreement of the labels made from grades with the store's human judgments, for every grade set (method,
model) and for labels from "at least m questions" (m-th largest grade):
  Cohen's kappa of binary merges (predicted label >=1, >=3, >=4, =5 vs judgment >= J; --merges),
  LLMJudge binarisations 0|123, 01|23, 012|3 (for 0-3 labels), linearly weighted kappa,
  Krippendorff's alpha (ordinal), and the graded confusion table (predicted label x judgment)."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `agreement` command."""
    p = commands.add_parser("agreement", help="agreement (kappa, alpha, confusion) with human judgments",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store(p)
    p.add_argument("--judged-relevant", type=int, required=True, metavar="J",
                   help="a judgment >= J counts as relevant (TREC DL: 2)")
    p.add_argument("--merges", default=",".join(BINARY_MERGES),
                   help=f"binary merges of predicted labels (default {','.join(BINARY_MERGES)})")
    p.add_argument("--min-questions", default="1,2,5", help="values of m (default 1,2,5)")
    p.add_argument("--method", help="only this grading method")
    p.add_argument("--model", help="only this model")
    add_format(p, ("json", "tsv", "md"), "json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Compute and print."""
    try:
        merges = [validate_merge(r.strip()) for r in args.merges.split(",") if r.strip()]
        ms = [int(m) for m in args.min_questions.split(",") if m.strip()]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not ms or min(ms) < 1:
        raise UsageError("--min-questions takes positive integers, e.g. 1,2,5")
    with readable_store(args.store) as store:
        result = store_agreement(store, args.judged_relevant, min_questions=ms, merges=merges,
                                 method=args.method, model=args.model)
    sys.stdout.write(render(result, args.format))
    return 0


def rows(result: dict) -> list[tuple]:
    """Flat rows: method, model, m, statistic, value."""
    out = []
    for gs in result["grade_sets"]:
        for m, rep in gs["at_least_m_questions"].items():
            for b in rep["binary"]:
                out.append((gs["method"], gs["model"], m, f"cohen_kappa {b['predicted']} vs {b['judged']}",
                            b["cohen_kappa"]))
            for cut, value in (rep["llmjudge_kappa"] or {}).items():
                out.append((gs["method"], gs["model"], m, f"cohen_kappa llmjudge {cut}", value))
            out.append((gs["method"], gs["model"], m, "linear_weighted_kappa", rep["linear_weighted_kappa"]))
            out.append((gs["method"], gs["model"], m, "krippendorff_alpha_ordinal", rep["krippendorff_alpha_ordinal"]))
            out.append((gs["method"], gs["model"], m, "n_passages", rep["n_passages"]))
    return out


def render(result: dict, fmt: str) -> str:
    """JSON, TSV rows, or Markdown tables."""
    if fmt == "json":
        return json.dumps(result, indent=2) + "\n"
    if fmt == "tsv":
        lines = ["method\tmodel\tm\tstatistic\tvalue"]
        lines += ["\t".join(map(str, r[:4])) + f"\t{_num(r[4])}" for r in rows(result)]
        return "\n".join(lines) + "\n"
    return markdown(result)


def markdown(result: dict) -> str:
    """Markdown: per grade set, a statistics table over m and the confusion table for m = 1."""
    lines = [f"**Agreement with human judgments** (judgment >= {result['judged_relevant']} is relevant; "
             f"{result['label_rule']})", ""]
    for gs in result["grade_sets"]:
        reps = gs["at_least_m_questions"]
        ms = list(reps)
        lines += [f"### {gs['method']} / {gs['model']} (prompt {gs['prompt_version']}, bank {gs['bank']}, "
                  f"{gs['failed_grades']} failed grades)", "",
                  "| statistic | " + " | ".join(f"m={m}" for m in ms) + " |", "|---|" + "---:|" * len(ms)]
        first = reps[ms[0]]
        for i, b in enumerate(first["binary"]):
            lines.append(f"| Cohen's κ label {b['predicted']} vs judged {b['judged']} | "
                         + " | ".join(_num(reps[m]["binary"][i]["cohen_kappa"]) for m in ms) + " |")
        for cut in (first["llmjudge_kappa"] or {}):
            lines.append(f"| Cohen's κ {cut} | " + " | ".join(_num(reps[m]["llmjudge_kappa"][cut]) for m in ms) + " |")
        for key, name in (("linear_weighted_kappa", "linearly weighted κ"),
                          ("krippendorff_alpha_ordinal", "Krippendorff's α (ordinal)"), ("n_passages", "passages")):
            lines.append(f"| {name} | " + " | ".join(_num(reps[m][key]) for m in ms) + " |")
        lines += ["", confusion_markdown(first["confusion"], ms[0]), ""]
    return "\n".join(lines) + "\n"


def confusion_markdown(conf: dict, m: str) -> str:
    """The graded confusion table with totals."""
    head = "| label (m=" + m + ") \\ judgment | " + " | ".join(map(str, conf["judgments"])) + " | total |"
    lines = [head, "|---|" + "---:|" * (len(conf["judgments"]) + 1)]
    for label, counts, total in zip(conf["predicted_labels"], conf["counts"], conf["row_totals"], strict=True):
        lines.append(f"| {label} | " + " | ".join(map(str, counts)) + f" | {total} |")
    lines.append("| total | " + " | ".join(map(str, conf["column_totals"])) + f" | {conf['total']} |")
    return "\n".join(lines)


def _num(value) -> str:
    if value is None:
        return "nan"
    return f"{value:.4f}" if isinstance(value, float) else str(value)
