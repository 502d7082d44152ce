"""Meeting point's views: an agent knows its own cell, the ring size and its messages; the text
observation is rendered from that view alone."""

from __future__ import annotations

from typing import Any, Mapping

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
