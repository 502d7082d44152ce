"""DayTrader's configuration: the game's parameters, the communication conditions, and the
CollabSim conditions as presets.

Where CollabSim (App. B.2, Table 9) can be read two ways, the paper presets follow the reading
its reported numbers need, and the other reading is a named condition:

- **The pool's split.** Table 9 says the tripled pool is "divided equally among all
  participants"; read that way the most a 6- or 9-trader team can average is $6,635 / $6,490,
  below Table 3's $9,685 and $13,402 (6 traders) and $15,005 (9). The presets split the tripled
  pool three ways, as in the original 3-trader game, at every group size (`pool_shares=3`: each
  pooled dollar pays every trader $1), the one reading whose best wealth (7,070 / 15,635 /
  24,490 for 3 / 6 / 9 traders) holds every Table 3 cell while keeping the $15-$100 investments
  and the doubled individual return that the zero-cooperation cells sit just under. The two
  readings are the same game with 3 traders (the BASELINE). Condition `split_among_all`
  (`pool_shares=None`) is Table 9's wording. The evidence, reading by reading, is in
  `tests/day_trader/test_wealth_scale.py`.
- **Private messages.** "During the discussion period, message is broadcast to everyone"
  (B.2): `tell` is refused in the presets (`private_messages=False`); condition
  `private_messages` allows it.
- **The discussion schedule.** Table 9 lists discussions "after rounds 5, 10, 15, 20, 25, and
  30"; B.2 says "every 5 rounds (i.e., after rounds 5, 10 and 15)". The schedule follows Table 9:
  one after every `discussion_every`-th round, the last one too (`discussion_after_last`). The
  discussion after round 30 changes no money, but its messages count: under the bandwidth limit
  (one message per trader and discussion) six of Table 3's eight cells are exactly 18 messages and
  none is higher, 3 traders x 6 discussions (30 decision steps + 6 discussions x 3 turns = 48 steps).
"""

from __future__ import annotations

from dataclasses import dataclass

from teamenvs.core.config import setting
from teamenvs.core.messaging import MessagingConditions

# Money stays exact (int or Fraction) in the rules and is written as float in rewards and logs. A round adds at most
# about multiplier x traders x max_investment + bonus to a balance, so these tops keep 10,000 rounds of 100 traders
# near 1e27 dollars, far below a float's range (about 1.8e308; 10**400 dollars raised OverflowError); 10**18 still
# lets a study lift the investment cap in practice (tests/day_trader/test_wealth_scale.py's `no_cap` reading)
MAX_DOLLARS = 10**18
MAX_MULTIPLIER = 1_000


@dataclass(frozen=True)
class DayTraderConfig(MessagingConditions):
    """DayTrader parameters and conditions (defaults: CollabSim's BASELINE)."""

    n_agents: int = setting(3, low=2, high=100, doc="number of traders")
    rounds: int = setting(30, low=1, high=10_000, doc="rounds of the game")
    starting_money: int = setting(200, low=0, high=MAX_DOLLARS, doc="each trader's money at the start, in dollars")
    min_investment: int = setting(15, low=1, high=MAX_DOLLARS, doc="the smallest investment, in dollars")
    max_investment: int = setting(100, low="min_investment", high=MAX_DOLLARS, doc="the largest investment, in dollars")
    individual_multiplier: int = setting(2, low=0, high=MAX_MULTIPLIER, doc="an individual investment comes back multiplied by this")
    group_multiplier: int = setting(3, low=0, high=MAX_MULTIPLIER, doc="the round's group pool is multiplied by this and shared out (see pool_shares)")
    pool_shares: int | None = setting(
        3, low=1,
        doc="the multiplied pool is cut into this many equal shares and every trader, investor or not, gets one: "
            "3 keeps the 3-trader game's return (group_multiplier / 3 per pooled dollar) at every group size, "
            "the reading Table 3's 6- and 9-trader wealth needs; None: split equally among all traders "
            "(Table 9's wording; condition split_among_all)",
    )
    bonus: int = setting(90, low=0, high=MAX_DOLLARS, doc="the round's top-earner bonus in dollars, split equally (rounded down) between tied traders")
    bonus_from_round: int = setting(2, low=1, doc="the first round with a top-earner bonus")
    discussion_every: int = setting(5, low=0, doc="a discussion phase follows every this many rounds; 0: none")
    discussion_after_last: bool = setting(
        True, doc="whether the last round is followed by a discussion when it falls on the schedule (Table 9: after "
                  "round 30 too; it changes no money, but its messages count, as Table 3's do)",
    )
    discussion_turns: int = setting(3, low=0, high=100, doc="steps of each discussion phase")
    private_messages: bool = setting(
        False, doc="whether traders may `tell` one trader privately; CollabSim broadcasts every message (B.2)"
    )
    show_balances: bool = setting(True, doc="whether traders see everyone's balance (else only their own; every choice, "
                                            "share and bonus is still public, so a trader who adds them up can tell them)")


PRESETS: dict[str, dict[str, object]] = {
    # CollabSim Table 1 / App. B.2
    "baseline": {},
    "communication_bandwidth": {"min_steps_between_messages": 5},
    "group_size_6": {"n_agents": 6},
    "group_size_9": {"n_agents": 9},
    "no_communication": {"communication": False},
    # readings of the paper kept as conditions (combine: "group_size_6+split_among_all")
    "split_among_all": {"pool_shares": None},
    "private_messages": {"private_messages": True},
}
