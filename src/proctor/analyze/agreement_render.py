"""Agreement results as flat rows (TSV) and Markdown tables (the `agreement` command and reports)."""

from __future__ import annotations


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
                         + " | ".join(number(reps[m]["binary"][i]["cohen_kappa"]) for m in ms) + " |")
        for cut in (first["llmjudge_kappa"] or {}):
            values = " | ".join(number(reps[m]["llmjudge_kappa"][cut]) for m in ms)
            lines.append(f"| Cohen's κ {cut} | {values} |")
        for key, name in (("linear_weighted_kappa", "linearly weighted κ"),
                          ("krippendorff_alpha_ordinal", "Krippendorff's α (ordinal)"), ("n_passages", "passages")):
            lines.append(f"| {name} | " + " | ".join(number(reps[m][key]) for m in ms) + " |")
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


def number(value: object) -> str:
    """A statistic for display: 4 decimals, `nan` for undefined."""
    if value is None:
        return "nan"
    return f"{value:.4f}" if isinstance(value, float) else str(value)
