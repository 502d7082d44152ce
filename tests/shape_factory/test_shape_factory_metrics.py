"""Shape Factory's metrics on hand-made logs: wealth from rewards, the accept rate, the fulfilment
rate over agents who completed every order, the message-trade ratio (also with no trade), the
invalid-action rate; and the same numbers from a real episode's log read back from disk."""

from __future__ import annotations

import pytest

import teamenvs
from teamenvs.core.metrics import episode_metrics
from teamenvs.core.policy import make_policies
from teamenvs.core.recorder import EpisodeRecorder, read_log
from teamenvs.shape_factory.metrics import METRIC_GOALS, shape_factory_metrics

OK = {"ok": True, "command": "wait", "args": {}, "text": "wait"}
BAD = {"ok": False, "kind": "rejected", "command": "fulfill order", "error": "order 1 still needs 1 square"}
BUSY = {"ok": None, "ignored": True}


def header(orders: int = 2) -> dict:
    return {"type": "header", "env_id": "shape_factory_v0", "config": {"starting_money": 200, "orders_per_agent": orders,
                                                                        "specialty_cost": 15}, "agents": ["a", "b"]}


def step(n: int, rewards: dict, events: list, actions: dict | None = None) -> dict:
    actions = actions or {}
    return {"type": "step", "step": n, "events": events, "done": False,
            "agents": {a: {"reward": r, "action": actions.get(a, OK)} for a, r in rewards.items()}}


def offer(n: int) -> dict:
    return {"type": "offer", "offer": n, "proposer": "a", "recipient": "b"}


def test_metrics_of_a_hand_made_log():
    records = [
        header(),
        step(1, {"a": -15.0, "b": 0.0}, [offer(1), offer(2), {"type": "production_started", "agent": "a", "cost": 15},
                                         {"type": "message", "sender": "a"}], {"b": BAD}),
        step(2, {"a": 28.0, "b": -28.0}, [{"type": "trade", "offer": 1}, {"type": "message", "sender": "b"},
                                          {"type": "message", "sender": "b"}, {"type": "production_started", "agent": "b", "cost": 40}],
             {"a": BUSY}),
        step(3, {"a": 0.0, "b": 60.0}, [{"type": "fulfilled", "agent": "b", "order": 1}, offer(3)]),
        step(4, {"a": 0.0, "b": 60.0}, [{"type": "fulfilled", "agent": "b", "order": 2}, {"type": "declined", "offer": 3}]),
    ]
    m = shape_factory_metrics(records)
    assert m["wealth"] == {"a": 213.0, "b": 292.0}
    assert m["mean_wealth"] == 252.5
    assert m["trade_accept_rate"] == pytest.approx(1 / 3)
    assert m["order_fulfillment_rate"] == 0.5  # b completed both orders, a none
    assert m["orders_fulfilled_share"] == 0.5
    assert m["message_trade_ratio"] == 3.0
    assert m["invalid_action_rate"] == pytest.approx(1 / 7)  # 8 agent-steps, one busy, one refused
    assert m["specialty_production_share"] == 0.5
    assert m["messages_per_agent"] == {"a": 1, "b": 2}


def test_with_no_trade_the_message_trade_ratio_is_the_message_count_and_rates_are_zero():
    records = [header(), step(1, {"a": 0.0, "b": 0.0}, [{"type": "message", "sender": "a"}] * 4)]
    m = shape_factory_metrics(records)
    assert m["message_trade_ratio"] == 4.0 and m["trade_accept_rate"] == 0.0 and m["order_fulfillment_rate"] == 0.0
    assert m["mean_wealth"] == 200.0 and m["gini_wealth"] == 0.0


def test_goals_name_reported_metrics():
    m = shape_factory_metrics([header(), step(1, {"a": 0.0, "b": 0.0}, [])])
    assert set(METRIC_GOALS) <= set(m) and METRIC_GOALS["mean_wealth"] == "max" and METRIC_GOALS["invalid_action_rate"] == "min"


def test_a_real_log_read_back_gives_the_same_metrics(tmp_path):
    env = teamenvs.make("shape_factory_v0")
    policies = make_policies(env, "cooperative", seed=0)
    path = tmp_path / "ep.jsonl"
    total = {a: 200.0 for a in env.possible_agents}
    with EpisodeRecorder(path) as recorder, env.unwrapped.recording(recorder):
        observations, infos = env.reset(seed=0)
        while env.agents:
            observations, rewards, _, _, infos = env.step(
                {a: policies[a].act(observations[a], infos[a]) for a in env.agents if infos[a]["needs_action"]})
            for a, r in rewards.items():
                total[a] += r
        live = episode_metrics(recorder.records)
    assert episode_metrics(read_log(path)) == live
    assert live["wealth"] == total == {a: float(env.unwrapped.market.money[a]) for a in total}
