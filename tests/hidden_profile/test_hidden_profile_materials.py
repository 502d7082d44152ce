"""Hidden Profile's materials: every shipped profile and many generated ones have the hidden-profile
structure (`check_profile`), the check catches each way a profile can break it, the generator is
seeded, and every mention pattern runs in linear time."""

from __future__ import annotations

import dataclasses
import re
import time

import numpy as np
import pytest

from teamenvs.hidden_profile.materials import (
    PROFILE_IDS,
    Fact,
    any_of,
    check_profile,
    generate_profile,
    shipped_profiles,
    strict_leader,
    support,
    traits,
)


def test_at_least_three_distinct_profiles_ship_with_their_own_roles():
    profiles = shipped_profiles()
    assert len(profiles) >= 3 and tuple(profiles) == PROFILE_IDS
    assert len({p.role for p in profiles.values()}) == len(profiles)
    assert len({p.best for p in profiles.values()}) >= 2  # the best candidate is not always the same letter
    assert shipped_profiles()["airline_captain"].best == "C"  # CollabSim: "The correct answer is Candidate C"


@pytest.mark.parametrize("profile_id", PROFILE_IDS)
def test_every_shipped_profile_is_a_hidden_profile(profile_id):
    profile = shipped_profiles()[profile_id]
    assert check_profile(profile) == []
    assert profile.members == 3
    full = support(profile.facts, profile.candidates)
    assert strict_leader(full) == profile.best
    for k in (1, 2, 3):
        own = support(profile.document(k), profile.candidates)
        assert strict_leader(own) not in (None, profile.best)  # each member alone clearly prefers another candidate
    assert len(profile.key_facts()) >= 6  # CollabSim C.2 has seven regex groups for Candidate C


def test_the_airline_profile_carries_collabsim_s_seven_key_clues():
    profile = shipped_profiles()["airline_captain"]
    texts = " ".join(f.text.lower() for f in profile.key_facts())
    for clue in ("decisions", "stress", "atmosphere", "conscientious", "technical", "concern", "details"):
        assert clue in texts


@pytest.mark.parametrize("members,candidates", [(2, 3), (3, 3), (3, 4), (4, 3), (4, 4)])
def test_generated_profiles_are_hidden_profiles(members, candidates):
    bests = set()
    for seed in range(150):
        profile = generate_profile(np.random.default_rng(seed), members, candidates)
        assert check_profile(profile, members) == []
        assert profile.members == members and len(profile.candidates) == candidates
        assert len({f.text for f in profile.facts}) == len(profile.facts)
        bests.add(profile.best)
    assert bests == set("ABCD"[:candidates])


def test_the_generator_is_seeded():
    a = generate_profile(np.random.default_rng(7))
    assert a == generate_profile(np.random.default_rng(7))
    assert a != generate_profile(np.random.default_rng(8))


def _with(profile, fact_id, **changes):
    facts = tuple(dataclasses.replace(f, **changes) if f.id == fact_id else f for f in profile.facts)
    return dataclasses.replace(profile, facts=facts)


def test_the_check_catches_broken_profiles():
    p = shipped_profiles()["airline_captain"]
    # a key fact made shared: every member now has it, and member 1 ties A and C no more
    assert any("not beaten" in e for e in check_profile(_with(p, "c4", holder=0)) + check_profile(
        _with(_with(p, "c4", holder=0), "c5", holder=0)))
    # without two key facts the best candidate no longer wins on the full information
    weak = dataclasses.replace(p, facts=tuple(f for f in p.facts if f.id not in ("c9", "c10", "c7", "c8")))
    assert any("does not win strictly" in e or "holds no unique fact" in e for e in check_profile(weak))
    assert any("neither a strength" in e for e in check_profile(_with(p, "a7", valence=1)))
    assert any("words" in e for e in check_profile(_with(p, "a1", text="word " * 12)))
    assert any("no mention pattern" in e for e in check_profile(_with(p, "c4", pattern=None)))
    assert any("also matches fact" in e for e in check_profile(_with(p, "c4", pattern=r"\b(?:has)\b")))
    assert any("its own text" in e for e in check_profile(_with(p, "c4", pattern=r"\b(?:zebra)\b")))
    assert any("alternation of words" in e for e in check_profile(_with(p, "c4", pattern=r"(a+)+b")))
    assert any("not a candidate" in e for e in check_profile(dataclasses.replace(p, best="Z")))


def _patterns() -> dict[str, str]:
    found = {f"{p.id}.{f.id}": f.pattern for p in shipped_profiles().values() for f in p.key_facts()}
    found.update({f"trait.{t['id']}": t["pattern"] for t in traits()[1]})
    return found


def _best_time(pattern: re.Pattern, text: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(20):
            pattern.findall(text)
        best = min(best, time.perf_counter() - start)
    return best


def _growth(pattern: re.Pattern, filler: str) -> float:
    """How much slower `findall` is on 4000 characters of `filler` than on 500 (linear: about 8x, quadratic 64x)."""
    return _best_time(pattern, filler * 4000 + "x") / max(_best_time(pattern, filler * 500 + "x"), 1e-6)


@pytest.mark.parametrize("name", sorted(_patterns()))
def test_mention_patterns_run_in_linear_time(name):
    """Like tests/hostile/test_actions.py (a slow case is re-measured before failing, so a loaded machine's blip passes)."""
    pattern = re.compile(_patterns()[name], re.IGNORECASE)
    for filler in (" ", "a", "a ", "-", "on ", "(", "\u3000"):
        growth = _growth(pattern, filler)
        if growth > 30:
            growth = min(growth, _growth(pattern, filler), _growth(pattern, filler))
        assert growth < 30, (name, filler, growth)


def test_facts_fit_a_bandwidth_message():
    for p in shipped_profiles().values():
        for f in p.facts:
            assert len(f"Candidate {f.candidate} strength: {f.text}".split()) <= 15
    for t in traits()[1]:
        assert len(t["strength"].split()) <= 11 and len(t["weakness"].split()) <= 11
    assert isinstance(Fact("x", "A", 1, 0, "text").unique, bool)


def test_probe_questions_follow_collabsim_d2_and_the_probe_keys():
    import json
    from importlib import resources

    from agents.probes import PROBE_QUESTIONS

    data = json.loads(resources.files("teamenvs.hidden_profile").joinpath("data", "probes.json").read_text())
    assert set(data["questions"]) == set(PROBE_QUESTIONS)
    assert data["questions"]["teammates"] == "At this moment, what do you think your partners are trying to do?"


def test_one_search_for_any_mention_pattern_finds_a_mention_exactly_when_one_pattern_alone_does():
    # the env spots mentions with `any_of` first: it must find nothing only where every pattern alone finds nothing
    profiles = list(shipped_profiles().values()) + [generate_profile(np.random.default_rng(s), 3, 3) for s in range(5)]
    draw = np.random.default_rng(11)
    for profile in profiles:
        patterns = [re.compile(f.pattern, re.IGNORECASE) for f in profile.facts if f.pattern]
        joined = any_of(patterns)
        assert joined is not None
        words = " ".join(f.text for f in profile.facts).split() + ["calm", "Decisive", "the", "and", "morale", "x"]
        texts = [f.text.upper() for f in profile.facts] + [" ".join(draw.choice(words, size=int(draw.integers(1, 12))))
                                                           for _ in range(400)]
        matched = 0
        for text in texts:
            alone = any(p.search(text) for p in patterns)
            assert (joined.search(text) is not None) == alone, text
            matched += alone
        assert 0 < matched < len(texts)  # both sides seen
    # where joining could change a match, there is no joined pattern (each is then tried alone)
    assert any_of([re.compile(r"(a)\1", re.IGNORECASE), re.compile("b", re.IGNORECASE)]) is None
    assert any_of([re.compile("a"), re.compile("b", re.IGNORECASE)]) is None
    assert any_of([re.compile("(?P<x>a)"), re.compile("(?P<x>b)")]) is None and any_of([]) is None
    assert any_of([re.compile("(a)"), re.compile("(b)?(?(1)c|d)")]) is None  # a condition on a group's number
