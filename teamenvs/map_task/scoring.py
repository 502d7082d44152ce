"""Map Task scoring, as pure functions of the target route and the follower's drawing.

CollabSim reports a 0-1 route accuracy without defining it; here:

- `route_accuracy`: F1 between the set of cells the drawing covers and the set of cells of
  the target route (2|D∩T| / (|D| + |T|)): 1.0 for a perfect copy, 0.0 for a disjoint one;
  drawing extra cells costs precision, missing cells cost recall.
- `deviation`: the symmetric mean distance, in cells (Euclidean), from each target cell to
  the nearest drawn cell and from each drawn cell to the nearest target cell, averaged over
  the two directions: the grid analogue of the HCRC "area between the routes" score. An
  empty drawing counts as the start cell alone (where the follower's pen rests).
- `completed`: the drawn segments connect the start to the finish.

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
