"""The commons' commands (`harvest`, `wait`, `say`, `tell`) and what a fisher may do in each phase."""

from __future__ import annotations

from teamenvs.commons.config import MAX_TONS, CommonsConfig
from teamenvs.commons.rules import HARVEST
from teamenvs.core.commands import Action, Command, CommandSet, IntArg, Situation
from teamenvs.core.messaging import SAY, TELL

WAIT = "wait"

COMMANDS = CommandSet(
    [
        Command(
            HARVEST,
            (IntArg("amount", 0, MAX_TONS, 10),),
            "ask to catch this many tons of fish this month (if the requests add up to more than the lake holds, "
            "the catch is shared in proportion to the requests)",
            ("harvest 10",),
        ),
        Command(WAIT, (), "do nothing this turn (in a harvest phase: catch nothing this month)", ("wait",)),
        SAY,
        TELL,
    ]
)


def request_of(action: Action | None) -> int:
    """The tons a fisher's action asks for this month (no action, `wait` or a message: none)."""
    return action.args["amount"] if action is not None and action.command == HARVEST else 0


def situation(config: CommonsConfig, phase_kind: str, others: tuple[str, ...], stock: int) -> Situation:
    """What a fisher may do in a phase of `phase_kind` with `stock` tons in the lake."""
    names = {"agent": others}
    if phase_kind == HARVEST:
        reason = "messages can be sent only in discussion phases; this is a harvest phase"
        if not config.communication:
            reason = "communication is off in this condition"
        limits = {"amount": (0, stock)}
        reasons = {"amount": f"the lake holds {stock} tons"}
        return Situation({"say": reason, "tell": reason}, limits, names, reasons)
    why = "fishing happens in harvest phases; this is a discussion phase between months"
    return Situation({HARVEST: why}, {}, names)
