"""`python -m teamenvs ...`: the same command line as `teamenvs ...`."""

from teamenvs.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
