"""`MaskInInfo`: the numeric observation as a plain Box, the action mask in `info` only.

PettingZoo's convention puts the action mask in the observation (`{"observation", "action_mask"}`),
which RLlib's action-masking module and PettingZoo's tests read. Vectorising wrappers such as
SuperSuit's `black_death_v3`, `pettingzoo_env_to_vec_env_v1` and `concat_vec_envs_v1` need a Box
observation; with this wrapper they get one, and each agent's mask stays in
`info[agent]["action_mask"]`, where the env always puts it:

    import supersuit as ss, teamenvs
    from teamenvs.wrappers import MaskInInfo
    env = MaskInInfo(teamenvs.make("commons_v0", obs_type="vector", action_type="discrete"))
    vec = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(ss.black_death_v3(env)), 4, base_class="gymnasium")
"""

from __future__ import annotations

from typing import Any

from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseParallelWrapper


class MaskInInfo(BaseParallelWrapper):
    """A numeric, discrete team env whose learners' observations are the Box alone (masks in `info`); agents
    that are not learners (`teamenvs.make(..., learners=...)`) keep their text observations."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._masked = frozenset(a for a in env.possible_agents if _masked(env.observation_space(a)))
        if not self._masked:
            raise ValueError("MaskInInfo wraps an env made with obs_type='vector', action_type='discrete'")

    def observation_space(self, agent: str) -> spaces.Space:
        space = self.env.observation_space(agent)
        return space["observation"] if agent in self._masked else space

    def _boxes(self, observations: dict[str, Any]) -> dict[str, Any]:
        masked = self._masked
        return {a: o["observation"] if a in masked else o for a, o in observations.items()}

    def reset(self, seed: int | None = None, options: dict | None = None):
        observations, infos = self.env.reset(seed=seed, options=options)
        return self._boxes(observations), infos

    def step(self, actions: dict[str, Any]):
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        return self._boxes(observations), rewards, terminations, truncations, infos


def _masked(space: spaces.Space) -> bool:
    """Whether an agent's observation space is a vector with its action mask (PettingZoo's convention)."""
    return isinstance(space, spaces.Dict) and set(space.spaces) == {"observation", "action_mask"}
