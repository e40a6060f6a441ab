"""The shape we keep, kept by tests: every flag declared in an option model, every literal default
written once, a small API of verbs, parameters named as parameters below the command line, and the packages
built on the door going through it. Each list below holds what is still left to mend; a test fails on anything
new and on an entry no longer found (delete it), so the lists only shrink."""

from __future__ import annotations

import code_shape

MAX_API_NAMES = 45
"""How many names `proctor.api` may offer: its verbs, the option models they take, `Store`, `GradeSet`, `Floor` and
`UsageError` (the types of results and modes live in `proctor.api.types`, the command plumbing in
`proctor.api.commands`)."""

FLAGS_OUTSIDE_MODELS = {  # `module --flag` still declared by hand
    'proctor.cli --version',  # argparse's own action (prints the version), an option of no concept
}

DEFAULTS_WRITTEN_TWICE = {  # `name=value` written in more than one place: none is an option (sentinels, and
    # the name of the option a helper's message names)
    'empty=()',
    "option='--out'",
    "option='measure'",
    'params=()',
}

TEN_PARAMETERS = {  # public functions still taking ten or more parameters
}

OPTION_DEFAULTS_OUTSIDE_MODELS = {  # a model option's default still written outside its model
}

SHELL_WORDS = {  # `module.function` whose raise still names a --flag
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
