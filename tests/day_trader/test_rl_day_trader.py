"""`day_trader_v0` with numeric observations and discrete actions (`teamenvs.core.rl`).

The encoder reads the trader's view only, with hand-checked slots; the catalogue is fixed and
the same for every trader, and its commands parse; masks are exact over many masked-in random
actions (zero rejections); discrete logs replay; a learner can express the baselines' strategies.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

import numpy as np
import pytest

import teamenvs
from teamenvs.core.commands import Action
from teamenvs.core.policy import make_policies
from teamenvs.core.recorder import EpisodeRecorder, read_log
from teamenvs.core.rl import NOOP, feature_table, pack
from teamenvs.day_trader import PARADIGM
from teamenvs.day_trader.commands import catalogue, command_for, level_amount
from teamenvs.day_trader.config import PRESETS, DayTraderConfig
from teamenvs.day_trader.rules import GROUP, INDIVIDUAL, WAIT, Choice, investment_refusal, schedule
from teamenvs.day_trader.view import MESSAGES, encode, encode_values, features
from teamenvs.replay import load_replay
from teamenvs.testing import check_lone_learner_vectors, marked_commands, random_masked_actions

ENV = "day_trader_v0"


def numeric(**config):
    env = teamenvs.make(ENV, obs_type="vector", action_type="discrete", **config)
    observations, infos = env.reset(seed=0)
    return env, observations, infos


def block(config: DayTraderConfig, vector: np.ndarray, name: str) -> np.ndarray:
    """The slots of feature `name` in an observation vector."""
    start = 0
    for f in features(config):
        if f.name == name:
            return vector[start:start + f.size]
        start += f.size
    raise KeyError(name)


def index(label: str) -> int:
    return catalogue(DayTraderConfig()).index(label)


# ---------------------------------------------------------------------- observation
def test_feature_table_is_documented_and_small():
    table = features(DayTraderConfig())
    assert all(f.doc for f in table)
    assert len({f.name for f in table}) == len(table)
    assert sum(f.size for f in table) == 51
    assert sum(f.size for f in features(DayTraderConfig(n_agents=9))) < 2000
    assert "| 0-2 | `phase` |" in feature_table(table)


def test_encode_equals_core_pack_and_equal_views_give_equal_vectors():
    env, observations, infos = numeric()
    rng = np.random.default_rng(3)
    for _ in range(20):
        for agent in env.agents:
            view = infos[agent]["view"]
            vector = encode(view, env.config)
            assert np.array_equal(vector, pack(features(env.config), encode_values(view, env.config)))
            assert np.array_equal(vector, encode(copy.deepcopy(view), env.config))
            assert np.array_equal(vector, observations[agent]["observation"])
        actions = random_masked_actions(infos, rng, env.agents)
        observations, _, _, _, infos = env.step(actions)


@pytest.mark.parametrize("config", [{}, {"n_agents": 9, "discussion_every": 1}, {"show_balances": False, "bonus": 0}])
def test_gathered_vectors_equal_the_slot_by_slot_encoding_over_whole_episodes(config):
    """`encode` gathers each trader's vector from one pool per step (`_step_pool`); at every step of masked-in random
    play, every trader's vector is the one `encode_flat` reads slot by slot, whatever the team size and the shown
    parts, and equal to the vector of a copy of its view that is no step's (a plain dict, never pooled)."""
    env = teamenvs.make(ENV, obs_type="vector", action_type="discrete", **config)
    for seed in range(2):
        rng = np.random.default_rng(seed)
        observations, infos = env.reset(seed=seed)
        while True:
            for agent in infos:
                view = infos[agent]["view"]
                expected = pack(features(env.config), encode_values(view, env.config))
                assert np.array_equal(observations[agent]["observation"], expected)
                plain = {**view, "public": {**view["public"], "last_round": copy.deepcopy(view["public"]["last_round"])}}
                assert np.array_equal(encode(plain, env.config), expected)
            if not env.agents:
                break
            observations, _, _, _, infos = env.step(random_masked_actions(infos, rng, env.agents))


@pytest.mark.parametrize("config", [{}, {"n_agents": 9, "discussion_every": 1}])
def test_a_lone_learners_vector_is_read_slot_by_slot_and_equals_the_pooled_one(config):
    """With one learner (the single-agent view's setting) its vector is read slot by slot (`encode_alone`), with
    several gathered from the step's pool (`encode`): the same vector at every step of the same play."""
    assert check_lone_learner_vectors(ENV, "trader_2", range(2), **config) > 0


def test_a_public_part_that_can_change_is_read_afresh_each_time():
    """A view whose public part is a plain dict (not the env's read-only one) is not pooled: changing it in place
    changes the next vector."""
    env, _, infos = numeric()
    env.step({a: index("invest group max") for a in env.agents})
    view = copy.deepcopy(env._view("trader_1"))
    view["public"] = dict(view["public"])
    view["public"]["balances"] = dict(view["public"]["balances"])
    before = encode(view, env.config)
    view["public"]["balances"]["trader_2"] += 1000
    after = encode(view, env.config)
    assert not np.array_equal(before, after)
    assert np.array_equal(after, pack(features(env.config), encode_values(view, env.config)))


def test_vector_ignores_hidden_state():
    """With hidden balances, another trader's money changes nothing in trader_1's vector."""
    env, _, infos = numeric(show_balances=False)
    env.step({a: index("invest group max") for a in env.agents})
    before = env._encode(env._view("trader_1"))
    env.balances["trader_2"] += 1000
    env._refresh()
    assert np.array_equal(before, env._encode(env._view("trader_1")))
    shown, _, _ = numeric()
    shown.step({a: index("invest group max") for a in shown.agents})
    seen = shown._encode(shown._view("trader_1"))
    shown.balances["trader_2"] += 1000
    shown._refresh()
    assert not np.array_equal(seen, shown._encode(shown._view("trader_1")))  # shown balances are encoded


def test_hand_checked_slots_after_a_round_and_a_discussion():
    env, observations, _ = numeric(rounds=6, discussion_every=1)
    cfg = env.config
    first = observations["trader_1"]["observation"]
    assert list(block(cfg, first, "phase")) == [1, 0, 0]
    assert list(block(cfg, first, "own_last_choice")) == [1, 0, 0, 0]  # no round yet
    assert block(cfg, first, "invest_max")[0] == 1.0 and block(cfg, first, "can_invest")[0] == 1.0
    env.step({"trader_1": "invest group 100", "trader_2": "invest individual 50", "trader_3": "wait"})
    # pool 100, tripled 300, 100 each: trader_1 earns 0, trader_2 earns 150 (the bonus: 90), trader_3 100
    values = encode_values(env._view("trader_1"), cfg)
    assert values["phase"] == [0.0, 1.0, 0.0]
    assert values["round"] == pytest.approx(1 / 6)
    assert values["discussion_turn"] == pytest.approx(1 / 3)
    assert values["own_last_choice"] == [0, 0, 0, 1] and values["own_last_amount"] == 1.0
    assert values["own_last_earnings"] == 0.0 and values["own_last_bonus"] == 0.0
    assert values["others_last_choice"] == [0, 0, 1, 0, 0, 1, 0, 0]  # trader_2 individual, trader_3 wait
    assert values["others_last_amount"] == [0.5, 0.0]
    assert values["others_last_bonus"] == [0.0, 0.0]  # no bonus in round 1
    assert values["others_group_fraction"] == 0.0
    assert values["last_pool"] == pytest.approx(100 / 300) and values["last_pool_share"] == pytest.approx(100 / 300)
    assert values["can_invest"] == 0.0 and values["invest_max"] == 0.0  # a discussion phase
    assert values["balances_shown"] == 1.0
    assert values["money_log"] == pytest.approx(np.log1p(200) / np.log1p(200 + 6 * (100 * (3 + 1) + 90)))
    for agent in ("trader_2", "trader_3"):
        assert encode_values(env._view(agent), cfg)["others_last_choice"][:4] == [0, 0, 0, 1]  # trader_1 comes first
    env.step({"trader_1": "wait", "trader_2": f"say {MESSAGES[0]}", "trader_3": "say hello there"})
    values = encode_values(env._view("trader_1"), cfg)
    assert values["new_messages"] == [1, 0, 0, 0, 0, 0, 0, 1]
    assert values["recent_messages"] == [1, 0, 0, 0, 0, 0, 0, 1]
    mine = encode_values(env._view("trader_2"), cfg)
    assert mine["new_messages"] == [0, 0, 0, 0, 0, 0, 0, 1]  # its own message is not another trader's
    env.step({a: "wait" for a in env.agents})
    env.step({a: "wait" for a in env.agents})
    values = encode_values(env._view("trader_1"), cfg)  # round 2's decision: recent messages are not shown
    assert values["phase"] == [1.0, 0.0, 0.0] and values["recent_messages"] == [0.0] * 8


@pytest.mark.parametrize("preset, share, earned", [("group_size_9", 900, 8.0), ("group_size_9+split_among_all", 300, 2.0)])
def test_the_largest_pool_share_fits_the_scales(preset, share, earned):
    # every trader pooling $100: the largest share, and earnings at the top of their range
    env, _, _ = numeric(preset=preset)
    cfg = env.config
    env.step({a: "invest group 100" for a in env.agents})
    values = encode_values(env._view("trader_1"), cfg)
    assert values["last_pool_share"] == 1.0 and values["last_pool"] == 1.0
    assert values["own_last_earnings"] == earned == (share - 100) / 100
    earnings = next(f for f in features(cfg) if f.name == "own_last_earnings")
    assert earnings.high == share / 100 + 1  # the largest share plus the gain on an individual $100
    assert values["money"] <= 1.0 and values["money"] == pytest.approx((200 + share - 100) / (200 + 30 * (share + 100 + 90)))  # no bonus in round 1


def test_rejected_last_action_is_encoded():
    env, _, _ = numeric()
    env.step({"trader_1": "invest group 500", "trader_2": "wait", "trader_3": "wait"})
    assert encode_values(env._view("trader_1"), env.config)["last_action_rejected"] == 1.0
    assert encode_values(env._view("trader_2"), env.config)["last_action_rejected"] == 0.0


# ---------------------------------------------------------------------- actions
def test_catalogue_is_fixed_and_the_same_for_every_trader_and_condition():
    labels = catalogue(DayTraderConfig())
    assert labels[0] == NOOP and len(labels) == 14
    for preset in PRESETS:
        env = teamenvs.make(ENV, preset=preset, action_type="discrete")
        assert env.interface.labels == labels
        assert {env.action_space(a).n for a in env.possible_agents} == {len(labels)}


def test_amount_levels():
    assert [level_amount(15, 100, q) for q in range(5)] == [15, 36, 58, 79, 100]
    assert [level_amount(15, 15, q) for q in range(5)] == [15] * 5
    assert [level_amount(15, 47, q) for q in range(5)] == [15, 23, 31, 39, 47]


def test_commands_parse_to_themselves_in_their_situation():
    rng = np.random.default_rng(0)
    for preset in ("baseline", "group_size_6"):
        env = teamenvs.make(ENV, preset=preset, obs_type="vector", action_type="discrete")
        observations, infos = env.reset(seed=1)
        seen = 0
        while env.agents:
            for agent in env.agents:
                seen += len(marked_commands(env, agent, infos[agent], command_for))
            actions = random_masked_actions(infos, rng, env.agents)
            observations, _, _, _, infos = env.step(actions)
        assert seen > 100


def test_noop_and_what_is_available_when():
    env, observations, infos = numeric(starting_money=20)
    mask = infos["trader_1"]["action_mask"]
    assert mask.tolist() == [1] * 11 + [0] * 3  # a decision: wait and every investment level, no messages
    assert env.action_text("trader_1", 0) == "wait"
    assert env.action_text("trader_1", index("invest group max")) == "invest group 20"
    assert env.action_text("trader_1", index("invest group 50%")) == "invest group 18"
    assert env.action_text("trader_1", index("say I will invest in the group")) is None
    _, _, infos = numeric(starting_money=10)
    assert infos["trader_1"]["action_mask"].tolist() == [1] + [0] * 13  # below the minimum investment: only wait


def test_messages_only_in_discussions_when_talking_is_allowed():
    for config, expected in (({}, [1, 1, 1]), ({"communication": False}, None), ({"min_steps_between_messages": 5}, [1, 1, 1])):
        env, _, infos = numeric(rounds=6, discussion_every=1, **config)
        assert infos["trader_1"]["action_mask"][-3:].tolist() == [0, 0, 0]
        _, _, _, _, infos = env.step({a: index("invest group max") for a in env.agents})
        if expected is None:  # no discussion phases at all without communication
            assert infos["trader_1"]["view"]["phase"] == "decision"
            continue
        mask = infos["trader_1"]["action_mask"]
        assert mask.tolist() == [1] + [0] * 10 + expected
        _, _, _, _, infos = env.step({a: index(f"say {MESSAGES[0]}") for a in env.agents})
        assert all(infos[a]["last_action"]["ok"] for a in env.agents)
        bandwidth = bool(config)
        assert infos["trader_1"]["action_mask"][-3:].tolist() == ([0, 0, 0] if bandwidth else [1, 1, 1])


def test_refusal_is_the_rule_of_apply():
    cfg = DayTraderConfig()
    assert investment_refusal(Choice(WAIT), 0, cfg) is None
    assert investment_refusal(Choice(GROUP, 15), 100, cfg) is None
    assert investment_refusal(Choice(GROUP, 101), 100, cfg) is not None
    assert investment_refusal(Choice(INDIVIDUAL, 14), 100, cfg) is not None
    assert investment_refusal(Choice(INDIVIDUAL, 15), 14, cfg) is not None
    env, _, _ = numeric(starting_money=40)
    well_formed = Action("invest group", {"amount": 41}, "invest group 41")
    assert env._refusal("trader_1", well_formed) is not None
    assert env._refusal("trader_1", Action("invest group", {"amount": 40}, "invest group 40")) is None
    assert not env.accepts("trader_1", "invest group 41") and env.accepts("trader_1", "invest group 40")


# ---------------------------------------------------------------------- exact masks
def test_exact_masks_over_many_random_masked_in_actions():
    """60,000 masked-in actions (about 15 s) over every preset, two odd configs and many seeds:
    not one is refused, and every observation lies in its space."""
    start = time.perf_counter()
    checked = 0
    presets = list(PRESETS)
    extra = [{"starting_money": 30, "rounds": 12, "discussion_every": 2, "max_words": 3, "n_agents": 2},
             {"show_balances": False, "n_agents": 4, "min_investment": 40}]
    runs = [{"preset": p} for p in presets] + extra
    seed = 0
    while checked < 60_000:
        config = runs[seed % len(runs)]
        env = teamenvs.make(ENV, obs_type="vector", action_type="discrete", **config)
        rng = np.random.default_rng(seed)
        observations, infos = env.reset(seed=seed)
        space = env.observation_space(env.possible_agents[0])["observation"]
        while env.agents:
            actions = {}
            for agent in env.agents:
                assert space.contains(observations[agent]["observation"])
                allowed = np.flatnonzero(infos[agent]["action_mask"])
                actions[agent] = int(allowed[rng.integers(len(allowed))])
            observations, _, _, _, infos = env.step(actions)
            for agent in actions:
                assert infos[agent]["last_action"]["ok"], (seed, agent, actions[agent], infos[agent]["last_action"])
                checked += 1
        seed += 1
    print(f"{checked} masked-in actions in {seed} episodes, {time.perf_counter() - start:.1f} s")



# ---------------------------------------------------------------------- logs and strategies
def test_discrete_episode_log_replays_with_command_texts(tmp_path: Path):
    env = teamenvs.make(ENV, obs_type="vector", action_type="discrete")
    rng = np.random.default_rng(5)
    path = tmp_path / "discrete.jsonl"
    with EpisodeRecorder(path) as recorder, env.recording(recorder):
        observations, infos = env.reset(seed=5)
        while env.agents:
            observations, _, _, _, infos = env.step(
                random_masked_actions(infos, rng, env.agents))
    records = read_log(path)
    steps = [r for r in records if r.get("type") == "step"]
    assert len(steps) == len(schedule(DayTraderConfig()))
    texts = {entry["raw_action"] for r in steps for entry in r["agents"].values()}
    assert all(isinstance(t, str) for t in texts) and any(t.startswith("invest ") for t in texts)
    replay = load_replay(path)
    assert replay.sim.warning is None and replay.sim.verified == len(steps)


def play(learner: str, kind: str, **config) -> float:
    """The learner's (trader_1's) total reward (money won) when it always picks `learner` (else the no-op) against `kind`."""
    env = teamenvs.make(ENV, obs_type="vector", action_type="discrete", **config)
    policies = make_policies(env, kind, seed=0)
    observations, infos = env.reset(seed=0)
    while env.agents:
        actions = {a: policies[a].act(None, infos[a]) for a in env.agents if a != "trader_1"}
        mask = infos["trader_1"]["action_mask"]
        actions["trader_1"] = index(learner) if mask[index(learner)] else 0
        observations, _, _, _, infos = env.step(actions)
    return infos["trader_1"]["view"]["money"] - env.config.starting_money


def test_a_learner_can_express_the_best_fixed_strategy_against_tit_for_tat():
    assert play("invest group max", "tit_for_tat") == pytest.approx(6870)
    assert play("invest group max", "tit_for_tat") > play("invest individual max", "tit_for_tat")


def test_max_episode_steps_bounds_the_default_episode():
    assert PARADIGM.max_episode_steps == len(schedule(DayTraderConfig()))
