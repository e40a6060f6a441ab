"""What one line of an exam_pp file gives (`ExamppQuery`), and the checks its readers share: ids (each string
checked once), JSON objects and lists, and what earlier paragraphs and lines gave (`Seen`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from proctor.io.fields import as_id
from proctor.records import Grade, GradeSet

GradeKey = tuple[str, str, str]
"""(method, model, prompt version): the grade set a grade of an exam_pp file goes to; for an entry that names its
grade set in the `proctor` extension, (label step, model, grade set id)."""
GradeRow = tuple[str, str, str, str | None, int | None, str, str | None, bool | None, str | None]
"""(query, passage, question, raw reply, grade, parse status, answer, correct, extra as JSON): a grade as a plain
tuple, in the order `Store.grades.grade_import` writes it (an import of millions of grades makes no `Grade`
objects)."""

IMPORTED = "imported"
"""`parse_status` of a grade taken over from an exam_pp file (it was parsed by the workbench)."""

Block = tuple[str, list[str], list[str | None], list[int], list[bool | None]]
"""(passage, questions, answers, grades, verdicts): the grades of one entry whose every question is rated, column by
column (each a `GradeRow` of the line's query with parse status `imported`, the answer as raw reply, no extra)."""


class Blocks(list):
    """The grades of one grade set in one line as `Block`s: no tuple per grade is made, sent to the writing process
    or read back (the entries' question lists are shared: a query's entries name the same ones)."""

    def rows(self, query_id: str) -> list[GradeRow]:
        """The blocks' grades as rows, in order."""
        return [row for block in self for row in block_rows(query_id, block)]

    def size(self) -> int:
        """How many grades the blocks hold."""
        return sum(len(block[1]) for block in self)


def block_rows(query_id: str, block: Block) -> list[GradeRow]:
    """One block's grades as rows."""
    pid, questions, answers, grades, verdicts = block
    return [(query_id, pid, q, a, g, IMPORTED, a, v, None) for q, a, g, v in zip(questions, answers, grades, verdicts,
                                                                                  strict=True)]


def rows_of(query_id: str, grades: list[GradeRow] | Blocks) -> list[GradeRow]:
    """The rows of one grade set of a line (`ExamppQuery.grade_rows`), blocks or rows."""
    return grades.rows(query_id) if type(grades) is Blocks else grades


@dataclass
class ExamppQuery:
    """The rows one line of an exam_pp file contributes to the store."""

    line: int
    query_id: str
    passages: list[tuple[str, str | None]] = field(default_factory=list)
    judgments: list[tuple[str, str, int]] = field(default_factory=list)
    rankings: list[tuple[str, str, str, int, float]] = field(default_factory=list)
    given_before: list[str] = field(default_factory=list)
    """Passages of `passages` that an earlier line gave with the same text (and this one with it or without one):
    written already when that line was (`importing.exampp` writes them again only after a line it skipped)."""
    grade_rows: dict[GradeKey, list[GradeRow] | Blocks] = field(default_factory=dict)
    """The grades of each (method, model, prompt version), in file order: `Blocks` while every entry of it in the
    line is one (`rows_of`)."""
    configs: dict[GradeKey, dict] = field(default_factory=dict)
    """The grade set information of each plain key (method, model, prompt version)."""
    grade_sets: dict[GradeKey, GradeSet] = field(default_factory=dict)
    """The grade sets named in full by the `proctor` extension, by their key (label step, model, id)."""

    @property
    def grades(self) -> list[Grade]:
        """The grades of `grade_rows` as `Grade` records."""
        versions = {key: s.prompt_version for key, s in self.grade_sets.items()}
        return [Grade(q, p, i, m, x, versions.get((m, x, v), v), g, s, r, a, c)
                for (m, x, v), rows in self.grade_rows.items() for q, p, i, r, g, s, a, c, _ in rows_of(self.query_id,
                                                                                                          rows)]


class Refused(ValueError):
    """Content that is well-formed but not acceptable (out of range, another query's, conflicting)."""


@dataclass
class Seen:
    """What earlier paragraphs and lines gave, to refuse conflicting repeats (identical ones are merged).

    Judgments, rankings and grades are keyed by the line's query (or one of its facets), so a line whose
    query no other line shares (`exampp._shared_lines`) checks them against its own paragraphs only and forgets them
    at its end: memory stays that of one line. Passage texts recur across queries, so a digest of each is
    kept for the whole file."""

    texts: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    """(line, BLAKE2b digest of the text) of every passage given a text so far."""
    judged: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    ranked: dict[tuple[str, str, str], tuple[int, int, float]] = field(default_factory=dict)
    graded: dict[tuple[str, str, str, str, str],
                 tuple[int, list[GradeRow] | Block] | dict[str, tuple[int, GradeRow]]] = field(default_factory=dict)
    """Per (method, model, version, query, passage): the line and rows of its first entry, or (once an entry is
    given again) `{question: (line, row)}`."""
    line: int = 0
    line_passages: dict[str, int] = field(default_factory=dict)
    """Where each passage of the current line is in `ExamppQuery.passages`."""
    shared: tuple[dict, dict, dict] = field(default_factory=lambda: ({}, {}, {}))
    """`judged`, `ranked` and `graded` of the lines whose query another line shares, kept for the whole file."""

    def start(self, line: int, shared: bool) -> None:
        """Begin a line: its keys go with those of the other shared lines, or into dicts of its own."""
        self.line, self.line_passages = line, {}
        self.judged, self.ranked, self.graded = self.shared if shared else ({}, {}, {})

    def first(self, line: int) -> str:
        """Where a key was first given, for a message."""
        return "earlier in this line" if line == self.line else f"on line {line}"


CHECKED: dict[str, None] = {}
"""Id strings already found valid (a question id recurs in ratings, answers and verdicts of every passage)."""


def check_id(value: object, what: str) -> str:
    """An id (`as_id`), each valid string checked once (`CHECKED`); `Refused` saying what is wrong."""
    if type(value) is str and value in CHECKED:
        return value
    try:
        checked = as_id(value, what)
    except ValueError as exc:
        raise Refused(str(exc)) from None
    if checked is value:
        if len(CHECKED) >= 1 << 18:
            CHECKED.clear()
        CHECKED[checked] = None
    return checked


def as_mapping(value: object, what: str) -> dict:
    """A JSON object (null as an empty one); `Refused` for anything else."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Refused(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def as_list(value: object, what: str) -> list:
    """A JSON list (null as an empty one); `Refused` for anything else."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise Refused(f"{what} must be a list, got {type(value).__name__}")
    return value


def optional_text(value: object, what: str) -> str | None:
    """A string or None; `Refused` for anything else."""
    if value is not None and not isinstance(value, str):
        raise Refused(f"{what} must be a string, got {type(value).__name__}")
    return value


