"""Shape Factory's scripted baselines: the cooperative team out-earns the self-sufficient one (which
out-earns random play) on every CollabSim condition, over ten seeds; what each baseline does."""

from __future__ import annotations

import pytest

import teamenvs
from teamenvs.core.policy import make_policies
from teamenvs.core.recorder import EpisodeRecorder
from teamenvs.shape_factory.metrics import shape_factory_metrics

SEEDS = range(10)


def play(kind: str, seed: int, preset: str = "baseline") -> dict:
    env = teamenvs.make("shape_factory_v0", preset=preset)
    policies = make_policies(env, kind, seed=seed)
    recorder = EpisodeRecorder(None)
    with env.unwrapped.recording(recorder):
        observations, infos = env.reset(seed=seed)
        for agent in env.agents:
            policies[agent].reset(agent, env.unwrapped.briefing(agent))
        while env.agents:
            actions = {a: policies[a].act(observations[a], infos[a]) for a in env.agents if infos[a]["needs_action"]}
            observations, _, _, _, infos = env.step(actions)
    return shape_factory_metrics(recorder.records)


def mean(kind: str, metric: str, preset: str = "baseline") -> float:
    return sum(play(kind, s, preset)[metric] for s in SEEDS) / len(SEEDS)


def test_cooperative_earns_more_than_self_sufficient_and_random_on_the_baseline():
    cooperative = [play("cooperative", s) for s in SEEDS]
    self_sufficient = [play("self_sufficient", s) for s in SEEDS]
    random = [play("random", s) for s in SEEDS]
    wealth = {name: sum(m["mean_wealth"] for m in runs) / len(SEEDS)
              for name, runs in (("cooperative", cooperative), ("self_sufficient", self_sufficient), ("random", random))}
    # 200 + 3 orders x ($60 - $15): every shape made by a specialist and every order fulfilled
    assert wealth["cooperative"] == 335.0
    # 200 + 3 x ($60 - $40): every shape made at the regular cost
    assert wealth["self_sufficient"] == 260.0
    assert wealth["random"] < 200.0
    assert all(m["order_fulfillment_rate"] == 1.0 and m["trade_accept_rate"] > 0.9 for m in cooperative)
    assert all(m["trades_accepted"] == 0 and m["offers_proposed"] == 0 for m in self_sufficient)
    assert all(m["invalid_action_rate"] == 0.0 for m in cooperative + self_sufficient)


@pytest.mark.parametrize("preset, ceiling", [("awareness_dashboard", 335), ("communication_bandwidth", 335),
                                              ("group_size_8", 380), ("group_size_10", 425), ("no_communication", 335)])
def test_cooperative_beats_self_sufficient_in_every_condition(preset, ceiling):
    seeds = range(3)
    cooperative = [play("cooperative", s, preset)["mean_wealth"] for s in seeds]
    self_sufficient = [play("self_sufficient", s, preset)["mean_wealth"] for s in seeds]
    assert min(cooperative) > max(self_sufficient)
    assert max(cooperative) <= ceiling  # 200 + orders x (60 - 15) is the most a team can average


def test_cooperators_find_sellers_without_messages_by_asking_around():
    metrics = play("cooperative", 0, "no_communication")
    assert metrics["total_messages"] == 0 and metrics["order_fulfillment_rate"] == 1.0
    assert metrics["offers_proposed"] > metrics["trades_accepted"]  # some asks went to non-specialists, who declined


def test_cooperators_make_only_their_specialty():
    metrics = play("cooperative", 4)
    assert metrics["specialty_production_share"] == 1.0 and metrics["shapes_started"] == 18
