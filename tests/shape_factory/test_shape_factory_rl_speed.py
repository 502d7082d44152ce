"""The shortcuts of `shape_factory_v0`'s numeric mode give exactly what the plain paths give.

`ShapeFactoryEnv.accepts` reuses a command's parse across situations (`_reparsed`): its answer, and
the parse it leaves in the situation's memo, must be the plain `TeamEnv.accepts`' and the parser's,
for the catalogue's commands and for commands the situation denies or bounds. `encode` builds its
vector without `encode_values`; `command_for` refuses early only what the rules refuse.
"""

from __future__ import annotations

import numpy as np
import pytest

import teamenvs
from teamenvs.core.commands import Action
from teamenvs.core.env import TeamEnv
from teamenvs.core.rl import pack
from teamenvs.shape_factory import rules
from teamenvs.shape_factory.commands import command_for
from teamenvs.shape_factory.config import PRESETS
from teamenvs.shape_factory.view import encode, encode_values, features
from teamenvs.testing import mask_worked_out_afresh, masked_play, random_masked_actions

ENV = "shape_factory_v0"


def _plain_accepts(env, agent: str, command: str) -> bool:
    """`TeamEnv.accepts` on a fresh memo (the parser, then the rules)."""
    offered = env._offered.get(agent)
    if offered is None:
        return False
    action = env.commands.parse(command, offered[0])
    return isinstance(action, Action) and env._refusal(agent, action) is None


def _probes(env, agent: str, view) -> list[str]:
    """The catalogue's commands now, and commands the situation may deny or bound."""
    commands = [c for c in (command_for(view, label) for label in env.interface.labels) if c is not None]
    others = [a for a in env.possible_agents if a != agent]
    spec = view["specialty"]
    ids = sorted({o.id for o in env.market.offers.values()} | {1, 2, max(env.market.offers, default=0) + 1})
    commands += [f"accept offer {i}" for i in ids] + [f"decline offer {i}" for i in ids] + [f"cancel offer {i}" for i in ids]
    commands += [f"offer {others[0]} 1 {spec} for $28", f"offer {agent} $28 for 1 {spec}", f"produce {spec}",
                 "fulfill order 1", "fulfill order 9", "say hello", "tell agent_2 hi", "wait"]
    return commands


@pytest.mark.parametrize("preset", ["baseline", "communication_bandwidth", "no_communication", "group_size_4"])
def test_accepts_reusing_parses_is_the_plain_accepts(preset):
    env = teamenvs.make(ENV, preset=preset, obs_type="vector", action_type="discrete")
    rng = np.random.default_rng(5)
    checked = reused = 0
    for seed in range(2):
        _, infos = env.reset(seed=seed)
        while env.agents:
            for agent in env.agents:
                offered = env._offered[agent]
                for command in _probes(env, agent, infos[agent]["view"]):
                    expected = _plain_accepts(env, agent, command)
                    reused += offered is not None and command not in offered[3] and env._reparsed(command, offered[0]) is not None
                    assert env.accepts(agent, command) == expected == TeamEnv.accepts(env, agent, command), (preset, agent, command)
                    if offered is not None:  # what step() would read back from the memo is the parser's answer
                        assert offered[3][command] == env.commands.parse(command, offered[0]), command
                    checked += 1
            actions = random_masked_actions(infos, rng)
            _, _, _, _, infos = env.step(actions)
    assert checked > 1000 and reused > 100


def test_encode_is_pack_of_encode_values_in_every_condition():
    for preset in PRESETS:
        env = teamenvs.make(ENV, preset=preset, obs_type="vector", action_type="discrete")
        rng = np.random.default_rng(2)
        _, infos = env.reset(seed=2)
        for _ in range(40):
            if not env.agents:
                break
            for agent in env.agents:
                view = infos[agent]["view"]
                assert np.array_equal(encode(view, env.config), pack(features(env.config), encode_values(view, env.config))), preset
            _, _, _, _, infos = env.step(random_masked_actions(infos, rng))


def test_free_and_offer_ids_agree_with_committed_and_the_offer_lists():
    env = teamenvs.make(ENV, obs_type="vector", action_type="discrete")
    rng = np.random.default_rng(0)
    _, infos = env.reset(seed=0)
    seen = 0
    while env.agents:
        m = env.market
        for agent in env.possible_agents:
            locked = rules.committed(m, agent)
            for item in (*m.shapes, rules.MONEY):
                held = m.money[agent] if item == rules.MONEY else m.inventory[agent][item]
                assert rules.free(m, agent, item) == held - locked.get(item, 0)
            assert rules.offer_ids(m, agent) == (tuple(o.id for o in rules.offers_to(m, agent)),
                                                 tuple(o.id for o in rules.offers_by(m, agent)))
            seen += bool(locked)
        _, _, _, _, infos = env.step(random_masked_actions(infos, rng))
    assert seen > 0


@pytest.mark.parametrize("preset", ["baseline", "awareness_dashboard"])
def test_memoized_masks_are_the_masks_worked_out_afresh(preset):
    """`mask_key` is exact for what `command_for` now reads (the production limits, the open offers)."""
    env = teamenvs.make(ENV, preset=preset, obs_type="vector", action_type="discrete")
    rng = np.random.default_rng(4)
    compared = 0
    for _, _, infos in masked_play(env, range(2), rng):
        for agent in env.agents:
            afresh = mask_worked_out_afresh(env, agent)
            if afresh is None:
                continue
            mask, commands = afresh
            assert np.array_equal(mask, infos[agent]["action_mask"]) and commands == env.interface._commands[agent]
            compared += 1
    assert compared > 300
