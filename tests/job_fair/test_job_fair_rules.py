"""`job_fair_v0` rules: the shipped data, the scenarios, the generator, config errors, scoring and metrics.

Data: the catalogue is self-consistent (every business role exists, every workflow step
names roles of its business, every role can do some step, no role's skills contain another
role's); the MetaAgents fair of S1-S4 has the paper's sizes (1+4, 1+5, 3+10, 3+10), its
application limits (1, 1, 1, 3), exactly one qualified seeker per role of every company,
a redundant finance undergraduate who fits no company, unique names, and the Table 1
workflows; experience years (1-5) come from the rng.

Generator: counts, redundant share, unique names, determinism per seed, every slot fillable
when there are enough capable seekers, `skill_overlap` 0 / 1 (one extra skill that never
qualifies for a second role), `fair_seed`, JSON round trip, `businesses` restriction, and a
20 x 100 fair. Config errors are `ConfigError`s naming what is wrong.

Scoring is checked on hand-written workflows, teams and assignments with expectations
worked out by hand (the paper's App. A example workflow among them). Metrics are checked
on logs of honest scripted episodes and on copies of those logs edited by hand (a
redundant hire, a wrong application, a declined or accepted offer, a reordered workflow),
each metric with a true and a false case.
"""

from __future__ import annotations

import copy
import functools
import itertools
from typing import Any

import numpy as np
import pytest

import agents
import teamenvs
from teamenvs.core.config import ConfigError
from teamenvs.job_fair.config import PRESETS, JobFairConfig
from teamenvs.job_fair.fair import (
    Fair,
    catalogue,
    generate_fair,
    make_fair,
    scenario_fair,
)
from teamenvs.job_fair.metrics import job_fair_metrics
from teamenvs.job_fair.scoring import (
    best_teams,
    check_assignment,
    confusion,
    filled_slots,
    match,
    matching_size,
    synonym_mapper,
    team_right,
    valid_team,
    workflow_correct,
)

# ---------------------------------------------------------------------- the MetaAgents fair
SW, DA, AD = "Brightloop Software", "Quantline Analytics", "Inkhouse Advertising"
PM, PROG, TEST, UI = "Elena Vasquez", "Tomasz Reyes", "Hannah Okafor", "Lucas Brandt"
ENG, SCI = "Amara Lindqvist", "Kenji Arlow"
STRAT, COPY, GRAPH = "Sofia Marchetti", "Owen Gallagher", "Nadia Haddad"
BEN = "Ben Whitaker"  # the redundant finance undergraduate
SW_TEAM = [PM, PROG, TEST, UI]
TRUE_TEAMS = {
    SW: {"project manager": PM, "programmer": PROG, "code tester": TEST, "interface designer": UI},
    DA: {"data engineer": ENG, "data scientist": SCI},
    AD: {"content strategist": STRAT, "copywriter": COPY, "graphic designer": GRAPH},
}
SW_STEPS = ["Designing", "Coding", "Testing", "Documenting"]
DA_STEPS = ["Data Acquisition & Cleaning", "Model Development", "Model Evaluation"]
AD_STEPS = ["Brief Creation", "Copywriting", "Graphic Design"]
SW_ASSIGN = [(UI, "Designing"), (PROG, "Coding"), (TEST, "Testing"), (PM, "Documenting")]
PAPER_WORKFLOW = [  # MetaAgents App. A, a recruiter's free-text software workflow
    "Brainstorm and ideation",
    "Design and prototyping",
    "Software development",
    "Quality assurance and testing",
    "User manual and documentation",
]


def fair(scenario: str, seed: int = 0) -> Fair:
    return scenario_fair(JobFairConfig(scenario=scenario), np.random.default_rng(seed))


def gen(seed: int = 0, **knobs: Any) -> Fair:
    return generate_fair(JobFairConfig(scenario="generated", **knobs), np.random.default_rng(seed))


def slots_of(f: Fair) -> int:
    return sum(len(f.businesses[c.business].roles) for c in f.companies)


def business(name: str):
    return catalogue().businesses[name]


# ---------------------------------------------------------------------- logs
@functools.lru_cache(maxsize=None)
def _honest(scenario: str, seed: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    env = teamenvs.make("job_fair_v0", scenario=scenario)
    result = agents.run_episode(env, agents.make_policies(env, "honest", seed=seed), seed=seed)
    return result.records, result.metrics


def honest(scenario: str, seed: int = 0) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Records (a private copy, free to edit) and metrics of an honest scripted episode."""
    records, metrics = _honest(scenario, seed)
    return copy.deepcopy(records), copy.deepcopy(metrics)


def events(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for r in records if r.get("type") == "step" for e in r.get("events", ()) if e.get("type") == kind]


def decision(records: list[dict[str, Any]], company: str) -> dict[str, Any]:
    (d,) = [e for e in events(records, "decision") if e["company"] == company]
    return d


def application(records: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (a,) = [e for e in events(records, "application") if e["name"] == name]
    return a


def last_step_events(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("type") == "step"][-1]["events"]


def add_redundant_offer(records: list[dict[str, Any]], answer: str) -> None:
    """Edit an honest S2 log: the recruiter also hires Ben, who gets an offer and answers it."""
    decision(records, SW)["hire"].append(BEN)
    last_step_events(records).extend([
        {"type": "offer", "text": "", "company": SW, "seeker": BEN},
        {"type": "offer_answer", "text": "", "company": SW, "seeker": BEN, "answer": answer, "how": "answer"},
    ])


# ====================================================================== data validation
def test_catalogue_roles_businesses_and_steps_are_consistent():
    cat = catalogue()
    assert len(cat.businesses) >= 3 and len(cat.roles) >= 9
    for b in cat.businesses.values():
        assert b.roles and b.workflow, b.name
        assert len(set(b.roles)) == len(b.roles), b.name
        for role in b.roles:
            assert role in cat.roles, (b.name, role)
        for step in b.workflow:
            assert step.roles and step.synonyms, (b.name, step.name)
            assert set(step.roles) <= set(b.roles), (b.name, step.name, step.roles)
        for role in b.roles:
            assert any(role in step.roles for step in b.workflow), f"{b.name}: {role} is qualified for no step"
    for name, role in cat.roles.items():
        assert role.name == name and len(role.skills) == 3


def test_no_role_skills_are_a_subset_of_another_roles():
    roles = list(catalogue().roles.values())
    for a, b in itertools.permutations(roles, 2):
        assert not set(a.skills) <= set(b.skills), f"{a.name}'s skills are all among {b.name}'s"


def test_redundant_templates_qualify_for_no_role():
    cat = catalogue()
    for template in cat.redundant:
        for role in cat.roles.values():
            assert not set(role.skills) <= set(template["skills"]), (template["field"], role.name)


def test_table1_workflows_exactly():
    assert [s.name for s in business("software development").workflow] == SW_STEPS
    assert [s.name for s in business("data analysis").workflow] == DA_STEPS
    assert [s.name for s in business("advertising").workflow] == AD_STEPS
    assert [c.business for c in fair("S3").companies] == ["software development", "data analysis", "advertising"]


@pytest.mark.parametrize(
    "scenario, recruiters, seekers, limit",
    [("S1", 1, 4, 1), ("S2", 1, 5, 1), ("S3", 3, 10, 1), ("S4", 3, 10, 3)],
)
def test_scenario_sizes_and_application_limits(scenario, recruiters, seekers, limit):
    f = fair(scenario)
    assert (len(f.companies), len(f.seekers), f.max_applications) == (recruiters, seekers, limit)
    cfg = JobFairConfig(scenario=scenario)
    assert (cfg.companies_count, cfg.seekers_count, cfg.application_limit) == (recruiters, seekers, limit)
    env = teamenvs.make("job_fair_v0", scenario=scenario)
    ids = env.possible_agents
    assert [a for a in ids if a.startswith("recruiter_")] == [f"recruiter_{i}" for i in range(1, recruiters + 1)]
    assert [a for a in ids if a.startswith("seeker_")] == [f"seeker_{i}" for i in range(1, seekers + 1)]
    assert len(ids) == recruiters + seekers


@pytest.mark.parametrize("scenario", ["S1", "S2", "S3", "S4"])
def test_every_role_of_every_company_has_exactly_one_qualified_seeker(scenario):
    f = fair(scenario)
    for company in f.companies:
        for role in f.businesses[company.business].roles:
            qualified = [s.name for s in f.seekers if f.qualified(s, role)]
            assert qualified == [TRUE_TEAMS[company.name][role]], (company.name, role, qualified)
    # and every capable seeker is qualified for exactly its own role
    for s in f.seekers:
        assert [r for r in f.roles if f.qualified(s, r)] == ([s.role] if s.role else [])


@pytest.mark.parametrize("scenario", ["S2", "S3", "S4"])
def test_redundant_seeker_is_the_finance_undergraduate_and_fits_no_company(scenario):
    f = fair(scenario)
    redundant = [s for s in f.seekers if s.redundant]
    assert [s.name for s in redundant] == [BEN]
    ben = redundant[0]
    assert ben.role is None and "finance" in ben.status and "undergraduate" in ben.status
    assert ben.years == 0 and "no professional experience" in ben.experience
    for company in f.companies:
        assert not f.fits(ben, company.name)
    assert not any(f.qualified(ben, r) for r in f.roles)
    # in S1 there is no redundant seeker
    assert not any(s.redundant for s in fair("S1").seekers)


def test_names_unique():
    f = fair("S3")
    people = [s.name for s in f.seekers] + [c.recruiter for c in f.companies]
    assert len(people) == len(set(people)) == 13
    companies = [c.name for c in f.companies]
    assert len(companies) == len(set(companies)) == 3
    # smaller scenarios are subsets of the same people
    for scenario in ("S1", "S2", "S4"):
        assert {s.name for s in fair(scenario).seekers} <= {s.name for s in f.seekers}


def test_experience_years_are_from_1_to_5_and_drawn_from_the_rng():
    draws = []
    for seed in range(20):
        f = fair("S3", seed)
        years = tuple(s.years for s in f.seekers if not s.redundant)
        assert all(1 <= y <= 5 for y in years)
        for s in f.seekers:
            if not s.redundant:
                unit = "year" if s.years == 1 else "years"
                assert s.experience.startswith(f"{s.years} {unit} of working experience as a ")
        assert years == tuple(s.years for s in fair("S3", seed).seekers if not s.redundant)  # same seed, same years
        draws.append(years)
    assert len(set(draws)) > 1  # different seeds give different years
    assert set().union(*draws) == {1, 2, 3, 4, 5}


# ====================================================================== generator
@pytest.mark.parametrize(
    "n_companies, n_seekers, share",
    [(3, 10, 0.1), (2, 10, 0.27), (5, 40, 0.25), (3, 9, 0.6), (1, 7, 0.0), (4, 9, 1.0)],
)
def test_generated_counts_and_redundant_share(n_companies, n_seekers, share):
    for seed in range(3):
        f = gen(seed, n_companies=n_companies, n_seekers=n_seekers, redundant_share=share)
        assert f.scenario == "generated"
        assert len(f.companies) == n_companies and len(f.seekers) == n_seekers
        redundant = [s for s in f.seekers if s.redundant]
        assert len(redundant) == round(share * n_seekers)
        for s in redundant:
            assert not any(f.fits(s, c.name) for c in f.companies)
        for s in f.seekers:
            if not s.redundant:
                assert 1 <= s.years <= 5
                assert s.role in f.roles
        assert f.max_applications == min(3, n_companies)


def test_generated_names_unique():
    for seed in range(5):
        f = gen(seed, n_companies=8, n_seekers=60)
        people = [s.name for s in f.seekers] + [c.recruiter for c in f.companies]
        assert len(people) == len(set(people)) == 68
        assert len({c.name for c in f.companies}) == 8
    # more companies of one business than there are name prefixes: still unique names
    f = gen(0, n_companies=30, n_seekers=5, businesses=("advertising",))
    assert len({c.name for c in f.companies}) == 30


def test_generated_same_seed_identical_different_seeds_differ():
    knobs = dict(n_companies=4, n_seekers=20, redundant_share=0.2, skill_overlap=0.5)
    assert gen(7, **knobs).to_json() == gen(7, **knobs).to_json()
    jsons = [gen(seed, **knobs).to_json() for seed in range(5)]
    assert all(a != b for a, b in itertools.combinations(jsons, 2))


@pytest.mark.parametrize("seed", range(6))
def test_generated_every_slot_fillable_when_enough_capable_seekers(seed):
    # random businesses, far more seekers than slots
    f = gen(seed, n_companies=5, n_seekers=40, redundant_share=0.1)
    teams = best_teams(f)
    for company in f.companies:
        assert set(teams[company.name]) == set(f.businesses[company.business].roles)
    # exactly as many capable seekers as slots (8 slots: two software companies)
    f = gen(seed, n_companies=2, n_seekers=8, redundant_share=0.0, businesses=("software development",))
    assert slots_of(f) == 8
    assert sum(len(t) for t in best_teams(f).values()) == 8
    for company in f.companies:
        assert filled_slots(f, company.name, [s.name for s in f.seekers]) == 4
    # n_seekers = slots + redundant: the capable ones still cover every slot
    f = gen(seed, n_companies=2, n_seekers=10, redundant_share=0.2, businesses=("software development",))
    assert sum(s.redundant for s in f.seekers) == 2
    assert sum(len(t) for t in best_teams(f).values()) == 8


def test_generated_capable_seekers_cover_distinct_slots_first():
    for seed in range(6):
        f = gen(seed, n_companies=2, n_seekers=5, redundant_share=0.0, businesses=("software development",))
        # five capable seekers, eight slots: each fills a different slot
        assert sum(len(t) for t in best_teams(f).values()) == 5


def test_skill_overlap_zero_gives_exactly_the_role_skills():
    for seed in range(5):
        f = gen(seed, n_companies=4, n_seekers=30, skill_overlap=0.0)
        for s in f.seekers:
            if not s.redundant:
                assert sorted(s.skills) == sorted(f.roles[s.role].skills)


def test_skill_overlap_one_adds_one_foreign_skill_but_no_second_qualification():
    for seed in range(5):
        f = gen(seed, n_companies=4, n_seekers=30, redundant_share=0.1, skill_overlap=1.0)
        present = {r for c in f.companies for r in f.businesses[c.business].roles}
        for s in f.seekers:
            if s.redundant:
                continue
            own = set(f.roles[s.role].skills)
            extra = set(s.skills) - own
            assert own <= set(s.skills) and len(s.skills) == 4 and len(extra) == 1
            (skill,) = extra
            assert any(skill in f.roles[r].skills for r in present if r != s.role)
            assert [r for r in f.roles if f.qualified(s, r)] == [s.role]


def test_fair_seed_fixes_the_fair_whatever_the_rng():
    cfg = JobFairConfig(scenario="generated", n_companies=3, n_seekers=12, fair_seed=42)
    a = make_fair(cfg, np.random.default_rng(0))
    b = make_fair(cfg, np.random.default_rng(999))
    assert a.to_json() == b.to_json()
    assert a.to_json() == generate_fair(cfg, np.random.default_rng(42)).to_json()
    free = JobFairConfig(scenario="generated", n_companies=3, n_seekers=12)
    assert make_fair(free, np.random.default_rng(0)).to_json() != make_fair(free, np.random.default_rng(999)).to_json()


@pytest.mark.parametrize("which", ["S2", "S4", "generated"])
def test_fair_json_round_trip(which):
    f = gen(3, n_companies=4, n_seekers=15, skill_overlap=0.5) if which == "generated" else fair(which)
    back = Fair.from_json(f.to_json())
    assert back == f
    assert back.to_json() == f.to_json()
    assert [s.redundant for s in back.seekers] == [s.redundant for s in f.seekers]


def test_businesses_restricts_the_companies():
    for seed in range(4):
        f = gen(seed, n_companies=3, n_seekers=12, businesses=("advertising",))
        assert {c.business for c in f.companies} == {"advertising"}
        assert set(f.businesses) == {"advertising"}
        assert all(c.name.endswith("Advertising") for c in f.companies)
        assert all(s.role in business("advertising").roles for s in f.seekers if not s.redundant)
    f = gen(0, n_companies=6, n_seekers=20, businesses=("data analysis", "architecture"))
    assert {c.business for c in f.companies} == {"data analysis", "architecture"}


def test_large_fair_20_companies_100_seekers():
    f = gen(0, n_companies=20, n_seekers=100, redundant_share=0.1)
    assert len(f.companies) == 20 and len(f.seekers) == 100
    assert sum(s.redundant for s in f.seekers) == 10
    assert len({s.name for s in f.seekers} | {c.recruiter for c in f.companies}) == 120
    assert len({c.name for c in f.companies}) == 20
    teams = best_teams(f)
    assert sum(len(t) for t in teams.values()) == min(slots_of(f), 90)
    env = teamenvs.make("job_fair_v0", preset="large_fair")
    assert PRESETS["large_fair"]["n_companies"] == 20
    assert len([a for a in env.possible_agents if a.startswith("recruiter_")]) == 20
    assert len([a for a in env.possible_agents if a.startswith("seeker_")]) == 100


# ====================================================================== config errors
@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"scenario": "S5"}, r"scenario must be one of S1, S2, S3, S4, generated, got 'S5'"),
        ({"scenario": "S3", "n_companies": 3}, r"n_companies apply to scenario='generated' only"),
        ({"scenario": "S1", "skill_overlap": 0.5, "fair_seed": 1}, r"skill_overlap, fair_seed apply to scenario='generated' only"),
        ({"scenario": "generated", "redundant_share": 1.5}, r"redundant_share must be from 0 to 1, got 1.5"),
        ({"scenario": "generated", "skill_overlap": -0.1}, r"skill_overlap must be from 0 to 1, got -0.1"),
        ({"scenario": "generated", "n_companies": 0}, r"n_companies must be from 1 to 50, got 0"),
        ({"scenario": "generated", "n_seekers": 501}, r"n_seekers must be from 1 to 500"),
        ({"scenario": "generated", "businesses": ("advertising", "bakery")}, r"unknown businesses \['bakery'\]"),
        ({"scenario": "generated", "businesses": ()}, r"businesses must be a non-empty list"),
        ({"interview_turns": 0}, r"interview_turns must be from 1 to 50, got 0"),
        ({"phase_steps": 0}, r"phase_steps must be from 1 to 1000"),
        ({"max_applications": 0}, r"max_applications must be from 1 to 50"),
    ],
)
def test_config_errors(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        JobFairConfig(**kwargs)
    with pytest.raises(ConfigError, match=message):  # the same through the registry
        teamenvs.make("job_fair_v0", **kwargs)


def test_scenario_keyword_and_preset_give_the_same_config():
    by_scenario = teamenvs.make("job_fair_v0", scenario="S2").unwrapped.config
    by_preset = teamenvs.make("job_fair_v0", preset="S2").unwrapped.config
    assert by_scenario == by_preset == JobFairConfig(scenario="S2")
    assert by_scenario.scenario == "S2"
    assert teamenvs.make("job_fair_v0").unwrapped.config.scenario == "S3"  # the default


# ====================================================================== scoring: workflows
def test_synonym_mapper_paper_example_workflow():
    sw = business("software development")
    mapped = synonym_mapper(sw, PAPER_WORKFLOW)
    assert mapped == [("Designing",), ("Designing",), ("Coding",), ("Testing",), ("Documenting",)]
    assert workflow_correct(mapped, SW_STEPS)


def test_workflow_wrong_order_or_missing_step_is_wrong():
    sw = business("software development")
    swapped = [PAPER_WORKFLOW[2], PAPER_WORKFLOW[0], *PAPER_WORKFLOW[3:]]  # coding before designing
    assert not workflow_correct(synonym_mapper(sw, swapped), SW_STEPS)
    missing = [p for p in PAPER_WORKFLOW if p != "Quality assurance and testing"]
    assert not workflow_correct(synonym_mapper(sw, missing), SW_STEPS)
    # a step repeated after another one is not "once, in order"
    assert not workflow_correct([("Designing",), ("Coding",), ("Designing",), ("Testing",), ("Documenting",)], SW_STEPS)
    assert not workflow_correct([], SW_STEPS)


def test_unmapped_extra_step_is_ignored():
    sw = business("software development")
    steps = [*PAPER_WORKFLOW[:3], "Team lunch", *PAPER_WORKFLOW[3:]]
    mapped = synonym_mapper(sw, steps)
    assert mapped[3] == ()
    assert workflow_correct(mapped, SW_STEPS)


def test_one_step_naming_two_canonical_steps_maps_to_both():
    sw = business("software development")
    assert synonym_mapper(sw, ["Design and coding"]) == [("Designing", "Coding")]
    assert workflow_correct(synonym_mapper(sw, ["Design and coding", "Testing", "Documentation"]), SW_STEPS)


@pytest.mark.parametrize("name", ["software development", "data analysis", "advertising"])
def test_canonical_step_names_map_to_themselves(name):
    b = business(name)
    canonical = [s.name for s in b.workflow]
    assert synonym_mapper(b, canonical) == [(n,) for n in canonical]
    assert workflow_correct(synonym_mapper(b, canonical), canonical)
    assert synonym_mapper(b, [n.upper() for n in canonical]) == [(n,) for n in canonical]  # case-blind


# A synonym that matched another step's canonical name (Filming's "production" in
# "Post-production") once hid misplacements; every canonical name must map to itself alone.
def test_every_catalogue_business_canonical_step_names_map_to_themselves():
    wrong = {}
    for name, b in catalogue().businesses.items():
        canonical = [s.name for s in b.workflow]
        mapped = synonym_mapper(b, canonical)
        if mapped != [(n,) for n in canonical]:
            wrong[name] = mapped
    assert wrong == {}


# A cinematographer assigned to "Post-production" is misplaced (the step maps to Post-production only).
def test_film_production_misplacement_on_post_production_is_detected():
    f = gen(0, n_companies=1, n_seekers=3, redundant_share=0.0, businesses=("film production",))
    company = f.companies[0].name
    who = {s.role: s.name for s in f.seekers}
    workflow = ["Scriptwriting", "Filming", "Post-production"]
    assign = [(who["screenwriter"], "Scriptwriting"), (who["cinematographer"], "Filming"),
              (who["film editor"], "Post-production"), (who["cinematographer"], "Post-production")]
    check = check_assignment(f, company, workflow, assign, list(who.values()))
    assert check.misplaced == ((who["cinematographer"], "Post-production"),)
    # the film editor covers Post-production, but a capable hire is misplaced: Metric 2.3 fails (MetaAgents 5.3)
    assert check.uncovered == () and not check.ok
    assert not team_right(f, company, list(who.values()), workflow, assign)  # the reward allows none


# ====================================================================== scoring: teams
def test_valid_team():
    f = fair("S2")
    assert valid_team(f, SW, SW_TEAM)
    assert valid_team(f, SW, list(reversed(SW_TEAM)))
    assert not valid_team(f, SW, SW_TEAM[:3])
    assert not valid_team(f, SW, [*SW_TEAM, BEN])
    assert not valid_team(f, SW, [])
    s3 = fair("S3")
    assert not valid_team(s3, SW, [PM, SCI, TEST, UI])  # a data scientist instead of the programmer
    assert valid_team(s3, DA, [ENG, SCI]) and not valid_team(s3, DA, [ENG, PROG])
    assert valid_team(s3, AD, [STRAT, COPY, GRAPH]) and not valid_team(s3, AD, [STRAT, COPY, UI])


def test_filled_slots_and_match():
    s3 = fair("S3")
    assert filled_slots(s3, SW, SW_TEAM) == 4
    assert filled_slots(s3, SW, [PM, SCI, TEST, UI]) == 3
    assert filled_slots(s3, SW, [PM, PM, BEN]) == 1
    assert filled_slots(s3, SW, []) == 0
    people = {s.name: s for s in s3.seekers if s.name in (PROG, TEST, BEN)}
    matched = match(people, [("a", "programmer"), ("b", "code tester"), ("c", "project manager")], s3)
    assert matched == {"a": PROG, "b": TEST}


@pytest.mark.parametrize("seed", range(4))
def test_filled_slots_is_the_size_of_networkx_matching(seed):
    # random members of a generated fair, duplicates of a role among them
    f = gen(seed, n_companies=4, n_seekers=30, redundant_share=0.2, skill_overlap=1.0)
    rng = np.random.default_rng(seed)
    names = [s.name for s in f.seekers]
    for company in f.companies:
        for size in (0, 2, 4, 8, 30):
            members = list(rng.choice(names, size=size, replace=False))
            people = {s.name: s for s in f.seekers if s.name in members}
            slots = list(enumerate(f.business_of(company.name).roles))
            assert filled_slots(f, company.name, members) == len(match(people, slots, f))


def test_matching_size_needs_augmenting_paths():
    assert matching_size([[0, 1], [0]]) == 2  # the first takes 0, then gives it up for 1
    assert matching_size([[0], [0], [1, 2]]) == 2
    assert matching_size([]) == 0 and matching_size([[], []]) == 0


def test_check_assignment_correct():
    f = fair("S2")
    check = check_assignment(f, SW, SW_STEPS, SW_ASSIGN, SW_TEAM)
    assert check.ok and check.uncovered == () and check.misplaced == ()
    # the paper's free-text workflow, assigned by its own step names
    assign = [(UI, PAPER_WORKFLOW[0]), (PM, PAPER_WORKFLOW[1]), (PROG, PAPER_WORKFLOW[2]),
              (TEST, PAPER_WORKFLOW[3]), (PM, PAPER_WORKFLOW[4])]
    assert check_assignment(f, SW, PAPER_WORKFLOW, assign, SW_TEAM).ok


def test_check_assignment_misplacement():
    f = fair("S2")
    assign = [*SW_ASSIGN, (TEST, "Designing")]  # a tester assigned to Designing, beside the designer
    check = check_assignment(f, SW, SW_STEPS, assign, SW_TEAM)
    # every step still has a qualified hire, but a capable one is misplaced: "misplacing capable agents" fails skill
    # matching (MetaAgents 5.3; App. D's example is a code tester on the designing phase)
    assert check.misplaced == ((TEST, "Designing"),)
    assert check.uncovered == () and not check.ok
    # tester and designer swapped: two misplacements, and their two steps are left uncovered
    swapped = [(TEST, "Designing"), (PROG, "Coding"), (UI, "Testing"), (PM, "Documenting")]
    check = check_assignment(f, SW, SW_STEPS, swapped, SW_TEAM)
    assert check.misplaced == ((TEST, "Designing"), (UI, "Testing"))
    assert check.uncovered == ("Designing", "Testing") and not check.ok


def test_check_assignment_unassigned_step_is_uncovered():
    f = fair("S2")
    check = check_assignment(f, SW, SW_STEPS, SW_ASSIGN[:3], SW_TEAM)  # nobody documents
    assert not check.ok and check.uncovered == ("Documenting",) and check.misplaced == ()


def test_check_assignment_only_members_count():
    f = fair("S2")
    # Hannah does the testing but is not among the members (not hired / did not join)
    check = check_assignment(f, SW, SW_STEPS, SW_ASSIGN, [PM, PROG, UI])
    assert check.uncovered == ("Testing",) and check.misplaced == () and not check.ok
    # Ben, not a member, assigned to Coding: neither a misplacement nor coverage
    check = check_assignment(f, SW, SW_STEPS, [*SW_ASSIGN, (BEN, "Coding")], SW_TEAM)
    assert check.ok and check.misplaced == ()
    # Ben as a member assigned to Coding is a misplacement; he is the redundant seeker, whose placement beside the
    # qualified team does not fail 2.3 (MetaAgents E.2)
    check = check_assignment(f, SW, SW_STEPS, [*SW_ASSIGN, (BEN, "Coding")], [*SW_TEAM, BEN])
    assert check.misplaced == ((BEN, "Coding"),)
    assert not f.fits(next(s for s in f.seekers if s.name == BEN), SW) and check.ok


def test_check_assignment_to_unmapped_step_is_neither_coverage_nor_misplacement():
    f = fair("S2")
    workflow = [*SW_STEPS, "Team lunch"]
    check = check_assignment(f, SW, workflow, [*SW_ASSIGN, (TEST, "Team lunch"), (BEN, "Team lunch")], [*SW_TEAM, BEN])
    assert check.ok and check.misplaced == ()
    check = check_assignment(f, SW, workflow, [(TEST, "Team lunch"), (PROG, "Coding")], SW_TEAM)
    assert check.misplaced == () and check.uncovered == ("Designing", "Testing", "Documenting")


def test_confusion_s2_by_hand():
    f = fair("S2")
    everyone = [*SW_TEAM, BEN]
    assert confusion(f, SW, everyone, SW_TEAM) == {"tp": 4, "fn": 0, "fp": 0, "tn": 1}
    assert confusion(f, SW, everyone, everyone) == {"tp": 4, "fn": 0, "fp": 1, "tn": 0}
    assert confusion(f, SW, everyone, [PM, BEN]) == {"tp": 1, "fn": 3, "fp": 1, "tn": 0}
    assert confusion(f, SW, everyone, []) == {"tp": 0, "fn": 4, "fp": 0, "tn": 1}


def test_confusion_s4_like_applicants_by_hand():
    f = fair("S4")
    # the software company's applicants: its four, a data scientist, a copywriter, Ben (listed twice)
    applicants = [PM, PROG, TEST, UI, SCI, COPY, BEN, BEN]
    hired = [PM, PROG, TEST, SCI]  # the data scientist is hired, the designer is not
    assert confusion(f, SW, applicants, hired) == {"tp": 3, "fn": 1, "fp": 1, "tn": 2}
    # the same data scientist applying to the analytics company is capable there
    assert confusion(f, DA, [ENG, SCI, PROG], [SCI, PROG]) == {"tp": 1, "fn": 1, "fp": 1, "tn": 0}
    assert confusion(f, AD, [], [STRAT]) == {"tp": 0, "fn": 0, "fp": 0, "tn": 0}  # only applicants count


def test_best_teams_s3_are_the_true_teams():
    assert best_teams(fair("S3")) == TRUE_TEAMS
    assert best_teams(fair("S2")) == {SW: TRUE_TEAMS[SW]}


def test_team_right():
    f = fair("S3")
    assert team_right(f, SW, SW_TEAM, SW_STEPS, SW_ASSIGN)
    assert team_right(f, SW, SW_TEAM, PAPER_WORKFLOW, [(UI, PAPER_WORKFLOW[0]), (PROG, PAPER_WORKFLOW[2]),
                                                      (TEST, PAPER_WORKFLOW[3]), (PM, PAPER_WORKFLOW[4])])
    assert not team_right(f, SW, SW_TEAM[:3], SW_STEPS, SW_ASSIGN)  # someone did not join
    assert not team_right(f, SW, [*SW_TEAM, BEN], SW_STEPS, SW_ASSIGN)  # one too many joined
    assert not team_right(f, SW, SW_TEAM, ["Coding", "Designing", "Testing", "Documenting"], SW_ASSIGN)
    assert not team_right(f, SW, SW_TEAM, SW_STEPS, [*SW_ASSIGN, (TEST, "Coding")])
    da_assign = [(ENG, DA_STEPS[0]), (SCI, DA_STEPS[1]), (SCI, DA_STEPS[2])]
    assert team_right(f, DA, [ENG, SCI], DA_STEPS, da_assign)
    assert not team_right(f, DA, [ENG, SCI], DA_STEPS, da_assign[:2])


# ====================================================================== metrics on logs
@pytest.mark.parametrize("scenario", ["S1", "S2", "S3", "S4"])
def test_honest_runs_succeed(scenario):
    records, metrics = honest(scenario)
    assert metrics == job_fair_metrics(records)  # the loop's metrics are the log's
    for key in ("company_identification", "identification", "workflow", "assignment", "overall_success"):
        assert metrics[key] is True, key
    assert metrics["company_identification_rate"] == 1.0
    assert metrics["fill_rate"] == metrics["best_fill_rate"] == 1.0
    n_companies = len(fair(scenario).companies)
    assert metrics["teams_formed"] == n_companies
    assert metrics["redundant_offer_acceptance"] is None and metrics["redundant_offers"] == 0
    assert metrics["misplacements"] == 0
    capable = 4 if scenario in ("S1", "S2") else 9
    assert metrics["confusion"] == {"tp": capable, "fn": 0, "fp": 0, "tn": 0 if scenario == "S1" else 1}
    assert metrics["offers"] == metrics["offers_accepted"] == capable


def test_honest_s3_fill_rates_and_per_company():
    _, m = honest("S3")
    assert m["fill_rate"] == 1.0 and m["best_fill_rate"] == 1.0 and m["teams_formed"] == 3
    for name, company in m["per_company"].items():
        assert company["filled_slots"] == company["best_slots"] == company["roles"] == len(TRUE_TEAMS[name])
        assert sorted(company["hired"]) == sorted(TRUE_TEAMS[name].values())
        assert sorted(company["joined"]) == sorted(TRUE_TEAMS[name].values())
        assert company["team_right"] and company["unmapped_steps"] == [] and company["uncovered_steps"] == []
    assert m["company_identification_per_seeker"] == {n: True for t in TRUE_TEAMS.values() for n in t.values()}


def test_redundant_hire_edit_breaks_identification_only():
    records, _ = honest("S2")
    decision(records, SW)["hire"].append(BEN)
    m = job_fair_metrics(records)
    assert m["identification"] is False and m["overall_success"] is False
    assert m["identification_rate"] == 0.0
    assert m["workflow"] is True and m["assignment"] is True and m["company_identification"] is True
    assert m["confusion"] == {"tp": 4, "fn": 0, "fp": 1, "tn": 0}
    assert m["per_company"][SW]["confusion"] == {"tp": 4, "fn": 0, "fp": 1, "tn": 0}
    assert m["redundant_offer_acceptance"] is None  # the log holds no offer to Ben
    assert m["teams_formed"] == 1  # who joined is still the right team


def test_missing_hire_edit_gives_a_false_negative():
    records, _ = honest("S2")
    decision(records, SW)["hire"].remove(PM)
    m = job_fair_metrics(records)
    assert m["identification"] is False and m["overall_success"] is False
    assert m["confusion"] == {"tp": 3, "fn": 1, "fp": 0, "tn": 1}
    # Elena's Documenting no longer counts (she is not a hire): the step is uncovered
    assert m["assignment"] is False and m["per_company"][SW]["uncovered_steps"] == ["Documenting"]


@pytest.mark.parametrize("answer, rate, formed", [("accepted", 1.0, 0), ("declined", 0.0, 1)])
def test_redundant_offer_acceptance_edits(answer, rate, formed):
    records, _ = honest("S2")
    add_redundant_offer(records, answer)
    m = job_fair_metrics(records)
    assert m["redundant_offers"] == 1 and m["offers"] == 5
    assert m["redundant_offer_acceptance"] == rate
    assert m["offers_accepted"] == 4 + (answer == "accepted")
    assert m["confusion"] == {"tp": 4, "fn": 0, "fp": 1, "tn": 0}
    assert m["identification"] is False
    assert m["teams_formed"] == formed  # Ben joining makes the team one too many
    assert m["fill_rate"] == 1.0  # the four roles are still filled


def test_boastful_s2_run_hires_the_redundant_seeker():
    env = teamenvs.make("job_fair_v0", scenario="S2")
    result = agents.run_episode(env, agents.make_policies(env, "boastful", seed=0), seed=0)
    m = result.metrics
    hired = decision(result.records, SW)["hire"]
    assert BEN in hired
    assert m["confusion"]["fp"] == 1 and m["confusion"]["tn"] == 0
    assert m["redundant_offers"] == 1
    assert m["redundant_offer_acceptance"] == 1.0  # a boastful Ben takes the first offer
    assert m["identification"] is False and m["overall_success"] is False
    assert m["teams_formed"] == 0


def test_wrong_application_edit_s3_company_identification():
    records, _ = honest("S3")
    application(records, SCI)["companies"] = [SW]  # the data scientist applied to the software company
    m = job_fair_metrics(records)
    assert m["company_identification"] is False and m["overall_success"] is False
    assert m["company_identification_rate"] == pytest.approx(8 / 9)
    assert m["company_identification_per_seeker"][SCI] is False
    assert sum(m["company_identification_per_seeker"].values()) == 8
    assert BEN not in m["company_identification_per_seeker"]  # the redundant seeker is not counted
    # the software company now has an extra (not hired) applicant who cannot do its work
    assert m["per_company"][SW]["confusion"] == {"tp": 4, "fn": 0, "fp": 0, "tn": 1}
    assert m["identification"] is True and m["workflow"] is True and m["assignment"] is True


def test_s4_one_right_company_among_several_is_enough():
    records, _ = honest("S4")
    application(records, SCI)["companies"] = [SW, DA]
    m = job_fair_metrics(records)
    assert m["company_identification"] is True and m["company_identification_rate"] == 1.0
    application(records, SCI)["companies"] = [SW, AD]
    m = job_fair_metrics(records)
    assert m["company_identification"] is False and m["company_identification_rate"] == pytest.approx(8 / 9)


def test_workflow_edit_wrong_order():
    records, _ = honest("S3")
    decision(records, AD)["workflow"] = ["Copywriting", "Brief Creation", "Graphic Design"]
    m = job_fair_metrics(records)
    assert m["workflow"] is False and m["overall_success"] is False
    assert m["workflow_rate"] == pytest.approx(2 / 3)
    assert m["per_company"][AD]["workflow"] is False and m["per_company"][SW]["workflow"] is True
    # per team, as MetaAgents Table 2 reports Metric 2.2
    assert m["workflow_per_team"] == {"software development": 1.0, "data analysis": 1.0, "advertising": 0.0}
    assert m["assignment"] is True  # every step is still covered by the right person
    assert m["teams_formed"] == 2  # the advertising recruiter's reward needs the workflow


def test_workflow_edit_free_text_and_unmapped_steps():
    records, _ = honest("S2")
    d = decision(records, SW)
    d["workflow"] = [*PAPER_WORKFLOW, "Team lunch"]
    d["assign"] = [[UI, PAPER_WORKFLOW[0]], [PROG, PAPER_WORKFLOW[2]], [TEST, PAPER_WORKFLOW[3]], [PM, PAPER_WORKFLOW[4]]]
    m = job_fair_metrics(records)
    assert m["workflow"] is True and m["assignment"] is True and m["overall_success"] is True
    assert m["per_company"][SW]["unmapped_steps"] == ["Team lunch"]
    assert m["per_company"][SW]["mapped_workflow"] == [["Designing"], ["Designing"], ["Coding"], ["Testing"], ["Documenting"], []]


def test_assignment_edit_misplacement():
    records, _ = honest("S2")
    decision(records, SW)["assign"].append([TEST, "Designing"])
    m = job_fair_metrics(records)
    # the designer still covers Designing, but the tester, capable, is misplaced: 2.3 fails (MetaAgents 5.3)
    assert m["assignment"] is False and m["overall_success"] is False
    assert m["misplacement"] is True and m["misplacement_rate"] == 1.0
    assert m["misplacements"] == 1 and m["per_company"][SW]["misplaced"] == [[TEST, "Designing"]]
    assert m["per_company"][SW]["misplacement"] is True
    assert m["workflow"] is True and m["identification"] is True
    assert m["teams_formed"] == 0  # the reward allows no misplacement


# MetaAgents E.2: in S2 most failures of 2.1 hired the redundant seeker along with every qualified one,
# so 2.3 (76%) came out above 2.1 (50%). A redundant hire on a step beside its qualified hire must pass 2.3.
def test_redundant_hire_placed_beside_the_qualified_one_passes_metric_2_3():
    records, _ = honest("S2")
    d = decision(records, SW)
    d["hire"].append(BEN)
    d["assign"].append([BEN, "Coding"])
    m = job_fair_metrics(records)
    assert m["identification"] is False  # 2.1 fails: one hire too many
    assert m["assignment"] is True  # 2.3 holds: every step has a qualified hire
    assert m["per_company"][SW]["uncovered_steps"] == []
    assert m["misplacement"] is True and m["misplacements"] == 1 and m["per_company"][SW]["misplaced"] == [[BEN, "Coding"]]
    assert m["overall_success"] is False
    # placed alone on Coding instead of the programmer, he leaves Coding uncovered: 2.3 fails too
    d["assign"] = [p for p in d["assign"] if p != [PROG, "Coding"]]
    m = job_fair_metrics(records)
    assert m["assignment"] is False and m["per_company"][SW]["uncovered_steps"] == ["Coding"]
    assert m["misplacements"] == 1


def test_s2_pattern_assignment_above_identification_over_runs():
    """Over runs that fail 2.1 by a redundant hire placed beside the team, 2.3 can exceed 2.1 (the paper's S2)."""
    runs = []
    for redundant in (False, True, True, False):
        records, _ = honest("S2")
        if redundant:
            d = decision(records, SW)
            d["hire"].append(BEN)
            d["assign"].append([BEN, "Testing"])
        runs.append(job_fair_metrics(records))
    identification = sum(m["identification"] for m in runs) / len(runs)
    assignment = sum(m["assignment"] for m in runs) / len(runs)
    misplacement = sum(m["misplacement"] for m in runs) / len(runs)
    assert (identification, assignment, misplacement) == (0.5, 1.0, 0.5)


def test_declined_offer_edit_lowers_fill_rate():
    records, _ = honest("S3")
    (answer,) = [e for e in events(records, "offer_answer") if e["seeker"] == COPY]
    answer["answer"] = "declined"
    m = job_fair_metrics(records)
    assert m["fill_rate"] == pytest.approx(8 / 9) and m["best_fill_rate"] == 1.0
    assert m["teams_formed"] == 2 and m["per_company"][AD]["team_right"] is False
    assert m["per_company"][AD]["filled_slots"] == 2 and m["per_company"][AD]["best_slots"] == 3
    assert m["offers_accepted"] == 8
    assert m["overall_success"] is True  # decisions were right; who joined is a separate measure


def test_free_text_workflow_phrased_loosely_is_judged_right():
    """Everyday phrasings (the issue's "Write docs", "Test the code") complete the workflow with the default mapper."""
    records, _ = honest("S2")
    d = decision(records, SW)
    d["workflow"] = ["Sketch the screens", "Write code for the features", "Test the code", "Write docs", "Deploy the code"]
    d["assign"] = [[UI, "Sketch the screens"], [PROG, "Write code for the features"], [TEST, "Test the code"], [PM, "Write docs"]]
    m = job_fair_metrics(records)
    assert m["per_company"][SW]["mapped_workflow"] == [["Designing"], ["Coding"], ["Testing"], ["Documenting"], []]
    assert m["workflow"] is True and m["assignment"] is True and m["misplacement"] is False
    assert m["per_company"][SW]["unmapped_steps"] == ["Deploy the code"]


def test_step_mapper_hook():
    records, _ = honest("S3")
    nothing = lambda business, steps: [() for _ in steps]  # noqa: E731
    m = job_fair_metrics(records, step_mapper=nothing)
    assert m["workflow"] is False and m["workflow_rate"] == 0.0
    assert m["assignment"] is False and m["teams_formed"] == 0 and m["overall_success"] is False
    assert m["per_company"][SW]["unmapped_steps"] == SW_STEPS
    # a judge that understands invented step names the default mapper cannot read
    records, _ = honest("S2")
    d = decision(records, SW)
    d["workflow"] = ["alpha", "beta", "gamma", "delta"]
    d["assign"] = [[UI, "alpha"], [PROG, "beta"], [TEST, "gamma"], [PM, "delta"]]
    assert job_fair_metrics(records)["workflow"] is False
    names = dict(zip(["alpha", "beta", "gamma", "delta"], SW_STEPS))
    judge = lambda business, steps: [(names[s],) if s in names else () for s in steps]  # noqa: E731
    m = job_fair_metrics(records, step_mapper=judge)
    assert m["workflow"] is True and m["assignment"] is True and m["overall_success"] is True
    assert m["teams_formed"] == 1


def test_company_identification_rate_is_undefined_without_a_capable_seeker():
    """A fair whose only seeker fits no role: the share of capable seekers who applied to a fitting company has no
    seekers to count (it said 1.0, a perfect score; `redundant_offer_acceptance` already says None for its own
    empty case)."""
    import agents
    import teamenvs

    env = teamenvs.make("job_fair_v0", scenario="generated", n_companies=1, n_seekers=1, redundant_share=1.0)
    m = agents.run_episode(env, agents.make_policies(env, "random", seed=0), seed=0).metrics
    assert m["company_identification_per_seeker"] == {} and m["company_identification_rate"] is None
