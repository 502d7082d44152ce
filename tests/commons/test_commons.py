"""Tests of `commons_v0`: hand-computed rules, the env stepped by hand, scripted episodes, API compliance."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test
from pettingzoo.utils import parallel_to_aec

import agents
import teamenvs
from teamenvs.commons.baselines import Greedy, Grim, Mimic, Sustainable
from teamenvs.core.config import ConfigError
from teamenvs.core.metrics import gini
from teamenvs.core.recorder import EpisodeRecorder
from teamenvs.commons.config import PRESETS, CommonsConfig
from teamenvs.commons.env import CommonsEnv
from teamenvs.commons.metrics import commons_metrics
from teamenvs.commons.rules import (
    allocate_catch,
    max_equal_harvest,
    max_sustainable_total,
    regrow,
    schedule,
    settle_month,
    stock_if_all_take,
    sustainable_share,
    universalization,
)
from teamenvs.day_trader.config import DayTraderConfig
from teamenvs.day_trader.rules import schedule as day_trader_schedule


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------- pure rules
def test_allocation_fits_gives_everyone_their_request():
    assert allocate_catch(100, {"a": 10, "b": 20, "c": 0}, rng()) == {"a": 10, "b": 20, "c": 0}
    assert allocate_catch(100, {"a": 60, "b": 40}, rng()) == {"a": 60, "b": 40}  # exactly the stock
    assert allocate_catch(100, {"a": 0, "b": 0}, rng()) == {"a": 0, "b": 0}


def test_allocation_over_demand_is_proportional_with_largest_remainder():
    # total 120 > 100: floors 5000//120=41 (rem 80), 3000//120=25 (rem 0), 4000//120=33 (rem 40);
    # 99 allocated, the 1 leftover ton goes to the largest remainder (a).
    assert allocate_catch(100, {"a": 50, "b": 30, "c": 40}, rng()) == {"a": 42, "b": 25, "c": 33}
    # total 9 > 7: floors 7*4//9=3 (rem 1), 7*3//9=2 (rem 3), 7*2//9=1 (rem 5); 1 leftover -> c, then b.
    assert allocate_catch(7, {"a": 4, "b": 3, "c": 2}, rng()) == {"a": 3, "b": 2, "c": 2}
    # 2 leftover tons: 10 from requests 3/3/3/3 (total 12): floors 2 each (rem 6 each), ties among all four.
    out = allocate_catch(10, {"a": 3, "b": 3, "c": 3, "d": 3}, rng())
    assert sum(out.values()) == 10 and sorted(out.values()) == [2, 2, 3, 3]


def test_allocation_never_exceeds_requests_and_uses_whole_stock():
    g = rng(5)
    for _ in range(200):
        n = int(g.integers(2, 7))
        requests = {f"f{i}": int(g.integers(0, 60)) for i in range(n)}
        stock = int(g.integers(0, 120))
        out = allocate_catch(stock, requests, g)
        assert all(0 <= out[a] <= requests[a] for a in requests)
        assert sum(out.values()) == min(stock, sum(requests.values()))


def test_allocation_tie_break_is_seeded():
    requests = {"a": 5, "b": 5, "c": 5}  # stock 10: 3 each, one leftover ton, a three-way tie

    def winner(seed: int) -> str:
        out = allocate_catch(10, requests, rng(seed))
        assert sorted(out.values()) == [3, 3, 4]
        return max(out, key=out.get)

    assert all(winner(s) == winner(s) for s in range(10))
    assert len({winner(s) for s in range(30)}) > 1


def test_regrow_doubles_up_to_capacity():
    assert regrow(30, 100, 2) == 60
    assert regrow(50, 100, 2) == 100
    assert regrow(70, 100, 2) == 100
    assert regrow(0, 100, 2) == 0
    assert regrow(40, 100, 3) == 100
    assert regrow(20, 100, 3) == 60


def test_sustainable_share():
    assert sustainable_share(100, 5) == 10
    assert sustainable_share(100, 3) == 16
    assert sustainable_share(99, 5) == 9
    assert sustainable_share(7, 5) == 0
    assert sustainable_share(90, 5, factor=3) == 12  # keep 30, which triples back to 90
    # never leaving less than the collapse threshold: 8 tons, 2 fishers, threshold 5 -> keep 5, not 4
    assert sustainable_share(8, 2, threshold=5) == 1
    assert sustainable_share(100, 5, threshold=60) == 8 and sustainable_share(3, 2, threshold=5) == 0


def test_settle_month_regrows_or_collapses():
    out = settle_month(100, {"a": 10, "b": 10, "c": 10, "d": 10, "e": 10}, rng(), CommonsConfig())
    assert (out.remaining, out.collapsed, out.stock_after, out.sustainable_share) == (50, False, 100, 10)
    assert out.catches == {"a": 10, "b": 10, "c": 10, "d": 10, "e": 10}
    two = CommonsConfig(n_agents=2)
    at_threshold = settle_month(100, {"a": 50, "b": 45}, rng(), two)
    assert (at_threshold.remaining, at_threshold.collapsed, at_threshold.stock_after) == (5, False, 10)
    below = settle_month(100, {"a": 50, "b": 46}, rng(), two)
    assert (below.remaining, below.collapsed, below.stock_after) == (4, True, 4)
    over = settle_month(100, {"a": 50, "b": 30, "c": 40}, rng(), CommonsConfig(n_agents=3))
    assert over.catches == {"a": 42, "b": 25, "c": 33}
    assert (over.remaining, over.collapsed, over.stock_after, over.sustainable_share) == (0, True, 0, 16)


def test_max_sustainable_total():
    assert max_sustainable_total(CommonsConfig()) == 600  # 12 months x 50
    assert max_sustainable_total(CommonsConfig(months=1)) == 50
    assert max_sustainable_total(CommonsConfig(initial_stock=60)) == 10 + 11 * 50
    assert max_sustainable_total(CommonsConfig(initial_stock=30)) == 0 + 10 + 10 * 50  # 30 -> 60 -> take 10 -> 100
    assert max_sustainable_total(CommonsConfig(regrowth_factor=4, months=2)) == 75 + 75


def test_universalization_helpers():
    cfg = CommonsConfig()
    assert stock_if_all_take(100, 10, cfg) == 100
    assert stock_if_all_take(100, 19, cfg) == 10  # 5 left: exactly the threshold
    assert stock_if_all_take(100, 20, cfg) is None  # nothing left: collapse
    assert max_equal_harvest(100, cfg) == 19
    assert max_equal_harvest(3, cfg) == 0
    assert tuple(universalization(100, cfg)) == (10, 100, 19, 10)
    assert tuple(universalization(30, cfg)) == (3, 30, 5, 10)


def test_schedule():
    steps = schedule(CommonsConfig())
    assert len(steps) == 12 + 11 * 3
    assert steps[0] == ("harvest", 1, 0) and steps[1:4] == (("discussion", 1, 1), ("discussion", 1, 2), ("discussion", 1, 3))
    assert steps[-1] == ("harvest", 12, 0)
    assert [p.kind for p in schedule(CommonsConfig(communication=False))] == ["harvest"] * 12
    assert len(schedule(CommonsConfig(discussion_every=3))) == 12 + 3 * 3
    # the shared schedule still gives DayTrader's: discussion after rounds 5, 10, ..., 30 (Table 9: the last one too)
    dt = day_trader_schedule(DayTraderConfig())
    assert len(dt) == 30 + 6 * 3 and dt[5] == ("discussion", 5, 1) and dt[0] == ("decision", 1, 0) and dt[-1] == ("discussion", 30, 3)
    assert len(day_trader_schedule(DayTraderConfig(discussion_after_last=False))) == 30 + 5 * 3


def test_config_validation_and_presets():
    with pytest.raises(ConfigError, match="^n_agents must be from 2 to 100, got 1$"):
        CommonsConfig(n_agents=1)
    with pytest.raises(ConfigError, match="^initial_stock must be from 1 to 100, got 101$"):
        CommonsConfig(initial_stock=101)
    with pytest.raises(ConfigError, match="^collapse_threshold must be from 0 to 3, got 5$"):
        CommonsConfig(initial_stock=3)  # below the collapse threshold
    with pytest.raises(ConfigError, match="^collapse_threshold must be from 0 to 100, got 150$"):
        CommonsConfig(collapse_threshold=150)
    with pytest.raises(ConfigError, match="^universalization_hint must be true or false, got 'yes'$"):
        CommonsConfig(universalization_hint="yes")
    with pytest.raises(ConfigError, match="unknown config key 'capacty' for CommonsConfig. Did you mean 'capacity'"):
        teamenvs.make("commons_v0", capacty=50)
    assert {"baseline", "no_communication", "universalization", "communication_bandwidth"} <= set(PRESETS)
    assert teamenvs.make("commons_v0", preset="universalization").config.universalization_hint is True
    assert teamenvs.make("commons_v0", preset="communication_bandwidth").config.min_steps_between_messages == 5
    assert teamenvs.make("commons_v0", preset="no_communication").config.communication is False
    assert teamenvs.make("commons_v0", n_agents=7).possible_agents[-1] == "fisher_7"


# ---------------------------------------------------------------------- env by hand
def make(**config) -> CommonsEnv:
    return teamenvs.make("commons_v0", **config)


def test_reset_view_and_info():
    env = make()
    obs, infos = env.reset(seed=0)
    assert env.possible_agents == [f"fisher_{i}" for i in range(1, 6)]
    view = infos["fisher_1"]["view"]
    assert (view["month"], view["months"], view["phase"], view["stock"], view["capacity"], view["n_fishers"]) == (1, 12, "harvest", 100, 100, 5)
    assert view["last_month"] is None and view["your_total_catch"] == 0
    assert infos["fisher_1"]["sustainable_share"] == 10
    assert {f.command for f in infos["fisher_1"]["valid_actions"]} == {"harvest", "wait"}
    assert "100 tons of fish" in obs["fisher_1"] and "harvest <amount 0-100>" in obs["fisher_1"]


def test_hint_only_in_observation_when_condition_is_on():
    plain = make()
    obs, infos = plain.reset(seed=0)
    assert infos["fisher_1"]["sustainable_share"] == 10
    assert infos["fisher_1"]["view"]["universalization"] is None
    assert "sustainable" not in obs["fisher_1"] and "without a collapse" not in obs["fisher_1"]
    assert not any("sustainable" in str(k) for k in infos["fisher_1"]["view"])

    hinted = make(preset="universalization")
    obs, infos = hinted.reset(seed=0)
    assert infos["fisher_1"]["sustainable_share"] == 10
    assert infos["fisher_1"]["view"]["universalization"] == {
        "sustainable_share": 10,
        "stock_if_all_take_share": 100,
        "max_equal_harvest": 19,
        "stock_if_all_take_max": 10,
    }
    assert "sustainable share is 10 tons" in obs["fisher_1"]
    assert "the most each can take without a collapse is 19 tons" in obs["fisher_1"]
    # after a month that left 45 tons (regrown to 90) the hint follows the new stock
    obs, *_, infos = hinted.step({"fisher_1": "harvest 15", **{f"fisher_{i}": "harvest 10" for i in range(2, 6)}})
    assert infos["fisher_1"]["sustainable_share"] == 9
    assert infos["fisher_1"]["view"]["universalization"]["sustainable_share"] == 9
    assert "sustainable share is 9 tons" in obs["fisher_2"]


def test_sustainable_month_rewards_and_public_results():
    env = make()
    env.reset(seed=0)
    obs, rewards, terms, truncs, infos = env.step({a: "harvest 10" for a in env.agents})
    assert rewards == {a: 10.0 for a in env.possible_agents}
    assert not any(terms.values()) and not any(truncs.values())
    view = infos["fisher_3"]["view"]
    assert view["phase"] == "discussion" and view["discussion_turn"] == 1 and view["stock"] == 100
    assert view["your_total_catch"] == 10
    assert view["last_month"]["requests"] == {a: 10 for a in env.possible_agents}
    assert view["last_month"]["catches"] == {a: 10 for a in env.possible_agents}
    assert (view["last_month"]["stock_before"], view["last_month"]["remaining"], view["last_month"]["stock_after"]) == (100, 50, 100)
    assert "Month 1: you asked for 10 tons and caught 10 tons." in obs["fisher_3"]
    assert "less than you asked" not in obs["fisher_3"]
    assert "fisher_3 (you) 10/10" in obs["fisher_3"]
    assert {f.command for f in infos["fisher_3"]["valid_actions"]} == {"say", "tell", "wait"}


def test_over_demand_tells_who_got_less():
    env = make(n_agents=4)
    env.reset(seed=0)
    actions = {"fisher_1": "harvest 50", "fisher_2": "harvest 30", "fisher_3": "I will harvest 40 tons", "fisher_4": "wait"}
    obs, rewards, terms, _, infos = env.step(actions)
    assert rewards == {"fisher_1": 42.0, "fisher_2": 25.0, "fisher_3": 33.0, "fisher_4": 0.0}
    assert all(terms.values()) and env.agents == []  # nothing left: collapse
    assert "You got less than you asked (42 of 50)" in obs["fisher_1"]
    assert "You got less than you asked (25 of 30)" in obs["fisher_2"]
    assert any(e["type"] == "short_catch" and e["caught"] == 33 for e in infos["fisher_3"]["events"])
    assert not any(e["type"] == "short_catch" for e in infos["fisher_4"]["events"])
    assert "less than you asked" not in obs["fisher_4"]
    assert infos["fisher_1"]["view"]["phase"] == "over" and "collapsed in month 1" in obs["fisher_1"]


def test_collapse_below_threshold_but_not_at_it():
    env = make(n_agents=2)
    env.reset(seed=0)
    _, rewards, terms, _, infos = env.step({"fisher_1": "harvest 50", "fisher_2": "harvest 45"})
    assert rewards == {"fisher_1": 50.0, "fisher_2": 45.0} and not any(terms.values())
    assert infos["fisher_1"]["view"]["stock"] == 10
    env.reset(seed=0)
    _, rewards, terms, _, _ = env.step({"fisher_1": "harvest 50", "fisher_2": "harvest 46"})
    assert rewards == {"fisher_1": 50.0, "fisher_2": 46.0} and all(terms.values())
    assert env.state()["collapsed"] is True and env.state()["stock"] == 4


def test_env_tie_break_uses_the_seed():
    def winner(seed: int) -> str:
        env = make(n_agents=3)
        env.reset(seed=seed)
        _, rewards, *_ = env.step({a: "harvest 50" for a in env.agents})  # 33 each + 1 leftover ton
        assert sorted(rewards.values()) == [33.0, 33.0, 34.0]
        return max(rewards, key=rewards.get)

    assert winner(3) == winner(3)
    assert len({winner(s) for s in range(20)}) > 1


def test_discussion_phase_rules_and_messages():
    env = make()
    env.reset(seed=0)
    env.step({a: "harvest 10" for a in env.agents})
    obs, rewards, _, _, infos = env.step({"fisher_1": "say let us take 10 each", "fisher_2": "harvest 10"})
    assert rewards == {a: 0.0 for a in env.possible_agents}
    assert infos["fisher_2"]["last_action"]["ok"] is False and infos["fisher_2"]["last_action"]["kind"] == "not_allowed"
    assert "fisher_1: let us take 10 each" in obs["fisher_3"]
    assert infos["fisher_3"]["view"]["new_messages"] == ("fisher_1: let us take 10 each",)
    env.step({})
    obs, *_, infos = env.step({})
    assert infos["fisher_1"]["view"]["phase"] == "harvest" and infos["fisher_1"]["view"]["month"] == 2


def test_no_communication_goes_straight_to_next_month():
    env = make(preset="no_communication")
    env.reset(seed=0)
    _, _, _, _, infos = env.step({a: "harvest 10" for a in env.agents})
    assert infos["fisher_1"]["view"]["phase"] == "harvest" and infos["fisher_1"]["view"]["month"] == 2
    _, rewards, _, _, infos = env.step({"fisher_1": "say hello", **{f"fisher_{i}": "harvest 10" for i in range(2, 6)}})
    assert infos["fisher_1"]["last_action"]["ok"] is False and "communication is off" in infos["fisher_1"]["last_action"]["error"]
    assert rewards["fisher_1"] == 0.0 and rewards["fisher_2"] == 10.0


def test_garbage_actions_never_raise_and_count_as_nothing():
    env = make(n_agents=3)
    env.reset(seed=0)
    _, rewards, terms, _, infos = env.step({"fisher_1": 12345, "fisher_2": "", "fisher_3": "harvest -5"})
    assert rewards == {a: 0.0 for a in env.possible_agents} and not any(terms.values())
    assert all(infos[a]["last_action"]["ok"] is False for a in env.possible_agents)
    assert infos["fisher_1"]["view"]["last_month"]["requests"] == {a: 0 for a in env.possible_agents}


def test_month_event_in_log_and_metrics_from_log():
    env = make(months=2, preset="no_communication")
    with env.recording(EpisodeRecorder()) as recorder:
        env.reset(seed=0)
        env.step({"fisher_1": "harvest 15", **{f"fisher_{i}": "harvest 10" for i in range(2, 6)}})
        env.step({"fisher_1": "harvest 9", "fisher_2": "nonsense", "fisher_3": "wait", "fisher_4": "wait", "fisher_5": "wait"})
        assert env.agents == []
        records = recorder.records
        months = [e for r in records if r["type"] == "step" for e in r["events"] if e["type"] == "month"]
        assert months[0] == {
            "type": "month",
            "text": months[0]["text"],
            "month": 1,
            "stock_before": 100,
            "requests": {"fisher_1": 15, "fisher_2": 10, "fisher_3": 10, "fisher_4": 10, "fisher_5": 10},
            "catches": {"fisher_1": 15, "fisher_2": 10, "fisher_3": 10, "fisher_4": 10, "fisher_5": 10},
            "sustainable_share": 10,
            "remaining": 45,
            "collapsed": False,
            "stock_after": 90,
        }
        assert months[1]["sustainable_share"] == 9 and months[1]["stock_after"] == 100  # 81 left -> capped at 100
        m = commons_metrics(records)
        assert m["survived"] is True and m["survival_time"] == 2
        assert m["gain"] == {"fisher_1": 24, "fisher_2": 10, "fisher_3": 10, "fisher_4": 10, "fisher_5": 10}
        assert m["total_gain"] == 64
        assert m["efficiency"] == pytest.approx(64 / 100)  # max_sustainable_total over 2 months = 2 x 50
        # gini of [10, 10, 10, 10, 24]: 2 * 220 / (5 * 64) - 6 / 5 = 0.175
        assert m["equality"] == pytest.approx(0.825) and m["equality"] == pytest.approx(1 - gini([24, 10, 10, 10, 10]))
        assert m["over_usage_rate"] == pytest.approx(1 / 10)  # only fisher_1's 15 > 10 in month 1; 9 is not > 9
        assert m["invalid_action_rate"] == pytest.approx(1 / 10)
        assert m["total_messages"] == 0 and m["final_stock"] == 100


def test_render_state_and_briefing():
    env = make(render_mode="ansi")
    env.reset(seed=0)
    env.step({a: "harvest 10" for a in env.agents})
    frame = env.render()
    assert "stock 100/100" in frame and "fisher_5" in frame and "10/10" in frame
    state = env.state()
    assert state["total_catch"] == {a: 10 for a in env.possible_agents} and state["stock"] == 100
    text = env.briefing("fisher_2")
    assert "fisher_2" in text and "lake" in text and "tons" in text and "harvest" in text


def test_same_seed_same_log():
    def log(seed: int) -> list:
        env = make(n_agents=3)
        return agents.run_episode(env, agents.make_policies(env, "random", seed=seed), seed=seed).records

    assert log(4) == log(4)


# ---------------------------------------------------------------------- scripted baselines
def run(kind: str, **config):
    env = make(**config)
    return agents.run_episode(env, agents.make_policies(env, kind, seed=0), seed=0)


def test_all_sustainable_survive_at_full_efficiency():
    m = run("sustainable").metrics
    assert m["survived"] is True and m["survival_time"] == 12
    assert m["over_usage_rate"] == 0.0 and m["equality"] == 1.0
    assert m["gain"] == {f"fisher_{i}": 120 for i in range(1, 6)}  # 10 tons x 12 months
    assert m["efficiency"] == pytest.approx(600 / 600)
    assert m["total_messages"] == 11 * 5  # one pitch per fisher per discussion phase
    assert m["invalid_action_rate"] == 0.0


def test_three_sustainable_fishers_leave_some_fish():
    m = run("sustainable", n_agents=3).metrics
    # share floor(100 / 6) = 16 each: 48 taken, 52 left, regrows to 100 every month
    assert m["survival_time"] == 12 and m["total_gain"] == 12 * 48
    assert m["efficiency"] == pytest.approx(576 / 600)


def test_the_sustainable_share_never_collapses_the_lake_whatever_the_threshold():
    """With a collapse threshold above half the stock, "half the lake" would collapse it: the share leaves the threshold
    (100 tons, threshold 60: 8 tons each, 60 left, regrowing to 100), and the hint agents read agrees with itself."""
    m = run("sustainable", collapse_threshold=60).metrics
    assert m["survived"] is True and m["survival_time"] == 12 and m["over_usage_rate"] == 0.0
    assert m["gain"] == {f"fisher_{i}": 8 * 12 for i in range(1, 6)}
    env = make(collapse_threshold=60, universalization_hint=True)
    _, infos = env.reset(seed=0)
    hint = infos["fisher_1"]["view"]["universalization"]
    assert infos["fisher_1"]["sustainable_share"] == hint["sustainable_share"] == hint["max_equal_harvest"] == 8


def test_all_greedy_collapse_in_month_one():
    result = run("greedy")
    m = result.metrics
    assert m["survived"] is False and m["survival_time"] == 1
    assert m["over_usage_rate"] == 1.0
    assert m["gain"] == {f"fisher_{i}": 20 for i in range(1, 6)}  # 100 tons shared five ways
    assert m["efficiency"] == pytest.approx(100 / 600)
    assert result.steps == 1



def test_an_episode_cut_before_the_horizon_has_not_survived_yet():
    """A step cap (the llm-smoke suite's 32 steps are 8 of 12 months) ends an episode that has not collapsed: whether
    the fishery lasts is unknown, so `survived` is None (it said True, and the survival figure drew the team alive
    to the horizon). A collapse before the cap is still a collapse."""
    env = make()
    cut = agents.run_episode(env, agents.make_policies(env, "sustainable", seed=0), seed=0, max_steps=32).metrics
    assert cut["months_played"] == 8 and cut["survival_time"] == 8 and cut["survived"] is None
    greedy = agents.run_episode(env, agents.make_policies(env, "greedy", seed=0), seed=0, max_steps=32).metrics
    assert greedy["survived"] is False and greedy["survival_time"] == 1


def test_efficiency_is_capped_at_one_for_a_team_that_empties_the_lake_at_the_end():
    """GovSim's efficiency, 1 - max(0, benchmark - total) / benchmark, is at most 1. A team that fishes sustainably for
    11 months and takes the whole lake in the 12th catches 650 tons, more than the sustainable 600; it read 1.083 and
    a report declared it more efficient than the sustainable team (the metric's goal is "max")."""
    env = make()
    with env.recording(EpisodeRecorder()) as recorder:
        _, infos = env.reset(seed=0)
        while env.agents:
            view = infos["fisher_1"]["view"]
            amount = 20 if view["month"] == view["months"] else 10  # 5 x 20 = the whole lake in the last month
            _, _, _, _, infos = env.step({a: f"harvest {amount}" if view["phase"] == "harvest" else "wait" for a in env.agents})
    m = commons_metrics(recorder.records)
    assert m["total_gain"] == 11 * 50 + 100 and m["months_played"] == 12
    assert m["efficiency"] == 1.0
    assert m["efficiency"] == run("sustainable").metrics["efficiency"]


def test_efficiency_is_undefined_where_no_catch_is_sustainable():
    """With `regrowth_factor=1` nothing regrows, so the most a sustainable team can take is 0: efficiency was 0.0
    whether the team caught 50 tons or none."""
    for command in ("harvest 10", "wait"):
        env = make(regrowth_factor=1)
        with env.recording(EpisodeRecorder()) as recorder:
            env.reset(seed=0)
            env.step({a: command for a in env.agents})
        m = commons_metrics(recorder.records)
        assert m["efficiency"] is None and m["total_gain"] == (50 if command == "harvest 10" else 0)


def test_default_scripted_is_mimic_and_sustains():
    assert agents.scripted.default_baseline("commons_v0") == "mimic"
    m = run("scripted").metrics
    assert m["survived"] is True and m["total_gain"] == 600


def test_baselines_decide_from_the_view():
    env = make(preset="no_communication")
    obs, infos = env.reset(seed=0)
    policies = {cls: cls(seed=0) for cls in (Sustainable, Greedy, Mimic, Grim)}
    for p in policies.values():
        p.reset("fisher_2", "")
    first = {cls: p.act(obs["fisher_2"], infos["fisher_2"]) for cls, p in policies.items()}
    assert first == {Sustainable: "harvest 10", Greedy: "harvest 100", Mimic: "harvest 10", Grim: "harvest 10"}
    obs, *_, infos = env.step({"fisher_1": "harvest 15", **{f"fisher_{i}": "harvest 10" for i in range(2, 6)}})
    # 45 left -> 90; fisher_1 asked 15 > 10, so grim turns greedy; the mean request was 11
    second = {cls: p.act(obs["fisher_2"], infos["fisher_2"]) for cls, p in policies.items()}
    assert second == {Sustainable: "harvest 9", Greedy: "harvest 90", Mimic: "harvest 11", Grim: "harvest 90"}
    obs, *_, infos = env.step({a: "harvest 9" for a in env.agents})
    assert policies[Grim].act(obs["fisher_2"], infos["fisher_2"]) == "harvest 90"  # grim never forgives
    policies[Grim].reset("fisher_2", "")
    assert policies[Grim].triggered is False


def test_baselines_talk_once_per_discussion():
    env = make()
    env.reset(seed=0)
    obs, *_, infos = env.step({a: "harvest 10" for a in env.agents})
    policy = Sustainable(seed=0)
    policy.reset("fisher_1", "")
    assert policy.act(obs["fisher_1"], infos["fisher_1"]).startswith("say ")
    obs, *_, infos = env.step({})
    assert policy.act(obs["fisher_1"], infos["fisher_1"]) == "wait"


# ---------------------------------------------------------------------- PettingZoo API
@pytest.mark.parametrize("preset", ["baseline", "universalization"])
def test_pettingzoo_api(preset):
    parallel_api_test(make(preset=preset), num_cycles=60)
    parallel_seed_test(lambda: make(preset=preset), num_cycles=20)
    api_test(parallel_to_aec(make(preset=preset)), num_cycles=60)


def test_infos_are_plain_data_and_no_policy_can_change_what_another_reads():
    """Every fisher's view is its own dict; last month's results and the hint are read-only objects (`SharedFacts`)
    that every view of the step holds: scribbling on them is refused, scribbling on one's own view changes nothing
    anyone reads next, and the next step's views hold parts of their own."""
    env = make(universalization_hint=True)
    env.reset(seed=0)
    obs, _, _, _, infos = env.step({a: "harvest 10" for a in env.agents})
    pickle.dumps(infos)
    twin = pickle.loads(pickle.dumps(env))
    clone = copy.deepcopy(env)
    view = infos["fisher_1"]["view"]
    for scribble in (lambda: view["last_month"]["requests"].__setitem__("fisher_2", 99),
                     lambda: view["universalization"].__setitem__("sustainable_share", 99)):
        with pytest.raises(TypeError, match="read-only"):
            scribble()
    assert infos["fisher_2"]["view"]["last_month"] is view["last_month"] and infos["fisher_2"]["view"] is not view
    view["your_total_catch"], view["last_month"] = 99, None  # its own view is the policy's to change
    obs2, _, _, _, infos2 = env.step({a: "wait" for a in env.agents})  # discussion: the same month's results
    again = infos2["fisher_1"]["view"]
    assert again["last_month"] is not infos["fisher_2"]["view"]["last_month"]
    assert again["last_month"]["requests"]["fisher_2"] == 10 and again["universalization"]["sustainable_share"] == 10
    assert again["your_total_catch"] == 10
    assert "fisher_2 10/10" in obs2["fisher_1"] and "fisher_1 (you) 10/10" in obs2["fisher_1"] and "99" not in obs2["fisher_1"]
    for other in (twin, clone):
        assert other.step({a: "wait" for a in other.agents})[0] == obs2
