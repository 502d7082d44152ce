"""Shape Factory's memos give what working things out afresh gives, over many episodes of one env.

The env keeps its parses of catalogue commands across episodes (`ShapeFactoryEnv._parses`, read back by
`_reparsed`: offer ids restart with every episode, so `accept offer 3` recurs) and each agent's cheapest shape for
an episode (`_cheapest`, read by `_options`, the situation key); `candidates` finds its catalogue's index again by
identity (`commands._index_of`) and lists a catalogue in index order without sorting. At every step of random
masked-in play, episode after episode, each parse equals the parser's, each situation key the one worked out with
no cheapest shape remembered, and each mask and its commands those worked out with every memo emptied.
"""

from __future__ import annotations

import numpy as np
import pytest

import teamenvs
from teamenvs.shape_factory import commands as shape_commands
from teamenvs.shape_factory.commands import candidates, command_for
from teamenvs.testing import mask_worked_out_afresh, masked_play, random_masked_actions

ENV = "shape_factory_v0"


def probes(env, agent: str, view) -> list[str]:
    """The catalogue's commands now, and commands the situation may deny, bound or not name."""
    commands = [c for c in (command_for(view, label) for label in env.interface.labels) if c is not None]
    ids = sorted({o.id for o in env.market.offers.values()} | {1, 2, max(env.market.offers, default=0) + 1})
    commands += [f"{verb} offer {i}" for verb in ("accept", "decline", "cancel") for i in ids]
    spec = view["specialty"]
    commands += [f"offer {agent} $28 for 1 {spec}", f"produce {spec}", "fulfill order 1", "fulfill order 9", "say hello", "wait"]
    commands += [f"offer {other} 1 {spec} for $28" for other in env.possible_agents]
    return commands


def cold_mask(env, agent: str):
    """`agent`'s mask and commands worked out with the parses, the cheapest shapes, the catalogue index and the
    situation's memo (its parses and masks) all emptied."""
    parses, cheapest = env._parses, env._cheapest
    offered = env._offered[agent]
    env._parses, env._cheapest = {}, {}
    shape_commands._latest_index[:] = (None, None)
    env._offered[agent] = (*offered[:3], {})
    try:
        return env.interface._mask(env, agent, env._infos[agent]["view"], True)
    finally:
        env._parses, env._cheapest, env._offered[agent] = parses, cheapest, offered


@pytest.mark.parametrize("preset", ["baseline", "communication_bandwidth", "group_size_4", "no_communication"])
def test_parses_kept_across_episodes_are_the_parser_s(preset):
    env = teamenvs.make(ENV, preset=preset, obs_type="vector", action_type="discrete")
    rng = np.random.default_rng(11)
    kept_before = reused = compared = 0
    for seed in range(4):
        _, infos = env.reset(seed=seed)
        earlier = set(env._parses)  # parsed in earlier episodes
        while env.agents:
            for agent in env.agents:
                offered = env._offered[agent]
                if offered is None:
                    continue
                situation = offered[0]
                for command in probes(env, agent, infos[agent]["view"]):
                    key = (command, tuple(situation.names.items()))
                    kept_before += key in earlier
                    reused += key in earlier and env._reparsed(command, situation) is not None
                    assert env._mask_parse(command, situation) == env.commands.parse(command, situation), (preset, seed, command)
                    compared += 1
            _, _, _, _, infos = env.step(random_masked_actions(infos, rng))
    assert compared > 2000 and reused > 200 and kept_before >= reused


@pytest.mark.parametrize("preset", ["baseline", "awareness_dashboard", "communication_bandwidth", "group_size_8"])
def test_masks_and_situations_over_episodes_are_those_worked_out_afresh(preset):
    env = teamenvs.make(ENV, preset=preset, obs_type="vector", action_type="discrete")
    rng = np.random.default_rng(12)
    compared = 0
    for seed, _, infos in masked_play(env, range(4), rng):
        for agent in env.agents:
            cheapest = env._cheapest
            env._cheapest = {}
            afresh = env._situation_key(agent)
            env._cheapest = cheapest
            assert env._situation_key(agent) == afresh, (preset, seed, agent)
            if env._offered[agent] is None:
                continue
            mask, commands = cold_mask(env, agent)
            assert np.array_equal(mask, infos[agent]["action_mask"]), (preset, seed, env.step_count, agent)
            assert commands == env.interface._commands[agent]
            memoized = mask_worked_out_afresh(env, agent)  # this step's memos kept, its masks left out
            assert np.array_equal(memoized[0], mask) and memoized[1] == commands
            compared += 1
    assert compared > 600


def test_candidates_of_labels_in_another_order_are_in_index_order():
    """A catalogue lists its kinds in the order `candidates` writes them; labels in another order are sorted."""
    env = teamenvs.make(ENV, obs_type="vector", action_type="discrete")
    labels = env.interface.labels
    shuffled = (labels[0], *reversed(labels[1:]))
    rng = np.random.default_rng(13)
    _, infos = env.reset(seed=13)
    views = 0
    while env.agents and views < 300:
        for agent in env.agents:
            view = infos[agent]["view"]
            for order in (labels, shuffled, labels):  # the identity memo of the index changes with the labels
                expected = [(i, c) for i, label in enumerate(order) if (c := command_for(view, label)) is not None]
                assert candidates(view, order) == expected
            views += 1
        _, _, _, _, infos = env.step(random_masked_actions(infos, rng))
    assert views >= 300
