"""`hidden_profile_v0` with numeric observations and discrete actions (`teamenvs.core.rl`): the feature
table, the encoder (view only, hand-checked slots), the catalogue and its commands, exact masks on every
preset, and a discrete team that pools facts reaching the best candidate."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import teamenvs
from teamenvs.core.rl import NOOP, feature_table, pack
from teamenvs.hidden_profile.commands import NEW_FACT, catalogue
from teamenvs.hidden_profile.config import PRESETS, HiddenProfileConfig
from teamenvs.hidden_profile.view import MAX_FACTS, encode, encode_values, features
from teamenvs.testing import check_exact_masks, random_masked_actions

ENV = "hidden_profile_v0"
LABELS = catalogue(HiddenProfileConfig())


def numeric(**config):
    env = teamenvs.make(ENV, obs_type="vector", action_type="discrete", **config)
    observations, infos = env.reset(seed=0)
    return env, observations, infos


def test_feature_table_is_documented_and_fixed():
    table = features(HiddenProfileConfig())
    assert all(f.doc for f in table) and len({f.name for f in table}) == len(table)
    assert sum(f.size for f in table) == 4 + 1 + 1 + 5 + 6 + 5 * 6 + 1 + 4 * MAX_FACTS + 1 + 5 == 150
    assert features(HiddenProfileConfig(profile="generated", candidates=4, n_agents=4)) == table
    assert "| 0-3 | `phase` |" in feature_table(table)


def test_catalogue_is_a_vote_per_letter_then_facts():
    assert LABELS[:7] == (NOOP, "decide A", "decide B", "decide C", "decide D", "decide E", NEW_FACT)
    assert LABELS[7] == "share fact 1" and LABELS[-1] == f"share fact {MAX_FACTS}" and len(LABELS) == 7 + MAX_FACTS


def test_masks_follow_the_phase_and_the_document():
    env, observations, infos = numeric()
    mask = infos["member_1"]["action_mask"]
    assert mask[:7].tolist() == [1, 1, 1, 1, 0, 0, 0] and mask[7:].sum() == 0  # votes for A-C only
    assert env.action_text("member_1", 3) == "decide C"
    _, _, _, _, infos = env.step({a: 3 for a in env.agents})
    mask = infos["member_1"]["action_mask"]
    n = len(infos["member_1"]["view"]["document"])
    assert mask[1:6].sum() == 0 and mask[6] == 1 and mask[7:7 + n].all() and not mask[7 + n:].any()
    first = infos["member_1"]["view"]["document"][0]
    assert env.action_text("member_1", 7) == f"say Candidate {first[0]} {first[1]}: {first[2]}"
    assert env.action_text("member_1", 6) == env.action_text("member_1", 7)  # nothing discussed yet


def test_encoder_is_the_view_packed_and_ignores_hidden_state():
    env, observations, infos = numeric()
    rng = np.random.default_rng(0)
    for _ in range(12):
        for a in env.agents:
            view = infos[a]["view"]
            vector = encode(view, env.config)
            assert np.array_equal(vector, pack(features(env.config), encode_values(view, env.config)))
            assert np.array_equal(vector, encode(copy.deepcopy(view), env.config))
            assert np.array_equal(vector, observations[a]["observation"])
        observations, _, _, _, infos = env.step(random_masked_actions(infos, rng, env.agents))
    base = env.unwrapped
    before = base._encode(base._view("member_1"))
    base.votes["initial"]["member_2"] = "E"  # another member's vote and document are hidden state
    base.documents["member_2"] = ()
    assert np.array_equal(before, base._encode(base._view("member_1")))


def test_encoder_slots_by_hand():
    env, _, infos = numeric()
    values = encode_values(infos["member_1"]["view"], env.config)
    assert values["phase"] == [1.0, 0.0, 0.0, 0.0] and values["candidates"] == [1.0, 1.0, 1.0, 0.0, 0.0]
    # airline member 1: A 5 strengths 2 weaknesses, B 3/1, C 4/2 (one shared, three key facts)
    assert values["own_strengths"][:3] == pytest.approx([0.5, 0.3, 0.4])
    assert values["own_weaknesses"][:3] == pytest.approx([0.2, 0.1, 0.2])
    assert values["own_support"][:3] == pytest.approx([0.3, 0.2, 0.2])
    assert sum(values["fact_present"]) == 17 and values["best_revealed"] == [0.0] * 5
    _, _, _, _, infos = env.step({a: 1 for a in env.agents})
    _, _, _, _, infos = env.step({"member_2": 6, "member_1": 0, "member_3": 0})  # member_2 shares its first new fact
    heard = encode_values(infos["member_1"]["view"], env.config)
    said = infos["member_2"]["view"]["document"][0]
    own = said in infos["member_1"]["view"]["document"]
    assert sum(heard["heard_strengths"]) + sum(heard["heard_weaknesses"]) == (0 if own else 0.1)
    assert sum(heard["fact_discussed"]) == (1 if own else 0)
    assert heard["own_initial_vote"] == [0.0, 1.0, 0.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("preset", list(PRESETS) + ["generated+communication_bandwidth"])
def test_masks_are_exact_on_every_preset(preset):
    assert check_exact_masks(ENV, seed=1, steps=200, preset=preset) > 300


def test_a_discrete_team_sharing_new_facts_reaches_the_best_candidate():
    for preset in ("baseline", "generated"):
        env, observations, infos = numeric(preset=preset)
        best = env.unwrapped.profile.best
        while env.agents:
            actions = {}
            for a in env.agents:
                view = infos[a]["view"]
                if view["phase"] == "discussion":
                    actions[a] = LABELS.index(NEW_FACT) if infos[a]["action_mask"][LABELS.index(NEW_FACT)] else 0
                else:  # vote for the candidate with the most pooled support the vector shows
                    vector = observations[a]["observation"]
                    pooled = vector[sum(f.size for f in features(env.config)[:10]):][:5]
                    letters = [c for c in "ABCDE" if c in view["candidates"]]
                    actions[a] = LABELS.index(f"decide {max(letters, key=lambda c: pooled['ABCDE'.index(c)])}")
            observations, rewards, _, _, infos = env.step(actions)
        assert rewards == {a: 1.0 for a in rewards}, (preset, best)
