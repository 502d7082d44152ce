"""The commons' configuration: the fishery's parameters, the communication conditions, and the
GovSim-style conditions as presets."""

from __future__ import annotations

from dataclasses import dataclass

from teamenvs.core.config import setting
from teamenvs.core.messaging import MessagingConditions

MAX_TONS = 1_000_000  # the most a lake may hold, and so the most a fisher may ask for


@dataclass(frozen=True)
class CommonsConfig(MessagingConditions):
    """Fishery parameters and conditions (defaults: GovSim's fishery with 5 fishers)."""

    n_agents: int = setting(5, low=2, high=100, doc="number of fishers")
    capacity: int = setting(100, low=1, high=MAX_TONS, doc="the most fish the lake holds, in tons")
    initial_stock: int = setting(100, low=1, high="capacity", doc="fish in the lake at the start, in tons")
    months: int = setting(12, low=1, high=10_000, doc="months of fishing")
    collapse_threshold: int = setting(
        5, low=0, high="initial_stock", doc="fewer tons than this left after a harvest collapse the fishery (at most the initial stock)"
    )
    regrowth_factor: int = setting(2, low=1, high=1_000, doc="the fish left after a harvest multiply by this, up to the capacity")
    discussion_every: int = setting(1, low=0, doc="a discussion phase follows every this many months (not the last); 0: none")
    discussion_turns: int = setting(3, low=0, high=100, doc="steps of each discussion phase")
    universalization_hint: bool = setting(
        False, doc="whether fishers are told what would happen if everyone took the same amount (GovSim's universalization)"
    )


PRESETS: dict[str, dict[str, object]] = {
    "baseline": {},
    "no_communication": {"communication": False},
    "universalization": {"universalization_hint": True},
    "communication_bandwidth": {"min_steps_between_messages": 5},
}
