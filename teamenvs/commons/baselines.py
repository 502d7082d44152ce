"""The commons' scripted baselines (GovSim-style fishery), deciding from the agent's view only.

`sustainable` (asks for floor(stock / 2 / n), the share that lets the lake regrow), `greedy`
(asks for the whole stock), `mimic` (last month's mean request, rounded; the sustainable
share in month 1; the default `scripted` kind), `grim` (sustainable until anyone asked for
more than that month's sustainable share, then greedy for good). Each says one line about
its strategy on the first turn of each discussion phase, when messages are allowed.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Mapping

from teamenvs.core.policy import ScriptedPolicy
from teamenvs.core.rounds import DiscussingBaseline
from teamenvs.commons.rules import sustainable_share


class CommonsBaseline(DiscussingBaseline):
    """Commons baselines: `request` says how many tons to ask for in a harvest phase."""

    def decision(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        if not self.allowed(info, "harvest"):
            return "wait"
        return f"harvest {self.request(view)}"

    @abstractmethod
    def request(self, view: Mapping[str, Any]) -> int:
        """How many tons to ask for this month."""

    @staticmethod
    def share(view: Mapping[str, Any], stock: int | None = None) -> int:
        """The sustainable per-fisher share of a month starting with `stock` (default: the current stock)."""
        return sustainable_share(view["stock"] if stock is None else stock, view["n_fishers"], view["regrowth_factor"],
                                 view["collapse_threshold"])


class Sustainable(CommonsBaseline):
    name = "sustainable"
    pitch = "I take only my share of half the lake, so the fish left regrow to what we have now."

    def request(self, view):
        return self.share(view)


class Greedy(CommonsBaseline):
    name = "greedy"
    pitch = "I ask for the whole lake every month."

    def request(self, view):
        return view["stock"]


class Mimic(CommonsBaseline):
    name = "mimic"
    pitch = "I ask for what the average fisher asked for last month."

    def request(self, view):
        last = view["last_month"]
        if last is None:
            return self.share(view)
        asked = list(last["requests"].values())
        return (2 * sum(asked) + len(asked)) // (2 * len(asked))  # the mean, rounded half up


class Grim(CommonsBaseline):
    name = "grim"
    pitch = "I take the sustainable share, but if anyone ever takes more, I take everything from then on."

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.triggered = False

    def reset(self, agent_id: str, briefing: str) -> None:
        super().reset(agent_id, briefing)
        self.triggered = False

    def request(self, view):
        last = view["last_month"]
        if last is not None and not self.triggered:
            limit = self.share(view, last["stock_before"])
            self.triggered = any(r > limit for r in last["requests"].values())
        return view["stock"] if self.triggered else self.share(view)


BASELINES: dict[str, type[ScriptedPolicy]] = {p.name: p for p in (Sustainable, Greedy, Mimic, Grim)}
DEFAULT = "mimic"
