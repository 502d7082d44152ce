"""The commons' metrics (after GovSim), a pure function of an episode log, and which way each is better."""

from __future__ import annotations

from typing import Any, Sequence

from teamenvs.commons.config import CommonsConfig
from teamenvs.commons.rules import max_sustainable_total
from teamenvs.core.metrics import gini, header, invalid_action_rate, message_events, messages_per_agent, SHARE
from teamenvs.core.recorder import step_records

# Which way each metric is better, for benchmark reports ("max" or "min"); unlisted metrics are descriptive.
METRIC_GOALS: dict[str, str] = {
    "survival_time": "max", "survived": "max", "total_gain": "max", "efficiency": "max", "equality": "max",
    "over_usage_rate": "min", "invalid_action_rate": "min",
}

# The least and most each bounded metric can be in any episode (shares, rates, yes/no), for figures.
METRIC_BOUNDS: dict[str, tuple[float, float]] = dict.fromkeys((
    "survived", "efficiency", "equality", "over_usage_rate", "invalid_action_rate",
), SHARE)


def commons_metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """GovSim-style measures of a commons episode, from its month events and header alone.

    survival_time: the month in which the fishery collapsed, else the months played (the
    horizon, for a complete episode); survived: no collapse up to the horizon (None for an
    episode cut before the horizon without a collapse, by a step cap or a budget: whether
    the fishery would have lasted is unknown, and survival curves treat it as censored);
    efficiency: total catch / `max_sustainable_total` of the header's config, at most 1 (GovSim's
    u = 1 - max(0, benchmark - total) / benchmark: a team that overfishes at the end, or empties the
    lake in the last month, catches more than the benchmark but is no more efficient than a
    sustainable one; None where no catch is sustainable, `regrowth_factor` 1); equality: 1 - Gini of the fishers' catches;
    over_usage_rate: share of monthly requests above that month's sustainable per-fisher
    share (a `wait`, or a missing or invalid action, is a request of 0).
    """
    head = header(records)
    agents = head["agents"]
    config = CommonsConfig(**head["config"])
    months = [e for step in step_records(records) for e in step.get("events", ()) if e.get("type") == "month"]
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
        "survived": False if collapse is not None else True if len(months) >= config.months else None,
        "total_gain": total,
        "gain": gain,
        "efficiency": min(1.0, total / benchmark) if benchmark else None,
        "equality": 1.0 - gini(gain.values()),
        "over_usage_rate": over / requests if requests else 0.0,
        "total_messages": len(message_events(records)),
        "messages_per_agent": messages_per_agent(records, agents),
        "invalid_action_rate": invalid_action_rate(records),
        "months_played": len(months),
        "final_stock": months[-1]["stock_after"] if months else config.initial_stock,
    }
