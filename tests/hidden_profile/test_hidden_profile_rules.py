"""Hidden Profile's rules, hand-checked: the schedule by step, vote refusals, majorities, rewards."""

from __future__ import annotations

from teamenvs.hidden_profile.config import HiddenProfileConfig
from teamenvs.hidden_profile.materials import Fact, strict_leader, support
from teamenvs.hidden_profile.rules import (
    DISCUSSION,
    FINAL_VOTE,
    INITIAL_VOTE,
    majority,
    schedule,
    vote_refusal,
    vote_rewards,
)
from teamenvs.hidden_profile.view import discussed_facts, fact_message, favourite
from teamenvs.hidden_profile.view import support as item_support


def test_schedule_is_initial_vote_discussion_final_vote():
    steps = schedule(HiddenProfileConfig())
    assert len(steps) == 32
    assert steps[0].kind == INITIAL_VOTE and steps[-1].kind == FINAL_VOTE
    assert [s.kind for s in steps[1:-1]] == [DISCUSSION] * 30
    assert [s.turn for s in steps[1:-1]] == list(range(1, 31))
    assert [s.kind for s in schedule(HiddenProfileConfig(discussion_turns=1))] == [INITIAL_VOTE, DISCUSSION, FINAL_VOTE]


def test_votes_are_refused_outside_the_votes_and_for_unknown_candidates():
    assert vote_refusal("A", ("A", "B", "C"), INITIAL_VOTE) is None
    assert vote_refusal("C", ("A", "B", "C"), FINAL_VOTE) is None
    assert "this is the discussion" in vote_refusal("A", ("A", "B", "C"), DISCUSSION)
    assert "no candidate D" in vote_refusal("D", ("A", "B", "C"), FINAL_VOTE)


def test_majority_needs_more_than_half_of_all_members():
    assert majority({"m1": "C", "m2": "C", "m3": "A"}) == "C"
    assert majority({"m1": "C", "m2": "B", "m3": "A"}) is None
    assert majority({"m1": "C", "m2": None, "m3": None}) is None  # abstentions count as members
    assert majority({"m1": "A", "m2": "A", "m3": "C", "m4": "C"}) is None
    assert majority({}) is None


def test_only_a_final_vote_for_the_best_candidate_pays():
    assert vote_rewards({"m1": "C", "m2": "A", "m3": None}, "C") == {"m1": 1.0, "m2": 0.0, "m3": 0.0}


def test_support_and_favourites():
    items = (("A", "strength", "x"), ("A", "strength", "y"), ("A", "weakness", "z"), ("B", "strength", "w"))
    assert item_support(items, ("A", "B", "C")) == {"A": 1, "B": 1, "C": 0}
    assert favourite(items, ("A", "B", "C")) == "A"
    facts = (Fact("1", "A", 1, 0, "x"), Fact("2", "B", -1, 1, "y"), Fact("3", "B", 1, 2, "z"), Fact("4", "B", 1, 0, "w"))
    assert support(facts, ("A", "B")) == {"A": 1, "B": 1}
    assert favourite((("A", "strength", "x"), ("B", "strength", "y")), ("A", "B")) == "A"  # a tie: the earlier letter
    assert favourite((("B", "strength", "y"),), ("A", "B")) == "B"
    assert strict_leader({"A": 2, "B": 2}) is None and strict_leader({"A": 1, "B": 2}) == "B"


def test_fact_messages_read_back_from_chat_lines():
    item = ("C", "strength", "Makes quick and correct decisions in emergencies.")
    line = fact_message(item)
    assert line == "Candidate C strength: Makes quick and correct decisions in emergencies."
    found = discussed_facts((f"member_2: {line}", "member_3 (to you): Candidate A weakness: Skips checklists.",
                             "you -> everyone: Candidate B strength: Punctual.", "member_2: I like C", "garbage"))
    assert found == {item, ("A", "weakness", "Skips checklists."), ("B", "strength", "Punctual.")}
