"""The search-and-rescue world: floor plans by binary space partitioning, victims, rubble.

As in VIRT-LAB (section 3.3.1), the map is a matrix of cells (walls, floor, doorways) and a
graph of rooms. A `width x height` rectangle is split recursively (binary space
partitioning) by one-cell walls until every room is at most `max_room_side` cells across;
`complexity` (1-10) shrinks that bound, so a more complex map has more, smaller rooms and
fewer spare doors, hence longer paths. Doorways (one cell in a wall) join adjacent rooms:
a random spanning tree of the adjacency graph keeps the whole map connected, and extra
doors are added with a probability that falls with complexity. One room is the Hospital.

Victims (`stable` or `critical`) lie on distinct floor cells outside the Hospital; rubble
blocks a share of the doorways, never one of the Hospital's own. Everything random is
drawn from the generator passed in.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property, lru_cache, partial
from itertools import accumulate
from operator import index
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Sequence

import numpy as np

from teamenvs.core.config import ConfigError
from teamenvs.core.text import excerpt
from teamenvs.search_rescue.config import SearchRescueConfig

if TYPE_CHECKING:
    import networkx as nx

STABLE, CRITICAL = "stable", "critical"
HOSPITAL = "Hospital"
MIN_ROOM = 3  # smallest room interior side, in cells
WALL = -1  # cell code of a wall; floor cells hold their room id, doorways -2 - door id

DIRECTIONS = {"north": (0, -1), "south": (0, 1), "east": (1, 0), "west": (-1, 0)}

_PLACES = (
    "Office", "Closet", "Hallway", "Lab", "Storage", "Kitchen", "Lounge", "Lobby", "Ward", "Classroom",
    "Library", "Archive", "Pantry", "Workshop", "Gym", "Chapel", "Studio", "Clinic", "Garage", "Atrium",
    "Vault", "Server Room", "Break Room", "Boiler Room", "Mail Room", "Locker Room", "Laundry", "Foyer",
    "Corridor", "Stairwell", "Cafeteria", "Dormitory", "Pharmacy", "Gallery", "Control Room", "Attic",
)
_QUALIFIERS = (
    "North", "South", "East", "West", "Upper", "Lower", "Main", "Back", "Side", "Inner", "Outer", "Old",
    "New", "Blue", "Red", "Green", "Grey", "Small", "Long", "Corner", "Central", "Staff", "Supply", "Quiet",
    "Sunny", "Narrow",
)

_ROOM_NAMES = tuple(f"{q} {p}" for q in _QUALIFIERS for p in _PLACES)  # every name a generated room can get


# ---------------------------------------------------------------------- floor plan
# Room and Door set their fields as a frozen dataclass's own __init__ does, but with object.__setattr__ looked
# up once, here, not once per field: a 100x100 map has ~160 rooms and ~250 doorways (made as they are read).
_set = object.__setattr__


@dataclass(frozen=True, init=False)
class Room:
    """A rectangular room: its interior spans x0..x1, y0..y1 (inclusive); walls lie around it."""

    id: int
    name: str
    x0: int
    y0: int
    x1: int
    y1: int

    def __init__(self, id: int, name: str, x0: int, y0: int, x1: int, y1: int) -> None:
        _set(self, "id", id)
        _set(self, "name", name)
        _set(self, "x0", x0)
        _set(self, "y0", y0)
        _set(self, "x1", x1)
        _set(self, "y1", y1)

    @property
    def area(self) -> int:
        return (self.x1 - self.x0 + 1) * (self.y1 - self.y0 + 1)


@dataclass(frozen=True, init=False)
class Door:
    """A doorway: one wall cell joining two rooms; `entries[i]` is the cell inside `rooms[i]` next to it."""

    id: int
    cell: tuple[int, int]
    rooms: tuple[int, int]
    entries: tuple[tuple[int, int], tuple[int, int]]

    def __init__(self, id: int, cell: tuple[int, int], rooms: tuple[int, int], entries: tuple[tuple[int, int], tuple[int, int]]) -> None:
        _set(self, "id", id)
        _set(self, "cell", cell)
        _set(self, "rooms", rooms)
        _set(self, "entries", entries)

    def entry(self, room: int) -> tuple[int, int]:
        return self.entries[self.rooms.index(room)]

    def other(self, room: int) -> int:
        return self.rooms[1] if self.rooms[0] == room else self.rooms[0]

    def direction_from(self, room: int) -> str:
        """The side of `room` this doorway is on (north, south, east or west)."""
        ex, ey = self.entry(room)
        return direction((ex, ey), self.cell)


def direction(src: tuple[int, int], dst: tuple[int, int]) -> str:
    """The compass direction of a neighbouring cell."""
    dx, dy = dst[0] - src[0], dst[1] - src[1]
    for name, step in DIRECTIONS.items():
        if step == (dx, dy):
            return name
    raise ValueError(f"{dst} is not next to {src}")


class _OnDemand(dict):
    """A read-only sequence of `n` items whose item i is `make(i)`, made when it is first looked up, then kept.

    A reset reads a few of a large map's rooms and doorways: making all of them (and freeing them at a later reset)
    was a fifth of a 100x100 reset. A dict with `__missing__`, so that an item already made is looked up by the
    dict's own code (yet slower than in a tuple: `FloorPlan.settle` turns a plan's into tuples for the steps of an
    episode that goes on); len(), iteration (in order, making every item), equality and repr are a tuple's. `make`
    is a partial of a module function, so that a plan pickles."""

    def __init__(self, n: int, make: Callable[[int], Any]) -> None:
        super().__init__()
        self.n, self.make = n, make

    def __missing__(self, i: int) -> Any:
        i = index(i)  # a numpy integer: the item is kept under the equal Python int
        if not 0 <= i < self.n:
            if -self.n <= i < 0:
                return self[i + self.n]
            raise IndexError(f"index {i} out of range for {self.n} items")
        item = self[i] = self.make(i)
        return item

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        return map(self.__getitem__, range(self.n))

    def __contains__(self, item: object) -> bool:
        return any(item == x for x in self)

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, _OnDemand) else other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(tuple(self))


def _area(rect: tuple[int, int, int, int]) -> int:
    x0, y0, x1, y1 = rect
    return (x1 - x0 + 1) * (y1 - y0 + 1)


def _room(names: Sequence[str], rects: Sequence[tuple[int, int, int, int]], i: int) -> Room:
    return Room(i, names[i], *rects[i])


def _door(table: np.ndarray, i: int) -> Door:
    x, y, a, b, xa, ya, xb, yb = table[:, i].tolist()
    return Door(i, (x, y), (a, b), ((xa, ya), (xb, yb)))


def _doors_of(a: np.ndarray, b: np.ndarray, room: int) -> tuple[int, ...]:
    return tuple(np.flatnonzero((a == room) | (b == room)).tolist())


def _exits_of(table: np.ndarray, room: int) -> tuple[tuple[int, tuple[int, int], int], ...]:
    at = np.flatnonzero((table[2] == room) | (table[3] == room))
    _, _, a, b, xa, ya, xb, yb = table[:, at].tolist()
    # read as Door.entry and Door.other read a doorway (one from a room to itself: by its first side)
    return tuple((d, (xa[k], ya[k]), b[k]) if a[k] == room else (d, (xb[k], yb[k]), a[k])
                 for k, d in enumerate(at.tolist()))


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: a plan is one drawn map
class FloorPlan:
    """The static layout of a map: cells, rooms, doorways, the room graph and the Hospital.

    `rooms`, `doors`, `room_doors` and `exits` are read like tuples; each item is made when first read (see
    `_OnDemand`) until `settle`. `exits` spares routes and the rooms an agent can name a look-up of each doorway;
    `room_names` and `rects` (each room's interior x0, y0, x1, y1) give every room's name and extent without
    making its Room."""

    width: int
    height: int
    grid: np.ndarray  # read-only, height x width, int64: WALL, a room id, or -2 - door id
    rooms: Sequence[Room]
    room_names: tuple[str, ...]
    rects: tuple[tuple[int, int, int, int], ...]
    doors: Sequence[Door]
    room_doors: Sequence[tuple[int, ...]]  # each room's doorways, in door order
    exits: Sequence[tuple[tuple[int, tuple[int, int], int], ...]]  # the same: (door, its `entry` here, the room beyond)
    hospital: int

    @cached_property
    def cells(self) -> tuple[int, ...]:
        """`grid` row-major, as a tuple; made when first asked for (the rules read `grid`: a tuple of every
        cell of a 100x100 map cost a tenth of a reset, in making it and in the garbage collector's passes)."""
        return tuple(self.grid.ravel().tolist())

    @cached_property
    def room_ids(self) -> dict[str, int]:
        """Lower-case room name -> room; made when first asked for (messages and `go to` commands name rooms)."""
        return {name.lower(): r for r, name in enumerate(self.room_names)}

    @cached_property
    def graph(self) -> nx.Graph:
        """Rooms as nodes (name attribute), doorways as edges (door attribute); built when first asked for
        (the rules walk cells and doorways, so an episode need not pay for it at every reset)."""
        import networkx as nx  # here, not at the top: making the env need not load networkx

        graph = nx.Graph()
        graph.add_nodes_from((r.id, {"name": r.name}) for r in self.rooms)
        graph.add_edges_from((*d.rooms, {"door": d.id}) for d in self.doors)
        return graph

    def settle(self) -> None:
        """Make every room and doorway not made yet, and keep them in tuples from now on: a step looks them up faster
        there than in `_OnDemand`'s dicts, and an episode that goes on reads most of them anyway."""
        for name in ("rooms", "doors", "room_doors", "exits"):
            _set(self, name, tuple(getattr(self, name)))

    def code(self, cell: tuple[int, int]) -> int:
        x, y = cell
        if not (0 <= x < self.width and 0 <= y < self.height):
            return WALL
        return self.grid.item(y, x)

    def room_at(self, cell: tuple[int, int]) -> int | None:
        code = self.code(cell)
        return code if code >= 0 else None

    def door_at(self, cell: tuple[int, int]) -> int | None:
        code = self.code(cell)
        return -2 - code if code <= -2 else None

    @property
    def floor_cells(self) -> int:
        return sum(map(_area, self.rects))

    def to_json(self) -> dict[str, object]:
        names = self.room_names
        return {
            "width": self.width,
            "height": self.height,
            "hospital": names[self.hospital],
            "rooms": [{"name": name, "x0": x0, "y0": y0, "x1": x1, "y1": y1} for name, (x0, y0, x1, y1) in zip(names, self.rects)],
            "doors": [{"cell": list(d.cell), "rooms": [names[i] for i in d.rooms]} for d in self.doors],
        }


def _partition(rect: tuple[int, int, int, int], max_side: int, rng: np.random.Generator, out: list) -> None:
    """Append to `out` the rooms (x0, y0, x1, y1) of splitting `rect` until no side is over `max_side` (or can
    be split), depth first, the west or north part before the other."""
    todo = [rect]  # a stack, not recursion: the same order of draws and rooms, in less time
    longest = max(max_side, 2 * MIN_ROOM)  # a side is split once it is longer than this (each part keeps MIN_ROOM)
    while todo:
        rect = todo.pop()
        while True:  # on down the west (north) parts, each other part left for later
            x0, y0, x1, y1 = rect
            w, h = x1 - x0, y1 - y0  # each one less than the side
            if w < longest and h < longest:
                out.append(rect)
                break
            if w >= longest and (h < longest or w > h or (w == h and rng.random() < 0.5)):  # split by a vertical wall
                c = int(rng.integers(x0 + MIN_ROOM, x1 - MIN_ROOM + 1))
                todo.append((c + 1, y0, x1, y1))
                rect = (x0, y0, c - 1, y1)
            else:
                c = int(rng.integers(y0 + MIN_ROOM, y1 - MIN_ROOM + 1))
                todo.append((x0, c + 1, x1, y1))
                rect = (x0, y0, x1, c - 1)


def room_names(n: int, rng: np.random.Generator) -> list[str]:
    """`n` distinct short room names (e.g. "Supply Closet"), drawn from the word lists without repeats."""
    combos = _ROOM_NAMES
    if n > len(combos):
        raise ConfigError(f"a map may have at most {len(combos)} rooms (asked for {n}); lower complexity or size")
    picks = rng.choice(len(combos), size=n, replace=False)
    return [combos[i] for i in picks.tolist()]


@lru_cache(maxsize=256)
def _layout_config(width: int, height: int, complexity: int) -> SearchRescueConfig:
    """The (validated, frozen) config whose layout rules a plan of this size and complexity follows."""
    return SearchRescueConfig(width=width, height=height, complexity=complexity)


def generate_floor_plan(width: int, height: int, complexity: int, rng: np.random.Generator) -> FloorPlan:
    """A connected floor plan of `width x height` cells (see the module docstring)."""
    cfg = _layout_config(width, height, complexity)
    rects: list[tuple[int, int, int, int]] = []
    # At least two rooms, so that victims have somewhere to be besides the Hospital.
    max_side = min(cfg.max_room_side, max(width, height) - 3)
    _partition((1, 1, width - 2, height - 2), max_side, rng, rects)
    grid = np.full((height, width), WALL, dtype=np.int64)
    for rid, (x0, y0, x1, y1) in enumerate(rects):
        grid[y0:y1 + 1, x0:x1 + 1] = rid
    found = _doorway_candidates(grid)

    # The spanning tree of the room adjacency graph with these random weights (Kruskal; the weights are
    # distinct floats, so the tree is unique: networkx's minimum_spanning_edges picks the same one).
    # (each batch of draws below is the same stream as one draw per call, in order: numpy's vector draws
    # are the scalar draws one after another)
    pairs = np.stack((found.lo, found.hi), axis=1)  # in sorted order: pair k is index k of `found`'s arrays
    weights = rng.random(len(pairs))
    chosen = np.zeros(len(pairs), dtype=bool)
    chosen[_kruskal(len(rects), pairs, weights)] = True
    spare = np.flatnonzero(~chosen)
    chosen[spare[rng.random(len(spare)) < cfg.extra_door_probability]] = True

    # The Hospital is any room of at least 9 cells. No split leaves a side under MIN_ROOM, so once the interior is
    # MIN_ROOM cells across, every room is at least MIN_ROOM x MIN_ROOM: then the rooms need not be measured one by one.
    if MIN_ROOM * MIN_ROOM >= 9 and min(width, height) - 2 >= MIN_ROOM:
        roomy = list(range(len(rects)))
    else:
        roomy = [i for i, (x0, y0, x1, y1) in enumerate(rects) if (x1 - x0 + 1) * (y1 - y0 + 1) >= 9] or [0]
    hospital = int(rng.choice(roomy))
    names = room_names(len(rects) - 1, rng)
    names.insert(hospital, HOSPITAL)

    joined = np.flatnonzero(chosen)  # the doorways' pairs, in sorted order
    cell = found.cells[found.start[joined] + rng.integers(found.count[joined])] if len(joined) else joined
    a, b = found.lo[joined], found.hi[joined]
    flat = grid.ravel()
    # A doorway joins its rooms west-east when the cells on both of those sides belong to the pair
    # (north-south otherwise); `a`'s entry is the side that holds `a`.
    west, east, north = flat[cell - 1], flat[cell + 1], flat[cell - width]
    across = ((west == a) | (west == b)) & ((east == a) | (east == b))
    ys, xs = np.divmod(cell, width)
    first = np.where(across, west, north) == a  # `a` lies on the west (or north) side
    step_x, step_y = across.astype(np.int64), (~across).astype(np.int64)
    sign = np.where(first, -1, 1)
    ax, ay = xs + sign * step_x, ys + sign * step_y
    bx, by = xs - sign * step_x, ys - sign * step_y
    return _assemble(grid, names, rects, np.stack((xs, ys, a, b, ax, ay, bx, by)), hospital)


class _Candidates(NamedTuple):
    """Candidate doorways, grouped by pair of rooms: pair k is (`lo[k]`, `hi[k]`), the pairs in sorted order,
    and its candidates are `cells[start[k]:start[k] + count[k]]` (row-major indices)."""

    lo: np.ndarray
    hi: np.ndarray
    start: np.ndarray
    count: np.ndarray
    cells: np.ndarray


def _doorway_candidates(grid: np.ndarray) -> _Candidates:
    """Candidate doorways per pair of rooms (lower id first): the row-major indices of wall cells with
    floor of the two rooms on opposite sides, in row-major order (west-east before north-south at one
    cell, so a cell that qualifies both ways is listed twice).

    Vectorised over the grid: a plan's cost grows with its rooms, not with its area."""
    width = grid.shape[1]
    flat = grid.ravel()
    floor = flat != WALL  # no doorways yet: a cell is wall or a room's floor
    wall = ~floor
    # Neighbours along the flat array: the outer ring is wall, so a step west or east never wraps onto floor.
    # Floor on both sides of a wall cell is always of two rooms (a room is a rectangle, so it cannot hold both).
    sides = np.zeros((flat.size, 2), dtype=bool)  # [cell, 0]: floor west and east; [cell, 1]: north and south
    sides[1:-1, 0] = wall[1:-1] & floor[:-2] & floor[2:]
    sides[width:-width, 1] = wall[width:-width] & floor[:-2 * width] & floor[2 * width:]
    found = np.flatnonzero(sides)  # 2 * cell + orientation: row-major, west-east first
    index = found >> 1
    step = np.where(found & 1, width, 1)
    before, after = flat[index - step], flat[index + step]
    pair = np.minimum(before, after) * flat.size + np.maximum(before, after)  # lo * size + hi
    order = np.argsort(pair, kind="stable")  # grouped by pair, each group still in row-major order
    index, pair = index[order], pair[order]
    new_pair = np.empty(len(index), dtype=bool)
    new_pair[:1] = True
    np.not_equal(pair[1:], pair[:-1], out=new_pair[1:])
    starts = np.flatnonzero(new_pair)
    lo, hi = np.divmod(pair[starts], flat.size)
    return _Candidates(lo, hi, starts, np.diff(starts, append=len(index)), index)


def _kruskal(n: int, pairs: Sequence[tuple[int, int]] | np.ndarray, weights: Sequence[float]) -> list[int]:
    """The minimum spanning forest of the graph on `n` nodes with these weighted edges (`pairs`: (a, b) each, or
    an array of them by rows): its edges' indices in `pairs`, in the order Kruskal takes them."""
    parent = list(range(n))
    tree = []
    order = np.argsort(weights, kind="stable")  # stable: ties in the order sorted() leaves them
    ends = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)[order]
    for a, b, k in zip(ends[:, 0].tolist(), ends[:, 1].tolist(), order.tolist()):
        while parent[a] != a:  # find with path halving, inline: this loop is most of the work
            parent[a] = a = parent[parent[a]]
        while parent[b] != b:
            parent[b] = b = parent[parent[b]]
        if a != b:
            parent[a] = b
            tree.append(k)
            if len(tree) == n - 1:  # spanning: every edge left would close a cycle
                break
    return tree


# Layouts of fixed-map configs (`map_seed`), shared by every env of the process: drawing one is not cheap.
_PLAN_CACHE: dict[tuple[int, int, int, int, float], tuple[FloorPlan, frozenset[int]]] = {}


def fixed_floor_plan(cfg: SearchRescueConfig) -> tuple[FloorPlan, frozenset[int]]:
    """The layout and rubble of a fixed-map config (`map_seed` set), the same in every episode."""
    key = (cfg.width, cfg.height, cfg.complexity, cfg.map_seed, cfg.rubble_fraction)
    if key not in _PLAN_CACHE:
        rng = np.random.default_rng(cfg.map_seed)
        plan = generate_floor_plan(cfg.width, cfg.height, cfg.complexity, rng)
        plan.settle()  # it serves every episode
        _PLAN_CACHE[key] = (plan, frozenset(place_rubble(plan, cfg.rubble_fraction, rng)))
    return _PLAN_CACHE[key]


@lru_cache(maxsize=64)
def _most_rooms(width: int, height: int, complexity: int) -> int:
    max_side = min(SearchRescueConfig(width=width, height=height, complexity=complexity).max_room_side, max(width, height) - 3)
    most: dict[tuple[int, int], int] = {}

    def rooms(w: int, h: int) -> int:  # the most rooms `_partition` can leave in a w x h rectangle
        if (w, h) in most:
            return most[w, h]
        split_v, split_h = w > max_side and w >= 2 * MIN_ROOM + 1, h > max_side and h >= 2 * MIN_ROOM + 1
        best = 1
        if split_v and (not split_h or w >= h):
            best = max(rooms(a, h) + rooms(w - 1 - a, h) for a in range(MIN_ROOM, w - MIN_ROOM))
        if split_h and (not split_v or h >= w):
            best = max(best, max(rooms(w, b) + rooms(w, h - 1 - b) for b in range(MIN_ROOM, h - MIN_ROOM)))
        most[w, h] = best
        return best

    for w in range(1, width - 1):  # bottom up, so the recursion stays shallow
        for h in range(1, height - 1):
            rooms(w, h)
    return rooms(width - 2, height - 2)


def max_rooms(cfg: SearchRescueConfig) -> int:
    """The most rooms a map of this config can have: its layout's count for a fixed map, else the most
    that binary space partitioning can cut from `width x height` at this `complexity`."""
    if cfg.map_seed is not None:
        return len(fixed_floor_plan(cfg)[0].rooms)
    return _most_rooms(cfg.width, cfg.height, cfg.complexity)


def _assemble(grid: np.ndarray, names: Sequence[str], rects: Sequence[tuple[int, int, int, int]], doors: np.ndarray,
              hospital: int) -> FloorPlan:
    """The floor plan of these rooms (names, interiors) and doorways on `grid` (walls and room ids; the doorways'
    codes are written into it here, and it becomes the plan's read-only `grid`). `doors` has a column per doorway,
    in door order: its cell x, y, its rooms a, b and the cells next to it inside them, xa, ya, xb, yb."""
    height, width = grid.shape
    x, y, a, b = doors[:4]
    np.put(grid, y * width + x, np.arange(-2, -2 - doors.shape[1], -1))  # in door order
    grid.flags.writeable = False
    n, names, rects = len(rects), tuple(names), tuple(rects)
    return FloorPlan(width, height, grid, _OnDemand(n, partial(_room, names, rects)), names, rects,
                     _OnDemand(doors.shape[1], partial(_door, doors)), _OnDemand(n, partial(_doors_of, a, b)),
                     _OnDemand(n, partial(_exits_of, doors)), hospital)


# ---------------------------------------------------------------------- victims and rubble
@dataclass
class Victim:
    """A victim: where it lies (None while carried), its type, and what has happened to it."""

    id: int
    kind: str
    cell: tuple[int, int] | None
    room: int | None
    stabilized: bool = False
    carried_by: str | None = None
    rescued: bool = False

    @property
    def carryable(self) -> bool:
        return self.kind == STABLE or self.stabilized

    def status(self) -> str:
        return victim_status(self.kind, self.stabilized)


def victim_status(kind: str, stabilized: bool) -> str:
    """How a victim's state reads in views: stable, critical (stabilized), or critical needing the medic."""
    if kind == STABLE:
        return STABLE
    return "critical, stabilized" if stabilized else "critical, needs the medic"


def free_cells(plan: FloorPlan) -> int:
    """Floor cells outside the Hospital: where victims may lie."""
    return plan.floor_cells - _area(plan.rects[plan.hospital])


def place_victims(plan: FloorPlan, n: int, critical_fraction: float, rng: np.random.Generator) -> list[Victim]:
    """`n` victims on distinct floor cells outside the Hospital; round(n * critical_fraction) are critical."""
    # The free cells, numbered room by room (row-major inside a room), are never listed: a spot's
    # number is turned into its cell, so placing costs the same on a map of any size.
    areas = [(x1 - x0 + 1) * (y1 - y0 + 1) for x0, y0, x1, y1 in plan.rects]  # `_area`, without a call per room
    del areas[plan.hospital]
    ends = list(accumulate(areas))
    n_free = ends[-1] if ends else 0
    if n > n_free:
        raise ConfigError(f"n_victims={n} does not fit: this map has {n_free} floor cells outside the Hospital "
                          "(lower n_victims, or use a larger map or a lower complexity)")
    spots = rng.choice(n_free, size=n, replace=False)
    critical = set(int(i) for i in rng.choice(n, size=round(n * critical_fraction), replace=False))
    victims = []
    for i, spot in enumerate(spots.tolist()):
        k = bisect_right(ends, spot)
        room, offset = k + (k >= plan.hospital), spot - (ends[k - 1] if k else 0)  # the Hospital left out
        x0, y0, x1, _ = plan.rects[room]
        dy, dx = divmod(offset, x1 - x0 + 1)
        victims.append(Victim(i + 1, CRITICAL if i in critical else STABLE, (x0 + dx, y0 + dy), room))
    return victims


def place_rubble(plan: FloorPlan, fraction: float, rng: np.random.Generator) -> set[int]:
    """Door ids blocked by rubble: round(fraction * doors), never a doorway of the Hospital."""
    eligible = list(range(len(plan.doors)))
    for d in reversed(plan.room_doors[plan.hospital]):  # the highest first: each lower one is still at its index
        del eligible[d]
    n = min(len(eligible), round(fraction * len(plan.doors)))
    return set(rng.choice(eligible, size=n, replace=False).tolist()) if n else set()


def floor_plan_from_text(text: str, names: list[str] | None = None) -> tuple[FloorPlan, list[Victim], set[int]]:
    """A hand-drawn map: '#' wall, '.' floor, 'h' Hospital floor, '+' doorway, 'X' doorway with rubble,
    's' / 'C' a stable / critical victim on a floor cell (numbered in reading order).

    Rooms are the rectangles of floor cells between walls, numbered in reading order of their
    top-left cell and named from `names` (default "Room 1", "Room 2", ...; the Hospital is
    always "Hospital"). Raises ConfigError when the drawing is not a valid map.
    """
    rows = [line.rstrip("\n") for line in text.strip("\n").splitlines()]
    if not rows or len({len(r) for r in rows}) != 1:
        raise ConfigError("a map drawing must be a non-empty rectangle of characters")
    height, width = len(rows), len(rows[0])
    bad = {ch for r in rows for ch in r} - set("#.h+XsC")
    if bad:
        raise ConfigError(f"unknown map characters {excerpt(sorted(bad))}; use # . h + X s C")
    floor = lambda x, y: 0 <= x < width and 0 <= y < height and rows[y][x] in ".hsC"  # noqa: E731
    cells = [WALL] * (width * height)
    rects: list[tuple[int, int, int, int]] = []
    seen: set[tuple[int, int]] = set()
    for y in range(height):
        for x in range(width):
            if floor(x, y) and (x, y) not in seen:
                x1 = x
                while floor(x1 + 1, y):
                    x1 += 1
                y1 = y
                while all(floor(i, y1 + 1) for i in range(x, x1 + 1)):
                    y1 += 1
                block = {(i, j) for j in range(y, y1 + 1) for i in range(x, x1 + 1)}
                rim = {(i, j) for (i, j) in block for (di, dj) in DIRECTIONS.values() if floor(i + di, j + dj) and (i + di, j + dj) not in block}
                if rim:
                    raise ConfigError(f"the room with top-left cell ({x},{y}) is not a rectangle")
                rid = len(rects)
                rects.append((x, y, x1, y1))
                seen |= block
                for i, j in block:
                    cells[j * width + i] = rid
    hospital = {cells[y * width + x] for y in range(height) for x in range(width) if rows[y][x] == "h"}
    if len(hospital) != 1:
        raise ConfigError("mark exactly one room as the Hospital with 'h' cells")
    labels = list(names) if names is not None else [f"Room {i}" for i in range(1, len(rects))]
    hosp = hospital.pop()
    if len(labels) != len(rects) - 1:
        raise ConfigError(f"{len(rects) - 1} rooms besides the Hospital, but {len(labels)} names")
    labels.insert(hosp, HOSPITAL)
    lowered = [name.lower() for name in labels]
    if len(set(lowered)) != len(lowered):
        raise ConfigError(f"room names must be unique (ignoring case), and none may be '{HOSPITAL}': got {excerpt(labels)}")
    doors: list[tuple[int, ...]] = []  # x, y, rooms a, b, their entries' xa, ya, xb, yb (see `_assemble`)
    rubble: set[int] = set()
    for y in range(height):
        for x in range(width):
            if rows[y][x] not in "+X":
                continue
            for a, b in (((x - 1, y), (x + 1, y)), ((x, y - 1), (x, y + 1))):
                if floor(*a) and floor(*b):
                    doors.append((x, y, cells[a[1] * width + a[0]], cells[b[1] * width + b[0]], *a, *b))
                    if rows[y][x] == "X":
                        rubble.add(len(doors) - 1)
                    break
            else:
                raise ConfigError(f"the doorway at ({x},{y}) does not join two rooms")
    table = np.array(doors, dtype=np.int64).reshape(-1, 8).T
    plan = _assemble(np.array(cells, dtype=np.int64).reshape(height, width), labels, rects, table, hosp)
    import networkx as nx  # here, not at the top: making the env need not load networkx

    if not nx.is_connected(plan.graph):
        raise ConfigError("every room must be reachable from the Hospital through doorways ('+' or 'X')")
    victims = []
    for y in range(height):
        for x in range(width):
            if rows[y][x] in "sC":
                if cells[y * width + x] == hosp:
                    raise ConfigError(f"the victim at ({x},{y}) is inside the Hospital; victims lie in other rooms")
                victims.append(Victim(len(victims) + 1, STABLE if rows[y][x] == "s" else CRITICAL, (x, y), cells[y * width + x]))
    return plan, victims, rubble
