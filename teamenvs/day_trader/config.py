"""DayTrader's configuration: the game's parameters, the communication conditions, and the
CollabSim conditions as presets."""

from __future__ import annotations

from dataclasses import dataclass

from teamenvs.core.config import setting
from teamenvs.core.messaging import MessagingConditions


@dataclass(frozen=True)
class DayTraderConfig(MessagingConditions):
    """DayTrader parameters and conditions (defaults: CollabSim's BASELINE)."""

    n_agents: int = setting(3, low=2, high=100, doc="number of traders")
    rounds: int = setting(30, low=1, high=10_000, doc="rounds of the game")
    starting_money: int = setting(200, low=0, doc="each trader's money at the start, in dollars")
    min_investment: int = setting(15, low=1, doc="the smallest investment, in dollars")
    max_investment: int = setting(100, low="min_investment", doc="the largest investment, in dollars")
    individual_multiplier: int = setting(2, low=0, doc="an individual investment comes back multiplied by this")
    group_multiplier: int = setting(3, low=0, doc="the round's group pool is multiplied by this and split equally among all traders")
    bonus: int = setting(90, low=0, doc="the round's top-earner bonus in dollars, split equally (rounded down) between tied traders")
    bonus_from_round: int = setting(2, low=1, doc="the first round with a top-earner bonus")
    discussion_every: int = setting(5, low=0, doc="a discussion phase follows every this many rounds (not the last); 0: none")
    discussion_turns: int = setting(3, low=0, high=100, doc="steps of each discussion phase")
    show_balances: bool = setting(True, doc="whether traders see everyone's balance (else only their own)")


PRESETS: dict[str, dict[str, object]] = {
    "baseline": {},
    "communication_bandwidth": {"min_steps_between_messages": 5},
    "group_size_6": {"n_agents": 6},
    "group_size_9": {"n_agents": 9},
    "no_communication": {"communication": False},
}
