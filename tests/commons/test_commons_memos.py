"""The commons' once-a-step parts and formatting memos give what building each view afresh gives.

A step's views share the lake facts and last month's public parts (`once_per_step("facts")`), the env formats
their lines once (`_public_memo`, `_lake_memo`, known again by identity) and works out the sustainable share only
when the stock changes (`_share`). At every step of random play, in every preset, each fisher's observation equals
the text rendered from a view built with the step's parts forgotten and no line memo, and its info's sustainable
share the one worked out from the stock now.

The encoder gathers a fisher's vector from a pool of the slots every fisher of a step shares, worked out once
(`view._step_pool`, found again by the identity of the step's read-only parts and of its values of `STEP_FIELDS`): each
fisher's vector equals its view packed plainly (`encode_values`) and its view encoded with that memo emptied, and a
view that holds the step's parts with other lake values, or a plain (changeable) last month, is not given a pool
worked out before.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import teamenvs
from teamenvs.commons.config import PRESETS
from teamenvs.commons.rules import sustainable_share
from teamenvs.commons import view as commons_view
from teamenvs.commons.view import STEP_FIELDS, encode, encode_values, features, render
from teamenvs.core.rl import pack
from teamenvs.testing import masked_play


def gentle_actions(env, infos, rng):
    """Masked-in random actions, mostly gentle harvests, so that episodes run for months (random harvests collapse the
    lake in the first)."""
    gentle = np.array([not re.search(r"twice|25%|50%|whole", label) for label in env.interface.labels])
    actions = {}
    for agent in env.agents:
        mask = infos[agent]["action_mask"].astype(bool)
        if rng.random() < 0.9 and (mask & gentle).any():
            mask &= gentle
        actions[agent] = int(rng.choice(np.flatnonzero(mask)))
    return actions


def fresh_vector(view, config):
    """`encode` with the encoder's step memo emptied: every slot worked out from the view alone."""
    commons_view._STEP_POOLS.clear()
    return encode(view, config)


def other_values(view):
    """Copies of `view` that hold its shared parts but each hold another value of one of STEP_FIELDS."""
    phases = ("harvest", "discussion", "over")
    for field in STEP_FIELDS:
        value = view[field]
        if field == "phase":
            changed = phases[(phases.index(value) + 1) % 3]
        elif field == "fishers":
            changed = tuple(reversed(value))
        elif type(value) is bool:
            changed = not value
        else:
            changed = value + 1
        yield field, {**view, field: changed}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_vectors_gathered_from_step_pools_equal_vectors_encoded_afresh(preset):
    env = teamenvs.make("commons_v0", preset=preset, obs_type="vector", action_type="discrete")
    config, table = env.config, features(env.config)
    rng = np.random.default_rng(7)
    compared = 0
    for seed, obs, infos in masked_play(env, (0, 1, 2), rng, lambda infos, rng: gentle_actions(env, infos, rng)):
        for agent in obs:
            view = infos[agent]["view"]
            vector = obs[agent]["observation"]
            assert vector.tobytes() == fresh_vector(view, config).tobytes(), (preset, seed, env.step_count, agent)
            assert vector.tobytes() == pack(table, encode_values(view, config)).tobytes(), (preset, seed, env.step_count, agent)
            compared += 1
        view = infos[next(iter(obs))]["view"]
        for field, changed in other_values(view):
            encode(view, config)  # the step's pool is kept again
            assert encode(changed, config).tobytes() == pack(table, encode_values(changed, config)).tobytes(), field
        # the reader's own slots, written in after the gather, are clipped as the vector would be
        huge = {**view, "your_total_catch": 10 * view["months"] * view["capacity"]}
        assert encode(huge, config).tobytes() == pack(table, encode_values(huge, config)).tobytes()
        if view["last_month"] is not None:
            plain = {**view, "last_month": {**view["last_month"], "requests": dict(view["last_month"]["requests"])}}
            before = encode(plain, config)
            plain["last_month"]["stock_before"] = 0  # a changeable last month is read again, not known by its object
            after = encode(plain, config)
            assert after.tobytes() == pack(table, encode_values(plain, config)).tobytes() != before.tobytes()
    assert compared > 100


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("obs_type", ["text", "both"])
def test_observations_with_the_memos_equal_observations_built_afresh(preset, obs_type):
    env = teamenvs.make("commons_v0", preset=preset, obs_type=obs_type, action_type="discrete")
    rng = np.random.default_rng(5)
    compared = 0
    phases = set()
    for seed, obs, infos in masked_play(env, (0, 1, 2), rng, lambda infos, rng: gentle_actions(env, infos, rng)):
        phases.add("over" if env.over else env.phase.kind)
        fresh_share = sustainable_share(env.stock, env.config.n_agents, env.config.regrowth_factor)
        for agent in obs:  # (after the last step, the final observations of the agents that were in it)
            text = obs[agent]["text"] if obs_type == "both" else obs[agent]
            env.renew_step_parts()  # the step's shared parts are built again, from the state as it is
            assert text == render(env._view(agent)), (preset, seed, env.step_count, agent)
            assert infos[agent]["sustainable_share"] == fresh_share
            compared += 1
    assert compared > 100
    assert {"harvest", "over"} | ({"discussion"} if env.config.communication else set()) <= phases
