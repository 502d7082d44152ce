"""What the job fair's agents see and read: views built from the state, their text, the events and the briefing.

`build_view` gathers everything an agent may know (its role's private and public facts,
its interviews, its decision or offers) into a dict on top of the shared envelope;
`render_view` writes the observation from that dict alone. `narrate` turns the rules'
notes into the events agents read and the log keeps; `frame` is the omniscient ansi
frame; `role_briefing` the role and rules part of an agent's briefing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from teamenvs.core.env import LAST_ACTION, LAST_ACTION_REJECTED, event
from teamenvs.core.rl import Feature, feature_bounds
from teamenvs.core.view import SharedFacts, footer
from teamenvs.job_fair.commands import COMMANDS, MAX_STEPS
from teamenvs.job_fair.config import JobFairConfig
from teamenvs.job_fair.fair import biography, team_areas
from teamenvs.job_fair.layout import PHASES, Layout, layout
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


def _past_interviews(game: FairState, agent: str, current: Interview | None) -> tuple[dict[str, Any], ...]:
    """The view's parts of `agent`'s closed interviews: built when one closes or gets a late line (a message sent in
    the step it closed), else copied (a fresh dict for every view; the values are immutable)."""
    kept = game.past_views.get(agent)
    edits = game.closed_edits[agent]
    if kept is None or kept[0] != edits:
        kept = game.past_views[agent] = (edits, tuple([_interview_view(game, i, agent) for i in game.mine[agent] if i is not current]))
    return tuple(map(dict.copy, kept[1]))


def _own(game: FairState, agent: str) -> tuple[Any, ...]:
    """What `agent`'s views hold that stays put all episode, worked out once: its name, then a seeker's biography, or
    a recruiter's company name, company type, public description, advertised skills and goal."""
    own = game.own_views.get(agent)
    if own is None:
        seeker = game.persona.get(agent)
        if seeker is not None:
            own = (seeker.name, biography(seeker))
        else:
            company = game.company[agent]
            business = game.fair.businesses[company.business]
            public = game.public[game.recruiters.index(agent)]
            own = (company.recruiter, company.name, business.company_type, public["description"], public["skills"], business.goal)
        game.own_views[agent] = own
    return own


def build_view(game: FairState, agent: str, envelope: Mapping[str, Any], companies: tuple[SharedFacts, ...]) -> dict[str, Any]:
    """Everything `agent` may know now; `envelope` is the env's shared part (step, last action, events, valid now),
    `companies` the step's `FairState.public_companies` (a seeker's view shows them)."""
    current = game.current.get(agent)
    mine = game.mine[agent]
    own = _own(game, agent)
    view: dict[str, Any] = {
        **envelope,
        "name": own[0],
        "phase": game.phase,
        "phase_start": game.phase_start,  # the step the phase began (its "phase begins" event); not rendered
        "interview_turns": game.config.interview_turns,
        "interviews_held": game.config.communication,  # (False: `no_interviews`, recruiters decide from names)
        "interview": _interview_view(game, current, agent) if current is not None else None,
        "past_interviews": _past_interviews(game, agent, current) if mine else (),
    }
    seeker = game.persona.get(agent)
    if seeker is not None:
        view.update(
            role="seeker",
            biography=own[1],
            skills=seeker.skills,
            companies=companies,
            max_applications=game.fair.max_applications,
            applied=game.applied.get(agent),
            offers=tuple(game.offers[agent]),
            joined=game.joined[agent],
        )
    else:
        draft = game.drafts[agent]
        answers = game.answers[agent]
        view.update(
            role="recruiter",
            company=own[1],
            company_type=own[2],
            company_description=own[3],
            skills_wanted=own[4],
            goal=own[5],
            thought=game.thought.get(agent),
            applicants=tuple([game.persona[s].name for s in game.queue[agent]]) if game.phase == "interviews" else (),
            candidates=game.candidates[agent],
            draft={"hire": draft.hire, "workflow": draft.workflow, "assign": draft.assign, "submitted": draft.submitted},
            answers=tuple([f"{name} {answer} your offer" for name, answer in answers]) if answers else (),
        )
    return view


def _interview_lines(iv: Mapping[str, Any], title: str) -> list[str]:
    lines = [f"{title} with {iv['with']} ({iv['company']}):"]
    lines += [f"  {line}" for line in iv["lines"]] or ["  (nothing said yet)"]
    return lines


def _past_interview_text(iv: Mapping[str, Any], memo: dict[Any, Any]) -> str:
    """`_interview_lines(iv, "Earlier interview")` as one string, formatted once per transcript (found in `memo` by the
    identity of its `lines` tuple, which a closed interview keeps, and checked against what else the text reads)."""
    lines = iv["lines"]
    kept = memo.get(id(lines))
    if kept is None or kept[0] is not lines or kept[1] != iv["with"] or kept[2] != iv["company"]:
        kept = (lines, iv["with"], iv["company"], "\n".join(_interview_lines(iv, "Earlier interview")))
        memo[id(lines)] = kept
    return kept[3]


def _limit_text(limit: int) -> str:
    return "one company" if limit == 1 else f"1 to {limit} companies"


def render_view(view: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> str:
    """The text observation of a view. `memo` (the env's, for one episode) keeps text that many views share or
    repeat, formatted once: the step's company list (the same tuple in every seeker's view of a step) and
    closed interviews' transcripts; the text is the same with or without it."""
    if memo is None:
        memo = {}
    seeker = view["role"] == "seeker"
    out = [f"Job fair, step {view['step']}, {view['phase']} phase. You are {view['name']}, "
           + ("a job seeker." if seeker else f"recruiting for {view['company']}.")]
    if seeker:
        companies = view["companies"]
        kept = memo.get("companies")
        if kept is None or kept[0] is not companies:
            kept = memo["companies"] = (companies, "\n".join(["Companies at the fair:", *(f"- {c['description']}" for c in companies)]))
        out += (f"Your biography (private): {view['biography']}", kept[1])
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
            out.append(f"Candidates you interviewed: {', '.join(view['candidates'])}." if view["interviews_held"]
                       else f"Your candidates (they applied; there are no interviews): {', '.join(view['candidates'])}.")
    for past in view["past_interviews"]:
        out.append(_past_interview_text(past, memo))
    if view["interview"] is not None:
        iv = view["interview"]
        out += _interview_lines(iv, "Interview now")
        if iv["your_turn"]:
            out.append(f"It is your turn ({iv['turns_left']} of your {view['interview_turns']} turns left).")
        else:
            out.append(f"Waiting for {iv['with']} to speak.")
    if not seeker and view["phase"] in ("decisions", "offers", "done"):
        d = view["draft"]
        out.append(f"Your decision{' (submitted)' if d['submitted'] else ' so far'}: hire {', '.join(d['hire']) or '(nobody yet)'}; "
                   f"workflow {' -> '.join(d['workflow']) or '(none yet)'}; "
                   f"assignments {', '.join(f'{n} to {s}' for n, s in d['assign']) or '(none yet)'}.")
    if not seeker and view["answers"]:
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
    interviews = (
        f"then each recruiter interviews its applicants one at a time (the recruiter speaks first, up to "
        f"{game.config.interview_turns} turns each, and only the two of you hear the conversation); "
        if game.config.communication else "there are no interviews; "
    )
    common = (
        "You are at a job fair. Recruiters assemble teams for their companies; job seekers look for a company "
        f"where their skills fit. First seekers apply to companies; {interviews}then recruiters decide whom to hire, "
        "the workflow of their team and who does which step; last, seekers accept or decline their job offers."
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
        f"{business.company_type.lower()}. Description: {game.public[game.recruiters.index(agent)]['description']} You recruit a team to "
        f"{business.goal}: hire only people whose skills the project needs, propose a concise workflow from "
        "start to finish, and assign each hire to the steps that match their skills. You score if the people who "
        "join are exactly the team the project needs and your workflow and assignments are right."
    )


# ---------------------------------------------------------------------- numeric observation (teamenvs.core.rl)
_COMMAND_NAMES = tuple(COMMANDS.commands)
_LAST_COMMANDS = tuple(sorted(_COMMAND_NAMES, key=len, reverse=True))  # "end interview" before "end"...


def features(config: JobFairConfig) -> tuple[Feature, ...]:
    """The feature table of the numeric observation under `config` (see `_features`)."""
    return _tables(layout(config)).features


def _features(lay: Layout) -> tuple[Feature, ...]:
    """The feature table of the numeric observation under `config` (sizes from `layout.layout`).

    One layout for both roles: the seeker blocks are zero for a recruiter and the recruiter
    blocks zero for a seeker. Per-company blocks follow the fair's company order (company k
    is recruiter_k's); per-candidate blocks follow the recruiter's candidates in the order it
    interviewed them (the index of the `hire`/`assign` actions); N x K blocks are row-major
    (candidate 1's K slots first).
    """
    C, N, A, R, S, B = lay.companies, lay.seekers, len(lay.areas), lay.roles, lay.steps, len(lay.businesses)
    areas = ", ".join(lay.areas)
    return (
        Feature("role", 2, doc="one-hot: recruiter, seeker"),
        Feature("phase", len(PHASES), doc="one-hot: " + ", ".join(PHASES)),
        Feature("step", doc=f"the step / {lay.max_steps} (an upper bound on an episode's steps under this config)"),
        Feature("phase_left", doc=f"steps left before the phase's deadline / phase_steps ({lay.phase_steps}): 1 on the phase's first "
                "step, 1/phase_steps on its last; 0 in the interviews (no deadline) and when done"),
        Feature("needs_action", doc="1 when the agent is asked to act now (the view lists valid commands)"),
        Feature("last_command", len(_COMMAND_NAMES), doc="one-hot: the command of the agent's last action if it was accepted: "
                + ", ".join(_COMMAND_NAMES)),
        Feature("last_rejected", doc="1 when the agent's last action was rejected"),
        Feature("interview", 5, doc=f"the interview now: [in one, your turn, your turns left / {lay.interview_turns}, lines you said / "
                f"{lay.interview_turns}, lines the other side said / {lay.interview_turns}] (zeros when none)"),
        Feature("past_interviews", doc=f"interviews the agent has finished / {max(C, N)}"),
        # seeker
        Feature("my_areas", A, doc=f"seeker: multi-hot of the skill areas (of the roles of the config's businesses) among its own skills (its biography): {areas}"),
        Feature("application_limit", doc=f"seeker: companies it may apply to / {C}"),
        Feature("applied_any", doc="seeker: 1 once it has applied"),
        Feature("company_areas", C * A, doc=f"seeker: per company (C={C}) the multi-hot of the skill areas its description lists "
                "(same area order; `advertised_skills`: by default only its team's first role's)"),
        Feature("company_fit", C, doc=f"seeker: per company, the areas its description lists among the seeker's own skills / {R}"),
        Feature("applied", C, doc="seeker: per company, 1 if it applied there"),
        Feature("interviewed", C, doc="seeker: per company, 1 if its interview there is over"),
        Feature("interviewing", C, doc="seeker: per company, 1 if it is in an interview there now"),
        Feature("offer", C, doc="seeker: per company, 1 if an offer from it awaits an answer"),
        Feature("joined", C, doc="seeker: per company, 1 if it joined it"),
        Feature("asked_areas", doc="seeker: 1 if the recruiter of its interview now has named one of the skill areas a team of the "
                "company's type needs (the shipped catalogue)"),
        # recruiter
        Feature("my_company", C, doc="recruiter: one-hot of its company (recruiter_k: company k)"),
        Feature("business", B, doc="recruiter: one-hot of its company's business: " + ", ".join(lay.businesses)),
        Feature("wanted_areas", A, doc="recruiter: multi-hot of the skill areas its company's description lists (the area order of my_areas)"),
        Feature("thought", doc="recruiter: 1 once it noted initial thoughts (think)"),
        Feature("waiting", doc=f"recruiter: applicants waiting for an interview / {N}"),
        Feature("candidates", doc=f"recruiter: candidates (interview started) / {N}"),
        Feature("cand_present", N, doc=f"recruiter: per candidate slot (N={N}), 1 if there is a j-th candidate"),
        Feature("cand_interviewing", N, doc="recruiter: per candidate, 1 if in its interview now"),
        Feature("cand_interviewed", N, doc="recruiter: per candidate, 1 if its interview is over"),
        Feature("cand_hired", N, doc="recruiter: per candidate, 1 if in the draft's hires"),
        Feature("cand_steps", N * S, doc=f"recruiter: per candidate, multi-hot of the draft workflow steps (S={S}) it is assigned to"),
        Feature("cand_claims", N * R, doc=f"recruiter: per candidate, multi-hot over the skill areas its team needs (its business's roles "
                f"in the shipped catalogue, in their order, R={R}) that the candidate named in the interview (case-insensitive text "
                "match of its lines)"),
        Feature("cand_accepted", N, doc="recruiter: per candidate, 1 if it accepted the company's offer"),
        Feature("cand_declined", N, doc="recruiter: per candidate, 1 if it declined the company's offer"),
        Feature("draft_workflow", B + 1, doc="recruiter: one-hot: the draft's workflow is the standard workflow of business b "
                "(business order), or another one (last slot); zeros: no workflow yet"),
        Feature("draft_steps", doc=f"recruiter: steps of the draft workflow / {MAX_STEPS}"),
        Feature("hired", doc=f"recruiter: people in the draft's hires / {N}"),
        Feature("submitted", doc="recruiter: 1 once its decision is submitted"),
    )


@dataclass(frozen=True, eq=False)
class _Tables:
    """Per layout: the features, each one's first slot, the bounds, and lookups by name."""

    features: tuple[Feature, ...]
    at: dict[str, int]
    low: np.ndarray
    high: np.ndarray
    workflows: dict[str, int]  # a standard workflow as "A -> B -> C" -> business index
    statics: dict[tuple, np.ndarray]  # per seeker or recruiter: a vector of its slots that stay put all episode, zeros elsewhere


@lru_cache(maxsize=64)
def _tables(lay: Layout) -> _Tables:
    feats = _features(lay)
    at, start = {}, 0
    for f in feats:
        at[f.name] = start
        start += f.size
    low, high = feature_bounds(feats)
    if low.any() or (high != 1.0).any():  # `encode` clips the slots it writes to [0, 1] one by one (`_unit`)
        raise ValueError("every feature of the job fair's encoding is in [0, 1]")
    return _Tables(feats, at, low, high, {" -> ".join(w): i for i, w in enumerate(lay.workflows)}, {})


_PHASE = {p: i for i, p in enumerate(PHASES)}
_current: list[Any] = [None, None, None]  # (config, its layout, its tables) of the latest `encode`


@lru_cache(maxsize=4096)  # agents' last-action lines repeat from step to step
def _last(line: str) -> tuple[int | None, bool]:
    """(the accepted last command's index, rejected?) from the view's last-action line."""
    if line.startswith(LAST_ACTION_REJECTED):
        return None, True
    if not line.startswith(LAST_ACTION) or not line.endswith(" (accepted)."):
        return None, False
    text = line[len(LAST_ACTION):].lower()
    for name in _LAST_COMMANDS:
        if text.startswith(name) and (len(text) == len(name) or not text[len(name)].isalnum()):
            return _COMMAND_NAMES.index(name), False
    return None, False


def _unit(x: float) -> float:
    """`x` clipped to [0, 1], the bounds of every feature: once in the float32 vector, the value np.clip gives after
    the cast (rounding to float32 is monotone and keeps 0 and 1; no ratio here is a negative zero or NaN)."""
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


def _said(lines: tuple[str, ...], speaker: str) -> list[str]:
    prefix = f"{speaker}: "
    return [line[len(prefix):] for line in lines if line.startswith(prefix)]


# An interview's transcript grows by a line a step and the earlier ones never change: what encode reads
# of a transcript is kept by its lines (the same string objects every step, so hashing them is cheap).
@lru_cache(maxsize=4096)
def _interview_slots(lines: tuple[str, ...], me: str, other: str, your_turn: bool, turns_left: int,
                     turns: int) -> tuple[float, ...]:
    """The interview block of an interview now: in one, your turn, then your turns left and the lines each side said,
    each / `turns`, all clipped to [0, 1]."""
    return (1.0, _unit(float(your_turn)), _unit(turns_left / turns), _unit(len(_said(lines, me)) / turns),
            _unit(len(_said(lines, other)) / turns))


@lru_cache(maxsize=4096)
def _named(lines: tuple[str, ...], speaker: str, areas: tuple[str, ...]) -> tuple[bool, tuple[int, ...]]:
    """(whether `speaker` said anything, the indices of the `areas` its lines name), case-insensitive."""
    said = " ".join(_said(lines, speaker)).lower()
    return bool(said), tuple(r for r, area in enumerate(areas) if area.lower() in said)


def _seeker_statics(view: Mapping[str, Any], lay: Layout, at: dict[str, int]) -> tuple[tuple[int, float], ...]:
    """A seeker's slots that stay put all episode: its areas, the companies' areas and fits, its limit."""
    C, A, index = lay.companies, len(lay.areas), lay.area_index
    own = {s.lower() for s in view["skills"]}
    slots = [(at["my_areas"] + index[s], 1.0) for s in own if s in index]
    slots.append((at["application_limit"], view["max_applications"] / C))
    for k, c in enumerate(view["companies"][:C]):
        fit = 0
        for area in c["skills"]:
            i = index.get(area.lower())
            if i is not None:
                slots.append((at["company_areas"] + k * A + i, 1.0))
            fit += area.lower() in own
        slots.append((at["company_fit"] + k, fit / lay.roles))
    return tuple(slots)


def _recruiter_statics(view: Mapping[str, Any], lay: Layout, at: dict[str, int]) -> tuple[tuple[int, float], ...]:
    """A recruiter's slots that stay put all episode: its company, business and the areas its description lists."""
    k = int(view["agent"].rsplit("_", 1)[1]) - 1
    slots = [(at["my_company"] + k, 1.0)] if k < lay.companies else []
    b = lay.business_of_type.get(view["company_type"])
    if b is not None:
        slots.append((at["business"] + b, 1.0))
    slots += [(at["wanted_areas"] + lay.area_index[a.lower()], 1.0) for a in view["skills_wanted"] if a.lower() in lay.area_index]
    return tuple(slots)


_seen_companies: list[Any] = [None, 0, (), {}]  # (a companies tuple, the slots, its names and skills, name -> slot) of the latest view


def _companies(companies: Any, slots: int) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], dict[str, int]]:
    """(each company's name and advertised skills, name -> its slot among the first `slots`) of a view's companies;
    worked out once per companies tuple the step's seekers share (read-only facts, so the same tuple holds the same)."""
    seen = _seen_companies
    if seen[0] is companies and seen[1] == slots:
        return seen[2], seen[3]
    listed = tuple((c["name"], tuple(c["skills"])) for c in companies)
    position = {c["name"]: k for k, c in enumerate(companies[:slots])}
    shared = type(companies) is tuple and all(type(c) is SharedFacts for c in companies)  # else it may change in place
    seen[:] = (companies if shared else None, slots, listed, position)
    return listed, position


def _flag(out: np.ndarray, start: int, position: Mapping[str, int], names: Any) -> None:
    """Set the slot after `start` of each named company that has one."""
    for name in names:
        k = position.get(name)
        if k is not None:
            out[start + k] = 1.0


def encode(view: Mapping[str, Any], config: JobFairConfig) -> np.ndarray:
    """The numeric observation of a view (see `features`): the view alone, nothing hidden.

    The slots are written in place by the feature table's offsets, on a copy of the agent's
    template of the slots that stay put all episode (cached by the view's values), each ratio
    clipped to [0, 1] as it is written (`_unit`; flags are 0 or 1): the vector
    `teamenvs.core.rl.pack` makes of the same blocks (a test checks it), at a fraction of its
    per-feature cost.
    """
    if _current[0] is not config:  # one config per env: its layout is looked up (and the config hashed) once
        lay = layout(config)
        _current[:] = (config, lay, _tables(lay))
    _, lay, tables = _current
    at = tables.at
    C, N, R, S = lay.companies, lay.seekers, lay.roles, lay.steps
    turns = lay.interview_turns
    seeker = view["role"] == "seeker"
    listed, position = _companies(view.get("companies", ()), C)
    key = (view["agent"], view["name"], view["role"], view.get("company_type"), tuple(view.get("skills", ())),
           tuple(view.get("skills_wanted", ())), listed)
    template = tables.statics.get(key)
    if template is None:
        template = np.zeros(len(tables.low), np.float32)
        template[at["role"] + (1 if seeker else 0)] = 1.0
        for i, value in (_seeker_statics(view, lay, at) if seeker else _recruiter_statics(view, lay, at)):
            template[i] = _unit(value)
        if len(tables.statics) > 4 * (C + N):
            tables.statics.clear()
        tables.statics[key] = template
    out = template.copy()
    phase = view["phase"]
    out[at["phase"] + _PHASE[phase]] = 1.0
    out[at["step"]] = _unit(view["step"] / lay.max_steps)
    if phase in ("applications", "decisions", "offers"):
        out[at["phase_left"]] = _unit((lay.phase_steps - (view["step"] - view["phase_start"])) / lay.phase_steps)
    if view["valid_now"]:
        out[at["needs_action"]] = 1.0
    command, rejected = _last(view["last_action"])
    if command is not None:
        out[at["last_command"] + command] = 1.0
    if rejected:
        out[at["last_rejected"]] = 1.0
    iv = view["interview"]
    if iv is not None:
        i = at["interview"]
        out[i:i + 5] = _interview_slots(tuple(iv["lines"]), view["name"], iv["with"], iv["your_turn"], iv["turns_left"], turns)
    out[at["past_interviews"]] = _unit(len(view["past_interviews"]) / max(C, N))
    if seeker:
        if view["applied"] is not None:
            out[at["applied_any"]] = 1.0
            _flag(out, at["applied"], position, view["applied"])
        if view["past_interviews"]:
            _flag(out, at["interviewed"], position, [p["company"] for p in view["past_interviews"]])
        if view["offers"]:
            _flag(out, at["offer"], position, view["offers"])
        if view["joined"]:
            _flag(out, at["joined"], position, (view["joined"],))
        if iv is not None:
            _flag(out, at["interviewing"], position, (iv["company"],))
            wanted = next((team_areas(c["company_type"]) for c in view["companies"] if c["name"] == iv["company"]), ())
            if _named(tuple(iv["lines"]), iv["with"], tuple(wanted))[1]:
                out[at["asked_areas"]] = 1.0
    else:
        wanted = team_areas(view["company_type"])[:R]
        if view["thought"] is not None:
            out[at["thought"]] = 1.0
        out[at["waiting"]] = _unit(len(view["applicants"]) / N)
        candidates = view["candidates"][:N]
        out[at["candidates"]] = len(candidates) / N  # at most 1: cut to N above
        slot = {name: j for j, name in enumerate(candidates)}
        i = at["cand_present"]
        out[i:i + len(candidates)] = 1.0
        talks = [(p, False) for p in view["past_interviews"]] + ([(iv, True)] if iv is not None else [])
        for talk, now in talks:
            j = slot.get(talk["with"])
            if j is None:
                continue
            out[at["cand_interviewing" if now else "cand_interviewed"] + j] = 1.0
            said, claims = _named(tuple(talk["lines"]), talk["with"], tuple(wanted))
            if said:
                for r in claims:
                    out[at["cand_claims"] + j * R + r] = 1.0
        draft = view["draft"]
        for name in draft["hire"]:
            j = slot.get(name)
            if j is not None:
                out[at["cand_hired"] + j] = 1.0
        workflow = tuple(draft["workflow"])
        if draft["assign"]:
            step_of = {s: i for i, s in enumerate(workflow[:S])}
            for name, step in draft["assign"]:
                j, s = slot.get(name), step_of.get(step)
                if j is not None and s is not None:
                    out[at["cand_steps"] + j * S + s] = 1.0
        for answer in view["answers"]:
            name, _, how = answer.rpartition(" your offer")[0].rpartition(" ")
            j = slot.get(name)
            if j is not None:
                out[at["cand_accepted" if how == "accepted" else "cand_declined"] + j] = 1.0
        if workflow:
            out[at["draft_workflow"] + tables.workflows.get(" -> ".join(workflow), len(lay.workflows))] = 1.0
        out[at["draft_steps"]] = _unit(len(workflow) / MAX_STEPS)
        out[at["hired"]] = _unit(len(draft["hire"]) / N)
        if draft["submitted"]:
            out[at["submitted"]] = 1.0
    return out


def blocks(vector: np.ndarray, config: JobFairConfig) -> dict[str, np.ndarray]:
    """The encoding cut into its features' blocks, by name (the inverse of `pack`)."""
    tables = _tables(layout(config))
    return {f.name: vector[tables.at[f.name]:tables.at[f.name] + f.size] for f in tables.features}
