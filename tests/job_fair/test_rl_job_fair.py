"""`job_fair_v0` with numeric observations and discrete actions (`teamenvs.core.rl`).

The encoder reads the agent's view only (never a seeker's biography unless it is the seeker's
own, never an interview the agent is not in), with hand-checked slots; the catalogue is fixed
per config and the same for seekers and recruiters, and its commands parse to what the labels
say; masks are exact over many masked-in random actions (zero rejections); discrete logs replay.
"""

from __future__ import annotations

import copy
import dataclasses
import time

import numpy as np
import pytest

import teamenvs
from teamenvs.core.recorder import EpisodeRecorder, read_log
from teamenvs.core.rl import NOOP, feature_table, pack
from teamenvs.job_fair import PARADIGM
from teamenvs.job_fair.commands import COMMANDS, catalogue, command_for
from teamenvs.job_fair.config import PRESETS, JobFairConfig
from teamenvs.job_fair.layout import layout
from teamenvs.job_fair.rules import episode_step_bound
from teamenvs.job_fair.view import REFUSALS, blocks, encode, features
from teamenvs.replay import load_replay
from teamenvs.testing import marked_commands, random_masked_actions

ENV = "job_fair_v0"
SOFTWARE_AREAS = ("software product management", "programming", "software testing", "user interface design")


def numeric(seed: int = 0, **config):
    env = teamenvs.make(ENV, obs_type="vector", action_type="discrete", **config).unwrapped
    observations, infos = env.reset(seed=seed)
    return env, observations, infos


def index(env, label: str) -> int:
    return env.interface.labels.index(label)


def vec(env, agent: str) -> dict[str, np.ndarray]:
    return blocks(env._encode(env._view(agent)), env.config)


# ---------------------------------------------------------------------- observation
def test_feature_table_is_documented_and_sized_from_the_config():
    table = features(JobFairConfig())
    assert all(f.doc for f in table)
    assert len({f.name for f in table}) == len(table)
    assert sum(f.size for f in table) == 250
    assert "| 0-1 | `role` |" in feature_table(table)
    for preset in PRESETS:
        env = teamenvs.make(ENV, preset=preset, obs_type="vector")
        size = sum(f.size for f in features(env.unwrapped.config))
        assert env.observation_space(env.possible_agents[0]).shape == (size,)
    assert sum(f.size for f in features(JobFairConfig(scenario="generated", n_companies=20, n_seekers=100))) < 2500


def test_encode_is_the_view_alone_and_in_its_box():
    rng = np.random.default_rng(3)
    for preset in ("S3", "S4"):
        env, observations, infos = numeric(preset=preset)
        features_ = features(env.config)
        while env.agents:
            for agent in env.agents:
                view = infos[agent]["view"]
                vector = observations[agent]["observation"]
                assert env.observation_space(agent)["observation"].contains(vector)
                assert np.array_equal(vector, encode(copy.deepcopy(view), env.config))
                assert np.array_equal(vector, pack(features_, blocks(vector, env.config)))  # in bounds, sizes right
            observations, _, _, _, infos = env.step(random_masked_actions(infos, rng))


def test_vector_ignores_hidden_state_and_others_private_data():
    env, _, _ = numeric(preset="S3")
    game = env.game
    before = {a: env._encode(env._view(a)) for a in env.agents}
    other = game.persona["seeker_2"]
    game.persona["seeker_2"] = dataclasses.replace(other, skills=("machine learning", "copywriting"), role=None, years=9, status="retired")
    game.fair = dataclasses.replace(game.fair, seekers=tuple(s if s.name != other.name else game.persona["seeker_2"] for s in game.fair.seekers))
    for agent in env.agents:
        if agent != "seeker_2":
            assert np.array_equal(before[agent], env._encode(env._view(agent))), agent
    assert not np.array_equal(before["seeker_2"], env._encode(env._view("seeker_2")))  # its own biography is shown
    # an interview's lines reach only its two participants' vectors
    env, _, infos = numeric(preset="S3")
    env.step({a: (index(env, "apply company 1") if a.startswith("seeker") else 0) for a in env.agents})
    env.step({"recruiter_1": index(env, "say ask about areas")})
    interview = env.game.current["recruiter_1"]
    before = {a: env._encode(env._view(a)) for a in env.agents}
    interview.lines.append(f"{env.game.name(interview.seeker)}: I know software testing and programming")
    changed = {a for a in env.agents if not np.array_equal(before[a], env._encode(env._view(a)))}
    assert changed == {"recruiter_1", interview.seeker}  # the claims the recruiter heard; the lines the seeker said


def test_hand_checked_slots():
    env, _, _ = numeric(preset="S1")
    lay = layout(env.config)
    assert (lay.companies, lay.seekers, lay.roles, lay.steps, lay.areas) == (1, 4, 4, 4, SOFTWARE_AREAS)
    assert lay.max_steps == 54  # 3 * 10 + 4 seekers * 1 application * 2 * 3 turns
    r = vec(env, "recruiter_1")
    assert r["role"].tolist() == [1, 0] and r["phase"].tolist() == [1, 0, 0, 0, 0]
    assert (r["step"][0], r["phase_left"][0], r["needs_action"][0]) == (0, 1, 1)
    # the description lists one skill (advertised_skills="one", MetaAgents 3.2): the team's first role's area
    assert r["my_company"].tolist() == [1] and r["business"].tolist() == [1] and r["wanted_areas"].tolist() == [1, 0, 0, 0]
    assert not r["my_areas"].any() and not r["company_areas"].any() and not r["cand_present"].any()
    seekers = {a: env.game.persona[a] for a in env.game.seekers}
    for agent, person in seekers.items():
        s = vec(env, agent)
        assert s["role"].tolist() == [0, 1] and not s["my_company"].any()
        assert s["my_areas"].tolist() == [float(a in person.skills) for a in SOFTWARE_AREAS]
        assert s["application_limit"][0] == 1 and s["company_areas"].tolist() == [1, 0, 0, 0]
        assert s["company_fit"][0] == pytest.approx(0.25 * (SOFTWARE_AREAS[0] in person.skills)) and s["applied_any"][0] == 0
    # everyone applies, the recruiter thinks: the interviews begin with the first application taken (in a seeded order)
    env.step({a: index(env, "think" if a == "recruiter_1" else "apply company 1") for a in env.agents})
    first = env.game.current["recruiter_1"].seeker
    assert first == next(iter(env.game.applied))
    r = vec(env, "recruiter_1")
    think = list(COMMANDS.commands).index("think")
    assert r["phase"].tolist() == [0, 1, 0, 0, 0] and r["phase_left"][0] == 0 and r["step"][0] == pytest.approx(1 / 54)
    assert r["last_command"].tolist() == [float(i == think) for i in range(len(COMMANDS.commands))] and r["thought"][0] == 1
    assert r["interview"].tolist() == [1, 1, 1, 0, 0]
    assert r["cand_present"].tolist() == [1, 0, 0, 0] and r["cand_interviewing"].tolist() == [1, 0, 0, 0]
    assert r["waiting"][0] == pytest.approx(3 / 4) and r["candidates"][0] == pytest.approx(1 / 4)
    s = vec(env, first)
    assert s["applied"].tolist() == [1] and s["applied_any"][0] == 1 and s["interviewing"].tolist() == [1]
    assert s["interview"].tolist() == [1, 0, 1, 0, 0] and s["asked_areas"][0] == 0
    env.step({"recruiter_1": index(env, "say ask about areas")})
    s = vec(env, first)
    assert s["interview"].tolist() == pytest.approx([1, 1, 1, 0, 1 / 3]) and s["asked_areas"][0] == 1
    env.step({first: index(env, "say claim all areas")})
    r = vec(env, "recruiter_1")
    assert r["cand_claims"].reshape(4, 4)[0].tolist() == [1, 1, 1, 1] and not r["cand_claims"].reshape(4, 4)[1:].any()
    assert r["interview"].tolist() == pytest.approx([1, 1, 2 / 3, 1 / 3, 1 / 3])
    env.step({"recruiter_1": index(env, "end interview")})
    r = vec(env, "recruiter_1")
    assert r["cand_interviewed"].tolist() == [1, 0, 0, 0] and r["cand_interviewing"].tolist() == [0, 1, 0, 0]
    assert vec(env, first)["interviewed"].tolist() == [1] and vec(env, first)["interviewing"].tolist() == [0]
    # the other three interviews end at once; then the decisions
    for _ in range(3):
        env.step({"recruiter_1": index(env, "end interview")})
    r = vec(env, "recruiter_1")
    assert r["phase"].tolist() == [0, 0, 1, 0, 0] and r["phase_left"][0] == 1 and r["cand_interviewed"].tolist() == [1] * 4
    env.step({"recruiter_1": index(env, "workflow of software development")})
    env.step({"recruiter_1": index(env, "hire add candidate 2")})
    env.step({"recruiter_1": index(env, "assign candidate 2 to step 3")})
    r = vec(env, "recruiter_1")
    assert r["phase_left"][0] == pytest.approx(0.7)
    assert r["draft_workflow"].tolist() == [1, 0] and r["draft_steps"][0] == pytest.approx(4 / 12)
    assert r["cand_hired"].tolist() == [0, 1, 0, 0] and r["hired"][0] == pytest.approx(1 / 4)
    assert np.flatnonzero(r["cand_steps"]).tolist() == [1 * 4 + 2]
    env.step({"recruiter_1": index(env, "submit")})
    second = env.game.candidates["recruiter_1"][1]
    hired = env.game.agent_named[second]
    assert vec(env, hired)["offer"].tolist() == [1] and vec(env, "recruiter_1")["submitted"][0] == 1
    env.step({hired: index(env, "accept company 1")})
    assert env.game.phase == "done"
    assert vec(env, "recruiter_1")["cand_accepted"].tolist() == [0, 1, 0, 0] and vec(env, hired)["joined"].tolist() == [1]


def test_full_descriptions_list_every_area_in_the_vector():
    env, _, _ = numeric(preset="S1", advertised_skills="all")
    assert vec(env, "recruiter_1")["wanted_areas"].tolist() == [1, 1, 1, 1]
    for agent in env.game.seekers:
        s = vec(env, agent)
        assert s["company_areas"].tolist() == [1, 1, 1, 1] and s["company_fit"][0] == pytest.approx(0.25)


def test_deadline_slot_counts_down():
    env, _, _ = numeric(preset="S1", phase_steps=4)
    assert [vec(env, "seeker_1")["phase_left"][0] for _ in range(1)] == [1.0]
    env.step({"recruiter_1": 0})
    env.step({"recruiter_1": 0})
    assert vec(env, "seeker_1")["phase_left"][0] == pytest.approx(0.5)


# ---------------------------------------------------------------------- actions
def test_catalogue_is_fixed_and_the_same_for_every_agent():
    labels = catalogue(JobFairConfig())
    assert labels[0] == NOOP and len(labels) == 81 and len(set(labels)) == 81
    for preset in PRESETS:
        env = teamenvs.make(ENV, preset=preset, action_type="discrete")
        config = env.unwrapped.config
        assert env.unwrapped.interface.labels == catalogue(config)
        assert {env.action_space(a).n for a in env.possible_agents} == {len(catalogue(config))}
    assert len(catalogue(JobFairConfig(scenario="S4"))) == 85  # all 7 sets of 1 to 3 companies
    big = layout(JobFairConfig(scenario="generated", n_companies=20, n_seekers=100))
    assert len(big.apply_sets) == 20 + 190  # sets of 3 would pass MAX_APPLY_LABELS


def test_commands_parse_to_what_the_labels_say():
    rng = np.random.default_rng(0)
    seen = 0
    for preset in ("S1", "S4", "no_interviews"):
        env = teamenvs.make(ENV, preset=preset, obs_type="vector", action_type="discrete").unwrapped
        for seed in range(6):
            _, infos = env.reset(seed=seed)
            while env.agents:
                for agent in env.agents:
                    if not infos[agent]["needs_action"]:
                        assert infos[agent]["action_mask"].tolist() == [1] + [0] * (len(env.interface.labels) - 1)
                        continue
                    assert infos[agent]["action_mask"].any()
                    view = infos[agent]["view"]
                    for label, command, parsed in marked_commands(env, agent, infos[agent], command_for):
                        seen += 1
                        words = label.split()
                        if words[0] == "apply":
                            names = [view["companies"][int(k) - 1]["name"] for k in words[-1].split("+")]
                            assert parsed.args["companies"] == tuple(names)
                        elif words[0] in ("accept", "decline"):
                            assert parsed.args["company"] == (view["companies"][int(words[-1]) - 1]["name"],)
                        elif words[0] == "hire":
                            name = view["candidates"][int(words[-1]) - 1]
                            expected = set(view["draft"]["hire"]) | {name} if words[1] == "add" else set(view["draft"]["hire"]) - {name}
                            assert set(parsed.args["names"]) == expected
                        elif words[0] == "assign":
                            pair = (view["candidates"][int(words[2]) - 1], view["draft"]["workflow"][int(words[-1]) - 1])
                            assert parsed.args["assignments"] == (pair,)
                        elif words[0] == "workflow":
                            assert parsed.args["steps"] == layout(env.config).workflows[layout(env.config).businesses.index(label[12:])]
                _, _, _, _, infos = env.step(random_masked_actions(infos, np.random.default_rng(rng.integers(1 << 30))))
    assert seen > 1000


def test_every_catalogue_workflow_and_step_parses():
    from teamenvs.core.commands import Situation
    from teamenvs.job_fair.fair import catalogue as fair_catalogue

    for business in fair_catalogue().businesses.values():
        steps = tuple(s.name for s in business.workflow)
        situation = Situation(names={"hire": ("Ada Quist",), "step": steps, "candidate": ("Ada Quist",)})
        assert COMMANDS.parse("workflow " + " -> ".join(steps), situation).args["steps"] == steps
        for step in steps:  # "&" and "-" in step names are no separators here
            assert COMMANDS.parse(f"assign Ada Quist to {step}", situation).args["assignments"] == (("Ada Quist", step),)


def test_refusal_is_the_rule_of_apply():
    env, _, _ = numeric(preset="S1", communication=False)
    env.step({a: index(env, "apply company 1") if a.startswith("seeker") else 0 for a in env.agents})
    assert env.game.phase == "decisions"
    submit = COMMANDS.parse("submit", env._offered["recruiter_1"][0])
    assert env.game.refusal("recruiter_1", submit) == "no_workflow"
    assert env._refusal("recruiter_1", submit) == REFUSALS["no_workflow"]
    assert not env.accepts("recruiter_1", "submit") and env.accepts("recruiter_1", 'submit {"list": [], "workflow": ["A"], "assign": {}}')
    _, _, _, _, infos = env.step({"recruiter_1": "submit"})  # text actions still work, and are refused as before
    assert infos["recruiter_1"]["last_action"]["kind"] == "rejected"
    assert infos["recruiter_1"]["last_action"]["error"] == REFUSALS["no_workflow"]
    assert infos["recruiter_1"]["action_mask"][index(env, "submit")] == 0
    _, _, _, _, infos = env.step({"recruiter_1": index(env, "workflow of software development")})
    assert infos["recruiter_1"]["action_mask"][index(env, "submit")] == 1
    assert env._refusal("recruiter_1", submit) is None


def test_messaging_conditions_reach_the_mask():
    env, _, infos = numeric(preset="S1", min_steps_between_messages=3)
    env.step({a: index(env, "think" if a == "recruiter_1" else "apply company 1") for a in env.agents})
    _, _, _, _, infos = env.step({"recruiter_1": index(env, "say ask about skills")})
    seeker = env.game.current["recruiter_1"].seeker
    _, _, _, _, infos = env.step({seeker: index(env, "end interview")})
    mask = infos["recruiter_1"]["action_mask"]  # its next interview, but its last message was 2 steps ago
    assert mask[index(env, "end interview")] == 1 and mask[index(env, "say ask about skills")] == 0


# ---------------------------------------------------------------------- exact masks
RUNS = [{"preset": p} for p in ("S1", "S2", "S3", "S4", "no_interviews")] + [
    {"preset": "S4", "max_words": 3, "min_steps_between_messages": 2, "phase_steps": 2},
    {"preset": "S3", "interview_turns": 1, "phase_steps": 1},
    {"scenario": "generated", "n_companies": 4, "n_seekers": 12, "skill_overlap": 0.5, "max_applications": 3},
    {"scenario": "generated", "n_companies": 2, "n_seekers": 5, "redundant_share": 0.4, "businesses": ["cybersecurity", "data analysis"]},
]


def test_exact_masks_over_many_random_masked_in_actions():
    """About 100,000 agent-actions (every live agent's, about 22,000 of them by agents asked to act;
    some 15 s) over every scenario, odd configs and many seeds: not one masked-in action is refused,
    no acting agent is left without an action, and no episode outlasts `episode_step_bound`."""
    start = time.perf_counter()
    total = acting = episode = 0
    while total < 100_000:
        config = RUNS[episode % len(RUNS)]
        env = teamenvs.make(ENV, obs_type="vector", action_type="discrete", **config).unwrapped
        bound = episode_step_bound(env.config)
        rng = np.random.default_rng(episode)
        observations, infos = env.reset(seed=episode)
        while env.agents:
            needing = [a for a in env.agents if infos[a]["needs_action"]]
            actions = random_masked_actions(infos, rng)
            observations, _, _, _, infos = env.step(actions)
            total += len(actions)
            acting += len(needing)
            for agent, info in infos.items():
                last = info["last_action"]
                assert last["ok"] is not False, (config, episode, env.step_count, agent, actions[agent], last)
            assert env.step_count <= bound
        episode += 1
    elapsed = time.perf_counter() - start
    print(f"{total} agent-actions ({acting} by acting agents) in {episode} episodes, {elapsed:.1f} s")
    assert acting > 15_000


def test_default_bound_is_the_declared_time_limit():
    assert PARADIGM.max_episode_steps == episode_step_bound(JobFairConfig()) == 90


# ---------------------------------------------------------------------- logs
def test_discrete_episode_log_replays_with_command_texts(tmp_path):
    env = teamenvs.make(ENV, action_type="discrete").unwrapped
    rng = np.random.default_rng(5)
    path = tmp_path / "discrete.jsonl"
    with EpisodeRecorder(path) as recorder, env.recording(recorder):
        _, infos = env.reset(seed=5)
        while env.agents:
            _, _, _, _, infos = env.step(random_masked_actions(infos, rng))
    records = read_log(path)
    raws = [e["raw_action"] for r in records if r["type"] == "step" for e in r["agents"].values() if e["action"].get("ok")]
    assert raws and all(isinstance(x, str) for x in raws)
    replay = load_replay(path)
    assert replay.sim.warning is None and replay.sim.verified == sum(r["type"] == "step" for r in records)
