"""The shortcuts of `hidden_profile_v0`'s numeric mode give exactly what the plain paths give: masks
memoized under `mask_key` (the document and its first line not yet discussed) are the masks worked out
afresh, and the chat read once per chat (`discussed_facts`) is the chat read line by line."""

from __future__ import annotations

import numpy as np
import pytest

import teamenvs
from teamenvs.hidden_profile.view import _FACT_LINE, discussed_facts
from teamenvs.testing import mask_worked_out_afresh, random_masked_actions

ENV = "hidden_profile_v0"


def _plain_discussed(lines) -> frozenset:
    found = set()
    for line in lines:
        match = _FACT_LINE.fullmatch(line.split(": ", 1)[1] if ": " in line else "")
        if match is not None:
            found.add(match.groups())
    return frozenset(found)


@pytest.mark.parametrize("preset", ["baseline", "generated", "broadcast_only"])
def test_memoized_masks_are_the_masks_worked_out_afresh(preset):
    env = teamenvs.make(ENV, preset=preset, obs_type="vector", action_type="discrete")
    rng = np.random.default_rng(1)
    compared = 0
    for seed in range(3):
        _, infos = env.reset(seed=seed)
        while env.agents:
            for agent in env.agents:
                view = infos[agent]["view"]
                afresh = mask_worked_out_afresh(env, agent)
                if afresh is None:
                    continue
                mask, commands = afresh
                assert np.array_equal(mask, infos[agent]["action_mask"]), (preset, agent, view["step"])
                assert commands == env.interface._commands[agent]
                assert discussed_facts(view["recent_messages"]) == _plain_discussed(view["recent_messages"])
                compared += 1
            actions = random_masked_actions(infos, rng)
            _, _, _, _, infos = env.step(actions)
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


def test_chats_read_from_shorter_ones_are_the_chats_read_afresh():
    line = "member_2: Candidate A strength: Calm under pressure."
    other = "you -> everyone: Candidate B weakness: Late to briefings."
    short = (line, "member_3: hello")
    assert discussed_facts(short) == _plain_discussed(short)
    longer = (*short, other, "member_2: no fact here")
    assert discussed_facts(longer) == _plain_discussed(longer)
    slid = longer[1:]  # the history dropped its oldest line: read afresh
    assert discussed_facts(slid) == _plain_discussed(slid)
