"""The contract every registered environment passes: `check_team_env(env_id)`.

In the spirit of PettingZoo's `api_test`, shipped in the package so that a new paradigm (or
one of a user's own) is checked the same way as the built-in ones:

    from teamenvs.testing import check_team_env
    check_team_env("commons_v0")          # raises AssertionError saying what is wrong

It runs the PettingZoo parallel, seed and AEC API tests; then episodes with *valid* actions
drawn from `info["valid_actions"]` (an API test with `action_space.sample()` only exercises
the rejection path), checking the info schema, that each observation is the rendering of
`info["view"]`, that valid forms parse, and that infos are plain data no two steps share;
that every preset builds and steps; that a scripted episode's log is byte-identical for the
same seed, that metrics recomputed from the log read back equal the episode's, that
`metric_goals` name metrics the paradigm reports, and that the replay re-simulates the log;
that the env survives `pickle` and `deepcopy` after reset and continues identically;
Gymnasium's `check_env` on its single-agent view; and the RL interface: observations inside
their spaces for every observation and action type, exact action masks (a masked-in action is
never refused), `state()` inside `state_space`, discrete episodes whose logs replay, and the
PettingZoo and Gymnasium checks in the numeric modes.
"""

from __future__ import annotations

import copy
import math
import pickle
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np

from teamenvs.core.commands import Action
from teamenvs.core.metrics import episode_metrics, flatten
from teamenvs.core.policy import make_policies
from teamenvs.core.recorder import EpisodeRecorder, read_log
from teamenvs.core.view import SharedFacts
from teamenvs.core.text import OBSERVATION_MAX_CHARS
from teamenvs.registry import make, spec

INFO_KEYS = ("view", "valid_actions", "needs_action", "last_action", "events")
_MUTABLE = (dict, list, set, bytearray)


def _fail(env_id: str, what: str) -> None:
    raise AssertionError(f"{env_id}: {what}")


def _mutable_ids(obj: Any, seen: set[int] | None = None) -> set[int]:
    """Ids of every mutable container reachable from `obj` (dicts, lists, sets, and objects' __dict__); a
    `SharedFacts` (a read-only dict that views may share) is not one, though what it holds is looked into."""
    seen = set() if seen is None else seen
    if isinstance(obj, (str, bytes, int, float, bool, type(None))):
        return seen
    if id(obj) in seen:
        return seen
    if isinstance(obj, _MUTABLE) and not isinstance(obj, SharedFacts):
        seen.add(id(obj))
    children = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple, set, frozenset)) else ()
    for child in children:
        _mutable_ids(child, seen)
    return seen


def _valid_actions(infos: dict[str, dict[str, Any]], agents: list[str], rng: np.random.Generator) -> dict[str, str]:
    """One action per agent that needs one, drawn like the random baseline: a valid form, then its arguments."""
    actions = {}
    for agent in agents:
        forms = infos[agent]["valid_actions"]
        if infos[agent]["needs_action"] and forms:
            actions[agent] = forms[int(rng.integers(len(forms)))].sample(rng)
    return actions


def check_valid_action_episode(env_id: str, seed: int = 0, max_steps: int = 200, **config: Any) -> int:
    """Step an episode with actions drawn from `valid_actions`; check schema, views, parsing and plain-data infos.

    Returns the number of steps played.
    """
    env = make(env_id, **config)
    base = env.unwrapped
    rng = np.random.default_rng(seed)
    observations, infos = env.reset(seed=seed)
    previous_ids: set[int] = set()
    for step in range(max_steps + 1):
        for agent in env.agents:
            info = infos[agent]
            missing = [k for k in INFO_KEYS if k not in info]
            if missing:
                _fail(env_id, f"info[{agent!r}] lacks {missing} at step {step}")
            if not env.observation_space(agent).contains(observations[agent]):
                _fail(env_id, f"the observation of {agent} at step {step} is not in its observation space")
            rendered = base._render_view(info["view"])
            if len(rendered) > OBSERVATION_MAX_CHARS:
                rendered = rendered[: OBSERVATION_MAX_CHARS - 20] + "\n[observation cut]"
            if rendered != observations[agent]:
                _fail(env_id, f"the observation of {agent} at step {step} is not the rendering of info['view']")
            for form in info["valid_actions"]:
                example = form.sample(np.random.default_rng(step))
                if not isinstance(base.commands.parse(example, form.situation), Action):
                    _fail(env_id, f"{agent}'s valid form {form.usage!r} drew {example!r}, which does not parse")
        try:
            pickle.dumps(infos)
        except Exception as exc:
            _fail(env_id, f"infos at step {step} cannot be pickled ({type(exc).__name__}: {exc}): keep them plain data")
        ids = _mutable_ids(infos)
        if ids & previous_ids:
            _fail(env_id, f"infos of steps {step - 1} and {step} share a mutable object: build each step's info afresh")
        previous_ids = ids
        if not env.agents:
            break
        observations, rewards, terminations, truncations, infos = env.step(_valid_actions(infos, env.agents, rng))
        for agent, reward in rewards.items():
            if not isinstance(reward, float) or not math.isfinite(reward):
                _fail(env_id, f"reward of {agent} at step {step} is {reward!r}, not a finite float")
        if any(terminations.values()) or any(truncations.values()):
            if env.agents:
                _fail(env_id, f"step {step} ended the episode for some agents but env.agents still lists {env.agents}")
    return step


def _scripted_log(env_id: str, seed: int, folder: Path, name: str, max_steps: int, **config: Any) -> tuple[bytes, list[dict], dict]:
    """Play one episode with the default baselines into `folder/name.jsonl`: (file bytes, records, metrics)."""
    env = make(env_id, **config)
    base = env.unwrapped
    policies = make_policies(env, "scripted", seed=seed)
    path = folder / f"{name}.jsonl"
    with EpisodeRecorder(path) as recorder, base.recording(recorder):
        observations, infos = env.reset(seed=seed)
        for agent in env.agents:
            policies[agent].reset(agent, base.briefing(agent))
        steps = 0
        while env.agents and steps < max_steps:
            actions = {a: policies[a].act(observations[a], infos[a]) for a in env.agents if infos[a]["needs_action"]}
            observations, _, _, _, infos = env.step(actions)
            steps += 1
        metrics = episode_metrics(recorder.records)
        recorder.write({"type": "end", "steps": steps, "metrics": metrics})
        records = list(recorder.records)
    return path.read_bytes(), records, metrics


def check_logs_metrics_and_replay(env_id: str, seed: int = 0, max_steps: int = 400, **config: Any) -> None:
    """Same seed, same log (byte for byte); metrics from the log read back equal the episode's;
    metric goals name reported metrics; the replay re-simulates every step of the log."""
    from teamenvs.replay import load_replay

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        first, records, metrics = _scripted_log(env_id, seed, folder, "a", max_steps, **config)
        second, _, _ = _scripted_log(env_id, seed, folder, "b", max_steps, **config)
        if first != second:
            _fail(env_id, f"two scripted episodes with seed {seed} wrote different logs")
        read_back = read_log(folder / "a.jsonl")
        if episode_metrics(read_back[:-1]) != metrics:
            _fail(env_id, "metrics recomputed from the log read back differ from the episode's")
        reported = set(flatten(metrics))
        goals = make(env_id).unwrapped.metric_goals
        unknown = sorted(set(goals) - reported)
        if unknown:
            _fail(env_id, f"metric_goals name metrics the paradigm does not report: {unknown}")
        replay = load_replay(folder / "a.jsonl")
        if replay.sim.warning or replay.sim.verified < 0:
            _fail(env_id, f"the replay did not re-simulate the log: {replay.sim.warning or 'nothing was verified'}")


def check_presets(env_id: str, steps: int = 5) -> None:
    """Every preset builds, resets and steps with valid actions."""
    cls = spec(env_id).load_env_class()
    for preset in cls.presets:
        try:
            check_valid_action_episode(env_id, seed=1, max_steps=steps, preset=preset)
        except AssertionError as exc:
            raise AssertionError(f"preset {preset!r}: {exc}") from None


def check_copies(env_id: str, seed: int = 0, steps: int = 10) -> None:
    """`pickle` and `deepcopy` of an env after reset give envs that continue exactly like the original."""
    env = make(env_id)
    env.reset(seed=seed)
    twins = {"pickle": pickle.loads(pickle.dumps(env)), "deepcopy": copy.deepcopy(env)}
    rng = np.random.default_rng(seed)
    infos = env.unwrapped._observe()[1] if env.agents else {}
    for _ in range(steps):
        if not env.agents:
            break
        actions = _valid_actions(infos, env.agents, rng)
        observations, rewards, _, _, infos = env.step(actions)
        for how, twin in twins.items():
            twin_obs, twin_rewards, _, _, _ = twin.step(actions)
            if twin_obs != observations or twin_rewards != rewards:
                _fail(env_id, f"a {how} copy made after reset diverged from the original")


def check_single_agent_view(env_id: str) -> None:
    """Gymnasium's `check_env` on the single-agent view (one learner, scripted teammates)."""
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make(spec(env_id).gym_id, disable_env_checker=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # text spaces draw "should be Box/Discrete" advice
        check_env(env.unwrapped, skip_render_check=True)


def check_pettingzoo_api(env_id: str, num_cycles: int = 30) -> None:
    """PettingZoo's parallel API test, seed test, and the AEC API test of the converted env."""
    from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test
    from pettingzoo.utils import parallel_to_aec

    factory: Callable[[], Any] = lambda: make(env_id)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parallel_api_test(make(env_id), num_cycles=num_cycles)
        parallel_seed_test(factory, num_cycles=num_cycles)
        api_test(parallel_to_aec(make(env_id)), num_cycles=num_cycles)


def random_masked_actions(infos: dict[str, dict[str, Any]], rng: np.random.Generator,
                          agents: list[str] | None = None) -> dict[str, int]:
    """A masked-in index per agent of `agents` (default: every agent in `infos`), drawn uniformly among those
    its `info["action_mask"]` marks (0, the no-op, where none is); the random team of the mask checks."""
    actions = {}
    for agent in infos if agents is None else agents:
        allowed = np.flatnonzero(infos[agent]["action_mask"])
        actions[agent] = int(allowed[int(rng.integers(len(allowed)))]) if len(allowed) else 0
    return actions


def mask_worked_out_afresh(env: Any, agent: str) -> tuple[np.ndarray, tuple[str | None, ...]] | None:
    """`agent`'s action mask and commands in the situation of the last reset or step, worked out again with the
    situation's memoized masks left out (what a paradigm's `_mask_key` lets the env reuse); None when it need not
    act. A test compares them with the memoized ones the env gave."""
    offered = env._offered[agent]
    if offered is None:
        return None
    fresh = {k: v for k, v in offered[3].items() if not (isinstance(k, tuple) and k[:1] == ("mask",))}
    env._offered[agent] = (*offered[:3], fresh)
    try:
        return env.interface._mask(env, agent, env._infos[agent]["view"], True)
    finally:
        env._offered[agent] = offered


def check_exact_masks(env_id: str, seed: int = 0, steps: int = 300, obs_type: str = "vector", **config: Any) -> int:
    """Play masked-in discrete actions only: observations lie in their spaces, no action is ever
    refused, `state()` lies in `state_space`. Returns the number of actions checked."""
    env = make(env_id, obs_type=obs_type, action_type="discrete", **config)
    rng = np.random.default_rng(seed)
    observations, infos = env.reset(seed=seed)
    checked = 0
    for step in range(steps):
        if not env.agents:
            observations, infos = env.reset(seed=int(rng.integers(2**31)))
        for agent in env.agents:
            if not env.observation_space(agent).contains(observations[agent]):
                _fail(env_id, f"{obs_type}/discrete observation of {agent} at step {step} is outside its space")
            if not np.array_equal(np.asarray(observations[agent]["action_mask"]), infos[agent]["action_mask"]):
                _fail(env_id, f"the observation's action_mask and info['action_mask'] of {agent} differ at step {step}")
        if not env.state_space.contains(env.state()):
            _fail(env_id, f"state() at step {step} is outside state_space")
        needing = [a for a in env.agents if infos[a]["needs_action"]]
        actions = random_masked_actions(infos, rng, env.agents)
        observations, _, _, _, infos = env.step(actions)
        for agent in needing:
            last = infos[agent]["last_action"] if agent in infos else None
            if last is not None and last.get("ok") is False:
                _fail(env_id, f"masked-in action {actions[agent]} of {agent} at step {step} was refused: {last['error']}")
            checked += 1
    return checked


def check_rl_interface(env_id: str) -> None:
    """Every observation and action type: spaces, exact masks, state, replayable discrete logs,
    PettingZoo's API test in the numeric mode and Gymnasium's `check_env` on the single-agent view."""
    import gymnasium
    from gymnasium.utils.env_checker import check_env
    from pettingzoo.test import parallel_api_test

    from teamenvs.replay import load_replay

    for obs_type in ("vector", "both"):
        check_exact_masks(env_id, obs_type=obs_type, steps=150)
        env = make(env_id, obs_type=obs_type)
        observations, _ = env.reset(seed=0)
        if not all(env.observation_space(a).contains(observations[a]) for a in env.agents):
            _fail(env_id, f"{obs_type} observations (text actions) are outside their spaces")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parallel_api_test(make(env_id, obs_type="vector", action_type="discrete"), num_cycles=30)
        for obs_type in ("text", "vector", "both"):
            for action_type in ("text", "discrete"):
                single = gymnasium.make(spec(env_id).gym_id, obs_type=obs_type, action_type=action_type,
                                        disable_env_checker=True)
                check_env(single.unwrapped, skip_render_check=True)
    with tempfile.TemporaryDirectory() as tmp:
        env = make(env_id, action_type="discrete")
        rng = np.random.default_rng(1)
        path = Path(tmp) / "discrete.jsonl"
        with EpisodeRecorder(path) as recorder, env.unwrapped.recording(recorder):
            observations, infos = env.reset(seed=1)
            for _ in range(60):
                if not env.agents:
                    break
                observations, _, _, _, infos = env.step(random_masked_actions(infos, rng, env.agents))
        replay = load_replay(path)
        if replay.sim.warning or replay.sim.verified < 0:
            _fail(env_id, f"a discrete episode's log does not replay: {replay.sim.warning}")


CHECKS = (
    ("pettingzoo api", check_pettingzoo_api),
    ("valid-action episode", check_valid_action_episode),
    ("presets", check_presets),
    ("logs, metrics and replay", check_logs_metrics_and_replay),
    ("pickle and deepcopy", check_copies),
    ("single-agent view", check_single_agent_view),
    ("rl interface", check_rl_interface),
)


def check_team_env(env_id: str) -> list[str]:
    """Run every check of the contract on `env_id`; return the names of the checks passed.

    Raises AssertionError naming the check and what failed.
    """
    passed = []
    for name, check in CHECKS:
        try:
            check(env_id)
        except AssertionError as exc:
            raise AssertionError(f"check_team_env({env_id!r}) failed {name}: {exc}") from exc
        passed.append(name)
    return passed


__all__ = ["check_team_env", "check_valid_action_episode", "check_logs_metrics_and_replay", "check_presets",
           "check_copies", "check_single_agent_view", "check_pettingzoo_api", "check_exact_masks", "check_rl_interface"]
