"""Map Task metrics (CollabSim Table 5), pure functions over an episode log.

- `route_accuracy`: F1 of drawn vs target cells at the end (see `scoring.py`);
  `deviation` (cells) and `completed` likewise.
- `route_progress`: the route reproduced, in route cells: route accuracy x the number of
  cells of the target route.
- `communication_efficiency`: `route_progress` per message sent by either player, with at
  least one message in the denominator. CollabSim names the measure ("route progress achieved
  per message exchanged") without its formula; every cell of its Table 5 fits efficiency ~=
  350 x accuracy / messages (3.5 x accuracy points per message: each cell's implied route
  length, efficiency x messages / accuracy, is 350 +- 3% within the rounding of the table; see
  `tests/map_task/test_map_task.py`), i.e. progress counted in cells of routes about 350 cells
  long. Here a route has its own length (median 49 cells on the default 20x20 map), so
  figures compare with CollabSim's per route cell, not as raw numbers.
- `collabsim_route_accuracy` and `collabsim_communication_efficiency`: the two as CollabSim's released code computes
  them and Table 5 reports them (`scoring.collabsim_route_accuracy`; the drawing's score-board score per message,
  `analysis/task_metrics.py`, None without messages): its efficiencies are accuracy x 351 / messages, 351 being its
  117-cell route's score (3 a cell), the "about 350" above. Compare these with Table 5's figures, per route cell.
- `revision_rate`: (erase + undo + reset) / all accepted drawing actions (0.0 with none).
- `messages` (total), `messages_per_role`, `words_per_role`, `drawing_actions`,
  `invalid_action_rate`, `steps`, `ended_by_follower`.
"""

from __future__ import annotations

from typing import Any, Sequence

from teamenvs.core.metrics import header, invalid_action_rate, message_events, RETURN, SHARE
from teamenvs.core.recorder import step_records
from teamenvs.map_task.scoring import (Cell, collabsim_route_accuracy, completed, deviation, drawn_cells, edge, route_accuracy,
                                       score_board_score)

# Which way each metric is better, for benchmark reports ("max" or "min"); unlisted metrics are descriptive.
METRIC_GOALS: dict[str, str] = {
    "route_accuracy": "max", "completed": "max", "communication_efficiency": "max", "collabsim_route_accuracy": "max",
    "collabsim_communication_efficiency": "max",
    "deviation": "min", "invalid_action_rate": "min",
}

# The least and most each bounded metric can be in any episode (shares, rates, yes/no), for figures.
METRIC_BOUNDS: dict[str, tuple[float, float]] = dict.fromkeys((
    "route_accuracy", "completed", "revision_rate", "invalid_action_rate",
), SHARE) | {RETURN: SHARE}  # each agent's return: the final route accuracy


REVISIONS = ("erase", "undo", "reset")


def route_progress(route: Sequence[Cell], accuracy: float) -> float:
    """The route reproduced, in cells: `accuracy` (0-1) of the route's distinct cells."""
    return accuracy * len(set(route))


def communication_efficiency(progress: float, messages: int) -> float:
    """Route cells reproduced per message (a silent pair counts one message)."""
    return progress / max(1, messages)


def map_task_metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The metrics above from one episode's log records."""
    head = header(records)
    maps = next(r for r in records if r.get("type") == "reset")["maps"]
    route = [tuple(c) for c in maps["route"]]
    start, finish = tuple(maps["start"]), tuple(maps["finish"])
    steps = list(step_records(records))
    edges: list = []
    drawing_actions = {c: 0 for c in ("draw", *REVISIONS)}
    ended = False
    for step in steps:
        for e in step.get("events", ()):
            if e.get("type") == "drawing":
                edges = [edge(tuple(a), tuple(b)) for a, b in e["segments"]]
            elif e.get("type") == "done":
                ended = True
        action = step["agents"].get("follower", {}).get("action") or {}
        if action.get("ok") and action.get("command") in drawing_actions:
            drawing_actions[action["command"]] += 1
    cells = drawn_cells(edges)
    accuracy = route_accuracy(route, cells)
    progress = route_progress(route, accuracy)
    messages = message_events(records)
    per_role = {a: 0 for a in head["agents"]}
    words = {a: 0 for a in head["agents"]}
    for m in messages:
        per_role[m["sender"]] += 1
        words[m["sender"]] += m["words"]
    total_drawing = sum(drawing_actions.values())
    return {
        "route_accuracy": accuracy,
        "deviation": deviation(route, cells, start),
        "completed": completed(edges, start, finish),
        "route_progress": progress,
        "communication_efficiency": communication_efficiency(progress, len(messages)),
        "collabsim_route_accuracy": collabsim_route_accuracy(route, cells),
        "collabsim_communication_efficiency": score_board_score(route, cells) / len(messages) if messages else None,
        "revision_rate": sum(drawing_actions[c] for c in REVISIONS) / total_drawing if total_drawing else 0.0,
        "messages": len(messages),
        "messages_per_role": per_role,
        "words_per_role": words,
        "drawing_actions": drawing_actions,
        "invalid_action_rate": invalid_action_rate(records),
        "steps": steps[-1]["step"] if steps else 0,
        "ended_by_follower": ended,
    }

