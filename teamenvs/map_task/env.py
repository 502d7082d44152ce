"""`map_task_v0`: the HCRC Map Task as CollabSim plays it (section 3.4, App. B.4), as a text ParallelEnv.

The `guide` holds a map with landmarks, a start, a finish and the target route; the
`follower` holds a map of the same place that differs in some landmarks, shows only the
start, and carries the drawing. They talk (`say`, delivered next step) until the follower
has drawn the route or 120 steps have passed; the follower may `say done` to end early.
Only the follower draws: `draw`, `erase` (straight horizontal or vertical segments, chained
with `->`), `undo`, `reset`. The guide never sees the drawing unless `canvas_visibility`
is on, and under the default `allow_coordinates=False` a guide message that refers to grid
coordinates is refused: the task is grounding through landmarks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from teamenvs.core.commands import Action, Arg, ArgError, Command, CommandSet, Situation
from teamenvs.core.env import TeamEnv, event
from teamenvs.core.messaging import SAY
from teamenvs.map_task.library import load_library_pair
from teamenvs.map_task.maps import PRESETS, Landmark, MapPair, MapTaskConfig, generate_map_pair
from teamenvs.map_task.metrics import METRIC_GOALS, map_task_metrics
from teamenvs.map_task.scoring import Cell, Edge, completed, drawn_cells, edge, route_accuracy

GUIDE, FOLLOWER = "guide", "follower"
# No two optional whitespace runs side by side ("\s*[,;\s]\s*" is "\s*[,;]\s*|\s+"), and no
# search restarting inside a whitespace run: linear time on any message or path.
_POINT = re.compile(r"(?<!\s)\s*(?:\(\s*)?(-?\d{1,4})(?:\s*[,;]\s*|\s+)(-?\d{1,4})\s*\)?")
_NON_LETTER = re.compile(r"[^a-z]")
_ARROW = re.compile(r"(?<!\s)\s*(?:->|→|=>|-|to\b|then\b)\s*", re.IGNORECASE)
COORDINATES = re.compile(
    r"\(\s*\d+(?:\s*[,;]\s*|\s+)\d+\s*\)|\b\d+\s*[,;]\s*\d+\b|\b\d+\s+\d+\s*(?:->|→)|(?:->|→)\s*\d+\s+\d+\b"
    r"|\b[xy]\s*(?:[=:]\s*)?\d+\b"
    r"|\b(?:rows?|columns?|cols?\.?|cells?|squares?|coordinates?)\s*(?:(?:no\.?|number|#)\s*)?\d+\b"
    r"|\b\d+(?:st|nd|rd|th)\s+(?:row|column|col)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class PathArg(Arg):
    """A chain of grid points `x,y -> x,y [-> x,y ...]` (parentheses optional), inside the map."""

    def parse(self, rest, situation, command):
        xs = situation.limits.get("x", (0, 59))
        ys = situation.limits.get("y", (0, 59))
        points: list[Cell] = []
        text = rest
        while True:
            m = _POINT.match(text)
            if m is None:
                break
            x, y = int(m.group(1)), int(m.group(2))
            if not (xs[0] <= x <= xs[1] and ys[0] <= y <= ys[1]):
                raise ArgError(f"point ({x},{y}) is off the map: x runs {xs[0]}-{xs[1]} (columns), y runs {ys[0]}-{ys[1]} (rows)")
            points.append((x, y))
            text = text[m.end():]
            arrow = _ARROW.match(text)
            if arrow is None or not _POINT.match(text[arrow.end():]):
                break
            text = text[arrow.end():]
        if len(points) < 2:
            raise ArgError(f"'{command.name}' needs at least two points joined by '->', e.g. '{command.example_text(situation)}'")
        return tuple(points), text

    def format(self, value) -> str:
        return " -> ".join(f"{x},{y}" for x, y in value)

    def usage(self, situation=None):
        return "<x,y -> x,y [-> x,y ...]>"

    def example(self, situation=None):
        return "2,3 -> 6,3 -> 6,8"

    def sample(self, rng, situation):
        xs = situation.limits.get("x", (0, 19))
        ys = situation.limits.get("y", (0, 19))
        x, y = int(rng.integers(xs[0], xs[1] + 1)), int(rng.integers(ys[0], ys[1] + 1))
        if rng.random() < 0.5:
            return f"{x},{y} -> {int(rng.integers(xs[0], xs[1] + 1))},{y}"
        return f"{x},{y} -> {x},{int(rng.integers(ys[0], ys[1] + 1))}"


DRAWING = ("draw", "erase", "undo", "reset")
COMMANDS = CommandSet(
    [
        Command("say", SAY.args, "send a message to your partner (it arrives next step); the follower ends the task with 'say done'",
                ("say go east until you are just south of the old mill",)),
        Command("draw", (PathArg("path"),), "follower: draw straight horizontal or vertical segments through the points", ("draw 2,3 -> 6,3 -> 6,8",)),
        Command("erase", (PathArg("path"),), "follower: erase the drawn segments along the points", ("erase 6,3 -> 6,8",)),
        Command("undo", (), "follower: undo your last draw, erase or reset", ("undo",)),
        Command("reset", (), "follower: clear the whole drawing", ("reset",)),
        Command("wait", (), "do nothing this step", ("wait",)),
    ]
)


def _segment(a: Cell, b: Cell) -> list[Cell]:
    """The cells of a straight horizontal or vertical segment from a to b, both included."""
    (x0, y0), (x1, y1) = a, b
    if x0 == x1:
        step = 1 if y1 >= y0 else -1
        return [(x0, y) for y in range(y0, y1 + step, step)]
    step = 1 if x1 >= x0 else -1
    return [(x, y0) for x in range(x0, x1 + step, step)]


_LETTERS = "abcdeghijklmnpqrtuvwxyz"  # no s, f or o: S, F and o mark the start, finish and drawing


def letters(landmarks: tuple[Landmark, ...]) -> dict[str, str]:
    """A map letter per landmark name (each map its own): upper case for obstacles, lower case otherwise."""
    out = {}
    for i, lm in enumerate(landmarks):
        ch = _LETTERS[i] if i < len(_LETTERS) else str(i - len(_LETTERS))
        out[lm.name] = ch.upper() if lm.blocked else ch
    return out


def render_grid(width: int, height: int, layers: list[tuple[set[Cell] | frozenset[Cell], str]], labels: bool) -> list[str]:
    """Text rows of the map: later layers draw over earlier ones; `labels` adds column and row numbers."""
    rows = [["."] * width for _ in range(height)]
    for cells, ch in layers:
        for x, y in cells:
            rows[y][x] = ch
    lines = ["".join(r) for r in rows]
    if not labels:
        return lines
    tens = "   " + "".join(str(x // 10) if x >= 10 else " " for x in range(width))
    units = "   " + "".join(str(x % 10) for x in range(width))
    return [tens, units, *(f"{y:>2} {line}" for y, line in enumerate(lines))]


class MapTaskEnv(TeamEnv):
    """Map Task: the guide describes its route, the follower draws it on a map that differs."""

    metadata = {"render_modes": ["ansi"], "name": "map_task_v0", "is_parallelizable": True}
    env_id = "map_task_v0"
    commands = COMMANDS
    config_class = MapTaskConfig
    presets = PRESETS
    episode_metrics = staticmethod(map_task_metrics)
    metric_goals = METRIC_GOALS
    config: MapTaskConfig

    def _agent_ids(self) -> list[str]:
        return [GUIDE, FOLLOWER]

    # ------------------------------------------------------------------ episode state
    def _setup(self) -> None:
        cfg = self.config
        if cfg.library_map is not None:
            self.pair: MapPair = load_library_pair(cfg.library_map, cfg.mismatch)
        else:
            self.pair = generate_map_pair(cfg, self._rng)
        self.edges: frozenset[Edge] = frozenset()
        self.history: list[frozenset[Edge]] = []
        self.accuracy = 0.0
        self.done = False
        self._grid_cache: dict[tuple, tuple[str, ...]] = {}

    def _reset_record(self) -> dict[str, Any]:
        return {"maps": self.pair.to_json()}

    def _is_over(self) -> tuple[bool, bool]:
        return self.done, self.step_count >= self.config.max_steps

    # ------------------------------------------------------------------ what an agent may do
    def _situation_key(self, agent: str):
        return agent, bool(self.history), bool(self.edges)

    def _situation(self, agent: str) -> Situation:
        p = self.pair
        limits = {"x": (0, p.width - 1), "y": (0, p.height - 1)}
        if agent == GUIDE:
            why = "only the follower draws; as the guide you describe the route with 'say'"
            return Situation({c: why for c in DRAWING}, limits)
        denied = {}
        if not self.history:
            denied["undo"] = "there is nothing to undo yet"
        if not self.edges:
            denied["erase"] = "nothing is drawn yet"
            denied["reset"] = "nothing is drawn yet"
        return Situation(denied, limits)

    def _send_refusal(self, sender: str, to: str | None, text: str) -> str | None:
        if sender == GUIDE and not self.config.allow_coordinates and COORDINATES.search(text):
            return (
                "in this condition messages may not refer to grid coordinates (rows, columns, cell or coordinate "
                "numbers); describe the route with the landmarks and directions (north, south, east, west)"
            )
        return None

    # ------------------------------------------------------------------ rules
    def _apply(self, actions: Mapping[str, Action | None]) -> dict[str, float]:
        action = actions.get(FOLLOWER)
        if action is not None:
            if action.command == "say" and _NON_LETTER.sub("", action.args["message"].lower()) == "done":
                self.done = True
                self.global_events.append(event("done", "the follower said it is done"))
            elif action.command in DRAWING:
                self._edit(action)
        before = self.accuracy
        self.accuracy = route_accuracy(self.pair.route, drawn_cells(self.edges))
        gain = self.accuracy - before
        return {GUIDE: gain, FOLLOWER: gain}

    def _edit(self, action: Action) -> None:
        if action.command == "undo":
            new = self.history.pop()
        elif action.command == "reset":
            new = frozenset()
        else:
            segments = self._segments(action.args["path"], action.command)
            if segments is None:
                return
            if action.command == "draw":
                added = frozenset(segments) - self.edges
                if not added:
                    self.reject(FOLLOWER, "that is already drawn")
                    return
                new = self.edges | added
            else:
                removed = frozenset(segments) & self.edges
                if not removed:
                    self.reject(FOLLOWER, "nothing is drawn along those points")
                    return
                new = self.edges - removed
        if action.command != "undo":
            self.history.append(self.edges)
        self.edges = new
        segments = sorted(sorted(e) for e in new)
        accuracy = route_accuracy(self.pair.route, drawn_cells(new))
        self.global_events.append(
            event("drawing", "", action=action.command, segments=[[list(a), list(b)] for a, b in segments], accuracy=accuracy)
        )

    def _segments(self, points: tuple[Cell, ...], verb: str) -> list[Edge] | None:
        """Unit segments along the points, or None after rejecting a diagonal, empty or blocked segment."""
        edges: list[Edge] = []
        blocked = self.pair.obstacles
        for a, b in zip(points, points[1:]):
            if a == b:
                self.reject(FOLLOWER, f"the segment ({a[0]},{a[1]}) -> ({b[0]},{b[1]}) has no length; give two different points")
                return None
            if a[0] != b[0] and a[1] != b[1]:
                corner = (b[0], a[1])
                self.reject(
                    FOLLOWER,
                    f"the segment ({a[0]},{a[1]}) -> ({b[0]},{b[1]}) is diagonal; {verb} only horizontal or vertical "
                    f"segments. For a diagonal, use a stair-step path, e.g. '{verb} {a[0]},{a[1]} -> {corner[0]},{corner[1]} -> {b[0]},{b[1]}'",
                )
                return None
            cells = _segment(a, b)
            if verb == "draw":
                hit = next((c for c in cells if c in blocked), None)
                if hit is not None:
                    name = next(lm.name for lm in self.pair.guide if lm.blocked and hit in lm.cells)
                    self.reject(FOLLOWER, f"the route cannot cross the {name}: ({hit[0]},{hit[1]}) is blocked; go around it")
                    return None
            edges.extend(edge(c, d) for c, d in zip(cells, cells[1:]))
        return edges

    # ------------------------------------------------------------------ views and text
    def _landmarks(self, agent: str) -> tuple[Landmark, ...]:
        return self.pair.guide if agent == GUIDE else self.pair.follower

    def _grid(self, agent: str, show_drawing: bool) -> tuple[str, ...]:
        p = self.pair
        key = (agent, self.edges if show_drawing else None)
        cached = self._grid_cache.get(key)
        if cached is None:
            marks = letters(self._landmarks(agent))
            layers: list[tuple[Any, str]] = [(lm.cells, marks[lm.name]) for lm in self._landmarks(agent)]
            if agent == GUIDE:
                layers.append((set(p.route), "*"))
            drawn = drawn_cells(self.edges) if show_drawing else set()
            if drawn:
                layers.append((drawn, "o"))
                if agent == GUIDE:
                    layers.append((drawn & set(p.route), "@"))
            layers.append(({p.start}, "S"))
            if agent == GUIDE:
                layers.append(({p.finish}, "F"))
            cached = tuple(render_grid(p.width, p.height, layers, labels=agent == FOLLOWER))
            if len(self._grid_cache) > 256:
                self._grid_cache.clear()
            self._grid_cache[key] = cached
        return cached

    def _view(self, agent: str) -> dict[str, Any]:
        p, cfg = self.pair, self.config
        sees_drawing = agent == FOLLOWER or cfg.canvas_visibility
        marks = letters(self._landmarks(agent))
        view: dict[str, Any] = {
            "agent": agent,
            "role": agent,
            "step": self.step_count,
            "max_steps": cfg.max_steps,
            "width": p.width,
            "height": p.height,
            "grid": self._grid(agent, sees_drawing),
            "landmarks": tuple(
                {"name": lm.name, "letter": marks[lm.name], "blocked": lm.blocked, "cells": (lm.x0, lm.y0, lm.x1, lm.y1)}
                for lm in self._landmarks(agent)
            ),
            "start": p.start,
            "max_words": cfg.max_words,
            "allow_coordinates": cfg.allow_coordinates,
            "canvas_visibility": cfg.canvas_visibility,
            **self.messages_view(agent),
            "last_action": self.last_action_line(agent),
            "events": tuple(e["text"] for e in self._events[agent] if e["text"]),
            "valid_now": "" if self.done or self.step_count >= cfg.max_steps else self.valid_now(agent),
        }
        if agent == GUIDE:
            view["finish"] = p.finish
            view["route"] = p.route
        if sees_drawing:
            view["drawing"] = tuple(sorted(tuple(sorted(e)) for e in self.edges))
            view["can_undo"] = bool(self.history)
        return view

    def _render_view(self, view: Mapping[str, Any]) -> str:
        agent = view["agent"]
        head = f"Map Task, step {view['step']}/{view['max_steps']}. You are the {agent}."
        if agent == GUIDE:
            legend = "S start, F finish, * your route"
            if view["canvas_visibility"]:
                legend += ", o the follower's drawing off your route, @ drawing on your route"
        else:
            legend = "S start, o your drawing; x = column (top numbers), y = row (left numbers)"
        marks = "; ".join(f"{lm['letter']} {lm['name']}{' (blocked)' if lm['blocked'] else ''}" for lm in view["landmarks"])
        lines = [head, "Your map:", *view["grid"], f"Key: {legend}; {marks}."]
        if view["events"]:
            lines.extend(view["events"])
        if view["new_messages"]:
            lines.append("New messages: " + " | ".join(view["new_messages"]))
        if view["recent_messages"]:
            lines.append("Conversation so far: " + " | ".join(view["recent_messages"]))
        lines.append(view["last_action"])
        if view["valid_now"]:
            lines.append("Now: " + view["valid_now"])
        return "\n".join(lines)

    def _extra_info(self, agent: str) -> dict[str, Any]:
        return {"route_accuracy": self.accuracy}

    # ------------------------------------------------------------------ global views
    def _state(self) -> dict[str, Any]:
        p = self.pair
        return {
            "step": self.step_count,
            "maps": p.to_json(),
            "drawing": sorted(sorted(list(c) for c in e) for e in self.edges),
            "route_accuracy": self.accuracy,
            "completed": completed(self.edges, p.start, p.finish),
            "done": self.done,
        }

    def frame(self) -> dict[str, Any]:
        """JSON-ready drawing data of the true world now (for replay viewers): both maps, the route, the drawing."""
        return {"kind": "map_task", **self._state(), "max_steps": self.config.max_steps}

    def _render_frame(self) -> str:
        p = self.pair
        marks = letters(p.guide)
        drawn = drawn_cells(self.edges)
        layers = [(lm.cells, marks[lm.name]) for lm in p.guide]
        layers += [(set(p.route), "*"), (drawn, "o"), (drawn & set(p.route), "@"), ({p.start}, "S"), ({p.finish}, "F")]
        head = f"Map Task step {self.step_count}/{self.config.max_steps} | route accuracy {self.accuracy:.2f}"
        diffs = "; ".join(
            f"{d.kind}: {d.guide.name if d.guide else '-'} / {d.follower.name if d.follower else '-'}" for d in p.discrepancies
        )
        return "\n".join([head, *render_grid(p.width, p.height, layers, labels=True), f"Discrepancies: {diffs or 'none'}"])

    def _role_briefing(self, agent: str) -> str:
        cfg = self.config
        common = (
            "Map Task. Two players, a guide and a follower, hold maps of the same place. Only the guide's map shows "
            "the route, from the start S to the finish F. The maps differ in some landmarks (a landmark may be on one "
            "map only, have another name, or be somewhere else), and neither player sees the other's map. Blocked "
            "landmarks (upper-case letters) cannot be crossed. Messages arrive the next step"
            + (f" and are cut to {cfg.max_words} words" if cfg.max_words else "")
            + f". The task ends after {cfg.max_steps} steps or when the follower says 'done'. "
            "Your score is shared: how closely the follower's drawing matches the route (cells in common)."
        )
        if agent == GUIDE:
            see = "You also see the follower's drawing on your map." if cfg.canvas_visibility else "You cannot see the follower's drawing."
            coords = (
                "" if cfg.allow_coordinates
                else " Do not use grid coordinates (rows, columns, numbered cells): messages that do are refused. "
                "Describe the route with landmarks and directions (north is up)."
            )
            return f"{common} You are the guide: describe the route so that the follower can draw it. {see}{coords}"
        return (
            f"{common} You are the follower: your map shows the landmarks and the start but not the route or the "
            "finish. Draw the route the guide describes with 'draw x,y -> x,y' (x is the column, y the row; north is "
            "up): only horizontal or vertical segments, chained with '->'; for a diagonal, draw a stair-step. Ask "
            "when an instruction is unclear or names a landmark your map lacks."
        )
