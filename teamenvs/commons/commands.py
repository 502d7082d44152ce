"""The commons' commands (`harvest`, `wait`, `say`, `tell`), what a fisher may do in each phase,
and the discrete action catalogue (harvest levels computed from the view, canned messages)."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from teamenvs.commons.config import MAX_TONS, CommonsConfig
from teamenvs.commons.rules import HARVEST, sustainable_share
from teamenvs.commons.view import MESSAGES, mean_request
from teamenvs.core.commands import Action, Command, CommandSet, IntArg, Situation
from teamenvs.core.messaging import SAY, TELL
from teamenvs.core.rl import NOOP

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


# ---------------------------------------------------------------------- the discrete action catalogue (RL)
def _share(view: Mapping[str, Any]) -> int:
    return sustainable_share(view["stock"], view["n_fishers"], view["regrowth_factor"], view["collapse_threshold"])


def _part(view: Mapping[str, Any], percent: int) -> int:
    return (view["stock"] * percent * 2 + 100) // 200  # percent of the stock, rounded half up


def _mean(view: Mapping[str, Any]) -> int | None:
    last = view["last_month"]
    return None if last is None else min(mean_request(last), view["stock"])


# label -> the tons it asks for in a view (None: not available now)
_HARVEST: dict[str, Callable[[Mapping[str, Any]], int | None]] = {
    "harvest 0": lambda view: 0,
    "harvest the sustainable share": _share,
    "harvest twice the sustainable share": lambda view: 2 * _share(view),
    "harvest 10% of the lake": lambda view: _part(view, 10),
    "harvest 25% of the lake": lambda view: _part(view, 25),
    "harvest 50% of the lake": lambda view: _part(view, 50),
    "harvest the whole lake": lambda view: view["stock"],
    "harvest last month's mean request": _mean,
}
_SAY = {f"say {text}": f"say {text}" for text in MESSAGES}


def catalogue(config: CommonsConfig) -> tuple[str, ...]:
    """The discrete action labels (the same for every fisher and every condition; index 0 the no-op)."""
    return (NOOP, *_HARVEST, *_SAY)


def mask_key(view: Mapping[str, Any]) -> tuple:
    """What `command_for` reads from a view: equal keys give the same commands (see `TeamEnv._mask_key`)."""
    return view["phase"], view["stock"], view["n_fishers"], view["regrowth_factor"], _mean(view)


def command_for(view: Mapping[str, Any], label: str) -> str | None:
    """The command `label` stands for in this view, or None when it is impossible now."""
    if label == NOOP:
        return WAIT
    harvest = _HARVEST.get(label)
    if harvest is not None:
        if view["phase"] != HARVEST:
            return None
        amount = harvest(view)
        return None if amount is None else f"{HARVEST} {amount}"
    say = _SAY.get(label)
    if say is not None:
        return say if view["phase"] == "discussion" else None
    return None
