"""What the commands use and a notebook does not: the checked requests and whole-command reports (`*_request`,
`*_report`, `grade_job`, ...) that `proctor.cli` and the review app build from a command line or a form, and the
formats and kinds their options offer. `proctor.api` keeps the verbs; `proctor.api.commands` is imported by the
command line and the review app only (a test keeps it so). Each name is imported from its module when first
used, as `proctor.api`'s are."""

from __future__ import annotations

from proctor.api.lazy import lazy_names

_NAMES: dict[str, str] = {
    "proctor.api.reports": "AnalyzeRequest analyze_request",
    "proctor.api.review": "BackendConfig Conflict LeaderboardFile VerdictBasis VerdictConflict bank_version_of "
                          "cell_prompt expected_pairs grade_new_version judgment_pool labels_rest_on official_board "
                          "probe_table qrels_text query_flags queue_for_review refuse_regrading review_backend "
                          "review_impact review_store rubric_flags",
    "proctor.api.trust": "ATTACKS GUARDS CalibrationRequest ProbeRequest calibration_request probe_request "
                         "render_probe",
    "proctor.api.verification": "VERIFY_REPORTS",
    "proctor.api.autojudge": "DIRECT_METHODS BackendUnavailable autojudge_lines bank_topic jsonl_records "
                             "method_scale nuggetizer_lines response_cache_file write_bank",
    "proctor.api.experiments": "atomic_file folder_target grading_estimate write_qrels_file write_text",
    "proctor.api.bank_generation": "GenerationRequest generate_bank_file generation_request",
    "proctor.api.banks": "BANK_FORMATS BankExport ImpactRequest export_bank impact_request load_bank_file",
    "proctor.api.grading": "ANSWER_METHODS METHOD_NAMES GradeJob GradeOutcome grade_job grade_request run_grade_job",
    "proctor.api.inputs": "EXPORT_KINDS IMPORT_KINDS ExportRequest ImportRequest export_request import_request",
    "proctor.api.stores": "DEFAULT_LOCK_TIMEOUT StoreError info_text",
    "proctor.api.labels": "QrelsOptions QrelsReport grade_set_of labels_coverage qrels qrels_report",
    "proctor.api.leaderboards": "IntervalOptions LeaderboardOptions LeaderboardReport add_intervals known_measures "
                                "leaderboard_measures leaderboard_report",
    "proctor.api.correlation": "official_leaderboard",
    "proctor.api.significance": "ComparisonReport significance",
}
"""Module → the command plumbing it gives (moved here from `proctor.api`'s names)."""

_WHERE, __all__, __getattr__, __dir__ = lazy_names(__name__, _NAMES)
