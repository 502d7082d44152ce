"""The fixed sizes of the job fair's numeric observation and discrete actions, per config.

Everything is sized from the config alone, so the shapes never change within a config:
`companies` and `seekers` (the config's counts: at most that many candidates per
recruiter), the application limit, the kinds of business a company of this config can be
(the scenario's, or the generator's pool) with their standard workflows from the shipped
catalogue, the skill areas of those businesses' roles (the skill vocabulary of the
encoding), the most roles and workflow steps one of them has, and the sets of companies a
seeker may apply to as one discrete action.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

from teamenvs.job_fair.config import JobFairConfig
from teamenvs.job_fair.fair import catalogue, fair_data
from teamenvs.job_fair.rules import episode_step_bound

PHASES = ("applications", "interviews", "decisions", "offers", "done")
ROLES = ("recruiter", "seeker")
MAX_APPLY_LABELS = 256  # apply sets of 1, 2, ... companies are listed while their count stays within this


@dataclass(frozen=True, eq=False)
class Layout:
    """One config's sizes and lookup tables (see the module docstring); one object per config, hashed by identity."""

    companies: int
    seekers: int
    limit: int
    businesses: tuple[str, ...]  # catalogue order
    workflows: tuple[tuple[str, ...], ...]  # the standard workflow of each business
    business_of_type: dict[str, int]  # company type (as a recruiter's view shows it) -> business index
    areas: tuple[str, ...]  # the skill areas of those businesses' roles, catalogue order
    area_index: dict[str, int]  # lowercased area -> index
    roles: int  # the most roles (skill areas) one company's team has
    steps: int  # the most steps one standard workflow has
    apply_sets: tuple[tuple[int, ...], ...]  # company index sets, by size then in order
    phase_steps: int
    interview_turns: int
    max_steps: int  # episode_step_bound(config)


def _businesses(config: JobFairConfig) -> tuple[str, ...]:
    cat = catalogue()
    if config.scenario == "generated":
        pool = set(config.businesses or cat.businesses)
    else:
        chosen = set(fair_data()["scenarios"][config.scenario]["companies"])
        pool = {c["business"] for c in fair_data()["companies"] if c["name"] in chosen}
    return tuple(b for b in cat.businesses if b in pool)


def _apply_sets(companies: int, limit: int) -> tuple[tuple[int, ...], ...]:
    sets: list[tuple[int, ...]] = []
    for size in range(1, min(limit, companies) + 1):
        more = list(combinations(range(companies), size))
        if size > 1 and len(sets) + len(more) > MAX_APPLY_LABELS:
            break
        sets += more
    return tuple(sets)


_by_config: dict[JobFairConfig, Layout] = {}


def layout(config: JobFairConfig) -> Layout:
    """The layout of `config` (cached)."""
    try:
        found = _by_config.get(config)
    except TypeError:  # a config holding a list is not hashable
        return _make(config)
    if found is None:
        if len(_by_config) > 64:
            _by_config.clear()
        found = _by_config[config] = _make(config)
    return found


def _make(config: JobFairConfig) -> Layout:
    return _layout(config.scenario, config.companies_count, config.seekers_count, config.application_limit,
                   _businesses(config), config.phase_steps, config.interview_turns, episode_step_bound(config))


@lru_cache(maxsize=64)
def _layout(scenario: str, companies: int, seekers: int, limit: int, businesses: tuple[str, ...], phase_steps: int,
            interview_turns: int, max_steps: int) -> Layout:
    cat = catalogue()
    kinds = [cat.businesses[b] for b in businesses]
    used = {r for b in kinds for r in b.roles}
    areas = tuple(dict.fromkeys(r.area for n, r in cat.roles.items() if n in used))
    return Layout(
        companies=companies,
        seekers=seekers,
        limit=limit,
        businesses=businesses,
        workflows=tuple(tuple(s.name for s in b.workflow) for b in kinds),
        business_of_type={b.company_type: i for i, b in enumerate(kinds)},
        areas=areas,
        area_index={a.lower(): i for i, a in enumerate(areas)},
        roles=max(len(b.roles) for b in kinds),
        steps=max(len(b.workflow) for b in kinds),
        apply_sets=_apply_sets(companies, limit),
        phase_steps=phase_steps,
        interview_turns=interview_turns,
        max_steps=max_steps,
    )
