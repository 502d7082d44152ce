"""Search-and-rescue rules: the episode state (`Rescue`) and its transitions, as functions over it.

Actions take time, as in VIRT-LAB's event scheduling (3.3.2): an accepted action either
happens at once (picking up, dropping) or becomes a `Task` that `advance` carries forward one
step at a time (a walk of one cell per step, or two for a medic or engineer carrying a
victim; stabilizing; clearing rubble). `look` updates what an agent knows from the room it
stands in. `interrupt` breaks off a task (an agent answering a message, VIRT-LAB Fig. 8E), and
`turn` says whose step it is when the `round_robin` ablation replaces the event scheduler.

Nothing here is worded: a refused action comes back as a `Refusal` (a reason and its data),
and what happens is appended to `Rescue.outcomes` as `Outcome`s; `view.py` words both.

Information isolation: whether the rules accept an action (`check`, which RL action masks and
LLM constrained decoding ask through `env.accepts`) depends only on what the acting agent can
know: its own position and load, its notes (`knowledge`), and the doorways of the room it
stands in. It never reads where teammates are, what they carry or what they are busy with.
What the agent could not know when it chose is the action's *outcome*, reported to it as an
event: a victim it reaches for that a teammate took earlier in the same step (the env applies
a step's actions in a random order) or that is no longer where it noted it (`missed`); a
victim whose rescue the radio reports in the very step it sets off (`missed`); a medic or an
engineer still stabilizing a victim or clearing a doorway when a teammate working on the same
victim or doorway finishes first (several may work on one at once; `done_already`). So an
action `check` accepts is never refused in the step it was chosen for, whatever teammates
do (the exact-mask promise), without the check peeking at them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, NamedTuple, Sequence
from weakref import WeakKeyDictionary

import numpy as np

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
    room_re: re.Pattern[str] | None = None  # finds room names in messages
    room_victims: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))  # a room's set made when first read
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
    radioed: set[int] = field(default_factory=set)  # rescues the radio reported since the last drain (this step's)
    interrupted: set[str] = field(default_factory=set)  # busy agents a message has interrupted (`interrupt_to_talk`)
    _routes: dict[str, tuple[Any, RouteMap]] = field(default_factory=dict)
    _named: dict[str, tuple[int, tuple[tuple[int, str], ...]]] = field(default_factory=dict)
    _sketch: dict[str, tuple[int, bytearray, set[int]]] = field(default_factory=dict)  # agent -> its drawing of the mapped rooms
    _local: dict[str, tuple[Any, dict[Cell, str]]] = field(default_factory=dict)  # agent -> (version, cell -> local map)
    _layout: bytes = b""  # the plan drawn in characters, padded by LOCAL_RADIUS cells of "?"
    _score: dict[int | frozenset[int], dict[str, int]] = field(default_factory=dict)
    _marked: dict[str, tuple[Any, bytes]] = field(default_factory=dict)  # agent -> its drawing with the rubble it knows of
    _parts: dict[Any, tuple[Any, Any]] = field(default_factory=dict)  # view parts (view.py): key -> (version, immutable value)
    _notes: dict[str, dict[int, tuple[Any, Any]]] = field(default_factory=dict)  # agent -> victim -> (note, its view facts) (view.py)

    @property
    def all_rescued(self) -> bool:
        return len(self.rescued) == len(self.victims)

    @property
    def room_ids(self) -> dict[str, int]:
        """Lower-case room name -> room."""
        return self.plan.room_ids

    def drain(self) -> list[Outcome]:
        """The outcomes since the last drain, oldest first (the env drains them once per step, after the step)."""
        out, self.outcomes = self.outcomes, []
        self.radioed.clear()
        return out


def new_rescue(plan: FloorPlan, victims: list[Victim], rubble: set[int], agents: list[str], full_map: bool) -> Rescue:
    """The start of an episode: everyone in the middle of the Hospital, having looked around."""
    s = Rescue(plan, victims, rubble, tuple(agents), initial_rubble=frozenset(rubble))
    s.room_names = plan.room_names
    s.room_re = room_pattern(plan)
    for v in victims:
        s.room_victims[v.room].add(v.id)
    s.room_version = [0] * len(plan.room_names)
    x0, y0, x1, y1 = plan.rects[plan.hospital]
    start = ((x0 + x1) // 2, (y0 + y1) // 2)
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
    # route_map reads only `mapped` (its changes bump names_version) and `rubble` (its changes bump rubble_version)
    key = (s.pos[agent], k.names_version, k.rubble_version)
    cached = s._routes.get(agent)
    if cached is None or cached[0] != key:
        cached = (key, route_map(s.plan, s.pos[agent], k.mapped, k.rubble))
        s._routes[agent] = cached
    return cached[1]


def named_rooms(s: Rescue, agent: str) -> tuple[tuple[int, str], ...]:
    """(room id, name) of every room `agent` can name (mapped rooms and the rooms their doorways lead to), by id."""
    k = s.know[agent]
    cached = s._named.get(agent)
    if cached is None or cached[0] != k.names_version:
        cached = (k.names_version, tuple((r, s.room_names[r]) for r in sorted(k.known_rooms(s.plan))))
        s._named[agent] = cached
    return cached[1]


LOCAL_RADIUS = 4  # the local map is the (2r+1) x (2r+1) cells around the agent
LOCAL_SIDE = 2 * LOCAL_RADIUS + 1
LOCAL_WINDOWS = 1024  # local maps kept per agent (`local_map`)
UNKNOWN, WALL_MARK, FLOOR, HOSPITAL_FLOOR, DOORWAY, RUBBLE = "?", "#", ".", "h", "+", "X"


def _layout(s: Rescue) -> bytes:
    """The floor plan in map characters (# . h +), padded by LOCAL_RADIUS cells of '?' on every side."""
    if not s._layout:
        s._layout = plan_layout(s.plan)
    return s._layout


# Layouts by plan, each kept while its plan lives: a fixed map's (`map_seed`) is drawn in characters once, not every
# episode, and a new map's goes with its plan (an lru_cache of 8 kept 8 plans alive: 80 kB of grid each at 100x100,
# which slowed a 100x100 reset by a fortieth).
_LAYOUTS: WeakKeyDictionary[FloorPlan, bytes] = WeakKeyDictionary()


def plan_layout(plan: FloorPlan) -> bytes:
    """`_layout` of a plan."""
    layout = _LAYOUTS.get(plan)
    if layout is None:
        layout = _LAYOUTS[plan] = _draw_layout(plan)
    return layout


def _draw_layout(plan: FloorPlan) -> bytes:
    r = LOCAL_RADIUS
    # The character of each cell code, looked up at the code itself: rooms from the start, doorways (-2 - door id)
    # and walls (-1) from the end, so that the grid indexes it as it is.
    marks = np.full(len(plan.rooms) + len(plan.doors) + 1, ord(DOORWAY), dtype=np.uint8)
    marks[:len(plan.rooms)] = ord(FLOOR)
    marks[plan.hospital] = ord(HOSPITAL_FLOOR)
    marks[-1] = ord(WALL_MARK)
    grid = np.full((plan.height + 2 * r, plan.width + 2 * r), ord(UNKNOWN), dtype=np.uint8)
    grid[r:r + plan.height, r:r + plan.width] = marks[plan.grid]
    return grid.tobytes()


def local_map(s: Rescue, agent: str) -> str:
    """The (2r+1)^2 cells around `agent`, row by row from the north-west, as it knows them: the layout of
    the rooms it has mapped ('#' wall, '.' floor, 'h' Hospital floor, '+' doorway, 'X' doorway it
    believes blocked by rubble), '?' for cells of rooms it has not mapped and outside the building."""
    k = s.know[agent]
    version = (k.names_version, k.rubble_version)
    cached = s._local.get(agent)
    if cached is None or cached[0] != version:
        cached = s._local[agent] = (version, {})
    seen = cached[1]  # cell -> its window, while what the agent knows of the layout stays the same: it walks back and forth
    pos = s.pos[agent]
    text = seen.get(pos)
    if text is None:
        if len(seen) >= LOCAL_WINDOWS:
            seen.clear()
        text = seen[pos] = _window(_marked_sketch(s, agent), s.plan.width + 2 * LOCAL_RADIUS, pos)
    return text


def _window(grid: bytes | bytearray, side: int, cell: Cell) -> str:
    """The LOCAL_SIDE x LOCAL_SIDE cells centred on `cell` of a drawing padded by LOCAL_RADIUS (`side` cells a row)."""
    x, y = cell
    return b"".join([grid[i:i + LOCAL_SIDE] for i in range(y * side + x, (y + LOCAL_SIDE) * side + x, side)]).decode("ascii")


def _sketch(s: Rescue, agent: str) -> bytearray:
    """The padded plan (see `_layout`) as `agent` has mapped it: its mapped rooms and their walls, '?' elsewhere
    (painted room by room as it maps them; cached until it maps another)."""
    k = s.know[agent]
    layout, plan, r = _layout(s), s.plan, LOCAL_RADIUS
    side = plan.width + 2 * r
    sketch = s._sketch.get(agent)
    if sketch is None or sketch[0] != k.names_version:
        grid, painted = (sketch[1], sketch[2]) if sketch is not None else (bytearray(UNKNOWN.encode()) * len(layout), set())
        for room in k.mapped - painted:
            x0, y0, x1, y1 = plan.rects[room]
            for y in range(y0 - 1 + r, y1 + 2 + r):  # the room and the walls around it
                a, b = y * side + x0 - 1 + r, y * side + x1 + 2 + r
                grid[a:b] = layout[a:b]
            painted.add(room)
        sketch = (k.names_version, grid, painted)
        s._sketch[agent] = sketch
    return sketch[1]


def _marked_sketch(s: Rescue, agent: str) -> bytes | bytearray:
    """`_sketch` with an 'X' on every doorway `agent` believes blocked (mapped or not), so that a local map is a
    window of it (cached until it maps a room or its rubble notes change). With no rubble to mark it is the sketch
    itself, not a copy (a 100x100 map's is 12 kB): `_sketch` repaints it only when the key here changes too."""
    k = s.know[agent]
    key = (k.names_version, k.rubble_version)
    cached = s._marked.get(agent)
    if cached is not None and cached[0] == key:
        return cached[1]
    plan, r = s.plan, LOCAL_RADIUS
    side = plan.width + 2 * r
    marked: bytes | bytearray = _sketch(s, agent)
    if k.rubble:
        grid = bytearray(marked)
        for d in k.rubble:
            cx, cy = plan.doors[d].cell
            grid[(cy + r) * side + cx + r] = ord(RUBBLE)
        marked = bytes(grid)
    s._marked[agent] = (key, marked)
    return marked


def score(s: Rescue, cfg: SearchRescueConfig, agent: str | None = None) -> dict[str, int]:
    """The tally of rescued victims (by type), points and victims in all (a fresh dict): the team's, or
    with `agent` the victims that agent knows were rescued (see `knowledge`)."""
    rescued = s.rescued if agent is None else s.know[agent].rescued
    key = len(rescued) if agent is None or len(rescued) == len(s.rescued) else frozenset(rescued)
    tally = s._score.get(key)
    if tally is None:
        stable = sum(1 for vid in rescued if s.victims[vid - 1].kind == STABLE)
        tally = {
            "rescued": len(rescued),
            "stable": stable,
            "critical": len(rescued) - stable,
            "points": sum(points_for(cfg, s.victims[v - 1]) for v in rescued),
            "victims": len(s.victims),
        }
        if len(s._score) > 256:
            s._score.clear()
        s._score[key] = tally
    return dict(tally)


def points_for(cfg: SearchRescueConfig, v: Victim) -> int:
    return cfg.critical_points if v.kind == CRITICAL else cfg.stable_points


# ---------------------------------------------------------------------- actions
# Every command is a pure check (why the rules refuse it now, changing nothing) and an
# effect (what it does once accepted). `act` runs the check, then the effect; the action masks
# of the discrete interface and constrained decoding (`env.accepts`) run the same check, so
# the two cannot drift. A check reads only what the acting agent can know (see the module's
# docstring); what it could not know is the effect's outcome.
def check(s: Rescue, cfg: SearchRescueConfig, agent: str, command: str, args: Mapping[str, Any]) -> Refusal | None:
    """Why the rules refuse `agent`'s well-formed `command` now (None: `act` would carry it out); changes nothing.

    Reads only what `agent` can know, so an action it accepts when the agent chooses stays accepted in that
    step whatever its teammates do (`act`)."""
    checker = _CHECKS.get(command)
    return checker(s, agent, args) if checker is not None else None


def act(s: Rescue, cfg: SearchRescueConfig, agent: str, command: str, args: Mapping[str, Any], step: int) -> Refusal | None:
    """Carry out `agent`'s well-formed `command` (a no-op for messages and `wait`); a Refusal if the rules refuse it.

    The only thing a teammate acting earlier in the same step can change in the check is what the agent knows
    of rescues: under `communication="global"` the radio reports a rescue to everyone at once. An action about
    a victim the radio reported rescued in this very step was chosen before the report, so it is accepted and
    comes to nothing (`missed`), as `check` accepted it when the agent chose it."""
    refusal = check(s, cfg, agent, command, args)
    if refusal is not None:
        if refusal.reason == "rescued" and refusal.data["victim"] in s.radioed:
            vid = refusal.data["victim"]
            s.outcomes.append(Outcome("missed", agent, {"victim": vid, "verb": _VERBS[command], "why": "rescued"}))
            return None
        if refusal.reason == "rubble":  # bumping into rubble shows it
            _see_rubble(s, agent, s.plan.door_at(refusal.data["cell"]), step)
        return refusal
    effect = _EFFECTS.get(command)
    if effect is not None:
        effect(s, cfg, agent, args, step)
    return None


_VERBS = {"go to victim": "go to", "pick up victim": "pick up", "stabilize victim": "stabilize"}


def _victim(s: Rescue, agent: str, vid: int, verb: str) -> VictimNote | Refusal:
    """The victim `agent` means to act on as it knows it (its note), if the note puts it within reach (else why not).

    Only the agent's notes are read (the notes of the victims in the room it stands in are always up to date,
    since it sees that room every step); whether the victim is still there when the action happens is the
    effect's business (`_still_there`)."""
    k = s.know[agent]
    note = k.victims.get(vid)
    if note is None:
        return refuse("unknown_victim", victim=vid)
    if vid in k.rescued:
        return refuse("rescued", victim=vid)
    if chebyshev(s.pos[agent], note.cell) <= 1:
        return note
    return refuse("out_of_reach", victim=vid, verb=verb, cell=note.cell, room=s.room_names[note.room])


def _still_there(s: Rescue, agent: str, vid: int, verb: str, step: int) -> Victim | None:
    """The victim `agent` reaches for, if it still lies within reach; else None, with a `missed` outcome and the
    agent's note of it dropped (it reached for it and found nothing): a teammate took it earlier in this step, or
    (noted in a room the agent does not see from a doorway) it was moved since the agent saw it."""
    v = s.victims[vid - 1]
    if v.cell is not None and chebyshev(s.pos[agent], v.cell) <= 1:
        return v
    note = s.know[agent].victims[vid]
    s.know[agent].forget_victim(vid, step)
    s.outcomes.append(Outcome("missed", agent, {"victim": vid, "verb": verb, "why": "gone", "cell": note.cell}))
    return None


def _obstacle(s: Rescue, cell: Cell) -> str | None:
    """What stops a step into `cell`: "wall", "rubble" or None."""
    code = s.plan.code(cell)
    if code == WALL:
        return "wall"
    if code <= -2 and s.plan.door_at(cell) in s.rubble:  # (a doorway's code is below -1: see `world.WALL`)
        return "rubble"
    return None


def _blocked(s: Rescue, agent: str, cell: Cell, way: str) -> Refusal | None:
    """Why `agent` cannot step into `cell` (to its `way`), or None."""
    obstacle = _obstacle(s, cell)
    if obstacle == "wall":
        return refuse("wall", way=way, cell=s.pos[agent])
    if obstacle == "rubble":
        return refuse("rubble", way=way, cell=cell, engineer=role_of(agent) == ENGINEER)
    return None


def _door_toward(s: Rescue, agent: str, way: str) -> int | None:
    """The doorway next to `agent` on its `way`, if any."""
    dx, dy = DIRECTIONS[way]
    x, y = s.pos[agent]
    return s.plan.door_at((x + dx, y + dy))


def _cell_cost(s: Rescue, cfg: SearchRescueConfig, agent: str) -> int:
    if s.carrying[agent] is not None and role_of(agent) != TRANSPORTER:
        return cfg.carry_steps_per_cell
    return 1


def _next_cell(s: Rescue, agent: str, way: str) -> Cell:
    dx, dy = DIRECTIONS[way]
    x, y = s.pos[agent]
    return (x + dx, y + dy)


def _check_move(s: Rescue, agent: str, args: Mapping[str, Any]) -> Refusal | None:
    way = args["direction"]
    return _blocked(s, agent, _next_cell(s, agent, way), way)


def _move(s: Rescue, cfg: SearchRescueConfig, agent: str, args: Mapping[str, Any], step: int) -> None:
    s.goal[agent] = None
    s.task[agent] = Task("walk", _cell_cost(s, cfg, agent), ("cell", None), [_next_cell(s, agent, args["direction"])])


def _check_go_to(s: Rescue, agent: str, args: Mapping[str, Any]) -> Refusal | None:
    room = s.room_ids[args["room"].lower()]
    name = s.room_names[room]
    if s.plan.room_at(s.pos[agent]) == room:
        return refuse("already_in", room=name)
    if room not in routes(s, agent).rooms:
        return refuse("no_route", room=name)
    return None


def _go_to(s: Rescue, cfg: SearchRescueConfig, agent: str, args: Mapping[str, Any], step: int) -> None:
    room = s.room_ids[args["room"].lower()]
    s.goal[agent] = room
    s.task[agent] = Task("walk", _cell_cost(s, cfg, agent), ("room", room), cell_path(s.plan, routes(s, agent), room))


def _check_go_to_victim(s: Rescue, agent: str, args: Mapping[str, Any]) -> Refusal | None:
    vid = args["victim"]
    if s.carrying[agent] == vid:
        return refuse("carrying_it", victim=vid)
    note = s.know[agent].victims.get(vid)
    if note is None:
        return refuse("unknown_victim", victim=vid)
    if vid in s.know[agent].rescued:  # else it walks there and finds the victim gone
        return refuse("rescued", victim=vid)
    if chebyshev(s.pos[agent], note.cell) <= 1:
        return refuse("already_next_to", victim=vid, cell=note.cell)
    if note.room not in routes(s, agent).rooms:
        return refuse("no_route_to_victim", room=s.room_names[note.room], victim=vid)
    return None


def _go_to_victim(s: Rescue, cfg: SearchRescueConfig, agent: str, args: Mapping[str, Any], step: int) -> None:
    vid = args["victim"]
    note = s.know[agent].victims[vid]
    path = cell_path(s.plan, routes(s, agent), note.room, note.cell)
    # Stop on the first floor cell within reach (never in a doorway, which belongs to no room).
    cut = next(i for i, c in enumerate(path) if chebyshev(c, note.cell) <= 1 and s.plan.room_at(c) is not None)
    s.goal[agent] = None
    s.task[agent] = Task("walk", _cell_cost(s, cfg, agent), ("victim", vid), path[: cut + 1])


def _check_pick_up(s: Rescue, agent: str, args: Mapping[str, Any]) -> Refusal | None:
    vid = args["victim"]
    note = _victim(s, agent, vid, "pick up")
    if isinstance(note, Refusal):
        return note
    if note.kind != STABLE and not note.stabilized:  # (a critical victim being stabilized is not carryable either)
        return refuse("not_carryable", victim=vid)
    return None


def _pick_up(s: Rescue, cfg: SearchRescueConfig, agent: str, args: Mapping[str, Any], step: int) -> None:
    vid = args["victim"]
    v = _still_there(s, agent, vid, "pick up", step)
    if v is None:
        return
    s.room_victims[v.room].discard(v.id)
    s.room_version[v.room] += 1
    v.cell = v.room = None
    v.carried_by = agent
    s.carrying[agent] = vid
    s.know[agent].forget_victim(vid, step)
    s.outcomes.append(Outcome("picked_up", agent, {"victim": vid, "victim_kind": v.kind}))


def _check_drop(s: Rescue, agent: str, args: Mapping[str, Any]) -> Refusal | None:
    if s.carrying[agent] is None:
        return refuse("not_carrying")
    if s.plan.room_at(s.pos[agent]) is None:
        return refuse("drop_in_doorway")
    return None


def _drop(s: Rescue, cfg: SearchRescueConfig, agent: str, args: Mapping[str, Any], step: int) -> None:
    vid = s.carrying[agent]
    v = s.victims[vid - 1]
    pos = s.pos[agent]
    room = s.plan.room_at(pos)
    s.carrying[agent] = None
    v.carried_by = None
    if room == s.plan.hospital:
        v.rescued = True
        s.rescued.append(vid)
        for a in s.agents if cfg.communication == "global" else (agent,):  # the radio reports it to the team
            s.know[a].note_rescued(vid)
        if cfg.communication == "global":
            s.radioed.add(vid)  # teammates acting later in this step chose their actions before the report (`act`)
        s.outcomes.append(Outcome("rescued", agent, {"victim": vid, "victim_kind": v.kind, "points": points_for(cfg, v)}))
        return
    v.cell, v.room = pos, room
    s.room_victims[room].add(vid)
    s.room_version[room] += 1
    s.outcomes.append(Outcome("dropped", agent, {"victim": vid, "cell": pos}))


def _check_stabilize(s: Rescue, agent: str, args: Mapping[str, Any]) -> Refusal | None:
    vid = args["victim"]
    note = _victim(s, agent, vid, "stabilize")
    if isinstance(note, Refusal):
        return note
    if note.kind == STABLE:
        return refuse("stable", victim=vid)
    if note.stabilized:
        return refuse("already_stabilized", victim=vid)
    return None  # another medic may be stabilizing it too: they work on it together until the first is done


def _stabilize(s: Rescue, cfg: SearchRescueConfig, agent: str, args: Mapping[str, Any], step: int) -> None:
    vid = args["victim"]
    v = _still_there(s, agent, vid, "stabilize", step)
    if v is None:
        return
    if v.stabilized:  # only where its note was stale (seen from a doorway): it finds out, and notes it
        _see_stabilized(s, agent, v, step)
        s.outcomes.append(Outcome("missed", agent, {"victim": vid, "verb": "stabilize", "why": "stabilized"}))
        return
    s.task[agent] = Task("stabilize", cfg.stabilize_steps, vid)


def _check_clear(s: Rescue, agent: str, args: Mapping[str, Any]) -> Refusal | None:
    # a doorway next to the agent is one of its room's, whose rubble it sees every step
    door = _door_toward(s, agent, args["direction"])
    if door is None or door not in s.rubble:
        return refuse("no_rubble", way=args["direction"])
    return None  # another engineer may be clearing it too (from either side): the first to finish clears it


def _clear(s: Rescue, cfg: SearchRescueConfig, agent: str, args: Mapping[str, Any], step: int) -> None:
    s.task[agent] = Task("clear", cfg.clear_steps, _door_toward(s, agent, args["direction"]))


_CHECKS: dict[str, Callable[[Rescue, str, Mapping[str, Any]], Refusal | None]] = {
    "move": _check_move,
    "go to": _check_go_to,
    "go to victim": _check_go_to_victim,
    "pick up victim": _check_pick_up,
    "drop victim": _check_drop,
    "stabilize victim": _check_stabilize,
    "clear rubble": _check_clear,
}
_EFFECTS: dict[str, Callable[[Rescue, SearchRescueConfig, str, Mapping[str, Any], int], None]] = {
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
        _see_stabilized(s, agent, v, step)  # (from a doorway, the room it sees is the other one)
        s.outcomes.append(Outcome("stabilized", agent, {"victim": v.id}))
        _done_already(s, "stabilize", v.id, {"victim": v.id}, step)
    else:
        s.task[agent] = None
        door = s.plan.doors[task.target]
        s.rubble.discard(door.id)
        for r in door.rooms:
            s.room_version[r] += 1
        _see_rubble(s, agent, door.id, step)
        rooms = [s.room_names[r] for r in door.rooms]
        s.outcomes.append(Outcome("cleared", agent, {"door": door.id, "cell": door.cell, "rooms": rooms}))
        _done_already(s, "clear", door.id, {"door": door.id, "rooms": rooms}, step)


def _done_already(s: Rescue, kind: str, target: int, data: dict[str, Any], step: int) -> None:
    """A teammate has just finished stabilizing the victim or clearing the doorway `target`: anyone else at the same
    task stops, and notes the victim stabilized or the doorway clear (it is working on it, right there)."""
    for other, t in s.task.items():
        if t is not None and t.kind == kind and t.target == target:
            s.task[other] = None
            s.interrupted.discard(other)
            if kind == "stabilize":
                _see_stabilized(s, other, s.victims[target - 1], step)
            else:
                _see_rubble(s, other, target, step)
            s.outcomes.append(Outcome("done_already", other, {"task": kind, **data}))


def _see_stabilized(s: Rescue, agent: str, v: Victim, step: int) -> None:
    s.know[agent].note_victim(v.id, VictimNote(v.kind, True, v.room, v.cell, step))


def _walk_one(s: Rescue, cfg: SearchRescueConfig, agent: str, task: Task, step: int) -> None:
    nxt = task.path[task.at]
    if _obstacle(s, nxt) is not None:  # (the way, which the refusal names, is worked out only then)
        refusal = _blocked(s, agent, nxt, direction(s.pos[agent], nxt))
        if refusal.reason == "rubble":
            _see_rubble(s, agent, s.plan.door_at(nxt), step)
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


def interrupt(s: Rescue, agent: str) -> None:
    """`agent` breaks off the task it is busy with (to answer a message); a walk's goal stays for the route cue."""
    task = s.task[agent]
    s.task[agent] = None
    s.interrupted.discard(agent)
    if task is not None:
        s.outcomes.append(Outcome("interrupted", agent, {"task": task.kind}))


def turn(agents: Sequence[str], step: int) -> str:
    """Whose step it is under the `round_robin` ablation: the team in order, one agent per step."""
    return agents[step % len(agents)]


# ---------------------------------------------------------------------- seeing
def _see_rubble(s: Rescue, agent: str, door: int, step: int) -> None:
    s.know[agent].note_rubble(door, door in s.rubble, step)


def look(s: Rescue, agent: str, step: int) -> None:
    """Update `agent`'s notes with what it sees: everything in the room it stands in."""
    room = s.room[agent]  # from a doorway, the room it came from is in sight
    k = s.know[agent]
    k.looked[room] = step
    if room == s.plan.hospital and len(k.rescued) < len(s.rescued):  # the victims rescued so far lie here
        k.rescued.update(s.rescued)
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
