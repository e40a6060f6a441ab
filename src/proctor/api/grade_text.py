"""What `proctor grade` says about a `GradeOutcome`: its JSON (the grading summary, or the batch report) and the
sentences of its text (one line each; the command writes them as notes on standard error)."""

from __future__ import annotations

from typing import Any

from proctor.api.results import JSON, Notice, json_text

GradeOutcome = Any
"""A `proctor.api.grading.GradeOutcome` (not imported: it imports this module)."""


def outcome_json(outcome: GradeOutcome) -> JSON:
    """The batch report with the grade set (and the Batch API's steps), or the last step's summary with the grade
    set, the exit status and the failures of all steps (each step's summary under `steps` when there are
    several)."""
    import json

    summaries, grade_set = outcome.summaries, outcome.grade_set
    data: dict[str, Any]
    if outcome.mode == "batch-export":
        data = {**outcome.report.as_dict(), "grade_set": grade_set.as_dict()}  # type: ignore[union-attr]
    elif outcome.mode == "batch-api":
        data = {**outcome.report.as_dict(), "grade_set": grade_set.as_dict() if grade_set else None,  # type: ignore[union-attr]
                "steps": [s.as_dict() for s in summaries]}
    else:
        data = {**summaries[-1].as_dict(), "grade_set": grade_set.as_dict(),  # type: ignore[union-attr]
                "exit_status": outcome.exit_status, "failures_in_all_steps": sum(s.failures for s in summaries)}
        if len(summaries) > 1:
            data["steps"] = [s.as_dict() for s in summaries]
    return json.loads(json_text(data))


def outcome_lines(outcome: GradeOutcome) -> list[str]:
    """The sentences of the outcome: the shards written, the batches of the Batch API, or the grade set; then one
    per step graded."""
    grade_set, report = outcome.grade_set, outcome.report
    if outcome.mode == "batch-export":
        if not report.requests:  # type: ignore[union-attr]
            return [f"grade set {grade_set.id}: nothing pending, no shard written"]  # type: ignore[union-attr]
        return [Notice(f"grade set {grade_set.id}: {report.requests} pending prompts of step {report.step} written "  # type: ignore[union-attr]
                       f"to {len(report.shards)} shard(s) in {outcome.batch_export}; grade them (OpenAI Batch API, "  # type: ignore[union-attr]
                       "vllm run_batch, ...) and read the results with {batch_import} FILE...", ("batch_import",))]
    if outcome.mode == "batch-api":
        lines = [f"batch {batch_id} ({job['step']}, {job['requests']} requests): {job['status']}"
                 f"{', imported' if job['imported'] else ''}" for batch_id, job in report.jobs.items()]  # type: ignore[union-attr]
        lines += [line for summary in outcome.summaries for line in summary_lines(summary.as_dict())]
        if report.open():  # type: ignore[union-attr]
            lines.append(f"{len(report.open())} batch(es) not finished: run the same command again to collect them "  # type: ignore[union-attr]
                         "(the batch ids are kept in the store, nothing is submitted twice)")
        elif not report.jobs:  # type: ignore[union-attr]
            lines.append("nothing pending: no batch submitted")
        return lines
    lines = [f"grade set {grade_set.id}: {grade_set.method} / {grade_set.model}, bank {grade_set.bank_label}, "  # type: ignore[union-attr]
             f"prompt {grade_set.prompt_version}"]  # type: ignore[union-attr]
    return lines + [line for summary in outcome.summaries for line in summary_lines(summary.as_dict())]


def import_lines(data: dict[str, Any]) -> list[str]:
    """What a batch import read: the files skipped (imported before) and the results matched."""
    lines = [f"imported before, skipped: {', '.join(data['skipped_files'])}"] if data["skipped_files"] else []
    return lines + [f"batch results: {data['results']} lines in {data['files']} file(s); {data['other_grade_sets']} "
                    f"of other grade sets, {data['unmatched_results']} for no pending pair (graded already, or the "
                    "prompt changed since)"]


def summary_lines(data: dict[str, Any]) -> list[str]:
    """One step's summary (`Summary.as_dict()`): one line, then its failure reasons and servers."""
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(data["by_status"].items())) or "nothing to do"
    rate = f"{data['pairs_per_second']:.1f} pairs/s" if data["pairs_per_second"] else "-"
    given_up = f", {data['given_up']} failed too often (not retried)" if data["given_up"] else ""
    if data.get("unjudgeable_passages"):
        given_up += f", {data['unjudgeable_passages']} pool passages without text left out (unjudgeable)"
    lines = [f"{data['method']} with {data['model']}: {data['pairs_in_pool']} pairs in the pool, "
             f"{data['already_graded']} already graded{given_up}, {data['graded_now']} graded now ({statuses}); "
             f"{data['failures']} failures; {data['llm_calls']} calls, {data['cache_hits']} cache hits, "
             f"{data['tokens']} tokens, {data['truncated_contexts']} contexts cut; {data['seconds']} s, {rate}"
             + (f" (the model loaded before, in {data['model_load_seconds']} s)" if "model_load_seconds" in data
                else "")]
    lines += [f"  failure: {reason} × {count}" for reason, count in data["failure_reasons"].items()]
    for server in data.get("servers", []):
        mean = f"{1000 * server['mean_seconds']:.0f} ms" if server["mean_seconds"] is not None else "-"
        lines.append(f"  server {server['url']}: {server['requests']} requests, {server['failures']} failed, mean "
                     f"{mean}, taken out {server['taken_out']}×{'' if server['healthy'] else ', unhealthy at the end'}")
    return lines
