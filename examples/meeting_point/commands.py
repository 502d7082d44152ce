"""Meeting point's command language: move left/right, wait, and the shared messaging commands."""

from teamenvs.core.commands import ChoiceArg, Command, CommandSet
from teamenvs.core.messaging import SAY, TELL

COMMANDS = CommandSet(
    [
        Command("move", (ChoiceArg("direction", ("left", "right")),), "step one cell around the ring", ("move left",)),
        Command("wait", (), "stay where you are", ("wait",)),
        SAY,
        TELL,
    ]
)
