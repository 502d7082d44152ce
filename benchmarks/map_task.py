"""Map Task (`map_task_v0`) benchmarks: CollabSim Table 5 layout, accuracy by mismatch level, speed, map generation.

Prints one markdown table per section to stdout. Every episode runs through the standard
step loop (`agents.loop.run_episode`, no log files) with a pair of policies, named as for
`make_policies` in `env.possible_agents` order (guide, follower): `scripted` is the env's
default baseline for both roles, `scripted,random` a scripted guide with a random follower,
`random` a random pair. Episode seed and policy seed are both 0..n-1 for `--seeds n`; a
mean ± sd is over those seeds, with the population standard deviation (numpy `std`,
ddof=0). Metrics are those of `teamenvs.map_task.metrics` at the end of each episode.

1. `table5`: the layout of CollabSim's Table 5: the BASELINE, Limited Communication
   Bandwidth (messages of at most 6 words; longer ones refused) and Canvas Visibility (the guide sees the drawing)
   conditions (presets `baseline`, `communication_bandwidth`, `canvas_visibility`, all at
   the default mismatch 1: one kind of discrepancy, drawn per map pair) times the policy
   pairs. Route accuracy (F1 of drawn vs route cells, in %),
   communication efficiency (route progress per message: accuracy x route cells /
   messages, the scale of CollabSim's figures), revision rate (erase + undo +
   reset over all accepted drawing actions, in %), messages sent by both players; and,
   beyond the paper, the share of episodes whose drawing joins start to finish and the
   deviation (cells) of the drawing from the route.
2. `mismatch`: route accuracy, deviation, messages and completion at mismatch 0-3 (preset
   `mismatch_<m>`: m kinds of discrepancy out of one-map-only, renamed and moved, drawn per
   map pair) for each pair; then the same over the fixed library maps
   (`library_map=1..8`, stored data, so the figures stay comparable across releases even
   when the generator changes): one episode per map (seed 0), mean ± sd over the maps.
3. `speed`: episodes back to back for `--seconds` each on the default map (20x20, preset
   `baseline`), first with random then with scripted policies, in the plain synchronous loop
   (reset, every policy's `reset` with its briefing, then `act` for each agent asked and
   `env.step`; no recording). Env steps/s counts one per `env.step` call over the whole loop
   (policies, env and resets, which generate a new map each episode); the second figure is
   steps over the time inside `env.step` only, which applies the actions, builds every
   agent's view and renders its text observation. Target: >= 5,000 env steps/s.
4. `mapgen`: `generate_map_pair` on the default 20x20 map at mismatch 1 and 3, 10x10 with 8
   landmarks, 40x40 and 60x60 (12 landmarks), 50 generator seeds each after one untimed
   warm-up: median and max milliseconds, median route length. Target: default map under 20 ms.
   (The generator retries a layout whose route comes out too short, so some seeds take longer.)

    python -m benchmarks.map_task [--seeds 10] [--seconds 5] [--only table5|mismatch|speed|mapgen]

(`--only` may be given more than once.) Timings are single-process wall-clock figures on
whatever machine runs the script.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import teamenvs
from teamenvs.cli import COUNT, SECONDS
from agents.loop import EpisodeResult, run_episode
from agents.scripted import default_baseline, make_policies
from benchmarks.common import mean_sd, table, time_episodes
from teamenvs.map_task.config import MapTaskConfig
from teamenvs.map_task.library import library_size
from teamenvs.map_task.maps import KINDS, generate_map_pair

ENV_ID = "map_task_v0"
SECTIONS = ("table5", "mismatch", "speed", "mapgen")
PAIRS = ("scripted", "scripted,random", "random")
CONDITIONS = (
    ("baseline", "BASELINE"),
    ("communication_bandwidth", "Limited Communication Bandwidth"),
    ("canvas_visibility", "Canvas Visibility"),
)
MISMATCH = {0: "identical maps", 1: "1 kind of discrepancy", 2: "2 kinds", 3: "all 3 kinds"}


# ---------------------------------------------------------------------- helpers
def make_env(**config: Any) -> Any:
    return teamenvs.make(ENV_ID, **config)


def runs(seeds: Sequence[int], pair: str, **config: Any) -> list[EpisodeResult]:
    """One episode per seed (episode seed = policy seed) of `make_env(**config)` with the policy pair."""
    env = make_env(**config)
    return [run_episode(env, make_policies(env, pair, seed=seed), seed=seed) for seed in seeds]


def percent(values: Sequence[Any]) -> str:
    return f"{100 * np.mean(np.asarray(values, dtype=float)):.0f}"


def pair_label(pair: str) -> str:
    """'scripted guide + random follower' for 'scripted,random'."""
    names = [n.strip() for n in pair.split(",")] if "," in pair else [pair, pair]
    return f"{names[0]} guide + {names[1]} follower"


def policy_note() -> str:
    return f"`scripted` is the env's default baseline, `{default_baseline(ENV_ID)}`, in both roles."


def seeds_caption(n: int) -> str:
    return f"{n} seed{'s' if n > 1 else ''} (0..{n - 1})"


# ---------------------------------------------------------------------- 1. CollabSim Table 5
def section_table5(seeds: int) -> None:
    print(f"### CollabSim Table 5 layout: conditions x policy pairs ({seeds_caption(seeds)}, mean ± population sd; default mismatch 1)\n")
    rows: list[list[str]] = []
    for preset, title in CONDITIONS:
        rows.append([f"**{title}** (`{preset}`)", "", "", "", "", "", ""])
        for pair in PAIRS:
            m = [r.metrics for r in runs(range(seeds), pair, preset=preset)]
            rows.append(
                [
                    f"{pair_label(pair)} (`{pair}`)",
                    mean_sd([x["route_accuracy"] for x in m], scale=100),
                    mean_sd([x["communication_efficiency"] for x in m], digits=2),
                    mean_sd([x["revision_rate"] for x in m], scale=100),
                    mean_sd([x["messages"] for x in m]),
                    percent([x["completed"] for x in m]),
                    mean_sd([x["deviation"] for x in m], digits=2),
                ]
            )
    table(["Condition / policies", "Route Acc. (%)", "Comm. Efficiency", "Revision (%)", "# Msg.", "Completed (%)", "Deviation (cells)"], rows)
    print()
    print(
        "Mismatch 1 (the default): one kind of discrepancy (one-map-only, renamed or moved), drawn per map pair. "
        "Route Acc.: F1 of drawn vs route cells; "
        "Comm. Efficiency: route progress (accuracy x route cells) per message (at least one); "
        "Revision: erase + undo + reset over accepted drawing actions; # Msg.: messages sent by both players. "
        "Completed and Deviation are not in the paper. " + policy_note()
    )
    print()


# ---------------------------------------------------------------------- 2. mismatch levels
def mismatch_row(label: str, metrics: Sequence[dict[str, Any]]) -> list[str]:
    return [
        label,
        mean_sd([x["route_accuracy"] for x in metrics], scale=100),
        mean_sd([x["deviation"] for x in metrics], digits=2),
        mean_sd([x["messages"] for x in metrics]),
        percent([x["completed"] for x in metrics]),
    ]


def section_mismatch(seeds: int) -> None:
    header = ["Mismatch / policies", "Route Acc. (%)", "Deviation (cells)", "# Msg.", "Completed (%)"]
    print(f"### Route accuracy by mismatch level, generated maps ({seeds_caption(seeds)}, mean ± population sd)\n")
    rows: list[list[str]] = []
    for level in range(len(KINDS) + 1):
        rows.append([f"**Mismatch {level}** ({MISMATCH[level]}, `mismatch_{level}`)", "", "", "", ""])
        for pair in PAIRS:
            rows.append(mismatch_row(f"{pair_label(pair)} (`{pair}`)", [r.metrics for r in runs(range(seeds), pair, preset=f"mismatch_{level}")]))
    table(header, rows)
    print()
    print(policy_note())
    print()

    n_maps = library_size()
    print(f"### Library maps: route accuracy by mismatch level over the {n_maps} stored maps (one episode each, seed 0, mean ± population sd over maps)\n")
    rows = []
    for level in range(len(KINDS) + 1):
        rows.append([f"**Mismatch {level}** ({MISMATCH[level]})", "", "", "", ""])
        for pair in PAIRS:
            metrics = [runs([0], pair, library_map=k, mismatch=level)[0].metrics for k in range(1, n_maps + 1)]
            rows.append(mismatch_row(f"{pair_label(pair)} (`{pair}`)", metrics))
    table(header, rows)
    print()
    print(f"`library_map=1..{n_maps}`: stored map pairs, unchanged by generator changes, so these figures compare across releases. " + policy_note())
    print()


# ---------------------------------------------------------------------- 3. speed
def measure_speed(kind: str, seconds: float, seed: int = 0, **config: Any) -> dict[str, float]:
    """Episodes of `kind` policies back to back for about `seconds`: env steps/s in the loop and in env.step alone."""
    env = make_env(**config)
    gc.collect()
    r = time_episodes(env, kind, seconds, seed)
    return {**r, "loop": r["steps"] / r["wall"], "env_step": r["steps"] / r["step_time"]}


def section_speed(seconds: float) -> None:
    cfg = MapTaskConfig()
    print(f"### Speed: episodes back to back for {seconds:g} s each on the default map ({cfg.width}x{cfg.height}, preset `baseline`)\n")
    rows = []
    for kind in ("random", "scripted"):
        r = measure_speed(kind, seconds, preset="baseline")
        rows.append(
            [
                f"{pair_label(kind)} (`{kind}`)",
                f"{r['episodes']:,}",
                f"{r['steps']:,}",
                f"{r['steps'] / r['episodes']:.0f}",
                f"{r['loop']:,.0f}",
                f"{2 * r['loop']:,.0f}",
                f"{r['env_step']:,.0f}",
            ]
        )
    table(["Policies", "Episodes", "Env steps", "Steps/episode", "Env steps/s (loop)", "Agent-steps/s (loop)", "Env steps/s (env.step only)"], rows)
    print()
    print(
        "The loop figure covers resets (a new map each episode), policies and env.step; env.step applies the "
        "actions and renders the text observation of both agents every step. Target: >= 5,000 env steps/s. "
        + policy_note()
    )
    print()


# ---------------------------------------------------------------------- 4. map generation
def generation_times(cfg: MapTaskConfig, n_seeds: int) -> tuple[list[float], list[int]]:
    """Milliseconds of `generate_map_pair` for generator seeds 0..n_seeds-1 after one warm-up, and each route's cells."""
    gc.collect()  # garbage left by earlier work would otherwise be collected inside a timed call
    generate_map_pair(cfg, np.random.default_rng(10_000))  # warm-up
    times, lengths = [], []
    for seed in range(n_seeds):
        rng = np.random.default_rng(seed)
        t0 = time.perf_counter()
        pair = generate_map_pair(cfg, rng, seed)
        times.append((time.perf_counter() - t0) * 1000)
        lengths.append(len(pair.route))
    return times, lengths


def section_mapgen(n_seeds: int = 50) -> None:
    print(f"### Map generation: `generate_map_pair`, {n_seeds} generator seeds each\n")
    cases = (
        ("20x20 (default)", MapTaskConfig()),
        ("20x20, mismatch 3", MapTaskConfig(mismatch=3)),
        ("10x10, 8 landmarks", MapTaskConfig(width=10, height=10, n_landmarks=8)),
        ("40x40", MapTaskConfig(width=40, height=40)),
        ("60x60", MapTaskConfig(width=60, height=60)),
    )
    rows = []
    for label, cfg in cases:
        times, lengths = generation_times(cfg, n_seeds)
        rows.append(
            [
                label,
                str(cfg.n_landmarks),
                str(cfg.mismatch),
                f"{np.median(lengths):.0f}",
                f"{np.median(times):.2f}",
                f"{np.max(times):.2f}",
            ]
        )
    table(["Map", "Landmarks", "Mismatch", "Route cells (median)", "Median (ms)", "Max (ms)"], rows)
    print()
    print("Target: the default map under 20 ms. (The max is one call and moves with machine load; the median is the figure to compare.)")
    print()


# ---------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=COUNT, default=10, help="episodes per row in table5 and mismatch (seeds 0..n-1)")
    parser.add_argument("--seconds", type=SECONDS, default=5.0, help="seconds of episodes per policy in speed")
    parser.add_argument("--only", action="append", choices=SECTIONS, help="run only this section (repeatable)")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    chosen = args.only or list(SECTIONS)
    start = time.perf_counter()
    for section in SECTIONS:
        if section not in chosen:
            continue
        if section == "table5":
            section_table5(args.seeds)
        elif section == "mismatch":
            section_mismatch(args.seeds)
        elif section == "speed":
            section_speed(args.seconds)
        elif section == "mapgen":
            section_mapgen()
    print(f"_Total benchmark time: {time.perf_counter() - start:.1f} s._")


if __name__ == "__main__":
    main()
