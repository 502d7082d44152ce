"""`agents.personas`: CollabSim App. F personas and the App. G collaboration-theory block.

Data: the categories are exactly the paper's (App. F items i-v) and the examples the paper gives
for its conditional rules hold (no student is retired-age, no 18-24 is retired, management needs
a bachelor's or graduate degree, student education depends on age, the paper's own sample persona
is valid). The full rule tables (ours where the paper is silent) are written out by hand here and
compared with the shipped data, so a change to the data file has to be made on purpose.

Sampler: over 2,000 personas every conditional rule holds (checked against the hand-written tables,
not the module's own helpers), every category value and every allowed (age, occupation, education)
and (occupation, income) combination appears, each trait is high about half the time; the same
seed gives the same personas, different seeds differ, and the global numpy state is untouched.

Rendering and prompts: "You are ..." names every attribute and gives each trait the wording of its
level (not the opposite one); JSON round trip; the theory block names the four concepts and the
four maxims. Errors: bad personas and bad (monkeypatched) data files raise errors that say what is
wrong.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections import Counter
from importlib import resources
from typing import Any

import numpy as np
import pytest

from agents import personas as P
from agents.personas import (
    BIG_FIVE,
    COLLABORATION_THEORY,
    Persona,
    PersonaDataError,
    load_persona_data,
    persona_prompt,
    sample_persona,
    sample_personas,
)
from teamenvs.core.config import ConfigError

AGES = ("18-24", "25-34", "35-44", "45-54", "55-64", "65+")
GENDERS = ("male", "female", "non-binary")
EDUCATION = ("less than high school", "high school diploma", "some college", "bachelor's degree", "graduate degree")
OCCUPATIONS = ("student", "professional/technical", "management/executive", "service/sales", "skilled labor", "retired")
INCOMES = ("low", "lower-middle", "middle", "upper-middle", "high")
LT_HS, HS, SOME, BA, GRAD = EDUCATION

# The rule tables written out by hand (module docstring: which parts are the paper's, which ours).
OCC_AGES = {
    "student": {"18-24", "25-34"},
    "professional/technical": set(AGES),
    "management/executive": set(AGES) - {"18-24"},
    "service/sales": set(AGES),
    "skilled labor": set(AGES),
    "retired": {"55-64", "65+"},
}
OCC_EDUCATION = {
    "professional/technical": {SOME, BA, GRAD},
    "management/executive": {BA, GRAD},
    "service/sales": {LT_HS, HS, SOME, BA},
    "skilled labor": {LT_HS, HS, SOME},
    "retired": set(EDUCATION),
}
STUDENT_EDUCATION = {"18-24": {HS, SOME, BA}, "25-34": {SOME, BA, GRAD}}
OCC_INCOME = {
    "student": {"low", "lower-middle"},
    "professional/technical": {"middle", "upper-middle", "high"},
    "management/executive": {"upper-middle", "high"},
    "service/sales": {"low", "lower-middle", "middle"},
    "skilled labor": {"lower-middle", "middle", "upper-middle"},
    "retired": set(INCOMES),
}


def expected_educations(age: str, occupation: str) -> set[str]:
    allowed = STUDENT_EDUCATION[age] if occupation == "student" else set(OCC_EDUCATION[occupation])
    return allowed - {GRAD} if age == "18-24" else allowed


PAPER_SAMPLE = {  # App. F, "Sample input"
    "age_range": "25-34", "gender": "non-binary", "education": "bachelor's degree",
    "occupation": "management/executive", "income": "upper-middle",
    "big_five": {"openness": "low", "conscientiousness": "low", "extraversion": "low",
                 "agreeableness": "high", "neuroticism": "high"},
}


@pytest.fixture(scope="module")
def many() -> list[Persona]:
    return sample_personas(2000, seed=12345)


@pytest.fixture
def fresh_cache():
    """Clear the data cache around a test that monkeypatches the data file."""
    load_persona_data.cache_clear()
    yield
    load_persona_data.cache_clear()


# --------------------------------------------------------------------------- data


def test_data_file_ships_inside_the_package():
    assert resources.files("agents").joinpath("data", "personas.json").is_file()
    raw = json.loads(resources.files("agents").joinpath("data", "personas.json").read_text(encoding="utf-8"))
    assert "Appendix F" in " ".join(raw["_about"])


def test_categories_are_the_papers():
    data = load_persona_data()
    assert tuple(data.age_bands) == AGES
    assert tuple(data.genders) == GENDERS
    assert tuple(data.education_levels) == EDUCATION
    assert tuple(data.occupations) == OCCUPATIONS
    assert tuple(data.income_brackets) == INCOMES
    assert BIG_FIVE == ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
    assert tuple(data.big_five) == BIG_FIVE


def test_the_papers_examples_of_its_rules_hold():
    young = P.allowed_occupations("18-24")
    assert "student" in young and "retired" not in young  # "younger groups can be students but not retired"
    for age in AGES:
        if "management/executive" in P.allowed_occupations(age):  # "requires bachelor/graduate levels"
            assert set(P.allowed_educations(age, "management/executive")) <= {BA, GRAD}
    # "student categories are age-specific"
    assert set(P.allowed_educations("18-24", "student")) != set(P.allowed_educations("25-34", "student"))
    assert Persona.from_dict(PAPER_SAMPLE).to_dict() == PAPER_SAMPLE  # the paper's sample persona is valid


def test_rule_tables_match_the_hand_written_ones():
    for age in AGES:
        assert set(P.allowed_occupations(age)) == {o for o in OCCUPATIONS if age in OCC_AGES[o]}, age
        for occupation in P.allowed_occupations(age):
            assert set(P.allowed_educations(age, occupation)) == expected_educations(age, occupation), (age, occupation)
    for occupation in OCCUPATIONS:
        assert set(P.allowed_incomes(occupation)) == OCC_INCOME[occupation], occupation
    assert P.allowed_educations("18-24", "retired") == ()  # a forbidden pair allows nothing


def test_allowed_helpers_reject_unknown_values_with_a_suggestion():
    with pytest.raises(ConfigError, match=r"unknown age_range '18-25'.*did you mean '18-24'"):
        P.allowed_occupations("18-25")
    with pytest.raises(ConfigError, match=r"unknown occupation 'retiree'.*did you mean 'retired'"):
        P.allowed_incomes("retiree")


# --------------------------------------------------------------------------- sampler


def test_every_conditional_rule_holds_over_many_personas(many):
    for p in many:
        assert p.age_range in OCC_AGES[p.occupation], p
        assert p.education in expected_educations(p.age_range, p.occupation), p
        assert p.income in OCC_INCOME[p.occupation], p
        assert p.gender in GENDERS
        assert set(p.big_five) == set(BIG_FIVE) and set(p.big_five.values()) <= {"high", "low"}
    assert not any(p.occupation == "retired" and p.age_range in ("18-24", "25-34", "35-44", "45-54") for p in many)
    assert not any(p.occupation == "management/executive" and p.education not in (BA, GRAD) for p in many)
    assert not any(p.age_range == "18-24" and p.education == GRAD for p in many)


def test_sampler_reaches_every_value_and_every_allowed_combination(many):
    assert {p.age_range for p in many} == set(AGES)
    assert {p.gender for p in many} == set(GENDERS)
    assert {p.education for p in many} == set(EDUCATION)
    assert {p.occupation for p in many} == set(OCCUPATIONS)
    assert {p.income for p in many} == set(INCOMES)
    allowed_triples = {(a, o, e) for a in AGES for o in OCCUPATIONS if a in OCC_AGES[o] for e in expected_educations(a, o)}
    assert {(p.age_range, p.occupation, p.education) for p in many} == allowed_triples
    assert {(p.occupation, p.income) for p in many} == {(o, i) for o in OCCUPATIONS for i in OCC_INCOME[o]}
    assert {(t, p.big_five[t]) for p in many for t in BIG_FIVE} == set(itertools.product(BIG_FIVE, ("high", "low")))


def test_draws_are_uniform_and_traits_independent(many):
    n = len(many)  # binomial sd of a share at n=2000 is about 0.011; the bounds are ~5 sd
    for trait in BIG_FIVE:
        assert 0.44 < sum(p.big_five[trait] == "high" for p in many) / n < 0.56, trait
    both_high = sum(p.big_five["openness"] == "high" and p.big_five["neuroticism"] == "high" for p in many) / n
    assert 0.20 < both_high < 0.30
    ages = Counter(p.age_range for p in many)
    assert all(abs(ages[a] / n - 1 / 6) < 0.045 for a in AGES), ages
    genders = Counter(p.gender for p in many)
    assert all(abs(genders[g] / n - 1 / 3) < 0.055 for g in GENDERS), genders


def test_same_seed_same_personas_different_seeds_differ():
    a, b = sample_personas(50, seed=7), sample_personas(50, seed=7)
    assert a == b and [p.to_json() for p in a] == [p.to_json() for p in b]
    assert sample_personas(20, seed=7) == a[:20]  # a prefix: n does not change earlier draws
    assert sample_personas(50, seed=8) != a
    assert len({tuple(sample_personas(10, seed=s)) for s in range(20)}) == 20
    rng1, rng2 = np.random.default_rng(3), np.random.default_rng(3)
    assert [sample_persona(rng1) for _ in range(5)] == [sample_persona(rng2) for _ in range(5)]
    assert sample_personas(0, seed=1) == []


def test_sampler_leaves_global_random_state_alone():
    np.random.seed(0)
    before = np.random.get_state()[1].copy()
    sample_personas(100, seed=1)
    assert np.array_equal(np.random.get_state()[1], before)


def test_sampler_argument_errors():
    with pytest.raises(TypeError, match="numpy Generator"):
        sample_persona(42)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="n must be a non-negative integer"):
        sample_personas(-1, seed=0)
    with pytest.raises(ConfigError, match="seed must be a non-negative integer"):
        sample_personas(3, seed="zero")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- persona, rendering, prompts


def test_render_names_every_attribute_and_each_traits_level(many):
    data = load_persona_data()
    for p in many[:300]:
        text = p.render()
        assert text.startswith("You are ")
        for phrase in (data.age_bands[p.age_range], data.genders[p.gender], data.education_levels[p.education],
                       data.income_brackets[p.income]):
            assert phrase in text, (phrase, text)
        assert data.occupations[p.occupation].phrase[1:] in text  # capitalised at a sentence start
        for trait, level in p.big_five.items():
            other = "low" if level == "high" else "high"
            assert data.big_five[trait][level] in text and data.big_five[trait][other] not in text
            assert f"{level} {trait}" in text


def test_render_of_the_papers_sample_persona():
    text = Persona.from_dict(PAPER_SAMPLE).render()
    for words in ("non-binary", "between 25 and 34", "bachelor's degree", "management", "upper-middle",
                  "low openness", "low conscientiousness", "low extraversion", "high agreeableness",
                  "high neuroticism", "worry", "reserved"):
        assert words in text, words
    assert "curious" not in text and "calm" not in text  # the wording of the other levels


def test_json_round_trip_equality_and_hash(many):
    for p in many[:100]:
        assert Persona.from_json(p.to_json()) == p
        assert json.loads(p.to_json()) == p.to_dict()
    assert list(json.loads(many[0].to_json())) == list(PAPER_SAMPLE)  # the paper's key order
    shuffled = dict(PAPER_SAMPLE, big_five=dict(reversed(list(PAPER_SAMPLE["big_five"].items()))))
    a, b = Persona.from_dict(PAPER_SAMPLE), Persona.from_dict(shuffled)
    assert a == b and hash(a) == hash(b) and a.to_json() == b.to_json()
    with pytest.raises(AttributeError):
        a.income = "high"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"gender": "man"}, r"unknown gender 'man'"),
        ({"income": "upper middle"}, r"unknown income 'upper middle'.*did you mean 'upper-middle'"),
        ({"age_range": "18-24", "occupation": "retired", "education": HS, "income": "low"},
         r"occupation 'retired' is not allowed at age '18-24'"),
        ({"education": HS}, r"education 'high school diploma' is not allowed for a 'management/executive'"),
        ({"age_range": "18-24", "occupation": "student", "education": GRAD, "income": "low"},
         r"education 'graduate degree' is not allowed for a 'student' aged '18-24'"),
        ({"income": "low"}, r"income 'low' is not allowed for occupation 'management/executive'"),
        ({"big_five": {"openness": "high"}}, r"big_five must map exactly the traits"),
        ({"big_five": dict(PAPER_SAMPLE["big_five"], neuroticism="medium")}, r"big_five\['neuroticism'\] must be"),
    ],
)
def test_invalid_personas_are_rejected_with_clear_errors(change: dict[str, Any], message: str):
    with pytest.raises(ConfigError, match=message):
        Persona.from_dict({**PAPER_SAMPLE, **change})


def test_from_dict_rejects_missing_or_extra_keys():
    with pytest.raises(ConfigError, match="expected exactly the keys"):
        Persona.from_dict({k: v for k, v in PAPER_SAMPLE.items() if k != "income"})
    with pytest.raises(ConfigError, match="expected exactly the keys"):
        Persona.from_dict({**PAPER_SAMPLE, "name": "Alex"})


def test_theory_block_names_the_four_concepts_and_the_four_maxims():
    text = COLLABORATION_THEORY.lower()
    for concept in ("common ground", "shared mental model", "transactive memory", "gricean maxims"):
        assert concept in text, concept
    for maxim in ("quantity:", "quality:", "relation:", "manner:"):
        assert maxim in text, maxim
    for source in ("Clark & Brennan, 1991", "Cannon-Bowers et al., 1993", "Wegner, 1987", "Grice, 1975"):
        assert source in COLLABORATION_THEORY


def test_persona_prompt_with_and_without_theory():
    p = sample_personas(1, seed=0)[0]
    plain, informed = persona_prompt(p), persona_prompt(p, theory=True)
    assert plain.startswith(p.render()) and COLLABORATION_THEORY not in plain
    assert informed.startswith(plain) and informed.endswith(COLLABORATION_THEORY)
    with pytest.raises(TypeError, match="needs a Persona"):
        persona_prompt(PAPER_SAMPLE)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- bad data files


def _edited(edit) -> dict[str, Any]:
    raw = copy.deepcopy(P._read_raw())
    edit(raw)
    return raw


BAD_DATA = [
    (lambda r: r["occupations"]["student"]["age_bands"].append("16-17"),
     r"occupations\['student'\]\.age_bands: unknown age band '16-17'"),
    (lambda r: r["occupations"]["retired"]["income"].append("very high"),
     r"occupations\['retired'\]\.income: unknown income bracket 'very high'"),
    (lambda r: r["occupations"]["skilled labor"]["education"].append("phd"),
     r"unknown education level 'phd'"),
    (lambda r: r["occupations"]["student"]["education_by_age_band"].update({"65+": [HS]}),
     r"education_by_age_band has age band '65\+', which is not among the occupation's age bands"),
    (lambda r: r["occupations"]["student"]["education_by_age_band"].update({"18-24": [GRAD]}),
     r"occupation 'student' at age band '18-24' allows no education level"),
    (lambda r: [r["occupations"][o]["age_bands"].remove("65+") for o in r["occupations"]
                if "65+" in r["occupations"][o]["age_bands"]],
     r"no occupation allows age band '65\+'"),
    (lambda r: r["big_five"].pop("neuroticism"), r"big_five must have exactly the traits"),
    (lambda r: r["big_five"]["openness"].update({"medium": "x"}), r"big_five\['openness'\] must have exactly the levels"),
    (lambda r: r["genders"]["male"].update({"phrase": ""}), r"genders\['male'\]\.phrase must be a non-empty string"),
    (lambda r: r.pop("income_brackets"), r"missing section\(s\) \['income_brackets'\]"),
    (lambda r: r.update({"names": []}), r"unknown section\(s\) \['names'\]"),
    (lambda r: r["occupations"]["student"].update({"income": ["low", "low"]}), r"lists a income bracket twice"),
]


@pytest.mark.parametrize(("edit", "message"), BAD_DATA)
def test_bad_data_file_gives_a_clear_error(monkeypatch, fresh_cache, edit, message):
    raw = _edited(edit)
    monkeypatch.setattr(P, "_read_raw", lambda: raw)
    with pytest.raises(PersonaDataError, match=r"personas\.json: .*" + message):
        load_persona_data()
    with pytest.raises(PersonaDataError):  # everything that needs the data reports the same fault
        sample_personas(1, seed=0)


def test_shipped_data_parses_and_bad_json_is_reported(monkeypatch, fresh_cache):
    assert P.parse_persona_data(P._read_raw()) == load_persona_data()

    class Broken:
        def joinpath(self, *parts):
            return self

        def read_text(self, encoding="utf-8"):
            return '{"age_bands": '

    monkeypatch.setattr(P.resources, "files", lambda package: Broken())
    load_persona_data.cache_clear()
    with pytest.raises(PersonaDataError, match="not valid JSON"):
        load_persona_data()
