"""Shape Factory's rules as pure functions, with hand-computed cases: dealing specialties and orders,
production, offers and their commitments, trades, fulfilment, the order of a step, every refusal,
and the offer terms of the command language."""

from __future__ import annotations

import numpy as np
import pytest

from teamenvs.core.commands import Action, ActionError
from teamenvs.shape_factory import rules
from teamenvs.shape_factory.commands import COMMANDS, TermsArg, commands_for
from teamenvs.shape_factory.config import PRESETS, ShapeFactoryConfig
from teamenvs.shape_factory.rules import MONEY, Goods, Market, Order, Terms
from teamenvs.shape_factory.view import REFUSALS, refusal_text

CFG = ShapeFactoryConfig()
AGENTS = ("a", "b", "c", "d")


def market(**money: int) -> Market:
    """Four agents: a and b make circles, c and d squares; a needs a square, c a circle."""
    spec = {"a": "circle", "b": "circle", "c": "square", "d": "square"}
    return Market(
        shapes=("circle", "square", "triangle"),
        specialty=spec,
        money={x: money.get(x, 200) for x in AGENTS},
        inventory={x: {"circle": 0, "square": 0, "triangle": 0} for x in AGENTS},
        orders={x: [Order({"square" if spec[x] == "circle" else "circle": 1})] for x in AGENTS},
        produced={x: 0 for x in AGENTS},
        production={x: None for x in AGENTS},
        earned={x: 0 for x in AGENTS},
    )


def sell(n: int, shape: str, price: int) -> dict:
    return {"recipient": "c", "terms": Terms(Goods(shape, n), Goods(MONEY, price))}


# ---------------------------------------------------------------------- setup
@pytest.mark.parametrize("preset", ["baseline", "group_size_8", "group_size_10", "group_size_4"])
def test_each_specialty_is_held_by_two_agents_and_orders_never_contain_it(preset):
    cfg = ShapeFactoryConfig(**PRESETS[preset])
    agents = [f"agent_{i}" for i in range(1, cfg.n_agents + 1)]
    m = rules.new_market(agents, cfg, np.random.default_rng(3))
    assert sorted(m.specialty.values()) == sorted(list(m.shapes) * 2)
    for a in agents:
        assert len(m.orders[a]) == cfg.orders_per_agent
        for order in m.orders[a]:
            assert sum(order.shapes.values()) == cfg.shape_amount_per_order
            assert m.specialty[a] not in order.shapes
        assert m.money[a] == 200 and sum(m.inventory[a].values()) == 0


def test_the_deal_is_seeded():
    cfg = ShapeFactoryConfig(shape_amount_per_order=3)
    deal = lambda seed: rules.new_market(list(AGENTS) + ["e", "f"], cfg, np.random.default_rng(seed))  # noqa: E731
    first, again, other = deal(7), deal(7), deal(8)
    assert first.specialty == again.specialty and [o.shapes for o in first.orders["a"]] == [o.shapes for o in again.orders["a"]]
    assert any(first.specialty[a] != other.specialty[a] for a in first.specialty) or first.orders != other.orders


# ---------------------------------------------------------------------- production
def test_production_costs_the_specialty_or_regular_price_and_takes_three_steps():
    m = market()
    outcomes, refusals = rules.settle(m, CFG, {"a": ("produce", {"shape": "circle"}), "c": ("produce", {"shape": "circle"})}, 0, AGENTS)
    assert refusals == {}
    assert m.money["a"] == 185 and m.money["c"] == 160  # $15 specialty, $40 regular
    assert m.produced == {"a": 1, "b": 0, "c": 1, "d": 0}
    assert rules.busy(m, "a") and m.production["a"].steps_left == 2 and m.inventory["a"]["circle"] == 0
    rules.advance(m, AGENTS)
    assert rules.busy(m, "a") and m.inventory["a"]["circle"] == 0
    done = rules.advance(m, AGENTS)
    assert not rules.busy(m, "a") and m.inventory["a"]["circle"] == 1 and m.inventory["c"]["circle"] == 1
    assert [o.kind for o in done] == ["produced", "produced"]
    assert [o.kind for o in outcomes] == ["production_started", "production_started"]


def test_production_refusals():
    m = market(a=14)
    assert rules.check(m, CFG, "a", "produce", {"shape": "circle"}, 0).code == "cannot_afford"
    assert refusal_text(rules.check(m, CFG, "a", "produce", {"shape": "circle"}, 0)) == "a circle costs you $15 and you have $14 free"
    m = market()
    m.produced["a"] = CFG.max_production
    assert rules.check(m, CFG, "a", "produce", {"shape": "circle"}, 0).code == "max_production"
    assert rules.check(market(), CFG, "a", "produce", {"shape": "circle"}, 87).code == "too_late"  # ready only at step 90
    assert rules.check(market(), CFG, "a", "produce", {"shape": "circle"}, 86) is None


def test_committed_money_cannot_pay_for_production():
    m = market(c=50)
    rules.settle(m, CFG, {"c": ("offer", {"recipient": "a", "terms": Terms(Goods(MONEY, 28), Goods("circle", 1))})}, 0, AGENTS)
    assert rules.free(m, "c", MONEY) == 22 and m.money["c"] == 50
    refusal = rules.check(m, CFG, "c", "produce", {"shape": "circle"}, 1)
    assert refusal.code == "cannot_afford" and refusal.data["have"] == 22


# ---------------------------------------------------------------------- offers and trades
def test_an_accepted_offer_moves_both_sides_at_once():
    m = market()
    m.inventory["a"]["circle"] = 2
    rules.settle(m, CFG, {"a": ("offer", sell(2, "circle", 56))}, 0, AGENTS)
    assert rules.committed(m, "a") == {"circle": 2} and rules.free(m, "a", "circle") == 0
    assert m.inventory["a"]["circle"] == 2  # committed, still held
    (offer,) = m.offers.values()
    outcomes, refusals = rules.settle(m, CFG, {"c": ("accept offer", {"offer": offer.id})}, 1, AGENTS)
    assert refusals == {} and [o.kind for o in outcomes] == ["trade"]
    assert m.inventory["a"]["circle"] == 0 and m.inventory["c"]["circle"] == 2
    assert m.money["a"] == 256 and m.money["c"] == 144 and m.offers == {}


def test_decline_and_cancel_free_what_was_committed():
    m = market()
    m.inventory["a"]["circle"] = 1
    rules.settle(m, CFG, {"a": ("offer", sell(1, "circle", 20))}, 0, AGENTS)
    rules.settle(m, CFG, {"c": ("decline offer", {"offer": 3})}, 1, AGENTS)  # a's first to c: 4 x (4 x 0 + 0) + 2 + 1
    assert m.offers == {} and rules.free(m, "a", "circle") == 1
    rules.settle(m, CFG, {"a": ("offer", sell(1, "circle", 20))}, 2, AGENTS)
    outcomes, _ = rules.settle(m, CFG, {"a": ("cancel offer", {"your_offer": 19})}, 3, AGENTS)  # its second: 4 x 4 + 3
    assert [o.kind for o in outcomes] == ["cancelled"] and m.offers == {} and rules.free(m, "a", "circle") == 1


def test_an_answer_and_a_cancel_in_the_same_step_the_answer_stands():
    m = market()
    m.inventory["a"]["circle"] = 1
    rules.settle(m, CFG, {"a": ("offer", sell(1, "circle", 30))}, 0, AGENTS)
    outcomes, refusals = rules.settle(m, CFG, {"a": ("cancel offer", {"your_offer": 3}), "c": ("accept offer", {"offer": 3})}, 1, AGENTS)
    assert refusals == {}  # both were valid when chosen
    assert [o.kind for o in outcomes] == ["trade", "too_late"]
    assert m.inventory["c"]["circle"] == 1 and m.money["a"] == 230


def test_offer_and_answer_refusals():
    m = market(c=20)
    m.inventory["a"]["circle"] = 1
    assert rules.check(m, CFG, "a", "offer", sell(2, "circle", 30), 0).code == "short"
    assert refusal_text(rules.check(m, CFG, "a", "offer", sell(2, "circle", 30), 0)) == "it needs 2 circles and you have 1 circle free"
    assert rules.check(m, CFG, "a", "offer", {"recipient": "a", "terms": sell(1, "circle", 30)["terms"]}, 0).code == "self_offer"
    rules.settle(m, CFG, {"a": ("offer", sell(1, "circle", 30))}, 0, AGENTS)
    short = rules.check(m, CFG, "c", "accept offer", {"offer": 3}, 1)  # c has $20, the offer asks $30
    assert short.code == "short" and refusal_text(short) == "it needs $30 and you have $20 free"
    assert rules.check(m, CFG, "b", "accept offer", {"offer": 3}, 1).code == "no_offer_to_you"
    assert rules.check(m, CFG, "c", "accept offer", {"offer": 9}, 1).data["yours"] == (3,)
    assert rules.check(m, CFG, "c", "cancel offer", {"your_offer": 3}, 1).code == "no_own_offer"
    assert rules.check(m, CFG, "c", "decline offer", {"offer": 3}, 1) is None
    many = market()
    many.inventory["a"]["circle"] = 10
    for step in range(CFG.max_open_offers):
        assert rules.settle(many, CFG, {"a": ("offer", sell(1, "circle", 15))}, step, AGENTS)[1] == {}
    assert rules.check(many, CFG, "a", "offer", sell(1, "circle", 15), 9).code == "too_many_offers"


# ---------------------------------------------------------------------- orders
def test_fulfilling_an_order_pays_the_incentive_and_uses_free_shapes_only():
    m = market()
    assert rules.check(m, CFG, "a", "fulfill order", {"order": 1}, 0).code == "missing_shapes"
    assert refusal_text(rules.check(m, CFG, "a", "fulfill order", {"order": 1}, 0)).startswith("order 1 still needs 1 square")
    assert rules.check(m, CFG, "a", "fulfill order", {"order": 2}, 0).code == "no_order"
    m.inventory["a"]["square"] = 1
    outcomes, refusals = rules.settle(m, CFG, {"a": ("fulfill order", {"order": 1})}, 5, AGENTS)
    assert refusals == {} and outcomes[0].kind == "fulfilled"
    assert m.money["a"] == 260 and m.earned["a"] == 60 and m.inventory["a"]["square"] == 0
    assert m.orders["a"][0].fulfilled_at == 5 and rules.open_orders(m, "a") == []
    assert rules.check(m, CFG, "a", "fulfill order", {"order": 1}, 6).code == "fulfilled"


def test_every_refusal_code_has_words():
    codes = {"max_production", "too_late", "cannot_afford", "self_offer", "too_many_offers", "short", "no_own_offer",
             "no_offer_to_you", "no_order", "fulfilled", "missing_shapes"}
    assert set(REFUSALS) == codes


def test_random_valid_play_never_makes_money_or_shapes_negative():
    cfg = ShapeFactoryConfig()
    agents = [f"agent_{i}" for i in range(1, 7)]
    rng = np.random.default_rng(0)
    m = rules.new_market(agents, cfg, rng)
    terms = TermsArg("terms", m.shapes, cfg.max_offer_shapes, cfg.min_price, cfg.max_price)
    carried = 0
    for step in range(cfg.max_steps):
        actions = {}
        for a in agents:
            if rules.busy(m, a):
                continue
            kind = int(rng.integers(5))
            offers = list(m.offers)
            if kind == 0:
                actions[a] = ("produce", {"shape": m.shapes[int(rng.integers(len(m.shapes)))]})
            elif kind == 1:
                text = terms.sample(rng, None)
                parsed = terms.parse(" " + text, None, COMMANDS.commands["offer"])[0]
                actions[a] = ("offer", {"recipient": agents[int(rng.integers(6))], "terms": parsed})
            elif kind == 2 and offers:
                actions[a] = ("accept offer", {"offer": offers[int(rng.integers(len(offers)))]})
            elif kind == 3 and offers:
                actions[a] = ("cancel offer", {"your_offer": offers[int(rng.integers(len(offers)))]})
            else:
                actions[a] = ("fulfill order", {"order": int(rng.integers(1, 4))})
        outcomes, refusals = rules.settle(m, cfg, actions, step, agents)
        carried += sum(o.kind in ("trade", "fulfilled") for o in outcomes)
        for a in agents:
            assert m.money[a] >= 0 and all(n >= 0 for n in m.inventory[a].values())
            assert all(rules.free(m, a, item) >= 0 for item in (*m.shapes, MONEY))
    assert carried > 0


# ---------------------------------------------------------------------- the offer terms in the command language
@pytest.mark.parametrize("text, canonical", [
    ("offer agent_2 2 circles for $40", "offer agent_2 2 circles for $40"),
    ("OFFER agent_2 $30 for 1 Square", "offer agent_2 $30 for 1 square"),
    ("offer agent_3 1 circle for 2 triangle", "offer agent_3 1 circle for 2 triangles"),
    ("offer agent_2 1 circle for 40 dollars", "offer agent_2 1 circle for $40"),
    ("offer agent_2 $500 for 5 squares", "offer agent_2 $500 for 5 squares"),  # $100 a square: a whole offer may ask more
    ("offer agent_2 1 circle for $25, deal?", "offer agent_2 1 circle for $25"),
    # found by a review of the parsing fixes: read as $40 before them, refused by their first version
    ("offer agent_2 2 squares for $40.00", "offer agent_2 2 squares for $40"),
    ("offer agent_2 2 squares for $40, $20 each", "offer agent_2 2 squares for $40"),
    ("offer agent_2 1 circle for 2 squares and 3 more turns", "offer agent_2 1 circle for 2 squares"),
    ('{"action": "offer", "args": {"recipient": "agent_2", "terms": "1 circle for $15"}}', "offer agent_2 1 circle for $15"),
])
def test_offers_parse_to_their_canonical_text(text, canonical):
    situation = _situation()
    action = COMMANDS.parse(text, situation)
    assert isinstance(action, Action) and action.text == canonical, action


@pytest.mark.parametrize("text, error", [
    ("offer agent_2 $20 for $40", "not money for money"),
    ("offer agent_2 1 circle for 2 circles", "cannot give and ask for the same shape"),
    ("offer agent_2 1 circle for $101", "the price of a shape must be $15 to $100: 1 circle for $101 is $101 a circle"),
    # B.1's price range is a price a shape (CollabSim's released code: price_per_unit), not a whole offer's
    ("offer agent_2 $15 for 5 triangles", "$15 for 5 triangles is $3 a triangle (for 5 triangles: $75 to $500)"),
    ("offer agent_2 2 circles for $201", "is $100.50 a circle"),
    ("offer agent_2 $501 for 5 squares", "the money of an offer must be $15 to $100 a shape"),
    ("offer agent_2 6 circles for $40", "1 to 5 shapes"),
    ("offer agent_2 1 hexagon for $40", "unknown shape 'hexagon'"),
    ("offer agent_2 1 circle", "'<what you give> for <what you get>'"),
    ("offer agent_9 1 circle for $20", "unknown recipient"),
    # found by review: read as $20, $100, $25 and $9999999, the rest dropped unsaid
    ("offer agent_2 1 circle for $20.99", "whole dollars in digits alone (got '$20.99')"),
    ("offer agent_2 5 circles for $100,000", "(got '$100,000')"),
    ("offer agent_2 1 circle for $25k", "(got '$25k')"),
    ("offer agent_2 1 circle for $99999999999", "(got '$99999999999')"),
    # read as the first kind of goods asked for, the rest of the price dropped
    ("offer agent_2 1 circle for 2 squares and $50", "more follow 2 squares ('and $50')"),
    ("offer agent_2 1 circle for $25, 1 square", "more follow $25 (', 1 square')"),
    ("offer agent_2 1 circle for 2 squares + $10", "more follow 2 squares ('+ $10')"),
    ("offer agent_2 2 squares for $40 or $50", "more follow $40 ('or $50')"),
    ("offer agent_2 2 squares for $40.50", "(got '$40.50')"),
    ("fulfill order 1 2", "'fulfill order' takes one order"),
])
def test_bad_offers_say_what_is_wrong(text, error):
    result = COMMANDS.parse(text, _situation())
    assert isinstance(result, ActionError) and error in result.error, result


def test_commands_follow_the_config():
    cfg = ShapeFactoryConfig(**PRESETS["group_size_10"])
    commands = commands_for(cfg)
    assert commands.commands["produce"].args[0].choices == ("circle", "square", "triangle", "rectangle", "diamond")
    assert commands.commands["fulfill order"].args[0].high == 5


def _situation():
    from teamenvs.core.commands import Situation

    return Situation(names={"agent": ("agent_2", "agent_3")})
