"""`job_fair_v0`: the MetaAgents job fair (sections 3.2-3.5, App. C) as a text ParallelEnv.

Recruiters (`recruiter_1`...) assemble their company's team; job seekers (`seeker_1`...,
each a persona whose biography only they see, dealt to the ids anew each episode) look
for a company that fits their skills. Four phases, one after the other:

1. applications: seekers `apply` to companies (within the scenario's limit); recruiters
   `think` (their initial thoughts, recorded) or `wait`;
2. interviews: each recruiter interviews its applicants one at a time in application
   order (an applicant still in another company's interview is taken after the next free
   one); the recruiter speaks first, the sides alternate `say` for up to
   `interview_turns` turns each, and either may `end interview`. An invalid action uses up
   the turn. Only the side whose turn it is acts; a conversation is seen by its two
   participants only;
3. decisions: each recruiter gives `hire`, `workflow` and `assign`, then `submit` (or one
   JSON decision);
4. offers: each seeker hired by a company answers `accept` or `decline`; accepting one
   offer declines the others.

`phase_steps` bounds phases 1, 3 and 4 (see `JobFairConfig`). The episode ends after the
offers; rewards come then: 1 to a recruiter whose team is right (the people who joined
are a full team for its roles, and its workflow and assignment are right), 1 to a seeker
who joined a company it is qualified for (a redundant seeker: who joined none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from teamenvs.core.commands import Action, Situation
from teamenvs.core.env import TeamEnv, event
from teamenvs.job_fair.actions import COMMANDS
from teamenvs.job_fair.fair import PRESETS, Company, Fair, JobFairConfig, Seeker, biography, description, make_fair
from teamenvs.job_fair.metrics import METRIC_GOALS, job_fair_metrics
from teamenvs.job_fair.scoring import team_right

SEEKER_COMMANDS = ("apply", "say", "end interview", "accept", "decline")
RECRUITER_COMMANDS = ("think", "wait", "say", "end interview", "hire", "workflow", "assign", "submit")
ALLOWED_IN = {
    "apply": "seekers, in the applications phase",
    "think": "recruiters, in the applications phase",
    "wait": "recruiters, in the applications phase",
    "say": "the interviews, on your turn",
    "end interview": "the interviews, on your turn",
    "hire": "recruiters, in the decisions phase",
    "workflow": "recruiters, in the decisions phase",
    "assign": "recruiters, in the decisions phase",
    "submit": "recruiters, in the decisions phase",
    "accept": "seekers with a job offer, in the offers phase",
    "decline": "seekers with a job offer, in the offers phase",
}


@dataclass
class Interview:
    company: str
    recruiter: str  # agent ids
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
    hire: tuple[str, ...] = ()
    workflow: tuple[str, ...] = ()
    assign: tuple[tuple[str, str], ...] = ()
    rationale: str = ""
    submitted: bool = False


class JobFairEnv(TeamEnv):
    """Job fair: seekers apply and interview, recruiters hire, design a workflow and assign their hires."""

    metadata = {"render_modes": ["ansi"], "name": "job_fair_v0", "is_parallelizable": True}
    env_id = "job_fair_v0"
    commands = COMMANDS
    config_class = JobFairConfig
    presets = PRESETS
    episode_metrics = staticmethod(job_fair_metrics)
    metric_goals = METRIC_GOALS
    idle_line = "Your last action: none needed (it was not your turn)."
    config: JobFairConfig

    def _agent_ids(self) -> list[str]:
        cfg = self.config
        return [f"recruiter_{i}" for i in range(1, cfg.companies_count + 1)] + [f"seeker_{i}" for i in range(1, cfg.seekers_count + 1)]

    # ------------------------------------------------------------------ episode state
    def _setup(self) -> None:
        self.fair: Fair = make_fair(self.config, self._rng)
        self.recruiters = [a for a in self.possible_agents if a.startswith("recruiter_")]
        self.seekers = [a for a in self.possible_agents if a.startswith("seeker_")]
        self.company: dict[str, Company] = dict(zip(self.recruiters, self.fair.companies))
        self.recruiter_of = {c.name: a for a, c in self.company.items()}
        order = self._rng.permutation(len(self.fair.seekers))
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
        self.answers: dict[str, list[str]] = {r: [] for r in self.recruiters}
        self.joined: dict[str, str | None] = {s: None for s in self.seekers}
        self.mine: dict[str, list[Interview]] = {a: [] for a in self.possible_agents}
        self.public = tuple(
            {"name": c.name, "description": description(self.fair, c), "skills": self.fair.skills_wanted(c.name)}
            for c in self.fair.companies
        )

    def _reset_record(self) -> dict[str, Any]:
        return {"fair": self.fair.to_json(), "people": {a: p.name for a, p in self.persona.items()} | {a: c.recruiter for a, c in self.company.items()}}

    def _is_over(self) -> tuple[bool, bool]:
        return self.phase == "done", False

    def _needs_action(self, agent: str) -> bool:
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

    # ------------------------------------------------------------------ what an agent may do
    def _allowed(self, agent: str) -> dict[str, str]:
        """Commands open to `agent` now, beyond which everything is denied (reason per denied command below)."""
        if not self._needs_action(agent):
            return {}
        if self.phase == "applications":
            return {"apply": ""} if agent in self.persona else {"think": "", "wait": ""}
        if self.phase == "interviews":
            return {"say": "", "end interview": ""}
        if self.phase == "offers":
            return {"accept": "", "decline": ""}
        draft = self.drafts[agent]
        allowed = {"workflow": "", "submit": ""}
        if self.candidates[agent]:
            allowed["hire"] = ""
        if draft.hire and draft.workflow:
            allowed["assign"] = ""
        return allowed

    def _situation_key(self, agent: str):
        draft = self.drafts.get(agent)
        return (agent, self.phase, self._needs_action(agent), self.candidates.get(agent),
                (draft.hire, draft.workflow) if draft else None, tuple(self.offers.get(agent, ())))

    def _situation(self, agent: str) -> Situation:
        allowed = self._allowed(agent)
        denied = {}
        for name in self.commands.commands:
            if name in allowed:
                continue
            if name == "hire" and self.phase == "decisions" and agent in self.drafts:
                denied[name] = "nobody interviewed with you, so there is nobody to hire; give your workflow and submit"
            elif name == "assign" and self.phase == "decisions" and agent in self.drafts:
                denied[name] = "first hire someone and give your workflow"
            else:
                denied[name] = f"it is for {ALLOWED_IN[name]}; it is now the {self.phase} phase"
        draft = self.drafts.get(agent)
        names = {
            "company": tuple(c.name for c in self.fair.companies),
            "candidate": self.candidates.get(agent, ()),
            "hire": draft.hire if draft else (),
            "step": draft.workflow if draft else (),
            "offer": tuple(self.offers.get(agent, ())),
        }
        limit = self.fair.max_applications
        limits = {"companies": (1, limit), "company": (1, 1)}
        reasons = {"companies": f"you may apply to at most {limit} compan{'y' if limit == 1 else 'ies'}"}
        return Situation(denied, limits, names, reasons)

    def _briefing_situation(self, agent: str) -> Situation:
        mine = SEEKER_COMMANDS if agent in self.persona else RECRUITER_COMMANDS
        denied = {c: "another role's command" for c in self.commands.commands if c not in mine}
        limits = {"companies": (1, self.fair.max_applications), "company": (1, 1)}
        return Situation(denied, limits, {"company": tuple(c.name for c in self.fair.companies)})

    def _recipients(self, sender: str, to: str | None) -> list[str]:
        interview = self.current.get(sender)
        return [interview.partner(sender)] if interview is not None else []

    def _on_delivered(self, delivery) -> None:
        for message, recipients in delivery:
            for interview in reversed(self.interviews):
                if message.sender in (interview.recruiter, interview.seeker) and interview.partner(message.sender) in recipients:
                    interview.lines.append(f"{self._name(message.sender)}: {message.text}")
                    break

    # ------------------------------------------------------------------ rules
    def _name(self, agent: str) -> str:
        return self.persona[agent].name if agent in self.persona else self.company[agent].recruiter

    def _apply(self, actions: Mapping[str, Action | None]) -> dict[str, float]:
        if self.phase == "applications":
            self._applications(actions)
        elif self.phase == "interviews":
            self._interviews(actions)
        elif self.phase == "decisions":
            self._decisions(actions)
        elif self.phase == "offers":
            self._offers(actions)
        self._advance()
        if self.phase == "done":  # reached once: the episode ends with this step
            return self._final_rewards()
        return {}

    def _deadline(self) -> bool:
        return self.step_count - self.phase_start + 1 >= self.config.phase_steps

    def _start(self, phase: str) -> None:
        self.phase = phase
        self.phase_start = self.step_count + 1
        text = "The job fair is over." if phase == "done" else f"The {phase} phase begins."
        self.global_events.append(event("phase", text, phase=phase))
        for agent in self.agents:
            self.tell_agent(agent, event("phase", text))

    def _applications(self, actions: Mapping[str, Action | None]) -> None:
        for agent, action in actions.items():
            if action is None:
                continue
            if action.command == "apply":
                companies = action.args["companies"]
                self.applied[agent] = companies
                self.global_events.append(event("application", "", seeker=agent, name=self.persona[agent].name, companies=list(companies)))
            elif action.command in ("think", "wait"):
                text = action.args.get("thought")
                self.thought[agent] = text
                if text is not None:
                    self.global_events.append(event("thought", "", recruiter=agent, company=self.company[agent].name, thought=text))

    def _interviews(self, actions: Mapping[str, Action | None]) -> None:
        for interview in [i for i in self.interviews if i.open]:
            actor = interview.actor()
            action = actions.get(actor)
            if action is not None and action.command == "end interview":
                self._close(interview, f"{self._name(actor)} ended the interview")
                continue
            interview.said[interview.turn] += 1
            interview.turn = "seeker" if interview.turn == "recruiter" else "recruiter"
            turns = self.config.interview_turns
            if min(interview.said.values()) >= turns:
                self._close(interview, f"both sides used their {turns} turns")

    def _close(self, interview: Interview, why: str) -> None:
        interview.open = False
        del self.current[interview.recruiter], self.current[interview.seeker]
        seeker = self.persona[interview.seeker].name
        self.global_events.append(
            event("interview_end", "", company=interview.company, recruiter=interview.recruiter, seeker=seeker, reason=why, turns=dict(interview.said))
        )
        for agent in (interview.recruiter, interview.seeker):
            other = self._name(interview.partner(agent))
            self.tell_agent(agent, event("interview_end", f"Your interview with {other} ({interview.company}) is over: {why}."))

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
            self.global_events.append(event("interview_start", "", company=company, recruiter=recruiter, seeker=name, seeker_agent=free))
            self.tell_agent(recruiter, event("interview_start", f"Your interview with {name} begins; you speak first."))
            self.tell_agent(free, event("interview_start", f"Your interview with {self.company[recruiter].recruiter} of {company} begins; they speak first."))

    def _decisions(self, actions: Mapping[str, Action | None]) -> None:
        for agent, action in actions.items():
            if action is None or agent not in self.drafts:
                continue
            draft = self.drafts[agent]
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
                elif not draft.workflow:
                    self.reject(agent, "give your workflow first ('workflow <step> -> <step> -> ...'), or submit the whole decision as JSON")
                    continue
                self._submit(agent, at_deadline=False)
        if self._deadline():
            for agent in self.recruiters:
                if not self.drafts[agent].submitted:
                    self._submit(agent, at_deadline=True)

    def _submit(self, agent: str, at_deadline: bool) -> None:
        draft = self.drafts[agent]
        draft.submitted = True
        company = self.company[agent].name
        self.global_events.append(
            event("decision", "", recruiter=agent, company=company, hire=list(draft.hire), workflow=list(draft.workflow),
                  assign=[list(p) for p in draft.assign], rationale=draft.rationale, at_deadline=at_deadline)
        )
        note = "Time is up: your decision was submitted as it stood." if at_deadline else "Your decision is submitted."
        self.tell_agent(agent, event("decision", f"{note} Hired: {', '.join(draft.hire) or 'nobody'}."))
        for name in draft.hire:
            seeker = self.agent_named[name]
            self.offers[seeker].append(company)
            self.global_events.append(event("offer", "", company=company, seeker=name))
            self.tell_agent(seeker, event("offer", f"{company} offers you a job."))

    def _offers(self, actions: Mapping[str, Action | None]) -> None:
        for agent, action in actions.items():
            if action is None or action.command not in ("accept", "decline") or not self.offers.get(agent):
                continue
            company = action.args["company"][0]
            if action.command == "accept":
                self.joined[agent] = company
                self._answer(agent, company, "accepted", "answer")
                for other in list(self.offers[agent]):
                    self._answer(agent, other, "declined", "another offer was accepted")
            else:
                self._answer(agent, company, "declined", "answer")
        if self._deadline():
            for agent in self.seekers:
                for company in list(self.offers[agent]):
                    self._answer(agent, company, "declined", "no answer by the deadline")

    def _answer(self, agent: str, company: str, answer: str, how: str) -> None:
        self.offers[agent].remove(company)
        name = self.persona[agent].name
        self.global_events.append(event("offer_answer", "", company=company, seeker=name, answer=answer, how=how))
        self.answers[self.recruiter_of[company]].append(f"{name} {answer} your offer")
        if how != "answer":
            self.tell_agent(agent, event("offer_answer", f"Your offer from {company} was {answer}: {how}."))
        self.tell_agent(self.recruiter_of[company], event("offer_answer", f"{name} {answer} your offer."))

    def _advance(self) -> None:
        """Move through phases whose work is done (possibly several at once)."""
        while True:
            if self.phase == "applications":
                if not (len(self.applied) == len(self.seekers) and len(self.thought) == len(self.recruiters)) and not self._deadline():
                    return
                for agent in self.seekers:
                    if agent not in self.applied:
                        self.tell_agent(agent, event("missed", "The applications phase is over and you did not apply."))
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

    def team_right(self, recruiter: str) -> bool:
        """Whether `recruiter`'s team is right (its reward; see `scoring.team_right`)."""
        company = self.company[recruiter].name
        joined = [self.persona[s].name for s, c in self.joined.items() if c == company]
        draft = self.drafts[recruiter]
        return team_right(self.fair, company, joined, draft.workflow, draft.assign)

    def _final_rewards(self) -> dict[str, float]:
        rewards = {r: float(self.team_right(r)) for r in self.recruiters}
        for agent, seeker in self.persona.items():
            company = self.joined[agent]
            right = company is None if seeker.redundant else company is not None and self.fair.fits(seeker, company)
            rewards[agent] = float(right)
        return rewards

    # ------------------------------------------------------------------ views and text
    def _interview_view(self, interview: Interview, agent: str) -> dict[str, Any]:
        side = "recruiter" if agent == interview.recruiter else "seeker"
        return {
            "company": interview.company,
            "with": self._name(interview.partner(agent)),
            "lines": tuple(interview.lines),
            "your_turn": interview.open and interview.actor() == agent,
            "turns_left": self.config.interview_turns - interview.said[side],
        }

    def _view(self, agent: str) -> dict[str, Any]:
        current = self.current.get(agent)
        view: dict[str, Any] = {
            "agent": agent,
            "name": self._name(agent),
            "phase": self.phase,
            "step": self.step_count,
            "interview_turns": self.config.interview_turns,
            "interview": self._interview_view(current, agent) if current is not None else None,
            "past_interviews": tuple(self._interview_view(i, agent) for i in self.mine[agent] if i is not current),
            "last_action": self.last_action_line(agent),
            "events": tuple(e["text"] for e in self._events[agent] if e["text"]),
            "valid_now": self.valid_now(agent) if self._needs_action(agent) else "",
        }
        if agent in self.persona:
            seeker = self.persona[agent]
            view.update(
                role="seeker",
                biography=biography(seeker),
                skills=seeker.skills,
                companies=tuple(dict(c) for c in self.public),
                max_applications=self.fair.max_applications,
                applied=self.applied.get(agent),
                offers=tuple(self.offers[agent]),
                joined=self.joined[agent],
            )
        else:
            company = self.company[agent]
            draft = self.drafts[agent]
            business = self.fair.businesses[company.business]
            view.update(
                role="recruiter",
                company=company.name,
                company_type=business.company_type,
                company_description=self.public[self.recruiters.index(agent)]["description"],
                skills_wanted=self.public[self.recruiters.index(agent)]["skills"],
                goal=business.goal,
                thought=self.thought.get(agent),
                applicants=tuple(self.persona[s].name for s in self.queue[agent]) if self.phase == "interviews" else (),
                candidates=self.candidates[agent],
                draft={"hire": draft.hire, "workflow": draft.workflow, "assign": draft.assign, "submitted": draft.submitted},
                answers=tuple(self.answers[agent]),
            )
        return view

    @staticmethod
    def _render_interview(iv: Mapping[str, Any], title: str) -> list[str]:
        lines = [f"{title} with {iv['with']} ({iv['company']}):"]
        lines += [f"  {line}" for line in iv["lines"]] or ["  (nothing said yet)"]
        return lines

    def _render_view(self, view: Mapping[str, Any]) -> str:
        out = [f"Job fair, step {view['step']}, {view['phase']} phase. You are {view['name']}, "
               + ("a job seeker." if view["role"] == "seeker" else f"recruiting for {view['company']}.")]
        if view["role"] == "seeker":
            out.append(f"Your biography (private): {view['biography']}")
            out.append("Companies at the fair:")
            out += [f"- {c['description']}" for c in view["companies"]]
            limit = view["max_applications"]
            if view["applied"] is None:
                out.append(f"You may apply to {'one company' if limit == 1 else f'1 to {limit} companies'}.")
            else:
                out.append(f"You applied to: {', '.join(view['applied'])}.")
            if view["offers"]:
                out.append(f"Job offers waiting for your answer: {', '.join(view['offers'])}.")
            if view["joined"]:
                out.append(f"You joined {view['joined']}.")
        else:
            out.append(f"Your company: {view['company_description']}")
            out.append(f"Your task: recruit a team to {view['goal']}, design its workflow and assign each hire to steps.")
            if view["thought"]:
                out.append(f"Your initial thoughts: {view['thought']}")
            if view["applicants"]:
                out.append(f"Waiting to be interviewed: {', '.join(view['applicants'])}.")
            if view["candidates"]:
                out.append(f"Candidates you interviewed: {', '.join(view['candidates'])}.")
        for past in view["past_interviews"]:
            out += self._render_interview(past, "Earlier interview")
        if view["interview"] is not None:
            iv = view["interview"]
            out += self._render_interview(iv, "Interview now")
            if iv["your_turn"]:
                out.append(f"It is your turn ({iv['turns_left']} of your {view['interview_turns']} turns left).")
            else:
                out.append(f"Waiting for {iv['with']} to speak.")
        if view["role"] == "recruiter" and self.phase in ("decisions", "offers", "done"):
            d = view["draft"]
            out.append(f"Your decision{' (submitted)' if d['submitted'] else ' so far'}: hire {', '.join(d['hire']) or '(nobody yet)'}; "
                       f"workflow {' -> '.join(d['workflow']) or '(none yet)'}; "
                       f"assignments {', '.join(f'{n} to {s}' for n, s in d['assign']) or '(none yet)'}.")
        if view["role"] == "recruiter" and view["answers"]:
            out.append("Answers to your offers: " + "; ".join(view["answers"]) + ".")
        out += list(view["events"])
        out.append(view["last_action"])
        if view["valid_now"]:
            out.append("Now: " + view["valid_now"])
        return "\n".join(out)

    # ------------------------------------------------------------------ global views
    def _state(self) -> dict[str, Any]:
        return {
            "step": self.step_count,
            "phase": self.phase,
            "fair": self.fair.to_json(),
            "people": {a: self._name(a) for a in self.possible_agents},
            "applications": {self.persona[a].name: list(c) for a, c in self.applied.items()},
            "interviews": [
                {"company": i.company, "seeker": self.persona[i.seeker].name, "lines": list(i.lines), "open": i.open} for i in self.interviews
            ],
            "decisions": {self.company[r].name: {"hire": list(d.hire), "workflow": list(d.workflow), "assign": [list(p) for p in d.assign],
                                                 "submitted": d.submitted} for r, d in self.drafts.items()},
            "joined": {self.persona[a].name: c for a, c in self.joined.items()},
        }

    def _render_frame(self) -> str:
        lines = [f"Job fair ({self.fair.scenario}) step {self.step_count}, {self.phase} phase"]
        for recruiter, company in self.company.items():
            draft = self.drafts[recruiter]
            current = self.current.get(recruiter)
            lines.append(
                f"{company.name} [{company.business}] recruiter {company.recruiter}: "
                f"candidates {', '.join(self.candidates[recruiter]) or '-'}"
                + (f"; interviewing {self.persona[current.seeker].name}" if current else "")
                + (f"; hires {', '.join(draft.hire)}" if draft.hire else "")
            )
        for agent, seeker in self.persona.items():
            role = seeker.role or "redundant"
            applied = ", ".join(self.applied.get(agent, ())) or "-"
            lines.append(f"  {agent} {seeker.name} ({role}): applied {applied}; joined {self.joined[agent] or '-'}")
        return "\n".join(lines)

    def _role_briefing(self, agent: str) -> str:
        cfg, fair = self.config, self.fair
        limit = fair.max_applications
        common = (
            "You are at a job fair. Recruiters assemble teams for their companies; job seekers look for a company "
            "where their skills fit. First seekers apply to companies; then each recruiter interviews its applicants "
            f"one at a time (the recruiter speaks first, up to {cfg.interview_turns} turns each, and only the two of "
            "you hear the conversation); then recruiters decide whom to hire, the workflow of their team and who does "
            "which step; last, seekers accept or decline their job offers."
        )
        if agent in self.persona:
            seeker = self.persona[agent]
            return (
                f"{common} You are playing a role with the following biography: {biography(seeker)} "
                f"You may apply to {'one company' if limit == 1 else f'1 to {limit} companies'}. You score if you end up "
                "in a company where your skills fit; if none fits, you score by turning offers down."
            )
        company = self.company[agent]
        business = fair.businesses[company.business]
        return (
            f"{common} You are {company.recruiter}, human resources manager of {company.name}, a "
            f"{business.company_type.lower()}. Description: {description(fair, company)} You recruit a team to "
            f"{business.goal}: hire only people whose skills the project needs, propose a concise workflow from "
            "start to finish, and assign each hire to the steps that match their skills. You score if the people who "
            "join are exactly the team the project needs and your workflow and assignments are right."
        )
