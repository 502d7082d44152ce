"""The `Policy` protocol every agent implements, and a base class for synchronous policies.

A policy is reset with its agent id and the env's briefing for that agent, then asked for
one action string per step it needs to act: `act(observation, info)` or, in the step loop,
`await aact(observation, info)`. Policies that want something logged beside their action
(a rationale, model usage) put it in `last_extras` after acting.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from typing import Any, Mapping, Protocol, runtime_checkable


@runtime_checkable
class Policy(Protocol):
    """What the step loop needs from an agent."""

    def reset(self, agent_id: str, briefing: str) -> None: ...

    def act(self, observation: str, info: Mapping[str, Any]) -> str: ...

    async def aact(self, observation: str, info: Mapping[str, Any]) -> str: ...


class SyncPolicy(ABC):
    """Base for policies that decide synchronously; `aact` simply calls `act`."""

    agent_id: str = ""
    briefing: str = ""

    def __init__(self) -> None:
        self.last_extras: dict[str, Any] = {}

    def reset(self, agent_id: str, briefing: str) -> None:
        self.agent_id = agent_id
        self.briefing = briefing

    @abstractmethod
    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        """The action string for this observation."""

    async def aact(self, observation: str, info: Mapping[str, Any]) -> str:
        return self.act(observation, info)
