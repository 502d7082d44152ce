"""Shape Factory's configuration: the market's parameters (CollabSim App. B.1, Table 8), the
communication and visibility conditions, and the CollabSim conditions as presets.

CollabSim runs the task on a 900-second timer that triggers every agent every 10 seconds, a
shape taking 30 seconds to make. Here time is counted in env steps: one step is one 10-second
trigger, so the session is 90 steps and a shape takes 3 (the producer is busy, and not asked
to act, until its shape is made).

What the paper leaves open, and the choices made here:

- **Shapes per order and orders per agent.** One shape per order (`shape_amount_per_order=1`)
  and, in the BASELINE, three orders per agent (as many as there are shapes; B.1 gives 4 and 5
  orders for the 8- and 10-agent conditions, one per shape). The best team ends at 200 + orders x
  (60 - 15) per agent, $335 with 3 orders and $380 with 4, figures Table 2 shows, though beside
  order fulfilment that cannot give them here (docs/envs/shape_factory_v0.md, "Readings").
- **Maximum production.** 10 shapes per agent (Table 8 names `max_production_num` but gives no
  value): more than any agent needs in a cooperative market, so the limit binds only a
  factory that overproduces.
- **Offers.** An offer trades one kind of goods for another: shapes for money, money for
  shapes, or shapes for shapes; the money side is a price of $15 to $100 a shape ("min/max trade
  price"; a price per unit in CollabSim's released code, whose offers buy or sell one shape kind for
  money: a swap of shapes for shapes is this env's, and has no price), and at most `max_offer_shapes` shapes change hands each way. What
  the proposer gives is committed while the offer is open (it cannot be spent or promised
  twice), so an accepted offer always settles: offers are binding, and money and inventories
  can never go negative. An answer (accept or decline) and a cancel of the same offer in one
  step: the answer stands.
- **Which condition shows the awareness dashboard.** Section 4.1 says the BASELINE shows
  teammates' balance, production and order progress; App. B.1 and the results (5, "enabling
  information visibility increases agent engagement") treat the dashboard as the manipulated
  condition. Here only `awareness_dashboard` shows it (peers' money, production count, order
  progress and specialty); the BASELINE does not, so the manipulation adds something.
- **Group size.** B.1's conditions (6, 8 and 10 agents) are the presets; the main text's
  4-agent condition is `group_size_4` (2 shapes, 2 orders each).
- **Early end.** The session also ends once every agent has fulfilled every order (nothing is
  left to earn).
"""

from __future__ import annotations

from dataclasses import dataclass

from teamenvs.core.config import ConfigError, setting
from teamenvs.core.messaging import MessagingConditions

SHAPES = ("circle", "square", "triangle", "rectangle", "diamond", "hexagon", "star", "oval")  # B.1's five, then more


@dataclass(frozen=True)
class ShapeFactoryConfig(MessagingConditions):
    """Shape Factory parameters and conditions (defaults: CollabSim's BASELINE)."""

    n_agents: int = setting(6, low=2, high=32, doc="number of factories (agents)")
    n_shapes: int = setting(3, low=2, high=len(SHAPES), doc=f"shape types in play, the first of {', '.join(SHAPES)}")
    orders_per_agent: int = setting(3, low=1, high=10, doc="orders each agent holds (never of its own specialty)")
    shape_amount_per_order: int = setting(
        1, low=1, high=5, doc="shapes in one order (1: the paper gives no number; see the module doc)"
    )
    starting_money: int = setting(200, low=0, high=100_000, doc="each agent's money at the start, in dollars")
    specialty_cost: int = setting(15, low=0, high=10_000, doc="cost of making a shape of one's specialty")
    regular_cost: int = setting(40, low=0, high=10_000, doc="cost of making any other shape")
    incentive: int = setting(60, low=0, high=10_000, doc="money paid for a fulfilled order")
    min_price: int = setting(15, low=1, high=10_000, doc="the least money an offer may ask or give for one shape")
    max_price: int = setting(100, low="min_price", high=10_000, doc="the most money an offer may ask or give for one shape")
    max_offer_shapes: int = setting(5, low=1, high=20, doc="the most shapes of one kind an offer may give or ask for")
    max_open_offers: int = setting(5, low=1, high=20, doc="the most offers an agent may have open at once")
    production_steps: int = setting(3, low=1, high=100, doc="steps a shape takes to make (30 s at 10 s per step); the producer is busy meanwhile")
    max_production: int = setting(10, low=0, high=1_000, doc="the most shapes one agent may make in a session")
    max_steps: int = setting(90, low=1, high=10_000, doc="steps of the session (900 s at one step per 10 s)")
    awareness_dashboard: bool = setting(
        False, doc="whether each agent sees every peer's money, production count, order progress and specialty"
    )
    private_messages: bool = setting(True, doc="whether agents may `tell` one agent privately (else every message is broadcast)")

    def _check(self) -> None:
        if self.n_shapes > self.n_agents:
            raise ConfigError(f"n_shapes ({self.n_shapes}) must be at most n_agents ({self.n_agents}): every shape needs a specialist")


PRESETS: dict[str, dict[str, object]] = {
    # CollabSim Table 1 / App. B.1
    "baseline": {},
    "awareness_dashboard": {"awareness_dashboard": True},
    "communication_bandwidth": {"min_steps_between_messages": 6},  # one accepted message a minute
    "group_size_8": {"n_agents": 8, "n_shapes": 4, "orders_per_agent": 4},
    "group_size_10": {"n_agents": 10, "n_shapes": 5, "orders_per_agent": 5},
    # the main text's 4-agent condition (4.1), and a condition without messages
    "group_size_4": {"n_agents": 4, "n_shapes": 2, "orders_per_agent": 2},
    "no_communication": {"communication": False},
}
