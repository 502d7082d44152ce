"""The environment registry: `make`, `list_envs`, `spec`, and the Gymnasium single-agent ids.

Paradigms declare themselves (`PARADIGM` in their package, see `teamenvs.core.paradigm`);
the registry discovers them on import. Each env id (`day_trader_v0`) builds its class with a
validated config (`preset=` picks a named condition), and is also registered with Gymnasium
as `teamenvs/<Name>-v<k>`, the single-agent view (one learner, scripted teammates).
"""

from __future__ import annotations

from typing import Any

import gymnasium

from teamenvs.core.config import ConfigError
from teamenvs.core.paradigm import Paradigm, discover
from teamenvs.core.text import close_match, excerpt

_REGISTRY: dict[str, Paradigm] = {}


def register(paradigm: Paradigm) -> None:
    """Register a paradigm's env id and its Gymnasium single-agent counterpart (done by discovery)."""
    _REGISTRY[paradigm.env_id] = paradigm
    if paradigm.gym_id not in gymnasium.registry:
        gymnasium.register(id=paradigm.gym_id, entry_point="teamenvs.wrappers.single_agent:SingleAgentEnv",
                           kwargs={"env_id": paradigm.env_id}, max_episode_steps=paradigm.max_episode_steps)


def paradigms() -> list[Paradigm]:
    """Every registered paradigm, in catalogue order."""
    return list(_REGISTRY.values())


class UnknownEnvError(ConfigError, KeyError):
    """An env id that is not registered: a ConfigError like every other bad name a user gives, and a KeyError, as a
    lookup in the registry raises (what `spec` and `make` raised before)."""

    def __str__(self) -> str:  # the message as written (KeyError would quote it)
        return str(self.args[0]) if self.args else ""


def spec(env_id: str) -> Paradigm:
    """The declaration of `env_id`, or an `UnknownEnvError` naming the nearest registered id."""
    if not isinstance(env_id, str) or env_id not in _REGISTRY:
        given = env_id.strip() if isinstance(env_id, str) else str(env_id)
        if given in _REGISTRY:
            hint = f" Did you mean '{given}', without the spaces or line break around it?"
        elif given.lower() in _REGISTRY:
            hint = f" Did you mean '{given.lower()}'? (env ids are lower case)"
        else:
            close = close_match(given, list(_REGISTRY))
            hint = f" Did you mean '{close}'?" if close else ""
        raise UnknownEnvError(f"unknown env id {excerpt(env_id)}.{hint} Registered: {', '.join(_REGISTRY)}")
    return _REGISTRY[env_id]


def make(env_id: str, **config: Any):
    """Build the PettingZoo ParallelEnv registered as `env_id` with the given config and conditions."""
    return spec(env_id).load_env_class()(**config)


def list_envs() -> list[str]:
    """All registered env ids."""
    return list(_REGISTRY)


for _paradigm in discover():
    register(_paradigm)
