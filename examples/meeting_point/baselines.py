"""Meeting point's scripted baselines, deciding from the agent's view only.

`gather` (the default): the first agent announces its cell and waits; the others walk the
short way round to the last cell they heard it announce. `idle`: never moves or talks.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from teamenvs.core.policy import ScriptedPolicy

_ANNOUNCED = re.compile(r"^(\S+): I am on cell (\d+)")


class Gather(ScriptedPolicy):
    name = "gather"

    def reset(self, agent_id: str, briefing: str) -> None:
        super().reset(agent_id, briefing)
        self.target: int | None = None

    def decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        if view["agent"].endswith("_1"):
            if view["step"] == 0 and self.allowed(info, "say"):
                return f"say I am on cell {view['cell']}"
            return "wait"
        for line in view["new_messages"]:
            m = _ANNOUNCED.match(line)
            if m and m.group(1).endswith("_1"):
                self.target = int(m.group(2))
        if self.target is None or self.target == view["cell"]:
            return "wait"
        ahead = (self.target - view["cell"]) % view["cells"]
        return "move right" if ahead <= view["cells"] - ahead else "move left"


class Idle(ScriptedPolicy):
    name = "idle"

    def decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        return "wait"


BASELINES = {"gather": Gather, "idle": Idle}
DEFAULT = "gather"
