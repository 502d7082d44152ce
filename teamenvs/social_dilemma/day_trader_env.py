"""`day_trader_v0`: the CollabSim DayTrader social dilemma as a text ParallelEnv.

The env is a thin shell over `day_trader.py`: it walks the schedule of decision and
discussion steps, turns parsed commands into `Choice`s, settles rounds with
`settle_round`, and renders each trader's view.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

from teamenvs.core.commands import Action, CommandSet, Command, IntArg, Situation
from teamenvs.core.env import event
from teamenvs.core.messaging import SAY, TELL
from teamenvs.social_dilemma.metrics import DAY_TRADER_GOALS, day_trader_metrics
from teamenvs.core.rounds import ScheduledGame, discussion_briefing
from teamenvs.social_dilemma.day_trader import (
    GROUP,
    INDIVIDUAL,
    PRESETS,
    WAIT,
    Choice,
    DayTraderConfig,
    affordable_max,
    money_json,
    schedule,
    settle_round,
)

COMMANDS = CommandSet(
    [
        Command(
            "invest individual",
            (IntArg("amount", 15, 100, 50),),
            "private investment: the amount comes back to you doubled",
            ("invest individual 50",),
        ),
        Command(
            "invest group",
            (IntArg("amount", 15, 100, 50),),
            "group investment: all group investments are pooled, tripled and split equally among all traders",
            ("invest group 50",),
        ),
        Command("wait", (), "do nothing this turn", ("wait",)),
        SAY,
        TELL,
    ]
)


def _dollars(value: float) -> str:
    return f"${value:,.2f}"


def _choice_text(choice: Choice) -> str:
    return WAIT if choice.kind == WAIT else f"{choice.kind} {choice.amount}"


class DayTraderEnv(ScheduledGame):
    """DayTrader: repeated individual-vs-group investment with a top-earner bonus (CollabSim)."""

    metadata = {"render_modes": ["ansi"], "name": "day_trader_v0", "is_parallelizable": True}
    env_id = "day_trader_v0"
    commands = COMMANDS
    config_class = DayTraderConfig
    presets = PRESETS
    agent_prefix = "trader"
    episode_metrics = staticmethod(day_trader_metrics)
    metric_goals = DAY_TRADER_GOALS
    config: DayTraderConfig

    # ------------------------------------------------------------------ episode state
    def _setup(self) -> None:
        cfg = self.config
        self.schedule = schedule(cfg)
        self.balances: dict[str, Fraction] = {a: Fraction(cfg.starting_money) for a in self.agents}
        self.last_choices: dict[str, Choice] | None = None
        self.last_outcome = None
        self._refresh()

    def _refresh(self) -> None:
        """Recompute what views share after balances change (once per round, not per agent)."""
        cfg = self.config
        self._money = {a: money_json(v) for a, v in self.balances.items()}
        self._top = {a: affordable_max(v, cfg) for a, v in self.balances.items()}
        self._public: dict[str, Any] = self._public_view()
        self._public_template = self._public_text(self._public)

    def _is_over(self) -> tuple[bool, bool]:
        return self.step_count >= len(self.schedule), False

    # ------------------------------------------------------------------ what an agent may do
    def _situation_key(self, agent: str):
        top = self._top[agent]
        # below the maximum investment the reasons quote the exact money ("you have $47.50")
        money = self._money[agent] if top < self.config.max_investment else None
        return agent, self.phase.kind, top, money

    def _situation(self, agent: str) -> Situation:
        cfg, phase = self.config, self.phase
        denied: dict[str, str] = {}
        names = {"agent": tuple(a for a in self.possible_agents if a != agent)}
        if phase.kind == "decision":
            reason = f"messages can be sent only in discussion phases (after every {cfg.discussion_every} rounds); this is a decision phase"
            if not cfg.communication:
                reason = "communication is off in this condition"
            denied.update({"say": reason, "tell": reason})
            top = self._top[agent]
            if top < cfg.min_investment:
                why = f"you have {_dollars(float(self.balances[agent]))}, less than the minimum investment of ${cfg.min_investment}"
                denied.update({"invest individual": why, "invest group": why})
                return Situation(denied, {}, names)
            limits = {"amount": (cfg.min_investment, top)}
            reasons = {"amount": f"you have {_dollars(float(self.balances[agent]))}"} if top < cfg.max_investment else {}
            return Situation(denied, limits, names, reasons)
        why = "investing happens in decision phases; this is a discussion phase"
        denied.update({"invest individual": why, "invest group": why})
        return Situation(denied, {}, names)

    # ------------------------------------------------------------------ rules
    def _apply(self, actions: Mapping[str, Action | None]) -> dict[str, float]:
        phase = self.phase
        if phase.kind != "decision":
            return {}
        choices: dict[str, Choice] = {}
        for agent, action in actions.items():
            if action is None or action.command == WAIT:
                choices[agent] = Choice(WAIT)
            else:
                kind = INDIVIDUAL if action.command == "invest individual" else GROUP
                choices[agent] = Choice(kind, action.args["amount"])
        before = self.balances
        outcome = settle_round(before, choices, phase.round, self.config)
        self.balances = outcome.balances
        self.last_choices = choices
        self.last_outcome = outcome
        self._refresh()
        rewards = {a: float(outcome.balances[a] - before[a]) for a in self.agents}
        share = money_json(outcome.pool_share)
        for agent in self.agents:
            bonus = outcome.bonus.get(agent, 0)
            self.tell_agent(
                agent,
                event(
                    "round_result",
                    f"Round {phase.round}: you chose {_choice_text(choices[agent])}; you earned "
                    f"{_dollars(float(outcome.earnings[agent]))}" + (f" plus a ${bonus} top-earner bonus" if bonus else "") + ".",
                    earned=money_json(outcome.earnings[agent]),
                    bonus=bonus,
                ),
            )
        self.global_events.append(
            event(
                "round",
                f"round {phase.round} settled: pool ${outcome.pool}",
                round=phase.round,
                choices={a: {"kind": c.kind, "amount": c.amount} for a, c in choices.items()},
                pool=outcome.pool,
                pool_share=share,
                earnings={a: money_json(v) for a, v in outcome.earnings.items()},
                bonus=dict(outcome.bonus),
                balances={a: money_json(v) for a, v in outcome.balances.items()},
            )
        )
        return rewards

    # ------------------------------------------------------------------ views and text
    def _public_view(self) -> dict[str, Any]:
        """The part of every trader's view that is the same for all (rebuilt when a round is settled)."""
        last = None
        if self.last_outcome is not None and self.last_choices is not None:
            last = {
                "round": self.phase.round,
                "choices": {a: _choice_text(c) for a, c in self.last_choices.items()},
                "pool": self.last_outcome.pool,
                "pool_share": money_json(self.last_outcome.pool_share),
                "bonus": dict(self.last_outcome.bonus),
            }
        balances = dict(self._money) if self.config.show_balances else None
        return {"traders": tuple(self.possible_agents), "last_round": last, "balances": balances}

    def _view(self, agent: str) -> dict[str, Any]:
        cfg = self.config
        over = self.step_count >= len(self.schedule)
        phase = self.phase
        top = self._top[agent]
        return {
            "agent": agent,
            "role": "trader",
            "step": self.step_count,
            "max_steps": len(self.schedule),
            "round": phase.round,
            "rounds": cfg.rounds,
            "phase": "over" if over else phase.kind,
            "discussion_turn": phase.turn,
            "discussion_turns": cfg.discussion_turns,
            "money": self._money[agent],
            "can_invest": (cfg.min_investment, top) if top >= cfg.min_investment else None,
            "public": self._public,
            **self.messages_view(agent),
            "last_action": self.last_action_line(agent),
            "events": tuple(e["text"] for e in self._events[agent]),
            "valid_now": "" if over else self.valid_now(agent),
        }

    def _public_text(self, public: Mapping[str, Any]) -> str:
        """The shared lines of the observation; `_render_view` marks the reader's own choice."""
        lines = []
        last = public["last_round"]
        if last is not None:
            choices = "; ".join(f"{a}: {c}" for a, c in last["choices"].items())
            pool = last["pool"]
            line = (
                f"Round {last['round']} results: group pool ${pool} (tripled: ${pool * self.config.group_multiplier}, "
                f"{_dollars(last['pool_share'])} to each trader). Choices: {choices}."
            )
            if last["bonus"]:
                line += " Bonus: " + ", ".join(f"{a} +${b}" for a, b in last["bonus"].items()) + "."
            lines.append(line)
        if public["balances"] is not None:
            lines.append("Balances: " + "; ".join(f"{a} {_dollars(v)}" for a, v in public["balances"].items()) + ".")
        return "\n".join(lines)

    def _render_view(self, view: Mapping[str, Any]) -> str:
        agent = view["agent"]
        n = len(view["public"]["traders"])
        if view["phase"] == "over":
            head = f"DayTrader is over after {view['rounds']} rounds. You are {agent} ({n} traders)."
        elif view["phase"] == "decision":
            head = f"DayTrader, round {view['round']}/{view['rounds']}, decision phase. You are {agent} ({n} traders)."
        else:
            head = (
                f"DayTrader, discussion after round {view['round']}/{view['rounds']} "
                f"(turn {view['discussion_turn']}/{view['discussion_turns']}). You are {agent} ({n} traders)."
            )
        can = view["can_invest"]
        money = f"Your money: {_dollars(view['money'])}."
        if view["phase"] == "decision":
            money += f" You may invest ${can[0]}-${can[1]}." if can else " You cannot afford an investment this round."
        parts = [head, money]
        shared = view["public"]
        public = self._public_template if shared is self._public else self._public_text(shared)
        public = public.replace(f" {agent}: ", f" {agent} (you): ", 1)
        if public:
            parts.append(public)
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
            "phase": phase.kind,
            "round": phase.round,
            "balances": {a: money_json(v) for a, v in self.balances.items()},
            "balances_exact": {a: str(v) for a, v in self.balances.items()},
            "last_round": self._public["last_round"],
        }

    def _render_frame(self) -> str:
        phase = self.phase
        rows = [f"DayTrader step {self.step_count}/{len(self.schedule)} | round {phase.round} | {phase.kind}"]
        for a in self.possible_agents:
            last = self.last_choices[a] if self.last_choices else None
            rows.append(f"  {a:<10} {_dollars(float(self.balances[a])):>12}  last: {_choice_text(last) if last else '-'}")
        return "\n".join(rows)

    def _role_briefing(self, agent: str) -> str:
        cfg = self.config
        talk = discussion_briefing(cfg, cfg.discussion_every, cfg.discussion_turns, "round", "traders")
        return (
            f"You are {agent}, one of {cfg.n_agents} traders in DayTrader, a repeated investment game of "
            f"{cfg.rounds} rounds. Everyone starts with ${cfg.starting_money}. In each round's decision phase you "
            f"make at most one investment of ${cfg.min_investment}-${cfg.max_investment} (and no more than you have), "
            f"or wait. An individual investment comes back to you multiplied by {cfg.individual_multiplier}. "
            f"All group investments of the round are pooled, the pool is multiplied by {cfg.group_multiplier} and "
            f"split equally among all {cfg.n_agents} traders, whether they invested or not. From round "
            f"{cfg.bonus_from_round} on, the trader(s) with the highest earnings in the round get a ${cfg.bonus} bonus "
            f"(split equally, rounded down, between tied traders); a round's earnings are what you got back that round "
            f"(your individual return and your pool share) minus what you invested. {talk}"
            " Your goal: maximize your own money at the end of the game."
        )
