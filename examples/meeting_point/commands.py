"""Meeting point's command language: move left/right, wait, and the shared messaging commands;
and its discrete action catalogue for RL (each label stands for one command)."""

from __future__ import annotations

from typing import Any, Mapping

from teamenvs.core.commands import ChoiceArg, Command, CommandSet
from teamenvs.core.messaging import SAY, TELL
from teamenvs.core.rl import NOOP

COMMANDS = CommandSet(
    [
        Command("move", (ChoiceArg("direction", ("left", "right")),), "step one cell around the ring", ("move left",)),
        Command("wait", (), "stay where you are", ("wait",)),
        SAY,
        TELL,
    ]
)

CATALOGUE = (NOOP, "move left", "move right", "say my cell")


def catalogue(config: Any) -> tuple[str, ...]:
    """The discrete actions (the same for every agent; index 0 the no-op)."""
    return CATALOGUE


def command_for(view: Mapping[str, Any], label: str) -> str | None:
    """The command a label stands for in this view (the mask then checks it is allowed now)."""
    if label == NOOP:
        return "wait"
    if label == "say my cell":
        return f"say I am on cell {view['cell']}"
    return label
