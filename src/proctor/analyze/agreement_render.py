"""Agreement results as flat rows (TSV) and Markdown tables (the `agreement` command and reports)."""

from __future__ import annotations

from proctor.analyze.judges import PASSAGE_RULE
from proctor.analyze.tables import Table
from proctor.evaluate.coverage import Coverage
from proctor.markdown import escape


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


def title(result: dict) -> str:
    """What the agreement figures are about."""
    return (f"Agreement with human judgments (judgment >= {result['judged_relevant']} is relevant; "
            f"{result['label_rule']})")


def sections(result: dict) -> list[tuple[str, list[Table]]]:
    """Per grade set: a heading, its statistics table over m and the confusion table for the first m."""
    out = []
    for gs in result["grade_sets"]:
        reps = gs["at_least_m_questions"]
        ms = list(reps)
        first = reps[ms[0]]
        per_passage = gs.get("label_rule") == PASSAGE_RULE
        rows = [[f"Cohen's κ label {b['predicted']} vs judged {b['judged']}",
                 *(number(reps[m]["binary"][i]["cohen_kappa"]) for m in ms)] for i, b in enumerate(first["binary"])]
        rows += [[f"Cohen's κ {cut}", *(number(reps[m]["llmjudge_kappa"][cut]) for m in ms)]
                 for cut in (first["llmjudge_kappa"] or {})]
        rows += [[name, *(number(reps[m][key]) for m in ms)]
                 for key, name in (("linear_weighted_kappa", "linearly weighted κ"),
                                   ("krippendorff_alpha_ordinal", "Krippendorff's α (ordinal)"),
                                   ("n_passages", "passages"))]
        stats = Table(["statistic", *(("label",) if per_passage else (f"m={m}" for m in ms))], rows)
        rule = f", {gs['label_rule']}" if result["label_rule"] != gs.get("label_rule") else ""  # else in the title
        scale = f"labels {gs['scale'][0]}-{gs['scale'][1]}{rule}; " if "scale" in gs else ""
        heading = (f"{gs['method']} / {gs['model']} (grade set {gs.get('grade_set', '-')}, {scale}prompt "
                   f"{gs['prompt_version']}, bank {gs['bank']}, {gs['failed_grades']} failed grades)")
        out.append((heading, [stats, confusion_table(first["confusion"], None if per_passage else ms[0])]))
    return out


def markdown(result: dict) -> str:
    """Markdown: the title, then per grade set its heading and tables (every text escaped)."""
    lines = [f"**{escape(title(result))}**", ""]
    for gs, (heading, tables) in zip(result["grade_sets"], sections(result), strict=True):
        banner = Coverage.from_dict(gs["coverage"]).banner() if gs.get("coverage") else []
        lines += [f"### {escape(heading)}", "", *banner] + [t.markdown() for t in tables]
    return "\n".join(lines) + "\n"


def confusion_table(conf: dict, m: str | None) -> Table:
    """The graded confusion table with totals (m None: labels of the passage itself)."""
    rows = [[str(label), *map(str, counts), str(total)]
            for label, counts, total in zip(conf["predicted_labels"], conf["counts"], conf["row_totals"], strict=True)]
    rows.append(["total", *map(str, conf["column_totals"]), str(conf["total"])])
    return Table([f"label{'' if m is None else f' (m={m})'} \\ judgment", *map(str, conf["judgments"]), "total"], rows)


def number(value: object) -> str:
    """A statistic for display: 4 decimals, `nan` for undefined."""
    if value is None:
        return "nan"
    return f"{value:.4f}" if isinstance(value, float) else str(value)
