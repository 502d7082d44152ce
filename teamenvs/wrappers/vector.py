"""`make_async`: the single-agent view of a teamenvs env in Gymnasium's `AsyncVectorEnv`, one worker per CPU.

    from teamenvs.wrappers import make_async
    envs = make_async("shape_factory_v0", num_envs=2, obs_type="vector", action_type="discrete")
    observations, infos = envs.reset(seed=[0, 1])

The same `AsyncVectorEnv` a user would build with `gymnasium.make`, except that each worker process
pins itself to one CPU of those this process may use (worker i to the i-th, round robin). Why: the
parent wakes its workers through pipes, and Linux tends to queue the woken workers on the parent's
CPU, so that one worker waits for the other to finish its step while a CPU stays idle. On the 2-core
CI machine a timeline of two shape-factory workers' steps showed the second often starting only when
the first had finished; pinned, their steps overlapped in full. The `vector env` rows of
`python -m benchmarks.perf` measure what that gains, pinned and unpinned in the same run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium


def pinned(make: Callable[[], Any], cpu: int, parent_pid: int) -> Callable[[], Any]:
    """`make`, pinning the process that calls it to `cpu` first unless it is `parent_pid` (`AsyncVectorEnv`
    builds one env in the parent process too, to read the spaces: the parent must keep all its CPUs)."""

    def make_pinned() -> Any:
        if os.getpid() != parent_pid:
            try:
                os.sched_setaffinity(0, {cpu})
            except OSError:  # the CPU went away or a container forbids it: pinning only ever speeds things up
                pass
        return make()

    return make_pinned


def worker_cpus() -> Sequence[int] | None:
    """The CPUs this process may use, in order, or None where a process cannot be pinned (not Linux) or one CPU."""
    if not hasattr(os, "sched_getaffinity") or not hasattr(os, "sched_setaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    return cpus if len(cpus) > 1 else None


def worker_fns(make: Callable[[], Any], num_envs: int, pin: bool = True) -> list[Callable[[], Any]]:
    """`num_envs` env functions for `AsyncVectorEnv` from `make`, each pinning its worker to one CPU (round robin over
    this process's CPUs) when `pin` and the platform can pin, else `make` itself."""
    cpus = worker_cpus() if pin else None
    if cpus is None:
        return [make] * num_envs
    parent = os.getpid()
    return [pinned(make, cpus[i % len(cpus)], parent) for i in range(num_envs)]


def make_async(env_id: str, num_envs: int = 2, *, pin_workers: bool = True, **kwargs: Any) -> gymnasium.vector.AsyncVectorEnv:
    """`num_envs` copies of `env_id`'s single-agent view (`gymnasium.make(spec(env_id).gym_id, **kwargs)`) in an
    `AsyncVectorEnv`, each worker pinned to one CPU (round robin over this process's CPUs) unless `pin_workers`
    is false or the platform cannot pin (`worker_fns`)."""
    from teamenvs.registry import spec

    if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
    gym_id = spec(env_id).gym_id

    def make() -> Any:
        return gymnasium.make(gym_id, **kwargs)

    return gymnasium.vector.AsyncVectorEnv(worker_fns(make, num_envs, pin=pin_workers))
