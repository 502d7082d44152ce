"""The job fair's speed-ups change nothing: shared parses and mask keys agree with the plain ways."""

from __future__ import annotations

import numpy as np

import teamenvs
from teamenvs.core.commands import Action
from teamenvs.job_fair.commands import COMMANDS, parse_in
from teamenvs.testing import random_masked_actions


def _fresh_mask(env, agent, view):
    """The action mask worked out label by label, without memo or shared parses."""
    base = env.unwrapped
    situation = base._offered[agent][0]
    mask = np.zeros(len(base.interface.labels), dtype=np.int8)
    for i, label in enumerate(base.interface.labels):
        command = base._command_for(view, label)
        if command is None:
            continue
        action = COMMANDS.parse(command, situation)
        if isinstance(action, Action) and base._refusal(agent, action) is None:
            mask[i] = 1
    return mask


def test_masks_and_parses_match_the_plain_ways() -> None:
    env = teamenvs.make("job_fair_v0", obs_type="vector", action_type="discrete")
    base = env.unwrapped
    rng = np.random.default_rng(5)
    _, infos = env.reset(seed=5)
    for _ in range(250):
        if not env.agents:
            _, infos = env.reset(seed=int(rng.integers(2**31)))
        for agent in env.agents:
            if not infos[agent]["needs_action"]:
                continue
            view = infos[agent]["view"]
            assert (infos[agent]["action_mask"] == _fresh_mask(env, agent, view)).all()
            situation = base._offered[agent][0]
            for label in base.interface.labels:
                command = base._command_for(view, label)
                for probe in filter(None, (command, command and command + ", Nobody", command and "hire " + command)):
                    shared, plain = parse_in(probe, situation), COMMANDS.parse(probe, situation)
                    assert type(shared) is type(plain) and shared.to_json() == plain.to_json()
        actions = random_masked_actions(infos, rng, env.agents)
        _, _, _, _, infos = env.step(actions)
