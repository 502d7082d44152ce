"""Map Task text: each player's view (its own map as a letter grid, its landmarks, the drawing where
it may see it), the observation rendered from a view alone, the frame of the true state, the
briefings, and the sentences of refusals; and the numeric observation of a view (`features`,
`encode`; docs/rl/map_task_v0.md has the feature table).
"""

from __future__ import annotations

from functools import lru_cache
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Iterable, Mapping

import numpy as np

from teamenvs.core.env import LAST_ACTION, LAST_ACTION_REJECTED
from teamenvs.core.rl import Feature, feature_bounds
from teamenvs.core.view import footer
from teamenvs.map_task.commands import MESSAGE_KINDS, latest_message, read_message, trail_of
from teamenvs.map_task.config import MapTaskConfig, sizes
from teamenvs.map_task.maps import Landmark, MapPair
from teamenvs.map_task.rules import FOLLOWER, GUIDE, Refusal, landmarks_of
from teamenvs.map_task.scoring import Cell, Edge, drawn_cells

if TYPE_CHECKING:
    from teamenvs.map_task.env import MapTaskEnv

GUIDE_CANNOT_DRAW = "only the follower draws; as the guide you describe the route with 'say'"
NOTHING_TO_UNDO = "there is nothing to undo yet"
NOTHING_DRAWN = "nothing is drawn yet"
DONE = "the follower said it is done"
NO_COORDINATES = (
    "in this condition messages may not refer to grid coordinates (rows, columns, cell or coordinate "
    "numbers); describe the route with the landmarks and directions (north, south, east, west)"
)

_LETTERS = "abcdeghijklmnpqrtuvwxyz"  # no s, f or o: S, F and o mark the start, finish and drawing


def letters(landmarks: tuple[Landmark, ...]) -> dict[str, str]:
    """A map letter per landmark name (each map its own): upper case for obstacles, lower case otherwise."""
    out = {}
    for i, lm in enumerate(landmarks):
        ch = _LETTERS[i] if i < len(_LETTERS) else str(i - len(_LETTERS))
        out[lm.name] = ch.upper() if lm.blocked else ch
    return out


def render_grid(width: int, height: int, layers: Iterable[tuple[Iterable[Cell], str]], labels: bool) -> list[str]:
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


def map_under(pair: MapPair, agent: str) -> tuple[str, ...]:
    """`agent`'s map rows under any drawing, start and finish: its landmarks, then the guide's route."""
    own = landmarks_of(pair, agent)
    marks = letters(own)
    rows = [["."] * pair.width for _ in range(pair.height)]
    for lm in own:
        ch = marks[lm.name]
        for x, y in lm.cells:
            rows[y][x] = ch
    if agent == GUIDE:
        for x, y in pair.route:
            rows[y][x] = "*"
    return tuple("".join(r) for r in rows)


def agent_grid(pair: MapPair, agent: str, edges: frozenset[Edge] | None, under: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """`agent`'s map as text rows: its landmarks, the guide's route and finish, the drawing unless `edges` is None.

    `under` is `map_under(pair, agent)` when the caller keeps it (it is the same all episode)."""
    marks: dict[Cell, str] = {}  # cell -> its mark over the map; later marks win, as later layers draw over earlier ones
    if edges is not None:
        route = set(pair.route) if agent == GUIDE else ()
        for cell in drawn_cells(edges):  # on the guide's map, @ where the drawing is on its route
            marks[cell] = "@" if cell in route else "o"
    marks[pair.start] = "S"
    if agent == GUIDE:
        marks[pair.finish] = "F"
    lines = list(under if under is not None else map_under(pair, agent))
    changed: dict[int, list[str]] = {}  # only the rows with marks are rebuilt
    for (x, y), ch in marks.items():
        row = changed.get(y)
        if row is None:
            row = changed[y] = list(lines[y])
        row[x] = ch
    for y, row in changed.items():
        lines[y] = "".join(row)
    if agent != FOLLOWER:
        return tuple(lines)
    tens, units, rows = _labels(pair.width, pair.height)
    return (tens, units, *map(str.__add__, rows, lines))


@lru_cache(maxsize=64)
def _labels(width: int, height: int) -> tuple[str, str, tuple[str, ...]]:
    """A labelled map's two header rows (column tens and units) and each row's number."""
    return ("   " + "".join(str(x // 10) if x >= 10 else " " for x in range(width)), "   " + "".join(str(x % 10) for x in range(width)),
            tuple(f"{y:>2} " for y in range(height)))


def landmark_parts(pair: MapPair, agent: str) -> tuple[dict[str, Any], ...]:
    """The name, map letter, blocked and box corners ("cells") of each landmark on `agent`'s map, in its key's order."""
    own = landmarks_of(pair, agent)
    marks = letters(own)
    return tuple({"name": lm.name, "letter": marks[lm.name], "blocked": lm.blocked, "cells": (lm.x0, lm.y0, lm.x1, lm.y1)} for lm in own)


def build_view(env: MapTaskEnv, agent: str) -> dict[str, Any]:
    """Everything `agent` may know now: its own map and landmarks, the route and finish (guide), the drawing where visible."""
    p, cfg = env.pair, env.config
    sees_drawing = agent == FOLLOWER or cfg.canvas_visibility
    view: dict[str, Any] = {
        **env.envelope(agent, show_valid=not (env.done or env.step_count >= cfg.max_steps)),
        "role": agent,
        "max_steps": cfg.max_steps,
        "width": p.width,
        "height": p.height,
        "grid": env.grid(agent, sees_drawing),
        "landmarks": tuple(map(dict.copy, env.landmark_parts(agent))),  # fresh dicts for every view
        "start": p.start,
        "max_words": cfg.max_words,
        "allow_coordinates": cfg.allow_coordinates,
        "canvas_visibility": cfg.canvas_visibility,
        **env.messages_view(agent),
    }
    if agent == GUIDE:
        view["finish"] = p.finish
        view["route"] = p.route
    if sees_drawing:
        view["drawing"] = env.drawing_tuple()
        view["can_undo"] = bool(env.history)
    return view


def key_line(agent: str, canvas_visibility: bool, landmarks: Iterable[Mapping[str, Any]]) -> str:
    """The map key of a view: what the marks mean, then each landmark's letter and name."""
    if agent == GUIDE:
        legend = "S start, F finish, * your route"
        if canvas_visibility:
            legend += ", o the follower's drawing off your route, @ drawing on your route"
    else:
        legend = "S start, o your drawing; x = column (top numbers), y = row (left numbers)"
    marks = "; ".join(f"{lm['letter']} {lm['name']}{' (blocked)' if lm['blocked'] else ''}" for lm in landmarks)
    return f"Key: {legend}; {marks}."


# role -> (agent, canvas_visibility, a copy of the landmarks, their key line): a role's views show the same map key all episode
_keys: dict[str, tuple[str, bool, tuple[dict[str, Any], ...], str]] = {}


def _key_of(view: Mapping[str, Any]) -> str:
    """`key_line` of the view, formatted again only when what it reads differs from the role's last one (compared by value)."""
    agent, visible, landmarks = view["agent"], view["canvas_visibility"], view["landmarks"]
    kept = _keys.get(view["role"])
    if kept is None or kept[0] != agent or kept[1] != visible or kept[2] != landmarks:
        kept = (agent, visible, tuple(dict(lm) for lm in landmarks), key_line(agent, visible, landmarks))
        if len(_keys) > 8:
            _keys.clear()
        _keys[view["role"]] = kept
    return kept[3]


def render_view(view: Mapping[str, Any]) -> str:
    """The text observation of a view."""
    head = f"Map Task, step {view['step']}/{view['max_steps']}. You are the {view['agent']}."
    messages = []
    if view["new_messages"]:
        messages.append("New messages: " + " | ".join(view["new_messages"]))
    if view["recent_messages"]:
        messages.append("Conversation so far: " + " | ".join(view["recent_messages"]))
    return "\n".join([head, "Your map:", *view["grid"], _key_of(view), *footer(view, before_last_action=messages)])


def render_frame(pair: MapPair, edges: frozenset[Edge], step: int, max_steps: int, accuracy: float) -> str:
    """The true state for a human: the guide's map with the route and the drawing, and the discrepancies."""
    marks = letters(pair.guide)
    drawn = drawn_cells(edges)
    layers = [(lm.cells, marks[lm.name]) for lm in pair.guide]
    layers += [(set(pair.route), "*"), (drawn, "o"), (drawn & set(pair.route), "@"), ({pair.start}, "S"), ({pair.finish}, "F")]
    head = f"Map Task step {step}/{max_steps} | route accuracy {accuracy:.2f}"
    diffs = "; ".join(
        f"{d.kind}: {d.guide.name if d.guide else '-'} / {d.follower.name if d.follower else '-'}" for d in pair.discrepancies
    )
    return "\n".join([head, *render_grid(pair.width, pair.height, layers, labels=True), f"Discrepancies: {diffs or 'none'}"])


ALREADY_DRAWN = "that is already drawn"  # a draw's refusal when every segment of it is on the canvas


def refusal_text(refusal: Refusal, verb: str) -> str:
    """The sentence the follower reads when a drawing command changes nothing."""
    if refusal.reason == "already_drawn":
        return ALREADY_DRAWN
    if refusal.reason == "nothing_there":
        return "nothing is drawn along those points"
    (ax, ay), (bx, by) = refusal.a, refusal.b
    if refusal.reason == "no_length":
        return f"the segment ({ax},{ay}) -> ({bx},{by}) has no length; give two different points"
    if refusal.reason == "diagonal":
        return (
            f"the segment ({ax},{ay}) -> ({bx},{by}) is diagonal; {verb} only horizontal or vertical "
            f"segments. For a diagonal, use a stair-step path, e.g. '{verb} {ax},{ay} -> {bx},{ay} -> {bx},{by}'"
        )
    hx, hy = refusal.cell
    return f"the route cannot cross the {refusal.landmark}: ({hx},{hy}) is blocked; go around it"


def role_briefing(agent: str, cfg: MapTaskConfig) -> str:
    """The role and rules part of `agent`'s briefing."""
    common = (
        "Map Task. Two players, a guide and a follower, hold maps of the same place. Only the guide's map shows "
        "the route, from the start S to the finish F. The maps were drawn separately and may differ in some "
        "landmarks (a landmark may be on one map only, have another name, or be somewhere else), and neither player "
        "sees the other's map. Blocked "
        "landmarks (upper-case letters) cannot be crossed. Messages arrive the next step"
        + (f" and may hold at most {cfg.max_words} words (a longer one is not sent)" if cfg.max_words else "")
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


# ---------------------------------------------------------------------- numeric observation (teamenvs.core.rl)
COMMAND_NAMES = ("say", "draw", "erase", "undo", "reset", "wait")
WAY_NAMES = ("north", "south", "east", "west")
_IDLE = f"{LAST_ACTION}none"  # the start of the idle lines and of the line before a first action


def _message_features(prefix: str, whose: str, landmarks: int, new: bool) -> tuple[Feature, ...]:
    head = (Feature(f"{prefix}_new", doc="1 when the partner's latest message arrived this step (it is among the new messages)"),) if new else ()
    return (
        *head,
        Feature(f"{prefix}_kind", 1 + len(MESSAGE_KINDS),
                doc=f"{whose}, read in the scripted pair's grammar (baselines.py), one-hot: none yet, {', '.join(MESSAGE_KINDS)}"),
        Feature(f"{prefix}_way", 4, doc="its way (landmark or count instruction), one-hot: north, south, east, west"),
        Feature(f"{prefix}_side", 4, doc="its side of the landmark (landmark instruction), one-hot: north, south, east, west"),
        Feature(f"{prefix}_landmark", landmarks, doc="the landmark it names (landmark instruction or 'I have no ...'), one-hot by its index in the agent's own `landmarks`"),
        Feature(f"{prefix}_unknown_landmark", doc="1 when it names a landmark that is not on the agent's own map"),
        Feature(f"{prefix}_count", doc="its step count (count instruction) / max(width, height), clipped"),
    )


@lru_cache(maxsize=64)
def features(config: MapTaskConfig) -> tuple[Feature, ...]:
    """The feature table of `map_task_v0`'s numeric observation under `config` (the same for both roles)."""
    s = sizes(config)
    w, h, n = s.width, s.height, s.landmarks
    cells = w * h
    where = f"own map, row-major ({w}x{h}, slot y*{w}+x)"
    return (
        # constant through an episode
        Feature("role", 2, doc="one-hot: guide, follower"),
        Feature("word_limit", doc="1 when a message may hold at most `max_words` words"),
        Feature("max_words", doc="the word limit / 20, clipped (0: unlimited)"),
        Feature("canvas_visibility", doc="1 when the guide sees the follower's drawing"),
        Feature("allow_coordinates", doc="1 when the guide may refer to grid coordinates"),
        Feature("start", 2, doc="the start S: column / (width - 1), row / (height - 1)"),
        Feature("finish", 3, doc="guide: 1, then the finish F scaled like `start`; zeros for the follower (it never sees the finish)"),
        Feature("terrain", cells, doc=f"{where}: 1 on an obstacle (blocked landmark), 0.5 on a passable landmark, 0 free"),
        Feature("route", cells, doc=f"guide: {where}: (i + 1) / route length on the route's i-th cell (start to finish), 0 off it; zeros for the follower"),
        Feature("landmarks", 6 * n, doc=f"own landmarks in the map key's order, {n} slots of 6: present, blocked, x0, y0, x1, y1 (the box's corners scaled like `start`); zeros for empty slots"),
        # changing
        Feature("time", doc="step / max_steps"),
        Feature("sees_drawing", doc="1 when the view shows the drawing (the follower; the guide under `canvas_visibility`)"),
        Feature("can_undo", doc="1 when `undo` has something to undo (where the drawing is shown)"),
        Feature("pen", 3, doc="1, then the pen's cell scaled like `start`, where the drawing is shown: the end of the drawn trail from the start (the cell the cell steps draw from)"),
        Feature("drawing", cells, doc=f"{where}: 1 on cells the drawing covers, where it is shown"),
        Feature("last_action_status", 3, doc="one-hot, own last action: none (first step), accepted, rejected"),
        Feature("last_action_command", len(COMMAND_NAMES), doc=f"one-hot command of own last accepted action: {', '.join(COMMAND_NAMES)}"),
        *_message_features("partner_message", "the partner's latest message (new this step, else the latest in the recent conversation)", n, True),
        *_message_features("own_message", "own latest message (in the recent conversation)", n, False),
    )


class _Layout:
    """Where each feature sits in the vector, per config; the constant part is packed once per episode and agent."""

    def __init__(self, config: MapTaskConfig) -> None:
        self.features = features(config)
        self.size = sum(f.size for f in self.features)
        self.at: dict[str, int] = {}
        start = 0
        for f in self.features:
            self.at[f.name] = start
            start += f.size
        names = [f.name for f in self.features]
        self.constant = self.features[: names.index("time")]
        self.split = self.at["time"]
        self.low, self.high = feature_bounds(self.constant)
        s = sizes(config)
        self.width, self.height, self.landmarks = s.width, s.height, s.landmarks
        self.count_scale = 1 / max(s.width, s.height)
        # message blocks: (kind, way, side, landmark, unknown landmark, count) offsets
        self.messages = {p: tuple(self.at[f"{p}_{part}"] for part in ("kind", "way", "side", "landmark", "unknown_landmark", "count"))
                         for p in ("partner_message", "own_message")}
        self.statics: dict[Any, tuple[Any, np.ndarray, dict[str, int]]] = {}
        self.last: dict[str, tuple] = {}  # role -> (route, scalars, landmark dicts, template, names) of its latest view


@lru_cache(maxsize=64)
def _layout(config: MapTaskConfig) -> _Layout:
    return _Layout(config)


def _scale(cell, w: int, h: int) -> tuple[float, float]:
    return cell[0] / max(1, w - 1), cell[1] / max(1, h - 1)


_LANDMARK_KEY = itemgetter("name", "blocked", "cells")


def _static(view: Mapping[str, Any], lay: _Layout) -> tuple[np.ndarray, dict[str, int]]:
    """A vector holding the constant part (what `pack` would make of it) and zeros, and the name -> index of the agent's own landmarks."""
    route = view.get("route")
    scalars = (view["role"], view["start"], view.get("finish"), view["width"], view["height"], view["max_words"],
               view["canvas_visibility"], view["allow_coordinates"])
    # fast path: the role's previous view of the same episode (its landmark dicts compared by value, to a copy)
    last = lay.last.get(view["role"])
    if last is not None and last[0] is route and last[1] == scalars and last[2] == view["landmarks"]:
        return last[3], last[4]
    landmarks = tuple(map(_LANDMARK_KEY, view["landmarks"]))
    key = (id(route), landmarks, *scalars)
    cached = lay.statics.get(key)
    if cached is not None and cached[0] is route:  # the entry holds the route, so its id is not reused
        lay.last[view["role"]] = (route, scalars, tuple(dict(lm) for lm in view["landmarks"]), cached[1], cached[2])
        return cached[1], cached[2]
    w, h = view["width"], view["height"]
    template = np.zeros(lay.size, np.float32)  # the constant part, then zeros for the rest
    at, cells = lay.at, lay.width * lay.height
    template[at["role"] + (view["role"] != "guide")] = 1.0
    words = view["max_words"]
    template[at["word_limit"]] = float(words is not None)
    template[at["max_words"]] = 0.0 if words is None else min(words, 20) / 20
    template[at["canvas_visibility"]] = float(view["canvas_visibility"])
    template[at["allow_coordinates"]] = float(view["allow_coordinates"])
    template[at["start"]: at["start"] + 2] = _scale(view["start"], w, h)
    finish = view.get("finish")
    if finish is not None:
        template[at["finish"]: at["finish"] + 3] = (1.0, *_scale(finish, w, h))
    terrain = template[at["terrain"]: at["terrain"] + cells]  # its block alone: a box never spills past it
    slots: list[float] = []
    for _, blocked, (x0, y0, x1, y1) in landmarks[: lay.landmarks]:
        for y in range(y0, y1 + 1):
            terrain[y * lay.width + x0: y * lay.width + x1 + 1] = 1.0 if blocked else 0.5
        slots += (1.0, float(blocked), *_scale((x0, y0), w, h), *_scale((x1, y1), w, h))
    template[at["landmarks"]: at["landmarks"] + len(slots)] = slots
    if route:
        plane = template[at["route"]: at["route"] + cells]
        plane[[y * lay.width + x for x, y in route]] = np.arange(1, len(route) + 1) / len(route)  # (i + 1) / length
    # every value already lies inside its feature's scale on a view of this config; the clip is `pack`'s, for any other view
    np.clip(template[: lay.split], lay.low, lay.high, out=template[: lay.split])
    names = {name: i for i, (name, _, _) in enumerate(landmarks[: lay.landmarks])}
    if len(lay.statics) > 32:
        lay.statics.clear()
    lay.statics[key] = (route, template, names)
    lay.last[view["role"]] = (route, scalars, tuple(dict(lm) for lm in view["landmarks"]), template, names)
    return template, names


_last_plane: tuple = (None, 0, 0, None)  # (drawing, width, offset, slots): views share one drawing tuple per drawing
_current: list[Any] = [None, None]  # (config, its layout) of the latest `encode`


def _drawn_slots(drawing, width: int, offset: int) -> np.ndarray:
    """The vector slots of the cells the drawing covers (its plane starting at `offset`), for the last drawing seen."""
    global _last_plane
    seen, at, start, slots = _last_plane
    if seen is not drawing or at != width or start != offset:
        slots = offset + np.fromiter(sorted({y * width + x for edge in drawing for x, y in edge}), dtype=np.intp)
        _last_plane = (drawing, width, offset, slots)
    return slots


_WAY_INDEX = {w: i for i, w in enumerate(WAY_NAMES)}
_KIND_INDEX = {k: i + 1 for i, k in enumerate(MESSAGE_KINDS)}
_COMMAND_INDEX = {c: i for i, c in enumerate(COMMAND_NAMES)}


def _write_message(out: np.ndarray, offsets: tuple[int, ...], text: str | None, names: dict[str, int], count_scale: float) -> None:
    kind_at, way_at, side_at, landmark_at, unknown_at, count_at = offsets
    if text is None:
        out[kind_at] = 1.0
        return
    kind, way, side, name, count = read_message(text)
    out[kind_at + _KIND_INDEX[kind]] = 1.0
    if way is not None:
        out[way_at + _WAY_INDEX[way]] = 1.0
    if side is not None:
        out[side_at + _WAY_INDEX[side]] = 1.0
    if name is not None:
        index = names.get(name)
        out[unknown_at if index is None else landmark_at + index] = 1.0
    if count:
        out[count_at] = min(1.0, count * count_scale)


def encode(view: Mapping[str, Any], config: MapTaskConfig) -> np.ndarray:
    """The numeric observation of a view (see `features`): a float32 vector of the view alone.

    The constant part is built once per episode and agent (cached by value); the rest is written
    slot by slot at the offsets of the feature table, every value inside its feature's scale."""
    if _current[0] is not config:  # one config per env: it is hashed (for `_layout`) once, not per view
        _current[:] = (config, _layout(config))
    lay = _current[1]
    template, names = _static(view, lay)
    out = template.copy()
    at = lay.at
    out[at["time"]] = min(1.0, view["step"] / view["max_steps"])
    drawing = view.get("drawing")
    if drawing is not None:
        w, h = view["width"], view["height"]
        x, y = trail_of(view["start"], drawing)[-1]
        pen = at["pen"]
        out[at["sees_drawing"]] = 1.0
        if view.get("can_undo"):
            out[at["can_undo"]] = 1.0
        out[pen: pen + 3] = (1.0, x / max(1, w - 1), y / max(1, h - 1))
        slots = _drawn_slots(drawing, lay.width, at["drawing"])
        if len(slots):
            out[slots] = 1.0
    line = view["last_action"]
    status = at["last_action_status"]
    if line.startswith(LAST_ACTION_REJECTED):
        out[status + 2] = 1.0
    elif line.startswith(LAST_ACTION) and not line.startswith(_IDLE):
        out[status + 1] = 1.0
        command = _COMMAND_INDEX.get(line[len(LAST_ACTION):].split(" ", 1)[0].rstrip(".").lower())
        if command is not None:
            out[at["last_action_command"] + command] = 1.0
    else:
        out[status] = 1.0
    text, new = latest_message(view, mine=False)
    if new:
        out[at["partner_message_new"]] = 1.0
    _write_message(out, lay.messages["partner_message"], text, names, lay.count_scale)
    _write_message(out, lay.messages["own_message"], latest_message(view, mine=True)[0], names, lay.count_scale)
    return out
