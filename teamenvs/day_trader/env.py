"""`day_trader_v0`: the CollabSim DayTrader social dilemma as a text ParallelEnv.

Glue only: the env walks the schedule of decision and discussion steps, turns accepted
commands into `Choice`s, settles rounds with `rules.settle_round`, and builds and renders
each trader's view with `view`.
"""

from __future__ import annotations

from typing import Any, Hashable, Mapping

from teamenvs.core.commands import Action, CommandSet, Situation
from teamenvs.core.rl import Feature
from teamenvs.core.rounds import ScheduledGame
from teamenvs.core.view import SharedFacts
from teamenvs.day_trader.commands import (
    INVEST_GROUP,
    INVEST_INDIVIDUAL,
    briefing_situation,
    catalogue,
    choice_of,
    command_for,
    commands_for,
    mask_key,
    situation,
)
from teamenvs.day_trader.config import PRESETS, DayTraderConfig
from teamenvs.day_trader.metrics import METRIC_BOUNDS, METRIC_GOALS, day_trader_metrics
from teamenvs.day_trader.rules import (
    DECISION,
    WAIT,
    Choice,
    Money,
    affordable_max,
    as_float,
    investment_refusal,
    money_json,
    schedule,
    settle_round,
)
from teamenvs.day_trader.view import (
    briefing,
    encode,
    encode_alone,
    features,
    frame,
    fresh_last_round,
    last_round_view,
    public_copy,
    public_text,
    render,
    result_event,
    round_event,
    shared_public,
    trader_view,
)


class DayTraderEnv(ScheduledGame):
    """DayTrader: repeated individual-vs-group investment with a top-earner bonus (CollabSim)."""

    env_id = "day_trader_v0"
    config_class = DayTraderConfig
    presets = PRESETS
    agent_prefix = "trader"
    episode_metrics = staticmethod(day_trader_metrics)
    metric_goals = METRIC_GOALS
    metric_bounds = METRIC_BOUNDS
    situations_outlast_episodes = True  # a situation is a function of the config and _situation_key
    config: DayTraderConfig

    @property
    def commands(self) -> CommandSet:  # type: ignore[override]
        # `commands_for` hashes the whole config on every call; the env asks several times per agent and step
        cached = self.__dict__.get("_command_set")
        if cached is None or cached[0] is not self.config:
            cached = self.__dict__["_command_set"] = (self.config, commands_for(self.config))
        return cached[1]

    # ------------------------------------------------------------------ episode state
    def _setup(self) -> None:
        self.schedule = schedule(self.config)
        self.balances: dict[str, Money] = {a: self.config.starting_money for a in self.agents}
        self.last_choices: dict[str, Choice] | None = None
        self._last_round: dict[str, Any] | None = None  # the public results of the last round, as in views
        self._public_memo: tuple[Any, str] = (None, "")  # (a view's public part and multiplier, their public_text)
        self._refresh()

    def _refresh(self) -> None:
        """Recompute what views share after balances change (once per round, not per agent)."""
        self._money = {a: money_json(v) for a, v in self.balances.items()}
        self._top = {a: affordable_max(v, self.config) for a, v in self.balances.items()}
        self.renew_step_parts()  # the public part shows the balances

    @property
    def over(self) -> bool:
        return self.step_count >= len(self.schedule)

    def _is_over(self) -> tuple[bool, bool]:
        return self.over, False

    # ------------------------------------------------------------------ what a trader may do
    def _situation_key(self, agent: str) -> Hashable:
        top = self._top[agent]
        # below the maximum investment the reasons quote the exact money ("you have $47.50")
        money = self._money[agent] if top < self.config.max_investment else None
        return agent, self.phase.kind, top, money

    def _situation(self, agent: str) -> Situation:
        others = tuple(a for a in self.possible_agents if a != agent)
        return situation(self.config, self.phase.kind, others, self.balances[agent], self._top[agent])

    # ------------------------------------------------------------------ rules
    def _apply(self, actions: Mapping[str, Action | None]) -> dict[str, float]:
        phase = self.phase
        if phase.kind != DECISION:
            return {}
        choices = {}
        for agent, action in actions.items():
            choice = choice_of(action)
            refusal = investment_refusal(choice, self._top[agent], self.config)
            if refusal is not None:  # never with parsed actions: the situation's limits are the same rule
                self.reject(agent, refusal)
                choice = Choice(WAIT)
            choices[agent] = choice
        before = self.balances
        outcome = settle_round(before, choices, phase.round, self.config)
        self.balances = outcome.balances
        self.last_choices = choices
        self._last_round = last_round_view(phase.round, choices, outcome)
        self._refresh()
        for agent in self.agents:
            self.tell_agent(agent, result_event(phase.round, choices[agent], outcome.earnings[agent], outcome.bonus.get(agent, 0)))
        self.global_events.append(round_event(phase.round, choices, outcome))
        return {a: as_float(outcome.balances[a] - before[a]) for a in self.agents}

    def _refusal(self, agent: str, action: Action) -> str | None:
        if action.command not in (INVEST_GROUP, INVEST_INDIVIDUAL):  # wait and messages: no rule beyond parsing
            return None
        return investment_refusal(choice_of(action), self._top[agent], self.config)

    # ------------------------------------------------------------------ numeric observations and discrete actions
    def _features(self) -> tuple[Feature, ...]:
        return features(self.config)

    def _encode(self, view: Mapping[str, Any]) -> Any:
        # several learners' vectors are gathered from one pool a step; a lone learner's (the single-agent view's) is
        # read slot by slot, which costs less than a pool for one vector (the same vector either way)
        return encode(view, self.config) if len(self.interface.learners) > 1 else encode_alone(view, self.config)

    def _catalogue(self) -> tuple[str, ...]:
        return catalogue(self.config)

    def _command_for(self, view: Mapping[str, Any], label: str) -> str | None:
        return command_for(view, label)

    def _mask_key(self, view: Mapping[str, Any]) -> tuple:
        return mask_key(view)

    # ------------------------------------------------------------------ views and text
    def _view(self, agent: str) -> dict[str, Any]:
        return trader_view(
            self.envelope(agent, show_valid=not self.over),
            self.config,
            self.phase,
            self.over,
            len(self.schedule),
            self._money[agent],
            self._top[agent],
            # once per step, not per round, so no view of a later step holds it: the single-agent view need not thaw it
            self.once_per_step("public", lambda: shared_public(tuple(self.possible_agents), self._last_round, self._money,
                                                               self.config.show_balances)),
            self.messages_view(agent),
        )

    def _render_view(self, view: Mapping[str, Any]) -> str:
        # The public lines are the same for every trader until the next round is settled: format them once.
        key = (view["public"], view["group_multiplier"])
        memo = self._public_memo[0]
        # the step's views hold one read-only public part (`shared_public`), kept as it is and known by identity after
        # the first trader; another step's, or any other mapping (kept as a copy), is compared with the last one formatted
        if not (memo is not None and memo[0] is key[0] and memo[1] == key[1]) and key != memo:
            self._public_memo = ((key[0] if type(key[0]) is SharedFacts else public_copy(key[0]), key[1]), public_text(*key))
        return render(view, self._public_memo[1])

    def _role_briefing(self, agent: str) -> str:
        return briefing(agent, self.config)

    def _briefing_situation(self, agent: str) -> Situation:
        return briefing_situation(self.config, tuple(a for a in self.possible_agents if a != agent))

    # ------------------------------------------------------------------ global views
    def _state(self) -> dict[str, Any]:
        phase = self.phase
        return {
            "step": self.step_count,
            "phase": phase.kind,
            "round": phase.round,
            "balances": {a: money_json(v) for a, v in self.balances.items()},
            "balances_exact": {a: str(v) for a, v in self.balances.items()},
            "last_round": fresh_last_round(self._last_round),
        }

    def _render_frame(self) -> str:
        return frame(self.step_count, len(self.schedule), self.phase, self.balances, self.last_choices)
