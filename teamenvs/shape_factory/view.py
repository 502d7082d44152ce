"""What a factory reads: its view of the market, the observation text rendered from it, events and
refusals in words, the omniscient state and frame, the briefing, and the numeric observation.

`agent_view` gathers what one agent may know: its own money, inventory, orders, production and
specialty, the offers addressed to it or made by it, the messages it received, and (under the
awareness dashboard only) every peer's money, production count, order progress and specialty.
`render` is a function of that view alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from teamenvs.core.env import LAST_ACTION_REJECTED, event
from teamenvs.core.messaging import Message
from teamenvs.core.rl import Feature, feature_bounds, one_hot
from teamenvs.core.view import footer
from teamenvs.shape_factory.config import ShapeFactoryConfig
from teamenvs.shape_factory.rules import (
    MONEY,
    Market,
    Offer,
    Outcome,
    Refusal,
    Terms,
    committed,
    shapes_of,
)


# ---------------------------------------------------------------------- goods in words
def goods_text(item: str, amount: int) -> str:
    """`$40`, `1 circle`, `2 circles`."""
    if item == MONEY:
        return f"${amount}"
    return f"{amount} {item}{'s' if amount != 1 else ''}"


def terms_text(terms: Terms) -> str:
    """An offer's terms as the command language writes them: `2 circles for $40`."""
    return f"{goods_text(*terms.give)} for {goods_text(*terms.get)}"


def fair_price_of(view: Mapping[str, Any]) -> int:
    """The price half way between a shape's specialty and regular cost (rounded up), within the allowed
    range: the scripted cooperators' and the discrete actions' price, $28 with CollabSim's costs."""
    costs = view["costs"]
    low, high = view["price_range"]
    middle = (costs["specialty"] + costs["regular"] + 1) // 2
    return min(max(middle, low), high)


# ---------------------------------------------------------------------- refusals and events in words
def _missing(d: Mapping[str, Any]) -> str:
    return ", ".join(goods_text(s, n) for s, n in d["missing"].items())


def _short_text(d: Mapping[str, Any]) -> str:
    item, locked = d["item"], d["held"] - d["have"]
    note = f" ({goods_text(item, locked)} more committed to your open offers)" if locked else ""
    return f"it needs {goods_text(item, d['amount'])} and you have {goods_text(item, d['have'])} free{note}"


REFUSALS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "max_production": lambda d: f"you have made the maximum of {d['limit']} shapes",
    "too_late": lambda d: f"a shape takes {d['steps']} steps and only {d['left']} remain: it would be ready only when the session is over",
    "cannot_afford": lambda d: f"a {d['shape']} costs you ${d['cost']} and you have ${d['have']} free",
    "self_offer": lambda d: "you cannot make an offer to yourself",
    "too_many_offers": lambda d: f"you already have {d['limit']} open offers (the most allowed); cancel one first",
    "short": _short_text,
    "no_own_offer": lambda d: f"you have no open offer {d['offer']}; your open offers: {', '.join(map(str, d['own'])) or 'none'}",
    "no_offer_to_you": lambda d: (
        f"there is no open offer {d['offer']} addressed to you; open offers to you: {', '.join(map(str, d['yours'])) or 'none'}"
    ),
    "no_order": lambda d: f"you have orders 1 to {d['orders']} only (got {d['order']})",
    "fulfilled": lambda d: f"order {d['order']} is already fulfilled",
    "missing_shapes": lambda d: f"order {d['order']} still needs {_missing(d)} (shapes committed to open offers do not count)",
}


def refusal_text(refusal: Refusal) -> str:
    return REFUSALS[refusal.code](refusal.data)


def terms_json(terms: Terms) -> dict[str, Any]:
    return {"give": list(terms.give), "get": list(terms.get)}


def events_of(outcome: Outcome) -> tuple[dict[str, dict[str, Any]], dict[str, Any] | None]:
    """(agent -> the event it reads, the log's event) of an outcome."""
    d, kind = outcome.data, outcome.kind
    if kind in ("offer", "trade", "declined", "cancelled"):
        proposer, recipient = outcome.agents
        terms, n = d["terms"], d["offer"]
        gives, gets = goods_text(*terms.give), goods_text(*terms.get)
        own = {
            "offer": (f"You offered {recipient} {gives} for {gets} (offer {n}).",
                      f"{proposer} offers you {gives} for {gets} (offer {n}): answer with 'accept offer {n}' or 'decline offer {n}'."),
            "trade": (f"{recipient} accepted your offer {n}: you gave {gives} and got {gets}.",
                      f"You accepted offer {n} from {proposer}: you got {gives} and gave {gets}."),
            "declined": (f"{recipient} declined your offer {n}; what you offered is free again.", f"You declined offer {n} from {proposer}."),
            "cancelled": (f"You withdrew your offer {n} to {recipient}.", f"{proposer} withdrew offer {n} ({gives} for {gets})."),
        }[kind]
        shown = {proposer: event(kind, own[0], offer=n), recipient: event(kind, own[1], offer=n)}
        return shown, event(kind, f"offer {n}: {proposer} -> {recipient}: {gives} for {gets}" + ("" if kind == "offer" else f" ({kind})"),
                            offer=n, proposer=proposer, recipient=recipient, **terms_json(terms))
    (agent,) = outcome.agents
    if kind == "too_late":
        text = f"Offer {d['offer']} was answered before your cancel arrived; the answer stands."
        return {agent: event(kind, text, offer=d["offer"])}, event(kind, f"{agent}'s cancel of offer {d['offer']} came too late",
                                                                    agent=agent, offer=d["offer"])
    if kind == "production_started":
        text = f"You started making a {d['shape']} (${d['cost']})."
        return {agent: event(kind, text, shape=d["shape"])}, event(kind, f"{agent} started making a {d['shape']} (${d['cost']})",
                                                                   agent=agent, shape=d["shape"], cost=d["cost"])
    if kind == "produced":
        return ({agent: event(kind, f"Your {d['shape']} is ready.", shape=d["shape"])},
                event(kind, f"{agent} made a {d['shape']}", agent=agent, shape=d["shape"]))
    if kind == "fulfilled":
        shapes = ", ".join(goods_text(s, n) for s, n in d["shapes"].items())
        return ({agent: event(kind, f"You fulfilled order {d['order']} ({shapes}) and earned ${d['incentive']}.", order=d["order"])},
                event(kind, f"{agent} fulfilled order {d['order']} ({shapes})", agent=agent, order=d["order"], incentive=d["incentive"]))
    return {}, None


def message_line(message: Message, viewer: str) -> str:
    """A message as `viewer` reads it, with the step it was sent at: "[step 12] agent_2: I make circles"."""
    return f"[step {message.step}] {message.render(viewer)}"


# ---------------------------------------------------------------------- the view
def offer_view(o: Offer) -> dict[str, Any]:
    return {"offer": o.id, "from": o.proposer, "to": o.recipient, "give": tuple(o.terms.give), "get": tuple(o.terms.get), "step": o.step}


def peer_view(m: Market, config: ShapeFactoryConfig, agent: str) -> dict[str, Any]:
    """What the awareness dashboard shows of one agent: money, production count, order progress, specialty."""
    orders = m.orders[agent]
    return {"money": m.money[agent], "produced": m.produced[agent], "specialty": m.specialty[agent],
            "orders_fulfilled": sum(o.fulfilled_at is not None for o in orders), "orders": len(orders)}


def agent_view(envelope: Mapping[str, Any], m: Market, config: ShapeFactoryConfig, agent: str, participants: Sequence[str],
               over: bool, messages: Mapping[str, tuple[str, ...]]) -> dict[str, Any]:
    """Everything `agent` may know now."""
    # one pass over the open offers: those to the agent, its own, and what its own commit (`committed`)
    to_you: list[dict[str, Any]] = []
    yours: list[dict[str, Any]] = []
    locked: dict[str, int] = {}
    for o in m.offers.values():
        if o.recipient == agent:
            to_you.append(offer_view(o))
        if o.proposer == agent:
            yours.append(offer_view(o))
            give = o.terms.give
            locked[give.item] = locked.get(give.item, 0) + give.amount
    inventory = m.inventory[agent]
    job = m.production[agent]
    step = envelope["step"]
    return {
        **envelope,
        "role": "factory",
        "over": over,
        "max_steps": config.max_steps,
        "steps_left": max(config.max_steps - step, 0),
        "participants": tuple(participants),
        "shapes": m.shapes,
        "specialty": m.specialty[agent],
        "costs": {"specialty": config.specialty_cost, "regular": config.regular_cost},
        "production_steps": config.production_steps,
        "incentive": config.incentive,
        "price_range": (config.min_price, config.max_price),
        "max_offer_shapes": config.max_offer_shapes,
        "max_open_offers": config.max_open_offers,
        "money": m.money[agent],
        "free_money": m.money[agent] - locked.get(MONEY, 0),
        "inventory": dict(inventory),
        "free_inventory": {s: inventory.get(s, 0) - locked.get(s, 0) for s in m.shapes},  # `free` of each shape
        "orders": tuple({"order": i, "shapes": dict(o.shapes), "fulfilled": o.fulfilled_at is not None}
                        for i, o in enumerate(m.orders[agent], start=1)),
        "producing": None if job is None else {"shape": job.shape, "steps_left": job.steps_left},
        "produced": m.produced[agent],
        "max_production": config.max_production,
        "offers_to_you": tuple(to_you),
        "your_offers": tuple(yours),
        "dashboard": {a: peer_view(m, config, a) for a in participants if a != agent} if config.awareness_dashboard else None,
        **messages,
    }


# ---------------------------------------------------------------------- the text
def _offer_line(o: Mapping[str, Any], reader: str) -> str:
    gives, gets = goods_text(*o["give"]), goods_text(*o["get"])
    if o["from"] == reader:
        return f"offer {o['offer']} to {o['to']}: you give {gives} for {gets}"
    return f"offer {o['offer']} from {o['from']}: you get {gives} and give {gets}"


@lru_cache(maxsize=1024)
def _goods_list(goods: tuple[tuple[str, int], ...]) -> str:
    """`1 circle, 2 squares` (an order's shapes never change: written once)."""
    return ", ".join(goods_text(s, n) for s, n in goods)


@lru_cache(maxsize=1024)
def _role_lines(others: tuple[str, ...], specialty: str, specialty_cost: int, regular_cost: int, production_steps: int) -> str:
    """The participants and specialty lines of an observation (fixed for an agent's episode: written once)."""
    return (f"Participants: {', '.join(others)}.\n"
            f"Your specialty: {specialty} (costs you ${specialty_cost} to make; other shapes ${regular_cost}; "
            f"a shape takes {production_steps} steps).")


def _order_line(order: Mapping[str, Any], spare: dict[str, int]) -> str:
    """An order and its status; `spare` is the free inventory not yet set aside for earlier orders (updated)."""
    shapes = _goods_list(tuple(order["shapes"].items()))
    if order["fulfilled"]:
        status = "fulfilled"
    elif all(spare.get(s, 0) >= n for s, n in order["shapes"].items()):
        status = "ready to fulfill"
        for s, n in order["shapes"].items():
            spare[s] -= n
    else:
        status = "open"
    return f"{order['order']}. {shapes} ({status})"


def render(view: Mapping[str, Any]) -> str:
    """The text observation of an agent's view."""
    agent = view["agent"]
    others = tuple(a for a in view["participants"] if a != agent)
    if view["over"]:
        head = f"Shape Factory is over after {view['step']} steps. You are {agent}."
    else:
        head = f"Shape Factory, step {view['step'] + 1} of {view['max_steps']} ({view['steps_left']} left). You are {agent}."
    costs = view["costs"]
    lines = [head, _role_lines(others, view["specialty"], costs["specialty"], costs["regular"], view["production_steps"])]
    locked = view["money"] - view["free_money"]
    money = f"Money: ${view['money']}" + (f" (${locked} committed to your open offers)" if locked else "") + "."
    money += f" Shapes made: {view['produced']} of at most {view['max_production']}."
    if view["producing"] is not None:
        job = view["producing"]
        money += f" Making a {job['shape']}: ready in {job['steps_left']} step{'s' if job['steps_left'] != 1 else ''}."
    lines.append(money)
    held = []
    for s in view["shapes"]:
        n, f = view["inventory"][s], view["free_inventory"][s]
        held.append(f"{s} {n}" + (f" ({n - f} committed)" if n != f else ""))
    lines.append("Inventory: " + ", ".join(held) + ".")
    spare = dict(view["free_inventory"])
    lines.append(f"Orders (${view['incentive']} each): " + "; ".join(_order_line(o, spare) for o in view["orders"]) + ".")
    to_you = view["offers_to_you"]
    lines.append("Offers to you: " + ("; ".join(_offer_line(o, agent) for o in to_you) if to_you else "none") + ".")
    yours = view["your_offers"]
    lines.append("Your open offers: " + ("; ".join(_offer_line(o, agent) for o in yours) if yours else "none") + ".")
    board = view["dashboard"]
    if board is not None:
        lines.append("Dashboard: " + "; ".join(
            f"{a}: {p['specialty']} specialist, ${p['money']}, made {p['produced']}, orders {p['orders_fulfilled']}/{p['orders']}"
            for a, p in board.items()) + ".")
    before = []
    if view["new_messages"]:
        before.append("New messages: " + " | ".join(view["new_messages"]))
    elif view["recent_messages"]:
        before.append("Recent messages: " + " | ".join(view["recent_messages"]))
    lines.extend(footer(view, before_last_action=before))
    return "\n".join(lines)


# ---------------------------------------------------------------------- the whole state, for people
def state_json(m: Market, config: ShapeFactoryConfig, step: int) -> dict[str, Any]:
    """The omniscient state, JSON-ready."""
    return {
        "step": step,
        "max_steps": config.max_steps,
        "shapes": list(m.shapes),
        "agents": {
            a: {
                "specialty": m.specialty[a],
                "money": m.money[a],
                "committed": committed(m, a),
                "inventory": dict(m.inventory[a]),
                "orders": [{"shapes": dict(o.shapes), "fulfilled_at": o.fulfilled_at} for o in m.orders[a]],
                "producing": None if m.production[a] is None else {"shape": m.production[a].shape, "steps_left": m.production[a].steps_left},
                "produced": m.produced[a],
                "earned": m.earned[a],
            }
            for a in m.money
        },
        "offers": [{"offer": o.id, "from": o.proposer, "to": o.recipient, **terms_json(o.terms), "step": o.step} for o in m.offers.values()],
    }


def frame_text(m: Market, config: ShapeFactoryConfig, step: int) -> str:
    """The ansi frame of the whole market: each agent's money, inventory, orders and production, then the open offers."""
    rows = [f"Shape Factory after {step} of {config.max_steps} steps"]
    for a in m.money:
        inv = " ".join(f"{s[:3]}:{m.inventory[a][s]}" for s in m.shapes)
        done = sum(o.fulfilled_at is not None for o in m.orders[a])
        job = m.production[a]
        making = f" making {job.shape} ({job.steps_left})" if job is not None else ""
        rows.append(f"  {a:<10} {m.specialty[a]:<9} ${m.money[a]:>5}  {inv}  orders {done}/{len(m.orders[a])}{making}")
    for o in m.offers.values():
        rows.append(f"  offer {o.id}: {o.proposer} -> {o.recipient}: {terms_text(o.terms)}")
    return "\n".join(rows)


def briefing(agent: str, config: ShapeFactoryConfig, m: Market | None, participants: Sequence[str]) -> str:
    """The role and rules part of an agent's briefing (after CollabSim Table 8)."""
    cfg = config
    talk = "You may message everyone ('say') or one participant ('tell')." if cfg.private_messages else (
        "You may message everyone ('say'); there are no private messages.")
    if not cfg.talking_allowed:
        talk = "There is no communication in this condition."
    elif cfg.min_steps_between_messages:
        talk += f" Bandwidth: at most one message every {cfg.min_steps_between_messages} steps."
    if cfg.max_words:
        talk += f" A message may hold at most {cfg.max_words} words (a longer one is not sent)."
    assignment = ""
    if m is not None:
        orders = "; ".join(f"{i}. " + ", ".join(goods_text(s, n) for s, n in o.shapes.items()) for i, o in enumerate(m.orders[agent], start=1))
        assignment = f" Your specialty shape: {m.specialty[agent]}. Your orders: {orders}."
    board = (" An awareness dashboard shows every participant's money, shapes made, order progress and specialty."
             if cfg.awareness_dashboard else "")
    return (
        f"You are {agent}, one of {cfg.n_agents} participants in the Shape Factory game "
        f"(participants: {', '.join(participants)}). The shapes are {', '.join(shapes_of(cfg))}. Each participant has a specialty "
        f"shape it makes for ${cfg.specialty_cost}; any other shape costs ${cfg.regular_cost}. Making a shape takes "
        f"{cfg.production_steps} steps, during which you do nothing else; you may make at most {cfg.max_production} shapes. "
        f"Orders contain {cfg.shape_amount_per_order} shape{'s' if cfg.shape_amount_per_order != 1 else ''} each and pay "
        f"${cfg.incentive} when fulfilled; orders never contain your own specialty, so get their shapes by making them or "
        f"by trading. An offer trades shapes for money, money for shapes or shapes for shapes, with "
        f"${cfg.min_price}-${cfg.max_price} a shape on its money side; what you offer is committed until the offer is answered or "
        f"cancelled, and an accepted offer is binding. Money and shapes can never go negative. You start with "
        f"${cfg.starting_money}; the session lasts {cfg.max_steps} steps.{assignment}{board} {talk} "
        "Your goal: maximize your money while completing your orders."
    )


# ---------------------------------------------------------------------- the numeric observation (RL)
def money_scale(config: ShapeFactoryConfig) -> float:
    """An agent's starting money plus all its incentives: money / this is at most n_agents."""
    return float(max(config.starting_money + config.orders_per_agent * config.incentive, 1))


def _offer_slot_size(config: ShapeFactoryConfig) -> int:
    return 1 + (config.n_agents - 1) + 2 * (config.n_shapes + 1) + 2


def features(config: ShapeFactoryConfig) -> tuple[Feature, ...]:
    """The feature table of an agent's numeric observation (its view only), for `config`."""
    n, s, o, k = config.n_agents, config.n_shapes, config.orders_per_agent, config.max_open_offers
    slot = _offer_slot_size(config)
    scale = money_scale(config)
    stock = max(config.max_production, 1)
    offer_doc = (f"{k} slots of {slot}: present; the other agent (one-hot over the others in id order); what the proposer gives "
                 f"(one-hot over the {s} shapes then money) and its amount (shapes / max_offer_shapes, money / (max_price x max_offer_shapes)); "
                 "what it gets, the same way")
    return (
        Feature("progress", doc="step / max_steps"),
        Feature("last_action_rejected", doc="1 if the agent's last action was rejected"),
        Feature("producing", s, doc="the shape being made, one-hot (all 0 when not making one)"),
        Feature("production_left", doc="steps until the shape being made is ready / production_steps"),
        Feature("specialty", s, doc="own specialty shape, one-hot"),
        Feature("money", high=float(n), doc=f"own money / {scale:g} (starting money + all incentives)"),
        Feature("free_money", high=float(n), doc=f"own money not committed to open offers / {scale:g}"),
        Feature("inventory", s, high=float(n), doc=f"own shapes held per shape / {stock} (max_production)"),
        Feature("free_inventory", s, high=float(n), doc=f"own shapes not committed to open offers, per shape / {stock}"),
        Feature("orders", o * (s + 1), doc="per order: shapes it needs per shape / shape_amount_per_order, then 1 if fulfilled"),
        Feature("orders_ready", o, doc="per order: 1 if open and the free inventory covers it"),
        Feature("produced", doc="shapes made / max_production"),
        Feature("offers_to_you", k * slot, high=1.0, doc="the oldest offers addressed to the agent: " + offer_doc),
        Feature("more_offers_to_you", doc="1 if more offers are addressed to the agent than the slots show"),
        Feature("your_offers", k * slot, doc="the agent's open offers, oldest first: " + offer_doc),
        Feature("dashboard_shown", doc="1 under the awareness dashboard"),
        Feature("dashboard", (n - 1) * (s + 3), high=float(n),
                doc=f"per other agent (id order): money / {scale:g}, shapes made / max_production, orders fulfilled / orders, "
                    "specialty one-hot; all 0 without the dashboard"),
        Feature("new_messages", n - 1, doc="per other agent: 1 if the agent reads a new message from it now"),
    )


def _offer_block(offers: Sequence[Mapping[str, Any]], reader: str, others: Sequence[str], shapes: Sequence[str],
                 config: ShapeFactoryConfig, k: int) -> list[float]:
    items = (*shapes, MONEY)
    out: list[float] = []
    for o in offers[:k]:
        other = o["to"] if o["from"] == reader else o["from"]
        out.append(1.0)
        out += one_hot(others.index(other), len(others))
        for item, amount in (o["give"], o["get"]):
            out += one_hot(items.index(item), len(items))
            out.append(amount / (config.max_price * config.max_offer_shapes if item == MONEY else config.max_offer_shapes))
    out += [0.0] * (k * _offer_slot_size(config) - len(out))
    return out


def encode_values(view: Mapping[str, Any], config: ShapeFactoryConfig) -> dict[str, Any]:
    """The value (or values) of each feature of `features(config)` for an agent's view."""
    agent, shapes = view["agent"], view["shapes"]
    others = [a for a in view["participants"] if a != agent]
    s, k = len(shapes), config.max_open_offers
    scale = money_scale(config)
    stock = max(config.max_production, 1)
    job = view["producing"]
    orders: list[float] = []
    ready: list[float] = []
    for order in view["orders"]:
        orders += [order["shapes"].get(x, 0) / config.shape_amount_per_order for x in shapes] + [float(order["fulfilled"])]
        ready.append(float(not order["fulfilled"] and all(view["free_inventory"][x] >= n for x, n in order["shapes"].items())))
    board = view["dashboard"]
    dash: list[float] = []
    for other in others:
        if board is None:
            dash += [0.0] * (s + 3)
            continue
        p = board[other]
        dash += [p["money"] / scale, p["produced"] / stock, p["orders_fulfilled"] / max(p["orders"], 1)]
        dash += one_hot(shapes.index(p["specialty"]), s)
    senders = {line.split("] ", 1)[-1].split(":", 1)[0].removesuffix(" (to you)") for line in view["new_messages"]}
    return {
        "progress": view["step"] / view["max_steps"],
        "last_action_rejected": float(view["last_action"].startswith(LAST_ACTION_REJECTED)),
        "producing": one_hot(shapes.index(job["shape"]) if job else None, s),
        "production_left": job["steps_left"] / view["production_steps"] if job else 0.0,
        "specialty": one_hot(shapes.index(view["specialty"]), s),
        "money": view["money"] / scale,
        "free_money": view["free_money"] / scale,
        "inventory": [view["inventory"][x] / stock for x in shapes],
        "free_inventory": [view["free_inventory"][x] / stock for x in shapes],
        "orders": orders,
        "orders_ready": ready,
        "produced": view["produced"] / stock,
        "offers_to_you": _offer_block(view["offers_to_you"], agent, others, shapes, config, k),
        "more_offers_to_you": float(len(view["offers_to_you"]) > k),
        "your_offers": _offer_block(view["your_offers"], agent, others, shapes, config, k),
        "dashboard_shown": float(board is not None),
        "dashboard": dash,
        "new_messages": [float(o in senders) for o in others],
    }


@dataclass(frozen=True)
class _Layout:
    """Per-config constants of the encoder: the feature table, its bounds and scales, where each feature starts."""

    table: tuple[Feature, ...]
    low: np.ndarray
    high: np.ndarray
    scale: float  # money_scale
    stock: int  # max(max_production, 1)
    size: int  # the slots of the whole vector
    at: Mapping[str, int]  # each feature's first slot (read only)


@lru_cache(maxsize=64)
def _layout(config: ShapeFactoryConfig) -> _Layout:
    table = features(config)
    at, size = {}, 0
    for f in table:
        at[f.name] = size
        size += f.size
    return _Layout(table, *feature_bounds(table), money_scale(config), max(config.max_production, 1), size, at)


_current: list[Any] = [None, None]  # (config, its layout) of the latest `encode`


def _layout_of(config: ShapeFactoryConfig) -> _Layout:
    """`_layout(config)`, the config hashed (all its fields) only when it is not the latest one's: one config per env."""
    if _current[0] is not config:
        _current[:] = (config, _layout(config))
    return _current[1]


@lru_cache(maxsize=64)
def _item_index(shapes: tuple[str, ...]) -> tuple[dict[str, int], dict[str, int]]:
    """Each shape's index, and each item's (the shapes, then money) in an offer's one-hot block (read only)."""
    where = {x: i for i, x in enumerate(shapes)}
    return where, {**where, MONEY: len(shapes)}


@lru_cache(maxsize=256)
def _others_index(participants: tuple[str, ...], agent: str) -> dict[str, int]:
    """Each other participant's index among the others, in id order (read only)."""
    return {a: i for i, a in enumerate(a for a in participants if a != agent)}


def _offer_slots(out: list[float], at: int, offers: Sequence[Mapping[str, Any]], reader: str, others: Mapping[str, int],
                 items: Mapping[str, int], config: ShapeFactoryConfig, k: int) -> None:
    """`_offer_block` written into `out` (zeros) from slot `at`: each slot's ones and amounts set."""
    n_others, n_items = len(others), len(items)
    for o in offers[:k]:
        out[at] = 1.0
        out[at + 1 + others[o["to"] if o["from"] == reader else o["from"]]] = 1.0
        at += 1 + n_others
        for item, amount in (o["give"], o["get"]):
            out[at + items[item]] = 1.0
            out[at + n_items] = amount / (config.max_price * config.max_offer_shapes if item == MONEY else config.max_offer_shapes)
            at += n_items + 1


def encode(view: Mapping[str, Any], config: ShapeFactoryConfig) -> np.ndarray:
    """An agent's numeric observation: its view, slot by slot as `features(config)` says, clipped to the scales
    (the same vector as `teamenvs.core.rl.pack(features(config), encode_values(view, config))`, built as one list
    of zeros in which only the slots that are not 0 are set, at the slots `_layout` gives each feature)."""
    lay = _layout_of(config)
    at = lay.at
    agent, shapes = view["agent"], view["shapes"]
    others = _others_index(tuple(view["participants"]), agent)
    s, k, scale, stock = len(shapes), config.max_open_offers, lay.scale, lay.stock
    where, items = _item_index(tuple(shapes))
    out = [0.0] * lay.size
    out[at["progress"]] = view["step"] / view["max_steps"]
    if view["last_action"].startswith(LAST_ACTION_REJECTED):
        out[at["last_action_rejected"]] = 1.0
    job = view["producing"]
    if job:
        out[at["producing"] + where[job["shape"]]] = 1.0
        out[at["production_left"]] = job["steps_left"] / view["production_steps"]
    out[at["specialty"] + where[view["specialty"]]] = 1.0
    first = at["money"]
    out[first] = view["money"] / scale
    out[first + 1] = view["free_money"] / scale
    inventory, free_inventory = view["inventory"], view["free_inventory"]
    first = at["inventory"]
    out[first:first + s] = [inventory[x] / stock for x in shapes]
    first = at["free_inventory"]
    out[first:first + s] = [free_inventory[x] / stock for x in shapes]
    amount = config.shape_amount_per_order
    first, ready = at["orders"], at["orders_ready"]
    for order in view["orders"]:
        needs = order["shapes"]
        for x, n in needs.items():
            out[first + where[x]] = n / amount
        if order["fulfilled"]:
            out[first + s] = 1.0
        else:
            for x, n in needs.items():
                if free_inventory[x] < n:
                    break
            else:
                out[ready] = 1.0
        first += s + 1
        ready += 1
    out[at["produced"]] = view["produced"] / stock
    to_you = view["offers_to_you"]
    _offer_slots(out, at["offers_to_you"], to_you, agent, others, items, config, k)
    if len(to_you) > k:
        out[at["more_offers_to_you"]] = 1.0
    _offer_slots(out, at["your_offers"], view["your_offers"], agent, others, items, config, k)
    board = view["dashboard"]
    if board is not None:
        out[at["dashboard_shown"]] = 1.0
        first = at["dashboard"]
        for other in others:
            p = board[other]
            out[first:first + 3] = p["money"] / scale, p["produced"] / stock, p["orders_fulfilled"] / max(p["orders"], 1)
            out[first + 3 + where[p["specialty"]]] = 1.0
            first += s + 3
    if view["new_messages"]:
        senders = {line.split("] ", 1)[-1].split(":", 1)[0].removesuffix(" (to you)") for line in view["new_messages"]}
        first = at["new_messages"]
        for other, i in others.items():
            if other in senders:
                out[first + i] = 1.0
    vector = np.fromiter(out, np.float32, lay.size)  # (the same floats as np.array(out, np.float32), converted faster)
    return np.minimum(np.maximum(vector, lay.low, out=vector), lay.high, out=vector)
