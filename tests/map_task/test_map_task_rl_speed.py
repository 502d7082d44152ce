"""The map task's speed-ups change nothing: shared parses, mask keys and the grid renderer agree with the plain ways."""

from __future__ import annotations

import numpy as np

import teamenvs
from teamenvs.core.commands import Action
from teamenvs.map_task import commands, view as text
from teamenvs.map_task.commands import COMMANDS, parse_in
from teamenvs.map_task.rules import FOLLOWER, GUIDE, landmarks_of
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


def _fresh_key(view, obstacles):
    """`mask_key` with its memos of the last drawing (`_last_pen`, `_last_walk`) emptied first."""
    commands._last_pen = (None, None, None, 0, 0, None)
    commands._last_walk = (None, None, ((), ()))
    return commands.mask_key(view, obstacles)


def test_mask_keys_with_the_memos_equal_keys_worked_out_afresh() -> None:
    """The follower's mask key remembers what it read off the last drawing and obstacles objects (`_pen_key`): two envs
    played in turn (other maps, obstacles and drawings, the empty drawing one tuple in both) never get the other's,
    nor a stale one, and the key follows whatever obstacles it is given for one view."""
    envs = [teamenvs.make("map_task_v0", obs_type="vector", action_type="discrete", **config)
            for config in ({}, {"canvas_visibility": True, "width": 14, "height": 12})]
    rng = np.random.default_rng(5)
    infos = [env.reset(seed=i)[1] for i, env in enumerate(envs)]
    compared = 0
    for step in range(600):
        k = step % 2
        env, base = envs[k], envs[k].unwrapped
        if not env.agents:
            infos[k] = env.reset(seed=int(rng.integers(2**31)))[1]
        for agent in env.agents:
            view = infos[k][agent]["view"]
            warm = commands.mask_key(view, base.pair.obstacles)
            assert warm == _fresh_key(view, base.pair.obstacles), (step, agent)
            compared += 1
        infos[k] = env.step(random_masked_actions(infos[k], rng, env.agents))[4]
    assert compared > 1000
    env = envs[0]
    view = env.reset(seed=9)[1][FOLLOWER]["view"]
    x, y = commands.trail_of(view["start"], view["drawing"])[-1]
    for cells in ((), ((x + 1, y),), ((x, y - 1), (x - 1, y)), ((x, y),), ()):
        obstacles = frozenset(cells)  # a new object each time, the empty one too
        assert commands.mask_key(view, obstacles) == _fresh_key(view, obstacles), cells
        for other in (dict(view, width=view["width"] + 1), dict(view, height=view["height"] - 1),
                      dict(view, start=(x + 1, y)), view):  # views of the same drawing
            assert commands.mask_key(other, obstacles) == _fresh_key(other, obstacles), cells
