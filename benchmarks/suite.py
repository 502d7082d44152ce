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
        policies: [scripted, random, cooperator, llm]   # or {label, policy, personas, theory, probes_every, interview,
                                                        #     constrain, memory}: memory true or {MemoryStream options}
        seeds: [0, 1, 2]            # optional, overrides the suite's
        max_steps: 500              # optional cap on env steps per episode

`every_env: {policies: [scripted, random]}` adds, before the listed groups, one group per
registered paradigm (in catalogue order) with its title and the smoke conditions its declaration
names: the built-in `smoke` suite is just that, so a new paradigm is in it with no edit here.
`base: paper` starts from a built-in suite; `add_policies` then appends policies to every
group. A top-level `max_steps` caps the groups that set none. Built-in suites live beside this module in `suites/` (`smoke`, `paper`, `llm`).
Everything is checked before anything runs; an error names the file and the field.

Suite files are outside input, so reading one is bounded: at most `MAX_SUITE_BYTES`, nested at
most `MAX_DEPTH` deep, at most `MAX_EXPANDED` values and characters once YAML aliases are expanded
(an alias bomb is refused before it is built), and at most `MAX_EPISODES` episodes, `--seeds` included. Errors
quote short excerpts of the values at fault, never a whole value.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from teamenvs.core.config import ConfigError
from teamenvs.core.constrain import CONSTRAIN_MODES
from teamenvs.core.text import clean_text, close_match, excerpt, printable

SUITES_DIR = Path(__file__).resolve().parent / "suites"
BUILTIN = ("smoke", "paper", "llm", "llm-smoke")
OFFLINE_BY_DEFAULT = ("llm-smoke",)  # built-in suites whose llm policy, with no model given, is the built-in server's
SUITE_KEYS = {"name", "description", "seeds", "groups", "base", "add_policies", "max_steps", "every_env"}
EVERY_ENV_KEYS = {"policies"}
GROUP_KEYS = {"title", "env", "conditions", "policies", "seeds", "max_steps"}
CONDITION_KEYS = {"name", "preset", "set"}
POLICY_KEYS = {"label", "policy", "personas", "theory", "probes_every", "interview", "constrain", "memory"}
MAX_SUITE_BYTES = 128 * 1024  # a suite file is hand-written: the paper suite is 2 KB
MAX_DEPTH = 50  # nesting of mappings and lists
MAX_EXPANDED = 1_000_000  # values plus characters of text, a value repeated by YAML aliases counted at each use
MAX_NUMBER_CHARS = 100  # a YAML number longer than this is refused before it is converted
MAX_EPISODES = 100_000  # per suite: cells x seeds
MAX_SEED = 2**63 - 1
MAX_LABEL_CHARS = 200  # a group title, condition name or policy label
MAX_SLUG_CHARS = 72  # of a label's file-name form: three of them and a seed fit a 255-byte file name


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
    theory block, probes every k steps, the post-episode interview, constrained decoding and a
    memory stream per agent (`memory`: its `MemoryConfig` options, {} for the defaults; None: none)."""

    label: str
    policy: str
    personas: bool = False
    theory: bool = False
    probes_every: int | None = None
    interview: bool = False
    constrain: str = "off"  # constrained decoding of the llm policy's replies (agents.llm.policy)
    memory: Mapping[str, Any] | None = None

    @property
    def is_llm(self) -> bool:
        return self.policy == "llm"

    def to_json(self) -> dict[str, Any]:
        out = {"label": self.label, "policy": self.policy, "personas": self.personas, "theory": self.theory,
               "probes_every": self.probes_every, "interview": self.interview}
        if self.constrain != "off":  # only when set, so the run headers of existing logs stay as they were
            out["constrain"] = self.constrain
        if self.memory is not None:  # likewise
            out["memory"] = dict(self.memory)
        return out


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
        return log_stem(self.group.title, self.condition.name, self.policy.label, self.seed)

    def run_meta(self, model: str | None = None, settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """What the log header records about this episode (`"run"`), so a report needs the logs alone.

        For an `llm` policy it holds the model and the run's other `settings` that change its
        results too (`benchmarks.bench.recorded_settings`), so a run under others does not count
        this episode as done.
        """
        meta = {
            "suite": self.suite, "group": self.group.title, "env": self.group.env, "condition": self.condition.to_json(),
            "policy": self.policy.to_json(), "seed": self.seed, "max_steps": self.group.max_steps,
            "index": list(self.index), "description": self.description,
        }
        if self.env_max_steps is not None:  # only then, so that the run headers of other logs stay as they were
            meta["env_max_steps"] = self.env_max_steps
        if self.policy.is_llm:
            meta["model"] = model
            if settings is not None:
                meta["settings"] = dict(settings)
        return meta

    @functools.cached_property
    def env_max_steps(self) -> int | None:
        """The group's step cap where the env has a `max_steps` setting above it (the map task, search and rescue, the
        shape factory): the env is then made with that many steps, so that it ends the episode itself, as its
        observations say, and pays what it pays at its end (the map task's score), where the step loop's cut would
        leave it unpaid. None where the condition sets `max_steps` itself, or the env has no such setting."""
        cap = self.group.max_steps
        if cap is None or "max_steps" in self.condition.overrides:
            return None
        from teamenvs.core.config import build_config
        from teamenvs.registry import spec

        env_class = spec(self.group.env).load_env_class()
        steps = getattr(build_config(env_class.config_class, env_class.presets, self.condition.preset, self.condition.overrides),
                        "max_steps", None)
        return cap if isinstance(steps, int) and steps > cap else None

    def make_env(self) -> Any:
        from teamenvs import make

        steps = {"max_steps": self.env_max_steps} if self.env_max_steps is not None else {}
        return make(self.group.env, preset=self.condition.preset, **self.condition.overrides, **steps)


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
    """A file-name-safe form of a label, at most MAX_SLUG_CHARS long: a longer one is cut and ends
    in a hash of the whole label, so labels that differ keep different names."""
    name = re.sub(r"[^A-Za-z0-9.+-]+", "_", text).strip("_") or "x"
    if len(name) <= MAX_SLUG_CHARS:
        return name
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{name[: MAX_SLUG_CHARS - 9]}-{digest}"


def log_stem(group: str, condition: str, policy: str, seed: int) -> str:
    """The file stem of an episode's log: its group title, condition name, policy label and seed."""
    return f"{slug(group)}__{slug(condition)}__{slug(policy)}__seed{seed}"


# ---------------------------------------------------------------------- reading and checking
YAML_BREAKS = re.compile("[\n\r\x85\u2028\u2029]")
BRACKETS = re.compile(r"[][{}]")


def file_name(path: str | Path) -> str:
    """A file name for an error message: quoted, control characters escaped, a very long one cut in the middle."""
    text = printable(str(path), keep_newlines=False)
    if len(text) > 160:
        text = f"{text[:60]}...{text[-97:]}"
    return f"'{text}'"


def _clip(text: Any, limit: int = 300) -> str:
    """`text` on one line, control characters escaped, cut to `limit` characters (for messages that quote outside input)."""
    text = printable(" ".join(str(text).split()), keep_newlines=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _read(path: Path) -> Any:
    """The parsed content of a suite file, every way it can fail (size, encoding, syntax, shape) a SuiteError naming it."""
    name = file_name(path)
    try:
        found = path.is_file()
        size = path.stat().st_size if found else 0
        if found and size <= MAX_SUITE_BYTES:
            with path.open("rb") as f:
                data = f.read(MAX_SUITE_BYTES + 1)
    except (OSError, ValueError) as exc:  # a name too long or with a NUL byte, a file we may not read
        raise SuiteError(f"suite file {name} cannot be read: {_clip(getattr(exc, 'strerror', None) or exc)}") from None
    if not found:
        if path.exists():  # a folder, a device, a pipe
            raise SuiteError(f"suite file {name} is not a regular file: give a .json or .yaml file")
        raise SuiteError(f"suite file {name} not found (built-in suites: {', '.join(BUILTIN)})")
    if size > MAX_SUITE_BYTES or len(data) > MAX_SUITE_BYTES:  # the second: a file that grew as we read it
        raise SuiteError(f"suite file {name} is larger than {MAX_SUITE_BYTES:,} bytes, the most a suite file may hold")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SuiteError(f"suite file {name} is not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8") from None
    if path.suffix in (".yaml", ".yml"):
        return _load_yaml(text, name)
    return _load_json(text, name)


def _too_deep(name: str) -> str:
    return f"suite file {name} is nested too deeply (at most {MAX_DEPTH} levels of mappings and lists)"


class _DuplicateKey(Exception):
    """A mapping of a suite file gives one key twice (JSON and YAML parsers keep the last without a word)."""

    def __init__(self, key: Any) -> None:
        super().__init__(key)
        self.key = key


def _duplicate_error(name: str, key: Any) -> SuiteError:
    return SuiteError(f"suite file {name} gives the key {_clip(repr(key), 60)} twice in one mapping: a parser would keep "
                      "the last and drop the first without a word; keep one")


def _check_unique(keys: Sequence[Any]) -> None:
    """`_DuplicateKey` for the first key of a mapping given twice."""
    if len(set(keys)) < len(keys):
        seen: set[Any] = set()
        raise _DuplicateKey(next(k for k in keys if k in seen or seen.add(k)))


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`json.loads`'s `object_pairs_hook`: the object, or `_DuplicateKey`."""
    _check_unique([k for k, _ in pairs])
    return dict(pairs)


def _load_json(text: str, name: str) -> Any:
    try:
        data = json.loads(text, object_pairs_hook=_unique_pairs)
    except _DuplicateKey as exc:
        raise _duplicate_error(name, exc.key) from None
    except RecursionError:
        raise SuiteError(_too_deep(name)) from None
    except ValueError as exc:
        raise SuiteError(f"suite file {name} is not valid JSON: {_clip(exc)}") from exc
    _check_shape(data, _value_parts, name)
    return data


def _load_yaml(text: str, name: str) -> Any:
    try:
        import yaml
    except ImportError as exc:
        raise SuiteError("YAML suites need PyYAML: pip install pyyaml (or write the suite as JSON)") from exc
    # libyaml's composer recurses in C with no depth limit (it crashes the process), and its parser
    # slows with the square of the depth of flow collections: bound the depth before either runs,
    # generously (the bound overestimates), then check it exactly on the composed document
    if _yaml_depth_bound(text) > 20 * MAX_DEPTH:
        raise SuiteError(_too_deep(name))
    loader = _yaml_loader()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_shape(node, _node_parts, name)
        return loader.construct_document(node)
    except _DuplicateKey as exc:
        raise _duplicate_error(name, exc.key) from None
    except yaml.YAMLError as exc:
        raise SuiteError(f"suite file {name} is not valid YAML: {_clip(exc, 500)}") from exc
    except RecursionError:
        raise SuiteError(_too_deep(name)) from None
    except (ValueError, TypeError, OverflowError) as exc:  # a value the constructors reject, e.g. a date 2024-13-45
        if isinstance(exc, SuiteError):
            raise
        raise SuiteError(f"suite file {name} is not valid YAML: {_clip(exc)}") from exc
    finally:
        loader.dispose()


def _yaml_depth_bound(text: str) -> int:
    """An upper bound of a YAML document's nesting depth, from one pass over its text.

    Flow collections: the deepest run of open brackets (quoted ones counted too). Block
    collections: a level nested inside another either starts on the same line after a `-`, `?`
    or `:` indicator, or is indented further, so a line's depth is at most twice its
    indentation plus its leading indicators and a mapping.
    """
    flow = deepest_flow = 0
    for bracket in BRACKETS.findall(text):
        if bracket in "[{":
            flow += 1
            deepest_flow = max(deepest_flow, flow)
        elif flow:
            flow -= 1
    deepest_block = 0
    for line in YAML_BREAKS.split(text):
        words = line.split()
        lead = next((i for i, w in enumerate(words) if w not in ("-", "?", ":")), len(words))
        deepest_block = max(deepest_block, 2 * (len(line) - len(line.lstrip())) + lead + 2)
    return deepest_flow + deepest_block


@lru_cache(maxsize=1)
def _yaml_loader() -> type:
    """PyYAML's safe loader (libyaml's when installed) refusing numbers too long to convert quickly
    (`1:1:1:...` as a base-60 integer takes time quadratic in its length)."""
    import yaml

    class SuiteLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        pass

    def bounded(construct: Any) -> Any:
        def construct_number(loader: Any, node: Any) -> Any:
            if len(node.value) > MAX_NUMBER_CHARS:
                raise yaml.constructor.ConstructorError(
                    None, None, f"a number of {len(node.value):,} characters (at most {MAX_NUMBER_CHARS})", node.start_mark)
            return construct(loader, node)
        return construct_number

    for tag in ("int", "float"):
        construct = getattr(yaml.constructor.SafeConstructor, f"construct_yaml_{tag}")
        SuiteLoader.add_constructor(f"tag:yaml.org,2002:{tag}", bounded(construct))
    return SuiteLoader


def _node_parts(node: Any) -> tuple[Sequence[Any], int]:
    """(children, own size) of a YAML node: a scalar's size is its length."""
    value = node.value
    if isinstance(value, str):
        return (), 1 + len(value)
    if node.id == "mapping":
        _check_unique([k.value for k, _ in value if k.id == "scalar" and k.value != "<<"])  # ("<<": YAML's merge key)
        return [part for pair in value for part in pair], 1
    return value, 1


def _value_parts(value: Any) -> tuple[Sequence[Any], int]:
    """(children, own size) of a parsed JSON value, sized as `_node_parts` sizes YAML nodes."""
    if isinstance(value, dict):
        return [*value, *value.values()], 1
    if isinstance(value, list):
        return value, 1
    return (), 1 + (len(value) if isinstance(value, str) else 0)


def _check_shape(root: Any, parts: Any, name: str) -> None:
    """Refuse a document nested deeper than MAX_DEPTH, larger than MAX_EXPANDED values and characters
    (a value reached through several YAML aliases counted at each), or containing itself through an alias.

    One pass over the distinct values (an alias bomb is small before expansion), without recursion.
    """
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    open_ids: set[int] = set()
    stack: list[tuple[Any, int, Sequence[Any] | None, int]] = [(root, 1, None, 0)]
    while stack:
        node, depth, kids, own = stack.pop()
        key = id(node)
        if kids is not None:  # the second visit: every child is measured
            open_ids.discard(key)
            size[key] = own + sum(size[id(k)] for k in kids)
            height[key] = 1 + max(height[id(k)] for k in kids)
        elif key in size:
            if depth + height[key] - 1 > MAX_DEPTH:
                raise SuiteError(_too_deep(name))
            continue
        elif key in open_ids:
            raise SuiteError(f"suite file {name}: a YAML alias refers to a value that contains it")
        elif depth > MAX_DEPTH:
            raise SuiteError(_too_deep(name))
        else:
            kids, own = parts(node)
            if kids:
                open_ids.add(key)
                stack.append((node, depth, kids, own))
                stack.extend((kid, depth + 1, None, 0) for kid in kids)
                continue
            size[key], height[key] = own, 1
        if size[key] > MAX_EXPANDED:
            raise SuiteError(f"suite file {name} expands to more than {MAX_EXPANDED:,} values and characters "
                             "(a value is counted again at each YAML alias that repeats it)")


def _mapping(raw: Any, where: str, keys: set[str], required: Sequence[str] = ()) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise SuiteError(f"{where}: expected a mapping, got {type(raw).__name__}")
    unknown = sorted(set(map(str, raw)) - keys)
    if unknown:
        raise SuiteError(f"{where}: unknown field {excerpt(unknown[0])} (fields: {', '.join(sorted(keys))})")
    for key in required:
        if key not in raw:
            raise SuiteError(f"{where}: missing field {excerpt(key)}")
    return raw


def _text(raw: Any, where: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise SuiteError(f"{where}: expected a non-empty string, got {excerpt(raw)}")
    return raw.strip()


def _label(raw: Any, where: str, hint: str = "give a shorter one") -> str:
    """A group title, condition name or policy label: a non-empty string of at most MAX_LABEL_CHARS characters."""
    text = _text(raw, where)
    if len(text) > MAX_LABEL_CHARS:
        raise SuiteError(f"{where}: {excerpt(text)} is {len(text):,} characters long, more than the {MAX_LABEL_CHARS} "
                         f"a title, condition name or policy label may have; {hint}")
    return text


def _list(raw: Any, where: str) -> list[Any]:
    if not isinstance(raw, list) or not raw:
        raise SuiteError(f"{where}: expected a non-empty list, got {excerpt(raw)}")
    return raw


def _seeds(raw: Any, where: str) -> tuple[int, ...]:
    if isinstance(raw, bool):
        raise SuiteError(f"{where}: expected a number of seeds or a list of seeds, got {excerpt(raw)}")
    if isinstance(raw, int):
        if raw < 1:
            raise SuiteError(f"{where}: the number of seeds must be at least 1, got {excerpt(raw)}")
        if raw > MAX_EPISODES:
            raise SuiteError(f"{where}: too many seeds ({excerpt(raw)}); a suite may hold at most {MAX_EPISODES:,} episodes")
        return tuple(range(raw))
    if not isinstance(raw, list) or not raw:  # (a float such as 2.0 or .inf included: seeds are counted, not measured)
        raise SuiteError(f"{where}: expected a number of seeds or a non-empty list of seeds, got {excerpt(raw)}")
    seeds = raw
    if len(seeds) > MAX_EPISODES:
        raise SuiteError(f"{where}: too many seeds ({len(seeds):,}); a suite may hold at most {MAX_EPISODES:,} episodes")
    seen: set[int] = set()
    for i, s in enumerate(seeds):
        if isinstance(s, bool) or not isinstance(s, int) or s < 0:
            raise SuiteError(f"{where}[{i}]: a seed must be a non-negative integer, got {excerpt(s)}")
        if s > MAX_SEED:
            raise SuiteError(f"{where}[{i}]: a seed must be at most 2**63 - 1, got {excerpt(s)}")
        if s in seen:
            raise SuiteError(f"{where}: seeds repeat: {s} is listed twice")
        seen.add(s)
    return tuple(seeds)


def _condition(raw: Any, where: str) -> Condition:
    if isinstance(raw, str):
        return Condition(_label(raw, where), preset=raw.strip())
    raw = _mapping(raw, where, CONDITION_KEYS)
    preset = _text(raw["preset"], f"{where}.preset") if raw.get("preset") is not None else None
    overrides = raw.get("set", {})
    if not isinstance(overrides, Mapping):
        raise SuiteError(f"{where}.set: expected a mapping of config keys to values, got {excerpt(overrides)}")
    name = raw.get("name") or preset or ",".join(f"{k}={v}" for k, v in overrides.items()) or "default"
    return Condition(_label(name, f"{where}.name", "give the condition a shorter name"), preset, dict(overrides))


def _bool(raw: Any, where: str) -> bool:
    if not isinstance(raw, bool):
        raise SuiteError(f"{where}: expected true or false, got {excerpt(raw)}")
    return raw


def _policy(raw: Any, where: str) -> PolicySpec:
    if isinstance(raw, str):
        text = _label(raw, where, "give it a shorter label: {label: ..., policy: ...}")
        return PolicySpec(text, text)
    raw = _mapping(raw, where, POLICY_KEYS, required=("policy",))
    policy = _text(raw["policy"], f"{where}.policy")
    options = {k: _bool(raw[k], f"{where}.{k}") for k in ("personas", "theory", "interview") if k in raw}
    probes = raw.get("probes_every")
    if probes is not None and (isinstance(probes, bool) or not isinstance(probes, int) or probes < 1):
        raise SuiteError(f"{where}.probes_every: expected a whole number >= 1, got {excerpt(probes)}")
    constrain = raw.get("constrain", "off")
    if constrain not in CONSTRAIN_MODES:
        raise SuiteError(f"{where}.constrain: expected one of {', '.join(CONSTRAIN_MODES)}, got {excerpt(constrain)}")
    memory = _memory(raw.get("memory"), f"{where}.memory")
    if policy != "llm" and (any(options.values()) or probes is not None or constrain != "off" or memory is not None):
        raise SuiteError(f"{where}: personas, theory, probes_every, interview, constrain and memory go with policy 'llm', not {excerpt(policy)}")
    label = _label(raw.get("label", policy), f"{where}.label")
    return PolicySpec(label, policy, probes_every=probes, constrain=constrain, memory=memory, **options)


def _memory(raw: Any, where: str) -> dict[str, Any] | None:
    """A policy's `memory`: true ({}: the defaults), false or absent (None), or a mapping of
    `MemoryConfig` options, checked now."""
    if raw is None or raw is False:
        return None
    if raw is True:
        return {}
    if not isinstance(raw, Mapping):
        raise SuiteError(f"{where}: expected true, false or a mapping of memory options, got {excerpt(raw)}")
    from agents.memory import MemoryConfig

    known = [f.name for f in dataclasses.fields(MemoryConfig)]
    unknown = [k for k in raw if k not in known]
    if unknown:
        raise SuiteError(f"{where}: unknown option(s) {excerpt(unknown)}; the options are {', '.join(known)}")
    try:
        MemoryConfig(**raw)
    except (ValueError, OverflowError) as exc:
        raise SuiteError(f"{where}: {clean_text(str(exc), 200)}") from None
    return dict(raw)


def _first_repeat(names: Sequence[str]) -> str | None:
    """The first of `names` whose file-name form another shares (None when all differ)."""
    slugs = [slug(n) for n in names]
    counts = Counter(slugs)
    return next((n for n, s in zip(names, slugs) if counts[s] > 1), None)


def _check_names(group: Group, where: str) -> None:
    for kind, names in (("condition", [c.name for c in group.conditions]), ("policy label", [p.label for p in group.policies])):
        repeated = _first_repeat(names)
        if repeated is not None:
            raise SuiteError(f"{where}: two {kind}s share the name {excerpt(repeated)}")


def _failure(exc: Exception) -> str:
    """A short account of why building an env or a policy failed; the type is named unless it is a plain config error."""
    text = _clip(exc)
    return text if isinstance(exc, (ConfigError, ValueError, KeyError)) else f"{type(exc).__name__}: {text}"


def _check_group(group: Group, where: str, checked: set[Any] | None = None) -> None:
    """Build each condition's env and each scripted policy once, so that a bad name fails before any episode runs.

    `checked` holds the configs (and config-policy pairs) that built before, so that a suite
    repeating a condition over many groups builds it once.
    """
    from agents.scripted import make_policies
    from teamenvs.registry import list_envs

    if group.env not in list_envs():
        close = close_match(group.env, list_envs())
        hint = f" Did you mean {excerpt(close)}?" if close else ""
        raise SuiteError(f"{where}.env: unknown environment {excerpt(group.env)}.{hint} Environments: {', '.join(list_envs())}")
    checked = set() if checked is None else checked
    for i, condition in enumerate(group.conditions):
        config = (group.env, condition.preset, repr(condition.overrides))
        policies = [(j, p) for j, p in enumerate(group.policies) if not p.is_llm and (config, p.policy) not in checked]
        if config in checked and not policies:
            continue
        episode = Episode("", group, condition, group.policies[0], group.seeds[0])
        try:
            env = episode.make_env()
        except Exception as exc:  # any value of the file may reach the env's constructor: report, never crash
            raise SuiteError(f"{where}.conditions[{i}] ({_clip(condition.name, 60)}): {_failure(exc)}") from exc
        checked.add(config)
        for j, policy in policies:
            try:
                make_policies(env, policy.policy, seed=0)
            except Exception as exc:
                raise SuiteError(f"{where}.policies[{j}]: {_failure(exc)}") from exc
            checked.add((config, policy.policy))


def _max_steps(raw: Any, where: str) -> int | None:
    if raw is not None and (isinstance(raw, bool) or not isinstance(raw, int) or raw < 1):
        raise SuiteError(f"{where}: expected a whole number >= 1, got {excerpt(raw)}")
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
    title = _label(raw["title"], f"{where}.title") if "title" in raw else env  # (an env's id: checked with the env)
    group = Group(title, env, conditions, policies, seeds, max_steps)
    _check_names(group, where)
    return group


def parse_suite(raw: Any, source: str, seeds: int | None = None, _depth: int = 0) -> Suite:
    """A checked `Suite` from parsed JSON/YAML; `seeds` (a count) overrides every group's seeds."""
    where = f"suite {file_name(source)}"
    raw = _mapping(raw, where, SUITE_KEYS)
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1):
        raise SuiteError(f"--seeds must be a whole number >= 1, got {excerpt(seeds)}")
    if seeds is not None and seeds > MAX_EPISODES:
        raise SuiteError(f"--seeds {excerpt(seeds)}: too many seeds; a suite may hold at most {MAX_EPISODES:,} episodes")
    override = tuple(range(seeds)) if seeds is not None else None
    add = [_policy(p, f"{where}.add_policies[{i}]") for i, p in enumerate(_optional_list(raw, "add_policies", where))]
    if "base" in raw:
        if _depth > 3:
            raise SuiteError(f"{where}.base: suites extend each other too deeply (a cycle?)")
        base_name = _text(raw["base"], f"{where}.base")
        base_path = Path(base_name)
        if not base_path.is_absolute() and Path(source).suffix in (".json", ".yaml", ".yml"):
            base_path = Path(source).parent / base_path  # relative to the suite file that names it
        base_raw = _read(_builtin_path(base_name) if base_name in BUILTIN else base_path)
        base = _mapping(base_raw, f"suite {file_name(base_name)}", SUITE_KEYS)
        merged = {**base, **{k: v for k, v in raw.items() if k not in ("base", "add_policies")}}
        merged["add_policies"] = [*_optional_list(base, "add_policies", f"suite {file_name(base_name)}"), *_optional_list(raw, "add_policies", where)]
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
    episodes = sum(len(g.conditions) * len(g.policies) * len(g.seeds) for g in groups)
    if episodes > MAX_EPISODES:
        raise SuiteError(f"{where}: {episodes:,} episodes (conditions x policies x seeds over all groups) is more than "
                         f"the {MAX_EPISODES:,} a suite may hold; use fewer seeds (--seeds), conditions or policies")
    repeated = _first_repeat([g.title for g in groups])
    if repeated is not None:
        raise SuiteError(f"{where}.groups: two groups share the title {excerpt(repeated)}")
    # every structural check has passed: only now build envs and policies, the slow part
    checked: set[Any] = set()
    for i, group in enumerate(groups):
        _check_group(group, f"{where}.groups[{i}]", checked)
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise SuiteError(f"{where}.description: expected a string, got {excerpt(description)}")
    return Suite(name, description.strip(), tuple(groups), source)


def _optional_list(raw: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise SuiteError(f"{where}.{key}: expected a list, got {excerpt(value)}")
    return value


def _every_env_groups(raw: Any, where: str) -> list[dict[str, Any]]:
    """One group per registered paradigm: its title, env and smoke conditions, with the given policies."""
    from teamenvs.registry import paradigms

    spec = _mapping(raw, where, EVERY_ENV_KEYS, required=("policies",))
    return [{"title": p.title, "env": p.env_id, "conditions": list(p.smoke_conditions), "policies": spec["policies"]}
            for p in paradigms()]


def _builtin_path(name: str) -> Path:
    return SUITES_DIR / f"{name}.json"


def load_suite(name_or_path: str | Path, seeds: int | None = None) -> Suite:
    """A built-in suite by name (`smoke`, `paper`, `llm`, `llm-smoke`) or a suite file (.json, .yaml, .yml)."""
    text = str(name_or_path)
    if text in BUILTIN:
        path = _builtin_path(text)
    else:
        path = Path(text)
        if path.suffix not in (".json", ".yaml", ".yml"):
            close = close_match(text, BUILTIN)
            hint = f" Did you mean '{close}'?" if close else ""
            raise SuiteError(f"unknown suite {file_name(text)}.{hint} Give a built-in suite ({', '.join(BUILTIN)}) or a .json/.yaml file")
    return parse_suite(_read(path), text, seeds)
