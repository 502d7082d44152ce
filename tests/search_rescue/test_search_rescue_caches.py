"""Search and rescue's view caches give what building the view afresh gives.

The view keeps parts per room and per agent (`view._scene`, `view._part`), each agent's local map per cell while
what it knows of the layout is unchanged (`rules.local_map`), its drawings of the mapped rooms (`rules._sketch`,
`rules._marked_sketch`), scores and route maps, and the encoder its nearest-victim ranking per cell. None of them may
ever show an agent something stale: at every step of random masked-in play (moves, `go to`, pick-ups, clearing,
messages), every agent's text and vector equal those built from the same state with every cache of the episode empty.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import teamenvs
from teamenvs.search_rescue.rules import Rescue

# the fields of `Rescue` that only remember what was worked out from the others (empty: nothing remembered)
CACHES = {"_routes": dict, "_named": dict, "_sketch": dict, "_local": dict, "_layout": bytes, "_score": dict,
          "_marked": dict, "_parts": dict, "_notes": dict}


def test_the_cache_fields_are_every_private_field():
    """A cache added to `Rescue` is emptied by the test below too (else it would go unchecked)."""
    private = {f.name for f in dataclasses.fields(Rescue) if f.name.startswith("_")}
    assert private == set(CACHES)


def cold_observation(env, agent: str) -> tuple[str, np.ndarray]:
    """`agent`'s text and vector now, built from the episode's state with every cache empty."""
    warm = env.world
    env.world = dataclasses.replace(warm, **{name: kind() for name, kind in CACHES.items()})
    try:
        v = env._view(agent)
        return str(env._render_view(v)), np.asarray(env._encode(v), dtype=np.float32)
    finally:
        env.world = warm


@pytest.mark.parametrize("preset", ["easy", "same_room", "full_map", "round_robin"])
def test_views_with_the_episodes_caches_equal_views_built_afresh(preset):
    env = teamenvs.make("search_rescue_v0", preset=preset, obs_type="both", action_type="discrete", max_steps=160)
    rng = np.random.default_rng(7)
    compared = local_maps = 0
    for seed in (3, 4):
        obs, _ = env.reset(seed=seed)
        while env.agents:
            for agent in env.agents:
                text, vector = cold_observation(env, agent)
                assert obs[agent]["text"] == text, (preset, seed, env.step_count, agent)
                assert np.array_equal(obs[agent]["vector"], vector), (preset, seed, env.step_count, agent)
                compared += 1
            actions = {}
            for agent in env.agents:
                allowed = np.flatnonzero(obs[agent]["action_mask"])
                actions[agent] = int(allowed[rng.integers(len(allowed))])
            obs, *_ = env.step(actions)
        local_maps += sum(len(kept[1]) for kept in env.world._local.values())
    assert compared > 500
    assert local_maps > 10  # the per-cell local maps were in use (agents came back to cells they had seen)
