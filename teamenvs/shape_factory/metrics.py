"""Shape Factory's metrics (CollabSim 4.2, Table 2), pure functions of an episode log, and which way each is better."""

from __future__ import annotations

from typing import Any, Sequence

from teamenvs.core.metrics import gini, header, invalid_action_rate, message_events, messages_per_agent, SHARE
from teamenvs.core.recorder import step_records

# Which way each metric is better, for benchmark reports ("max" or "min"); unlisted metrics are descriptive.
METRIC_GOALS: dict[str, str] = {
    "mean_wealth": "max", "order_fulfillment_rate": "max", "trade_accept_rate": "max", "invalid_action_rate": "min",
}

# The least and most each bounded metric can be in any episode (shares, rates, yes/no), for figures.
METRIC_BOUNDS: dict[str, tuple[float, float]] = dict.fromkeys((
    "trade_accept_rate", "order_fulfillment_rate", "orders_fulfilled_share", "specialty_production_share",
    "gini_wealth", "invalid_action_rate",
), SHARE)


def global_events(records: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """Every logged team-wide event of one type, in order."""
    return [e for step in step_records(records) for e in step.get("events", ()) if e.get("type") == kind]


def final_wealth(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Each agent's money at the end: the starting money plus its rewards (a reward is a step's change of money)."""
    head = header(records)
    wealth = {a: float(head["config"]["starting_money"]) for a in head["agents"]}
    for step in step_records(records):
        for agent, entry in step["agents"].items():
            wealth[agent] += entry.get("reward", 0.0)
    return wealth


def ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def shape_factory_metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """CollabSim's Shape Factory measures.

    mean_wealth = mean final money (starting money, incentives, trade money, minus production costs);
    trade_accept_rate = accepted offers / proposed offers (0.0 with no offer);
    order_fulfillment_rate = share of agents who fulfilled every one of their orders;
    message_trade_ratio = messages / accepted trades, with no accepted trade the message count itself
    (Table 2 reports 16 messages per trade for a team that accepted none).
    """
    head = header(records)
    agents = head["agents"]
    orders = head["config"]["orders_per_agent"]
    wealth = final_wealth(records)
    proposed = len(global_events(records, "offer"))
    trades = global_events(records, "trade")
    fulfilled = {a: 0 for a in agents}
    for e in global_events(records, "fulfilled"):
        fulfilled[e["agent"]] += 1
    made = global_events(records, "production_started")
    messages = len(message_events(records))
    return {
        "mean_wealth": sum(wealth.values()) / len(wealth),
        "wealth": wealth,
        "trade_accept_rate": ratio(len(trades), proposed),
        "order_fulfillment_rate": sum(n >= orders for n in fulfilled.values()) / len(agents),
        "message_trade_ratio": messages / max(len(trades), 1),
        "invalid_action_rate": invalid_action_rate(records),
        "offers_proposed": proposed,
        "trades_accepted": len(trades),
        "orders_fulfilled": sum(fulfilled.values()),
        "orders_fulfilled_share": ratio(sum(fulfilled.values()), orders * len(agents)),
        "shapes_started": len(made),
        "specialty_production_share": ratio(sum(e["cost"] == head["config"]["specialty_cost"] for e in made), len(made)),
        "total_messages": messages,
        "messages_per_agent": messages_per_agent(records, agents),
        "gini_wealth": gini(wealth.values()),
        "steps": sum(1 for _ in step_records(records)),
    }
