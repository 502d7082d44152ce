"""The commons' rules (a GovSim-style fishery, after Piatti et al. 2024), as pure functions.

Fishers share a lake. Each month every fisher asks for a whole number of tons at the same
time. If the requests add up to more than the stock, catches are shared in proportion to
the requests by a largest-remainder rule (the floor of stock * request / total demand,
then the leftover tons one each to the largest fractional remainders, ties broken by a
seeded generator), so catches are whole tons and never exceed a request. If fewer than
`collapse_threshold` tons are left after the harvest, the fishery collapses and the
episode ends; otherwise the fish left multiply by `regrowth_factor`, up to `capacity`.

With the default doubling, leaving half of the stock regrows it fully, so the sustainable
per-fisher share of a month is floor(stock / 2 / n) (what it leaves never below the collapse threshold). The universalization hint (GovSim's
"what if everyone did that?") is computed here as well.
"""

from __future__ import annotations

from typing import Mapping, NamedTuple

import numpy as np

from teamenvs.commons.config import CommonsConfig
from teamenvs.core.rounds import Phase, phase_schedule

HARVEST = "harvest"


def schedule(config: CommonsConfig) -> tuple[Phase, ...]:
    """All steps of an episode: one harvest step per month, discussion steps after every k-th month.

    `Phase.round` is the month. There is no discussion after the last month, and none at all
    when communication is off. (A collapse ends the episode wherever it is in the schedule.)
    """
    return phase_schedule(config.months, config.communication, config.discussion_every, config.discussion_turns, HARVEST)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def sustainable_share(stock: int, n: int, factor: int = 2, threshold: int = 0) -> int:
    """The most each of `n` fishers can take so that the fish left regrow to `stock` (and do not collapse).

    Leaving ceil(stock / factor) tons, and never fewer than the collapse `threshold`, regrows at least to `stock`; the
    rest, split equally and rounded down, is the share. With the default doubling and a stock of at least twice the
    threshold this is floor(stock / 2 / n).
    """
    return max(0, stock - max(_ceil_div(stock, factor), threshold)) // n


def regrow(remaining: int, capacity: int, factor: int = 2) -> int:
    """The stock after regrowth: the fish left multiplied by `factor`, up to `capacity`."""
    return min(capacity, remaining * factor)


def allocate_catch(stock: int, requests: Mapping[str, int], rng: np.random.Generator) -> dict[str, int]:
    """Whole-ton catches for `requests` from a lake holding `stock` tons.

    When the total request fits, everyone gets what they asked. Otherwise each fisher gets
    floor(stock * request / total) and the leftover tons go one each to the largest fractional
    remainders; equal remainders are ordered by a random draw from `rng` (drawn only then).
    Catches sum to `stock` and nobody gets more than it asked.
    """
    total = sum(requests.values())
    if total <= stock:
        return dict(requests)
    catches = {a: stock * r // total for a, r in requests.items()}
    leftover = stock - sum(catches.values())
    if leftover:
        agents = list(requests)
        tie_keys = rng.random(len(agents)).tolist()  # the same draws as Python floats: numpy scalars sort slower
        order = sorted(range(len(agents)), key=lambda i: (-(stock * requests[agents[i]] % total), tie_keys[i]))
        for i in order[:leftover]:
            catches[agents[i]] += 1
    return catches


class MonthOutcome(NamedTuple):
    """What a month's harvest did to the lake and the fishers."""

    stock_before: int
    requests: dict[str, int]
    catches: dict[str, int]
    sustainable_share: int
    remaining: int
    collapsed: bool
    stock_after: int  # after regrowth; equal to `remaining` on a collapse (no regrowth then)


def settle_month(stock: int, requests: Mapping[str, int], rng: np.random.Generator, config: CommonsConfig) -> MonthOutcome:
    """Settle one month: allocate catches, check for collapse, regrow. `requests` are tons >= 0."""
    catches = allocate_catch(stock, requests, rng)
    remaining = stock - sum(catches.values())
    collapsed = remaining < config.collapse_threshold
    after = remaining if collapsed else regrow(remaining, config.capacity, config.regrowth_factor)
    share = sustainable_share(stock, len(requests), config.regrowth_factor, config.collapse_threshold)
    return MonthOutcome(stock, dict(requests), catches, share, remaining, collapsed, after)


def max_sustainable_total(config: CommonsConfig) -> int:
    """The team's total catch over the horizon under the sustainable benchmark policy.

    Each month the team takes everything above the level that regrows to capacity
    (ceil(capacity / factor), and never below the collapse threshold), so the lake is full
    again next month; below that level it takes nothing and lets the lake regrow. This is
    the denominator of the `efficiency` metric (600 tons for the defaults: 12 months x 50).
    """
    keep = max(_ceil_div(config.capacity, config.regrowth_factor), config.collapse_threshold)
    stock, total = config.initial_stock, 0
    for _ in range(config.months):
        take = max(0, stock - keep)
        total += take
        stock = regrow(stock - take, config.capacity, config.regrowth_factor)
    return total


# ---------------------------------------------------------------------- universalization
def stock_if_all_take(stock: int, amount: int, config: CommonsConfig) -> int | None:
    """The stock after regrowth if every fisher asked for `amount` tons; None if the lake would collapse."""
    remaining = max(0, stock - amount * config.n_agents)
    if remaining < config.collapse_threshold:
        return None
    return regrow(remaining, config.capacity, config.regrowth_factor)


def max_equal_harvest(stock: int, config: CommonsConfig) -> int:
    """The largest amount every fisher can take at once without collapsing the lake (0 if none is safe)."""
    return max(0, (stock - config.collapse_threshold) // config.n_agents)


class Universalization(NamedTuple):
    """The universalization hint: consequences of everyone taking the same amount this month."""

    sustainable_share: int
    stock_if_all_take_share: int | None
    max_equal_harvest: int
    stock_if_all_take_max: int | None


def universalization(stock: int, config: CommonsConfig) -> Universalization:
    """The hint for a month starting with `stock` tons."""
    share = sustainable_share(stock, config.n_agents, config.regrowth_factor, config.collapse_threshold)
    top = max_equal_harvest(stock, config)
    return Universalization(share, stock_if_all_take(stock, share, config), top, stock_if_all_take(stock, top, config))


def request_refusal(amount: int, stock: int) -> str | None:
    """Why the rules refuse a request of `amount` tons from a lake holding `stock` (None: they take it).

    A fisher may ask for 0 up to the whole stock. The env's `_apply` and its action-mask check
    (`_refusal`) both ask this one function.
    """
    if not 0 <= amount <= stock:
        return f"a request must be from 0 to {stock} tons now, the lake holds {stock} tons (got {amount})"
    return None
