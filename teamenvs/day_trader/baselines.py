"""DayTrader's scripted baselines, deciding from the agent's view only.

`cooperator` (always group, 100 or all it can), `defector` (always individual),
`conditional` (group if at least half of the others invested group last round),
`tit_for_tat` (n-player reciprocator: group in round 1, then group iff every other trader
invested group last round; the default `scripted` kind). Each but the defector, which stays silent,
says one line per discussion phase stating its strategy, when messages are allowed.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Mapping

from teamenvs.core.policy import ScriptedPolicy
from teamenvs.core.rounds import DiscussingBaseline


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


BASELINES: dict[str, type[ScriptedPolicy]] = {p.name: p for p in (Cooperator, Defector, Conditional, TitForTat)}
DEFAULT = "tit_for_tat"
