"""Shape Factory's scripted baselines, deciding from the agent's view only.

`cooperative` (the default `scripted` kind): announces its specialty and price once, fulfils
orders as soon as it can, accepts offers that give it a shape its orders need for at most the fair
price (or for a shape it does not need), sells its specialty at the fair price and makes one
whenever an offer asks for more than it has, and buys the shapes its orders need, one offer of
the fair price per missing shape, from the specialists it has heard of (from messages, offers or
the dashboard; failing that, from each participant in turn); an offer left unanswered for
`patience` steps is withdrawn and made to the next candidate. The fair price is half way between
the specialty and the regular cost ($28), so both sides gain on every trade.

`self_sufficient`: never trades (declines every offer), makes each shape its orders need at the
regular cost and fulfils its orders. `random` (every paradigm's) draws a valid command form.
"""

from __future__ import annotations

from typing import Any, Mapping

from teamenvs.core.policy import ScriptedPolicy
from teamenvs.shape_factory.commands import needed_shapes
from teamenvs.shape_factory.rules import MONEY
from teamenvs.shape_factory.view import fair_price_of, goods_text


def ready_order(view: Mapping[str, Any]) -> int | None:
    """The first open order the free inventory covers, if any."""
    for order in view["orders"]:
        if not order["fulfilled"] and all(view["free_inventory"][s] >= n for s, n in order["shapes"].items()):
            return order["order"]
    return None


def heard_specialties(view: Mapping[str, Any]) -> dict[str, str]:
    """Agent -> specialty, as announced in the messages the agent reads now ("I make circles ...")."""
    found = {}
    for line in view["new_messages"]:
        text = line.split("] ", 1)[-1]
        sender, _, said = text.partition(": ")
        words = said.split()
        if len(words) >= 3 and words[0] == "I" and words[1] == "make":
            shape = words[2].lower().rstrip(",.;:")
            shape = shape[:-1] if shape.endswith("s") and shape[:-1] in view["shapes"] else shape
            if shape in view["shapes"]:
                found[sender.removesuffix(" (to you)")] = shape
    return found


class Cooperative(ScriptedPolicy):
    name = "cooperative"
    patience = 15  # steps an offer may stay unanswered before it is withdrawn

    def reset(self, agent_id: str, briefing: str) -> None:
        super().reset(agent_id, briefing)
        self.specialists: dict[str, str] = {}  # agent -> specialty, as far as it knows
        self.attempts: dict[str, int] = {}  # shape -> buy offers made for it so far
        self.announced = False

    def decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        if not hasattr(self, "specialists"):
            self.reset(view["agent"], "")
        self._learn(view)
        price = fair_price_of(view)
        if not self.announced and self.allowed(info, "say"):
            self.announced = True
            return f"say I make {view['specialty']}s cheaply and sell them for ${price} each."
        order = ready_order(view)
        if order is not None:
            return f"fulfill order {order}"
        needed = needed_shapes(view)
        for offer in view["offers_to_you"]:
            answer = self._answer(view, offer, needed, price)
            if answer is not None:
                return f"{answer} offer {offer['offer']}"
        if self._demand(view) > view["free_inventory"][view["specialty"]] and self.allowed(info, "produce") \
                and view["free_money"] >= view["costs"]["specialty"]:
            return f"produce {view['specialty']}"
        for offer in view["your_offers"]:
            if view["step"] - offer["step"] >= self.patience:
                return f"cancel offer {offer['offer']}"
        asked = [o["get"][0] for o in view["your_offers"]]
        for shape in needed:
            if shape in asked:
                asked.remove(shape)
                continue
            if len(view["your_offers"]) >= view["max_open_offers"] or view["free_money"] < price:
                break
            seller = self._seller(view, shape)
            if seller is not None:
                self.attempts[shape] = self.attempts.get(shape, 0) + 1
                return f"offer {seller} ${price} for {goods_text(shape, 1)}"
        return "wait"

    def _learn(self, view: Mapping[str, Any]) -> None:
        self.specialists.update(heard_specialties(view))
        if view["dashboard"] is not None:
            self.specialists.update({a: p["specialty"] for a, p in view["dashboard"].items()})
        for offer in view["offers_to_you"]:
            if offer["give"][0] != MONEY and offer["get"][0] == MONEY:  # it sells that shape: likely its specialty
                self.specialists.setdefault(offer["from"], offer["give"][0])

    def _demand(self, view: Mapping[str, Any]) -> int:
        """Units of its specialty that offers to it ask for."""
        return sum(o["get"][1] for o in view["offers_to_you"] if o["get"][0] == view["specialty"])

    def _answer(self, view: Mapping[str, Any], offer: Mapping[str, Any], needed: list[str], price: int) -> str | None:
        """'accept', 'decline', or None (keep it open: it wants the specialty, which is being made)."""
        (gets, got_n), (gives, give_n) = offer["give"], offer["get"]  # what this agent would get, and give
        if gives == MONEY:
            affordable = view["free_money"] >= give_n
            fair = give_n <= price * got_n
            return "accept" if gets in needed and affordable and fair else "decline"
        have = view["free_inventory"][gives]
        if gives == view["specialty"]:
            if gets == MONEY and got_n < view["costs"]["specialty"] * give_n:
                return "decline"
            if gets != MONEY and gets not in needed:
                return "decline"
            return "accept" if have >= give_n else None
        spare = have - needed.count(gives)
        return "accept" if gets in needed and spare >= give_n else "decline"

    def _seller(self, view: Mapping[str, Any], shape: str) -> str | None:
        """Whom to ask for `shape`: its known specialists in turn, else every other participant in turn."""
        others = [a for a in view["participants"] if a != view["agent"]]
        known = [a for a in others if self.specialists.get(a) == shape]
        candidates = known or [a for a in others if a not in self.specialists]
        if not candidates:
            return None
        offset = view["participants"].index(view["agent"])  # teammates start with different candidates
        return candidates[(self.attempts.get(shape, 0) + offset) % len(candidates)]


class SelfSufficient(ScriptedPolicy):
    name = "self_sufficient"

    def decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        order = ready_order(view)
        if order is not None:
            return f"fulfill order {order}"
        if view["offers_to_you"]:
            return f"decline offer {view['offers_to_you'][0]['offer']}"
        needed = needed_shapes(view)
        if needed and self.allowed(info, "produce") and view["free_money"] >= view["costs"]["regular"]:
            return f"produce {needed[0]}"
        return "wait"


BASELINES: dict[str, type[ScriptedPolicy]] = {p.name: p for p in (Cooperative, SelfSufficient)}
DEFAULT = "cooperative"
