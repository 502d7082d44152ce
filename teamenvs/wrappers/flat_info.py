"""`FlatInfo`: each agent's info as numbers only, the same keys every step, for tensor libraries.

A team env's info holds what text and scripted policies read: the view (nested dicts), the valid
command forms, the last action and the events. Libraries that turn every info entry into a tensor
cannot take those; TorchRL's `PettingZooWrapper` stops with "Could not infer dtype of dict". With
this wrapper each agent's info is `teamenvs.core.rl.flat_info` of it: `needs_action`,
`action_rejected` and, with discrete actions, `action_mask` (the single-agent view's numeric info,
less its step counts). TorchRL reads the mask from the observation or from the info, not from
both, so give it Box observations with `MaskInInfo`:

    import teamenvs
    from teamenvs.wrappers import FlatInfo, MaskInInfo
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    env = teamenvs.make("commons_v0", obs_type="vector", action_type="discrete")
    env = PettingZooWrapper(FlatInfo(MaskInInfo(env)), use_mask=True, return_state=True)

`benchmarks/rl_torchrl.py` checks every env this way with TorchRL's `check_env_specs` and collects
frames with a masked random policy (the single-agent view needs no wrapper: TorchRL's `GymWrapper`
takes it as it is).
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.wrappers import BaseParallelWrapper

from teamenvs.core.rl import flat_info


class FlatInfo(BaseParallelWrapper):
    """A team env whose infos are `flat_info` of the env's (observations, rewards and the rest unchanged)."""

    def reset(self, seed: int | None = None, options: dict | None = None):
        observations, infos = self.env.reset(seed=seed, options=options)
        return observations, {a: flat_info(info) for a, info in infos.items()}

    def step(self, actions: dict[str, Any]):
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        return observations, rewards, terminations, truncations, {a: flat_info(info) for a, info in infos.items()}
