"""`shape_factory_v0`: CollabSim's Shape Factory (after Bos et al. 2004) as a text ParallelEnv.

Glue only: the env deals specialties and orders (`rules.new_market`), turns accepted commands into
`rules.settle` calls, words outcomes and refusals with `view`, and builds and renders each agent's
view. An agent making a shape is busy (`needs_action` false) until it is ready. Messages wait for
their reader: every message an agent has not yet been shown at a decision stays in its view
(`new_messages`) until its next decision, as in search and rescue.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Hashable, Mapping

from teamenvs.core.commands import Action, ActionError, ChoiceArg, CommandSet, IntArg, NameArg, Situation, TextArg
from teamenvs.core.env import TeamEnv
from teamenvs.core.rl import Feature
from teamenvs.shape_factory import rules, view
from teamenvs.shape_factory.commands import (
    Options, TermsArg, briefing_situation, candidates, catalogue, command_for, commands_for, mask_key, situation,
)
from teamenvs.shape_factory.config import PRESETS, ShapeFactoryConfig
from teamenvs.shape_factory.metrics import METRIC_BOUNDS, METRIC_GOALS, shape_factory_metrics
from teamenvs.shape_factory.rules import MONEY

# Argument types whose successful parse reads no situation but the names (NameArg) and integer bounds
# (IntArg), which `ShapeFactoryEnv._reparsed` checks; ChoiceArg, TextArg and TermsArg read the text only.
_SITUATION_FREE_ARGS = (ChoiceArg, IntArg, NameArg, TextArg, TermsArg)


class ShapeFactoryEnv(TeamEnv):
    """Shape Factory: make your cheap specialty, trade for the shapes your orders need, fulfil orders for money."""

    env_id = "shape_factory_v0"
    config_class = ShapeFactoryConfig
    presets = PRESETS
    episode_metrics = staticmethod(shape_factory_metrics)
    metric_goals = METRIC_GOALS
    metric_bounds = METRIC_BOUNDS
    config: ShapeFactoryConfig
    market: rules.Market

    @property
    def commands(self) -> CommandSet:  # type: ignore[override]
        found = self.__dict__.get("_command_set")  # the config is frozen: look its commands up once
        if found is None:
            found = self.__dict__["_command_set"] = commands_for(self.config)
        return found

    # ------------------------------------------------------------------ episode state
    def _setup(self) -> None:
        self.market = rules.new_market(self.agents, self.config, self._rng)
        if "_parses" not in self.__dict__:
            # (command, the situation's names) -> its parse (see `_reparsed`): kept across episodes, as a parse is a
            # function of the config's command set, the text and what `_reparsed` checks, none of them the episode's
            # (offer ids start again every episode, so `accept offer 3` is parsed once, not once an episode)
            self._parses: dict[tuple[str, tuple], Action] = {}
            # each command's integer arguments, whose live bounds `_reparsed` checks
            self._int_args = {c.name: tuple(a for a in c.args if isinstance(a, IntArg)) for c in self.commands}
        self._cheapest: dict[str, str] = {}  # agent -> the shape it makes cheapest (see `_options`)
        self._unread: dict[str, list[str]] = {a: [] for a in self.agents}
        self._recent: dict[str, deque[str]] = {a: deque(maxlen=self.config.message_history) for a in self.agents}

    def _reset_record(self) -> dict[str, Any]:
        m = self.market
        return {"specialties": dict(m.specialty), "orders": {a: [dict(o.shapes) for o in m.orders[a]] for a in self.agents}}

    @property
    def over(self) -> bool:
        return self.step_count >= self.config.max_steps or rules.all_fulfilled(self.market)

    def _is_over(self) -> tuple[bool, bool]:
        return self.over, False

    def _needs_action(self, agent: str) -> bool:
        return not rules.busy(self.market, agent)

    # ------------------------------------------------------------------ what an agent may do
    def _options(self, agent: str) -> Options:
        m, cfg, step = self.market, self.config, self.step_count
        cheapest = self._cheapest.get(agent)  # produce is offered while that one is possible
        if cheapest is None:  # (the specialties are the episode's: worked out once per agent and episode)
            cheapest = self._cheapest[agent] = min(m.shapes, key=lambda s: rules.cost(m, cfg, agent, s))
        produce = rules.check(m, cfg, agent, rules.PRODUCE, {"shape": cheapest}, step)
        to_you, yours = rules.offer_ids(m, agent)
        offer = None
        if len(yours) >= cfg.max_open_offers:
            offer = view.refusal_text(rules.refuse("too_many_offers", limit=cfg.max_open_offers))
        elif rules.free(m, agent, MONEY) < cfg.min_price and not any(rules.free(m, agent, s) for s in m.shapes):
            offer = f"you have nothing free to offer: no shapes, and less than the ${cfg.min_price} an offer's money side needs"
        return Options(
            others=self._others(agent),
            produce=None if produce is None else view.refusal_text(produce),
            offer=offer,
            answer=None if to_you else "no offer is addressed to you now",
            cancel=None if yours else "you have no open offers",
            fulfill=None if rules.open_orders(m, agent) else "all your orders are fulfilled",
            to_you=to_you,
            yours=yours,
        )

    def _others(self, agent: str) -> tuple[str, ...]:
        """The other participants in id order (the agents never change: worked out once per agent)."""
        others = self.__dict__.setdefault("_others_of", {})
        found = others.get(agent)
        if found is None:
            found = others[agent] = tuple(a for a in self.possible_agents if a != agent)
        return found

    def _situation_key(self, agent: str) -> Hashable:
        return self._options(agent)

    def _situation(self, agent: str) -> Situation:
        return situation(self.config, self._options(agent))

    def _briefing_situation(self, agent: str) -> Situation:
        return briefing_situation(self.config, tuple(a for a in self.possible_agents if a != agent))

    def _mask_parse(self, command: str, situation: Situation) -> Action | ActionError:
        """`TeamEnv.accepts`'s parse, reused from an earlier situation when the parser would give the same action in
        this one (`_reparsed`): a factory's situation changes with every offer, so the situation's own memo rarely
        holds the mask's commands."""
        action = self._reparsed(command, situation)
        if action is None:
            action = self.commands.parse(command, situation)
            self._remember_parse(command, situation, action)
        return action

    def _reparsed(self, command: str, situation: Situation) -> Action | None:
        """The action `command` parsed to in an earlier situation with the same names (of this episode or an
        earlier one: offer ids start again), if it parses to the same action in `situation` too (else None:
        parse it). A canonical one-line command (`action.text`) goes straight to its command's arguments, and on
        success the parser reads the situation only for the denial of that command, the names (part of the key)
        and the live bounds of integer arguments."""
        found = self._parses.get((command, tuple(situation.names.items())))
        if found is None or found.command in situation.denied:
            return None
        for arg in self._int_args[found.command]:
            low, high = arg.bounds(situation)
            if not low <= found.args[arg.name] <= high:
                return None
        return found

    def _remember_parse(self, command: str, situation: Situation, action: Action | ActionError) -> None:
        """Keep a successful parse of a canonical one-line command whose arguments read nothing else of the
        situation (see `_reparsed`)."""
        if not isinstance(action, Action) or action.text != command or "\n" in command or "{" in command:
            return
        if not all(isinstance(a, _SITUATION_FREE_ARGS) for a in self.commands.commands[action.command].args):
            return
        if len(self._parses) > 4096:
            self._parses.clear()
        self._parses[(command, tuple(situation.names.items()))] = action

    def _refusal(self, agent: str, action: Action) -> str | None:
        refusal = rules.check(self.market, self.config, agent, action.command, action.args, self.step_count)
        return None if refusal is None else view.refusal_text(refusal)

    # ------------------------------------------------------------------ rules
    def _apply(self, actions: Mapping[str, Action | None]) -> dict[str, float]:
        m = self.market
        for agent in self.agents:
            if self._offered.get(agent) is not None:  # it has now been shown its messages
                self._recent[agent].extend(self._unread[agent])
                self._unread[agent] = []
        before = dict(m.money)
        chosen = {a: (act.command, act.args) for a, act in actions.items()
                  if act is not None and act.command not in ("say", "tell", rules.WAIT)}
        outcomes, refusals = rules.settle(m, self.config, chosen, self.step_count, self.agents)
        for agent, refusal in refusals.items():
            self.reject(agent, view.refusal_text(refusal))
        for outcome in outcomes:
            shown, logged = view.events_of(outcome)
            for agent, ev in shown.items():
                self.tell_agent(agent, ev)
            if logged is not None:
                self.global_events.append(logged)
        return {a: float(m.money[a] - before[a]) for a in self.agents}

    def _on_delivered(self, delivery) -> None:
        for message, recipients in delivery:
            self._recent[message.sender].append(view.message_line(message, message.sender))
            for r in recipients:
                self._unread[r].append(view.message_line(message, r))

    # ------------------------------------------------------------------ numeric observations and discrete actions
    def _features(self) -> tuple[Feature, ...]:
        return view.features(self.config)

    def _encode(self, v: Mapping[str, Any]) -> Any:
        return view.encode(v, self.config)

    def _catalogue(self) -> tuple[str, ...]:
        return catalogue(self.config)

    def _command_for(self, v: Mapping[str, Any], label: str) -> str | None:
        return command_for(v, label)

    def _mask_key(self, v: Mapping[str, Any]) -> tuple:
        return mask_key(v)

    def _mask_candidates(self, v: Mapping[str, Any]) -> list[tuple[int, str]]:
        return candidates(v, self.interface.labels)

    # ------------------------------------------------------------------ views and text
    def _view(self, agent: str) -> dict[str, Any]:
        over = self.over
        envelope = self.envelope(agent, show_valid=not over and self._needs_action(agent))
        messages = {"new_messages": tuple(self._unread[agent]), "recent_messages": tuple(self._recent[agent])}
        return view.agent_view(envelope, self.market, self.config, agent, self.possible_agents, over, messages)

    def _render_view(self, v: Mapping[str, Any]) -> str:
        return view.render(v)

    def _role_briefing(self, agent: str) -> str:
        return view.briefing(agent, self.config, getattr(self, "market", None), self.possible_agents)

    # ------------------------------------------------------------------ global views
    def _state(self) -> dict[str, Any]:
        return view.state_json(self.market, self.config, self.step_count)

    def frame(self) -> dict[str, Any]:
        """JSON-ready drawing data of the whole market now (for the replay viewer)."""
        return {"kind": "shape_factory", **self._state()}

    def _render_frame(self) -> str:
        return view.frame_text(self.market, self.config, self.step_count)
