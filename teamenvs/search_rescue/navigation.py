"""Navigation on what an agent knows: shortest known routes between cells and rooms (VIRT-LAB's navigation cues).

Rooms are open rectangles, so within a room the walking distance between two cells is their
Manhattan distance, and a route is a chain of doorways. Routes are found with Dijkstra over
doorways, using only the doorways of rooms the agent has mapped (visited, or been told
about, or all of them under `full_map`) and avoiding doorways it knows to be blocked by
rubble. A route ends on the first cell inside the target room (or next to a target cell).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import AbstractSet

from teamenvs.search_rescue.world import FloorPlan

Cell = tuple[int, int]


def manhattan(a: Cell, b: Cell) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def straight_path(src: Cell, dst: Cell) -> list[Cell]:
    """The cells after `src` up to `dst` inside one room: along x first, then along y."""
    (x, y), (tx, ty) = src, dst
    cells = []
    while x != tx:
        x += 1 if tx > x else -1
        cells.append((x, y))
    while y != ty:
        y += 1 if ty > y else -1
        cells.append((x, y))
    return cells


@dataclass(frozen=True)
class RouteMap:
    """Shortest known walking distances from one cell to every reachable known room.

    `rooms[r] = (cells, door)`: the steps to the first cell inside room r, and the doorway
    the route enters it by (None for the room the agent stands in). `doors[d] = (cells,
    previous door or None, room crossed to reach d)` lets routes be rebuilt.
    """

    start: Cell
    start_room: int | None
    rooms: dict[int, tuple[int, int | None]]
    doors: dict[int, tuple[int, int | None, int | None]]


def route_map(plan: FloorPlan, start: Cell, mapped: AbstractSet[int], blocked: AbstractSet[int]) -> RouteMap:
    """Dijkstra over doorways from `start`, through mapped rooms, avoiding doorways in `blocked`."""
    rooms: dict[int, tuple[int, int | None]] = {}
    doors: dict[int, tuple[int, int | None, int | None]] = {}
    heap: list[tuple[int, int, int | None, int | None]] = []
    here = plan.room_at(start)
    door_here = plan.door_at(start)
    if here is not None:
        rooms[here] = (0, None)
        for d, entry, _ in plan.exits[here]:
            if d not in blocked:
                heapq.heappush(heap, (manhattan(start, entry) + 1, d, None, here))
    elif door_here is not None:
        heapq.heappush(heap, (0, door_here, None, None))
    while heap:
        cost, d, prev, via = heapq.heappop(heap)
        if d in doors:
            continue
        doors[d] = (cost, prev, via)
        door = plan.doors[d]
        for r in door.rooms:
            if r == via:
                continue
            if r not in rooms or rooms[r][0] > cost + 1:
                rooms[r] = (cost + 1, d)
            if r not in mapped:
                continue
            entry = door.entry(r)
            for d2, entry2, _ in plan.exits[r]:
                if d2 != d and d2 not in doors and d2 not in blocked:
                    heapq.heappush(heap, (cost + 2 + manhattan(entry, entry2), d2, d, r))
    return RouteMap(start, here, rooms, doors)


def door_chain(routes: RouteMap, room: int) -> list[int]:
    """The doorways crossed, in order, on the shortest known route into `room`."""
    chain: list[int] = []
    d = routes.rooms[room][1]
    while d is not None:
        chain.append(d)
        d = routes.doors[d][1]
    chain.reverse()
    return chain


def legs(routes: RouteMap, room: int) -> list[tuple[int, int]]:
    """(doorway, room entered through it) for each doorway on the shortest known route into `room`."""
    chain = door_chain(routes, room)
    return [(d, routes.doors[chain[i + 1]][2] if i + 1 < len(chain) else room) for i, d in enumerate(chain)]


def route_rooms(routes: RouteMap, room: int) -> list[int]:
    """The rooms entered on the way to `room`, ending with it."""
    return [entered for _, entered in legs(routes, room)]


def cell_path(plan: FloorPlan, routes: RouteMap, room: int, target: Cell | None = None) -> list[Cell]:
    """The cells walked (after the start) along the shortest known route into `room`, then on to `target` inside it."""
    pos, current = routes.start, routes.start_room
    path: list[Cell] = []
    for d, entered in legs(routes, room):
        door = plan.doors[d]
        if current is not None:  # else the walk starts on this doorway
            path += straight_path(pos, door.entry(current))
            path.append(door.cell)
        pos, current = door.entry(entered), entered
        path.append(pos)
    if target is not None:
        path += straight_path(pos, target)
    return path
