"""Job fair metrics (MetaAgents 3.5 and 5.3), pure functions over an episode log.

Booleans per run, as MetaAgents counts them over 50 runs:
- `company_identification` (Metric 1.1): every capable seeker applied to a company it fits
  (S4: included one); `company_identification_rate` is the share of capable seekers who did;
- `identification` (2.1): every recruiter hired exactly a full team for its roles;
- `workflow` (2.2): every recruiter's workflow maps onto its canonical steps, complete and in
  order; `workflow_per_team` gives it per business, the rows of MetaAgents Table 2;
- `assignment` (2.3, as the paper defines it: "successful if all workflow steps have qualified
  agents"): every recruiter assigned a qualified hire to each canonical step and placed no capable
  hire on a step it is not qualified for (5.3: "misplacing capable agents" fails skill matching).
  A redundant hire placed on a step beside a qualified one does not fail it (E.2);
- `misplacement`: some recruiter placed a hire on a step the hire is not qualified for
  (MetaAgents' *misplacement*, redundant hires' placements included), reported on its own:
  `misplacements` counts them, `misplacement_rate` is the share of recruiters with one;
- `overall_success`: 1.1, 2.1, 2.2 and 2.3.

The judge of Metric 2.2 (and of which canonical steps an assignment's free-text step covers,
for 2.3) is `step_mapper`: by default `scoring.synonym_mapper`, a rule-based mapper over the
catalogue's vocabulary. To judge with an LLM, as MetaAgents' research team judged by hand,
pass any callable `(business, steps) -> [tuple of canonical step names per step]`
(`scoring.StepMapper`): `business.workflow` holds the canonical steps (their `name`s, in
order), `steps` the recruiter's free-text steps; return, for each, the canonical names it
stands for in canonical order, or `()` for a step that is none of them. For example
`job_fair_metrics(records, step_mapper=lambda business, steps: [ask_llm(business, s) for s in steps])`.
The env's rewards always use the default mapper (an env holds no LLM).

Beside them: `per_company` detail (each metric, hires, the mapped workflow, unmapped
steps, uncovered steps, misplacements, the confusion matrix over its applicants, and the
slots filled by who joined against the best achievable team); `confusion` summed over
recruiters; `redundant_offer_acceptance` (accepted / offers made to redundant seekers,
None without such offers); `fill_rate` (roles filled by qualified people who joined) against
`best_fill_rate` (a maximum matching of all seekers to all roles); `teams_formed`
(recruiters rewarded); interviews, messages and words per role, invalid-action rate, steps.
"""

from __future__ import annotations

from typing import Any, Sequence

from teamenvs.core.metrics import invalid_action_rate, message_events, SHARE
from teamenvs.core.recorder import step_records
from teamenvs.job_fair.fair import Fair
from teamenvs.job_fair.scoring import (
    StepMapper,
    best_teams,
    check_assignment,
    confusion,
    filled_slots,
    synonym_mapper,
    team_right,
    valid_team,
    workflow_correct,
)

# Which way each metric is better, for benchmark reports ("max" or "min"); unlisted metrics are descriptive.
METRIC_GOALS: dict[str, str] = {
    **{k: "max" for k in ("company_identification", "company_identification_rate", "identification", "workflow", "assignment",
                          "overall_success", "identification_rate", "workflow_rate", "assignment_rate", "teams_formed", "fill_rate")},
    **{k: "min" for k in ("misplacement", "misplacement_rate", "misplacements", "redundant_offers", "redundant_offer_acceptance",
                          "invalid_action_rate")},
}

# The least and most each bounded metric can be in any episode (shares, rates, yes/no), for figures.
METRIC_BOUNDS: dict[str, tuple[float, float]] = dict.fromkeys((
    "company_identification", "company_identification_rate", "identification", "workflow", "assignment",
    "overall_success", "misplacement", "identification_rate", "workflow_rate", "assignment_rate",
    "misplacement_rate", "redundant_offer_acceptance", "fill_rate", "best_fill_rate", "invalid_action_rate",
), SHARE)


def per_team(per_company: dict[str, dict[str, Any]], key: str) -> dict[str, float]:
    """The share of each business's companies (a team in MetaAgents' tables) for which `key` held."""
    teams: dict[str, list[bool]] = {}
    for company in per_company.values():
        teams.setdefault(company["business"], []).append(bool(company[key]))
    return {business: sum(held) / len(held) for business, held in teams.items()}


def job_fair_metrics(records: Sequence[dict[str, Any]], step_mapper: StepMapper | None = None) -> dict[str, Any]:
    mapper = step_mapper or synonym_mapper
    reset = next(r for r in records if r.get("type") == "reset")
    fair = Fair.from_json(reset["fair"])
    steps = list(step_records(records))
    events = [e for s in steps for e in s.get("events", ())]
    applied: dict[str, list[str]] = {}
    applicants: dict[str, list[str]] = {c.name: [] for c in fair.companies}
    decisions: dict[str, dict[str, Any]] = {}
    joined: dict[str, str] = {}
    offers = {"all": 0, "accepted": 0, "redundant": 0, "redundant_accepted": 0}
    redundant = {s.name for s in fair.seekers if s.redundant}
    interviews = 0
    for e in events:
        kind = e.get("type")
        if kind == "application":
            applied[e["name"]] = e["companies"]
            for company in e["companies"]:
                applicants[company].append(e["name"])
        elif kind == "interview_start":
            interviews += 1
        elif kind == "decision":
            decisions[e["company"]] = e
        elif kind == "offer":
            offers["all"] += 1
            offers["redundant"] += e["seeker"] in redundant
        elif kind == "offer_answer" and e["answer"] == "accepted":
            joined[e["seeker"]] = e["company"]
            offers["accepted"] += 1
            offers["redundant_accepted"] += e["seeker"] in redundant

    per_seeker = {s.name: any(fair.fits(s, c) for c in applied.get(s.name, ())) for s in fair.seekers if not s.redundant}
    best = best_teams(fair)
    per_company: dict[str, dict[str, Any]] = {}
    totals = {"tp": 0, "fn": 0, "fp": 0, "tn": 0}
    for company in fair.companies:
        name = company.name
        business = fair.businesses[company.business]
        decision = decisions.get(name, {})
        hired = decision.get("hire", [])
        workflow = decision.get("workflow", [])
        assign = [tuple(p) for p in decision.get("assign", [])]
        mapped = mapper(business, workflow)
        check = check_assignment(fair, name, workflow, assign, hired, mapper)
        counts = confusion(fair, name, applicants[name], hired)
        for key in totals:
            totals[key] += counts[key]
        members = [s for s, c in joined.items() if c == name]
        per_company[name] = {
            "business": company.business,
            "identification": valid_team(fair, name, hired),
            "workflow": workflow_correct(mapped, [s.name for s in business.workflow]),
            "assignment": check.ok,
            "misplacement": bool(check.misplaced),
            "hired": hired,
            "workflow_steps": workflow,
            "mapped_workflow": [list(m) for m in mapped],
            "unmapped_steps": [w for w, m in zip(workflow, mapped) if not m],
            "uncovered_steps": list(check.uncovered),
            "misplaced": [list(p) for p in check.misplaced],
            "confusion": counts,
            "joined": members,
            "team_right": team_right(fair, name, members, workflow, assign, mapper),
            "roles": len(business.roles),
            "filled_slots": filled_slots(fair, name, members),
            "best_slots": len(best[name]),
            "submitted_at_deadline": bool(decision.get("at_deadline", False)),
        }

    def every(key: str) -> bool:
        return all(c[key] for c in per_company.values())

    def rate(key: str) -> float:
        return sum(c[key] for c in per_company.values()) / len(per_company)

    slots = sum(c["roles"] for c in per_company.values())
    words = {"recruiter": 0, "seeker": 0}
    for m in message_events(records):
        words["recruiter" if m["sender"].startswith("recruiter_") else "seeker"] += m["words"]
    company_identification = all(per_seeker.values())
    return {
        "company_identification": company_identification,
        "company_identification_rate": sum(per_seeker.values()) / len(per_seeker) if per_seeker else None,  # no capable seeker: undefined
        "company_identification_per_seeker": per_seeker,
        "identification": every("identification"),
        "workflow": every("workflow"),
        "assignment": every("assignment"),
        "overall_success": company_identification and every("identification") and every("workflow") and every("assignment"),
        "misplacement": any(c["misplacement"] for c in per_company.values()),
        "identification_rate": rate("identification"),
        "workflow_rate": rate("workflow"),
        "workflow_per_team": per_team(per_company, "workflow"),
        "assignment_rate": rate("assignment"),
        "misplacement_rate": rate("misplacement"),
        "per_company": per_company,
        "confusion": totals,
        "misplacements": sum(len(c["misplaced"]) for c in per_company.values()),
        "offers": offers["all"],
        "offers_accepted": offers["accepted"],
        "redundant_offers": offers["redundant"],
        "redundant_offer_acceptance": offers["redundant_accepted"] / offers["redundant"] if offers["redundant"] else None,
        "teams_formed": sum(c["team_right"] for c in per_company.values()),
        "fill_rate": sum(c["filled_slots"] for c in per_company.values()) / slots,
        "best_fill_rate": sum(c["best_slots"] for c in per_company.values()) / slots,
        "interviews": interviews,
        "messages": len(message_events(records)),
        "words_per_role": words,
        "invalid_action_rate": invalid_action_rate(records),
        "steps": steps[-1]["step"] if steps else 0,
    }
