"""The shape we keep, kept by tests: every flag declared in an option model, every literal default
written once, a small API of verbs, parameters named as parameters below the command line, and the packages
built on the door going through it. Each list below holds what is still left to mend; a test fails on anything
new and on an entry no longer found (delete it), so the lists only shrink."""

from __future__ import annotations

import code_shape

MAX_API_NAMES = 117
"""How many names `proctor.api` may offer (the aim: about 20 verbs and the option models and results they take)."""

FLAGS_OUTSIDE_MODELS = {  # `module --flag` still declared by hand
    'proctor.cli --version',
    'proctor.cli.agreement_cmd --bank',
    'proctor.cli.agreement_cmd --grade-set',
    'proctor.cli.agreement_cmd --merges',
    'proctor.cli.agreement_cmd --method',
    'proctor.cli.agreement_cmd --min-questions',
    'proctor.cli.agreement_cmd --model',
    'proctor.cli.analyze_cmd --official',
    'proctor.cli.analyze_cmd --out',
    'proctor.cli.bank_cmd --bank',
    'proctor.cli.bank_cmd --grade-set',
    'proctor.cli.bank_cmd --method',
    'proctor.cli.bank_cmd --model',
    'proctor.cli.calibrate_cmd --budget',
    'proctor.cli.calibrate_cmd --confidence',
    'proctor.cli.calibrate_cmd --grade-set',
    'proctor.cli.calibrate_cmd --measure',
    'proctor.cli.calibrate_cmd --min-grade',
    'proctor.cli.calibrate_cmd --plot',
    'proctor.cli.calibrate_cmd --ppi',
    'proctor.cli.calibrate_cmd --qrels',
    'proctor.cli.calibrate_cmd --repeats',
    'proctor.cli.calibrate_cmd --seed',
    'proctor.cli.compare_cmd --alpha',
    'proctor.cli.compare_cmd --baseline',
    'proctor.cli.compare_cmd --correction',
    'proctor.cli.compare_cmd --measure',
    'proctor.cli.compare_cmd --samples',
    'proctor.cli.compare_cmd --seed',
    'proctor.cli.compare_cmd --test',
    'proctor.cli.correlate_cmd --measure',
    'proctor.cli.correlate_cmd --official-measure',
    'proctor.cli.correlate_cmd --official-qrels',
    'proctor.cli.correlate_cmd --repeats',
    'proctor.cli.correlate_cmd --runs',
    'proctor.cli.correlate_cmd --seed',
    'proctor.cli.correlate_cmd --store',
    'proctor.cli.correlate_cmd --ties',
    'proctor.cli.ensemble_cmd --grade-set',
    'proctor.cli.export_cmd --bank',
    'proctor.cli.export_cmd --grade-set',
    'proctor.cli.export_cmd --method',
    'proctor.cli.export_cmd --model',
    'proctor.cli.probe_cmd --attack',
    'proctor.cli.probe_cmd --grade-set',
    'proctor.cli.verify_cmd --bank',
    'proctor.cli.verify_cmd --grade-set',
    'proctor.cli.verify_cmd --method',
    'proctor.cli.verify_cmd --model',
}

DEFAULTS_WRITTEN_TWICE = {  # `name=value` still written in more than one place
    'alpha=0.05',
    'bootstrap=1000',
    'budgets=(5,)',
    "correction='holm'",
    'empty=()',
    "fmt='tsv'",
    'grade_sets=()',
    'judged_relevant=1',
    'limit=50',
    'max_tokens=400',
    "measure='P@20'",
    'min_questions=(1, 2, 5)',
    "missing='skip'",
    "missing_cover='zero'",
    "option='--out'",
    "option='measure'",
    'params=()',
    "qrels='official'",
    'repeats=10',
    'samples=1000',
    'samples=10000',
    'seed=0',
    'taus=(1, 2, 3, 4, 5)',
    "tests=('t', 'randomization')",
    "ties='average'",
    "title=''",
}

TEN_PARAMETERS = {  # public functions still taking ten or more parameters
    'proctor.analyze.judges.store_agreement',
    'proctor.api.correlation.correlation',
    'proctor.api.ppi.ppi_calibration',
    'proctor.api.ppi.ppi_leaderboard',
}

OPTION_DEFAULTS_OUTSIDE_MODELS = {  # a model option's default still written outside its model
    'batch_size=8 in proctor.llm.hf_qa.__init__',
    'bootstrap=1000 in proctor.api.correlation.correlate',
    'judged_relevant=1 in proctor.api.correlation.correlation',
    'judged_relevant=1 in proctor.api.correlation.official_leaderboard',
    'judged_relevant=1 in proctor.api.ppi.ppi_calibration',
    'judged_relevant=1 in proctor.api.ppi.ppi_leaderboard',
    'judged_relevant=1 in proctor.api.trust.calibrate',
    'judged_relevant=1 in proctor.api.trust.calibration_request',
    'judged_relevant=1 in proctor.trust.calibration.calibration',
    "measure='P@20' in proctor.api.ppi.ppi_calibration",
    "measure='P@20' in proctor.api.trust.calibrate",
    "measure='P@20' in proctor.api.trust.calibration_request",
    "measure='P@20' in proctor.cli.calibrate_cmd.register",
    "measure='P@20' in proctor.trust.calibration.calibration",
    'measures=() in proctor.api.leaderboards.leaderboards',
    "method='holm' in proctor.stats.correction.adjust",
    "min_questions='1,2,5' in proctor.cli.agreement_cmd.register",
    'min_questions=(1, 2, 5) in proctor.analyze.judges.store_agreement',
    'min_questions=(1, 2, 5) in proctor.api.agreement.agreement',
    "missing='skip' in proctor.evaluate.leaderboard.measure_leaderboard",
    "missing='skip' in proctor.evaluate.leaderboard.measure_per_query",
    "qrels='official' in proctor.api.ppi.ppi_calibration",
    "qrels='official' in proctor.api.trust.calibrate",
    "qrels='official' in proctor.api.trust.calibration_request",
    "qrels='official' in proctor.cli.calibrate_cmd.register",
    "qrels='official' in proctor.trust.calibration.calibration",
    'seed=0 in proctor.analyze.correlation.bootstrap_intervals',
    'seed=0 in proctor.analyze.correlation.random_ties',
    'seed=0 in proctor.analyze.leaderboard_correlation.correlate_leaderboards',
    'seed=0 in proctor.api.correlation.correlate',
    'seed=0 in proctor.api.correlation.correlation',
    'seed=0 in proctor.api.ppi.ppi_calibration',
    'seed=0 in proctor.api.ppi.ppi_leaderboard',
    'seed=0 in proctor.api.significance.compare_file',
    'seed=0 in proctor.api.significance.significance',
    'seed=0 in proctor.api.trust.calibrate',
    'seed=0 in proctor.api.trust.calibration_request',
    'seed=0 in proctor.cli.calibrate_cmd.register',
    'seed=0 in proctor.cli.compare_cmd.add_significance_options',
    'seed=0 in proctor.cli.correlate_cmd.register',
    'seed=0 in proctor.stats.pairs.compare_systems',
    'seed=0 in proctor.stats.randomization.randomization_test',
    'seed=0 in proctor.trust.calibration.calibration',
    'seed=0 in proctor.trust.calibration.check_options',
}

SHELL_WORDS = {  # `module.function` whose raise still names a --flag
    'proctor.api.significance.compare_file',
}

PAST_THE_DOOR = {  # imports still reaching past the door
}


def _same(found: set[str], allowed: set[str]) -> dict[str, list[str]]:
    allowed = set(allowed)  # an emptied list reads `{}`
    return {"new (mend it)": sorted(found - allowed), "mended (delete from the list)": sorted(allowed - found)}


NONE = {"new (mend it)": [], "mended (delete from the list)": []}


def test_every_flag_is_declared_in_an_option_model():
    assert _same(code_shape.flags_outside_models(), FLAGS_OUTSIDE_MODELS) == NONE


def test_every_literal_default_is_written_once():
    assert _same(code_shape.defaults_written_twice(), DEFAULTS_WRITTEN_TWICE) == NONE


def test_an_option_default_lives_in_its_model_only():
    assert _same(code_shape.option_defaults_outside_models(), OPTION_DEFAULTS_OUTSIDE_MODELS) == NONE


def test_no_public_function_takes_ten_parameters():
    assert _same(code_shape.functions_with_ten_parameters(), TEN_PARAMETERS) == NONE


def test_no_command_line_words_below_the_command_line():
    assert _same(code_shape.shell_words_below_the_cli(), SHELL_WORDS) == NONE


def test_review_experiments_and_autojudge_go_through_the_door():
    assert _same(code_shape.imports_past_the_door(), PAST_THE_DOOR) == NONE


def test_the_api_is_small():
    assert len(code_shape.public_api_names()) <= MAX_API_NAMES
