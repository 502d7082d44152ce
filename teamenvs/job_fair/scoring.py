"""The job fair's rules of right and wrong (MetaAgents 3.5), as pure functions shared by the env and the metrics.

- `synonym_mapper`: maps a recruiter's free-text workflow steps onto the business's
  canonical steps with the synonym table of `data/catalogue.json` (a step such as "Quality
  assurance and testing" becomes Testing, "Design and coding" becomes Designing then Coding).
  Any function with the same signature can replace it, e.g. an LLM judge (`StepMapper`).
- `workflow_correct` (Metric 2.2): the mapped steps, consecutive repeats merged and
  unmapped steps ignored, are exactly the canonical steps in their order.
- `valid_team` (Metric 2.1): the people form the company's team: as many as its roles and
  each role filled by someone qualified for it (a bipartite matching, `networkx`).
- `check_assignment` (Metric 2.3): every canonical step has an assigned hire qualified for
  one of its roles, and no hire is assigned to a step they are not qualified for
  (MetaAgents' *misplacement*).
- `confusion`: a recruiter's decisions over its applicants (TP capable hired, FN capable not
  hired, FP not capable hired, TN not capable not hired).
- `best_teams`: the best achievable teams of a whole fair, a maximum matching of every
  seeker to every (company, role) slot by true skills.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

import networkx as nx

from teamenvs.job_fair.fair import Business, Fair, Seeker

StepMapper = Callable[[Business, Sequence[str]], list[tuple[str, ...]]]
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _mentions(text_words: Sequence[str], synonym: str) -> bool:
    syn = words(synonym)
    n = len(syn)
    return any(all(text_words[i + j].startswith(syn[j]) for j in range(n)) for i in range(len(text_words) - n + 1))


def synonym_mapper(business: Business, steps: Sequence[str]) -> list[tuple[str, ...]]:
    """For each free-text step, the canonical steps it names (in canonical order; empty if none)."""
    out = []
    for text in steps:
        ws = words(text)
        out.append(tuple(s.name for s in business.workflow if any(_mentions(ws, syn) for syn in s.synonyms)))
    return out


def workflow_correct(mapped: Sequence[tuple[str, ...]], canonical: Sequence[str]) -> bool:
    """Whether the mapped workflow covers every canonical step once, in order."""
    sequence: list[str] = []
    for names in mapped:
        for name in names:
            if not sequence or sequence[-1] != name:
                sequence.append(name)
    return sequence == list(canonical)


def match(people: Mapping[str, Seeker], slots: Sequence[tuple[object, str]], fair: Fair) -> dict[object, str]:
    """A maximum matching of people to slots (slot id, role) where each person is qualified for the slot's role."""
    graph = nx.Graph()
    left = [("slot", i) for i in range(len(slots))]
    graph.add_nodes_from(left)
    graph.add_nodes_from(("person", n) for n in people)
    for i, (_, role) in enumerate(slots):
        for name, seeker in people.items():
            if fair.qualified(seeker, role):
                graph.add_edge(("slot", i), ("person", name))
    pairs = nx.bipartite.hopcroft_karp_matching(graph, top_nodes=left)
    return {slots[node[1]][0]: pairs[node][1] for node in left if node in pairs}


def valid_team(fair: Fair, company: str, members: Iterable[str]) -> bool:
    """Whether `members` (seeker names) are exactly a full team for `company`'s roles."""
    members = set(members)
    roles = fair.business_of(company).roles
    return len(members) == len(roles) and filled_slots(fair, company, members) == len(roles)


@dataclass(frozen=True)
class AssignmentCheck:
    """Metric 2.3 for one recruiter: `ok`, the canonical steps left without a qualified hire, the misplacements."""

    ok: bool
    uncovered: tuple[str, ...]
    misplaced: tuple[tuple[str, str], ...]


def check_assignment(
    fair: Fair,
    company: str,
    workflow: Sequence[str],
    assignments: Sequence[tuple[str, str]],
    members: Iterable[str],
    mapper: StepMapper = synonym_mapper,
) -> AssignmentCheck:
    """Metric 2.3 for `company`'s decision: (member, free-text step) assignments against its workflow."""
    business = fair.business_of(company)
    mapped = dict(zip(workflow, mapper(business, workflow)))
    steps = {s.name: s for s in business.workflow}
    seekers = {s.name: s for s in fair.seekers}
    allowed = set(members)
    covered: set[str] = set()
    misplaced: list[tuple[str, str]] = []
    for name, step in assignments:
        canonical = mapped.get(step, ())
        if name not in allowed or name not in seekers:
            continue
        fit = [c for c in canonical if any(fair.qualified(seekers[name], r) for r in steps[c].roles)]
        covered.update(fit)
        if canonical and not fit:
            misplaced.append((name, step))
    uncovered = tuple(s.name for s in business.workflow if s.name not in covered)
    return AssignmentCheck(not uncovered and not misplaced, uncovered, tuple(misplaced))


def confusion(fair: Fair, company: str, applicants: Iterable[str], hired: Iterable[str]) -> dict[str, int]:
    """TP/FN/FP/TN of a recruiter's hires among its applicants; capable = fits a role of the company."""
    hired_set = set(hired)
    seekers = {s.name: s for s in fair.seekers}
    counts = {"tp": 0, "fn": 0, "fp": 0, "tn": 0}
    for name in dict.fromkeys(applicants):
        capable = fair.fits(seekers[name], company)
        key = ("tp" if name in hired_set else "fn") if capable else ("fp" if name in hired_set else "tn")
        counts[key] += 1
    return counts


def best_teams(fair: Fair) -> dict[str, dict[str, str]]:
    """The best achievable teams: per company, role -> seeker in a maximum matching of all seekers to all roles."""
    slots = [((c.name, i, role), role) for c in fair.companies for i, role in enumerate(fair.businesses[c.business].roles)]
    matched = match({s.name: s for s in fair.seekers}, slots, fair)
    teams: dict[str, dict[str, str]] = {c.name: {} for c in fair.companies}
    for (company, _, role), name in matched.items():
        teams[company][role] = name
    return teams


def filled_slots(fair: Fair, company: str, members: Iterable[str]) -> int:
    """How many of `company`'s roles `members` can fill, each with someone qualified (a maximum matching)."""
    people = {s.name: s for s in fair.seekers if s.name in set(members)}
    return len(match(people, list(enumerate(fair.business_of(company).roles)), fair))


def team_right(
    fair: Fair,
    company: str,
    joined: Iterable[str],
    workflow: Sequence[str],
    assignments: Sequence[tuple[str, str]],
    mapper: StepMapper = synonym_mapper,
) -> bool:
    """The recruiter's reward: who joined is a full team, the workflow is right, and so is the assignment of who joined."""
    joined = list(joined)
    business = fair.business_of(company)
    return (
        valid_team(fair, company, joined)
        and workflow_correct(mapper(business, workflow), [s.name for s in business.workflow])
        and check_assignment(fair, company, workflow, assignments, joined, mapper).ok
    )
