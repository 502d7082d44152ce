"""`search_rescue_v0`: nothing an agent receives depends on what it cannot know, action masks and rewards included.

Differential checks: two episodes that differ only in a fact hidden from an observing agent (a teammate in
another room, or one in its room doing or carrying something its view does not show) give that agent the same
text, vector, action mask, info (view, valid forms, last action, events), constrained-decoding regex and reward
at every step. The leaks they pin down, now closed:

- a `go to victim` masked out because an unseen teammate carrying that victim stood in the Hospital;
- the "first in team order" precedence of masks, which read unseen teammates' positions and idleness (two
  engineers on either side of a rubble doorway; a medic busy or not next to the same victim);
- refusals naming a teammate ("X is already clearing that doorway", "... is being carried by X");
- every agent paid every rescue at once under `same_room` and `none`, where its view shows only the rescues it
  knows of.

Contention between teammates acting in the same step is an accepted action whose outcome says what happened
(`missed`, `done_already`), so masks stay exact without looking at teammates: checked with random masked play.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

import numpy as np
import pytest

import teamenvs
from teamenvs.core.constrain import constraint_for
from teamenvs.search_rescue.commands import command_for
from teamenvs.testing import random_masked_actions

ENV = "search_rescue_v0"

# Hospital (1..3), doorway (4,1), Room 1 (5..7, 1..3), doorway (8,1), Room 2 (9..11, 1..3).
# Victim 1 stable at (6,2) in Room 1, victim 2 stable at (11,2) in Room 2 (so one rescue does not end the episode).
ROW = """
#############
#hhh+...+...#
#hhh#.s.#..s#
#hhh#...#...#
#############
"""

# Room 1 (5..7, 1..2) and Room 2 (9..11, 1..2) meet at a doorway blocked by rubble (8,1); Room 2 opens south (9,3)
# onto Room 3 (5..11, 4), which opens west (4,4) onto the Hospital. Victim 1 stable at (11,2) in Room 2.
RUBBLE_DOOR = """
#############
#hhh+...X...#
#hhh#.....s.#
#hhh#####+###
#hhh+.......#
#############
""".replace("#hhh#.....s.#", "#hhh#...#.s.#")

# Hospital and Room 1; victim 1 stable at (6,2), victim 2 critical at (7,2).
TWO_VICTIMS = """
#########
#hhh#...#
#hhh+.sC#
#hhh#...#
#########
"""


def norm(x: Any) -> Any:
    """A plain, comparable copy of what an agent receives (arrays as lists, forms by their repr)."""
    if isinstance(x, np.ndarray):
        return ("array", str(x.dtype), x.tolist())
    if isinstance(x, Mapping):
        return {str(k): norm(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [norm(v) for v in x]
    if x is None or isinstance(x, (str, int, float, bool)):
        return x
    return repr(x)


class Game:
    """An episode on a hand-drawn map with text commands (a discrete env, so masks and vectors are worked out too);
    `got[agent]` is everything the agent received, step by step."""

    def __init__(self, layout: str, team: tuple[str, ...], **config: Any) -> None:
        if "medic" not in team:
            config.setdefault("critical_fraction", 0.0)  # (the map's victims are the layout's; the config is checked alone)
        if "engineer" not in team:
            config.setdefault("rubble_fraction", 0.0)
        self.env = teamenvs.make(ENV, team=team, obs_type="both", action_type="discrete", **config)
        self.base = self.env.unwrapped
        self.obs, self.infos = self.env.reset(seed=0, options={"layout": layout})
        self.world = self.base.world
        self.rewards: dict[str, float] = {}
        self.got: dict[str, list[Any]] = {a: [self.received(a)] for a in self.env.agents}

    def received(self, agent: str) -> Any:
        info = self.infos[agent]
        regex = None  # (a busy agent has nothing to decide, and no constraint)
        if info["valid_actions"]:
            regex = constraint_for(info["valid_actions"], accepts=functools.partial(self.base.accepts, agent)).regex
        return norm({"observation": self.obs[agent], "reward": self.rewards.get(agent), "info": info, "regex": regex})

    def step(self, **commands: str) -> None:
        """One step: each named agent that needs an action sends its command, everyone else the no-op."""
        actions = {a: commands.get(a, 0) if self.infos[a]["needs_action"] else 0 for a in self.env.agents}
        self.obs, self.rewards, _, _, self.infos = self.env.step(actions)
        for a in self.got:
            if a in self.obs:
                self.got[a].append(self.received(a))

    def settle(self, limit: int = 60) -> None:
        """Step with no-ops until every agent needs an action."""
        for _ in range(limit):
            if all(self.infos[a]["needs_action"] for a in self.env.agents):
                return
            self.step()
        raise AssertionError("still busy")

    def do(self, agent: str, command: str, limit: int = 60) -> None:
        """`agent` sends `command`, then everyone waits until all are idle."""
        self.step(**{agent: command})
        self.settle(limit)

    def wait_until(self, step: int) -> None:
        """No-ops until the env has played `step` steps (to keep two episodes in step)."""
        while self.base.step_count < step:
            self.step()

    def label_for(self, agent: str, command: str) -> int:
        labels = self.base.interface.labels
        return next(i for i, label in enumerate(labels) if command_for(self.infos[agent]["view"], label) == command)

    def mask(self, agent: str, command: str) -> int:
        return int(self.infos[agent]["action_mask"][self.label_for(agent, command)])


def assert_same_for(agent: str, a: Game, b: Game, upto: int | None = None) -> None:
    """`agent` received the same in both episodes, step by step (up to step `upto`)."""
    got_a, got_b = a.got[agent][:upto], b.got[agent][:upto]
    assert len(got_a) == len(got_b)
    for step, (x, y) in enumerate(zip(got_a, got_b)):
        assert x == y, f"{agent} received different things at step {step}: " + ", ".join(
            k for k in x if x[k] != y[k]) + "; " + str(_first_difference(x, y))


def _first_difference(x: Any, y: Any, path: str = "") -> str:
    if isinstance(x, dict) and isinstance(y, dict):
        for k in x:
            if x[k] != y.get(k):
                return _first_difference(x[k], y.get(k), f"{path}.{k}")
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for i, (p, q) in enumerate(zip(x, y)):
            if p != q:
                return _first_difference(p, q, f"{path}[{i}]")
    return f"{path}: {str(x)[:300]} vs {str(y)[:300]}"


# ---------------------------------------------------------------------- masks
def test_go_to_victim_mask_ignores_an_unseen_carrier_standing_in_the_hospital():
    """The engineer noted victim 1 in Room 1 and waits in Room 2; the transporter (unseen) fetches victim 1 and stands
    in the Hospital with it (A), or waits there (B). The engineer's mask, constraint and all else are the same."""
    def play(fetch: bool, steps: int = 0) -> Game:
        g = Game(ROW, ("engineer", "transporter"))
        g.do("engineer", "go to Room 1")  # it sees victim 1
        g.do("engineer", "go to Room 2")  # and waits in Room 2
        if fetch:
            for command in ("go to Room 1", "go to victim 1", "pick up victim 1", "go to Hospital"):
                g.do("transporter", command)
        g.wait_until(steps)
        return g

    a = play(True)
    b = play(False, a.base.step_count)
    assert a.world.carrying["transporter"] == 1 and a.world.room["transporter"] == a.world.plan.hospital
    assert b.world.carrying["transporter"] is None
    assert a.mask("engineer", "go to victim 1") == b.mask("engineer", "go to victim 1") == 1
    assert_same_for("engineer", a, b)


def test_the_engineers_walk_is_accepted_when_the_radio_reports_that_rescue_in_the_same_step():
    """Chosen before the rescue it could not see coming, `go to victim 1` is accepted whichever acts first; when the
    rescue came first (the env's seeded random order), the walk comes to nothing and the event says why."""
    outcomes = set()
    for seed in range(8):
        g = Game(ROW, ("engineer", "transporter"))
        g.env.unwrapped._rng = np.random.default_rng(seed)
        g.do("engineer", "go to Room 1")
        g.do("engineer", "go to Room 2")
        for command in ("go to Room 1", "go to victim 1", "pick up victim 1", "go to Hospital"):
            g.do("transporter", command)
        assert g.mask("engineer", "go to victim 1") == 1
        g.step(engineer="go to victim 1", transporter="drop victim")
        assert g.world.rescued == [1]
        assert g.infos["engineer"]["last_action"]["ok"] is True
        missed = [e for e in g.infos["engineer"]["events"] if e["type"] == "missed"]
        if missed:
            assert missed[0]["text"] == "Victim 1 was rescued just now (the radio reports it), so you did not go to it."
            assert g.world.task["engineer"] is None
        else:
            assert g.world.task["engineer"].kind == "walk"  # it set off first: it walks, and will find the victim gone
        outcomes.add(bool(missed))
    assert outcomes == {True, False}


def _two_engineers(next_to_door: bool) -> Game:
    """engineer_2 walks (via Room 3) to (9,1), east of the rubble doorway (8,1); engineer, unseen in Room 1 beyond the
    rubble, walks to (7,1), west of the same doorway (`next_to_door`), or stays at (6,1)."""
    g = Game(RUBBLE_DOOR, ("engineer", "engineer"), n_victims=1)
    g.step(engineer="go to Room 1", engineer_2="go to Room 3")
    g.settle()
    g.do("engineer_2", "go to Room 2")
    w = g.world
    while w.pos["engineer_2"] != (9, 1):
        x, y = w.pos["engineer_2"]
        g.do("engineer_2", "move north" if y > 1 else "move west")
    assert w.room["engineer"] == 1 and w.room["engineer_2"] == 2
    for _ in range(6):
        x, y = w.pos["engineer"]
        command = "wait"
        if next_to_door and (x, y) != (7, 1):
            command = "move north" if y > 1 else "move east"
        g.do("engineer", command)
    return g


def test_clear_rubble_mask_ignores_an_unseen_engineer_across_the_doorway():
    a, b = _two_engineers(True), _two_engineers(False)
    assert a.world.pos["engineer"] == (7, 1) and b.world.pos["engineer"] != (7, 1)
    assert a.mask("engineer_2", "clear rubble west") == 1
    assert_same_for("engineer_2", a, b)
    # both clear it in the same step: both are accepted, one clears it and the other stops, told so
    a.step(engineer="clear rubble east", engineer_2="clear rubble west")
    assert all(a.infos[e]["last_action"]["ok"] for e in ("engineer", "engineer_2"))
    a.settle()
    assert not a.world.rubble
    kinds = sorted(e["type"] for g in a.got.values() for step in g for e in step["info"]["events"] if e["type"] in ("cleared", "done_already"))
    assert kinds == ["cleared", "done_already"]


def test_clearing_refusal_never_names_a_teammate_clearing_from_the_other_room():
    """engineer starts clearing the doorway from Room 1 (A) or waits (B); a step later engineer_2 clears it from Room 2."""
    def play(first_clears: bool) -> Game:
        g = _two_engineers(True)
        g.step(engineer="clear rubble east" if first_clears else "wait")
        g.step(engineer_2="clear rubble west")
        return g

    a, b = play(True), play(False)
    assert a.infos["engineer_2"]["last_action"]["ok"] is True
    assert a.world.task["engineer"].kind == "clear" and a.world.task["engineer_2"].kind == "clear"
    assert_same_for("engineer_2", a, b)
    a.settle()  # engineer, who began first, clears it; engineer_2 (busy a step less) stops, told so
    done = [e for step in a.got["engineer_2"] for e in step["info"]["events"] if e["type"] == "done_already"]
    assert [e["text"] for e in done] == ["The rubble between Room 1 and Room 2 is gone now, so you stop clearing it."]
    assert not a.world.rubble and a.world.task["engineer_2"] is None


def test_pick_up_mask_ignores_whether_a_medic_in_the_room_is_busy():
    """The medic and the transporter stand in Room 1 within reach of victim 1. The medic starts stabilizing victim 2
    (A) or waits (B): the transporter's view shows neither, and its mask for victim 1 is the same."""
    def play(medic_busy: bool) -> Game:
        g = Game(TWO_VICTIMS, ("medic", "transporter"))
        g.step(medic="go to Room 1", transporter="go to Room 1")
        g.settle()
        g.do("medic", "move east")  # (6,2): within reach of both victims
        g.step(medic="stabilize victim 2" if medic_busy else "wait")
        g.step()
        return g

    a, b = play(True), play(False)
    assert a.world.task["medic"].kind == "stabilize" and b.world.task["medic"] is None
    assert a.mask("transporter", "pick up victim 1") == b.mask("transporter", "pick up victim 1") == 1
    assert_same_for("transporter", a, b)


def test_stabilize_is_not_refused_because_another_medic_is_at_it():
    """medic starts stabilizing victim 2 (A) or waits (B); medic_2, beside it, then stabilizes victim 2 too."""
    def play(first_busy: bool) -> Game:
        g = Game(TWO_VICTIMS, ("medic", "medic"))
        g.step(medic="go to Room 1", medic_2="go to Room 1")
        g.settle()
        g.step(medic="move east", medic_2="move east")
        g.settle()
        g.step(medic="stabilize victim 2" if first_busy else "wait")
        g.step(medic_2="stabilize victim 2")
        return g

    a, b = play(True), play(False)
    assert a.infos["medic_2"]["last_action"]["ok"] is True
    assert_same_for("medic_2", a, b)
    a.settle()
    assert a.world.victims[1].stabilized and a.world.task["medic_2"] is None
    done = [e["text"] for step in a.got["medic_2"] for e in step["info"]["events"] if e["type"] == "done_already"]
    assert done == ["Victim 2 is stabilized now, so you stop stabilizing it."]
    assert a.world.know["medic_2"].victims[2].stabilized


def test_medics_and_pickers_in_the_same_step_are_all_accepted_and_the_random_order_decides():
    winners = set()
    for seed in range(10):
        g = Game(TWO_VICTIMS, ("medic", "engineer", "transporter"), rubble_fraction=0)
        g.env.unwrapped._rng = np.random.default_rng(seed)
        g.step(**{a: "go to Room 1" for a in g.env.agents})
        g.settle()
        assert all(g.mask(a, "pick up victim 1") == 1 for a in g.env.agents)  # no precedence: the mask is each one's own
        g.step(**{a: "pick up victim 1" for a in g.env.agents})
        assert all(g.infos[a]["last_action"]["ok"] for a in g.env.agents)
        carriers = [a for a in g.env.agents if g.world.carrying[a] == 1]
        assert len(carriers) == 1
        for a in g.env.agents:
            if a not in carriers:
                assert [e["text"] for e in g.infos[a]["events"]] == ["Victim 1 was no longer at (6,2) when you went to pick it up."]
                assert 1 not in g.world.know[a].victims
        winners.add(carriers[0])
    assert len(winners) > 1


# ---------------------------------------------------------------------- refusals
@pytest.mark.parametrize("knows_it", [False, True])
def test_pick_up_probes_never_tell_who_carries_a_victim(knows_it: bool):
    """The engineer waits in the Hospital (after seeing victim 1 in Room 1, `knows_it`); the transporter goes to victim 1
    and picks it up (A) or not (B), and comes back to the Hospital. The engineer then tries `pick up victim 1`."""
    def play(carry: bool) -> Game:
        g = Game(ROW, ("engineer", "transporter"))
        if knows_it:
            g.do("engineer", "go to Room 1")
            g.do("engineer", "go to Hospital")
        g.do("transporter", "go to Room 1")
        g.do("transporter", "go to victim 1")
        g.do("transporter", "pick up victim 1" if carry else "wait")
        g.do("transporter", "go to Hospital")
        g.step(engineer="pick up victim 1")
        return g

    a, b = play(True), play(False)
    assert a.world.carrying["transporter"] == 1 and a.infos["engineer"]["view"]["teammates_here"] == ("transporter",)
    error = a.infos["engineer"]["last_action"]["error"]
    assert "transporter" not in error and ("last saw it at (6,2)" in error if knows_it else "do not know where victim 1" in error)
    assert_same_for("engineer", a, b)


def test_no_refusal_names_a_teammate():
    """Crowded random text teams that also probe victims and doorways by number and direction (ids such as engineer_2
    cannot be mistaken for role words): no refusal of a rules command names a teammate (the old rules named carriers)."""
    from teamenvs.core.policy import RandomPolicy

    team = ("medic", "medic", "engineer", "engineer", "transporter", "transporter")
    env = teamenvs.make(ENV, team=team, width=10, height=10, complexity=1, n_victims=30, rubble_fraction=0.5,
                        critical_fraction=0.5, stabilize_steps=4, clear_steps=4)
    ids = [a for a in env.possible_agents if "_" in a]
    rng = np.random.default_rng(0)
    refusals = 0
    for seed in range(3):
        policies = {a: RandomPolicy(seed * 10 + i) for i, a in enumerate(env.possible_agents)}
        _, infos = env.reset(seed=seed)
        for _ in range(300):
            if not env.agents:
                break
            actions = {}
            for a in env.agents:
                u, n = rng.random(), int(rng.integers(1, 31))
                if u < 0.4:
                    actions[a] = policies[a].decide(infos[a]["view"], infos[a])
                elif u < 0.7:
                    actions[a] = f"pick up victim {n}"
                elif a.startswith("medic"):
                    actions[a] = f"stabilize victim {n}"
                elif a.startswith("engineer"):
                    actions[a] = "clear rubble " + ("north", "south", "east", "west")[n % 4]
                else:
                    actions[a] = f"go to victim {n}"
            _, _, _, _, infos = env.step(actions)
            for a in env.agents:
                last = infos[a]["last_action"]
                if last.get("kind") == "rejected" and last.get("command") not in ("say", "tell"):
                    refusals += 1
                    assert not any(i in last["error"] for i in ids), last
    assert refusals > 1000


# ---------------------------------------------------------------------- rewards
@pytest.mark.parametrize("communication", ["none", "same_room"])
def test_rewards_pay_only_the_rescues_an_agent_knows_of(communication: str):
    """The engineer waits in Room 2; the transporter (unseen) rescues victim 1 (A) or waits (B). The engineer's
    rewards are the same, step by step, until it sees the rescue in the Hospital; they always add up to its view's
    score, and at the episode's end to the team's points."""
    def play(rescue: bool, steps: int = 0) -> Game:
        g = Game(ROW, ("engineer", "transporter"), communication=communication, max_steps=80)
        g.do("engineer", "go to Room 1")
        g.do("engineer", "go to Room 2")
        if rescue:
            for command in ("go to Room 1", "go to victim 1", "pick up victim 1", "go to Hospital", "drop victim"):
                g.do("transporter", command)
            for _ in range(3):
                g.step()
        g.wait_until(steps)
        return g

    a = play(True)
    b = play(False, a.base.step_count)
    assert a.world.rescued == [1] and a.infos["engineer"]["view"]["score"]["points"] == 0
    assert_same_for("engineer", a, b)
    paid = sum(step["reward"] or 0 for step in a.got["engineer"])
    assert paid == 0 and sum(step["reward"] or 0 for step in a.got["transporter"]) == 10
    a.step(engineer="go to Hospital")  # walking back, it sees the victim lying in the Hospital
    a.settle()
    assert a.infos["engineer"]["view"]["score"]["points"] == 10
    assert sum(step["reward"] or 0 for step in a.got["engineer"]) == 10
    while a.env.agents:
        a.step()
    assert sum(step["reward"] or 0 for step in a.got["engineer"]) == 10  # nothing more: it knew of every rescue


def test_a_rescue_told_in_a_message_is_paid_in_the_step_it_is_read():
    g = Game(ROW, ("engineer", "transporter"), communication="same_room", max_steps=80)
    g.do("engineer", "go to Room 1")
    for command in ("go to Room 1", "go to victim 1", "pick up victim 1", "go to Hospital", "drop victim"):
        g.do("transporter", command)
    assert g.infos["engineer"]["view"]["score"]["points"] == 0
    g.do("transporter", "go to Room 1")
    before = sum(step["reward"] or 0 for step in g.got["engineer"])
    g.step(transporter="say victim 1 rescued")
    assert g.infos["engineer"]["view"]["score"]["points"] == 10
    assert g.rewards["engineer"] == 10 and before == 0


def test_returns_are_the_teams_points_and_global_rewards_are_every_rescue_at_once():
    for communication, seed in (("global", 0), ("same_room", 1), ("none", 2)):
        env = teamenvs.make(ENV, obs_type="vector", action_type="discrete", communication=communication, width=12,
                            height=12, n_victims=12, critical_fraction=0, rubble_fraction=0,
                            team=("transporter", "transporter", "transporter"), max_steps=400)
        rng = np.random.default_rng(seed)
        _, infos = env.reset(seed=seed)
        returns = {a: 0.0 for a in env.agents}
        known = {a: 0 for a in env.agents}
        while env.agents:
            _, rewards, term, trunc, infos = env.step(random_masked_actions(infos, rng, env.agents))
            rescued_now = sum(e["points"] for e in env.unwrapped.global_events if e["type"] == "rescued")
            over = any(term.values()) or any(trunc.values())
            for a, r in rewards.items():
                returns[a] += r
                if communication == "global":
                    assert r == rescued_now  # the team reward, unchanged: the radio tells everyone at once
                elif not over:
                    points = infos[a]["view"]["score"]["points"]
                    assert r == points - known[a]  # the rise of the points it knows of, no more
                    known[a] = points
        team = sum(10 for _ in env.unwrapped.world.rescued)
        assert team > 0 and all(r == team for r in returns.values()), (communication, returns, team)


# ---------------------------------------------------------------------- exact masks
def test_masked_in_actions_are_never_refused_and_only_contention_comes_to_nothing():
    """Random crowded teams drawing only masked-in actions: nothing refused; an accepted action that came to nothing
    (`missed`) is one that a teammate's action earlier in the same step forestalled (the victim picked up or rescued),
    or one whose note was stale where the agent could not see (from a doorway)."""
    env = teamenvs.make(ENV, obs_type="vector", action_type="discrete", width=12, height=12, n_victims=40,
                        rubble_fraction=0.5, critical_fraction=0.5, stabilize_steps=3, clear_steps=2,
                        team=("medic", "medic", "engineer", "engineer", "transporter", "transporter", "transporter"))
    labels = env.unwrapped.interface.labels
    hot = np.array([label.startswith(("pick up", "stabilize", "clear", "drop", "go to nearest")) for label in labels])
    rng = np.random.default_rng(7)
    checked = missed = done = 0
    for _ in range(4):
        _, infos = env.reset(seed=int(rng.integers(2**31)))
        for _ in range(250):
            if not env.agents:
                break
            actions = {}
            for a in env.agents:
                mask = infos[a]["action_mask"].astype(bool)
                pool = mask & hot if rng.random() < 0.7 and (mask & hot).any() else mask
                choices = np.flatnonzero(pool)
                actions[a] = int(choices[rng.integers(len(choices))])
            needing = [a for a in env.agents if infos[a]["needs_action"]]
            _, _, _, _, infos = env.step(actions)
            shared = env.unwrapped.global_events
            for a in needing:
                checked += 1
                assert infos[a]["last_action"]["ok"] is not False, infos[a]["last_action"]
            for a in env.agents:
                for e in infos[a]["events"]:
                    if e["type"] == "done_already":
                        done += 1
                    if e["type"] != "missed":
                        continue
                    missed += 1
                    v = e["victim"]
                    forestalled = any(s["type"] in ("picked_up", "rescued") and s["victim"] == v and s["agent"] != a for s in shared)
                    assert forestalled or infos[a]["view"]["doorway"] is not None, (a, e, shared)
    assert checked > 3000 and missed > 0 and done > 0, (checked, missed, done)
