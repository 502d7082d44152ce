"""The job fair's rules: the episode's state and its phase transitions, as data without any text.

`FairState` holds what changes during an episode: the phase, applications, interviews,
the recruiters' drafts, offers and who joined. `apply` carries out one step's well-formed
actions and returns *notes* of what happened, in order: plain dicts with a `type` and the
data (`view.narrate` turns each into the events agents read and the log keeps). The phases:

1. applications: seekers apply (within the fair's limit), recruiters think or wait;
2. interviews: each recruiter interviews its applicants one at a time in application order
   (applications sent in one step in a seeded random order; an applicant still in another
   company's interview is taken after the next free one);
   the recruiter speaks first, the sides alternate for up to `interview_turns` turns each,
   and either may end the interview; any action, valid or not, uses up the turn;
3. decisions: each recruiter drafts its hires, workflow and assignments, then submits;
4. offers: each hired seeker accepts or declines; accepting one offer declines the others.

`phase_steps` bounds phases 1, 3 and 4: who has not acted by then is passed over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from teamenvs.core.commands import Action
from teamenvs.core.view import SharedFacts
from teamenvs.job_fair.config import JobFairConfig
from teamenvs.job_fair.fair import Company, Fair, Seeker, advertised, description, make_fair
from teamenvs.job_fair.scoring import team_right

Note = dict[str, Any]


def episode_step_bound(config: JobFairConfig) -> int:
    """An upper bound on the env steps of an episode under `config`.

    The applications, decisions and offers phases last at most `phase_steps` steps each. In
    the interviews phase every step has at least one interview open (when none is, the
    queues are empty and the phase ends in that step), and an interview lasts at most
    2 * `interview_turns` steps (one turn a step, the sides alternating); there are at most
    seekers * min(application limit, companies) interviews. Phase changes take no step.
    """
    interviews = config.seekers_count * min(config.application_limit, config.companies_count) if config.talking_allowed else 0
    return 3 * config.phase_steps + interviews * 2 * config.interview_turns


def agent_ids(config: JobFairConfig) -> tuple[list[str], list[str]]:
    """The recruiters' and the seekers' agent ids."""
    return ([f"recruiter_{i}" for i in range(1, config.companies_count + 1)],
            [f"seeker_{i}" for i in range(1, config.seekers_count + 1)])


@dataclass
class Interview:
    """One interview: its two agents, the transcript ("<speaker>: <text>"), whose turn it is and the turns used."""

    company: str
    recruiter: str
    seeker: str
    lines: list[str] = field(default_factory=list)
    turn: str = "recruiter"
    said: dict[str, int] = field(default_factory=lambda: {"recruiter": 0, "seeker": 0})
    open: bool = True

    def actor(self) -> str:
        return self.recruiter if self.turn == "recruiter" else self.seeker

    def partner(self, agent: str) -> str:
        return self.seeker if agent == self.recruiter else self.recruiter


@dataclass
class Draft:
    """A recruiter's decision as it stands."""

    hire: tuple[str, ...] = ()
    workflow: tuple[str, ...] = ()
    assign: tuple[tuple[str, str], ...] = ()
    rationale: str = ""
    submitted: bool = False


class FairState:
    """One episode of the job fair: the fair, who plays whom, and everything the phases change."""

    def __init__(self, config: JobFairConfig, rng: np.random.Generator) -> None:
        self.config = config
        self._rng = rng  # the episode's generator: it orders the applications sent in one step
        self.fair: Fair = make_fair(config, rng)
        self.recruiters, self.seekers = agent_ids(config)
        self.company: dict[str, Company] = dict(zip(self.recruiters, self.fair.companies))
        self.recruiter_of = {c.name: a for a, c in self.company.items()}
        order = rng.permutation(len(self.fair.seekers))
        self.persona: dict[str, Seeker] = {a: self.fair.seekers[int(i)] for a, i in zip(self.seekers, order)}
        self.agent_named = {p.name: a for a, p in self.persona.items()}
        self.phase = "applications"
        self.phase_start = 0
        self.applied: dict[str, tuple[str, ...]] = {}
        self.thought: dict[str, str | None] = {}
        self.queue: dict[str, list[str]] = {r: [] for r in self.recruiters}
        self.interviews: list[Interview] = []
        self.current: dict[str, Interview] = {}
        self.candidates: dict[str, tuple[str, ...]] = {r: () for r in self.recruiters}
        self.drafts = {r: Draft() for r in self.recruiters}
        self.offers: dict[str, list[str]] = {s: [] for s in self.seekers}
        self.answers: dict[str, list[tuple[str, str]]] = {r: [] for r in self.recruiters}  # (seeker name, answer)
        self.joined: dict[str, str | None] = {s: None for s in self.seekers}
        self.mine: dict[str, list[Interview]] = {a: [] for a in self.recruiters + self.seekers}
        detail = config.advertised_skills
        # the companies' public facts, read-only (a recruiter's view reads its own; seekers' views: public_companies)
        self.public = tuple(
            SharedFacts(name=c.name, company_type=self.fair.businesses[c.business].company_type,
                        description=description(self.fair, c, detail), skills=advertised(self.fair, c.name, detail))
            for c in self.fair.companies
        )
        # what `commands.situation` reads of the fair, in every situation key: the fair is the same in every episode of
        # a scenario (S1-S4), so situations (and their memos of parses and masks) serve later episodes too
        self.fair_key = (tuple(c.name for c in self.fair.companies), self.fair.max_applications)
        self._notes: list[Note] = []
        self._step = 0
        # view.py's: agent -> (its closed_edits, its views' parts of its past interviews), kept while none of them changes
        self.past_views: dict[str, tuple[int, tuple[dict[str, Any], ...]]] = {}
        self.closed_edits = {a: 0 for a in self.recruiters + self.seekers}  # per agent: its closings and late lines so far
        self.own_views: dict[str, tuple[Any, ...]] = {}  # view.py's: agent -> what its views hold that stays put all episode

    def public_companies(self) -> tuple[SharedFacts, ...]:
        """The companies' public descriptions as seekers' views show them: public facts, the same for all and
        read-only (`SharedFacts`). The env makes them once per step (`TeamEnv.once_per_step`), so every seeker's view
        of a step holds the same objects and a step's views cost O(agents), not O(seekers x companies), while no
        policy can change what another sees; views of different steps share no object (Gymnasium's env checker
        flags a dict that a reset's and a step's infos share, read-only or not)."""
        return tuple(SharedFacts(facts) for facts in self.public)

    @property
    def agents(self) -> list[str]:
        return self.recruiters + self.seekers

    def name(self, agent: str) -> str:
        """The person an agent plays."""
        return self.persona[agent].name if agent in self.persona else self.company[agent].recruiter

    # ------------------------------------------------------------------ who may do what
    def needs_action(self, agent: str) -> bool:
        phase = self.phase
        if phase == "applications":
            return agent not in self.applied if agent in self.persona else agent not in self.thought
        if phase == "interviews":
            interview = self.current.get(agent)
            return interview is not None and interview.actor() == agent
        if phase == "decisions":
            return agent in self.drafts and not self.drafts[agent].submitted
        if phase == "offers":
            return bool(self.offers.get(agent))
        return False

    def allowed(self, agent: str) -> tuple[str, ...]:
        """The commands open to `agent` now."""
        if not self.needs_action(agent):
            return ()
        if self.phase == "applications":
            return ("apply",) if agent in self.persona else ("think", "wait")
        if self.phase == "interviews":
            return ("say", "end interview")
        if self.phase == "offers":
            return ("accept", "decline")
        draft = self.drafts[agent]
        return ("workflow", "submit") + (("hire",) if self.candidates[agent] else ()) + (("assign",) if draft.hire and draft.workflow else ())

    def refusal(self, agent: str, action: Action) -> str | None:
        """Why the rules refuse `agent`'s well-formed `action` now (a key of `view.REFUSALS`), or None.

        The one check `apply` uses and the env's `_refusal` (exact action masks) asks without
        changing anything: a plain `submit` before any workflow is refused. An agent's action
        changes only its own draft, so what the others do in the same step never matters.
        """
        if (action.command == "submit" and self.phase == "decisions" and action.args.get("decision") is None
                and agent in self.drafts and not self.drafts[agent].workflow):
            return "no_workflow"
        return None

    def situation_key(self, agent: str) -> tuple:
        """Equal keys mean equal `allowed`, equal names to choose from and equal limits, in any episode of the
        config (the agent itself only through its role, so that agents in the same situation share it: its
        parses are memoized for masks)."""
        draft = self.drafts.get(agent)
        return (agent in self.persona, self.phase, self.needs_action(agent), self.candidates.get(agent),
                (draft.hire, draft.workflow) if draft else None, tuple(self.offers.get(agent, ())), self.fair_key)

    # ------------------------------------------------------------------ a step
    def apply(self, actions: Mapping[str, Action | None], step: int) -> list[Note]:
        """Carry out step `step`'s actions (None: none or invalid) and move through finished phases; the notes of what happened."""
        self._notes, self._step = [], step
        if self.phase == "applications":
            self._applications(actions)
        elif self.phase == "interviews":
            self._interviews(actions)
        elif self.phase == "decisions":
            self._decisions(actions)
        elif self.phase == "offers":
            self._offers(actions)
        self._advance()
        return self._notes

    def record_message(self, sender: str, recipients: tuple[str, ...], text: str) -> None:
        """Add a delivered message to the transcript of the latest interview between its sender and recipient."""
        for interview in reversed(self.interviews):
            if sender in (interview.recruiter, interview.seeker) and interview.partner(sender) in recipients:
                interview.lines.append(f"{self.name(sender)}: {text}")
                if not interview.open:  # a message sent in the step its interview closed
                    self._closed_edit(interview)
                break

    def _closed_edit(self, interview: Interview) -> None:
        """Count a change to a closed interview (its closing, a late line) for both its agents."""
        self.closed_edits[interview.recruiter] += 1
        self.closed_edits[interview.seeker] += 1

    def _note(self, kind: str, **data: Any) -> None:
        self._notes.append({"type": kind, **data})

    def _deadline(self) -> bool:
        return self._step - self.phase_start + 1 >= self.config.phase_steps

    def _start(self, phase: str) -> None:
        self.phase = phase
        self.phase_start = self._step + 1
        self._note("phase", phase=phase)

    def _applications(self, actions: Mapping[str, Action | None]) -> None:
        applying = [agent for agent, action in actions.items() if action is not None and action.command == "apply"]
        if len(applying) > 1:
            # applications sent in one step reach the recruiters in a seeded random order, not by seat (a seat says
            # nothing of its holder): the order they are interviewed in, which is the order their candidates are listed
            applying = [applying[int(i)] for i in self._rng.permutation(len(applying))]
        for agent in applying:
            companies = actions[agent].args["companies"]
            self.applied[agent] = companies
            self._note("application", seeker=agent, name=self.persona[agent].name, companies=list(companies))
        for agent, action in actions.items():
            if action is None:
                continue
            if action.command in ("think", "wait"):
                text = action.args.get("thought")
                self.thought[agent] = text
                if text is not None:
                    self._note("thought", recruiter=agent, company=self.company[agent].name, thought=text)

    def _interviews(self, actions: Mapping[str, Action | None]) -> None:
        for interview in [i for i in self.interviews if i.open]:
            actor = interview.actor()
            action = actions.get(actor)
            if action is not None and action.command == "end interview":
                self._close(interview, ended_by=actor)
                continue
            interview.said[interview.turn] += 1
            interview.turn = "seeker" if interview.turn == "recruiter" else "recruiter"
            if min(interview.said.values()) >= self.config.interview_turns:
                self._close(interview, ended_by=None)

    def _close(self, interview: Interview, ended_by: str | None) -> None:
        interview.open = False
        self._closed_edit(interview)
        del self.current[interview.recruiter], self.current[interview.seeker]
        self._note("interview_end", company=interview.company, recruiter=interview.recruiter, seeker_agent=interview.seeker,
                   ended_by=ended_by, turns=dict(interview.said))

    def _schedule(self) -> None:
        for recruiter in self.recruiters:
            if recruiter in self.current:
                continue
            free = next((s for s in self.queue[recruiter] if s not in self.current), None)
            if free is None:
                continue
            self.queue[recruiter].remove(free)
            company = self.company[recruiter].name
            interview = Interview(company, recruiter, free)
            self.interviews.append(interview)
            self.mine[recruiter].append(interview)
            self.mine[free].append(interview)
            self.current[recruiter] = self.current[free] = interview
            name = self.persona[free].name
            self.candidates[recruiter] += (name,)
            self._note("interview_start", company=company, recruiter=recruiter, seeker=name, seeker_agent=free)

    def _decisions(self, actions: Mapping[str, Action | None]) -> None:
        for agent, action in actions.items():
            if action is None or agent not in self.drafts:
                continue
            draft = self.drafts[agent]
            why = self.refusal(agent, action)
            if why is not None:
                self._note("refused", agent=agent, why=why)
                continue
            if action.command == "hire":
                draft.hire = action.args["names"]
                draft.assign = tuple(p for p in draft.assign if p[0] in draft.hire)
            elif action.command == "workflow":
                draft.workflow = action.args["steps"]
                draft.assign = tuple(p for p in draft.assign if p[1] in draft.workflow)
            elif action.command == "assign":
                draft.assign = tuple(dict.fromkeys(draft.assign + tuple(action.args["assignments"])))
            elif action.command == "submit":
                decision = action.args["decision"]
                if decision is not None:
                    draft.hire, draft.workflow, draft.assign = decision["hire"], decision["workflow"], decision["assign"]
                    draft.rationale = decision["rationale"]
                self._submit(agent, at_deadline=False)
        if self._deadline():
            for agent in self.recruiters:
                if not self.drafts[agent].submitted:
                    self._submit(agent, at_deadline=True)

    def _submit(self, agent: str, at_deadline: bool) -> None:
        draft = self.drafts[agent]
        draft.submitted = True
        company = self.company[agent].name
        self._note("decision", recruiter=agent, company=company, hire=list(draft.hire), workflow=list(draft.workflow),
                   assign=[list(p) for p in draft.assign], rationale=draft.rationale, at_deadline=at_deadline)
        for name in draft.hire:
            self.offers[self.agent_named[name]].append(company)
            self._note("offer", company=company, seeker=name)

    def _offers(self, actions: Mapping[str, Action | None]) -> None:
        for agent, action in actions.items():
            if action is None or action.command not in ("accept", "decline") or not self.offers.get(agent):
                continue
            company = action.args["company"][0]
            if action.command == "accept":
                self.joined[agent] = company
                self._answer(agent, company, "accepted", "answer")
                for other in list(self.offers[agent]):
                    self._answer(agent, other, "declined", "accepted_other")
            else:
                self._answer(agent, company, "declined", "answer")
        if self._deadline():
            for agent in self.seekers:
                for company in list(self.offers[agent]):
                    self._answer(agent, company, "declined", "deadline")

    def _answer(self, agent: str, company: str, answer: str, how: str) -> None:
        """`how`: "answer" (the seeker's own), "accepted_other" (it accepted another offer) or "deadline" (no answer in time)."""
        self.offers[agent].remove(company)
        name = self.persona[agent].name
        self.answers[self.recruiter_of[company]].append((name, answer))
        self._note("offer_answer", company=company, seeker=name, seeker_agent=agent, answer=answer, how=how)

    def _advance(self) -> None:
        """Move through phases whose work is done (possibly several at once)."""
        while True:
            if self.phase == "applications":
                if not (len(self.applied) == len(self.seekers) and len(self.thought) == len(self.recruiters)) and not self._deadline():
                    return
                for agent in self.seekers:
                    if agent not in self.applied:
                        self._note("missed", seeker=agent)
                for agent, companies in self.applied.items():  # in the order they applied
                    for company in companies:
                        self.queue[self.recruiter_of[company]].append(agent)
                if self.config.talking_allowed:
                    self._start("interviews")
                else:
                    for recruiter in self.recruiters:
                        self.candidates[recruiter] = tuple(self.persona[s].name for s in self.queue[recruiter])
                    self._start("decisions")
            elif self.phase == "interviews":
                self._schedule()
                if self.current:
                    return
                self._start("decisions")
            elif self.phase == "decisions":
                if not all(d.submitted for d in self.drafts.values()):
                    return
                self._start("offers")
            elif self.phase == "offers":
                if any(self.offers.values()):
                    return
                self._start("done")
            else:
                return

    # ------------------------------------------------------------------ outcome
    def team_right(self, recruiter: str) -> bool:
        """Whether `recruiter`'s team is right (its reward; see `scoring.team_right`)."""
        company = self.company[recruiter].name
        joined = [self.persona[s].name for s, c in self.joined.items() if c == company]
        draft = self.drafts[recruiter]
        return team_right(self.fair, company, joined, draft.workflow, draft.assign)

    def final_rewards(self) -> dict[str, float]:
        """1 to a recruiter whose team is right, 1 to a seeker who joined a company it fits (a redundant one: who joined none)."""
        rewards = {r: float(self.team_right(r)) for r in self.recruiters}
        for agent, seeker in self.persona.items():
            company = self.joined[agent]
            right = company is None if seeker.redundant else company is not None and self.fair.fits(seeker, company)
            rewards[agent] = float(right)
        return rewards

    def to_json(self, step: int) -> dict[str, Any]:
        """The omniscient state, JSON-ready."""
        return {
            "step": step,
            "phase": self.phase,
            "fair": self.fair.to_json(),
            "people": {a: self.name(a) for a in self.agents},
            "applications": {self.persona[a].name: list(c) for a, c in self.applied.items()},
            "interviews": [
                {"company": i.company, "seeker": self.persona[i.seeker].name, "lines": list(i.lines), "open": i.open} for i in self.interviews
            ],
            "decisions": {self.company[r].name: {"hire": list(d.hire), "workflow": list(d.workflow), "assign": [list(p) for p in d.assign],
                                                 "submitted": d.submitted} for r, d in self.drafts.items()},
            "joined": {self.persona[a].name: c for a, c in self.joined.items()},
        }
