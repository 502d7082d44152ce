"""The job fair's masks and vectors with its memos equal those worked out afresh.

A view's command table is a function of its table key alone (`commands._table_key`: what the table reads of the
view), kept per key (`commands._table`) and per view (`commands._last`); the key is the view's mask key, so the core
keeps one mask per situation and key. At every step of random masked-in play, in every preset, each acting agent's
mask equals the one worked out with no memoized mask, no table memo and no view memo, and its mask key equals the
table key of a copy of its view.

The encoder keeps each agent's template of the slots that stay put (`_Tables.statics`), the step's companies
(`view._seen_companies`) and what it reads of transcripts and last-action lines (`view._interview_slots`,
`view._named`, `view._last`): every agent's vector equals its view encoded with all of them emptied. It writes each
ratio clipped to [0, 1] as it goes (`view._unit`) instead of clipping the vector: out-of-range ratios give the values
np.clip gives.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import teamenvs
from teamenvs.job_fair import commands
from teamenvs.job_fair import view as fair_view
from teamenvs.job_fair.config import PRESETS
from teamenvs.job_fair.layout import layout
from teamenvs.job_fair.view import blocks, encode
from teamenvs.testing import mask_worked_out_afresh, masked_play


def forget_tables() -> None:
    """Empty the command tables' memos: per key and per view."""
    commands._table.cache_clear()
    commands._last[:] = [None, None, None]


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_masks_with_the_memos_equal_masks_worked_out_afresh(preset):
    env = teamenvs.make("job_fair_v0", preset=preset, obs_type="vector", action_type="discrete").unwrapped
    rng = np.random.default_rng(11)
    compared, seen, again = 0, set(), 0
    for seed, _, infos in masked_play(env, range(3 if preset != "large_fair" else 1), rng):
        for agent in env.agents:
            if not infos[agent]["needs_action"]:
                continue
            view = infos[agent]["view"]
            key = commands.mask_key(view)
            assert key == commands._table_key(copy.deepcopy(view)), (preset, seed, env.step_count, agent)
            forget_tables()
            mask, _ = mask_worked_out_afresh(env, agent)
            assert np.array_equal(infos[agent]["action_mask"], mask), (preset, seed, env.step_count, agent)
            situation = (env._situation_key(agent), key)
            again += situation in seen  # the same situation and key as an earlier view: its mask came from the memo
            seen.add(situation)
            compared += 1
    assert compared > 50 and again > 10


def cold_vector(view, config):
    """`view` encoded with every memo of the encoder empty."""
    for memo in (fair_view._interview_slots, fair_view._named, fair_view._last):
        memo.cache_clear()
    fair_view._tables(layout(config)).statics.clear()
    fair_view._seen_companies[:] = [None, 0, (), {}]
    return encode(copy.deepcopy(view), config)


@pytest.mark.parametrize("preset", ["S3", "S4", "large_fair", "no_interviews"])
def test_vectors_with_the_memos_equal_vectors_encoded_afresh(preset):
    env = teamenvs.make("job_fair_v0", preset=preset, obs_type="vector", action_type="discrete").unwrapped
    rng = np.random.default_rng(5)
    compared = interviews = 0
    for seed, observations, infos in masked_play(env, range(2 if preset != "large_fair" else 1), rng):
        for agent in env.agents:
            view = infos[agent]["view"]
            cold = cold_vector(view, env.config)
            assert np.array_equal(observations[agent]["observation"], cold), (preset, seed, env.step_count, agent)
            compared += 1
            interviews += view["interview"] is not None
    assert compared > 200 and (interviews > 20 or preset == "no_interviews")


def test_ratios_out_of_range_are_clipped_as_np_clip_would():
    env = teamenvs.make("job_fair_v0", preset="S4", max_applications=3, obs_type="vector").unwrapped
    _, infos = env.reset(seed=1)
    config, lay = env.config, layout(env.config)
    seeker = infos["seeker_1"]["view"]
    assert seeker["phase"] == "applications"
    cases = [
        ({"step": 10 * lay.max_steps}, "step", 1.0),
        ({"step": 3, "phase_start": 3 + 2 * lay.phase_steps}, "phase_left", 1.0),  # a phase that begins later
        ({"step": 3 + 5 * lay.phase_steps, "phase_start": 3}, "phase_left", 0.0),  # long past its deadline
        ({"max_applications": 5 * lay.companies}, "application_limit", 1.0),
        ({"past_interviews": ({"company": "x"},) * (3 * lay.seekers)}, "past_interviews", 1.0),
    ]
    for change, feature, expected in cases:
        vector = encode({**copy.deepcopy(seeker), **change}, config)
        assert blocks(vector, config)[feature].tolist() == [expected], (change, feature)
        assert vector.min() >= 0.0 and vector.max() <= 1.0
