"""`hidden_profile_v0` stepped by hand: the phases and their refusals, votes private until the end,
unique facts private unless told, the bandwidth condition, seeded dealing, rewards and the replay frame."""

from __future__ import annotations

import pytest

import teamenvs
from teamenvs.core.config import ConfigError
from teamenvs.hidden_profile.materials import shipped_profiles

ENV = "hidden_profile_v0"
MEMBERS = ("member_1", "member_2", "member_3")


def play(env, first=None, talk=None, last=None):
    """Step the initial vote, the discussion (talk: step -> actions) and the final vote; returns the last infos."""
    env.reset(seed=0)
    _, _, _, _, infos = env.step(first or {})
    for turn in range(env.unwrapped.config.discussion_turns):
        _, _, _, _, infos = env.step((talk or {}).get(turn, {}))
    return env.step(last or {})


def test_votes_only_in_the_votes_and_messages_only_in_the_discussion():
    env = teamenvs.make(ENV, preset="private_messages")  # (tell)
    _, infos = env.reset(seed=0)
    assert [f.command for f in infos["member_1"]["valid_actions"]] == ["decide", "wait"]
    _, _, _, _, infos = env.step({"member_1": "say I like C", "member_2": "decide Candidate C", "member_3": "decide Z"})
    assert "'say' is not allowed now: this is the initial vote" in infos["member_1"]["last_action"]["error"]
    assert infos["member_2"]["last_action"]["ok"] and infos["member_2"]["last_action"]["text"] == "decide Candidate C"
    assert "unknown candidate 'Z'" in infos["member_3"]["last_action"]["error"]
    assert [f.command for f in infos["member_1"]["valid_actions"]] == ["wait", "say", "tell"]
    _, _, _, _, infos = env.step({"member_1": "decide A", "member_2": "say hello", "member_3": "tell member_1 psst"})
    assert "votes are cast only in the initial and the final vote; this is the discussion" in infos["member_1"]["last_action"]["error"]
    assert infos["member_2"]["last_action"]["ok"] and infos["member_3"]["last_action"]["ok"]
    assert "member_3 (to you): psst" in infos["member_1"]["view"]["new_messages"]
    assert "member_3" not in " ".join(infos["member_2"]["view"]["new_messages"])


def test_votes_stay_private_until_the_end_then_everyone_sees_them():
    env = teamenvs.make(ENV)
    first = {"member_1": "decide A", "member_2": "decide B", "member_3": "decide C"}
    env.reset(seed=0)
    obs, _, _, _, infos = env.step(first)
    assert infos["member_1"]["view"]["your_initial_vote"] == "A"
    assert "Your initial vote: A (private until the end)." in obs["member_1"]
    for a in MEMBERS:  # nobody reads another member's vote before the end
        view = infos[a]["view"]
        assert view["results"] is None
        others = [v for m, v in first.items() if m != a]
        assert all(f"decide {v}" not in obs[a] and f"vote: {v}" not in obs[a] for v in [x.split()[-1] for x in others])
    for _ in range(30):
        obs, rewards, terms, _, infos = env.step({})
        assert all(r == 0.0 for r in rewards.values())
        assert infos["member_2"]["view"]["results"] is None
    obs, rewards, terms, _, infos = env.step({"member_1": "decide C", "member_2": "decide c", "member_3": "wait"})
    assert all(terms.values()) and env.agents == []
    assert rewards == {"member_1": 1.0, "member_2": 1.0, "member_3": 0.0}
    results = infos["member_3"]["view"]["results"]
    assert results == {"initial": {"member_1": "A", "member_2": "B", "member_3": "C"},
                       "final": {"member_1": "C", "member_2": "C", "member_3": None}, "best": "C", "majority": "C"}
    assert "Final votes: member_1 C; member_2 C; member_3 (you) no vote." in obs["member_3"]
    assert "the best candidate was C; the group majority chose C" in obs["member_3"]


def _unique_texts(holder):
    return [f.text for f in shipped_profiles()["airline_captain"].facts if f.holder == holder]


def test_an_agent_never_reads_another_member_s_unique_facts_unless_told():
    env = teamenvs.make(ENV, preset="private_messages")  # (tell)
    obs, infos = env.reset(seed=3)
    for k, a in enumerate(MEMBERS, start=1):
        for other in (1, 2, 3):
            for text in _unique_texts(other):
                assert (text in obs[a]) == (other == k)
                assert any(item[2] == text for item in infos[a]["view"]["document"]) == (other == k)
    secret = _unique_texts(2)[0]
    env.step({})
    obs, _, _, _, infos = env.step({"member_2": f"say Candidate C strength: {secret}"})
    assert secret in obs["member_1"] and secret in obs["member_3"]
    obs, _, _, _, infos = env.step({"member_2": f"tell member_3 {_unique_texts(2)[1]}"})
    assert _unique_texts(2)[1] in obs["member_3"] and _unique_texts(2)[1] not in obs["member_1"]


def test_documents_are_dealt_in_a_seeded_order_that_hides_which_facts_are_unique():
    env = teamenvs.make(ENV)
    _, a = env.reset(seed=1)
    _, b = env.reset(seed=1)
    assert a["member_1"]["view"]["document"] == b["member_1"]["view"]["document"]
    orders, positions = set(), set()
    for seed in range(12):
        _, infos = env.reset(seed=seed)
        doc = infos["member_1"]["view"]["document"]
        assert [c for c, _, _ in doc] == sorted(c for c, _, _ in doc)  # grouped by candidate
        orders.add(tuple(t for _, _, t in doc))
        positions.add(next(i for i, (_, _, t) in enumerate(doc) if t == _unique_texts(1)[0]))
    assert len(orders) > 6
    assert len(positions) > 1  # a unique fact is not always in the same place


def test_bandwidth_refuses_messages_over_15_words_and_tells_the_sender():
    # CollabSim B.3: "limited to a maximum of 15 words"; its controller refuses a longer message (it was cut here before)
    env = teamenvs.make(ENV, preset="communication_bandwidth")
    env.reset(seed=0)
    env.step({})
    long = " ".join(f"w{i}" for i in range(16))
    _, _, _, _, infos = env.step({"member_1": f"say {long}"})
    assert infos["member_1"]["last_action"]["ok"] is False
    assert "it has 16 words, and a message may hold at most 15 words" in infos["member_1"]["last_action"]["error"]
    _, _, _, _, infos = env.step({"member_1": "say " + " ".join(f"w{i}" for i in range(15))})
    assert infos["member_1"]["last_action"]["ok"] is True
    assert infos["member_2"]["view"]["new_messages"] == ("member_1: " + " ".join(f"w{i}" for i in range(15)),)
    assert "at most 15 words" in env.briefing("member_2")


@pytest.mark.parametrize("preset", ["baseline", "communication_bandwidth", "school_principal", "generated"])
def test_the_paper_presets_are_a_group_chat_refusing_tell_with_a_reason(preset):
    # Table 10: "Communication Level: group chat" (found by review: the Table 1 presets had allowed private tells)
    env = teamenvs.make(ENV, preset=preset)
    env.reset(seed=0)
    env.step({})
    _, _, _, _, infos = env.step({"member_1": "tell member_2 hi"})
    assert "there are no private messages in this condition" in infos["member_1"]["last_action"]["error"]
    assert "tell" not in infos["member_2"]["valid_actions"][0].usage and "tell" not in env.briefing("member_1").split("Commands")[-1]


def test_a_vote_followed_by_another_candidate_is_refused_not_the_article_a():
    env = teamenvs.make(ENV)
    env.reset(seed=0)
    situation = env.unwrapped._situation("member_1")
    for vote in ("decide C or a tie", "decide B / a compromise", "decide C."):
        assert env.unwrapped.commands.parse(vote, situation).text == f"decide {vote.split()[1].rstrip('.')}", vote
    for hedge in ("decide A or C", "decide A, B, or C", "decide B C"):
        assert "'decide' takes one candidate" in env.unwrapped.commands.parse(hedge, situation).error, hedge


def test_the_private_messages_condition_allows_tell():
    env = teamenvs.make(ENV, preset="private_messages")
    env.reset(seed=0)
    env.step({})
    _, _, _, _, infos = env.step({"member_1": "tell member_2 hi"})
    assert infos["member_1"]["last_action"]["ok"] is True


def test_profiles_and_group_sizes_are_config():
    assert teamenvs.make(ENV, preset="school_principal").unwrapped.config.profile == "school_principal"
    with pytest.raises(ConfigError, match="written for 3 members"):
        teamenvs.make(ENV, n_agents=4)
    env = teamenvs.make(ENV, preset="generated", n_agents=4, candidates=4)
    _, infos = env.reset(seed=5)
    assert env.agents == [f"member_{k}" for k in range(1, 5)]
    assert infos["member_1"]["view"]["candidates"] == ("A", "B", "C", "D")
    env.reset(seed=6)
    other = env.unwrapped.profile
    env.reset(seed=5)
    assert env.unwrapped.profile != other  # a new profile per seed
    assert env.unwrapped.profile.id.startswith("generated-")


def test_frame_and_state_show_the_whole_task():
    env = teamenvs.make(ENV, render_mode="ansi")
    env.reset(seed=0)
    env.step({"member_1": "decide A"})
    key = next(f for f in shipped_profiles()["airline_captain"].key_facts() if f.holder == 1)
    env.step({"member_1": f"say C is great: {key.text.lower()}"})
    frame = env.unwrapped.frame()
    assert frame["kind"] == "hidden_profile" and frame["best"] == "C"
    assert frame["members"]["member_1"]["initial"] == "A"
    surfaced = {f["id"] for f in frame["members"]["member_1"]["facts"] if f["surfaced"]}
    assert surfaced == {key.id}
    assert env.unwrapped.state()["support_full"] == {"A": 1, "B": 2, "C": 6}
    assert "member_1   votes A -> no vote" in env.render()
