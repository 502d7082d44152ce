"""`commons_v0`: a GovSim-style fishery (a common-pool resource) as a text ParallelEnv.

Glue only: the env walks the schedule of harvest and discussion steps, turns accepted
commands into requests, settles months with `rules.settle_month` (seeded proportional
allocation, collapse, regrowth), and builds and renders each fisher's view with `view`.
Requests and catches of the last month are public, as in GovSim.
"""

from __future__ import annotations

from operator import is_, itemgetter
from typing import Any, Hashable, Mapping

from teamenvs.commons.commands import COMMANDS, catalogue, command_for, mask_key, request_of, situation
from teamenvs.commons.config import PRESETS, CommonsConfig
from teamenvs.commons.metrics import METRIC_BOUNDS, METRIC_GOALS, commons_metrics
from teamenvs.commons.rules import (
    HARVEST,
    MonthOutcome,
    Universalization,
    request_refusal,
    schedule,
    settle_month,
    sustainable_share,
    universalization,
)
from teamenvs.commons.view import (
    LAKE_FIELDS,
    briefing,
    catch_events,
    encode,
    encode_alone,
    features,
    fisher_view,
    frame,
    lake_facts,
    lake_lines,
    month_event,
    month_view,
    public_text,
    render,
    shared_public,
)
from teamenvs.core.commands import Action, Situation
from teamenvs.core.rl import Feature
from teamenvs.core.rounds import ScheduledGame
from teamenvs.core.view import SharedFacts

_lake_fields = itemgetter(*LAKE_FIELDS)
# memo keys that no view's parts are: what was formatted last is not known again
_UNKEPT = (object(), object())
_NO_LAKE = (object(),) * len(LAKE_FIELDS)
_IMMUTABLE = (int, str, bool)  # values whose lines depend on the object alone


class CommonsEnv(ScheduledGame):
    """Commons: fishers harvest a shared, regrowing fish stock over months and may talk between months."""

    env_id = "commons_v0"
    commands = COMMANDS
    config_class = CommonsConfig
    presets = PRESETS
    agent_prefix = "fisher"
    episode_metrics = staticmethod(commons_metrics)
    metric_goals = METRIC_GOALS
    metric_bounds = METRIC_BOUNDS
    situations_outlast_episodes = True  # a situation is a function of the config and _situation_key
    config: CommonsConfig

    # ------------------------------------------------------------------ episode state
    def _setup(self) -> None:
        self.schedule = schedule(self.config)
        self.stock = self.config.initial_stock
        self.collapsed = False
        self.total_catch: dict[str, int] = {a: 0 for a in self.agents}
        self.last_month: tuple[int, MonthOutcome] | None = None
        self._hint = self._universalization()
        self._share = self._sustainable_share()
        self._public_memo: tuple[Any, tuple[str, str]] = ((None, None), ("", ""))  # (shared parts, their public_text)
        self._lake_memo: tuple[tuple, tuple[str, str]] = (_NO_LAKE, ("", ""))  # (the view's LAKE_FIELDS, their lake_lines)

    def _universalization(self) -> Universalization | None:
        """The universalization hint for the current stock (None when the condition is off)."""
        return universalization(self.stock, self.config) if self.config.universalization_hint else None

    def _sustainable_share(self) -> int:
        """Each fisher's sustainable share of the current stock."""
        return sustainable_share(self.stock, self.config.n_agents, self.config.regrowth_factor, self.config.collapse_threshold)

    @property
    def over(self) -> bool:
        return self.collapsed or self.step_count >= len(self.schedule)

    def _is_over(self) -> tuple[bool, bool]:
        return self.over, False

    # ------------------------------------------------------------------ what a fisher may do
    def _situation_key(self, agent: str) -> Hashable:
        kind = self.phase.kind
        # a discussion's situation does not read the stock: one per fisher, whatever the lake holds
        return (agent, kind, self.stock) if kind == HARVEST else (agent, kind)

    def _situation(self, agent: str) -> Situation:
        others = tuple(a for a in self.possible_agents if a != agent)
        return situation(self.config, self.phase.kind, others, self.stock)

    # ------------------------------------------------------------------ rules
    def _apply(self, actions: Mapping[str, Action | None]) -> dict[str, float]:
        phase = self.phase
        if phase.kind != HARVEST:
            return {}
        requests = {}
        for agent in self.agents:
            request = request_of(actions.get(agent))
            refusal = request_refusal(request, self.stock)
            if refusal is not None:  # never with parsed actions: the situation's limits are the same rule
                self.reject(agent, refusal)
                request = 0
            requests[agent] = request
        outcome = settle_month(self.stock, requests, self._rng, self.config)
        self.stock, self.collapsed = outcome.stock_after, outcome.collapsed
        self.last_month = (phase.round, outcome)
        for agent in self.agents:
            self.total_catch[agent] += outcome.catches[agent]
            for ev in catch_events(phase.round, agent, outcome):
                self.tell_agent(agent, ev)
        self.global_events.append(month_event(phase.round, outcome, self.config.collapse_threshold))
        self._hint = self._universalization()
        self._share = self._sustainable_share()
        return {a: float(outcome.catches[a]) for a in self.agents}

    def _refusal(self, agent: str, action: Action) -> str | None:
        if action.command != HARVEST:  # wait and messages: no rule beyond parsing
            return None
        return request_refusal(action.args["amount"], self.stock)

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
    def _month_view(self) -> dict[str, Any] | None:
        return None if self.last_month is None else month_view(*self.last_month)

    def _step_facts(self) -> tuple[bool, dict[str, Any], Any, Any]:
        """What every fisher's view of this step holds alike: whether the episode is over, the lake (`lake_facts`),
        last month's results and the hint (`shared_public`)."""
        over = self.over
        lake = lake_facts(self.config, self.phase, over, len(self.schedule), self.stock, self.collapsed, tuple(self.possible_agents))
        return (over, lake, *shared_public(*(self.last_month or (0, None)), self._hint))

    def _view(self, agent: str) -> dict[str, Any]:
        over, lake, last_month, hint = self.once_per_step("facts", self._step_facts)
        return fisher_view(
            self.envelope(agent, show_valid=not over), lake, self.total_catch[agent], last_month, hint, self.messages_view(agent)
        )

    def _render_view(self, view: Mapping[str, Any]) -> str:
        # the step's views hold the same read-only shared parts (`shared_public`) and the same lake values: their
        # lines are formatted once, for the first fisher
        public = (view["last_month"], view["universalization"])
        kept, public_lines = self._public_memo
        if not (kept[0] is public[0] and kept[1] is public[1]):
            public_lines = public_text(*public)
            # only read-only parts are known again by identity (a plain mapping may have changed since)
            frozen = all(part is None or type(part) is SharedFacts for part in public)
            self._public_memo = (public if frozen else _UNKEPT, public_lines)
        lake = _lake_fields(view)
        kept, lake_text = self._lake_memo
        # the very objects formatted last (the memo holds them, and only unchangeable ones): the same lines
        if not all(map(is_, kept, lake)):
            lake_text = lake_lines(view)
            self._lake_memo = (lake if all(type(value) in _IMMUTABLE for value in lake) else _NO_LAKE, lake_text)
        return render(view, public_lines, lake_text)

    def _extra_info(self, agent: str) -> dict[str, Any]:
        return {"sustainable_share": self._share}

    def _role_briefing(self, agent: str) -> str:
        return briefing(agent, self.config)

    # ------------------------------------------------------------------ global views
    def _state(self) -> dict[str, Any]:
        return {
            "step": self.step_count,
            "phase": "over" if self.over else self.phase.kind,
            "month": self.phase.round,
            "stock": self.stock,
            "collapsed": self.collapsed,
            "total_catch": dict(self.total_catch),
            "last_month": self._month_view(),
        }

    def _render_frame(self) -> str:
        cfg = self.config
        return frame(
            self.step_count, len(self.schedule), self.phase, self.stock, cfg.capacity, self.collapsed, self.total_catch, self._month_view()
        )
