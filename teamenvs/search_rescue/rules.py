"""Search-and-rescue rules: the episode state (`Rescue`) and its transitions, as functions over it.

Actions take time, as in VIRT-LAB's event scheduling (3.3.2): an accepted action either
happens at once (picking up, dropping) or becomes a `Task` that `advance` carries forward one
step at a time (a walk of one cell per step, or two for a medic or engineer carrying a
victim; stabilizing; clearing rubble). `look` updates what an agent knows from the room it
stands in.

Nothing here is worded: a refused action comes back as a `Refusal` (a reason and its data),
and what happens is appended to `Rescue.outcomes` as `Outcome`s; `view.py` words both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, NamedTuple

from teamenvs.search_rescue.config import ENGINEER, TRANSPORTER, SearchRescueConfig, role_of
from teamenvs.search_rescue.knowledge import Knowledge, VictimNote, room_pattern
from teamenvs.search_rescue.navigation import Cell, RouteMap, cell_path, route_map
from teamenvs.search_rescue.world import CRITICAL, DIRECTIONS, STABLE, WALL, FloorPlan, Victim, direction


class Refusal(NamedTuple):
    """Why the rules refuse an action: a reason (a key of `view.REFUSALS`) and the data its wording needs."""

    reason: str
    data: dict[str, Any]


class Outcome(NamedTuple):
    """Something that happened to `agent` this step: a kind (an event type) and its data."""

    kind: str
    agent: str
    data: dict[str, Any]


def refuse(reason: str, **data: Any) -> Refusal:
    return Refusal(reason, data)


@dataclass
class Task:
    """An action that lasts several steps (VIRT-LAB's scheduled event): a walk, a stabilization or a clearing."""

    kind: str  # "walk", "stabilize" or "clear"
    steps_left: int
    target: Any = None  # walk: ("room", id) / ("victim", id) / ("cell", None); stabilize: victim id; clear: door id
    path: list[Cell] = field(default_factory=list)
    at: int = 0  # index of the next cell of `path`


@dataclass
class Rescue:
    """The state of one episode: the building, the victims and rubble, where each agent is and what it knows."""

    plan: FloorPlan
    victims: list[Victim]
    rubble: set[int]
    agents: tuple[str, ...]
    initial_rubble: frozenset[int] = frozenset()
    room_names: tuple[str, ...] = ()
    room_ids: dict[str, int] = field(default_factory=dict)  # lower-case name -> room
    room_re: re.Pattern[str] | None = None  # finds room names in messages
    room_victims: dict[int, set[int]] = field(default_factory=dict)
    room_version: list[int] = field(default_factory=list)  # bumped whenever what a room shows changes
    found: set[int] = field(default_factory=set)
    rescued: list[int] = field(default_factory=list)
    pos: dict[str, Cell] = field(default_factory=dict)
    room: dict[str, int] = field(default_factory=dict)  # in a doorway: the room the agent came from
    carrying: dict[str, int | None] = field(default_factory=dict)
    task: dict[str, Task | None] = field(default_factory=dict)
    goal: dict[str, int | None] = field(default_factory=dict)  # the room a `go to` walks to
    know: dict[str, Knowledge] = field(default_factory=dict)
    outcomes: list[Outcome] = field(default_factory=list)  # what happened since the env last drained them
    _routes: dict[str, tuple[Any, RouteMap]] = field(default_factory=dict)
    _score: tuple[int, dict[str, int]] | None = None

    @property
    def all_rescued(self) -> bool:
        return len(self.rescued) == len(self.victims)

    def drain(self) -> list[Outcome]:
        """The outcomes since the last drain, oldest first."""
        out, self.outcomes = self.outcomes, []
        return out


def new_rescue(plan: FloorPlan, victims: list[Victim], rubble: set[int], agents: list[str], full_map: bool) -> Rescue:
    """The start of an episode: everyone in the middle of the Hospital, having looked around."""
    s = Rescue(plan, victims, rubble, tuple(agents), initial_rubble=frozenset(rubble))
    s.room_names = tuple(r.name for r in plan.rooms)
    s.room_ids = {r.name.lower(): r.id for r in plan.rooms}
    s.room_re = room_pattern(plan)
    s.room_victims = {r.id: set() for r in plan.rooms}
    for v in victims:
        s.room_victims[v.room].add(v.id)
    s.room_version = [0] * len(plan.rooms)
    hospital = plan.rooms[plan.hospital]
    start = ((hospital.x0 + hospital.x1) // 2, (hospital.y0 + hospital.y1) // 2)
    for a in agents:
        s.pos[a], s.room[a], s.carrying[a], s.task[a], s.goal[a] = start, plan.hospital, None, None, None
        s.know[a] = Knowledge()
    for a in agents:
        if full_map:
            for r in range(len(plan.rooms)):
                s.know[a].map_room(r)
        look(s, a, 0)
    return s


def chebyshev(a: Cell, b: Cell) -> int:
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))


def routes(s: Rescue, agent: str) -> RouteMap:
    """Shortest known routes from `agent`'s cell (cached until it moves or learns something)."""
    k = s.know[agent]
    key = (s.pos[agent], k.names_version, frozenset(k.rubble))
    cached = s._routes.get(agent)
    if cached is None or cached[0] != key:
        cached = (key, route_map(s.plan, s.pos[agent], k.mapped, k.rubble))
        s._routes[agent] = cached
    return cached[1]


def score(s: Rescue, cfg: SearchRescueConfig) -> dict[str, int]:
    """The team's tally: victims rescued (by type), points, victims in all (a fresh dict)."""
    if s._score is None or s._score[0] != len(s.rescued):
        stable = sum(1 for vid in s.rescued if s.victims[vid - 1].kind == STABLE)
        tally = {
            "rescued": len(s.rescued),
            "stable": stable,
            "critical": len(s.rescued) - stable,
            "points": sum(cfg.critical_points if s.victims[v - 1].kind == CRITICAL else cfg.stable_points for v in s.rescued),
            "victims": len(s.victims),
        }
        s._score = (len(s.rescued), tally)
    return dict(s._score[1])


def points_for(cfg: SearchRescueConfig, v: Victim) -> int:
    return cfg.critical_points if v.kind == CRITICAL else cfg.stable_points


# ---------------------------------------------------------------------- actions
def act(s: Rescue, cfg: SearchRescueConfig, agent: str, command: str, args: Mapping[str, Any], step: int) -> Refusal | None:
    """Carry out `agent`'s well-formed `command` (a no-op for messages and `wait`); a Refusal if the rules refuse it."""
    handler = _HANDLERS.get(command)
    return handler(s, cfg, agent, args, step) if handler is not None else None


def _victim(s: Rescue, agent: str, vid: int, verb: str) -> Victim | Refusal:
    """The victim `agent` means to act on, if it knows of it and it is within reach (else why not)."""
    v = s.victims[vid - 1]
    note = s.know[agent].victims.get(vid)
    carrier = v.carried_by
    if carrier is not None and carrier != agent and s.room[carrier] == s.room[agent]:
        return refuse("carried", victim=vid, carrier=carrier)
    if note is None:
        return refuse("unknown_victim", victim=vid)
    if v.rescued:
        return refuse("rescued", victim=vid)
    if v.cell is not None and chebyshev(s.pos[agent], v.cell) <= 1:
        return v
    return refuse("out_of_reach", victim=vid, verb=verb, cell=note.cell, room=s.room_names[note.room])


def _blocked(s: Rescue, agent: str, cell: Cell, way: str, step: int) -> Refusal | None:
    """Why `agent` cannot step into `cell` (to its `way`), or None; seeing rubble there notes it."""
    if s.plan.code(cell) == WALL:
        return refuse("wall", way=way, cell=s.pos[agent])
    door = s.plan.door_at(cell)
    if door is not None and door in s.rubble:
        _see_rubble(s, agent, door, step)
        return refuse("rubble", way=way, cell=cell, engineer=role_of(agent) == ENGINEER)
    return None


def _cell_cost(s: Rescue, cfg: SearchRescueConfig, agent: str) -> int:
    if s.carrying[agent] is not None and role_of(agent) != TRANSPORTER:
        return cfg.carry_steps_per_cell
    return 1


def _move(s: Rescue, cfg: SearchRescueConfig, agent: str, args: Mapping[str, Any], step: int) -> Refusal | None:
    way = args["direction"]
    dx, dy = DIRECTIONS[way]
    x, y = s.pos[agent]
    nxt = (x + dx, y + dy)
    refusal = _blocked(s, agent, nxt, way, step)
    if refusal:
        return refusal
    s.goal[agent] = None
    s.task[agent] = Task("walk", _cell_cost(s, cfg, agent), ("cell", None), [nxt])
    return None


def _go_to(s: Rescue, cfg: SearchRescueConfig, agent: str, args: Mapping[str, Any], step: int) -> Refusal | None:
    room = s.room_ids[args["room"].lower()]
    name = s.room_names[room]
    if s.plan.room_at(s.pos[agent]) == room:
        return refuse("already_in", room=name)
    known = routes(s, agent)
    if room not in known.rooms:
        return refuse("no_route", room=name)
    s.goal[agent] = room
    s.task[agent] = Task("walk", _cell_cost(s, cfg, agent), ("room", room), cell_path(s.plan, known, room))
    return None


def _go_to_victim(s: Rescue, cfg: SearchRescueConfig, agent: str, args: Mapping[str, Any], step: int) -> Refusal | None:
    vid = args["victim"]
    if s.carrying[agent] == vid:
        return refuse("carrying_it", victim=vid)
    note = s.know[agent].victims.get(vid)
    if note is None:
        return refuse("unknown_victim", victim=vid)
    if vid in s.rescued:
        return refuse("rescued", victim=vid)
    if chebyshev(s.pos[agent], note.cell) <= 1:
        return refuse("already_next_to", victim=vid, cell=note.cell)
    known = routes(s, agent)
    if note.room not in known.rooms:
        return refuse("no_route_to_victim", room=s.room_names[note.room], victim=vid)
    path = cell_path(s.plan, known, note.room, note.cell)
    # Stop on the first floor cell within reach (never in a doorway, which belongs to no room).
    cut = next(i for i, c in enumerate(path) if chebyshev(c, note.cell) <= 1 and s.plan.room_at(c) is not None)
    s.goal[agent] = None
    s.task[agent] = Task("walk", _cell_cost(s, cfg, agent), ("victim", vid), path[: cut + 1])
    return None


def _pick_up(s: Rescue, cfg: SearchRescueConfig, agent: str, args: Mapping[str, Any], step: int) -> Refusal | None:
    vid = args["victim"]
    v = _victim(s, agent, vid, "pick up")
    if isinstance(v, Refusal):
        return v
    if not v.carryable:
        return refuse("not_carryable", victim=vid)
    if any(t is not None and t.kind == "stabilize" and t.target == vid for t in s.task.values()):
        return refuse("being_stabilized", victim=vid)
    s.room_victims[v.room].discard(v.id)
    s.room_version[v.room] += 1
    v.cell = v.room = None
    v.carried_by = agent
    s.carrying[agent] = vid
    s.know[agent].forget_victim(vid, step)
    s.outcomes.append(Outcome("picked_up", agent, {"victim": vid, "victim_kind": v.kind}))
    return None


def _drop(s: Rescue, cfg: SearchRescueConfig, agent: str, args: Mapping[str, Any], step: int) -> Refusal | None:
    vid = s.carrying[agent]
    v = s.victims[vid - 1]
    pos = s.pos[agent]
    room = s.plan.room_at(pos)
    if room is None:
        return refuse("drop_in_doorway")
    s.carrying[agent] = None
    v.carried_by = None
    if room == s.plan.hospital:
        v.rescued = True
        s.rescued.append(vid)
        s.outcomes.append(Outcome("rescued", agent, {"victim": vid, "victim_kind": v.kind, "points": points_for(cfg, v)}))
        return None
    v.cell, v.room = pos, room
    s.room_victims[room].add(vid)
    s.room_version[room] += 1
    s.outcomes.append(Outcome("dropped", agent, {"victim": vid, "cell": pos}))
    return None


def _stabilize(s: Rescue, cfg: SearchRescueConfig, agent: str, args: Mapping[str, Any], step: int) -> Refusal | None:
    vid = args["victim"]
    v = _victim(s, agent, vid, "stabilize")
    if isinstance(v, Refusal):
        return v
    if v.kind == STABLE:
        return refuse("stable", victim=vid)
    if v.stabilized:
        return refuse("already_stabilized", victim=vid)
    for other, t in s.task.items():
        if t is not None and t.kind == "stabilize" and t.target == vid:
            return refuse("other_stabilizing", victim=vid, other=other)
    s.task[agent] = Task("stabilize", cfg.stabilize_steps, vid)
    return None


def _clear(s: Rescue, cfg: SearchRescueConfig, agent: str, args: Mapping[str, Any], step: int) -> Refusal | None:
    way = args["direction"]
    dx, dy = DIRECTIONS[way]
    x, y = s.pos[agent]
    door = s.plan.door_at((x + dx, y + dy))
    if door is None or door not in s.rubble:
        return refuse("no_rubble", way=way)
    for other, t in s.task.items():
        if t is not None and t.kind == "clear" and t.target == door:
            return refuse("other_clearing", other=other)
    s.task[agent] = Task("clear", cfg.clear_steps, door)
    return None


_HANDLERS: dict[str, Callable[[Rescue, SearchRescueConfig, str, Mapping[str, Any], int], Refusal | None]] = {
    "move": _move,
    "go to": _go_to,
    "go to victim": _go_to_victim,
    "pick up victim": _pick_up,
    "drop victim": _drop,
    "stabilize victim": _stabilize,
    "clear rubble": _clear,
}


# ---------------------------------------------------------------------- scheduled events
def advance(s: Rescue, cfg: SearchRescueConfig, agent: str, step: int) -> None:
    """One step of `agent`'s task; when its time is up, the task's effect happens."""
    task = s.task[agent]
    task.steps_left -= 1
    if task.steps_left > 0:
        return
    if task.kind == "walk":
        _walk_one(s, cfg, agent, task, step)
    elif task.kind == "stabilize":
        s.task[agent] = None
        v = s.victims[task.target - 1]
        v.stabilized = True
        s.room_version[v.room] += 1
        s.outcomes.append(Outcome("stabilized", agent, {"victim": v.id}))
    else:
        s.task[agent] = None
        door = s.plan.doors[task.target]
        s.rubble.discard(door.id)
        for r in door.rooms:
            s.room_version[r] += 1
        _see_rubble(s, agent, door.id, step)
        rooms = [s.room_names[r] for r in door.rooms]
        s.outcomes.append(Outcome("cleared", agent, {"door": door.id, "cell": door.cell, "rooms": rooms}))


def _walk_one(s: Rescue, cfg: SearchRescueConfig, agent: str, task: Task, step: int) -> None:
    nxt = task.path[task.at]
    refusal = _blocked(s, agent, nxt, direction(s.pos[agent], nxt), step)
    if refusal:
        s.task[agent] = None
        s.outcomes.append(Outcome("blocked", agent, {"at": s.pos[agent], "cell": nxt, "why": refusal}))
        return
    s.pos[agent] = nxt
    s.outcomes.append(Outcome("moved", agent, {"cell": nxt}))
    room = s.plan.room_at(nxt)
    if room is not None:
        s.room[agent] = room
    task.at += 1
    if task.at < len(task.path):
        task.steps_left = _cell_cost(s, cfg, agent)
        return
    s.task[agent] = None
    kind, target = task.target
    if kind == "room":
        s.goal[agent] = None
        s.outcomes.append(Outcome("arrived", agent, {"room": s.room_names[target]}))
    elif kind == "victim":
        here = s.victims[target - 1].cell
        s.outcomes.append(Outcome("arrived", agent, {"victim": target, "there": here is not None and chebyshev(nxt, here) <= 1}))


# ---------------------------------------------------------------------- seeing
def _see_rubble(s: Rescue, agent: str, door: int, step: int) -> None:
    s.know[agent].note_rubble(door, door in s.rubble, step)


def look(s: Rescue, agent: str, step: int) -> None:
    """Update `agent`'s notes with what it sees: everything in the room it stands in."""
    room = s.room[agent]  # from a doorway, the room it came from is in sight
    k = s.know[agent]
    k.looked[room] = step
    if room not in k.visited:
        k.visited.add(room)
        k.map_room(room)
        s.outcomes.append(Outcome("entered", agent, {"room": s.room_names[room]}))
    if k.room_versions.get(room) == s.room_version[room]:
        return
    k.room_versions[room] = s.room_version[room]
    present = s.room_victims[room]
    for vid in [v for v, note in k.victims.items() if note.room == room and v not in present]:
        k.forget_victim(vid, step)
    new = []
    for vid in present:
        v = s.victims[vid - 1]
        k.note_victim(vid, VictimNote(v.kind, v.stabilized, room, v.cell, step))
        if vid not in s.found:
            s.found.add(vid)
            new.append(vid)
    if new:
        s.outcomes.append(Outcome("found", agent, {"victims": sorted(new), "room": s.room_names[room]}))
    for d in s.plan.room_doors[room]:
        k.note_rubble(d, d in s.rubble, step)
