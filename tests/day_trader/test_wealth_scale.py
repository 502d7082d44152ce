"""Which reading of CollabSim's DayTrader rules reaches the wealth of its Table 3 (issue 17, item 10).

Table 3 reports mean final wealth up to $6,270 with 3 traders, $13,402 with 6 and $15,005 with 9.
Under Table 9's wording (the tripled pool "divided equally among all participants", investments
of $15-$100, the mean over traders) no team can average more than $7,070 / $6,635 / $6,490. The
best mean wealth under each candidate reading (`rules.wealth_ceiling`, or a simulation where the
reading is not a config), against the paper's highest figure:

| reading | 3 traders | 6 traders | 9 traders | fits Table 3 (6,270 / 13,402 / 15,005)? |
|---|---:|---:|---:|---|
| Table 9's wording: pool split among all n (condition `split_among_all`) | 7,070 | 6,635 | 6,490 | no: 6 and 9 traders |
| wealth summed over traders, not the mean | 21,210 | 39,810 | 58,410 | highs yes, but see below |
| B.2's "incentive money = 60" paid to every trader every round | 8,870 | 8,435 | 8,290 | no |
| the $60 incentive as the bonus | 6,780 | 6,490 | 6,393 | no |
| the $60 incentive on top of the $90 bonus | 7,650 | 6,925 | 6,683 | no |
| the bonus paid in full to every tied top earner | 8,810 | 8,810 | 8,810 | no |
| no $100 cap ("min/max trade price" is Shape Factory's line) | ~4e16 | ~4e16 | ~4e16 | trivially |
| **the tripled pool cut into three shares at every size (the presets, `pool_shares=3`)** | **7,070** | **15,635** | **24,490** | **yes** |

Only three readings reach the 6- and 9-trader figures. A sum is refuted by the low cells: GPT-5.5's
9 traders (0% cooperation, so individual investments only, which never lose money) would have
gained $197 together in 30 rounds, less than three of the 29 top-earner bonuses (each at least $84
when anyone invests), and the paper calls the figure "average wealth". Dropping the $100 cap makes
any figure reachable, but the eighteen cells with under 2% cooperation all stay under the capped
individual-only ceiling ($4,070 / $3,635 / $3,490), the best at 95% of it and seven within 8%,
as a cap predicts. The three-share reading keeps the cap, the doubled individual return and the $90 bonus,
leaves the 3-trader BASELINE exactly as B.2 and Table 9 state it, holds every Table 3 cell, and
is the one reading whose ceiling rises with group size, as Claude's theory-informed wealth does
(5,143 -> 13,402 -> 15,005; "the only model whose returns increase monotonically with group
size"). What it does not fix: Table 3's pool-size column is below what its wealth needs under any
capped reading, at 3 traders too (83.1% cooperation and a $167 pool cannot make $6,270), so that
column cannot decide between readings.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest

from teamenvs.day_trader.config import PRESETS, DayTraderConfig
from teamenvs.day_trader.rules import GROUP, Choice, affordable_max, settle_round, wealth_ceiling

SIZES = (3, 6, 9)
PAPER_BEST = {3: 6_270, 6: 13_402, 9: 15_005}  # Table 3's highest mean wealth per group size

# Table 3, every cell: (wealth, cooperation %) per group size (persona-based and theory-informed agents).
TABLE_3 = {
    3: [(5267, 61.2), (3873, 82.9), (3850, 0), (5453, 56.8), (2803, 3.5), (2737, 3.7), (3436, 0), (5143, 83.1),
        (2982, 0), (2620, 5), (3770, 0), (6270, 83.1), (2670, 0), (2703, 1.8), (3803, 0), (4003, 6.7)],
    6: [(9685, 63.7), (3672, 15.4), (3233, 0), (3386, 0), (2150, 0), (2216, 1.0), (3326, 1.2), (13402, 83.8)],
    9: [(2636, 0), (3519, 13.2), (3315, 0.4), (3217, 0), (1997, 0), (2075, 0.6), (3252, 0.8), (15005, 64.3)],
}


def paper(n: int, **reading) -> DayTraderConfig:
    """The paper preset for `n` traders, with a reading's changes."""
    preset = {3: "baseline", 6: "group_size_6", 9: "group_size_9"}[n]
    return DayTraderConfig(**{**PRESETS[preset], **reading})


def all_in(config: DayTraderConfig) -> Fraction:
    """Mean final wealth when every trader pools all it may invest, every round (exact money)."""
    agents = [f"t{i}" for i in range(config.n_agents)]
    balances = {a: Fraction(config.starting_money) for a in agents}
    for r in range(1, config.rounds + 1):
        choices = {a: Choice(GROUP, affordable_max(balances[a], config)) for a in agents}
        balances = settle_round(balances, choices, r, config).balances
    return sum(balances.values()) / len(agents)


def readings(n: int) -> dict[str, Fraction]:
    """Best mean wealth for `n` traders under each candidate reading of the rules."""
    even = paper(n, pool_shares=None)
    today = wealth_ceiling(even)
    return {
        "split_among_all": today,
        "sum": n * today,
        "incentive_each_round": today + even.rounds * 60,
        "incentive_as_bonus": wealth_ceiling(replace(even, bonus=60)),
        "incentive_plus_bonus": wealth_ceiling(replace(even, bonus=90 + 60)),
        "bonus_in_full": today + (even.rounds - 1) * (90 - Fraction(90, n)),
        "no_cap": all_in(replace(even, max_investment=10**18)),
        "three_shares": wealth_ceiling(paper(n)),
    }


def test_today_reading_cannot_reach_table_3():
    best = {n: readings(n)["split_among_all"] for n in SIZES}
    assert best == {3: 7_070, 6: 6_635, 9: 6_490}
    assert [best[n] >= PAPER_BEST[n] for n in SIZES] == [True, False, False]


def test_the_readings_table():
    table = {n: readings(n) for n in SIZES}
    whole = {name: tuple(int(table[n][name]) for n in SIZES) for name in table[3] if name != "no_cap"}
    assert whole == {
        "split_among_all": (7_070, 6_635, 6_490),
        "sum": (21_210, 39_810, 58_410),
        "incentive_each_round": (8_870, 8_435, 8_290),
        "incentive_as_bonus": (6_780, 6_490, 6_393),
        "incentive_plus_bonus": (7_650, 6_925, 6_683),
        "bonus_in_full": (8_810, 8_810, 8_810),
        "three_shares": (7_070, 15_635, 24_490),
    }
    assert all(3e16 < table[n]["no_cap"] < 5e16 for n in SIZES)  # about 200 * 3**30
    reaching = {name for name in table[3] if all(table[n][name] >= PAPER_BEST[n] for n in SIZES)}
    assert reaching == {"sum", "no_cap", "three_shares"}


def test_the_paper_presets_reach_every_table_3_cell_and_the_ceiling_is_reached():
    for n in SIZES:
        config = paper(n)
        assert config.pool_shares == 3
        assert all_in(config) == wealth_ceiling(config)  # all pooling $100 and tying for the bonus
        assert all(wealth <= wealth_ceiling(config) for wealth, _ in TABLE_3[n])
    ceilings = [wealth_ceiling(paper(n)) for n in SIZES]
    assert ceilings == sorted(ceilings)  # rises with group size, as Claude's wealth does


def test_zero_cooperation_cells_stay_under_the_capped_individual_ceiling():
    for n in SIZES:
        ceiling = wealth_ceiling(paper(n), group=False)
        assert ceiling == {3: 4_070, 6: 3_635, 9: 3_490}[n]
        near_zero = [wealth for wealth, cooperation in TABLE_3[n] if cooperation < 2]
        assert near_zero and all(wealth <= ceiling for wealth in near_zero)
    shares = [w / wealth_ceiling(paper(n), group=False) for n in SIZES for w, c in TABLE_3[n] if c < 2]
    assert len(shares) == 18 and 0.94 < max(shares) < 0.96 and sum(s >= 0.92 for s in shares) == 7


def test_a_sum_contradicts_the_nine_trader_zero_cooperation_cell():
    least_bonus = min(90 // winners * winners for winners in range(1, 10))  # paid out in a round anyone invests
    assert least_bonus == 84
    gained_together = 1_997 - 9 * 200  # GPT-5.5, 9 traders, 0% cooperation, read as a sum
    assert gained_together == 197 < 3 * least_bonus


@pytest.mark.parametrize("n", SIZES)
def test_three_traders_play_the_same_game_under_both_readings(n):
    assert (wealth_ceiling(paper(n)) == wealth_ceiling(paper(n, pool_shares=None))) == (n == 3)
