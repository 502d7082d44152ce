"""The shortcuts of `hidden_profile_v0`'s numeric mode give exactly what the plain paths give: masks
memoized under `mask_key` (the document and its first line not yet discussed) are the masks worked out
afresh (the chat read once per chat, `discussed_facts`, is checked against the chat read line by line in
`test_hidden_profile_caches.py`)."""

from __future__ import annotations

import numpy as np
import pytest

import teamenvs
from teamenvs.testing import mask_worked_out_afresh, masked_play, random_masked_actions

ENV = "hidden_profile_v0"


@pytest.mark.parametrize("preset", ["baseline", "generated", "private_messages"])
def test_memoized_masks_are_the_masks_worked_out_afresh(preset):
    env = teamenvs.make(ENV, preset=preset, obs_type="vector", action_type="discrete")
    rng = np.random.default_rng(1)
    compared = 0
    for _, _, infos in masked_play(env, range(3), rng):
        for agent in env.agents:
            view = infos[agent]["view"]
            afresh = mask_worked_out_afresh(env, agent)
            if afresh is None:
                continue
            mask, commands = afresh
            assert np.array_equal(mask, infos[agent]["action_mask"]), (preset, agent, view["step"])
            assert commands == env.interface._commands[agent]
            compared += 1
    assert compared > 200


@pytest.mark.parametrize("preset", ["baseline", "generated"])
def test_mask_candidates_are_command_for_label_by_label(preset):
    from teamenvs.hidden_profile.commands import candidates, command_for

    env = teamenvs.make(ENV, preset=preset, obs_type="vector", action_type="discrete")
    rng = np.random.default_rng(2)
    _, infos = env.reset(seed=0)
    while env.agents:
        for agent in env.agents:
            view = infos[agent]["view"]
            by_label = [(i, c) for i, label in enumerate(env.interface.labels) if (c := command_for(view, label)) is not None]
            assert candidates(view) == by_label, view["phase"]
        _, _, _, _, infos = env.step(random_masked_actions(infos, rng))
