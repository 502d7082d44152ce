"""Search-and-rescue metrics under the conditions that change who acts and who hears (VIRT-LAB 4.2.3, 4.3).

1. `round_robin` scheduling: a step that is another agent's turn is idle, not busy (no action advances in it).
2. `same_room` communication: a `say` reaches only the sender's room (a doorway counts as the room the agent
   came from), so conversations in different rooms at once are separate communication events, and a `say` nobody
   hears is none.
"""

from __future__ import annotations

import pytest

import teamenvs
from teamenvs.core.recorder import EpisodeRecorder
from teamenvs.search_rescue.metrics import search_rescue_metrics

ENV = "search_rescue_v0"

# Hospital (1..3, 1..3; everyone starts at (2,2)), doorway (4,2), Lab (5..7, 1..3) with victim 1.
LAB = """
#########
#hhh#.s.#
#hhh+...#
#hhh#...#
#########
"""
TRANSPORTERS = ["transporter", "transporter_2", "transporter_3", "transporter_4"]


def play(turns: list[dict[str, str]], **config):
    """Play `turns` on the Lab map (agents not named wait; busy ones are ignored): the env, its last infos, its metrics."""
    env = teamenvs.make(ENV, **config)
    recorder = EpisodeRecorder()
    env.unwrapped.record_to(recorder)
    _, infos = env.reset(seed=0, options={"layout": LAB, "room_names": ["Lab"]})
    for actions in turns:
        infos = env.step({a: actions.get(a, "wait") for a in env.agents})[4]
    return env, infos, search_rescue_metrics(recorder.records)


# ---------------------------------------------------------------------- 1. busy, idle and whose turn it is
def test_under_round_robin_steps_spent_waiting_for_the_turn_are_idle():
    _, _, m = play([{}] * 6, scheduling="round_robin")
    for agent, p in m["per_agent"].items():
        assert (p["busy_steps"], p["communicating_steps"], p["idle_steps"]) == (0, 0, 6), agent
        assert p["actions_by_type"]["wait"] == 2  # its two turns


@pytest.mark.parametrize("scheduling", ["events", "round_robin"])
def test_busy_steps_are_the_steps_an_action_advances(scheduling):
    # The medic walks 3 cells into the Lab: every step under `events`, only in its turns (steps 1, 4, 7) under `round_robin`.
    env, _, m = play([{"medic": "go to Lab"}] + [{}] * 8, scheduling=scheduling)
    assert env.unwrapped.pos["medic"] == (5, 2)
    medic = m["per_agent"]["medic"]
    assert medic["steps_moved"] == medic["busy_steps"] == 3
    assert medic["idle_steps"] == 9 - 3


# ---------------------------------------------------------------------- 2. who takes part in a `say`
def test_same_room_conversations_in_two_rooms_at_once_are_two_conversations():
    setup = [{"transporter": "go to Lab", "transporter_2": "go to Lab"}, {}, {}]
    talk = [{"transporter": "say I take the Lab", "transporter_3": "say I stay in the Hospital"},
            {"transporter_2": "say ok, Lab is yours", "transporter_4": "say ok, Hospital is yours"}]
    config = dict(team=["transporter"] * 4, n_victims=1, critical_fraction=0, rubble_fraction=0)
    env, _, m = play(setup + talk, communication="same_room", **config)
    assert {a: env.unwrapped.plan.rooms[r].name for a, r in env.unwrapped.room.items()} == {
        "transporter": "Lab", "transporter_2": "Lab", "transporter_3": "Hospital", "transporter_4": "Hospital"}
    assert m["messages_sent"] == 4 and m["communication_events"] == 2
    assert {a: p["conversations_started"] for a, p in m["per_agent"].items()} == {
        "transporter": 1, "transporter_2": 0, "transporter_3": 1, "transporter_4": 0}
    # with everyone hearing every `say`, the same exchange is one conversation of the team
    _, _, heard_by_all = play(setup + talk, communication="global", **config)
    assert heard_by_all["communication_events"] == 1


def test_same_room_an_agent_in_a_doorway_takes_part_in_the_room_it_came_from():
    config = dict(team=["transporter"] * 4, n_victims=1, critical_fraction=0, rubble_fraction=0, communication="same_room")
    env, infos, m = play([
        {"transporter": "go to Lab", "transporter_2": "move east"},
        {"transporter_2": "move east"},  # onto the doorway (4,2) between the Hospital and the Lab
        {},
        {"transporter_2": "say at the door"},  # heard in the Hospital (where it came from), not in the Lab
        {"transporter_3": "say ok", "transporter": "say Lab checked"},
    ], **config)
    u = env.unwrapped
    assert u.pos["transporter_2"] == (4, 2) and u.plan.rooms[u.room["transporter_2"]].name == "Hospital"
    assert u.plan.rooms[u.room["transporter"]].name == "Lab"
    assert any("transporter_2: at the door" in line for line in infos["transporter_3"]["view"]["recent_messages"])
    assert not any("at the door" in line for line in infos["transporter"]["view"]["recent_messages"])
    # the doorway agent's conversation in the Hospital; the Lab's message is sent, but nobody heard it: no exchange
    assert m["messages_sent"] == 3 and m["communication_events"] == 1
    assert {a: p["conversations_started"] for a, p in m["per_agent"].items()} == {
        "transporter": 0, "transporter_2": 1, "transporter_3": 0, "transporter_4": 0}
    assert m["per_agent"]["transporter"]["messages_sent"] == 1


def test_same_room_with_everyone_in_one_room_counts_as_the_team_conversation():
    talk = [{"medic": "say hello"}, {"engineer": "say hi"}, {"transporter": "tell medic hi"}]
    _, _, same_room = play(talk, communication="same_room")
    _, _, everyone = play(talk, communication="global")
    assert same_room["communication_events"] == everyone["communication_events"] == 2
    assert same_room["per_agent"] == everyone["per_agent"]
