"""Shape Factory's rules (CollabSim App. B.1; after Bos et al. 2004): the market's state and its
transitions, as pure functions over a `Market`.

Each agent has a specialty shape it makes cheaply; its orders never contain that shape, so it
must make other shapes at the regular cost or trade for them. What an agent holds is its
money and its inventory; what it has promised in open offers is *committed* and cannot be
spent, made into an order or promised again, so an accepted offer always settles and nothing
ever goes negative. Refusals are returned as `Refusal(code, data)`; `view.refusal_text` words them.

Within a step every action is checked against the state at the start of the step. Answers to
offers (accept, decline) settle first, then everything else; a cancel of an offer answered in
the same step comes too late and changes nothing. No other action of one agent can take away
what another's action needs (only an offer's recipient may answer it, and only what is not
committed can be spent), so an action valid at the start of a step is carried out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from teamenvs.shape_factory.config import SHAPES, ShapeFactoryConfig

MONEY = "$"  # the item of the money side of an offer

PRODUCE = "produce"
OFFER = "offer"
ACCEPT = "accept offer"
DECLINE = "decline offer"
CANCEL = "cancel offer"
FULFILL = "fulfill order"
WAIT = "wait"
ANSWERS = (ACCEPT, DECLINE)


class Goods(NamedTuple):
    """One side of an offer: `amount` of `item` (a shape, or `MONEY` for dollars)."""

    item: str
    amount: int


class Terms(NamedTuple):
    """What an offer's proposer gives, and what it gets in return."""

    give: Goods
    get: Goods


@dataclass
class Offer:
    id: int
    proposer: str
    recipient: str
    terms: Terms
    step: int  # the step it was made at


@dataclass
class Order:
    shapes: dict[str, int]  # shape -> how many the order needs
    fulfilled_at: int | None = None


@dataclass
class Production:
    shape: str
    steps_left: int


class Refusal(NamedTuple):
    """Why the rules refuse an action: a code and the data `view.refusal_text` words it with."""

    code: str
    data: Mapping[str, Any]


def refuse(code: str, **data: Any) -> Refusal:
    return Refusal(code, data)


@dataclass
class Market:
    """The whole state of a session."""

    shapes: tuple[str, ...]
    specialty: dict[str, str]
    money: dict[str, int]  # held, committed money included
    inventory: dict[str, dict[str, int]]  # held, committed shapes included
    orders: dict[str, list[Order]]
    produced: dict[str, int] = field(default_factory=dict)  # shapes started, for max_production
    production: dict[str, Production | None] = field(default_factory=dict)
    offers: dict[int, Offer] = field(default_factory=dict)  # open offers by id
    made: dict[tuple[str, str], int] = field(default_factory=dict)  # (proposer, recipient) -> offers made so far
    earned: dict[str, int] = field(default_factory=dict)  # incentives received


# ---------------------------------------------------------------------- setup
def shapes_of(config: ShapeFactoryConfig) -> tuple[str, ...]:
    return SHAPES[: config.n_shapes]


def assign_specialties(agents: Sequence[str], shapes: Sequence[str], rng: np.random.Generator) -> dict[str, str]:
    """Shapes dealt round-robin over the agents in a seeded order: each shape to `n_agents // n_shapes`
    agents (two in every CollabSim condition), one more for the first shapes when it does not divide."""
    order = [agents[i] for i in rng.permutation(len(agents))]
    return {a: shapes[i % len(shapes)] for i, a in enumerate(order)}


def draw_orders(specialty: str, shapes: Sequence[str], config: ShapeFactoryConfig, rng: np.random.Generator) -> list[Order]:
    """An agent's orders: each `shape_amount_per_order` shapes drawn uniformly from the shapes other than its specialty."""
    others = [s for s in shapes if s != specialty]
    orders = []
    for _ in range(config.orders_per_agent):
        picks = rng.integers(len(others), size=config.shape_amount_per_order)
        needed: dict[str, int] = {}
        for i in sorted(int(p) for p in picks):
            needed[others[i]] = needed.get(others[i], 0) + 1
        orders.append(Order(needed))
    return orders


def new_market(agents: Sequence[str], config: ShapeFactoryConfig, rng: np.random.Generator) -> Market:
    shapes = shapes_of(config)
    specialty = assign_specialties(agents, shapes, rng)
    return Market(
        shapes=shapes,
        specialty=specialty,
        money={a: config.starting_money for a in agents},
        inventory={a: {s: 0 for s in shapes} for a in agents},
        orders={a: draw_orders(specialty[a], shapes, config, rng) for a in agents},
        produced={a: 0 for a in agents},
        production={a: None for a in agents},
        earned={a: 0 for a in agents},
    )


# ---------------------------------------------------------------------- what an agent has
def cost(m: Market, config: ShapeFactoryConfig, agent: str, shape: str) -> int:
    return config.specialty_cost if m.specialty[agent] == shape else config.regular_cost


def committed(m: Market, agent: str) -> dict[str, int]:
    """Item -> amount `agent` has promised in its open offers (MONEY for dollars)."""
    out: dict[str, int] = {}
    for o in m.offers.values():
        if o.proposer == agent:
            out[o.terms.give.item] = out.get(o.terms.give.item, 0) + o.terms.give.amount
    return out


def free(m: Market, agent: str, item: str) -> int:
    """How much of `item` (a shape or MONEY) `agent` holds and has not committed."""
    held = m.money[agent] if item == MONEY else m.inventory[agent].get(item, 0)
    # less `committed(m, agent).get(item, 0)`, this item only, in a plain loop (no dict, no generator: the rules and
    # masks ask often)
    for o in m.offers.values():
        if o.proposer == agent:
            give = o.terms.give
            if give.item == item:
                held -= give.amount
    return held


def open_orders(m: Market, agent: str) -> list[int]:
    """Numbers (1-based) of `agent`'s orders not yet fulfilled."""
    return [i for i, o in enumerate(m.orders[agent], start=1) if o.fulfilled_at is None]


def all_fulfilled(m: Market) -> bool:
    return all(o.fulfilled_at is not None for orders in m.orders.values() for o in orders)


def offers_to(m: Market, agent: str) -> list[Offer]:
    return [o for o in m.offers.values() if o.recipient == agent]


def new_offer_id(m: Market, proposer: str, recipient: str) -> int:
    """The id of `proposer`'s next offer to `recipient`: numbered per pair of participants, n * (n * k + i) + j + 1 for
    its k-th offer (from 0) from the i-th to the j-th of the n participants. Unique in the session, and it says nothing
    the two do not know: one counter for the whole market told everyone how many offers the others had made, the
    private ones between two others included."""
    agents = tuple(m.money)  # the session's participants, in order
    n, k = len(agents), m.made.get((proposer, recipient), 0)
    m.made[(proposer, recipient)] = k + 1
    return n * (n * k + agents.index(proposer)) + agents.index(recipient) + 1


def max_offer_id(config: ShapeFactoryConfig) -> int:
    """The largest id an offer can get (`new_offer_id`): each participant makes at most one offer a step."""
    return config.n_agents * config.n_agents * config.max_steps


def offers_by(m: Market, agent: str) -> list[Offer]:
    return [o for o in m.offers.values() if o.proposer == agent]


def offer_ids(m: Market, agent: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Ids of the open offers addressed to `agent` and of those it made, oldest first (one pass over the offers)."""
    to_you: list[int] = []
    yours: list[int] = []
    for o in m.offers.values():
        if o.recipient == agent:
            to_you.append(o.id)
        if o.proposer == agent:
            yours.append(o.id)
    return tuple(to_you), tuple(yours)


# ---------------------------------------------------------------------- checks
def offer_id(command: str, args: Mapping[str, Any]) -> int:
    """The offer an answer (`offer`) or a cancel (`your_offer`) is about."""
    return args["your_offer"] if command == CANCEL else args["offer"]


def _short(m: Market, agent: str, goods: Goods) -> Refusal | None:
    have = free(m, agent, goods.item)
    if have < goods.amount:
        return refuse("short", item=goods.item, amount=goods.amount, have=have, held=(
            m.money[agent] if goods.item == MONEY else m.inventory[agent].get(goods.item, 0)))
    return None


def check(m: Market, config: ShapeFactoryConfig, agent: str, command: str, args: Mapping[str, Any], step: int) -> Refusal | None:
    """Why the rules refuse `agent`'s well-formed `command` at `step` (None: they carry it out).

    The env's `_apply` and its action-mask check (`_refusal`) both ask this one function.
    """
    if command == PRODUCE:
        shape = args["shape"]
        if m.produced[agent] >= config.max_production:
            return refuse("max_production", limit=config.max_production)
        if step + config.production_steps >= config.max_steps:  # it would be ready only once the session is over
            return refuse("too_late", steps=config.production_steps, left=config.max_steps - step)
        price = cost(m, config, agent, shape)
        if free(m, agent, MONEY) < price:
            return refuse("cannot_afford", shape=shape, cost=price, have=free(m, agent, MONEY))
        return None
    if command == OFFER:
        terms: Terms = args["terms"]
        if args["recipient"] == agent:
            return refuse("self_offer")
        if len(offers_by(m, agent)) >= config.max_open_offers:
            return refuse("too_many_offers", limit=config.max_open_offers)
        return _short(m, agent, terms.give)
    if command in (ACCEPT, DECLINE, CANCEL):
        offer = m.offers.get(offer_id(command, args))
        if command == CANCEL:
            if offer is None or offer.proposer != agent:
                return refuse("no_own_offer", offer=args["your_offer"], own=tuple(o.id for o in offers_by(m, agent)))
            return None
        if offer is None or offer.recipient != agent:
            return refuse("no_offer_to_you", offer=args["offer"], yours=tuple(o.id for o in offers_to(m, agent)))
        return _short(m, agent, offer.terms.get) if command == ACCEPT else None
    if command == FULFILL:
        number = args["order"]
        orders = m.orders[agent]
        if not 1 <= number <= len(orders):
            return refuse("no_order", order=number, orders=len(orders))
        order = orders[number - 1]
        if order.fulfilled_at is not None:
            return refuse("fulfilled", order=number)
        missing = {s: n - free(m, agent, s) for s, n in order.shapes.items() if free(m, agent, s) < n}
        if missing:
            return refuse("missing_shapes", order=number, missing=missing)
        return None
    return None


# ---------------------------------------------------------------------- transitions
class Outcome(NamedTuple):
    """Something that happened: its kind, the agents it concerns, and its data."""

    kind: str
    agents: tuple[str, ...]
    data: Mapping[str, Any]


def _move(m: Market, giver: str, taker: str, goods: Goods) -> None:
    if goods.item == MONEY:
        m.money[giver] -= goods.amount
        m.money[taker] += goods.amount
    else:
        m.inventory[giver][goods.item] -= goods.amount
        m.inventory[taker][goods.item] += goods.amount


def act(m: Market, config: ShapeFactoryConfig, agent: str, command: str, args: Mapping[str, Any], step: int) -> Outcome | None:
    """Carry out one checked action (`check` returned None for it); the outcome, if any."""
    if command == PRODUCE:
        shape = args["shape"]
        price = cost(m, config, agent, shape)
        m.money[agent] -= price
        m.produced[agent] += 1
        m.production[agent] = Production(shape, config.production_steps)
        return Outcome("production_started", (agent,), {"shape": shape, "cost": price})
    if command == OFFER:
        offer = Offer(new_offer_id(m, agent, args["recipient"]), agent, args["recipient"], args["terms"], step)
        m.offers[offer.id] = offer
        return Outcome("offer", (agent, offer.recipient), {"offer": offer.id, "terms": offer.terms})
    if command in (ACCEPT, DECLINE, CANCEL):
        offer = m.offers.pop(offer_id(command, args))
        if command == ACCEPT:
            _move(m, offer.proposer, offer.recipient, offer.terms.give)
            _move(m, offer.recipient, offer.proposer, offer.terms.get)
        kind = {ACCEPT: "trade", DECLINE: "declined", CANCEL: "cancelled"}[command]
        return Outcome(kind, (offer.proposer, offer.recipient), {"offer": offer.id, "terms": offer.terms})
    if command == FULFILL:
        number = args["order"]
        order = m.orders[agent][number - 1]
        for shape, n in order.shapes.items():
            m.inventory[agent][shape] -= n
        order.fulfilled_at = step
        m.money[agent] += config.incentive
        m.earned[agent] += config.incentive
        return Outcome("fulfilled", (agent,), {"order": number, "shapes": dict(order.shapes), "incentive": config.incentive})
    return None


def settle(m: Market, config: ShapeFactoryConfig, actions: Mapping[str, tuple[str, Mapping[str, Any]]], step: int,
           order: Sequence[str]) -> tuple[list[Outcome], dict[str, Refusal]]:
    """One step: every agent's (command, args), checked against the state at the start of the step;
    answers to offers first, then the other actions in `order`; then production advances.

    Returns the outcomes and, per agent, the refusal of its action (if refused). A cancel of an
    offer answered this step is carried out as `too_late` (it was valid when chosen).
    """
    refusals = {a: r for a in order if a in actions and (r := check(m, config, a, *actions[a], step)) is not None}
    outcomes: list[Outcome] = []
    answered: set[int] = set()
    ready = [a for a in order if a in actions and a not in refusals]
    for agent in ready:
        command, args = actions[agent]
        if command in ANSWERS:
            answered.add(offer_id(command, args))
            outcomes.append(act(m, config, agent, command, args, step))
    for agent in ready:
        command, args = actions[agent]
        if command in ANSWERS:
            continue
        if command == CANCEL and offer_id(command, args) in answered:
            outcomes.append(Outcome("too_late", (agent,), {"offer": offer_id(command, args)}))
            continue
        outcome = act(m, config, agent, command, args, step)
        if outcome is not None:
            outcomes.append(outcome)
    outcomes.extend(advance(m, order))
    return outcomes, refusals


def advance(m: Market, order: Sequence[str]) -> list[Outcome]:
    """One step of every production under way; finished shapes join their maker's inventory."""
    out = []
    for agent in order:
        job = m.production[agent]
        if job is None:
            continue
        job.steps_left -= 1
        if job.steps_left <= 0:
            m.inventory[agent][job.shape] += 1
            m.production[agent] = None
            out.append(Outcome("produced", (agent,), {"shape": job.shape}))
    return out


def busy(m: Market, agent: str) -> bool:
    """Whether `agent` is making a shape (and so is not asked to act)."""
    return m.production[agent] is not None
