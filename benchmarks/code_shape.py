"""Print the code-shape figures the options/API work is measured by (before/after in the issue note):
flags declared outside an option model, literal defaults written more than once, public names in
`proctor.api`, public functions with ten or more parameters, `raise`s below the command line naming `--flags`,
and imports past the door from review, experiment and autojudge. `--list` prints each finding."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import code_shape  # noqa: E402  (tests/code_shape.py: the one definition of each count)


def main() -> None:
    """Print the figures as JSON (and every finding with `--list`)."""
    found = {
        "flags_outside_models": sorted(code_shape.flags_outside_models()),
        "literal_defaults_written_more_than_once": sorted(code_shape.defaults_written_twice()),
        "public_api_names": sorted(code_shape.public_api_names()),
        "public_functions_with_10_or_more_parameters": sorted(code_shape.functions_with_ten_parameters()),
        "raises_naming_flags_below_cli": sorted(code_shape.shell_words_below_the_cli()),
        "imports_past_the_door": sorted(code_shape.imports_past_the_door()),
    }
    print(json.dumps({key: len(value) for key, value in found.items()}, indent=1))
    if "--list" in sys.argv:
        print(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
