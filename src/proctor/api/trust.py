"""Trust in a judge: calibration on a few human labels (`proctor calibrate`), the review app's queue, and
robustness probes with attacked passages (`proctor probe`); heavy modules load on first use."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from proctor.api.results import JSON, Notice, Report
from proctor.errors import UsageError
from proctor.gradesets.resolve import resolve_grade_set
from proctor.grading.guards import GUARDS as GUARDS  # the guards `probe` takes
from proctor.options.calibration import CalibrationOptions
from proctor.options.model import names
from proctor.options.probe import ProbeOptions
from proctor.options.review import ReviewOptions
from proctor.outputs import file_target
from proctor.robustness.attacks import ATTACKS as ATTACKS  # the attacks `probe` takes (with what each does)
from proctor.robustness.report import PROBE_FORMAT
from proctor.store import Store
from proctor.trust.review_queue import QUEUE_LIMIT

if TYPE_CHECKING:
    from proctor.api.ppi import PPICalibration

PROBE_DEFAULTS = ProbeOptions()
"""Every probe option at its default."""


class Calibration(Report):
    """A calibration curve with its samples and fixed rules: what `proctor calibrate` prints as JSON; `plotted`
    is the PNG drawn of it, if any."""

    formats: ClassVar[tuple[str, ...]] = ("json", "tsv", "md")
    attributes: ClassVar[tuple[str, ...]] = ("plotted",)
    plotted: Path | None = None

    def as_text(self, fmt: str) -> str:
        """One row per budget (TSV) or the curve's table (Markdown)."""
        from proctor.trust.calibrate_render import markdown, tsv

        return tsv(self) if fmt == "tsv" else markdown(self)


@dataclass(frozen=True)
class CalibrationRequest:
    """`proctor calibrate`'s options, checked before any store is opened (`calibration_request`: `budgets` a
    sorted list, `plot` a .png path); `run` draws the curve of one store (`ppi`: the prediction-powered one)."""

    options: CalibrationOptions
    plot: Path | None

    def run(self, store: Store) -> Calibration | PPICalibration:
        """The calibration curve of this store's grade set (drawn into `plot` when one was given)."""
        if self.options.ppi:
            from proctor.api.ppi import ppi_calibration
            from proctor.trust.ppi_curve import plot as draw

            result: Calibration | PPICalibration = ppi_calibration(store, self.options.grade_set, self.options)
        else:
            from proctor.trust.calibrate_render import plot as draw  # type: ignore[no-redef]
            from proctor.trust.calibration import calibration

            chosen = resolve_grade_set(store, self.options.grade_set)
            result = Calibration(calibration(store, chosen, self.options))
        if self.plot is not None:
            draw(result, self.plot)
            result = result.replace(plotted=self.plot)
        return result


def calibration_request(options: CalibrationOptions | None = None, **settings: Any) -> CalibrationRequest:
    """The options of `calibrate`, checked (the model, when built: numbers, the measure, no `min_grade` or
    `confidence` of its own without `ppi`; here the budgets, the plot's file name, with `ppi` a per-topic
    measure)."""
    from proctor.trust.calibration import check_options

    chosen = replace(options or CalibrationOptions(), **settings)  # checked when built (`CalibrationOptions.check`)
    if chosen.confidence is None:  # not given: the default
        chosen = replace(chosen, confidence=CalibrationOptions.confidence)
    wanted = _budgets(chosen.budgets) if isinstance(chosen.budgets, str) else list(chosen.budgets)
    plot = chosen.plot
    target = file_target(plot, "{plot}") if plot else None
    if target is not None and target.suffix.lower() != ".png":
        raise UsageError(f"{{plot}} {plot}: give a .png file name", params=("plot",))
    if chosen.ppi:
        from proctor.api.ppi import check_ppi_calibration

        if not wanted or min(wanted) < 1:
            raise UsageError("{budgets} takes positive numbers of topics, e.g. 1,2,3,5,10", params=("budgets",))
        check_ppi_calibration(chosen)
        return CalibrationRequest(replace(chosen, budgets=sorted(set(wanted))), target)
    check_options(replace(chosen, budgets=wanted))
    return CalibrationRequest(replace(chosen, budgets=wanted), target)


def calibrate(store: Store, grade_set: str | None = None, options: CalibrationOptions | None = None,
              **settings: Any) -> Calibration | PPICalibration:
    """Calibration on a few human labels of `grade_set` (None: `options.grade_set`, else the store's only one): per
    budget N (`budgets`: a list or `"1,2,5"`), `repeats` samples of N
    judged topics choose the labelling rule; held-out Cohen's kappa, Krippendorff's alpha and leaderboard
    Kendall tau (`curve`, one point per budget). `qrels`: official, reviewers, official+reviewers or a qrels
    file. With `plot` (a .png file) the curve is drawn there too (PDF and SVG beside it). With `ppi=True` the
    validation of prediction-powered leaderboards instead (a `PPICalibration`: `curve_ppi`). `settings` are
    `CalibrationOptions` fields replacing those of `options` (`calibrate(store, budgets=[1, 2, 5], repeats=50)`)."""
    given = {"grade_set": grade_set} if grade_set is not None else {}
    return calibration_request(options, **given, **settings).run(store)


def _budgets(text: str) -> list[int]:
    """`"5"` or `"1,2,3"`: positive integers."""
    try:
        values = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        raise UsageError(f"{{budgets}} {text}: expected numbers of topics such as 5 or 1,2,3,5,10,20",
                         params=("budgets",)) from None
    if not values or min(values) < 1:
        raise UsageError(f"{{budgets}} {text}: expected positive numbers of topics such as 5 or 1,2,3,5,10,20",
                         params=("budgets",))
    return values


def review_queue(store: Store, grade_set: str | None = None, *, min_grade: int = ReviewOptions.min_grade,
                 depth: int = ReviewOptions.depth, limit: int = QUEUE_LIMIT) -> dict[str, JSON]:
    """The review app's "to review" queue: labelled passages ordered by how much a human verdict would change
    (pairs of systems it alone decides on P@depth, ensemble members' spread, label at `min_grade`)."""
    from proctor.gradesets.ensemble import check_min_grade
    from proctor.trust.review_queue import review_queue as queue

    if limit < 1 or depth < 1:
        raise UsageError("limit and depth must be at least 1")
    chosen = resolve_grade_set(store, grade_set)
    check_min_grade(chosen, min_grade)
    return queue(store, chosen, min_grade=min_grade, depth=depth, limit=limit)


class ProbeReport(Report):
    """A probe's report: per attack and guard the label changes, flips and flags, beside the control (what
    `proctor probe --format json` prints)."""

    formats: ClassVar[tuple[str, ...]] = ("tsv", "json", "md")

    @property
    def sample(self) -> dict[str, JSON]:
        """The passages asked for (`asked`), probed (`probed`) and how they were chosen (`basis`)."""
        return self["sample"]

    @property
    def flagged_pairs(self) -> list[JSON]:
        """The probed pairs the `detect` guard flagged (no grade)."""
        return self["flagged_pairs"]

    def render(self, fmt: str | None = None) -> str:
        """The report as `tsv` (default), `json` or `md`."""
        return render_probe(self, fmt or "tsv")

    def notes(self) -> list[str | Notice]:
        """What a reader should know beside the table: fewer passages probed than asked, pairs flagged."""
        sample, flagged = self.sample, self.flagged_pairs
        notes = []
        if sample["probed"] < sample["asked"]:  # type: ignore[operator]
            notes.append(f"only {sample['probed']} passages could be probed ({sample['basis']})")
        if flagged:
            notes.append(Notice(f"{len(flagged)} probed pairs flagged by detect (no grade; listed with {{fmt}} json)",
                                ("fmt",)))
        return notes


@dataclass(frozen=True)
class ProbeRequest:
    """`proctor probe`'s options, checked before any store is opened (`probe_request`); `run` probes."""

    grade_set: str
    attacks: Sequence[str]
    guards: Sequence[str]
    sample: int
    seed: int
    llm: str | None
    backend: Mapping[str, str | float | None]

    def run(self, store: Store) -> ProbeReport:
        """Probe this store's grade set; the report."""
        from proctor.robustness.probe import probe_grade_set

        chosen = resolve_grade_set(store, self.grade_set)
        return ProbeReport(asyncio.run(probe_grade_set(store, chosen, self.attacks, self.guards, self.sample,
                                                       self.seed, self.llm, dict(self.backend))))


def probe_request(grade_set: str, attacks: str | Sequence[str], options: ProbeOptions = PROBE_DEFAULTS,
                  **backend: str | float | None) -> ProbeRequest:
    """The options of `probe`, checked (the attack and guard names); `backend` are `BackendConfig` fields."""
    from proctor.grading.guards import parse_guards
    from proctor.robustness.attacks import parse_attacks

    guards = options.guards
    names = parse_attacks(attacks if isinstance(attacks, str) else ",".join(attacks))
    guard_names = parse_guards(guards if isinstance(guards, str) or guards is None else ",".join(guards) or None)
    return ProbeRequest(grade_set, names, guard_names, options.sample, options.seed, options.llm, backend)


def probe(store: Store, grade_set: str, attacks: str | Sequence[str], options: ProbeOptions = PROBE_DEFAULTS,
          **settings: str | float | None) -> ProbeReport:
    """Probe a grade set's judge with attacked copies of non-relevant pool passages (`attacks`: names, or
    `"a,b"`), without and with each guard (`options.guards`: `detect`, `harden`); `options.llm` defaults to the
    grade set's backend and model. `settings` named as `ProbeOptions` fields replace them (`sample=5`), the rest
    are `BackendConfig` fields (`base_url=...`). Returns the report (what `proctor probe --format json`
    prints)."""
    ours = {k: settings.pop(k) for k in list(settings) if k in names(ProbeOptions)}
    return probe_request(grade_set, attacks, replace(options, **ours), **settings).run(store)


def render_probe(report: Mapping[str, JSON], fmt: str = PROBE_FORMAT) -> str:
    """A probe report as `tsv`, `json` or `md`."""
    from proctor.robustness.report import render_report

    return render_report(report, fmt)
