"""`job_fair_v0`: phase rules, interviews, decision forms, deadlines, information isolation, rewards, config.

The rules are checked by driving the env by hand (or honest scripted agents up to the
phase of interest, then hand-written actions): each refused command gives its specific
error, which the agent reads in its next observation; an action sent by an agent that is
not asked to act (`needs_action` False) is ignored. Interviews: only applicants are
interviewed, one at a time per recruiter, in application order, the recruiter first, the
sides alternating for `interview_turns` turns each (an invalid action uses up the turn,
`end interview` closes early), and a seeker who applied to several companies is never in
two interviews at once. The decision may be given as text commands or as one JSON object
(bare, after `ACTION:`, after `submit`) and gives the same `decision` event either way.
At `phase_steps` an unsubmitted draft is submitted and an unanswered offer declined.

Information isolation, the core property, is checked at every step of honest, boastful
and random episodes in S3 and S4: a seeker never sees another seeker's biography (skills
list, experience sentence) or name; a recruiter sees a seeker's words only if they
interviewed together, and never another company's candidates or decisions; interview
lines reach only the two participants; no observation names a seeker's true role or the
word "redundant" (while `env.state()` holds all of it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import pytest

import agents
import teamenvs
from teamenvs.job_fair.commands import RECRUITER_COMMANDS, SEEKER_COMMANDS
from teamenvs.job_fair.env import JobFairEnv
from teamenvs.job_fair.fair import catalogue

SOFTWARE_STEPS = ("Designing", "Coding", "Testing", "Documenting")


# ---------------------------------------------------------------------- helpers
def make(scenario: str = "S3", **config: Any) -> JobFairEnv:
    env = teamenvs.make("job_fair_v0", scenario=scenario, **config)
    return env.unwrapped


def step(env: JobFairEnv, infos, actions: Mapping[str, str]):
    """Step with `actions`, sending only those of agents asked to act."""
    return env.step({a: x for a, x in actions.items() if infos[a]["needs_action"]})


def play(
    env: JobFairEnv,
    seed: int = 0,
    kind: str = "honest",
    until: Callable[[JobFairEnv], bool] | None = None,
    edit: Callable[[JobFairEnv, str, str], str | None] | None = None,
):
    """Play scripted `kind` agents from reset until `until(env)` or the end; `edit` may replace an action.

    Returns the frames (observations, rewards, infos), the first one from the reset.
    """
    policies = agents.make_policies(env, kind, seed=seed)
    observations, infos = env.reset(seed=seed)
    frames = [(observations, {}, infos)]
    while env.agents and not (until is not None and until(env)):
        actions = {}
        for agent in env.agents:
            if infos[agent]["needs_action"]:
                action = policies[agent].act(observations[agent], infos[agent])
                if edit is not None:
                    changed = edit(env, agent, action)
                    action = action if changed is None else changed
                actions[agent] = action
        observations, rewards, _, _, infos = env.step(actions)
        frames.append((observations, rewards, infos))
    return frames


def at_phase(phase: str, scenario: str = "S1", seed: int = 0, **config: Any):
    """An env played by honest agents up to the first step of `phase`, with its observations and infos."""
    env = make(scenario, **config)
    frames = play(env, seed, until=lambda e: e.game.phase == phase)
    observations, _, infos = frames[-1]
    assert env.game.phase == phase
    return env, observations, infos


def agent_of(env: JobFairEnv, name: str) -> str:
    return env.game.agent_named[name]


def role_names(env: JobFairEnv) -> dict[str, str]:
    """Seeker name by true role (key None: the redundant seeker)."""
    return {p.role: p.name for p in env.game.persona.values()}


def strings(value: Any) -> list[str]:
    """Every string inside a view (dicts, mapping proxies, tuples, lists)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in strings(k) + strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in strings(v)]
    return []


def rejected(infos, agent: str) -> str:
    last = infos[agent]["last_action"]
    assert last["ok"] is False, last
    return last["error"]


def assert_read_back(observations, agent: str, error: str) -> None:
    """The refusal is in the agent's next observation."""
    assert f"Your last action was REJECTED: {error}" in observations[agent]


# ---------------------------------------------------------------------- phase rules
def test_s3_refuses_a_second_company():
    env = make("S3")
    observations, infos = env.reset(seed=0)
    seeker = env.game.seekers[0]
    observations, _, _, _, infos = step(env, infos, {seeker: "apply Brightloop Software, Quantline Analytics"})
    error = rejected(infos, seeker)
    assert "at most 1" in error and "(2 given): you may apply to at most 1 company." in error
    assert infos[seeker]["last_action"]["kind"] == "bad_argument"
    assert_read_back(observations, seeker, error)
    assert seeker not in env.game.applied and infos[seeker]["needs_action"]  # it may try again
    observations, _, _, _, infos = step(env, infos, {seeker: "apply Quantline Analytics"})
    assert infos[seeker]["last_action"]["ok"] and env.game.applied[seeker] == ("Quantline Analytics",)


def test_s4_accepts_three_companies_and_no_fourth_name():
    env = make("S4")
    observations, infos = env.reset(seed=0)
    three = "Brightloop Software, Quantline Analytics, Inkhouse Advertising"
    first, second, third = env.game.seekers[:3]
    observations, _, _, _, infos = step(
        env, infos, {first: f"apply {three}", second: f"apply {three}, Acme Corp", third: f"apply {three}, Brightloop Software"}
    )
    assert infos[first]["last_action"]["ok"]
    assert env.game.applied[first] == ("Brightloop Software", "Quantline Analytics", "Inkhouse Advertising")
    error = rejected(infos, second)
    assert error.startswith("unknown company 'Acme'. Known: Brightloop Software, Quantline Analytics, Inkhouse Advertising.")
    assert_read_back(observations, second, error)
    error = rejected(infos, third)
    assert error.startswith("Brightloop Software is named twice.")
    assert second not in env.game.applied and third not in env.game.applied


def test_applying_to_an_unknown_company_names_the_known_ones():
    env = make("S3")
    observations, infos = env.reset(seed=1)
    seeker = env.game.seekers[4]
    observations, _, _, _, infos = step(env, infos, {seeker: "apply Globex"})
    error = rejected(infos, seeker)
    assert error == "unknown company 'Globex'. Known: Brightloop Software, Quantline Analytics, Inkhouse Advertising. Usage: apply <company>"
    assert_read_back(observations, seeker, error)


def test_prose_after_the_companies_is_not_read_as_another_company():
    """"apply Inkhouse Advertising, as agreed" was refused ("unknown company 'as'"); a capitalised unknown name after a
    separator is still refused, not dropped."""
    env = make("S4")
    observations, infos = env.reset(seed=0)
    first, second, third = env.game.seekers[:3]
    observations, _, _, _, infos = step(env, infos, {first: "apply Inkhouse Advertising, as agreed",
                                                     second: "apply Quantline Analytics and 2 more rounds, then we see",
                                                     third: "apply Inkhouse Advertising and Zeta Corp"})
    assert env.game.applied[first] == ("Inkhouse Advertising",) and env.game.applied[second] == ("Quantline Analytics",)
    assert rejected(infos, third).startswith("unknown company 'Zeta'.")
    # a name later in the line, or a misspelt one, keeps the refusal: read as the first alone, it would be dropped
    _, infos = env.reset(seed=0)
    _, _, _, _, infos = step(env, infos, {first: "apply Brightloop Software, and also Quantline Analytics",
                                          second: "apply Inkhouse Advertising, brightlop softwre"})
    assert rejected(infos, first).startswith("unknown company 'also'.")
    assert "Did you mean 'Brightloop Software'?" in rejected(infos, second)


def test_recruiter_cannot_hire_in_the_applications_phase():
    env = make("S3")
    observations, infos = env.reset(seed=0)
    observations, _, _, _, infos = step(env, infos, {"recruiter_1": "hire Elena Vasquez"})
    last = infos["recruiter_1"]["last_action"]
    assert last["kind"] == "not_allowed" and last["command"] == "hire"
    assert last["error"].startswith("'hire' is not allowed now: it is for recruiters, in the decisions phase; it is now the applications phase.")
    assert "Valid now: think <thought>, wait." in last["error"]
    assert_read_back(observations, "recruiter_1", last["error"])
    assert "recruiter_1" not in env.game.thought  # the turn is not used up: it must still think or wait
    assert infos["recruiter_1"]["needs_action"]


def test_seeker_cannot_accept_without_an_offer():
    env = make("S3")
    observations, infos = env.reset(seed=0)
    seeker = env.game.seekers[2]
    observations, _, _, _, infos = step(env, infos, {seeker: "accept Brightloop Software"})
    error = rejected(infos, seeker)
    assert error.startswith("'accept' is not allowed now: it is for seekers with a job offer, in the offers phase; it is now the applications phase.")
    assert_read_back(observations, seeker, error)


def test_say_out_of_turn_is_ignored():
    env, observations, infos = at_phase("interviews", "S1")
    interview = env.game.current["recruiter_1"]
    seeker = interview.seeker
    assert infos["recruiter_1"]["needs_action"] and not infos[seeker]["needs_action"]
    assert infos[seeker]["valid_actions"] == ()
    observations, _, _, _, infos = env.step({"recruiter_1": "say Hello there.", seeker: "say I interrupt you!"})
    assert infos[seeker]["last_action"] == {"ok": None, "ignored": True}
    # its turn now: its observation tells what became of its last decision, and nothing of the ignored words
    line = infos[seeker]["view"]["last_action"]
    assert line.startswith("Your last action: ") and line.endswith(" (accepted).") and "interrupt" not in line
    assert interview.lines == ["Morgan Ellery: Hello there."]
    assert interview.said == {"recruiter": 1, "seeker": 0} and interview.turn == "seeker"
    assert "I interrupt you" not in observations["recruiter_1"]
    # say before the interviews is refused with the phase named
    env = make("S1")
    observations, infos = env.reset(seed=0)
    observations, _, _, _, infos = env.step({"recruiter_1": "say hello"})
    assert rejected(infos, "recruiter_1").startswith("'say' is not allowed now: it is for the interviews, on your turn; it is now the applications phase.")


def test_hire_of_someone_who_did_not_interview_here_is_refused():
    env, observations, infos = at_phase("decisions", "S3")
    recruiter = "recruiter_1"
    elsewhere = next(env.game.persona[s].name for s in env.game.seekers if env.game.applied[s] != ("Brightloop Software",))
    assert elsewhere not in env.game.candidates[recruiter]
    observations, _, _, _, infos = env.step({recruiter: f"hire {elsewhere}"})
    error = rejected(infos, recruiter)
    first = elsewhere.split()[0]
    assert error == f"unknown candidate '{first}'. Known: {', '.join(env.game.candidates[recruiter])}. Usage: hire <candidate>[, <candidate>...]"
    assert_read_back(observations, recruiter, error)
    assert env.game.drafts[recruiter].hire == ()


def test_hire_is_denied_to_a_recruiter_nobody_applied_to():
    env = make("S3")
    _, infos = env.reset(seed=0)
    actions = {a: "apply Brightloop Software" for a in env.game.seekers} | {r: "wait" for r in env.game.recruiters}
    infos = step(env, infos, actions)[4]
    while env.game.phase == "interviews":
        infos = step(env, infos, {a: "end interview" for a in env.agents})[4]
    assert env.game.phase == "decisions" and env.game.candidates["recruiter_2"] == ()
    infos = env.step({"recruiter_2": "hire Elena Vasquez"})[4]
    assert rejected(infos, "recruiter_2").startswith(
        "'hire' is not allowed now: nobody interviewed with you, so there is nobody to hire; give your workflow and submit."
    )


def test_assign_before_workflow_is_denied():
    env, observations, infos = at_phase("decisions", "S1")
    names = role_names(env)
    observations, _, _, _, infos = env.step({"recruiter_1": f"hire {names['programmer']}"})
    assert infos["recruiter_1"]["last_action"]["ok"]
    assert not any(f.command == "assign" for f in infos["recruiter_1"]["valid_actions"])
    observations, _, _, _, infos = env.step({"recruiter_1": f"assign {names['programmer']} to Coding"})
    last = infos["recruiter_1"]["last_action"]
    assert last["kind"] == "not_allowed"
    assert last["error"].startswith("'assign' is not allowed now: first hire someone and give your workflow.")
    assert_read_back(observations, "recruiter_1", last["error"])
    observations, _, _, _, infos = env.step({"recruiter_1": "workflow Designing -> Coding"})
    assert any(f.command == "assign" for f in infos["recruiter_1"]["valid_actions"])
    observations, _, _, _, infos = env.step({"recruiter_1": f"assign {names['programmer']} to Coding"})
    assert infos["recruiter_1"]["last_action"]["ok"]
    assert env.game.drafts["recruiter_1"].assign == ((names["programmer"], "Coding"),)


def test_submit_without_a_workflow_is_rejected():
    env, observations, infos = at_phase("decisions", "S1")
    names = role_names(env)
    observations, _, _, _, infos = env.step({"recruiter_1": f"hire {names['programmer']}"})
    observations, _, _, _, infos = env.step({"recruiter_1": "submit"})
    last = infos["recruiter_1"]["last_action"]
    assert last["kind"] == "rejected" and last["command"] == "submit"
    assert last["error"] == "give your workflow first ('workflow <step> -> <step> -> ...'), or submit the whole decision as JSON"
    assert_read_back(observations, "recruiter_1", last["error"])
    assert not env.game.drafts["recruiter_1"].submitted and env.game.phase == "decisions"


def test_accepting_one_offer_declines_the_others():
    three = "Brightloop Software, Quantline Analytics, Inkhouse Advertising"
    chosen: dict[str, str] = {}

    def edit(env, agent, action):
        if env.game.phase == "applications" and agent in env.game.persona and env.game.persona[agent].role == "programmer":
            chosen["seeker"] = agent
            return f"apply {three}"
        if env.game.phase == "decisions":
            name = env.game.persona[chosen["seeker"]].name
            return "submit " + json.dumps({"list": [name], "workflow": ["Plan"], "assign": {}})
        return None

    env = make("S4")
    frames = play(env, seed=0, edit=edit, until=lambda e: e.game.phase == "offers")
    observations, _, infos = frames[-1]
    seeker = chosen["seeker"]
    name = env.game.persona[seeker].name
    assert env.game.offers[seeker] == ["Brightloop Software", "Quantline Analytics", "Inkhouse Advertising"]
    assert infos[seeker]["needs_action"]
    observations, _, _, _, infos = env.step({seeker: "accept Quantline Analytics"})
    answers = [(e["company"], e["answer"], e["how"]) for e in env.global_events if e["type"] == "offer_answer"]
    assert answers == [
        ("Quantline Analytics", "accepted", "answer"),
        ("Brightloop Software", "declined", "another offer was accepted"),
        ("Inkhouse Advertising", "declined", "another offer was accepted"),
    ]
    assert env.game.joined[seeker] == "Quantline Analytics" and env.game.offers[seeker] == []
    assert "Your offer from Brightloop Software was declined: another offer was accepted." in observations[seeker]
    assert "Your offer from Inkhouse Advertising was declined: another offer was accepted." in observations[seeker]
    assert f"{name} declined your offer." in observations["recruiter_1"]
    assert f"{name} accepted your offer." in observations["recruiter_2"]
    assert env.game.phase == "done" and not env.agents


# ---------------------------------------------------------------------- interviews
def talk(env: JobFairEnv, infos, record: Callable[[JobFairEnv, Any], None] | None = None, line: str = "say turn {step}"):
    """Play the interviews phase with every actor saying one line per turn (never ending early)."""
    while env.game.phase == "interviews":
        if record is not None:
            record(env, infos)
        actions = {a: line.format(step=env.step_count, agent=a) for a in env.agents if infos[a]["needs_action"]}
        infos = env.step(actions)[4]
    return infos


def test_interviews_follow_application_order_alternate_and_close_after_the_turns():
    env = make("S3")
    _, infos = env.reset(seed=2)
    companies = [c.name for c in env.game.fair.companies]
    applied = {s: companies[i % 3] for i, s in enumerate(env.game.seekers)}
    infos = step(env, infos, {s: f"apply {c}" for s, c in applied.items()} | {r: "wait" for r in env.game.recruiters})[4]
    assert env.game.phase == "interviews"
    actors: dict[int, list[str]] = {}

    def record(env, infos):
        open_ = [i for i in env.game.interviews if i.open]
        for agent in env.agents:  # only the actor of an open interview is asked
            expected = any(i.actor() == agent for i in open_)
            assert infos[agent]["needs_action"] is expected
            view = infos[agent]["view"]["interview"]
            if agent in env.game.current:
                assert view is not None and view["your_turn"] is expected
            else:
                assert view is None and infos[agent]["valid_actions"] == ()
        for r in env.game.recruiters:
            assert sum(i.recruiter == r for i in open_) <= 1  # one at a time
        for i in open_:
            actors.setdefault(id(i), []).append(i.actor())

    talk(env, infos, record)
    turns = env.config.interview_turns
    assert env.game.phase == "decisions"
    # only applicants, each once, in application order (all applied at the same step: the seeded order the
    # applications were taken in, `applied`'s order)
    assert list(env.game.applied) != list(env.game.seekers)  # (not by seat, at this seed)
    for r, company in zip(env.game.recruiters, companies):
        expected = [env.game.persona[s].name for s in env.game.applied if applied[s] == company]
        assert [env.game.persona[i.seeker].name for i in env.game.mine[r]] == expected
        assert env.game.candidates[r] == tuple(expected)
    assert len(env.game.interviews) == len(env.game.seekers)
    for interview in env.game.interviews:
        assert actors[id(interview)] == [interview.recruiter, interview.seeker] * turns  # recruiter first, alternating
        assert interview.said == {"recruiter": turns, "seeker": turns} and not interview.open
        speakers = [line.split(": ", 1)[0] for line in interview.lines]
        assert speakers == [env.game.company[interview.recruiter].recruiter, env.game.persona[interview.seeker].name] * turns
    ends = [e for e in env.global_events if e["type"] == "interview_end"]
    assert ends and all(e["reason"] == f"both sides used their {turns} turns" for e in ends)


def test_interview_text_is_shown_to_its_two_participants():
    env, observations, infos = at_phase("interviews", "S1")
    interview = env.game.current["recruiter_1"]
    seeker = interview.seeker
    name = env.game.persona[seeker].name
    assert f"Your interview with {name} begins; you speak first." in observations["recruiter_1"]
    assert "Your interview with Morgan Ellery of Brightloop Software begins; they speak first." in observations[seeker]
    assert "It is your turn (3 of your 3 turns left)." in observations["recruiter_1"]
    assert "Waiting for Morgan Ellery to speak." in observations[seeker]
    others = [s for s in env.game.applied if s != seeker]  # in the order the applications were taken
    assert all(not infos[s]["needs_action"] for s in others)
    waiting = infos["recruiter_1"]["view"]["applicants"]
    assert waiting == tuple(env.game.persona[s].name for s in others)
    assert f"Waiting to be interviewed: {', '.join(waiting)}." in observations["recruiter_1"]


def test_end_interview_closes_it_early():
    env, _, _ = at_phase("interviews", "S1")
    first = env.game.current["recruiter_1"]
    observations = env.step({"recruiter_1": "end interview"})[0]
    assert not first.open and first.lines == [] and first.said == {"recruiter": 0, "seeker": 0}
    name = env.game.persona[first.seeker].name
    assert f"Your interview with {name} (Brightloop Software) is over: Morgan Ellery ended the interview." in observations["recruiter_1"]
    assert "Your interview with Morgan Ellery (Brightloop Software) is over: Morgan Ellery ended the interview." in observations[first.seeker]
    second = env.game.current["recruiter_1"]  # the next applicant starts at once
    assert second is not first and second.seeker != first.seeker
    env.step({"recruiter_1": "say Hello."})
    env.step({second.seeker: "end interview"})
    assert not second.open and second.lines == ["Morgan Ellery: Hello."]
    end = next(e for e in env.global_events if e["type"] == "interview_end")
    assert end["reason"] == f"{env.game.persona[second.seeker].name} ended the interview" and end["turns"] == {"recruiter": 1, "seeker": 0}


def test_an_invalid_action_uses_up_the_turn():
    env, observations, infos = at_phase("interviews", "S1")
    interview = env.game.current["recruiter_1"]
    seeker = interview.seeker
    observations, _, _, _, infos = env.step({"recruiter_1": "hire everybody"})
    error = rejected(infos, "recruiter_1")
    assert error.startswith("'hire' is not allowed now: it is for recruiters, in the decisions phase; it is now the interviews phase.")
    assert_read_back(observations, "recruiter_1", error)
    assert interview.lines == [] and interview.said == {"recruiter": 1, "seeker": 0}
    assert infos[seeker]["needs_action"] and not infos["recruiter_1"]["needs_action"]
    assert infos["recruiter_1"]["view"]["interview"]["turns_left"] == 2
    observations, _, _, _, infos = env.step({})  # a missing action is invalid too
    assert rejected(infos, seeker) == "no action was received from you this step"
    assert interview.said == {"recruiter": 1, "seeker": 1} and infos["recruiter_1"]["needs_action"]


def test_a_seeker_who_applied_to_several_companies_is_never_in_two_interviews_at_once():
    env = make("S4")
    _, infos = env.reset(seed=0)
    three = "Brightloop Software, Quantline Analytics, Inkhouse Advertising"
    two = "Quantline Analytics, Inkhouse Advertising"
    applied = {s: (three if i % 2 else two) for i, s in enumerate(env.game.seekers)}
    infos = step(env, infos, {s: f"apply {text}" for s, text in applied.items()} | {r: "wait" for r in env.game.recruiters})[4]
    waited = []

    def record(env, infos):
        busy = [i.seeker for i in env.game.interviews if i.open]
        assert len(busy) == len(set(busy))  # nobody in two interviews at once
        for s in env.game.seekers:
            open_for_s = [i for i in env.game.interviews if i.open and i.seeker == s]
            assert len(open_for_s) <= 1
        # a recruiter whose next applicant is busy elsewhere waits (or takes a free one)
        waited.extend(r for r in env.game.recruiters if r not in env.game.current and env.game.queue[r])

    talk(env, infos, record)
    assert env.game.phase == "decisions"
    pairs = sorted((i.company, i.seeker) for i in env.game.interviews)
    assert pairs == sorted((c, s) for s, text in applied.items() for c in text.split(", "))
    assert waited  # the schedule really had to avoid clashes


# Each recruiter interviews in the order seekers applied, not in agent-id order.
def test_a_late_applicant_is_interviewed_after_the_earlier_ones():
    env = make("S1")
    _, infos = env.reset(seed=0)
    late = env.game.seekers[0]
    actions = {s: "apply Brightloop Software" for s in env.game.seekers[1:]} | {late: "look around", "recruiter_1": "wait"}
    infos = step(env, infos, actions)[4]
    assert env.game.phase == "applications" and list(env.game.applied) == env.game.seekers[1:]
    infos = step(env, infos, {late: "apply Brightloop Software"})[4]
    assert env.game.phase == "interviews"
    assert env.game.current["recruiter_1"].seeker == env.game.seekers[1]  # the first to apply goes first
    talk(env, infos)
    assert [i.seeker for i in env.game.mine["recruiter_1"]] == env.game.seekers[1:] + [late]


# ---------------------------------------------------------------------- decision forms
def decide(forms: list[str], seed: int = 0):
    """S1 played by honest agents up to the decisions, then the recruiter's `forms` (names by role)."""
    env, _, infos = at_phase("decisions", "S1", seed)
    names = {(k or "redundant").replace(" ", "_"): v for k, v in role_names(env).items()}
    for form in forms:
        infos = env.step({"recruiter_1": form.format(**names)})[4]
        assert infos["recruiter_1"]["last_action"]["ok"], infos["recruiter_1"]["last_action"]
    decisions = [e for e in env.global_events if e["type"] == "decision"]
    return env, decisions


HIRE = "hire {project_manager}, {programmer}, {code_tester}, {interface_designer}"
WORKFLOW = "workflow Designing -> Coding -> Testing -> Documenting"
DECISION = (
    '{{"list": ["{project_manager}", "{programmer}", "{code_tester}", "{interface_designer}"], '
    '"workflow": ["Designing", "Coding", "Testing", "Documenting"], '
    '"assign": {{"{interface_designer}": "Designing", "{project_manager}": ["Designing", "Documenting"], '
    '"{programmer}": 2, "{code_tester}": "Testing"}}}}'
)
DECISION_FORMS = {
    "text, steps by name": [HIRE, WORKFLOW, ("assign {interface_designer} to Designing, {project_manager} to Designing and Documenting, "
                            "{programmer} to Coding, {code_tester} to Testing"), "submit"],
    "text, steps by number": [HIRE, WORKFLOW, "assign {interface_designer} to 1, {project_manager} to 1 and 4, {programmer} to 2",
                              "assign {code_tester} to 3", "submit"],
    "bare json": [DECISION],
    "json after ACTION:": ["I weighed every candidate carefully.\nACTION: " + DECISION],
    "submit json": ["submit " + DECISION],
}


@pytest.mark.parametrize("form", list(DECISION_FORMS))
def test_text_and_json_decisions_give_the_same_decision_event(form):
    env, decisions = decide(DECISION_FORMS[form])
    names = role_names(env)
    pm, prog, tester, ui = names["project manager"], names["programmer"], names["code tester"], names["interface designer"]
    assert decisions == [
        {
            "type": "decision",
            "text": "",
            "recruiter": "recruiter_1",
            "company": "Brightloop Software",
            "hire": [pm, prog, tester, ui],
            "workflow": list(SOFTWARE_STEPS),
            "assign": [[ui, "Designing"], [pm, "Designing"], [pm, "Documenting"], [prog, "Coding"], [tester, "Testing"]],
            "rationale": "",
            "at_deadline": False,
        }
    ]
    assert env.game.phase == "offers" and env.game.team_right("recruiter_1") is False  # nobody has joined yet


def test_json_decision_keeps_the_rationale():
    env, decisions = decide([('{{"list": ["{programmer}"], "workflow": "Plan -> Build", "assign": {{"Build": "{programmer}"}}, '
                             '"rationale": "Only one coder fits."}}')])
    assert decisions[0]["rationale"] == "Only one coder fits."
    assert decisions[0]["workflow"] == ["Plan", "Build"]
    assert decisions[0]["assign"] == [[role_names(env)["programmer"], "Build"]]


@pytest.mark.parametrize(
    "body, error",
    [
        ('{{"list": ["Zed Nobody"], "workflow": ["A"], "assign": {{}}}}', "unknown name 'Zed Nobody' in 'list'. Known: "),
        ('{{"list": ["{programmer}"], "assign": {{}}}}', "the decision needs the parts list, workflow and assign; missing: workflow"),
        ('{{"list": ["{programmer}"], "workflow": ["A"], "assign": {{}}, "budget": 5}}',
         "unknown key 'budget' in the decision; use list, workflow, assign and (optional) rationale"),
        ('{{"list": ["{programmer}"], "workflow": ["A", "B"], "assign": {{"{programmer}": 3}}}}', "there is no step 3; your workflow has 2 steps: A, B"),
        ('{{"list": ["{programmer}"], "workflow": ["A"], "assign": {{}}', "the decision is not valid JSON"),
    ],
)
def test_json_decision_errors_are_specific(body, error):
    env, observations, infos = at_phase("decisions", "S1")
    names = {(k or "redundant").replace(" ", "_"): v for k, v in role_names(env).items()}
    observations, _, _, _, infos = env.step({"recruiter_1": "submit " + body.format(**names)})
    message = rejected(infos, "recruiter_1")
    assert message.startswith(error)
    if error.startswith("unknown name"):
        assert ", ".join(env.game.candidates["recruiter_1"]) in message
    assert_read_back(observations, "recruiter_1", message)
    assert not env.game.drafts["recruiter_1"].submitted


# ---------------------------------------------------------------------- deadlines
def test_phase_deadlines_submit_drafts_and_decline_unanswered_offers():
    env, observations, infos = at_phase("decisions", "S1", phase_steps=2)
    names = role_names(env)
    observations, _, _, _, infos = env.step({"recruiter_1": f"hire {names['programmer']}, {names['code tester']}"})
    assert env.game.phase == "decisions"
    observations, _, _, _, infos = env.step({"recruiter_1": "workflow Coding -> Testing"})  # never submits
    decision = next(e for e in env.global_events if e["type"] == "decision")
    assert decision["at_deadline"] is True
    assert decision["hire"] == [names["programmer"], names["code tester"]] and decision["workflow"] == ["Coding", "Testing"]
    assert "Time is up: your decision was submitted as it stood." in observations["recruiter_1"]
    assert env.game.phase == "offers"
    hired = [agent_of(env, names["programmer"]), agent_of(env, names["code tester"])]
    assert sorted(a for a in env.agents if infos[a]["needs_action"]) == sorted(hired)
    infos = env.step({})[4]  # nobody answers
    assert env.game.phase == "offers" and all(env.game.offers[a] for a in hired)
    observations, _, terminations, _, infos = env.step({})
    answers = [e for e in env.global_events if e["type"] == "offer_answer"]
    assert sorted((e["seeker"], e["answer"], e["how"]) for e in answers) == sorted([
        (names["programmer"], "declined", "no answer by the deadline"),
        (names["code tester"], "declined", "no answer by the deadline"),
    ])
    for agent in hired:
        assert "Your offer from Brightloop Software was declined: no answer by the deadline." in observations[agent]
        assert env.game.joined[agent] is None
    assert all(terminations.values()) and env.game.phase == "done"


def test_unfinished_applications_are_passed_over_at_the_deadline():
    env = make("S3", phase_steps=2)
    observations, infos = env.reset(seed=0)
    idle = env.game.seekers[0]
    actions = {s: "apply Brightloop Software" for s in env.game.seekers[1:]} | {r: "wait" for r in env.game.recruiters}
    infos = step(env, infos, actions)[4]
    assert env.game.phase == "applications" and infos[idle]["needs_action"]
    observations, _, _, _, infos = env.step({})
    assert env.game.phase == "interviews" and idle not in env.game.applied
    assert "The applications phase is over and you did not apply." in observations[idle]


# ---------------------------------------------------------------------- information isolation
def check_isolation(env: JobFairEnv, observations, infos) -> None:
    fair = env.game.fair
    seekers = env.game.seekers
    skills = {s: ", ".join(env.game.persona[s].skills) for s in seekers}
    experience = {s: env.game.persona[s].experience for s in seekers}
    names = {s: env.game.persona[s].name for s in seekers}
    partners = {a: {i.partner(a) for i in env.game.mine[a]} for a in env.possible_agents}
    hidden_roles = hidden_role_names(env)
    company_names = [c.name for c in fair.companies]
    all_lines = [(i, line) for i in env.game.interviews for line in i.lines]
    for agent in observations:
        text = observations[agent]
        view_text = "\n".join(strings(infos[agent]["view"]))
        for seen in (text, view_text):
            lowered = seen.lower()
            assert "redundant" not in lowered
            assert not [r for r in hidden_roles if r in lowered], agent
            for other in seekers:
                if other == agent:
                    continue
                if agent in env.game.persona:  # a seeker never sees another seeker
                    assert skills[other] not in seen and experience[other] not in seen and names[other] not in seen
                elif other not in partners[agent]:  # a recruiter hears only its own candidates
                    assert skills[other] not in seen and experience[other] not in seen
                    assert f"{names[other]}:" not in seen
            if agent in env.game.company:
                mine = env.game.company[agent].name
                applicants = {names[s] for s in seekers if mine in env.game.applied.get(s, ())}
                for other in seekers:
                    if names[other] in seen:  # never another company's candidates
                        assert names[other] in applicants, (agent, names[other])
                for company in company_names:
                    if company != mine:  # nor its name, hence nothing of its decisions
                        assert company not in seen
                for r in env.game.recruiters:
                    if r != agent:
                        assert env.game.company[r].recruiter not in seen
        # interview lines reach only the participants of an interview where they were said
        for _interview, line in all_lines:
            if line in text:
                assert any(line in i.lines for i in env.game.mine[agent]), (agent, line)
        view = infos[agent]["view"]
        shown = ([view["interview"]] if view["interview"] else []) + list(view["past_interviews"])
        assert sorted(iv["with"] for iv in shown) == sorted(env.game.name(i.partner(agent)) for i in env.game.mine[agent])
        if agent in env.game.company:
            assert view["draft"]["hire"] == env.game.drafts[agent].hire and view["candidates"] == env.game.candidates[agent]


def hidden_role_names(env: JobFairEnv) -> set[str]:
    """Role names that appear in no public text nor any biography (so they can only leak)."""
    from teamenvs.job_fair.fair import biography, description

    public = " ".join([biography(p) for p in env.game.fair.seekers] + [description(env.game.fair, c) for c in env.game.fair.companies]
                      + [b.goal for b in env.game.fair.businesses.values()]).lower()
    return {r for r in env.game.fair.roles if r.lower() not in public}


@pytest.mark.parametrize("scenario", ["S3", "S4"])
@pytest.mark.parametrize("kind", ["honest", "boastful", "random"])
def test_no_agent_sees_what_is_not_theirs(scenario, kind):
    for seed in (0, 1):
        env = make(scenario)
        policies = agents.make_policies(env, kind, seed=seed)
        observations, infos = env.reset(seed=seed)
        assert {"project manager", "programmer", "code tester", "interface designer"} <= hidden_role_names(env)
        check_isolation(env, observations, infos)
        while env.agents:
            actions = {a: policies[a].act(observations[a], infos[a]) for a in env.agents if infos[a]["needs_action"]}
            observations, _, _, _, infos = env.step(actions)
            check_isolation(env, observations, infos)
        assert env.game.interviews or kind == "random"


def test_honest_seekers_state_their_skills_only_to_their_interviewer():
    env = make("S3")
    play(env, seed=0)
    said = [(i, line) for i in env.game.interviews for line in i.lines]
    for seeker in env.game.seekers:
        skills = ", ".join(env.game.persona[seeker].skills)
        heard_by = {i.recruiter for i, line in said if skills in line}
        assert heard_by == {i.recruiter for i in env.game.mine[seeker]} and len(heard_by) == 1


def test_state_holds_the_hidden_truth():
    env = make("S3")
    play(env, seed=0)
    state = env.state()
    json.dumps(state)  # JSON-ready
    seekers = {s["name"]: s for s in state["fair"]["seekers"]}
    redundant = [n for n, s in seekers.items() if s["role"] is None]
    assert redundant == ["Ben Whitaker"] and seekers["Ben Whitaker"]["skills"] == ["financial accounting", "spreadsheets", "microeconomics"]
    assert {n: s["role"] for n, s in seekers.items()} == {p.name: p.role for p in env.game.persona.values()}
    assert {n: tuple(s["skills"]) for n, s in seekers.items()} == {p.name: p.skills for p in env.game.persona.values()}
    assert set(state["fair"]["roles"]) <= set(catalogue().roles) and len(state["fair"]["roles"]) == 9
    assert len(state["interviews"]) == 10 and all(i["lines"] for i in state["interviews"])
    assert set(state["applications"]) == set(seekers)
    assert set(state["decisions"]) == {"Brightloop Software", "Quantline Analytics", "Inkhouse Advertising"}
    assert state["joined"]["Ben Whitaker"] is None
    assert state["people"] == {a: env.game.name(a) for a in env.possible_agents}


# ---------------------------------------------------------------------- rewards
def test_honest_s3_rewards_every_agent_at_the_last_step_only():
    env = make("S3")
    frames = play(env, seed=0)
    *before, last = frames[1:]
    assert all(r == 0.0 for _, rewards, _ in before for r in rewards.values())
    assert last[1] == {a: 1.0 for a in env.possible_agents}
    assert env.game.phase == "done" and not env.agents


def test_a_recruiter_who_hires_the_redundant_seeker_gets_nothing():
    def edit(env, agent, action):
        if env.game.phase == "decisions" and agent in env.game.company:
            names = role_names(env)
            team = [names["project manager"], names["programmer"], names["code tester"], names["interface designer"]]
            return "submit " + json.dumps({
                "list": team + [names[None]],
                "workflow": list(SOFTWARE_STEPS),
                "assign": {"Designing": names["interface designer"], "Coding": names["programmer"],
                           "Testing": names["code tester"], "Documenting": names["project manager"]},
            })
        if env.game.phase == "offers" and env.game.persona.get(agent) and env.game.persona[agent].redundant:
            return "accept Brightloop Software"
        return None

    env = make("S2")
    frames = play(env, seed=0, edit=edit)
    rewards = frames[-1][1]
    redundant = next(a for a, p in env.game.persona.items() if p.redundant)
    assert env.game.joined[redundant] == "Brightloop Software"
    assert rewards["recruiter_1"] == 0.0 and rewards[redundant] == 0.0
    assert all(rewards[s] == 1.0 for s in env.game.seekers if s != redundant)  # the capable ones joined a right company
    # the same run without the redundant hire is right for everyone
    assert play(make("S2"), seed=0)[-1][1] == {a: 1.0 for a in env.possible_agents}


# ---------------------------------------------------------------------- config
def test_without_communication_recruiters_decide_from_names():
    env = teamenvs.make("job_fair_v0", preset="no_interviews", scenario="S3").unwrapped
    assert env.config.communication is False
    observations, infos = env.reset(seed=0)
    # the briefings describe no interviews and list none of their commands (they had, and the view said "interviewed")
    for agent in ("seeker_1", "recruiter_1"):
        assert "there are no interviews" in env.briefing(agent) and "interviews its applicants" not in env.briefing(agent)
        assert "say <message>" not in env.briefing(agent) and "end interview" not in env.briefing(agent)
    with_interviews = teamenvs.make("job_fair_v0", scenario="S3")
    with_interviews.reset(seed=0)
    assert "interviews its applicants" in with_interviews.briefing("seeker_1") and "say <message>" in with_interviews.briefing("seeker_1")
    companies = [c.name for c in env.game.fair.companies]
    applied = {s: companies[i % 3] for i, s in enumerate(env.game.seekers)}
    observations, _, _, _, infos = step(env, infos, {s: f"apply {c}" for s, c in applied.items()} | {r: "wait" for r in env.game.recruiters})
    assert env.game.phase == "decisions" and env.game.interviews == []
    assert not any(e["type"] == "interview_start" for e in env.global_events)
    for r, company in zip(env.game.recruiters, companies):
        names = tuple(env.game.persona[s].name for s in env.game.applied if applied[s] == company)
        assert env.game.candidates[r] == names and infos[r]["view"]["past_interviews"] == ()
        assert f"Your candidates (they applied; there are no interviews): {', '.join(names)}." in observations[r]
        assert {f.command for f in infos[r]["valid_actions"]} == {"hire", "workflow", "submit"}
    first = env.game.candidates["recruiter_1"][0]
    observations, _, _, _, infos = env.step({"recruiter_1": f"hire {first}"})
    assert infos["recruiter_1"]["last_action"]["ok"] and env.game.drafts["recruiter_1"].hire == (first,)
    # and a whole honest episode runs, though recruiters who heard nothing hire nobody
    result = agents.run_episode(env, agents.make_policies(env, "honest", seed=0), seed=0)
    assert result.metrics["interviews"] == 0 and result.metrics["messages"] == 0
    assert not result.metrics["identification"]


# ---------------------------------------------------------------------- determinism, render, briefing
def test_the_same_seed_gives_the_same_observations_and_log():
    runs = []
    for _ in range(2):
        env = make("S4")
        runs.append(agents.run_episode(env, agents.make_policies(env, "random", seed=5), seed=5))
    assert runs[0].records == runs[1].records and runs[0].returns == runs[1].returns
    observations = [r["agents"] for r in runs[0].records if r.get("type") in ("reset", "step")]
    assert observations == [r["agents"] for r in runs[1].records if r.get("type") in ("reset", "step")]
    assert len(observations) == runs[0].steps + 1


def test_different_seeds_deal_personas_to_different_ids():
    dealt = []
    for seed in range(4):
        env = make("S3")
        env.reset(seed=seed)
        dealt.append(tuple(env.game.persona[s].name for s in env.game.seekers))
        assert sorted(dealt[-1]) == sorted(p.name for p in env.game.fair.seekers)
    assert len(set(dealt)) == 4
    env = make("S3")
    env.reset(seed=1)
    assert tuple(env.game.persona[s].name for s in env.game.seekers) == dealt[1]


def test_render_lists_companies_and_seekers():
    env = make("S3", render_mode="ansi")
    env.reset(seed=0)
    frame = env.render()
    for company in env.game.fair.companies:
        assert f"{company.name} [{company.business}] recruiter {company.recruiter}" in frame
    for agent, seeker in env.game.persona.items():
        assert f"{agent} {seeker.name} ({seeker.role or 'redundant'})" in frame
    assert make("S3").render() is None


def briefed_commands(text: str) -> list[str]:
    section = text.split("Commands (one per turn; case does not matter):\n", 1)[1].split("\n\n", 1)[0]
    commands = sorted(RECRUITER_COMMANDS + SEEKER_COMMANDS, key=len, reverse=True)
    return [next(c for c in commands if line.startswith(f"- {c}")) for line in section.splitlines()]


def test_briefings_list_only_the_role_s_commands():
    env = make("S4")
    env.reset(seed=0)
    seeker = env.briefing("seeker_1")
    recruiter = env.briefing("recruiter_1")
    assert briefed_commands(seeker) == list(SEEKER_COMMANDS)
    assert briefed_commands(recruiter) == list(RECRUITER_COMMANDS)
    assert "You may apply to 1 to 3 companies." in seeker and env.game.persona["seeker_1"].experience in seeker
    assert "human resources manager of Brightloop Software" in recruiter
    assert not re.search(r"redundant", seeker + recruiter, re.IGNORECASE)


# ---------------------------------------------------------------------- company descriptions (MetaAgents 3.2)
# The paper's example description of a software company lists one skill ("Skills: Software product
# management") although its team needs four; descriptions listing every area made Metric 1.1 a string match.
PAPER_SOFTWARE_DESCRIPTION = ("Company type: Software Company. Skills: software product management. "
                              "Specialty: Advanced software solutions. Mission: Deliver innovative and reliable software solutions.")


def company_lines(observation: str) -> list[str]:
    return [line for line in observation.splitlines() if line.startswith("- ")]


def test_descriptions_follow_the_papers_format_by_default():
    env = make("S3")
    observations, infos = env.reset(seed=0)
    first_areas = {"Software Company": "software product management", "Data Analytics Company": "data engineering",
                   "Advertising Company": "content strategy"}
    for seeker in env.game.seekers:
        lines = company_lines(observations[seeker])
        assert len(lines) == 3
        for line, company in zip(lines, infos[seeker]["view"]["companies"]):
            assert line.count("Skills: ") == 1
            listed = re.search(r"Skills: ([^.]*)\.", line).group(1)
            assert listed == first_areas[company["company_type"]]  # one skill, the team's first role's area
            assert company["skills"] == (listed,)
    software = next(line for line in company_lines(observations["seeker_1"]) if "Software Company" in line)
    assert software.endswith(PAPER_SOFTWARE_DESCRIPTION)
    for area in ("programming", "software testing", "user interface design", "machine learning", "copywriting", "graphic design"):
        assert all(area not in line for s in env.game.seekers for line in company_lines(observations[s]))
    recruiter = infos["recruiter_1"]["view"]
    assert recruiter["skills_wanted"] == ("software product management",)
    assert PAPER_SOFTWARE_DESCRIPTION in recruiter["company_description"] and PAPER_SOFTWARE_DESCRIPTION in env.briefing("recruiter_1")


@pytest.mark.parametrize("detail, listed", [("all", 4), ("one", 1), ("none", 0)])
def test_description_detail_is_a_condition(detail, listed):
    env = make("S1", advertised_skills=detail)
    observations, infos = env.reset(seed=0)
    (line,) = company_lines(observations["seeker_1"])
    skills = infos["seeker_1"]["view"]["companies"][0]["skills"]
    assert len(skills) == listed and ("Skills: " in line) == bool(listed)
    if listed:
        assert f"Skills: {', '.join(skills)}." in line
    assert "Specialty: Advanced software solutions. Mission: Deliver innovative and reliable software solutions." in line
    assert teamenvs.make("job_fair_v0", preset="full_descriptions").unwrapped.config.advertised_skills == "all"


def test_unknown_description_detail_is_a_config_error():
    from teamenvs.core.config import ConfigError

    with pytest.raises(ConfigError, match="advertised_skills"):
        make("S1", advertised_skills="every")


@pytest.mark.parametrize("detail", ["one", "none"])
def test_honest_seekers_still_find_their_company_from_the_company_type(detail):
    env = make("S4", advertised_skills=detail)
    result = agents.run_episode(env, agents.make_policies(env, "honest", seed=1), seed=1)
    assert result.metrics["company_identification"] is True and result.metrics["overall_success"] is True
def test_seekers_read_one_list_of_the_companies():
    """The public company list is one object in every seeker's view, not a copy per seeker (a step's views
    cost O(agents), not O(seekers x companies)); it holds the fair's public facts, read-only (next test)."""
    env = teamenvs.make("job_fair_v0", preset="large_fair")
    _, infos = env.reset(seed=0)
    seekers = [a for a in env.agents if infos[a]["view"]["role"] == "seeker"]
    first = infos[seekers[0]]["view"]["companies"]
    assert len(seekers) == 100 and len(first) == 20
    assert all(infos[s]["view"]["companies"] is first for s in seekers)
    assert [c["name"] for c in first] == [c.name for c in env.unwrapped.game.fair.companies]
    _, _, _, _, infos = env.step({})
    assert all(infos[s]["view"]["companies"] == first for s in seekers)


def test_infos_of_a_reset_and_the_next_step_share_no_dict():
    """A seeker's view holds the companies' read-only facts, one copy per step: a reset's info and the next
    step's share no dict, the rule Gymnasium's env checker applies (it warned on the per-episode copy)."""
    import gymnasium
    from gymnasium.utils.passive_env_checker import data_shares_objects

    env = gymnasium.make("teamenvs/JobFair-v0", agent="seeker_1", skip_idle=False, disable_env_checker=True)
    _, first = env.reset(seed=0)
    _, _, _, _, second = env.step("wait")
    assert first["view"]["companies"] == second["view"]["companies"]
    assert not data_shares_objects(first, second)


def test_no_seekers_policy_can_change_what_another_seeker_sees():
    """The companies' public descriptions are one set of objects in every seeker's view (a step's views cost
    O(agents)); they are read-only, so a policy that writes into its view changes nothing another agent (or a
    later step) sees, and it is told to change a copy."""
    env = teamenvs.make("job_fair_v0", preset="S3")
    _, infos = env.reset(seed=0)
    seekers = [a for a in env.agents if infos[a]["view"]["role"] == "seeker"]
    mine, theirs = (infos[s]["view"]["companies"] for s in seekers[:2])
    assert mine[0] is theirs[0]  # shared, not copied per seeker
    before = dict(theirs[0])
    for change in (lambda c: c.__setitem__("description", "hired already"), lambda c: c.update(skills=("x",)),
                   lambda c: c.pop("name"), lambda c: c.clear(), lambda c: c.setdefault("secret", 1)):
        with pytest.raises(TypeError, match="read-only; change a copy"):
            change(mine[0])
    assert dict(theirs[0]) == before
    copied = dict(mine[0])
    copied["description"] = "mine alone"
    _, _, _, _, infos = env.step({})
    assert dict(infos[seekers[1]]["view"]["companies"][0]) == before
    import pickle

    assert pickle.loads(pickle.dumps(mine[0])) == before
    assert json.loads(json.dumps(mine[0])) == {**before, "skills": list(before["skills"])}


@pytest.mark.parametrize("preset,kind", [("large_fair", "scripted"), ("S4", "random")])
def test_observations_formatted_once_per_step_equal_views_rendered_alone(preset, kind):
    """The env formats what many views share once (the step's company list, closed interviews' transcripts) and
    reuses it: every observation equals its view rendered on its own, through interviews, offers and the end."""
    from teamenvs.job_fair.view import render_view

    env = teamenvs.make("job_fair_v0", preset=preset)
    observations, infos = env.reset(seed=3)
    policies = agents.make_policies(env, kind, seed=3)
    for a in env.agents:
        policies[a].reset(a, env.unwrapped.briefing(a))
    game = env.unwrapped.game
    reused = 0
    while env.agents:
        for a in env.agents:
            view = infos[a]["view"]
            assert observations[a] == render_view(view), (a, view["step"])
            # a closed interview's part, built once, still holds the whole transcript as the game has it now
            past = [i for i in game.mine[a] if i is not game.current.get(a)]
            assert [p["lines"] for p in view["past_interviews"]] == [tuple(i.lines) for i in past]
            reused += len(view["past_interviews"])
        actions = {a: policies[a].act(observations[a], infos[a]) for a in env.agents if infos[a]["needs_action"]}
        observations, _, _, _, infos = env.step(actions)
    assert reused > 0  # closed interviews were shown (and their text reused) along the way


def test_applications_sent_in_one_step_are_queued_in_a_seeded_random_order_not_by_seat():
    # found by review: they were queued by seat id, so seeker_1 was always interviewed (and listed, and by the scripted
    # recruiters hired) first: in S2 under boastful seekers, seat 5 was never hired in 40 seeds, whoever held it
    firsts = []
    for seed in range(12):
        env = teamenvs.make("job_fair_v0", preset="S3").unwrapped
        env.reset(seed=seed)
        company = env.game.company["recruiter_1"].name
        env.step({a: (f"apply {company}" if a in env.game.persona else "wait") for a in env.agents if env.game.needs_action(a)})
        order = [env.game.current["recruiter_1"].seeker, *env.game.queue["recruiter_1"]]
        assert sorted(order) == sorted(env.game.seekers)
        again = teamenvs.make("job_fair_v0", preset="S3").unwrapped
        again.reset(seed=seed)
        again.step({a: (f"apply {company}" if a in again.game.persona else "wait") for a in again.agents if again.game.needs_action(a)})
        assert [again.game.current["recruiter_1"].seeker, *again.game.queue["recruiter_1"]] == order  # the seed decides
        firsts.append(order[0])
    assert len(set(firsts)) >= 4
