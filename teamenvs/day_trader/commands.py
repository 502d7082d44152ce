"""DayTrader's commands (`invest individual`, `invest group`, `wait`, `say`, `tell`), what a
trader may do in each phase, and the discrete action catalogue (investment levels of the range
allowed now, canned messages).

The amount's range and the help texts follow the config (`commands_for`); `tell` is refused
unless `private_messages` is on (CollabSim broadcasts every message).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping

from teamenvs.core.commands import Action, Command, CommandSet, IntArg, Situation
from teamenvs.core.messaging import SAY, TELL
from teamenvs.core.rl import NOOP
from teamenvs.day_trader.config import DayTraderConfig
from teamenvs.day_trader.rules import DECISION, GROUP, INDIVIDUAL, WAIT, Choice, Money
from teamenvs.day_trader.view import MESSAGES, dollars, multiplied, pool_split_text

INVEST_INDIVIDUAL = "invest individual"
INVEST_GROUP = "invest group"

NO_PRIVATE_MESSAGES = "there are no private messages in this condition: every message is broadcast to everyone (use 'say')"


@lru_cache(maxsize=64)
def commands_for(config: DayTraderConfig) -> CommandSet:
    """The command set under `config`: amounts from `min_investment` to `max_investment`, the rules' words."""
    example = min(max(50, config.min_investment), config.max_investment)
    amount = IntArg("amount", config.min_investment, config.max_investment, example)
    return CommandSet(
        [
            Command(
                INVEST_INDIVIDUAL,
                (amount,),
                f"private investment: the amount comes back to you {multiplied(config.individual_multiplier)}",
                (f"invest individual {example}",),
            ),
            Command(
                INVEST_GROUP,
                (amount,),
                f"group investment: all group investments of the round are pooled, "
                f"{multiplied(config.group_multiplier)} and {pool_split_text(config)}",
                (f"invest group {example}",),
            ),
            Command(WAIT, (), "do nothing this turn", ("wait",)),
            SAY,
            TELL,
        ]
    )


COMMANDS = commands_for(DayTraderConfig())  # the default (BASELINE) config's commands


def choice_of(action: Action | None) -> Choice:
    """The round's `Choice` an accepted action stands for (no action, or `wait`: waiting)."""
    if action is None or action.command == WAIT:
        return Choice(WAIT)
    return Choice(INDIVIDUAL if action.command == INVEST_INDIVIDUAL else GROUP, action.args["amount"])


def situation(config: DayTraderConfig, phase_kind: str, others: tuple[str, ...], money: Money, top: int) -> Situation:
    """What a trader with `money` (who may invest up to `top`) may do in a phase of `phase_kind`."""
    denied: dict[str, str] = {}
    names = {"agent": others}
    if phase_kind == DECISION:
        reason = (
            f"messages can be sent only in discussion phases (after every {config.discussion_every} rounds); "
            "this is a decision phase"
        )
        if not (config.communication and config.discussion_every and config.discussion_turns):  # no discussion phase at all
            reason = "communication is off in this condition"
        denied.update({"say": reason, "tell": reason})
        if top < config.min_investment:
            why = f"you have {dollars(float(money))}, less than the minimum investment of ${config.min_investment}"
            denied.update({INVEST_INDIVIDUAL: why, INVEST_GROUP: why})
            return Situation(denied, {}, names)
        limits = {"amount": (config.min_investment, top)}
        reasons = {"amount": f"you have {dollars(float(money))}"} if top < config.max_investment else {}
        return Situation(denied, limits, names, reasons)
    why = "investing happens in decision phases; this is a discussion phase"
    denied.update({INVEST_INDIVIDUAL: why, INVEST_GROUP: why})
    if not config.private_messages:
        denied["tell"] = NO_PRIVATE_MESSAGES
    return Situation(denied, {}, names)


def briefing_situation(config: DayTraderConfig, others: tuple[str, ...]) -> Situation:
    """The situation the briefing lists commands for: `tell` only when private messages are allowed."""
    denied = {} if config.private_messages else {"tell": NO_PRIVATE_MESSAGES}
    return Situation(denied, names={"agent": others})


# ---------------------------------------------------------------------- the discrete action catalogue (RL)
# Amount levels: a quarter q of the way through the range allowed now (min_investment to the most
# the trader may invest), rounded half up: "min" is q = 0, "max" is q = 4 (all it may invest).
LEVELS = (("min", 0), ("25%", 1), ("50%", 2), ("75%", 3), ("max", 4))
_INVEST = {f"{name} {level}": (name, q) for name in (INVEST_GROUP, INVEST_INDIVIDUAL) for level, q in LEVELS}
_SAY = {f"say {text}": f"say {text}" for text in MESSAGES}


def catalogue(config: DayTraderConfig) -> tuple[str, ...]:
    """The discrete action labels (the same for every trader and every condition; index 0 the no-op)."""
    return (NOOP, *_INVEST, *_SAY)


def level_amount(low: int, high: int, quarters: int) -> int:
    """The amount `quarters`/4 of the way from `low` to `high`, rounded half up."""
    return low + ((high - low) * quarters * 2 + 4) // 8


def mask_key(view: Mapping[str, Any]) -> tuple:
    """What `command_for` reads from a view: equal keys give the same commands (see `TeamEnv._mask_key`)."""
    return view["phase"], view["can_invest"]


def command_for(view: Mapping[str, Any], label: str) -> str | None:
    """The command `label` stands for in this view, or None when it is impossible now."""
    if label == NOOP:
        return WAIT
    invest = _INVEST.get(label)
    if invest is not None:
        can = view["can_invest"]
        if can is None or view["phase"] != DECISION:
            return None
        return f"{invest[0]} {level_amount(can[0], can[1], invest[1])}"
    say = _SAY.get(label)
    if say is not None:
        return say if view["phase"] == "discussion" else None
    return None
