"""`python -m teamenvs ...`: the same command line as `teamenvs ...`."""

from teamenvs.cli import main

raise SystemExit(main())
