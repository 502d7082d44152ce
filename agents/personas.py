"""Personas for LLM agents and the collaboration-theory instruction block (CollabSim, Appendices F and G).

CollabSim (`seeds/001_7a84e9cb15ce7cd9.txt`) compares *persona-based* agents, prompted with a
persona and the task, against *collaboration-theory-informed* agents that also receive a block of
instructions drawn from research on human collaboration. This module provides both:

    from agents.personas import sample_personas, persona_prompt
    people = sample_personas(4, seed=0)
    prompt = persona_prompt(people[0], theory=True)   # "You are ..." + the theory block

Attributes (App. F, items i-v; all categories live in `agents/data/personas.json`):
gender (male, female, non-binary), age band (18-24, 25-34, 35-44, 45-54, 55-64, 65+), education
(less than high school, high school diploma, some college, bachelor's degree, graduate degree),
occupation (student, professional/technical, management/executive, service/sales, skilled labor,
retired), income bracket, and a Big Five profile (openness, conscientiousness, extraversion,
agreeableness, neuroticism), each trait high or low. Field names follow the paper's App. F sample
input (`age_range`, `gender`, `education`, `occupation`, `income`, `big_five`).

Conditional rules, applied in this order by `sample_persona`:

1. age band, uniform over the six bands (order from App. F; uniform is our choice);
2. occupation, uniform over those allowed for the age band. App. F: "occupations are first
   constrained by age band (e.g., younger groups can be students but not retired)". The table is
   ours: student only 18-34, retired only 55+, management/executive from 25, the rest any age;
3. education, uniform over those allowed for the (age band, occupation) pair. App. F: "education
   is constrained by the sampled (age, occupation) pair (e.g., management/executive requires
   bachelor/graduate levels; student categories are age-specific)". Ours: no graduate degree at
   18-24 (an age rule for every occupation); a student of 18-24 has finished high school, some
   college or a bachelor's degree, a student of 25-34 some college, a bachelor's or a graduate
   degree; professional/technical needs at least some college; skilled labor has at most some
   college; service/sales anything up to a bachelor's degree; retired anything;
4. income, uniform over the brackets allowed for the occupation. App. F: "income is then sampled
   conditionally by occupation". The paper names only "upper-middle" (its sample); the five
   brackets low, lower-middle, middle, upper-middle, high and the lists per occupation are ours;
5. gender, uniform and independent of the rest (the paper states no rule);
6. Big Five, each trait high or low with probability 1/2, independently. App. F: "Big Five traits
   are sampled independently across dimensions" (the probability is ours).

Every draw comes from the `np.random.Generator` passed in, in the fixed order above, so the same
seed always gives the same personas. The paper has GPT-5.5 turn the attributes into a "You are ..."
paragraph; `Persona.render` writes it offline from phrases in the data file (our wording), which keeps
prompts reproducible and needs no model. The paper's persona-writing prompt forbids inventing a
name, so personas have none. `COLLABORATION_THEORY` restates App. G's four principles (common
ground, shared mental models, transactive memory, Gricean maxims) in our own words.

The data file is validated when first loaded (`load_persona_data`), and every `Persona` is
checked against it on construction: an unknown value or a combination the rules forbid raises a
`ConfigError` saying what is wrong and what is allowed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from teamenvs.core.config import ConfigError
from teamenvs.core.text import close_match, excerpt, quote

Level = Literal["high", "low"]
LEVELS: tuple[str, ...] = ("high", "low")
BIG_FIVE: tuple[str, ...] = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
_DATA_FILE = "personas.json"
_SECTIONS = ("age_bands", "genders", "education_levels", "occupations", "income_brackets", "big_five")


class PersonaDataError(ConfigError):
    """The persona data file is malformed or inconsistent; the message names the entry and the problem."""


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Occupation:
    """An occupation: its phrase, the age bands it is allowed in, its education and income rules."""

    name: str
    phrase: str
    age_bands: tuple[str, ...]
    education: tuple[str, ...]
    education_by_age_band: Mapping[str, tuple[str, ...]]
    income: tuple[str, ...]


@dataclass(frozen=True)
class PersonaData:
    """The validated persona categories and rules (see the module docstring for their sources).

    Each category maps a value to the phrase used by `Persona.render`, in the data file's order.
    """

    age_bands: Mapping[str, str]
    genders: Mapping[str, str]
    education_levels: Mapping[str, str]
    education_not_for_age_bands: Mapping[str, tuple[str, ...]]
    occupations: Mapping[str, Occupation]
    income_brackets: Mapping[str, str]
    big_five: Mapping[str, Mapping[str, str]]

    def occupations_for(self, age_range: str) -> tuple[str, ...]:
        """Occupations allowed for an age band (rule 2)."""
        _check_value("age_range", age_range, self.age_bands)
        return tuple(name for name, occ in self.occupations.items() if age_range in occ.age_bands)

    def educations_for(self, age_range: str, occupation: str) -> tuple[str, ...]:
        """Education levels allowed for an (age band, occupation) pair (rule 3); empty if the pair is not allowed."""
        _check_value("age_range", age_range, self.age_bands)
        _check_value("occupation", occupation, self.occupations)
        occ = self.occupations[occupation]
        if age_range not in occ.age_bands:
            return ()
        by_occupation = occ.education_by_age_band.get(age_range, occ.education)
        return tuple(
            level
            for level in self.education_levels
            if level in by_occupation and age_range not in self.education_not_for_age_bands[level]
        )

    def incomes_for(self, occupation: str) -> tuple[str, ...]:
        """Income brackets allowed for an occupation (rule 4)."""
        _check_value("occupation", occupation, self.occupations)
        allowed = self.occupations[occupation].income
        return tuple(bracket for bracket in self.income_brackets if bracket in allowed)


def _check_value(what: str, value: Any, allowed: Mapping[str, Any] | Sequence[str], where: str = "") -> None:
    if isinstance(value, str) and value in allowed:
        return
    names = list(allowed)
    near = close_match(str(value), names)
    hint = f" (did you mean {near!r}?)" if near else ""
    raise ConfigError(f"{where}unknown {what} {quote(str(value))}{hint}; allowed: {', '.join(map(repr, names))}")


def _fail(message: str) -> PersonaDataError:
    return PersonaDataError(f"{_DATA_FILE}: {message}")


def _mapping(raw: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping) or not raw:
        raise _fail(f"{where} must be a non-empty object, got {type(raw).__name__} {raw!r:.60}")
    return raw


def _text(raw: Any, where: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise _fail(f"{where} must be a non-empty string, got {raw!r:.60}")
    return raw


def _names(raw: Any, known: Mapping[str, Any], what: str, where: str, allow_empty: bool = False) -> tuple[str, ...]:
    if not isinstance(raw, list) or (not raw and not allow_empty):
        raise _fail(f"{where} must be a {'' if allow_empty else 'non-empty '}list of {what}s, got {raw!r:.60}")
    for value in raw:
        try:
            _check_value(what, value, known)
        except ConfigError as err:
            raise _fail(f"{where}: {err}") from None
    if len(set(raw)) != len(raw):
        raise _fail(f"{where} lists a {what} twice: {raw!r}")
    return tuple(raw)


def _phrases(raw: Any, section: str) -> dict[str, str]:
    return {name: _text(_mapping(entry, f"{section}[{name!r}]").get("phrase"), f"{section}[{name!r}].phrase")
            for name, entry in _mapping(raw, section).items()}


def _occupation(name: str, raw: Any, ages: Mapping[str, str], levels: Mapping[str, str],
                incomes: Mapping[str, str]) -> Occupation:
    where = f"occupations[{name!r}]"
    entry = _mapping(raw, where)
    age_bands = _names(entry.get("age_bands"), ages, "age band", f"{where}.age_bands")
    education = _names(entry.get("education"), levels, "education level", f"{where}.education", allow_empty=True)
    by_age_raw = entry.get("education_by_age_band", {})
    if not isinstance(by_age_raw, Mapping):
        raise _fail(f"{where}.education_by_age_band must be an object, got {by_age_raw!r:.60}")
    by_age: dict[str, tuple[str, ...]] = {}
    for band, listed in by_age_raw.items():
        if band not in age_bands:
            raise _fail(f"{where}.education_by_age_band has age band {band!r}, which is not among the "
                        f"occupation's age bands {list(age_bands)}")
        by_age[band] = _names(listed, levels, "education level", f"{where}.education_by_age_band[{band!r}]")
    income = _names(entry.get("income"), incomes, "income bracket", f"{where}.income")
    return Occupation(name, _text(entry.get("phrase"), f"{where}.phrase"), age_bands, education,
                      MappingProxyType(by_age), income)


def parse_persona_data(raw: Mapping[str, Any]) -> PersonaData:
    """Validate the raw JSON content of the persona data file; raise `PersonaDataError` naming the fault."""
    raw = _mapping(raw, "the file")
    unknown = sorted(set(raw) - set(_SECTIONS) - {"_about"})
    if unknown:
        raise _fail(f"unknown section(s) {unknown}; expected {list(_SECTIONS)} (and '_about')")
    missing = [s for s in _SECTIONS if s not in raw]
    if missing:
        raise _fail(f"missing section(s) {missing}")
    ages = _phrases(raw["age_bands"], "age_bands")
    genders = _phrases(raw["genders"], "genders")
    levels = _phrases(raw["education_levels"], "education_levels")
    not_for = {
        level: _names(raw["education_levels"][level].get("not_for_age_bands", []), ages, "age band",
                      f"education_levels[{level!r}].not_for_age_bands", allow_empty=True)
        for level in levels
    }
    incomes = _phrases(raw["income_brackets"], "income_brackets")
    occupations = {name: _occupation(name, entry, ages, levels, incomes)
                   for name, entry in _mapping(raw["occupations"], "occupations").items()}
    big_five_raw = _mapping(raw["big_five"], "big_five")
    if set(big_five_raw) != set(BIG_FIVE):
        raise _fail(f"big_five must have exactly the traits {list(BIG_FIVE)}, got {list(big_five_raw)}")
    big_five: dict[str, Mapping[str, str]] = {}
    for trait in BIG_FIVE:
        entry = _mapping(big_five_raw[trait], f"big_five[{trait!r}]")
        if set(entry) != set(LEVELS):
            raise _fail(f"big_five[{trait!r}] must have exactly the levels {list(LEVELS)}, got {list(entry)}")
        big_five[trait] = MappingProxyType({lv: _text(entry[lv], f"big_five[{trait!r}][{lv!r}]") for lv in LEVELS})
    data = PersonaData(
        MappingProxyType(ages), MappingProxyType(genders), MappingProxyType(levels), MappingProxyType(not_for),
        MappingProxyType(occupations), MappingProxyType(incomes), MappingProxyType(big_five),
    )
    for band in ages:  # the sampler must never be stuck
        if not data.occupations_for(band):
            raise _fail(f"no occupation allows age band {band!r}")
        for occupation in data.occupations_for(band):
            if not data.educations_for(band, occupation):
                raise _fail(f"occupation {occupation!r} at age band {band!r} allows no education level "
                            f"(its list minus the levels excluded for {band!r} is empty)")
    return data


def _read_raw() -> Any:
    text = resources.files("agents").joinpath("data", _DATA_FILE).read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise _fail(f"not valid JSON: {err}") from None


@lru_cache(maxsize=1)
def load_persona_data() -> PersonaData:
    """The shipped persona data (`agents/data/personas.json`), validated once and cached."""
    return parse_persona_data(_read_raw())


def allowed_occupations(age_range: str) -> tuple[str, ...]:
    """Occupations the shipped rules allow for an age band."""
    return load_persona_data().occupations_for(age_range)


def allowed_educations(age_range: str, occupation: str) -> tuple[str, ...]:
    """Education levels the shipped rules allow for an (age band, occupation) pair."""
    return load_persona_data().educations_for(age_range, occupation)


def allowed_incomes(occupation: str) -> tuple[str, ...]:
    """Income brackets the shipped rules allow for an occupation."""
    return load_persona_data().incomes_for(occupation)


# --------------------------------------------------------------------------- personas


@dataclass(frozen=True)
class Persona:
    """One agent's persona: demographics and a Big Five profile, checked against the shipped rules.

    `big_five` maps each of the five traits to "high" or "low"; it is copied into the canonical
    trait order on construction.
    """

    age_range: str
    gender: str
    education: str
    occupation: str
    income: str
    big_five: dict[str, Level]

    def __post_init__(self) -> None:
        data = load_persona_data()
        _check_value("age_range", self.age_range, data.age_bands, "Persona: ")
        _check_value("gender", self.gender, data.genders, "Persona: ")
        _check_value("education", self.education, data.education_levels, "Persona: ")
        _check_value("occupation", self.occupation, data.occupations, "Persona: ")
        _check_value("income", self.income, data.income_brackets, "Persona: ")
        occupations = data.occupations_for(self.age_range)
        if self.occupation not in occupations:
            raise ConfigError(f"Persona: occupation {self.occupation!r} is not allowed at age {self.age_range!r}; "
                              f"allowed: {list(occupations)}")
        educations = data.educations_for(self.age_range, self.occupation)
        if self.education not in educations:
            raise ConfigError(f"Persona: education {self.education!r} is not allowed for a {self.occupation!r} "
                              f"aged {self.age_range!r}; allowed: {list(educations)}")
        incomes = data.incomes_for(self.occupation)
        if self.income not in incomes:
            raise ConfigError(f"Persona: income {self.income!r} is not allowed for occupation "
                              f"{self.occupation!r}; allowed: {list(incomes)}")
        if not isinstance(self.big_five, Mapping) or set(self.big_five) != set(BIG_FIVE):
            got = list(self.big_five) if isinstance(self.big_five, Mapping) else self.big_five
            raise ConfigError(f"Persona: big_five must map exactly the traits {list(BIG_FIVE)} to "
                              f"'high' or 'low', got {excerpt(got)}")
        for trait in BIG_FIVE:
            if self.big_five[trait] not in LEVELS:
                raise ConfigError(f"Persona: big_five[{trait!r}] must be 'high' or 'low', got {excerpt(self.big_five[trait])}")
        object.__setattr__(self, "big_five", {trait: self.big_five[trait] for trait in BIG_FIVE})

    def __hash__(self) -> int:
        return hash((self.age_range, self.gender, self.education, self.occupation, self.income,
                     tuple(self.big_five.items())))

    def to_dict(self) -> dict[str, Any]:
        """The persona as plain data, with the keys of the paper's App. F sample input."""
        return {"age_range": self.age_range, "gender": self.gender, "education": self.education,
                "occupation": self.occupation, "income": self.income, "big_five": dict(self.big_five)}

    def to_json(self, indent: int | None = None) -> str:
        """`to_dict` as a JSON string (key order fixed, so equal personas give equal strings)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Persona:
        """Inverse of `to_dict`; unknown or missing keys raise `ConfigError`."""
        fields = ("age_range", "gender", "education", "occupation", "income", "big_five")
        if not isinstance(data, Mapping) or set(data) != set(fields):
            got = excerpt(list(data)) if isinstance(data, Mapping) else type(data).__name__  # keys of any type, in their order
            raise ConfigError(f"Persona.from_dict: expected exactly the keys {list(fields)}, got {got}")
        return cls(**{f: data[f] for f in fields})

    @classmethod
    def from_json(cls, text: str) -> Persona:
        """Inverse of `to_json`."""
        return cls.from_dict(json.loads(text))

    def render(self) -> str:
        """A second-person "You are ..." paragraph naming every attribute and describing each trait."""
        data = load_persona_data()
        demographics = (
            f"You are {data.genders[self.gender]}, {data.age_bands[self.age_range]}. "
            f"{_capital(data.occupations[self.occupation].phrase)}; "
            f"{data.education_levels[self.education]}, and {data.income_brackets[self.income]}."
        )
        traits = " ".join(data.big_five[trait][level] for trait, level in self.big_five.items())
        profile = ", ".join(f"{level} {trait}" for trait, level in self.big_five.items())
        return f"{demographics} {traits} (Big Five profile: {profile}.)"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _pick(rng: np.random.Generator, options: Sequence[str]) -> str:
    return options[int(rng.integers(len(options)))]


def sample_persona(rng: np.random.Generator) -> Persona:
    """Draw one persona with the conditional rules of App. F (order and sources in the module docstring)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"sample_persona needs a numpy Generator (np.random.default_rng(seed)), "
                        f"got {type(rng).__name__}; for a list from a seed use sample_personas(n, seed)")
    data = load_persona_data()
    age_range = _pick(rng, tuple(data.age_bands))
    occupation = _pick(rng, data.occupations_for(age_range))
    education = _pick(rng, data.educations_for(age_range, occupation))
    income = _pick(rng, data.incomes_for(occupation))
    gender = _pick(rng, tuple(data.genders))
    big_five = {trait: _pick(rng, LEVELS) for trait in BIG_FIVE}
    return Persona(age_range, gender, education, occupation, income, big_five)  # type: ignore[arg-type]


def sample_personas(n: int, seed: int) -> list[Persona]:
    """`n` personas drawn from `np.random.default_rng(seed)`: the same seed always gives the same list."""
    for name, value in (("n", n), ("seed", seed)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ConfigError(f"sample_personas: {name} must be a non-negative integer, got {excerpt(value)}")
    rng = np.random.default_rng(int(seed))
    return [sample_persona(rng) for _ in range(int(n))]


# --------------------------------------------------------------------------- prompts

COLLABORATION_THEORY: str = """\
How to collaborate well: four principles from research on human teamwork.

1. Common ground (Clark & Brennan, 1991)
Understanding is built together; it is not simply sent. A message has done its job only when your partner has shown they took it the way you meant it.
- After anything important, check what you and your partners now both take as settled before you build on it.
- Say so when something is unclear to you, instead of carrying on with a guess.
- Keep revising your picture of what the team shares as the task moves on.
- Think of each contribution in two steps: putting the information forward, then making sure it landed as intended.

2. Shared mental models (Cannon-Bowers et al., 1993)
A team works best when everyone holds the same picture of the task, the goal and who does what.
- State in plain words what you take the current goal and constraints to be.
- Make your assumptions about how the work is split and ordered visible to the others.
- Speak up as soon as you suspect a partner sees the task differently from you.
- Agree on what the team is trying to achieve before settling how to achieve it.

3. Transactive memory (Wegner, 1987)
Nobody has to know everything; the team has to know who knows what.
- Be open about what you know and can do, and about what you do not know.
- Find out what your partners know or can do that you cannot, and make use of it.
- Divide knowledge and work so that no two people duplicate effort.
- When you are unsure, ask the person who knows rather than guessing.

4. Gricean maxims (Grice, 1975)
Talk as a cooperative partner, not only as someone carrying out a task.
- Quantity: give your partners as much information as they need, and no more.
- Quality: say only what you have grounds to believe, and mark what you are unsure of.
- Relation: keep every message relevant to the goal you share at this moment.
- Manner: be clear, brief and orderly; avoid vague or ambiguous wording, above all when details matter.
- When a partner's message is incomplete or ambiguous, read it in the most sensible way and check with them before acting on it."""


def persona_prompt(persona: Persona, theory: bool = False) -> str:
    """The persona paragraph, an instruction to act as that person, and (if `theory`) `COLLABORATION_THEORY`.

    `theory=False` gives CollabSim's persona-based agent, `theory=True` its theory-informed agent.
    """
    if not isinstance(persona, Persona):
        raise TypeError(f"persona_prompt needs a Persona, got {type(persona).__name__}")
    text = f"{persona.render()}\nThink, speak and decide as this person would throughout the task."
    return f"{text}\n\n{COLLABORATION_THEORY}" if theory else text


__all__ = [
    "BIG_FIVE", "COLLABORATION_THEORY", "LEVELS", "Occupation", "Persona", "PersonaData", "PersonaDataError",
    "allowed_educations", "allowed_incomes", "allowed_occupations", "load_persona_data", "parse_persona_data",
    "persona_prompt", "sample_persona", "sample_personas",
]
