"""Numeric observations and discrete actions for reinforcement learning, on the same env.

`teamenvs.make(env_id, obs_type=..., action_type=...)` picks the interface:

- `obs_type="text"` (default): the text observation; `"vector"`: a fixed-shape float32 Box
  encoding the agent's *view* (never hidden state), slot by slot as the paradigm's feature
  table says; `"both"`: a Dict with `text` and `vector`.
- `action_type="text"` (default): any string; `"discrete"`: `Discrete(n)`, a fixed catalogue
  per paradigm whose integers each stand for one command of the text language
  (`env.action_text(agent, i)`), so the text step, logs, replay and metrics stay the one path.
  Text actions still work. With discrete actions every observation carries an `action_mask`
  (PettingZoo's convention: `{"observation": ..., "action_mask": ...}` for vectors; a key of
  the Dict for `both`) and so does `info[agent]["action_mask"]`. The mask is exact: an action
  marked valid parses in the agent's situation and the rules would not refuse it. Agents that
  need no action have only the no-op (index 0) marked.
- `learners` (default: every agent): the agents that get this interface. The others keep text
  observations and text actions, as policies that read text (LLM, scripted) expect, and cost
  no encoding and no mask: the single-agent Gymnasium view makes its one learner the only one.
  `state()` then holds the learners' vectors.

A paradigm supplies the parts in its own folder: `view.features(config)` and
`view.encode(view, config)` (the feature table and the encoder), `commands.catalogue(config)`
(the action labels, index 0 the no-op) and `commands.command_for(view, label)` (the command a
label stands for in this view, or None when it is impossible). This module holds what they
share: the feature declaration, the spaces, and building masks.
"""

from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from gymnasium import spaces

from teamenvs.core.text import excerpt

OBS_TYPES = ("text", "vector", "both")
ACTION_TYPES = ("text", "discrete")
NOOP = "no-op"  # index 0 of every catalogue: wait if waiting is allowed, else nothing to send


@dataclass(frozen=True)
class Feature:
    """A named block of `size` slots of the numeric observation, with its scale, for the feature table."""

    name: str
    size: int = 1
    low: float = 0.0
    high: float = 1.0
    doc: str = ""


def feature_bounds(features: Sequence[Feature]) -> tuple[np.ndarray, np.ndarray]:
    low = np.concatenate([np.full(f.size, f.low, dtype=np.float32) for f in features]) if features else np.zeros(0, np.float32)
    high = np.concatenate([np.full(f.size, f.high, dtype=np.float32) for f in features]) if features else np.zeros(0, np.float32)
    return low, high


def vector_space(features: Sequence[Feature]) -> spaces.Box:
    """The Box of an encoding with these features."""
    low, high = feature_bounds(features)
    return spaces.Box(low, high, dtype=np.float32)


def feature_table(features: Sequence[Feature]) -> str:
    """The feature table as markdown: slots, name, scale, meaning."""
    rows = ["| slots | feature | scale | meaning |", "|---|---|---|---|"]
    start = 0
    for f in features:
        slots = str(start) if f.size == 1 else f"{start}-{start + f.size - 1}"
        rows.append(f"| {slots} | `{f.name}` | {f.low:g} to {f.high:g} | {f.doc} |")
        start += f.size
    return "\n".join(rows)


_BOUNDS: dict[tuple[Feature, ...], tuple[np.ndarray, np.ndarray]] = {}


def pack(features: Sequence[Feature], values: Mapping[str, Any]) -> np.ndarray:
    """The observation vector from a value (or a sequence of `size` values) per feature name, clipped to its scale.

    One flat list, one array and one clip against bounds computed once per feature table:
    per-feature numpy calls cost more than the rest of a step.
    """
    key = tuple(features)
    bounds = _BOUNDS.get(key)
    if bounds is None:
        bounds = _BOUNDS[key] = feature_bounds(key)
    flat: list[float] = []
    for f in key:
        value = values[f.name]
        if f.size == 1 and not isinstance(value, (list, tuple, np.ndarray)):
            flat.append(value)
            continue
        block = list(value.reshape(-1)) if isinstance(value, np.ndarray) else list(value)
        if len(block) != f.size:
            raise ValueError(f"feature {f.name!r} has {f.size} slot(s), got {len(block)} value(s)")
        flat.extend(block)
    out = np.array(flat, dtype=np.float32)
    return np.clip(out, bounds[0], bounds[1], out=out)


def unpack_flat(features: Sequence[Feature], flat: Sequence[float]) -> dict[str, Any]:
    """The inverse of packing, before clipping: a flat list of slots in table order, as a value (one slot)
    or a list (several) per feature name, for the `encode_values` of encoders that build the flat list."""
    values: dict[str, Any] = {}
    start = 0
    for f in features:
        end = start + f.size
        values[f.name] = flat[start] if f.size == 1 else flat[start:end]
        start = end
    return values


def pack_flat(features: Sequence[Feature], values: Mapping[str, Any], low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """`pack` for encoders that keep their feature table's bounds at hand and give each block as a
    list (or one number): one flat list, one array, one clip, and no checks, on the hot path."""
    flat: list[float] = []
    for f in features:
        value = values[f.name]
        if isinstance(value, list):
            flat.extend(value)
        else:
            flat.append(value)
    return vector_of(flat, low, high)


def vector_of(flat: Sequence[float], low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """A flat list of slots as the float32 observation vector, clipped to the bounds: one array, one clip."""
    out = np.array(flat, dtype=np.float32)
    return np.minimum(np.maximum(out, low, out=out), high, out=out)


def pool_scale(gather: Mapping[str, np.ndarray], low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The scale of each entry of a step pool, for encoders that gather each agent's vector from one array per step
    (`gather`: agent -> for each slot of its vector, the pool entry it reads; entry 0 is the pool's 0, for the slots
    the agent writes itself): that of the slots that read it, which must be one scale for all of them, so that a pool
    clipped once is every vector clipped. A ValueError where two slots of different scales read one entry, or a slot
    whose scale leaves 0 out reads the 0."""
    entries = max(int(at.max()) for at in gather.values()) + 1
    pool_low, pool_high = np.zeros(entries, np.float32), np.zeros(entries, np.float32)
    seen: dict[int, tuple[float, float]] = {}
    for at in gather.values():
        for slot, entry in enumerate(at.tolist()):
            scale = (float(low[slot]), float(high[slot]))
            if entry == 0:
                if not scale[0] <= 0.0 <= scale[1]:
                    raise ValueError(f"slot {slot} reads the pool's 0 but its scale leaves 0 out")
            elif seen.setdefault(entry, scale) != scale:
                raise ValueError(f"the slots that read pool entry {entry} have different scales")
    for entry, (lo, hi) in seen.items():
        pool_low[entry], pool_high[entry] = lo, hi
    return pool_low, pool_high


def clipped(value: float, scale: tuple[float, float]) -> float:
    """`value` clipped to a slot's `scale` (float32 bounds as Python floats): what clipping the float32 vector makes of
    it once stored, since rounding to float32 keeps order and leaves the bounds as they are."""
    low, high = scale
    return min(max(value, low), high)


def set_flags(out: np.ndarray, begin: int, block: Sequence[float], one: float) -> None:
    """Write `one` into `out` at slot `begin + i` for each i where `block` (slots of 0 and 1, reading 0 in `out`) holds 1."""
    for i in itertools.compress(range(len(block)), block):
        out[begin + i] = one


def one_hot(index: int | None, size: int) -> list[float]:
    """A one-hot block (all zeros for None or an index outside the block)."""
    block = [0.0] * size
    if index is not None and 0 <= index < size:
        block[index] = 1.0
    return block


FLAT_INFO_KEYS = ("needs_action", "action_rejected", "action_mask")


def flat_info(info: Mapping[str, Any]) -> dict[str, Any]:
    """An agent's info as numbers only, the same keys every step: `needs_action`, `action_rejected` (its last
    action was refused) and, with discrete actions, `action_mask`. What vectorising and tensor libraries can
    stack; the view, valid forms and events of the full info are for text and scripted policies."""
    last = info.get("last_action") or {}
    flat = {"needs_action": bool(info.get("needs_action", False)), "action_rejected": last.get("ok") is False}
    if "action_mask" in info:
        flat["action_mask"] = info["action_mask"]
    return flat


def check_types(obs_type: Any, action_type: Any) -> None:
    if obs_type not in OBS_TYPES:
        raise ValueError(f"obs_type must be one of {', '.join(OBS_TYPES)}, got {excerpt(obs_type)}")
    if action_type not in ACTION_TYPES:
        raise ValueError(f"action_type must be one of {', '.join(ACTION_TYPES)}, got {excerpt(action_type)}")


def observation_space(obs_type: str, discrete: bool, text: spaces.Space, vector: spaces.Box | None, n_actions: int) -> spaces.Space:
    """The observation space of one agent for an interface."""
    mask = spaces.Box(0, 1, (n_actions,), dtype=np.int8) if discrete else None
    if obs_type == "text":
        return text
    if obs_type == "vector":
        assert vector is not None
        return spaces.Dict({"observation": vector, "action_mask": mask}) if mask is not None else vector
    parts: dict[str, spaces.Space] = {"text": text, "vector": vector}
    if mask is not None:
        parts["action_mask"] = mask
    return spaces.Dict(parts)


def observation(obs_type: str, text: Any, vector: np.ndarray | None, mask: np.ndarray | None) -> Any:
    """One agent's observation for an interface (the counterpart of `observation_space`)."""
    if obs_type == "text":
        return text
    if obs_type == "vector":
        return {"observation": vector, "action_mask": mask} if mask is not None else vector
    parts = {"text": text, "vector": vector}
    if mask is not None:
        parts["action_mask"] = mask
    return parts


def integer_of(action: Any) -> int | None:
    """An integer action as a Python int: an int, a numpy integer or 0-d integer array, or any other integer
    scalar (`__index__`: a 0-d integer tensor); None for anything else (a bool, a float, a string, a 1-element array)."""
    if isinstance(action, (bool, np.bool_, str)):
        return None
    if isinstance(action, (int, np.integer)) or (isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu"):
        return int(action)
    if hasattr(type(action), "__index__"):
        try:
            return operator.index(action)
        except Exception:  # noqa: BLE001 - an array of more than one element, a tensor of floats: not an integer
            return None
    return None


_PLAIN_INTS = (int, np.int64)  # what Python code and most RL libraries (a sampled Discrete, an argmax) send


def as_index(action: Any, n: int) -> int | None:
    """An integer action (`integer_of`) within [0, n), else None."""
    value = integer_of(action)
    return value if value is not None and 0 <= value < n else None


def check_learners(learners: Iterable[str] | None, agents: Sequence[str]) -> frozenset[str]:
    """The learners as a set (every agent for None); an unknown agent or an empty choice is a ValueError."""
    if learners is None:
        return frozenset(agents)
    if isinstance(learners, str):
        learners = (learners,)
    try:
        chosen = list(learners)
    except TypeError:  # not a collection of agents (a number, say)
        raise ValueError(f"learners must be one or more of the agents ({', '.join(agents)}), got {excerpt(learners)}") from None
    unknown = [a for a in chosen if a not in agents]
    if unknown or not chosen:
        raise ValueError(f"learners must be one or more of the agents ({', '.join(agents)}), got {excerpt(chosen)}")
    return frozenset(chosen)


def labels_of(catalogue: Iterable[str]) -> tuple[str, ...]:
    labels = tuple(catalogue)
    if not labels or labels[0] != NOOP:
        raise ValueError(f"an action catalogue starts with {NOOP!r} (index 0)")
    if len(set(labels)) != len(labels):
        raise ValueError("action catalogue labels must be unique")
    return labels


@lru_cache(maxsize=64)
def _label_index(labels: tuple[str, ...]) -> dict[str, int]:
    """Each label's index in a catalogue (read only)."""
    return {label: i for i, label in enumerate(labels)}


def candidates_in(table: Mapping[str, str], labels: tuple[str, ...]) -> list[tuple[int, str]]:
    """(index, command) of every label of `labels` (a catalogue) that `table` (label -> command now, a view's) holds,
    in index order: what a paradigm's `_mask_candidates` gives when its view has such a table at hand."""
    at = _label_index(labels)
    return sorted([(at[label], command) for label, command in table.items() if label in at])


class Interface:
    """One env's observation and action interface: spaces, observations, and turning actions into text.

    The env calls it from `_observe` (one observation per agent) and `step` (each agent's
    action, to parse). Everything paradigm-specific comes from the env's hooks: `_features`,
    `_encode`, `_catalogue`, `_command_for` and `_refusal`.
    """

    def __init__(self, env: Any, obs_type: str, action_type: str, learners: Iterable[str] | None = None) -> None:
        from teamenvs.core.text import ACTION_MAX_CHARS, OBSERVATION_MAX_CHARS, text_space

        check_types(obs_type, action_type)
        self.obs_type, self.discrete = obs_type, action_type == "discrete"
        self.learners = check_learners(learners, env.possible_agents)
        self.features: tuple[Feature, ...] | None = None
        if obs_type != "text":
            self.features = env._features()
            if self.features is None:
                raise ValueError(f"{env.env_id} has no numeric observation yet: use obs_type='text'")
        self.labels: tuple[str, ...] = ()
        if self.discrete:
            catalogue = env._catalogue()
            if catalogue is None:
                raise ValueError(f"{env.env_id} has no discrete action catalogue yet: use action_type='text'")
            self.labels = labels_of(catalogue)
        vector = vector_space(self.features) if self.features is not None else None
        # each agent gets its own space objects (seeding one agent's space must not seed another's)
        self.observation_spaces = {
            a: observation_space(obs_type, self.discrete, text_space(OBSERVATION_MAX_CHARS, min_length=1),
                                 vector_space(self.features) if self.features is not None else None, len(self.labels))
            if a in self.learners else text_space(OBSERVATION_MAX_CHARS, min_length=1)
            for a in env.possible_agents}
        self.action_spaces = {a: spaces.Discrete(len(self.labels)) if self.discrete and a in self.learners else text_space(ACTION_MAX_CHARS)
                              for a in env.possible_agents}
        self.learner_order = tuple(a for a in env.possible_agents if a in self.learners)  # for state()
        self.state_space = None
        if vector is not None:
            n = len(self.learner_order)
            self.state_space = spaces.Box(np.tile(vector.low, n), np.tile(vector.high, n), dtype=np.float32)
        self._idle_mask = np.zeros(len(self.labels), dtype=np.int8)
        if self.discrete:
            self._idle_mask[0] = 1
        self._idle_commands: tuple[str | None, ...] = (None,) * len(self.labels)
        self._vectors: dict[str, np.ndarray] = {}
        self._commands: dict[str, tuple[str | None, ...]] = {}
        # agents whose observation the env leaves out (None) until `TeamEnv.observe_now` asks for it, and whose view it
        # does not build in a step where they have nothing to decide (mid-episode, no log): a wrapper that discards
        # their observations of such steps (the single-agent view: its learner's skipped steps, baseline teammates) sets it
        self.deferred: frozenset[str] = frozenset()

    def needs_text(self, agent: str) -> bool:
        """Whether `agent`'s observation holds its text (text and both, and every agent that is not a learner)."""
        return self.obs_type != "vector" or agent not in self.learners

    def observe(self, env: Any, agent: str, text: str | None, view: Mapping[str, Any], info: dict[str, Any]) -> Any:
        """The agent's observation; adds `action_mask` to a learner's info with discrete actions."""
        if (self.obs_type == "text" and not self.discrete) or agent not in self.learners:
            return text
        vector = None
        if self.features is not None:
            vector = np.asarray(env._encode(view), dtype=np.float32)
            self._vectors[agent] = vector
        mask = None
        if self.discrete:
            mask, self._commands[agent] = self._mask(env, agent, view, info["needs_action"])
            info["action_mask"] = mask.copy()
        return observation(self.obs_type, text, vector, mask)

    def _mask(self, env: Any, agent: str, view: Mapping[str, Any], needs_action: bool) -> tuple[np.ndarray, tuple[str | None, ...]]:
        """The action mask and the command of each masked-in index, from the situation's memo when
        the paradigm gives a mask key (`env._mask_key`)."""
        if not needs_action:  # only the no-op
            return self._idle_mask.copy(), self._idle_commands
        key = env._mask_key(view)
        memo = env._offered[agent][3] if key is not None else None  # the situation's memo (see TeamEnv._situation_for)
        cached = memo.get(("mask", key)) if memo is not None else None
        if cached is not None:
            return cached[0].copy(), cached[1]
        mask = np.zeros(len(self.labels), dtype=np.int8)
        commands: list[str | None] = [None] * len(self.labels)
        accepts = env.accepts
        for i, command in env._mask_candidates(view):
            if accepts(agent, command):
                mask[i] = 1
                commands[i] = command
        if memo is not None:
            env._situations.remember(memo, ("mask", key), (mask.copy(), tuple(commands)))
        return mask, tuple(commands)

    def command_now(self, agent: str, index: int) -> str | None:
        commands = self._commands.get(agent, ())
        return commands[index] if 0 <= index < len(commands) else None

    def as_text(self, actions: Mapping[str, Any]) -> Mapping[str, Any]:
        """The step's actions with each available discrete index replaced by its command, so that the
        log, the replay and the metrics see the same text a text policy would have sent."""
        if not self.discrete:
            return actions
        out = dict(actions)
        learners, known = self.learners, self._commands
        for agent, action in actions.items():
            if agent not in learners:
                continue
            if type(action) in _PLAIN_INTS:  # the common cases: `command_now` inline (a bool is neither)
                commands = known.get(agent, ())
                command = commands[action] if 0 <= action < len(commands) else None
            else:
                index = as_index(action, len(self.labels))
                command = self.command_now(agent, index) if index is not None else None
            if command is not None:
                out[agent] = command
        return out

    def parse(self, env: Any, agent: str, action: Any, situation: Any) -> Any:
        """Parse one agent's action; an index left by `as_text` is one whose mask is 0."""
        from teamenvs.core.commands import ActionError

        if self.discrete and agent in self.learners:
            index = as_index(action, len(self.labels))
            if index is not None:
                return ActionError(f"action {index} ({self.labels[index]}) is not available now (its mask is 0)", "not_allowed")
            value = integer_of(action)
            if value is not None:
                return ActionError(f"action {value} is outside the action space (0 to {len(self.labels) - 1})", "bad_argument")
            if not isinstance(action, str):
                return ActionError(f"a discrete action is an integer from 0 to {len(self.labels) - 1} (or a command string), "
                                   f"got {type(action).__name__}", "not_a_string")
        return env.commands.parse(action, situation)

    def state(self) -> np.ndarray:
        """Every learner's latest observation vector, in `possible_agents` order (zeros before the first)."""
        size = self.observation_space_size
        return np.concatenate([self._vectors.get(a, np.zeros(size, np.float32)) for a in self.learner_order])

    @property
    def observation_space_size(self) -> int:
        return sum(f.size for f in self.features or ())
