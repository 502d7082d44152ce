"""Meeting point's views: an agent knows its own cell, the ring size and its messages; the text
observation is rendered from that view alone, and so is the numeric observation (`encode`)."""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from teamenvs.core.rl import Feature, pack
from teamenvs.core.view import footer


def render(view: Mapping[str, Any]) -> str:
    """The text observation of a view."""
    head = f"You are {view['agent']}, on cell {view['cell']} of a ring of {view['cells']} cells (step {view['step']}/{view['max_steps']})."
    if view["met"]:
        head += " Everyone is on your cell: the team has met."
    messages = ["New messages: " + " | ".join(view["new_messages"])] if view["new_messages"] else []
    return "\n".join([head, *footer(view, before_last_action=messages)])


def briefing(agent: str, n_agents: int, cells: int, max_steps: int) -> str:
    """The role and rules, in the game's words."""
    return (f"You are {agent}, one of {n_agents} agents standing on a ring of {cells} cells (0 to {cells - 1}). "
            f"You know only your own cell. The team wins when everyone stands on the same cell, within {max_steps} steps. "
            "You may tell the others where you are.")


def features(config: Any) -> tuple[Feature, ...]:
    """The numeric observation's slots (the same for every agent)."""
    return (
        Feature("cell_cos", 1, -1.0, 1.0, "cos of the agent's angle on the ring (cell / cells * 2 pi)"),
        Feature("cell_sin", 1, -1.0, 1.0, "sin of the same angle"),
        Feature("progress", 1, 0.0, 1.0, "step / max_steps"),
        Feature("met", 1, 0.0, 1.0, "1 once the team has met"),
        Feature("new_messages", 1, 0.0, 1.0, "1 if messages arrived this step (their text is in the text observation only)"),
    )


def encode(view: Mapping[str, Any], config: Any) -> np.ndarray:
    """The numeric observation of a view (from the view alone)."""
    angle = 2 * math.pi * view["cell"] / view["cells"]
    return pack(features(config), {"cell_cos": math.cos(angle), "cell_sin": math.sin(angle),
                                   "progress": view["step"] / view["max_steps"], "met": float(view["met"]),
                                   "new_messages": float(bool(view["new_messages"]))})
