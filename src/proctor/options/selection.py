"""Which grade set a command reads and how its grades become labels: `LabelChoice`, one field per flag
(`--grade-set/--method/--model/--bank/--min-questions/--facets`), the API's parameter (`api.LabelChoice`) and
the flags of every command that reads labels (`add_options(p, LabelChoice)`, read back with `from_args`)."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import Checked, borrow, option


@dataclass(frozen=True, kw_only=True)
class LabelChoice(Checked):
    """Which grade set, and how its grades become labels (`api.commands.grade_set_of` resolves it in a store)."""

    grade_set: str | None = option(metavar="ID",
                                   help="the grade set to use (see `proctor info`; a unique prefix will do)")
    method: str | None = option(help="narrow to grade sets of this method (needed when the store has several)")
    model: str | None = option(help="narrow to grade sets of this model")
    bank: str | None = option(metavar="NAME[@VERSION]", help="narrow to grade sets of this bank (version)")
    min_questions: int = borrow(EvaluationOptions, "min_questions")
    facets: bool = option(False, action="store_true",
                          help="one label per query facet (query_id/facet_id), for banks with facets (CAR)")

    def rule(self) -> str:
        """How a passage's grades become its label, in words."""
        return "max over questions" if self.min_questions == 1 else f"{self.min_questions}-th largest grade"


ANY_LABELS = LabelChoice()
"""The default choice: the store's only grade set (else a UsageError listing them), labels = max over questions."""
