"""Social-dilemma metrics (CollabSim DayTrader, GovSim-style commons), pure functions over an episode log."""

from __future__ import annotations

from typing import Any, Sequence

from teamenvs.core.metrics import gini, header, invalid_action_rate, message_events, messages_per_agent
from teamenvs.core.recorder import step_records

# Which way each metric is better, for benchmark reports ("max" or "min"); unlisted metrics are descriptive.
DAY_TRADER_GOALS: dict[str, str] = {
    "mean_final_wealth": "max", "cooperation_rate": "max", "mean_group_pool": "max", "gini_wealth": "min", "invalid_action_rate": "min",
}
COMMONS_GOALS: dict[str, str] = {
    "survival_time": "max", "survived": "max", "total_gain": "max", "efficiency": "max", "equality": "max",
    "over_usage_rate": "min", "invalid_action_rate": "min",
}


def _events(records: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for step in step_records(records) for e in step.get("events", ()) if e.get("type") == kind]


def day_trader_metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """CollabSim's DayTrader measures: wealth (outcome), cooperation rate, pool size, messages (process).

    cooperation_rate = group investments / all investments (0.0 when nobody invested);
    mean_group_pool = total group contributions / rounds played.
    """
    head = header(records)
    agents = head["agents"]
    rounds = _events(records, "round")
    if rounds:
        wealth = dict(rounds[-1]["balances"])
    else:
        wealth = {a: float(head["config"]["starting_money"]) for a in agents}
    investments = [c for r in rounds for c in r["choices"].values() if c["kind"] != "wait"]
    group = sum(1 for c in investments if c["kind"] == "group")
    messages = message_events(records)
    return {
        "mean_final_wealth": sum(wealth.values()) / len(wealth),
        "wealth": wealth,
        "cooperation_rate": group / len(investments) if investments else 0.0,
        "mean_group_pool": sum(r["pool"] for r in rounds) / len(rounds) if rounds else 0.0,
        "total_messages": len(messages),
        "messages_per_agent": messages_per_agent(records, agents),
        "gini_wealth": gini(wealth.values()),
        "invalid_action_rate": invalid_action_rate(records),
        "rounds_played": len(rounds),
    }


def commons_metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """GovSim-style measures of a commons episode, from its month events and header alone.

    survival_time: the month in which the fishery collapsed, else the months played (the
    horizon, for a complete episode); efficiency: total catch / `max_sustainable_total` of
    the header's config; equality: 1 - Gini of the fishers' catches; over_usage_rate: share
    of monthly requests above that month's sustainable per-fisher share (a `wait`, or a
    missing or invalid action, is a request of 0).
    """
    from teamenvs.social_dilemma.commons import CommonsConfig, max_sustainable_total

    head = header(records)
    agents = head["agents"]
    config = CommonsConfig(**head["config"])
    months = _events(records, "month")
    gain = {a: 0 for a in agents}
    requests = over = 0
    for m in months:
        for a, caught in m["catches"].items():
            gain[a] = gain.get(a, 0) + caught
        for asked in m["requests"].values():
            requests += 1
            over += asked > m["sustainable_share"]
    collapse = next((m["month"] for m in months if m["collapsed"]), None)
    total = sum(gain.values())
    benchmark = max_sustainable_total(config)
    return {
        "survival_time": collapse if collapse is not None else len(months),
        "survived": collapse is None,
        "total_gain": total,
        "gain": gain,
        "efficiency": total / benchmark if benchmark else 0.0,
        "equality": 1.0 - gini(gain.values()),
        "over_usage_rate": over / requests if requests else 0.0,
        "total_messages": len(message_events(records)),
        "messages_per_agent": messages_per_agent(records, agents),
        "invalid_action_rate": invalid_action_rate(records),
        "months_played": len(months),
        "final_stock": months[-1]["stock_after"] if months else config.initial_stock,
    }
