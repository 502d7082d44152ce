"""`meeting_point_v0`: the TeamEnv glue of the meeting-point toy paradigm."""

from __future__ import annotations

from typing import Any, Mapping

from teamenvs.core.commands import Action, Situation
from teamenvs.core.env import TeamEnv, event
from teamenvs.meeting_point import rules, view
from teamenvs.meeting_point.commands import COMMANDS, catalogue, command_for
from teamenvs.meeting_point.config import PRESETS, MeetingPointConfig
from teamenvs.meeting_point.metrics import METRIC_GOALS, meeting_point_metrics


class MeetingPointEnv(TeamEnv):
    """Agents on a ring must all reach one cell; each sees only its own cell and its messages."""

    env_id = "meeting_point_v0"
    commands = COMMANDS
    config_class = MeetingPointConfig
    presets = PRESETS
    episode_metrics = staticmethod(meeting_point_metrics)
    metric_goals = METRIC_GOALS

    def _setup(self) -> None:
        cells = rules.start_cells(self._rng, self.config.n_agents, self.config.cells)
        self.positions = dict(zip(self.possible_agents, cells))
        self.met = False

    def _situation_key(self, agent: str):
        return self.config.talking_allowed

    def _situation(self, agent: str) -> Situation:
        denied = {} if self.config.talking_allowed else {n: "communication is off" for n in ("say", "tell")}
        return Situation(denied=denied, names={"agent": tuple(a for a in self.possible_agents if a != agent)})

    def _apply(self, actions: dict[str, Action | None]) -> dict[str, float]:
        for agent, action in actions.items():
            if action is not None and action.command == "move":
                self.positions[agent] = rules.moved(self.positions[agent], action.args["direction"], self.config.cells)
        self.met = rules.met(self.positions)
        if self.met:
            self.global_events.append(event("met", "", cell=next(iter(self.positions.values()))))
        return {a: 1.0 if self.met else 0.0 for a in self.agents}

    def _is_over(self) -> tuple[bool, bool]:
        return self.met, self.step_count >= self.config.max_steps

    def _view(self, agent: str) -> dict[str, Any]:
        over = self.met or self.step_count >= self.config.max_steps
        return {**self.envelope(agent, show_valid=not over), "cell": self.positions[agent], "cells": self.config.cells,
                "max_steps": self.config.max_steps, "met": self.met, **self.messages_view(agent)}

    def _render_view(self, v: Mapping[str, Any]) -> str:
        return view.render(v)

    def _features(self):
        return view.features(self.config)

    def _encode(self, v: Mapping[str, Any]):
        return view.encode(v, self.config)

    def _catalogue(self):
        return catalogue(self.config)

    def _command_for(self, v: Mapping[str, Any], label: str) -> str | None:
        return command_for(v, label)

    def _state(self) -> dict[str, Any]:
        return {"step": self.step_count, "positions": dict(self.positions), "met": self.met}

    def _render_frame(self) -> str:
        ring = ["."] * self.config.cells
        for i, (agent, cell) in enumerate(self.positions.items(), start=1):
            ring[cell] = str(i) if ring[cell] == "." else "*"
        return f"step {self.step_count}: " + "".join(ring)

    def _role_briefing(self, agent: str) -> str:
        cfg = self.config
        return view.briefing(agent, cfg.n_agents, cfg.cells, cfg.max_steps)
