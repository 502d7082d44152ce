"""Helpers every benchmark script shares: markdown tables, mean ± sd, and the timed agent-env loop."""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from agents.scripted import make_policies


def mean_sd(values: Sequence[float], digits: int = 1, scale: float = 1.0, suffix: str = "") -> str:
    """'mean ± sd' with the population sd (ddof=0) and thousands separators."""
    a = np.asarray(values, dtype=float) * scale
    return f"{a.mean():,.{digits}f} ± {a.std():,.{digits}f}{suffix}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]], align: Sequence[str] | None = None) -> None:
    """Print a markdown table; by default the first column is left-aligned, the rest right-aligned."""
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(align) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def time_episodes(env: Any, kind: str, seconds: float, seed: int = 0) -> dict[str, float]:
    """Episodes of `kind` policies back to back for about `seconds` in the plain synchronous loop.

    Each policy is reset with its agent's briefing. Returns episodes, env steps, agent-steps
    (observations returned), wall time, and the time spent inside `env.step` alone.
    """
    base = env.unwrapped
    episodes = steps = agent_steps = 0
    step_time = 0.0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        policies = make_policies(env, kind, seed=seed + episodes)
        observations, infos = env.reset(seed=seed + episodes)
        for agent in env.agents:
            policies[agent].reset(agent, base.briefing(agent))
        while env.agents:
            actions = {a: policies[a].act(observations[a], infos[a]) for a in env.agents if infos[a]["needs_action"]}
            t0 = time.perf_counter()
            observations, _, _, _, infos = env.step(actions)
            step_time += time.perf_counter() - t0
            steps += 1
            agent_steps += len(observations)
        episodes += 1
    return {"episodes": episodes, "steps": steps, "agent_steps": agent_steps, "wall": time.perf_counter() - start, "step_time": step_time}
