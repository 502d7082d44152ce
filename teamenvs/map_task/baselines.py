"""Scripted Map Task pair: a guide that describes its route run by run from landmarks, a follower that draws it.

Guide: splits the route into straight runs and describes one run at a time, then waits for
the follower's reply. A run is described by a landmark when one pins its end down under the
follower's reading rule ("go east until you are just south of the old mill": walk east
from where you are to the first cell just south of the old mill); otherwise by a count
("go east 4 steps"). On "I have no old mill" it re-describes the run from a landmark the
follower has not said it lacks; on "say again" it falls back to a count. Under
`canvas_visibility` it checks each drawn run (its segments drawn and the pen resting at its end, not past it)
and, when it is wrong, says "undo that" and re-describes the run by count, at most `MAX_REPAIRS` times a
run before going on with the next. After the last run: "that is the finish". Under a word
limit it uses the short forms ("east till south of old mill", "east 4 steps").

Follower: reads the guide's last message with that grammar, finds the landmark on its own
map, draws from its pen to the stop and answers "ok" (or, when the draw was refused, "say again" with its
pen where it was); says "I have no <name>" when its map lacks the landmark, "say again" when it cannot
read the message or no cell fits, undoes on "undo that", and says "done" after "that is the finish".
It reads only its view.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from teamenvs.core.env import LAST_ACTION_REJECTED
from teamenvs.core.policy import ScriptedPolicy
from teamenvs.map_task.commands import trail_of
from teamenvs.map_task.view import ALREADY_DRAWN

STEP = {"north": (0, -1), "south": (0, 1), "east": (1, 0), "west": (-1, 0)}
OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east"}
FINISH = "that is the finish"
_LANDMARK = re.compile(r"^(?:go )?(north|south|east|west) (?:until you are just|till) (north|south|east|west) of (?:the )?(.+?)\.?$")
_COUNT = re.compile(r"^(?:go )?(north|south|east|west) (\d+) steps?\.?$")
_MISSING = re.compile(r"^i have no (.+?)\.?$")
MAX_REPAIRS = 2  # "undo that" and a count, a run: then the guide goes on (the same repair again had looped to the step cap)

Cell = tuple[int, int]


def runs(route: tuple[Cell, ...]) -> list[tuple[str, Cell, Cell]]:
    """The route as straight runs: (direction, first cell, last cell)."""
    out: list[tuple[str, Cell, Cell]] = []
    for a, b in zip(route, route[1:]):
        way = next(d for d, (dx, dy) in STEP.items() if (a[0] + dx, a[1] + dy) == b)
        if out and out[-1][0] == way:
            out[-1] = (way, out[-1][1], b)
        else:
            out.append((way, a, b))
    return out


def stop_cell(pen: Cell, way: str, side: str, cells: frozenset[Cell], width: int, height: int) -> Cell | None:
    """The follower's reading rule: the first cell from `pen` going `way` that lies just `side` of the landmark."""
    dx, dy = STEP[way]
    bx, by = STEP[OPPOSITE[side]]
    x, y = pen
    while True:
        x, y = x + dx, y + dy
        if not (0 <= x < width and 0 <= y < height):
            return None
        if (x + bx, y + by) in cells:
            return (x, y)


def _line(a: Cell, b: Cell) -> list[Cell]:
    """Cells of a straight horizontal or vertical line from a to b."""
    if a[0] == b[0]:
        step = 1 if b[1] >= a[1] else -1
        return [(a[0], y) for y in range(a[1], b[1] + step, step)]
    step = 1 if b[0] >= a[0] else -1
    return [(x, a[1]) for x in range(a[0], b[0] + step, step)]


def landmark_cells(lm: Mapping[str, Any]) -> frozenset[Cell]:
    x0, y0, x1, y1 = lm["cells"]
    return frozenset((x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1))


def _latest_from(view: Mapping[str, Any], sender: str) -> str | None:
    lines = [m.split(": ", 1)[1] for m in view["new_messages"] if m.startswith(f"{sender}: ")]
    return lines[-1].strip().lower() if lines else None


class MapTaskPair(ScriptedPolicy):
    """Plays whichever role its view shows: the describing guide or the drawing follower."""

    name = "pair"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._new_episode()

    def reset(self, agent_id: str, briefing: str) -> None:
        super().reset(agent_id, briefing)
        self._new_episode()  # an object reused for another episode starts it afresh

    def _new_episode(self) -> None:
        # guide
        self.run = 0
        self.lacking: set[str] = set()
        self.by_count = False
        self.waiting = 0
        self.finished = False
        self.pending: str | None = None
        self.repairs = 0
        # follower
        self.pen: Cell | None = None
        self.pens: list[Cell] = []
        self.reply: str | None = None

    def decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        return self._guide(view) if view["role"] == "guide" else self._follower(view)

    # ------------------------------------------------------------------ guide
    def _describe(self, view: Mapping[str, Any], index: int) -> str:
        way, first, last = runs(view["route"])[index]
        short = view["max_words"] is not None and view["max_words"] < 9
        if not self.by_count:
            options = []
            for lm in view["landmarks"]:
                if lm["name"] in self.lacking:
                    continue
                cells = landmark_cells(lm)
                for side in STEP:
                    if stop_cell(first, way, side, cells, view["width"], view["height"]) == last:
                        options.append((min(abs(last[0] - x) + abs(last[1] - y) for x, y in cells), lm["name"], side))
            if options:
                _, name, side = min(options)
                return f"{way} till {side} of {name}" if short else f"go {way} until you are just {side} of the {name}"
        n = abs(last[0] - first[0]) + abs(last[1] - first[1])
        return f"{way} {n} steps" if short else f"go {way} {n} steps"

    def _guide(self, view: Mapping[str, Any]) -> str:
        total = len(runs(view["route"]))
        if self.pending is not None:
            message, self.pending = self.pending, None
            self.waiting = 1
            return f"say {message}"
        if self.finished:
            return "wait"
        reply = _latest_from(view, "follower")
        if reply is not None:
            missing = _MISSING.match(reply)
            if missing:
                self.lacking.add(missing.group(1).removeprefix("the ").strip())
                return self._send(view)
            if reply.startswith("say again"):
                if self.by_count:  # lost even by count: go on with the next run
                    return self._next(view, total)
                self.by_count = True
                return self._send(view)
            if reply.startswith("ok"):
                if view["canvas_visibility"] and not self._drawn(view, self.run) and self.repairs < MAX_REPAIRS:
                    self.repairs += 1
                    self.by_count = True
                    self.pending = self._describe(view, self.run)
                    self.waiting = 1
                    return "say undo that"
                return self._next(view, total)
        if self.waiting:
            self.waiting += 1
            if self.waiting > 8:  # no answer: say it again
                return self._send(view)
            return "wait"
        return self._send(view)

    def _next(self, view: Mapping[str, Any], total: int) -> str:
        self.run += 1
        self.by_count = False
        self.repairs = 0
        if self.run >= total:
            self.finished = True
            return f"say {FINISH}"
        return self._send(view)

    def _send(self, view: Mapping[str, Any]) -> str:
        self.waiting = 1
        return f"say {self._describe(view, self.run)}"

    def _drawn(self, view: Mapping[str, Any], index: int) -> bool:
        """Whether run `index` is drawn and the follower's pen rests at its end: a drawing that runs past the end (the
        run's segments all there) leaves the next run to start from the wrong cell."""
        way, first, last = runs(view["route"])[index]
        dx, dy = STEP[way]
        if trail_of(tuple(view["start"]), view["drawing"])[-1] != last:
            return False
        drawn = {tuple(map(tuple, e)) for e in view["drawing"]}
        cell = first
        while cell != last:
            nxt = (cell[0] + dx, cell[1] + dy)
            if tuple(sorted((cell, nxt))) not in drawn:
                return False
            cell = nxt
        return True

    # ------------------------------------------------------------------ follower
    def _follower(self, view: Mapping[str, Any]) -> str:
        if self.pen is None:
            self.pen = tuple(view["start"])
        if self.reply is not None:
            reply, self.reply = self.reply, None
            # a refused draw leaves the pen where it was, unless the way was drawn already (the pen is at its end: found by
            # a review, where "say again?" had left the pair a run apart to the end)
            if view["last_action"].startswith(LAST_ACTION_REJECTED) and ALREADY_DRAWN not in view["last_action"]:
                self.pen = self.pens.pop()
                return "say say again?"
            return f"say {reply}"
        message = _latest_from(view, "guide")
        if message is None:
            return "wait"
        if message.startswith(FINISH):
            return "say done"
        if message.startswith("undo that"):
            if self.pens:
                self.pen = self.pens.pop()
            return "undo" if view.get("can_undo") else "wait"
        count = _COUNT.match(message)
        landmark = _LANDMARK.match(message)
        target: Cell | None = None
        if count:
            dx, dy = STEP[count.group(1)]
            n = int(count.group(2))
            # As far as the map allows (if I am off course, the edge may come first).
            x = min(max(self.pen[0] + dx * n, 0), view["width"] - 1)
            y = min(max(self.pen[1] + dy * n, 0), view["height"] - 1)
            target = (x, y)
        corner: Cell | None = None
        if landmark:
            way, side, name = landmark.groups()
            mine = next((lm for lm in view["landmarks"] if lm["name"] == name), None)
            if mine is None:
                return f"say I have no {name}"
            cells = landmark_cells(mine)
            target = stop_cell(self.pen, way, side, cells, view["width"], view["height"])
            if target is None:
                # Not on this line on my map: head for the landmark's side anyway, a stair-step there.
                target, corner = self._toward(view, way, side, cells)
        if target is None or not (0 <= target[0] < view["width"] and 0 <= target[1] < view["height"]) or target == self.pen:
            return "say say again?"
        start, self.pen = self.pen, target
        self.pens.append(start)
        self.reply = "ok"
        points = [start, *([corner] if corner not in (None, start, target) else []), target]
        return "draw " + " -> ".join(f"{x},{y}" for x, y in points)

    def _toward(self, view: Mapping[str, Any], way: str, side: str, cells: frozenset[Cell]) -> tuple[Cell | None, Cell | None]:
        """The nearest cell just `side` of the landmark, and the corner of an L-shaped way there (along `way` first)."""
        sx, sy = STEP[side]
        spots = [(x + sx, y + sy) for x, y in cells if (x + sx, y + sy) not in cells]
        spots = [c for c in spots if 0 <= c[0] < view["width"] and 0 <= c[1] < view["height"]]
        if not spots:
            return None, None
        pen = self.pen
        target = min(spots, key=lambda c: (abs(c[0] - pen[0]) + abs(c[1] - pen[1]), c))
        corners = [(target[0], pen[1]), (pen[0], target[1])]
        if way in ("north", "south"):
            corners.reverse()
        blocked = {c for lm in view["landmarks"] if lm["blocked"] for c in landmark_cells(lm)}
        clear = [c for c in corners if not (set(_line(pen, c)) | set(_line(c, target))) & blocked]
        return target, (clear or corners)[0]


BASELINES = {"pair": MapTaskPair}
DEFAULT = "pair"
