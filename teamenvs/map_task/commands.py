"""Map Task command language: `say`, the follower's `draw`/`erase`/`undo`/`reset`, `wait`; paths of grid
points (`PathArg`), and the patterns that read points, arrows, a follower's 'done' and a guide's grid
coordinates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from teamenvs.core.commands import Arg, ArgError, Command, CommandSet
from teamenvs.core.messaging import SAY
from teamenvs.map_task.scoring import Cell

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


def says_done(message: str) -> bool:
    """Whether a message is the follower's 'done' (letters only, any case or punctuation)."""
    return _NON_LETTER.sub("", message.lower()) == "done"


def refers_to_coordinates(message: str) -> bool:
    """Whether a message refers to grid coordinates (rows, columns, numbered cells, x/y values, point pairs)."""
    return COORDINATES.search(message) is not None


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
