"""Where an env's time goes, function by function, in random valid play (the peer ratio's loop) or the RL interface's, on either engine.

    python -m benchmarks.profile day_trader_v0                      # the source, with cProfile
    python -m benchmarks.profile day_trader_v0 --engine compiled    # the compiled engine, with Linux `perf`
    python -m benchmarks.profile day_trader_v0 --interface numeric  # the RL interface's play (vectors, masked actions)

It prints a table: each function's share of the time, largest first (`--top` rows, `--json` for the rows as JSON).
`--interface numeric` plays the RL interface instead of text commands: vector observations and discrete actions,
each agent taking a masked-in action drawn at random, as the `numeric vs text` rows of `benchmarks.perf` do.

On the source each function's own time (cProfile's tottime). The compiled engine's functions are C, which cProfile
does not see, so there `perf record` samples the play's process with call stacks, and each sample goes to the
innermost teamenvs function on its stack: the function's own time with the interpreter's work it asks for (building
a dict, formatting a float), the closest thing to tottime. That is how `money_json`'s `round` (4.5% of a compiled
DayTrader episode) and the map task's waypoint search (a set rebuilt per cell, 4.3%) were found. It needs `perf`
(linux-tools) and a build (`teamenvs compile`); without either it says so and exits 2. Time outside teamenvs (the
loop drawing random actions, numpy, the interpreter's own) is one row; on the compiled engine the garbage collector's
samples are another (`COLLECTOR`), where the source's profile counts them in the functions that allocated.

Under the table, on either engine, a line says what share of the same play (without a profiler, in a new process) the
garbage collector took, timed by its callbacks, and how many collections of each generation ran (measured so: about
11.5% of the job fair's play on the source and 11.6% compiled, 1.3% of the commons' on the source, 3.9% of the map
task's compiled), which the source's rows hold inside the functions whose allocations set it off.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import json
import os
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

import teamenvs
from teamenvs import compiled
from teamenvs.cli import finite_number, whole_number

OUTSIDE = "(outside teamenvs)"
COLLECTOR = "(garbage collector)"
# the interpreter's functions that run a collection (CPython 3.11-3.14): a sample whose stack reaches one of them before
# any teamenvs function is the collector's, not the function whose allocation set it off
COLLECTOR_FRAMES = frozenset({"gc_collect_main", "gc_collect_with_callback", "gc_collect_generations", "_PyGC_Collect",
                              "gc_collect_young", "gc_collect_increment", "gc_collect_full", "gc_collect_region"})
# a compiled function's symbol: the kind (pw wrapper, pf body, gb generator, f cdef), then its module and class names
# each after its length, then a counter and the function's name (`__pyx_pw_8teamenvs_4core_3env_7TeamEnv_57step`)
_SYMBOL = re.compile(r"__pyx_(?:pw|pf|gb|f)_(8teamenvs_\w+)")

_DRIVER = """
import gc, json, sys, time
from benchmarks.profile import play
episode = play(sys.argv[1], sys.argv[3])
episode(10**6)
timed = sys.argv[4:] == ["collector"]  # time the garbage collector by its callbacks and print what it took (`collector_share`)
spent, started, counts = [0.0], [0.0], [0, 0, 0]
def timing(phase, info):
    if phase == "start":
        started[0] = time.perf_counter()
    else:
        spent[0] += time.perf_counter() - started[0]
        counts[min(info["generation"], 2)] += 1
if timed:
    gc.collect()
    gc.callbacks.append(timing)
start, k = time.perf_counter(), 0
while time.perf_counter() - start < float(sys.argv[2]):
    episode(k)
    k += 1
if timed:
    wall = time.perf_counter() - start
    gc.callbacks.remove(timing)
    print(json.dumps({"share": spent[0] / wall, "collections": counts}))
"""


INTERFACES = ("text", "numeric")


def play(env_id: str, interface: str) -> Any:
    """The episode function of the play profiled: random valid text commands (the peer ratio's loop) or the RL
    interface's masked-in discrete actions with vector observations; called with a seed, it plays one episode."""
    from benchmarks.perf import _numeric_episode, _teamenvs_episode

    if interface not in INTERFACES:
        raise ValueError(f"interface must be one of {', '.join(INTERFACES)}, got {interface!r}")
    return (_numeric_episode if interface == "numeric" else _teamenvs_episode)(env_id, {})


def function_name(symbol: str, modules: frozenset[str] | None = None) -> str | None:
    """`teamenvs.core.env.TeamEnv.step` for a compiled function's C symbol; None for any other symbol. `modules`: the
    compiled module names (default: the package's). After its module comes a class (a capitalised name, after its
    length), then Cython's counter and the function's name, which the counter is not told from by its form."""
    found = _SYMBOL.search(symbol)
    if found is None:
        return None
    modules = _modules() if modules is None else modules
    rest, module = found.group(1), ""

    def component(text: str) -> tuple[str, str] | None:  # (the name after its length, what follows it)
        length = re.match(r"(\d+)", text)
        if length is None:
            return None
        n, digits = int(length.group(1)), len(length.group(1))
        part = text[digits:digits + n]
        return (part, text[digits + n + 1:]) if len(part) == n and text[digits + n:digits + n + 1] == "_" else None

    while (step := component(rest)) is not None and not (module in modules and not any(m.startswith(f"{module}.{step[0]}") for m in modules)):
        module, rest = f"{module}.{step[0]}".lstrip("."), step[1]
    owner = component(rest)
    if owner is not None and owner[0][:1].isupper():
        module, rest = f"{module}.{owner[0]}", owner[1]
    name = re.sub(r"^\d+", "", rest)  # the counter
    name = re.sub(r"_\d*genexpr$|_\d+generator\d+$", ".<genexpr>", re.sub(r"___pyx_lambda_funcdef_lambda\d+", ".<lambda>", name))
    return f"{module}.{name}" if name else module


def _modules() -> frozenset[str]:
    global _MODULES
    if _MODULES is None:
        _MODULES = frozenset(compiled.package_modules())
    return _MODULES


_MODULES: frozenset[str] | None = None


def attribute(stacks: Iterable[list[str]]) -> collections.Counter:
    """Samples per innermost teamenvs function of each stack (innermost frame first), `COLLECTOR` for a stack that
    reaches the garbage collector first, `OUTSIDE` for the others."""
    counts: collections.Counter = collections.Counter()
    for frames in stacks:
        owner = OUTSIDE
        for frame in frames:
            if frame.split("+", 1)[0] in COLLECTOR_FRAMES:
                owner = COLLECTOR
                break
            name = function_name(frame)
            if name is not None:
                owner = name
                break
        counts[owner] += 1
    return counts


def collector_share(env_id: str, seconds: float, engine: str, interface: str = "text") -> dict[str, Any]:
    """{"share": the garbage collector's share of the play's time (`play`), "collections": [young, middle, full]}, from
    `seconds` of play without a profiler in a new process on `engine` ("source" or "compiled")."""
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", _DRIVER, env_id, str(seconds), interface, "collector"], capture_output=True, text=True, cwd=root,
                          env={**os.environ, compiled.ENV_SWITCH: "1" if engine == "compiled" else "0"}, timeout=120 + 4 * seconds)
    if done.returncode != 0:
        raise RuntimeError(f"the garbage collector's timing run failed: {done.stderr.strip()[-300:]}")
    try:
        found = json.loads(done.stdout.strip().splitlines()[-1])
        young, middle, full = (int(n) for n in found["collections"])
        return {"share": float(found["share"]), "collections": [young, middle, full]}
    except (IndexError, KeyError, TypeError, ValueError):  # nothing printed, or not what the driver prints
        raise RuntimeError(f"the garbage collector's timing run printed no result: {done.stdout.strip()[-200:]!r}") from None


def collector_line(found: dict[str, Any], engine: str) -> str:
    """What `collector_share` found, as the line printed under the table."""
    young, middle, full = found["collections"]
    where = (f"its samples are the `{COLLECTOR}` row" if engine == "compiled" else
             "on the source its time is inside the rows of the functions whose allocations set it off")
    return (f"Garbage collector: {100 * found['share']:.1f}% of the same play without a profiler ({young:,} young, {middle:,} "
            f"middle and {full:,} full collections); {where}.")


def perf_stacks(text: str) -> list[list[str]]:
    """The stacks of `perf script` output: per sample, its frames' symbols, innermost first."""
    stacks = []
    for block in text.split("\n\n"):
        lines = block.strip().splitlines()
        if len(lines) > 1:
            stacks.append([line.split()[1] if len(line.split()) > 1 else "" for line in lines[1:]])
    return stacks


def profile_source(env_id: str, seconds: float, interface: str = "text") -> list[tuple[float, str]]:
    """(share of the time, function) of the play (`play`) on the source, by cProfile's own time: in this process, or,
    where this process runs compiled modules (which cProfile does not see), in a new one with the engine off."""
    if not compiled.loaded():
        return _source_rows(env_id, seconds, interface)
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-m", "benchmarks.profile", env_id, "--seconds", str(seconds), "--interface", interface,
                           "--top", str(10**6), "--json"],
                          capture_output=True, text=True, cwd=root, env={**os.environ, compiled.ENV_SWITCH: "0"}, timeout=120 + 4 * seconds)
    if done.returncode != 0:
        raise RuntimeError(f"the source profile's process failed: {done.stderr.strip()[-300:]}")
    return [(share, name) for share, name in json.loads(done.stdout)]


def _source_rows(env_id: str, seconds: float, interface: str = "text") -> list[tuple[float, str]]:
    """`profile_source` in this process, whose teamenvs modules are the source."""
    episode = play(env_id, interface)
    episode(10**6)
    profiler = cProfile.Profile()
    start, k = time.perf_counter(), 0
    profiler.enable()
    while time.perf_counter() - start < seconds:
        episode(k)
        k += 1
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(row[2] for row in stats.values()) or 1.0
    package = str(Path(teamenvs.__file__).parent)
    rows: collections.Counter = collections.Counter()
    for (path, line, name), row in stats.items():
        inside = path.startswith(package)
        label = f"teamenvs{path[len(package):].replace(os.sep, '.')[:-3]}:{line} {name}" if inside else OUTSIDE
        rows[label] += row[2]
    return [(t / total, label) for label, t in rows.most_common()]


def profile_compiled(env_id: str, seconds: float, interface: str = "text") -> list[tuple[float, str]]:
    """(share of the samples, function) of the play (`play`) on the compiled engine, sampled by `perf`."""
    if shutil.which("perf") is None:
        raise RuntimeError("`perf` is not installed here (linux-tools): the compiled engine's functions are C, which only a "
                           "sampling profiler sees; profile the source instead (--engine source)")
    if not compiled.status().current:
        raise RuntimeError("no compiled module is built for the current source: run `teamenvs compile` first")
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as scratch:
        data = str(Path(scratch) / "perf.data")
        record = subprocess.run(["perf", "record", "-F", "400", "--call-graph", "dwarf,16384", "-o", data, "--",
                                 sys.executable, "-c", _DRIVER, env_id, str(seconds), interface],
                                capture_output=True, text=True, cwd=root, env={**os.environ, compiled.ENV_SWITCH: "1"},
                                timeout=120 + 4 * seconds)
        if record.returncode != 0:
            raise RuntimeError(f"perf record failed: {record.stderr.strip()[-300:]}")
        script = subprocess.run(["perf", "script", "-i", data], capture_output=True, text=True, timeout=600)
    counts = attribute(perf_stacks(script.stdout))
    total = sum(counts.values()) or 1
    return [(n / total, name) for name, n in counts.most_common()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=__doc__.split("\n\n")[0])
    parser.add_argument("env_id", choices=teamenvs.list_envs())
    parser.add_argument("--engine", choices=("source", "compiled"), default="source")
    parser.add_argument("--interface", choices=INTERFACES, default="text",
                        help="text: random valid commands (default); numeric: the RL interface, masked-in discrete actions")
    parser.add_argument("--seconds", type=finite_number(0.1, 600), default=4.0, help="seconds of play to profile (0.1-600; default 4)")
    parser.add_argument("--top", type=whole_number(1), default=30, help="rows to print (default 30)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    try:
        profiled = profile_source if args.engine == "source" else profile_compiled
        rows = profiled(args.env_id, args.seconds, args.interface)
    except (RuntimeError, subprocess.SubprocessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([[share, name] for share, name in rows[:args.top]]))
        return 0
    played = "random masked-in discrete actions, vector observations" if args.interface == "numeric" else "random valid actions"
    print(f"{args.env_id}, {played}, {args.engine} engine, {args.seconds:g} s: each function's own time\n")
    print("| share | function |\n|---:|---|")
    for share, name in rows[:args.top]:
        print(f"| {100 * share:.1f}% | {name} |")
    try:
        print("\n" + collector_line(collector_share(args.env_id, args.seconds, args.engine, args.interface), args.engine))
    except (RuntimeError, subprocess.SubprocessError) as exc:  # the table stands without it
        print(f"\nGarbage collector: not measured ({exc})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
