"""The job fair's people and companies (MetaAgents sections 3.2-3.4, Table 1): data, scenarios, generator.

Everything comes from the shipped data files (`data/`, names invented by us):
`catalogue.json` holds the roles (skills, a job title) and the businesses (company type,
specialty, mission, the roles of its team and its standard workflow, each step naming the
roles qualified for it and the synonyms that map free-text steps onto it); `fair.json` the
MetaAgents fair of the four scenarios; `names.json` names for generated fairs.

A seeker is *qualified* for a role when its skills include all of the role's skills; its
true `role` is the one it was made for, or None for a redundant seeker whose skills fit no
company (the finance undergraduate of Scenario 2). The scenarios:

- S1: one recruiter (software development) and its four capable seekers;
- S2: S1 plus the redundant seeker;
- S3: three recruiters (software development, data analysis, advertising) and ten seekers,
  one per role plus the redundant one (the paper leaves the tenth seeker undefined); each
  seeker applies to exactly one company;
- S4: the same people; each seeker applies to one to three companies;
- generated: `n_companies` companies drawn from the catalogue, `n_seekers` seekers of whom
  `redundant_share` are redundant; the capable ones cover the companies' roles first, then
  compete for random roles; `skill_overlap` is the chance that a capable seeker also holds
  one skill of another role (which confuses skill matching without qualifying them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:
    from teamenvs.job_fair.config import JobFairConfig

ADVERTISED = ("one", "all", "none")  # the detail levels of company descriptions (JobFairConfig.advertised_skills)


@dataclass(frozen=True)
class Role:
    """A job: its skills (a seeker holding all of them is qualified), the area companies advertise, a title."""

    name: str
    area: str
    title: str
    context: str
    skills: tuple[str, ...]


@dataclass(frozen=True)
class Step:
    """A canonical workflow step, the roles qualified to do it, and the words that map free text onto it.

    `synonyms` name the step's own activity ("test", "quality assurance"); `cues` are weaker
    hints, generic verbs and objects that only decide when no synonym does ("build", "code").
    """

    name: str
    roles: tuple[str, ...]
    synonyms: tuple[str, ...]
    cues: tuple[str, ...] = ()


@dataclass(frozen=True)
class Business:
    """A kind of company: its public description, the roles of its team and its standard workflow."""

    name: str
    company_type: str
    specialty: str
    mission: str
    goal: str
    suffix: str
    roles: tuple[str, ...]
    workflow: tuple[Step, ...]
    outside: tuple[str, ...] = ()  # activities that are no step of the workflow ("deploy", "launch")


@dataclass(frozen=True)
class Company:
    """A company at the fair: its name, its kind of business and its recruiter's name."""

    name: str
    business: str
    recruiter: str


@dataclass(frozen=True)
class Seeker:
    """A job seeker's biography (private to them) and true role (None: redundant)."""

    name: str
    skills: tuple[str, ...]
    years: int
    experience: str
    status: str
    role: str | None = None

    @property
    def redundant(self) -> bool:
        return self.role is None


@dataclass(frozen=True)
class Catalogue:
    """The roles, the businesses and the redundant seekers' templates of `data/catalogue.json`."""

    roles: dict[str, Role]
    businesses: dict[str, Business]
    redundant: tuple[dict[str, Any], ...]


def _load(name: str) -> dict[str, Any]:
    return json.loads(resources.files("teamenvs.job_fair").joinpath("data", name).read_text(encoding="utf-8"))


def _business(name: str, data: dict[str, Any], outside: Sequence[str] = ()) -> Business:
    """A business from its catalogue entry (or a log's copy, which holds its own `outside`); logs written
    before `cues` and `outside` existed read as having none."""
    steps = tuple(Step(s["name"], tuple(s["roles"]), tuple(s["synonyms"]), tuple(s.get("cues", ()))) for s in data["workflow"])
    return Business(name, data["company_type"], data["specialty"], data["mission"], data["goal"], data["suffix"], tuple(data["roles"]), steps,
                    tuple(data.get("outside", outside)))


def _role(name: str, data: dict[str, Any]) -> Role:
    return Role(name, data["area"], data["title"], data["context"], tuple(data["skills"]))


@lru_cache(maxsize=1)
def catalogue() -> Catalogue:
    """The shipped role and business catalogue (the textbook knowledge of standard teams and workflows)."""
    data = _load("catalogue.json")
    return Catalogue(
        {n: _role(n, r) for n, r in data["roles"].items()},
        {n: _business(n, b, data["outside"]) for n, b in data["businesses"].items()},
        tuple(data["redundant"]),
    )


@dataclass(frozen=True)
class Fair:
    """One job fair: its companies, its seekers, the application limit, and the roles and businesses used."""

    scenario: str
    companies: tuple[Company, ...]
    seekers: tuple[Seeker, ...]
    max_applications: int
    roles: dict[str, Role]
    businesses: dict[str, Business]

    def business_of(self, company: str) -> Business:
        return self.businesses[next(c.business for c in self.companies if c.name == company)]

    def qualified(self, seeker: Seeker, role: str) -> bool:
        return set(self.roles[role].skills) <= set(seeker.skills)

    def fits(self, seeker: Seeker, company: str) -> bool:
        """Whether `seeker` is qualified for some role of `company`'s team (a right company to apply to)."""
        return any(self.qualified(seeker, r) for r in self.business_of(company).roles)

    def skills_wanted(self, company: str) -> tuple[str, ...]:
        """The skill areas `company` advertises: one per role of its team."""
        return tuple(self.roles[r].area for r in self.business_of(company).roles)

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "max_applications": self.max_applications,
            "companies": [vars(c) for c in self.companies],
            "seekers": [{**vars(s), "skills": list(s.skills)} for s in self.seekers],
            "roles": {n: {**vars(r), "skills": list(r.skills)} for n, r in self.roles.items()},
            "businesses": {
                n: {
                    **{k: v for k, v in vars(b).items() if k not in ("workflow", "roles", "outside")},
                    "roles": list(b.roles),
                    "workflow": [{"name": s.name, "roles": list(s.roles), "synonyms": list(s.synonyms), "cues": list(s.cues)}
                                 for s in b.workflow],
                    "outside": list(b.outside),
                }
                for n, b in self.businesses.items()
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Fair":
        return cls(
            data["scenario"],
            tuple(Company(**c) for c in data["companies"]),
            tuple(Seeker(**{**s, "skills": tuple(s["skills"])}) for s in data["seekers"]),
            data["max_applications"],
            {n: _role(n, r) for n, r in data["roles"].items()},
            {n: _business(n, b) for n, b in data["businesses"].items()},
        )


@lru_cache(maxsize=1)
def fair_data() -> dict[str, Any]:
    """The MetaAgents fair of `data/fair.json`: its companies, seekers and the four scenarios."""
    return _load("fair.json")


def _experience(years: int, title: str, context: str) -> str:
    return f"{years} year{'s' if years != 1 else ''} of working experience as a {title} in {context}"


def _redundant(template: dict[str, Any], name: str, status: str, rng: np.random.Generator) -> Seeker:
    """A redundant seeker from a catalogue template (years of experience drawn when the template has them)."""
    years = int(rng.integers(1, 6)) if "{years}" in template["experience"] else 0
    return Seeker(name, tuple(template["skills"]), years, template["experience"].format(years=years), status)


def _used(companies: tuple[Company, ...], seekers: tuple[Seeker, ...]) -> tuple[dict[str, Role], dict[str, Business]]:
    cat = catalogue()
    businesses = {c.business: cat.businesses[c.business] for c in companies}
    names = {r for b in businesses.values() for r in b.roles} | {s.role for s in seekers if s.role}
    return {n: cat.roles[n] for n in sorted(names)}, businesses


def scenario_fair(config: JobFairConfig, rng: np.random.Generator) -> Fair:
    """The MetaAgents fair of scenario S1-S4; experience years (1-5) are drawn from `rng`."""
    data = fair_data()
    cat = catalogue()
    chosen = data["scenarios"][config.scenario]
    companies = tuple(Company(**c) for c in data["companies"] if c["name"] in chosen["companies"])
    people = [p for p in data["seekers"] if chosen["seekers"] == "all" or p["name"] in chosen["seekers"]]
    seekers = []
    for p in people:
        if "role" in p:
            role = cat.roles[p["role"]]
            years = int(rng.integers(1, 6))
            seekers.append(Seeker(p["name"], role.skills, years, _experience(years, role.title, role.context), p["status"], role.name))
        else:
            template = next(t for t in cat.redundant if t["field"] == p["redundant"])
            seekers.append(_redundant(template, p["name"], p["status"], rng))
    roles, businesses = _used(companies, tuple(seekers))
    return Fair(config.scenario, companies, tuple(seekers), config.application_limit, roles, businesses)


def generate_fair(config: JobFairConfig, rng: np.random.Generator) -> Fair:
    """A generated fair (see the module docstring); every choice comes from `rng`."""
    cat = catalogue()
    names = _load("names.json")
    pool = list(config.businesses or cat.businesses)
    n_companies, n_seekers = config.companies_count, config.seekers_count
    people = [f"{f} {l}" for f in names["first"] for l in names["last"]]
    order = rng.permutation(len(people))
    person = iter(people[int(i)] for i in order)

    kinds = [pool[int(i)] for i in rng.permutation(len(pool))]
    companies: list[Company] = []
    taken: set[str] = set()
    for i in range(n_companies):
        business = cat.businesses[kinds[i % len(kinds)]]
        prefixes = [names["company_prefix"][int(j)] for j in rng.permutation(len(names["company_prefix"]))]
        name = next((f"{p} {business.suffix}" for p in prefixes if f"{p} {business.suffix}" not in taken), None)
        if name is None:
            name = f"{prefixes[0]} {business.suffix} {i + 1}"
        taken.add(name)
        companies.append(Company(name, business.name, next(person)))

    slots = [r for c in companies for r in cat.businesses[c.business].roles]
    share = config.redundant_share if config.redundant_share is not None else 0.1
    overlap = config.skill_overlap if config.skill_overlap is not None else 0.0
    n_redundant = int(round(share * n_seekers))
    n_capable = n_seekers - n_redundant
    slot_order = [slots[int(i)] for i in rng.permutation(len(slots))]
    roles_drawn = slot_order[:n_capable] + [slots[int(i)] for i in rng.integers(len(slots), size=max(0, n_capable - len(slots)))]
    present = sorted(set(slots))

    seekers: list[Seeker] = []
    for role_name in roles_drawn:
        role = cat.roles[role_name]
        skills = list(role.skills)
        others = [r for r in present if r != role_name]
        if others and rng.random() < overlap:
            other = cat.roles[others[int(rng.integers(len(others)))]]
            skills.append(other.skills[int(rng.integers(len(other.skills)))])
        skills = [skills[int(i)] for i in rng.permutation(len(skills))]
        years = int(rng.integers(1, 6))
        status = "seeking new job opportunities" if rng.random() < 0.5 else f"working as a {role.title} at {role.context}"
        seekers.append(Seeker(next(person), tuple(skills), years, _experience(years, role.title, role.context), status, role_name))
    for _ in range(n_redundant):
        template = cat.redundant[int(rng.integers(len(cat.redundant)))]
        seekers.append(_redundant(template, next(person), template["status"], rng))
    shuffled = tuple(seekers[int(i)] for i in rng.permutation(len(seekers)))
    roles, businesses = _used(tuple(companies), shuffled)
    return Fair("generated", tuple(companies), shuffled, config.application_limit, roles, businesses)


def make_fair(config: JobFairConfig, rng: np.random.Generator) -> Fair:
    """The episode's fair: the scenario's, or a generated one (from `fair_seed` if set, else from `rng`)."""
    if config.scenario != "generated":
        return scenario_fair(config, rng)
    if config.fair_seed is not None:
        return generate_fair(config, np.random.default_rng(config.fair_seed))
    return generate_fair(config, rng)


def biography(seeker: Seeker) -> str:
    """The seeker's private biography, MetaAgents-style (section 3.2)."""
    return (
        f"Name: {seeker.name}. Skills: {', '.join(seeker.skills)}. Professional experience: {seeker.experience}. "
        f"Employment status: {seeker.status}. Tasks: interview with employers, and find a job that matches your skills."
    )


def advertised(fair: Fair, company: str, detail: str = "one") -> tuple[str, ...]:
    """The skill areas `company`'s description lists at `detail` (`ADVERTISED`; see `JobFairConfig.advertised_skills`)."""
    wanted = fair.skills_wanted(company)
    return {"one": wanted[:1], "all": wanted, "none": ()}[detail]


def description(fair: Fair, company: Company, detail: str = "one") -> str:
    """The company's public description in MetaAgents' format (section 3.2): type, skills, specialty, mission.

    `detail` sets the skills listed (`advertised`): the paper's example lists one ("Skills: Software
    product management" for a software company), which is the default.
    """
    b = fair.businesses[company.business]
    skills = advertised(fair, company.name, detail)
    listed = f"Skills: {', '.join(skills)}. " if skills else ""
    return f"{company.name} (recruiter: {company.recruiter}). Company type: {b.company_type}. {listed}Specialty: {b.specialty}. Mission: {b.mission}"


@lru_cache(maxsize=None)
def team_areas(company_type: str) -> tuple[str, ...]:
    """The skill areas a team of this company type needs, by the shipped catalogue: the textbook knowledge
    (MetaAgents 5.4) that scripted agents and the discrete actions use, whatever a description lists."""
    cat = catalogue()
    business = next((b for b in cat.businesses.values() if b.company_type == company_type), None)
    return tuple(cat.roles[r].area for r in business.roles) if business else ()
