"""What the job fair's agents see and read: views built from the state, their text, the events and the briefing.

`build_view` gathers everything an agent may know (its role's private and public facts,
its interviews, its decision or offers) into a dict on top of the shared envelope;
`render_view` writes the observation from that dict alone. `narrate` turns the rules'
notes into the events agents read and the log keeps; `frame` is the omniscient ansi
frame; `role_briefing` the role and rules part of an agent's briefing.
"""

from __future__ import annotations

from typing import Any, Mapping

from teamenvs.core.env import event
from teamenvs.core.view import footer
from teamenvs.job_fair.fair import biography, description
from teamenvs.job_fair.rules import FairState, Interview, Note

REFUSALS = {"no_workflow": "give your workflow first ('workflow <step> -> <step> -> ...'), or submit the whole decision as JSON"}
HOW = {"answer": "answer", "accepted_other": "another offer was accepted", "deadline": "no answer by the deadline"}


# ---------------------------------------------------------------------- views
def _interview_view(game: FairState, interview: Interview, agent: str) -> dict[str, Any]:
    side = "recruiter" if agent == interview.recruiter else "seeker"
    return {
        "company": interview.company,
        "with": game.name(interview.partner(agent)),
        "lines": tuple(interview.lines),
        "your_turn": interview.open and interview.actor() == agent,
        "turns_left": game.config.interview_turns - interview.said[side],
    }


def build_view(game: FairState, agent: str, envelope: Mapping[str, Any]) -> dict[str, Any]:
    """Everything `agent` may know now; `envelope` is the env's shared part (step, last action, events, valid now)."""
    current = game.current.get(agent)
    view: dict[str, Any] = {
        **envelope,
        "name": game.name(agent),
        "phase": game.phase,
        "interview_turns": game.config.interview_turns,
        "interview": _interview_view(game, current, agent) if current is not None else None,
        "past_interviews": tuple(_interview_view(game, i, agent) for i in game.mine[agent] if i is not current),
    }
    if agent in game.persona:
        seeker = game.persona[agent]
        view.update(
            role="seeker",
            biography=biography(seeker),
            skills=seeker.skills,
            companies=tuple(dict(c) for c in game.public),
            max_applications=game.fair.max_applications,
            applied=game.applied.get(agent),
            offers=tuple(game.offers[agent]),
            joined=game.joined[agent],
        )
    else:
        company = game.company[agent]
        draft = game.drafts[agent]
        public = game.public[game.recruiters.index(agent)]
        view.update(
            role="recruiter",
            company=company.name,
            company_type=game.fair.businesses[company.business].company_type,
            company_description=public["description"],
            skills_wanted=public["skills"],
            goal=game.fair.businesses[company.business].goal,
            thought=game.thought.get(agent),
            applicants=tuple(game.persona[s].name for s in game.queue[agent]) if game.phase == "interviews" else (),
            candidates=game.candidates[agent],
            draft={"hire": draft.hire, "workflow": draft.workflow, "assign": draft.assign, "submitted": draft.submitted},
            answers=tuple(f"{name} {answer} your offer" for name, answer in game.answers[agent]),
        )
    return view


def _interview_lines(iv: Mapping[str, Any], title: str) -> list[str]:
    lines = [f"{title} with {iv['with']} ({iv['company']}):"]
    lines += [f"  {line}" for line in iv["lines"]] or ["  (nothing said yet)"]
    return lines


def _limit_text(limit: int) -> str:
    return "one company" if limit == 1 else f"1 to {limit} companies"


def render_view(view: Mapping[str, Any]) -> str:
    """The text observation of a view."""
    out = [f"Job fair, step {view['step']}, {view['phase']} phase. You are {view['name']}, "
           + ("a job seeker." if view["role"] == "seeker" else f"recruiting for {view['company']}.")]
    if view["role"] == "seeker":
        out.append(f"Your biography (private): {view['biography']}")
        out.append("Companies at the fair:")
        out += [f"- {c['description']}" for c in view["companies"]]
        if view["applied"] is None:
            out.append(f"You may apply to {_limit_text(view['max_applications'])}.")
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
        out += _interview_lines(past, "Earlier interview")
    if view["interview"] is not None:
        iv = view["interview"]
        out += _interview_lines(iv, "Interview now")
        if iv["your_turn"]:
            out.append(f"It is your turn ({iv['turns_left']} of your {view['interview_turns']} turns left).")
        else:
            out.append(f"Waiting for {iv['with']} to speak.")
    if view["role"] == "recruiter" and view["phase"] in ("decisions", "offers", "done"):
        d = view["draft"]
        out.append(f"Your decision{' (submitted)' if d['submitted'] else ' so far'}: hire {', '.join(d['hire']) or '(nobody yet)'}; "
                   f"workflow {' -> '.join(d['workflow']) or '(none yet)'}; "
                   f"assignments {', '.join(f'{n} to {s}' for n, s in d['assign']) or '(none yet)'}.")
    if view["role"] == "recruiter" and view["answers"]:
        out.append("Answers to your offers: " + "; ".join(view["answers"]) + ".")
    out += footer(view)
    return "\n".join(out)


# ---------------------------------------------------------------------- events
def narrate(game: FairState, note: Note, agents: list[str]) -> tuple[dict[str, Any] | None, list[tuple[str, dict[str, Any]]]]:
    """The log's event for a note of the rules (None: none) and the events it tells agents, as (agent, event)."""
    kind = note["type"]
    if kind == "phase":
        text = "The job fair is over." if note["phase"] == "done" else f"The {note['phase']} phase begins."
        return event("phase", text, phase=note["phase"]), [(a, event("phase", text)) for a in agents]
    if kind == "missed":
        return None, [(note["seeker"], event("missed", "The applications phase is over and you did not apply."))]
    if kind == "interview_start":
        company, name = note["company"], note["seeker"]
        recruiter = game.company[note["recruiter"]].recruiter
        return event(kind, "", **{k: v for k, v in note.items() if k != "type"}), [
            (note["recruiter"], event(kind, f"Your interview with {name} begins; you speak first.")),
            (note["seeker_agent"], event(kind, f"Your interview with {recruiter} of {company} begins; they speak first.")),
        ]
    if kind == "interview_end":
        recruiter, seeker = note["recruiter"], note["seeker_agent"]
        ended_by = note["ended_by"]
        why = f"{game.name(ended_by)} ended the interview" if ended_by else f"both sides used their {game.config.interview_turns} turns"
        record = event(kind, "", company=note["company"], recruiter=recruiter, seeker=game.name(seeker), reason=why, turns=note["turns"])
        return record, [
            (agent, event(kind, f"Your interview with {game.name(other)} ({note['company']}) is over: {why}."))
            for agent, other in ((recruiter, seeker), (seeker, recruiter))
        ]
    if kind == "decision":
        note_text = "Time is up: your decision was submitted as it stood." if note["at_deadline"] else "Your decision is submitted."
        told = event(kind, f"{note_text} Hired: {', '.join(note['hire']) or 'nobody'}.")
        return event(kind, "", **{k: v for k, v in note.items() if k != "type"}), [(note["recruiter"], told)]
    if kind == "offer":
        return event(kind, "", company=note["company"], seeker=note["seeker"]), [
            (game.agent_named[note["seeker"]], event(kind, f"{note['company']} offers you a job."))
        ]
    if kind == "offer_answer":
        company, name, answer, how = note["company"], note["seeker"], note["answer"], HOW[note["how"]]
        told = [] if note["how"] == "answer" else [(note["seeker_agent"], event(kind, f"Your offer from {company} was {answer}: {how}."))]
        told.append((game.recruiter_of[company], event(kind, f"{name} {answer} your offer.")))
        return event(kind, "", company=company, seeker=name, answer=answer, how=how), told
    return event(kind, "", **{k: v for k, v in note.items() if k != "type"}), []


# ---------------------------------------------------------------------- global frame and briefing
def frame(game: FairState, step: int) -> str:
    """The human-readable ansi frame of the whole state."""
    lines = [f"Job fair ({game.fair.scenario}) step {step}, {game.phase} phase"]
    for recruiter, company in game.company.items():
        draft = game.drafts[recruiter]
        current = game.current.get(recruiter)
        lines.append(
            f"{company.name} [{company.business}] recruiter {company.recruiter}: "
            f"candidates {', '.join(game.candidates[recruiter]) or '-'}"
            + (f"; interviewing {game.persona[current.seeker].name}" if current else "")
            + (f"; hires {', '.join(draft.hire)}" if draft.hire else "")
        )
    for agent, seeker in game.persona.items():
        role = seeker.role or "redundant"
        applied = ", ".join(game.applied.get(agent, ())) or "-"
        lines.append(f"  {agent} {seeker.name} ({role}): applied {applied}; joined {game.joined[agent] or '-'}")
    return "\n".join(lines)


def role_briefing(game: FairState, agent: str) -> str:
    """The role and rules part of `agent`'s briefing."""
    fair = game.fair
    common = (
        "You are at a job fair. Recruiters assemble teams for their companies; job seekers look for a company "
        "where their skills fit. First seekers apply to companies; then each recruiter interviews its applicants "
        f"one at a time (the recruiter speaks first, up to {game.config.interview_turns} turns each, and only the two of "
        "you hear the conversation); then recruiters decide whom to hire, the workflow of their team and who does "
        "which step; last, seekers accept or decline their job offers."
    )
    if agent in game.persona:
        return (
            f"{common} You are playing a role with the following biography: {biography(game.persona[agent])} "
            f"You may apply to {_limit_text(fair.max_applications)}. You score if you end up "
            "in a company where your skills fit; if none fits, you score by turning offers down."
        )
    company = game.company[agent]
    business = fair.businesses[company.business]
    return (
        f"{common} You are {company.recruiter}, human resources manager of {company.name}, a "
        f"{business.company_type.lower()}. Description: {description(fair, company)} You recruit a team to "
        f"{business.goal}: hire only people whose skills the project needs, propose a concise workflow from "
        "start to finish, and assign each hire to the steps that match their skills. You score if the people who "
        "join are exactly the team the project needs and your workflow and assignments are right."
    )
