"""Search-and-rescue text: each agent's view of the state and its observation, the events and refusals
in words, the omniscient state and frame, and the briefing.

`build_view` gathers what one agent may know; `render_view` is a function of that view alone.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from operator import itemgetter
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from teamenvs.core.env import LAST_ACTION, LAST_ACTION_REJECTED, NO_LAST_ACTION, event
from teamenvs.core.messaging import Message
from teamenvs.core.rl import Feature, feature_bounds
from teamenvs.core.view import SharedFacts, footer
from teamenvs.search_rescue.config import ENGINEER, MEDIC, TRANSPORTER, SearchRescueConfig, role_of
from teamenvs.search_rescue.navigation import Cell, RouteMap, route_rooms
from teamenvs.search_rescue.rules import (
    DOORWAY, FLOOR, HOSPITAL_FLOOR, LOCAL_SIDE, RUBBLE, WALL_MARK, Outcome, Refusal, Rescue, Task, local_map, named_rooms, routes, score,
)
from teamenvs.search_rescue.world import CRITICAL, HOSPITAL, STABLE, WALL, max_rooms, victim_status


def fmt_cell(cell: Cell) -> str:
    return f"({cell[0]},{cell[1]})"


# ---------------------------------------------------------------------- refusals and events in words
_NO_ROUTE = (
    "you know no open route to {room}: the way is blocked by rubble you know of, or you have not yet "
    "mapped the rooms in between; explore, or ask the engineer to clear the rubble"
)

REFUSALS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "unknown_victim": lambda d: f"you do not know where victim {d['victim']} is; explore, or ask your team",
    "rescued": lambda d: f"victim {d['victim']} has already been rescued",
    "out_of_reach": lambda d: (
        f"victim {d['victim']} is not within reach (it must be on your cell or next to it); you last saw it at "
        f"{fmt_cell(d['cell'])} in {d['room']}. Use 'go to victim {d['victim']}' to walk there, then {d['verb']} it"
    ),
    "wall": lambda d: f"a wall blocks the way {d['way']} of {fmt_cell(d['cell'])}",
    "rubble": lambda d: (
        f"rubble blocks the doorway {d['way']} of you at {fmt_cell(d['cell'])}; "
        + (f"clear it with 'clear rubble {d['way']}'" if d["engineer"] else "only the engineer can clear it")
    ),
    "already_in": lambda d: f"you are already in {d['room']}",
    "no_route": lambda d: _NO_ROUTE.format(room=d["room"]),
    "no_route_to_victim": lambda d: _NO_ROUTE.format(room=d["room"]) + f" (victim {d['victim']} is there)",
    "carrying_it": lambda d: f"you are carrying victim {d['victim']}",
    "already_next_to": lambda d: f"you are already next to where you last saw victim {d['victim']} {fmt_cell(d['cell'])}",
    "not_carryable": lambda d: f"victim {d['victim']} is critical and must be stabilized by the medic before anyone can carry it",
    "drop_in_doorway": lambda d: "you cannot leave a victim in a doorway; step into a room first",
    "stable": lambda d: f"victim {d['victim']} is stable and does not need stabilizing; it can be carried as it is",
    "already_stabilized": lambda d: f"victim {d['victim']} is already stabilized",
    "no_rubble": lambda d: f"there is no rubble {d['way']} of you; rubble lies in doorways, so stand next to the blocked doorway",
    "not_carrying": lambda d: "you are not carrying a victim",
}
# No refusal names or describes a teammate: the rules' check reads only what the acting agent can know (rules.py).


def refusal_text(refusal: Refusal) -> str:
    return REFUSALS[refusal.reason](refusal.data)


def _missed(d: Mapping[str, Any]) -> str:
    vid = d["victim"]
    it = "pick it up" if d["verb"] == "pick up" else f"{d['verb']} it"
    if d["why"] == "rescued":
        return f"Victim {vid} was rescued just now (the radio reports it), so you did not {it}."
    if d["why"] == "stabilized":
        return f"Victim {vid} turned out to be stabilized already."
    return f"Victim {vid} was no longer at {fmt_cell(d['cell'])} when you went to {it}."


def _done_already(d: Mapping[str, Any]) -> str:
    if d["task"] == "stabilize":
        return f"Victim {d['victim']} is stabilized now, so you stop stabilizing it."
    return f"The rubble between {d['rooms'][0]} and {d['rooms'][1]} is gone now, so you stop clearing it."


def _arrived(d: Mapping[str, Any]) -> str:
    if "room" in d:
        return f"You arrived in {d['room']}."
    if d["there"]:
        return f"You are next to victim {d['victim']}."
    return f"You reached where you last saw victim {d['victim']}, but it is not there now."


def events_of(o: Outcome) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The events of an outcome: (the agent's own, worded to it; the global one for the log), either may be None."""
    a, d = o.agent, o.data
    kind = o.kind
    if kind == "moved":  # the most common by far: a walker's every step
        return None, event(kind, "", agent=a, cell=list(d["cell"]))
    if kind == "picked_up":
        return (
            event(kind, f"You picked up victim {d['victim']} ({d['victim_kind']}).", victim=d["victim"]),
            event(kind, f"{a} picked up victim {d['victim']}", agent=a, victim=d["victim"], victim_kind=d["victim_kind"]),
        )
    if kind == "rescued":
        vid, points = d["victim"], d["points"]
        text = f"{a} delivered victim {vid} ({d['victim_kind']}) to the Hospital: rescued, +{points} points"
        return (
            event(kind, f"You delivered victim {vid} to the Hospital: rescued (+{points})."),
            event(kind, text, agent=a, victim=vid, victim_kind=d["victim_kind"], points=points),
        )
    if kind == "dropped":
        return (
            event(kind, f"You put victim {d['victim']} down at {fmt_cell(d['cell'])}.", victim=d["victim"]),
            event(kind, f"{a} put victim {d['victim']} down", agent=a, victim=d["victim"], cell=list(d["cell"])),
        )
    if kind == "stabilized":
        vid = d["victim"]
        return (
            event(kind, f"You stabilized victim {vid}; it can now be carried.", victim=vid),
            event(kind, f"{a} stabilized victim {vid}", agent=a, victim=vid),
        )
    if kind == "cleared":
        names = d["rooms"]
        return (
            event(kind, f"You cleared the rubble between {names[0]} and {names[1]}.", door=d["door"]),
            event(kind, f"{a} cleared rubble at {fmt_cell(d['cell'])}", agent=a, cell=list(d["cell"]), rooms=names),
        )
    if kind == "interrupted":
        doing = {"walk": "your walk", "stabilize": "the stabilization", "clear": "clearing the rubble"}[d["task"]]
        return event(kind, f"You broke off {doing} to answer.", task=d["task"]), event(kind, "", agent=a, task=d["task"])
    if kind == "blocked":
        return event(kind, f"You stopped at {fmt_cell(d['at'])}: {refusal_text(d['why'])}.", cell=list(d["cell"])), None
    if kind == "arrived":
        return event(kind, _arrived(d)), None
    if kind == "missed":  # an accepted action that came to nothing (see rules.py): the victim was gone, or rescued
        return event(kind, _missed(d), victim=d["victim"]), None
    if kind == "done_already":  # a teammate finished the same stabilization or clearing first
        return event(kind, _done_already(d), task=d["task"]), None
    if kind == "entered":
        return None, event(kind, "", agent=a, room=d["room"])
    if kind == "found":
        return None, event(kind, "", agent=a, victims=d["victims"], room=d["room"])
    raise ValueError(f"unknown outcome {kind!r}")


# ---------------------------------------------------------------------- an agent's view
def task_text(s: Rescue, task: Task) -> str:
    if task.kind == "stabilize":
        return f"stabilizing victim {task.target}: {task.steps_left} steps left"
    if task.kind == "clear":
        return f"clearing rubble: {task.steps_left} steps left"
    kind, target = task.target
    left = len(task.path) - task.at
    where = f"walking to {s.room_names[target]}" if kind == "room" else f"walking to victim {target}" if kind == "victim" else "moving"
    return f"{where}: {left} cell{'s' if left != 1 else ''} to go"


# Parts of a view that change seldom are kept in `Rescue._parts`, each with the version of what it was read
# from, as tuples of read-only dicts (`SharedFacts`): views hold them as they are, so that no view shares a
# mutable object with another agent's view or another step's, and the text and the numeric observation of a
# part are worked out once per version (`_part_text`), not once per view.
def _part(s: Rescue, key: Any, version: Any, make: Callable[[], Any]) -> Any:
    """The cached value of `key` if it was made at `version`, else `make()` (cached)."""
    cached = s._parts.get(key)
    if cached is not None and cached[0] == version:
        return cached[1]
    value = make()
    s._parts[key] = (version, value)
    return value


def _victims_in(s: Rescue, room: int) -> tuple[SharedFacts, ...]:
    """{victim, status, cell} of the victims lying in `room`, by number (its `room_version` bumps on every change)."""
    return _part(s, ("here", room), s.room_version[room], lambda: tuple(
        SharedFacts(victim=vid, status=s.victims[vid - 1].status(), cell=s.victims[vid - 1].cell) for vid in sorted(s.room_victims[room])))


def _exits(s: Rescue, agent: str, room: int) -> tuple[SharedFacts, ...]:
    """{direction, cell, to (the room beyond), visited, rubble (believed)} of each doorway of `room`, as `agent`
    knows them (`visited` only grows, so its size is its version; kept per room, for an agent coming back)."""
    plan, k, names = s.plan, s.know[agent], s.room_names

    def make() -> tuple[SharedFacts, ...]:
        out = []
        for d in plan.room_doors[room]:
            door = plan.doors[d]
            other = door.other(room)
            out.append(SharedFacts(direction=door.direction_from(room), cell=door.cell, to=names[other],
                                   visited=other in k.visited, rubble=d in k.rubble))
        return tuple(out)

    return _part(s, ("exits", agent, room), (len(k.visited), k.rubble_version), make)


def _notes_elsewhere(s: Rescue, agent: str, room: int) -> tuple[SharedFacts, ...]:
    """{victim, status, room, cell} of `agent`'s notes of victims outside `room` not known rescued, by number
    (`rescued` only grows, so its size is its version; kept per room, for an agent coming back)."""
    k = s.know[agent]

    def make() -> tuple[SharedFacts, ...]:
        # each note's facts are made once per note (a changed note is a new object): the list is made afresh
        # whenever the agent changes room or learns anything of any victim
        made, names, out = s._notes.setdefault(agent, {}), s.room_names, []
        for vid, note in sorted(k.victims.items()):
            if note.room != room and vid not in k.rescued:
                hit = made.get(vid)
                if hit is None or hit[0] is not note:
                    hit = made[vid] = (note, SharedFacts(victim=vid, status=victim_status(note.kind, note.stabilized),
                                                         room=names[note.room], cell=note.cell))
                out.append(hit[1])
        return tuple(out)

    return _part(s, ("notes", agent, room), (k.victims_version, len(k.rescued)), make)


def _rubble_elsewhere(s: Rescue, agent: str, room: int) -> tuple[SharedFacts, ...]:
    """{rooms, cell} of the doorways `agent` believes blocked that are not doorways of `room`, by doorway (kept per
    room, for an agent coming back)."""
    plan, k, names = s.plan, s.know[agent], s.room_names
    return _part(s, ("rubble", agent, room), k.rubble_version, lambda: tuple(
        SharedFacts(rooms=tuple(names[r] for r in plan.doors[d].rooms), cell=plan.doors[d].cell)
        for d in sorted(k.rubble)
        if room not in plan.doors[d].rooms))


def _visited(s: Rescue, agent: str) -> tuple[str, ...]:
    """The names of the rooms `agent` has visited, by room id (`visited` only grows)."""
    k, names = s.know[agent], s.room_names
    return _part(s, ("visited", agent), len(k.visited), lambda: tuple(names[r] for r in sorted(k.visited)))


def _distances(s: Rescue, agent: str, known: RouteMap) -> SharedFacts:
    """{room name: cells away} of the rooms of `agent`'s route map, nearest first (cached while the map is the same object)."""
    cached = s._parts.get(("distances", agent))
    if cached is not None and cached[0] is known:
        return cached[1]
    names = s.room_names
    value = SharedFacts((names[r], cost) for r, (cost, _) in sorted(known.rooms.items(), key=lambda t: (t[1][0], t[0])))
    s._parts[("distances", agent)] = (known, value)
    return value


_NO_DISTANCES = SharedFacts()


class _Scene(NamedTuple):
    """The parts of an agent's view read from the room it is in and from its notes (see `_scene`)."""

    victims_here: tuple[SharedFacts, ...]
    exits: tuple[SharedFacts, ...]
    visited: tuple[str, ...]
    known_victims: tuple[SharedFacts, ...]
    known_rubble: tuple[SharedFacts, ...]
    named_rooms: tuple[tuple[int, str], ...]


def _scene(s: Rescue, agent: str, room: int) -> _Scene:
    """The parts of `agent`'s view read from `room` and its notes, checked by one version of them all: they stay
    the same while it walks within a room and learns nothing, as it does in most steps (kept per room, for an
    agent coming back)."""
    k = s.know[agent]
    version = (s.room_version[room], len(k.visited), k.names_version, k.rubble_version, k.victims_version, len(k.rescued))
    return _part(s, ("scene", agent, room), version, lambda: _Scene(
        _victims_in(s, room), _exits(s, agent, room), _visited(s, agent), _notes_elsewhere(s, agent, room),
        _rubble_elsewhere(s, agent, room), named_rooms(s, agent)))


def build_view(s: Rescue, cfg: SearchRescueConfig, agent: str, team: list[str], here_now: list[str],
               envelope: Mapping[str, Any]) -> dict[str, Any]:
    """What `agent` knows now, after the shared `envelope` (see `TeamEnv.envelope`), but its messages.

    `team` is every agent of the team; `here_now` the agents still in the episode. Without
    navigation assistance (`navigation=False`) there are no distances to rooms and no route cue.
    `score` is the tally of the rescues the agent knows of (`rules.score`). Two fields
    serve the numeric observation and the discrete actions (`teamenvs.core.rl`) and are not
    printed: `named_rooms`, (room id, name) of the rooms it can name (ids fixed by the floor
    plan), and `local_map`, the cells around it as it knows the layout (`rules.local_map`).
    """
    plan = s.plan
    pos = s.pos[agent]
    room = s.room[agent]
    door_here = plan.door_at(pos)
    task = s.task[agent]
    names = s.room_names
    carried = s.carrying[agent]
    busy = None
    distances: Mapping[str, int] = _NO_DISTANCES
    route = None
    if task is not None:
        busy = task_text(s, task)
    elif cfg.navigation:
        known = routes(s, agent)
        distances = _distances(s, agent, known)
        target = plan.hospital if carried is not None else s.goal[agent]
        if target is not None and target in known.rooms and plan.room_at(pos) != target:
            route = {"to": names[target], "via": tuple(names[r] for r in route_rooms(known, target)), "cells": known.rooms[target][0]}
    where = s.room
    scene = _scene(s, agent, room)
    return {
        **envelope,
        "role": role_of(agent),
        "team": tuple(team),
        "max_steps": cfg.max_steps,
        "cell": pos,
        "room": names[room],
        "doorway": tuple(names[r] for r in plan.doors[door_here].rooms) if door_here is not None else None,
        "victims_here": scene.victims_here,
        "teammates_here": tuple([a for a in here_now if a != agent and where[a] == room]),
        "exits": scene.exits,
        "carrying": None if carried is None else {"victim": carried, "kind": s.victims[carried - 1].kind},
        "busy": busy,
        "visited": scene.visited,
        "rooms": distances,
        "known_victims": scene.known_victims,
        "known_rubble": scene.known_rubble,
        "route": route,
        "score": score(s, cfg, agent),
        "communication": cfg.communication,
        "navigation": cfg.navigation,
        "interrupted": agent in s.interrupted,
        "named_rooms": scene.named_rooms,
        "local_map": local_map(s, agent),
    }


def _victims_here_text(part: Any) -> str:
    return "; ".join([f"{v['victim']} {v['status']} ({c[0]},{c[1]})" for v in part for c in (v["cell"],)])


def _exits_text(part: Any) -> str:
    return "; ".join([f"{e['direction']} ({c[0]},{c[1]}) to {e['to']}{'' if e['visited'] else ' (unvisited)'}{' RUBBLE' if e['rubble'] else ''}"
                      for e in part for c in (e["cell"],)])


def _elsewhere_text(part: Any) -> str:
    return "; ".join([f"{v['victim']} {v['status']} {v['room']} ({c[0]},{c[1]})" for v in part for c in (v["cell"],)])


def _rubble_text(part: Any) -> str:
    return "; ".join([f"{'-'.join(r['rooms'])} ({c[0]},{c[1]})" for r in part for c in (r["cell"],)])


_TEXTS: dict[Any, tuple[Any, str]] = {}
_REMEMBERED = 64  # entries per cache of what a shared part gives: a few times the parts in use at once (4 per agent)
# texts of parts: parts are kept per room (see `_scene`), so the texts of those an agent may come back to are kept too
_TEXTS_REMEMBERED = 256


def _remember(cache: dict[Any, Any], key: Any, entry: Any, kept: int = _REMEMBERED) -> None:
    """Keep `entry` (which holds the part objects its key names by id), forgetting the oldest entry past
    `kept`: a part is replaced when what it shows changes, and an old one is not kept alive for long."""
    cache[key] = entry
    if len(cache) > kept:
        del cache[next(iter(cache))]


def _part_text(part: Any, make: Callable[[Any], str]) -> str:
    """`make(part)`, once per part object when the part is one `build_view` shares (a tuple of `SharedFacts`, which
    cannot change): it is the same object in every view until what it shows changes. The entry holds the part, so
    its id is not reused meanwhile."""
    if not part or type(part[0]) is not SharedFacts:
        return make(part)
    hit = _TEXTS.get(id(part))
    if hit is not None and hit[0] is part:
        return hit[1]
    text = make(part)
    _remember(_TEXTS, id(part), (part, text), _TEXTS_REMEMBERED)
    return text


def _rooms_text(rooms: Mapping[str, int], visited: tuple[str, ...]) -> str:
    """The rooms line's list, once per (distances, visited) pair of shared objects (see `_part_text`)."""
    key = (id(rooms), id(visited))
    hit = _TEXTS.get(key) if type(rooms) is SharedFacts and type(visited) is tuple else None
    if hit is not None and hit[0][0] is rooms and hit[0][1] is visited:
        return hit[1]
    seen = set(visited)
    text = ", ".join([f"{n}{'*' if n in seen else ''} {c}" for n, c in rooms.items()])
    if type(rooms) is SharedFacts and type(visited) is tuple:
        _remember(_TEXTS, key, ((rooms, visited), text), _TEXTS_REMEMBERED)
    return text


def render_view(view: Mapping[str, Any]) -> str:
    """The observation text of a view."""
    # cells are written inline as "(x,y)" (what `fmt_cell` writes): a call per cell cost a third of the rendering
    agent, role = view["agent"], view["role"]
    x, y = view["cell"]
    where = f"in the doorway between {' and '.join(view['doorway'])}" if view["doorway"] else f"in {view['room']}"
    lines = [f"Step {view['step']}/{view['max_steps']}. You are {agent} ({role}), at ({x},{y}) {where}."]
    if view["busy"]:
        lines.append(f"Busy: {view['busy']}.")
    if view["turn"] is not None and view["turn"] != agent:
        lines.append(f"Round robin: this step is {view['turn']}'s; you act on your turn.")
    if view["interrupted"]:
        lines.append("A message for you has come: answer it with say or tell, which breaks off what you are doing, or continue.")
    here = _part_text(view["victims_here"], _victims_here_text)
    mates = ", ".join(view["teammates_here"])
    lines.append(f"In {view['room']}: " + (f"victims {here}" if here else "no victims") + (f"; teammates {mates}" if mates else "") + ".")
    lines.append("Doorways: " + (_part_text(view["exits"], _exits_text) or "none") + ".")
    if view["carrying"]:
        lines.append(f"Carrying victim {view['carrying']['victim']} ({view['carrying']['kind']}).")
    if view["route"]:
        r = view["route"]
        lines.append(f"Route to {r['to']}: {' > '.join(r['via'])} ({r['cells']} cells).")
    if not view["navigation"]:
        lines.append("Rooms visited: " + ", ".join(view["visited"]) + ".")
    elif view["rooms"]:
        lines.append("Rooms (cells away, * visited): " + _rooms_text(view["rooms"], view["visited"]) + ".")
    if view["known_victims"]:
        lines.append("Victims elsewhere: " + _part_text(view["known_victims"], _elsewhere_text) + ".")
    if view["known_rubble"]:
        lines.append("Rubble elsewhere: " + _part_text(view["known_rubble"], _rubble_text) + ".")
    s = view["score"]
    lines.append(f"Team: {s['rescued']}/{s['victims']} rescued ({s['stable']} stable, {s['critical']} critical), {s['points']} points"
                 + ("." if view["communication"] == "global" else " that you know of."))
    messages = ["Earlier messages: " + " | ".join(view["recent_messages"])] if view["recent_messages"] else []
    if view["new_messages"]:
        messages.append("Messages: " + " | ".join(view["new_messages"]))
    return "\n".join(lines + footer(view, before_last_action=messages))


def message_line(message: Message, viewer: str) -> str:
    """A message as `viewer` reads it, with the step it was sent at: "[step 12] medic: taking victim 5"."""
    return f"[step {message.step}] {message.render(viewer)}"


# ---------------------------------------------------------------------- the whole state
def state_json(s: Rescue, cfg: SearchRescueConfig, team: list[str], step: int) -> dict[str, Any]:
    """The omniscient state, JSON-ready."""
    names = s.room_names
    return {
        "step": step,
        "agents": {
            a: {
                "cell": list(s.pos[a]),
                "room": names[s.room[a]],
                "carrying": s.carrying[a],
                "busy": task_text(s, s.task[a]) if s.task[a] else None,
            }
            for a in team
        },
        "victims": [
            {
                "id": v.id,
                "kind": v.kind,
                "stabilized": v.stabilized,
                "cell": list(v.cell) if v.cell else None,
                "carried_by": v.carried_by,
                "rescued": v.rescued,
            }
            for v in s.victims
        ],
        "rubble": [list(s.plan.doors[d].cell) for d in sorted(s.rubble)],
        "score": score(s, cfg),
    }


def reset_record(s: Rescue) -> dict[str, Any]:
    """The hidden setup for the log's reset line: the floor plan, rubble, victims and start cells."""
    return {
        "world": {
            **s.plan.to_json(),
            "rubble": [list(s.plan.doors[d].cell) for d in sorted(s.rubble)],
            "victims": [{"id": v.id, "kind": v.kind, "cell": list(v.cell), "room": s.room_names[v.room]} for v in s.victims],
            "start": {a: list(s.pos[a]) for a in s.agents},
        }
    }


def render_frame(s: Rescue, cfg: SearchRescueConfig, team: list[str], step: int) -> str:
    """The ansi drawing of the true world: walls, doors, rubble, victims and agents, with the score."""
    plan = s.plan
    w = plan.width
    grid = []
    for y in range(plan.height):
        row = []
        for x in range(w):
            code = plan.cells[y * w + x]
            if code == WALL:
                row.append("#")
            elif code <= -2:
                row.append("X" if -2 - code in s.rubble else "+")
            else:
                row.append("h" if code == plan.hospital else ".")
        grid.append(row)
    for v in s.victims:
        if v.cell is not None:
            grid[v.cell[1]][v.cell[0]] = "s" if v.kind == STABLE else ("c" if v.stabilized else "C")
    marks = {MEDIC: "M", ENGINEER: "E", TRANSPORTER: "T"}
    for a in team:
        x, y = s.pos[a]
        grid[y][x] = marks[role_of(a)]
    sc = score(s, cfg)
    legend = "# wall  + door  X rubble  h Hospital  s stable  C critical  c stabilized  M medic  E engineer  T transporter"
    head = f"Search and rescue step {step}/{cfg.max_steps} | rescued {sc['rescued']}/{sc['victims']} | {sc['points']} points"
    agents = "  ".join(f"{a}@{fmt_cell(s.pos[a])}{' carrying ' + str(s.carrying[a]) if s.carrying[a] else ''}" for a in team)
    return "\n".join([head, *("".join(r) for r in grid), legend, agents])


# ---------------------------------------------------------------------- briefing
def role_briefing(cfg: SearchRescueConfig, agent: str, team: list[str], s: Rescue | None) -> str:
    """The role and rules part of the briefing; `s` is the episode once reset (a drawn layout has its own victims and rubble)."""
    role = role_of(agent)
    duties = {
        MEDIC: f"You are the medic: only you can stabilize critical victims (it takes {cfg.stabilize_steps} steps).",
        ENGINEER: f"You are the engineer: only you can clear rubble from a doorway (it takes {cfg.clear_steps} steps).",
        TRANSPORTER: "You are a transporter: you carry victims at full speed.",
    }[role]
    talk = {
        "global": "You and your teammates have radios: 'say' reaches everyone, 'tell' one teammate, anywhere.",
        "same_room": "Messages reach only teammates in the same room as you.",
        "none": "There is no communication in this condition.",
    }[cfg.communication]
    n_victims = len(s.victims) if s is not None else cfg.n_victims
    critical = sum(v.kind == CRITICAL for v in s.victims) if s is not None else round(cfg.n_victims * cfg.critical_fraction)
    has_rubble = bool(s.initial_rubble) if s is not None else cfg.rubble_fraction > 0
    return (
        f"Search and rescue. You are {agent}, on a team of {len(team)} "
        f"({', '.join(team)}). {duties} The building is a grid of rooms joined by doorways; "
        f"you all start in the Hospital. {n_victims} victims lie in other rooms"
        + (f", {critical} of them critical: a critical victim must be stabilized by the medic before anyone can carry it" if critical else "")
        + ". Find them and carry them to the Hospital, one at a time: drop a victim in the Hospital to rescue it "
        f"(+{cfg.stable_points} points for a stable victim, +{cfg.critical_points} for a critical one, shared by the team). "
        + ("Rubble blocks some doorways; only the engineer can clear it. " if has_rubble else "")
        + f"A medic or engineer carrying a victim needs {cfg.carry_steps_per_cell} steps per cell. "
        f"The mission ends when every victim is rescued or after {cfg.max_steps} steps. "
        "Cells are (x,y): x grows to the east, y to the south. Entering a room shows you everything in it; "
        "you know the rooms you have been in, the rooms their doorways lead to, and what teammates tell you: "
        "naming a room in a message shares what you know of its layout and rubble, and naming victims by number "
        "('victim 7', 'victims 3, 5') shares where they are. "
        f"{talk} 'go to' and 'go to victim' keep you busy (no decisions) until you arrive or are blocked."
        + (" You know the whole floor plan from the start." if cfg.full_map else "")
    )


# ---------------------------------------------------------------------- the numeric observation
# `features(config)` is the feature table, `encode(view, config)` the vector of a view, slot by
# slot as the table says (teamenvs.core.rl). Everything comes from the view; nothing hidden.
VICTIM_SLOTS = 8  # the nearest known victims, in order of walking distance in a straight line
MAX_ROOM_SLOTS = 96  # rooms beyond this id get no slot (only maps larger than the presets have them)
TEAM_SLOTS = 10
MAP_KINDS = (WALL_MARK, FLOOR, HOSPITAL_FLOOR, DOORWAY, RUBBLE)
ROOM_FIELDS = ("known", "visited", "current", "hospital", "reachable", "distance", "next_on_route",
               "stable_victims", "critical_victims", "stabilized_victims", "rubble")
VICTIM_FIELDS = ("present", "dx", "dy", "distance", "within_reach", "in_my_room", "stable", "critical", "stabilized")
COMMAND_KINDS = ("move", "go to victim", "go to", "pick up victim", "drop victim", "stabilize victim", "clear rubble",
                 "say", "tell", "wait")
EVENT_KINDS = (
    ("picked_up", ("You picked up",)),
    ("rescued", ("You delivered",)),
    ("dropped", ("You put victim",)),
    ("stabilized", ("You stabilized",)),
    ("cleared", ("You cleared",)),
    ("blocked", ("You stopped at",)),
    ("arrived", ("You arrived", "You are next to victim", "You reached where")),
)
_NEEDS_MEDIC = victim_status(CRITICAL, False)
_STATUS_SLOT = {STABLE: 6, _NEEDS_MEDIC: 7, victim_status(CRITICAL, True): 8}
_ROOM_COUNT = {STABLE: 7, _NEEDS_MEDIC: 8, victim_status(CRITICAL, True): 9}
# one row per map character: 1 in the column of its kind (unknown cells and outside: all zeros)
_MAP_TABLE = np.zeros((256, len(MAP_KINDS)), dtype=np.float32)
for _i, _kind in enumerate(MAP_KINDS):
    _MAP_TABLE[ord(_kind), _i] = 1.0


def room_slots(config: SearchRescueConfig) -> int:
    """Rooms with a slot in the observation and a `go to room i` action: the most a map of this config has, at most 64."""
    return min(MAX_ROOM_SLOTS, max_rooms(config))


def features(config: SearchRescueConfig) -> tuple[Feature, ...]:
    """The feature table of the numeric observation for this config."""
    return _layout_of(config).features


_LAYOUTS: dict[int, tuple[SearchRescueConfig, "_Layout"]] = {}


def _layout(config: SearchRescueConfig) -> "_Layout":
    """`_layout_of(config)`, found by the config object first: hashing a frozen dataclass (the lru_cache key)
    costs microseconds per call. The entry keeps its config alive, so its id is not reused meanwhile."""
    hit = _LAYOUTS.get(id(config))
    if hit is not None and hit[0] is config:
        return hit[1]
    lay = _layout_of(config)
    if len(_LAYOUTS) > 64:
        _LAYOUTS.clear()
    _LAYOUTS[id(config)] = (config, lay)
    return lay


class _Layout(NamedTuple):
    features: tuple[Feature, ...]
    offsets: dict[str, int]
    size: int
    rooms: int
    low: np.ndarray
    high: np.ndarray


@lru_cache(maxsize=32)
def _layout_of(config: SearchRescueConfig) -> _Layout:
    rooms = room_slots(config)
    cells = LOCAL_SIDE * LOCAL_SIDE
    feats = (
        Feature("role", 3, doc="one-hot: medic, engineer, transporter"),
        Feature("position", 2, doc="own cell: x / (width - 1), y / (height - 1)"),
        Feature("in_doorway", 1, doc="1 when standing in a doorway"),
        Feature("carrying", 3, doc="carrying a victim; it is stable; it is critical"),
        Feature("busy", 4, doc="busy (no decision this step); walking; stabilizing; clearing rubble"),
        Feature("local_map", cells * len(MAP_KINDS),
                doc=f"the {LOCAL_SIDE}x{LOCAL_SIDE} cells centred on the agent, row by row from the north-west, "
                    f"{len(MAP_KINDS)} slots each: wall, floor, Hospital floor, doorway, doorway with known rubble "
                    "(all 0: a room it has not mapped, or outside the building); the layout of the rooms it has mapped"),
        Feature("victims", VICTIM_SLOTS * len(VICTIM_FIELDS), -1.0, 1.0,
                doc=f"the {VICTIM_SLOTS} nearest known victims (Manhattan distance from the agent, then number), "
                    f"{len(VICTIM_FIELDS)} slots each: present; dx / width; dy / height; distance / (width + height); "
                    "within reach (on or next to the agent's cell); in the agent's room (seen now); stable; critical "
                    "needing the medic; critical and stabilized. Slot j is the victim of the `... nearest victim j+1` actions"),
        Feature("rooms", rooms * len(ROOM_FIELDS),
                doc=f"one block per room id 0..{rooms - 1} (the floor plan's order), {len(ROOM_FIELDS)} slots each: the agent "
                    "can name it; visited; the room it is in; the Hospital; it knows a route there; route length in cells / "
                    "(2 (width + height)); the next room of the route it is shown; known stable victims there / 5; known "
                    "critical victims needing the medic / 5; known stabilized victims / 5; known rubble in one of its "
                    "doorways. Room i is the room of the `go to room i` action"),
        Feature("teammates_here", TEAM_SLOTS, doc="per team member (the team's order, up to 10): in the agent's room"),
        Feature("route", 2, doc="a route is shown (to the Hospital when carrying, else to the room of the last 'go to'); "
                                "its length in cells / (2 (width + height))"),
        Feature("score", 4, doc="the team's tally as the agent knows it (every rescue under `global` communication; else those "
                                "it made, saw in the Hospital or was told of): rescued / victims; stable rescued / victims; "
                                "critical rescued / victims; points / (victims x the larger of the two points)"),
        Feature("time", 1, doc="step / max_steps"),
        Feature("last_action", 4 + len(COMMAND_KINDS),
                doc="what became of the agent's last action, one-hot: none yet, accepted, rejected, none needed (busy; at a decision after such steps, what became of its last decision); "
                    "then the accepted command, one-hot: " + ", ".join(COMMAND_KINDS)),
        Feature("events", len(EVENT_KINDS), doc="this step, the agent: " + ", ".join(k for k, _ in EVENT_KINDS)),
        Feature("new_messages", 1, doc="messages not yet shown at a decision (received since the agent last decided) / 4, at most 1"),
        Feature("communication", 3, doc="one-hot: global, same_room, none"),
        Feature("interrupted", 1, doc="a message for the agent interrupts the action it is busy with: it decides now "
                                      "whether to carry on (the no-op, `continue`) or to answer (`interrupt_to_talk`)"),
    )
    offsets, start = {}, 0
    for f in feats:
        offsets[f.name] = start
        start += f.size
    low, high = feature_bounds(feats)
    return _Layout(feats, offsets, start, rooms, low, high)


class Known(NamedTuple):
    """A known victim as the numeric interface sees it."""

    distance: int  # Manhattan, from the agent's cell
    victim: int
    status: str
    cell: Cell
    room: str
    here: bool  # in the agent's room (seen now)


class _Victims(NamedTuple):
    """What the nearest-victim ranking reads of a view's victims (those in its room, then its notes elsewhere), and
    what it gave for each cell it was asked from (kept while the agent walks: it comes back over its cells)."""

    cells: tuple[tuple[int, int, int], ...]  # (x, y, order) per victim; order: its number, then its position (`_victims_of`)
    known: tuple[tuple[int, str, Cell, str, bool], ...]  # a Known's fields but the distance, per victim
    order_bits: int
    positions: int  # the bits of a key (`_ranking`) that hold the victim's position in `known`
    counts: Counter  # (room, status) -> how many of the notes elsewhere
    ranked: dict[Cell, tuple[int, ...]]  # cell -> the ranking seen from it (`_ranking`)
    nearest: dict[Cell, tuple[Known, ...]]  # cell -> that ranking's victims as Knowns (`nearest_victims`)
    blocks: dict[tuple[int, int, int, int], np.ndarray]  # (x, y, width, height) -> the `victims` block seen from (x, y)


_SUMMARIES: list[tuple[Mapping[str, Any], tuple[_Victims, tuple[int, ...]]]] = []
_VICTIMS: dict[tuple[int, int, str], tuple[Any, Any, _Victims]] = {}
_new_known = tuple.__new__  # a Known without NamedTuple's Python-level __new__
_FACTS = itemgetter("victim", "status", "cell")
_NOTE_FACTS = itemgetter("victim", "status", "cell", "room")
_ROOM_STATUS = itemgetter("room", "status")
_NUMBER_BITS = 20  # victim numbers stay below 2**20
_CELLS_KEPT = 64  # cells per `_Victims` whose ranking, Knowns and block are kept


def _is_shared(part: Any) -> bool:
    """Whether a view's list of victims is one `build_view` shares (a tuple of `SharedFacts`, which cannot change)."""
    return type(part) is tuple and (not part or type(part[0]) is SharedFacts)


def _victims_of(here: tuple[Mapping[str, Any], ...], notes: tuple[Mapping[str, Any], ...], room: str) -> _Victims:
    """The ranking's reading of the victims in the agent's `room` and of its notes elsewhere, once per pair of shared
    parts (see `_part_text`). An entry holds its parts, so a key of their ids names those very objects while it is kept."""
    key = (id(here), id(notes), room)
    hit = _VICTIMS.get(key)
    if hit is not None:
        return hit[2]
    known = [(*_FACTS(v), room, True) for v in here] + [(*_NOTE_FACTS(v), False) for v in notes]
    shift = len(known).bit_length()
    # number, then position, as one integer below a distance (see `_ranking`)
    cells = tuple((cx, cy, vid << shift | i) for i, (vid, _, (cx, cy), _, _) in enumerate(known))
    counts = Counter(map(_ROOM_STATUS, notes)) if notes and "room" in notes[0] else Counter()
    found = _Victims(cells, tuple(known), _NUMBER_BITS + shift, (1 << shift) - 1, counts, {}, {}, {})
    if _is_shared(here) and _is_shared(notes):
        _remember(_VICTIMS, key, (here, notes, found))
    return found


def _kept(cache: dict[Any, Any], key: Any, value: Any) -> Any:
    """Put `key: value` in one of a `_Victims`'s per-cell caches, starting it afresh past `_CELLS_KEPT` entries."""
    if len(cache) >= _CELLS_KEPT:
        cache.clear()
    cache[key] = value
    return value


def _ranking(victims: _Victims, cell: Cell) -> tuple[int, ...]:
    """The `VICTIM_SLOTS` victims nearest `cell` (Manhattan distance, then number), nearest first, each as one integer
    key: its distance above its order (`order_bits` bits: its number, then its position in `known`), so that one sort
    of plain integers ranks them as a stable sort by (distance, number) would. Once per cell."""
    ranked = victims.ranked.get(cell)
    if ranked is None:
        x, y = cell
        bits = victims.order_bits
        ranked = _kept(victims.ranked, cell, tuple(
            sorted([(abs(cx - x) + abs(cy - y)) << bits | order for cx, cy, order in victims.cells])[:VICTIM_SLOTS]))
    return ranked


def _victim_summary(view: Mapping[str, Any]) -> tuple[_Victims, tuple[int, ...]]:
    """(the ranking's reading of the view's victims, the ranking seen from the agent's cell)."""
    for seen, found in _SUMMARIES:
        if seen is view:
            return found
    victims = _victims_of(view["victims_here"], view["known_victims"], view["room"])
    found = (victims, _ranking(victims, view["cell"]))
    _SUMMARIES.append((view, found))  # the encoder and the mask read the same view one after the other
    if len(_SUMMARIES) > 4:
        del _SUMMARIES[0]
    return found


def nearest_victims(view: Mapping[str, Any]) -> tuple[Known, ...]:
    """The `VICTIM_SLOTS` known victims nearest the agent (Manhattan distance, then number): those in its room, then its notes."""
    victims, ranked = _victim_summary(view)
    cell = view["cell"]
    nearest = victims.nearest.get(cell)
    if nearest is None:
        bits, positions, known = victims.order_bits, victims.positions, victims.known
        nearest = _kept(victims.nearest, cell, tuple([_new_known(Known, (key >> bits, *known[key & positions])) for key in ranked]))
    return nearest


_ROOM_IDS: dict[int, tuple[tuple[tuple[int, str], ...], dict[str, int]]] = {}


def room_ids(view: Mapping[str, Any]) -> dict[str, int]:
    """Room name -> room id for the rooms the agent can name (from the view's `named_rooms`)."""
    named = view["named_rooms"]
    cached = _ROOM_IDS.get(id(named))
    if cached is None or cached[0] is not named:
        if len(_ROOM_IDS) > 256:
            _ROOM_IDS.clear()
        cached = (named, {name: r for r, name in named})
        _ROOM_IDS[id(named)] = cached
    return cached[1]


_ROOM_BLOCKS: dict[tuple[int, int], tuple[tuple[tuple[int, str], ...], dict[str, int], tuple[int, ...]]] = {}


def _room_blocks(named: tuple[tuple[int, str], ...], lay: "_Layout") -> tuple[dict[str, int], tuple[int, ...]]:
    """(room name -> the first slot of its block, the first slots of the named rooms) for the rooms with a slot."""
    key = (id(named), lay.size)
    cached = _ROOM_BLOCKS.get(key)
    if cached is None or cached[0] is not named:
        if len(_ROOM_BLOCKS) > 256:
            _ROOM_BLOCKS.clear()
        start, width = lay.offsets["rooms"], len(ROOM_FIELDS)
        blocks = {name: start + r * width for r, name in named if r < lay.rooms}
        cached = (named, blocks, tuple(blocks.values()))
        _ROOM_BLOCKS[key] = cached
    return cached[1], cached[2]


_LAST_ACTION: dict[str, tuple[int, int | None]] = {}


def _last_action_slots(line: str) -> tuple[int, int | None]:
    """(status slot, command kind slot or None) of a last-action line."""
    cached = _LAST_ACTION.get(line)
    if cached is None:
        kind = None
        if line.startswith(LAST_ACTION_REJECTED):
            status = 2
        elif line == NO_LAST_ACTION:
            status = 0
        elif line.endswith("(accepted)."):
            status = 1
            text = line[len(LAST_ACTION):-len(" (accepted).")]
            kind = next((i for i, k in enumerate(COMMAND_KINDS) if text == k or text.startswith(k + " ")), None)
        else:
            status = 3
        cached = (status, kind)
        if len(_LAST_ACTION) > 4096:
            _LAST_ACTION.clear()
        _LAST_ACTION[line] = cached
    return cached


_LOCAL_CODES: dict[str, np.ndarray] = {}


def _local_slots(local: str) -> np.ndarray:
    """The `local_map` block of a view's local map (cached: the same few strings recur)."""
    block = _LOCAL_CODES.get(local)
    if block is None:
        if len(_LOCAL_CODES) > 8192:
            _LOCAL_CODES.clear()
        block = _MAP_TABLE[np.frombuffer(local.encode("ascii"), dtype=np.uint8)].reshape(-1)
        _LOCAL_CODES[local] = block
    return block


_ROOMS_PARTS = itemgetter("named_rooms", "visited", "rooms", "victims_here", "exits", "known_victims", "known_rubble", "room")
_ROOMS_BLOCKS: dict[tuple[int, ...], tuple[tuple[Any, ...], np.ndarray]] = {}


def _shared_rooms_parts(parts: tuple[Any, ...]) -> bool:
    """Whether the parts the room blocks are read from are ones `build_view` shares (which cannot change)."""
    named, visited, rooms = parts[:3]
    return (type(named) is tuple and type(visited) is tuple and type(rooms) is SharedFacts
            and all(not p or type(p[0]) is SharedFacts for p in parts[3:7]))


def _rooms_block(view: Mapping[str, Any], lay: "_Layout", span: int, counts: Mapping[tuple[str, str], int]) -> np.ndarray:
    """The `rooms` block but the route's next room (float32, read-only), once per combination of the shared parts it
    is read from (see `_part_text`), which stay the same objects while the agent walks within what it knows. An
    entry holds its parts, so a key of their ids names those very objects while it is kept."""
    parts = _ROOMS_PARTS(view) + (lay,)
    key = tuple(map(id, parts))
    hit = _ROOMS_BLOCKS.get(key)
    if hit is not None:
        return hit[1]
    s = _rooms_slots(view, lay, span, counts)
    block = np.zeros(lay.rooms * len(ROOM_FIELDS), dtype=np.float32)
    if s:  # (float64 -> float32 rounds as item assignment does)
        n = len(s)
        block[np.fromiter(s, np.intp, n) - lay.offsets["rooms"]] = np.fromiter(s.values(), np.float64, n)
    block.flags.writeable = False
    if _shared_rooms_parts(parts):
        _remember(_ROOMS_BLOCKS, key, (parts, block))
    return block


def _rooms_slots(view: Mapping[str, Any], lay: "_Layout", span: int, counts: Mapping[tuple[str, str], int]) -> dict[int, float]:
    """The non-zero slots of the room blocks but the route's next room, slot -> value."""
    blocks, named = _room_blocks(view["named_rooms"], lay)
    room = blocks.get
    s: dict[int, float] = {}
    for b in named:
        s[b] = 1.0
    for name in view["visited"]:
        b = room(name)
        if b is not None:
            s[b + 1] = 1.0
    far = 2 * span
    for name, cells_away in view["rooms"].items():
        b = room(name)
        if b is not None:
            s[b + 4] = 1.0
            s[b + 5] = min(1.0, cells_away / far)
    b = room(HOSPITAL)
    if b is not None:
        s[b + 3] = 1.0
    here = room(view["room"])
    count = _ROOM_COUNT
    if here is not None:
        s[here + 2] = 1.0
        for v in view["victims_here"]:
            slot = here + count[v["status"]]
            s[slot] = min(1.0, s.get(slot, 0.0) + 0.2)
    for e in view["exits"]:
        if e["rubble"]:
            for b in (here, room(e["to"])):
                if b is not None:
                    s[b + 10] = 1.0
    for (name, status), n in counts.items():
        b = room(name)
        if b is not None:
            slot = b + count[status]
            s[slot] = min(1.0, s.get(slot, 0.0) + 0.2 * n)
    for rb in view["known_rubble"]:
        for name in rb["rooms"]:
            b = room(name)
            if b is not None:
                s[b + 10] = 1.0
    return s


def _victim_slots(victims: _Victims, ranked: tuple[int, ...], x: int, y: int, w: int, h: int) -> list[float]:
    """The `victims` block's slots of the ranked victims (VICTIM_FIELDS each, see `_ranking`), seen from (x, y)."""
    span = w + h
    bits, positions, known = victims.order_bits, victims.positions, victims.known
    slots: list[float] = []
    for key in ranked:
        distance = key >> bits
        _, status, (vx, vy), _, here = known[key & positions]
        dx, dy = vx - x, vy - y
        block = [
            1.0,
            dx / w if -w < dx < w else (1.0 if dx > 0 else -1.0),  # a drawn map may be larger than the config's
            dy / h if -h < dy < h else (1.0 if dy > 0 else -1.0),
            distance / span if distance < span else 1.0,
            1.0 if -1 <= dx <= 1 and -1 <= dy <= 1 else 0.0,
            1.0 if here else 0.0,
            0.0, 0.0, 0.0,
        ]
        block[_STATUS_SLOT[status]] = 1.0
        slots += block
    return slots


def _victims_block(victims: _Victims, ranked: tuple[int, ...], x: int, y: int, w: int, h: int) -> np.ndarray:
    """The `victims` block's slots of the ranking seen from (x, y) (float32, read-only), once per cell, as the
    ranking is kept: an agent walking back over its cells finds both."""
    key = (x, y, w, h)
    block = victims.blocks.get(key)
    if block is None:
        block = np.array(_victim_slots(victims, ranked, x, y, w, h), dtype=np.float32)  # (rounds as item assignment does)
        block.flags.writeable = False
        _kept(victims.blocks, key, block)
    return block


def encode(view: Mapping[str, Any], config: SearchRescueConfig) -> np.ndarray:
    """The numeric observation of a view (float32, `features(config)` slot by slot)."""
    lay = _layout(config)
    o = lay.offsets
    w, h = config.width, config.height
    x, y = view["cell"]
    # every value below lies in its feature's scale already; the blocks go in as slices, the other slots one by one
    out = np.zeros(lay.size, dtype=np.float32)
    m = o["local_map"]
    out[m:m + LOCAL_SIDE * LOCAL_SIDE * len(MAP_KINDS)] = _local_slots(view["local_map"])
    noted, ranked = _victim_summary(view)
    if ranked:
        start = o["victims"]
        out[start:start + len(ranked) * len(VICTIM_FIELDS)] = _victims_block(noted, ranked, x, y, w, h)
    start = o["rooms"]
    out[start:start + lay.rooms * len(ROOM_FIELDS)] = _rooms_block(view, lay, w + h, noted.counts)

    out[o["role"] + _ROLES[view["role"]]] = 1.0
    out[o["position"]] = min(1.0, x / (w - 1))
    out[o["position"] + 1] = min(1.0, y / (h - 1))
    if view["doorway"] is not None:
        out[o["in_doorway"]] = 1.0
    carried = view["carrying"]
    if carried is not None:
        out[o["carrying"]] = 1.0
        out[o["carrying"] + (1 if carried["kind"] == STABLE else 2)] = 1.0
    busy = view["busy"]
    if busy:
        out[o["busy"]] = 1.0
        out[o["busy"] + (2 if busy.startswith("stabilizing") else 3 if busy.startswith("clearing") else 1)] = 1.0
    route = view["route"]
    if route is not None:
        out[o["route"]] = 1.0
        out[o["route"] + 1] = min(1.0, route["cells"] / (2 * (w + h)))
        b = _room_blocks(view["named_rooms"], lay)[0].get(route["via"][0]) if route["via"] else None
        if b is not None:
            out[b + 6] = 1.0  # the route's next room: the one slot of a room block that `_rooms_block` leaves out
    mates = view["teammates_here"]
    if mates:
        for i, a in enumerate(view["team"][:TEAM_SLOTS]):
            if a in mates:
                out[o["teammates_here"] + i] = 1.0
    sc = view["score"]
    victims = max(1, sc["victims"])
    b = o["score"]
    out[b] = sc["rescued"] / victims
    out[b + 1] = sc["stable"] / victims
    out[b + 2] = sc["critical"] / victims
    out[b + 3] = sc["points"] / max(1, victims * max(config.stable_points, config.critical_points))
    out[o["time"]] = min(1.0, view["step"] / view["max_steps"])
    status, kind = _last_action_slots(view["last_action"])
    out[o["last_action"] + status] = 1.0
    if kind is not None:
        out[o["last_action"] + 4 + kind] = 1.0
    for text in view["events"]:
        for i, (_, prefixes) in enumerate(EVENT_KINDS):
            if text.startswith(prefixes):
                out[o["events"] + i] = 1.0
                break
    if view["new_messages"]:
        out[o["new_messages"]] = min(1.0, len(view["new_messages"]) / 4)
    out[o["communication"] + _COMMUNICATION[view["communication"]]] = 1.0
    if view["interrupted"]:
        out[o["interrupted"]] = 1.0
    return out


_ROLES = {MEDIC: 0, ENGINEER: 1, TRANSPORTER: 2}
_COMMUNICATION = {"global": 0, "same_room": 1, "none": 2}
