"""`search_rescue_v0` against VIRT-LAB, point by point (issue 17, items 1-6).

1. A message sent to a busy agent waits for its next decision, with the step it was sent at;
   `message_history` decides how many stay visible afterwards.
2. Without communication (and out of earshot under `same_room`) an agent's notes and its
   "Team: N/35 rescued" tally hold only the rescues it saw, made or was told of; in the
   Hospital it sees them all. The vector follows the view.
3. `communication_events` counts conversations (VIRT-LAB 4.2.3), `messages_sent` messages.
4. `easy`, `medium` and `hard` grow in size and layout complexity, and so do walks and durations.
5. The ablations of VIRT-LAB 4.3: `no_navigation` (moves only, no route cues) and `round_robin`
   (one agent acts per step instead of the event scheduler).
6. `interrupt_to_talk` (Alg. 1, Fig. 8E): a `tell` to a busy agent asks it to continue or answer.
"""

from __future__ import annotations

import numpy as np
import pytest

import agents
import teamenvs
from teamenvs.core.recorder import EpisodeRecorder
from teamenvs.search_rescue import view as V
from teamenvs.search_rescue.config import SearchRescueConfig
from teamenvs.search_rescue.knowledge import Knowledge, share
from teamenvs.search_rescue.metrics import conversations, search_rescue_metrics
from teamenvs.search_rescue.navigation import manhattan, route_map
from teamenvs.search_rescue.world import fixed_floor_plan
from teamenvs.testing import check_exact_masks, check_valid_action_episode, random_masked_actions

ENV = "search_rescue_v0"

# Hospital (1..3, 1..3), doorway (4,2), Lab (5..7, 1..3), rubble in doorway (8,2), Vault (9..11, 1..3).
RUBBLE_MAP = """
#############
#hhh#...#...#
#hhh+.s.X.C.#
#hhh#...#...#
#############
"""
# Hospital, Lab and (south of the Lab) Ward. Victim 1 stable at (5,1) in the Lab; victim 2 critical
# at (4,5) and victim 3 stable at (7,6), both in the Ward.
THREE_ROOMS = """
#########
#hhh#s..#
#hhh+...#
#hhh#...#
#####+###
#...C...#
#......s#
#########
"""


def make(layout: str, names: list[str], **config):
    env = teamenvs.make(ENV, **config)
    _, infos = env.reset(seed=0, options={"layout": layout, "room_names": names})
    return env, infos


def step(env, **actions: str):
    """One step; agents not named wait (busy ones are ignored anyway)."""
    return env.step({a: actions.get(a, "wait") for a in env.agents})[4]


def until_idle(env, agent: str, limit: int = 30, **actions: str):
    infos = step(env, **actions)
    for _ in range(limit):
        if infos[agent]["needs_action"]:
            return infos
        infos = step(env)
    raise AssertionError(f"{agent} still busy")


def score_slots(env, agent: str, infos) -> np.ndarray:
    start = 0
    for f in V.features(env.unwrapped.config):
        if f.name == "score":
            return V.encode(infos[agent]["view"], env.unwrapped.config)[start:start + f.size]
        start += f.size
    raise KeyError("score")


# ---------------------------------------------------------------------- 1. messages wait for their reader
def test_messages_to_a_busy_agent_wait_for_its_next_decision_with_the_step_they_were_sent():
    env, infos = make(RUBBLE_MAP, ["Lab", "Vault"])
    infos = step(env, medic="go to Lab")
    assert not infos["medic"]["needs_action"]
    sent_at = env.step_count
    infos = step(env, transporter="tell medic victim 2 is behind the rubble", engineer="say I stay here")
    assert not infos["medic"]["needs_action"]
    while not infos["medic"]["needs_action"]:
        infos = step(env)
    shown = infos["medic"]["view"]["new_messages"]
    assert shown == (f"[step {sent_at}] engineer: I stay here",
                     f"[step {sent_at}] transporter (to you): victim 2 is behind the rubble")
    assert "Messages: [step" in env.unwrapped._texts["medic"]
    infos = step(env, medic="wait")  # it has read them: they stay in view as earlier messages
    assert infos["medic"]["view"]["new_messages"] == ()
    assert infos["medic"]["view"]["recent_messages"] == shown
    assert "Earlier messages: " + " | ".join(shown) in env.unwrapped._texts["medic"]


def test_message_history_decides_how_many_read_messages_stay_visible():
    env, infos = make(RUBBLE_MAP, ["Lab", "Vault"], message_history=1)
    step(env, transporter="say one", engineer="say two")
    infos = step(env, transporter="say three")
    assert [m.split("] ")[1] for m in infos["medic"]["view"]["new_messages"]] == ["transporter: three"]
    assert [m.split("] ")[1] for m in infos["medic"]["view"]["recent_messages"]] == ["transporter: one"]  # the later of two
    env, infos = make(RUBBLE_MAP, ["Lab", "Vault"], message_history=0)
    step(env, transporter="say one")
    infos = step(env)
    assert infos["medic"]["view"]["new_messages"] == () and infos["medic"]["view"]["recent_messages"] == ()


# ---------------------------------------------------------------------- 2. no leaks without communication
def _rescue_victim_1_while_the_medic_is_in_the_ward(communication: str):
    env, infos = make(THREE_ROOMS, ["Lab", "Ward"], communication=communication)
    until_idle(env, "medic", medic="go to Lab", transporter="go to Lab")
    assert 1 in env.know["medic"].victims
    infos = until_idle(env, "medic", medic="go to Ward")
    assert env.plan.rooms[env.room["medic"]].name == "Ward"
    step(env, transporter="pick up victim 1")
    until_idle(env, "transporter", transporter="go to Hospital")
    infos = step(env, transporter="drop victim")
    assert env.rescued == [1]
    return env, infos


@pytest.mark.parametrize("communication", ["none", "same_room"])
def test_without_communication_an_agent_knows_only_the_rescues_it_saw(communication):
    env, infos = _rescue_victim_1_while_the_medic_is_in_the_ward(communication)
    medic = infos["medic"]["view"]
    assert [v["victim"] for v in medic["known_victims"]] == [1]  # still where it saw it: a stale note
    assert medic["score"]["rescued"] == 0 and medic["score"]["points"] == 0
    assert "Team: 0/3 rescued (0 stable, 0 critical), 0 points that you know of." in env.unwrapped._texts["medic"]
    assert score_slots(env, "medic", infos).tolist() == [0, 0, 0, 0]
    assert infos["transporter"]["view"]["score"]["rescued"] == 1  # it made the rescue
    assert score_slots(env, "transporter", infos)[0] == pytest.approx(1 / 3)
    # a walk to where it saw the victim finds it gone (no refusal gives the rescue away) ...
    *_, infos = env.step({"medic": "go to victim 1", "transporter": "wait", "engineer": "wait"})
    assert infos["medic"]["last_action"]["ok"] is True
    infos = until_idle(env, "medic")
    assert "You reached where you last saw victim 1, but it is not there now." in [e["text"] for e in infos["medic"]["events"]]
    assert infos["medic"]["view"]["score"]["rescued"] == 0 and 1 not in [v["victim"] for v in infos["medic"]["view"]["known_victims"]]
    # ... and in the Hospital, where every rescued victim lies, it sees the whole tally
    infos = until_idle(env, "medic", medic="go to Hospital")
    assert infos["medic"]["view"]["room"] == "Hospital" and infos["medic"]["view"]["score"]["rescued"] == 1


def test_with_radio_communication_everyone_knows_every_rescue_at_once():
    env, infos = _rescue_victim_1_while_the_medic_is_in_the_ward("global")
    assert infos["medic"]["view"]["score"]["rescued"] == 1
    assert [v["victim"] for v in infos["medic"]["view"]["known_victims"]] == []
    assert "Team: 1/3 rescued (1 stable, 0 critical), 10 points." in env.unwrapped._texts["medic"]


def test_a_message_naming_a_rescued_victim_tells_of_the_rescue():
    env, _ = make(THREE_ROOMS, ["Lab", "Ward"])
    sender, recipient = Knowledge(rescued={1}), Knowledge()
    assert share(env.plan, sender, recipient, rooms=(), victims={1}) and recipient.rescued == {1}
    assert not share(env.plan, sender, recipient, rooms=(), victims={1})


# ---------------------------------------------------------------------- 3. conversations
def _message(step: int, sender: str, to: str | None = None) -> dict:
    return {"type": "message", "step": step, "sender": sender, "to": to}


def test_conversations_group_messages_among_the_same_participants_within_the_gap():
    messages = [_message(1, "a"), _message(2, "b"), _message(3, "a", "b"), _message(4, "b", "a"),
                _message(7, "a"), _message(13, "c"), _message(20, "a", "c")]
    talks = conversations(messages, gap=5)
    assert [(t["participants"], t["first"], t["last"], t["initiator"], t["messages"]) for t in talks] == [
        (("team",), 1, 7, "a", 3),  # 1, 2, 7: no gap above 5 steps
        (("a", "b"), 3, 4, "a", 2),  # a dyadic exchange beside the team's
        (("team",), 13, 13, "c", 1),  # 6 steps after the last team message: a new conversation
        (("a", "c"), 20, 20, "a", 1),
    ]
    assert len(conversations(messages, gap=0)) == 7


def test_communication_events_count_conversations_and_messages_sent_counts_messages():
    env = teamenvs.make(ENV)
    with env.unwrapped.recording(EpisodeRecorder()) as recorder:
        env.reset(seed=0, options={"layout": RUBBLE_MAP, "room_names": ["Lab", "Vault"]})
        for actions in ({"medic": "say hi"}, {"engineer": "say hello"}, {"medic": "tell engineer come"}, {}, {}, {},
                        {}, {}, {}, {"transporter": "say late"}):
            step(env, **actions)
    m = search_rescue_metrics(recorder.records)
    assert m["messages_sent"] == 4 and m["communication_events"] == 3
    assert {a: p["conversations_started"] for a, p in m["per_agent"].items()} == {"medic": 2, "engineer": 0, "transporter": 1}


# ---------------------------------------------------------------------- 4. harder maps
def _mean_walk(cfg: SearchRescueConfig) -> float:
    """Mean walk from the Hospital's middle to every floor cell outside it, on the whole map."""
    plan, _ = fixed_floor_plan(cfg)
    h = plan.rooms[plan.hospital]
    routes = route_map(plan, ((h.x0 + h.x1) // 2, (h.y0 + h.y1) // 2), set(range(len(plan.rooms))), set())
    walks = [routes.rooms[r.id][0] + manhattan(plan.doors[routes.rooms[r.id][1]].entry(r.id), (x, y))
             for r in plan.rooms if r.id != plan.hospital for y in range(r.y0, r.y1 + 1) for x in range(r.x0, r.x1 + 1)]
    return sum(walks) / len(walks)


def test_presets_grow_in_size_complexity_walks_and_duration():
    configs = [teamenvs.make(ENV, preset=p).config for p in ("easy", "medium", "hard")]
    assert [(c.width, c.complexity) for c in configs] == [(30, 4), (40, 6), (50, 8)]
    walks = [_mean_walk(c) for c in configs]
    assert walks[0] + 5 < walks[1] and walks[1] + 10 < walks[2], walks
    rooms = [len(fixed_floor_plan(c)[0].rooms) for c in configs]
    assert rooms[0] < rooms[1] < rooms[2], rooms
    steps = []
    for preset in ("easy", "medium"):
        env = teamenvs.make(ENV, preset=f"{preset}+transporters_5")
        steps.append(agents.run_episode(env, agents.make_policies(env, "scripted", seed=0), seed=0).metrics["steps"])
    assert steps[0] + 100 < steps[1], steps
    env = teamenvs.make(ENV, preset="hard+transporters_5", max_steps=steps[1] + 100)  # not done by then: longer
    assert not agents.run_episode(env, agents.make_policies(env, "scripted", seed=0), seed=0).metrics["completed"]


# ---------------------------------------------------------------------- 5. ablations
def test_no_navigation_leaves_moves_only_and_no_route_cues():
    env, infos = make(RUBBLE_MAP, ["Lab", "Vault"], navigation=False)
    offered = {f.command for f in infos["medic"]["valid_actions"]}
    assert {"move", "say", "wait"} <= offered and not {"go to", "go to victim"} & offered
    *_, infos = env.step({"medic": "go to Lab", "engineer": "wait", "transporter": "wait"})
    assert infos["medic"]["last_action"]["ok"] is False and "navigation" in infos["medic"]["last_action"]["error"]
    for _ in range(3):
        infos = step(env, medic="move east")
    v = infos["medic"]["view"]
    assert v["room"] == "Lab" and v["rooms"] == {} and v["route"] is None
    assert "Rooms (cells away" not in env.unwrapped._texts["medic"] and "Rooms visited: Hospital, Lab." in env.unwrapped._texts["medic"]
    assert "go to" not in env.unwrapped.briefing("medic").split("Commands")[1].split("say")[0]


def test_no_navigation_masks_offer_no_walks_and_are_exact():
    env = teamenvs.make(ENV, obs_type="vector", action_type="discrete", navigation=False)
    labels = env.unwrapped.interface.labels
    _, infos = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(100):
        for a in env.agents:
            assert not any(labels[i].startswith("go to") for i in np.flatnonzero(infos[a]["action_mask"]))
        _, _, _, _, infos = env.step(random_masked_actions(infos, rng, env.agents))
    assert check_exact_masks(ENV, seed=1, steps=150, navigation=False, scheduling="round_robin") > 0


def test_the_scripted_team_walks_without_navigation_and_does_worse():
    env = teamenvs.make(ENV, preset="easy+transporters_3", max_steps=500)
    full = agents.run_episode(env, agents.make_policies(env, "scripted", seed=0), seed=0).metrics
    env = teamenvs.make(ENV, preset="easy+transporters_3+no_navigation", max_steps=500)
    ablated = agents.run_episode(env, agents.make_policies(env, "scripted", seed=0), seed=0).metrics
    assert ablated["invalid_action_rate"] < 0.05 and ablated["victims_rescued"] > 0
    assert ablated["action_events_by_type"]["go to"] == ablated["action_events_by_type"]["go to victim"] == 0
    assert ablated["victims_rescued"] < full["victims_rescued"] or ablated["steps"] > full["steps"]


def test_round_robin_lets_one_agent_act_per_step_in_turn():
    env, infos = make(RUBBLE_MAP, ["Lab", "Vault"], scheduling="round_robin")
    order = []
    for _ in range(6):
        asked = [a for a in env.agents if infos[a]["needs_action"]]
        order.append(asked)
        infos = step(env)
    assert order == [["medic"], ["engineer"], ["transporter"]] * 2
    infos = step(env, medic="go to Lab")  # step 6: the medic's turn; the walk is 2 cells
    assert env.pos["medic"] == (3, 2) and env.task["medic"] is not None
    for _ in range(2):  # the others' turns: its walk does not advance
        infos = step(env)
        assert env.pos["medic"] == (3, 2)
    infos = step(env)
    assert env.pos["medic"] == (4, 2)
    assert check_valid_action_episode(ENV, seed=0, max_steps=60, scheduling="round_robin") > 0


# ---------------------------------------------------------------------- 6. interrupting an action to talk
def test_a_busy_agent_told_something_is_asked_to_continue_or_answer():
    env, infos = make(THREE_ROOMS, ["Lab", "Ward"], interrupt_to_talk=True, full_map=True)
    assert "continue" in env.unwrapped.briefing("medic")
    step(env, medic="go to Ward")  # 7 cells
    infos = step(env, transporter="tell medic come back")
    assert infos["medic"]["needs_action"] and env.task["medic"] is not None
    assert {f.command for f in infos["medic"]["valid_actions"]} == {"continue", "say", "tell"}
    assert "answer it with say or tell" in env.unwrapped._texts["medic"]
    where = env.pos["medic"]
    infos = step(env, medic="continue")  # carries on: the walk goes on this very step
    assert infos["medic"]["last_action"]["ok"] and env.pos["medic"] != where and env.task["medic"] is not None
    assert not infos["medic"]["needs_action"]
    infos = step(env, transporter="tell medic come back now")
    infos = step(env, medic="tell transporter on my way")  # answers: the walk is broken off
    assert env.task["medic"] is None and infos["medic"]["needs_action"]
    assert "You broke off your walk to answer." in [e["text"] for e in infos["medic"]["events"]]
    assert infos["transporter"]["view"]["new_messages"][-1].endswith("medic (to you): on my way")


def test_interruptions_are_off_by_default_and_broadcasts_never_interrupt():
    env, infos = make(RUBBLE_MAP, ["Lab", "Vault"])
    assert "continue" not in env.unwrapped.briefing("medic")
    step(env, medic="go to Lab")
    infos = step(env, transporter="tell medic come back")
    assert not infos["medic"]["needs_action"]
    env, infos = make(RUBBLE_MAP, ["Lab", "Vault"], interrupt_to_talk=True)
    step(env, medic="go to Lab")
    infos = step(env, transporter="say come back")
    assert not infos["medic"]["needs_action"]


def test_interrupted_masks_offer_continue_as_the_no_op_and_every_masked_in_action_is_accepted():
    env = teamenvs.make(ENV, obs_type="vector", action_type="discrete", interrupt_to_talk=True, full_map=True)
    env.reset(seed=0, options={"layout": THREE_ROOMS, "room_names": ["Lab", "Ward"]})
    labels = env.unwrapped.interface.labels
    env.step({"medic": "go to Ward", "engineer": 0, "transporter": 0})
    obs, _, _, _, infos = env.step({"transporter": "tell medic come back", "engineer": 0})
    mask = infos["medic"]["action_mask"]
    allowed = [labels[i] for i in np.flatnonzero(mask)]
    assert allowed[0] == "no-op" and all(label.startswith("say") for label in allowed[1:]) and len(allowed) > 1
    assert env.unwrapped.action_text("medic", 0) == "continue"
    assert V.encode(infos["medic"]["view"], env.unwrapped.config)[-1] == 1.0  # the `interrupted` slot
    for i in np.flatnonzero(mask):
        assert env.unwrapped.accepts("medic", env.unwrapped.action_text("medic", int(i)))
    _, _, _, _, infos = env.step({"medic": 0, "engineer": 0, "transporter": 0})
    assert infos["medic"]["last_action"]["ok"] and env.unwrapped.task["medic"] is not None
