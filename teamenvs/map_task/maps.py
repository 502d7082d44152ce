"""Map Task maps (HCRC, Anderson et al. 1991; CollabSim 3.4): landmarks, a target route, and two maps that differ.

A map is a `width x height` grid with `n_landmarks` named landmarks, each a small rectangle
of cells with a one-cell gap around it; `blocked_fraction` of them are obstacles no route
may cross (a lake, a cliff), the others can be walked over. The route runs from a start
cell to a finish cell on the far side of the map as a simple 4-connected path: shortest
paths (networkx's bidirectional breadth-first search, step for step) through free cells next to a sequence of landmarks, each leg avoiding the
cells of the legs before it, so the route never crosses itself or an obstacle.

The instruction follower's map differs from the giver's by `mismatch` kinds of HCRC
discrepancy, drawn at random (seeded) for each map pair out of three, each applied to
`per_kind` passable landmarks (the landmarks nearest the route are dealt to the three kinds
in turn before the kinds are drawn, so each kind does the same harm at every level): `one_map_only` (alternately
a landmark only the guide has and one only the follower has), `renamed` (on both maps,
under another name on the follower's), `moved` (on both, somewhere else on the
follower's). Obstacles are terrain: both maps show them alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from teamenvs.core.config import ConfigError
from teamenvs.map_task.scoring import Cell

if TYPE_CHECKING:
    from teamenvs.map_task.config import MapTaskConfig

KINDS = ("one_map_only", "renamed", "moved")
LANDMARK_NAMES = (
    "old mill", "stone wall", "palm beach", "white cottage", "iron bridge", "fallen tree", "crane",
    "saxon barn", "rope bridge", "diamond mine", "farmhouse", "lighthouse", "pine forest", "rock fall",
    "wagon wheel", "church", "lake", "swamp", "graveyard", "waterfall", "windmill", "camp site",
    "fenced meadow", "stone circle", "collapsed shelter", "fishing boat", "apple orchard", "well",
    "carved totem", "sandy shore", "cattle stockade", "hanging bridge", "abandoned truck", "ruined fort",
    "trig point", "cave", "viewpoint", "caravan park", "picnic site", "signpost", "haystack", "dead oak",
    "gold mine", "pylon", "water tower", "red barn", "old quarry", "wooden pier", "maze", "bell tower",
)


@dataclass(frozen=True)
class Landmark:
    """A named rectangle of cells (x0..x1, y0..y1 inclusive); `blocked` ones cannot be crossed."""

    name: str
    x0: int
    y0: int
    x1: int
    y1: int
    blocked: bool = False

    @property
    def cells(self) -> frozenset[Cell]:
        return frozenset((x, y) for x in range(self.x0, self.x1 + 1) for y in range(self.y0, self.y1 + 1))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "x0": self.x0, "y0": self.y0, "x1": self.x1, "y1": self.y1, "blocked": self.blocked}


@dataclass(frozen=True)
class Discrepancy:
    """One difference between the maps: its kind, the landmark on each map (None where absent)."""

    kind: str
    guide: Landmark | None
    follower: Landmark | None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "guide": self.guide.to_json() if self.guide else None,
            "follower": self.follower.to_json() if self.follower else None,
        }


@dataclass(frozen=True)
class MapPair:
    """The giver's map with its route, and the follower's map."""

    width: int
    height: int
    start: Cell
    finish: Cell
    route: tuple[Cell, ...]
    guide: tuple[Landmark, ...]
    follower: tuple[Landmark, ...]
    discrepancies: tuple[Discrepancy, ...] = ()
    seed: int | None = None
    obstacles: frozenset[Cell] = field(default=frozenset(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "obstacles", frozenset(c for lm in self.guide if lm.blocked for c in lm.cells))

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "width": self.width,
            "height": self.height,
            "start": list(self.start),
            "finish": list(self.finish),
            "route": [list(c) for c in self.route],
            "guide": [lm.to_json() for lm in self.guide],
            "follower": [lm.to_json() for lm in self.follower],
            "discrepancies": [d.to_json() for d in self.discrepancies],
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> "MapPair":
        lm = lambda d: Landmark(**d) if d is not None else None  # noqa: E731
        return MapPair(
            width=data["width"],
            height=data["height"],
            start=tuple(data["start"]),
            finish=tuple(data["finish"]),
            route=tuple(tuple(c) for c in data["route"]),
            guide=tuple(lm(d) for d in data["guide"]),
            follower=tuple(lm(d) for d in data["follower"]),
            discrepancies=tuple(Discrepancy(d["kind"], lm(d["guide"]), lm(d["follower"])) for d in data["discrepancies"]),
            seed=data.get("seed"),
        )


def _neighbours(cell: Cell) -> Iterable[Cell]:
    x, y = cell
    return ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1))


def _place(rng: np.random.Generator, width: int, height: int, taken: set[Cell], name: str, blocked: bool, tries: int = 200) -> Landmark | None:
    """A landmark of 1x1 to 3x2 cells at a free spot with a free ring of cells around it (None if none found)."""
    for _ in range(tries):
        w, h = int(rng.integers(1, 4)), int(rng.integers(1, 3))
        if rng.random() < 0.5:
            w, h = h, w
        x0, y0 = int(rng.integers(1, width - w)), int(rng.integers(1, height - h))
        # the spot and its ring of cells, checked cell by cell and left at the first taken one (not built as a set)
        if not any((x, y) in taken for x in range(x0 - 1, x0 + w + 1) for y in range(y0 - 1, y0 + h + 1)):
            return Landmark(name, x0, y0, x0 + w - 1, y0 + h - 1, blocked)
    return None


def _grid_neighbours(cell: Cell, width: int, height: int) -> tuple[Cell, ...]:
    """The 4 neighbours of a cell on the map, in the order networkx's `grid_2d_graph` lists them
    (x - 1, x + 1, y - 1, y + 1): the order decides which of two equally short paths is taken."""
    x, y = cell
    out = []
    if x > 0:
        out.append((x - 1, y))
    if x < width - 1:
        out.append((x + 1, y))
    if y > 0:
        out.append((x, y - 1))
    if y < height - 1:
        out.append((x, y + 1))
    return tuple(out)


@lru_cache(maxsize=8)
def _grid(width: int, height: int) -> dict[Cell, tuple[Cell, ...]]:
    """Every cell of a map of this size -> its `_grid_neighbours`, made once per size: the search below asks for
    them several hundred times a map."""
    return {(x, y): _grid_neighbours((x, y), width, height) for x in range(width) for y in range(height)}


def _shortest_leg(width: int, height: int, blocked: set[Cell], source: Cell, target: Cell) -> list[Cell] | None:
    """A shortest 4-connected path avoiding `blocked`: networkx's bidirectional breadth-first search
    (`bidirectional_shortest_path`), step for step, so the maps are the ones it made, about 10x faster."""
    if source == target:
        return [source]
    neighbours = _grid(width, height)
    pred: dict[Cell, Cell | None] = {source: None}
    succ: dict[Cell, Cell | None] = {target: None}
    forward, reverse = [source], [target]
    meet = None
    while forward and reverse and meet is None:
        if len(forward) <= len(reverse):
            level, forward = forward, []
            for v in level:
                for w in neighbours[v]:
                    if w in blocked:
                        continue
                    if w not in pred:
                        forward.append(w)
                        pred[w] = v
                    if w in succ:
                        meet = w
                        break
                if meet is not None:
                    break
        else:
            level, reverse = reverse, []
            for v in level:
                for w in neighbours[v]:
                    if w in blocked:
                        continue
                    if w not in succ:
                        succ[w] = v
                        reverse.append(w)
                    if w in pred:
                        meet = w
                        break
                if meet is not None:
                    break
    if meet is None:
        return None
    path: list[Cell] = []
    w: Cell | None = meet
    while w is not None:
        path.append(w)
        w = pred[w]
    path.reverse()
    w = succ[path[-1]]
    while w is not None:
        path.append(w)
        w = succ[w]
    return path


def _route(width: int, height: int, start: Cell, finish: Cell, waypoints: list[Cell], obstacles: frozenset[Cell]) -> tuple[Cell, ...] | None:
    """A simple 4-connected path start -> waypoints -> finish avoiding obstacles (waypoints it cannot reach are skipped)."""
    path: list[Cell] = [start]
    for goal in [*waypoints, finish]:
        if goal == path[-1] or goal in path:
            continue
        # the path so far is blocked, but for its end, where the next leg starts
        blocked = set(obstacles).union(path[:-1])
        leg = _shortest_leg(width, height, blocked, path[-1], goal) if goal not in obstacles else None
        if leg is None:
            if goal == finish:
                return None
            continue
        # Do not wall in the finish: a leg through it is cut short of the finish later anyway.
        if finish in leg[1:-1]:
            continue
        path.extend(leg[1:])
    return tuple(path) if path[-1] == finish else None


def generate_map_pair(config: MapTaskConfig, rng: np.random.Generator, seed: int | None = None) -> MapPair:
    """A guide map with a route and the follower's map with `config.mismatch` kinds of discrepancy."""
    width, height = config.width, config.height
    for _ in range(300):
        names = [LANDMARK_NAMES[int(i)] for i in rng.permutation(len(LANDMARK_NAMES))]
        n_blocked = round(config.n_landmarks * config.blocked_fraction)
        taken: set[Cell] = set()
        landmarks: list[Landmark] = []
        for i in range(config.n_landmarks):
            lm = _place(rng, width, height, taken, names[i], i < n_blocked)
            if lm is None:
                break
            landmarks.append(lm)
            taken |= lm.cells
        if len(landmarks) < config.n_landmarks:
            continue
        obstacles = frozenset(c for lm in landmarks if lm.blocked for c in lm.cells)
        occupied = frozenset(c for lm in landmarks for c in lm.cells)
        free = [(x, y) for x in range(width) for y in range(height) if (x, y) not in occupied]
        # Start near the west or north edge, finish on the far side.
        if rng.random() < 0.5:
            starts = [c for c in free if c[0] <= width // 5]
            finishes = [c for c in free if c[0] >= width - 1 - width // 5]
        else:
            starts = [c for c in free if c[1] <= height // 5]
            finishes = [c for c in free if c[1] >= height - 1 - height // 5]
        start = starts[int(rng.integers(len(starts)))]
        finish = finishes[int(rng.integers(len(finishes)))]
        order = sorted(range(len(landmarks)), key=lambda i: rng.random())[: config.waypoints]
        marks = []
        free_cells = set(free)  # (made once: it was made again for every cell tried, 5% of a short map-task episode)
        for i in order:
            around = sorted(c for c in set().union(*(_neighbours(c) for c in landmarks[i].cells)) if c in free_cells)
            if around:
                marks.append(around[int(rng.integers(len(around)))])
        # Visit waypoints in order of progress from start to finish.
        axis = 0 if abs(finish[0] - start[0]) >= abs(finish[1] - start[1]) else 1
        marks.sort(key=lambda c: (c[axis] - start[axis]) * (1 if finish[axis] >= start[axis] else -1))
        route = _route(width, height, start, finish, marks, obstacles)
        if route is None or len(route) < (width + height) // 3:
            continue
        guide = tuple(landmarks)
        follower, discrepancies = _discrepancies(guide, route, names[config.n_landmarks:], config, rng, taken | set(route))
        return MapPair(width, height, start, finish, route, guide, follower, discrepancies, seed)
    raise ConfigError(
        f"could not lay out {config.n_landmarks} landmarks and a route on a {width}x{height} map; "
        "use fewer landmarks or a bigger map"
    )


def _discrepancies(
    guide: tuple[Landmark, ...], route: tuple[Cell, ...], spare_names: list[str], config: MapTaskConfig, rng: np.random.Generator, taken: set[Cell]
) -> tuple[tuple[Landmark, ...], tuple[Discrepancy, ...]]:
    """Apply `config.mismatch` kinds of discrepancy, drawn at random, to passable landmarks, those nearest the route first."""
    follower = list(guide)
    spare = list(spare_names)
    position = {c: i for i, c in enumerate(route)}

    def route_index(lm: Landmark) -> int:
        near = [position[n] for c in lm.cells for n in (c, *_neighbours(c)) if n in position]
        return min(near) if near else len(route) + int(abs(lm.x0 - route[-1][0]) + abs(lm.y0 - route[-1][1]))

    candidates = iter(sorted((lm for lm in guide if not lm.blocked), key=route_index))
    # Every kind's landmarks are fixed first (dealt round-robin, nearest the route first) and
    # only then are the kinds drawn, so a kind does the same harm at every mismatch level.
    plan: list[tuple[str, Landmark | None]] = []
    for k in range(config.per_kind):
        for kind in KINDS:
            extra = kind == "one_map_only" and k % 2 == 1
            lm = None if extra else next(candidates, None)
            if extra or lm is not None:
                plan.append((kind, lm))
    possible: list[Discrepancy] = []
    for kind, lm in plan:
        if lm is None:
            extra = _place(rng, config.width, config.height, taken, spare.pop(0), False)
            if extra is not None:
                taken |= extra.cells
                possible.append(Discrepancy(kind, None, extra))
        elif kind == "one_map_only":
            possible.append(Discrepancy(kind, lm, None))
        elif kind == "renamed":
            possible.append(Discrepancy(kind, lm, replace(lm, name=spare.pop(0))))
        else:
            moved = _place(rng, config.width, config.height, taken, lm.name, False)
            if moved is not None:
                taken |= moved.cells
                possible.append(Discrepancy(kind, lm, moved))
    chosen = {KINDS[int(i)] for i in rng.choice(len(KINDS), size=config.mismatch, replace=False)} if config.mismatch else set()
    used = [d for d in possible if d.kind in chosen]
    for d in used:
        if d.guide is None:
            follower.append(d.follower)
        elif d.follower is None:
            follower.remove(d.guide)
        else:
            follower[follower.index(d.guide)] = d.follower
    return tuple(follower), tuple(used)
