"""Map Task rules as pure state transitions: the follower's drawing (a set of unit segments) under
`draw`, `erase`, `undo` and `reset`, and what each map shows to whom. Refusals are data (`Refusal`);
their sentences are in `view.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence


from teamenvs.map_task.commands import refers_to_coordinates
from teamenvs.map_task.maps import Landmark, MapPair
from teamenvs.map_task.scoring import Cell, Edge, completed, edge

GUIDE, FOLLOWER = "guide", "follower"


@dataclass(frozen=True)
class Refusal:
    """Why a drawing command changes nothing: `no_length`, `diagonal` or `blocked` (segment a -> b,
    `cell` of the obstacle `landmark` it would cross), `already_drawn` or `nothing_there`."""

    reason: str
    a: Cell | None = None
    b: Cell | None = None
    cell: Cell | None = None
    landmark: str = ""


def landmarks_of(pair: MapPair, agent: str) -> tuple[Landmark, ...]:
    """The landmarks on `agent`'s own map."""
    return pair.guide if agent == GUIDE else pair.follower


def segment(a: Cell, b: Cell) -> list[Cell]:
    """The cells of a straight horizontal or vertical segment from a to b, both included."""
    (x0, y0), (x1, y1) = a, b
    if x0 == x1:
        step = 1 if y1 >= y0 else -1
        return [(x0, y) for y in range(y0, y1 + step, step)]
    step = 1 if x1 >= x0 else -1
    return [(x, y0) for x in range(x0, x1 + step, step)]


def path_edges(pair: MapPair, points: Sequence[Cell], verb: str) -> list[Edge] | Refusal:
    """Unit segments along the points, or why not: a segment without length, a diagonal, or (to draw) an obstacle."""
    edges: list[Edge] = []
    for a, b in zip(points, points[1:]):
        if a == b:
            return Refusal("no_length", a, b)
        if a[0] != b[0] and a[1] != b[1]:
            return Refusal("diagonal", a, b)
        cells = segment(a, b)
        if verb == "draw":
            hit = next((c for c in cells if c in pair.obstacles), None)
            if hit is not None:
                name = next(lm.name for lm in pair.guide if lm.blocked and hit in lm.cells)
                return Refusal("blocked", a, b, hit, name)
        edges.extend(edge(c, d) for c, d in zip(cells, cells[1:]))
    return edges


def change(pair: MapPair, edges: frozenset[Edge], command: str, path: Sequence[Cell] | None) -> frozenset[Edge] | Refusal | None:
    """The rule check of every follower edit: the unit segments a `draw` adds or an `erase` removes
    (None for `undo` and `reset`, which their situation already allows), or why the command changes
    nothing. `edit` (the env's step) and the env's `_refusal` (action masks) both use it."""
    if command in ("undo", "reset"):
        return None
    segments = path_edges(pair, path or (), command)
    if isinstance(segments, Refusal):
        return segments
    if command == "draw":
        added = frozenset(segments) - edges
        return added if added else Refusal("already_drawn")
    removed = frozenset(segments) & edges
    return removed if removed else Refusal("nothing_there")


def edit(pair: MapPair, edges: frozenset[Edge], history: Sequence[frozenset[Edge]], command: str,
         path: Sequence[Cell] | None) -> frozenset[Edge] | Refusal:
    """The drawing after an accepted `draw`, `erase`, `undo` (back to `history[-1]`) or `reset`, or why it changes nothing."""
    if command == "undo":
        return history[-1]
    if command == "reset":
        return frozenset()
    delta = change(pair, edges, command, path)
    if isinstance(delta, Refusal) or delta is None:
        return delta if delta is not None else edges
    return edges | delta if command == "draw" else edges - delta


@lru_cache(maxsize=8192)
def message_refused(sender: str, message: str, allow_coordinates: bool) -> bool:
    """The rule on messages: the guide may not refer to grid coordinates unless `allow_coordinates`
    (the env's `_send_refusal` and `_refusal` both ask this)."""
    return sender == GUIDE and not allow_coordinates and refers_to_coordinates(message)


def drawing_segments(edges: frozenset[Edge]) -> tuple[tuple[Cell, Cell], ...]:
    """The drawing as sorted ((x, y), (x, y)) unit segments, each from its lesser end."""
    return tuple(sorted([(a, b) if a < b else (b, a) for a, b in edges]))


def drawing_json(segments: Sequence[tuple[Cell, Cell]]) -> list[list[list[int]]]:
    """The drawing's segments (`drawing_segments`) as [[x, y], [x, y]] (JSON-ready)."""
    return [[list(a), list(b)] for a, b in segments]


def state_json(pair: MapPair, edges: frozenset[Edge], step: int, accuracy: float, done: bool) -> dict[str, Any]:
    """The omniscient state: both maps, the drawing, the route accuracy, whether the route is joined up."""
    return {
        "step": step,
        "maps": pair.to_json(),
        "drawing": sorted(sorted(list(c) for c in e) for e in edges),
        "route_accuracy": accuracy,
        "completed": completed(edges, pair.start, pair.finish),
        "done": done,
    }
