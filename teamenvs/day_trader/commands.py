"""DayTrader's commands (`invest individual`, `invest group`, `wait`, `say`, `tell`) and what a
trader may do in each phase."""

from __future__ import annotations

from fractions import Fraction

from teamenvs.core.commands import Action, Command, CommandSet, IntArg, Situation
from teamenvs.core.messaging import SAY, TELL
from teamenvs.day_trader.config import DayTraderConfig
from teamenvs.day_trader.rules import DECISION, GROUP, INDIVIDUAL, WAIT, Choice
from teamenvs.day_trader.view import dollars

INVEST_INDIVIDUAL = "invest individual"
INVEST_GROUP = "invest group"

COMMANDS = CommandSet(
    [
        Command(
            INVEST_INDIVIDUAL,
            (IntArg("amount", 15, 100, 50),),
            "private investment: the amount comes back to you doubled",
            ("invest individual 50",),
        ),
        Command(
            INVEST_GROUP,
            (IntArg("amount", 15, 100, 50),),
            "group investment: all group investments are pooled, tripled and split equally among all traders",
            ("invest group 50",),
        ),
        Command(WAIT, (), "do nothing this turn", ("wait",)),
        SAY,
        TELL,
    ]
)


def choice_of(action: Action | None) -> Choice:
    """The round's `Choice` an accepted action stands for (no action, or `wait`: waiting)."""
    if action is None or action.command == WAIT:
        return Choice(WAIT)
    return Choice(INDIVIDUAL if action.command == INVEST_INDIVIDUAL else GROUP, action.args["amount"])


def situation(config: DayTraderConfig, phase_kind: str, others: tuple[str, ...], money: Fraction, top: int) -> Situation:
    """What a trader with `money` (who may invest up to `top`) may do in a phase of `phase_kind`."""
    denied: dict[str, str] = {}
    names = {"agent": others}
    if phase_kind == DECISION:
        reason = (
            f"messages can be sent only in discussion phases (after every {config.discussion_every} rounds); "
            "this is a decision phase"
        )
        if not config.communication:
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
    return Situation(denied, {}, names)
