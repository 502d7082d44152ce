"""The commons' once-a-step parts and formatting memos give what building each view afresh gives.

A step's views share the lake facts and last month's public parts (`once_per_step("facts")`), the env formats
their lines once (`_public_memo`, `_lake_memo`, known again by identity) and works out the sustainable share only
when the stock changes (`_share`). At every step of random play, in every preset, each fisher's observation equals
the text rendered from a view built with the step's parts forgotten and no line memo, and its info's sustainable
share the one worked out from the stock now.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import teamenvs
from teamenvs.commons.config import PRESETS
from teamenvs.commons.rules import sustainable_share
from teamenvs.commons.view import render


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("obs_type", ["text", "both"])
def test_observations_with_the_memos_equal_observations_built_afresh(preset, obs_type):
    env = teamenvs.make("commons_v0", preset=preset, obs_type=obs_type, action_type="discrete")
    # mostly gentle harvests, so that episodes run for months (random harvests collapse the lake in the first)
    gentle = np.array([not re.search(r"twice|25%|50%|whole", label) for label in env.interface.labels])
    rng = np.random.default_rng(5)
    compared = 0
    phases = set()
    for seed in (0, 1, 2):
        obs, infos = env.reset(seed=seed)
        while True:
            phases.add("over" if env.over else env.phase.kind)
            fresh_share = sustainable_share(env.stock, env.config.n_agents, env.config.regrowth_factor)
            for agent in obs:  # (after the last step, the final observations of the agents that were in it)
                text = obs[agent]["text"] if obs_type == "both" else obs[agent]
                env.renew_step_parts()  # the step's shared parts are built again, from the state as it is
                assert text == render(env._view(agent)), (preset, seed, env.step_count, agent)
                assert infos[agent]["sustainable_share"] == fresh_share
                compared += 1
            if not env.agents:
                break
            actions = {}
            for agent in env.agents:
                mask = infos[agent]["action_mask"].astype(bool)
                if rng.random() < 0.9 and (mask & gentle).any():
                    mask &= gentle
                actions[agent] = int(rng.choice(np.flatnonzero(mask)))
            obs, _, _, _, infos = env.step(actions)
    assert compared > 100
    assert {"harvest", "over"} | ({"discussion"} if env.config.communication else set()) <= phases
