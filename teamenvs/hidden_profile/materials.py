"""Hidden profiles as data: the shipped profiles (`data/profiles.json`), the seeded generator built on
`data/traits.json`, and the check every profile passes.

A profile describes candidates (letters A, B, ...) through facts, each a strength (+1) or a weakness
(-1) of one candidate, held either by every member (`holder` 0, shared) or by one member only
(`holder` k, unique to member k). A candidate's support on some information is its strengths minus
its weaknesses there. The hidden-profile structure (Stasser and Titus 1985) is what `check_profile`
enforces:

- on the full information the best candidate has the strictly highest support;
- on any single member's document (the shared facts and its unique ones) some other candidate has
  strictly higher support than the best one, so nobody alone can find it;
- unique facts are only strengths of the best candidate or weaknesses of another one, so the shared
  facts favour a suboptimal candidate and talking up one's own favourite surfaces shared facts only;
- every unique strength of the best candidate carries a mention pattern (CollabSim C.2) that matches
  its own text and no other fact of the profile; patterns are alternations of words (linear time);
- every member holds at least one unique fact; every fact fits a 15-word message with its prefix.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable

import numpy as np

GENERATED = "generated"
LETTERS = "ABCDE"
MAX_FACT_WORDS = 11  # with the 3-word message prefix ("Candidate C strength:") a fact fits 15 words
_WORDS_PATTERN = re.compile(r"\\b\(\?:[^()]*(?:\([^()]*\)[^()]*)*\)\\b")  # \b(?:word|word (?:a|b)?)\b
_BACKREFERENCE = re.compile(r"\\[1-9]|\(\?P=|\(\?\(")  # what refers to a group by its number or name


def any_of(patterns: Iterable[re.Pattern[str]]) -> re.Pattern[str] | None:
    """One pattern that matches wherever one of `patterns` (compiled with the same flags) matches: searching a text
    for it finds nothing exactly when searching for each alone finds nothing. None where there are none, or where
    joining them could change what one matches (a backreference counts the groups before it, flags differ)."""
    patterns = list(patterns)
    if not patterns or len({p.flags for p in patterns}) > 1 or any(_BACKREFERENCE.search(p.pattern) for p in patterns):
        return None
    try:
        return re.compile("|".join(f"(?:{p.pattern})" for p in patterns), patterns[0].flags)
    except re.error:  # e.g. two patterns naming a group alike
        return None


@dataclass(frozen=True)
class Fact:
    """One statement about a candidate: `valence` +1 (strength) or -1 (weakness), `holder` 0 (shared) or k."""

    id: str
    candidate: str
    valence: int
    holder: int
    text: str
    pattern: str | None = None

    @property
    def unique(self) -> bool:
        return self.holder != 0

    def to_json(self) -> dict[str, Any]:
        data = {"id": self.id, "candidate": self.candidate, "valence": self.valence, "holder": self.holder, "text": self.text}
        if self.pattern is not None:
            data["pattern"] = self.pattern
        return data


@dataclass(frozen=True)
class Profile:
    """A hidden profile: the role, the candidates' letters, the best candidate and the facts."""

    id: str
    title: str
    role: str
    candidates: tuple[str, ...]
    best: str
    facts: tuple[Fact, ...]

    @property
    def members(self) -> int:
        """How many members the unique facts are written for (the highest holder)."""
        return max(f.holder for f in self.facts)

    def document(self, holder: int) -> tuple[Fact, ...]:
        """Member `holder`'s facts: the shared ones and its unique ones, in profile order."""
        return tuple(f for f in self.facts if f.holder in (0, holder))

    def key_facts(self) -> tuple[Fact, ...]:
        """The best candidate's unique strengths: what the mention rate looks for."""
        return tuple(f for f in self.facts if f.unique and f.candidate == self.best and f.valence > 0)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "role": self.role, "candidates": list(self.candidates),
                "best": self.best, "facts": [f.to_json() for f in self.facts]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Profile":
        facts = tuple(Fact(f["id"], f["candidate"], int(f["valence"]), int(f["holder"]), f["text"], f.get("pattern"))
                      for f in data["facts"])
        return cls(data["id"], data["title"], data["role"], tuple(data["candidates"]), data["best"], facts)


def support(facts: tuple[Fact, ...] | list[Fact], candidates: tuple[str, ...]) -> dict[str, int]:
    """Each candidate's strengths minus weaknesses among `facts`."""
    out = {c: 0 for c in candidates}
    for f in facts:
        out[f.candidate] += f.valence
    return out


def strict_leader(scores: dict[str, int]) -> str | None:
    """The candidate with the strictly highest support (None on a tie at the top)."""
    top = max(scores.values())
    leaders = [c for c, s in scores.items() if s == top]
    return leaders[0] if len(leaders) == 1 else None


def fact_words(fact: Fact) -> int:
    return len(fact.text.split())


def check_profile(profile: Profile, members: int | None = None) -> list[str]:
    """What is wrong with `profile` as a hidden profile for `members` (default: its own); [] if nothing."""
    problems: list[str] = []
    members = profile.members if members is None else members
    letters = profile.candidates
    if len(letters) < 2 or letters != tuple(LETTERS[: len(letters)]):
        problems.append(f"candidates must be the letters A, B, ... in order, got {letters}")
    if profile.best not in letters:
        problems.append(f"the best candidate {profile.best!r} is not a candidate")
        return problems
    ids = [f.id for f in profile.facts]
    if len(set(ids)) != len(ids):
        problems.append("fact ids repeat")
    texts = [f.text.lower() for f in profile.facts]
    if len(set(texts)) != len(texts):
        problems.append("fact texts repeat")
    for f in profile.facts:
        if f.candidate not in letters or f.valence not in (1, -1) or not 0 <= f.holder <= members:
            problems.append(f"fact {f.id} has a bad candidate, valence or holder")
        if not 1 <= fact_words(f) <= MAX_FACT_WORDS:
            problems.append(f"fact {f.id} has {fact_words(f)} words (1 to {MAX_FACT_WORDS}, to fit a 15-word message)")
        if f.unique and not ((f.candidate == profile.best and f.valence > 0) or (f.candidate != profile.best and f.valence < 0)):
            problems.append(f"unique fact {f.id} is neither a strength of the best candidate nor a weakness of another")
    if problems:
        return problems
    for k in range(1, members + 1):
        if not any(f.holder == k for f in profile.facts):
            problems.append(f"member {k} holds no unique fact")
    full = support(profile.facts, letters)
    if strict_leader(full) != profile.best:
        problems.append(f"on the full information {profile.best} does not win strictly: {full}")
    for k in range(1, members + 1):
        own = support(profile.document(k), letters)
        if max(own.values()) <= own[profile.best]:
            problems.append(f"on member {k}'s document {profile.best} is not beaten: {own}")
    for f in profile.key_facts():
        if not f.pattern:
            problems.append(f"key fact {f.id} has no mention pattern")
            continue
        if not _WORDS_PATTERN.fullmatch(f.pattern):
            problems.append(f"pattern of {f.id} is not an alternation of words between \\b ... \\b: {f.pattern!r}")
            continue
        pattern = re.compile(f.pattern, re.IGNORECASE)
        if not pattern.search(f.text):
            problems.append(f"pattern of {f.id} does not match its own text")
        for other in profile.facts:
            if other.id != f.id and pattern.search(other.text):
                problems.append(f"pattern of {f.id} also matches fact {other.id} ({other.text!r})")
    return problems


# ---------------------------------------------------------------------- shipped profiles
def _data(name: str) -> dict[str, Any]:
    return json.loads(resources.files("teamenvs.hidden_profile").joinpath("data", name).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def shipped_profiles() -> dict[str, Profile]:
    """The hand-authored profiles by id (`data/profiles.json`)."""
    return {p["id"]: Profile.from_json(p) for p in _data("profiles.json")["profiles"]}


PROFILE_IDS: tuple[str, ...] = tuple(shipped_profiles())


def profile_members(profile_id: str) -> int | None:
    """How many members a shipped profile is written for (None for generated profiles)."""
    found = shipped_profiles().get(profile_id)
    return None if found is None else found.members


@lru_cache(maxsize=1)
def traits() -> tuple[tuple[dict[str, str], ...], tuple[dict[str, str], ...]]:
    """(roles, traits) of the generator (`data/traits.json`)."""
    data = _data("traits.json")
    return tuple(data["roles"]), tuple(data["traits"])


# ---------------------------------------------------------------------- the generator
def generate_profile(rng: np.random.Generator, members: int = 3, candidates: int = 3) -> Profile:
    """A new hidden profile for `members` members and `candidates` candidates, drawn from `rng`.

    The best candidate and the shared favourite are random letters. The best candidate gets one
    shared strength, 2-3 shared weaknesses and 2-3 unique strengths per member; the favourite one
    shared weakness, one unique weakness per member, and enough shared strengths to lead every single
    document by 1-2; every other candidate 2-3 shared strengths (fewer if that would tie the best
    candidate) and one shared weakness. Each fact is a
    different trait of `data/traits.json`. The result passes `check_profile` (asserted).
    """
    roles, pool = traits()
    letters = tuple(LETTERS[:candidates])
    role = roles[int(rng.integers(len(roles)))]
    order = [pool[int(i)] for i in rng.permutation(len(pool))]
    best, favourite = (letters[int(i)] for i in rng.choice(candidates, size=2, replace=False))
    unique = [2 + int(rng.integers(2)) if members < 4 else 2 for _ in range(members)]
    best_weak = 2 + int(rng.integers(2))
    best_on_own = 1 - best_weak + max(unique)
    plan: list[tuple[str, int, int]] = [(best, 1, 0)] + [(best, -1, 0)] * best_weak
    plan += [(best, 1, k) for k in range(1, members + 1) for _ in range(unique[k - 1])]
    favourite_strong = best_on_own + 2 + 1 + int(rng.integers(2))  # leads each document by 1-2
    plan += [(favourite, 1, 0)] * favourite_strong + [(favourite, -1, 0)] + [(favourite, -1, k) for k in range(1, members + 1)]
    best_overall = 1 - best_weak + sum(unique)
    for c in letters:
        if c not in (best, favourite):  # support 1-2, below the best candidate's on the full information
            plan += [(c, 1, 0)] * min(2 + int(rng.integers(2)), best_overall) + [(c, -1, 0)]
    if len(plan) > len(order):
        raise ValueError(f"not enough traits for {members} members and {candidates} candidates ({len(plan)} > {len(order)})")
    facts = []
    for i, ((c, valence, holder), trait) in enumerate(zip(plan, order)):
        key = holder != 0 and c == best and valence > 0
        facts.append(Fact(f"f{i + 1}", c, valence, holder, trait["strength" if valence > 0 else "weakness"],
                          trait["pattern"] if key else None))
    facts.sort(key=lambda f: (f.candidate, -f.valence, f.holder))
    tag = "".join(str(int(x)) for x in rng.integers(10, size=6))
    profile = Profile(f"{GENERATED}-{tag}", role["title"], role["role"], letters, best, tuple(facts))
    problems = check_profile(profile, members)
    assert not problems, problems  # the plan's counts make the structure hold; the traits' words keep patterns apart
    return profile


def episode_profile(profile_id: str, rng: np.random.Generator, members: int, candidates: int) -> Profile:
    """The profile an episode plays: the shipped one named, or a new generated one."""
    if profile_id == GENERATED:
        return generate_profile(rng, members, candidates)
    return shipped_profiles()[profile_id]
