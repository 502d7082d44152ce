"""Hidden Profile's scripted baselines, deciding from the member's view only.

Neither a baseline nor an LLM member can tell which facts of its document the others also hold.

- `share_unique` (the default `scripted` kind): votes for its document's favourite first; in the
  discussion it shares, one message a turn, each fact of its document nobody has shared yet (so
  every fact only it holds comes out); in the final vote it votes for the candidate best supported by
  its document and every fact shared in the discussion.
- `shared_only`: votes for its document's favourite both times and in the discussion talks up that
  favourite's strengths; a hidden profile's unique facts are never a suboptimal candidate's strengths,
  so it only ever repeats shared facts.

Ties between candidates go to the earlier letter. Both share facts in the one form the others can read
back (`Candidate C strength: ...`, see `view.fact_message`).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Mapping

from teamenvs.core.policy import ScriptedPolicy
from teamenvs.hidden_profile.rules import DECIDE, DISCUSSION, FINAL_VOTE, WAIT
from teamenvs.hidden_profile.view import STRENGTH, discussed_facts, fact_message, favourite


class HiddenProfileBaseline(ScriptedPolicy):
    """Votes for `final_choice` / its document's favourite and says `next_fact` in the discussion."""

    def decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        phase = view["phase"]
        if phase == DISCUSSION:
            if not self.allowed(info, "say"):
                return WAIT
            item = self.next_fact(view, discussed_facts(view["recent_messages"]))
            return f"say {fact_message(item)}" if item is not None else WAIT
        if not self.allowed(info, DECIDE):
            return WAIT
        choice = self.final_choice(view) if phase == FINAL_VOTE else favourite(view["document"], view["candidates"])
        return f"{DECIDE} {choice}"

    @abstractmethod
    def next_fact(self, view: Mapping[str, Any], discussed: frozenset) -> tuple[str, str, str] | None:
        """The fact (candidate, kind, text) to say this discussion turn, of those not `discussed` yet; None: nothing to add."""

    def final_choice(self, view: Mapping[str, Any]) -> str:
        return favourite(view["document"], view["candidates"])


class ShareUnique(HiddenProfileBaseline):
    name = "share_unique"

    def next_fact(self, view, discussed):
        return next((item for item in view["document"] if item not in discussed), None)

    def final_choice(self, view):
        pooled = set(view["document"]) | discussed_facts(view["recent_messages"])
        return favourite(sorted(pooled), view["candidates"])


class SharedOnly(HiddenProfileBaseline):
    name = "shared_only"

    def next_fact(self, view, discussed):
        top = favourite(view["document"], view["candidates"])
        return next((item for item in view["document"] if item[0] == top and item[1] == STRENGTH and item not in discussed), None)


BASELINES: dict[str, type[ScriptedPolicy]] = {p.name: p for p in (ShareUnique, SharedOnly)}
DEFAULT = "share_unique"
