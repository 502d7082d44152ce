"""`teamenvs.wrappers.make_async`: the single-agent view in `AsyncVectorEnv`, each worker pinned to one CPU."""

from __future__ import annotations

import os

import numpy as np
import pytest

import teamenvs
from teamenvs.wrappers import make_async
from teamenvs.wrappers.vector import pinned, worker_cpus

PINNABLE = worker_cpus() is not None


def play(envs, steps: int = 5) -> np.ndarray:
    observations, infos = envs.reset(seed=list(range(envs.num_envs)))
    for _ in range(steps):
        actions = np.array([int(np.flatnonzero(mask)[0]) for mask in infos["action_mask"]])
        observations, rewards, terminations, truncations, infos = envs.step(actions)
    return observations["observation"]


@pytest.mark.skipif(not PINNABLE, reason="needs a platform that pins processes to CPUs, and two CPUs")
def test_workers_are_pinned_round_robin_and_the_parent_keeps_its_cpus() -> None:
    before = os.sched_getaffinity(0)
    cpus = sorted(before)
    envs = make_async("day_trader_v0", 3, obs_type="vector", action_type="discrete")
    try:
        assert [os.sched_getaffinity(p.pid) for p in envs.processes] == [{cpus[i % len(cpus)]} for i in range(3)]
        assert os.sched_getaffinity(0) == before  # AsyncVectorEnv builds one env in the parent too: not pinned there
        assert play(envs).shape == (3, teamenvs.make("day_trader_v0", obs_type="vector").interface.observation_space_size)
    finally:
        envs.close()


def test_unpinned_workers_keep_every_cpu_and_play_the_same_episodes() -> None:
    """Pinning changes where the workers run, never what they compute."""
    plain = make_async("commons_v0", 2, pin_workers=False, obs_type="vector", action_type="discrete")
    pinned_envs = make_async("commons_v0", 2, obs_type="vector", action_type="discrete")
    try:
        if PINNABLE:
            assert all(os.sched_getaffinity(p.pid) == os.sched_getaffinity(0) for p in plain.processes)
        np.testing.assert_array_equal(play(plain, 8), play(pinned_envs, 8))
    finally:
        plain.close()
        pinned_envs.close()


def test_pinned_leaves_the_parent_process_alone() -> None:
    made = []
    make = pinned(lambda: made.append(os.getpid()) or "env", cpu=0, parent_pid=os.getpid())
    before = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    assert make() == "env" and made == [os.getpid()]
    if before is not None:
        assert os.sched_getaffinity(0) == before


def test_a_worker_that_cannot_be_pinned_still_makes_its_env(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(pid, cpus):
        raise OSError(22, "Invalid argument")

    monkeypatch.setattr(os, "sched_setaffinity", refuse, raising=False)
    make = pinned(lambda: "env", cpu=99, parent_pid=os.getpid() + 1)  # as if called in a worker
    assert make() == "env"


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_num_envs_must_be_a_positive_integer(bad) -> None:
    with pytest.raises(ValueError, match="num_envs must be a positive integer"):
        make_async("day_trader_v0", bad)


def test_an_unknown_env_is_named() -> None:
    with pytest.raises(KeyError, match="unknown env id .no_such_env_v0"):
        make_async("no_such_env_v0", 2)
