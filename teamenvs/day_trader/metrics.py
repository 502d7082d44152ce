"""DayTrader's metrics (after CollabSim), a pure function of an episode log, and which way each is better."""

from __future__ import annotations

from typing import Any, Sequence

from teamenvs.core.metrics import gini, header, invalid_action_rate, message_events, messages_per_agent, SHARE
from teamenvs.core.recorder import step_records

# Which way each metric is better, for benchmark reports ("max" or "min"); unlisted metrics are descriptive.
METRIC_GOALS: dict[str, str] = {
    "mean_final_wealth": "max", "cooperation_rate": "max", "mean_group_pool": "max", "collabsim_group_pool": "max", "gini_wealth": "min",
    "invalid_action_rate": "min",
}

# The least and most each bounded metric can be in any episode (shares, rates, yes/no), for figures.
METRIC_BOUNDS: dict[str, tuple[float, float]] = dict.fromkeys((
    "cooperation_rate", "gini_wealth", "invalid_action_rate",
), SHARE)


def day_trader_metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """CollabSim's DayTrader measures: wealth (outcome), cooperation rate, pool size, messages (process).

    cooperation_rate = group investments / all investments (0.0 when nobody invested);
    mean_group_pool = mean pool over the rounds whose pool was not empty (0.0 when none was);
    group_pool_per_round = total group contributions / rounds played (the definition's "per round" read literally);
    collabsim_group_pool = the mean of the distinct round pool totals, an empty pool's 0 among them: CollabSim's
    "average group pool size" as its released analysis computes it (`analysis/task_metrics.py`,
    `avg_group_pool_per_round`: a round's total is kept only if no earlier round had it) and Table 3 reports it, the
    only reading under which Table 3's pools fit its wealth (83.1% cooperation, a $167 pool and $6,270: pools of $0,
    $200 and $300, most rounds at $300) and its cooperation (1.8% beside $50: one $100 pool among empty ones).
    """
    head = header(records)
    agents = head["agents"]
    rounds = [e for step in step_records(records) for e in step.get("events", ()) if e.get("type") == "round"]
    if rounds:
        wealth = dict(rounds[-1]["balances"])
    else:
        wealth = {a: float(head["config"]["starting_money"]) for a in agents}
    investments = [c for r in rounds for c in r["choices"].values() if c["kind"] != "wait"]
    group = sum(1 for c in investments if c["kind"] == "group")
    pools = [r["pool"] for r in rounds if r["pool"]]
    distinct = list(dict.fromkeys(r["pool"] for r in rounds))
    messages = message_events(records)
    return {
        "mean_final_wealth": sum(wealth.values()) / len(wealth),
        "wealth": wealth,
        "cooperation_rate": group / len(investments) if investments else 0.0,
        "mean_group_pool": sum(pools) / len(pools) if pools else 0.0,
        "group_pool_per_round": sum(pools) / len(rounds) if rounds else 0.0,
        "collabsim_group_pool": sum(distinct) / len(distinct) if distinct else 0.0,
        "total_messages": len(messages),
        "messages_per_agent": messages_per_agent(records, agents),
        "gini_wealth": gini(wealth.values()),
        "invalid_action_rate": invalid_action_rate(records),
        "rounds_played": len(rounds),
    }
