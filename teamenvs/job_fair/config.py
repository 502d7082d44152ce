"""The job fair's configuration: scenario, phase limits, the generator's knobs and the interview conditions.

`JobFairConfig` inherits the messaging conditions; `communication=False` skips the
interviews (recruiters decide from names alone). `advertised_skills` is the detail of the
company descriptions: MetaAgents' example (3.2) lists one skill for a software company
whose team needs four, so by default a description names only its team's first role's
area, and a seeker must infer the rest from the company's type, specialty and mission;
`all` lists every role's area (which makes Metric 1.1 a matter of string matching), `none`
no skill. `PRESETS` are the MetaAgents scenarios S1-S4 and three conditions beyond the paper.
"""

from __future__ import annotations

from dataclasses import dataclass

from teamenvs.core.config import ConfigError, setting
from teamenvs.core.messaging import MessagingConditions
from teamenvs.core.text import excerpt
from teamenvs.job_fair.fair import ADVERTISED, catalogue, fair_data

SCENARIOS = ("S1", "S2", "S3", "S4", "generated")
MAX_COMPANIES, MAX_SEEKERS = 50, 500
GENERATOR_KNOBS = ("n_companies", "n_seekers", "redundant_share", "skill_overlap", "businesses", "fair_seed")


@dataclass(frozen=True)
class JobFairConfig(MessagingConditions):
    """Scenario, phase limits, the generator's knobs and the messaging conditions of interviews.

    `phase_steps` bounds the apply, decision and offer phases: agents that have not acted
    by then are passed over (an unanswered offer is declined, an unsubmitted decision is
    submitted as it stands). The generator's knobs apply to `scenario="generated"` only.
    """

    scenario: str = setting("S3", choices=SCENARIOS, doc="MetaAgents scenario S1-S4, or a generated fair")
    max_applications: int | None = setting(None, low=1, high=MAX_COMPANIES,
                                           doc="companies a seeker may apply to; None: the scenario's limit (S1-S3: 1, S4 and generated: 3)")
    interview_turns: int = setting(3, low=1, high=50, doc="turns each side has in an interview")
    phase_steps: int = setting(10, low=1, high=1_000, doc="steps the applications, decisions and offers phases last at most")
    advertised_skills: str = setting("one", choices=ADVERTISED,
                                     doc="skill areas a company's public description lists: one (its team's first role's, as in "
                                         "MetaAgents' example description), all (every role's), none")
    n_companies: int | None = setting(None, low=1, high=MAX_COMPANIES, doc="generated fair: companies (None: 3)")
    n_seekers: int | None = setting(None, low=1, high=MAX_SEEKERS, doc="generated fair: job seekers (None: 10)")
    redundant_share: float | None = setting(None, low=0, high=1, doc="generated fair: share of seekers no company needs (None: 0.1)")
    skill_overlap: float | None = setting(None, low=0, high=1,
                                          doc="generated fair: chance a capable seeker also holds one skill of another role (None: 0)")
    businesses: tuple[str, ...] | None = setting(None, doc="generated fair: the catalogue businesses companies are drawn from (None: all)")
    fair_seed: int | None = setting(None, low=0, doc="generated fair: seed of the fair itself (None: drawn from the episode seed)")

    def _check(self) -> None:
        if self.scenario != "generated":
            given = [k for k in GENERATOR_KNOBS if getattr(self, k) is not None]
            if given:
                raise ConfigError(f"{', '.join(given)} apply to scenario='generated' only (scenario is {excerpt(self.scenario)})")
            return
        if self.businesses is not None:
            known = catalogue().businesses
            if not isinstance(self.businesses, (tuple, list)) or not self.businesses or not all(isinstance(b, str) for b in self.businesses):
                raise ConfigError(f"businesses must be a non-empty list of business names, got {excerpt(self.businesses)}")
            unknown = [b for b in self.businesses if b not in known]
            if unknown:
                raise ConfigError(f"unknown businesses {excerpt(unknown)}; the catalogue has: {', '.join(known)}")

    # the generator's defaults, kept out of the fields so that S1-S4 reject them
    @property
    def companies_count(self) -> int:
        if self.scenario == "generated":
            return self.n_companies if self.n_companies is not None else 3
        return len(fair_data()["scenarios"][self.scenario]["companies"])

    @property
    def seekers_count(self) -> int:
        if self.scenario == "generated":
            return self.n_seekers if self.n_seekers is not None else 10
        listed = fair_data()["scenarios"][self.scenario]["seekers"]
        return len(fair_data()["seekers"]) if listed == "all" else len(listed)

    @property
    def application_limit(self) -> int:
        if self.max_applications is not None:
            return self.max_applications
        if self.scenario == "generated":
            return min(3, self.companies_count)
        return int(fair_data()["scenarios"][self.scenario]["max_applications"])


PRESETS: dict[str, dict[str, object]] = {
    **{s: {"scenario": s} for s in ("S1", "S2", "S3", "S4")},
    # beyond the paper: a large generated fair for scaling studies, and interviews switched off
    "large_fair": {"scenario": "generated", "n_companies": 20, "n_seekers": 100, "redundant_share": 0.1},
    "no_interviews": {"communication": False},
    "full_descriptions": {"advertised_skills": "all"},
}
