"""`probe`: how much each attack inflates the labels of one grade set. It samples pool passages the humans
judged non-relevant (without judgments: those the grade set labels lowest), makes attacked copies, grades them
with exactly the grade set's method, prompt version, model and parameters, and records each (attack, guard) as
a probe grade set linked to the original — nothing of the original changes, and probe grade sets live in tables
of their own, so they never enter leaderboards or grade-set resolution. The unmodified passages are graded again
as the control (what noise alone does). Replies are not taken from the response cache: the control must be a
fresh grading, like the attacked copies."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from proctor.errors import ProctorError, UsageError
from proctor.grading.engine import GradeOptions
from proctor.grading.guards import detect, harden, parse_guards
from proctor.grading.plan import WorkItem, items_of
from proctor.grading.prompting import render
from proctor.grading.runner import MethodChoice, _choice_args, grade_set_for
from proctor.llm.base import Backend, Reply
from proctor.llm.config import BackendConfig
from proctor.llm.health import BackendUnavailable, Breaker, check_endpoint
from proctor.methods import Method
from proctor.methods.base import FAILED
from proctor.options.numeric import check_numbers
from proctor.records import GradeSet
from proctor.robustness.attacks import ATTACKS, parse_attacks
from proctor.robustness.report import build_report, probe_set_id
from proctor.robustness.sample import CONTROL, Key, ProbeOptions, Sample, Variant
from proctor.store import Store, now
from proctor.store.probes import FLAGGED


def probed_method(store: Store, grade_set: GradeSet, backend: Backend) -> tuple[Method, str]:
    """The grade set's single prompt step (method, step name), after checking that `backend` grades into exactly
    this grade set (same model, prompt version and reply-changing parameters)."""
    choice = MethodChoice(grade_set.method, **_choice_args(grade_set))
    steps = choice.steps()
    if len(steps) != 1 or steps[0].prompt is None:
        raise UsageError(f"grade set {grade_set.id}: method {grade_set.method} has {len(steps)} steps; probe grades "
                         "single-prompt methods (self-rating, nugget-rating, qa, the direct relevance prompts)")
    guard = grade_set.params.get("guard")
    if guard == "harden":  # a grade set graded with the hardened prompt is probed with it
        choice.templates[steps[0].prompt] = harden(choice.method_of(steps[0]))
    method = choice.method_of(steps[0])
    if method.template.version != grade_set.prompt_version:
        raise UsageError(f"grade set {grade_set.id} was graded with prompt {grade_set.prompt_version}, not the "
                         f"packaged {method.template.version}; probe re-grades with the packaged prompts only")
    bank = f"{grade_set.bank}@{grade_set.bank_version}" if grade_set.bank else None
    options = GradeOptions(bank=bank, verify=grade_set.params.get("verify", "edit-distance"), guard=guard)
    again = grade_set_for(store, choice, backend, options)
    if again.id != grade_set.id:
        raise UsageError(f"these backend options grade into grade set {again.id} (model {again.model}, parameters "
                         f"{again.params}), not {grade_set.id} (model {grade_set.model}, parameters "
                         f"{grade_set.params}); a probe grades with exactly the probed grade set's configuration")
    return method, steps[0].name


def choose_pairs(store: Store, grade_set: GradeSet, method: Method, options: ProbeOptions) -> Sample:
    """Sample the probed pairs: judged non-relevant (judgment 0) pool passages with text and a label in the grade
    set; without judgments, those with the grade set's lowest label."""
    from proctor.evaluate.sources import exam_qrels

    bank = (grade_set.bank, grade_set.bank_version or "") if grade_set.bank else None
    items = items_of(store, method, bank)
    texts = store.corpus.passage_texts()
    labels = {(q, p): label for q, per in exam_qrels(store, grade_set).items() for p, label in per.items()
              if texts.get(p) and items.get(q)}
    judgments = store.corpus.judgments()
    if judgments:
        candidates = sorted(k for k in labels if judgments.get(k[0], {}).get(k[1]) == 0)
        basis = "judged non-relevant by the humans (judgment 0)"
    else:
        low = min(labels.values(), default=0)
        candidates = sorted(k for k, label in labels.items() if label == low)
        basis = f"no judgments in the store: labelled lowest ({low}) by the grade set"
    if not candidates:
        raise UsageError(f"grade set {grade_set.id}: no pool passage to probe ({basis}, with text and a label)")
    chosen = random.Random(options.seed).sample(candidates, min(options.sample, len(candidates)))
    sample = Sample(sorted(chosen), basis, len(candidates), {k: labels[k] for k in chosen}, items)
    queries = store.corpus.queries()
    for qid, pid in sample.pairs:
        rubric = [text for _, text, _ in items[qid]]
        variants = {CONTROL: texts[pid] or ""}
        for name in options.attacks:
            rng = random.Random(f"{options.seed}/{name}/{qid}/{pid}")
            variants[name] = ATTACKS[name].apply(texts[pid] or "", queries.get(qid) or qid, rubric, rng)
        sample.texts[(qid, pid)] = variants
    return sample


STOPPED = ("probe stopped, nothing written (a stored probe of this configuration is kept); run it again once the "
           "server answers")
"""What became of a probe whose judge stopped answering."""


async def grade_texts(backend: Backend, method: Method, step: str, sample: Sample, variant: str,
                      query_texts: dict[str, str | None], breaker: Breaker | None = None
                      ) -> dict[Key, tuple[int | None, str, str | None]]:
    """Grade one variant's texts of every probed pair for every item: `{(query, passage, item): (grade, status,
    reply)}`; a backend error is a failed grade, recorded. Failures no retry can fix (no connection, key refused)
    trip `breaker` as they do in `grade`: the probe stops (BackendUnavailable) instead of grading on."""
    breaker = breaker or Breaker()
    work = [WorkItem(qid, pid, item_id, question, sample.texts[(qid, pid)][variant],
                     tuple(answers) if answers else None,
                     {"query": query_texts.get(qid) or qid, "criterion_name": item_id,
                      "gold": " / ".join(answers or ())})
            for qid, pid in sample.pairs for item_id, question, answers in sample.items[qid]]
    size = max(1, backend.batch_size or 1) * max(1, backend.concurrency or 1)
    out: dict[Key, tuple[int | None, str, str | None]] = {}
    for start in range(0, len(work), size):
        chunk = work[start:start + size]
        try:
            replies = await backend.complete([render(method, step, w, backend)[0] for w in chunk])
        except Exception as exc:  # a backend that raises still yields recorded failures
            replies = [Reply(error=f"{type(exc).__name__}: {exc}") for _ in chunk]
        for w, reply in zip(chunk, replies, strict=True):
            breaker.observe(reply)
            if reply.error is not None:
                out[(w.query_id, w.passage_id, w.question_id)] = (None, FAILED, reply.error)
                continue
            parsed = method.parse(reply.text, probabilities=reply.probabilities, score=reply.score,
                                  gold_answers=w.answers)
            out[(w.query_id, w.passage_id, w.question_id)] = (parsed.grade, parsed.status, reply.text)
        if breaker.tripped:
            raise BackendUnavailable(breaker.message(backend.model, STOPPED))
    return out


async def run_probe(store: Store, grade_set: GradeSet, config: BackendConfig, options: ProbeOptions
                    ) -> dict[str, Any]:
    """Probe one grade set; every probe grade set and the report are written in one transaction at the end (an
    interrupted probe leaves the store as it was). Returns the report (see `robustness.report`)."""
    if config.spec and config.spec.split(":")[0] in ("replay",):
        raise UsageError("{llm} replay:...: a probe needs a live judge (replayed grades have no attacked copies)",
                         params=("llm",))
    if grade_set.params.get("members"):
        raise UsageError(f"grade set {grade_set.id} is an ensemble (members "
                         f"{', '.join(grade_set.params['members'])}): it has no prompt of its own to probe; "
                         "probe each member")
    backend = config.build(grade_set.method)
    try:
        method, step = probed_method(store, grade_set, backend)
        await check_endpoint(backend)  # before anything is sent: a judge that cannot answer is no probe
        sample = choose_pairs(store, grade_set, method, options)
        variants = [CONTROL, *options.attacks]
        queries = store.corpus.queries()
        results: list[Variant] = []
        breaker = Breaker()
        for guard in (None, *options.guards):
            graded_with = harden(method) if guard == "harden" else method
            for name in variants:
                if guard == "detect":
                    results.append(_detected(sample, name, _unguarded(results, name)))
                    continue
                grades = await grade_texts(backend, graded_with, step, sample, name, queries, breaker)
                results.append(Variant(name, guard, graded_with.template.version, grades, {}))
    finally:
        await backend.aclose()
    report = build_report(grade_set, method, sample, results, options)
    _save(store, grade_set, sample, results, report, options)
    return report


def _unguarded(results: list[Variant], name: str) -> Variant:
    return next(v for v in results if v.name == name and v.guard is None)


def _detected(sample: Sample, name: str, unguarded: Variant) -> Variant:
    """The `detect` guard: flagged passages get no grade; the others keep the grades of the same prompt."""
    flagged = {}
    for qid, pid in sample.pairs:
        reason = detect(sample.texts[(qid, pid)][name], [text for _, text, _ in sample.items[qid]])
        if reason is not None:
            flagged[(qid, pid)] = reason
    grades = {k: v for k, v in unguarded.grades.items() if (k[0], k[1]) not in flagged}
    return Variant(name, "detect", unguarded.prompt_version, grades, flagged)


def _save(store: Store, grade_set: GradeSet, sample: Sample, results: list[Variant], report: dict[str, Any],
          options: ProbeOptions) -> None:
    created = now()
    with store.transaction():
        _keep_usable(store, grade_set, results, options)
        for variant in results:
            passages = [(q, p, sample.texts[(q, p)][variant.name], FLAGGED if (q, p) in variant.flagged else "graded",
                         variant.flagged.get((q, p))) for q, p in sample.pairs]
            grades = [(*key, *value) for key, value in sorted(variant.grades.items(), key=lambda kv: kv[0])]
            params = {"sample": options.sample, "seed": options.seed, "probe_set_of": grade_set.params}
            ident = probe_set_id(grade_set, variant, options.sample, options.seed)
            store.probes.save_probe_set(ident, grade_set.id, variant.name, variant.guard, variant.prompt_version,
                                        params,
                                 created, passages, grades)
        store.probes.save_probe_report(grade_set.id, report, created)


def _keep_usable(store: Store, grade_set: GradeSet, results: list[Variant], options: ProbeOptions) -> None:
    """Refuse (ProctorError) a probe whose grades failed more often than those of the stored probe of the same
    configuration: usable probe grades are never replaced by failures (call inside the saving transaction)."""
    for variant in results:
        failed = [reply for _, status, reply in variant.grades.values() if status == FAILED]
        stored = store.probes.failures(probe_set_id(grade_set, variant, options.sample, options.seed))
        if failed and stored is not None and len(failed) > stored:
            attack = variant.name + (f" with guard {variant.guard}" if variant.guard else "")
            raise ProctorError(f"grade set {grade_set.id}: {len(failed)} of {len(variant.grades)} probe grades of "
                               f"{attack} failed (the first: {failed[0]}); the stored probe of this configuration "
                               f"is kept ({stored} failed): nothing written, run it again once the judge answers")


async def probe_grade_set(store: Store, grade_set: GradeSet, attacks: Sequence[str], guards: Sequence[str],
                          sample: int, seed: int, llm: str | None, backend: dict[str, Any]) -> dict[str, Any]:
    """`api.probe` after the grade set is resolved: the attacks, guards, sample and backend checked, then
    `run_probe`."""
    names = parse_attacks(",".join(attacks))
    guard_names = parse_guards(",".join(guards)) if guards else []
    if sample < 1:
        raise UsageError(f"{{sample}} must be at least 1 (got {sample})", params=("sample",))
    check_numbers({"seed": seed})
    config = BackendConfig(spec=llm or f"{grade_set.params.get('backend', 'openai')}:{grade_set.model}", **backend)
    config.check()
    return await run_probe(store, grade_set, config, ProbeOptions(tuple(names), tuple(guard_names), sample, seed))
