"""Vector envs of the single-agent view in worker processes: `make_async` and `ProcessVectorEnv`.

    from teamenvs.wrappers import make_async
    envs = make_async("shape_factory_v0", num_envs=2, obs_type="vector", action_type="discrete")
    observations, infos = envs.reset(seed=[0, 1])
    envs = make_async("day_trader_v0", num_envs=32, workers=2, obs_type="vector", action_type="discrete")

With one env per worker (the default) this is the `AsyncVectorEnv` a user would build with
`gymnasium.make`, except that a worker that dies is named, and the vector env closed after it or after an env's error
(this module's `AsyncVectorEnv`), and that
each worker process pins itself to one CPU of those this process may use (worker i to the i-th,
round robin). Why pin: the parent wakes its workers through pipes, and Linux tends to queue the
woken workers on the parent's CPU, so that one worker waits for the other to finish its step while
a CPU stays idle. On the 2-core CI machine a timeline of two shape-factory workers' steps showed the
second often starting only when the first had finished; pinned, their steps overlapped in full.

With fewer workers than envs (`workers=2, num_envs=8`), `ProcessVectorEnv` steps several envs in
each worker process, one after another, and exchanges one message per worker and step. A
teamenvs step costs 0.1-1 ms, about what passing one step's data between processes costs, so
with one env per worker the pipes eat much of what the second CPU gains; batched, the exchange is
paid once per worker for all its envs. (SuperSuit's `concat_vec_envs_v1(..., num_cpus=2)` is
built for this, but fails with "Output array is the wrong shape" under Gymnasium 1.x:
Farama-Foundation/SuperSuit issue 259.) The `vector env` rows of `python -m benchmarks.perf`
measure both against `SyncVectorEnv`, pinned and unpinned, in the same run: with 16 envs a worker,
every env's view ran 1.57-2.21x `SyncVectorEnv` on 2 cores.

Either way each worker freezes what it holds once its envs are built (`gc.freeze`, in the worker
only): forked, it holds a copy of the parent's heap, which its garbage collector's full
collections would otherwise walk again and again (a job-fair learner step took up to 68 ms).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector.async_vector_env import AsyncState
from gymnasium.vector.utils import CloudpickleWrapper, batch_space, concatenate, create_empty_array, iterate

from teamenvs.core.config import check_flag
from teamenvs.core.env import check_reset
from teamenvs.core.text import excerpt, printable


def pin_to(cpu: int) -> None:
    """Pin the calling process to `cpu`; where the CPU went away or a container forbids it, leave it unpinned
    (pinning only ever speeds things up)."""
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        pass


def in_worker(make: Callable[[], Any], cpu: int | None, parent_pid: int) -> Callable[[], Any]:
    """`make`, in a worker process: pinning it to `cpu` first (None: not pinned), and freezing what it holds after (as
    `ProcessVectorEnv`'s workers do, see `_serve`), unless the calling process is `parent_pid` (`AsyncVectorEnv`
    builds one env in the parent process too, to read the spaces: the parent keeps all its CPUs and its collector)."""

    def make_in_worker() -> Any:
        if os.getpid() == parent_pid:
            return make()
        if cpu is not None:
            pin_to(cpu)
        env = make()
        gc.freeze()
        return env

    return make_in_worker


def worker_cpus() -> Sequence[int] | None:
    """The CPUs this process may use, in order, or None where a process cannot be pinned (not Linux) or one CPU."""
    if not hasattr(os, "sched_getaffinity") or not hasattr(os, "sched_setaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    return cpus if len(cpus) > 1 else None


def worker_fns(make: Callable[[], Any], num_envs: int, pin: bool = True) -> list[Callable[[], Any]]:
    """`num_envs` env functions for `AsyncVectorEnv` from `make`, each pinning its worker to one CPU (round robin over
    this process's CPUs) when `pin` and the platform can pin, and freezing what the worker holds (`in_worker`)."""
    cpus = worker_cpus() if pin else None
    parent = os.getpid()
    return [in_worker(make, cpus[i % len(cpus)] if cpus is not None else None, parent) for i in range(num_envs)]


def make_async(env_id: str, num_envs: int = 2, *, workers: int | None = None, pin_workers: bool = True,
               **kwargs: Any) -> gymnasium.vector.VectorEnv:
    """`num_envs` copies of `env_id`'s single-agent view (`gymnasium.make(spec(env_id).gym_id, **kwargs)`) in worker
    processes: with `workers` None (or equal to `num_envs`) Gymnasium's `AsyncVectorEnv`, one env per worker; with
    fewer workers a `ProcessVectorEnv`, the envs split evenly across them. Each worker is pinned to one CPU (round
    robin over this process's CPUs) unless `pin_workers` is false or the platform cannot pin (`worker_fns`)."""
    from teamenvs.registry import spec

    num_envs, workers = _plain(num_envs), _plain(workers)  # (a sweep's numpy integers)
    if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive integer, got {excerpt(num_envs)}")
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= num_envs):
        raise ValueError(f"workers must be an integer from 1 to num_envs ({num_envs}), got {excerpt(workers)}")
    check_flag("pin_workers", pin_workers)
    gym_id = spec(env_id).gym_id
    teammates = kwargs.get("teammates")
    if (workers is not None and workers < num_envs and isinstance(teammates, Mapping)
            and not any(isinstance(v, str) for v in teammates.values())):
        # each worker unpickles its envs' functions once: its envs would share the teammate objects, and the view
        # refuses objects that play in two episodes at once
        raise ValueError(f"teammate policy objects cannot be shared by the {num_envs // workers} or more envs of a worker: pass "
                         f"baseline names, or workers=None (one env, and one copy of the objects, per worker), or build "
                         f"ProcessVectorEnv with env functions that make the teammates")

    # vector envs stack infos key by key, which the nested view of a text info does not allow
    kwargs.setdefault("flat_info", True)

    def make() -> Any:
        return gymnasium.make(gym_id, **kwargs)

    if workers is None or workers == num_envs:
        # text cannot travel through shared memory (see teamenvs.core.text); arrays alone can
        shared = kwargs.get("obs_type", "text") == "vector"
        return AsyncVectorEnv(worker_fns(make, num_envs, pin=pin_workers), shared_memory=shared)
    return ProcessVectorEnv([make] * num_envs, workers, pin_workers=pin_workers)


def ended(process: Any) -> str:
    """How a worker process that stopped answering ended, for an error message."""
    process.join(1.0)
    code = process.exitcode
    if code is None:
        return "stopped answering (its pipe closed)"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        # (SIGKILL is also what Linux's out-of-memory killer sends)
        return f"was killed by {name}" + (" (out of memory?)" if -code == signal.SIGKILL else "")
    return f"exited with code {code}"


_LOST = (BrokenPipeError, EOFError, ConnectionResetError)  # what a call to a dead worker's pipe raises


def _saying_which_worker_died(method: Callable[..., Any]) -> Callable[..., Any]:
    def call(self: "AsyncVectorEnv", *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except _LOST:
            deadline = time.monotonic() + 1.0  # (a pipe may break a moment before its process is seen to have ended)
            while not (dead := [(i, p) for i, p in enumerate(self.processes) if not p.is_alive()]) and time.monotonic() < deadline:
                time.sleep(0.01)
            if not dead:
                raise
            i, process = dead[0]
            how = ended(process)
            self.close(terminate=True)
            raise RuntimeError(f"AsyncVectorEnv worker {i} (env {i}) {how}: its env is lost, and the vector env is now "
                               f"closed (make it again to go on)") from None
        except Exception:
            # an env's error: Gymnasium has dropped that worker's pipe (None), so its next call would fail on None;
            # closed now, the next call says the vector env is closed
            if any(pipe is None for pipe in self.parent_pipes) and not self.closed:
                self.close(terminate=True)
            raise

    call.__name__, call.__doc__ = method.__name__, method.__doc__
    return call


class AsyncVectorEnv(gymnasium.vector.AsyncVectorEnv):
    """Gymnasium's `AsyncVectorEnv` (what `make_async` gives with one env per worker) that says which worker died, and
    how, when one does (killed, say, by the out-of-memory killer): Gymnasium's raises a bare BrokenPipeError or
    EOFError at the next call, and again at `close`. Here that call raises a RuntimeError naming the worker, the
    other workers are stopped, and `close` then succeeds. After an env's error (raised as it is) the vector env is
    closed too: Gymnasium has dropped that worker's pipe, so its next call would fail on None."""

    reset_async = _saying_which_worker_died(gymnasium.vector.AsyncVectorEnv.reset_async)
    reset_wait = _saying_which_worker_died(gymnasium.vector.AsyncVectorEnv.reset_wait)
    step_async = _saying_which_worker_died(gymnasium.vector.AsyncVectorEnv.step_async)
    step_wait = _saying_which_worker_died(gymnasium.vector.AsyncVectorEnv.step_wait)
    call_async = _saying_which_worker_died(gymnasium.vector.AsyncVectorEnv.call_async)
    call_wait = _saying_which_worker_died(gymnasium.vector.AsyncVectorEnv.call_wait)
    set_attr = _saying_which_worker_died(gymnasium.vector.AsyncVectorEnv.set_attr)

    def close_extras(self, timeout: float | None = None, terminate: bool = False) -> None:
        if any(not process.is_alive() for process in self.processes):
            # a dead worker answers nothing: what was pending is dropped, and the live workers are stopped
            self._state = AsyncState.DEFAULT
            terminate = True
        super().close_extras(timeout, terminate)


def _plain(value: Any) -> Any:
    """A numpy integer as the Python int it holds (anything else as it is, for the checks to judge)."""
    return int(value) if isinstance(value, np.integer) else value


def _split(n: int, parts: int) -> list[tuple[int, int]]:
    """`range(n)` cut into `parts` runs of sizes differing by at most one, as (start, end) pairs."""
    return [(n * k // parts, n * (k + 1) // parts) for k in range(parts)]


class _Share:
    """What a worker batches its envs' results with: Gymnasium's vector info format (`VectorEnv._add_info` reads
    only `num_envs`) and observation batching, for the worker's share of the envs."""

    def __init__(self, space: gymnasium.spaces.Space, num_envs: int) -> None:
        self.space, self.num_envs = space, num_envs

    _add_info = gymnasium.vector.VectorEnv._add_info

    def batch(self, observations: list[Any]) -> Any:
        return concatenate(self.space, observations, create_empty_array(self.space, self.num_envs))

    def infos(self, infos: Sequence[dict[str, Any] | None]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for i, info in enumerate(infos):
            if info is not None:
                out = self._add_info(out, info, i)
        return out


def _serve(env_fns: CloudpickleWrapper, pipe: Any, parent_end: Any, cpu: int | None) -> None:
    """A worker process of `ProcessVectorEnv`: builds its envs, then answers each command with ("ok", result) or
    ("error", why, traceback) until "close". Steps reset an env whose episode ended on the step before (Gymnasium's
    next-step autoreset), as `SyncVectorEnv` does. Results go back batched for the worker's share (observations,
    arrays, vector infos), so that the parent joins a few arrays per worker instead of handling every env."""
    parent_end.close()
    if cpu is not None:
        pin_to(cpu)
    envs: list[Any] = []
    try:
        envs = [fn() for fn in env_fns.fn]
        # what the worker inherited and built lives as long as it serves: out of the garbage collector's full
        # collections, which then walk only what its episodes make (walking it all, a job-fair learner step took up to
        # 68 ms and the steps varied four times as much, which a lockstep vector step waits for); this worker's only
        gc.freeze()
        share = _Share(envs[0].observation_space, len(envs))
        pipe.send(("ok", [(env.observation_space, env.action_space) for env in envs]))  # for the parent to compare
        ended = [False] * len(envs)
        last: list[Any] = [None] * len(envs)
        while True:
            command, data = pipe.recv()
            try:
                if command == "reset":
                    seeds, options, chosen = data
                    infos: list[Any] = [None] * len(envs)
                    for i, env in enumerate(envs):
                        if chosen is None or chosen[i]:
                            last[i], infos[i] = env.reset(seed=seeds[i], options=options)
                            ended[i] = False
                    pipe.send(("ok", (share.batch(last), share.infos(infos))))
                elif command == "step":
                    rewards = np.zeros(len(envs), dtype=np.float64)
                    terminations = np.zeros(len(envs), dtype=np.bool_)
                    truncations = np.zeros(len(envs), dtype=np.bool_)
                    infos = []
                    for i, (env, action) in enumerate(zip(envs, data)):
                        if ended[i]:
                            last[i], info = env.reset()
                        else:
                            last[i], rewards[i], terminations[i], truncations[i], info = env.step(action)
                        ended[i] = bool(terminations[i] or truncations[i])
                        infos.append(info)
                    pipe.send(("ok", (share.batch(last), rewards, terminations, truncations, share.infos(infos))))
                elif command == "call":  # as SyncVectorEnv.call: a method's results, or an attribute's value
                    name, args, kwargs = data
                    results = []
                    for env in envs:
                        function = env.get_wrapper_attr(name)
                        results.append(function(*args, **kwargs) if callable(function) else function)
                    pipe.send(("ok", results))
                elif command == "set_attr":
                    name, values = data
                    for env, value in zip(envs, values):
                        env.set_wrapper_attr(name, value)
                    pipe.send(("ok", None))
                elif command == "close":
                    pipe.send(("ok", None))
                    return
                else:
                    raise ValueError(f"unknown command {command!r}")
            except Exception as exc:  # the parent raises it; the worker stays up for close()
                pipe.send(("error", f"{type(exc).__name__}: {exc}", traceback.format_exc()))
    except (EOFError, KeyboardInterrupt, BrokenPipeError):  # the parent went away
        pass
    except Exception as exc:  # building an env failed
        try:
            pipe.send(("error", f"{type(exc).__name__}: {exc}", traceback.format_exc()))
        except (BrokenPipeError, OSError):
            pass
    finally:
        for env in envs:
            try:
                env.close()
            except Exception:
                pass


def _space_text(space: gymnasium.spaces.Space) -> str:
    """A space in a few words for an error: its kind and shape (a Box's bounds can be hundreds of numbers)."""
    if isinstance(space, gymnasium.spaces.Dict):
        return "Dict(" + ", ".join(f"{key}: {_space_text(sub)}" for key, sub in space.spaces.items()) + ")"
    if isinstance(space, gymnasium.spaces.Discrete):
        return f"Discrete({int(space.n)})"
    shape = getattr(space, "shape", None)
    return f"{type(space).__name__}{tuple(shape)}" if shape is not None else type(space).__name__


def _join(space: gymnasium.spaces.Space, parts: Sequence[Any]) -> Any:
    """The batches of consecutive shares of the envs, as one batch of `space` (Gymnasium's batched layout)."""
    if isinstance(space, gymnasium.spaces.Dict):
        return {key: _join(sub, [part[key] for part in parts]) for key, sub in space.spaces.items()}
    if isinstance(space, gymnasium.spaces.Tuple):
        return tuple(_join(sub, [part[i] for part in parts]) for i, sub in enumerate(space.spaces))
    if isinstance(parts[0], np.ndarray):
        return np.concatenate(parts)
    return tuple(item for part in parts for item in part)  # spaces batched as a tuple of items (Text, Graph, ...)


def _join_infos(parts: Sequence[dict[str, Any]], shares: Sequence[tuple[int, int]], num_envs: int) -> dict[str, Any]:
    """Vector infos of consecutive shares of the envs, as the vector infos of all (`VectorEnv._add_info`'s format:
    each key an array over the envs, with its `_key` mask; a key missing from a share is unset (mask False) there)."""
    out: dict[str, Any] = {}
    # keys in the order they are first met, as `SyncVectorEnv` adds them env after env (never a set's order, which
    # would follow the process's string hashes)
    for key in dict.fromkeys(key for part in parts for key in part):
        values = [part.get(key) for part in parts]
        if any(isinstance(value, dict) for value in values):  # nested infos
            out[key] = _join_infos([value if isinstance(value, dict) else {} for value in values], shares, num_envs)
            out.setdefault(f"_{key}", np.zeros(num_envs, dtype=np.bool_))
            continue
        for value, (start, end) in zip(values, shares):
            if value is None:
                continue
            array = out.get(key)
            if array is None:
                array = out[key] = (np.full(num_envs, None, dtype=object) if value.dtype == object
                                    else np.zeros((num_envs, *value.shape[1:]), dtype=value.dtype))
            array[start:end] = value
    return out


class ProcessVectorEnv(gymnasium.vector.VectorEnv):
    """`len(env_fns)` envs in `workers` processes, each stepping its share one env after another: the same
    observations, rewards, terminations, truncations and infos (Gymnasium's vector format) as `SyncVectorEnv` of
    the same env functions, with next-step autoreset, at one exchange between processes per worker and step.

    A worker whose env raises makes the call raise `RuntimeError` naming the worker, its envs and the error (the
    worker's traceback is the exception's note); a worker that died makes it raise too. Either way the vector env
    is closed, but for an error of `call`, `get_attr` or `set_attr` (a name that is not there, say), which leaves it
    open. A call stopped half way (an interrupt while it waits, an action that cannot be pickled) closes it too: the
    workers' unread answers would be taken for a later call's. Each worker is pinned to one CPU, round robin, unless `pin_workers` is false or the platform
    cannot pin (`worker_cpus`).
    """

    def __init__(self, env_fns: Sequence[Callable[[], Any]], workers: int = 2, *, pin_workers: bool = True,
                 context: str | None = None) -> None:
        env_fns, workers = list(env_fns), _plain(workers)
        if not env_fns:
            raise ValueError("ProcessVectorEnv needs at least one env function")
        if not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= len(env_fns):
            raise ValueError(f"workers must be an integer from 1 to the number of envs ({len(env_fns)}), got {excerpt(workers)}")
        check_flag("pin_workers", pin_workers)
        probe = env_fns[0]()  # the spaces and metadata, read in this process (as AsyncVectorEnv does)
        try:
            self.single_observation_space = probe.observation_space
            self.single_action_space = probe.action_space
            self.metadata = {**probe.metadata, "autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP}
            self.render_mode = probe.render_mode
        finally:
            probe.close()
        self.num_envs = len(env_fns)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.shares = _split(self.num_envs, workers)
        cpus = worker_cpus() if pin_workers else None
        ctx = multiprocessing.get_context(context)
        self._pipes: list[Any] = []
        self._processes: list[Any] = []
        self.closed = False
        self._pending = False  # messages sent whose answers are not all read yet (`_exchange`)
        self._closed_why = ""  # why it was closed, where a later call should be told
        for w, (start, end) in enumerate(self.shares):
            mine, theirs = ctx.Pipe()
            process = ctx.Process(target=_serve, name=f"ProcessVectorEnv-{w}", daemon=True,
                                  args=(CloudpickleWrapper(env_fns[start:end]), theirs, mine, cpus[w % len(cpus)] if cpus else None))
            process.start()
            theirs.close()
            self._pipes.append(mine)
            self._processes.append(process)
        built = [spaces for share in self._receive() for spaces in share]  # every worker built its envs
        for i, (observation_space, action_space) in enumerate(built):
            # as SyncVectorEnv refuses them: the batches of unlike spaces would not join (numpy's error, at the first step)
            if observation_space != self.single_observation_space or action_space != self.single_action_space:
                self.close(terminate=True)
                which, theirs, first = (("observation", observation_space, self.single_observation_space)
                                        if observation_space != self.single_observation_space else
                                        ("action", action_space, self.single_action_space))
                raise ValueError(f"ProcessVectorEnv's envs must all have the same observation and action spaces, as "
                                 f"SyncVectorEnv's: env {i}'s {which} space is {_space_text(theirs)}, the first env's "
                                 f"{_space_text(first)}")

    def _receive(self, close_on_error: bool = True) -> list[Any]:
        """Each worker's answer, in order; raises if a worker failed or died, and closes the vector env if one died or
        (`close_on_error`) an env's error may have left the envs out of step with each other."""
        answers, failure, died = [], None, False
        for w, pipe in enumerate(self._pipes):
            start, end = self.shares[w]
            try:
                answer = pipe.recv()
            except (EOFError, ConnectionError):  # (not any OSError: a signal handler's TimeoutError is no dead worker)
                failure = failure or (f"ProcessVectorEnv worker {w} (envs {start}-{end - 1}) {ended(self._processes[w])}", None)
                died = True
                continue
            if answer[0] == "error":  # an env's error may quote what an agent sent: made safe to print
                failure = failure or (f"ProcessVectorEnv worker {w} (envs {start}-{end - 1}) failed: "
                                      f"{printable(answer[1], keep_newlines=False)}", printable(answer[2]))
                continue
            answers.append(answer[1])
        self._pending = False
        if failure is not None:
            if died or close_on_error:
                self.close(terminate=True)
            error = RuntimeError(failure[0])
            if failure[1]:
                error.add_note(failure[1])
            raise error
        return answers

    def _exchange(self, messages: Sequence[Any], close_on_error: bool = True) -> list[Any]:
        """Send each worker its message and read every answer (`_receive`). An exchange is never left half done: where
        something stops it between the two (an interrupt while waiting, a message that cannot be pickled after others
        were sent), answers would stay in the pipes for later calls to read as their own, one step late for good, so
        the vector env is closed (at once) and the exception raised."""
        if self.closed:
            raise RuntimeError(f"this ProcessVectorEnv is closed{self._closed_why}")
        self._pending = True
        try:
            self._send(messages)
            return self._receive(close_on_error)
        except BaseException as exc:
            if self._pending and not self.closed:
                self.close(terminate=True)
                self._closed_why = (f" (a call was stopped half way by {type(exc).__name__}, which left its workers' "
                                    f"answers unread: make it again to go on)")
            raise

    def _send(self, messages: Sequence[Any]) -> None:
        for w, (pipe, message) in enumerate(zip(self._pipes, messages)):
            try:
                pipe.send(message)
            except (EOFError, ConnectionError):
                start, end = self.shares[w]
                how = ended(self._processes[w])
                self.close(terminate=True)
                raise RuntimeError(f"ProcessVectorEnv worker {w} (envs {start}-{end - 1}) {how}") from None

    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None):
        """Reset every env (seeds as `SyncVectorEnv` takes them: None, an int for `seed + i`, or one per env);
        `options["reset_mask"]` (a bool array) resets only the envs it marks."""
        if seed is None:
            seeds: list[int | None] = [None] * self.num_envs
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"If seeds are passed as a list the length must match num_envs={self.num_envs} but got length={len(seeds)}.")
        for one in seeds:  # refused here, as SyncVectorEnv's envs refuse them, not by a worker (which closes the vector env)
            check_reset(one, options)
        options = dict(options) if options is not None else None
        chosen = None
        if options is not None and "reset_mask" in options:
            chosen = np.asarray(options.pop("reset_mask"))
            if chosen.shape != (self.num_envs,) or chosen.dtype != np.bool_ or not chosen.any():
                raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},) with at least one True")
        answers = self._exchange([("reset", (seeds[s:e], options, None if chosen is None else chosen[s:e].tolist())) for s, e in self.shares])
        return (_join(self.single_observation_space, [a[0] for a in answers]),
                _join_infos([a[1] for a in answers], self.shares, self.num_envs))

    def step(self, actions: Any):
        if isinstance(actions, np.ndarray) and actions.shape[:1] == (self.num_envs,):
            split: Any = actions  # a batched Discrete, MultiDiscrete or Box action: one array slice per worker
        else:
            split = list(iterate(self.action_space, actions))
            if len(split) != self.num_envs:
                raise ValueError(f"step() takes one action per env ({self.num_envs}), got {len(split)}")
        answers = self._exchange([("step", split[s:e]) for s, e in self.shares])
        return (_join(self.single_observation_space, [a[0] for a in answers]),
                *(np.concatenate([a[k] for a in answers]) for k in (1, 2, 3)),
                _join_infos([a[4] for a in answers], self.shares, self.num_envs))

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call method `name` of every env (or read attribute `name`), as `SyncVectorEnv.call`: one result per env."""
        # a method or attribute that is not there (a typo) leaves the envs as they were: the vector env stays open
        return tuple(result for share in self._exchange([("call", (name, args, kwargs))] * len(self.shares), close_on_error=False)
                     for result in share)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Attribute `name` of every env."""
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> None:
        """Set attribute `name` of every env: one value per env (a list or tuple), or one value for all."""
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(f"set_attr takes one value per env ({self.num_envs}) or one for all, got {len(values)}")
        # (as SyncVectorEnv, the envs before the failing one keep their new value)
        self._exchange([("set_attr", (name, list(values[s:e]))) for s, e in self.shares], close_on_error=False)

    def close(self, terminate: bool = False) -> None:
        """Stop the workers (at once with `terminate`, else after they close their envs)."""
        if self.closed:
            return
        self.closed = True
        if not terminate:
            for pipe in self._pipes:
                try:
                    pipe.send(("close", None))
                except (BrokenPipeError, OSError):
                    pass
            for pipe in self._pipes:
                try:
                    if pipe.poll(5.0):
                        pipe.recv()
                except (EOFError, OSError):
                    pass
        for process in self._processes:
            process.join(0 if terminate else 5.0)
            if process.is_alive():
                process.terminate()
                process.join(1.0)
        for pipe in self._pipes:
            pipe.close()

    def __del__(self) -> None:
        if not getattr(self, "closed", True):
            try:
                self.close(terminate=True)
            except Exception:
                pass
