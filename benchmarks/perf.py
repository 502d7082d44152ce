"""Performance report: one table of env speed, the cost of recording a log, the RL interface, LLM step-loop efficiency and client speed, memory retrieval time, and the speed targets' other figures (peer ratio, scaling, map generation, memory in a long run).

    python -m benchmarks.perf                 # about 11 minutes
    python -m benchmarks.perf --quick         # a few seconds per section (the test runs this)
    python -m benchmarks.perf --seconds 10 --latency-ms 500 --agents 9 --steps 5 --queries 500

Rows, every number measured by this run on the engine the `Engine:` line names (the source unless `teamenvs compile`
built the compiled engine here and `TEAMENVS_COMPILED` is not 0). The rows that compare two ways of doing the same work
(`recorder cost`, `numeric vs text` with `step parts`, `vector env`, `LLM client`) and the long run are each measured in
a new process of their own (`rows_in_fresh_process`), the others in this one:

* `env steps/s`: every registered env (`teamenvs.list_envs()`, default config) with `random` and
  `scripted` policies for every agent, episodes back to back for `--seconds` in the plain
  synchronous loop (`benchmarks.common.time_episodes`). The value is env steps over the whole
  loop's wall time (the policies choosing actions, `env.step`, the resets between episodes);
  the notes give `env.step` alone (env steps over the time spent inside `env.step`) and
  agent-steps/s (one per observation returned).
* `recorder cost`: every registered env with `scripted` policies, each episode played twice with
  the same seed in the plain synchronous loop, once without a recorder and once writing a
  `.jsonl.gz` log as `agents.run_episode` does (`EpisodeRecorder(path, keep="metrics")` made, the
  lines written, the file closed and its kept metrics views read back, all in the timed loop), the
  two in alternating order for `--seconds` in all. Value: env steps/s with the log over env
  steps/s without (wall time of the whole loop; the target is at least 0.75, a recorder costing
  at most 25% of env throughput); the notes add the same ratio in CPU time (less sensitive to
  other load on the machine) and the bytes written per step.
* `step-loop efficiency`: one `--agents`-agent `day_trader_v0` episode (its first `--steps`
  steps) with `LLMPolicy` on the built-in server's `random-valid+latency=<ms>` model, served
  by `teamenvs serve-llm` in its own process (as `benchmarks.llm_loop` does; cache off, so
  every decision is an HTTP request). Value: episode wall time / ideal time, where the ideal
  is the model calls on the critical path times the latency: with `agents.run_episode` the
  agents of a step call at once, so a step costs its slowest agent's calls; one call after
  another, every call is on the path.
* `numeric vs text`: every registered env (and DayTrader with 9 traders, `NUMERIC_TEAMS`) in its RL interface (`obs_type="vector",
  action_type="discrete"`) against the same env in text mode, playing the same episodes in
  lockstep (`lockstep`): both reset with the same seed, the numeric env gets a uniformly drawn
  masked-in action per agent and the text env the command it stands for (`env.action_text`), so
  both modes step through the same states, untimed; then each env replays those episodes alone, in alternating blocks
  (numeric, text, text, numeric: stepped one after the other, each env slowed the other), `env.step` timed (resets are
  not), for about `--seconds` in all. Value: the ratio of env steps/s. These rows, the single-agent view's and the step parts run in a new
  process (`numeric_rows`), so that what the rows before left resident does not lengthen the garbage collector's walks
  in the mode that allocates more.
* `step parts`: where an `env.step` goes, per env and mode, from the same lockstep play (each
  hook timed on the instance): rules (`_apply`), building views, rendering text (text mode),
  encoding and masks (numeric mode). Value: the most the numeric mode could gain over text
  while its vector is an encoding of the view, i.e. if encoding, masks, parsing and the
  bookkeeping cost nothing (text step time / (rules + views)); the notes add the bound with
  no view either (text step time / rules), and the bound that keeps the rest of the step (the
  shared step: parsing, the forms each agent may use, messages, infos; text step time less its
  rules, views and rendering), which a discrete action goes through as the command it stands for:
  text step time / (rules + rest).
* `vector env`: the single-agent view (numeric, discrete) of an env in Gymnasium's
  `AsyncVectorEnv` (2 worker processes) against `SyncVectorEnv` (same 2 envs, one process),
  alternating rounds within one run. Value: the ratio of env steps/s. Where workers can be pinned,
  a row beside each gives `AsyncVectorEnv` with each worker pinned to one CPU (as
  `teamenvs.wrappers.make_async` does), the same rounds. Reference rows time the same for an env
  whose steps are only busy CPU (0.3 ms and 1 ms): what the vector machinery itself gains on this
  machine for steps of that cost, and from it what a vector step spends exchanging actions and
  results between processes (`exchange_cost`). A `lockstep bound` row per env gives the most any
  lockstep vector env could gain for that env's learner steps (timed one by one; each vector step
  waits for its slower worker), with exchange free and with the exchange measured (`lockstep_bound`).
  `teamenvs.wrappers.ProcessVectorEnv` (`make_async(env_id, num_envs, workers=2)`: several envs per
  worker, one exchange per worker and vector step) against `SyncVectorEnv` of the same envs: 8 envs
  for search and rescue, DayTrader and the references, 32 envs for every registered env, as an
  RL user would run them (rows `... envs in 2 worker processes`), and 64 for DayTrader, whose learner
  step (about 0.1 ms) is the cheapest: the fixed exchange of a vector step weighs most there.
* `memory retrieval`: `agents.memory.MemoryStream` with 10,000 and 100,000 synthetic memories
  (`benchmarks.memory.build`: `HashingEmbedder` dim 256, default Eq. 5.1 weights), median
  time of a full top-10 `retrieve` over `--queries` queries, one thread.
* `peer ratio`: agent-steps/s of teamenvs envs (random valid actions, time inside `reset` and
  `step`) over TextArena's fastest social dilemma of the same round, `--rounds` rounds of every
  arm in a shuffled order (the method of `../shared/tools/peer_ratio.py`); needs `textarena`
  (not a dependency: the row says how to install it when it is missing).
* `compiled engine`: every registered env playing random valid actions (the peer ratio's loop: time inside
  `reset` and `step`) with the compiled engine (`teamenvs compile`, `teamenvs.compiled`) over the source, each
  engine in its own process (`TEAMENVS_COMPILED=1` / `0`), `--rounds` rounds alternating which goes first, the same
  seeds both ways. Value: the ratio of median agent-steps/s. Where the engine is built, the peer ratio rows are
  measured again in a new process running it (`..., compiled engine`), and the scripted search-and-rescue row gets
  a compiled arm. Without a build the row says how to make one.
* `cost per agent-step`: `env.step` time per agent-step with scripted policies at 3, 9 and 30
  traders and in generated job fairs of 13, 36 and 120 agents. Value: the cost at the largest
  size over the smallest (about 1.0 when a step's cost is linear in the number of agents).
* `map generation` and `reset on a new map`: the map task's default map (median ms over `--seeds`
  maps) and the search-and-rescue reset on a new 100x100 map over one on a new 30x30 map (medians of
  `--seeds` resets each, at least 21).
* `long run`: one commons env playing random valid actions (free-text messages among them) for
  4 x `--seconds`, in a new process (`rows_in_fresh_process`: what the rows before left resident
  does not count). Value: its resident memory at the end less after the first third (a cache
  without bound grows here; target: flat); the notes add env steps/s in the first and last third
  and the memo entries its situation cache holds (`teamenvs.core.env.MAX_MEMO_TOTAL`).
* `LLM client`: `benchmarks.llm_loop --speed`'s measurements against `teamenvs serve-llm` in its
  own process: the full stack's calls/s over a bare asyncio HTTP client's at 8 and 64 concurrent
  9-agent DayTrader episodes (no added latency), synchronous `act()` over `await aact()` in CPU
  per call, and 16 episodes at once over one after another at 1 ms latency; medians of `--rounds`.
  The server gets a CPU of its own where there are enough (`benchmarks.llm_loop.pin_apart`). In a new process: at
  the end of a full run's own process the full stack read 0.69x the bare client at 64 episodes and 16 episodes at
  once 0.70x one after another, against 0.84-0.92 and 1.17-1.19 in processes of their own the same hour.
* `scripted search and rescue`: the scripted search-and-rescue team (default config) with
  this code over the same team with the code the speed issue measured (`THEN`, extracted from git
  into a scratch folder), each in its own process, `--rounds` rounds alternating which goes first,
  each arm playing episodes from the same first seed for the same time (the faster arm plays more of them). Value: env steps/s now over then (full loop; target at least 4x).
  Outside a git checkout holding `THEN` the row says it was not measured and why.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy is imported: one core, as benchmarks.memory

import argparse
import asyncio
import gc
import io
import json
import platform
import shlex
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

import teamenvs
from agents import make_policies
from agents.llm.client import LLMClient
from benchmarks.common import table, time_episodes
from benchmarks.llm_loop import served, time_one_episode
from benchmarks.memory import build, retrieval_latencies, synthetic_texts
from teamenvs.cli import COUNT, SECONDS, whole_number
from teamenvs.core.recorder import EpisodeRecorder
from teamenvs.core.text import printable
from teamenvs.wrappers.vector import ProcessVectorEnv, worker_cpus, worker_fns

POLICIES = ("random", "scripted")
MEMORY_SIZES = (10_000, 100_000)
DEFAULTS = {"seconds": 5.0, "latency_ms": 200, "agents": 9, "steps": 5, "queries": 200, "rounds": 5, "seeds": 50}
QUICK = {"seconds": 0.25, "latency_ms": 100, "agents": 9, "steps": 2, "queries": 20, "rounds": 1, "seeds": 5}
HEADER = ["measurement", "setting", "value", "unit", "notes"]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Flags; those not given come from QUICK with `--quick`, else from DEFAULTS."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=SECONDS, help=f"seconds per env x policy measurement (default {DEFAULTS['seconds']})")
    parser.add_argument("--latency-ms", type=whole_number(0), help=f"fixed latency of every model call (default {DEFAULTS['latency_ms']})")
    parser.add_argument("--agents", type=whole_number(2), help=f"traders in the LLM episode (default {DEFAULTS['agents']})")
    parser.add_argument("--steps", type=COUNT, help=f"steps of the LLM episode (default {DEFAULTS['steps']})")
    parser.add_argument("--queries", type=COUNT, help=f"timed retrievals per memory size (default {DEFAULTS['queries']})")
    parser.add_argument("--rounds", type=COUNT, help=f"rounds of the interleaved peer and LLM-client arms (default {DEFAULTS['rounds']})")
    parser.add_argument("--seeds", type=COUNT, help=f"maps generated per map-generation row (default {DEFAULTS['seeds']})")
    parser.add_argument("--quick", action="store_true", help="fast run: " + ", ".join(f"{k.replace('_', '-')} {v}" for k, v in QUICK.items()))
    args = parser.parse_args(argv)
    for key, value in (QUICK if args.quick else DEFAULTS).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what `platform` knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> str:
    """One line: CPU model and count, Python version, OS."""
    return (
        f"{cpu_model()}, {os.cpu_count()} CPUs; Python {platform.python_version()} "
        f"({platform.python_implementation()}); {platform.system()} {platform.release()}"
    )


def env_rows(seconds: float, seed: int = 0) -> list[list[str]]:
    """Env steps/s of every registered env with each policy kind, full loop and `env.step` alone."""
    rows = []
    for env_id in teamenvs.list_envs():
        for kind in POLICIES:
            env = teamenvs.make(env_id)
            r = time_episodes(env, kind, seconds, seed)
            rows.append(
                [
                    "env steps/s",
                    f"{env_id}, {kind}",
                    f"{r['steps'] / r['wall']:,.0f}",
                    "env steps/s (full loop)",
                    f"env.step alone {r['steps'] / r['step_time']:,.0f} steps/s; {r['agent_steps'] / r['wall']:,.0f} agent-steps/s; "
                    f"{len(env.possible_agents)} agents, {r['episodes']:,} episode{'' if r['episodes'] == 1 else 's'}, "
                    f"{r['steps']:,} steps in {r['wall']:.1f} s",
                ]
            )
    return rows


def played(env: Any, kind: str, seed: int, log: Path | None) -> tuple[int, float, float]:
    """One episode of `kind` policies in the plain loop (as `time_episodes`), with (`log`: its path) or without a
    `.jsonl.gz` log written as `agents.run_episode` writes one: its recorder made (the file opened) and, once the episode
    is over, closed and its kept metrics views read back, all timed. (env steps, wall seconds, CPU seconds)."""
    base = env.unwrapped
    wall, cpu = time.perf_counter(), time.process_time()
    recorder = EpisodeRecorder(log, keep="metrics") if log is not None else None  # as agents.run_episode
    policies = make_policies(env, kind, seed=seed)
    steps = 0
    with base.recording(recorder):
        observations, infos = env.reset(seed=seed)
        for agent in env.agents:
            policies[agent].reset(agent, base.briefing(agent))
        while env.agents:
            actions = {a: policies[a].act(observations[a], infos[a]) for a in env.agents if infos[a]["needs_action"]}
            observations, _, _, _, infos = env.step(actions)
            steps += 1
    if recorder is not None:
        recorder.records  # the metrics views read back, as agents.run_episode does with a log
        recorder.close()
    return steps, time.perf_counter() - wall, time.process_time() - cpu


def recorder_cost(env_id: str, seconds: float, seed: int = 0, kind: str = "scripted") -> dict[str, float]:
    """Env steps, wall and CPU seconds with and without a `.jsonl.gz` log written as `agents.run_episode` writes one (its
    recorder made, its lines written, its kept metrics views read back: all timed), the same episodes (seeds) played
    both ways in alternating order for about `seconds` (at least one pair) after one untimed episode, and the log bytes
    written (compressed and not)."""
    env = teamenvs.make(env_id)
    out = dict.fromkeys(("pairs", "steps", "wall", "cpu", "rec_steps", "rec_wall", "rec_cpu", "bytes", "text_bytes"), 0.0)
    # one episode first, not timed: the first pair's arm that went first paid the env's first-episode costs (its map, its
    # caches), which made a short run's ratio anything (6.7x once, under load, with one pair)
    played(env, kind, seed, None)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        while not out["pairs"] or time.perf_counter() - start < seconds:
            episode_seed = seed + int(out["pairs"])
            for recorded in ((False, True) if out["pairs"] % 2 == 0 else (True, False)):
                path = Path(folder) / f"{env_id}_{episode_seed}.jsonl.gz"
                steps, wall, cpu = played(env, kind, episode_seed, path if recorded else None)
                prefix = "rec_" if recorded else ""
                out[prefix + "steps"] += steps
                out[prefix + "wall"] += wall
                out[prefix + "cpu"] += cpu
                if recorded:
                    data = path.read_bytes()
                    out["bytes"] += len(data)
                    out["text_bytes"] += int.from_bytes(data[-4:], "little")  # the gzip trailer's length
                    path.unlink()
            out["pairs"] += 1
    return out


def recorder_rows(seconds: float, seed: int = 0, env_ids: Sequence[str] | None = None) -> list[list[str]]:
    """Per env: env steps/s writing a `.jsonl.gz` log over env steps/s without, in one run (target >= 0.75)."""
    rows = []
    for env_id in env_ids or teamenvs.list_envs():
        r = recorder_cost(env_id, seconds, seed)
        with_log, without = r["rec_steps"] / r["rec_wall"], r["steps"] / r["wall"]
        cpu_ratio = (r["rec_steps"] / r["rec_cpu"]) / (r["steps"] / r["cpu"])
        rows.append(["recorder cost", f"{env_id}, scripted, .jsonl.gz log", f"{with_log / without:.2f}",
                     "x env steps/s without a recorder",
                     f"with the log {with_log:,.0f} env steps/s, without {without:,.0f} (full loop, the same "
                     f"{int(r['pairs'])} episode(s) both ways; the log made, written and its metrics views read back, as "
                     f"agents.run_episode does); CPU-time ratio {cpu_ratio:.2f}; "
                     f"{r['text_bytes'] / r['rec_steps']:,.0f} bytes of JSON per step, "
                     f"{r['bytes'] / r['rec_steps']:,.0f} written ({r['text_bytes'] / max(r['bytes'], 1):.0f}x smaller)"])
    return rows


def lockstep_play(numeric: Any, text: Any, seconds: float, seed: int) -> list[tuple[int, list[dict[str, Any]], list[dict[str, Any]]]]:
    """Play the numeric env (vector, discrete) and the text env through the same episodes for about `seconds`, untimed:
    both reset with the same seed, each numeric agent takes a uniformly drawn masked-in action and the text env gets
    the command it stands for (`action_text`). The episodes played, as (seed, the numeric actions of each step, the
    text actions of each step); the last one may be cut short. Raises if the two envs' play ever differs."""
    rng = np.random.default_rng(seed)
    episodes: list[tuple[int, list[dict[str, Any]], list[dict[str, Any]]]] = []
    infos: dict[str, Any] = {}
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        if not episodes or not numeric.agents:
            episode = seed + len(episodes)
            _, infos = numeric.reset(seed=episode)
            text.reset(seed=episode)
            episodes.append((episode, [], []))
        actions = {a: int(rng.choice(np.flatnonzero(infos[a]["action_mask"]))) for a in numeric.agents}
        commands = {a: numeric.action_text(a, i) for a, i in actions.items() if infos[a]["needs_action"]}
        _, rewards, _, _, infos = numeric.step(actions)
        _, text_rewards, _, _, text_infos = text.step(commands)
        episodes[-1][1].append(actions)
        episodes[-1][2].append(commands)
        if rewards != text_rewards or [i["needs_action"] for i in infos.values()] != [i["needs_action"] for i in text_infos.values()]:
            raise RuntimeError(f"{numeric.env_id}: the numeric and the text env played different steps from the same commands")
    return episodes


def replayed(env: Any, episodes: list[tuple[int, list[dict[str, Any]], list[dict[str, Any]]]], which: int) -> float:
    """Seconds inside `env.step` replaying `episodes` (`which`: 1 for the numeric actions, 2 for the text ones), alone
    in the process; resets are not timed."""
    spent = 0.0
    for episode in episodes:
        env.reset(seed=episode[0])
        for actions in episode[which]:
            t0 = time.perf_counter()
            env.step(actions)
            spent += time.perf_counter() - t0
    return spent


def lockstep(numeric: Any, text: Any, seconds: float, seed: int) -> tuple[int, float, float]:
    """The same episodes in both envs (`lockstep_play`, about a third of `seconds`), then each env timed alone replaying
    them, in alternating blocks (numeric, text, text, numeric): (env steps, seconds inside the numeric `env.step`,
    seconds inside the text `env.step`), over both blocks. Stepped one after the other instead, each env slowed the
    other (search and rescue's text step about 15%, which put the ratio at 0.57 where alone it reads 0.49)."""
    episodes = lockstep_play(numeric, text, seconds / 3, seed)
    spent = {1: 0.0, 2: 0.0}
    for which in (1, 2, 2, 1):
        spent[which] += replayed(numeric if which == 1 else text, episodes, which)
    return 2 * sum(len(e[1]) for e in episodes), spent[1], spent[2]


PARTS = {"_apply": "rules", "_view": "views", "_render_view": "text", "_encode": "encode", "observe": "encode+mask"}


def _timed(obj: Any, name: str, spent: dict[str, float], label: str) -> None:
    """Replace `obj.name` on the instance with a wrapper adding its wall time to `spent[label]` and counting its calls
    (`spent["calls"]`: the wrappers' own cost is taken out of the step's time, `hook_seconds`)."""
    inner = getattr(obj, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        spent["calls"] += 1
        t0 = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[label] += time.perf_counter() - t0

    setattr(obj, name, timed)


def hook_seconds(calls: int = 100_000) -> float:
    """What one `_timed` wrapper adds to a call, in seconds (the best of three timings of a wrapped no-op less the bare
    no-op)."""
    class Bare:
        def noop(self) -> None:
            return None

    bare, wrapped = Bare(), Bare()
    _timed(wrapped, "noop", {"calls": 0, "x": 0.0}, "x")
    best = []
    for obj in (bare, wrapped):
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            for _ in range(calls):
                obj.noop()
            times.append(time.perf_counter() - t0)
        best.append(min(times))
    return max(best[1] - best[0], 0.0) / calls


def step_parts(env_id: str, seconds: float, seed: int = 0) -> dict[bool, dict[str, float]]:
    """Microseconds per `env.step` in each part (PARTS) and in all (`step`), numeric (True) and text (False),
    from the same lockstep play."""
    envs = {True: teamenvs.make(env_id, obs_type="vector", action_type="discrete"), False: teamenvs.make(env_id)}
    episodes = lockstep_play(envs[True], envs[False], seconds / 3, seed)  # played before any hook
    spent = {mode: {**dict.fromkeys(PARTS.values(), 0.0), "calls": 0} for mode in envs}
    for mode, env in envs.items():
        for name, label in PARTS.items():
            _timed(env.interface if name == "observe" else env, name, spent[mode], label)
        reset = env.reset

        def reset_untimed(*args: Any, _reset: Any = reset, _spent: dict[str, float] = spent[mode], **kwargs: Any) -> Any:
            before = dict(_spent)  # a reset's views, text and encoding are not a step's
            try:
                return _reset(*args, **kwargs)
            finally:
                _spent.update(before)

        env.reset = reset_untimed
    busy = {mode: 0.0 for mode in envs}
    for mode in (True, False, False, True):  # each env alone, in alternating blocks (see `lockstep`)
        busy[mode] += replayed(envs[mode], episodes, 1 if mode else 2)
    steps = 2 * sum(len(e[1]) for e in episodes)
    hook = hook_seconds()
    out = {}
    for mode in envs:
        calls = spent[mode].pop("calls")
        parts = {label: 1e6 * t / steps for label, t in spent[mode].items()}
        parts["mask"] = parts.pop("encode+mask") - parts["encode"]
        parts["step"] = 1e6 * (busy[mode] - calls * hook) / steps  # less what the wrappers themselves cost
        out[mode] = parts
    return out


def parts_rows(seconds: float, seed: int = 0) -> list[list[str]]:
    """Per env: the step split into rules, views, text, encoding and masks, in both modes."""
    rows = []
    for env_id in teamenvs.list_envs():
        parts = step_parts(env_id, seconds, seed)
        text, numeric = parts[False], parts[True]
        rest = max(text["step"] - text["rules"] - text["views"] - text["text"], 0.0)
        rows.append(["step parts", env_id, f"{text['step'] / (text['rules'] + text['views']):.1f}", "x bound on numeric vs text",
                     f"text step {text['step']:.0f} us: rules {text['rules']:.0f}, views {text['views']:.0f}, "
                     f"rendering {text['text']:.0f}; numeric step {numeric['step']:.0f} us: rules {numeric['rules']:.0f}, "
                     f"views {numeric['views']:.0f}, encoding {numeric['encode']:.0f}, masks {numeric['mask']:.0f}; "
                     f"bound without views {text['step'] / text['rules']:.1f}x; the rest of the text step {rest:.0f} us "
                     f"(parsing, what each agent may do now, messages, infos: the shared step, which numeric actions "
                     f"go through as commands), and with it kept and views, text, encoding and masks all free: "
                     f"at most {text['step'] / (text['rules'] + rest):.1f}x"])
    return rows


def rl_rows(seconds: float, seed: int = 0) -> list[list[str]]:
    """Numeric (vector + discrete) against text env steps/s per env, and AsyncVectorEnv against SyncVectorEnv."""
    return numeric_rows(seconds, seed) + vector_env_rows(seconds, seed)


NUMERIC_TEAMS = [("day_trader_v0", "group_size_9", "day_trader_v0 (9 traders)")]  # (env id, preset, label): larger teams


def numeric_rows(seconds: float, seed: int = 0) -> list[list[str]]:
    """Numeric (vector + discrete) against text env steps/s per env: the multi-agent env, the single-agent view and
    the step's parts."""
    rows = []
    # every env's default config, and DayTrader's 9 traders, whose vectors each read every trader's last round
    for env_id, preset, label in [(env_id, None, env_id) for env_id in teamenvs.list_envs()] + NUMERIC_TEAMS:
        steps, in_numeric, in_text = lockstep(teamenvs.make(env_id, preset=preset, obs_type="vector", action_type="discrete"),
                                              teamenvs.make(env_id, preset=preset), seconds, seed)
        numeric_rate, text_rate = steps / in_numeric, steps / in_text
        rows.append(["numeric vs text", f"{label}, random valid actions", f"{numeric_rate / text_rate:.2f}", "x text env steps/s",
                     f"numeric {numeric_rate:,.0f} env steps/s, text {text_rate:,.0f} (env.step only; the same {steps // 2:,} steps "
                     f"played in lockstep, then replayed twice by each env alone, in alternating blocks)"])
    return rows + single_agent_rows(seconds, seed) + parts_rows(seconds, seed)


SINGLE_AGENT_STEPS_AT_LEAST = 32  # timed learner steps `single_agent_lockstep` takes however short `seconds`


def single_agent_lockstep(env_id: str, seconds: float, seed: int = 0, at_least: int = SINGLE_AGENT_STEPS_AT_LEAST) -> dict[str, float]:
    """Learner steps/s of the single-agent view (first agent, scripted teammates) in three modes playing the same
    episodes: `numeric` (vector, discrete: the learner alone encoded and masked, `learners=(agent,)`, its observation
    built once per learner step and none for the baseline teammates), `every` (the same interface, but every agent's
    observation built in every env step, as the view did before) and `text`; the text view is sent the command each
    numeric action stands for. `env.step` only, about `seconds` and at least `at_least` learner steps after one untimed
    step (each view's first step fills its caches: in a quick run under load, the resets took most of the time once,
    and a ratio from one or two steps read 0.00); raises if the three play apart."""
    gym_id = teamenvs.spec(env_id).gym_id
    envs = {"numeric": gymnasium.make(gym_id, obs_type="vector", action_type="discrete").unwrapped,
            "every": gymnasium.make(gym_id, obs_type="vector", action_type="discrete").unwrapped,
            "text": gymnasium.make(gym_id).unwrapped}
    envs["every"].team_env = teamenvs.make(env_id, obs_type="vector", action_type="discrete")
    envs["every"].defer_skipped_observations = False
    rng = np.random.default_rng(seed)
    spent = dict.fromkeys(envs, 0.0)
    steps, episode, infos, ended, warm = 0, seed, {}, True, False
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or steps < at_least:
        if ended:
            infos = {k: env.reset(seed=episode)[1] for k, env in envs.items()}
            episode += 1
        index = int(masked_actions(infos["numeric"]["action_mask"][None], rng)[0])
        actions = {"numeric": index, "every": index, "text": envs["numeric"].team_env.action_text(envs["numeric"].agent, index)}
        results = {}
        for kind in (list(envs) if steps % 2 else list(envs)[::-1]):  # the order alternates
            t0 = time.perf_counter()
            results[kind] = envs[kind].step(actions[kind])
            if warm:
                spent[kind] += time.perf_counter() - t0
        infos = {k: r[4] for k, r in results.items()}
        outcomes = {k: (r[1], r[2], r[3]) for k, r in results.items()}
        if len(set(outcomes.values())) != 1:
            raise RuntimeError(f"{env_id}: the single-agent views played different steps from the same commands")
        ended = outcomes["text"][1] or outcomes["text"][2]
        steps += warm
        warm = True
    return {k: steps / t for k, t in spent.items()} | {"steps": steps}


def single_agent_rows(seconds: float, seed: int = 0) -> list[list[str]]:
    """Per env: the single-agent view's numeric mode over its text mode (`single_agent_lockstep`)."""
    rows = []
    for env_id in teamenvs.list_envs():
        rate = single_agent_lockstep(env_id, seconds / 2, seed)
        rows.append(["numeric vs text", f"{env_id}, single-agent view (scripted teammates)", f"{rate['numeric'] / rate['text']:.2f}",
                     "x text learner steps/s", f"numeric {rate['numeric']:,.0f} learner steps/s, text {rate['text']:,.0f}; every agent's "
                     f"observation built every env step {rate['every']:,.0f} (the learner's alone, once per learner step: "
                     f"{rate['numeric'] / rate['every']:.2f}x); the same "
                     f"{rate['steps']:,} learner steps in lockstep"])
    return rows


class BusyEnv(gymnasium.Env):
    """A Gymnasium env whose every step is `cost` seconds of busy CPU and nothing else: the reference for what
    `AsyncVectorEnv` can gain on this machine whatever the env (a tiny observation, an empty info)."""

    observation_space = gymnasium.spaces.Box(0, 1, (16,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, cost: float) -> None:
        self.cost = cost

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        return np.zeros(16, np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        end = time.perf_counter() + self.cost
        while time.perf_counter() < end:
            pass
        return np.zeros(16, np.float32), 0.0, False, False, {}


def async_over_sync(make: Any, seconds: float, seed: int = 0, masked: bool = True) -> dict[str, float]:
    """Learner steps/s of 2 envs from `make` in `AsyncVectorEnv` (2 processes; `pinned`: each worker pinned to one
    CPU and frozen for the garbage collector, as `teamenvs.wrappers.make_async` does; `async`: neither) and in `SyncVectorEnv`, in 4 alternating rounds; with `masked`,
    actions are drawn from each env's `info["action_mask"]`, else action 0."""
    vecs = {"async": gymnasium.vector.AsyncVectorEnv([make, make]), "sync": gymnasium.vector.SyncVectorEnv([make, make])}
    if worker_cpus() is not None:
        vecs["pinned"] = gymnasium.vector.AsyncVectorEnv(worker_fns(make, 2))
    rng = np.random.default_rng(seed)
    totals = {k: [0, 0.0] for k in vecs}
    try:
        infos = {k: v.reset(seed=[seed, seed + 1])[1] for k, v in vecs.items()}
        for _ in range(4):
            for kind, vec in vecs.items():
                start = time.perf_counter()
                while time.perf_counter() - start < seconds / 4:
                    actions = masked_actions(infos[kind]["action_mask"], rng) if masked else np.zeros(2, dtype=np.int64)
                    _, _, _, _, infos[kind] = vec.step(actions)
                    totals[kind][0] += 2
                totals[kind][1] += time.perf_counter() - start
    finally:
        for vec in vecs.values():
            vec.close()
    return {k: steps / wall for k, (steps, wall) in totals.items()}


def masked_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row of `masks`, uniform over the row's masked-in actions, for all rows at once (the learner's
    side of a vector env measurement, kept small beside the envs' steps)."""
    return (rng.random(masks.shape) * (masks > 0)).argmax(axis=1)


def workers_over_sync(make: Any, num_envs: int, workers: int, seconds: float, seed: int = 0, masked: bool = True) -> dict[str, float]:
    """Learner steps/s of `num_envs` envs from `make` in `ProcessVectorEnv` with `workers` processes (`pinned`: each
    worker pinned to one CPU, as `make_async(..., workers=...)` builds it; `unpinned`) and in `SyncVectorEnv` (one
    process), in 4 alternating rounds; actions as in `async_over_sync`."""
    vecs = {"sync": gymnasium.vector.SyncVectorEnv([make] * num_envs),
            "pinned": ProcessVectorEnv([make] * num_envs, workers),
            "unpinned": ProcessVectorEnv([make] * num_envs, workers, pin_workers=False)}
    rng = np.random.default_rng(seed)
    totals = {k: [0, 0.0] for k in vecs}
    try:
        infos = {k: v.reset(seed=seed)[1] for k, v in vecs.items()}
        for _ in range(4):
            for kind, vec in vecs.items():
                start = time.perf_counter()
                while time.perf_counter() - start < seconds / 4:
                    actions = masked_actions(infos[kind]["action_mask"], rng) if masked else np.zeros(num_envs, dtype=np.int64)
                    _, _, _, _, infos[kind] = vec.step(actions)
                    totals[kind][0] += num_envs
                totals[kind][1] += time.perf_counter() - start
    finally:
        for vec in vecs.values():
            vec.close()
    return {k: steps / wall for k, (steps, wall) in totals.items()}


def _workers_row(setting: str, rate: Mapping[str, float], num_envs: int, workers: int) -> list[str]:
    pinning = f"workers pinned {rate['pinned']:,.0f} steps/s, unpinned {rate['unpinned']:,.0f}" if worker_cpus() else \
        f"{rate['pinned']:,.0f} steps/s (workers cannot be pinned here)"
    return ["vector env", setting, f"{rate['pinned'] / rate['sync']:.2f}", "x SyncVectorEnv steps/s",
            f"ProcessVectorEnv ({num_envs} envs in {workers} processes) {pinning}; SyncVectorEnv of {num_envs} {rate['sync']:,.0f} (the same run)"]


def _pinned_row(setting: str, rate: Mapping[str, float]) -> list[list[str]]:
    """The pinned workers' row of a vector measurement (none where workers cannot be pinned)."""
    if "pinned" not in rate:
        return []
    return [["vector env", setting, f"{rate['pinned'] / rate['sync']:.2f}", "x SyncVectorEnv steps/s",
             f"AsyncVectorEnv with each worker pinned to one CPU (and frozen, as make_async does) {rate['pinned']:,.0f} steps/s, unpinned {rate['async']:,.0f}, "
             f"SyncVectorEnv {rate['sync']:,.0f} (the same run)"]]


LEARNER_STEPS_AT_LEAST = 64  # timed learner steps `learner_step_times` gives however short `seconds` (the bounds draw 8 a vector step)


def learner_step_times(make: Any, seconds: float, seed: int = 0, at_least: int = LEARNER_STEPS_AT_LEAST) -> np.ndarray:
    """Seconds of each learner step of one env from `make` (masked random actions, resets not timed), for about
    `seconds` and at least `at_least` steps (a step that stalled for 0.69 s on a loaded machine once ended a quick run
    after 6 steps, too few for a bound)."""
    env = make()
    rng = np.random.default_rng(seed)
    times: list[float] = []
    try:
        _, info = env.reset(seed=seed)
        spent = 0.0
        while spent < seconds or len(times) < at_least:
            action = int(masked_actions(info["action_mask"][None], rng)[0])
            start = time.perf_counter()
            _, _, terminated, truncated, info = env.step(action)
            took = time.perf_counter() - start
            times.append(took)
            spent += took
            if terminated or truncated:
                _, info = env.reset()
    finally:
        env.close()
    return np.asarray(times)


def lockstep_bound(times: np.ndarray, num_envs: int, workers: int, seed: int = 0, exchange: float = 0.0) -> float:
    """The most a vector env stepping `num_envs` envs in lockstep in `workers` processes can gain over stepping them
    in one process: every vector step waits for its slowest worker, so the bound is E[sum of the step times] /
    (E[max over workers of a worker's sum] + `exchange`, the seconds a vector step spends passing actions and results
    between processes: 0, free, by default), estimated from `times` (learner steps timed one by one) drawn into
    vector steps at random."""
    rng = np.random.default_rng(seed)
    per = num_envs // workers
    usable = len(times) // num_envs * num_envs
    if usable == 0:
        raise ValueError(f"need at least {num_envs} timed steps, got {len(times)}")
    steps = rng.permutation(times)[:usable].reshape(-1, workers, per).sum(axis=2)
    return float(steps.sum(axis=1).mean() / (steps.max(axis=1).mean() + exchange))


def exchange_cost(step: float, ratio: float) -> float:
    """Seconds a 2-env `AsyncVectorEnv` step spends beyond its slower worker's step, from a reference env whose steps
    all take `step` seconds and the measured async/sync `ratio`: sync takes 2 x step, async step + exchange."""
    return 2 * step / ratio - step


def vector_env_rows(seconds: float, seed: int = 0, env_ids: Sequence[str] = ("search_rescue_v0", "day_trader_v0"),
                    busy_ms: Sequence[float] = (0.3, 1.0), batched: int = 8, many: int = 32,
                    cheapest: Sequence[str] = ("day_trader_v0",)) -> list[list[str]]:
    """`AsyncVectorEnv` (2 envs) and `ProcessVectorEnv` (`batched` envs in 2 workers) over `SyncVectorEnv` of as many
    envs, for the single-agent view of `env_ids`, with the most lockstep could gain for its learner steps; `many` envs
    in 2 workers for every registered env, and twice as many for the `cheapest` learner steps; then for `BusyEnv`s of
    `busy_ms` per step: what the vector machinery gains on this machine for steps of that cost, and what it spends per
    vector step exchanging actions and results (measured first, for the bounds)."""
    references, exchange, pinned_exchange = [], 0.0, None
    for ms in busy_ms:
        rate = async_over_sync(lambda ms=ms: BusyEnv(ms / 1000), seconds / 2, seed, masked=False)
        exchange = exchange_cost(ms / 1000, rate["async"] / rate["sync"])  # the last (longest) reference is kept
        # and the pinned workers' (a bound for the pinned rows must not take the unpinned exchange)
        pinned_exchange = exchange_cost(ms / 1000, rate["pinned"] / rate["sync"]) if "pinned" in rate else None
        references.append(["vector env", f"reference: an env whose steps are {ms:g} ms of busy CPU, 2 envs", f"{rate['async'] / rate['sync']:.2f}",
                           "x SyncVectorEnv steps/s", f"AsyncVectorEnv (2 processes) {rate['async']:,.0f} steps/s, SyncVectorEnv "
                           f"{rate['sync']:,.0f}: Gymnasium's vector machinery alone on this machine; exchange between processes "
                           f"{1e3 * exchange:.2f} ms a vector step (2 x step / ratio - step)"])
        references += _pinned_row(f"reference: an env whose steps are {ms:g} ms of busy CPU, 2 envs, workers pinned", rate)
        rate = workers_over_sync(lambda ms=ms: BusyEnv(ms / 1000), batched, 2, seconds / 2, seed, masked=False)
        references.append(_workers_row(f"reference: an env whose steps are {ms:g} ms of busy CPU, {batched} envs in 2 worker processes",
                                       rate, batched, 2))
    rows = []
    for env_id in env_ids:
        gym_id = teamenvs.spec(env_id).gym_id
        rate = async_over_sync(lambda: gymnasium.make(gym_id, obs_type="vector", action_type="discrete"), seconds, seed)
        rows.append(["vector env", f"{env_id} single-agent view, 2 envs", f"{rate['async'] / rate['sync']:.2f}",
                     "x SyncVectorEnv steps/s", f"AsyncVectorEnv (2 processes) {rate['async']:,.0f} learner steps/s, "
                     f"SyncVectorEnv {rate['sync']:,.0f} (a learner step {1e3 / rate['sync']:.2f} ms); {os.cpu_count()} CPU cores"])
        rows += _pinned_row(f"{env_id} single-agent view, 2 envs, workers pinned (make_async)", rate)
        rate = workers_over_sync(lambda: gymnasium.make(gym_id, obs_type="vector", action_type="discrete"), batched, 2, seconds, seed)
        rows.append(_workers_row(f"{env_id} single-agent view, {batched} envs in 2 worker processes (make_async workers=2)", rate, batched, 2))
        times = learner_step_times(lambda: gymnasium.make(gym_id, obs_type="vector", action_type="discrete"), seconds / 2, seed)
        with_exchange = (f"; with the exchange measured by the {busy_ms[-1]:g} ms reference ({1e3 * exchange:.2f} ms a vector "
                         f"step): at most {lockstep_bound(times, 2, 2, seed, exchange):.2f}x" if busy_ms else "")
        if busy_ms and pinned_exchange is not None:
            with_exchange += (f", with workers pinned ({1e3 * pinned_exchange:.2f} ms): at most "
                              f"{lockstep_bound(times, 2, 2, seed, pinned_exchange):.2f}x")
        rows.append(["vector env", f"{env_id} single-agent view, 2 envs: the lockstep bound", f"{lockstep_bound(times, 2, 2, seed):.2f}",
                     "x SyncVectorEnv steps/s at most", f"with exchange between processes free, as each vector step waits for "
                     f"its slower worker{with_exchange}; {batched} envs in 2 workers: at most {lockstep_bound(times, batched, 2, seed):.2f}x "
                     f"(exchange free); from {len(times):,} learner steps timed one by one (mean {1e3 * times.mean():.2f} ms, "
                     f"coefficient of variation {times.std() / times.mean():.2f})"])
    for env_id in teamenvs.list_envs():  # enough envs per worker that the exchange and the uneven steps average out
        gym_id = teamenvs.spec(env_id).gym_id
        rate = workers_over_sync(lambda: gymnasium.make(gym_id, obs_type="vector", action_type="discrete"), many, 2, seconds, seed)
        rows.append(_workers_row(f"{env_id} single-agent view, {many} envs in 2 worker processes (make_async workers=2)", rate, many, 2))
    # a DayTrader learner step is about 0.1 ms: with 16 envs a worker, what a vector step costs beyond half the synchronous
    # one (the exchange, 0.16-0.22 ms on this machine by the busy-CPU references, batching and pickling 16 envs' results,
    # the wait for the slower worker) was over a third of each worker's 1.4 ms share
    for env_id in cheapest:
        gym_id = teamenvs.spec(env_id).gym_id
        rate = workers_over_sync(lambda: gymnasium.make(gym_id, obs_type="vector", action_type="discrete"), 2 * many, 2, seconds, seed)
        rows.append(_workers_row(f"{env_id} single-agent view, {2 * many} envs in 2 worker processes (make_async workers=2)",
                                 rate, 2 * many, 2))
    return rows + references


def step_calls(records: Iterable[Mapping[str, Any]]) -> list[list[int]]:
    """Model calls of each acting agent, per step of an episode log (from the step entries' `usage`)."""
    return [
        [entry["usage"]["calls"] for entry in rec["agents"].values() if "usage" in entry]
        for rec in records
        if rec.get("type") == "step"
    ]


def critical_path_calls(records: Iterable[Mapping[str, Any]], concurrent: bool) -> int:
    """Calls on an episode's critical path: a step's slowest agent when agents call at once, else every call."""
    per_step = step_calls(records)
    return sum(max(calls, default=0) if concurrent else sum(calls) for calls in per_step)


def loop_efficiency(latency_ms: int, n_agents: int, steps: int) -> dict[str, Any]:
    """One DayTrader episode with LLM policies, concurrent and one call after another, against `teamenvs serve-llm`."""
    model = f"random-valid+latency={latency_ms}"

    async def run(url: str) -> dict[str, Any]:
        client = LLMClient(model, base_url=url, cache=False, concurrency=max(16, n_agents), max_tokens=64)
        try:
            return await time_one_episode(client, steps, n_agents=n_agents)
        finally:
            await client.aclose()

    with served() as url:
        return asyncio.run(run(url))


def efficiency_rows(latency_ms: int, n_agents: int, steps: int) -> list[list[str]]:
    """Episode wall time / ideal time for the concurrent loop and for calls one after another."""
    m = loop_efficiency(latency_ms, n_agents, steps)
    latency = latency_ms / 1000
    concurrent_ideal = critical_path_calls(m["result"].records, concurrent=True) * latency
    rows = []
    for label, wall, result, concurrent in (
        ("concurrent (agents.run_episode)", m["one"], m["result"], True),
        ("one call after another", m["seq"], m["seq_result"], False),
    ):
        path = critical_path_calls(result.records, concurrent)
        ideal = path * latency
        calls = result.usage["total"]["calls"]
        rows.append(
            [
                "step-loop efficiency",
                f"{label}: day_trader_v0, {n_agents} agents, {result.steps} steps, {latency_ms} ms/call",
                f"{wall / ideal:.2f}",
                "x ideal (episode time / ideal)",
                f"{wall:.2f} s / {ideal:.2f} s ideal ({path} of {calls} calls on the critical path x {latency_ms} ms)"
                + ("" if concurrent else f"; {wall / concurrent_ideal:.1f}x the concurrent ideal"),
            ]
        )
    return rows


def memory_rows(queries: int, seed: int = 0) -> list[list[str]]:
    """Median top-10 retrieval time at each of MEMORY_SIZES, one thread."""
    import faiss

    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        qs = synthetic_texts(queries, np.random.default_rng(seed + 1))
        rows = []
        for n in MEMORY_SIZES:
            stream, build_s = build(n, seed)
            latencies, scanned = retrieval_latencies(stream, qs, n)
            rows.append(
                [
                    "memory retrieval",
                    f"{n:,} memories, top-10",
                    f"{np.median(latencies):.2f}",
                    f"ms (median of {queries} queries)",
                    f"p95 {np.percentile(latencies, 95):.2f} ms; relevance computed for {100 * np.mean(scanned):.1f}% of memories; "
                    f"built in {build_s:.1f} s",
                ]
            )
        return rows
    finally:
        faiss.omp_set_num_threads(threads)


# ---------------------------------------------------------------------- the speed issue's other targets, in this one run
PEER_DILEMMAS = {  # TextArena dilemma -> (players, a random valid move), as ../shared/tools/peer_ratio.py plays them
    "IteratedPrisonersDilemma-v0": (2, lambda r: r.choice(["[Cooperate]", "[Defect]"])),
    "PublicGoodsGame-v0": (3, lambda r: f"[{r.randint(0, 20)}]"),
    "IteratedStagHunt-v0": (2, lambda r: r.choice(["[Stag]", "[Hare]"])),
}
PEER_ARMS = (("day_trader_v0", {}), ("day_trader_v0", {"preset": "group_size_9"}), ("commons_v0", {}),
             ("map_task_v0", {}), ("search_rescue_v0", {"preset": "easy"}), ("job_fair_v0", {}))
PEER_TARGETS = {"day_trader_v0": 1.0, "commons_v0": 1.0, "map_task_v0": 0.5, "job_fair_v0": 0.5, "search_rescue_v0": 0.25}


def _peer_episode(env_id: str, players: int, move: Any) -> Any:
    """One TextArena episode of random valid moves: (turns, seconds inside the env's calls)."""
    import random

    import textarena as ta

    def episode(seed: int) -> tuple[int, float]:
        rng, spent, turns = random.Random(seed), 0.0, 0
        t0 = time.perf_counter()
        env = ta.make(env_id)
        env.reset(num_players=players, seed=seed)
        spent += time.perf_counter() - t0
        done = False
        while not done:
            t0 = time.perf_counter()
            env.get_observation()
            spent += time.perf_counter() - t0
            action = move(rng)
            t0 = time.perf_counter()
            done, _ = env.step(action)
            spent += time.perf_counter() - t0
            turns += 1
        env.close()
        return turns, spent
    return episode


def _episodes(env: Any, choose: Any) -> Any:
    """An episode function of `env`: called with a seed, it plays one episode with the actions `choose(agents, infos,
    rng)` gives (the actions and how many agents needed one), and returns (those agent-steps, seconds inside reset and
    step)."""
    def episode(seed: int) -> tuple[int, float]:
        rng, spent, turns = np.random.default_rng(seed), 0.0, 0
        t0 = time.perf_counter()
        _, infos = env.reset(seed=seed)
        spent += time.perf_counter() - t0
        while env.agents:
            actions, asked = choose(env.agents, infos, rng)
            turns += asked
            t0 = time.perf_counter()
            _, _, _, _, infos = env.step(actions)
            spent += time.perf_counter() - t0
        return turns, spent
    return episode


def _random_valid(agents: Sequence[str], infos: Mapping[str, Any], rng: np.random.Generator) -> tuple[dict[str, Any], int]:
    """A random valid command (`ActionForm.sample` of a form drawn at random) for each agent that needs an action."""
    actions = {}
    for agent in agents:
        if infos[agent]["needs_action"]:
            forms = infos[agent]["valid_actions"]
            actions[agent] = forms[int(rng.integers(len(forms)))].sample(rng)
    return actions, len(actions)


def _masked_in(agents: Sequence[str], infos: Mapping[str, Any], rng: np.random.Generator) -> tuple[dict[str, Any], int]:
    """A uniformly drawn masked-in discrete action for every agent (the no-op for those that need none), all drawn in one
    call (the same draws as one call per agent, in the agents' order: the generator fills the rows one after another)."""
    choices = masked_actions(np.stack([infos[agent]["action_mask"] for agent in agents]), rng).tolist()
    return dict(zip(agents, choices)), sum(infos[agent]["needs_action"] for agent in agents)


def _numeric_episode(env_id: str, config: Mapping[str, Any]) -> Any:
    """One episode of the RL interface (vector observations, discrete actions), each agent taking a uniformly drawn
    masked-in action as the `numeric vs text` rows do: (agent-steps of agents that needed an action, seconds inside
    reset and step)."""
    return _episodes(teamenvs.make(env_id, obs_type="vector", action_type="discrete", **config), _masked_in)


def _teamenvs_episode(env_id: str, config: Mapping[str, Any]) -> Any:
    """One teamenvs episode of random valid actions (`ActionForm.sample`): (agent-steps, seconds inside reset and step)."""
    return _episodes(teamenvs.make(env_id, **config), _random_valid)


def peer_rows(seconds: float, rounds: int = 3) -> list[list[str]]:
    """Agent-steps/s of every teamenvs arm over TextArena's fastest social dilemma of the same round, rounds
    interleaved in a shuffled order (the method of ../shared/tools/peer_ratio.py); one row saying why when
    TextArena is not installed."""
    import random
    import statistics

    try:
        import textarena  # noqa: F401
    except ImportError as e:
        return [["peer ratio", "TextArena social dilemmas", "n/a", "not measured",
                 f"textarena does not import here ({type(e).__name__}); `pip install --no-deps textarena==0.7.4 && pip install nltk requests websockets rich python-dotenv` to measure it"]]
    peers: dict[str, Any] = {}
    for env_id, (players, move) in PEER_DILEMMAS.items():
        try:
            episode = _peer_episode(env_id, players, move)
            episode(0)
            peers[f"TextArena {env_id}"] = episode
        except Exception:  # noqa: BLE001 - a dilemma that does not run in this textarena is left out, as in peer_ratio.py
            continue
    if not peers:
        return [["peer ratio", "TextArena social dilemmas", "n/a", "not measured", "no TextArena dilemma ran here"]]
    arms = dict(peers)
    for env_id, config in PEER_ARMS:
        episode = _teamenvs_episode(env_id, config)
        episode(0)
        arms[f"{env_id}" + (f" ({config['preset']})" if config else "")] = episode
    rates: dict[str, list[float]] = {name: [] for name in arms}
    best: list[float] = []
    for r in range(rounds):
        order = list(arms)
        random.Random(r).shuffle(order)
        for name in order:
            turns, spent, k = 0, 0.0, 0
            while spent < seconds:
                t, s = arms[name](1000 * r + k)
                turns, spent, k = turns + t, spent + s, k + 1
            rates[name].append(turns / spent)
        best.append(max(rates[name][-1] for name in peers))
    rows = []
    for name, arm_rates in rates.items():
        if name in peers:
            continue
        ratios = [x / b for x, b in zip(arm_rates, best)]
        target = PEER_TARGETS[name.split(" ")[0]]
        rows.append(["peer ratio", f"{name}, random valid actions", f"{statistics.median(ratios):.2f}",
                     "x TextArena's fastest dilemma (agent-steps/s)",
                     f"{statistics.median(arm_rates):,.0f} agent-steps/s against {statistics.median(best):,.0f}; rounds "
                     f"{min(ratios):.2f}-{max(ratios):.2f}; target {target:g}x; every agent's observation rendered every step"])
    return rows


_ENGINE_DRIVER = """
import json, sys
import teamenvs
from teamenvs import compiled
from benchmarks.perf import _teamenvs_episode
seconds, seed = float(sys.argv[1]), int(sys.argv[2])
rates = {}
for env_id in json.loads(sys.argv[3]):
    episode = _teamenvs_episode(env_id, {})
    episode(10**6)  # the first episode's one-off costs (caches, a map) are not timed
    turns, spent, k = 0, 0.0, 0
    while spent < seconds:
        t, s = episode(seed + k)
        turns, spent, k = turns + t, spent + s, k + 1
    rates[env_id] = turns / spent
print(json.dumps({"rates": rates, "compiled": len(compiled.loaded())}))
"""


def _engine_arm(compiled_on: bool, seconds: float, seed: int, env_ids: Sequence[str]) -> dict[str, Any]:
    """`_ENGINE_DRIVER` in a new process with the compiled engine on or off (`TEAMENVS_COMPILED`)."""
    env = {**os.environ, "TEAMENVS_COMPILED": "1" if compiled_on else "0"}
    done = subprocess.run([sys.executable, "-c", _ENGINE_DRIVER, str(seconds), str(seed), json.dumps(list(env_ids))], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120 + 4 * seconds * len(env_ids))
    if done.returncode != 0:
        raise RuntimeError(f"the {'compiled' if compiled_on else 'source'} run failed: {done.stderr.strip()[-300:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compiled_rows(seconds: float, rounds: int) -> list[list[str]]:
    """Per env: agent-steps/s of random valid play (time inside reset and step, as the peer ratio) with the compiled
    engine (`teamenvs compile`) over the source, each engine in its own process, `rounds` rounds alternating which
    goes first, each arm playing episodes from the same first seed for the same time (the faster arm plays more of
    them); one row saying why where the engine is not built here."""
    from teamenvs import compiled

    env_ids = teamenvs.list_envs()
    state = compiled.status()
    if not state.current:
        return [["compiled engine", "every env", "n/a", "not measured",
                 _cell(f"no module is compiled in {state.root}: `pip install -e \".[compiled]\" && teamenvs compile`")]]
    totals: dict[bool, dict[str, list[float]]] = {True: {e: [] for e in env_ids}, False: {e: [] for e in env_ids}}
    loaded = 0
    try:
        for r in range(rounds):
            for on in ((True, False) if r % 2 == 0 else (False, True)):
                result = _engine_arm(on, seconds / rounds, 1000 * r, env_ids)
                for env_id, rate in result["rates"].items():
                    totals[on][env_id].append(rate)
                if on:
                    loaded = result["compiled"]
    except (RuntimeError, subprocess.SubprocessError, ValueError, KeyError) as e:
        return [["compiled engine", "every env", "n/a", "not measured", _cell(f"{type(e).__name__}: {e}")]]
    rows = []
    for env_id in env_ids:
        on, off = float(np.median(totals[True][env_id])), float(np.median(totals[False][env_id]))
        ratios = [a / b for a, b in zip(totals[True][env_id], totals[False][env_id])]
        rows.append(["compiled engine", f"{env_id}, random valid actions", f"{on / off:.2f}", "x the source (agent-steps/s)",
                     f"compiled {on:,.0f} agent-steps/s, source {off:,.0f} (medians of {rounds} round(s), rounds "
                     f"{min(ratios):.2f}-{max(ratios):.2f}); {loaded} modules loaded compiled ({len(state.current)} of "
                     f"{len(state.current) + len(state.missing)} built from the current source); episodes from the same first seed, for the same time"])
    return rows


def engine_peer_rows(seconds: float, rounds: int) -> list[list[str]]:
    """The peer ratio rows again, measured in a new process running the compiled engine (none where it is not built)."""
    from teamenvs import compiled

    if not compiled.status().current:
        return []
    rows = rows_in_fresh_process("peer_rows", seconds, rounds, env={"TEAMENVS_COMPILED": "1"})
    return [[row[0], row[1].replace(", random valid actions", ", random valid actions, compiled engine"), *row[2:]] for row in rows
            if "TextArena social dilemmas" not in row[1]]


SCALING = (("day_trader_v0", "traders", ({"n_agents": 3}, {"n_agents": 9}, {"n_agents": 30})),
           ("job_fair_v0", "agents", ({"scenario": "generated", "n_companies": 3, "n_seekers": 10},
                                      {"scenario": "generated", "n_companies": 9, "n_seekers": 27},
                                      {"scenario": "generated", "n_companies": 30, "n_seekers": 90})))


def scaling_rows(seconds: float) -> list[list[str]]:
    """Microseconds of `env.step` per agent-step at three team sizes; value: the largest over the smallest
    (1.0 for a cost per step linear in the number of agents)."""
    rows = []
    for env_id, unit, configs in SCALING:
        cost = {}
        for config in configs:
            env = teamenvs.make(env_id, **config)
            r = time_episodes(env, "scripted", seconds / len(configs))
            cost[len(env.possible_agents)] = 1e6 * r["step_time"] / r["agent_steps"]
        sizes = sorted(cost)
        rows.append(["cost per agent-step", f"{env_id}, {' / '.join(map(str, sizes))} {unit}, scripted",
                     f"{cost[sizes[-1]] / cost[sizes[0]]:.2f}", f"x the cost at {sizes[0]} {unit}",
                     "env.step per agent-step: " + ", ".join(f"{cost[n]:.0f} us at {n}" for n in sizes)
                     + "; target: linear in agents (about 1.0)"])
    return rows


def resident_mb() -> float | None:
    """This process's resident memory in MB (Linux: /proc/self/statm), None where that cannot be read."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def long_run_rows(seconds: float, env_id: str = "commons_v0", seed: int = 0) -> list[list[str]]:
    """One env playing random valid actions (free-text messages among them) for `seconds`: its resident memory after
    the first third and at the end (a cache without bound grows here; target: flat) and its env steps/s in the first
    and the last third (a growing cache also slows every garbage collection)."""
    from teamenvs.core.env import MAX_MEMO_TOTAL

    env = teamenvs.make(env_id)
    rng = np.random.default_rng(seed)
    marks: list[tuple[int, float, float | None]] = []  # (env steps, seconds in env.step, MB) at each third
    steps, spent, episodes = 0, 0.0, 0
    start = time.perf_counter()
    for third in (1, 2, 3):
        while True:  # at least one episode in each third, however long an episode takes
            _, infos = env.reset(seed=seed + episodes)
            episodes += 1
            while env.agents:
                actions = {a: infos[a]["valid_actions"][int(rng.integers(len(infos[a]["valid_actions"])))].sample(rng)
                           for a in env.agents if infos[a]["needs_action"]}
                t0 = time.perf_counter()
                _, _, _, _, infos = env.step(actions)
                spent += time.perf_counter() - t0
                steps += 1
            if time.perf_counter() - start >= seconds * third / 3:
                break
        gc.collect()
        marks.append((steps, spent, resident_mb()))
    (s1, t1, m1), _, (s3, t3, m3) = marks
    s2, t2 = marks[1][0], marks[1][1]
    held = sum(len(entry[3]) for entry in env._situations.values())
    rates = f"env steps/s {s1 / t1:,.0f} in the first third, {(s3 - s2) / (t3 - t2):,.0f} in the last"
    if m1 is None or m3 is None:
        return [["long run", f"{env_id}, random valid actions, one env for {seconds:.0f} s", "not measured",
                 "MB resident over the last two thirds", f"no /proc/self/statm on this system; {rates}"]]
    return [["long run", f"{env_id}, random valid actions, one env for {seconds:.0f} s", f"{m3 - m1:+.1f}",
             "MB resident over the last two thirds", f"{m1:.1f} MB after the first third, {m3:.1f} MB at the end; {rates}; "
             f"{episodes:,} episodes, {steps:,} env steps; the situation cache holds {held:,} memo entries (at most "
             f"{MAX_MEMO_TOTAL:,}); target: flat"]]


def rows_in_fresh_process(name: str, *args: Any, env: Mapping[str, str] | None = None) -> list[list[str]]:
    """The rows of `name(*args)`, a rows function of this module, measured in a new process of this interpreter (with
    `env` added to its environment), so that what the rows before left resident (the memory stream's 100,000
    memories, say) is not part of its figures: the long run's resident memory read 232 MB in the process of a full
    run, against 62.5 MB alone."""
    code = f"import json, sys; from benchmarks.perf import {name}; print(json.dumps({name}(*json.loads(sys.argv[1]))))"
    done = subprocess.run([sys.executable, "-c", code, json.dumps(args)], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300 + 4 * sum(a for a in args if isinstance(a, (int, float))))
    if done.returncode != 0:
        raise RuntimeError(f"{name} in a new process failed: {done.stderr.strip()[-300:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def generation_rows(seeds: int) -> list[list[str]]:
    """The map task's default map generation (median ms, target at most 20) and the search-and-rescue reset on a
    new 100x100 map over one on a new 30x30 map (medians, target at most 2x)."""
    from benchmarks.map_task import generation_times
    from benchmarks.search_rescue import reset_times
    from teamenvs.map_task.config import MapTaskConfig

    times, _ = generation_times(MapTaskConfig(), seeds)
    rows = [["map generation", "map_task_v0, default 20x20 map", f"{np.median(times):.1f}", f"ms (median of {seeds} maps)",
             f"max {max(times):.1f} ms; target at most 20 ms"]]
    # a reset takes about a millisecond: at least 21 of each, so that one scheduling hiccup on a busy machine cannot
    # move a median (a --quick run's 3 once read 1.00x where the ratio is 1.7-1.8x)
    resets = max(seeds, 21)
    medians = {side: float(np.median(reset_times(side, resets))) for side in (30, 100)}
    rows.append(["reset on a new map", "search_rescue_v0, 100x100 over 30x30", f"{medians[100] / medians[30]:.2f}",
                 "x the 30x30 reset (medians)", f"100x100 {medians[100]:.2f} ms, 30x30 {medians[30]:.2f} ms ({resets} seeds each); "
                 "target at most 2x"])
    return rows


def llm_client_rows(steps: int, rounds: int, sizes: Sequence[int] = (8, 64)) -> list[list[str]]:
    """The LLM loop against `teamenvs serve-llm` with no added latency (`benchmarks.llm_loop --speed`): the full stack
    over a bare asyncio HTTP client at each number of concurrent episodes (target at least 50%), synchronous `act()`
    over `aact()` in CPU per call (target at most 1.5x), and 16 episodes at once over one after another at 1 ms
    latency (target: faster, above 1.0x)."""
    from benchmarks.llm_loop import ms_text, concurrent_against_sequential, served_many, sync_against_async, throughput

    with served_many(1, own_cpus=True) as servers:
        measured = throughput(servers, sizes, steps, rounds, reference=False)
        sync = sync_against_async(servers[0].url, rounds=rounds, fresh_calls=1)
        many = concurrent_against_sequential(servers[0].url, steps=steps, rounds=rounds)
    rows = []
    for row in measured:
        bare, full = row["bare"], row["full"]
        rows.append(["LLM client", f"full stack over a bare HTTP client, {row['episodes']} concurrent episodes",
                     f"{row['ratio']:.2f}", "x the bare client's calls/s",
                     f"full {full['rate']:,.0f} calls/s, bare {bare['rate']:,.0f} ({row['calls']:,} calls, {row['in_flight']} in "
                     f"flight; medians of {rounds}); client CPU {ms_text(bare['cpu_ms'])} / {ms_text(full['cpu_ms'])} ms per call; "
                     "target at least 0.50"])
    rows.append(["LLM client", "synchronous act() over await aact(), CPU per call", f"{sync['ratio']:.2f}", "x aact's CPU per call",
                 f"act {sync['sync_cpu_ms']:.3f} ms, aact {sync['async_cpu_ms']:.3f} ms ({sync['calls']:,} calls each); target at most 1.5x"])
    rows.append(["LLM client", "16 episodes at once over one after another, 1 ms latency", f"{many['seq'] / many['par']:.2f}",
                 "x faster (wall time)", f"at once {many['par']:.3f} s, one after another {many['seq']:.3f} s ({many['calls']} calls; "
                 f"rounds {', '.join(f'{x:.2f}' for x in many['round_speedups'])}); target above 1.0x"])
    return rows


THEN = "02e278f"  # main when the speed issue was filed: the code its "today" figures were measured on
ROOT = Path(__file__).resolve().parents[1]
# run in each tree by its own interpreter process: that tree's teamenvs and benchmarks (the same
# `time_episodes` in both), a short warm-up, then one timed stretch of scripted episodes
_THEN_DRIVER = """
import json, sys
import teamenvs
from benchmarks.common import time_episodes
env = teamenvs.make("search_rescue_v0")
time_episodes(env, "scripted", 0.2, seed=10**6)
result = time_episodes(env, "scripted", float(sys.argv[1]), seed=int(sys.argv[2]))
print(json.dumps({**result, "package": teamenvs.__file__}))
"""


def extract_tree(ref: str, into: Path, root: Path = ROOT) -> str | None:
    """Extract the commit `ref` of the git checkout at `root` into `into`; None, or why it could not."""
    try:
        archive = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", ref], capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        return f"git archive did not run ({type(e).__name__})"
    if archive.returncode != 0:
        return f"git archive {ref} failed: {archive.stderr.decode(errors='replace').strip()[:200] or 'no output'}"
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return None


def timed_in_tree(tree: Path, seconds: float, seed: int, compiled_on: bool = False) -> dict[str, Any]:
    """`_THEN_DRIVER` run by this interpreter with `tree` first on the path, with the compiled engine on or off."""
    env = {**os.environ, "PYTHONPATH": str(tree), "TEAMENVS_COMPILED": "1" if compiled_on else "0"}
    done = subprocess.run([sys.executable, "-c", _THEN_DRIVER, str(seconds), str(seed)], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=120 + 4 * seconds)
    if done.returncode != 0:
        raise RuntimeError(f"the timing run in {tree} failed: {done.stderr.strip()[-300:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if not Path(result["package"]).resolve().is_relative_to(tree.resolve()):
        raise RuntimeError(f"the timing run in {tree} imported teamenvs from {result['package']}")
    return result


def _cell(text: str) -> str:
    """Outside text (an error message) made safe for one cell of the printed table."""
    return printable(text, keep_newlines=False).replace("|", "/")[:400]


def then_rows(seconds: float, rounds: int, ref: str = THEN) -> list[list[str]]:
    """The scripted search-and-rescue team's env steps/s with this code over the code the speed issue measured
    (`ref`), each in its own process, rounds alternating which goes first (target at least 4x)."""
    setting = f"scripted search and rescue now over then ({ref}, when the speed issue was filed)"
    with tempfile.TemporaryDirectory() as scratch:
        then = Path(scratch) / "then"
        why = extract_tree(ref, then)
        if why is not None:
            return [["scripted search and rescue", setting, "n/a", "not measured", _cell(f"{why}; run it in a git checkout of teamenvs")]]
        arms = {"now": (ROOT, False), "then": (then, False)}
        if teamenvs.compiled.status().current:
            arms["now, compiled"] = (ROOT, True)
        totals = {name: {"steps": 0, "wall": 0.0, "step_time": 0.0, "episodes": 0} for name in arms}
        try:
            for r in range(rounds):
                for name in (list(arms) if r % 2 == 0 else list(reversed(arms))):
                    result = timed_in_tree(arms[name][0], seconds / rounds, seed=1000 * r, compiled_on=arms[name][1])
                    for key in totals[name]:
                        totals[name][key] += result[key]
        except (RuntimeError, subprocess.SubprocessError, ValueError, KeyError) as e:  # the rest of the table still prints
            return [["scripted search and rescue", setting, "n/a", "not measured", _cell(f"{type(e).__name__}: {e}")]]
    rate = {name: t["steps"] / t["wall"] for name, t in totals.items()}
    alone = {name: t["steps"] / t["step_time"] for name, t in totals.items()}
    length = {name: t["steps"] / max(t["episodes"], 1) for name, t in totals.items()}
    rows = [["scripted search and rescue", setting, f"{rate['now'] / rate['then']:.2f}", "x then (env steps/s, full loop)",
             f"now {rate['now']:,.0f} env steps/s, then {rate['then']:,.0f}; env.step alone {alone['now']:,.0f} against "
             f"{alone['then']:,.0f} ({alone['now'] / alone['then']:.2f}x); {rounds} round(s), episodes from the same first seed for the same time each (episodes of "
             f"{length['now']:.0f} and {length['then']:.0f} steps on average: the team's play has changed since); target at least 4x"]]
    if "now, compiled" in rate:
        rows.append(["scripted search and rescue", setting.replace("now over then", "now, compiled engine, over then"),
                     f"{rate['now, compiled'] / rate['then']:.2f}", "x then (env steps/s, full loop)",
                     f"now with the compiled engine {rate['now, compiled']:,.0f} env steps/s, then {rate['then']:,.0f}; env.step alone "
                     f"{alone['now, compiled']:,.0f} ({alone['now, compiled'] / alone['then']:.2f}x); the same rounds and seeds as the row "
                     "above; target at least 4x"])
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    start = time.perf_counter()
    print(f"Machine: {machine()}")
    print(f"Engine: {teamenvs.compiled.engine()} (the compiled engine's own rows run both engines in new processes)")
    print(f"Command: {shlex.join(['python', '-m', 'benchmarks.perf', *argv])}\n")
    # the rows that compare two ways of doing the same work (with and without a log, numeric and text, processes and
    # one process) run in new processes: in this one, what the rows before left resident made the garbage collector's
    # walks longer, and the way that allocates more paid more (the job fair's numeric / text read 0.48 here, 0.63-0.66
    # alone; 16 LLM episodes at once over one after another 0.70 here, 1.17-1.19 alone)
    rows = env_rows(args.seconds) + rows_in_fresh_process("recorder_rows", args.seconds)
    rows += rows_in_fresh_process("numeric_rows", args.seconds) + rows_in_fresh_process("vector_env_rows", args.seconds)
    rows += efficiency_rows(args.latency_ms, args.agents, args.steps)
    rows += memory_rows(args.queries)
    rows += peer_rows(args.seconds / 10, rounds=args.rounds) + engine_peer_rows(args.seconds / 10, args.rounds)
    rows += compiled_rows(args.seconds, args.rounds) + scaling_rows(args.seconds)
    rows += generation_rows(args.seeds) + rows_in_fresh_process("long_run_rows", 4 * args.seconds)
    rows += rows_in_fresh_process("llm_client_rows", args.steps, args.rounds)
    rows += then_rows(args.seconds, args.rounds)
    table(HEADER, rows, align=["---", "---", "---:", "---", "---"])
    print(f"\nTotal {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
