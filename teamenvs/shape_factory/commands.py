"""Shape Factory's commands (CollabSim App. B.1's actions in the suite's command language), what an
agent may do now, and the discrete action catalogue.

`produce <shape>` (produce_shape), `offer <agent> <goods> for <goods>` (propose_trade_offer),
`accept offer <n>` / `decline offer <n>` (trade_response), `cancel offer <n>`
(cancel_trade_offer), `fulfill order <n>` (fulfill_order), `wait` (do_nothing), `say` / `tell`
(message). Goods are `<count> <shape>` or `$<price>`: `offer agent_2 2 circles for $40`,
`offer agent_4 $30 for 1 square`, `offer agent_3 1 circle for 1 triangle`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping, NamedTuple, Sequence

from teamenvs.core.commands import (
    Arg, ArgError, ChoiceArg, Command, CommandSet, IntArg, NameArg, Situation, number_as_written, number_goes_on,
)
from teamenvs.core.messaging import SAY, TELL
from teamenvs.core.rl import NOOP
from teamenvs.core.text import quote
from teamenvs.shape_factory.config import ShapeFactoryConfig
from teamenvs.shape_factory.rules import (
    ACCEPT, CANCEL, DECLINE, FULFILL, MONEY, OFFER, PRODUCE, WAIT, Goods, Terms, max_offer_id, shapes_of,
)
from teamenvs.shape_factory.view import fair_price_of, goods_text, terms_text

# One item of an offer: `$40`, `40 dollars`, `2 circles`. One optional whitespace run, at the start
# (after a non-space, so a search never restarts inside a run): linear time on any input.
_ITEM = re.compile(r"(?<!\s)\s*(?:\$\s?(\d{1,7})|(\d{1,7})\s?(?:dollars?\b|bucks?\b|\$)|(\d{1,7})\s?([A-Za-z]{1,20}))")
_FOR = re.compile(r"(?<!\s)\s*for\b", re.IGNORECASE)
_AND = re.compile(r"(?<!\s)\s*(?:(?P<comma>,)|\+|&|/|(?:and|plus|or)\b)", re.IGNORECASE)  # more goods after one kind
_WHOLE = re.compile(r"\.0+")  # "$40.00": whole dollars


@lru_cache(maxsize=64)
def _shape_words(shapes: tuple[str, ...]) -> dict[str, str]:
    """Each way to write a shape in an offer (`circle`, `circles`) -> the shape (read only: shared)."""
    return {**{s: s for s in shapes}, **{s + "s": s for s in shapes}}


@dataclass(frozen=True)
class TermsArg(Arg):
    """What an offer gives and what it asks in return: `<goods> for <goods>`, goods being
    `<count> <shape>` (1 to `max_shapes`) or `$<price>`; one side at most is money, at `min_price` to
    `max_price` a shape (CollabSim B.1's "min/max trade price = 15/100", a price per unit in its released
    code: `$45 for 2 circles` is $22.50 a circle), and a barter names two different shapes."""

    shapes: tuple[str, ...] = ()
    max_shapes: int = 5
    min_price: int = 15
    max_price: int = 100

    def _words(self) -> dict[str, str]:
        return _shape_words(self.shapes)

    def _goods(self, text: str, command: Command, side: str) -> tuple[Goods, str]:
        m = _ITEM.match(text)
        if m is None:
            raise ArgError(f"'{command.name}' needs {side}: '<count> <shape>' or '$<price>', e.g. '{command.examples[0]}'")
        money = m.group(1) or m.group(2)
        end = m.end()
        if m.group(1) is not None:
            zeros = _WHOLE.match(text, end)
            if zeros is not None and not number_goes_on(text[zeros.end():]):
                end = zeros.end()  # "$40.00"
            elif number_goes_on(text[end:]):  # "$20.99", "$25k", "$100,000"
                raise ArgError(f"the money of an offer is whole dollars in digits alone "
                               f"(got {quote(number_as_written('$' + m.group(1), text[end:end + 40]), 24)})")
        if money is not None:
            amount = int(money)
            if not self.min_price <= amount <= self.max_price * self.max_shapes:  # (per shape: `parse` checks it)
                raise ArgError(f"the money of an offer must be ${self.min_price} to ${self.max_price} a shape (got ${amount})")
            return Goods(MONEY, amount), text[end:]
        count, word = int(m.group(3)), m.group(4).lower()
        shape = self._words().get(word)
        if shape is None:
            raise ArgError(f"unknown shape '{word[:20]}' in {side}; shapes: {', '.join(self.shapes)} (or '$<price>' for money)")
        if not 1 <= count <= self.max_shapes:
            raise ArgError(f"an offer gives or asks 1 to {self.max_shapes} shapes of a kind (got {count})")
        return Goods(shape, count), text[m.end():]

    def parse(self, rest, situation, command):
        give, rest = self._goods(rest, command, "what you give")
        joint = _FOR.match(rest)
        if joint is None:
            raise ArgError(f"an offer reads '<what you give> for <what you get>', e.g. '{command.examples[0]}'")
        get, rest = self._goods(rest[joint.end():], command, "what you get")
        more = _AND.match(rest)
        extra = _ITEM.match(rest, more.end()) if more is not None else None
        if (extra is not None and (extra.group(1) or extra.group(2) or extra.group(4).lower() in self._words())
                and not (more.group("comma") and rest[extra.end():].strip(" .!?;:"))):
            # more goods ("2 squares and $50", "$40 or $50", "$40, 1 square"; not prose after the offer, "..., deal?",
            # "$40, $20 each"): read as the first kind alone, the rest of the price would be dropped without a word
            raise ArgError(f"an offer asks for one kind of goods, and more follow {goods_text(get.item, get.amount)} "
                           f"({quote(rest[:extra.end()].strip(), 24)}): one shape, or money, a side")
        if give.item == MONEY and get.item == MONEY:
            raise ArgError("an offer trades shapes for money, money for shapes or shapes for shapes, not money for money")
        if give.item == get.item:
            raise ArgError(f"an offer cannot give and ask for the same shape ({give.item})")
        money, shapes = (give, get) if give.item == MONEY else (get, give) if get.item == MONEY else (None, None)
        if money is not None and not shapes.amount * self.min_price <= money.amount <= shapes.amount * self.max_price:
            each = f"${money.amount / shapes.amount:.2f}".replace(".00", "")
            raise ArgError(f"the price of a shape must be ${self.min_price} to ${self.max_price}: {terms_text(Terms(give, get))} "
                           f"is {each} a {shapes.item} (for {goods_text(shapes.item, shapes.amount)}: ${shapes.amount * self.min_price} to "
                           f"${shapes.amount * self.max_price})")
        return Terms(give, get), rest

    def format(self, value) -> str:
        return terms_text(value)

    def usage(self, situation=None):
        return "<count> <shape>|$<price> for <count> <shape>|$<price>"

    def example(self, situation=None):
        return f"1 {self.shapes[0]} for ${self.min_price}" if self.shapes else f"${self.min_price}"

    def sample(self, rng, situation):
        shapes = self.shapes
        kind = int(rng.integers(3 if len(shapes) > 1 else 2))
        price_each = int(rng.integers(self.min_price, self.max_price + 1))
        first = Goods(shapes[int(rng.integers(len(shapes)))], int(rng.integers(1, self.max_shapes + 1)))
        price = Goods(MONEY, price_each * first.amount)
        if kind == 0:
            return terms_text(Terms(first, price))
        if kind == 1:
            return terms_text(Terms(price, first))
        other = [s for s in shapes if s != first.item]
        return terms_text(Terms(first, Goods(other[int(rng.integers(len(other)))], int(rng.integers(1, self.max_shapes + 1)))))

    def spec(self, situation=None):
        return {"name": self.name, "kind": "terms", "shapes": list(self.shapes), "max_shapes": self.max_shapes,
                "min_price": self.min_price, "max_price": self.max_price}

    exact = True

    def grammar(self, situation):
        from teamenvs.core.constrain import Alt, Lit, Seq, int_range, one_of

        count = int_range(1, self.max_shapes)

        def shape(s: str, n=None):
            return Seq((count if n is None else Lit(str(n)), Lit(" "), one_of((s, s + "s"))))

        def money(n: int):  # the money for n shapes
            return Seq((Lit("$"), int_range(n * self.min_price, n * self.max_price)))

        options = []
        for s in self.shapes:
            for n in range(1, self.max_shapes + 1):
                options.append(Seq((shape(s, n), Lit(" for "), money(n))))
                options.append(Seq((money(n), Lit(" for "), shape(s, n))))
            options += [Seq((shape(s), Lit(" for "), shape(t))) for t in self.shapes if t != s]
        return Alt(tuple(options))

    def accepted_grammar(self, situation, accepts):
        """The terms the rules accept now. The rules read an offer's terms for what it gives only (`rules.check`:
        the proposer must have it free; what it asks is not checked), so each giving side (a count of a shape,
        or an amount of money) is tried once with a fixed asking side, and an accepted one is admitted with
        every asking side that parses."""
        from teamenvs.core.constrain import Alt, Lit, Seq, int_range, one_of

        options = []
        for s in self.shapes:
            for n in range(1, self.max_shapes + 1):
                if accepts(f"{n} {s} for ${n * self.min_price}"):
                    bartered = (Seq((int_range(1, self.max_shapes), Lit(" "), one_of((t, t + "s")))) for t in self.shapes if t != s)
                    asked = Alt((Seq((Lit("$"), int_range(n * self.min_price, n * self.max_price))), *bartered))
                    options.append(Seq((Lit(str(n)), Lit(" "), one_of((s, s + "s")), Lit(" for "), asked)))
        if self.shapes:
            # the rules read the money given, not which shapes it buys: an amount is accepted when the proposer has it
            # free, so the accepted amounts run from the least up to the largest one, found by bisection (about 9
            # tries, where trying each of the up to 486 amounts made a constraint 15 times slower), and `n` shapes are
            # bought for any of them from n x min_price to n x max_price
            def offered(price: int) -> bool:
                return accepts(f"${price} for {-(-price // self.max_price)} {self.shapes[0]}")

            low, high = self.min_price, self.max_price * self.max_shapes
            if offered(low):
                while low < high:
                    middle = (low + high + 1) // 2
                    low, high = (middle, high) if offered(middle) else (low, middle - 1)
                for n in range(1, self.max_shapes + 1):
                    if n * self.min_price <= low:
                        asked = Seq((Lit(str(n)), Lit(" "), Alt(tuple(one_of((t, t + "s")) for t in self.shapes))))
                        money = int_range(n * self.min_price, min(n * self.max_price, low))
                        options.append(Seq((Lit("$"), money, Lit(" for "), asked)))
        if not options:
            return None
        return options[0] if len(options) == 1 else Alt(tuple(options))


@lru_cache(maxsize=64)
def commands_for(config: ShapeFactoryConfig) -> CommandSet:
    """The command set under `config`: its shapes, order numbers and price range."""
    shapes = shapes_of(config)
    a, b = shapes[0], shapes[1]
    offers = max_offer_id(config)
    terms = TermsArg("terms", shapes, config.max_offer_shapes, config.min_price, config.max_price)
    return CommandSet(
        [
            Command(PRODUCE, (ChoiceArg("shape", shapes),),
                    f"make one shape (your specialty costs ${config.specialty_cost}, any other ${config.regular_cost}); "
                    f"you are busy for {config.production_steps} steps", (f"produce {a}",)),
            Command(OFFER, (NameArg("recipient", "agent"), terms),
                    "propose a trade to one participant: what you give (committed until answered or cancelled) for what you get",
                    (f"offer agent_2 1 {a} for ${config.min_price}", f"offer agent_2 ${config.min_price} for 1 {b}",
                     f"offer agent_2 1 {a} for 1 {b}")),
            Command(ACCEPT, (IntArg("offer", 1, offers, 1),), "accept an offer made to you (binding: the goods change hands now)",
                    ("accept offer 1",)),
            Command(DECLINE, (IntArg("offer", 1, offers, 1),), "decline an offer made to you", ("decline offer 1",)),
            Command(CANCEL, (IntArg("your_offer", 1, offers, 1),), "withdraw one of your open offers", ("cancel offer 1",)),
            Command(FULFILL, (IntArg("order", 1, config.orders_per_agent, 1),),
                    f"deliver the shapes of one of your orders and earn ${config.incentive}", ("fulfill order 1",)),
            Command(WAIT, (), "do nothing this step", ("wait",)),
            SAY,
            TELL,
        ]
    )


COMMANDS = commands_for(ShapeFactoryConfig())  # the default (BASELINE) config's commands


class Options(NamedTuple):
    """What decides an agent's situation (equal options, equal situations: the env's situation key). A named tuple,
    made and hashed for every agent that acts, every step, faster than a frozen dataclass."""

    others: tuple[str, ...]
    produce: str | None  # why `produce` is denied now (None: allowed)
    offer: str | None
    answer: str | None
    cancel: str | None
    fulfill: str | None
    to_you: tuple[int, ...]  # ids of the open offers addressed to the agent
    yours: tuple[int, ...]  # ids of its open offers


def situation(config: ShapeFactoryConfig, options: Options) -> Situation:
    """What an agent may do now."""
    denied: dict[str, str] = {}
    for name, reason in ((PRODUCE, options.produce), (OFFER, options.offer), (ACCEPT, options.answer), (DECLINE, options.answer),
                         (CANCEL, options.cancel), (FULFILL, options.fulfill)):
        if reason is not None:
            denied[name] = reason
    if not config.talking_allowed:
        denied["say"] = denied["tell"] = "communication is off in this condition"
    elif not config.private_messages:
        denied["tell"] = "there are no private messages in this condition: every message reaches everyone (use 'say')"
    limits, reasons, choices = {}, {}, {}
    # offers are numbered per pair of participants (`rules.new_offer_id`), so the open ones are far apart: listed
    if options.to_you:
        limits["offer"] = (min(options.to_you), max(options.to_you))
        reasons["offer"] = "open offers to you: " + ", ".join(map(str, options.to_you))
        choices["offer"] = tuple(sorted(options.to_you))
    if options.yours:
        limits["your_offer"] = (min(options.yours), max(options.yours))
        reasons["your_offer"] = "your open offers: " + ", ".join(map(str, options.yours))
        choices["your_offer"] = tuple(sorted(options.yours))
    return Situation(denied, limits, {"agent": options.others}, reasons, choices)


def briefing_situation(config: ShapeFactoryConfig, others: tuple[str, ...]) -> Situation:
    """The situation the briefing lists commands for: `tell` only with private messages, none without communication."""
    denied = {}
    if not config.talking_allowed:
        denied = {"say": "no communication", "tell": "no communication"}
    elif not config.private_messages:
        denied = {"tell": "no private messages"}
    return Situation(denied, names={"agent": others})


# ---------------------------------------------------------------------- the discrete action catalogue (RL)
# Offer slots are the view's offers oldest first; "other k" is the k-th other agent in id order;
# trades are of one shape at the fair price (half way between the two costs, $28 by default): selling
# one's specialty, or buying the first shape the open orders still need that no open offer asks for.
OFFER_SLOTS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
               "11th", "12th", "13th", "14th", "15th", "16th", "17th", "18th", "19th", "20th")
MESSAGES = ("say my specialty", "say what I need")


def catalogue(config: ShapeFactoryConfig) -> tuple[str, ...]:
    """The discrete action labels under `config` (the same for every agent; index 0 the no-op)."""
    shapes = shapes_of(config)
    others = range(1, config.n_agents)
    slots = OFFER_SLOTS[: config.max_open_offers]
    return (
        NOOP,
        *(f"produce {s}" for s in shapes),
        *(f"fulfill order {k}" for k in range(1, config.orders_per_agent + 1)),
        *(f"accept the {j} offer to me" for j in slots),
        *(f"decline the {j} offer to me" for j in slots),
        *(f"cancel my {j} offer" for j in slots),
        *(f"sell 1 of my specialty to other {k}" for k in others),
        *(f"buy a needed shape from other {k}" for k in others),
        *MESSAGES,
    )


def needed_shapes(view: Mapping[str, Any]) -> list[str]:
    """Shapes the agent's open orders still need beyond its free inventory, one entry per shape."""
    need: dict[str, int] = {}
    for order in view["orders"]:
        if not order["fulfilled"]:
            for s, n in order["shapes"].items():
                need[s] = need.get(s, 0) + n
    free = view["free_inventory"]
    needed: list[str] = []
    for s in view["shapes"]:
        short = need.get(s, 0) - free[s]
        if short > 0:
            needed += [s] * short
    return needed


def mask_key(view: Mapping[str, Any]) -> tuple:
    """What `command_for` and the rules' checks read from a view beyond the situation (its offers and
    denials): equal keys give the same commands and the same mask (see `TeamEnv._mask_key`)."""
    late = view["step"] + view["production_steps"] >= view["max_steps"]
    return late, view["free_money"], tuple(view["free_inventory"].values()), tuple(o["fulfilled"] for o in view["orders"]), view["produced"]


def to_buy(view: Mapping[str, Any]) -> str | None:
    """The first shape the open orders still need (beyond the free inventory) that no open offer of the agent asks for."""
    return _first_unasked(needed_shapes(view), view["your_offers"])


def _first_unasked(needed: list[str], yours: Sequence[Mapping[str, Any]]) -> str | None:
    """`to_buy` from the needed shapes (`needed_shapes`) and the agent's open offers."""
    asked = [o["get"][0] for o in yours]
    for shape in needed:
        if shape in asked:
            asked.remove(shape)
        else:
            return shape
    return None


@lru_cache(maxsize=1024)
def _label_parts(label: str) -> tuple[str, Any]:
    """A catalogue label read once: its first word and what follows it (a shape, an order or offer slot
    index, an other agent's index), or the label itself and None for the messages."""
    words = label.split()
    head = words[0]
    if head == "produce":
        return head, words[1]
    if head == "fulfill":
        return head, int(words[2]) - 1
    if head in ("accept", "decline", "cancel"):
        return head, OFFER_SLOTS.index(words[2])
    if head in ("sell", "buy"):
        return head, int(words[-1]) - 1
    return label, None


@lru_cache(maxsize=256)
def _others(participants: tuple[str, ...], agent: str) -> tuple[str, ...]:
    return tuple(a for a in participants if a != agent)


def command_for(view: Mapping[str, Any], label: str) -> str | None:
    """The command `label` stands for in this view, or None when it is impossible now (the cheap checks
    here spare parsing; the mask also asks the rules, `TeamEnv.accepts`)."""
    if label == NOOP:
        return WAIT
    head, arg = _label_parts(label)
    if head in ("accept", "decline", "cancel"):
        offers = view["your_offers"] if head == "cancel" else view["offers_to_you"]
        return f"{head} offer {offers[arg]['offer']}" if arg < len(offers) else None
    if head == "produce":
        # refused by the rules for every shape (`rules.check`: max_production, too_late): no command to parse
        if view["produced"] >= view["max_production"] or view["step"] + view["production_steps"] >= view["max_steps"]:
            return None
        cost = view["costs"]["specialty" if arg == view["specialty"] else "regular"]
        return label if view["free_money"] >= cost else None
    if head == "fulfill":
        order = view["orders"][arg]
        ready = not order["fulfilled"] and all(view["free_inventory"][s] >= n for s, n in order["shapes"].items())
        return label if ready else None
    if head in ("sell", "buy") and len(view["your_offers"]) >= view["max_open_offers"]:
        return None  # refused by the rules for every offer (`rules.check`: too_many_offers)
    price = fair_price_of(view)
    if head == "sell":
        if not view["free_inventory"][view["specialty"]]:
            return None
        return f"offer {_others(tuple(view['participants']), view['agent'])[arg]} {goods_text(view['specialty'], 1)} for ${price}"
    if head == "buy":
        shape = to_buy(view)
        if shape is None or view["free_money"] < price:
            return None
        return f"offer {_others(tuple(view['participants']), view['agent'])[arg]} ${price} for {goods_text(shape, 1)}"
    if label == "say my specialty":
        return f"say I make {view['specialty']}s cheaply: ${price} each"
    if label == "say what I need":
        needed = sorted(set(needed_shapes(view)))
        return f"say I need {' and '.join(needed)}" if needed else None
    return None


@lru_cache(maxsize=64)
def _catalogue_index(labels: tuple[str, ...]) -> dict[str, Any]:
    """Where each kind of label sits in a catalogue: per shape its produce index and label, per order its index and
    label (these labels are their commands), per offer slot (accept, decline, cancel) and per other agent (sell, buy)
    the indices, the messages' indices."""
    at = {label: i for i, label in enumerate(labels)}
    slots = [j for j in OFFER_SLOTS if f"accept the {j} offer to me" in at]
    others = range(1, sum(1 for label in labels if label.startswith("sell ")) + 1)
    orders = range(1, sum(1 for label in labels if label.startswith("fulfill ")) + 1)
    where = {
        "noop": at[NOOP],
        "produce": {label.split()[1]: (i, label) for label, i in at.items() if label.startswith("produce ")},
        "fulfill": [(at[label], label) for label in (f"fulfill order {k}" for k in orders)],
        "accept": [at[f"accept the {j} offer to me"] for j in slots],
        "decline": [at[f"decline the {j} offer to me"] for j in slots],
        "cancel": [at[f"cancel my {j} offer"] for j in slots],
        "sell": [at[f"sell 1 of my specialty to other {k}"] for k in others],
        "buy": [at[f"buy a needed shape from other {k}"] for k in others],
        "messages": [at[m] for m in MESSAGES],
    }
    # whether `candidates`, which lists the kinds in this order, lists them in index order (a `catalogue` does)
    listed = [where["noop"], *(i for i, _ in where["produce"].values()), *(i for i, _ in where["fulfill"]),
              *where["accept"], *where["decline"], *where["cancel"], *where["sell"], *where["buy"], *where["messages"]]
    where["in_order"] = listed == sorted(listed)
    return where


_latest_index: list[Any] = [None, None]  # (labels, their index) of the latest `candidates`


def _index_of(labels: tuple[str, ...]) -> dict[str, Any]:
    """`_catalogue_index(labels)`, the labels hashed (all of them) only when they are not the latest ones: one
    catalogue per env."""
    if _latest_index[0] is not labels:
        _latest_index[:] = (labels, _catalogue_index(labels))
    return _latest_index[1]


@lru_cache(maxsize=4096)
def _answers(offer: int) -> tuple[str, str, str]:
    """The accept, decline and cancel commands of one offer (written once per offer number)."""
    return f"{ACCEPT} {offer}", f"{DECLINE} {offer}", f"{CANCEL} {offer}"


@lru_cache(maxsize=1024)
def _offers_to_each(others: tuple[str, ...], item: str, price: int, selling: bool) -> tuple[str, ...]:
    """The `offer` command to each other agent in turn of one `item` for `price` (`selling`), or of `price` for one
    `item`: the sell and buy labels' commands, written once per agent, shape and price."""
    goods, money = goods_text(item, 1), goods_text(MONEY, price)
    give, get = (goods, money) if selling else (money, goods)
    return tuple(f"offer {other} {give} for {get}" for other in others)


@lru_cache(maxsize=1024)
def _says(specialty: str, price: int, needed: tuple[str, ...]) -> tuple[str, str | None]:
    """The commands of the two message labels: the specialty and its price, and the needed shapes (`needed_shapes`:
    each named once, in alphabetical order, as `command_for` says them; None: none)."""
    named = sorted(set(needed))
    return f"say I make {specialty}s cheaply: ${price} each", (f"say I need {' and '.join(named)}" if named else None)


def candidates(view: Mapping[str, Any], labels: tuple[str, ...]) -> list[tuple[int, str]]:
    """(index, command) of every label of `labels` (a `catalogue`) that `command_for` gives a command in this view,
    in index order: the same pairs as asking `command_for` label by label, with what the labels share (the fair
    price, the needed shapes, the offers) worked out once and the commands written once (`_answers`,
    `_offers_to_each`, `_says`), and written in index order (sorted only for labels in another order than a
    `catalogue`'s)."""
    where = _index_of(labels)
    out: list[tuple[int, str]] = [(where["noop"], WAIT)]
    # produce: refused for every shape past the production limit or too late (see `command_for`)
    if view["produced"] < view["max_production"] and view["step"] + view["production_steps"] < view["max_steps"]:
        money, costs, specialty = view["free_money"], view["costs"], view["specialty"]
        for shape, produce in where["produce"].items():
            if money >= costs["specialty" if shape == specialty else "regular"]:
                out.append(produce)
    free = view["free_inventory"]
    for fulfill, order in zip(where["fulfill"], view["orders"]):
        if not order["fulfilled"]:
            for s, n in order["shapes"].items():  # (a loop: a generator in `all` costs more than the check)
                if free[s] < n:
                    break
            else:
                out.append(fulfill)
    to_you, yours = view["offers_to_you"], view["your_offers"]
    answers = [_answers(o["offer"]) for o in to_you]
    out += zip(where["accept"], [a[0] for a in answers])
    out += zip(where["decline"], [a[1] for a in answers])
    out += zip(where["cancel"], [_answers(o["offer"])[2] for o in yours])
    price = fair_price_of(view)
    specialty = view["specialty"]
    needed = needed_shapes(view)
    if len(yours) < view["max_open_offers"]:
        others = _others(tuple(view["participants"]), view["agent"])
        if free[specialty]:
            out += zip(where["sell"], _offers_to_each(others, specialty, price, True))
        shape = _first_unasked(needed, yours)
        if shape is not None and view["free_money"] >= price:
            out += zip(where["buy"], _offers_to_each(others, shape, price, False))
    say_specialty, say_needs = where["messages"]
    about_specialty, about_needs = _says(specialty, price, tuple(needed))
    out.append((say_specialty, about_specialty))
    if about_needs is not None:
        out.append((say_needs, about_needs))
    if not where["in_order"]:
        out.sort()
    return out
