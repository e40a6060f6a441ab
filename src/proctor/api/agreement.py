"""Agreement of the labels made from grades with the store's human judgments (`proctor agreement`): Cohen's
kappa of binary merges, LLMJudge binarisations, weighted kappa, Krippendorff's alpha, confusion tables."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

from proctor.api.results import Report
from proctor.api.stores import check_judged_relevant
from proctor.errors import UsageError
from proctor.evaluate.coverage import DEFAULT_FLOOR, Floor
from proctor.options.correlation import AgreementOptions
from proctor.store import Store


class Agreement(Report):
    """Agreement figures per grade set and per m: what `proctor agreement` prints as JSON."""

    formats: ClassVar[tuple[str, ...]] = ("json", "tsv", "md")

    def warnings(self) -> list[tuple[str, str]]:
        """(grade set id, warning) for every grade set whose figures rest on little."""
        return [(entry["grade_set"], warning) for entry in self["grade_sets"]
                for warning in entry["coverage"]["warnings"]]

    def as_text(self, fmt: str) -> str:
        """TSV rows (`method model m statistic value`) or Markdown tables."""
        from proctor.analyze.agreement_render import markdown, number, rows

        if fmt == "tsv":
            lines = ["method\tmodel\tm\tstatistic\tvalue"]
            lines += ["\t".join(map(str, r[:4])) + f"\t{number(r[4])}" for r in rows(self)]
            return "\n".join(lines) + "\n"
        return markdown(self)


def agreement(store: Store, options: AgreementOptions | None = None, *, floor: Floor = DEFAULT_FLOOR,
              **settings: Any) -> Agreement:
    """Agreement with the store's judgments (a judgment >= `options.judged_relevant` is relevant) of every grade
    set the options' filters leave, for labels from at least m questions (`min_questions`, a list or `"1,2,5"`),
    with binary `merges` of the predicted labels (`[">=3", "=5"]` or `">=3,=5"`; default: the method's scale).
    `settings` are `AgreementOptions` fields replacing those of `options` (`agreement(store, merges=">=3")`)."""
    from proctor.analyze.agreement import validate_merge
    from proctor.analyze.judges import store_agreement

    chosen = replace(options or AgreementOptions(), **settings)
    merges, min_questions = chosen.merges, chosen.min_questions
    try:
        texts = merges.split(",") if isinstance(merges, str) else merges
        rules = [validate_merge(r.strip()) for r in texts if r.strip()] if texts is not None else None
        ms = [int(m) for m in (min_questions.split(",") if isinstance(min_questions, str) else min_questions)
              if str(m).strip()]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not ms or min(ms) < 1:
        raise UsageError("{min_questions} takes positive integers, e.g. 1,2,5", params=("min_questions",))
    check_judged_relevant(store, chosen.judged_relevant)
    return Agreement(store_agreement(store, replace(chosen, merges=rules, min_questions=tuple(ms)), floor=floor))
