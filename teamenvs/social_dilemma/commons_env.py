"""`commons_v0`: a GovSim-style fishery (a common-pool resource) as a text ParallelEnv.

The env is a thin shell over `commons.py`: it walks the schedule of harvest and discussion
steps, turns parsed commands into requests, settles months with `settle_month` (seeded
proportional allocation, collapse, regrowth), and renders each fisher's view. Requests and
catches of the last month are public, as in GovSim.
"""

from __future__ import annotations

from typing import Any, Mapping

from teamenvs.core.commands import Action, Command, CommandSet, IntArg, Situation
from teamenvs.core.env import event
from teamenvs.core.messaging import SAY, TELL
from teamenvs.social_dilemma.commons import (
    HARVEST,
    MAX_REQUEST,
    PRESETS,
    WAIT,
    CommonsConfig,
    schedule,
    settle_month,
    sustainable_share,
    universalization,
)
from teamenvs.social_dilemma.metrics import COMMONS_GOALS, commons_metrics
from teamenvs.core.rounds import ScheduledGame, discussion_briefing

COMMANDS = CommandSet(
    [
        Command(
            HARVEST,
            (IntArg("amount", 0, MAX_REQUEST, 10),),
            "ask to catch this many tons of fish this month (if the requests add up to more than the lake holds, "
            "the catch is shared in proportion to the requests)",
            ("harvest 10",),
        ),
        Command(WAIT, (), "do nothing this turn (in a harvest phase: catch nothing this month)", ("wait",)),
        SAY,
        TELL,
    ]
)


def _tons(n: int) -> str:
    return f"{n} ton" if n == 1 else f"{n} tons"


class CommonsEnv(ScheduledGame):
    """Commons: fishers harvest a shared, regrowing fish stock over months and may talk between months."""

    metadata = {"render_modes": ["ansi"], "name": "commons_v0", "is_parallelizable": True}
    env_id = "commons_v0"
    commands = COMMANDS
    config_class = CommonsConfig
    presets = PRESETS
    agent_prefix = "fisher"
    episode_metrics = staticmethod(commons_metrics)
    metric_goals = COMMONS_GOALS
    config: CommonsConfig

    # ------------------------------------------------------------------ episode state
    def _setup(self) -> None:
        cfg = self.config
        self.schedule = schedule(cfg)
        self.stock = cfg.initial_stock
        self.collapsed = False
        self.total_catch: dict[str, int] = {a: 0 for a in self.agents}
        self._last_month: dict[str, Any] | None = None
        self._hint = self._hint_view()

    @property
    def over(self) -> bool:
        return self.collapsed or self.step_count >= len(self.schedule)

    def _is_over(self) -> tuple[bool, bool]:
        return self.over, False

    # ------------------------------------------------------------------ what an agent may do
    def _situation_key(self, agent: str):
        return agent, self.phase.kind, self.stock

    def _situation(self, agent: str) -> Situation:
        names = {"agent": tuple(a for a in self.possible_agents if a != agent)}
        if self.phase.kind == HARVEST:
            reason = "messages can be sent only in discussion phases; this is a harvest phase"
            if not self.config.communication:
                reason = "communication is off in this condition"
            limits = {"amount": (0, self.stock)}
            reasons = {"amount": f"the lake holds {self.stock} tons"}
            return Situation({"say": reason, "tell": reason}, limits, names, reasons)
        why = "fishing happens in harvest phases; this is a discussion phase between months"
        return Situation({HARVEST: why}, {}, names)

    # ------------------------------------------------------------------ rules
    def _apply(self, actions: Mapping[str, Action | None]) -> dict[str, float]:
        phase = self.phase
        if phase.kind != HARVEST:
            return {}
        requests: dict[str, int] = {}
        for agent in self.agents:
            action = actions.get(agent)
            requests[agent] = action.args["amount"] if action is not None and action.command == HARVEST else 0
        outcome = settle_month(self.stock, requests, self._rng, self.config)
        self.stock = outcome.stock_after
        self.collapsed = outcome.collapsed
        demand = sum(requests.values())
        for agent in self.agents:
            asked, caught = requests[agent], outcome.catches[agent]
            self.total_catch[agent] += caught
            self.tell_agent(
                agent,
                event("catch", f"Month {phase.round}: you asked for {_tons(asked)} and caught {_tons(caught)}.", asked=asked, caught=caught),
            )
            if caught < asked:
                self.tell_agent(
                    agent,
                    event(
                        "short_catch",
                        f"You got less than you asked ({caught} of {asked}): the fishers asked for {_tons(demand)} "
                        f"in all but the lake held {_tons(outcome.stock_before)}, so it was shared in proportion to the requests.",
                        asked=asked,
                        caught=caught,
                        demand=demand,
                        stock=outcome.stock_before,
                    ),
                )
        if outcome.collapsed:
            text = (
                f"month {phase.round}: {_tons(outcome.remaining)} left, below {self.config.collapse_threshold}: "
                "the fishery collapsed"
            )
        else:
            text = f"month {phase.round}: {_tons(outcome.remaining)} left, regrew to {_tons(outcome.stock_after)}"
        # Public to every fisher; the sustainable share goes to the log only (agents see it under the hint).
        self._last_month = {
            "month": phase.round,
            "stock_before": outcome.stock_before,
            "requests": dict(outcome.requests),
            "catches": dict(outcome.catches),
            "remaining": outcome.remaining,
            "collapsed": outcome.collapsed,
            "stock_after": outcome.stock_after,
        }
        self.global_events.append(event("month", text, sustainable_share=outcome.sustainable_share, **self._last_month))
        self._hint = self._hint_view()
        return {a: float(outcome.catches[a]) for a in self.agents}

    # ------------------------------------------------------------------ views and text
    def _hint_view(self) -> dict[str, Any] | None:
        """The universalization hint for the current stock (None when the condition is off)."""
        if not self.config.universalization_hint:
            return None
        return universalization(self.stock, self.config)._asdict()

    def _extra_info(self, agent: str) -> dict[str, Any]:
        cfg = self.config
        return {"sustainable_share": sustainable_share(self.stock, cfg.n_agents, cfg.regrowth_factor)}

    def _view(self, agent: str) -> dict[str, Any]:
        cfg = self.config
        over = self.over
        phase = self.phase
        return {
            "agent": agent,
            "role": "fisher",
            "step": self.step_count,
            "max_steps": len(self.schedule),
            "month": phase.round,
            "months": cfg.months,
            "phase": "over" if over else phase.kind,
            "discussion_turn": phase.turn,
            "discussion_turns": cfg.discussion_turns,
            "stock": self.stock,
            "capacity": cfg.capacity,
            "collapse_threshold": cfg.collapse_threshold,
            "regrowth_factor": cfg.regrowth_factor,
            "collapsed": self.collapsed,
            "fishers": tuple(self.possible_agents),
            "n_fishers": cfg.n_agents,
            "your_total_catch": self.total_catch[agent],
            "last_month": self._last_month,
            "universalization": self._hint,
            **self.messages_view(agent),
            "last_action": self.last_action_line(agent),
            "events": tuple(e["text"] for e in self._events[agent]),
            "valid_now": "" if over else self.valid_now(agent),
        }

    def _render_view(self, view: Mapping[str, Any]) -> str:
        agent, n = view["agent"], view["n_fishers"]
        who = f"You are {agent} ({n} fishers)."
        if view["phase"] == "over":
            end = f"collapsed in month {view['month']}" if view["collapsed"] else f"is over after {view['months']} months"
            head = f"Fishery {end}. {who}"
        elif view["phase"] == HARVEST:
            head = f"Fishery, month {view['month']}/{view['months']}, harvest phase. {who}"
        else:
            head = (
                f"Fishery, discussion after month {view['month']}/{view['months']} "
                f"(turn {view['discussion_turn']}/{view['discussion_turns']}). {who}"
            )
        parts = [
            head,
            f"Lake: {_tons(view['stock'])} of fish (capacity {view['capacity']}). Fish left after a harvest "
            f"multiply by {view['regrowth_factor']} up to the capacity; fewer than {view['collapse_threshold']} left "
            f"collapses the fishery. Your total catch: {_tons(view['your_total_catch'])}.",
        ]
        last = view["last_month"]
        if last is not None:
            asked = "; ".join(
                f"{a}{' (you)' if a == agent else ''} {last['requests'][a]}/{last['catches'][a]}" for a in last["requests"]
            )
            fate = "collapsed" if last["collapsed"] else f"regrew to {last['stock_after']}"
            parts.append(
                f"Month {last['month']}: lake {last['stock_before']}, {last['remaining']} left, {fate}. "
                f"Asked/caught: {asked}."
            )
        hint = view["universalization"]
        if hint is not None:
            share, top = hint["sustainable_share"], hint["max_equal_harvest"]
            if_share = hint["stock_if_all_take_share"]
            if_top = hint["stock_if_all_take_max"]
            parts.append(
                f"If everyone takes the same: the sustainable share is {_tons(share)} each "
                f"(the lake would then hold {_tons(if_share) if if_share is not None else 'nothing: collapse'}); "
                f"the most each can take without a collapse is {_tons(top)} "
                f"(the lake would then hold {_tons(if_top) if if_top is not None else 'nothing: collapse'})."
            )
        parts.extend(view["events"])
        if view["new_messages"]:
            parts.append("New messages: " + " | ".join(view["new_messages"]))
        if view["phase"] == "discussion" and view["recent_messages"]:
            parts.append("Recent conversation: " + " | ".join(view["recent_messages"]))
        parts.append(view["last_action"])
        if view["valid_now"]:
            parts.append("Now: " + view["valid_now"])
        return "\n".join(parts)

    # ------------------------------------------------------------------ global views
    def _state(self) -> dict[str, Any]:
        phase = self.phase
        return {
            "step": self.step_count,
            "phase": "over" if self.over else phase.kind,
            "month": phase.round,
            "stock": self.stock,
            "collapsed": self.collapsed,
            "total_catch": dict(self.total_catch),
            "last_month": self._last_month,
        }

    def _render_frame(self) -> str:
        phase = self.phase
        status = " | COLLAPSED" if self.collapsed else ""
        rows = [
            f"Commons step {self.step_count}/{len(self.schedule)} | month {phase.round} | {phase.kind} | "
            f"stock {self.stock}/{self.config.capacity}{status}"
        ]
        last = self._last_month
        for a in self.possible_agents:
            ask = f"{last['requests'][a]}/{last['catches'][a]}" if last else "-"
            rows.append(f"  {a:<10} total {self.total_catch[a]:>6}  last asked/caught: {ask}")
        return "\n".join(rows)

    def _role_briefing(self, agent: str) -> str:
        cfg = self.config
        talk = discussion_briefing(cfg, cfg.discussion_every, cfg.discussion_turns, "month", "fishers")
        return (
            f"You are {agent}, one of {cfg.n_agents} fishers who share a lake for {cfg.months} months. The lake "
            f"holds at most {cfg.capacity} tons of fish and starts with {cfg.initial_stock}. At the start of each month "
            f"every fisher says, at the same time, how many tons to catch (or waits and catches nothing). If the "
            f"requests add up to more than the lake holds, the whole lake is caught and shared in proportion to the "
            f"requests (whole tons). If fewer than {cfg.collapse_threshold} tons are left after fishing, the fish die "
            f"out: the fishery collapses and the game ends for everyone. Otherwise the fish left multiply by "
            f"{cfg.regrowth_factor} by next month, up to {cfg.capacity} tons. Everyone sees what each fisher asked for "
            f"and caught last month. {talk}"
            " Your goal: catch as many tons as you can over all the months; your income is your catch."
        )
