"""Determinism and the episode log (`teamenvs.core.recorder`, `agents.run_episode`).

Same seed and same actions give a byte-identical JSONL log; a different policy seed gives
a different one; the env never touches the global `random` / `np.random` state. The log's
header and step lines carry what replay and analysis need, a log replays to the same
steps, metrics recompute from the file alone, the file is flushed after every step, and a
policy crash leaves the steps already done on disk plus an `error` line.
"""

from __future__ import annotations

import json
import os
import pickle
import random
import subprocess
import sys

import numpy as np
import pytest

import agents
import teamenvs
from agents.policy import SyncPolicy
from teamenvs.core.metrics import episode_metrics
from teamenvs.core.recorder import EpisodeRecorder, clip_raw_action, dumps, read_log, step_records


def random_episode(tmp_path, name: str, policy_seed: int = 3, env_seed: int = 3, **config):
    env = teamenvs.make("day_trader_v0", **config)
    policies = agents.make_policies(env, "random", seed=policy_seed)
    return agents.run_episode(env, policies, seed=env_seed, log_dir=tmp_path, log_name=name)


def test_same_seed_and_actions_give_a_byte_identical_log(tmp_path):
    first = random_episode(tmp_path, "first")
    second = random_episode(tmp_path, "second")
    assert first.log_path == tmp_path / "first.jsonl" and second.log_path == tmp_path / "second.jsonl"
    data = first.log_path.read_bytes()
    assert len(data.splitlines()) == 1 + 1 + 48 + 1  # header, reset, 48 steps, end
    assert data == second.log_path.read_bytes()
    assert first.returns == second.returns and first.metrics == second.metrics


def test_a_different_policy_seed_gives_a_different_log(tmp_path):
    base = random_episode(tmp_path, "base").log_path.read_bytes()
    other = random_episode(tmp_path, "other", policy_seed=4).log_path.read_bytes()
    assert base != other
    # the header (env, config, env seed) is the same: only the actions differ
    assert base.splitlines()[0] == other.splitlines()[0]


def test_reset_with_the_same_seed_gives_the_same_observations():
    env = teamenvs.make("day_trader_v0", preset="group_size_6")
    a = env.reset(seed=11)[0]
    env.step({agent: "invest group 20" for agent in env.agents})
    b = env.reset(seed=11)[0]
    assert a == b


def test_the_global_random_state_is_untouched(tmp_path):
    random.seed(123)
    np.random.seed(123)
    py_state, np_state = random.getstate(), np.random.get_state()
    random_episode(tmp_path, "globals")
    assert random.getstate() == py_state
    after = np.random.get_state()
    assert after[0] == np_state[0] and np.array_equal(after[1], np_state[1]) and after[2:] == np_state[2:]


def test_header_line(tmp_path):
    result = random_episode(tmp_path, "header", n_agents=4, rounds=6)
    header = json.loads(result.log_path.read_text(encoding="utf-8").split("\n", 1)[0])
    assert header["type"] == "header"
    assert header["env_id"] == "day_trader_v0"
    assert header["seed"] == 3
    assert header["version"] == teamenvs.__version__
    assert header["agents"] == ["trader_1", "trader_2", "trader_3", "trader_4"]
    assert header["config"]["n_agents"] == 4 and header["config"]["rounds"] == 6
    assert header["config"]["max_words"] is None and header["preset"] is None


def test_step_lines(tmp_path):
    result = random_episode(tmp_path, "steps")
    records = read_log(result.log_path)
    assert [r["type"] for r in records[:2]] == ["header", "reset"]
    assert set(records[1]["agents"]) == {"trader_1", "trader_2", "trader_3"}
    assert records[1]["agents"]["trader_1"]["observation"].startswith("DayTrader, round 1/30")
    steps = list(step_records(records))
    assert [s["step"] for s in steps] == list(range(1, 49))
    assert [s["done"] for s in steps] == [False] * 47 + [True]
    for step in steps:
        for agent, entry in step["agents"].items():
            assert {"observation", "raw_action", "action", "reward", "events"} <= set(entry)
            assert entry["observation"].startswith("DayTrader") and agent in entry["observation"]
            assert isinstance(entry["raw_action"], str)
            assert entry["action"]["ok"] is True and entry["action"]["text"] == " ".join(entry["raw_action"].split())
            assert isinstance(entry["reward"], float)
    first = steps[0]
    assert all(e["type"] == "round_result" for entry in first["agents"].values() for e in entry["events"])
    assert [e["type"] for e in first["events"]] == ["round"]
    # rewards in the log add up to the returns
    for agent in result.returns:
        assert sum(s["agents"][agent]["reward"] for s in steps) == pytest.approx(result.returns[agent])
    assert records[-1]["type"] == "end" and records[-1]["steps"] == 48


def test_metrics_recompute_from_the_file_alone(tmp_path):
    result = random_episode(tmp_path, "metrics")
    assert episode_metrics(read_log(result.log_path)) == result.metrics


def test_a_log_replays_to_the_same_steps(tmp_path):
    result = random_episode(tmp_path, "original")
    records = read_log(result.log_path)
    header = records[0]
    env = teamenvs.make(header["env_id"], **header["config"])
    env.record_to(EpisodeRecorder(tmp_path / "replay.jsonl"))
    env.reset(seed=header["seed"])
    for step in step_records(records):
        env.step({a: entry["raw_action"] for a, entry in step["agents"].items()})
    env.recorder.close()
    replayed = (tmp_path / "replay.jsonl").read_bytes().splitlines()
    original = result.log_path.read_bytes().splitlines()
    assert replayed == original[:-1]  # everything but the loop's `end` line


def test_log_is_flushed_after_every_step(tmp_path):
    path = tmp_path / "partial.jsonl"
    env = teamenvs.make("day_trader_v0")
    env.record_to(EpisodeRecorder(path))
    env.reset(seed=0)
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2  # header and reset, before any step
    for n in range(1, 4):
        env.step({a: "invest group 20" for a in env.agents})
        on_disk = read_log(path)  # read while the recorder is still open
        assert len(on_disk) == 2 + n
        assert on_disk[-1]["step"] == n
    assert on_disk[-1]["agents"]["trader_2"]["raw_action"] == "invest group 20"
    env.recorder.close()


class CrashingPolicy(SyncPolicy):
    """Waits, then raises on its `crash_at`-th call."""

    def __init__(self, crash_at: int) -> None:
        super().__init__()
        self.calls = 0
        self.crash_at = crash_at

    def act(self, observation, info):
        self.calls += 1
        if self.calls == self.crash_at:
            raise RuntimeError("model server went away")
        return "wait"


def test_a_policy_crash_keeps_the_earlier_steps_and_writes_an_error_line(tmp_path):
    env = teamenvs.make("day_trader_v0")
    policies = agents.make_policies(env, "cooperator")
    policies["trader_2"] = CrashingPolicy(crash_at=4)
    with pytest.raises(RuntimeError, match="model server went away"):
        agents.run_episode(env, policies, seed=5, log_dir=tmp_path, log_name="crash")
    records = read_log(tmp_path / "crash.jsonl")
    assert [r["type"] for r in records] == ["header", "reset", "step", "step", "step", "error"]
    assert [r["step"] for r in records[2:5]] == [1, 2, 3]
    assert records[-1] == {"type": "error", "step": 3, "error": "RuntimeError: model server went away"}
    assert env.recorder is None  # the loop restored the env's recorder


def test_recorder_keeps_each_record_on_one_physical_line(tmp_path):
    record = {"type": "step", "text": "a\u2028b\u2029c\x85d\ne\rf\x1cg"}
    line = dumps(record)
    assert len(line.splitlines()) == 1
    assert json.loads(line) == record
    path = tmp_path / "breaks.jsonl"
    with EpisodeRecorder(path) as recorder:
        recorder.write(record)
        recorder.write({"type": "end"})
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2
    assert read_log(path) == [record, {"type": "end"}]


def test_recorder_annotations_and_clipping(tmp_path):
    recorder = EpisodeRecorder()
    recorder.annotate("a", rationale="because")
    recorder.write({"type": "reset", "agents": {"a": {}}})  # extras wait for the next step line
    recorder.write({"type": "step", "agents": {"a": {"reward": 1.0}, "b": {}}})
    recorder.write({"type": "step", "agents": {"a": {"reward": 2.0}}})
    assert recorder.records[1]["agents"] == {"a": {"reward": 1.0, "rationale": "because"}, "b": {}}
    assert recorder.records[2]["agents"] == {"a": {"reward": 2.0}}
    clipped = clip_raw_action("x" * 50_000)
    assert clipped.startswith("x" * 20_000) and clipped.endswith("[cut: 50,000 characters in all]")
    assert clip_raw_action(b"raw") == "b'raw'" and clip_raw_action(None) is None


def test_read_log_skips_a_truncated_last_line(tmp_path):
    path = tmp_path / "torn.jsonl"
    path.write_text('{"type": "header"}\n{"type": "step", "st', encoding="utf-8")
    assert read_log(path) == [{"type": "header"}]


def test_an_action_sent_again_in_the_same_situation_is_not_parsed_again(monkeypatch):
    """Random and scripted play repeat a few hundred commands: the situation's memo keeps their parses (parsing reads
    only the text and the situation), so the same text in the same situation is parsed once and acts the same;
    free text cannot grow the memo without end."""
    from teamenvs.core import env as core_env
    from teamenvs.core.commands import CommandSet

    env = teamenvs.make("day_trader_v0")
    calls = []
    real = CommandSet.parse
    monkeypatch.setattr(CommandSet, "parse", lambda self, raw, situation=None: calls.append(raw) or real(self, raw, situation))
    env.reset(seed=0)
    steps = 0
    while env.agents and steps < 6:
        _, _, _, _, infos = env.step({a: "invest group 20" for a in env.agents})
        steps += 1
        assert all(infos[a]["last_action"]["text"] == "invest group 20" for a in infos if infos[a]["last_action"].get("ok"))
    agent_steps = steps * len(env.possible_agents)
    assert 1 <= calls.count("invest group 20") <= len(env.unwrapped._situations) < agent_steps
    env.reset(seed=0)
    largest = 0
    for k in range(10 * core_env.MEMO_ENTRIES):  # a new message every step: until some situation's memo is full
        env.step({a: f"say message number {k} from {a}" for a in env.agents})
        largest = max(len(memo[3]) for memo in env.unwrapped._situations.values())
        assert largest <= core_env.MEMO_ENTRIES
        if largest == core_env.MEMO_ENTRIES:
            break
        if not env.agents:
            env.reset(seed=k)
    assert largest == core_env.MEMO_ENTRIES


def test_the_memos_of_all_situations_together_are_bounded(monkeypatch):
    """Free text sent in many situations (the commons' fish stock makes many) would otherwise fill up to 4,096
    situations x 512 memo entries: the situation cache starts afresh past `MAX_MEMO_TOTAL` entries over all of them."""
    from teamenvs.core import env as core_env

    monkeypatch.setattr(core_env, "MAX_MEMO_TOTAL", 300)
    env = teamenvs.make("commons_v0")
    rng = np.random.default_rng(0)
    most = cleared = 0
    for episode in range(60):
        obs, infos = env.reset(seed=episode)
        while env.agents:
            before = env._situations.memo_entries
            actions = {a: infos[a]["valid_actions"][int(rng.integers(len(infos[a]["valid_actions"])))].sample(rng)
                       for a in env.agents if infos[a]["needs_action"]}
            actions.update({a: f"say note {episode}.{env.step_count} from {a}" for a in list(actions)[:2]})
            obs, _, _, _, infos = env.step(actions)
            cleared += env._situations.memo_entries < before
            held = sum(len(entry[3]) for entry in env._situations.values())
            most = max(most, held)
            assert held <= core_env.MAX_MEMO_TOTAL and env._situations.memo_entries <= core_env.MAX_MEMO_TOTAL
    assert most > 250 and cleared >= 2  # the bound was reached, more than once, and the cache started afresh


@pytest.mark.parametrize("env_id", ["job_fair_v0", "commons_v0"])
def test_the_parses_masks_keep_are_within_the_same_bound(monkeypatch, env_id):
    """With discrete actions a mask parses each catalogue command it checks (`TeamEnv.accepts`) and keeps the parse
    in the situation's memo: those entries count against `MAX_MEMO_TOTAL` too (they were written around the count,
    so memos held more than the bound)."""
    from teamenvs.core import env as core_env

    monkeypatch.setattr(core_env, "MAX_MEMO_TOTAL", 200)
    env = teamenvs.make(env_id, obs_type="vector", action_type="discrete")
    rng = np.random.default_rng(0)
    most = 0
    for episode in range(8):
        obs, infos = env.reset(seed=episode)
        while env.agents:
            actions = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents}
            obs, _, _, _, infos = env.step(actions)
            held = sum(len(entry[3]) for entry in env._situations.values())
            most = max(most, held)
            assert held <= core_env.MAX_MEMO_TOTAL, f"{held} memo entries held, over the bound of {core_env.MAX_MEMO_TOTAL}"
    assert most > 100  # the memos did fill towards the bound


def played_trace(env, seed: int, rng: np.random.Generator, steps: int | None = None) -> list[bytes]:
    """One episode of `env` from `seed` (its first `steps` steps), each agent taking a random valid action (a masked-in
    index with discrete actions, a random form's sample with text ones): every step's observations, rewards, and each
    info's last action, valid forms and mask, pickled."""
    discrete = env.interface.discrete
    trace = []
    obs, infos = env.reset(seed=seed)
    while env.agents and (steps is None or len(trace) < steps):
        if discrete:
            actions = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents}
        else:
            actions = {a: infos[a]["valid_actions"][int(rng.integers(len(infos[a]["valid_actions"])))].sample(rng)
                       for a in env.agents if infos[a]["needs_action"]}
        obs, rewards, _, _, infos = env.step(actions)
        trace.append(pickle.dumps((obs, rewards, [(i["last_action"], [f.usage for f in i["valid_actions"]], i.get("action_mask"))
                                                  for i in infos.values()])))
    return trace


@pytest.mark.parametrize("env_id", ["commons_v0", "shape_factory_v0"])
def test_a_cache_that_keeps_almost_nothing_plays_the_same_episodes(monkeypatch, env_id):
    """The situation cache and its memos are caches: bounded to almost nothing, the same seeds give the same
    observations, rewards and infos, in text and in numeric mode (whose masks are memoized there too)."""
    from teamenvs.core import env as core_env

    def play(kwargs):
        env, rng = teamenvs.make(env_id, **kwargs), np.random.default_rng(1)
        return [line for episode in range(3) for line in played_trace(env, episode, rng)]

    for kwargs in ({}, {"obs_type": "both", "action_type": "discrete"}):
        kept = play(kwargs)
        monkeypatch.setattr(core_env, "MAX_MEMO_TOTAL", 3)
        monkeypatch.setattr(core_env, "MAX_SITUATIONS", 2)
        assert play(kwargs) == kept
        monkeypatch.undo()


@pytest.mark.parametrize("env_id", teamenvs.list_envs())
def test_a_baseline_object_reused_for_another_episode_plays_it_afresh(env_id):
    """`reset` is a policy's per-episode hook (the step loop and the Gymnasium view call it on objects they are given
    again): the map task's pair and the search-and-rescue team kept their plans, claims and pens from the episode
    before, so the same seed played differently (the pair scored 0 and ran to the step cap)."""
    from teamenvs.core.policy import agent_seed, baselines

    for name in baselines(env_id):
        env = teamenvs.make(env_id)
        policies = agents.make_policies(env, name, seed=0)
        first = agents.run_episode(env, policies, seed=0, max_steps=400)
        for i, agent in enumerate(env.possible_agents):
            policies[agent].rng = np.random.default_rng(agent_seed(0, i))  # as make_policies seeded it
        again = agents.run_episode(env, policies, seed=0, max_steps=400)
        assert (again.steps, again.returns, again.metrics) == (first.steps, first.returns, first.metrics), name


@pytest.mark.parametrize("env_id", teamenvs.list_envs())
@pytest.mark.parametrize("mode", [{}, {"obs_type": "both", "action_type": "discrete"}])
def test_one_env_over_many_episodes_plays_as_a_new_env_per_episode(env_id, mode):
    """What an env keeps from one episode for the next (situations, parses and masks that outlast episodes, view
    caches) never shows: an env reset again and again gives every episode the same observations, rewards, masks
    and infos as a new env given only that episode, in text and in numeric mode."""

    def play(env, seed):  # (the start of a long episode is enough: the next reset comes mid-episode)
        return played_trace(env, seed, np.random.default_rng(seed), steps=120)

    reused = teamenvs.make(env_id, **mode)
    for seed in (11, 12, 13, 11):
        assert play(reused, seed) == play(teamenvs.make(env_id, **mode), seed), (env_id, seed)


# Plays every registered env in a process of its own: each env's default scripted team and random policies with a
# text log, and random masked-in discrete actions with vector observations; prints one digest per env and play.
FINGERPRINT_SCRIPT = r"""
import hashlib, json, sys, tempfile
import numpy as np
import agents, teamenvs
from teamenvs.registry import list_envs

out = {}
with tempfile.TemporaryDirectory() as folder:
    for env_id in list_envs():
        for kind in ("scripted", "random"):
            env = teamenvs.make(env_id)
            result = agents.run_episode(env, agents.make_policies(env, kind, seed=5), seed=11, log_dir=folder,
                                        log_name=f"{env_id}-{kind}")
            out[f"{env_id} {kind} log"] = hashlib.sha256(result.log_path.read_bytes()).hexdigest()
        env = teamenvs.make(env_id, obs_type="vector", action_type="discrete")
        digest, rng = hashlib.sha256(), np.random.default_rng(3)
        observations, _ = env.reset(seed=11)
        for _ in range(300):
            if not env.agents:
                break
            actions = {a: int(rng.choice(np.flatnonzero(observations[a]["action_mask"]))) for a in env.agents}
            observations, rewards, terminations, truncations, _ = env.step(actions)
            for a in sorted(observations):
                digest.update(a.encode() + observations[a]["observation"].tobytes() + observations[a]["action_mask"].tobytes())
            digest.update(repr(sorted(rewards.items())).encode() + repr(sorted(terminations.items())).encode())
            digest.update(env.state().tobytes())
        out[f"{env_id} vector"] = digest.hexdigest()
sys.stdout.write(json.dumps(out))
"""


def test_every_env_plays_the_same_episode_whatever_the_process_s_string_hashes():
    """Same seed, same episode, across processes: Python salts the hashes of strings per process (PYTHONHASHSEED), so
    any rule, view, baseline or encoder that followed a set's order or a string's `hash` would play differently in
    another process. Two processes with different salts must write byte-identical logs (scripted and random play in
    every env) and give identical vectors, masks, rewards and states in the numeric mode."""
    runs = []
    for salt in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": salt}
        done = subprocess.run([sys.executable, "-c", FINGERPRINT_SCRIPT], capture_output=True, text=True, env=env,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        runs.append(json.loads(done.stdout))
    assert len(runs[0]) == 3 * len(teamenvs.registry.list_envs())
    differ = sorted(key for key in runs[0] if runs[0][key] != runs[1].get(key))
    assert not differ, f"played differently under another PYTHONHASHSEED: {differ}"
