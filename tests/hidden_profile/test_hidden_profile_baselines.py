"""Hidden Profile's baselines: `share_unique` pools every unique fact and reaches the best candidate,
`shared_only` repeats shared facts and does not, on every shipped profile, generated ones and both
CollabSim conditions; a baseline reads its view only."""

from __future__ import annotations

import pytest

import teamenvs
from agents import run_episode
from teamenvs.core.metrics import message_events
from teamenvs.core.policy import make_policies
from teamenvs.core.recorder import read_log
from teamenvs.hidden_profile.materials import PROFILE_IDS

ENV = "hidden_profile_v0"
CONDITIONS = ["baseline", "communication_bandwidth", *PROFILE_IDS[1:], "generated", "generated+communication_bandwidth"]


def metrics(preset: str, kind: str, seed: int) -> dict:
    env = teamenvs.make(ENV, preset=preset)
    return run_episode(env, make_policies(env, kind, seed=seed), seed=seed).metrics


@pytest.mark.parametrize("preset", CONDITIONS)
def test_share_unique_reaches_the_best_candidate_and_shared_only_does_not(preset):
    for seed in range(10):
        share = metrics(preset, "share_unique", seed)
        assert share["final_vote_accuracy"] == 1.0 and share["majority_correct"] is True
        assert share["initial_vote_accuracy"] == 0.0 and share["vote_change_rate"] == 1.0
        assert share["key_facts_surfaced"] == 1.0 and share["mention_rate"] > 0
        assert share["invalid_action_rate"] == 0.0
        shared = metrics(preset, "shared_only", seed)
        assert shared["final_vote_accuracy"] == 0.0 and shared["majority_correct"] is False
        assert shared["vote_change_rate"] == 0.0
        assert shared["mention_rate"] == 0.0 and shared["key_facts_surfaced"] == 0.0
        assert shared["total_messages"] > 0 and shared["invalid_action_rate"] == 0.0


def test_shared_only_says_shared_facts_only_and_share_unique_says_every_unique_fact(tmp_path):
    for kind in ("shared_only", "share_unique"):
        env = teamenvs.make(ENV)
        result = run_episode(env, make_policies(env, kind, seed=0), seed=0, log_dir=tmp_path, log_name=kind)
        profile = env.unwrapped.profile
        said = " | ".join(e["message"] for e in message_events(read_log(result.log_path)))
        unique = [f.text for f in profile.facts if f.unique]
        shared = [f.text for f in profile.facts if not f.unique]
        if kind == "shared_only":
            assert not any(t in said for t in unique) and any(t in said for t in shared)
        else:
            assert all(t in said for t in unique)


def test_random_and_mixed_teams_run():
    m = metrics("baseline", "random", 0)
    assert 0.0 <= m["final_vote_accuracy"] <= 1.0 and m["total_messages"] > 0
    env = teamenvs.make(ENV)
    # one member keeps its unique facts to itself: the others never hear them, so the pooled winner may differ
    mixed = run_episode(env, make_policies(env, "share_unique,share_unique,shared_only", seed=0), seed=0).metrics
    assert mixed["key_facts_surfaced"] < 1.0
