"""The shortcuts of `hidden_profile_v0`'s numeric mode give exactly what the plain paths give: masks
memoized under `mask_key` (the document and its first line not yet discussed) are the masks worked out
afresh, and the chat read once per chat (`discussed_facts`) is the chat read line by line."""

from __future__ import annotations

import numpy as np
import pytest

import teamenvs
from teamenvs.hidden_profile.view import _FACT_LINE, discussed_facts

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
                offered = env._offered[agent]
                if offered is None:
                    continue
                fresh = dict(offered[3])  # the situation's memo, less the masks: everything worked out again
                fresh = {k: v for k, v in fresh.items() if not (isinstance(k, tuple) and k[:1] == ("mask",))}
                saved, env._offered[agent] = env._offered[agent], (*offered[:3], fresh)
                try:
                    mask, commands = env.interface._mask(env, agent, view, True)
                finally:
                    env._offered[agent] = saved
                assert np.array_equal(mask, infos[agent]["action_mask"]), (preset, agent, view["step"])
                assert commands == env.interface._commands[agent]
                assert discussed_facts(view["recent_messages"]) == _plain_discussed(view["recent_messages"])
                compared += 1
            actions = {a: int(rng.choice(np.flatnonzero(i["action_mask"]))) for a, i in infos.items()}
            _, _, _, _, infos = env.step(actions)
    assert compared > 200
