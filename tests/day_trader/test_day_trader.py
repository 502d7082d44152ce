"""`day_trader_v0`: the pure rules (`settle_round`, `schedule`) with hand-computed cases, and the env.

Rules (CollabSim App. B.2): individual investments come back doubled; group investments
are pooled, tripled and cut into three shares, one to every trader (with 3 traders: split
equally; `pool_shares=None` splits among all traders at every size); from round 2 the round's
top earner(s) get $90, split as floor(90 / winners). Money is exact (`int` while whole, else `Fraction`).

Env-level tests step the env by hand with action strings and check rewards, the balances
in the next observation, rejections and their reasons, message routing in discussion
phases, the bandwidth conditions, information isolation with `show_balances=False`, the
`info` schema, `state()` and `render()`.
"""

from __future__ import annotations

import copy
import pickle
from fractions import Fraction
from typing import Any

import pytest

import teamenvs
from teamenvs.core.config import ConfigError
from teamenvs.core.rounds import Phase
from teamenvs.day_trader.config import DayTraderConfig
from teamenvs.day_trader.rules import (
    GROUP,
    INDIVIDUAL,
    WAIT,
    Choice,
    affordable_max,
    money_json,
    schedule,
    settle_round,
)

BASE = DayTraderConfig()
EVEN = DayTraderConfig(pool_shares=None)  # the pool split among all traders, whatever their number


def balances(*agents: str, money: int = 200) -> dict[str, Fraction]:
    return {a: Fraction(money) for a in agents}


ABC = ("a", "b", "c")


# ---------------------------------------------------------------------- settle_round
def test_all_group_50_in_round_1():
    out = settle_round(balances(*ABC), {a: Choice(GROUP, 50) for a in ABC}, 1, BASE)
    assert out.pool == 150
    assert out.pool_share == 150  # 450 / 3
    assert out.earnings == {a: 100 for a in ABC}
    assert out.bonus == {}
    assert out.balances == {a: 300 for a in ABC}  # 200 - 50 + 450/3


def test_one_individual_among_two_group_investors():
    choices = {"a": Choice(INDIVIDUAL, 50), "b": Choice(GROUP, 50), "c": Choice(GROUP, 50)}
    out = settle_round(balances(*ABC), choices, 1, BASE)
    assert out.pool == 100 and out.pool_share == 100
    assert out.balances == {"a": 350, "b": 250, "c": 250}  # a: 200 + 50 + 100; b, c: 200 - 50 + 100
    assert out.earnings == {"a": 150, "b": 50, "c": 50}
    assert out.bonus == {}  # no bonus in round 1


def test_missing_choice_means_wait():
    out = settle_round(balances(*ABC), {"a": Choice(GROUP, 30)}, 1, BASE)
    assert out.balances == {"a": 200 - 30 + 30, "b": 230, "c": 230}


def test_bonus_from_round_2_goes_to_the_top_earner():
    choices = {"a": Choice(INDIVIDUAL, 50), "b": Choice(GROUP, 50), "c": Choice(GROUP, 50)}
    out = settle_round(balances(*ABC), choices, 2, BASE)
    assert out.bonus == {"a": 90}
    assert out.balances == {"a": 350 + 90, "b": 250, "c": 250}
    # the same round 1 gives no bonus
    assert settle_round(balances(*ABC), choices, 1, BASE).bonus == {}


def test_two_way_tie_splits_the_bonus():
    choices = {"a": Choice(INDIVIDUAL, 50), "b": Choice(INDIVIDUAL, 50), "c": Choice(WAIT)}
    out = settle_round(balances(*ABC), choices, 2, BASE)
    assert out.bonus == {"a": 45, "b": 45}
    assert out.balances == {"a": 295, "b": 295, "c": 200}


def test_three_way_tie_splits_the_bonus():
    out = settle_round(balances(*ABC), {a: Choice(INDIVIDUAL, 100) for a in ABC}, 7, BASE)
    assert out.bonus == {"a": 30, "b": 30, "c": 30}
    assert out.balances == {a: 330 for a in ABC}


def test_four_way_tie_floors_the_share():
    agents = ("a", "b", "c", "d")
    out = settle_round(balances(*agents), {}, 2, BASE)  # everyone waits: all earn 0, all tie
    assert out.bonus == {a: 22 for a in agents}  # floor(90 / 4)
    assert out.balances == {a: 222 for a in agents}


def test_bonus_uses_earnings_not_balances():
    # a is richer but b earns more this round: b gets the bonus
    start = {"a": Fraction(1000), "b": Fraction(100), "c": Fraction(100)}
    out = settle_round(start, {"a": Choice(GROUP, 15), "b": Choice(INDIVIDUAL, 15)}, 3, BASE)
    assert out.bonus == {"b": 90}
    assert out.balances == {"a": 1000 - 15 + 15, "b": 100 + 15 + 15 + 90, "c": 115}


def test_config_changes_the_rules():
    config = DayTraderConfig(individual_multiplier=3, group_multiplier=2, bonus=10, bonus_from_round=5)
    choices = {"a": Choice(INDIVIDUAL, 20), "b": Choice(GROUP, 30)}
    out = settle_round(balances(*ABC), choices, 4, config)
    assert out.pool_share == 20 and out.balances == {"a": 260, "b": 190, "c": 220} and out.bonus == {}
    assert settle_round(balances(*ABC), choices, 5, config).bonus == {"a": 10}


def test_fractional_pool_share_is_exact():
    agents = tuple(f"t{i}" for i in range(6))
    out = settle_round(balances(*agents), {"t0": Choice(GROUP, 15)}, 1, EVEN)
    assert out.pool == 15
    assert out.pool_share == Fraction(45, 6) and isinstance(out.pool_share, Fraction)
    assert out.balances["t0"] == 200 - 15 + Fraction(15, 2)
    assert out.balances["t1"] == Fraction(415, 2)
    assert money_json(out.pool_share) == 7.5


def test_balances_stay_exact_over_many_rounds():
    agents = tuple(f"t{i}" for i in range(7))
    state = balances(*agents, money=10**6)
    rounds = 500
    for r in range(1, rounds + 1):
        state = settle_round(state, {"t0": Choice(GROUP, 16)}, r, EVEN).balances
    share = Fraction(48, 7)  # not a finite binary or decimal fraction
    # t0 earns share - 16 < 0 each round; the 6 others tie on share and split 90 -> 15 each from round 2
    assert state["t0"] == 10**6 + rounds * (share - 16)
    for a in agents[1:]:
        assert state[a] == 10**6 + rounds * share + (rounds - 1) * 15
    assert all(isinstance(v, Fraction) for v in state.values())
    assert sum(state.values()) == 7 * 10**6 + rounds * 32 + (rounds - 1) * 90  # pool gain 48-16, bonus 90


def test_whole_dollars_stay_int_and_equal_fraction_money():
    # money stays `int` while every share is whole (the presets' pool split), and an `int` balance gives the
    # same outcome, to the cent and in every view's float, as the same balance held as a `Fraction`
    whole = {"a": 200, "b": 200, "c": 417}
    for round_no, choices in enumerate(({"a": Choice(GROUP, 50), "b": Choice(INDIVIDUAL, 15)}, {}, {"c": Choice(GROUP, 16)}), 1):
        out = settle_round(whole, choices, round_no, BASE)
        exact = settle_round({a: Fraction(v) for a, v in whole.items()}, choices, round_no, BASE)
        assert out == exact
        assert all(type(v) is int for v in (out.pool_share, *out.earnings.values(), *out.balances.values()))
        assert [money_json(v) for v in out.balances.values()] == [money_json(v) for v in exact.balances.values()]
        whole = out.balances
    # a share that is not whole makes the money a Fraction, still exact
    out = settle_round(whole, {"a": Choice(GROUP, 16)}, 4, DayTraderConfig(pool_shares=None, n_agents=3, group_multiplier=2))
    assert out.pool_share == Fraction(32, 3) and type(out.balances["b"]) is Fraction


def test_money_json_is_money_rounded_to_six_decimals():
    # whole amounts skip `round` (its decimal text both ways is the slow part): the same float, bit for bit, as
    # rounding, for ints, Fractions and floats, whole or not, small or past 2**53, and for -0.0
    import math
    import random
    import struct

    def bits(x: float) -> bytes:
        return struct.pack("<d", x)

    draw = random.Random(3)
    values: list[Any] = [0, -0.0, 0.0, 7, -7, 2**53 + 1, 10**30, Fraction(32, 3), Fraction(-5, 2), Fraction(10**20, 7),
                         1234.5678901, 0.1234564999, -2.0000004, 1e22, 5e-7, math.inf]
    values += [draw.randint(-10**18, 10**18) for _ in range(2000)] + [Fraction(draw.randint(-10**6, 10**6), draw.randint(1, 999)) for _ in range(2000)]
    values += [draw.uniform(-1e7, 1e7) for _ in range(2000)] + [float(draw.randint(-10**6, 10**6)) for _ in range(2000)]
    for v in values:
        expected = round(v.numerator / v.denominator if type(v) is Fraction else float(v), 6)
        assert bits(money_json(v)) == bits(expected), v


def test_dollars_are_the_same_text_cached_or_not():
    from teamenvs.day_trader.view import dollars

    # zero first, so a cache holding 0.0 and -0.0 as one key would give -0.0 the wrong text
    for v in (0.0, -0.0, 0, -0.0, 1234.5, 1234.5, 1234, 1234.0, -5.0, 7.125, 1e20, float("nan"), float("inf"), True):
        assert dollars(v) == f"${v:,.2f}", v
    assert dollars(-0.0) == "$-0.00" and dollars(1234.5) == "$1,234.50"


def test_affordable_max():
    assert affordable_max(Fraction(250), BASE) == 100
    assert affordable_max(Fraction(81, 2), BASE) == 40
    assert affordable_max(Fraction(14), BASE) == 14


# ---------------------------------------------------------------------- schedule
def test_schedule_baseline():
    steps = schedule(BASE)
    assert len(steps) == 48  # 30 decisions + 6 discussions x 3 turns (CollabSim Table 9: after rounds 5, 10, ..., 30)
    assert sum(p.kind == "decision" for p in steps) == 30
    discussions = [p for p in steps if p.kind == "discussion"]
    assert sorted({p.round for p in discussions}) == [5, 10, 15, 20, 25, 30]
    assert [p.turn for p in discussions[:3]] == [1, 2, 3]
    assert steps[:8] == (
        Phase("decision", 1), Phase("decision", 2), Phase("decision", 3), Phase("decision", 4),
        Phase("decision", 5), Phase("discussion", 5, 1), Phase("discussion", 5, 2), Phase("discussion", 5, 3),
    )
    assert steps[-4:] == (Phase("decision", 30), Phase("discussion", 30, 1), Phase("discussion", 30, 2), Phase("discussion", 30, 3))
    last = schedule(DayTraderConfig(discussion_after_last=False))
    assert len(last) == 45 and last[-1] == Phase("decision", 30)  # the condition without the last discussion


def test_schedule_without_communication():
    steps = schedule(DayTraderConfig(communication=False))
    assert steps == tuple(Phase("decision", r) for r in range(1, 31))
    assert len(schedule(DayTraderConfig(discussion_turns=0))) == 30


# ---------------------------------------------------------------------- env helpers
def make(**config: Any):
    env = teamenvs.make("day_trader_v0", **config)
    observations, infos = env.reset(seed=0)
    return env, observations, infos


def everyone(env, action: str, **special: str) -> dict[str, str]:
    return {a: special.get(a, action) for a in env.agents}


def walk(value: Any):
    """Every leaf value of a nested view."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from walk(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from walk(v)
    else:
        yield value


# ---------------------------------------------------------------------- env: rewards and text
def test_env_all_group_round_rewards_and_observations():
    env, obs, infos = make()
    assert env.agents == ["trader_1", "trader_2", "trader_3"]
    assert "Your money: $200.00. You may invest $15-$100." in obs["trader_1"]
    obs, rewards, terms, truncs, infos = env.step(everyone(env, "invest group 50"))
    assert rewards == {a: 100.0 for a in env.agents}
    assert not any(terms.values()) and not any(truncs.values())
    for a in env.agents:
        assert "Your money: $300.00." in obs[a]
        assert "Balances: trader_1 $300.00; trader_2 $300.00; trader_3 $300.00." in obs[a]
        assert "Round 1: you chose group 50; you earned $100.00." in obs[a]
        assert "Your last action: invest group 50 (accepted)." in obs[a]
        assert infos[a]["view"]["money"] == 300.0


def test_env_defector_gets_the_bonus_from_round_2():
    env, _, _ = make()
    defect = {"trader_1": "invest individual 50"}
    obs, rewards, *_ = env.step(everyone(env, "invest group 50", **defect))
    assert rewards == {"trader_1": 150.0, "trader_2": 50.0, "trader_3": 50.0}
    assert "Your money: $350.00." in obs["trader_1"]
    obs, rewards, *_ = env.step(everyone(env, "invest group 50", **defect))
    assert rewards == {"trader_1": 240.0, "trader_2": 50.0, "trader_3": 50.0}
    assert "plus a $90 top-earner bonus" in obs["trader_1"]
    assert "Bonus: trader_1 +$90." in obs["trader_2"]
    assert "Your money: $590.00." in obs["trader_1"]
    assert env.state()["balances"] == {"trader_1": 590.0, "trader_2": 300.0, "trader_3": 300.0}


def test_env_exact_money_with_six_traders():
    env, _, _ = make(preset="group_size_6+split_among_all")
    obs, rewards, *_ = env.step(everyone(env, "wait", trader_1="invest group 15"))
    assert rewards["trader_2"] == 7.5 and rewards["trader_1"] == -7.5
    assert env.state()["balances_exact"]["trader_2"] == "415/2"
    assert "Your money: $207.50." in obs["trader_2"]


def test_say_in_decision_phase_is_rejected_with_the_reason():
    env, _, _ = make()
    obs, rewards, _, _, infos = env.step(everyone(env, "wait", trader_2="say let's all invest group"))
    last = infos["trader_2"]["last_action"]
    assert last["ok"] is False and last["kind"] == "not_allowed" and last["command"] == "say"
    assert "'say' is not allowed now: messages can be sent only in discussion phases" in last["error"]
    assert "decision phase" in last["error"]
    assert f"Your last action was REJECTED: {last['error']}" in obs["trader_2"]
    assert "let's all invest" not in obs["trader_1"] and "let's all invest" not in obs["trader_3"]
    assert rewards == {a: 0.0 for a in env.agents}  # treated as a wait


def test_rejection_reasons_are_not_stale_in_later_rounds():
    # valid actions and reasons are cached per situation: a later round must not read an earlier one's text
    env, _, _ = make(rounds=4, discussion_every=2, discussion_turns=1)
    errors = []
    for _ in range(4):
        round_no = env.state()["round"]  # the round of the step being taken
        obs, _, _, _, infos = env.step(everyone(env, "wait", trader_1="say hi", trader_2="invest group 20"))
        errors.append((round_no, infos))
    for round_no, infos in errors:
        for agent in ("trader_1", "trader_2"):
            last = infos[agent]["last_action"]
            if not last["ok"]:
                for other in range(1, 5):
                    if other != round_no:
                        assert f"round {other}" not in last["error"], (round_no, last["error"])
    # the discussion step (the 3rd) rejected the investment, the decision steps the message
    assert errors[2][1]["trader_2"]["last_action"]["command"] == "invest group"
    assert "investing happens in decision phases" in errors[2][1]["trader_2"]["last_action"]["error"]
    assert errors[3][1]["trader_1"]["last_action"]["kind"] == "not_allowed"


@pytest.mark.parametrize("config", [{"communication": False}, {"discussion_every": 0}, {"discussion_turns": 0}])
def test_say_without_communication_names_the_condition(config):
    # without discussions the refusal had said "only in discussion phases (after every 0 rounds)" (found by review)
    env, _, _ = make(**config)
    obs, _, _, _, infos = env.step(everyone(env, "wait", trader_1="say hi"))
    assert "communication is off in this condition" in infos["trader_1"]["last_action"]["error"]
    assert "communication is off in this condition" in obs["trader_1"] and "every 0" not in obs["trader_1"]


def test_investing_more_than_you_have_is_rejected():
    env, obs, infos = make(starting_money=40)
    assert "You may invest $15-$40." in obs["trader_1"]
    assert [f.usage for f in infos["trader_1"]["valid_actions"]][:2] == [
        "invest individual <amount 15-40>",
        "invest group <amount 15-40>",
    ]
    obs, rewards, _, _, infos = env.step(everyone(env, "wait", trader_1="invest group 50"))
    last = infos["trader_1"]["last_action"]
    assert last["kind"] == "not_allowed"
    assert "amount must be from 15 to 40 now (you have $40.00) (got 50)" in last["error"]
    assert last["error"] in obs["trader_1"]
    assert rewards["trader_1"] == 0.0 and env.state()["balances"]["trader_1"] == 40.0


def test_too_poor_to_invest():
    env, obs, infos = make(starting_money=10)
    assert "You cannot afford an investment this round." in obs["trader_1"]
    assert [f.command for f in infos["trader_1"]["valid_actions"]] == ["wait"]
    assert infos["trader_1"]["view"]["can_invest"] is None
    obs, _, _, _, infos = env.step(everyone(env, "wait", trader_1="invest individual 15"))
    error = infos["trader_1"]["last_action"]["error"]
    assert "you have $10.00, less than the minimum investment of $15" in error
    assert error in obs["trader_1"]


def test_invest_during_discussion_is_rejected():
    env, _, _ = make(rounds=2, discussion_every=1, discussion_turns=2)
    env.step(everyone(env, "wait"))
    obs, _, _, _, infos = env.step(everyone(env, "wait", trader_3="invest group 20"))
    error = infos["trader_3"]["last_action"]["error"]
    assert "'invest group' is not allowed now: investing happens in decision phases" in error
    assert "discussion" in error
    assert error in obs["trader_3"]


# ---------------------------------------------------------------------- env: messaging
def test_messages_in_discussion_reach_the_others_next_step():
    env, _, _ = make(rounds=2, discussion_every=1, discussion_turns=2, private_messages=True)
    obs, *_ = env.step(everyone(env, "invest group 50"))
    assert "discussion after round 1/2 (turn 1/2)" in obs["trader_1"]
    obs, _, _, _, infos = env.step(
        everyone(env, "wait", trader_1="say let us all invest group 100", trader_2="tell trader_3 keep it between us")
    )
    assert "New messages: trader_1: let us all invest group 100 | trader_2 (to you): keep it between us" in obs["trader_3"]
    assert "New messages: trader_1: let us all invest group 100" in obs["trader_2"]
    assert "keep it between us" not in obs["trader_1"]  # a tell reaches its recipient only
    assert all("keep it between us" not in str(leaf) for leaf in walk(infos["trader_1"]["view"]))
    assert "you -> everyone: let us all invest group 100" in obs["trader_1"]
    assert infos["trader_2"]["view"]["new_messages"] == ("trader_1: let us all invest group 100",)
    # next step: nothing new, but the conversation is still shown in the discussion phase
    obs, *_ = env.step(everyone(env, "wait"))
    assert "New messages" not in obs["trader_3"]
    # the decision phase is next: recent conversation is not repeated there
    assert "decision phase" in obs["trader_3"] and "Recent conversation" not in obs["trader_3"]


def test_message_sent_in_the_last_discussion_turn_is_read_in_the_decision_step():
    env, _, _ = make(rounds=2, discussion_every=1, discussion_turns=1)
    env.step(everyone(env, "wait"))
    obs, *_ = env.step(everyone(env, "wait", trader_2="say group 100 now"))
    assert "round 2/2, decision phase" in obs["trader_1"]
    assert "New messages: trader_2: group 100 now" in obs["trader_1"]


def test_tell_to_unknown_trader_and_to_self():
    env, _, _ = make(rounds=2, discussion_every=1, discussion_turns=2, private_messages=True)
    env.step(everyone(env, "wait"))
    obs, _, _, _, infos = env.step(everyone(env, "wait", trader_1="tell trader_9 hi", trader_2="tell trader_2 hi"))
    assert "unknown recipient 'trader_9'" in infos["trader_1"]["last_action"]["error"]
    assert "Known: trader_2, trader_3" in infos["trader_1"]["last_action"]["error"]
    # an agent's own name is not among its recipients
    assert "unknown recipient 'trader_2'" in infos["trader_2"]["last_action"]["error"]
    assert infos["trader_2"]["last_action"]["error"] in obs["trader_2"]
    assert "New messages" not in obs["trader_3"]  # nothing was sent


def test_bandwidth_rejects_a_second_message_in_the_same_discussion():
    env, _, _ = make(preset="communication_bandwidth+private_messages", rounds=2, discussion_every=1, discussion_turns=3)
    env.step(everyone(env, "wait"))
    obs, _, _, _, infos = env.step(everyone(env, "wait", trader_1="say first"))
    assert infos["trader_1"]["last_action"]["ok"] is True
    assert [f.command for f in infos["trader_1"]["valid_actions"]] == ["wait"]
    assert [f.command for f in infos["trader_2"]["valid_actions"]] == ["wait", "say", "tell"]
    obs, _, _, _, infos = env.step(everyone(env, "wait", trader_1="say second"))
    last = infos["trader_1"]["last_action"]
    assert last["ok"] is False and last["kind"] == "not_allowed"
    assert "bandwidth limit: one message every 5 steps; your last message was at step 1, the next is allowed at step 6" in last["error"]
    assert last["error"] in obs["trader_1"]
    assert "second" not in obs["trader_2"]


def test_max_words_refuses_a_longer_message_and_tells_the_sender():
    env, _, _ = make(rounds=2, discussion_every=1, discussion_turns=2, max_words=3)
    env.step(everyone(env, "wait"))
    obs, _, _, _, infos = env.step(everyone(env, "wait", trader_1="say one two three four five"))
    assert "it has 5 words, and a message may hold at most 3 words" in obs["trader_1"]
    assert infos["trader_1"]["last_action"]["ok"] is False
    assert "one two" not in obs["trader_2"]


# ---------------------------------------------------------------------- env: information isolation
def test_show_balances_false_hides_other_traders_money():
    env, obs, infos = make(show_balances=False)
    assert "Balances:" not in obs["trader_1"]
    obs, _, _, _, infos = env.step(everyone(env, "invest group 50", trader_2="invest individual 50"))
    assert env.state()["balances"] == {"trader_1": 250.0, "trader_2": 350.0, "trader_3": 250.0}
    for agent in ("trader_1", "trader_3"):
        assert "Your money: $250.00." in obs[agent]  # own money stays
        assert "Balances:" not in obs[agent]
        assert "350" not in obs[agent]
        view = infos[agent]["view"]
        assert view["public"]["balances"] is None
        assert view["money"] == 250.0
        assert 350.0 not in list(walk(view))
    assert "Your money: $350.00." in obs["trader_2"]
    assert "250" not in obs["trader_2"]
    # with the default condition the same step shows everyone's balances
    env, _, _ = make()
    obs, *_ = env.step(everyone(env, "invest group 50", trader_2="invest individual 50"))
    assert "trader_2 $350.00" in obs["trader_1"]


# ---------------------------------------------------------------------- env: info, state, render, end
def test_info_schema():
    env, _, infos = make()
    for a in env.agents:
        info = infos[a]
        assert {"view", "valid_actions", "needs_action", "last_action", "events"} <= set(info)
        assert info["needs_action"] is True
        assert info["last_action"] is None and info["events"] == []
        assert [f.command for f in info["valid_actions"]] == ["invest individual", "invest group", "wait"]
    _, _, _, _, infos = env.step(everyone(env, "invest group 20", trader_1="nonsense"))
    assert infos["trader_1"]["last_action"]["kind"] == "unknown_command"
    assert infos["trader_2"]["last_action"] == {"ok": True, "command": "invest group", "args": {"amount": 20}, "text": "invest group 20"}
    assert infos["trader_2"]["events"][0]["type"] == "round_result"


def test_missing_action_is_an_error_the_agent_reads():
    env, _, _ = make()
    obs, _, _, _, infos = env.step({"trader_1": "wait"})
    last = infos["trader_2"]["last_action"]
    assert last["kind"] == "missing" and "no action was received from you" in last["error"]
    assert last["error"] in obs["trader_2"]


def test_state_and_render():
    env = teamenvs.make("day_trader_v0", render_mode="ansi")
    env.reset(seed=0)
    env.step(everyone(env, "invest group 50", trader_3="invest individual 40"))
    state = env.state()
    assert state["step"] == 1 and state["phase"] == "decision" and state["round"] == 2
    assert state["balances"] == {"trader_1": 250.0, "trader_2": 250.0, "trader_3": 340.0}
    frame = env.render()
    assert frame.startswith("DayTrader step 1/48 | round 2 | decision")
    assert "$340.00" in frame and "last: individual 40" in frame and "last: group 50" in frame
    assert teamenvs.make("day_trader_v0").render() is None


def test_episode_ends_after_the_schedule():
    env, _, _ = make(rounds=3, communication=False)
    for _ in range(3):
        assert env.agents
        obs, rewards, terms, truncs, infos = env.step(everyone(env, "invest individual 100"))
    assert all(terms.values()) and not any(truncs.values())
    assert env.agents == []
    assert "DayTrader is over after 3 rounds." in obs["trader_1"]
    assert infos["trader_1"]["view"]["phase"] == "over"
    # 200 + 3*100 + 2 rounds of a 3-way tied bonus (30 each)
    assert env.state()["balances"]["trader_1"] == 560.0
    assert env.step({"trader_1": "wait"}) == ({}, {}, {}, {}, {})  # stepping a finished episode is a no-op


def test_briefing_states_the_rules_and_the_commands():
    env, _, _ = make(preset="communication_bandwidth", max_words=20)
    text = env.briefing("trader_1")
    assert "You are trader_1, one of 3 traders" in text
    assert "multiplied by 2" in text and "multiplied by 3" in text and "$90 bonus" in text
    assert "a message may hold at most 20 words" in text and "one message every 5 steps" in text
    assert "invest group <amount 15-100>" in text and "ACTION: <command>" in text
    assert "no communication" in make(communication=False)[0].briefing("trader_2")


def test_money_in_a_rejection_reason_is_current():
    # $47.50 then $47.00: same affordable maximum (47), but the reason must quote the money now
    env, _, _ = make(n_agents=6, starting_money=40, bonus=0, communication=False, pool_shares=None)
    env.step(everyone(env, "wait", trader_2="invest group 15"))  # pool 15 -> 7.5 to each
    assert env.state()["balances_exact"]["trader_1"] == "95/2"
    env.step(everyone(env, "wait", trader_1="invest group 16", trader_2="invest group 15"))  # 47.5 - 16 + 15.5
    assert env.state()["balances_exact"]["trader_1"] == "47"
    obs, _, _, _, infos = env.step(everyone(env, "wait", trader_1="invest group 60"))
    error = infos["trader_1"]["last_action"]["error"]
    assert "amount must be from 15 to 47 now (you have $47.00) (got 60)" in error
    assert error in obs["trader_1"]


def test_own_choice_is_marked_for_the_reader_only():
    env, _, _ = make(n_agents=11)
    obs, *_ = env.step(everyone(env, "invest group 20", trader_10="invest individual 30"))
    assert obs["trader_1"].count("(you)") == 1 and "trader_1 (you): group 20" in obs["trader_1"]
    assert "trader_10: individual 30" in obs["trader_1"]
    assert obs["trader_10"].count("(you)") == 1 and "trader_10 (you): individual 30" in obs["trader_10"]
    assert "trader_1: group 20" in obs["trader_10"]


def test_step_needs_a_dict_of_actions():
    env = teamenvs.make("day_trader_v0")
    env.reset(seed=0)
    with pytest.raises(TypeError, match="dict agent -> action string, got list"):
        env.step(["invest group 50"])
    assert env.step_count == 0  # nothing was applied


def test_config_validation_names_the_key_and_its_range():
    with pytest.raises(ConfigError, match="^n_agents must be from 2 to 100, got 1$"):
        DayTraderConfig(n_agents=1)
    with pytest.raises(ConfigError, match="^max_investment must be from 50 to 1000000000000000000, got 20$"):
        DayTraderConfig(min_investment=50, max_investment=20)
    with pytest.raises(ConfigError, match="^show_balances must be true or false, got 'yes'$"):
        DayTraderConfig(show_balances="yes")


def test_infos_are_plain_data_and_no_policy_can_change_what_another_reads():
    """Every trader's view is its own dict; the public part (last round, balances) is one read-only object per round
    (`SharedFacts`), held by every trader's view: scribbling on it is refused, scribbling on one's own view changes
    nothing anyone reads next, and a copy of it is a plain dict to change."""
    env, _, _ = make(discussion_every=1)
    obs, _, _, _, infos = env.step(everyone(env, "invest group 50", trader_2="invest individual 30"))
    pickle.dumps(infos)
    twin = pickle.loads(pickle.dumps(env))
    clone = copy.deepcopy(env)
    view = infos["trader_1"]["view"]
    public = view["public"]
    for scribble in (lambda: public["last_round"]["choices"].__setitem__("trader_2", "group 100"),
                     lambda: public["balances"].__setitem__("trader_2", 0.0), lambda: public.update(balances=None)):
        with pytest.raises(TypeError, match="read-only"):
            scribble()
    mine = dict(public["balances"])
    mine["trader_2"] = 0.0  # a copy is the policy's own
    view["money"], view["public"] = 0.0, None  # and so is its view
    assert infos["trader_2"]["view"]["public"] is public and infos["trader_2"]["view"] is not view
    obs2, _, _, _, infos2 = env.step(everyone(env, "wait"))  # discussion: the same public results
    again = infos2["trader_1"]["view"]["public"]
    assert again["last_round"]["choices"]["trader_2"] == "individual 30" and again["balances"]["trader_2"] == 330.0
    assert infos2["trader_1"]["view"]["money"] == 250.0
    assert "trader_2: individual 30" in obs2["trader_1"] and "trader_2 $330.00" in obs2["trader_1"]
    assert "Your money: $250.00." in obs2["trader_1"]
    for other in (twin, clone):
        assert other.step(everyone(other, "wait"))[0] == obs2


# ---------------------------------------------------------------------- readings of the paper (issue 17)
def test_paper_group_sizes_cut_the_tripled_pool_into_three_shares():
    # Table 3's 6- and 9-trader wealth needs it (tests/day_trader/test_wealth_scale.py)
    env, _, _ = make(preset="group_size_6")
    obs, rewards, *_ = env.step(everyone(env, "invest group 100"))
    assert rewards == {a: 500.0 for a in env.agents}  # pool 600, tripled 1,800, a third (600) to each of 6
    assert "group pool $600 (tripled: $1800, $600.00 to each trader)" in obs["trader_1"]
    text = env.briefing("trader_1")
    assert "every one of the 6 traders, whether they invested or not, gets a third of it" in text
    assert "each pooled dollar pays every trader $1.00" in text
    # Table 9's wording, kept as a condition: split among all six
    env, _, _ = make(preset="group_size_6+split_among_all")
    _, rewards, *_ = env.step(everyone(env, "invest group 100"))
    assert rewards == {a: 200.0 for a in env.agents}
    assert "split equally among all 6 traders" in env.briefing("trader_1")
    # with 3 traders both readings are the same game
    assert settle_round(balances(*ABC), {a: Choice(GROUP, 70) for a in ABC}, 3, BASE) == settle_round(
        balances(*ABC), {a: Choice(GROUP, 70) for a in ABC}, 3, EVEN)


def test_the_amount_range_follows_the_config():
    env, obs, infos = make(min_investment=5, max_investment=500, starting_money=1000)
    assert "You may invest $5-$500." in obs["trader_1"]
    assert "invest group <amount 5-500>" in env.briefing("trader_1")
    _, rewards, _, _, infos = env.step(everyone(env, "invest group 300", trader_2="invest individual 5"))
    assert infos["trader_1"]["last_action"]["ok"] and infos["trader_2"]["last_action"]["ok"]
    assert rewards["trader_2"] == 5 + 600  # the gain on 5 doubled, and a third of the pool of 600 tripled
    _, _, _, _, infos = env.step(everyone(env, "wait", trader_1="invest group 501", trader_2="invest group 4"))
    assert "from 5 to 500" in infos["trader_1"]["last_action"]["error"]
    assert "from 5 to 500" in infos["trader_2"]["last_action"]["error"]


def test_the_multipliers_are_worded_from_the_config():
    env, _, _ = make(individual_multiplier=3, group_multiplier=4)
    text = env.briefing("trader_1")
    assert "comes back to you tripled" in text and "pooled, quadrupled and" in text
    assert "doubled" not in text
    obs, *_ = env.step(everyone(env, "invest group 30"))
    assert "group pool $90 (quadrupled: $360, $120.00 to each trader)" in obs["trader_1"]
    assert "tripled" not in obs["trader_1"]


def test_discussion_is_broadcast_in_the_paper_presets():
    for preset in ("baseline", "communication_bandwidth", "group_size_6", "group_size_9"):
        env, _, _ = make(preset=preset, rounds=2, discussion_every=1)
        assert "'tell" not in env.briefing("trader_1") and "there are no private messages" in env.briefing("trader_1")
        env.step(everyone(env, "wait"))
        obs, _, _, _, infos = env.step(everyone(env, "wait", trader_1="tell trader_2 just between us"))
        assert [f.command for f in infos["trader_3"]["valid_actions"]] == ["wait", "say"]
        last = infos["trader_1"]["last_action"]
        assert last["kind"] == "not_allowed" and "every message is broadcast to everyone" in last["error"]
        assert "just between us" not in obs["trader_2"]
    env, _, _ = make(preset="private_messages", rounds=2, discussion_every=1)
    assert "'tell' one person" in env.briefing("trader_1") and "tell <recipient> <message>" in env.briefing("trader_1")
    env.step(everyone(env, "wait"))
    obs, *_ = env.step(everyone(env, "wait", trader_1="tell trader_2 just between us"))
    assert "trader_1 (to you): just between us" in obs["trader_2"]


def test_public_copy_is_a_deep_copy_sharing_nothing_mutable():
    """The render memo keeps `public_copy` of a view's public part: equal to a deep copy, and no dict it holds is the view's."""
    from teamenvs.day_trader.view import public_copy
    from teamenvs.testing import _mutable_ids

    env = teamenvs.make("day_trader_v0", show_balances=True)
    _, infos = env.reset(seed=0)
    seen_round = False
    for _ in range(12):
        _, _, _, _, infos = env.step({a: "invest group 40" for a in env.agents})
        public = infos["trader_1"]["view"]["public"]
        copied = public_copy(public)
        assert copied == copy.deepcopy(public)
        assert not _mutable_ids(copied) & _mutable_ids(public)
        seen_round |= public["last_round"] is not None and public["balances"] is not None
    assert seen_round


def test_pool_size_is_averaged_over_the_rounds_that_had_a_pool():
    """CollabSim Table 3 reports a $50 pool beside 1.8% cooperation: its "average group pool size" is the mean over
    rounds whose pool was not empty; `group_pool_per_round` keeps the literal per-round mean beside it."""
    from teamenvs.core.recorder import EpisodeRecorder
    from teamenvs.day_trader.metrics import day_trader_metrics

    env = teamenvs.make("day_trader_v0")
    pooled = {2: {"trader_1": "invest group 50"}, 7: {"trader_1": "invest group 30", "trader_2": "invest group 20"}}
    with env.recording(EpisodeRecorder()) as recorder:
        env.reset(seed=0)
        decisions = 0
        while env.agents:
            actions = {a: "wait" for a in env.agents}
            if env.phase.kind == "decision":
                decisions += 1
                if decisions in pooled:  # two rounds with a pool of $50 each, one investor beside each group investor
                    actions = {a: pooled[decisions].get(a, "invest individual 15") for a in env.agents}
            env.step(actions)
    m = day_trader_metrics(recorder.records)
    assert m["rounds_played"] == 30
    assert m["mean_group_pool"] == 50  # (50 + 50) / the 2 rounds with a pool
    assert m["group_pool_per_round"] == pytest.approx(100 / 30)
    assert m["cooperation_rate"] == 0.5  # 3 group investments of the 6 made
    assert m["collabsim_group_pool"] == 25  # CollabSim's released analysis: the distinct round totals, $0 and $50


def test_collabsim_pool_size_is_the_mean_of_the_distinct_round_totals():
    """CollabSim's released analysis keeps a round's pool total only if no earlier round had it, the empty pool's 0
    among them (a reviewer's case: 20 rounds at $300, 5 at $100, 5 at $0 give 133.3 there, 260 as the mean of pools)."""
    from teamenvs.day_trader.metrics import day_trader_metrics

    pools = [300] * 20 + [100] * 5 + [0] * 5
    records = [{"type": "header", "agents": ["trader_1"], "config": {"starting_money": 200}}]
    records += [{"type": "step", "step": i + 1, "agents": {}, "events": [{"type": "round", "pool": pool, "balances": {"trader_1": 200},
                                                            "choices": {"trader_1": {"kind": "group" if pool else "wait"}}}]}
                for i, pool in enumerate(pools)]
    m = day_trader_metrics(records)
    assert m["collabsim_group_pool"] == pytest.approx(400 / 3) and m["mean_group_pool"] == 260
