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
"""

from __future__ import annotations

import argparse
import json
import re
import sys
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="a bench output folder (or its logs/ folder)")
    parser.add_argument("after", type=Path)
    parser.add_argument("--ignore-timing", action="store_true",
                        help="blank the model calls' wall-clock times (latency_s, queue_s), which differ between any two runs")
    args = parser.parse_args(argv)
    for folder in (args.before, args.after):
        if not folder.is_dir():
            parser.error(f"{folder}: no such folder (give two bench output folders, or their logs/ folders)")
    same, problems = compare(args.before, args.after, args.ignore_timing)
    for line in problems:
        print(line)
    print(f"{same} episode log(s) byte-identical, {len(problems)} difference(s)")
    return 0 if not problems and same else 1


if __name__ == "__main__":
    sys.exit(main())
