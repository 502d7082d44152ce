"""The map task's speed-ups change nothing: shared parses, mask keys and the grid renderer agree with the plain ways."""

from __future__ import annotations

import numpy as np

import teamenvs
from teamenvs.core.commands import Action
from teamenvs.map_task import view as text
from teamenvs.map_task.commands import COMMANDS, parse_in
from teamenvs.map_task.rules import GUIDE, landmarks_of
from teamenvs.map_task.scoring import drawn_cells
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


def _old_grid(pair, agent, edges):
    """`agent_grid` as it was: every layer drawn over the last with `render_grid`."""
    own = landmarks_of(pair, agent)
    marks = text.letters(own)
    layers = [(lm.cells, marks[lm.name]) for lm in own]
    if agent == GUIDE:
        layers.append((set(pair.route), "*"))
    drawn = drawn_cells(edges) if edges is not None else set()
    if drawn:
        layers.append((drawn, "o"))
        if agent == GUIDE:
            layers.append((drawn & set(pair.route), "@"))
    layers.append(({pair.start}, "S"))
    if agent == GUIDE:
        layers.append(({pair.finish}, "F"))
    return tuple(text.render_grid(pair.width, pair.height, layers, labels=agent != GUIDE))


def test_masks_parses_and_grids_match_the_plain_ways() -> None:
    env = teamenvs.make("map_task_v0", obs_type="vector", action_type="discrete", canvas_visibility=True)
    base = env.unwrapped
    rng = np.random.default_rng(3)
    _, infos = env.reset(seed=3)
    for step in range(400):
        if not env.agents:
            _, infos = env.reset(seed=int(rng.integers(2**31)))
        for agent in env.agents:
            view = infos[agent]["view"]
            assert text.agent_grid(base.pair, agent, base.edges if "drawing" in view else None) == _old_grid(
                base.pair, agent, base.edges if "drawing" in view else None)
            if not infos[agent]["needs_action"]:
                continue
            assert (infos[agent]["action_mask"] == _fresh_mask(env, agent, view)).all()
            situation = base._offered[agent][0]
            for label in base.interface.labels:
                command = base._command_for(view, label)
                for probe in filter(None, (command, command and command.upper(), command and command + " -> 1,1")):
                    shared, plain = parse_in(probe, situation), COMMANDS.parse(probe, situation)
                    assert type(shared) is type(plain) and shared.to_json() == plain.to_json()
        actions = random_masked_actions(infos, rng, env.agents)
        _, _, _, _, infos = env.step(actions)
