"""Meeting point's metrics over an episode log, and which way each is better."""

from __future__ import annotations

from typing import Any, Sequence

from teamenvs.core.metrics import invalid_action_rate, message_events
from teamenvs.core.recorder import step_records

METRIC_GOALS = {"met": "max", "steps_to_meet": "min", "messages": "min", "invalid_action_rate": "min"}


def meeting_point_metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Whether the team met, after how many steps (None if it did not), messages sent, invalid action rate."""
    steps = list(step_records(records))
    meeting = next((s["step"] + 1 for s in steps if any(e.get("type") == "met" for e in s.get("events", ()))), None)
    return {
        "met": meeting is not None,
        "steps_to_meet": meeting,
        "messages": len(message_events(records)),
        "invalid_action_rate": invalid_action_rate(records),
    }
