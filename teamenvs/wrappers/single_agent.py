"""The Gymnasium single-agent view of a team env: one learner, teammates driven by policies.

    import gymnasium, teamenvs
    env = gymnasium.make("teamenvs/DayTrader-v0", agent="trader_1", teammates="defector")
    obs, info = env.reset(seed=0)

`teammates` is a baseline kind ("scripted" by default, "random", a baseline name, a comma
list, a mapping agent -> name) or a mapping agent -> policy object. Steps in which the
learner need not act (busy, not its turn) are played by the teammates alone; their rewards
for the learner are summed into the step's reward.
"""

from __future__ import annotations

from typing import Any, Mapping

import gymnasium

from teamenvs.registry import make


class SingleAgentEnv(gymnasium.Env):
    """One agent of a multi-agent team env as a `gymnasium.Env` with text observations and actions."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        env_id: str,
        agent: str | None = None,
        teammates: str | Mapping[str, Any] = "scripted",
        render_mode: str | None = None,
        **config: Any,
    ) -> None:
        self.team_env = make(env_id, render_mode=render_mode, **config)
        agents = self.team_env.possible_agents
        self.agent = agent if agent is not None else agents[0]
        if self.agent not in agents:
            raise ValueError(f"unknown agent {self.agent!r} for {env_id}; agents are {', '.join(agents)}")
        self.teammates_spec = teammates
        self.render_mode = render_mode
        self.observation_space = self.team_env.observation_space(self.agent)
        self.action_space = self.team_env.action_space(self.agent)
        self._teammates: dict[str, Any] = {}

    def _make_teammates(self, seed: int | None) -> dict[str, Any]:
        from teamenvs.core.policy import make_policies

        others = [a for a in self.team_env.possible_agents if a != self.agent]
        spec = self.teammates_spec
        if isinstance(spec, Mapping) and all(not isinstance(v, str) for v in spec.values()):
            missing = [a for a in others if a not in spec]
            if missing:
                raise ValueError(f"no teammate policy for {missing}")
            return {a: spec[a] for a in others}
        policies = make_policies(self.team_env, spec, seed=seed)
        return {a: policies[a] for a in others}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._teammates = self._make_teammates(seed)
        observations, infos = self.team_env.reset(seed=seed, options=options)
        for agent, policy in self._teammates.items():
            policy.reset(agent, self.team_env.briefing(agent))
        self._obs, self._infos = observations, infos
        reward, terminated, truncated = self._advance_teammates()
        return self._obs[self.agent], self._infos[self.agent]

    def briefing(self) -> str:
        """The learner's briefing (role, rules, commands)."""
        return self.team_env.briefing(self.agent)

    def _teammate_actions(self) -> dict[str, str]:
        return {
            a: p.act(self._obs[a], self._infos[a])
            for a, p in self._teammates.items()
            if a in self.team_env.agents and self._infos[a]["needs_action"]
        }

    def _step_team(self, actions: dict[str, Any]) -> tuple[float, bool, bool]:
        observations, rewards, terminations, truncations, infos = self.team_env.step(actions)
        self._obs, self._infos = observations, infos
        return rewards.get(self.agent, 0.0), terminations.get(self.agent, False), truncations.get(self.agent, False)

    def _advance_teammates(self) -> tuple[float, bool, bool]:
        """Step while the learner has nothing to do; returns its reward and end flags."""
        total, terminated, truncated = 0.0, False, False
        while self.team_env.agents and not self._infos[self.agent]["needs_action"]:
            reward, terminated, truncated = self._step_team(self._teammate_actions())
            total += reward
        return total, terminated, truncated

    def step(self, action: Any):
        if not self.team_env.agents:
            raise RuntimeError("the episode is over; call reset()")
        actions = self._teammate_actions()
        actions[self.agent] = action
        reward, terminated, truncated = self._step_team(actions)
        if not (terminated or truncated):
            more, terminated, truncated = self._advance_teammates()
            reward += more
        return self._obs[self.agent], reward, terminated, truncated, self._infos[self.agent]

    def render(self) -> str | None:
        return self.team_env.render()
