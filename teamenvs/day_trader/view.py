"""What a trader reads: its view of the market, the observation text rendered from it, the
round's events, the ansi frame of the whole game, and the briefing."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

from teamenvs.core.env import event
from teamenvs.core.rounds import Phase, discussion_briefing
from teamenvs.core.view import footer
from teamenvs.day_trader.config import DayTraderConfig
from teamenvs.day_trader.rules import WAIT, Choice, RoundOutcome, money_json


def dollars(value: float) -> str:
    """Money as traders read it: `$1,234.50`."""
    return f"${value:,.2f}"


def choice_text(choice: Choice) -> str:
    """A choice as traders read it: `group 50`, `individual 30` or `wait`."""
    return WAIT if choice.kind == WAIT else f"{choice.kind} {choice.amount}"


# ---------------------------------------------------------------------- the view
def last_round_view(round_no: int, choices: Mapping[str, Choice], outcome: RoundOutcome) -> dict[str, Any]:
    """The public results of the round `round_no`: everyone's choice, the pool, each one's share and the bonus."""
    return {
        "round": round_no,
        "choices": {a: choice_text(c) for a, c in choices.items()},
        "pool": outcome.pool,
        "pool_share": money_json(outcome.pool_share),
        "bonus": dict(outcome.bonus),
    }


def fresh_last_round(last_round: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A copy of a last-round view that shares no mutable object with it (each view gets its own)."""
    if last_round is None:
        return None
    return {**last_round, "choices": dict(last_round["choices"]), "bonus": dict(last_round["bonus"])}


def trader_view(
    envelope: Mapping[str, Any],
    config: DayTraderConfig,
    phase: Phase,
    over: bool,
    max_steps: int,
    traders: tuple[str, ...],
    money: Mapping[str, float],
    top: int,
    last_round: dict[str, Any] | None,
    messages: Mapping[str, tuple[str, ...]],
) -> dict[str, Any]:
    """Everything one trader may know now: its money and what it may invest, the public results
    of the last round, everyone's balances (under `show_balances`) and its messages."""
    agent = envelope["agent"]
    return {
        **envelope,
        "role": "trader",
        "max_steps": max_steps,
        "round": phase.round,
        "rounds": config.rounds,
        "phase": "over" if over else phase.kind,
        "discussion_turn": phase.turn,
        "discussion_turns": config.discussion_turns,
        "group_multiplier": config.group_multiplier,
        "money": money[agent],
        "can_invest": (config.min_investment, top) if top >= config.min_investment else None,
        "public": {
            "traders": traders,
            "last_round": last_round,
            "balances": dict(money) if config.show_balances else None,
        },
        **messages,
    }


# ---------------------------------------------------------------------- the text
def public_text(public: Mapping[str, Any], group_multiplier: int) -> str:
    """The lines every trader reads alike: the last round's results and the balances."""
    lines = []
    last = public["last_round"]
    if last is not None:
        choices = "; ".join(f"{a}: {c}" for a, c in last["choices"].items())
        pool = last["pool"]
        line = (
            f"Round {last['round']} results: group pool ${pool} (tripled: ${pool * group_multiplier}, "
            f"{dollars(last['pool_share'])} to each trader). Choices: {choices}."
        )
        if last["bonus"]:
            line += " Bonus: " + ", ".join(f"{a} +${b}" for a, b in last["bonus"].items()) + "."
        lines.append(line)
    if public["balances"] is not None:
        lines.append("Balances: " + "; ".join(f"{a} {dollars(v)}" for a, v in public["balances"].items()) + ".")
    return "\n".join(lines)


def render(view: Mapping[str, Any], public: str | None = None) -> str:
    """The text observation of a trader's view; the reader's own choice is marked `(you)`.

    `public` is `public_text` of the view's public part when the caller already has it.
    """
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
    money = f"Your money: {dollars(view['money'])}."
    if view["phase"] == "decision":
        money += f" You may invest ${can[0]}-${can[1]}." if can else " You cannot afford an investment this round."
    parts = [head, money]
    if public is None:
        public = public_text(view["public"], view["group_multiplier"])
    public = public.replace(f" {agent}: ", f" {agent} (you): ", 1)
    if public:
        parts.append(public)
    before = []
    if view["new_messages"]:
        before.append("New messages: " + " | ".join(view["new_messages"]))
    if view["phase"] == "discussion" and view["recent_messages"]:
        before.append("Recent conversation: " + " | ".join(view["recent_messages"]))
    parts.extend(footer(view, before_last_action=before))
    return "\n".join(parts)


# ---------------------------------------------------------------------- events of a settled round
def result_event(round_no: int, choice: Choice, earned: Fraction, bonus: int) -> dict[str, Any]:
    """A trader's own result of the round: its choice, earnings and any bonus."""
    return event(
        "round_result",
        f"Round {round_no}: you chose {choice_text(choice)}; you earned "
        f"{dollars(float(earned))}" + (f" plus a ${bonus} top-earner bonus" if bonus else "") + ".",
        earned=money_json(earned),
        bonus=bonus,
    )


def round_event(round_no: int, choices: Mapping[str, Choice], outcome: RoundOutcome) -> dict[str, Any]:
    """The log's record of a settled round (every choice, the pool, earnings, bonuses and balances)."""
    return event(
        "round",
        f"round {round_no} settled: pool ${outcome.pool}",
        round=round_no,
        choices={a: {"kind": c.kind, "amount": c.amount} for a, c in choices.items()},
        pool=outcome.pool,
        pool_share=money_json(outcome.pool_share),
        earnings={a: money_json(v) for a, v in outcome.earnings.items()},
        bonus=dict(outcome.bonus),
        balances={a: money_json(v) for a, v in outcome.balances.items()},
    )


# ---------------------------------------------------------------------- for people: frame and briefing
def frame(
    step: int, max_steps: int, phase: Phase, balances: Mapping[str, Fraction], last_choices: Mapping[str, Choice] | None
) -> str:
    """The ansi frame of the whole game: each trader's money and last choice."""
    rows = [f"DayTrader step {step}/{max_steps} | round {phase.round} | {phase.kind}"]
    for a, money in balances.items():
        last = last_choices[a] if last_choices else None
        rows.append(f"  {a:<10} {dollars(float(money)):>12}  last: {choice_text(last) if last else '-'}")
    return "\n".join(rows)


def briefing(agent: str, config: DayTraderConfig) -> str:
    """The role and rules part of a trader's briefing."""
    cfg = config
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
