"""Map Task scoring, as pure functions of the target route and the follower's drawing.

CollabSim's text reports a 0-1 route accuracy without defining it (its released code does: the last item); here:

- `route_accuracy`: F1 between the set of cells the drawing covers and the set of cells of
  the target route (2|D∩T| / (|D| + |T|)): 1.0 for a perfect copy, 0.0 for a disjoint one;
  drawing extra cells costs precision, missing cells cost recall.
- `deviation`: the symmetric mean distance, in cells (Euclidean), from each target cell to
  the nearest drawn cell and from each drawn cell to the nearest target cell, averaged over
  the two directions: the grid analogue of the HCRC "area between the routes" score. An
  empty drawing counts as the start cell alone (where the follower's pen rests).
- `completed`: the drawn segments connect the start to the finish.
- `score_board_score` and `collabsim_route_accuracy`: CollabSim's released definition
  (`src/tasks/maptask_drawing_accuracy.py` with `configs/map_task_material/score_board.txt`): each
  drawn cell scores 3 on the route, 2 at Chebyshev distance 1 from it, 1 at distance 2, else 0;
  accuracy is the drawing's score over the route's own (3 a route cell). Extra cells cost nothing,
  so it can pass 1 (a copy of the route with a line beside it: 5/3).

A drawing is a set of unit segments between 4-adjacent cells (`Edge`); the cells it covers
are their end points.
"""

from __future__ import annotations

import math
from typing import AbstractSet, Iterable, Sequence

Cell = tuple[int, int]
Edge = frozenset  # frozenset({cell_a, cell_b}) of two 4-adjacent cells


def edge(a: Cell, b: Cell) -> Edge:
    return frozenset((a, b))


def drawn_cells(edges: Iterable[Edge]) -> set[Cell]:
    return {c for e in edges for c in e}


def route_accuracy(target: Sequence[Cell], drawn: AbstractSet[Cell]) -> float:
    """F1 between drawn cells and target cells (0.0 when nothing is drawn)."""
    goal = set(target)
    if not drawn or not goal:
        return 0.0
    return 2 * len(goal & drawn) / (len(goal) + len(drawn))


def score_board_score(target: Iterable[Cell], drawn: AbstractSet[Cell]) -> int:
    """The drawing's score on CollabSim's score board of `target`: 3 a drawn route cell, 2 a drawn cell at Chebyshev
    distance 1 from the route, 1 at distance 2."""
    board: dict[Cell, int] = {}
    for x, y in set(target):
        for dx in range(-2, 3):
            for dy in range(-2, 3):
                value, cell = 3 - max(abs(dx), abs(dy)), (x + dx, y + dy)
                if board.get(cell, 0) < value:
                    board[cell] = value
    return sum(board.get(c, 0) for c in drawn)


def collabsim_route_accuracy(target: Sequence[Cell], drawn: AbstractSet[Cell]) -> float:
    """CollabSim's released route accuracy: the drawing's score-board score over the route's own (0.0 without a route)."""
    goal = set(target)
    return score_board_score(goal, drawn) / (3 * len(goal)) if goal else 0.0


def _mean_nearest(src: Iterable[Cell], dst: Sequence[Cell]) -> float:
    total = n = 0
    for x, y in src:
        total += min(math.hypot(x - u, y - v) for u, v in dst)
        n += 1
    return total / n if n else 0.0


def deviation(target: Sequence[Cell], drawn: AbstractSet[Cell], start: Cell) -> float:
    """Symmetric mean nearest-cell distance between target and drawing, in cells."""
    pen = sorted(drawn) if drawn else [start]
    goal = list(dict.fromkeys(target))
    return (_mean_nearest(goal, pen) + _mean_nearest(pen, goal)) / 2


def completed(edges: Iterable[Edge], start: Cell, finish: Cell) -> bool:
    """Whether the drawn segments join the start to the finish."""
    import networkx as nx  # here, not at the top: making the env need not load networkx

    graph = nx.Graph()
    graph.add_edges_from(tuple(e) for e in edges)
    return start in graph and finish in graph and nx.has_path(graph, start, finish)
