"""DayTrader (CollabSim): traders invest individually or in the group pool each round (a social dilemma)."""

from teamenvs.core.paradigm import Paradigm

PARADIGM = Paradigm(
    env_id="day_trader_v0",
    env_class="teamenvs.day_trader.env:DayTraderEnv",
    gym_name="DayTrader",
    title="DayTrader",
    summary="CollabSim DayTrader: individual vs group investment over 30 rounds (social dilemma)",
    baselines="teamenvs.day_trader.baselines",
    smoke_conditions=("baseline",),
    order=10,
    # len(rules.schedule(DayTraderConfig())): 30 decision steps (one per round) plus a discussion of
    # 3 turns after every 5th round (rounds 5, 10, 15, 20, 25 and 30): 30 + 6 * 3 = 48
    max_episode_steps=48,
)
