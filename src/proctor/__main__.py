"""Allow `python -m proctor`."""

from proctor.cli import main

raise SystemExit(main())
