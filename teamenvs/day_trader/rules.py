"""DayTrader's rules (CollabSim App. B.2, Table 9; after Bos et al. 2002), as pure functions.

Each round every trader makes at most one investment: individual (returned doubled to the
investor) or group (all group investments of the round are pooled, tripled and cut into
`pool_shares` equal shares, one to every trader: three by default, as in the 3-trader game;
see `config.py` for why). From round 2 on, the top earner(s) of the round get a bonus of
$90, split as floor(90 / number of tied winners). A trader's *earnings* of a round, for the
bonus, are its net money change from investing that round (returns received minus the
amount invested), so a trader who waits earns its pool share.

Money is exact: whole dollars are `int`, and a pool share that is not a whole number of dollars
(a pool split among 6 or 9 traders) a `fractions.Fraction`, which a balance then stays. Logs and views
show floats rounded to 6 decimals; a reward is the exact change in a balance as the nearest float.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Mapping, NamedTuple

from teamenvs.core.rounds import Phase, phase_schedule
from teamenvs.day_trader.config import DayTraderConfig

DECISION = "decision"
INDIVIDUAL = "individual"
GROUP = "group"
WAIT = "wait"


def schedule(config: DayTraderConfig) -> tuple[Phase, ...]:
    """All steps of an episode: one decision step per round, discussion steps after every k-th round (after the
    last one too under `discussion_after_last`), and none at all when communication is off.
    """
    return phase_schedule(config.rounds, config.communication, config.discussion_every, config.discussion_turns, DECISION,
                          after_last=config.discussion_after_last)


Money = int | Fraction
"""An exact amount of dollars: an `int` while it is whole (as in every paper preset, where each pooled
dollar pays every trader $1), a `Fraction` once a share was not; the two are the same numbers to
every operation the rules and views use, and `int` arithmetic costs a tenth of `Fraction`'s."""


class Choice(NamedTuple):
    """A trader's decision in a round: kind is individual, group or wait (amount 0)."""

    kind: str
    amount: int = 0


class RoundOutcome(NamedTuple):
    """What a settled round gave: the group pool, each trader's share of it, earnings, bonuses, new balances."""

    pool: int
    pool_share: Money
    earnings: dict[str, Money]
    bonus: dict[str, int]
    balances: dict[str, Money]


def pool_shares(config: DayTraderConfig, traders: int | None = None) -> int:
    """Into how many equal shares the multiplied pool is cut among `traders` (default `n_agents`); each gets one."""
    if config.pool_shares is None:
        return config.n_agents if traders is None else traders
    return config.pool_shares


def net_gain(choice: Choice | None, config: DayTraderConfig) -> int:
    """A choice's earnings on top of the pool share, in whole dollars (None: waiting)."""
    if choice is None or choice.kind == WAIT:
        return 0
    if choice.kind == INDIVIDUAL:
        return (config.individual_multiplier - 1) * choice.amount
    return -choice.amount if choice.kind == GROUP else 0


def settle_round(
    balances: Mapping[str, Money], choices: Mapping[str, Choice], round_no: int, config: DayTraderConfig
) -> RoundOutcome:
    """Settle one round. `choices` must already be valid (affordable, in range); missing = wait."""
    agents = list(balances)
    pool = sum(c.amount for c in choices.values() if c.kind == GROUP)
    multiplied, shares = pool * config.group_multiplier, pool_shares(config, len(agents))
    share: Money = multiplied // shares if multiplied % shares == 0 else Fraction(multiplied, shares)
    # every trader's earnings are the one pool share plus whole dollars: the bonus compares the dollars
    net = {a: net_gain(choices.get(a), config) for a in agents}
    earnings: dict[str, Money] = {a: share + d if d else share for a, d in net.items()}
    bonus: dict[str, int] = {}
    if round_no >= config.bonus_from_round and config.bonus > 0:
        top = max(net.values())
        winners = [a for a in agents if net[a] == top]
        bonus = {a: config.bonus // len(winners) for a in winners}
    new_balances = {a: balances[a] + (earnings[a] + bonus[a] if a in bonus else earnings[a]) for a in agents}
    return RoundOutcome(pool, share, earnings, bonus, new_balances)


def wealth_ceiling(config: DayTraderConfig, group: bool = True) -> Fraction:
    """The most mean final wealth a team can reach under `config` (`group=False`: with
    individual investments only, the ceiling of a team that never cooperates).

    Each round every trader invests at most `max_investment`; a dollar invested individually
    adds `individual_multiplier - 1` to the team's money, a pooled dollar
    `n_agents * group_multiplier / pool_shares - 1`; the bonus adds at most `bonus` a round.
    Everyone investing the maximum in the better option and tying for the bonus reaches the
    bound when `n_agents` divides the bonus (3, 6 and 9 traders and $90) and the starting money
    covers the maximum investment ($200 and $100).
    """
    per_dollar = config.individual_multiplier - 1
    if group:
        per_dollar = max(per_dollar, Fraction(config.n_agents * config.group_multiplier, pool_shares(config)) - 1)
    bonus_rounds = max(0, config.rounds - config.bonus_from_round + 1)
    return config.starting_money + config.rounds * config.max_investment * max(per_dollar, 0) + Fraction(
        bonus_rounds * config.bonus, config.n_agents)


def affordable_max(money: Money, config: DayTraderConfig) -> int:
    """The largest investment a trader with `money` may make now (below the minimum: cannot invest)."""
    return min(config.max_investment, int(money))  # int() floors non-negative money


def as_float(value: Money) -> float:
    """`float(value)`: for a Fraction the same true division of numerator by denominator, without the
    generic `numbers.Rational` detour (money is converted several times per trader and round)."""
    return value.numerator / value.denominator if type(value) is Fraction else float(value)


def money_json(value: Money) -> float:
    """The float spelling of money in views and logs: to 6 decimals."""
    amount = as_float(value)
    # whole dollars (most money) are their own rounding, and `round` with digits goes through decimal text both ways
    # (about ten times `is_integer`'s cost; it was 4% of a DayTrader episode)
    return amount if amount.is_integer() else round(amount, 6)


def investment_refusal(choice: Choice, top: int, config: DayTraderConfig) -> str | None:
    """Why the rules refuse `choice` of a trader who may invest up to `top` now (`affordable_max`
    of its money); None: they carry it out.

    An investment must be from the minimum to `top`; waiting is always allowed. The env's
    `_apply` and its action-mask check (`_refusal`) both ask this one function.
    """
    if choice.kind == WAIT:
        return None
    if top < config.min_investment:
        return f"you cannot afford the minimum investment of ${config.min_investment}"
    if not config.min_investment <= choice.amount <= top:
        return f"an investment must be from ${config.min_investment} to ${top} now (got ${choice.amount})"
    return None
