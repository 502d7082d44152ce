"""Meeting point's config: ring size, team size and step limit, plus the messaging conditions."""

from __future__ import annotations

from dataclasses import dataclass

from teamenvs.core.config import ConfigError, setting
from teamenvs.core.messaging import MessagingConditions


@dataclass(frozen=True)
class MeetingPointConfig(MessagingConditions):
    """A ring of `cells` cells, `n_agents` agents on distinct random cells, at most `max_steps` steps."""

    n_agents: int = setting(3, low=2, high=10, doc="agents on the ring")
    cells: int = setting(12, low=3, high=1000, doc="cells on the ring")
    max_steps: int = setting(40, low=1, high=10_000, doc="steps before the episode is cut off")

    def _check(self) -> None:
        if self.cells < self.n_agents:
            raise ConfigError(f"cells must be at least n_agents ({self.n_agents}), got {self.cells}")


PRESETS: dict[str, dict[str, object]] = {
    "baseline": {},
    "no_communication": {"communication": False},
}
