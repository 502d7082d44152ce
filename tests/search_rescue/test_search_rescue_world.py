"""`search_rescue_v0` world: BSP floor plans, victims and rubble, checked as properties over many seeds.

Every generated map must be a `width x height` grid bordered by walls, split into
rectangular rooms (floor cells with walls around them) with unique names and exactly one
Hospital; doorways are single wall cells joining two different rooms, and the room graph is
connected, so every victim can be reached from the Hospital once rubble is cleared (checked
by a breadth-first search over cells, independent of the room graph). Rubble blocks
round(rubble_fraction * doors) doorways, never one of the Hospital's; victims lie on
distinct floor cells outside the Hospital, round(n * critical_fraction) of them critical.
More complexity means more (smaller) rooms. Everything is a function of the generator's
seed, and the easy / medium / hard presets keep one layout for every reset seed while the
victims change.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections import deque

import networkx as nx
import numpy as np
import pytest

import teamenvs
from teamenvs.core.config import ConfigError
from teamenvs.search_rescue.world import (
    CRITICAL,
    HOSPITAL,
    STABLE,
    WALL,
    Door,
    FloorPlan,
    Room,
    floor_plan_from_text,
    generate_floor_plan,
    place_rubble,
    place_victims,
)

SEEDS = range(40)
SHAPES = [(10, 10, 1), (10, 10, 10), (30, 30, 5), (47, 23, 3), (23, 61, 8), (100, 100, 1), (100, 100, 10)]


def plan_for(width: int, height: int, complexity: int, seed: int) -> FloorPlan:
    return generate_floor_plan(width, height, complexity, np.random.default_rng(seed))


def reachable_cells(plan: FloorPlan, start: tuple[int, int], blocked_doors: frozenset[int] = frozenset()) -> set[tuple[int, int]]:
    """Cells reachable from `start` by 4-neighbour steps over floor and doorways (minus blocked doorways)."""
    seen = {start}
    todo = deque([start])
    while todo:
        x, y = todo.popleft()
        for nxt in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if nxt in seen or plan.code(nxt) == WALL or plan.door_at(nxt) in blocked_doors:
                continue
            seen.add(nxt)
            todo.append(nxt)
    return seen


def hospital_centre(plan: FloorPlan) -> tuple[int, int]:
    h = plan.rooms[plan.hospital]
    return ((h.x0 + h.x1) // 2, (h.y0 + h.y1) // 2)


def check_plan(plan: FloorPlan, width: int, height: int) -> None:
    """The structural invariants every floor plan must satisfy."""
    assert (plan.width, plan.height) == (width, height)
    assert len(plan.cells) == width * height
    # a wall all around the grid
    for x in range(width):
        assert plan.code((x, 0)) == WALL and plan.code((x, height - 1)) == WALL
    for y in range(height):
        assert plan.code((0, y)) == WALL and plan.code((width - 1, y)) == WALL
    # rooms: rectangles of their own floor cells inside the grid, walled (or doored) all round
    assert len(plan.rooms) >= 2
    for i, room in enumerate(plan.rooms):
        assert room.id == i
        assert 1 <= room.x0 <= room.x1 <= width - 2 and 1 <= room.y0 <= room.y1 <= height - 2
        for y in range(room.y0, room.y1 + 1):
            for x in range(room.x0, room.x1 + 1):
                assert plan.code((x, y)) == room.id
        ring = [(x, room.y0 - 1) for x in range(room.x0, room.x1 + 1)] + [(x, room.y1 + 1) for x in range(room.x0, room.x1 + 1)]
        ring += [(room.x0 - 1, y) for y in range(room.y0, room.y1 + 1)] + [(room.x1 + 1, y) for y in range(room.y0, room.y1 + 1)]
        for cell in ring:
            door = plan.door_at(cell)
            assert plan.code(cell) == WALL or (door is not None and room.id in plan.doors[door].rooms), (room, cell)
    # every floor cell belongs to exactly one room's rectangle
    assert sum(1 for c in plan.cells if c >= 0) == plan.floor_cells
    # names: unique, one Hospital, at plan.hospital
    names = [r.name for r in plan.rooms]
    assert len(set(names)) == len(names)
    assert names.count(HOSPITAL) == 1 and plan.rooms[plan.hospital].name == HOSPITAL
    # doorways: one wall cell between two different rooms, entries on opposite sides
    for i, door in enumerate(plan.doors):
        assert door.id == i and plan.door_at(door.cell) == i
        a, b = door.rooms
        assert a != b
        (ax, ay), (bx, by) = door.entries
        assert plan.room_at((ax, ay)) == a and plan.room_at((bx, by)) == b
        assert (ax + bx) / 2 == door.cell[0] and (ay + by) / 2 == door.cell[1]
        assert abs(ax - bx) + abs(ay - by) == 2
        assert i in plan.room_doors[a] and i in plan.room_doors[b]
    assert sum(1 for c in plan.cells if c <= -2) == len(plan.doors)
    # the room graph: one node per room, one edge per doorway, connected
    assert set(plan.graph.nodes) == set(range(len(plan.rooms)))
    assert all(plan.graph.nodes[r.id]["name"] == r.name for r in plan.rooms)
    assert nx.is_connected(plan.graph)
    # and connected on the cells too: from the Hospital every floor cell can be walked to
    assert len(reachable_cells(plan, hospital_centre(plan))) == plan.floor_cells + len(plan.doors)


@pytest.mark.parametrize("width,height,complexity", SHAPES)
def test_generated_plans_are_valid_over_many_seeds(width, height, complexity):
    for seed in SEEDS:
        check_plan(plan_for(width, height, complexity, seed), width, height)


@pytest.mark.parametrize("width,height,complexity", SHAPES)
def test_victims_and_rubble_over_many_seeds(width, height, complexity):
    for seed in SEEDS:
        plan = plan_for(width, height, complexity, seed)
        rng = np.random.default_rng(1000 + seed)
        rubble = place_rubble(plan, 0.15, rng)
        outside = plan.floor_cells - plan.rooms[plan.hospital].area
        n = min(35, outside)
        victims = place_victims(plan, n, 0.2, rng)
        # rubble: the right number of doorways, never the Hospital's own
        eligible = [d for d in plan.doors if plan.hospital not in d.rooms]
        assert len(rubble) == min(len(eligible), round(0.15 * len(plan.doors)))
        assert all(plan.hospital not in plan.doors[d].rooms for d in rubble)
        # victims: numbered 1..n, on distinct floor cells outside the Hospital, the right share critical
        assert [v.id for v in victims] == list(range(1, n + 1))
        assert len({v.cell for v in victims}) == n
        for v in victims:
            assert v.room is not None and plan.room_at(v.cell) == v.room != plan.hospital
            assert v.kind in (STABLE, CRITICAL) and not v.stabilized and not v.rescued and v.carried_by is None
        assert sum(v.kind == CRITICAL for v in victims) == round(n * 0.2)
        # every victim can be reached from the Hospital once the rubble is cleared ...
        open_cells = reachable_cells(plan, hospital_centre(plan))
        assert all(v.cell in open_cells for v in victims)
        # ... and the Hospital's doorways are open even with the rubble in place
        with_rubble = reachable_cells(plan, hospital_centre(plan), frozenset(rubble))
        assert all(plan.doors[d].cell in with_rubble for d in plan.room_doors[plan.hospital])


def test_rubble_count_is_capped_by_eligible_doors():
    # 10x10 maps have 3 to 5 doorways, some of them the Hospital's: asking for all of them
    # gives every doorway not touching the Hospital and no more.
    for seed in SEEDS:
        plan = plan_for(10, 10, 5, seed)
        rubble = place_rubble(plan, 1.0, np.random.default_rng(seed))
        assert rubble == {d.id for d in plan.doors if plan.hospital not in d.rooms}
        assert place_rubble(plan, 0.0, np.random.default_rng(seed)) == set()


def test_critical_count_rounds_the_fraction():
    plan = plan_for(40, 40, 5, 0)
    for n, fraction, critical in ((35, 0.2, 7), (10, 0.25, 2), (10, 0.35, 4), (1, 1.0, 1), (20, 0.0, 0), (3, 0.5, 2)):
        victims = place_victims(plan, n, fraction, np.random.default_rng(n))
        assert sum(v.kind == CRITICAL for v in victims) == critical == round(n * fraction)


def test_too_many_victims_for_the_map_is_a_config_error():
    plan = plan_for(10, 10, 5, 0)
    outside = plan.floor_cells - plan.rooms[plan.hospital].area
    assert len(place_victims(plan, outside, 0.2, np.random.default_rng(0))) == outside  # exactly full is fine
    with pytest.raises(ConfigError, match="does not fit"):
        place_victims(plan, outside + 1, 0.2, np.random.default_rng(0))


def test_more_complexity_gives_more_rooms_on_average():
    for width, height in ((30, 30), (50, 50), (100, 100)):
        means = [np.mean([len(plan_for(width, height, c, s).rooms) for s in range(20)]) for c in (1, 4, 7, 10)]
        assert means == sorted(means) and means[0] < means[-1], (width, height, means)


def test_complexity_shrinks_rooms():
    # every room side is at least 3 cells and within the complexity's bound (16 cells at
    # complexity 1, 11 at 5; at 10 only rooms too small to split in two 3-cell rooms remain: 6)
    for complexity, bound in ((1, 16), (5, 11), (10, 6)):
        for seed in range(10):
            for r in plan_for(60, 60, complexity, seed).rooms:
                assert 3 <= r.x1 - r.x0 + 1 <= bound and 3 <= r.y1 - r.y0 + 1 <= bound


def test_generation_is_deterministic_per_seed():
    for width, height, complexity in SHAPES[:5]:
        for seed in range(5):
            a, b = plan_for(width, height, complexity, seed), plan_for(width, height, complexity, seed)
            assert a.cells == b.cells and a.to_json() == b.to_json()
            assert place_rubble(a, 0.15, np.random.default_rng(seed)) == place_rubble(b, 0.15, np.random.default_rng(seed))
            va = place_victims(a, 20, 0.2, np.random.default_rng(seed))
            vb = place_victims(b, 20, 0.2, np.random.default_rng(seed))
            assert [(v.cell, v.kind) for v in va] == [(v.cell, v.kind) for v in vb]
    layouts = {plan_for(30, 30, 5, seed).cells for seed in range(10)}
    assert len(layouts) == 10  # and different seeds give different maps


# ---------------------------------------------------------------------- presets through the env
def world(env) -> dict:
    return {**env.plan.to_json(), "rubble": sorted(env.rubble)}


@pytest.mark.parametrize("preset,side", [("easy", 30), ("medium", 40), ("hard", 50)])
def test_presets_fix_the_layout_but_not_the_victims(preset, side):
    env = teamenvs.make("search_rescue_v0", preset=preset)
    env.reset(seed=0)
    assert (env.plan.width, env.plan.height) == (side, side)
    check_plan(env.plan, side, side)
    first, victims = world(env), [(v.cell, v.kind) for v in env.victims]
    seen_victims = {tuple(victims)}
    for seed in (1, 2, 3):
        env.reset(seed=seed)
        assert world(env) == first
        seen_victims.add(tuple((v.cell, v.kind) for v in env.victims))
    assert len(seen_victims) == 4  # victims are placed anew for every seed
    other = teamenvs.make("search_rescue_v0", preset=preset)
    other.reset(seed=99)
    assert world(other) == first
    env.reset(seed=0)
    assert [(v.cell, v.kind) for v in env.victims] == victims  # and the same seed gives the same victims


def test_preset_layouts_differ_by_size_and_map_seed():
    layouts = set()
    for preset in ("easy", "medium", "hard"):
        env = teamenvs.make("search_rescue_v0", preset=preset)
        env.reset(seed=0)
        layouts.add(env.plan.cells)
    env = teamenvs.make("search_rescue_v0", preset="easy", map_seed=31)
    env.reset(seed=0)
    layouts.add(env.plan.cells)
    assert len(layouts) == 4


def test_without_map_seed_the_layout_follows_the_reset_seed():
    env = teamenvs.make("search_rescue_v0")
    env.reset(seed=5)
    a = world(env)
    env.reset(seed=6)
    b = world(env)
    env.reset(seed=5)
    assert world(env) == a != b


def test_cleared_rubble_comes_back_on_reset_with_a_fixed_map():
    # the preset's map (and its rubble) is shared across resets: clearing it must not leak into the next episode
    env = teamenvs.make("search_rescue_v0", preset="hard")
    env.reset(seed=0)
    rubble = set(env.rubble)
    assert rubble
    env.rubble.clear()
    env.reset(seed=1)
    assert env.rubble == rubble
    fresh = teamenvs.make("search_rescue_v0", preset="hard")
    fresh.reset(seed=2)
    assert fresh.rubble == rubble


# ---------------------------------------------------------------------- hand-drawn maps
DRAWN = """
#############
#hhh#...#...#
#hhh+.s.X.C.#
#hhh#...#...#
#####+#######
#...s.......#
#############
"""


def test_floor_plan_from_text():
    plan, victims, rubble = floor_plan_from_text(DRAWN, ["Lab", "Vault", "Hall"])
    assert [r.name for r in plan.rooms] == [HOSPITAL, "Lab", "Vault", "Hall"]
    assert plan.hospital == 0 and plan.rooms[0].area == 9
    assert [(r.x0, r.y0, r.x1, r.y1) for r in plan.rooms] == [(1, 1, 3, 3), (5, 1, 7, 3), (9, 1, 11, 3), (1, 5, 11, 5)]
    assert [(d.cell, d.rooms) for d in plan.doors] == [((4, 2), (0, 1)), ((8, 2), (1, 2)), ((5, 4), (1, 3))]
    assert rubble == {1}
    assert [(v.id, v.kind, v.cell, v.room) for v in victims] == [(1, STABLE, (6, 2), 1), (2, CRITICAL, (10, 2), 2), (3, STABLE, (4, 5), 3)]
    assert nx.is_connected(plan.graph)
    default_names = floor_plan_from_text(DRAWN)[0]
    assert [r.name for r in default_names.rooms] == [HOSPITAL, "Room 1", "Room 2", "Room 3"]


@pytest.mark.parametrize(
    "text,names,message",
    [
        ("#####\n#hh#\n#####", None, "rectangle of characters"),
        ("#####\n#h?.#\n#####", None, "unknown map characters"),
        ("######\n#..+.#\n######", None, "Hospital"),
        ("########\n#hh+#..#\n########", ["A"], "does not join two rooms"),
        ("#######\n#hh+..#\n#######", ["A", "B"], "names"),
        ("######\n#hhh.#\n#hh###\n######", None, "not a rectangle"),
    ],
)
def test_bad_drawings_are_config_errors(text, names, message):
    with pytest.raises(ConfigError, match=message):
        floor_plan_from_text(text, names)


CORRIDOR = """
#############
#hhh+...+...#
#############
"""


@pytest.mark.parametrize("names", [["Lab", "lab"], ["Lab", "Lab"], [HOSPITAL, "Lab"], ["Lab", "hospital"]])
def test_drawn_room_names_must_be_unique(names):
    # the env finds rooms by name, case-insensitively: two rooms of one name cannot both be reached by `go to`
    with pytest.raises(ConfigError, match="name"):
        floor_plan_from_text(CORRIDOR, names)


def test_drawn_map_must_be_connected():
    # a room no doorway leads to holds victims nobody can ever reach
    walled_off = """
#########
#hhh#...#
#hhh#.s.#
#hhh#...#
#########
"""
    with pytest.raises(ConfigError):
        floor_plan_from_text(walled_off)


# ---------------------------------------------------------------------- the size-independent pieces of a reset
def test_doorway_candidates_equal_a_cell_by_cell_scan():
    """The vectorised scan finds the same cells, per pair, in the same (row-major, west-east first) order."""
    from teamenvs.search_rescue.world import _doorway_candidates

    for width, height, complexity in SHAPES:
        for seed in range(5):
            plan = plan_for(width, height, complexity, seed)
            grid = np.array([c if c >= -1 else WALL for c in plan.cells]).reshape(height, width)  # doorways back to walls
            expected: dict[tuple[int, int], list[int]] = {}
            for y in range(1, height - 1):
                for x in range(1, width - 1):
                    if grid[y, x] != WALL:
                        continue
                    for a, b in ((grid[y, x - 1], grid[y, x + 1]), (grid[y - 1, x], grid[y + 1, x])):
                        if a >= 0 and b >= 0 and a != b:
                            expected.setdefault((int(min(a, b)), int(max(a, b))), []).append(y * width + x)
            c = _doorway_candidates(grid)
            pairs = list(zip(c.lo.tolist(), c.hi.tolist()))
            found = {pair: c.cells[s:s + n].tolist() for pair, s, n in zip(pairs, c.start.tolist(), c.count.tolist())}
            assert pairs == sorted(found)
            assert found == expected
            for door in plan.doors:  # every doorway the plan chose is one of its pair's candidates
                assert door.cell[1] * width + door.cell[0] in found[door.rooms]


def reference_plan(width: int, height: int, complexity: int, rng: np.random.Generator) -> dict:
    """The floor plan as the module docstring says it is drawn, in plain loops over cells and networkx's Kruskal,
    with the draws in the generator's order: the partition, one weight per adjacent pair (sorted), one draw per
    spare pair (extra door or not), the Hospital, the names, then one doorway cell per joined pair (sorted)."""
    from teamenvs.search_rescue.world import _layout_config, _partition, room_names

    cfg = _layout_config(width, height, complexity)
    rects: list = []
    _partition((1, 1, width - 2, height - 2), min(cfg.max_room_side, max(width, height) - 3), rng, rects)
    cells = [WALL] * (width * height)
    for rid, (x0, y0, x1, y1) in enumerate(rects):
        for y in range(y0, y1 + 1):
            for x in range(x0, x1 + 1):
                cells[y * width + x] = rid
    candidates: dict = {}
    for y in range(1, height - 1):
        for x in range(1, width - 1):
            if cells[y * width + x] == WALL:
                for a, b in ((cells[y * width + x - 1], cells[y * width + x + 1]), (cells[(y - 1) * width + x], cells[(y + 1) * width + x])):
                    if a >= 0 and b >= 0 and a != b:
                        candidates.setdefault((min(a, b), max(a, b)), []).append((x, y))
    pairs = sorted(candidates)
    graph = nx.Graph()
    graph.add_nodes_from(range(len(rects)))
    graph.add_weighted_edges_from((a, b, w) for (a, b), w in zip(pairs, rng.random(len(pairs))))
    chosen = {tuple(sorted(e)) for e in nx.minimum_spanning_edges(graph, algorithm="kruskal", data=False)}
    spare = [pair for pair in pairs if pair not in chosen]
    chosen |= {pair for pair, u in zip(spare, rng.random(len(spare))) if u < cfg.extra_door_probability}
    hospital = int(rng.choice([i for i, (x0, y0, x1, y1) in enumerate(rects) if (x1 - x0 + 1) * (y1 - y0 + 1) >= 9] or [0]))
    names = room_names(len(rects) - 1, rng)
    names.insert(hospital, HOSPITAL)
    joined = sorted(chosen)
    doors = []
    for pair, pick in zip(joined, rng.integers([len(candidates[pair]) for pair in joined])):
        x, y = candidates[pair][pick]
        across = cells[y * width + x - 1] in pair and cells[y * width + x + 1] in pair
        sides = ((x - 1, y), (x + 1, y)) if across else ((x, y - 1), (x, y + 1))
        entry_a = sides[0] if cells[sides[0][1] * width + sides[0][0]] == pair[0] else sides[1]
        doors.append(((x, y), pair, (entry_a, sides[1] if entry_a == sides[0] else sides[0])))
    for i, (cell, _, _) in enumerate(doors):
        cells[cell[1] * width + cell[0]] = -2 - i
    return {"cells": tuple(cells), "hospital": hospital, "doors": doors,
            "rooms": [(i, names[i], *rect) for i, rect in enumerate(rects)],
            "room_doors": tuple(tuple(i for i, (_, pair, _) in enumerate(doors) if r in pair) for r in range(len(rects)))}


@pytest.mark.parametrize("width,height,complexity", SHAPES)
def test_generated_plans_equal_the_reference_drawing(width, height, complexity):
    """The vectorised generator draws the same plans as `reference_plan` from the same generator state, and
    leaves the generator where the reference leaves it (victims and rubble are drawn next)."""
    for seed in range(8):
        fast, slow = np.random.default_rng(seed), np.random.default_rng(seed)
        plan, expected = generate_floor_plan(width, height, complexity, fast), reference_plan(width, height, complexity, slow)
        assert plan.cells == expected["cells"] and plan.hospital == expected["hospital"]
        assert [(r.id, r.name, r.x0, r.y0, r.x1, r.y1) for r in plan.rooms] == expected["rooms"]
        assert [(d.cell, d.rooms, d.entries) for d in plan.doors] == expected["doors"]
        assert plan.room_doors == expected["room_doors"]
        assert plan.grid.ravel().tolist() == list(plan.cells) and not plan.grid.flags.writeable
        assert fast.bit_generator.state == slow.bit_generator.state


@pytest.mark.parametrize("cls,values", [(Room, (1, "Lab", 1, 2, 3, 4)), (Door, (0, (4, 2), (0, 1), ((3, 2), (5, 2))))])
def test_rooms_and_doors_take_and_set_exactly_their_fields(cls, values):
    """Room and Door have their own __init__ (the frozen dataclass's looks object.__setattr__ up per field): it
    takes the dataclass fields in order and sets each, and the instances stay frozen, equal by value and hashable."""
    names = [f.name for f in dataclasses.fields(cls)]
    assert list(inspect.signature(cls.__init__).parameters)[1:] == names
    made = cls(*values)
    assert vars(made) == dict(zip(names, values)) and made == cls(**dict(zip(names, values)))
    assert hash(made) == hash(dataclasses.replace(made)) and repr(made).startswith(f"{cls.__name__}({names[0]}=")
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, names[0], 5)


def test_kruskal_gives_networkx_minimum_spanning_tree():
    from teamenvs.search_rescue.world import _kruskal

    rng = np.random.default_rng(3)
    for n in (2, 5, 30, 120):
        pairs = sorted({tuple(sorted(map(int, rng.choice(n, size=2, replace=False)))) for _ in range(3 * n)})
        weights = [float(w) for w in rng.random(len(pairs))]
        graph = nx.Graph()
        graph.add_nodes_from(range(n))
        graph.add_weighted_edges_from((a, b, w) for (a, b), w in zip(pairs, weights))
        expected = {tuple(sorted(e)) for e in nx.minimum_spanning_edges(graph, algorithm="kruskal", data=False)}
        assert {pairs[k] for k in _kruskal(n, pairs, weights)} == expected


def test_victims_are_drawn_from_the_listed_free_cells():
    """Placing by spot number equals drawing from the list of free cells (room by room, row-major)."""
    for width, height, complexity in SHAPES[:5]:
        plan = plan_for(width, height, complexity, 1)
        free = [(x, y) for r in plan.rooms if r.id != plan.hospital for y in range(r.y0, r.y1 + 1) for x in range(r.x0, r.x1 + 1)]
        for seed in range(5):
            victims = place_victims(plan, 12, 0.5, np.random.default_rng(seed))
            rng = np.random.default_rng(seed)
            spots = rng.choice(len(free), size=12, replace=False)
            assert [v.cell for v in victims] == [free[int(s)] for s in spots]
            assert all(v.room == plan.room_at(v.cell) for v in victims)


def test_room_names_in_messages_are_found_as_with_a_pattern_of_the_maps_own_names():
    """One pattern of every generated name, filtered by the map, finds exactly the map's names: this holds
    because no generated name can start inside another, which the word lists must keep true."""
    import re

    from teamenvs.search_rescue.knowledge import _names_pattern, mentioned_rooms, room_pattern
    from teamenvs.search_rescue.world import _PLACES, _QUALIFIERS

    place_words = {w.lower() for p in _PLACES for w in p.split()}
    assert not place_words & {q.lower() for q in _QUALIFIERS} and HOSPITAL.lower() not in place_words
    assert not any(a != b and b.lower().startswith(a.lower() + " ") for a in _PLACES for b in _PLACES)
    rng = np.random.default_rng(0)
    words = [*_QUALIFIERS, *(w for p in _PLACES for w in p.split()), HOSPITAL, "the", "and", "victim", "7"]
    for seed in range(20):
        plan = plan_for(60, 60, 5, seed)
        ids = {r.name.lower(): r.id for r in plan.rooms}
        names = [r.name for r in plan.rooms]
        own = _names_pattern(names)
        for _ in range(50):
            parts = [str(rng.choice(words)) if rng.random() < 0.7 else str(rng.choice(names)) for _ in range(12)]
            text = re.sub(" ", lambda m: str(rng.choice([" ", "  ", "\n", ", "])), " ".join(parts))
            text = text.upper() if rng.random() < 0.2 else text
            assert mentioned_rooms(text, room_pattern(plan), ids) == mentioned_rooms(text, own, ids), text
    custom, _, _ = floor_plan_from_text("#######\n#hh#..#\n#hh+..#\n#######", names=["Attic Nook"])
    assert room_pattern(custom).pattern != room_pattern(plan).pattern  # names outside the word lists: the map's own pattern


def test_a_100x100_reset_costs_a_few_30x30_resets_not_the_area_ratio():
    """Before the reset was made size-independent where it can be, a 100x100 reset (11x the cells, 10x
    the rooms) cost 7-10x a 30x30 one; then about 3x (the rooms themselves are drawn one by one), and about 1.9x
    since rooms and doorways are made when read (`world.FloorPlan`). Measured in one run, CPU time, medians of
    interleaved resets, with a margin for a loaded machine."""
    import statistics
    import time

    envs = {side: teamenvs.make("search_rescue_v0", width=side, height=side) for side in (30, 100)}
    times: dict[int, list[float]] = {30: [], 100: []}
    for seed in range(25):
        for side, env in envs.items():
            t0 = time.process_time()
            env.reset(seed=seed)
            times[side].append(time.process_time() - t0)
    ratio = statistics.median(times[100]) / statistics.median(times[30])
    assert ratio < 7.0, f"100x100 reset {ratio:.1f}x a 30x30 one"
