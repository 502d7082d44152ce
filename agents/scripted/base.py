"""Base class of scripted baselines, and the uniform random policy.

Fairness rule: a scripted policy decides from `info["view"]` and `info["valid_actions"]`
only, exactly what an LLM agent reads as text; it never touches the env.
"""

from __future__ import annotations

from abc import abstractmethod

from typing import Any, Mapping

import numpy as np

from agents.policy import SyncPolicy


class ScriptedPolicy(SyncPolicy):
    """A baseline that maps the agent's view to a command string."""

    name = "scripted"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__()
        self.rng = np.random.default_rng(seed)

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        return self.decide(info["view"], info)

    @abstractmethod
    def decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        """The command to send, from the view and the forms valid now."""

    @staticmethod
    def allowed(info: Mapping[str, Any], command: str) -> bool:
        """Whether `command` is among the forms valid now."""
        return any(form.command == command for form in info["valid_actions"])


class RandomPolicy(ScriptedPolicy):
    """Picks a valid command form uniformly, then its arguments uniformly, with its own seeded generator."""

    name = "random"

    def decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        forms = info["valid_actions"]
        if not forms:
            return "wait"
        return forms[int(self.rng.integers(len(forms)))].sample(self.rng)
