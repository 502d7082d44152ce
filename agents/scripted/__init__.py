"""Scripted baselines and `make_policies`: one policy per agent for any registered env.

Baselines live in one module per paradigm, each exposing `BASELINES` (env id -> name ->
policy class) and `DEFAULTS` (env id -> the name `kind="scripted"` picks). `random` is
available for every env.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Any, Mapping

import numpy as np

from agents.scripted.base import RandomPolicy, ScriptedPolicy

_MODULES = {
    "day_trader_v0": "agents.scripted.social_dilemma",
    "commons_v0": "agents.scripted.social_dilemma",
    "search_rescue_v0": "agents.scripted.search_rescue",
    "map_task_v0": "agents.scripted.map_task",
    "job_fair_v0": "agents.scripted.job_fair",
}


def baselines(env_id: str) -> dict[str, type[ScriptedPolicy]]:
    """Baseline policy classes for `env_id` by name (always including `random`)."""
    found: dict[str, type[ScriptedPolicy]] = {}
    if env_id in _MODULES:
        found.update(importlib.import_module(_MODULES[env_id]).BASELINES[env_id])
    found["random"] = RandomPolicy
    return found


def default_baseline(env_id: str) -> str:
    """The name `kind="scripted"` stands for in `env_id`."""
    if env_id not in _MODULES:
        return "random"
    return importlib.import_module(_MODULES[env_id]).DEFAULTS[env_id]


def agent_seed(seed: int | None, index: int) -> int | None:
    """An independent seed for agent number `index`, derived from the episode seed."""
    if seed is None:
        return None
    return int(np.random.SeedSequence([int(seed), index]).generate_state(1)[0])


def make_policies(env: Any, kind: str | Mapping[str, str] = "scripted", seed: int | None = None) -> dict[str, ScriptedPolicy]:
    """One scripted policy per agent of `env`.

    `kind` is "scripted" (the env's default baseline), "random", a baseline name, a
    comma-separated list of names (one per agent, in `env.possible_agents` order), or a
    mapping agent -> name (unnamed agents get the default baseline).
    """
    env_id = getattr(env.unwrapped, "env_id", "")
    available = baselines(env_id)
    agents = list(env.possible_agents)
    if isinstance(kind, Mapping):
        unknown = set(kind) - set(agents)
        if unknown:
            raise ValueError(f"unknown agents {sorted(unknown)} in policy mapping; agents are {agents}")
        names = [kind.get(a, "scripted") for a in agents]
    elif isinstance(kind, str) and "," in kind:
        names = [k.strip() for k in kind.split(",")]
        if len(names) != len(agents):
            raise ValueError(f"{len(names)} policy names given for {len(agents)} agents ({', '.join(agents)})")
    elif isinstance(kind, str):
        names = [kind] * len(agents)
    else:
        raise TypeError(f"kind must be a string or a mapping agent -> name, got {type(kind).__name__}")
    policies: dict[str, ScriptedPolicy] = {}
    for i, (agent, name) in enumerate(zip(agents, names)):
        resolved = default_baseline(env_id) if name == "scripted" else name
        if resolved not in available:
            close = difflib.get_close_matches(resolved, list(available), n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise ValueError(f"unknown baseline {name!r} for {env_id}.{hint} Available: scripted, {', '.join(available)}")
        policies[agent] = available[resolved](seed=agent_seed(seed, i))
    return policies


__all__ = ["RandomPolicy", "ScriptedPolicy", "agent_seed", "baselines", "default_baseline", "make_policies"]
