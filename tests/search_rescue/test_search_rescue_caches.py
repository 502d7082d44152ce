"""Search and rescue's view caches give what building the view afresh gives.

The view keeps parts per room and per agent (`view._scene`, `view._part`), each agent's local map per cell while
what it knows of the layout is unchanged (`rules.local_map`), its drawings of the mapped rooms (`rules._sketch`,
`rules._marked_sketch`), scores and route maps, and the encoder its nearest-victim ranking, the ranking's victims and
its `victims` block per cell; the mask parses commands with parses shared by situations (`commands.parse_in`). None
of them may ever show an agent something stale: at every step of random masked-in play (moves, `go to`, pick-ups,
clearing, messages), every agent's text and vector equal those built from the same state with every cache of the
episode empty, and every acting agent's mask the one worked out from such a view with the plain parser.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import teamenvs
from teamenvs.core.commands import Action, Situation
from teamenvs.search_rescue import commands as commands_module, view as view_module
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


# the module-level caches the mask reads, of the view and the commands (what they hold is worked out again when emptied)
MODULE_CACHES = ((view_module, ("_VICTIMS", "_SUMMARIES", "_ROOM_IDS")), (commands_module, ("_NOW",)))


def cold_mask(env, agent: str) -> np.ndarray:
    """`agent`'s action mask now, worked out label by label from a view built with every cache empty (the episode's
    and the modules', which are put back after), each command read by the plain parser, never a shared parse."""
    warm, kept = env.world, [(module, name, getattr(module, name).copy()) for module, names in MODULE_CACHES for name in names]
    env.world = dataclasses.replace(warm, **{name: kind() for name, kind in CACHES.items()})
    for module, name, _ in kept:
        getattr(module, name).clear()
    try:
        v = env._view(agent)
        situation = env._offered[agent][0]
        mask = np.zeros(len(env.interface.labels), dtype=np.int8)
        for i, label in enumerate(env.interface.labels):
            command = commands_module.command_for(v, label)
            action = commands_module.COMMANDS.parse(command, situation) if command is not None else None
            mask[i] = isinstance(action, Action) and env._refusal(agent, action) is None
        return mask
    finally:
        env.world = warm
        for module, name, entries in kept:
            cache = getattr(module, name)
            cache.clear()
            if isinstance(cache, list):
                cache.extend(entries)
            else:
                cache.update(entries)


@pytest.mark.parametrize("preset", ["easy", "same_room", "interrupt_to_talk"])
def test_masks_with_the_caches_and_shared_parses_equal_masks_worked_out_afresh(preset):
    """The nearest-victim ranking and its actions kept per cell (`view._ranking`, `view.nearest_victims`) and the
    parses shared by situations and episodes (`commands.parse_in`) never offer an agent a stale action or lose one: at
    every step of random masked-in play, every agent that acts has the mask worked out from a view built afresh,
    parsed afresh, and its commands, a `go to` of every room of the map (most of which it cannot name yet) and a victim
    number out of range read as the plain parser reads them."""
    env = teamenvs.make("search_rescue_v0", preset=preset, obs_type="vector", action_type="discrete", max_steps=400)
    rng = np.random.default_rng(11)
    compared = 0
    for seed in (5, 6):
        obs, infos = env.reset(seed=seed)
        while env.agents:
            for agent in env.agents:
                if infos[agent]["needs_action"]:
                    assert np.array_equal(obs[agent]["action_mask"], cold_mask(env, agent)), (preset, seed, env.step_count, agent)
                    compared += 1
                    situation = env._offered[agent][0]
                    probes = [c for c in env.interface._commands[agent] if c is not None]  # its masked-in commands
                    probes += [f"go to {name}" for name in env.world.room_names] + [f"pick up victim {len(env.world.victims) + 1}"]
                    for probe in probes:
                        shared, plain = commands_module.parse_in(probe, situation), commands_module.COMMANDS.parse(probe, situation)
                        assert shared.to_json() == plain.to_json(), (preset, seed, env.step_count, agent, probe)
            actions = {}
            for agent in env.agents:
                allowed = np.flatnonzero(obs[agent]["action_mask"])
                actions[agent] = int(allowed[rng.integers(len(allowed))])
            obs, _, _, _, infos = env.step(actions)
    assert compared > 250


def test_shared_parses_read_the_victim_numbers_and_the_room_names_of_the_situation():
    """A parse shared by situations (`commands.parse_in`) is one that read the same victim numbers and room names:
    a victim number or a room allowed in one situation and not in the next is read as the plain parser reads it."""
    for limits, rooms in (((1, 40), ("Lab", "Hospital")), ((1, 35), ("Hospital",)), ((1, 40), ("Lab", "Hospital"))):
        situation = Situation({"continue": "not now"}, {"victim": limits}, {"room": rooms, "agent": ("engineer",)})
        for probe in ("pick up victim 38", "go to victim 38", "stabilize victim 38", "go to Lab", "go to lab", "continue"):
            shared, plain = commands_module.parse_in(probe, situation), commands_module.COMMANDS.parse(probe, situation)
            assert shared.to_json() == plain.to_json(), (limits, rooms, probe)
