"""`shape_factory_v0` end to end: busy producers are not asked, refusals reach the agent with their
reason, each view holds only what its agent may know (the dashboard only in its condition), the
bandwidth condition spaces messages, the session's length, the briefing and the replay frame."""

from __future__ import annotations

import json

import pytest

import teamenvs
from teamenvs.shape_factory import PARADIGM


def started(seed: int = 0, **config):
    env = teamenvs.make("shape_factory_v0", **config)
    observations, infos = env.reset(seed=seed)
    return env, observations, infos


def waits(env, **actions):
    return {a: actions.get(a, "wait") for a in env.agents}


def test_declaration():
    assert "shape_factory_v0" in teamenvs.list_envs()
    assert PARADIGM.max_episode_steps == 90 and PARADIGM.gym_id == "teamenvs/ShapeFactory-v0"


def test_a_producer_is_busy_for_three_steps_and_gets_its_shape():
    env, _, infos = started()
    m = env.unwrapped.market
    spec = m.specialty["agent_1"]
    _, rewards, _, _, infos = env.step(waits(env, agent_1=f"produce {spec}"))
    assert rewards["agent_1"] == -15.0 and rewards["agent_2"] == 0.0
    for _ in range(2):
        assert infos["agent_1"]["needs_action"] is False and infos["agent_1"]["valid_actions"] == ()
        assert infos["agent_1"]["view"]["producing"]["shape"] == spec
        _, _, _, _, infos = env.step(waits(env))
        assert infos["agent_1"]["last_action"]["ignored"] is True
    view = infos["agent_1"]["view"]
    assert infos["agent_1"]["needs_action"] is True and view["producing"] is None
    assert view["inventory"][spec] == 1 and view["money"] == 185
    assert f"Your {spec} is ready." in view["events"]


def test_a_refused_action_says_why_in_the_next_observation():
    env, _, infos = started()
    observations, _, _, _, infos = env.step(waits(env, agent_1="fulfill order 1", agent_2="accept offer 1"))
    assert infos["agent_1"]["last_action"]["kind"] == "rejected"
    assert "order 1 still needs" in observations["agent_1"]
    assert "'accept offer' is not allowed now: no offer is addressed to you now" in infos["agent_2"]["last_action"]["error"]
    _, _, _, _, infos = env.step(waits(env, agent_1="produce hexagon"))
    assert "shape must be one of circle, square, triangle" in infos["agent_1"]["last_action"]["error"]


def test_a_trade_between_two_agents_end_to_end():
    env, _, infos = started(seed=1)
    m = env.unwrapped.market
    seller = next(a for a in env.agents if m.specialty[a] == "circle")
    buyer = next(a for a in env.agents if m.specialty[a] != "circle")
    _, _, _, _, infos = env.step(waits(env, **{seller: "produce circle"}))
    env.step(waits(env))
    _, _, _, _, infos = env.step(waits(env))
    observations, _, _, _, infos = env.step(waits(env, **{seller: f"offer {buyer} 1 circle for $28"}))
    offer = infos[buyer]["view"]["offers_to_you"][0]
    assert offer["from"] == seller and offer["give"] == ("circle", 1) and offer["get"] == ("$", 28)
    assert f"offer {offer['offer']} from {seller}: you get 1 circle and give $28" in observations[buyer]
    assert infos[seller]["view"]["free_inventory"]["circle"] == 0 and infos[seller]["view"]["inventory"]["circle"] == 1
    _, rewards, _, _, infos = env.step(waits(env, **{buyer: f"accept offer {offer['offer']}"}))
    assert rewards[seller] == 28.0 and rewards[buyer] == -28.0
    assert infos[buyer]["view"]["inventory"]["circle"] == 1 and infos[seller]["view"]["your_offers"] == ()


def test_offer_ids_say_nothing_of_offers_between_others():
    """Offers are private to their two participants, and so is how many there were. The ids came from one counter for
    the whole market, so agent_1's offer was "offer 1" or "offer 2" as agent_2 had or had not privately offered
    agent_3 a step before: its text, events, view, valid actions and catalogue commands told it. Ids are now numbered
    per pair of participants (`rules.new_offer_id`)."""
    def twin(agent_2_offers: bool):
        env = teamenvs.make("shape_factory_v0", obs_type="both", action_type="discrete")
        env.reset(seed=0)
        m = env.unwrapped.market
        env.step(waits(env, **({"agent_2": f"offer agent_3 $28 for 1 {m.shapes[0]}"} if agent_2_offers else {})))
        out = []
        for step in range(3):  # agent_1 offers agent_4, then agent_4 offers agent_1; each sees the other's
            actions = {0: {"agent_1": f"offer agent_4 $28 for 1 {m.shapes[1]}"}, 1: {"agent_4": f"offer agent_1 $30 for 1 {m.shapes[2]}"}}
            observations, rewards, _, _, infos = env.step(waits(env, **actions.get(step, {})))
            catalogue = [env.action_text("agent_1", i) for i in range(env.action_space("agent_1").n)]
            out.append((observations["agent_1"]["text"], json.dumps(infos["agent_1"], default=str), rewards["agent_1"], catalogue))
        return out, [o.id for o in m.offers.values()]

    (alone, ids_alone), (beside, ids_beside) = twin(False), twin(True)
    assert alone == beside
    assert len(ids_beside) == len(ids_alone) + 1 and len(set(ids_beside)) == len(ids_beside)  # unique in the session
    assert ids_alone == [6 * (6 * 0 + 0) + 3 + 1, 6 * (6 * 0 + 3) + 0 + 1]  # agent_1's first to agent_4, and back


def test_views_hold_only_what_their_agent_may_know():
    env, observations, infos = started(seed=2)
    m = env.unwrapped.market
    a1, a2, a3 = "agent_1", "agent_2", "agent_3"
    env.step(waits(env, **{a1: f"offer {a2} $37 for 1 {m.specialty[a2]}", a3: f"tell {a2} psst, only for you"}))
    observations, _, _, _, infos = env.step(waits(env))
    view = infos["agent_4"]["view"]
    assert view["dashboard"] is None and view["offers_to_you"] == () and view["your_offers"] == ()
    text = json.dumps(view, default=str) + observations["agent_4"]
    assert "psst" not in text and "$37" not in text and "offer 1" not in text
    for other in ("agent_1", "agent_2", "agent_3", "agent_5", "agent_6"):  # no peer's specialty or money
        assert f"{other}: {m.specialty[other]}" not in observations["agent_4"]
    assert set(view) >= {"money", "inventory", "orders", "specialty"} and view["specialty"] == m.specialty["agent_4"]
    assert "psst" in observations[a2] and infos[a2]["view"]["offers_to_you"][0]["from"] == a1
    assert infos[a1]["view"]["your_offers"][0]["to"] == a2


def test_the_awareness_dashboard_shows_peers_only_in_its_condition():
    env, observations, infos = started(seed=2, preset="awareness_dashboard")
    board = infos["agent_1"]["view"]["dashboard"]
    assert set(board) == {"agent_2", "agent_3", "agent_4", "agent_5", "agent_6"}
    m = env.unwrapped.market
    assert board["agent_2"] == {"money": 200, "produced": 0, "specialty": m.specialty["agent_2"], "orders_fulfilled": 0, "orders": 3}
    assert f"agent_2: {m.specialty['agent_2']} specialist, $200, made 0, orders 0/3" in observations["agent_1"]


def test_the_bandwidth_condition_allows_one_message_every_six_steps():
    env, _, infos = started(preset="communication_bandwidth")
    _, _, _, _, infos = env.step(waits(env, agent_1="say I make things"))
    assert infos["agent_1"]["last_action"]["ok"] is True
    for _ in range(5):
        assert not any(f.command == "say" for f in infos["agent_1"]["valid_actions"])
        _, _, _, _, infos = env.step(waits(env, agent_1="say again"))
        assert "bandwidth limit: one message every 6 steps" in infos["agent_1"]["last_action"]["error"]
    assert any(f.command == "say" for f in infos["agent_1"]["valid_actions"])


def test_group_size_presets_deal_their_shapes_and_orders():
    for preset, n, shapes, orders in (("group_size_8", 8, 4, 4), ("group_size_10", 10, 5, 5)):
        env, _, infos = started(preset=preset)
        view = infos["agent_1"]["view"]
        assert len(env.agents) == n and len(view["shapes"]) == shapes and len(view["orders"]) == orders


def test_the_session_lasts_ninety_steps_unless_every_order_is_fulfilled():
    env, _, _ = started()
    steps, terminated = 0, {}
    while env.agents:
        _, _, terminated, truncated, _ = env.step(waits(env))
        steps += 1
    assert steps == 90 and all(terminated.values())


def test_messages_wait_for_a_busy_reader():
    env, _, infos = started()
    m = env.unwrapped.market
    env.step(waits(env, agent_1=f"produce {m.specialty['agent_1']}"))
    env.step(waits(env, agent_2="tell agent_1 hello while you work"))
    _, _, _, _, infos = env.step(waits(env))
    assert infos["agent_1"]["needs_action"] and any("hello while you work" in line for line in infos["agent_1"]["view"]["new_messages"])


def test_briefing_names_the_specialty_orders_and_commands():
    env, _, _ = started()
    base = env.unwrapped
    text = base.briefing("agent_1")
    m = base.market
    assert f"Your specialty shape: {m.specialty['agent_1']}" in text and "Your orders: 1." in text
    assert "$15" in text and "$40" in text and "$60" in text and "90 steps" in text
    assert "offer <recipient>" in text and "fulfill order <order 1-3>" in text


def test_frame_and_state_are_the_whole_market():
    env, _, _ = started()
    frame = env.unwrapped.frame()
    assert frame["kind"] == "shape_factory" and set(frame["agents"]) == set(env.possible_agents)
    assert json.loads(json.dumps(frame)) == frame
    env = teamenvs.make("shape_factory_v0", render_mode="ansi")
    env.reset(seed=0)
    assert "Shape Factory after 0 of 90 steps" in env.render()


@pytest.mark.parametrize("preset", ["no_communication", "group_size_4"])
def test_other_conditions(preset):
    env, _, infos = started(preset=preset)
    commands = {f.command for f in infos["agent_1"]["valid_actions"]}
    if preset == "no_communication":
        assert "say" not in commands and "tell" not in commands
    else:
        assert len(env.agents) == 4 and len(infos["agent_1"]["view"]["shapes"]) == 2
