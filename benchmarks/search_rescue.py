"""Search and rescue (`search_rescue_v0`) benchmarks: VIRT-LAB Table 3, the ASIST team, the ablations, speed, map generation, observation size.

Prints one markdown table per section to stdout. Every episode runs through the standard
step loop (`agents.loop.run_episode`, no log files) with one policy kind for every agent
(`--policy`: `scripted` is the env's default baseline, the role-aware `team`; `random`;
or a baseline name), episode seed
and policy seed both 0..n-1 for `--seeds n`. A mean ± sd is over those seeds, with the
population standard deviation (numpy `std`, ddof=0).

1. `table3`: the layout of VIRT-LAB's Table 3 (scalability): the easy (30x30, complexity 4),
   medium (40x40, complexity 6) and hard (50x50, complexity 8) maps, each with a fixed layout,
   times teams of 2 to 5 transporters (preset `<map>+transporters_<n>`: all victims stable, no
   rubble). Victims rescued, simulation duration in steps, action events (accepted actions other
   than messages and `wait`; a `go to` counts once however long the walk), action events per
   agent, communication events (conversations, as VIRT-LAB counts them: see
   `teamenvs.search_rescue.metrics.conversations`) and messages sent. A run that hits the step limit without
   rescuing everyone has lasted at least the limit: when every run of a row did, the
   duration reads like the paper's ">2,000"; when only some did, the mean ± sd counts
   them at the limit (a lower bound) and is marked with a dagger.
2. `teams`: the default ASIST Study 3 team (medic, engineer, transporter; 20% critical
   victims, rubble on 15% of the doorways) on each map: victims rescued (all, stable,
   critical), duration, action events, communication events, messages sent, share of rooms visited.
3. `ablations`: VIRT-LAB 4.3 / 5.3 on the easy map with 5 transporters (the paper's full-system
   row is its easy map with 5 agents, 730.67 steps): the full env, `no_communication`,
   `no_navigation` and `round_robin`; victims rescued, duration, share of rooms visited.
4. `speed`: one full episode (seed 0) on the hard map with 5 transporters and with the
   default team. The loop figure covers the whole `run_episode` call: reset, the policies,
   every `env.step` (which renders the text observation of every agent every step and
   records the step in memory) and the final metrics; env steps/s is episode steps over that
   wall time, agent-steps/s counts one per agent observation returned. `env.step` alone is
   timed separately with `time.perf_counter` around each call, and the policies' own time
   likewise. The map is generated (and cached) by one untimed `reset` first. The issue's
   target is >= 2,000 env steps/s.
5. `mapgen`: `generate_floor_plan` at 30x30, 50x50 and 100x100 (complexity 5, the default)
   and 100x100 at complexity 10, 50 generator seeds each: median and max milliseconds.
   Target: 50x50 under 50 ms. Then `env.reset` on a new map per episode at 30x30, 50x50 and
   100x100, each as a ratio to 30x30 in the same run (design target: 100x100 at most 2x).
6. `tokens`: over one episode (seed 0) on the hard map with the default team, the length of
   every observation a policy was asked to act on (`info[agent]["needs_action"]` true), in
   characters and estimated tokens (tiktoken `cl100k_base` when installed, else characters
   / 4; the caption says which): mean, median, 95th percentile, max. Target: a typical
   observation under 600 tokens on the hard map.

    python -m benchmarks.search_rescue [--policy scripted] [--seeds 3] [--only table3|teams|ablations|speed|mapgen|tokens]

(`--only` may be given more than once.) Timings are single-process wall-clock figures on
whatever machine runs the script.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import teamenvs
from teamenvs.cli import COUNT
from agents.loop import EpisodeResult, run_episode
from agents.scripted import default_baseline, make_policies
from benchmarks.common import mean_sd, table
from teamenvs.search_rescue.config import SearchRescueConfig
from teamenvs.search_rescue.world import generate_floor_plan

ENV_ID = "search_rescue_v0"
MAPS = ("easy", "medium", "hard")
TEAM_SIZES = (2, 3, 4, 5)
SECTIONS = ("table3", "teams", "ablations", "speed", "mapgen", "tokens")
ABLATIONS = (("full system", "easy+transporters_5"), ("no communication", "easy+transporters_5+no_communication"),
             ("no navigation", "easy+transporters_5+no_navigation"), ("no event scheduler (round robin)", "easy+transporters_5+round_robin"))
DAGGER = "†"


# ---------------------------------------------------------------------- helpers
def make_env(preset: str) -> Any:
    return teamenvs.make(ENV_ID, preset=preset)


def runs(preset: str, policy: str, seeds: int) -> tuple[list[EpisodeResult], SearchRescueConfig]:
    """Episodes of `preset` with seeds 0..seeds-1, `policy` for every agent; the results and the config."""
    env = make_env(preset)
    results = [run_episode(env, make_policies(env, policy, seed=seed), seed=seed) for seed in range(seeds)]
    return results, env.unwrapped.config


def duration(results: Sequence[EpisodeResult], max_steps: int) -> tuple[str, int]:
    """The duration cell and how many runs hit the step limit without completing."""
    timed_out = sum(1 for r in results if not r.metrics["completed"] and r.metrics["steps"] >= max_steps)
    if timed_out == len(results):
        return f">{max_steps:,}", timed_out
    cell = mean_sd([r.metrics["steps"] for r in results])
    return (f"{cell} {DAGGER}" if timed_out else cell), timed_out


def print_limit_note(cells: Sequence[str], notes: Sequence[str]) -> None:
    """The note under a table with a duration column, when some run hit the step limit."""
    parts = []
    if any(c.startswith(">") for c in cells):
        parts.append('Duration ">N": every run hit the N-step limit before rescuing all victims.')
    if notes:
        parts.append(f"{DAGGER} Some runs hit the limit and count at it (a lower bound): " + "; ".join(notes) + ".")
    if parts:
        print("\n" + " ".join(parts))


def policy_caption(policy: str) -> str:
    if policy == "scripted":
        return f"`scripted` (= `{default_baseline(ENV_ID)}` for {ENV_ID})"
    return f"`{policy}`"


class TimedPolicy:
    """Wraps a policy: times its calls and keeps the length of each observation it was asked on."""

    def __init__(self, inner: Any, clock: list[float], lengths: list[int] | None = None) -> None:
        self.inner, self.clock, self.lengths = inner, clock, lengths
        self.briefing_chars = 0

    @property
    def last_extras(self) -> Any:
        return getattr(self.inner, "last_extras", None)

    def reset(self, agent_id: str, briefing: str) -> None:
        self.briefing_chars = len(briefing)
        self.inner.reset(agent_id, briefing)

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        if self.lengths is not None:
            self.lengths.append(len(observation))
        t0 = time.perf_counter()
        try:
            return self.inner.act(observation, info)
        finally:
            self.clock[0] += time.perf_counter() - t0

    async def aact(self, observation: str, info: Mapping[str, Any]) -> str:
        if self.lengths is not None:
            self.lengths.append(len(observation))
        t0 = time.perf_counter()
        try:
            return await self.inner.aact(observation, info)
        finally:
            self.clock[0] += time.perf_counter() - t0


# ---------------------------------------------------------------------- 1. VIRT-LAB Table 3
def section_table3(policy: str, seeds: int) -> None:
    print(f"### VIRT-LAB Table 3 layout: teams of transporters (policy {policy_caption(policy)}, {seeds} seed{'s' if seeds > 1 else ''}, mean ± population sd)\n")
    rows: list[list[str]] = []
    notes: list[str] = []
    for name in MAPS:
        cfg = make_env(name).unwrapped.config
        rows.append([f"**{name.capitalize()} Map Complexity** ({cfg.width}x{cfg.height}, complexity {cfg.complexity})", "", "", "", "", "", ""])
        for n in TEAM_SIZES:
            results, cfg = runs(f"{name}+transporters_{n}", policy, seeds)
            dur, timed_out = duration(results, cfg.max_steps)
            if 0 < timed_out < len(results):
                notes.append(f"{name}, {n} agents: {timed_out} of {len(results)} runs")
            m = [r.metrics for r in results]
            rows.append(
                [
                    f"{n} Agents",
                    mean_sd([x["victims_rescued"] for x in m]),
                    dur,
                    mean_sd([x["action_events"] for x in m]),
                    mean_sd([x["action_events_per_agent"] for x in m]),
                    mean_sd([x["communication_events"] for x in m]),
                    mean_sd([x["messages_sent"] for x in m]),
                ]
            )
    table(
        ["Environment", "Victims Rescued", "Simulation Duration (Steps)", "Action Events", "Action Events per Agent", "Communication Events",
         "Messages Sent"],
        rows,
    )
    print_limit_note([row[2] for row in rows], notes)
    print()


# ---------------------------------------------------------------------- 2. default ASIST team
def section_teams(policy: str, seeds: int) -> None:
    print(f"### Default ASIST team (medic, engineer, transporter) (policy {policy_caption(policy)}, {seeds} seed{'s' if seeds > 1 else ''}, mean ± population sd)\n")
    rows = []
    notes = []
    for name in MAPS:
        results, cfg = runs(name, policy, seeds)
        dur, timed_out = duration(results, cfg.max_steps)
        if 0 < timed_out < len(results):
            notes.append(f"{name}: {timed_out} of {len(results)} runs")
        m = [r.metrics for r in results]
        n_critical = round(cfg.n_victims * cfg.critical_fraction)
        rows.append(
            [
                f"{name.capitalize()} ({cfg.width}x{cfg.height})",
                f"{mean_sd([x['victims_rescued'] for x in m])} / {cfg.n_victims}",
                f"{mean_sd([x['rescued_stable'] for x in m])} / {cfg.n_victims - n_critical}",
                f"{mean_sd([x['rescued_critical'] for x in m])} / {n_critical}",
                dur,
                mean_sd([x["action_events"] for x in m]),
                mean_sd([x["communication_events"] for x in m]),
                mean_sd([x["messages_sent"] for x in m]),
                mean_sd([x["coverage_rooms"] for x in m], scale=100, suffix=" %"),
            ]
        )
    table(
        ["Map", "Victims Rescued", "Stable", "Critical", "Duration (Steps)", "Action Events", "Communication Events", "Messages Sent",
         "Rooms Visited"],
        rows,
    )
    print_limit_note([row[4] for row in rows], notes)
    print()


# ---------------------------------------------------------------------- 3. VIRT-LAB ablations
def section_ablations(policy: str, seeds: int) -> None:
    print(f"### VIRT-LAB ablations (4.3 / 5.3), easy map, 5 transporters (policy {policy_caption(policy)}, {seeds} seed{'s' if seeds > 1 else ''}, mean ± population sd)\n")
    rows = []
    notes = []
    for label, preset in ABLATIONS:
        results, cfg = runs(preset, policy, seeds)
        dur, timed_out = duration(results, cfg.max_steps)
        if 0 < timed_out < len(results):
            notes.append(f"{label}: {timed_out} of {len(results)} runs")
        m = [r.metrics for r in results]
        rows.append([f"{label} (`{preset}`)", mean_sd([x["victims_rescued"] for x in m]), dur,
                     mean_sd([x["coverage_rooms"] for x in m], scale=100, suffix=" %"), mean_sd([x["communication_events"] for x in m])])
    table(["Condition", "Victims Rescued", "Duration (Steps)", "Rooms Visited", "Communication Events"], rows)
    print_limit_note([row[2] for row in rows], notes)
    print()


# ---------------------------------------------------------------------- 4. speed
def measure_speed(preset: str, policy: str, seed: int = 0) -> dict[str, Any]:
    env = make_env(preset)
    env.reset(seed=seed)  # untimed: generates and caches the fixed map
    policy_clock = [0.0]
    policies = {a: TimedPolicy(p, policy_clock) for a, p in make_policies(env, policy, seed=seed).items()}
    step_clock = [0.0]
    agent_steps = [0]
    inner_step: Callable = env.step

    def timed_step(actions: Mapping[str, Any]):
        t0 = time.perf_counter()
        out = inner_step(actions)
        step_clock[0] += time.perf_counter() - t0
        agent_steps[0] += len(out[0])
        return out

    env.step = timed_step  # run_episode calls env.step on this instance
    t0 = time.perf_counter()
    result = run_episode(env, policies, seed=seed)
    wall = time.perf_counter() - t0
    return {
        "agents": len(env.possible_agents),
        "steps": result.steps,
        "completed": result.metrics["completed"],
        "wall": wall,
        "agent_steps": agent_steps[0],
        "step_time": step_clock[0],
        "policy_time": policy_clock[0],
    }


def section_speed(policy: str) -> None:
    print(f"### Speed: one full episode on the hard map (50x50), seed 0, policy {policy_caption(policy)}\n")
    rows = []
    for preset, label in (("hard+transporters_5", "5 transporters"), ("hard", "medic, engineer, transporter")):
        r = measure_speed(preset, policy)
        rows.append(
            [
                f"`{preset}` ({label})",
                str(r["agents"]),
                f"{r['steps']:,}" + ("" if r["completed"] else " (limit)"),
                f"{r['wall']:.2f}",
                f"{r['steps'] / r['wall']:,.0f}",
                f"{r['agent_steps'] / r['wall']:,.0f}",
                f"{r['policy_time']:.2f}",
                f"{r['step_time']:.2f}",
                f"{r['steps'] / r['step_time']:,.0f}",
            ]
        )
    table(
        [
            "Team",
            "Agents",
            "Episode steps",
            "Wall time (s)",
            "Env steps/s",
            "Agent-steps/s",
            "Policy time (s)",
            "env.step time (s)",
            "Env steps/s (env.step only)",
        ],
        rows,
    )
    print()
    print(
        "Env steps/s and agent-steps/s are over the whole run_episode call (every observation rendered, "
        "policies, in-memory recording, metrics); the last column counts time inside env.step only. "
        "Target: >= 2,000 env steps/s."
    )
    print()


# ---------------------------------------------------------------------- 5. map generation
def reset_times(side: int, n_seeds: int) -> list[float]:
    """Milliseconds of `env.reset` on a new `side x side` map (default config otherwise) for seeds 0..n_seeds-1,
    after one warm-up reset."""
    env = teamenvs.make("search_rescue_v0", width=side, height=side)
    env.reset(seed=10_000)  # warm-up
    times = []
    for seed in range(n_seeds):
        t0 = time.perf_counter()
        env.reset(seed=seed)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def section_mapgen(n_seeds: int = 50) -> None:
    default = SearchRescueConfig().complexity
    print(f"### Map generation: `generate_floor_plan`, {n_seeds} generator seeds each\n")
    rows = []
    for side, complexity in ((30, default), (50, default), (100, default), (100, 10)):
        times, rooms = [], []
        generate_floor_plan(side, side, complexity, np.random.default_rng(10_000))  # warm-up
        for seed in range(n_seeds):
            rng = np.random.default_rng(seed)
            t0 = time.perf_counter()
            plan = generate_floor_plan(side, side, complexity, rng)
            times.append((time.perf_counter() - t0) * 1000)
            rooms.append(len(plan.rooms))
        rows.append(
            [
                f"{side}x{side}",
                str(complexity),
                f"{np.median(rooms):.0f}",
                f"{np.median(times):.2f}",
                f"{np.max(times):.2f}",
            ]
        )
    table(["Map", "Complexity", "Rooms (median)", "Median (ms)", "Max (ms)"], rows)
    print()
    print("Target: 50x50 under 50 ms.")
    print()
    print(f"### `env.reset` on a new map per episode (default config, `map_seed` None), {n_seeds} seeds each\n")
    medians = {side: float(np.median(reset_times(side, n_seeds))) for side in (30, 50, 100)}
    table(["Map", "Median reset (ms)", "Ratio to 30x30 (same run)"],
          [[f"{side}x{side}", f"{ms:.2f}", f"{ms / medians[30]:.2f}x"] for side, ms in medians.items()])
    print()
    print("Design target: a 100x100 reset at most 2x a 30x30 one. A new map's rooms, doorways and victims are drawn "
          "one by one, so the reset grows with the number of rooms (about 10x more at 100x100).")
    print()


# ---------------------------------------------------------------------- 6. observation size
def token_counter() -> tuple[Callable[[str], int] | None, str]:
    try:
        import tiktoken
    except ImportError:
        return None, "characters / 4 (tiktoken not installed)"
    enc = tiktoken.get_encoding("cl100k_base")
    return (lambda text: len(enc.encode(text))), "tiktoken cl100k_base"


def section_tokens(policy: str, preset: str = "hard", seed: int = 0) -> None:
    count, method = token_counter()
    env = make_env(preset)
    texts: list[str] = []

    class Keep(TimedPolicy):
        def act(self, observation: str, info: Mapping[str, Any]) -> str:
            texts.append(observation)
            return super().act(observation, info)

        async def aact(self, observation: str, info: Mapping[str, Any]) -> str:
            texts.append(observation)
            return await super().aact(observation, info)

    clock = [0.0]
    policies = {a: Keep(p, clock) for a, p in make_policies(env, policy, seed=seed).items()}
    result = run_episode(env, policies, seed=seed)
    chars = np.array([len(t) for t in texts], dtype=float)
    tokens = np.array([count(t) for t in texts], dtype=float) if count else chars / 4
    briefings = [p.briefing_chars for p in policies.values()]
    print(
        f"### Observation size: `{preset}` (default team), seed 0, policy {policy_caption(policy)}: "
        f"{len(texts):,} observations acted on over {result.steps:,} steps; tokens by {method}\n"
    )
    rows = []
    for label, a in (("Characters", chars), ("Tokens (est.)", tokens)):
        rows.append([label, f"{a.mean():,.0f}", f"{np.median(a):,.0f}", f"{np.percentile(a, 95):,.0f}", f"{a.max():,.0f}"])
    table(["Observation", "Mean", "Median", "95th percentile", "Max"], rows)
    print()
    print(
        f"Target: a typical observation under 600 tokens. (The briefing, given once per episode, "
        f"is {min(briefings):,}-{max(briefings):,} characters.)"
    )
    print()


# ---------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default="scripted", help="scripted (default baseline), random, or a baseline name")
    parser.add_argument("--seeds", type=COUNT, default=3, help="episodes per row in table3, teams and ablations (seeds 0..n-1)")
    parser.add_argument("--only", action="append", choices=SECTIONS, help="run only this section (repeatable)")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    try:
        make_policies(make_env("easy"), args.policy)  # fail early on an unknown policy name
    except ValueError as exc:
        parser.error(str(exc))
    chosen = args.only or list(SECTIONS)
    start = time.perf_counter()
    for section in SECTIONS:
        if section not in chosen:
            continue
        if section == "table3":
            section_table3(args.policy, args.seeds)
        elif section == "teams":
            section_teams(args.policy, args.seeds)
        elif section == "ablations":
            section_ablations(args.policy, args.seeds)
        elif section == "speed":
            section_speed(args.policy)
        elif section == "mapgen":
            section_mapgen()
        elif section == "tokens":
            section_tokens(args.policy)
    print(f"_Total benchmark time: {time.perf_counter() - start:.1f} s._")


if __name__ == "__main__":
    main()
