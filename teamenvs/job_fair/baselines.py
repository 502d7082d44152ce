"""Scripted job fair agents: honest or boastful seekers, and a recruiter that believes what it hears.

One class plays either side, reading its role from the view.

Seeker (`honest`): applies to the companies whose skill areas match its own skills best
(only those that match, within the limit, equal matches in random order; a seeker nothing
matches picks one at random). A company's skill areas are those its description lists and
those a team of its type needs by the shipped catalogue (`fair.team_areas`): descriptions
list one skill by default (`advertised_skills`), and the seeker knows, as an LLM would, that
a software company also needs programmers. In an interview it introduces itself with its
real skills and experience, and when asked about skill areas names only those among its own
skills; it accepts the offer that matches its skills best and declines offers that match nothing.

Seeker (`boastful`, MetaAgents 5.3): applies to its best match and then to others up to
the limit; introduces itself truthfully but, asked about skill areas, claims every one of
them ("All of them"); accepts its best-matching offer, else the first.

Recruiter (both): thinks about the skills its team needs (by the catalogue, from its
company type); in each interview asks the candidate to
introduce themselves, then asks which of those skill areas they can take on, then
ends the interview. It believes what it hears: for each role of its team, in order, it
hires the earliest-interviewed candidate not yet chosen who named that role's skill area
(as a skill or as an answer). It proposes its business's standard workflow, gives each
step to the hire chosen for the first of the step's roles it filled, and submits. Honest
candidates name only their own areas, so it assembles the right team; a boastful one who
names every area takes the first open role, whatever its background (MetaAgents'
false positives and misplacement). The standard workflows and roles come from the
shipped catalogue: the textbook knowledge MetaAgents credits LLMs with (5.4); who is
capable it learns only from what candidates say.
"""

from __future__ import annotations

from typing import Any, Mapping

from teamenvs.core.policy import ScriptedPolicy
from teamenvs.job_fair.fair import Business, catalogue, team_areas


def _said_by(lines: tuple[str, ...], speaker: str) -> list[str]:
    prefix = f"{speaker}: "
    return [line[len(prefix):] for line in lines if line.startswith(prefix)]


def _business(company_type: str) -> Business:
    return next(b for b in catalogue().businesses.values() if b.company_type == company_type)


class JobFairAgent(ScriptedPolicy):
    """Honest seeker, or the recruiter (see the module docstring)."""

    name = "honest"
    boastful = False

    def decide(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        if view["role"] == "recruiter":
            return self._recruit(view, info)
        return self._seek(view, info)

    # ------------------------------------------------------------------ seeker
    @staticmethod
    def _fit(own: tuple[str, ...], wanted: tuple[str, ...]) -> int:
        mine = {s.lower() for s in own}
        return sum(w.lower() in mine for w in wanted)

    @staticmethod
    def _wanted(company: Mapping[str, Any]) -> tuple[str, ...]:
        """The skill areas a company listed in the view needs: those its description lists, then its type's by the catalogue."""
        return tuple(dict.fromkeys((*company["skills"], *team_areas(company["company_type"]))))

    def _seek(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        companies = view["companies"]
        fits = {c["name"]: self._fit(view["skills"], self._wanted(c)) for c in companies}
        if self.allowed(info, "apply"):
            shuffled = [companies[int(i)]["name"] for i in self.rng.permutation(len(companies))]
            ranked = sorted(shuffled, key=lambda n: -fits[n])  # equal fits in random order
            chosen = [n for n in ranked if fits[n] > 0]
            if not chosen:
                chosen = [ranked[int(self.rng.integers(len(ranked)))]]
            if self.boastful:
                chosen += [n for n in ranked if n not in chosen]
            return "apply " + ", ".join(chosen[: view["max_applications"]])
        if self.allowed(info, "say"):
            return "say " + self._answer(view, {c["name"]: self._wanted(c) for c in companies})
        if self.allowed(info, "accept"):
            offers = sorted(view["offers"], key=lambda n: -fits[n])
            if fits[offers[0]] > 0:
                return f"accept {offers[0]}"
            return f"accept {view['offers'][0]}" if self.boastful else f"decline {offers[0]}"
        return "wait"

    def _answer(self, view: Mapping[str, Any], wanted: Mapping[str, tuple[str, ...]]) -> str:
        interview = view["interview"]
        asked_by = _said_by(interview["lines"], interview["with"])
        question = asked_by[-1].lower() if asked_by else ""
        areas = [a for a in wanted[interview["company"]] if a.lower() in question]
        if areas:
            if self.boastful:
                return f"All of them: {', '.join(areas)}. I have experience in each."
            mine = {s.lower() for s in view["skills"]}
            can = [a for a in areas if a.lower() in mine]
            if can:
                return f"I can take on {', '.join(can)}."
            return f"None of those, I am afraid. My skills are {', '.join(view['skills'])}."
        experience = view["biography"].split("Professional experience: ", 1)[1].split(". Employment status", 1)[0]
        return f"I am {view['name']}. My skills are {', '.join(view['skills'])}. Experience: {experience}."

    # ------------------------------------------------------------------ recruiter
    def _recruit(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        if self.allowed(info, "think"):
            return f"think I am looking for people skilled in {', '.join(team_areas(view['company_type']))} to {view['goal']}."
        if self.allowed(info, "say"):
            asked = len(_said_by(view["interview"]["lines"], view["name"]))
            if asked == 0:
                return f"say Welcome to {view['company']}. Please tell me about your skills and experience."
            if asked == 1:
                return f"say Our project needs {', '.join(team_areas(view['company_type']))}. Which of these can you take on?"
            return "end interview"
        if self.allowed(info, "submit"):
            return self._decision(view, info)
        return "wait"

    def _decision(self, view: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        business = _business(view["company_type"])
        roles = catalogue().roles
        said = {iv["with"]: " ".join(_said_by(iv["lines"], iv["with"])).lower() for iv in view["past_interviews"]}
        chosen: dict[str, str] = {}
        for role in business.roles:
            area = roles[role].area.lower()
            taker = next((n for n in view["candidates"] if n not in chosen.values() and area in said.get(n, "")), None)
            if taker is not None:
                chosen[role] = taker
        hires = tuple(n for n in view["candidates"] if n in chosen.values())
        workflow = tuple(s.name for s in business.workflow)
        assignments = []
        for step in business.workflow:
            role = next((r for r in step.roles if r in chosen), None)
            if role is not None:
                assignments.append((chosen[role], step.name))
        draft = view["draft"]
        if hires and tuple(draft["hire"]) != hires and self.allowed(info, "hire"):
            return "hire " + ", ".join(hires)
        if tuple(draft["workflow"]) != workflow:
            return "workflow " + " -> ".join(workflow)
        missing = [p for p in assignments if tuple(p) not in {tuple(a) for a in draft["assign"]}]
        if missing and self.allowed(info, "assign"):
            return "assign " + ", ".join(f"{n} to {s}" for n, s in missing)
        return "submit"


class BoastfulSeeker(JobFairAgent):
    """Seekers over-claim skills (MetaAgents 5.3); recruiters as in `honest`."""

    name = "boastful"
    boastful = True


BASELINES = {"honest": JobFairAgent, "boastful": BoastfulSeeker}
DEFAULT = "honest"
