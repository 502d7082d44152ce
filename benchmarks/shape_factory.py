"""Shape Factory (`shape_factory_v0`) benchmarks: CollabSim Table 2's layout with the scripted baselines, and speed.

Prints one markdown table per section to stdout. Every episode runs through the standard step
loop (`agents.run_episode`, no log files) with one policy kind for every agent (`cooperative`:
the default baseline; `self_sufficient`: never trades, makes what its orders need at the regular
cost; `random`: a uniformly random valid command). Episode seed and policy seed are both 0..n-1.

1. `paper`: Table 2's layout, conditions (`baseline`, `awareness_dashboard`,
   `communication_bandwidth`, `group_size_8`, `group_size_10`) x policies, with its four
   measures: `mean_wealth` (the outcome), `trade_accept_rate`, `order_fulfillment_rate`,
   `message_trade_ratio`; and `invalid_action_rate`. Mean ± sd over `--seeds` seeds (default 10;
   population sd). Beside them, the best wealth a team can average under the condition,
   `starting_money + orders_per_agent * (incentive - specialty_cost)`.
2. `speed`: env steps/s of the plain synchronous loop (policies, `env.step`, resets) with each
   policy kind in the baseline condition, and of `env.step` alone, over `--seconds` seconds
   (`benchmarks.common.time_episodes`); and the discrete/vector interface with masked-in random
   actions.

    python -m benchmarks.shape_factory [--seeds 10] [--seconds 3] [--only paper|speed]
"""

from __future__ import annotations

import argparse
import time
from typing import Sequence

import numpy as np

import teamenvs
from teamenvs.cli import COUNT, SECONDS
from agents import make_policies, run_episode
from benchmarks.common import mean_sd, table, time_episodes
from teamenvs.shape_factory.config import PRESETS, ShapeFactoryConfig

ENV = "shape_factory_v0"
CONDITIONS = ("baseline", "awareness_dashboard", "communication_bandwidth", "group_size_8", "group_size_10")
POLICIES = ("cooperative", "self_sufficient", "random")
METRICS = ("mean_wealth", "trade_accept_rate", "order_fulfillment_rate", "message_trade_ratio", "invalid_action_rate")


def ceiling(preset: str) -> int:
    cfg = ShapeFactoryConfig(**PRESETS[preset])
    return cfg.starting_money + cfg.orders_per_agent * (cfg.incentive - cfg.specialty_cost)


def paper(seeds: int) -> None:
    rows = []
    for preset in CONDITIONS:
        for kind in POLICIES:
            runs = []
            for seed in range(seeds):
                env = teamenvs.make(ENV, preset=preset)
                runs.append(run_episode(env, make_policies(env, kind, seed=seed), seed=seed).metrics)
            cells = [mean_sd([m[k] for m in runs], 1 if k in ("mean_wealth", "message_trade_ratio") else 2) for k in METRICS]
            rows.append([preset, kind, *cells, str(ceiling(preset))])
    table(["condition", "policy", *METRICS, "best mean wealth"], rows, ["---", "---"] + ["---:"] * (len(METRICS) + 1))


def speed(seconds: float) -> None:
    rows = []
    for kind in POLICIES:
        r = time_episodes(teamenvs.make(ENV), kind, seconds)
        rows.append([f"text, {kind}", f"{r['steps'] / r['wall']:,.0f}", f"{r['steps'] / r['step_time']:,.0f}", f"{r['episodes']}"])
    for preset in ("baseline", "group_size_10"):
        env = teamenvs.make(ENV, preset=preset, obs_type="vector", action_type="discrete")
        rng = np.random.default_rng(0)
        _, infos = env.reset(seed=0)
        steps, episodes, start = 0, 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            if not env.agents:
                episodes += 1
                _, infos = env.reset(seed=episodes)
            _, _, _, _, infos = env.step({a: int(rng.choice(np.flatnonzero(i["action_mask"]))) for a, i in infos.items()})
            steps += 1
        rate = f"{steps / (time.perf_counter() - start):,.0f}"
        rows.append([f"vector + discrete, random masked-in ({preset})", rate, rate, f"{episodes}"])
    table(["mode, policy (baseline unless named)", "env steps/s (full loop)", "env steps/s (env.step alone)", "episodes"], rows)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=COUNT, default=10)
    parser.add_argument("--seconds", type=SECONDS, default=3.0)
    parser.add_argument("--only", action="append", choices=("paper", "speed"))
    args = parser.parse_args(argv)
    sections = args.only or ["paper", "speed"]
    if "paper" in sections:
        print(f"## Table 2 layout ({args.seeds} seeds per cell, mean ± sd)\n")
        paper(args.seeds)
        print()
    if "speed" in sections:
        print("## Speed\n")
        speed(args.seconds)


if __name__ == "__main__":
    main()
