"""Scripted baselines for the social dilemmas, deciding from the agent's view only.

DayTrader: `cooperator` (always group, 100 or all it can), `defector` (always individual),
`conditional` (group if at least half of the others invested group last round),
`tit_for_tat` (n-player reciprocator: group in round 1, then group iff every other trader
invested group last round; the default `scripted` kind). Each says one line per discussion
phase stating its strategy, when messages are allowed.

Commons (GovSim-style fishery): `sustainable` (asks for floor(stock / 2 / n), the share that
lets the lake regrow), `greedy` (asks for the whole stock), `mimic` (last month's mean
request, rounded; the sustainable share in month 1; the default `scripted` kind), `grim`
(sustainable until anyone asked for more than that month's sustainable share, then greedy
for good). Each says one line about its strategy on the first turn of each discussion
phase, when messages are allowed.
"""

from __future__ import annotations

from abc import abstractmethod

from typing import Any, Mapping

from agents.scripted.base import ScriptedPolicy
from teamenvs.social_dilemma.commons import sustainable_share


class DiscussingBaseline(ScriptedPolicy):
    """A social-dilemma baseline: states its strategy once per discussion phase, else applies its rule."""

    pitch = ""

    def decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        if view["phase"] == "discussion":
            if self.pitch and view["discussion_turn"] == 1 and self.allowed(info, "say"):
                return f"say {self.pitch}"
            return "wait"
        return self.decision(view, info)

    @abstractmethod
    def decision(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        """The command for a decision step (investment or harvest)."""


class DayTraderBaseline(DiscussingBaseline):
    """DayTrader baselines invest all they can (up to the maximum); `cooperate` picks group or individual."""

    def decision(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        if view["can_invest"] is None:
            return "wait"
        amount = view["can_invest"][1]
        return f"invest {'group' if self.cooperate(view) else 'individual'} {amount}"

    @abstractmethod
    def cooperate(self, view: Mapping[str, Any]) -> bool:
        """True to invest in the group this round, False to invest individually."""

    @staticmethod
    def others_last_choices(view: Mapping[str, Any]) -> list[str] | None:
        last = view["public"]["last_round"]
        if last is None:
            return None
        return [c for a, c in last["choices"].items() if a != view["agent"]]


class Cooperator(DayTraderBaseline):
    name = "cooperator"
    pitch = "I always put everything I can into the group pool; if we all do, we all triple."

    def cooperate(self, view):
        return True


class Defector(DayTraderBaseline):
    name = "defector"

    def cooperate(self, view):
        return False


class Conditional(DayTraderBaseline):
    name = "conditional"
    pitch = "I invest in the group as long as at least half of you did so last round."

    def cooperate(self, view):
        others = self.others_last_choices(view)
        if others is None:
            return True
        return sum(c.startswith("group") for c in others) * 2 >= len(others)


class TitForTat(DayTraderBaseline):
    name = "tit_for_tat"
    pitch = "I invest in the group whenever all of you did last round; if anyone holds back, so do I for a round."

    def cooperate(self, view):
        others = self.others_last_choices(view)
        return others is None or all(c.startswith("group") for c in others)


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
        return sustainable_share(view["stock"] if stock is None else stock, view["n_fishers"], view["regrowth_factor"])


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


BASELINES: dict[str, dict[str, type[ScriptedPolicy]]] = {
    "day_trader_v0": {p.name: p for p in (Cooperator, Defector, Conditional, TitForTat)},
    "commons_v0": {p.name: p for p in (Sustainable, Greedy, Mimic, Grim)},
}
DEFAULTS: dict[str, str] = {"day_trader_v0": "tit_for_tat", "commons_v0": "mimic"}
