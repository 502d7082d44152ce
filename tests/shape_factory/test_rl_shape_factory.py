"""`shape_factory_v0` with numeric observations and discrete actions (`teamenvs.core.rl`).

The encoder reads the agent's view only, with hand-checked slots; the catalogue is fixed for a
config and the same for every agent, and its commands parse; masks are exact over many masked-in
random actions in every condition (zero refusals); discrete logs replay.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import teamenvs
from teamenvs.core.recorder import EpisodeRecorder
from teamenvs.core.rl import NOOP, feature_table, pack
from teamenvs.replay import load_replay
from teamenvs.shape_factory.commands import candidates, catalogue, command_for
from teamenvs.shape_factory.config import PRESETS, ShapeFactoryConfig
from teamenvs.shape_factory.view import encode, encode_values, features
from teamenvs.testing import marked_commands, masked_play, random_masked_actions

ENV = "shape_factory_v0"


def numeric(seed: int = 0, **config):
    env = teamenvs.make(ENV, obs_type="vector", action_type="discrete", **config)
    observations, infos = env.reset(seed=seed)
    return env, observations, infos


def index(env, label: str) -> int:
    return env.interface.labels.index(label)


# ---------------------------------------------------------------------- observation
def test_feature_table_is_documented_and_sized_by_the_config():
    table = features(ShapeFactoryConfig())
    assert all(f.doc for f in table) and len({f.name for f in table}) == len(table)
    # 33 own slots (1+1+3+1+3+1+1+3+3+12+3+1), 2 x 5 offer slots of 16 and 1, then 1 + 5 x 6 dashboard and 5 messages
    assert sum(f.size for f in table) == 33 + 160 + 1 + 1 + 30 + 5 == 230
    assert sum(f.size for f in features(ShapeFactoryConfig(**PRESETS["group_size_10"]))) < 600
    assert "| 0 | `progress` |" in feature_table(table)


def test_encode_equals_core_pack_and_equal_views_give_equal_vectors():
    env, observations, infos = numeric(preset="awareness_dashboard")
    rng = np.random.default_rng(3)
    for _ in range(30):
        if not env.agents:
            break
        for agent in env.agents:
            view = infos[agent]["view"]
            vector = encode(view, env.config)
            assert np.array_equal(vector, pack(features(env.config), encode_values(view, env.config)))
            assert np.array_equal(vector, encode(copy.deepcopy(view), env.config))
            assert np.array_equal(vector, observations[agent]["observation"])
        observations, _, _, _, infos = env.step(random_masked_actions(infos, rng))


def test_vector_ignores_hidden_state():
    """Another agent's inventory, money and orders are not in an agent's vector (without the dashboard)."""
    env, _, _ = numeric()
    before = env._encode(env._view("agent_1"))
    m = env.market
    m.inventory["agent_2"]["circle"] += 3
    m.money["agent_3"] += 50
    m.orders["agent_4"][0].fulfilled_at = 0
    assert np.array_equal(before, env._encode(env._view("agent_1")))
    m.money["agent_1"] += 50
    assert not np.array_equal(before, env._encode(env._view("agent_1")))


def test_hand_checked_slots():
    env, _, infos = numeric(seed=1)
    cfg, m = env.config, env.market
    a = "agent_1"
    spec = m.specialty[a]
    values = encode_values(infos[a]["view"], cfg)
    assert values["progress"] == 0.0 and values["money"] == pytest.approx(200 / 380) and values["free_money"] == values["money"]
    assert values["specialty"] == [float(s == spec) for s in m.shapes]
    assert values["dashboard_shown"] == 0.0 and values["dashboard"] == [0.0] * 30
    assert values["orders"][3] == 0.0 and sum(values["orders"]) == 3.0  # one shape per order, none fulfilled
    other = next(x for x in env.agents if x != a)
    env.step({a: f"produce {spec}", other: f"offer {a} $30 for 1 {spec}"})
    values = encode_values(env._view(a), cfg)
    assert values["producing"] == [float(s == spec) for s in m.shapes] and values["production_left"] == pytest.approx(2 / 3)
    assert values["money"] == pytest.approx(185 / 380) and values["produced"] == pytest.approx(0.1)
    slot = values["offers_to_you"][:16]  # present, other (5), give item (4), amount, get item (4), amount
    k = env.possible_agents.index(other) - 1
    assert slot[0] == 1.0 and slot[1 + k] == 1.0
    assert slot[6:10] == [0.0, 0.0, 0.0, 1.0] and slot[10] == pytest.approx(30 / 500)  # the proposer gives $30 ($100 x 5 shapes: 1)
    assert slot[11 + m.shapes.index(spec)] == 1.0 and slot[15] == pytest.approx(0.2)  # and gets 1 of 5 shapes
    assert encode_values(env._view(other), cfg)["your_offers"][:16] == pytest.approx(
        [1.0] + [float(i == 0) for i in range(5)] + slot[6:])  # agent_1 is the first other of everyone else


# ---------------------------------------------------------------------- actions
def test_catalogue_is_fixed_and_the_same_for_every_agent():
    labels = catalogue(ShapeFactoryConfig())
    assert labels[0] == NOOP and len(labels) == len(set(labels)) == 1 + 3 + 3 + 3 * 5 + 5 + 5 + 2  # no-op, produce, fulfil, answer/cancel slots, sell, buy, say
    for preset in PRESETS:
        env = teamenvs.make(ENV, preset=preset, action_type="discrete")
        assert env.interface.labels == catalogue(env.config)
        assert len({env.action_space(a).n for a in env.possible_agents}) == 1


def test_commands_of_the_catalogue_in_a_view():
    env, _, infos = numeric(seed=1)
    a = "agent_1"
    texts = dict(zip(env.interface.labels, (env.action_text(a, i) for i in range(len(env.interface.labels)))))
    spec = env.market.specialty[a]
    assert texts[NOOP] == "wait" and texts[f"produce {spec}"] == f"produce {spec}"
    assert texts["sell 1 of my specialty to other 1"] is None  # nothing made yet: the rules would refuse
    need = next(s for s in env.market.shapes if any(s in o["shapes"] for o in infos[a]["view"]["orders"]))  # the first in shape order
    assert texts["buy a needed shape from other 2"] == f"offer agent_3 $28 for 1 {need}"
    assert texts["accept the first offer to me"] is None and texts["fulfill order 1"] is None
    assert texts["say my specialty"] == f"say I make {spec}s cheaply: $28 each"


def test_commands_parse_to_themselves_in_their_situation():
    rng = np.random.default_rng(0)
    seen = 0
    for preset in ("baseline", "awareness_dashboard"):
        env = teamenvs.make(ENV, preset=preset, obs_type="vector", action_type="discrete")
        observations, infos = env.reset(seed=0)
        for _ in range(60):
            if not env.agents:
                break
            for agent in env.agents:
                if not infos[agent]["needs_action"]:
                    continue
                seen += len(marked_commands(env, agent, infos[agent], command_for))
            observations, _, _, _, infos = env.step(random_masked_actions(infos, rng))
    assert seen > 500


def test_refusal_is_the_rule_of_apply():
    env, _, _ = numeric()
    spec = env.market.specialty["agent_1"]
    assert env.accepts("agent_1", f"produce {spec}") and not env.accepts("agent_1", "fulfill order 1")
    assert not env.accepts("agent_1", f"offer agent_2 1 {spec} for $20")  # nothing made yet
    assert env.accepts("agent_1", f"offer agent_2 $20 for 1 {spec}")


# ---------------------------------------------------------------------- exact masks
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_exact_masks_over_random_masked_in_actions(preset):
    """Masked-in actions only, several episodes per condition: not one is refused."""
    checked = trades = 0
    for seed in range(3):
        env, observations, infos = numeric(seed=seed, preset=preset)
        rng = np.random.default_rng(seed)
        while env.agents:
            for agent in env.agents:
                assert env.observation_space(agent).contains(observations[agent])
            acting = [a for a in env.agents if infos[a]["needs_action"]]
            observations, _, _, _, infos = env.step(random_masked_actions(infos, rng))
            for agent in acting:
                last = infos[agent]["last_action"]
                assert last["ok"] is True, (preset, seed, agent, last)
                checked += 1
                trades += last["command"] == "accept offer"
    assert checked > 300 and trades > 0


def test_a_discrete_episode_logs_commands_and_replays(tmp_path):
    env = teamenvs.make(ENV, action_type="discrete")
    rng = np.random.default_rng(1)
    path = tmp_path / "discrete.jsonl"
    with EpisodeRecorder(path) as recorder, env.unwrapped.recording(recorder):
        observations, infos = env.reset(seed=1)
        steps = 0
        while env.agents:
            observations, _, _, _, infos = env.step(random_masked_actions(infos, rng))
            steps += 1
    replay = load_replay(path)
    assert replay.sim.warning is None and replay.sim.verified == steps and len(replay.frames) == steps + 1
    logged = [r for r in recorder.records if r.get("type") == "step"]
    assert any(e["action"]["ok"] and e["action"]["command"] == "offer" for r in logged for e in r["agents"].values())


def test_the_documented_feature_table_is_the_code_s():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "rl" / "shape_factory_v0.md").read_text(encoding="utf-8")
    assert feature_table(features(ShapeFactoryConfig())) in doc
    for preset, size in (("group_size_8", 304), ("group_size_10", 384), ("group_size_4", 162)):
        assert sum(f.size for f in features(ShapeFactoryConfig(**PRESETS[preset]))) == size and str(size) in doc


@pytest.mark.parametrize("preset", [None, "group_size_8", "no_communication"])
def test_candidates_at_once_equal_command_for_label_by_label(preset):
    """The mask's candidate commands, worked out at once (`candidates`), are exactly `command_for` asked label by
    label, in views of random masked-in play (offers to answer and cancel, orders, production, purchases)."""
    env = teamenvs.make("shape_factory_v0", preset=preset, obs_type="vector", action_type="discrete")
    labels = env.interface.labels
    rng = np.random.default_rng(3)
    views = 0
    for episode, _, infos in masked_play(env, range(6), rng):
        for agent in env.agents:
            view = infos[agent]["view"]
            expected = [(i, command) for i, label in enumerate(labels) if (command := command_for(view, label)) is not None]
            assert candidates(view, labels) == expected
            views += 1
    assert views > 1000
