"""Scripted baselines for the social dilemmas, deciding from the agent's view only.

DayTrader: `cooperator` (always group, 100 or all it can), `defector` (always individual),
`conditional` (group if at least half of the others invested group last round),
`tit_for_tat` (n-player reciprocator: group in round 1, then group iff every other trader
invested group last round; the default `scripted` kind). Each says one line per discussion
phase stating its strategy, when messages are allowed.
"""

from __future__ import annotations

from typing import Any, Mapping

from agents.scripted.base import ScriptedPolicy


class DayTraderBaseline(ScriptedPolicy):
    """Shared shape of the DayTrader baselines: a pitch in discussions, a rule in decisions."""

    pitch = ""

    def decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        if view["phase"] == "discussion":
            if self.pitch and view["discussion_turn"] == 1 and self.allowed(info, "say"):
                return f"say {self.pitch}"
            return "wait"
        if view["can_invest"] is None:
            return "wait"
        amount = view["can_invest"][1]
        return f"invest {'group' if self.cooperate(view) else 'individual'} {amount}"

    def cooperate(self, view: Mapping[str, Any]) -> bool:
        raise NotImplementedError

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


BASELINES: dict[str, dict[str, type[ScriptedPolicy]]] = {
    "day_trader_v0": {p.name: p for p in (Cooperator, Defector, Conditional, TitForTat)},
}
DEFAULTS: dict[str, str] = {"day_trader_v0": "tit_for_tat"}
