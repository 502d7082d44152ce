"""Scripted search-and-rescue team (ASIST roles), deciding from each agent's view only.

Every role: after walking into rooms it had not seen, announce them with `say` ("Blue
Lounge: victims 3 (critical), 5. Red Lab: no victims."), which passes the rooms and victims
on to teammates; claim a victim before fetching it ("taking victim 5") so that two carriers
do not go for the same one. Then, by role:

- transporter: carry the nearest known carryable victim (stable, or stabilized) to the
  Hospital; else explore the nearest unvisited room of the known room graph.
- medic: stabilize the nearest known critical victim (and say so); else explore; else carry.
- engineer: clear the nearest known rubble (and say so); else explore; else carry.

Exploration picks the nearest unvisited room with a small per-agent random preference, so
teammates fan out instead of walking in a line.

Without navigation assistance (`navigation=False`: no distances, no `go to`) the team walks with
`move`: inside a room straight to its target, else to the doorway of its room that leads to the
target room, or that starts the shortest way there through the rooms it has stood in (it remembers
the exits it saw in each), or else that it has taken least often from this room toward that room
(then whose doorway lies nearest the target cell: the Hospital is where it started); exploring, to an
unvisited room, else the room it has entered least often. It keeps the victim it chose until it is
done with it (distances as the crow flies change as it walks). A message that interrupts a busy agent
(`interrupt_to_talk`) is not answered: the team carries on.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any, Callable, Mapping

from teamenvs.core.policy import ScriptedPolicy

_CLAIM = re.compile(r"^\[step (\d+)\] (\S+?)(?: \(to you\))?: taking victim (\d+)")
CLAIM_STEPS = 200  # a claim lapses after this many steps (the claimant may have found it gone)
HOSPITAL = "Hospital"
NEEDS_MEDIC = "critical, needs the medic"
_STEP = {"north": (0, -1), "south": (0, 1), "east": (1, 0), "west": (-1, 0)}


def _chebyshev(a, b) -> int:
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))


_OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east"}


def _manhattan(a, b) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def _toward(src, dst) -> str:
    """The move that brings `src` one cell closer to `dst` inside a room (x first, then y)."""
    if dst[0] != src[0]:
        return "move east" if dst[0] > src[0] else "move west"
    return "move south" if dst[1] > src[1] else "move north"


class SearchRescueTeam(ScriptedPolicy):
    """The role-aware baseline; the role is read from the view."""

    name = "team"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._new_episode()

    def reset(self, agent_id: str, briefing: str) -> None:
        super().reset(agent_id, briefing)
        self._new_episode()  # an object reused for another episode starts it afresh

    def _new_episode(self) -> None:
        self.announced: set[str] = set()
        self.claims: dict[int, tuple[str, int]] = {}
        self.preference: dict[str, float] = {}
        self.next_action: tuple[str, int] | None = None  # (the action, its victim) to send next
        self.home: tuple[int, int] | None = None  # where it started: in the Hospital
        self.heading: str | None = None  # the direction of its last move (walking without navigation)
        self.entered: dict[str, int] = {}  # room -> how often it walked in (walking without navigation)
        self.last_room: str | None = None
        self.came_from: str | None = None
        # walking without navigation
        self.targets: dict[str, int] = {}  # purpose (stabilize, carry) -> the victim it chose
        self.exits_seen: dict[str, frozenset[str]] = {}  # room it stood in -> the rooms its open exits lead to
        self.taken: dict[tuple[str, str], dict[str, int]] = {}  # (room, toward room) -> exit's room -> times taken
        self.leaving: tuple[tuple[str, str], str] | None = None  # ((room, toward room), the exit's room) chosen now

    # ------------------------------------------------------------------ helpers
    def _talk(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> bool:
        return view["communication"] != "none" and self.allowed(info, "say")

    def _victims(self, view: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Every victim the agent knows of, with the room it lies in."""
        here = [{**v, "room": view["room"]} for v in view["victims_here"]]
        return here + list(view["known_victims"])

    def _distance(self, view: Mapping[str, Any], victim: Mapping[str, Any]) -> float | None:
        """Rough walking distance to a victim, or None when no known route leads there."""
        if victim["room"] == view["room"] and not view["doorway"]:
            return _chebyshev(view["cell"], victim["cell"])
        if not view["navigation"]:  # as the crow flies
            return abs(view["cell"][0] - victim["cell"][0]) + abs(view["cell"][1] - victim["cell"][1])
        rooms = view["rooms"]
        return rooms[victim["room"]] if victim["room"] in rooms else None

    def _nearest(self, view: Mapping[str, Any], wanted: Callable[[Mapping[str, Any]], bool], purpose: str) -> dict[str, Any] | None:
        """The nearest reachable known victim that `wanted` accepts (ties: the lower number); without navigation, the one
        chosen for `purpose` before while `wanted` still accepts it: distances as the crow flies change as the agent
        walks, and two victims that swapped places every step had kept a transporter stepping east and west between
        them for 1,500 steps (found by review)."""
        options = [(d, v["victim"], v) for v in self._victims(view) if wanted(v) and (d := self._distance(view, v)) is not None]
        if not options:
            return None
        if not view["navigation"]:
            held = self.targets.get(purpose)
            for _, vid, v in options:
                if vid == held:
                    return v
            self.targets[purpose] = min(options)[1]
        return min(options)[2]

    @staticmethod
    def _within_reach(view: Mapping[str, Any], v: Mapping[str, Any]) -> bool:
        return v["room"] == view["room"] and _chebyshev(view["cell"], v["cell"]) <= 1

    def _read_claims(self, view: Mapping[str, Any]) -> None:
        """Note teammates' claims; of two claims on one victim the earlier wins, then the smaller agent id."""
        for line in view["new_messages"]:
            m = _CLAIM.match(line)
            if m and m.group(2) != view["agent"]:
                claim = (int(m.group(1)), m.group(2))
                vid = int(m.group(3))
                if vid not in self.claims or claim < self.claims[vid] or view["step"] - self.claims[vid][0] >= CLAIM_STEPS:
                    self.claims[vid] = claim

    def _claimed(self, view: Mapping[str, Any], vid: int) -> bool:
        """Whether a teammate holds a live claim on victim `vid`."""
        claim = self.claims.get(vid)
        return claim is not None and claim[1] != view["agent"] and view["step"] - claim[0] < CLAIM_STEPS

    def _announcement(self, view: Mapping[str, Any]) -> str | None:
        new = [r for r in view["visited"] if r not in self.announced and r != HOSPITAL]
        if not new:
            return None
        self.announced.update(new)
        victims = self._victims(view)
        parts = []
        for room in new:
            found = [v for v in victims if v["room"] == room]
            if found:
                listed = ", ".join(f"{v['victim']} ({v['status'].split(',')[0]})" for v in found)
                parts.append(f"{room}: victims {listed}.")
            else:
                parts.append(f"{room}: no victims.")
        rubble = [r for r in view["known_rubble"] if set(r["rooms"]) & set(new)]
        rubble += [{"rooms": (view["room"], e["to"])} for e in view["exits"] if e["rubble"] and view["room"] in new]
        for r in rubble:
            parts.append(f"Rubble between {r['rooms'][0]} and {r['rooms'][1]}.")
        return "say " + " ".join(parts)

    # ------------------------------------------------------------------ decisions
    def decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        self._read_claims(view)
        if view["interrupted"]:
            return "continue"
        if self.home is None:
            self.home = tuple(view["cell"])
        if not view["doorway"] and view["room"] != self.last_room:
            self.entered[view["room"]] = self.entered.get(view["room"], 0) + 1
            self.came_from, self.last_room = self.last_room, view["room"]
            self.leaving = None  # a new room: a new choice of exit (counted again if it comes back here)
        if not view["doorway"] and not view["navigation"]:
            self.exits_seen[view["room"]] = frozenset(e["to"] for e in view["exits"] if not e["rubble"])
        action = self._decide(view, info)
        if action.startswith("move "):
            self.heading = action[5:]
        return action

    def _decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        if self.next_action is not None:
            (action, vid), self.next_action = self.next_action, None
            # sent the step after its claim only if the victim is still one to carry (found by review: a teammate had
            # rescued it in between, and the action was refused)
            if any(v["victim"] == vid and v["status"] != NEEDS_MEDIC for v in self._victims(view)):
                return action
        if self._talk(view, info):
            announcement = self._announcement(view)
            if announcement:
                return announcement
        if view["doorway"]:
            if not view["navigation"] and self.heading is not None:
                return f"move {self.heading}"  # on through the doorway
            return f"go to {view['room']}" if view["navigation"] else self._toward_room(view, view["room"])
        if view["carrying"]:
            return "drop victim" if view["room"] == HOSPITAL else self._go(view, HOSPITAL, self.home)
        role = view["role"]
        if role == "medic":
            return self._stabilize(view, info) or self._explore(view) or self._carry(view, info) or "wait"
        if role == "engineer":
            return self._clear(view, info) or self._explore(view) or self._carry(view, info) or "wait"
        return self._carry(view, info) or self._explore(view) or "wait"

    def _stabilize(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str | None:
        for event in view["events"]:
            m = re.match(r"You stabilized victim (\d+)", event)
            if m and self._talk(view, info):
                return f"say victim {m.group(1)} stabilized in {view['room']}, ready to carry"
        v = self._nearest(view, lambda v: v["status"] == NEEDS_MEDIC, "stabilize")
        if v is None:
            return None
        if self._within_reach(view, v):
            return f"stabilize victim {v['victim']}"
        return self._go_to_victim(view, v)

    def _clear(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str | None:
        for event in view["events"]:
            m = re.match(r"You cleared the rubble between (.+) and (.+)\.", event)
            if m and self._talk(view, info):
                return f"say cleared the rubble between {m.group(1)} and {m.group(2)}"
        for e in view["exits"]:
            if e["rubble"]:
                door = e["cell"]
                dx, dy = _STEP[e["direction"]]
                spot = (door[0] - dx, door[1] - dy)
                if tuple(view["cell"]) == spot:
                    return f"clear rubble {e['direction']}"
                return _toward(view["cell"], spot)
        options = []
        for r in view["known_rubble"]:
            near = [view["rooms"][name] for name in r["rooms"] if name in view["rooms"]]
            if near:
                side = min((view["rooms"][n], n) for n in r["rooms"] if n in view["rooms"])
                options.append(side)
        if not view["navigation"]:
            near = min(view["known_rubble"], key=lambda r: _manhattan(view["cell"], r["cell"]), default=None)
            return None if near is None else self._go(view, near["rooms"][0], tuple(near["cell"]))
        if not options:
            return None
        return f"go to {min(options)[1]}"

    def _carry(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str | None:
        v = self._nearest(view, lambda v: v["status"] != NEEDS_MEDIC and not self._claimed(view, v["victim"]), "carry")
        if v is None:
            return None
        vid = v["victim"]
        if self._within_reach(view, v):
            return f"pick up victim {vid}"
        if self._talk(view, info) and len(view["team"]) > 1 and self.claims.get(vid, (0, ""))[1] != view["agent"]:
            self.claims[vid] = (view["step"], view["agent"])
            if view["navigation"]:
                self.next_action = (f"go to victim {vid}", vid)
            return f"say taking victim {vid}"
        return self._go_to_victim(view, v)

    # ------------------------------------------------------------------ walking
    def _go_to_victim(self, view: Mapping[str, Any], v: Mapping[str, Any]) -> str:
        if view["navigation"]:
            return f"go to victim {v['victim']}"
        if v["room"] == view["room"]:
            return _toward(view["cell"], v["cell"])
        return self._go(view, v["room"], tuple(v["cell"]))

    def _go(self, view: Mapping[str, Any], room: str, cell: tuple[int, int] | None) -> str:
        """`go to <room>`, or without navigation a move toward it through the doorways of this room."""
        if view["navigation"]:
            return f"go to {room}"
        exits = [e for e in view["exits"] if not e["rubble"]]
        through = [e for e in exits if e["to"] == room]
        if not through and exits:
            hop = self._first_hop(view["room"], room)
            through = [e for e in exits if e["to"] == hop]
        if not through and exits:
            # no known way: the exit taken least often from here toward that room (a loop of rooms, each left by the exit
            # nearest the target, had been walked round to the step cap), not straight back, nearest the target
            key = (view["room"], room)
            if self.leaving is not None and self.leaving[0] == key:
                through = [e for e in exits if e["to"] == self.leaving[1]]
            if not through:
                taken = self.taken.setdefault(key, {})
                through = [min(exits, key=lambda e: (taken.get(e["to"], 0), e["to"] == self.came_from,
                                                     0 if cell is None else _manhattan(e["cell"], cell), e["to"]))]
                taken[through[0]["to"]] = taken.get(through[0]["to"], 0) + 1
                self.leaving = (key, through[0]["to"])
        return self._to_doorway(view, through[0]) if through else "wait"

    def _first_hop(self, start: str, goal: str) -> str | None:
        """The room to go to first on the shortest way (in rooms) from `start` to `goal` through the rooms the agent has
        stood in, by the exits it saw there; None when it knows no way."""
        first: dict[str, str] = {}
        queue = deque([start])
        while queue:
            room = queue.popleft()
            for to in sorted(self.exits_seen.get(room, ())):
                if to != start and to not in first:
                    first[to] = first.get(room, to)
                    if to == goal:
                        return first[to]
                    queue.append(to)
        return None

    def _toward_room(self, view: Mapping[str, Any], room: str) -> str:
        """From a doorway, the move into `room` (one of the two rooms the doorway joins)."""
        for e in view["exits"]:
            if tuple(e["cell"]) == tuple(view["cell"]):
                return f"move {_OPPOSITE[e['direction']]}"
        return "wait"

    def _to_doorway(self, view: Mapping[str, Any], exit_: Mapping[str, Any]) -> str:
        """The move toward (and then into) an exit's doorway."""
        door = tuple(exit_["cell"])
        dx, dy = _STEP[exit_["direction"]]
        spot = (door[0] - dx, door[1] - dy)
        if tuple(view["cell"]) == spot:
            return f"move {exit_['direction']}"
        return _toward(view["cell"], spot)

    def _explore(self, view: Mapping[str, Any]) -> str | None:
        if not view["navigation"]:
            exits = [e for e in view["exits"] if not e["rubble"]]
            if not exits:
                return None
            pick = min(exits, key=lambda e: (e["visited"], self.entered.get(e["to"], 0), self._preference(e["to"])))
            return self._to_doorway(view, pick)
        visited = set(view["visited"])
        options = []
        for room, cells in view["rooms"].items():
            if room in visited:
                continue
            options.append((cells + self._preference(room), room))
        if not options:
            return None
        return f"go to {min(options)[1]}"

    def _preference(self, room: str) -> float:
        if room not in self.preference:
            self.preference[room] = float(self.rng.uniform(0, 8))
        return self.preference[room]


class SearchRescueGreedy(SearchRescueTeam):
    """The same team without talking: no announcements, no claims (for communication ablations)."""

    name = "silent"

    def _talk(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> bool:
        return False


BASELINES = {"team": SearchRescueTeam, "silent": SearchRescueGreedy}
DEFAULT = "team"
