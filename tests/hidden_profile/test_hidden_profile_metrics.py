"""Hidden Profile's metrics on hand-made logs: vote accuracy, majority, vote changes, and the C.2 mention
rate (a key-fact paraphrase and the standalone letter of the best candidate, both needed)."""

from __future__ import annotations

import pytest

from teamenvs.hidden_profile.materials import shipped_profiles
from teamenvs.hidden_profile.metrics import hidden_profile_metrics, key_facts_surfaced, letter_pattern, mention_rate

AIRLINE = shipped_profiles()["airline_captain"]
AGENTS = ["member_1", "member_2", "member_3"]


def message(sender: str, text: str) -> dict:
    return {"type": "message", "text": f"{sender} sent a message", "sender": sender, "to": None,
            "words": len(text.split()), "message": text}


def log(initial: dict, final: dict, texts: list[tuple[str, str]], invalid: int = 0) -> list[dict]:
    records = [{"type": "header", "env_id": "hidden_profile_v0", "config": {}, "agents": AGENTS},
               {"type": "reset", "step": 0, "agents": {}, "profile": AIRLINE.to_json()}]
    ok = {"ok": True, "command": "wait", "args": {}, "text": "wait"}
    bad = {"ok": False, "kind": "unknown_command", "command": None, "error": "no"}

    def step(n, events, invalid_here=0):
        agents = {a: {"action": bad if i < invalid_here else ok} for i, a in enumerate(AGENTS)}
        return {"type": "step", "step": n, "agents": agents, "events": events}

    records.append(step(1, [{"type": "votes", "phase": "initial", "votes": initial, "best": "C"}], invalid))
    records += [step(2 + i, [message(s, t)]) for i, (s, t) in enumerate(texts)]
    records.append(step(2 + len(texts), [{"type": "votes", "phase": "final", "votes": final, "best": "C"}]))
    return records


def test_votes_accuracy_majority_and_changes():
    m = hidden_profile_metrics(log({"member_1": "A", "member_2": "A", "member_3": "C"},
                                   {"member_1": "C", "member_2": "A", "member_3": "C"}, []))
    assert m["final_vote_accuracy"] == pytest.approx(2 / 3) and m["majority_correct"] is True
    assert m["initial_vote_accuracy"] == pytest.approx(1 / 3)
    assert m["vote_change_rate"] == pytest.approx(1 / 3)
    assert m["mention_rate"] == 0.0 and m["mean_message_words"] == 0.0 and m["total_messages"] == 0
    m = hidden_profile_metrics(log({"member_1": None, "member_2": "B", "member_3": "C"},
                                   {"member_1": "A", "member_2": "B", "member_3": None}, [], invalid=2))
    assert m["final_vote_accuracy"] == 0.0 and m["majority_correct"] is False
    assert m["vote_change_rate"] == pytest.approx(2 / 3)  # abstaining is a vote of its own
    assert m["invalid_action_rate"] == pytest.approx(2 / 6)  # 2 of the 6 actions of two steps



def test_a_vote_the_episode_never_reached_is_undefined_not_wrong():
    """An episode cut before the final vote (a step cap, a budget): the final measures and the change rate are
    undefined. Counting the missing votes as votes for nobody gave `vote_change_rate` 1.0 to a team that never
    changed its mind, and `final_vote_accuracy` 0."""
    cut = log({"member_1": "C", "member_2": "C", "member_3": "A"}, {}, [("member_1", "C is decisive in a crisis")])[:-1]
    m = hidden_profile_metrics(cut)
    assert m["initial_vote_accuracy"] == pytest.approx(2 / 3)
    assert m["final_vote_accuracy"] is None and m["majority_correct"] is None and m["vote_change_rate"] is None
    assert m["mention_rate"] == 1.0 and m["total_messages"] == 1  # what the episode did reach is still measured
    none = hidden_profile_metrics(cut[:2])  # not even the initial vote
    assert none["initial_vote_accuracy"] is None and none["vote_change_rate"] is None


def test_the_step_loop_cut_before_the_final_vote_reports_no_change_of_mind():
    import agents
    import teamenvs

    env = teamenvs.make("hidden_profile_v0")
    policies = agents.make_policies(env, "shared_only", seed=0)  # never changes its vote
    assert agents.run_episode(env, policies, seed=0).metrics["vote_change_rate"] == 0.0
    cut = agents.run_episode(env, agents.make_policies(env, "shared_only", seed=0), seed=0, max_steps=20).metrics
    assert cut["vote_change_rate"] is None and cut["final_vote_accuracy"] is None


MENTIONS = [
    ("C makes quick decisions when it counts", True),  # paraphrase of 'quick and correct decisions' + letter
    ("Candidate C strength: Stays calm and focused under heavy stress.", True),
    ("I heard C's crew atmosphere is great", True),  # C's, a standalone letter
    ("(C) is very conscientious", True),
    ("c makes quick decisions", False),  # the letter must be the capital C
    ("Cabin crew make quick decisions", False),  # no standalone letter
    ("A makes quick decisions", False),  # the wrong candidate's letter
    ("C is the best, trust me", False),  # the letter without a key fact
    ("C has the most flight hours", False),  # a fact, but not a key one
    ("C notices details others miss and cares for passengers", True),
    # talk of the vote is not the clue of quick and correct decisions ('decide' is the vote command)
    ("I think we should decide on C now", False),
    ("Our decision should be C", False),
    ("C is decisive in a crisis", True),
    ("C decides quickly", True),
    ("C's decisions were sound every time", True),
]


@pytest.mark.parametrize("text,hit", MENTIONS)
def test_mention_rate_matches_a_key_fact_paraphrase_and_the_letter(text, hit):
    assert mention_rate([text], AIRLINE) == float(hit)


def test_mention_rate_and_key_facts_over_a_conversation():
    texts = [("member_1", t) for t, _ in MENTIONS]
    m = hidden_profile_metrics(log({a: "A" for a in AGENTS}, {a: "C" for a in AGENTS}, texts))
    assert m["mention_rate"] == pytest.approx(8 / 15)
    assert m["total_messages"] == 15
    assert m["mean_message_words"] == pytest.approx(sum(len(t.split()) for t, _ in MENTIONS) / 15)
    # decisions, stress, atmosphere, conscientious, details, concern: 6 of the 7 key facts (not 'technical')
    assert key_facts_surfaced([t for t, _ in MENTIONS], AIRLINE) == pytest.approx(6 / 7)
    assert m["final_vote_accuracy"] == 1.0 and m["vote_change_rate"] == 1.0
    assert m["messages_per_agent"] == {"member_1": 15, "member_2": 0, "member_3": 0}


def test_the_letter_pattern_stands_alone():
    c = letter_pattern("C")
    assert c.search("vote C.") and c.search("C,") and c.search("'C'")
    assert not c.search("CEO") and not c.search("ABC") and not c.search("C3")


def test_the_article_a_is_not_candidate_a():
    """Found by review: with A the best candidate (`school_principal`), "A good principal resolves conflicts fairly; I
    think B is our pick." counted as a mention of A, and the mention rate of two messages about B was 1.0."""
    from teamenvs.hidden_profile.materials import shipped_profiles

    a = letter_pattern("A")
    for article in ("A good principal", "I vote B. A strong communicator matters.", "(A strong record)", "ok\nA fair point"):
        assert not a.search(article), article
    for candidate in ("Candidate A is best", "A is best", "I pick A because", "A has the most experience", "A, clearly",
                      "A's record", "I like A.", "A and B both", "vote A"):
        assert a.search(candidate), candidate
    principal = shipped_profiles()["school_principal"]
    assert principal.best == "A"
    assert mention_rate(["A good principal resolves conflicts fairly; I think B is our pick.",
                         "I vote B. A strong communicator matters."], principal) == 0.0


def test_metrics_need_the_profile_of_the_reset_line():
    records = log({}, {}, [])
    del records[1]["profile"]
    with pytest.raises(ValueError, match="no reset line with the profile"):
        hidden_profile_metrics(records)
