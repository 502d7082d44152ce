"""Map Task text: each player's view (its own map as a letter grid, its landmarks, the drawing where
it may see it), the observation rendered from a view alone, the frame of the true state, the
briefings, and the sentences of refusals.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping

from teamenvs.core.view import footer
from teamenvs.map_task.config import MapTaskConfig
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


def agent_grid(pair: MapPair, agent: str, edges: frozenset[Edge] | None) -> tuple[str, ...]:
    """`agent`'s map as text rows: its landmarks, the guide's route and finish, the drawing unless `edges` is None."""
    own = landmarks_of(pair, agent)
    marks = letters(own)
    layers: list[tuple[Any, str]] = [(lm.cells, marks[lm.name]) for lm in own]
    if agent == GUIDE:
        layers.append((set(pair.route), "*"))
    drawn = drawn_cells(edges) if edges is not None else set()
    if drawn:
        layers.append((drawn, "o"))
        if agent == GUIDE:
            layers.append((drawn & set(pair.route), "@"))
    layers.append(({pair.start}, "S"))
    if agent == GUIDE:
        layers.append(({pair.finish}, "F"))
    return tuple(render_grid(pair.width, pair.height, layers, labels=agent == FOLLOWER))


def build_view(env: MapTaskEnv, agent: str) -> dict[str, Any]:
    """Everything `agent` may know now: its own map and landmarks, the route and finish (guide), the drawing where visible."""
    p, cfg = env.pair, env.config
    sees_drawing = agent == FOLLOWER or cfg.canvas_visibility
    own = landmarks_of(p, agent)
    marks = letters(own)
    view: dict[str, Any] = {
        **env.envelope(agent, show_valid=not (env.done or env.step_count >= cfg.max_steps)),
        "role": agent,
        "max_steps": cfg.max_steps,
        "width": p.width,
        "height": p.height,
        "grid": env.grid(agent, sees_drawing),
        "landmarks": tuple(
            {"name": lm.name, "letter": marks[lm.name], "blocked": lm.blocked, "cells": (lm.x0, lm.y0, lm.x1, lm.y1)}
            for lm in own
        ),
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
        view["drawing"] = tuple(sorted(tuple(sorted(e)) for e in env.edges))
        view["can_undo"] = bool(env.history)
    return view


def render_view(view: Mapping[str, Any]) -> str:
    """The text observation of a view."""
    agent = view["agent"]
    head = f"Map Task, step {view['step']}/{view['max_steps']}. You are the {agent}."
    if agent == GUIDE:
        legend = "S start, F finish, * your route"
        if view["canvas_visibility"]:
            legend += ", o the follower's drawing off your route, @ drawing on your route"
    else:
        legend = "S start, o your drawing; x = column (top numbers), y = row (left numbers)"
    marks = "; ".join(f"{lm['letter']} {lm['name']}{' (blocked)' if lm['blocked'] else ''}" for lm in view["landmarks"])
    messages = []
    if view["new_messages"]:
        messages.append("New messages: " + " | ".join(view["new_messages"]))
    if view["recent_messages"]:
        messages.append("Conversation so far: " + " | ".join(view["recent_messages"]))
    return "\n".join([head, "Your map:", *view["grid"], f"Key: {legend}; {marks}.", *footer(view, before_last_action=messages)])


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


def refusal_text(refusal: Refusal, verb: str) -> str:
    """The sentence the follower reads when a drawing command changes nothing."""
    if refusal.reason == "already_drawn":
        return "that is already drawn"
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
        "the route, from the start S to the finish F. The maps differ in some landmarks (a landmark may be on one "
        "map only, have another name, or be somewhere else), and neither player sees the other's map. Blocked "
        "landmarks (upper-case letters) cannot be crossed. Messages arrive the next step"
        + (f" and are cut to {cfg.max_words} words" if cfg.max_words else "")
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
