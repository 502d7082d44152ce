"""Search-and-rescue metrics (VIRT-LAB 4.2.3 and Figure 9), pure functions over an episode log.

Team: victims rescued (total and per type), points, steps to completion (or the step the
episode stopped at), action events (accepted actions other than messages and `wait`, by
type and per agent; a `go to` is one event however long the walk), communication events
(conversations, see `conversations`), messages sent, coverage (share of rooms and of floor
cells anyone visited).
Per agent: cells moved, messages sent, conversations started, rooms visited, victims located
first, victims delivered, and steps spent busy (carrying out an action, or carrying on with one
after a message interrupted it), communicating, or idle (waiting, or an action that was rejected
or missing). Under `round_robin` scheduling an agent's action advances only in its turn, so a step
that is another agent's turn is idle (it waits for its turn).

VIRT-LAB counts a communication event per conversation, "including both dyadic and multi-agent
conversations" (4.2.3), a multi-turn exchange among the agents its initiator names (3.3.2), not
per message. Here a conversation is a run of messages among the same participants (a `say`: the
team, or under `same_room` communication the sender and the teammates in its room; a `tell`: its
sender and recipient) in which each message follows the previous one by at most `CONVERSATION_GAP`
steps; several conversations among different participants may run at once. A message nobody hears (a `say`
under `same_room` with no teammate in the sender's room) is a message sent, but no communication event: VIRT-LAB
counts "communication exchanges between agents".
"""

from __future__ import annotations

from typing import Any, Sequence

from teamenvs.core.metrics import header, invalid_action_rate, SHARE
from teamenvs.core.recorder import step_records
from teamenvs.search_rescue.rules import turn

# Which way each metric is better, for benchmark reports ("max" or "min"); unlisted metrics are descriptive.
METRIC_GOALS: dict[str, str] = {
    **{k: "max" for k in ("victims_rescued", "rescued_stable", "rescued_critical", "points", "completed", "coverage_rooms", "coverage_cells")},
    "steps": "min", "invalid_action_rate": "min",
}

# The least and most each bounded metric can be in any episode (shares, rates, yes/no), for figures.
METRIC_BOUNDS: dict[str, tuple[float, float]] = dict.fromkeys((
    "completed", "coverage_rooms", "coverage_cells", "invalid_action_rate",
), SHARE)


# The most steps between two messages of one conversation. A reply comes one step after the message
# it answers at the earliest (messages are read the step after they are sent), and an agent in the
# middle of a stabilization (5 steps, the longest action besides a walk) still answers within 5.
CONVERSATION_GAP = 5

ACTIONS = ("move", "go to", "go to victim", "pick up victim", "drop victim", "stabilize victim", "clear rubble")
MESSAGES = ("say", "tell")


def _reset(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    for r in records:
        if r.get("type") == "reset":
            return r
    raise ValueError("episode log has no reset line")


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def participants(message: dict[str, Any], team: Sequence[str] = (), room: dict[str, str] | None = None) -> tuple[str, ...]:
    """Who takes part in a message: a `tell`'s sender and recipient; a `say`'s team, written ("team",).
    Under `same_room` communication (`room`: each agent's room when the message was sent) a `say`
    reaches only the sender's roommates (as the env's `_recipients` decides): the sender and those, or
    ("team",) when that is everyone."""
    if message.get("to") is not None:
        return tuple(sorted((message["sender"], message["to"])))
    if room is None:
        return ("team",)
    here = tuple(sorted(a for a in team if room[a] == room[message["sender"]]))
    return ("team",) if len(here) == len(team) else here


def room_cells(rooms: Sequence[dict[str, Any]]) -> dict[tuple[int, int], str]:
    """Floor cell -> the name of its room (doorways lie in walls: no room)."""
    return {(x, y): r["name"] for r in rooms for x in range(r["x0"], r["x1"] + 1) for y in range(r["y0"], r["y1"] + 1)}


def has_turn(team: Sequence[str], scheduling: str, agent: str, step: int) -> bool:
    """Whether `agent` could act in the step logged as `step` (always, but under `round_robin`). The env
    decides whose turn it is before the step, while its step count is still `step - 1`."""
    return scheduling != "round_robin" or agent == turn(team, step - 1)


def conversations(messages: Sequence[dict[str, Any]], gap: int = CONVERSATION_GAP) -> list[dict[str, Any]]:
    """Group message events (in order, each with `step`, `sender` and `to`, and `participants` where the
    communication condition narrows who hears a `say`; see `participants`) into conversations: a message
    joins the open conversation of its participants if the last message of it is at most `gap` steps
    before; else it starts one. Each conversation: participants, first and last step, initiator, messages."""
    open_: dict[tuple[str, ...], dict[str, Any]] = {}
    out: list[dict[str, Any]] = []
    for m in messages:
        who = m.get("participants") or participants(m)
        talk = open_.get(who)
        if talk is None or m["step"] - talk["last"] > gap:
            talk = {"participants": who, "first": m["step"], "last": m["step"], "initiator": m["sender"], "messages": 0}
            open_[who] = talk
            out.append(talk)
        talk["last"] = m["step"]
        talk["messages"] += 1
    return out


def search_rescue_metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    head = header(records)
    agents = list(head["agents"])
    world = _reset(records)["world"]
    steps = list(step_records(records))
    scheduling = head["config"].get("scheduling", "events")
    rooms = {r["name"]: r for r in world["rooms"]}
    # Under `same_room` a `say` reaches the sender's roommates: follow each agent's room as the rules do
    # (everyone starts in the Hospital; a step onto a doorway keeps the room it came from).
    same_room = head["config"].get("communication") == "same_room"
    room_at = room_cells(world["rooms"])
    room = {a: world["hospital"] for a in agents}
    floor = sum((r["x1"] - r["x0"] + 1) * (r["y1"] - r["y0"] + 1) for r in rooms.values())

    visited_rooms = {a: {world["hospital"]} for a in agents}
    cells = {a: {tuple(world["start"][a])} for a in agents}
    moved = {a: 0 for a in agents}
    located = {a: 0 for a in agents}
    delivered = {a: 0 for a in agents}
    rescued = {"stable": 0, "critical": 0}
    points = 0
    counts = {a: {c: 0 for c in (*ACTIONS, "wait")} for a in agents}
    time = {a: {"busy": 0, "communicating": 0, "idle": 0} for a in agents}

    messages: list[dict[str, Any]] = []
    for step in steps:
        events = step.get("events", ())
        # messages go out at the start of a step, before anyone moves in it (`_send`, then `_apply`)
        for m in events:
            if m.get("type") == "message":
                messages.append({**m, "step": step["step"], "participants": participants(m, agents, room if same_room else None)})
        for e in events:
            kind = e.get("type")
            if kind == "moved":
                moved[e["agent"]] += 1
                cells[e["agent"]].add(tuple(e["cell"]))
                room[e["agent"]] = room_at.get(tuple(e["cell"]), room[e["agent"]])
            elif kind == "entered":
                visited_rooms[e["agent"]].add(e["room"])
            elif kind == "found":
                located[e["agent"]] += len(e["victims"])
            elif kind == "rescued":
                delivered[e["agent"]] += 1
                rescued[e["victim_kind"]] += 1
                points += e["points"]
        for agent, entry in step["agents"].items():
            action = entry.get("action") or {}
            if action.get("ignored"):  # an action under way; but under `round_robin` another's turn: it waits, nothing advances
                time[agent]["busy" if has_turn(agents, scheduling, agent, step["step"]) else "idle"] += 1
            elif action.get("ok") and action["command"] in ACTIONS:
                time[agent]["busy"] += 1
                counts[agent][action["command"]] += 1
            elif action.get("ok") and action["command"] == "continue":
                time[agent]["busy"] += 1
            elif action.get("ok") and action["command"] in MESSAGES:
                time[agent]["communicating"] += 1
            else:
                time[agent]["idle"] += 1
                if action.get("ok") and action["command"] == "wait":
                    counts[agent]["wait"] += 1

    floor_cells = {c for a in agents for c in cells[a] if c in room_at}
    all_rooms = set().union(*visited_rooms.values())
    sent = {a: 0 for a in agents}
    for m in messages:
        sent[m["sender"]] += 1
    # a `say` no teammate hears (under `same_room`, alone in a room) is sent, but is no exchange between agents
    talks = conversations([m for m in messages if len(m["participants"]) > 1 or (m["participants"] == ("team",) and len(agents) > 1)])
    started = {a: 0 for a in agents}
    for talk in talks:
        started[talk["initiator"]] += 1
    events_per_agent = {a: sum(v for k, v in counts[a].items() if k != "wait") for a in agents}
    total_rescued = rescued["stable"] + rescued["critical"]
    total_events = sum(events_per_agent.values())
    return {
        "victims_rescued": total_rescued,
        "victims_total": len(world["victims"]),
        "rescued_stable": rescued["stable"],
        "rescued_critical": rescued["critical"],
        "points": points,
        "completed": total_rescued == len(world["victims"]),
        "steps": steps[-1]["step"] if steps else 0,
        "action_events": total_events,
        "action_events_per_agent": total_events / len(agents),
        "action_events_by_type": {c: sum(counts[a][c] for a in agents) for c in (*ACTIONS, "wait")},
        "communication_events": len(talks),
        "messages_sent": len(messages),
        "coverage_rooms": _share(len(all_rooms), len(rooms)),
        "coverage_cells": _share(len(floor_cells), floor),
        "invalid_action_rate": invalid_action_rate(records),
        "per_agent": {
            a: {
                "steps_moved": moved[a],
                "messages_sent": sent[a],
                "conversations_started": started[a],
                "rooms_visited": len(visited_rooms[a]),
                "victims_located_first": located[a],
                "victims_delivered": delivered[a],
                "action_events": events_per_agent[a],
                "actions_by_type": counts[a],
                "busy_steps": time[a]["busy"],
                "communicating_steps": time[a]["communicating"],
                "idle_steps": time[a]["idle"],
            }
            for a in agents
        },
    }
