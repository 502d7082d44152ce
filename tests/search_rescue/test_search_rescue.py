"""`search_rescue_v0`: the rules of each action on small hand-drawn maps, information isolation, metrics, config.

Hand-drawn maps (`reset(options={"layout": ...})`) pin down every rule: rubble blocks
everyone until the engineer clears it (3 steps busy); a critical victim must be stabilized
by the medic (5 steps busy) before anyone can carry it; only the medic stabilizes and only
the engineer clears; a transporter carries at 1 cell per step, a medic or engineer at 1
cell per 2 steps; one victim at a time, picked up on the same or an adjacent cell; a drop
in the Hospital rescues the victim (+10 stable, +50 critical, shared by the whole team),
elsewhere it leaves the victim on the floor, and never in a doorway; `go to` walks one cell
per step, reports its arrival and stops at rubble it did not know of; a busy agent's
actions are ignored. The episode terminates when every victim is rescued and truncates at
`max_steps`.

Knowledge: on generated maps, with random teams that also pass on what they know, no
agent's view or observation ever names a victim it has not seen or been told about by a
teammate; messages share the sender's notes of the rooms and victims they name, with the
recipients only (and under `same_room` only within the sender's room); `full_map` knows
every room from the start. Metrics are checked on a short hand-driven episode whose truth
is counted by hand, and config errors must be clear `ConfigError`s.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import agents
import teamenvs
from teamenvs.core.config import ConfigError
from teamenvs.core.metrics import episode_metrics
from teamenvs.core.recorder import EpisodeRecorder
from teamenvs.search_rescue.env import SearchRescueEnv
from teamenvs.search_rescue.knowledge import mentioned_victims
from teamenvs.search_rescue.world import HOSPITAL, WALL, fixed_floor_plan

# Hospital (1..3, 1..3), doorway (4,2), Lab (5..7, 1..3), rubble in doorway (8,2), Vault (9..11, 1..3).
# Victim 1 is stable at (6,2) in the Lab, victim 2 critical at (10,2) in the Vault. Everyone starts at (2,2).
RUBBLE_MAP = """
#############
#hhh#...#...#
#hhh+.s.X.C.#
#hhh#...#...#
#############
"""
RUBBLE_NAMES = ["Lab", "Vault"]

# Hospital and Lab; victim 1 stable at (6,2), victim 2 critical at (7,2).
TWO_VICTIMS = """
#########
#hhh#...#
#hhh+.sC#
#hhh#...#
#########
"""

# Hospital and Lab; three stable victims at (6,1), (6,2), (6,3), all within reach of (5,2).
THREE_STABLE = """
#########
#hhh#.s.#
#hhh+.s.#
#hhh#.s.#
#########
"""

# Hospital, Lab and (south of the Lab) Ward. Victim 1 stable at (5,1), next to the Lab's
# west doorway; victim 2 critical at (4,5) and victim 3 stable at (7,6), both in the Ward.
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
THREE_ROOM_NAMES = ["Lab", "Ward"]


def make(layout: str | None = None, names: list[str] | None = None, seed: int = 0, **config: Any) -> SearchRescueEnv:
    env = teamenvs.make("search_rescue_v0", **config)
    env.reset(seed=seed, options={"layout": layout, "room_names": names} if layout else None)
    return env


def step(env: SearchRescueEnv, **actions: str):
    return env.step(actions)


def run_until_idle(env: SearchRescueEnv, agent: str, limit: int = 20, **others: str) -> int:
    """Step until `agent` needs an action again; returns the number of steps taken."""
    for n in range(1, limit + 1):
        _, _, _, _, infos = env.step({a: others.get(a, "wait") for a in env.agents if a != agent})
        if infos[agent]["needs_action"]:
            return n
    raise AssertionError(f"{agent} still busy after {limit} steps")


def go_all(env: SearchRescueEnv, room: str) -> None:
    """Walk the whole team into `room` (from the Hospital), checking they all arrive."""
    step(env, **{a: f"go to {room}" for a in env.agents})
    for _ in range(30):
        if all(env.task[a] is None for a in env.agents):
            break
        step(env)
    assert all(env.plan.rooms[env.room[a]].name == room for a in env.agents)


def last(infos, agent: str) -> dict:
    return infos[agent]["last_action"]


def events(infos, agent: str, kind: str) -> list[dict]:
    return [e for e in infos[agent]["events"] if e["type"] == kind]


# ---------------------------------------------------------------------- setup
def test_team_ids_start_and_first_view():
    env = teamenvs.make("search_rescue_v0", team=["medic", "engineer", "transporter", "transporter", "medic"])
    assert env.possible_agents == ["medic", "engineer", "transporter", "transporter_2", "medic_2"]
    env = make(RUBBLE_MAP, RUBBLE_NAMES)
    assert env.possible_agents == ["medic", "engineer", "transporter"]
    obs, infos = env.reset(seed=0, options={"layout": RUBBLE_MAP, "room_names": RUBBLE_NAMES})
    for a in env.agents:
        view = infos[a]["view"]
        assert view["cell"] == (2, 2) and view["room"] == HOSPITAL and view["doorway"] is None
        assert view["visited"] == (HOSPITAL,)
        assert view["rooms"] == {HOSPITAL: 0, "Lab": 3}  # the Vault is behind the Lab: not known yet
        assert view["known_victims"] == () and view["victims_here"] == ()
        assert view["exits"] == ({"direction": "east", "cell": (4, 2), "to": "Lab", "visited": False, "rubble": False},)
        assert view["score"] == {"rescued": 0, "stable": 0, "critical": 0, "points": 0, "victims": 2}
        assert infos[a]["needs_action"] is True
        assert "Vault" not in obs[a] and "Lab" in obs[a]
    assert set(env.state()["agents"]) == {"medic", "engineer", "transporter"}
    assert env.state()["rubble"] == [[8, 2]]


def test_briefing_counts_the_drawn_maps_victims():
    env = make(TWO_VICTIMS, ["Lab"])
    text = env.briefing("medic")
    assert "2 victims" in text and "1 of them critical" in text
    # the command reference must use this episode's victim numbers too, not the config's 35
    assert "victim 1-2>" in text and "1-35" not in text


def test_briefing_mentions_rubble_only_when_the_drawn_map_has_some():
    assert "only the engineer can clear it" in make(RUBBLE_MAP, RUBBLE_NAMES).briefing("medic")
    assert "Rubble blocks" not in make(TWO_VICTIMS, ["Lab"]).briefing("medic")  # this map has none


# ---------------------------------------------------------------------- moving and walking
def test_move_one_cell_per_step_and_walls_reject():
    env = make(RUBBLE_MAP, RUBBLE_NAMES)
    *_, infos = step(env, medic="move north", engineer="move west", transporter="move south")
    assert (env.pos["medic"], env.pos["engineer"], env.pos["transporter"]) == ((2, 1), (1, 2), (2, 3))
    assert all(infos[a]["needs_action"] and last(infos, a)["ok"] for a in env.agents)
    obs, *_, infos = step(env, medic="move north", engineer="move west", transporter="move south")
    assert (env.pos["medic"], env.pos["engineer"], env.pos["transporter"]) == ((2, 1), (1, 2), (2, 3))
    for a, way, cell in (("medic", "north", "(2,1)"), ("engineer", "west", "(1,2)"), ("transporter", "south", "(2,3)")):
        assert last(infos, a)["ok"] is False and last(infos, a)["kind"] == "rejected"
        assert "wall" in last(infos, a)["error"] and way in last(infos, a)["error"] and cell in last(infos, a)["error"]
        assert "REJECTED" in obs[a] and "wall" in obs[a]


def test_go_to_walks_one_cell_per_step_busy_and_reports_arrival():
    env = make(RUBBLE_MAP, RUBBLE_NAMES)
    obs, _, _, _, infos = step(env, transporter="go to Lab")
    assert env.pos["transporter"] == (3, 2)
    assert infos["transporter"]["needs_action"] is False and infos["transporter"]["valid_actions"] == ()
    assert infos["transporter"]["view"]["busy"] == "walking to Lab: 2 cells to go"
    assert "Busy: walking to Lab" in obs["transporter"]
    # while busy, its actions are ignored
    _, _, _, _, infos = step(env, transporter="move west")
    assert env.pos["transporter"] == (4, 2) and infos["transporter"]["view"]["doorway"] == (HOSPITAL, "Lab")
    assert last(infos, "transporter").get("ignored") is True
    assert infos["transporter"]["needs_action"] is False
    obs, _, _, _, infos = step(env, transporter="move west")
    assert env.pos["transporter"] == (5, 2) and infos["transporter"]["view"]["room"] == "Lab"
    assert last(infos, "transporter").get("ignored") is True
    assert infos["transporter"]["needs_action"] is True
    assert [e["text"] for e in events(infos, "transporter", "arrived")] == ["You arrived in Lab."]
    assert "You arrived in Lab." in obs["transporter"]
    # now it knows the Lab and the name of the Vault beyond it (behind rubble it has seen)
    assert infos["transporter"]["view"]["visited"] == (HOSPITAL, "Lab")
    assert [e["rubble"] for e in infos["transporter"]["view"]["exits"]] == [False, True]


def test_go_to_walks_the_shortest_route():
    # with the whole map known and no rubble, the distances in the view are the true shortest walks
    # (breadth-first search over cells), and `go to` takes exactly that many steps
    for seed in range(6):
        env = teamenvs.make("search_rescue_v0", width=40, height=30, complexity=6, full_map=True, rubble_fraction=0.0, n_victims=5)
        _, infos = env.reset(seed=seed)
        plan, start = env.plan, env.pos["medic"]
        dist, todo = {start: 0}, [start]
        for x, y in todo:
            for nxt in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                if nxt not in dist and plan.code(nxt) != WALL:
                    dist[nxt] = dist[(x, y)] + 1
                    todo.append(nxt)
        nearest = {r.id: min(d for c, d in dist.items() if plan.room_at(c) == r.id) for r in plan.rooms}
        assert infos["medic"]["view"]["rooms"] == {r.name: nearest[r.id] for r in plan.rooms}
        far = max(plan.rooms, key=lambda r: nearest[r.id])
        step(env, medic=f"go to {far.name}")
        steps = 1 + (0 if env.task["medic"] is None else run_until_idle(env, "medic", limit=200))
        assert steps == nearest[far.id] and env.room["medic"] == far.id


def test_go_to_unknown_or_current_room_is_rejected():
    env = make(RUBBLE_MAP, RUBBLE_NAMES)
    *_, infos = step(env, medic="go to Vault", engineer="go to Hospital", transporter="go to Narnia")
    assert last(infos, "medic")["ok"] is False and "unknown room" in last(infos, "medic")["error"]
    assert last(infos, "transporter")["ok"] is False and "unknown room" in last(infos, "transporter")["error"]
    assert last(infos, "engineer")["kind"] == "rejected" and "already in Hospital" in last(infos, "engineer")["error"]
    assert all(env.pos[a] == (2, 2) and infos[a]["needs_action"] for a in env.agents)


def test_go_to_a_known_room_behind_known_rubble_is_rejected():
    env = make(RUBBLE_MAP, RUBBLE_NAMES)
    go_all(env, "Lab")
    step(env, transporter="go to Hospital")
    step(env)
    *_, infos = step(env, transporter="go to Vault")
    assert last(infos, "transporter")["kind"] == "rejected" and "no open route to Vault" in last(infos, "transporter")["error"]


def test_go_to_stops_at_rubble_it_did_not_know_of():
    env = make(RUBBLE_MAP, RUBBLE_NAMES, full_map=True)
    _, _, _, _, infos = step(env, transporter="go to Vault")  # planned through the Lab: rubble unknown
    assert last(infos, "transporter")["ok"] is True
    cells, blocked = [env.pos["transporter"]], []
    for _ in range(10):
        _, _, _, _, infos = step(env)
        cells.append(env.pos["transporter"])
        blocked = events(infos, "transporter", "blocked")
        if blocked:
            break
    assert cells == [(3, 2), (4, 2), (5, 2), (6, 2), (7, 2), (7, 2)]  # one cell per step, then the rubble
    assert blocked and "rubble" in blocked[0]["text"]
    assert env.pos["transporter"] == (7, 2)  # next to the doorway, never in it or beyond
    assert infos["transporter"]["needs_action"] is True and infos["transporter"]["view"]["busy"] is None
    assert env.know["transporter"].rubble == {1}
    # now it knows: a second attempt is refused outright
    *_, infos = step(env, transporter="go to Vault")
    assert last(infos, "transporter")["kind"] == "rejected" and "no open route" in last(infos, "transporter")["error"]


def test_go_to_victim_stops_on_a_floor_cell_within_reach():
    env = make(THREE_ROOMS, THREE_ROOM_NAMES)
    step(env, transporter="go to Lab")
    run_until_idle(env, "transporter")
    step(env, transporter="go to Hospital")
    run_until_idle(env, "transporter")
    assert env.pos["transporter"] == (3, 2)
    *_, infos = step(env, transporter="go to victim 1")  # at (5,1): the doorway (4,2) is next to it but no place to stop
    run_until_idle(env, "transporter")
    assert env.pos["transporter"] == (5, 2)
    *_, infos = step(env, transporter="pick up victim 1")
    assert last(infos, "transporter")["ok"] is True and env.carrying["transporter"] == 1


def test_go_to_victim_needs_to_know_the_victim():
    env = make(THREE_ROOMS, THREE_ROOM_NAMES)
    *_, infos = step(env, transporter="go to victim 2")
    assert last(infos, "transporter")["kind"] == "rejected" and "do not know where victim 2 is" in last(infos, "transporter")["error"]


# ---------------------------------------------------------------------- rubble
def test_rubble_blocks_everyone_until_the_engineer_clears_it():
    env = make(RUBBLE_MAP, RUBBLE_NAMES)
    go_all(env, "Lab")
    step(env, **{a: "move east" for a in env.agents})
    step(env, **{a: "move east" for a in env.agents})
    assert all(env.pos[a] == (7, 2) for a in env.agents)
    *_, infos = step(env, **{a: "move east" for a in env.agents})
    assert all(env.pos[a] == (7, 2) for a in env.agents)
    for a in env.agents:
        assert last(infos, a)["kind"] == "rejected" and "rubble" in last(infos, a)["error"]
    assert "clear rubble east" in last(infos, "engineer")["error"]
    assert "only the engineer" in last(infos, "transporter")["error"]
    # only the engineer may clear rubble
    *_, infos = step(env, medic="clear rubble east", transporter="clear rubble east", engineer="clear rubble west")
    for a in ("medic", "transporter"):
        assert last(infos, a)["kind"] == "not_allowed" and "only the engineer can clear rubble" in last(infos, a)["error"]
        assert not any(f.command == "clear rubble" for f in infos[a]["valid_actions"])
    assert last(infos, "engineer")["kind"] == "rejected" and "no rubble west" in last(infos, "engineer")["error"]
    assert any(f.command == "clear rubble" for f in infos["engineer"]["valid_actions"])
    # clearing takes 3 steps, the first being the one it is ordered in; the engineer is busy meanwhile
    _, _, _, _, infos = step(env, engineer="clear rubble east")
    assert infos["engineer"]["needs_action"] is False and infos["engineer"]["view"]["busy"] == "clearing rubble: 2 steps left"
    assert env.state()["rubble"] == [[8, 2]]
    _, _, _, _, infos = step(env, engineer="move west", transporter="move east")
    assert last(infos, "engineer").get("ignored") is True and env.pos["engineer"] == (7, 2)
    assert last(infos, "transporter")["kind"] == "rejected" and env.pos["transporter"] == (7, 2)  # still blocked
    assert infos["engineer"]["needs_action"] is False
    _, _, _, _, infos = step(env, engineer="move west")
    assert last(infos, "engineer").get("ignored") is True and env.pos["engineer"] == (7, 2)
    assert infos["engineer"]["needs_action"] is True
    assert env.state()["rubble"] == [] and events(infos, "engineer", "cleared")
    # everyone in the Lab saw it go
    assert all(not infos[a]["view"]["exits"][1]["rubble"] for a in env.agents)
    _, _, _, _, infos = step(env, transporter="move east", medic="move east")
    assert env.pos["transporter"] == (8, 2) and env.pos["medic"] == (8, 2)
    *_, infos = step(env, transporter="move east")
    assert env.pos["transporter"] == (9, 2) and infos["transporter"]["view"]["room"] == "Vault"
    assert [v["victim"] for v in infos["transporter"]["view"]["victims_here"]] == [2]


def test_clearing_is_seen_in_the_room_and_told_by_naming_it():
    env = make(RUBBLE_MAP, RUBBLE_NAMES)
    go_all(env, "Lab")
    step(env, transporter="go to Hospital", engineer="move east", medic="move east")
    step(env, engineer="move east")
    step(env, engineer="clear rubble east")
    run_until_idle(env, "engineer")
    assert env.rubble == set() and env.pos["transporter"] == (3, 2)
    # the medic, in the Lab, saw the doorway cleared; the transporter, back in the Hospital, did not
    assert env.know["medic"].rubble == set() and env.know["engineer"].rubble == set()
    assert env.know["transporter"].rubble == {1}
    *_, infos = step(env, transporter="go to Vault")
    assert last(infos, "transporter")["kind"] == "rejected" and "no open route" in last(infos, "transporter")["error"]
    # naming the room passes on the sender's (newer) view of its doorways
    step(env, engineer="say the way from the lab to the vault is open now")
    assert env.know["transporter"].rubble == set()
    *_, infos = step(env, transporter="go to Vault")
    assert last(infos, "transporter")["ok"] is True


def test_generated_maps_never_block_the_hospital_doors():
    env = teamenvs.make("search_rescue_v0", rubble_fraction=1.0)
    for seed in range(10):
        env.reset(seed=seed)
        assert env.rubble and not any(env.plan.hospital in env.plan.doors[d].rooms for d in env.rubble)


# ---------------------------------------------------------------------- critical victims
def test_critical_victim_must_be_stabilized_by_the_medic_first():
    env = make(TWO_VICTIMS, ["Lab"])
    go_all(env, "Lab")  # all at (5,2); victim 2 (critical) lies at (7,2)
    step(env, transporter="move east")
    *_, infos = step(env, transporter="pick up victim 2", engineer="stabilize victim 2", medic="stabilize victim 2")
    assert last(infos, "transporter")["kind"] == "rejected"
    assert "critical and must be stabilized by the medic" in last(infos, "transporter")["error"]
    assert last(infos, "engineer")["kind"] == "not_allowed" and "only the medic can stabilize" in last(infos, "engineer")["error"]
    assert last(infos, "medic")["kind"] == "rejected" and "not within reach" in last(infos, "medic")["error"]
    assert "(7,2)" in last(infos, "medic")["error"] and "go to victim 2" in last(infos, "medic")["error"]
    *_, infos = step(env, medic="stabilize victim 1")
    assert last(infos, "medic")["kind"] == "rejected" and "stable" in last(infos, "medic")["error"]
    step(env, medic="move east")
    # 5 steps, the first being the one it is ordered in; meanwhile the medic's actions are ignored
    _, _, _, _, infos = step(env, medic="stabilize victim 2")
    assert last(infos, "medic")["ok"] is True
    for left in (4, 3, 2, 1):
        assert infos["medic"]["needs_action"] is False and infos["medic"]["view"]["busy"] == f"stabilizing victim 2: {left} steps left"
        assert not env.victims[1].stabilized
        _, _, _, _, infos = step(env, medic="move west", transporter="pick up victim 2")
        assert last(infos, "medic").get("ignored") is True and env.pos["medic"] == (6, 2)
        if left > 1:
            assert last(infos, "transporter")["kind"] == "rejected" and env.carrying["transporter"] is None
    assert infos["medic"]["needs_action"] is True
    assert env.victims[1].stabilized and events(infos, "medic", "stabilized")
    assert {"victim": 2, "status": "critical, stabilized", "cell": (7, 2)} in infos["transporter"]["view"]["victims_here"]
    *_, infos = step(env, medic="stabilize victim 2", transporter="pick up victim 2")
    assert last(infos, "medic")["kind"] == "rejected" and "already stabilized" in last(infos, "medic")["error"]
    assert last(infos, "transporter")["ok"] is True and env.carrying["transporter"] == 2


def test_stabilized_critical_victim_can_be_carried_by_anyone():
    env = make(TWO_VICTIMS, ["Lab"])
    go_all(env, "Lab")
    step(env, medic="move east", engineer="move east")
    step(env, medic="stabilize victim 2")
    run_until_idle(env, "medic")
    *_, infos = step(env, engineer="pick up victim 2")
    assert last(infos, "engineer")["ok"] is True and env.carrying["engineer"] == 2


# ---------------------------------------------------------------------- carrying
def test_carrying_speed_transporter_one_cell_per_step_others_two():
    env = make(THREE_STABLE, ["Lab"])
    go_all(env, "Lab")  # all at (5,2)
    *_, infos = step(env, medic="pick up victim 1", engineer="pick up victim 3", transporter="pick up victim 2")
    assert all(last(infos, a)["ok"] for a in env.agents)
    assert (env.carrying["medic"], env.carrying["engineer"], env.carrying["transporter"]) == (1, 3, 2)
    *_, infos = step(env, **{a: "move west" for a in env.agents})
    assert env.pos["transporter"] == (4, 2) and infos["transporter"]["needs_action"] is True
    for a in ("medic", "engineer"):
        assert env.pos[a] == (5, 2) and infos[a]["needs_action"] is False
    *_, infos = step(env, **{a: "move west" for a in env.agents})
    assert env.pos["transporter"] == (3, 2)
    for a in ("medic", "engineer"):
        assert env.pos[a] == (4, 2) and infos[a]["needs_action"] is True and last(infos, a).get("ignored") is True
    # `go to` is slowed the same way: 2 steps per cell for the medic
    *_, infos = step(env, medic="go to Hospital")
    assert env.pos["medic"] == (4, 2) and infos["medic"]["needs_action"] is False
    *_, infos = step(env)
    assert env.pos["medic"] == (3, 2) and infos["medic"]["needs_action"] is True


def test_one_victim_at_a_time():
    env = make(THREE_STABLE, ["Lab"])
    go_all(env, "Lab")
    step(env, transporter="pick up victim 1")
    *_, infos = step(env, transporter="pick up victim 2")
    assert last(infos, "transporter")["kind"] == "not_allowed"
    assert "already carrying victim 1" in last(infos, "transporter")["error"]
    assert not any(f.command == "pick up victim" for f in infos["transporter"]["valid_actions"])
    assert env.carrying["transporter"] == 1 and env.victims[1].cell == (6, 2)
    # and a carried victim cannot be taken by someone else: the medic saw it go (its note is dropped), and the refusal
    # does not say who carries it (its view does not show what teammates carry)
    *_, infos = step(env, medic="pick up victim 1")
    assert last(infos, "medic")["kind"] == "rejected" and "do not know where victim 1 is" in last(infos, "medic")["error"]
    assert "transporter" not in last(infos, "medic")["error"]


def test_pick_up_only_on_the_same_or_an_adjacent_cell():
    env = make(THREE_ROOMS, THREE_ROOM_NAMES)
    *_, infos = step(env, transporter="pick up victim 3")  # from the Hospital: never seen
    assert last(infos, "transporter")["kind"] == "rejected" and "do not know where victim 3 is" in last(infos, "transporter")["error"]
    step(env, transporter="go to Lab")
    run_until_idle(env, "transporter")
    step(env, transporter="go to Ward")
    run_until_idle(env, "transporter")
    assert env.pos["transporter"] == (5, 5)  # victim 3 lies at (7,6): two cells away
    *_, infos = step(env, transporter="pick up victim 3")
    error = last(infos, "transporter")["error"]
    assert last(infos, "transporter")["kind"] == "rejected" and "not within reach" in error
    assert "(7,6) in Ward" in error and "go to victim 3" in error
    step(env, transporter="move east")
    step(env, transporter="move east")
    assert env.pos["transporter"] == (7, 5)
    *_, infos = step(env, transporter="pick up victim 3")  # next to it
    assert last(infos, "transporter")["ok"] is True and env.carrying["transporter"] == 3
    step(env, transporter="drop victim")
    assert env.victims[2].cell == (7, 5)
    *_, infos = step(env, transporter="pick up victim 3")  # on its cell
    assert last(infos, "transporter")["ok"] is True and env.carrying["transporter"] == 3


def test_drop_in_the_hospital_rescues_and_scores_for_the_whole_team():
    env = make(TWO_VICTIMS, ["Lab"])
    go_all(env, "Lab")
    step(env, transporter="pick up victim 1", medic="move east")
    step(env, transporter="go to Hospital", medic="stabilize victim 2")
    run_until_idle(env, "transporter")
    assert env.pos["transporter"] == (3, 2)
    obs, rewards, terms, truncs, infos = step(env, transporter="drop victim")
    assert rewards == {"medic": 10.0, "engineer": 10.0, "transporter": 10.0}
    assert not any(terms.values()) and not any(truncs.values())
    assert events(infos, "transporter", "rescued")
    for a in env.agents:
        assert infos[a]["view"]["score"] == {"rescued": 1, "stable": 1, "critical": 0, "points": 10, "victims": 2}
        assert "1/2 rescued (1 stable, 0 critical), 10 points" in obs[a]
    assert env.victims[0].rescued and env.carrying["transporter"] is None
    assert env.state()["victims"][0]["rescued"] is True
    # the last victim: the critical one, worth 50, ends the episode
    step(env, transporter="go to Lab")
    run_until_idle(env, "transporter")
    assert env.victims[1].stabilized
    step(env, transporter="go to victim 2")
    run_until_idle(env, "transporter")
    step(env, transporter="pick up victim 2")
    step(env, transporter="go to Hospital")
    run_until_idle(env, "transporter")
    obs, rewards, terms, truncs, infos = step(env, transporter="drop victim")
    assert rewards == {"medic": 50.0, "engineer": 50.0, "transporter": 50.0}
    assert all(terms.values()) and not any(truncs.values()) and env.agents == []
    assert infos["medic"]["view"]["score"] == {"rescued": 2, "stable": 1, "critical": 1, "points": 60, "victims": 2}
    assert env.step({}) == ({}, {}, {}, {}, {})


def test_drop_elsewhere_leaves_the_victim_on_the_floor():
    env = make(THREE_STABLE, ["Lab"])
    go_all(env, "Lab")
    *_, infos = step(env, transporter="pick up victim 2")
    assert env.victims[1].cell is None and 2 not in [v["victim"] for v in infos["medic"]["view"]["victims_here"]]
    step(env, transporter="move east")
    step(env, transporter="move east")  # (7,2)
    _, rewards, *_, infos = step(env, transporter="drop victim")
    assert rewards == {a: 0.0 for a in env.possible_agents}
    assert last(infos, "transporter")["ok"] is True and env.carrying["transporter"] is None
    assert env.victims[1].cell == (7, 2) and not env.victims[1].rescued
    for a in env.agents:
        assert {"victim": 2, "status": "stable", "cell": (7, 2)} in infos[a]["view"]["victims_here"]
        assert infos[a]["view"]["score"]["rescued"] == 0
    *_, infos = step(env, transporter="pick up victim 2")
    assert last(infos, "transporter")["ok"] is True


def test_drop_in_a_doorway_is_rejected():
    env = make(THREE_STABLE, ["Lab"])
    go_all(env, "Lab")
    step(env, transporter="pick up victim 2")
    step(env, transporter="move west")
    assert env.pos["transporter"] == (4, 2)
    *_, infos = step(env, transporter="drop victim")
    assert last(infos, "transporter")["kind"] == "rejected" and "doorway" in last(infos, "transporter")["error"]
    assert env.carrying["transporter"] == 2
    *_, infos = step(env, medic="drop victim")
    assert last(infos, "medic")["kind"] == "not_allowed" and "not carrying" in last(infos, "medic")["error"]


def test_episode_truncates_at_max_steps():
    env = make(TWO_VICTIMS, ["Lab"], max_steps=3)
    for _ in range(2):
        _, _, terms, truncs, _ = step(env)
        assert not any(terms.values()) and not any(truncs.values())
    _, _, terms, truncs, infos = step(env)
    assert all(truncs.values()) and not any(terms.values()) and env.agents == []
    assert infos["medic"]["view"]["valid_now"] == ""


def test_every_rejection_says_why():
    env = make(RUBBLE_MAP, RUBBLE_NAMES)
    actions = [
        "move north", "move north", "go to Vault", "go to victim 9", "pick up victim 1", "drop victim",
        "stabilize victim 2", "clear rubble east", "tell medic", "fly away", "",
    ]
    for action in actions:
        *_, infos = step(env, **{a: action for a in env.agents})
        for a in env.agents:
            result = last(infos, a)
            if not result["ok"]:
                assert result["kind"] in ("not_a_string", "empty", "too_long", "unknown_command", "bad_argument", "not_allowed", "rejected")
                assert len(result["error"]) > 15, (action, result)


# ---------------------------------------------------------------------- knowledge and messages
def test_messages_naming_victims_and_rooms_share_the_senders_notes():
    env = make(RUBBLE_MAP, RUBBLE_NAMES)
    step(env, medic="go to Lab")
    run_until_idle(env, "medic")
    *_, infos = step(env)
    assert env.know["medic"].victims.keys() == {1}
    for a in ("engineer", "transporter"):
        assert infos[a]["view"]["known_victims"] == () and "Vault" not in infos[a]["view"]["rooms"]
    # a message naming nothing teaches nothing
    before = {a: (set(env.know[a].mapped), dict(env.know[a].victims), set(env.know[a].rubble)) for a in env.agents}
    *_, infos = step(env, medic="say hello team, all fine here")
    assert {a: (set(env.know[a].mapped), dict(env.know[a].victims), set(env.know[a].rubble)) for a in env.agents} == before
    assert infos["transporter"]["view"]["new_messages"] == ("[step 4] medic: hello team, all fine here",)
    # naming a victim passes on where the sender saw it, to the recipient only
    obs, *_, infos = step(env, medic="tell engineer victim 1 is stable")
    assert infos["engineer"]["view"]["known_victims"] == ({"victim": 1, "status": "stable", "room": "Lab", "cell": (6, 2)},)
    assert infos["transporter"]["view"]["known_victims"] == () and not victims_named_in_text(obs["transporter"])
    assert "Victims elsewhere: 1 stable Lab (6,2)." in obs["engineer"]
    # the victim's room came with it: the engineer can now name the Vault beyond the Lab, and knows its rubble
    assert "Lab" in {r.name for r in map(env.plan.rooms.__getitem__, env.know["engineer"].mapped)}
    assert env.know["engineer"].rubble == {1}
    *_, infos = step(env, engineer="go to Vault")
    assert last(infos, "engineer")["kind"] == "rejected" and "no open route" in last(infos, "engineer")["error"]
    # naming a room passes on its layout and rubble, but not the victims in it
    *_, infos = step(env, medic="say the Lab has rubble on its east side")
    view = infos["transporter"]["view"]
    assert view["known_victims"] == ()
    assert view["known_rubble"] == ({"rooms": ("Lab", "Vault"), "cell": (8, 2)},)
    assert env.know["transporter"].rubble == {1}
    *_, infos = step(env, transporter="go to Vault")
    assert last(infos, "transporter")["kind"] == "rejected" and "no open route" in last(infos, "transporter")["error"]


def test_older_news_never_overrides_a_newer_look_at_the_room():
    env = make(THREE_STABLE, ["Lab"])
    step(env, medic="go to Lab", engineer="go to Lab")
    run_until_idle(env, "medic")  # both see victims 1, 2, 3 in the Lab
    step(env, medic="go to Hospital")
    run_until_idle(env, "medic")  # the medic leaves, its notes as of then
    step(env, engineer="pick up victim 2")  # victim 2 leaves the Lab's floor while the medic is away
    step(env, transporter="go to Lab")
    run_until_idle(env, "transporter")  # the transporter looks at the Lab later: victims 1 and 3 only
    assert set(env.know["transporter"].victims) == {1, 3}
    step(env, medic="say victim 2 is in the Lab")  # the medic's older news
    assert 2 not in env.know["transporter"].victims  # it has seen the Lab since: its own, newer look wins
    step(env, transporter="go to Hospital")
    run_until_idle(env, "transporter")
    *_, infos = step(env)
    assert [v["victim"] for v in infos["transporter"]["view"]["known_victims"]] == [1, 3]


def test_victim_lists_in_messages_are_all_shared():
    assert mentioned_victims("victims 3, 5 and 9 in the lab") == {3, 5, 9}
    assert mentioned_victims("victim 7 (critical) and 12; also v4") == {7, 12, 4}
    assert mentioned_victims("I found 2 victims in room 3") == set()
    env = make(THREE_STABLE, ["Lab"])
    step(env, medic="go to Lab")
    run_until_idle(env, "medic")
    *_, infos = step(env, medic="say victims 1 and 3 are here")
    assert [v["victim"] for v in infos["transporter"]["view"]["known_victims"]] == [1, 3]


def test_no_communication_condition_denies_messages():
    env = make(RUBBLE_MAP, RUBBLE_NAMES, communication="none")
    step(env, medic="go to Lab")
    run_until_idle(env, "medic")
    *_, infos = step(env, medic="say victim 1 is in the Lab", engineer="tell medic hello")
    for a in ("medic", "engineer"):
        assert last(infos, a)["kind"] == "not_allowed" and "communication is off" in last(infos, a)["error"]
        assert not {"say", "tell"} & {f.command for f in infos[a]["valid_actions"]}
    assert infos["transporter"]["view"]["new_messages"] == () and env.know["transporter"].victims == {}
    assert env.know["transporter"].mapped == {env.plan.hospital}


def test_same_room_condition_reaches_only_the_senders_room():
    env = make(RUBBLE_MAP, RUBBLE_NAMES, communication="same_room")
    step(env, medic="go to Lab", engineer="go to Lab")
    run_until_idle(env, "medic")
    assert env.room["engineer"] == env.room["medic"] != env.room["transporter"]
    *_, infos = step(env, medic="tell transporter victim 1 is here")
    assert last(infos, "medic")["kind"] == "rejected" and "not in your room" in last(infos, "medic")["error"]
    assert infos["transporter"]["view"]["new_messages"] == ()
    *_, infos = step(env, medic="say victim 1 is here, and rubble east of the Lab")
    assert last(infos, "medic")["ok"] is True
    assert infos["engineer"]["view"]["new_messages"][-1].endswith("] medic: victim 1 is here, and rubble east of the Lab")
    assert infos["transporter"]["view"]["new_messages"] == ()
    assert env.know["transporter"].victims == {} and env.know["transporter"].rubble == set()
    *_, infos = step(env, medic="tell engineer victim 1")
    assert last(infos, "medic")["ok"] is True


class Chatty:
    """A seeded random teammate that explores with `go to`, and passes on what it knows by name."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, info: dict) -> str:
        view = info["view"]
        roll = self.rng.random()
        known = [v["victim"] for v in view["known_victims"]] + [v["victim"] for v in view["victims_here"]]
        if roll < 0.2 and known:
            picks = sorted({int(self.rng.choice(known)) for _ in range(2)})
            return f"say victims {', '.join(map(str, picks))} are in {view['room']}"
        if roll < 0.25:
            mate = [a for a in view["team"] if a != view["agent"]][int(self.rng.integers(len(view["team"]) - 1))]
            return f"tell {mate} {view['room']} checked"
        rooms = [r for r in view["rooms"] if r != view["room"]]
        if roll < 0.6 and rooms:
            return f"go to {rooms[int(self.rng.integers(len(rooms)))]}"
        forms = info["valid_actions"]
        return forms[int(self.rng.integers(len(forms)))].sample(self.rng) if forms else "wait"


_VICTIM_WORD = re.compile(r"\bvictims?\s+(\d+)", re.IGNORECASE)


def victims_named_in_text(text: str) -> set[int]:
    """Victim numbers the observation names, leaving out the lines that echo the agent's own words or grammar."""
    lines = [l for l in text.splitlines() if not l.startswith(("Now:", "Your last action", "Messages:"))]
    return {int(n) for n in _VICTIM_WORD.findall("\n".join(lines))}


@pytest.mark.parametrize("communication", ["global", "same_room", "none"])
def test_agents_learn_of_victims_only_by_seeing_or_being_told(communication):
    learned_by_message = False
    for seed in range(3):
        env = teamenvs.make("search_rescue_v0", width=24, height=24, n_victims=30, communication=communication, max_steps=150)
        obs, infos = env.reset(seed=seed)
        policies = {a: Chatty(seed * 10 + i) for i, a in enumerate(env.possible_agents)}
        seen = {a: set() for a in env.agents}  # victims lying in a room while the agent was in it, or carried by it
        told = {a: set() for a in env.agents}  # victims named in messages it received
        while env.agents:
            for a in env.agents:
                for m in infos[a]["view"]["new_messages"]:
                    told[a] |= mentioned_victims(m.split(": ", 1)[1])
                seen[a] |= env.room_victims[env.room[a]]
                if env.carrying[a] is not None:
                    seen[a].add(env.carrying[a])
                view = infos[a]["view"]
                allowed = seen[a] | told[a]
                named = {v["victim"] for v in view["known_victims"]} | {v["victim"] for v in view["victims_here"]}
                named |= {view["carrying"]["victim"]} if view["carrying"] else set()
                named |= {e["victim"] for e in infos[a]["events"] if "victim" in e}
                assert named <= allowed, (seed, env.step_count, a, named - allowed)
                assert victims_named_in_text(obs[a]) <= allowed, (seed, env.step_count, a, obs[a])
                assert set(env.know[a].victims) <= allowed
                learned_by_message |= bool(set(env.know[a].victims) - seen[a])
                if communication == "none":
                    assert not told[a] and env.know[a].mapped == env.know[a].visited
                    neighbours = {env.plan.doors[d].other(r) for r in env.know[a].visited for d in env.plan.room_doors[r]}
                    assert {env.world.room_ids[n.lower()] for n in view["rooms"]} <= env.know[a].visited | neighbours
            actions = {a: policies[a].act(infos[a]) for a in env.agents if infos[a]["needs_action"]}
            obs, _, _, _, infos = env.step(actions)
        visited = set().union(*(env.know[a].visited for a in env.possible_agents))
        assert len(visited) > 3  # the team did get around
    assert learned_by_message is (communication != "none")  # and messages did teach, where they can


def test_full_map_knows_every_room_from_the_start():
    for seed in range(5):
        env = teamenvs.make("search_rescue_v0", preset="full_map", width=40, height=30)
        _, infos = env.reset(seed=seed)
        names = {r.name for r in env.plan.rooms}
        for a in env.agents:
            assert set(infos[a]["view"]["rooms"]) == names
            assert infos[a]["view"]["known_victims"] == ()  # the map, not the victims
        plain = teamenvs.make("search_rescue_v0", width=40, height=30)
        _, infos = plain.reset(seed=seed)
        hospital = plain.plan.hospital
        expected = {HOSPITAL} | {plain.plan.rooms[plain.plan.doors[d].other(hospital)].name for d in plain.plan.room_doors[hospital]}
        assert set(infos["medic"]["view"]["rooms"]) == expected != names


# ---------------------------------------------------------------------- metrics
def test_metrics_of_a_hand_driven_episode():
    env = teamenvs.make("search_rescue_v0")
    with env.recording(EpisodeRecorder()) as recorder:
        env.reset(seed=0, options={"layout": TWO_VICTIMS, "room_names": ["Lab"]})
        # victim 1 (stable) at (6,2), victim 2 (critical) at (7,2); the Hospital's door at (4,2)
        script = [
            {"medic": "go to Lab", "transporter": "wait", "engineer": "say I will guard the Hospital"},  # 1
            {"transporter": "go to Lab", "engineer": "wait"},  # 2
            {"engineer": "wait"},  # 3: the medic enters the Lab first and locates both victims
            {"medic": "move east", "engineer": "dance"},  # 4: the transporter arrives at (5,2)
            {"medic": "stabilize victim 2", "transporter": "pick up victim 1", "engineer": "wait"},  # 5
            {"transporter": "go to Hospital", "engineer": "wait"},  # 6
            {"engineer": "wait"},  # 7: at (3,2)
            {"transporter": "drop victim", "engineer": "wait"},  # 8: +10
            {"transporter": "go to Lab", "engineer": "wait"},  # 9: victim 2 stabilized
            {"medic": "wait", "engineer": "wait"},  # 10: back at (5,2)
            {"medic": "wait", "transporter": "go to victim 2", "engineer": "wait"},  # 11: one cell, to (6,2)
            {"medic": "wait", "transporter": "pick up victim 2", "engineer": "wait"},  # 12
            {"medic": "wait", "transporter": "go to Hospital", "engineer": "wait"},  # 13
            {"medic": "wait", "engineer": "wait"},  # 14
            {"medic": "wait", "engineer": "wait"},  # 15: at (3,2)
            {"medic": "wait", "transporter": "drop victim", "engineer": "wait"},  # 16: +50, all rescued
        ]
        for n, actions in enumerate(script, 1):
            _, rewards, terms, _, infos = env.step(actions)
            assert rewards["medic"] == {8: 10.0, 16: 50.0}.get(n, 0.0), n
            assert all(infos[a]["last_action"]["ok"] is not False for a in actions if a != "engineer"), (n, infos)
        assert all(terms.values()) and env.agents == []
        records = recorder.records
        m = episode_metrics(records)
        assert (m["victims_rescued"], m["victims_total"], m["rescued_stable"], m["rescued_critical"]) == (2, 2, 1, 1)
        assert (m["points"], m["steps"], m["completed"]) == (60, 16, True)
        # medic: go to, move, stabilize; transporter: 4 go to, go to victim, 2 pick up, 2 drop; engineer: none
        assert m["action_events"] == 12 and m["action_events_per_agent"] == 4
        assert m["action_events_by_type"] == {
            "move": 1, "go to": 5, "go to victim": 1, "pick up victim": 2, "drop victim": 2,
            "stabilize victim": 1, "clear rubble": 0, "wait": 7 + 1 + 14,
        }
        assert m["communication_events"] == m["messages_sent"] == 1
        assert m["coverage_rooms"] == 1.0
        assert m["coverage_cells"] == pytest.approx(4 / 18)  # (2,2), (3,2), (5,2), (6,2) of 9 + 9 floor cells
        assert m["invalid_action_rate"] == pytest.approx(1 / 36)  # 'dance'; busy turns are not actions
        per = m["per_agent"]
        assert per["medic"] | {"actions_by_type": None} == {
            "steps_moved": 4, "messages_sent": 0, "conversations_started": 0, "rooms_visited": 2, "victims_located_first": 2, "victims_delivered": 0,
            "action_events": 3, "actions_by_type": None, "busy_steps": 9, "communicating_steps": 0, "idle_steps": 7,
        }
        assert per["transporter"] | {"actions_by_type": None} == {
            "steps_moved": 11, "messages_sent": 0, "conversations_started": 0, "rooms_visited": 2, "victims_located_first": 0, "victims_delivered": 2,
            "action_events": 9, "actions_by_type": None, "busy_steps": 15, "communicating_steps": 0, "idle_steps": 1,
        }
        assert per["engineer"] | {"actions_by_type": None} == {
            "steps_moved": 0, "messages_sent": 1, "conversations_started": 1, "rooms_visited": 1, "victims_located_first": 0, "victims_delivered": 0,
            "action_events": 0, "actions_by_type": None, "busy_steps": 0, "communicating_steps": 1, "idle_steps": 15,
        }
        assert per["transporter"]["actions_by_type"]["go to"] == 4 and per["engineer"]["actions_by_type"]["wait"] == 14
        assert m == SearchRescueEnv.episode_metrics(records)


def test_metrics_from_run_episode_match_the_log():
    env = teamenvs.make("search_rescue_v0", width=20, height=20, n_victims=10, max_steps=60)
    result = agents.run_episode(env, agents.make_policies(env, "random", seed=1), seed=1)
    m = result.metrics
    assert m == episode_metrics(result.records)
    assert m["steps"] == result.steps == 60 and m["completed"] is False
    assert m["victims_total"] == 10 and 0 <= m["victims_rescued"] <= 10
    assert m["points"] == 10 * m["rescued_stable"] + 50 * m["rescued_critical"]
    assert sum(result.returns.values()) == 3 * m["points"]
    assert m["action_events"] == sum(v for k, v in m["action_events_by_type"].items() if k != "wait")
    for p in m["per_agent"].values():
        assert p["busy_steps"] + p["communicating_steps"] + p["idle_steps"] == 60
        assert p["rooms_visited"] >= 1
    assert m["messages_sent"] == sum(p["messages_sent"] for p in m["per_agent"].values())
    assert m["communication_events"] == sum(p["conversations_started"] for p in m["per_agent"].values())
    assert 0 < m["communication_events"] < m["messages_sent"]  # random agents talk in bursts
    assert 0 < m["coverage_rooms"] <= 1 and 0 < m["coverage_cells"] <= 1


# ---------------------------------------------------------------------- config
@pytest.mark.parametrize(
    "config,message",
    [
        ({"width": 9}, "width must be from 10 to 100, got 9"),
        ({"width": 101}, "width must be from 10 to 100, got 101"),
        ({"height": 9}, "height must be from 10 to 100"),
        ({"complexity": 0}, "complexity must be from 1 to 10, got 0"),
        ({"complexity": 11}, "complexity must be from 1 to 10, got 11"),
        ({"team": ["medic", "pilot"]}, "unknown role"),
        ({"team": []}, "team must be a list of 1 to 10 roles"),
        ({"communication": "radio"}, "communication must be one of global, same_room, none, got 'radio'"),
        ({"critical_fraction": 1.5}, "critical_fraction must be from 0 to 1, got 1.5"),
        ({"widht": 20}, "Did you mean 'width'"),
    ],
)
def test_config_errors_are_clear(config, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        teamenvs.make("search_rescue_v0", **config)


def test_too_many_victims_for_a_small_map():
    env = teamenvs.make("search_rescue_v0", width=10, height=10, n_victims=60)
    with pytest.raises(ConfigError, match="n_victims=60 does not fit"):
        env.reset(seed=0)


def test_victims_that_can_never_fit_are_refused_when_the_env_is_made():
    """More victims than any drawn map of the size could hold, or than the fixed map holds, are refused by `make`,
    not by a reset that may come much later (the fixed map's exact count: as many fit, one more does not)."""
    with pytest.raises(ConfigError, match="n_victims=64 cannot fit on a 10x10 map, which has fewer than 64 floor cells"):
        teamenvs.make("search_rescue_v0", width=10, height=10, n_victims=64)
    plan = fixed_floor_plan(teamenvs.make("search_rescue_v0", preset="easy").config)[0]
    free = plan.floor_cells - plan.rooms[plan.hospital].area
    env = teamenvs.make("search_rescue_v0", preset="easy", n_victims=free)
    env.reset(seed=0)
    assert len(env.world.victims) == free
    with pytest.raises(ConfigError, match=f"n_victims={free + 1} does not fit: the map of map_seed=30 has {free} floor cells"):
        teamenvs.make("search_rescue_v0", preset="easy", n_victims=free + 1)


def test_presets_combine_with_plus():
    env = teamenvs.make("search_rescue_v0", preset="hard+transporters_5")
    cfg = env.config
    assert (cfg.width, cfg.height, cfg.complexity, cfg.map_seed) == (50, 50, 8, 58)
    assert env.possible_agents == ["transporter", "transporter_2", "transporter_3", "transporter_4", "transporter_5"]
    env.reset(seed=0)
    assert len(env.victims) == 35 and all(v.kind == "stable" for v in env.victims)
    assert env.rubble == set()
    assert teamenvs.make("search_rescue_v0", preset="easy+same_room").config.communication == "same_room"
    assert teamenvs.make("search_rescue_v0", preset="no_communication").config.communication == "none"
    assert teamenvs.make("search_rescue_v0", preset="medium+full_map").config.full_map is True
    with pytest.raises(ConfigError, match="unknown preset 'hardd'"):
        teamenvs.make("search_rescue_v0", preset="hardd")


def test_rejections_never_reveal_the_fate_of_victims_the_agent_does_not_know():
    env = teamenvs.make("search_rescue_v0", preset="easy")
    env.reset(seed=0)
    unknown = next(v for v in env.victims if v.id not in env.know["medic"].victims)
    unknown.rescued = True
    env.rescued.append(unknown.id)
    for command in ("go to victim", "pick up victim", "stabilize victim"):
        *_, infos = env.step({"medic": f"{command} {unknown.id}", "engineer": "wait", "transporter": "wait"})
        error = infos["medic"]["last_action"]["error"]
        assert "do not know where victim" in error and "rescued" not in error


def test_views_share_read_only_parts_and_text_is_as_rendered_from_plain_copies():
    """The parts of a view that change seldom (victims here, doorways, notes and rubble elsewhere, route distances)
    are read-only objects that later views hold too, and their text is worked out once per object: every
    observation must still read as the view rendered afresh from plain dicts, and no part may be changed in place."""
    from teamenvs.core.view import SharedFacts, thaw
    from teamenvs.search_rescue.view import render_view
    from teamenvs.testing import _valid_actions

    env = teamenvs.make("search_rescue_v0", preset="easy")
    rng = np.random.default_rng(3)
    observations, infos = env.reset(seed=3)
    seen: dict[str, set[int]] = {}
    shared_again, elsewhere = 0, 0
    for _ in range(400):
        if not env.agents:
            observations, infos = env.reset(seed=4)
        for agent in env.agents:
            view = infos[agent]["view"]
            assert render_view(thaw(view)) == observations[agent]
            for key in ("victims_here", "exits", "known_victims", "known_rubble"):
                assert all(type(part) is SharedFacts for part in view[key])
                shared_again += id(view[key]) in seen.get(key, set()) and bool(view[key])
                seen.setdefault(key, set()).add(id(view[key]))
            elsewhere += bool(view["known_victims"])
            with pytest.raises(TypeError, match="read-only"):
                view["exits"][0]["rubble"] = True
        observations, _, _, _, infos = env.step(_valid_actions(infos, env.agents, rng))
    assert elsewhere > 50 and shared_again > 100  # notes elsewhere were shown, and parts were held by later views
