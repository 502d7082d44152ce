"""Benchmark suites as data: which envs, conditions, policies and seeds a `teamenvs bench` run covers.

A suite is a JSON or YAML mapping:

    name: my_study
    description: what it compares
    seeds: 5                        # per cell: a count (seeds 0..n-1) or a list of seeds
    groups:                         # one table in the report each
      - title: DayTrader, CollabSim Table 3 conditions
        env: day_trader_v0
        conditions:                 # a preset name, or {name, preset, set: {config key: value}}
          - baseline
          - {name: six traders, set: {n_agents: 6}}
        policies: [scripted, random, cooperator, llm]   # or {label, policy, personas, theory, probes_every, interview}
        seeds: [0, 1, 2]            # optional, overrides the suite's
        max_steps: 500              # optional cap on env steps per episode

`every_env: {policies: [scripted, random]}` adds, before the listed groups, one group per
registered paradigm (in catalogue order) with its title and the smoke conditions its declaration
names: the built-in `smoke` suite is just that, so a new paradigm is in it with no edit here.
`base: paper` starts from a built-in suite; `add_policies` then appends policies to every
group. A top-level `max_steps` caps the groups that set none. Built-in suites live beside this module in `suites/` (`smoke`, `paper`, `llm`).
Everything is checked before anything runs; an error names the file and the field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from teamenvs.core.config import ConfigError

SUITES_DIR = Path(__file__).resolve().parent / "suites"
BUILTIN = ("smoke", "paper", "llm")
SUITE_KEYS = {"name", "description", "seeds", "groups", "base", "add_policies", "max_steps", "every_env"}
EVERY_ENV_KEYS = {"policies"}
GROUP_KEYS = {"title", "env", "conditions", "policies", "seeds", "max_steps"}
CONDITION_KEYS = {"name", "preset", "set"}
POLICY_KEYS = {"label", "policy", "personas", "theory", "probes_every", "interview"}


class SuiteError(ConfigError):
    """A suite that cannot run, with the file and the field at fault."""


@dataclass(frozen=True)
class Condition:
    """An experimental condition: a preset and/or config overrides, under a short name."""

    name: str
    preset: str | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "preset": self.preset, "set": dict(self.overrides)}


@dataclass(frozen=True)
class PolicySpec:
    """Who plays: a scripted kind for `agents.make_policies` (`scripted`, `random`, a baseline or a
    comma list), or `llm` (the bench run's `--model`), optionally with CollabSim personas, the
    theory block, probes every k steps and the post-episode interview."""

    label: str
    policy: str
    personas: bool = False
    theory: bool = False
    probes_every: int | None = None
    interview: bool = False

    @property
    def is_llm(self) -> bool:
        return self.policy == "llm"

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "policy": self.policy, "personas": self.personas, "theory": self.theory,
                "probes_every": self.probes_every, "interview": self.interview}


@dataclass(frozen=True)
class Group:
    """One block of the grid: an env, its conditions, the policies compared and the seeds."""

    title: str
    env: str
    conditions: tuple[Condition, ...]
    policies: tuple[PolicySpec, ...]
    seeds: tuple[int, ...]
    max_steps: int | None = None


@dataclass(frozen=True)
class Episode:
    """One cell x seed of a suite: everything needed to run it and to name its log."""

    suite: str
    group: Group
    condition: Condition
    policy: PolicySpec
    seed: int
    index: tuple[int, int, int] = (0, 0, 0)  # group, condition, policy: the order reports keep
    description: str = ""

    @property
    def key(self) -> str:
        """The log's file stem, unique within the suite."""
        return f"{slug(self.group.title)}__{slug(self.condition.name)}__{slug(self.policy.label)}__seed{self.seed}"

    def run_meta(self, model: str | None = None) -> dict[str, Any]:
        """What the log header records about this episode (`"run"`), so a report needs the logs alone.

        For an `llm` policy it holds the model too, so a run with another model does not count
        this episode as done.
        """
        meta = {
            "suite": self.suite, "group": self.group.title, "env": self.group.env, "condition": self.condition.to_json(),
            "policy": self.policy.to_json(), "seed": self.seed, "max_steps": self.group.max_steps,
            "index": list(self.index), "description": self.description,
        }
        if self.policy.is_llm:
            meta["model"] = model
        return meta

    def make_env(self) -> Any:
        from teamenvs import make

        return make(self.group.env, preset=self.condition.preset, **self.condition.overrides)


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    groups: tuple[Group, ...]
    source: str

    def episodes(self) -> list[Episode]:
        return [
            Episode(self.name, g, c, p, s, (gi, ci, pi), self.description)
            for gi, g in enumerate(self.groups)
            for ci, c in enumerate(g.conditions)
            for pi, p in enumerate(g.policies)
            for s in g.seeds
        ]

    @property
    def needs_model(self) -> bool:
        return any(p.is_llm for g in self.groups for p in g.policies)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "description": self.description, "source": self.source,
            "groups": [
                {"title": g.title, "env": g.env, "conditions": [c.to_json() for c in g.conditions],
                 "policies": [p.to_json() for p in g.policies], "seeds": list(g.seeds), "max_steps": g.max_steps}
                for g in self.groups
            ],
        }


def slug(text: str) -> str:
    """A file-name-safe form of a label."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", text).strip("_") or "x"


# ---------------------------------------------------------------------- reading and checking
def _read(path: Path) -> Any:
    if not path.is_file():
        raise SuiteError(f"suite file {str(path)!r} not found (built-in suites: {', '.join(BUILTIN)})")
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError as exc:
            raise SuiteError("YAML suites need PyYAML: pip install pyyaml (or write the suite as JSON)") from exc
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise SuiteError(f"suite file {str(path)!r} is not valid YAML: {exc}") from exc
    try:
        return json.loads(text)
    except ValueError as exc:
        raise SuiteError(f"suite file {str(path)!r} is not valid JSON: {exc}") from exc


def _mapping(raw: Any, where: str, keys: set[str], required: Sequence[str] = ()) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise SuiteError(f"{where}: expected a mapping, got {type(raw).__name__}")
    unknown = sorted(set(map(str, raw)) - keys)
    if unknown:
        raise SuiteError(f"{where}: unknown field {unknown[0]!r} (fields: {', '.join(sorted(keys))})")
    for key in required:
        if key not in raw:
            raise SuiteError(f"{where}: missing field {key!r}")
    return raw


def _text(raw: Any, where: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise SuiteError(f"{where}: expected a non-empty string, got {raw!r}")
    return raw.strip()


def _list(raw: Any, where: str) -> list[Any]:
    if not isinstance(raw, list) or not raw:
        raise SuiteError(f"{where}: expected a non-empty list, got {raw!r}")
    return raw


def _seeds(raw: Any, where: str) -> tuple[int, ...]:
    if isinstance(raw, bool):
        raise SuiteError(f"{where}: expected a number of seeds or a list of seeds, got {raw!r}")
    if isinstance(raw, int):
        if raw < 1:
            raise SuiteError(f"{where}: the number of seeds must be at least 1, got {raw}")
        return tuple(range(raw))
    seeds = _list(raw, where)
    for i, s in enumerate(seeds):
        if isinstance(s, bool) or not isinstance(s, int) or s < 0:
            raise SuiteError(f"{where}[{i}]: a seed must be a non-negative integer, got {s!r}")
    if len(set(seeds)) != len(seeds):
        raise SuiteError(f"{where}: seeds repeat: {seeds}")
    return tuple(seeds)


def _condition(raw: Any, where: str) -> Condition:
    if isinstance(raw, str):
        return Condition(_text(raw, where), preset=raw.strip())
    raw = _mapping(raw, where, CONDITION_KEYS)
    preset = _text(raw["preset"], f"{where}.preset") if raw.get("preset") is not None else None
    overrides = raw.get("set", {})
    if not isinstance(overrides, Mapping):
        raise SuiteError(f"{where}.set: expected a mapping of config keys to values, got {overrides!r}")
    name = raw.get("name") or preset or ",".join(f"{k}={v}" for k, v in overrides.items()) or "default"
    return Condition(_text(name, f"{where}.name"), preset, dict(overrides))


def _bool(raw: Any, where: str) -> bool:
    if not isinstance(raw, bool):
        raise SuiteError(f"{where}: expected true or false, got {raw!r}")
    return raw


def _policy(raw: Any, where: str) -> PolicySpec:
    if isinstance(raw, str):
        text = _text(raw, where)
        return PolicySpec(text, text)
    raw = _mapping(raw, where, POLICY_KEYS, required=("policy",))
    policy = _text(raw["policy"], f"{where}.policy")
    options = {k: _bool(raw[k], f"{where}.{k}") for k in ("personas", "theory", "interview") if k in raw}
    probes = raw.get("probes_every")
    if probes is not None and (isinstance(probes, bool) or not isinstance(probes, int) or probes < 1):
        raise SuiteError(f"{where}.probes_every: expected a whole number >= 1, got {probes!r}")
    if policy != "llm" and (any(options.values()) or probes is not None):
        raise SuiteError(f"{where}: personas, theory, probes_every and interview go with policy 'llm', not {policy!r}")
    label = _text(raw.get("label", policy), f"{where}.label")
    return PolicySpec(label, policy, probes_every=probes, **options)


def _check_group(group: Group, where: str) -> None:
    """Build each condition's env and each scripted policy once, so that a bad name fails before any episode runs."""
    from agents.scripted import make_policies
    from teamenvs.registry import list_envs

    if group.env not in list_envs():
        import difflib

        close = difflib.get_close_matches(group.env, list_envs(), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise SuiteError(f"{where}.env: unknown environment {group.env!r}.{hint} Environments: {', '.join(list_envs())}")
    for i, condition in enumerate(group.conditions):
        episode = Episode("", group, condition, group.policies[0], group.seeds[0])
        try:
            env = episode.make_env()
        except (ConfigError, ValueError, TypeError, KeyError) as exc:
            raise SuiteError(f"{where}.conditions[{i}] ({condition.name}): {exc}") from exc
        for j, policy in enumerate(group.policies):
            if policy.is_llm:
                continue
            try:
                make_policies(env, policy.policy, seed=0)
            except (ValueError, TypeError) as exc:
                raise SuiteError(f"{where}.policies[{j}]: {exc}") from exc
    for kind, names in (("condition", [c.name for c in group.conditions]), ("policy label", [p.label for p in group.policies])):
        slugs = [slug(n) for n in names]
        if len(set(slugs)) != len(slugs):
            raise SuiteError(f"{where}: two {kind}s share the name {next(n for n in names if slugs.count(slug(n)) > 1)!r}")


def _max_steps(raw: Any, where: str) -> int | None:
    if raw is not None and (isinstance(raw, bool) or not isinstance(raw, int) or raw < 1):
        raise SuiteError(f"{where}: expected a whole number >= 1, got {raw!r}")
    return raw


def _group(raw: Any, where: str, default_seeds: tuple[int, ...] | None, add_policies: list[PolicySpec],
           default_max_steps: int | None = None) -> Group:
    raw = _mapping(raw, where, GROUP_KEYS, required=("env", "conditions", "policies"))
    env = _text(raw["env"], f"{where}.env")
    conditions = tuple(_condition(c, f"{where}.conditions[{i}]") for i, c in enumerate(_list(raw["conditions"], f"{where}.conditions")))
    policies = tuple(_policy(p, f"{where}.policies[{i}]") for i, p in enumerate(_list(raw["policies"], f"{where}.policies")))
    policies += tuple(p for p in add_policies if p.label not in {q.label for q in policies})
    if "seeds" in raw:
        seeds = _seeds(raw["seeds"], f"{where}.seeds")
    elif default_seeds is not None:
        seeds = default_seeds
    else:
        raise SuiteError(f"{where}: no seeds (give 'seeds' in the group or at the top of the suite)")
    max_steps = _max_steps(raw["max_steps"], f"{where}.max_steps") if "max_steps" in raw else default_max_steps
    title = _text(raw.get("title", env), f"{where}.title")
    group = Group(title, env, conditions, policies, seeds, max_steps)
    _check_group(group, where)
    return group


def parse_suite(raw: Any, source: str, seeds: int | None = None, _depth: int = 0) -> Suite:
    """A checked `Suite` from parsed JSON/YAML; `seeds` (a count) overrides every group's seeds."""
    where = f"suite {source!r}"
    raw = _mapping(raw, where, SUITE_KEYS)
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1):
        raise SuiteError(f"--seeds must be a whole number >= 1, got {seeds!r}")
    override = tuple(range(seeds)) if seeds is not None else None
    add = [_policy(p, f"{where}.add_policies[{i}]") for i, p in enumerate(raw.get("add_policies") or [])]
    if "base" in raw:
        if _depth > 3:
            raise SuiteError(f"{where}.base: suites extend each other too deeply (a cycle?)")
        base_name = _text(raw["base"], f"{where}.base")
        base_path = Path(base_name)
        if not base_path.is_absolute() and Path(source).suffix in (".json", ".yaml", ".yml"):
            base_path = Path(source).parent / base_path  # relative to the suite file that names it
        base_raw = _read(_builtin_path(base_name) if base_name in BUILTIN else base_path)
        base = _mapping(base_raw, f"suite {base_name!r}", SUITE_KEYS)
        merged = {**base, **{k: v for k, v in raw.items() if k not in ("base", "add_policies")}}
        merged["add_policies"] = list(base.get("add_policies") or []) + list(raw.get("add_policies") or [])
        return parse_suite(merged, source, seeds, _depth + 1)
    name = _text(raw.get("name", Path(source).stem), f"{where}.name")
    default = override or (_seeds(raw["seeds"], f"{where}.seeds") if "seeds" in raw else None)
    if "every_env" in raw:
        groups_raw = _every_env_groups(raw["every_env"], f"{where}.every_env")
        groups_raw += _list(raw["groups"], f"{where}.groups") if "groups" in raw else []
    else:
        groups_raw = _list(raw.get("groups"), f"{where}.groups")
    cap = _max_steps(raw.get("max_steps"), f"{where}.max_steps")
    groups = []
    for i, g in enumerate(groups_raw):
        group = _group(g, f"{where}.groups[{i}]", default, add, cap)
        if override is not None:
            group = Group(group.title, group.env, group.conditions, group.policies, override, group.max_steps)
        groups.append(group)
    titles = [slug(g.title) for g in groups]
    if len(set(titles)) != len(titles):
        raise SuiteError(f"{where}.groups: two groups share the title {groups[[titles.count(t) > 1 for t in titles].index(True)].title!r}")
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise SuiteError(f"{where}.description: expected a string, got {description!r}")
    return Suite(name, description.strip(), tuple(groups), source)


def _every_env_groups(raw: Any, where: str) -> list[dict[str, Any]]:
    """One group per registered paradigm: its title, env and smoke conditions, with the given policies."""
    from teamenvs.registry import paradigms

    spec = _mapping(raw, where, EVERY_ENV_KEYS, required=("policies",))
    return [{"title": p.title, "env": p.env_id, "conditions": list(p.smoke_conditions), "policies": spec["policies"]}
            for p in paradigms()]


def _builtin_path(name: str) -> Path:
    return SUITES_DIR / f"{name}.json"


def load_suite(name_or_path: str | Path, seeds: int | None = None) -> Suite:
    """A built-in suite by name (`smoke`, `paper`, `llm`) or a suite file (.json, .yaml, .yml)."""
    text = str(name_or_path)
    if text in BUILTIN:
        path = _builtin_path(text)
    else:
        path = Path(text)
        if path.suffix not in (".json", ".yaml", ".yml"):
            raise SuiteError(f"unknown suite {text!r}: give a built-in suite ({', '.join(BUILTIN)}) or a .json/.yaml file")
    return parse_suite(_read(path), text, seeds)
