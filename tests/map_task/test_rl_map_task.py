"""`map_task_v0` for reinforcement learning: the numeric observation, the discrete catalogue, exact
masks, replayable discrete logs, and the closed route leak.

The vector is checked to lie in its Box and to be a function of the agent's view alone (equal
views, equal vectors; the follower's vector, rewards and infos do not change when only the hidden
route and finish change; the guide's vector does not change when the follower draws, unless
`canvas_visibility`), with slots checked by hand on the hand-made pair of tests/map_task/test_map_task.py.
The catalogue is fixed per config and the same for both roles; every command a label stands for
parses. Masks are exact: random masked-in actions over many seeds and presets are never refused.
A discrete episode's log holds command texts and replays. The route leak is closed: until the
episode ends no reward or info the follower gets depends on whether it draws on the route.
"""

from __future__ import annotations

import copy
import time
from dataclasses import replace

import numpy as np
import pytest

import teamenvs
from teamenvs.core.commands import Action
from teamenvs.core.recorder import EpisodeRecorder
from teamenvs.core.rl import NOOP, feature_table
from teamenvs.map_task.commands import catalogue, command_for, pen_trail, read_message
from teamenvs.map_task.config import MapTaskConfig, sizes
from teamenvs.map_task.view import encode, features
from teamenvs.replay import load_replay
from teamenvs.testing import random_masked_actions

from test_map_task import HAND, ROUTE, HandMapEnv

INFO_KEYS = {"view", "valid_actions", "needs_action", "last_action", "events", "action_mask"}


def slots(config: MapTaskConfig) -> dict[str, slice]:
    out, start = {}, 0
    for f in features(config):
        out[f.name] = slice(start, start + f.size)
        start += f.size
    return out


def make_hand(pair=HAND, **config) -> HandMapEnv:
    """The hand-made 10x10 pair, under a 10x10 config (so the vector's map planes are 10 wide)."""
    env = HandMapEnv(obs_type="vector", action_type="discrete", **{"width": 10, "height": 10, **config})
    env.hand_pair = pair
    env.reset(seed=0)
    return env


def index(env, label: str) -> int:
    return env.interface.labels.index(label)


def act(env, guide: str = NOOP, follower: str = NOOP):
    return env.step({"guide": index(env, guide), "follower": index(env, follower)})


# ---------------------------------------------------------------------- the observation
def test_feature_table_and_size():
    config = MapTaskConfig()
    fs = features(config)
    assert all(f.doc for f in fs) and len({f.name for f in fs}) == len(fs)
    size = sum(f.size for f in fs)
    # 3 map planes, 6 slots per landmark (12 + 1 extra the follower may have), 2 message blocks, 26 others
    expected = lambda w, h, n: 3 * w * h + 6 * n + (21 + n) + (20 + n) + 26  # noqa: E731
    assert size == expected(20, 20, 13) == 1371 < 2000
    assert feature_table(fs).count("\n") == len(fs) + 1
    env = teamenvs.make("map_task_v0", obs_type="vector", action_type="discrete")
    assert env.observation_space("guide")["observation"].shape == (size,)
    # a bigger map, more landmarks and a library map each have their own fixed shape
    assert sum(f.size for f in features(MapTaskConfig(width=30, height=25, n_landmarks=20))) == expected(30, 25, 21)
    s = sizes(MapTaskConfig(library_map=3, mismatch=3))
    assert (s.width, s.height) == (20, 20) and s.guide_landmarks == 12


@pytest.mark.parametrize("preset", ["baseline", "canvas_visibility", "communication_bandwidth+mismatch_3"])
def test_vectors_lie_in_the_box_and_follow_the_view(preset):
    env = teamenvs.make("map_task_v0", preset=preset, obs_type="vector", action_type="discrete")
    base = env.unwrapped
    rng = np.random.default_rng(1)
    for seed in range(3):
        obs, infos = env.reset(seed=seed)
        while env.agents:
            for a in env.agents:
                space = env.observation_space(a)["observation"]
                vector = obs[a]["observation"]
                assert vector.dtype == np.float32 and space.contains(vector)
                view = infos[a]["view"]
                # a copy of the view (another object, equal value) encodes to the same vector
                assert np.array_equal(encode(copy.deepcopy(view), base.config), vector)
            obs, _, _, _, infos = env.step(random_masked_actions(infos, rng, env.agents))


def test_hand_checked_slots():
    env = make_hand()
    s = slots(env.config)
    obs, infos = env.reset(seed=0)
    g, f = obs["guide"]["observation"], obs["follower"]["observation"]
    assert list(g[s["role"]]) == [1, 0] and list(f[s["role"]]) == [0, 1]
    assert list(g[s["start"]]) == pytest.approx([0, 5 / 9]) and list(f[s["start"]]) == pytest.approx([0, 5 / 9])
    assert list(g[s["finish"]]) == [1, 1, pytest.approx(5 / 9)] and list(f[s["finish"]]) == [0, 0, 0]
    w = 10  # the hand map is 10x10: slot y*10+x
    terrain, route = g[s["terrain"]], g[s["route"]]
    assert terrain[2 * w + 4] == terrain[3 * w + 5] == 1.0  # the lake (blocked)
    assert terrain[7 * w + 2] == 0.5 and terrain[5 * w + 0] == 0.0  # the old mill; the start
    assert route[5 * w + 0] == pytest.approx(0.1) and route[5 * w + 9] == 1.0 and route.sum() == pytest.approx(5.5)
    assert not f[s["route"]].any()
    # the follower's red barn is where its map has it (5,8), the guide's at (8,8)
    assert f[s["terrain"]][8 * w + 5] == 0.5 and f[s["terrain"]][8 * w + 8] == 0.0 and terrain[8 * w + 8] == 0.5
    lm = f[s["landmarks"]].reshape(-1, 6)
    assert list(lm[0]) == pytest.approx([1, 1, 4 / 9, 2 / 9, 5 / 9, 3 / 9])  # lake: present, blocked, its box
    assert lm[4, 0] == 1 and not lm[5:].any()  # five landmarks, the other slots empty
    assert f[s["pen"]][0] == 1 and list(f[s["pen"]][1:]) == pytest.approx([0, 5 / 9]) and not g[s["pen"]].any()
    assert f[s["last_action_status"]][0] == 1 and f[s["time"]] == 0
    # the guide names the old mill, then the follower steps east twice
    act(env, guide="say go east until just west of landmark 2", follower="draw step east")
    obs, *_, infos = act(env, follower="draw step east")
    f = obs["follower"]["observation"]
    assert infos["follower"]["view"]["new_messages"] == ()
    assert list(f[s["pen"]]) == pytest.approx([1, 2 / 9, 5 / 9])
    assert set(np.flatnonzero(f[s["drawing"]])) == {50, 51, 52} and f[s["can_undo"]] == 1
    assert f[s["last_action_status"]][1] == 1 and f[s["last_action_command"]][1] == 1  # accepted draw
    assert f[s["time"]] == pytest.approx(2 / 120)
    kind = f[s["partner_message_kind"]]
    assert kind[1] == 1 and f[s["partner_message_new"]] == 0  # a landmark instruction, read a step ago
    assert f[s["partner_message_way"]][2] == 1 and f[s["partner_message_side"]][3] == 1  # east, just west
    assert f[s["partner_message_landmark"]][1] == 1 and f[s["partner_message_unknown_landmark"]] == 0  # its old mill
    assert f[s["own_message_kind"]][0] == 1  # it has said nothing
    g = obs["guide"]["observation"]
    assert g[s["own_message_kind"]][1] == 1 and g[s["own_message_landmark"]][1] == 1  # the guide's own old mill
    assert not g[s["drawing"]].any() and g[s["sees_drawing"]] == 0  # no canvas visibility


def test_message_reading():
    assert read_message("go east until you are just south of the old mill") == ("landmark", "east", "south", "old mill", 0)
    assert read_message("east till south of old mill") == ("landmark", "east", "south", "old mill", 0)
    assert read_message("go north 3 steps") == ("count", "north", None, None, 3)
    assert read_message("I have no well") == ("missing", None, None, "well", 0)
    assert [read_message(t)[0] for t in ("that is the finish", "undo that", "ok", "say again?", "Done.", "hello")] == [
        "finish", "undo", "ok", "again", "done", "other"]


def test_the_guide_only_names_landmarks_the_follower_lacks():
    env = make_hand()
    s = slots(env.config)
    obs, *_, infos = act(env, guide="say go east until just west of landmark 3")  # the guide's well
    f = obs["follower"]["observation"]
    assert infos["follower"]["view"]["new_messages"] == ("guide: go east until you are just west of the well",)
    assert f[s["partner_message_new"]] == 1 and f[s["partner_message_unknown_landmark"]] == 1
    assert not f[s["partner_message_landmark"]].any()
    label = "say I have no <the landmark just named>"
    assert infos["follower"]["action_mask"][index(env, label)] == 1
    assert env.action_text("follower", index(env, label)) == "say I have no well"
    obs, *_, infos = act(env, follower=label)
    g = obs["guide"]["observation"]
    assert g[s["partner_message_kind"]][1 + 7] == 1 and g[s["partner_message_landmark"]][2] == 1  # "missing", the guide's well


def test_vectors_depend_on_the_view_only():
    """The follower's vector is the same on two pairs that differ only in the hidden route and finish; the
    guide's does not change when the follower draws (no canvas visibility), and does with it."""
    other = replace(HAND, route=((0, 5), (0, 6), *((x, 6) for x in range(1, 10)), (9, 5)))
    for canvas in (False, True):
        a, b = make_hand(canvas_visibility=canvas), make_hand(other, canvas_visibility=canvas)
        guide_before = None
        for follower in ("draw step east", "draw step east", "draw step south", "erase last step", "undo"):
            (oa, *_, ia), (ob, *_, ib) = act(a, follower=follower), act(b, follower=follower)
            assert np.array_equal(oa["follower"]["observation"], ob["follower"]["observation"])
            assert np.array_equal(ia["follower"]["action_mask"], ib["follower"]["action_mask"])
            guide = oa["guide"]["observation"]
            s = slots(a.config)
            if guide_before is not None:
                changed = np.flatnonzero(guide != guide_before)
                moving = set(range(s["time"].start, s["time"].stop))
                if canvas:
                    assert set(changed) - moving  # the drawing shows
                else:
                    assert set(changed) <= moving  # only the clock moves
            guide_before = guide


# ---------------------------------------------------------------------- the catalogue
def test_catalogue_is_fixed_and_the_same_for_both_roles():
    config = MapTaskConfig()
    labels = catalogue(config)
    assert labels[0] == NOOP and len(set(labels)) == len(labels) == 94
    assert catalogue(MapTaskConfig()) == labels and len(catalogue(MapTaskConfig(n_landmarks=5))) == 94 - 4 * 7
    env = teamenvs.make("map_task_v0", obs_type="vector", action_type="discrete")
    assert env.unwrapped.interface.labels == labels
    assert env.action_space("guide").n == env.action_space("follower").n == 94


@pytest.mark.parametrize("preset", ["baseline", "communication_bandwidth", "canvas_visibility+mismatch_3"])
def test_commands_parse_and_roles_differ_only_in_the_mask(preset):
    env = teamenvs.make("map_task_v0", preset=preset, obs_type="vector", action_type="discrete")
    base = env.unwrapped
    labels = base.interface.labels
    rng = np.random.default_rng(0)
    for seed in range(3):
        obs, infos = env.reset(seed=seed)
        while env.agents:
            for a in env.agents:
                view, mask = infos[a]["view"], infos[a]["action_mask"]
                for i, label in enumerate(labels):
                    command = command_for(view, label)
                    if mask[i]:
                        assert command == env.action_text(a, i)
                        assert isinstance(base.commands.parse(command, base._offered[a][0]), Action), command
                    if command is not None and a == "guide":
                        assert command.startswith("say") or command == "wait"
                    if command is not None and command.startswith("say go"):
                        assert len(command.split()) - 1 <= (base.config.max_words or 99)  # never cut
            obs, _, _, _, infos = env.step(random_masked_actions(infos, rng, env.agents))


def test_cell_steps_follow_the_pen():
    assert pen_trail((0, 5), ()) == ((0, 5),)
    drawing = (((0, 5), (1, 5)), ((1, 5), (2, 5)), ((2, 5), (2, 6)))
    assert pen_trail((0, 5), drawing) == ((0, 5), (1, 5), (2, 5), (2, 6))
    assert pen_trail((0, 5), (*drawing, ((1, 5), (1, 4))))[-1] == (1, 5)  # a branch: the pen stops there
    assert pen_trail((0, 5), (((4, 4), (4, 5)),)) == ((0, 5),)  # a drawing away from the start
    env = make_hand()
    *_, infos = act(env, follower="draw step north")
    assert env.action_text("follower", index(env, "draw step east")) == "draw 0,4 -> 1,4"
    assert env.action_text("follower", index(env, "erase last step")) == "erase 0,4 -> 0,5"
    assert infos["follower"]["action_mask"][index(env, "draw step south")] == 0  # already drawn
    # the lake (4..5, 2..3) blocks the pen: masked out, never refused
    for label in ("draw step east",) * 3 + ("draw step north",):
        *_, infos = act(env, follower=label)
    assert env.action_text("follower", index(env, "draw step east")) is None
    assert infos["follower"]["action_mask"][index(env, "draw step east")] == 0


# ---------------------------------------------------------------------- exact masks
PRESETS = ["baseline", "communication_bandwidth", "canvas_visibility", "mismatch_0", "mismatch_3",
           "canvas_visibility+mismatch_2"]


ACTIONS = 50_000  # agent-actions: about 15 s on the 2-core CI machine


def test_masks_are_exact():
    """Random masked-in actions (both agents, every step) over many seeds and presets are never refused."""
    started, actions, refused = time.perf_counter(), 0, []
    rng = np.random.default_rng(7)
    configs = [dict(preset=p) for p in PRESETS] + [
        dict(width=12, height=10, n_landmarks=6, min_steps_between_messages=2),
        dict(library_map=2, mismatch=3, message_history=0), dict(communication=False, max_steps=40)]
    envs = [teamenvs.make("map_task_v0", obs_type="vector", action_type="discrete", **c) for c in configs]
    done = envs[0].unwrapped.interface.labels.index("say done")
    seed = 0
    while actions < ACTIONS:
        env = envs[seed % len(envs)]
        obs, infos = env.reset(seed=seed)
        seed += 1
        while env.agents:
            choice = {}
            for a in env.agents:
                mask = infos[a]["action_mask"].copy()
                if a == "follower" and rng.random() < 0.95:
                    mask[done] = 0 if mask.sum() > 1 else mask[done]  # play longer episodes
                choice[a] = int(rng.choice(np.flatnonzero(mask)))
            obs, _, _, _, infos = env.step(choice)
            for a, i in choice.items():
                actions += 1
                if infos[a]["last_action"]["ok"] is False:
                    refused.append((seed - 1, a, env.unwrapped.interface.labels[i], infos[a]["last_action"]))
    assert refused == [], refused[:5]
    assert time.perf_counter() - started < 60


# ---------------------------------------------------------------------- logs and replay
def test_a_discrete_episode_logs_commands_and_replays(tmp_path):
    env = teamenvs.make("map_task_v0", obs_type="vector", action_type="discrete")
    rng = np.random.default_rng(3)
    path = tmp_path / "ep.jsonl"
    with EpisodeRecorder(path) as rec, env.unwrapped.recording(rec):
        obs, infos = env.reset(seed=4)
        for _ in range(40):
            if not env.agents:
                break
            obs, *_, infos = env.step(random_masked_actions(infos, rng, env.agents))
        records = list(rec.records)
    steps = [r for r in records if r.get("type") == "step"]
    raw = [e["raw_action"] for s in steps for e in s["agents"].values()]
    assert raw and all(isinstance(r, str) for r in raw)  # command texts, not indices
    assert all(e["action"]["ok"] for s in steps for e in s["agents"].values())
    assert any(r.startswith("draw ") for r in raw) and any(r.startswith("say ") for r in raw)
    replay = load_replay(path)
    assert replay.sim.warning is None and replay.sim.verified == len(steps)


# ---------------------------------------------------------------------- the route leak is closed
def test_no_reward_or_info_tells_the_follower_where_the_route_is():
    """Until the episode ends, drawing on a route cell and off it give the same rewards (zero) and infos
    with no route information; on two pairs that differ only in the route, everything the follower gets
    is the same until the last step, whose reward is the final route accuracy."""
    on, off = make_hand(), make_hand()
    (_, r_on, *_, i_on), (_, r_off, *_, i_off) = act(on, follower="draw step east"), act(off, follower="draw step south")
    assert (1, 5) in ROUTE and (0, 6) not in ROUTE
    assert r_on == r_off == {"guide": 0.0, "follower": 0.0}
    for infos in (i_on, i_off):
        assert set(infos["follower"]) == set(infos["guide"]) == INFO_KEYS
    assert i_on["follower"]["last_action"]["ok"] and i_off["follower"]["last_action"]["ok"]
    # two worlds, one route along row 5, one along row 6: the follower cannot tell them apart
    other = replace(HAND, route=((0, 5), (0, 6), *((x, 6) for x in range(1, 10)), (9, 5)))
    a, b = make_hand(max_steps=12), make_hand(other, max_steps=12)
    plan = ["draw step east"] * 9 + ["draw step south", "erase last step", "say done"]
    for n, label in enumerate(plan, 1):
        oa, ra, ta, ua, ia = act(a, follower=label)
        ob, rb, tb, ub, ib = act(b, follower=label)
        assert np.array_equal(oa["follower"]["observation"], ob["follower"]["observation"])
        assert ta == tb and ua == ub
        assert str(ia["follower"]) == str(ib["follower"])  # views, masks, last actions, events
        if n < len(plan):
            assert ra == rb == {"guide": 0.0, "follower": 0.0}
    assert ra["follower"] == ra["guide"] == pytest.approx(1.0)  # the route along row 5, drawn exactly
    assert rb["follower"] == rb["guide"] == pytest.approx(2 * 2 / (12 + 10))  # (0,5) and (9,5) of row 6's route


def test_text_mode_rewards_also_wait_for_the_end():
    env = teamenvs.make("map_task_v0")
    obs, infos = env.reset(seed=0)
    start = env.unwrapped.pair.route[0]
    nxt = env.unwrapped.pair.route[1]
    _, rewards, *_, infos = env.step({"guide": "wait", "follower": f"draw {start[0]},{start[1]} -> {nxt[0]},{nxt[1]}"})
    assert infos["follower"]["last_action"]["ok"] and env.unwrapped.accuracy > 0
    assert rewards == {"guide": 0.0, "follower": 0.0} and "route_accuracy" not in infos["follower"]
    _, rewards, *_ = env.step({"guide": "wait", "follower": "say done"})
    assert rewards["follower"] == rewards["guide"] == env.unwrapped.accuracy > 0


def test_check_team_env_text_mode():
    from teamenvs.testing import check_team_env

    check_team_env("map_task_v0")


def test_max_episode_steps():
    from teamenvs.registry import spec

    assert spec("map_task_v0").max_episode_steps == MapTaskConfig().max_steps == 120
