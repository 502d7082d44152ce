"""Scripted job fair baselines: honest seekers give the right teams, boastful ones spoil them, both read only their view.

The expected behaviour (MetaAgents 5.3): with honest seekers the believing recruiter
hires exactly its team, proposes the standard workflow and assigns every step, so every
metric holds on S1-S4 and every agent is rewarded; boastful seekers claim every skill
area, so the redundant seeker gets hired (false positives) and hires are misplaced, and
success falls in every scenario. Honest seekers apply only where they fit, boastful ones
as widely as allowed. The baselines decide from `view` and `valid_actions` alone; a large
generated fair runs end to end; random agents finish their episodes and rarely succeed.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import agents
import teamenvs
from teamenvs.job_fair.baselines import BoastfulSeeker, JobFairAgent

SCENARIOS = ("S1", "S2", "S3", "S4")
METRICS = ("company_identification", "identification", "workflow", "assignment", "overall_success")


def run(scenario: str, seed: int, policy: str = "honest", **config):
    env = teamenvs.make("job_fair_v0", scenario=scenario, **config)
    result = agents.run_episode(env, agents.make_policies(env, policy, seed=seed), seed=seed, max_steps=2_000)
    assert not env.agents  # the episode ended by itself
    return env.unwrapped, result


def events(result, kind: str):
    return [e for r in result.records if r.get("type") == "step" for e in r["events"] if e.get("type") == kind]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_honest_agents_succeed_on_every_scenario(scenario):
    for seed in range(5):
        env, result = run(scenario, seed)
        m = result.metrics
        assert all(m[key] is True for key in METRICS), (seed, {k: m[k] for k in METRICS})
        assert result.returns == {a: 1.0 for a in env.possible_agents}
        assert m["confusion"]["fp"] == 0 and m["misplacements"] == 0
        assert m["teams_formed"] == len(env.game.recruiters) and m["invalid_action_rate"] == 0.0


def test_scripted_is_the_honest_baseline():
    env = teamenvs.make("job_fair_v0", scenario="S1")
    policies = agents.make_policies(env, "scripted", seed=0)
    assert all(type(p) is JobFairAgent for p in policies.values())
    assert all(type(p) is BoastfulSeeker for p in agents.make_policies(env, "boastful", seed=0).values())


def test_boastful_seekers_get_the_redundant_seeker_hired_in_s2():
    hired_redundant = 0
    for seed in range(10):
        env, result = run("S2", seed, "boastful")
        redundant = next(p.name for p in env.game.fair.seekers if p.redundant)
        hires = result.metrics["per_company"]["Brightloop Software"]["hired"]
        if redundant in hires:
            hired_redundant += 1
            assert result.metrics["confusion"]["fp"] > 0 and result.metrics["redundant_offers"] == 1
    assert hired_redundant > 0


def test_boastful_seekers_are_misplaced_in_s1():
    misplaced = [run("S1", seed, "boastful")[1].metrics["misplacements"] for seed in range(10)]
    assert sum(m > 0 for m in misplaced) >= 5
    assert all(run("S1", seed)[1].metrics["misplacements"] == 0 for seed in range(3))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_boastful_seekers_lower_success_in_every_scenario(scenario):
    honest = np.mean([run(scenario, seed)[1].metrics["overall_success"] for seed in range(10)])
    boastful = np.mean([run(scenario, seed, "boastful")[1].metrics["overall_success"] for seed in range(10)])
    assert boastful < honest == 1.0


def test_honest_seekers_apply_only_where_they_fit():
    for scenario in SCENARIOS:
        for seed in range(3):
            env, result = run(scenario, seed)
            for application in events(result, "application"):
                seeker = env.game.persona[application["seeker"]]
                if seeker.redundant:  # nothing fits: one company at random
                    assert len(application["companies"]) == 1
                else:
                    assert application["companies"] and all(env.game.fair.fits(seeker, c) for c in application["companies"])
            assert result.metrics["company_identification_rate"] == 1.0


def test_boastful_seekers_in_s4_apply_to_three_companies():
    env, result = run("S4", 0, "boastful")
    applications = events(result, "application")
    assert len(applications) == len(env.game.seekers)
    for application in applications:
        seeker = env.game.persona[application["seeker"]]
        assert len(application["companies"]) == 3
        if not seeker.redundant:  # best match first
            assert env.game.fair.fits(seeker, application["companies"][0])
    assert result.metrics["interviews"] == 30


def same_decisions(policy, seed: int, copier) -> int:
    """Play S4 with `policy` for everyone, checking that a copy of view + valid_actions gives the same action."""
    env = teamenvs.make("job_fair_v0", scenario="S4")
    observations, infos = env.reset(seed=seed)
    full = {a: policy(seed=i) for i, a in enumerate(env.possible_agents)}
    lean = {a: policy(seed=i) for i, a in enumerate(env.possible_agents)}
    steps = 0
    while env.agents:
        actions = {}
        for agent in env.agents:
            if not infos[agent]["needs_action"]:
                continue
            info = infos[agent]
            minimal = {"view": copier(info["view"]), "valid_actions": info["valid_actions"]}
            a, b = full[agent].act(observations[agent], info), lean[agent].act("", minimal)
            assert a == b
            actions[agent] = a
        observations, _, _, _, infos = env.step(actions)
        steps += 1
    assert env.unwrapped.game.phase == "done"
    return steps


@pytest.mark.parametrize("policy", [JobFairAgent, BoastfulSeeker])
def test_baselines_decide_from_a_deep_copy_of_view_and_valid_actions(policy):
    for seed in (0, 1):
        assert same_decisions(policy, seed, copy.deepcopy) > 20


def test_a_large_generated_fair_runs_end_to_end():
    env = teamenvs.make("job_fair_v0", preset="large_fair")
    result = agents.run_episode(env, agents.make_policies(env, "honest", seed=0), seed=0, max_steps=2_000)
    base = env.unwrapped
    assert not env.agents and base.game.phase == "done"
    assert (len(base.game.recruiters), len(base.game.seekers)) == (20, 100)
    decisions = events(result, "decision")
    assert sorted(d["recruiter"] for d in decisions) == sorted(base.game.recruiters)
    assert not any(d["at_deadline"] for d in decisions)
    m = result.metrics
    assert m["identification_rate"] >= 0.8 and m["interviews"] >= 90
    assert sum(p.redundant for p in base.game.fair.seekers) == 10


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_random_agents_finish_and_rarely_succeed(scenario):
    results = [run(scenario, seed, "random")[1] for seed in range(5)]
    assert all(r.steps < 200 for r in results)
    assert not any(r.metrics["overall_success"] for r in results)
    assert np.mean([r.metrics["teams_formed"] for r in results]) < 0.5
