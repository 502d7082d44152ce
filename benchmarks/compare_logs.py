"""Compare two bench output folders episode by episode: are their logs byte-identical?

A restructure or a speed-up must not change behaviour. Run a suite before and after the
change into two folders, then:

    python -m benchmarks.compare_logs BEFORE_DIR AFTER_DIR

Each `logs/*.jsonl.gz` (or `.jsonl`) is decompressed and compared byte for byte, except the
package version in the header line (the one field a release is allowed to change). Prints
one line per differing or missing episode, then a summary; exits 1 if anything differs.

LLM episodes log how long each step's model calls took (`latency_s`, `queue_s` in the usage): two runs of
one suite against one endpoint differ there and nowhere else. `--ignore-timing` blanks those values (and
only those), to check that such runs played alike:

    python -m benchmarks.compare_logs --ignore-timing RUN_1 RUN_2

Or let it run both sides: `--rev REV` extracts that git revision (`git archive`) into a scratch folder, runs
`teamenvs bench --suite SUITE` (default smoke) on it and on this working tree, each in a process of its own started
in its own tree's folder with that folder on PYTHONPATH, checks that each imported `teamenvs` from its own tree, and
compares the logs and `results.csv`:

    python -m benchmarks.compare_logs --rev HEAD~3 --suite paper

(Run by hand, the "before" side must start in the extracted folder: `python -m` puts the current folder first on
the import path, so from this checkout `PYTHONPATH=<before> python -m teamenvs.cli bench ...` runs this tree's code.)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from teamenvs.core.recorder import LogError, log_text

TIMING_FIELDS = (b"latency_s", b"queue_s")  # wall-clock measurements an llm step's usage records (agents.llm.client)
_TIMING = re.compile(rb'"(' + b"|".join(TIMING_FIELDS) + rb')": -?[0-9][0-9.eE+-]*')


def log_bytes(path: Path, ignore_timing: bool = False) -> bytes:
    """The log's text with the header's `version` value blanked, and with `ignore_timing` the values of
    `TIMING_FIELDS` too (`LogError` for a log too large or damaged)."""
    raw = log_text(path)
    if ignore_timing:
        raw = _TIMING.sub(rb'"\1": null', raw)
    head, sep, rest = raw.partition(b"\n")
    try:
        header = json.loads(head)
    except ValueError:
        return raw
    if isinstance(header, dict) and "version" in header:
        marker = b'"version": ' + json.dumps(header["version"]).encode()
        head = head.replace(marker, b'"version": null', 1)
    return head + sep + rest


def episode_logs(folder: Path) -> dict[str, Path]:
    logs = folder / "logs" if (folder / "logs").is_dir() else folder
    return {p.name.removesuffix(".gz"): p for p in sorted(logs.iterdir()) if p.name.endswith((".jsonl", ".jsonl.gz"))}


def first_difference(a: bytes, b: bytes) -> str:
    for n, (la, lb) in enumerate(zip(a.split(b"\n"), b.split(b"\n")), start=1):
        if la != lb:
            i = next((k for k, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
            return f"line {n}, byte {i}: {la[max(0, i - 40):i + 40]!r} vs {lb[max(0, i - 40):i + 40]!r}"
    return f"one log is longer ({len(a)} vs {len(b)} bytes)"


def compare(before: Path, after: Path, ignore_timing: bool = False) -> tuple[int, list[str]]:
    """(episodes identical, problems) for two bench folders (`ignore_timing`: see `log_bytes`)."""
    a, b = episode_logs(before), episode_logs(after)
    problems = [f"only in {before}: {name}" for name in sorted(a.keys() - b.keys())]
    problems += [f"only in {after}: {name}" for name in sorted(b.keys() - a.keys())]
    same = 0
    for name in sorted(a.keys() & b.keys()):
        try:
            x, y = log_bytes(a[name], ignore_timing), log_bytes(b[name], ignore_timing)
        except LogError as exc:
            problems.append(f"unreadable: {name}: {exc}")
            continue
        if x == y:
            same += 1
        else:
            problems.append(f"differs: {name}: {first_difference(x, y)}")
    return same, problems


ROOT = Path(__file__).resolve().parents[1]  # the working tree this module belongs to


class RunError(RuntimeError):
    """A side of `--rev` could not be run (no such revision, no git, a bench that failed), with what went wrong."""


def extract_revision(rev: str, into: Path, repo: Path = ROOT) -> str:
    """`rev` of the git repository at `repo`, written into `into` (made here) with `git archive`; its full hash."""
    try:
        sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RunError(f"git could not be run: {exc}") from None
    if sha.returncode != 0:
        raise RunError(f"{rev!r} is no commit of the git repository at {repo}")
    commit = sha.stdout.strip()
    tar = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", commit], capture_output=True, timeout=300)
    if tar.returncode != 0:
        raise RunError(f"git archive {commit} failed: {tar.stderr.decode(errors='replace')[-500:]}")
    into.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as archive:
        try:
            archive.extractall(into, filter="data")
        except TypeError:  # a Python without extraction filters (3.10 before 3.10.12, 3.11 before 3.11.4): git's own archive
            archive.extractall(into)
    return commit


def bench_tree(tree: Path, suite: str, out: Path, workers: int) -> Path:
    """Run `teamenvs bench --suite suite` on the code in `tree`, in a process started in `tree` with it on PYTHONPATH,
    into `out`; the `teamenvs` package that process imported (checked to be `tree`'s)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    probe = subprocess.run([sys.executable, "-c", "import teamenvs; print(teamenvs.__file__)"], cwd=tree, env=env,
                           capture_output=True, text=True, timeout=120)
    imported = Path(probe.stdout.strip()).resolve() if probe.returncode == 0 else None
    if imported is None or tree.resolve() not in imported.parents:
        raise RunError(f"a process started in {tree} imported teamenvs from {imported or probe.stderr.strip()[-300:]}, "
                       "not from that tree")
    done = subprocess.run([sys.executable, "-m", "teamenvs.cli", "bench", "--suite", suite, "--plots", "none",
                           "--workers", str(workers), "--quiet", "--out", str(out)],
                          cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RunError(f"the bench in {tree} failed (exit {done.returncode}): {(done.stderr or done.stdout).strip()[-800:]}")
    return imported


def main(argv: list[str] | None = None) -> int:
    from teamenvs.cli import COUNT

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, nargs="?", help="a bench output folder (or its logs/ folder)")
    parser.add_argument("after", type=Path, nargs="?")
    parser.add_argument("--ignore-timing", action="store_true",
                        help="blank the model calls' wall-clock times (latency_s, queue_s), which differ between any two runs")
    parser.add_argument("--rev", help="run --suite on this git revision and on the working tree, and compare them")
    parser.add_argument("--suite", default="smoke", help="with --rev: a suite name or file (default smoke)")
    parser.add_argument("--workers", type=COUNT, default=2, help="with --rev: processes for each bench (default 2)")
    parser.add_argument("--out", type=Path, help="with --rev: keep the two runs here (before/, after/), else in a scratch folder")
    args = parser.parse_args(argv)
    if args.rev is None:
        if args.before is None or args.after is None:
            parser.error("give two bench output folders, or --rev REV to run a suite on that revision and on this tree")
        for folder in (args.before, args.after):
            if not folder.is_dir():
                parser.error(f"{folder}: no such folder (give two bench output folders, or their logs/ folders)")
        return _report(args.before, args.after, args.ignore_timing)
    if args.before is not None:
        parser.error("--rev runs both sides itself: give no folders with it")
    suite = str(Path(args.suite).resolve()) if Path(args.suite).is_file() else args.suite  # the runs start elsewhere
    with tempfile.TemporaryDirectory(prefix="compare_logs_") as scratch:
        runs = args.out if args.out is not None else Path(scratch)
        if args.out is not None and args.out.exists() and any(args.out.iterdir()):
            parser.error(f"{args.out} is not empty")
        try:
            commit = extract_revision(args.rev, Path(scratch) / "tree")
            print(f"before: {args.rev} ({commit[:12]}), extracted; after: the working tree {ROOT}")
            for side, tree in (("before", Path(scratch) / "tree"), ("after", ROOT)):
                imported = bench_tree(tree, suite, runs / side, args.workers)
                print(f"{side}: suite {args.suite} run with {imported.parent}")
        except RunError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        status = _report(runs / "before", runs / "after", args.ignore_timing)
        same_csv = (runs / "before" / "results.csv").read_bytes() == (runs / "after" / "results.csv").read_bytes()
        print(f"results.csv {'identical' if same_csv else 'differs'}")
        return status if same_csv else 1


def _report(before: Path, after: Path, ignore_timing: bool) -> int:
    same, problems = compare(before, after, ignore_timing)
    for line in problems:
        print(line)
    print(f"{same} episode log(s) byte-identical, {len(problems)} difference(s)")
    return 0 if not problems and same else 1


if __name__ == "__main__":
    sys.exit(main())
