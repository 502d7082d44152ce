"""The job fair's rules of right and wrong (MetaAgents 3.5), as pure functions shared by the env and the metrics.

- `synonym_mapper`: maps a recruiter's free-text workflow steps onto the business's
  canonical steps with the vocabulary of `data/catalogue.json` (see its `_about`: "Quality
  assurance and testing" becomes Testing, "Design and coding" Designing then Coding, "Test
  the code" Testing, "Deploy the code" nothing). Any function with the same signature can
  replace it, e.g. an LLM judge (`StepMapper`).
- `workflow_correct` (Metric 2.2): the mapped steps, consecutive repeats merged and
  unmapped steps ignored, are exactly the canonical steps in their order.
- `valid_team` (Metric 2.1): the people form the company's team: as many as its roles and
  each role filled by someone qualified for it (a bipartite matching).
- `check_assignment` (Metric 2.3, as MetaAgents 3.5 defines it: "successful if all workflow
  steps have qualified agents"): every canonical step has an assigned hire qualified for one
  of its roles, and no capable hire is on a step it is not qualified for (5.3). Every
  misplacement (MetaAgents' *misplacement*) is reported beside it; a redundant hire's does not
  fail 2.3 (E.2), and the recruiter's reward (`team_right`) requires none at all.
- `confusion`: a recruiter's decisions over its applicants (TP capable hired, FN capable not
  hired, FP not capable hired, TN not capable not hired).
- `best_teams`: the best achievable teams of a whole fair, a maximum matching of every
  seeker to every (company, role) slot by true skills.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Mapping, Sequence

from teamenvs.job_fair.fair import Business, Fair, Seeker

StepMapper = Callable[[Business, Sequence[str]], list[tuple[str, ...]]]
"""A Metric 2.2 judge: (the business, the recruiter's free-text steps) -> for each step, the canonical
step names it stands for, in canonical order (an empty tuple: none, e.g. "Deployment")."""

_WORD = re.compile(r"[a-z0-9]+")
_CLAUSE = re.compile(r"(?<!\s)\s*(?:,|;|/|&|\+|\band\b|\bthen\b|\bplus\b)\s*")
_DETERMINERS = frozenset("the a an our all each every their its any some your this these those".split())
_PREPOSITIONS = frozenset("of for on in with from to by using via across against at within through per about before after during".split())
_NOMINAL = ("ing", "ion", "ment", "ance", "ence", "sis", "ure", "ity")
_OUTSIDE = ""  # the step name of a business's `outside` cues: activities that are no step of its workflow


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _matches(text_words: Sequence[str], cue_words: Sequence[str]) -> Iterable[tuple[int, int]]:
    """Where a cue occurs in `text_words` as (first, last) word index: each word of the cue begins a word of the text, in sequence."""
    n = len(cue_words)
    for i in range(len(text_words) - n + 1):
        if all(text_words[i + j].startswith(cue_words[j]) for j in range(n)):
            yield i, i + n - 1


def _head(clause: Sequence[str]) -> int:
    """The index of the word a clause is about: the verb of "Test the code", the last noun of "Code testing",
    the noun before a preposition in "Implementation of the design", the result in "Turn the design into code"."""
    if "into" in clause:
        return len(clause) - 1
    if len(clause) > 1 and clause[1] in _DETERMINERS:
        return 0
    end = next((i for i, w in enumerate(clause) if w in _PREPOSITIONS and i > 0), len(clause))
    last = clause[end - 1]
    if end > 1 and not last.endswith(_NOMINAL):  # "Document code", "Write docs": a verb and its object
        return 0
    return end - 1


def _clause_step(business: Business, clause: Sequence[str]) -> str | None:
    """The step one clause names (None: none, or an activity outside the workflow).

    Every cue found competes: a step's synonyms (strong) beat its cues (weak: generic verbs and
    objects such as "build" or "code" for Coding) and the business's outside activities count as
    strong; among equals, the cue on the clause's head word wins, then the longer cue, then the
    one nearer the head, then the earlier step of the workflow.
    """
    if not clause:
        return None
    head = _head(clause)
    best = None
    for step, tier, order, cue in _vocabulary(business):
        for first, last in _matches(clause, cue):
            distance = 0 if first <= head <= last else min(abs(head - first), abs(head - last))
            key = (tier, distance == 0, last - first, -distance, order)
            if best is None or key > best[0]:
                best = (key, step)
    return None if best is None or best[1] == _OUTSIDE else best[1]


@lru_cache(maxsize=256)
def _vocabulary(business: Business) -> tuple[tuple[str, int, int, tuple[str, ...]], ...]:
    """(step, tier: 1 synonym or outside activity / 0 cue, -position of the step, the cue's words) for every cue of `business`."""
    out = [(s.name, tier, -i, tuple(words(c))) for i, s in enumerate(business.workflow)
           for tier, cues in ((1, s.synonyms), (0, s.cues)) for c in cues]
    return tuple(out + [(_OUTSIDE, 1, -len(business.workflow), tuple(words(c))) for c in business.outside])


def synonym_mapper(business: Business, steps: Sequence[str]) -> list[tuple[str, ...]]:
    """For each free-text step, the canonical steps it names (in canonical order; empty if none).

    A step is cut into clauses at "and", "&", commas, slashes... ("Design and coding" names two
    steps); each clause names at most one step (`_clause_step`).
    """
    return [_steps_named(business, text) for text in steps]


@lru_cache(maxsize=4096)
def _steps_named(business: Business, text: str) -> tuple[str, ...]:
    named = {_clause_step(business, words(clause)) for clause in _CLAUSE.split(text.lower())}
    return tuple(s.name for s in business.workflow if s.name in named)


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
    import networkx as nx  # here, not at the top: making the env need not load networkx (about 50 ms, 16,772 objects)

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
    """Metric 2.3 for one recruiter: `ok` (every canonical step has a qualified hire, and no capable hire is on a
    step it is not qualified for), the steps left without one, and every misplacement, a redundant hire's included:
    (hire, free-text step) for hires on a step they are not qualified for."""

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
    """Metric 2.3 for `company`'s decision: (member, free-text step) assignments against its workflow.

    It passes when every canonical step has a qualified hire and no capable hire (one who fits a role of the
    company) is placed on a step it is not qualified for: MetaAgents 5.3 counts "misplacing capable agents" among
    the cases that "fail to perform correct skill matching". A redundant hire's placement does not fail it
    (MetaAgents E.2: recruiters who hired a redundant seeker along with every qualified one still pass 2.3).
    """
    business = fair.business_of(company)
    mapped = dict(zip(workflow, mapper(business, workflow)))
    steps = {s.name: s for s in business.workflow}
    seekers = {s.name: s for s in fair.seekers}
    allowed = set(members)
    covered: set[str] = set()
    misplaced: list[tuple[str, str]] = []
    capable_misplaced = False
    for name, step in assignments:
        canonical = mapped.get(step, ())
        if name not in allowed or name not in seekers:
            continue
        fit = [c for c in canonical if any(fair.qualified(seekers[name], r) for r in steps[c].roles)]
        covered.update(fit)
        if canonical and not fit:
            misplaced.append((name, step))
            capable_misplaced = capable_misplaced or fair.fits(seekers[name], company)
    uncovered = tuple(s.name for s in business.workflow if s.name not in covered)
    return AssignmentCheck(not uncovered and not capable_misplaced, uncovered, tuple(misplaced))


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
    """How many of `company`'s roles `members` can fill, each with someone qualified (the size of a maximum matching,
    the same for every maximum matching, so no need for `match`'s networkx: the rewards need only this)."""
    people = list({s.name: s for s in fair.seekers if s.name in set(members)}.values())
    fits = [[p for p, seeker in enumerate(people) if fair.qualified(seeker, role)] for role in fair.business_of(company).roles]
    return matching_size(fits)


def matching_size(fits: Sequence[Sequence[int]]) -> int:
    """The size of a maximum bipartite matching: left i may pair with any right node in `fits[i]` (augmenting paths)."""
    partner: dict[int, int] = {}  # right node -> its left node

    def augment(i: int, seen: set[int]) -> bool:
        for p in fits[i]:
            if p not in seen:
                seen.add(p)
                if p not in partner or augment(partner[p], seen):
                    partner[p] = i
                    return True
        return False

    return sum(augment(i, set()) for i in range(len(fits)))


def team_right(
    fair: Fair,
    company: str,
    joined: Iterable[str],
    workflow: Sequence[str],
    assignments: Sequence[tuple[str, str]],
    mapper: StepMapper = synonym_mapper,
) -> bool:
    """The recruiter's reward: who joined is a full team, the workflow is right, and the assignment of who
    joined covers every step and misplaces nobody (stricter than Metric 2.3, which allows a redundant hire's misplacement)."""
    joined = list(joined)
    business = fair.business_of(company)
    if not valid_team(fair, company, joined) or not workflow_correct(mapper(business, workflow), [s.name for s in business.workflow]):
        return False
    check = check_assignment(fair, company, workflow, assignments, joined, mapper)
    return check.ok and not check.misplaced
