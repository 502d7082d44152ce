"""Search-and-rescue text: each agent's view of the state and its observation, the events and refusals
in words, the omniscient state and frame, and the briefing.

`build_view` gathers what one agent may know; `render_view` is a function of that view alone.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from teamenvs.core.env import event
from teamenvs.core.view import footer
from teamenvs.search_rescue.config import ENGINEER, MEDIC, TRANSPORTER, SearchRescueConfig, role_of
from teamenvs.search_rescue.navigation import Cell, route_rooms
from teamenvs.search_rescue.rules import Outcome, Refusal, Rescue, Task, routes, score
from teamenvs.search_rescue.world import CRITICAL, STABLE, WALL, victim_status


def fmt_cell(cell: Cell) -> str:
    return f"({cell[0]},{cell[1]})"


# ---------------------------------------------------------------------- refusals and events in words
_NO_ROUTE = (
    "you know no open route to {room}: the way is blocked by rubble you know of, or you have not yet "
    "mapped the rooms in between; explore, or ask the engineer to clear the rubble"
)

REFUSALS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "carried": lambda d: f"victim {d['victim']} is being carried by {d['carrier']}",
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
    "being_stabilized": lambda d: f"victim {d['victim']} is being stabilized",
    "drop_in_doorway": lambda d: "you cannot leave a victim in a doorway; step into a room first",
    "stable": lambda d: f"victim {d['victim']} is stable and does not need stabilizing; it can be carried as it is",
    "already_stabilized": lambda d: f"victim {d['victim']} is already stabilized",
    "other_stabilizing": lambda d: f"{d['other']} is already stabilizing victim {d['victim']}",
    "no_rubble": lambda d: f"there is no rubble {d['way']} of you; rubble lies in doorways, so stand next to the blocked doorway",
    "other_clearing": lambda d: f"{d['other']} is already clearing that doorway",
}


def refusal_text(refusal: Refusal) -> str:
    return REFUSALS[refusal.reason](refusal.data)


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
    if kind == "blocked":
        return event(kind, f"You stopped at {fmt_cell(d['at'])}: {refusal_text(d['why'])}.", cell=list(d["cell"])), None
    if kind == "arrived":
        return event(kind, _arrived(d)), None
    if kind == "moved":
        return None, event(kind, "", agent=a, cell=list(d["cell"]))
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
    where = {"room": lambda: f"walking to {s.room_names[target]}", "victim": lambda: f"walking to victim {target}"}
    return f"{where.get(kind, lambda: 'moving')()}: {left} cell{'s' if left != 1 else ''} to go"


def build_view(s: Rescue, cfg: SearchRescueConfig, agent: str, team: list[str], here_now: list[str]) -> dict[str, Any]:
    """What `agent` knows now, but the shared envelope (see `TeamEnv.envelope`) and its messages.

    `team` is every agent of the team; `here_now` the agents still in the episode.
    """
    plan, k = s.plan, s.know[agent]
    pos = s.pos[agent]
    room = s.room[agent]
    door_here = plan.door_at(pos)
    task = s.task[agent]
    names = s.room_names
    rescued = set(s.rescued)
    here_victims = tuple(
        {"victim": vid, "status": s.victims[vid - 1].status(), "cell": s.victims[vid - 1].cell} for vid in sorted(s.room_victims[room])
    )
    exits = tuple(
        {
            "direction": plan.doors[d].direction_from(room),
            "cell": plan.doors[d].cell,
            "to": names[plan.doors[d].other(room)],
            "visited": plan.doors[d].other(room) in k.visited,
            "rubble": d in k.rubble,
        }
        for d in plan.room_doors[room]
    )
    elsewhere = tuple(
        {"victim": vid, "status": victim_status(note.kind, note.stabilized), "room": names[note.room], "cell": note.cell}
        for vid, note in sorted(k.victims.items())
        if note.room != room and vid not in rescued
    )
    rubble = tuple(
        {"rooms": tuple(names[r] for r in plan.doors[d].rooms), "cell": plan.doors[d].cell}
        for d in sorted(k.rubble)
        if room not in plan.doors[d].rooms
    )
    carried = s.carrying[agent]
    busy = None
    distances: dict[str, int] = {}
    route = None
    if task is not None:
        busy = task_text(s, task)
    else:
        known = routes(s, agent)
        distances = {names[r]: cost for r, (cost, _) in sorted(known.rooms.items(), key=lambda t: (t[1][0], t[0]))}
        target = plan.hospital if carried is not None else s.goal[agent]
        if target is not None and target in known.rooms and plan.room_at(pos) != target:
            route = {"to": names[target], "via": tuple(names[r] for r in route_rooms(known, target)), "cells": known.rooms[target][0]}
    return {
        "role": role_of(agent),
        "team": tuple(team),
        "max_steps": cfg.max_steps,
        "cell": pos,
        "room": names[room],
        "doorway": tuple(names[r] for r in plan.doors[door_here].rooms) if door_here is not None else None,
        "victims_here": here_victims,
        "teammates_here": tuple(a for a in here_now if a != agent and s.room[a] == room),
        "exits": exits,
        "carrying": None if carried is None else {"victim": carried, "kind": s.victims[carried - 1].kind},
        "busy": busy,
        "visited": tuple(names[r] for r in sorted(k.visited)),
        "rooms": distances,
        "known_victims": elsewhere,
        "known_rubble": rubble,
        "route": route,
        "score": score(s, cfg),
        "communication": cfg.communication,
    }


def render_view(view: Mapping[str, Any]) -> str:
    """The observation text of a view."""
    agent, role = view["agent"], view["role"]
    where = f"in the doorway between {' and '.join(view['doorway'])}" if view["doorway"] else f"in {view['room']}"
    lines = [f"Step {view['step']}/{view['max_steps']}. You are {agent} ({role}), at {fmt_cell(view['cell'])} {where}."]
    if view["busy"]:
        lines.append(f"Busy: {view['busy']}.")
    here = [f"{v['victim']} {v['status']} {fmt_cell(v['cell'])}" for v in view["victims_here"]]
    mates = ", ".join(view["teammates_here"])
    lines.append(
        f"In {view['room']}: " + (f"victims {'; '.join(here)}" if here else "no victims") + (f"; teammates {mates}" if mates else "") + "."
    )
    exits = [
        f"{e['direction']} {fmt_cell(e['cell'])} to {e['to']}{'' if e['visited'] else ' (unvisited)'}{' RUBBLE' if e['rubble'] else ''}"
        for e in view["exits"]
    ]
    lines.append("Doorways: " + ("; ".join(exits) if exits else "none") + ".")
    if view["carrying"]:
        lines.append(f"Carrying victim {view['carrying']['victim']} ({view['carrying']['kind']}).")
    if view["route"]:
        r = view["route"]
        lines.append(f"Route to {r['to']}: {' > '.join(r['via'])} ({r['cells']} cells).")
    if view["rooms"]:
        visited = set(view["visited"])
        lines.append("Rooms (cells away, * visited): " + ", ".join(f"{n}{'*' if n in visited else ''} {c}" for n, c in view["rooms"].items()) + ".")
    if view["known_victims"]:
        lines.append(
            "Victims elsewhere: " + "; ".join(f"{v['victim']} {v['status']} {v['room']} {fmt_cell(v['cell'])}" for v in view["known_victims"]) + "."
        )
    if view["known_rubble"]:
        lines.append("Rubble elsewhere: " + "; ".join(f"{'-'.join(r['rooms'])} {fmt_cell(r['cell'])}" for r in view["known_rubble"]) + ".")
    s = view["score"]
    lines.append(f"Team: {s['rescued']}/{s['victims']} rescued ({s['stable']} stable, {s['critical']} critical), {s['points']} points.")
    messages = ["Messages: " + " | ".join(view["new_messages"])] if view["new_messages"] else []
    return "\n".join(lines + footer(view, before_last_action=messages))


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
