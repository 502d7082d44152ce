"""`commons_v0` with numeric observations and discrete actions (`teamenvs.core.rl`).

The encoder reads the fisher's view only, with hand-checked slots; the catalogue is fixed and
the same for every fisher, and its commands parse; masks are exact over many masked-in random
actions (zero rejections); discrete logs replay; a learner can reproduce the baselines' choices.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

import numpy as np
import pytest

import teamenvs
from teamenvs.commons import PARADIGM
from teamenvs.commons.commands import catalogue, command_for
from teamenvs.commons.config import PRESETS, CommonsConfig
from teamenvs.commons.rules import request_refusal, schedule
from teamenvs.commons.view import MESSAGES, encode, encode_values, features
from teamenvs.core.commands import Action
from teamenvs.core.policy import make_policies
from teamenvs.core.recorder import EpisodeRecorder, read_log
from teamenvs.core.rl import NOOP, feature_table, pack
from teamenvs.replay import load_replay
from teamenvs.testing import check_lone_learner_vectors, marked_commands, masked_play, random_masked_actions

ENV = "commons_v0"


def numeric(**config):
    env = teamenvs.make(ENV, obs_type="vector", action_type="discrete", **config)
    observations, infos = env.reset(seed=0)
    return env, observations, infos


def index(label: str) -> int:
    return catalogue(CommonsConfig()).index(label)


# ---------------------------------------------------------------------- observation
def test_feature_table_is_documented_and_small():
    table = features(CommonsConfig())
    assert all(f.doc for f in table)
    assert len({f.name for f in table}) == len(table)
    assert sum(f.size for f in table) == 71
    assert sum(f.size for f in features(CommonsConfig(n_agents=100))) < 2000
    assert "| 0-2 | `phase` |" in feature_table(table)


def test_encode_equals_core_pack_and_equal_views_give_equal_vectors():
    env, observations, infos = numeric(preset="universalization")
    rng = np.random.default_rng(3)
    for _ in range(20):
        if not env.agents:
            break
        for agent in env.agents:
            view = infos[agent]["view"]
            vector = encode(view, env.config)
            assert np.array_equal(vector, pack(features(env.config), encode_values(view, env.config)))
            assert np.array_equal(vector, encode(copy.deepcopy(view), env.config))
            assert np.array_equal(vector, observations[agent]["observation"])
        observations, _, _, _, infos = env.step(random_masked_actions(infos, rng))


@pytest.mark.parametrize("preset", ["baseline", "universalization"])
def test_a_lone_learners_vector_is_read_slot_by_slot_and_equals_the_pooled_one(preset):
    """With one learner (the single-agent view's setting) its vector is read slot by slot (`encode_alone`), with
    several gathered from the step's pool (`encode`): the same vector at every step of the same play."""
    assert check_lone_learner_vectors(ENV, "fisher_2", range(3), preset=preset) > 0


def test_vector_ignores_hidden_state():
    """Other fishers' total catches and the tie-break generator are not in a fisher's vector."""
    env, _, _ = numeric()
    env.step({a: index("harvest the sustainable share") for a in env.agents})
    before = env._encode(env._view("fisher_1"))
    env.total_catch["fisher_2"] += 50
    env._rng = np.random.default_rng(123)
    assert np.array_equal(before, env._encode(env._view("fisher_1")))
    env.total_catch["fisher_1"] += 50  # its own total is shown
    assert not np.array_equal(before, env._encode(env._view("fisher_1")))


def test_hand_checked_slots():
    env, observations, infos = numeric(n_agents=3, preset="universalization")
    cfg = env.config
    values = encode_values(infos["fisher_1"]["view"], cfg)
    assert values["phase"] == [1.0, 0.0, 0.0] and values["month"] == pytest.approx(1 / 12)
    assert values["stock"] == 1.0 and values["sustainable_share"] == pytest.approx(16 / 100)  # floor(50 / 3)
    assert values["last_month_known"] == 0.0 and values["last_mean_request"] == 0.0
    # the hint: share 16 (lake then 2 * 52 -> 100), the most each can take safely (100 - 5) // 3 = 31 (lake 2 * 7 = 14)
    assert values["hint"] == pytest.approx([1, 0.16, 1.0, 0, 0.31, 0.14, 0])
    env.step({"fisher_1": "harvest 16", "fisher_2": "harvest 40", "fisher_3": "wait"})
    values = encode_values(env._view("fisher_1"), cfg)
    assert values["phase"] == [0.0, 1.0, 0.0] and values["discussion_turn"] == pytest.approx(1 / 3)
    assert values["last_lake"] == pytest.approx([1.0, 0.44, 0.88])  # 100, 44 left, regrew to 88
    assert values["stock"] == pytest.approx(0.88) and values["total_catch"] == pytest.approx(16 / 1200)
    assert (values["own_last_request"], values["own_last_catch"], values["own_last_over_share"]) == pytest.approx((0.16, 0.16, 0))
    assert values["others_last_request"] == pytest.approx([0.4, 0.0])
    assert values["others_last_catch"] == pytest.approx([0.4, 0.0])
    assert values["others_last_over_share"] == [1.0, 0.0]
    assert values["last_mean_request"] == pytest.approx(0.19)  # (16 + 40 + 0) / 3 = 18.7 -> 19
    assert encode_values(env._view("fisher_3"), cfg)["others_last_request"] == pytest.approx([0.16, 0.4])  # fisher_1 first
    env.step({"fisher_1": "wait", "fisher_2": f"say {MESSAGES[1]}", "fisher_3": "tell fisher_1 no way"})
    values = encode_values(env._view("fisher_1"), cfg)
    assert values["new_messages"] == [0, 1, 0, 0, 0, 0, 0, 1]
    assert values["recent_messages"] == [0, 1, 0, 0, 0, 0, 0, 1]
    env.step({a: "wait" for a in env.agents})
    env.step({a: "wait" for a in env.agents})
    values = encode_values(env._view("fisher_1"), cfg)  # month 2's harvest: the conversation is not shown
    assert values["phase"] == [1.0, 0.0, 0.0] and values["recent_messages"] == [0.0] * 8


def test_hint_is_zero_unless_shown():
    _, _, infos = numeric()
    assert encode_values(infos["fisher_1"]["view"], CommonsConfig())["hint"] == [0.0] * 7


# ---------------------------------------------------------------------- actions
def test_catalogue_is_fixed_and_the_same_for_every_fisher_and_condition():
    labels = catalogue(CommonsConfig())
    assert labels[0] == NOOP and len(labels) == 12
    for preset in PRESETS:
        env = teamenvs.make(ENV, preset=preset, action_type="discrete")
        assert env.interface.labels == labels
        assert {env.action_space(a).n for a in env.possible_agents} == {len(labels)}


def test_harvest_levels_in_a_view():
    env, _, infos = numeric()
    texts = [env.action_text("fisher_1", i) for i in range(len(env.interface.labels))]
    assert texts == ["wait", "harvest 0", "harvest 10", "harvest 20", "harvest 10", "harvest 25", "harvest 50",
                     "harvest 100", None, None, None, None]  # no last month yet; no messages in a harvest
    env.step({a: "harvest 7" if a == "fisher_1" else "harvest 12" for a in env.agents})  # 55 left -> 100
    env.step({a: 0 for a in env.agents})  # into the discussion, then past it
    assert infos["fisher_1"]["action_mask"][0] == 1
    for _ in range(2):
        env.step({a: 0 for a in env.agents})
    assert env.action_text("fisher_1", index("harvest last month's mean request")) == "harvest 11"  # 55 / 5 = 11


def test_commands_parse_to_themselves_in_their_situation():
    rng = np.random.default_rng(0)
    seen = 0
    for preset in ("baseline", "universalization"):
        env = teamenvs.make(ENV, preset=preset, obs_type="vector", action_type="discrete")
        for seed, observations, infos in masked_play(env, range(5), rng):
            for agent in env.agents:
                seen += len(marked_commands(env, agent, infos[agent], command_for))
    assert seen > 200


def test_messages_only_in_discussions_when_talking_is_allowed():
    for config in ({}, {"communication": False}, {"min_steps_between_messages": 5}):
        env, _, infos = numeric(**config)
        assert infos["fisher_1"]["action_mask"][-3:].tolist() == [0, 0, 0]
        _, _, _, _, infos = env.step({a: index("harvest the sustainable share") for a in env.agents})
        if config.get("communication") is False:
            assert infos["fisher_1"]["view"]["phase"] == "harvest"
            continue
        assert infos["fisher_1"]["action_mask"].tolist() == [1] + [0] * 8 + [1, 1, 1]
        _, _, _, _, infos = env.step({a: index(f"say {MESSAGES[0]}") for a in env.agents})
        assert all(infos[a]["last_action"]["ok"] for a in env.agents)
        assert infos["fisher_1"]["action_mask"][-3:].tolist() == ([0, 0, 0] if config else [1, 1, 1])


def test_refusal_is_the_rule_of_apply():
    assert request_refusal(0, 0) is None and request_refusal(100, 100) is None
    assert request_refusal(101, 100) is not None and request_refusal(-1, 100) is not None
    env, _, _ = numeric()
    assert env._refusal("fisher_1", Action("harvest", {"amount": 101}, "harvest 101")) is not None
    assert env._refusal("fisher_1", Action("harvest", {"amount": 100}, "harvest 100")) is None
    assert not env.accepts("fisher_1", "harvest 101") and env.accepts("fisher_1", "harvest 100")


# ---------------------------------------------------------------------- exact masks
def test_exact_masks_over_many_random_masked_in_actions():
    """60,000 masked-in actions (about 15 s) over every preset, odd configs and many seeds: not one
    is refused, and every observation lies in its space. (Random harvests collapse the lake early.)"""
    start = time.perf_counter()
    checked = 0
    runs = [{"preset": p} for p in PRESETS] + [
        {"n_agents": 2, "capacity": 7, "initial_stock": 7, "collapse_threshold": 0, "months": 20, "max_words": 2},
        {"n_agents": 8, "regrowth_factor": 3, "discussion_every": 3, "universalization_hint": True},
    ]
    seed = 0
    while checked < 60_000:
        env = teamenvs.make(ENV, obs_type="vector", action_type="discrete", **runs[seed % len(runs)])
        rng = np.random.default_rng(seed)
        observations, infos = env.reset(seed=seed)
        space = env.observation_space(env.possible_agents[0])["observation"]
        while env.agents:
            actions = {}
            for agent in env.agents:
                assert space.contains(observations[agent]["observation"])
                allowed = np.flatnonzero(infos[agent]["action_mask"])
                # half the time the no-op or a small level, so that lakes last
                pick = rng.integers(len(allowed)) if rng.random() < 0.5 else rng.integers(min(3, len(allowed)))
                actions[agent] = int(allowed[pick])
            observations, _, _, _, infos = env.step(actions)
            for agent in actions:
                assert infos[agent]["last_action"]["ok"], (seed, agent, actions[agent], infos[agent]["last_action"])
                checked += 1
        seed += 1
    print(f"{checked} masked-in actions in {seed} episodes, {time.perf_counter() - start:.1f} s")


# ---------------------------------------------------------------------- logs and strategies
def test_discrete_episode_log_replays_with_command_texts(tmp_path: Path):
    env = teamenvs.make(ENV, obs_type="vector", action_type="discrete")
    path = tmp_path / "discrete.jsonl"
    rng = np.random.default_rng(5)
    labels = [index("harvest the sustainable share"), index("harvest 10% of the lake"), 0] + \
        [index(f"say {m}") for m in MESSAGES]
    with EpisodeRecorder(path) as recorder, env.recording(recorder):
        observations, infos = env.reset(seed=5)
        while env.agents:
            actions = {}
            for a in env.agents:
                allowed = [i for i in labels if infos[a]["action_mask"][i]]
                actions[a] = int(rng.choice(allowed))
            observations, _, _, _, infos = env.step(actions)
    steps = [r for r in read_log(path) if r.get("type") == "step"]
    assert len(steps) == len(schedule(CommonsConfig()))
    texts = {entry["raw_action"] for r in steps for entry in r["agents"].values()}
    assert all(isinstance(t, str) for t in texts) and any(t.startswith("harvest ") for t in texts)
    assert any(t.startswith("say ") for t in texts)
    replay = load_replay(path)
    assert replay.sim.warning is None and replay.sim.verified == len(steps)


def test_a_learner_can_reproduce_the_sustainable_and_mimic_baselines():
    def catch(learner, kind: str) -> tuple[int, list[int]]:
        env = teamenvs.make(ENV, obs_type="vector", action_type="discrete")
        policies = make_policies(env, kind, seed=0)
        observations, infos = env.reset(seed=0)
        requests = []
        while env.agents:
            actions = {a: policies[a].act(None, infos[a]) for a in env.agents}
            if learner is not None:
                actions["fisher_1"] = learner(infos["fisher_1"])
            observations, _, _, _, infos = env.step(actions)
            if env.last_month is not None and env.last_month[0] > len(requests):
                requests.append(env.last_month[1].requests["fisher_1"])
        return env.total_catch["fisher_1"], requests

    def sustainable(info):
        i = index("harvest the sustainable share")
        return i if info["action_mask"][i] else 0

    def mimic(info):
        i = index("harvest last month's mean request")
        return i if info["action_mask"][i] else sustainable(info)

    assert catch(sustainable, "mimic")[0] == 120  # 10 tons a month for 12 months
    assert catch(sustainable, "sustainable") == catch(None, "sustainable")
    assert catch(mimic, "mimic") == catch(None, "mimic")


def test_max_episode_steps_bounds_the_default_episode():
    assert PARADIGM.max_episode_steps == len(schedule(CommonsConfig()))
