"""The environment registry: `make`, `list_envs`, and the Gymnasium single-agent ids.

Each env id (`day_trader_v0`) maps to its class; `make(env_id, **config)` builds it with a
validated config (`preset=` picks a named condition). Each id is also registered with
Gymnasium as `teamenvs/<Name>-v<k>` giving the single-agent view (one learner, scripted
teammates); `import teamenvs` registers them (or use `gymnasium.make("teamenvs:teamenvs/DayTrader-v0")`).
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass
from typing import Any

import gymnasium


@dataclass(frozen=True)
class EnvSpec:
    env_id: str
    entry_point: str  # "module:Class"
    gym_id: str
    summary: str

    def load(self) -> type:
        module, _, name = self.entry_point.partition(":")
        return getattr(importlib.import_module(module), name)


_REGISTRY: dict[str, EnvSpec] = {}


def register(env_id: str, entry_point: str, gym_name: str, summary: str) -> None:
    """Register a multi-agent env id and its Gymnasium single-agent counterpart."""
    version = env_id.rsplit("_v", 1)[1]
    gym_id = f"teamenvs/{gym_name}-v{version}"
    _REGISTRY[env_id] = EnvSpec(env_id, entry_point, gym_id, summary)
    if gym_id not in gymnasium.registry:
        gymnasium.register(id=gym_id, entry_point="teamenvs.wrappers.single_agent:SingleAgentEnv", kwargs={"env_id": env_id})


def spec(env_id: str) -> EnvSpec:
    """The spec of `env_id`, or a KeyError naming the nearest registered id."""
    if env_id not in _REGISTRY:
        close = difflib.get_close_matches(str(env_id), list(_REGISTRY), n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise KeyError(f"unknown env id {env_id!r}.{hint} Registered: {', '.join(_REGISTRY)}")
    return _REGISTRY[env_id]


def make(env_id: str, **config: Any):
    """Build the PettingZoo ParallelEnv registered as `env_id` with the given config and conditions."""
    return spec(env_id).load()(**config)


def list_envs() -> list[str]:
    """All registered env ids."""
    return list(_REGISTRY)


register(
    "day_trader_v0",
    "teamenvs.social_dilemma.day_trader_env:DayTraderEnv",
    "DayTrader",
    "CollabSim DayTrader: individual vs group investment over 30 rounds (social dilemma)",
)
register(
    "commons_v0",
    "teamenvs.social_dilemma.commons_env:CommonsEnv",
    "Commons",
    "GovSim-style fishery: a shared, regrowing stock harvested over 12 months (social dilemma)",
)
register(
    "search_rescue_v0",
    "teamenvs.search_rescue.env:SearchRescueEnv",
    "SearchRescue",
    "ASIST / VIRT-LAB search and rescue: medic, engineer and transporter evacuate 35 victims from a grid of rooms",
)
register(
    "map_task_v0",
    "teamenvs.map_task.env:MapTaskEnv",
    "MapTask",
    "HCRC Map Task (CollabSim): a guide describes a route, a follower draws it on a map whose landmarks differ",
)
register(
    "job_fair_v0",
    "teamenvs.job_fair.env:JobFairEnv",
    "JobFair",
    "MetaAgents job fair: seekers apply and interview, recruiters hire, design a workflow and assign roles (S1-S4)",
)
