"""What a trader reads: its view of the market, the observation text rendered from it, the
round's events, the ansi frame of the whole game, and the briefing."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from functools import lru_cache
from operator import itemgetter
from typing import Any, Mapping, NamedTuple

import numpy as np

from teamenvs.core.env import LAST_ACTION_REJECTED, event
from teamenvs.core.rl import Feature, clipped, feature_bounds, one_hot, pool_scale, set_flags, unpack_flat, vector_of
from teamenvs.core.rounds import Phase, discussion_briefing, message_slots, message_tables
from teamenvs.core.view import SharedFacts, footer
from teamenvs.day_trader.config import DayTraderConfig
from teamenvs.day_trader.rules import DECISION, WAIT, Choice, Money, RoundOutcome, as_float, money_json, pool_shares


def dollars(value: float) -> str:
    """Money as traders read it: `$1,234.50`."""
    # the same amounts come back round after round, and formatting one costs about three cache lookups; zero is not
    # cached, since the cache holds 0.0 and -0.0 (`$-0.00`) as one key
    return _dollars(value) if value else f"${value:,.2f}"


@lru_cache(maxsize=4096)
def _dollars(value: float) -> str:
    return f"${value:,.2f}"


def multiplied(factor: int) -> str:
    """`doubled`, `tripled`, ... or `multiplied by 7`: what the rules do to an amount."""
    return {2: "doubled", 3: "tripled", 4: "quadrupled"}.get(factor, f"multiplied by {factor}")


def pool_split_text(config: DayTraderConfig) -> str:
    """How the multiplied pool is shared out, in the traders' words."""
    shares = pool_shares(config)
    if shares == config.n_agents:
        return f"split equally among all {config.n_agents} traders, whether they invested or not"
    part = {2: "half", 3: "third", 4: "quarter"}.get(shares, f"1/{shares}")
    per_dollar = Fraction(config.group_multiplier, shares)
    return (
        f"every one of the {config.n_agents} traders, whether they invested or not, gets a {part} of it "
        f"(each pooled dollar pays every trader {dollars(float(per_dollar))})"
    )


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


def shared_public(traders: tuple[str, ...], last_round: Mapping[str, Any] | None, money: Mapping[str, float],
                  show_balances: bool) -> SharedFacts:
    """The public part of every trader's view: the traders, the last round's results and (under `show_balances`)
    everyone's balances, built once per step and held by every view of the step as one read-only object
    (`SharedFacts`), so no trader's policy can change what another reads."""
    shared_round = None
    if last_round is not None:
        shared_round = SharedFacts({**last_round, "choices": SharedFacts(last_round["choices"]), "bonus": SharedFacts(last_round["bonus"])})
    return SharedFacts(traders=traders, last_round=shared_round, balances=SharedFacts(money) if show_balances else None)


def trader_view(
    envelope: Mapping[str, Any],
    config: DayTraderConfig,
    phase: Phase,
    over: bool,
    max_steps: int,
    money: float,
    top: int,
    public: SharedFacts,
    messages: Mapping[str, tuple[str, ...]],
) -> dict[str, Any]:
    """Everything one trader may know now: its money and what it may invest, and the public part (`shared_public`:
    the results of the last round, everyone's balances under `show_balances`) and its messages."""
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
        "money": money,
        "can_invest": (config.min_investment, top) if top >= config.min_investment else None,
        "public": public,
        **messages,
    }


def public_copy(public: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a view's public part that shares no mutable object with it (its values are numbers,
    strings and tuples below these dicts): what `copy.deepcopy` gives, at a tenth of the cost."""
    balances = public["balances"]
    return {**public, "last_round": fresh_last_round(public["last_round"]), "balances": None if balances is None else dict(balances)}


# ---------------------------------------------------------------------- the text
def public_text(public: Mapping[str, Any], group_multiplier: int) -> str:
    """The lines every trader reads alike: the last round's results and the balances."""
    lines = []
    last = public["last_round"]
    if last is not None:
        choices = "; ".join(f"{a}: {c}" for a, c in last["choices"].items())
        pool = last["pool"]
        line = (
            f"Round {last['round']} results: group pool ${pool} ({multiplied(group_multiplier)}: ${pool * group_multiplier}, "
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
def result_event(round_no: int, choice: Choice, earned: Money, bonus: int) -> dict[str, Any]:
    """A trader's own result of the round: its choice, earnings and any bonus."""
    return event(
        "round_result",
        f"Round {round_no}: you chose {choice_text(choice)}; you earned "
        f"{dollars(as_float(earned))}" + (f" plus a ${bonus} top-earner bonus" if bonus else "") + ".",
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
    step: int, max_steps: int, phase: Phase, balances: Mapping[str, Money], last_choices: Mapping[str, Choice] | None
) -> str:
    """The ansi frame of the whole game: each trader's money and last choice."""
    rows = [f"DayTrader step {step}/{max_steps} | round {phase.round} | {phase.kind}"]
    for a, money in balances.items():
        last = last_choices[a] if last_choices else None
        rows.append(f"  {a:<10} {dollars(float(money)):>12}  last: {choice_text(last) if last else '-'}")
    return "\n".join(rows)


# `discussion_briefing`'s words for the two message commands, and DayTrader's when `tell` is off
PRIVATE_CLAUSE = "('say' reaches everyone, 'tell' one person)"
BROADCAST_CLAUSE = "(with 'say': every message reaches everyone; there are no private messages)"


def briefing(agent: str, config: DayTraderConfig) -> str:
    """The role and rules part of a trader's briefing."""
    cfg = config
    talk = discussion_briefing(cfg, cfg.discussion_every, cfg.discussion_turns, "round", "traders", cfg.discussion_after_last)
    if not cfg.private_messages:
        talk = talk.replace(PRIVATE_CLAUSE, BROADCAST_CLAUSE)
    return (
        f"You are {agent}, one of {cfg.n_agents} traders in DayTrader, a repeated investment game of "
        f"{cfg.rounds} rounds. Everyone starts with ${cfg.starting_money}. In each round's decision phase you "
        f"make at most one investment of ${cfg.min_investment}-${cfg.max_investment} (and no more than you have), "
        f"or wait. An individual investment comes back to you multiplied by {cfg.individual_multiplier}. "
        f"All group investments of the round are pooled, the pool is multiplied by {cfg.group_multiplier} and "
        f"{pool_split_text(cfg)}. From round "
        f"{cfg.bonus_from_round} on, the trader(s) with the highest earnings in the round get a ${cfg.bonus} bonus "
        f"(split equally, rounded down, between tied traders); a round's earnings are what you got back that round "
        f"(your individual return and your pool share) minus what you invested. {talk}"
        " Your goal: maximize your own money at the end of the game."
    )


# ---------------------------------------------------------------------- the numeric observation (RL)
# The canned messages of the discrete action catalogue (`commands.catalogue`), as the view shows
# them; the encoder recognises them in the messages a trader reads.
MESSAGES = (
    "I will invest in the group",
    "let us all invest in the group",
    "I will invest individually",
)
_KINDS = {"none": 0, WAIT: 1, "individual": 2, "group": 3}  # a trader's last choice, one-hot


def max_pool_share(config: DayTraderConfig) -> Fraction:
    """The largest pool share: every trader pooling the maximum investment."""
    return Fraction(config.n_agents * config.max_investment * config.group_multiplier, pool_shares(config))


def money_scale(config: DayTraderConfig) -> float:
    """The most money a trader can have: the start plus, each round, the most one can earn
    (the largest pool share, the individual gain on the largest investment, the bonus)."""
    per_round = max_pool_share(config) + config.max_investment * max(config.individual_multiplier - 1, 0) + config.bonus
    return float(max(config.starting_money + config.rounds * per_round, 1))


def features(config: DayTraderConfig) -> tuple[Feature, ...]:
    """The feature table of a trader's numeric observation (its view only), for `config`."""
    n, k = config.n_agents, len(MESSAGES)
    scale = money_scale(config)
    gain_high = float(max_pool_share(config) / config.max_investment + max(config.individual_multiplier - 1, 0))
    return (
        Feature("phase", 3, doc="one-hot: decision, discussion, over"),
        Feature("round", doc="the round (of the decision, or the discussion after it) / rounds"),
        Feature("discussion_turn", doc="discussion turn / discussion turns (0 outside discussions)"),
        Feature("last_action_rejected", doc="1 if the agent's last action was rejected"),
        Feature("money", doc=f"own money / {scale:g} (the most a trader can have)"),
        Feature("money_log", doc=f"log(1 + own money) / log(1 + {scale:g})"),
        Feature("can_invest", doc="1 if the trader can afford an investment now (decision phase)"),
        Feature("invest_max", doc="the largest investment allowed now / max_investment (0 if none)"),
        Feature("own_last_choice", 4, doc="own choice last round, one-hot: no round yet, wait, individual, group"),
        Feature("own_last_amount", doc="own investment last round / max_investment"),
        Feature("own_last_earnings", low=-1.0, high=gain_high,
                doc="own earnings last round (pool share + individual gain - group investment, bonus excluded) / max_investment"),
        Feature("own_last_bonus", doc="own top-earner bonus last round / bonus"),
        Feature("others_last_choice", 4 * (n - 1),
                doc="each other trader's choice last round (others in id order), one-hot of 4 as for own_last_choice"),
        Feature("others_last_amount", n - 1, doc="each other trader's investment last round / max_investment"),
        Feature("others_last_bonus", n - 1, doc="each other trader's bonus last round / bonus"),
        Feature("others_group_fraction", doc="fraction of the other traders who invested in the group last round"),
        Feature("last_pool", doc="last round's group pool / (n_agents * max_investment)"),
        Feature("last_pool_share",
                doc="last round's pool share per trader / the largest (n_agents * max_investment * group_multiplier / pool shares)"),
        Feature("balances_shown", doc="1 if everyone's balances are shown (show_balances)"),
        Feature("others_money_log", n - 1, doc=f"each other trader's log(1 + money) / log(1 + {scale:g}) (0 when balances are hidden)"),
        Feature("new_messages", (n - 1) * (k + 1),
                doc=f"per other trader, which messages it sent that this trader reads now: the {k} canned messages, then any other text"),
        Feature("recent_messages", (n - 1) * (k + 1),
                doc="the same for the recent conversation (shown in discussion phases only; 0 otherwise)"),
    )


class _Layout(NamedTuple):
    features: tuple[Feature, ...]
    names: tuple[str, ...]  # the features' names, in table order
    ends: tuple[int, ...]  # where each feature's slots end in the vector
    low: np.ndarray  # the features' bounds, slot by slot
    high: np.ndarray
    money_scale: float
    log_scale: float  # log(1 + money_scale)
    share_scale: float  # the largest pool share (0.0: no pool pays anything)
    others: dict[str, tuple[str, ...]]  # agent -> the other traders in id order
    slots: dict[str, dict[str, int]]  # agent -> other trader -> its index among the others
    lines: dict[str, dict[str, tuple[int, int]]]  # agent -> message line -> (other index, message index)
    no_round: list[float]  # own_last_choice to last_pool_share before the first round is settled
    messages: int  # slots of one message block: (n - 1) * (len(MESSAGES) + 1)
    gather: dict[str, np.ndarray]  # agent -> for each slot of its vector, the entry of a `_step_pool` it reads
    pool_low: np.ndarray  # the scale of each entry of a step pool: that of the slots that read it
    pool_high: np.ndarray
    start: dict[str, int]  # where each feature's slots begin
    scale: list[tuple[float, float]]  # each slot's scale, as Python floats (see `teamenvs.core.rl.clipped`)


_LAYOUTS: dict[int, tuple[DayTraderConfig, tuple[str, ...], _Layout]] = {}


def _layout(config: DayTraderConfig, traders: tuple[str, ...]) -> _Layout:
    """The per-config tables of the encoder (built once per config and trader list)."""
    cached = _LAYOUTS.get(id(config))
    if cached is not None and cached[0] is config and cached[1] == traders:
        return cached[2]
    others, slots, lines = message_tables(traders, MESSAGES)
    table = features(config)
    low, high = feature_bounds(table)
    ends = tuple(itertools.accumulate(f.size for f in table))
    scale = money_scale(config)
    n1 = len(traders) - 1
    no_round = [1.0, 0.0, 0.0, 0.0] + [0.0] * (3 + 4 * n1 + 2 * n1 + 3)  # "no round yet", then zeros
    start = dict(zip((f.name for f in table), itertools.accumulate((f.size for f in table), initial=0)))
    gather = {agent: _gather(start, len(low), traders, agent) for agent in traders}
    layout = _Layout(table, tuple(f.name for f in table), ends, low, high, scale, math.log1p(scale),
                     float(max_pool_share(config)), others, slots, lines, no_round, n1 * (len(MESSAGES) + 1),
                     gather, *pool_scale(gather, low, high), start, list(zip(low.tolist(), high.tolist())))
    if len(_LAYOUTS) > 64:
        _LAYOUTS.clear()
    _LAYOUTS[id(config)] = (config, traders, layout)
    return layout


@lru_cache(maxsize=4096)
def _choice(text: str) -> tuple[int, int]:
    """(kind index, amount) of a choice as the view spells it (`group 50`, `individual 30`, `wait`)."""
    kind, _, amount = text.partition(" ")
    return _KINDS[kind], int(amount) if amount else 0


def _round_slots(last: Mapping[str, Any], agent: str, others: tuple[str, ...], n: int, config: DayTraderConfig,
                 share_scale: float) -> list[float]:
    """own_last_choice to last_pool_share: own and others' choices, amounts and bonuses, own earnings,
    the others' group fraction, the pool and the pool share of the last round (`n` traders)."""
    top_inv, top_bonus = config.max_investment, config.bonus
    choices, bonus = last["choices"], last["bonus"]
    share = last["pool_share"]
    kind, amount = _choice(choices[agent])
    gain = share + (config.individual_multiplier - 1) * amount if kind == 2 else share - amount if kind == 3 else share
    flat = one_hot(kind, 4)
    flat += [amount / top_inv, gain / top_inv, bonus.get(agent, 0) / top_bonus if top_bonus else 0.0]
    kinds = [0.0] * (4 * len(others))
    amounts = []
    groups = 0
    for i, o in enumerate(others):
        kind, amount = _choice(choices[o])
        kinds[4 * i + kind] = 1.0
        amounts.append(amount / top_inv)
        groups += kind == 3
    flat += kinds
    flat += amounts
    flat += [bonus.get(o, 0) / top_bonus for o in others] if top_bonus and bonus else [0.0] * len(others)
    flat += [groups / len(others), last["pool"] / (n * top_inv), share / share_scale if share_scale else 0.0]
    return flat


def encode_flat(view: Mapping[str, Any], config: DayTraderConfig) -> list[float]:
    """The values of `features(config)` for a trader's view, slot by slot, in one flat list (before clipping)."""
    public = view["public"]
    agent = view["agent"]
    traders = public["traders"]
    layout = _layout(config, traders)
    others = layout.others[agent]
    phase = view["phase"]
    deciding = phase == DECISION
    discussing = phase == "discussion"
    can = view["can_invest"] if deciding else None
    last = public["last_round"]
    balances = public["balances"]
    log_scale = layout.log_scale
    flat = [
        float(deciding), float(discussing), float(phase == "over"),
        view["round"] / view["rounds"],
        view["discussion_turn"] / view["discussion_turns"] if discussing else 0.0,
        float(view["last_action"].startswith(LAST_ACTION_REJECTED)),
        view["money"] / layout.money_scale,
        math.log1p(view["money"]) / log_scale,
        float(can is not None),
        can[1] / config.max_investment if can is not None else 0.0,
    ]
    if last is None:
        flat += layout.no_round
    else:
        flat += _round_slots(last, agent, others, len(traders), config, layout.share_scale)
    flat.append(float(balances is not None))
    flat += [math.log1p(balances[o]) / log_scale for o in others] if balances is not None else [0.0] * len(others)
    size, k = layout.messages, len(MESSAGES)
    slot, table = layout.slots[agent], layout.lines[agent]
    new, recent = view["new_messages"], view["recent_messages"]
    flat += message_slots(new, table, slot, k, size) if new else [0.0] * size
    flat += message_slots(recent, table, slot, k, size) if discussing and recent else [0.0] * size
    return flat


def encode_values(view: Mapping[str, Any], config: DayTraderConfig) -> dict[str, Any]:
    """The value (or values) of each feature of `features(config)` for a trader's view."""
    return unpack_flat(_layout(config, view["public"]["traders"]).features, encode_flat(view, config))


# ---------------------------------------------------------------------- the vector, gathered
# `encode_flat` reads a view slot by slot, each trader's vector going over every trader's results of the last round;
# `encode` gives the same vector from what the views of a step share. A step pool (`_step_pool`, one float32 array per
# step) holds the slots every trader of the step reads alike (`_POOL_HEAD`) and, per trader in id order, its last
# round's results as its own slots and as another trader's read them (`_TRADER`), each clipped to the scale of the
# slots that read it, and a 0 first; a trader's vector picks them in its order in one step (`_Layout.gather`), and its
# own slots (its last action, money and what it may invest, the messages it reads) are then written in, each within
# its scale, so the vector needs no clip. Per step: the pool once (Python work over the n traders), then one numpy
# gather a trader, where each vector used to go over every trader in Python.
_POOL_HEAD = ("phase", "phase+1", "phase+2", "round", "discussion_turn", "balances_shown", "last_pool", "last_pool_share")
# a trader's entries in a pool: its choice as its own (one-hot of 4, "no round yet" before the first), as another's
# (one-hot of 4, all 0 before the first), its amount, earnings and bonus, the others' group fraction as it reads it,
# and log(1 + its money) as the others read it
_TRADER = ("own_choice", 4), ("other_choice", 4), ("amount", 1), ("earnings", 1), ("bonus", 1), ("group_fraction", 1), \
    ("money_log", 1)
_AT_TRADER = dict(zip((name for name, _ in _TRADER), itertools.accumulate((size for _, size in _TRADER), initial=0)))
_TRADER_SIZE = sum(size for _, size in _TRADER)
_NO_ROUND_TRADER = [1.0, 0.0, 0.0, 0.0] + [0.0] * (_TRADER_SIZE - 5)  # before the first round, but money_log


def _gather(start: Mapping[str, int], size: int, traders: tuple[str, ...], agent: str) -> np.ndarray:
    """For each slot of `agent`'s vector, the entry of a step pool it reads (0: the pool's 0, for the slots the trader
    writes itself)."""
    at = [0] * size
    head = {name: 1 + i for i, name in enumerate(_POOL_HEAD)}
    phase = start["phase"]
    for k in range(3):
        at[phase + k] = head[f"phase+{k}" if k else "phase"]
    for name in ("round", "discussion_turn", "balances_shown", "last_pool", "last_pool_share"):
        at[start[name]] = head[name]

    def entry(trader: str, name: str) -> int:
        return 1 + len(_POOL_HEAD) + traders.index(trader) * _TRADER_SIZE + _AT_TRADER[name]

    at[start["own_last_choice"]:start["own_last_choice"] + 4] = range(entry(agent, "own_choice"), entry(agent, "own_choice") + 4)
    at[start["own_last_amount"]] = entry(agent, "amount")
    at[start["own_last_earnings"]] = entry(agent, "earnings")
    at[start["own_last_bonus"]] = entry(agent, "bonus")
    at[start["others_group_fraction"]] = entry(agent, "group_fraction")
    others = [o for o in traders if o != agent]
    for i, o in enumerate(others):
        choice = start["others_last_choice"] + 4 * i
        at[choice:choice + 4] = range(entry(o, "other_choice"), entry(o, "other_choice") + 4)
        at[start["others_last_amount"] + i] = entry(o, "amount")
        at[start["others_last_bonus"] + i] = entry(o, "bonus")
        at[start["others_money_log"] + i] = entry(o, "money_log")
    return np.array(at, dtype=np.intp)


# (id of the public part, id of the layout) -> (those objects, the view's STEP_FIELDS values, their pool)
_STEP_POOLS: dict[tuple[int, int], tuple[Any, _Layout, tuple, np.ndarray]] = {}
# the fields of a view that a step pool is read from, besides its public part
STEP_FIELDS = ("phase", "round", "rounds", "discussion_turn", "discussion_turns")
_step_fields = itemgetter(*STEP_FIELDS)


def _read_only(public: Mapping[str, Any]) -> bool:
    """Whether a view's public part is `shared_public`'s, which cannot change, so that its object says what it holds."""
    if type(public) is not SharedFacts or type(public["traders"]) is not tuple:
        return False
    last, balances = public["last_round"], public["balances"]
    return ((last is None or (type(last) is SharedFacts and type(last["choices"]) is SharedFacts and type(last["bonus"]) is SharedFacts))
            and (balances is None or type(balances) is SharedFacts))


def _step_pool(view: Mapping[str, Any], public: Mapping[str, Any], layout: _Layout, config: DayTraderConfig) -> np.ndarray:
    """The pool the vectors of `view`'s step are gathered from (read-only), worked out for the step's first trader and
    found again for the others: by the identity of the read-only public part every view of the step holds
    (`shared_public`, once per step) and by its values of STEP_FIELDS, which the entry holds (so its id is not reused)."""
    values = _step_fields(view)
    key = (id(public), id(layout))
    hit = _STEP_POOLS.get(key)
    if hit is not None and hit[0] is public and hit[1] is layout and hit[2] == values:
        return hit[3]
    phase, round_no, rounds, turn, turns = values
    discussing = phase == "discussion"
    traders, last, balances = public["traders"], public["last_round"], public["balances"]
    log_scale = layout.log_scale
    pool = [
        0.0,
        float(phase == DECISION), float(discussing), float(phase == "over"),
        round_no / rounds,
        turn / turns if discussing else 0.0,
        float(balances is not None),
    ]
    if last is None:
        pool += [0.0, 0.0]
        for t in traders:
            pool += _NO_ROUND_TRADER
            pool.append(math.log1p(balances[t]) / log_scale if balances is not None else 0.0)
    else:
        top_inv, top_bonus = config.max_investment, config.bonus
        choices, bonus, share = last["choices"], last["bonus"], last["pool_share"]
        share_scale = layout.share_scale
        pool += [last["pool"] / (len(traders) * top_inv), share / share_scale if share_scale else 0.0]
        read = [_choice(choices[t]) for t in traders]
        groups = sum(kind == 3 for kind, _ in read)
        n1 = len(traders) - 1
        multiplier = config.individual_multiplier - 1
        for t, (kind, amount) in zip(traders, read):
            gain = share + multiplier * amount if kind == 2 else share - amount if kind == 3 else share
            hot = one_hot(kind, 4)
            pool += hot
            pool += hot
            pool += [amount / top_inv, gain / top_inv, bonus.get(t, 0) / top_bonus if top_bonus else 0.0,
                     (groups - (kind == 3)) / n1,
                     math.log1p(balances[t]) / log_scale if balances is not None else 0.0]
    array = np.array(pool, dtype=np.float32)
    np.minimum(np.maximum(array, layout.pool_low, out=array), layout.pool_high, out=array)
    array.flags.writeable = False
    if _read_only(public) and all(type(value) in (int, str) for value in values):
        if len(_STEP_POOLS) >= 16:
            _STEP_POOLS.clear()
        _STEP_POOLS[key] = (public, layout, values, array)
    return array


def encode_alone(view: Mapping[str, Any], config: DayTraderConfig) -> np.ndarray:
    """`encode`'s vector read slot by slot (`encode_flat`), for a view whose step encodes no other trader's (the
    single-agent view's learner): a step's pool pays for itself only when several vectors are gathered from it."""
    layout = _layout(config, view["public"]["traders"])
    return vector_of(encode_flat(view, config), layout.low, layout.high)


def encode(view: Mapping[str, Any], config: DayTraderConfig) -> np.ndarray:
    """A trader's numeric observation: its view, slot by slot as `features(config)` says.

    The same vector as `teamenvs.core.rl.pack(features(config), encode_values(view, config))`, gathered from its
    step's pool (`_step_pool`) with its own slots written in.
    """
    public = view["public"]
    layout = _layout(config, public["traders"])
    agent = view["agent"]
    out = _step_pool(view, public, layout, config)[layout.gather[agent]]
    start, scale = layout.start, layout.scale
    if view["last_action"].startswith(LAST_ACTION_REJECTED):
        out[start["last_action_rejected"]] = clipped(1.0, scale[start["last_action_rejected"]])
    money = view["money"]
    slot = start["money"]
    (low, high), (log_low, log_high) = scale[slot], scale[slot + 1]  # (`clipped`, inline: every view writes them)
    out[slot] = min(max(money / layout.money_scale, low), high)
    out[slot + 1] = min(max(math.log1p(money) / layout.log_scale, log_low), log_high)
    phase = view["phase"]
    can = view["can_invest"] if phase == DECISION else None
    if can is not None:
        slot = start["can_invest"]
        out[slot] = clipped(1.0, scale[slot])
        out[slot + 1] = clipped(can[1] / config.max_investment, scale[slot + 1])
    size, k = layout.messages, len(MESSAGES)
    slots, table = layout.slots[agent], layout.lines[agent]
    new, recent = view["new_messages"], view["recent_messages"]
    if new:
        begin = start["new_messages"]
        set_flags(out, begin, message_slots(new, table, slots, k, size), clipped(1.0, scale[begin]))
    if recent and phase == "discussion":
        begin = start["recent_messages"]
        set_flags(out, begin, message_slots(recent, table, slots, k, size), clipped(1.0, scale[begin]))
    return out
