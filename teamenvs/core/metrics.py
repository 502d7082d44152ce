"""Metric helpers shared by paradigms, all pure functions over an episode log (a list of records).

`episode_metrics(records)` dispatches on the log's header to the paradigm's own metric
function (the env class's `episode_metrics`), so metrics can be recomputed from a log file
alone.
"""

from __future__ import annotations

import math

from typing import Any, Iterable, Mapping, Sequence

from teamenvs.core.recorder import step_records


def gini(values: Iterable[float]) -> float:
    """Gini coefficient of non-negative values (0 = perfect equality); 0.0 for an empty or all-zero list."""
    xs = sorted(float(v) for v in values)
    n = len(xs)
    total = sum(xs)
    if n == 0 or total <= 0:
        return 0.0
    weighted = sum((i + 1) * x for i, x in enumerate(xs))
    return (2.0 * weighted) / (n * total) - (n + 1.0) / n


def header(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The header record of a log."""
    for r in records:
        if r.get("type") == "header":
            return r
    raise ValueError("episode log has no header line")


def action_outcomes(records: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """(actions taken, invalid actions) over the episode; ignored (busy) turns are not actions."""
    taken = invalid = 0
    for step in step_records(records):
        for entry in step["agents"].values():
            action = entry.get("action")
            if not action or action.get("ignored"):
                continue
            taken += 1
            if not action["ok"]:
                invalid += 1
    return taken, invalid


def invalid_action_rate(records: Sequence[dict[str, Any]]) -> float:
    """Share of actions that were rejected (unparseable, not allowed now, or refused by the rules)."""
    taken, invalid = action_outcomes(records)
    return invalid / taken if taken else 0.0


def message_events(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every message actually sent (after the communication conditions), in order."""
    return [e for step in step_records(records) for e in step.get("events", ()) if e.get("type") == "message"]


def messages_per_agent(records: Sequence[dict[str, Any]], agents: Sequence[str]) -> dict[str, int]:
    counts = {a: 0 for a in agents}
    for e in message_events(records):
        counts[e["sender"]] = counts.get(e["sender"], 0) + 1
    return counts


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    """Mean and population standard deviation (ddof=0), the spread every teamenvs summary and report shows."""
    if not values:
        raise ValueError("mean_sd needs at least one value")
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((x - mean) ** 2 for x in values) / len(values))


def bootstrap_ci(values: Sequence[float], level: float = 0.95, resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """A percentile bootstrap confidence interval of the mean (seeded, so a report is reproducible);
    one value gives (value, value)."""
    import numpy as np

    if not values:
        raise ValueError("bootstrap_ci needs at least one value")
    xs = np.asarray(values, dtype=float)
    if len(xs) == 1:
        return float(xs[0]), float(xs[0])
    means = np.random.default_rng(seed).choice(xs, size=(resamples, len(xs)), replace=True).mean(axis=1)
    tail = (1 - level) / 2
    return float(np.quantile(means, tail)), float(np.quantile(means, 1 - tail))


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested metrics as one level: {"a": {"b": 1}} -> {"a.b": 1}; leaves are kept as they are."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping):
            out.update(flatten(value, name))
        else:
            out[name] = value
    return out


def episode_metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The paradigm's metrics for an episode log (dispatching on the header's env id)."""
    from teamenvs.registry import spec

    env_cls = spec(header(records)["env_id"]).load_env_class()
    return env_cls.episode_metrics(records)


def metric_goals(env_id: str) -> dict[str, str]:
    """Which way each of the paradigm's metrics is better ("max" or "min"); metrics not listed are descriptive."""
    from teamenvs.registry import spec

    return dict(getattr(spec(env_id).load_env_class(), "metric_goals", {}))
