"""What a fisher reads: its view of the lake, the observation text rendered from it, the
month's events, the ansi frame of the whole fishery, and the briefing."""

from __future__ import annotations

from typing import Any, Mapping

from teamenvs.commons.config import CommonsConfig
from teamenvs.commons.rules import HARVEST, MonthOutcome, Universalization
from teamenvs.core.env import event
from teamenvs.core.rounds import Phase, discussion_briefing
from teamenvs.core.view import footer


def tons(n: int) -> str:
    """An amount of fish as fishers read it: `1 ton`, `10 tons`."""
    return f"{n} ton" if n == 1 else f"{n} tons"


# ---------------------------------------------------------------------- the view
def month_view(month: int, outcome: MonthOutcome) -> dict[str, Any]:
    """The public results of `month` (every fisher's request and catch, the lake before and after), built afresh."""
    return {
        "month": month,
        "stock_before": outcome.stock_before,
        "requests": dict(outcome.requests),
        "catches": dict(outcome.catches),
        "remaining": outcome.remaining,
        "collapsed": outcome.collapsed,
        "stock_after": outcome.stock_after,
    }


def fisher_view(
    envelope: Mapping[str, Any],
    config: CommonsConfig,
    phase: Phase,
    over: bool,
    max_steps: int,
    stock: int,
    collapsed: bool,
    fishers: tuple[str, ...],
    total_catch: int,
    last_month: dict[str, Any] | None,
    hint: Universalization | None,
    messages: Mapping[str, tuple[str, ...]],
) -> dict[str, Any]:
    """Everything one fisher may know now: the lake, its own total catch, last month's public
    results, the universalization hint (under that condition) and its messages."""
    return {
        **envelope,
        "role": "fisher",
        "max_steps": max_steps,
        "month": phase.round,
        "months": config.months,
        "phase": "over" if over else phase.kind,
        "discussion_turn": phase.turn,
        "discussion_turns": config.discussion_turns,
        "stock": stock,
        "capacity": config.capacity,
        "collapse_threshold": config.collapse_threshold,
        "regrowth_factor": config.regrowth_factor,
        "collapsed": collapsed,
        "fishers": fishers,
        "n_fishers": config.n_agents,
        "your_total_catch": total_catch,
        "last_month": last_month,
        "universalization": None if hint is None else hint._asdict(),
        **messages,
    }


# ---------------------------------------------------------------------- the text
def render(view: Mapping[str, Any]) -> str:
    """The text observation of a fisher's view; the reader's own request is marked `(you)`."""
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
        f"Lake: {tons(view['stock'])} of fish (capacity {view['capacity']}). Fish left after a harvest "
        f"multiply by {view['regrowth_factor']} up to the capacity; fewer than {view['collapse_threshold']} left "
        f"collapses the fishery. Your total catch: {tons(view['your_total_catch'])}.",
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
        if_share, if_top = hint["stock_if_all_take_share"], hint["stock_if_all_take_max"]
        parts.append(
            f"If everyone takes the same: the sustainable share is {tons(hint['sustainable_share'])} each "
            f"(the lake would then hold {tons(if_share) if if_share is not None else 'nothing: collapse'}); "
            f"the most each can take without a collapse is {tons(hint['max_equal_harvest'])} "
            f"(the lake would then hold {tons(if_top) if if_top is not None else 'nothing: collapse'})."
        )
    before = []
    if view["new_messages"]:
        before.append("New messages: " + " | ".join(view["new_messages"]))
    if view["phase"] == "discussion" and view["recent_messages"]:
        before.append("Recent conversation: " + " | ".join(view["recent_messages"]))
    parts.extend(footer(view, before_last_action=before))
    return "\n".join(parts)


# ---------------------------------------------------------------------- events of a settled month
def catch_events(month: int, agent: str, outcome: MonthOutcome) -> list[dict[str, Any]]:
    """A fisher's own result of the month: its request and catch, and why it got less if it did."""
    asked, caught = outcome.requests[agent], outcome.catches[agent]
    events = [event("catch", f"Month {month}: you asked for {tons(asked)} and caught {tons(caught)}.", asked=asked, caught=caught)]
    if caught < asked:
        demand = sum(outcome.requests.values())
        events.append(
            event(
                "short_catch",
                f"You got less than you asked ({caught} of {asked}): the fishers asked for {tons(demand)} "
                f"in all but the lake held {tons(outcome.stock_before)}, so it was shared in proportion to the requests.",
                asked=asked,
                caught=caught,
                demand=demand,
                stock=outcome.stock_before,
            )
        )
    return events


def month_event(month: int, outcome: MonthOutcome, collapse_threshold: int) -> dict[str, Any]:
    """The log's record of a settled month; the sustainable share goes to the log only (fishers see it under the hint)."""
    if outcome.collapsed:
        text = f"month {month}: {tons(outcome.remaining)} left, below {collapse_threshold}: the fishery collapsed"
    else:
        text = f"month {month}: {tons(outcome.remaining)} left, regrew to {tons(outcome.stock_after)}"
    return event("month", text, sustainable_share=outcome.sustainable_share, **month_view(month, outcome))


# ---------------------------------------------------------------------- for people: frame and briefing
def frame(
    step: int, max_steps: int, phase: Phase, stock: int, capacity: int, collapsed: bool,
    total_catch: Mapping[str, int], last_month: Mapping[str, Any] | None,
) -> str:
    """The ansi frame of the whole fishery: the lake, and each fisher's total and last request and catch."""
    status = " | COLLAPSED" if collapsed else ""
    rows = [f"Commons step {step}/{max_steps} | month {phase.round} | {phase.kind} | stock {stock}/{capacity}{status}"]
    for a, total in total_catch.items():
        ask = f"{last_month['requests'][a]}/{last_month['catches'][a]}" if last_month else "-"
        rows.append(f"  {a:<10} total {total:>6}  last asked/caught: {ask}")
    return "\n".join(rows)


def briefing(agent: str, config: CommonsConfig) -> str:
    """The role and rules part of a fisher's briefing."""
    cfg = config
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
