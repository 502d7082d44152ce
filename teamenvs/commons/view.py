"""What a fisher reads: its view of the lake, the observation text rendered from it, the
month's events, the ansi frame of the whole fishery, and the briefing."""

from __future__ import annotations

import itertools
from operator import is_, itemgetter
from typing import Any, Mapping, NamedTuple

import numpy as np

from teamenvs.commons.config import CommonsConfig
from teamenvs.commons.rules import HARVEST, MonthOutcome, Universalization, sustainable_share
from teamenvs.core.env import LAST_ACTION_REJECTED, event
from teamenvs.core.rl import Feature, clipped, feature_bounds, pool_scale, set_flags, unpack_flat, vector_of
from teamenvs.core.rounds import Phase, discussion_briefing, message_slots, message_tables
from teamenvs.core.view import SharedFacts, footer


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


def shared_public(month: int, outcome: MonthOutcome | None, hint: Universalization | None) -> tuple[Any, Any]:
    """The parts of every fisher's view that are the same for all of them in a step: last month's public results
    (`month_view`, None before the first harvest) and the universalization hint (None when the condition is off),
    each one read-only object (`SharedFacts`) that every view of the step holds, so no fisher's policy can change
    what another reads."""
    last = None
    if outcome is not None:
        last = month_view(month, outcome)
        last = SharedFacts({**last, "requests": SharedFacts(last["requests"]), "catches": SharedFacts(last["catches"])})
    return last, None if hint is None else SharedFacts(hint._asdict())


def lake_facts(
    config: CommonsConfig, phase: Phase, over: bool, max_steps: int, stock: int, collapsed: bool, fishers: tuple[str, ...]
) -> dict[str, Any]:
    """The part of every fisher's view that is the same for all of them in a step: the schedule, the lake and who fishes."""
    return {
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
    }


def fisher_view(
    envelope: Mapping[str, Any],
    lake: Mapping[str, Any],
    total_catch: int,
    last_month: Mapping[str, Any] | None,
    universalization: Mapping[str, Any] | None,
    messages: Mapping[str, tuple[str, ...]],
) -> dict[str, Any]:
    """Everything one fisher may know now: the lake (`lake_facts`), its own total catch, last month's public
    results and the universalization hint (under that condition; both from `shared_public`) and its messages."""
    return {
        **envelope,
        **lake,
        "your_total_catch": total_catch,
        "last_month": last_month,
        "universalization": universalization,
        **messages,
    }


# ---------------------------------------------------------------------- the text
def public_text(last: Mapping[str, Any] | None, hint: Mapping[str, Any] | None) -> tuple[str, str]:
    """The lines every fisher reads alike: last month's results (no request marked yet) and the hint ('' for none)."""
    month = ""
    if last is not None:
        asked = "; ".join(f"{a} {last['requests'][a]}/{last['catches'][a]}" for a in last["requests"])
        fate = "collapsed" if last["collapsed"] else f"regrew to {last['stock_after']}"
        month = f"Month {last['month']}: lake {last['stock_before']}, {last['remaining']} left, {fate}. Asked/caught: {asked}."
    line = ""
    if hint is not None:
        if_share, if_top = hint["stock_if_all_take_share"], hint["stock_if_all_take_max"]
        line = (
            f"If everyone takes the same: the sustainable share is {tons(hint['sustainable_share'])} each "
            f"(the lake would then hold {tons(if_share) if if_share is not None else 'nothing: collapse'}); "
            f"the most each can take without a collapse is {tons(hint['max_equal_harvest'])} "
            f"(the lake would then hold {tons(if_top) if if_top is not None else 'nothing: collapse'})."
        )
    return month, line


# the fields of a view that `lake_lines` reads (all but the reader's own)
LAKE_FIELDS = ("phase", "month", "months", "discussion_turn", "discussion_turns", "collapsed", "stock", "capacity",
               "regrowth_factor", "collapse_threshold")


def lake_lines(view: Mapping[str, Any]) -> tuple[str, str]:
    """The beginnings of the first two lines, the same for every fisher of a step: the heading (before
    `You are ...`) and the lake (before the reader's total catch)."""
    if view["phase"] == "over":
        end = f"collapsed in month {view['month']}" if view["collapsed"] else f"is over after {view['months']} months"
        head = f"Fishery {end}. "
    elif view["phase"] == HARVEST:
        head = f"Fishery, month {view['month']}/{view['months']}, harvest phase. "
    else:
        head = (
            f"Fishery, discussion after month {view['month']}/{view['months']} "
            f"(turn {view['discussion_turn']}/{view['discussion_turns']}). "
        )
    lake = (
        f"Lake: {tons(view['stock'])} of fish (capacity {view['capacity']}). Fish left after a harvest "
        f"multiply by {view['regrowth_factor']} up to the capacity; fewer than {view['collapse_threshold']} left "
        f"collapses the fishery. Your total catch: "
    )
    return head, lake


def render(view: Mapping[str, Any], public: tuple[str, str] | None = None, lake: tuple[str, str] | None = None) -> str:
    """The text observation of a fisher's view; the reader's own request is marked `(you)`.

    `public` is `public_text` of the view's last month and hint, and `lake` its `lake_lines`, when the caller
    already has them.
    """
    agent = view["agent"]
    head, lake_line = lake if lake is not None else lake_lines(view)
    parts = [
        f"{head}You are {agent} ({view['n_fishers']} fishers).",
        f"{lake_line}{tons(view['your_total_catch'])}.",
    ]
    month, hint = public if public is not None else public_text(view["last_month"], view["universalization"])
    if month:
        # every fisher is listed once, after a space and before its request: mark the reader's own
        parts.append(month.replace(f" {agent} ", f" {agent} (you) ", 1))
    if hint:
        parts.append(hint)
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


# ---------------------------------------------------------------------- the numeric observation (RL)
# The canned messages of the discrete action catalogue (`commands.catalogue`), as the view shows
# them; the encoder recognises them in the messages a fisher reads.
MESSAGES = (
    "I will take only my sustainable share",
    "let us all take only the sustainable share",
    "I will take more than my share",
)


def features(config: CommonsConfig) -> tuple[Feature, ...]:
    """The feature table of a fisher's numeric observation (its view only), for `config`."""
    n, k = config.n_agents, len(MESSAGES)
    return (
        Feature("phase", 3, doc="one-hot: harvest, discussion, over"),
        Feature("month", doc="the month (of the harvest, or the discussion after it) / months"),
        Feature("discussion_turn", doc="discussion turn / discussion turns (0 outside discussions)"),
        Feature("last_action_rejected", doc="1 if the agent's last action was rejected"),
        Feature("stock", doc="fish in the lake / capacity"),
        Feature("sustainable_share", doc="floor((stock - max(ceil(stock / regrowth_factor), collapse_threshold)) / n) / capacity: the share that lets the lake regrow"),
        Feature("collapsed", doc="1 if the fishery has collapsed"),
        Feature("total_catch", doc="own total catch / (months * capacity)"),
        Feature("collapse_threshold", doc="collapse threshold / capacity"),
        Feature("regrowth", doc="1 / regrowth_factor (the part of the stock to leave for it to regrow)"),
        Feature("last_month_known", doc="1 once a month has been settled"),
        Feature("last_lake", 3, doc="last month's lake before the harvest, left after it, after regrowth; each / capacity"),
        Feature("own_last_request", doc="own request last month / capacity"),
        Feature("own_last_catch", doc="own catch last month / capacity"),
        Feature("own_last_over_share", doc="1 if own request last month exceeded that month's sustainable share"),
        Feature("others_last_request", n - 1, doc="each other fisher's request last month (others in id order) / capacity"),
        Feature("others_last_catch", n - 1, doc="each other fisher's catch last month / capacity"),
        Feature("others_last_over_share", n - 1, doc="1 per other fisher whose request exceeded last month's sustainable share"),
        Feature("last_mean_request", doc="last month's mean request of all fishers, rounded half up (what `mimic` asks for) / capacity"),
        Feature("hint", 7, doc="the universalization hint (0 unless shown): shown, sustainable share / capacity, stock if all take it / "
                              "capacity, 1 if that collapses, the largest safe equal harvest / capacity, stock if all take it / capacity, "
                              "1 if that collapses"),
        Feature("new_messages", (n - 1) * (k + 1),
                doc=f"per other fisher, which messages it sent that this fisher reads now: the {k} canned messages, then any other text"),
        Feature("recent_messages", (n - 1) * (k + 1),
                doc="the same for the recent conversation (shown in discussion phases only; 0 otherwise)"),
    )


class _Layout(NamedTuple):
    features: tuple[Feature, ...]
    names: tuple[str, ...]  # the features' names, in table order
    ends: tuple[int, ...]  # where each feature's slots end in the vector
    low: np.ndarray  # the features' bounds, slot by slot
    high: np.ndarray
    others: dict[str, tuple[str, ...]]  # agent -> the other fishers in id order
    slots: dict[str, dict[str, int]]  # agent -> other fisher -> its index among the others
    lines: dict[str, dict[str, tuple[int, int]]]  # agent -> message line -> (other index, message index)
    no_month: list[float]  # the slots of last month's results before the first month is settled (all 0)
    messages: int  # slots of one message block: (n - 1) * (len(MESSAGES) + 1)
    gather: dict[str, np.ndarray]  # agent -> for each slot of its vector, the entry of a `_step_pool` it reads
    pool_low: np.ndarray  # the scale of each entry of a step pool: that of the slots that read it
    pool_high: np.ndarray
    start: dict[str, int]  # where each feature's slots begin
    scale: list[tuple[float, float]]  # each slot's scale, as Python floats (see `teamenvs.core.rl.clipped`)


_LAYOUTS: dict[int, tuple[CommonsConfig, tuple[str, ...], _Layout]] = {}
_NO_HINT = [0.0] * 7


def _layout(config: CommonsConfig, fishers: tuple[str, ...]) -> _Layout:
    """The per-config tables of the encoder (built once per config and fisher list)."""
    cached = _LAYOUTS.get(id(config))
    if cached is not None and cached[0] is config and cached[1] == fishers:
        return cached[2]
    others, slots, lines = message_tables(fishers, MESSAGES)
    table = features(config)
    low, high = feature_bounds(table)
    ends = tuple(itertools.accumulate(f.size for f in table))
    n1 = len(fishers) - 1
    start = dict(zip((f.name for f in table), itertools.accumulate((f.size for f in table), initial=0)))
    gather = {agent: _gather(start, len(low), len(fishers), i) for i, agent in enumerate(fishers)}
    layout = _Layout(table, tuple(f.name for f in table), ends, low, high, others, slots, lines,
                     [0.0] * (3 + 3 + 3 * n1 + 1), n1 * (len(MESSAGES) + 1), gather, *pool_scale(gather, low, high),
                     start, list(zip(low.tolist(), high.tolist())))
    if len(_LAYOUTS) > 64:
        _LAYOUTS.clear()
    _LAYOUTS[id(config)] = (config, fishers, layout)
    return layout


def mean_request(last_month: Mapping[str, Any]) -> int:
    """Last month's mean request, rounded half up (what the `mimic` baseline asks for)."""
    asked = last_month["requests"].values()
    return (2 * sum(asked) + len(asked)) // (2 * len(asked))


def _month_slots(last: Mapping[str, Any], agent: str, others: tuple[str, ...], cap: int, limit: int) -> list[float]:
    """last_lake to last_mean_request: last month's lake, own and others' requests, catches and
    whether they exceeded `limit` (that month's sustainable share), and the mean request."""
    requests, catches = last["requests"], last["catches"]
    asked = requests[agent]
    flat = [last["stock_before"] / cap, last["remaining"] / cap, last["stock_after"] / cap,
            asked / cap, catches[agent] / cap, float(asked > limit)]
    flat += [requests[o] / cap for o in others]
    flat += [catches[o] / cap for o in others]
    flat += [float(requests[o] > limit) for o in others]
    flat.append(mean_request(last) / cap)
    return flat


def _hint_slots(hint: Mapping[str, Any] | None, cap: int) -> list[float]:
    """The 7 slots of the universalization hint (all 0 when it is not shown)."""
    if hint is None:
        return _NO_HINT
    if_share, if_top = hint["stock_if_all_take_share"], hint["stock_if_all_take_max"]
    return [1.0, hint["sustainable_share"] / cap, (if_share or 0) / cap, float(if_share is None),
            hint["max_equal_harvest"] / cap, (if_top or 0) / cap, float(if_top is None)]


def encode_flat(view: Mapping[str, Any], config: CommonsConfig) -> list[float]:
    """The values of `features(config)` for a fisher's view, slot by slot, in one flat list (before clipping)."""
    agent = view["agent"]
    layout = _layout(config, view["fishers"])
    others = layout.others[agent]
    cap = view["capacity"]
    factor, n = view["regrowth_factor"], view["n_fishers"]
    phase = view["phase"]
    discussing = phase == "discussion"
    stock = view["stock"]
    last = view["last_month"]
    flat = [
        float(phase == HARVEST), float(discussing), float(phase == "over"),
        view["month"] / view["months"],
        view["discussion_turn"] / view["discussion_turns"] if discussing else 0.0,
        float(view["last_action"].startswith(LAST_ACTION_REJECTED)),
        stock / cap,
        sustainable_share(stock, n, factor, view["collapse_threshold"]) / cap,
        float(view["collapsed"]),
        view["your_total_catch"] / (view["months"] * cap),
        view["collapse_threshold"] / cap,
        1.0 / factor,
        float(last is not None),
    ]
    if last is None:
        flat += layout.no_month
    else:
        flat += _month_slots(last, agent, others, cap, sustainable_share(last["stock_before"], n, factor, view["collapse_threshold"]))
    flat += _hint_slots(view["universalization"], cap)
    size, k = layout.messages, len(MESSAGES)
    slot, table = layout.slots[agent], layout.lines[agent]
    new, recent = view["new_messages"], view["recent_messages"]
    flat += message_slots(new, table, slot, k, size) if new else [0.0] * size
    flat += message_slots(recent, table, slot, k, size) if discussing and recent else [0.0] * size
    return flat


def encode_values(view: Mapping[str, Any], config: CommonsConfig) -> dict[str, Any]:
    """The value (or values) of each feature of `features(config)` for a fisher's view."""
    return unpack_flat(_layout(config, view["fishers"]).features, encode_flat(view, config))


# ---------------------------------------------------------------------- the vector, gathered
# `encode_flat` reads a view slot by slot; `encode` gives the same vector from what it shares with the other views of
# its step. A step pool (`_step_pool`, one float32 array per step) holds the slots every fisher of the step shares
# (phase to last_month_known but the reader's own, last month's lake and mean request, the hint) and every fisher's
# month values (request, catch and whether it exceeded the share, in id order), each clipped to the scale of the
# slots that read it, and a 0 first; a fisher's vector picks them in its order in one step (`_Layout.gather`: its
# own month values as its own, the others' as the others'), and its own slots (last_action_rejected, total_catch,
# the messages it reads) are then written in, each within its scale, so the vector needs no clip.
# the head features a pool holds after the 0 and the phase's 3 slots, in order
_POOL_HEAD = ("month", "discussion_turn", "stock", "sustainable_share", "collapsed", "collapse_threshold", "regrowth",
              "last_month_known")
_MONTH = 1 + 3 + len(_POOL_HEAD)  # where a pool's month values begin


def _gather(start: Mapping[str, int], size: int, n: int, i: int) -> np.ndarray:
    """For each slot of the vector of the `i`-th of `n` fishers, the entry of a step pool it reads (0: the pool's 0,
    for the slots the fisher writes itself)."""
    at = [0] * size
    phase = start["phase"]
    for entry, slot in enumerate((phase, phase + 1, phase + 2, *(start[name] for name in _POOL_HEAD)), start=1):
        at[slot] = entry
    others = [j for j in range(n) if j != i]
    lake, asked, caught, over, mean = _MONTH, _MONTH + 3, _MONTH + 3 + n, _MONTH + 3 + 2 * n, _MONTH + 3 + 3 * n
    month = [lake, lake + 1, lake + 2, asked + i, caught + i, over + i, *(asked + j for j in others),
             *(caught + j for j in others), *(over + j for j in others), mean]
    at[start["last_lake"]:start["last_mean_request"] + 1] = month
    at[start["hint"]:start["hint"] + 7] = range(mean + 1, mean + 8)
    return np.array(at, dtype=np.intp)


# (id of last month, id of the hint, id of the layout) -> (those objects, the view's STEP_FIELDS values, their pool)
_STEP_POOLS: dict[tuple[int, int, int], tuple[Any, Any, _Layout, tuple, np.ndarray]] = {}
# the fields of a view that a step pool is read from, besides its shared parts
STEP_FIELDS = ("phase", "month", "months", "discussion_turn", "discussion_turns", "stock", "capacity",
               "collapsed", "collapse_threshold", "regrowth_factor", "n_fishers", "fishers")
_step_fields = itemgetter(*STEP_FIELDS)
_IMMUTABLE = (int, float, str, bool, tuple)  # (a view's tuple of fishers holds strings)


def _read_only(part: Mapping[str, Any] | None) -> bool:
    """Whether a shared part of a view (`shared_public`'s) cannot change, so that its object says what it holds."""
    if part is None:
        return True
    return type(part) is SharedFacts and all(type(v) is not dict and type(v) is not list for v in part.values())


def _step_pool(view: Mapping[str, Any], layout: _Layout) -> np.ndarray:
    """The pool the vectors of `view`'s step are gathered from (read-only), worked out for the step's first fisher
    and found again for the others: by the identity of the read-only parts every view of the step holds
    (`shared_public`) and of its values of STEP_FIELDS (the same objects in every view of a step: `lake_facts`), which
    the entry holds (so their ids are not reused) and which cannot change."""
    last, hint = view["last_month"], view["universalization"]
    values = _step_fields(view)
    key = (id(last), id(hint), id(layout))
    hit = _STEP_POOLS.get(key)
    if hit is not None and hit[0] is last and hit[1] is hint and hit[2] is layout and all(map(is_, hit[3], values)):
        return hit[4]
    phase, month, months, turn, turns, stock, cap, collapsed, threshold, factor, n, fishers = values
    discussing = phase == "discussion"
    pool = [
        0.0,
        float(phase == HARVEST), float(discussing), float(phase == "over"),
        month / months,
        turn / turns if discussing else 0.0,
        stock / cap,
        sustainable_share(stock, n, factor, threshold) / cap,
        float(collapsed),
        threshold / cap,
        1.0 / factor,
        float(last is not None),
    ]
    if last is None:
        pool += [0.0] * (4 + 3 * len(fishers))
    else:
        limit = sustainable_share(last["stock_before"], n, factor, threshold)
        requests, catches = last["requests"], last["catches"]
        pool += [last["stock_before"] / cap, last["remaining"] / cap, last["stock_after"] / cap]
        pool += [requests[f] / cap for f in fishers]
        pool += [catches[f] / cap for f in fishers]
        pool += [float(requests[f] > limit) for f in fishers]
        pool.append(mean_request(last) / cap)
    pool += _hint_slots(hint, cap)
    array = np.array(pool, dtype=np.float32)
    np.minimum(np.maximum(array, layout.pool_low, out=array), layout.pool_high, out=array)
    array.flags.writeable = False
    if _read_only(last) and _read_only(hint) and all(type(value) in _IMMUTABLE for value in values):
        if len(_STEP_POOLS) >= 16:
            _STEP_POOLS.clear()
        _STEP_POOLS[key] = (last, hint, layout, values, array)
    return array


def encode_alone(view: Mapping[str, Any], config: CommonsConfig) -> np.ndarray:
    """`encode`'s vector read slot by slot (`encode_flat`), for a view whose step encodes no other fisher's (the
    single-agent view's learner): a step's pool pays for itself only when several vectors are gathered from it."""
    layout = _layout(config, view["fishers"])
    return vector_of(encode_flat(view, config), layout.low, layout.high)


def encode(view: Mapping[str, Any], config: CommonsConfig) -> np.ndarray:
    """A fisher's numeric observation: its view, slot by slot as `features(config)` says.

    The same vector as `teamenvs.core.rl.pack(features(config), encode_values(view, config))`, gathered from its
    step's pool (`_step_pool`) with its own slots written in.
    """
    layout = _layout(config, view["fishers"])
    agent = view["agent"]
    out = _step_pool(view, layout)[layout.gather[agent]]
    start = layout.start
    if view["last_action"].startswith(LAST_ACTION_REJECTED):
        out[start["last_action_rejected"]] = clipped(1.0, layout.scale[start["last_action_rejected"]])
    total = start["total_catch"]
    out[total] = clipped(view["your_total_catch"] / (view["months"] * view["capacity"]), layout.scale[total])
    size, k = layout.messages, len(MESSAGES)
    slot, table = layout.slots[agent], layout.lines[agent]
    new, recent = view["new_messages"], view["recent_messages"]
    if new:
        begin = start["new_messages"]
        set_flags(out, begin, message_slots(new, table, slot, k, size), clipped(1.0, layout.scale[begin]))
    if recent and view["phase"] == "discussion":
        begin = start["recent_messages"]
        set_flags(out, begin, message_slots(recent, table, slot, k, size), clipped(1.0, layout.scale[begin]))
    return out
