"""`teamenvs.wrappers.make_async`: the single-agent view in `AsyncVectorEnv`, each worker pinned to one CPU, and in
`ProcessVectorEnv`, several envs per worker process."""

from __future__ import annotations

import os

import gymnasium
import numpy as np
import pytest

import teamenvs
from teamenvs.wrappers import ProcessVectorEnv, make_async
from teamenvs.wrappers import vector
from teamenvs.wrappers.vector import in_worker, worker_cpus

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


def test_in_worker_leaves_the_parent_process_alone() -> None:
    import gc

    made = []
    make = in_worker(lambda: made.append(os.getpid()) or "env", cpu=0, parent_pid=os.getpid())
    before = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    frozen = gc.get_freeze_count()
    assert make() == "env" and made == [os.getpid()]
    if before is not None:
        assert os.sched_getaffinity(0) == before
    assert gc.get_freeze_count() == frozen  # no freeze in the parent either


def test_a_worker_that_cannot_be_pinned_still_makes_its_env(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(pid, cpus):
        raise OSError(22, "Invalid argument")

    monkeypatch.setattr(os, "sched_setaffinity", refuse, raising=False)
    froze = []
    monkeypatch.setattr(vector.gc, "freeze", lambda: froze.append(1))  # (this test's process is not a worker to freeze)
    make = in_worker(lambda: "env", cpu=99, parent_pid=os.getpid() + 1)  # as if called in a worker
    assert make() == "env" and froze == [1]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2", np.int64(0), np.float64(2.0)])
def test_num_envs_must_be_a_positive_integer(bad) -> None:
    with pytest.raises(ValueError, match="num_envs must be a positive integer"):
        make_async("day_trader_v0", bad)


def test_numpy_integers_count_envs_and_workers() -> None:
    """A sweep's np.int64 is the number it holds, as for config values."""
    envs = make_async("day_trader_v0", np.int64(4), workers=np.int64(2), obs_type="vector", action_type="discrete")
    try:
        assert envs.num_envs == 4 and type(envs.num_envs) is int and len(envs.shares) == 2
    finally:
        envs.close()


@pytest.mark.parametrize("bad", ["no", 0, None, "False"])
def test_pin_workers_must_be_true_or_false(bad) -> None:
    """A flag given as text ("no") is truthy: it would quietly pin the workers it meant not to."""
    with pytest.raises(ValueError, match="pin_workers must be true or false"):
        make_async("day_trader_v0", 2, pin_workers=bad)
    with pytest.raises(ValueError, match="pin_workers must be true or false"):
        make_async("day_trader_v0", 4, workers=2, pin_workers=bad)
    with pytest.raises(ValueError, match="pin_workers must be true or false"):
        ProcessVectorEnv([Failing] * 2, 1, pin_workers=bad)


def test_an_unknown_env_is_named() -> None:
    with pytest.raises(KeyError, match="unknown env id .no_such_env_v0"):
        make_async("no_such_env_v0", 2)


def same(a, b) -> bool:
    """Equal batches or vector infos: the same keys, shapes, dtypes and values."""
    if isinstance(a, dict):
        return isinstance(b, dict) and set(a) == set(b) and all(same(a[k], b[k]) for k in a)
    return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)


@pytest.mark.parametrize("env_id", ["day_trader_v0", "commons_v0"])
def test_process_vector_env_plays_what_sync_vector_env_plays(env_id) -> None:
    """5 envs in 2 workers (shares of 2 and 3) against SyncVectorEnv of the same 5: the same observations, rewards,
    terminations, truncations and vector infos every step, through episode ends (next-step autoreset) and a
    reset of some envs only (`reset_mask`)."""
    gym_id = teamenvs.spec(env_id).gym_id

    def make():
        return gymnasium.make(gym_id, obs_type="vector", action_type="discrete")

    sync = gymnasium.vector.SyncVectorEnv([make] * 5)
    workers = make_async(env_id, 5, workers=2, obs_type="vector", action_type="discrete")
    assert isinstance(workers, ProcessVectorEnv) and workers.shares == [(0, 2), (2, 5)]
    assert workers.observation_space == sync.observation_space and workers.action_space == sync.action_space
    try:
        first, second = sync.reset(seed=7), workers.reset(seed=7)
        assert same(first[0], second[0]) and same(first[1], second[1])
        rng = np.random.default_rng(0)
        infos, ended = first[1], 0
        for step in range(400):
            actions = (rng.random(infos["action_mask"].shape) * infos["action_mask"]).argmax(axis=1)
            expected, got = sync.step(actions), workers.step(actions)
            for a, b in zip(expected, got):
                assert same(a, b), step
            infos = expected[4]
            ended += int(expected[2].sum() + expected[3].sum())
            if step == 200:
                mask = np.array([True, False, False, True, False])
                first = sync.reset(seed=[1, 2, 3, 4, 5], options={"reset_mask": mask.copy()})
                second = workers.reset(seed=[1, 2, 3, 4, 5], options={"reset_mask": mask.copy()})
                assert same(first[0], second[0]) and same(first[1], second[1])
                masks = infos["action_mask"].copy()
                masks[mask] = first[1]["action_mask"][mask]  # the envs not reset keep their masks
                infos = {"action_mask": masks}
        assert ended > 0  # episodes ended and were reset on the next step
    finally:
        sync.close()
        workers.close()



def key_order(infos: dict, prefix: str = "") -> list[str]:
    out = []
    for key, value in infos.items():
        out.append(prefix + key)
        if isinstance(value, dict):
            out += key_order(value, prefix + key + ".")
    return out


def test_process_vector_env_infos_keep_sync_vector_env_s_key_order() -> None:
    """Nested infos (`flat_info=False`) joined from the workers' shares: their keys came out in a set's order, which
    follows the process's string hashes (PYTHONHASHSEED), after every flat key. They keep SyncVectorEnv's order now."""
    gym_id = teamenvs.spec("shape_factory_v0").gym_id
    sync = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make(gym_id, flat_info=False)] * 4)
    workers = make_async("shape_factory_v0", 4, workers=2, flat_info=False)
    try:
        expected, got = sync.reset(seed=0)[1], workers.reset(seed=0)[1]
        assert any(isinstance(v, dict) for v in got["view"].values())  # nested below nested
        assert key_order(got) == key_order(expected)
    finally:
        sync.close()
        workers.close()


class Failing(gymnasium.Env):
    """An env whose step raises at `fail_at`, or whose process exits there (`exit=True`)."""

    observation_space = gymnasium.spaces.Box(0, 1, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, fail_at: int = 3, exit: bool = False) -> None:
        self.fail_at, self.exit, self.t = fail_at, exit, 0

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        if self.t == self.fail_at:
            if self.exit:
                os._exit(3)
            raise ValueError("the rubble fell on the engineer\x1b[2J")
        return np.zeros(2, np.float32), 0.0, False, False, {}


def test_a_worker_error_is_raised_in_the_parent_with_its_worker_and_envs() -> None:
    envs = ProcessVectorEnv([Failing] * 4, 2)
    envs.reset(seed=0)
    envs.step(np.zeros(4, np.int64))
    envs.step(np.zeros(4, np.int64))
    with pytest.raises(RuntimeError, match=r"worker 0 \(envs 0-1\) failed: ValueError: the rubble fell on the engineer") as raised:
        envs.step(np.zeros(4, np.int64))
    notes = "".join(getattr(raised.value, "__notes__", []))
    assert "Traceback" in notes and "\x1b" not in str(raised.value) + notes  # the env's text is escaped, not sent to the terminal
    assert envs.closed and not any(p.is_alive() for p in envs._processes)
    with pytest.raises(RuntimeError, match="is closed"):
        envs.step(np.zeros(4, np.int64))


def test_a_call_stopped_half_way_closes_the_vector_env_instead_of_reading_stale_answers_later() -> None:
    """Found by review: an action that cannot be pickled for worker 1 after worker 0's was sent (or an interrupt while
    waiting) left worker 0's answer in its pipe, and every later step read the answer of the step before, silently."""
    def commons():
        return gymnasium.make("teamenvs/Commons-v0", obs_type="vector", action_type="discrete")

    envs = ProcessVectorEnv([commons, commons], 2)
    envs.reset(seed=0)
    with pytest.raises(Exception) as raised:
        envs.step([1, lambda: 0])  # env 1's action cannot be pickled
    assert not isinstance(raised.value, RuntimeError)  # the pickling error itself
    assert envs.closed and not any(p.is_alive() for p in envs._processes)
    with pytest.raises(RuntimeError, match="is closed \\(a call was stopped half way by .*make it again to go on\\)"):
        envs.step(np.array([10, 10]))


def test_after_an_env_error_gymnasium_s_async_vector_env_is_closed_not_left_with_a_dropped_pipe() -> None:
    # found by review: Gymnasium drops the failed worker's pipe, so the next step failed with "'NoneType' object has
    # no attribute 'send'"; now the error is raised and the vector env closed, and the next call says so
    from gymnasium.error import ClosedEnvironmentError

    envs = vector.AsyncVectorEnv([Failing] * 2)
    envs.reset(seed=0)
    envs.step(np.zeros(2, np.int64))
    envs.step(np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="the rubble fell on the engineer"):
        envs.step(np.zeros(2, np.int64))
    assert envs.closed
    with pytest.raises(ClosedEnvironmentError):
        envs.step(np.zeros(2, np.int64))


def test_a_worker_that_dies_is_reported_not_waited_for() -> None:
    envs = ProcessVectorEnv([lambda: Failing(fail_at=1, exit=True)] * 2, 2)
    envs.reset(seed=0)
    with pytest.raises(RuntimeError, match=r"worker 0 \(envs 0-0\) exited with code 3"):
        envs.step(np.zeros(2, np.int64))
    assert envs.closed


@pytest.mark.parametrize("workers, call", [(None, "step"), (None, "reset"), (None, "call"), (None, "step_wait"),
                                           (1, "step"), (1, "reset"), (1, "call")])
def test_a_worker_killed_from_outside_is_named_and_the_vector_env_closes(workers, call) -> None:
    """A worker killed (by the out-of-memory killer, say): Gymnasium's AsyncVectorEnv raised a bare BrokenPipeError or
    EOFError at the next call and again at close(), which left the other worker running."""
    import signal

    envs = make_async("day_trader_v0", 2, workers=workers, obs_type="vector", action_type="discrete")
    processes = envs._processes if isinstance(envs, ProcessVectorEnv) else envs.processes
    envs.reset(seed=0)
    if call == "step_wait":
        envs.step_async(np.zeros(2, np.int64))
    os.kill(processes[0].pid, signal.SIGKILL)
    processes[0].join(5)
    calls = {"step": lambda: envs.step(np.zeros(2, np.int64)), "reset": lambda: envs.reset(seed=1),
             "call": lambda: envs.call("step_count"),
             # the worker may have sent its step's result before it was killed: then the next step raises
             "step_wait": lambda: (envs.step_wait(), envs.step(np.zeros(2, np.int64)))}
    kind = "ProcessVectorEnv" if workers == 1 else "AsyncVectorEnv"
    with pytest.raises(RuntimeError, match=rf"{kind} worker 0 \(envs? 0(-1)?\) was killed by SIGKILL \(out of memory\?\)"):
        calls[call]()
    envs.close()  # raised BrokenPipeError again
    assert envs.closed and not any(p.is_alive() for p in processes)


def test_an_env_that_cannot_be_built_in_a_worker_is_reported() -> None:
    built = []

    def make():  # builds in the parent (to read the spaces), fails in the worker
        if built:
            raise OSError("no such map file")
        built.append(1)
        return Failing()

    with pytest.raises(RuntimeError, match=r"worker 0 \(envs 0-1\) failed: OSError: no such map file"):
        ProcessVectorEnv([make] * 2, 1, context="fork")


@pytest.mark.skipif(not PINNABLE, reason="needs a platform that pins processes to CPUs, and two CPUs")
def test_process_vector_env_workers_are_pinned_round_robin() -> None:
    before = os.sched_getaffinity(0)
    cpus = sorted(before)
    envs = make_async("day_trader_v0", 6, workers=3, obs_type="vector", action_type="discrete")
    unpinned = make_async("day_trader_v0", 4, workers=2, pin_workers=False, obs_type="vector", action_type="discrete")
    try:
        assert [os.sched_getaffinity(p.pid) for p in envs._processes] == [{cpus[i % len(cpus)]} for i in range(3)]
        assert all(os.sched_getaffinity(p.pid) == before for p in unpinned._processes)
        assert os.sched_getaffinity(0) == before
    finally:
        envs.close()
        unpinned.close()


@pytest.mark.parametrize("workers", [0, 5, 1.5, True, "2"])
def test_workers_must_be_between_one_and_num_envs(workers) -> None:
    with pytest.raises(ValueError, match=r"workers must be an integer from 1 to num_envs \(4\)"):
        make_async("day_trader_v0", 4, workers=workers)


def test_as_many_workers_as_envs_is_async_vector_env() -> None:
    envs = make_async("day_trader_v0", 2, workers=2, obs_type="vector", action_type="discrete")
    try:
        assert isinstance(envs, gymnasium.vector.AsyncVectorEnv)
    finally:
        envs.close()


def test_text_observations_are_batched_as_tuples() -> None:
    envs = make_async("commons_v0", 3, workers=2)
    try:
        observations, infos = envs.reset(seed=0)
        assert isinstance(observations, tuple) and len(observations) == 3 and all(isinstance(o, str) for o in observations)
    finally:
        envs.close()


def test_one_action_per_env_or_a_clear_error() -> None:
    envs = ProcessVectorEnv([Failing] * 4, 2)
    try:
        envs.reset(seed=0)
        for wrong in (np.zeros(3, np.int64), [0, 0, 0, 0, 0]):
            with pytest.raises(ValueError, match=r"one action per env \(4\)"):
                envs.step(wrong)
        assert envs.step([0, 1, 0, 1])[1].shape == (4,)  # a list works too
    finally:
        envs.close()


def test_a_bad_seed_is_refused_in_the_parent_and_the_workers_go_on() -> None:
    """A worker's error closes the vector env; a seed its envs would refuse is refused before it reaches them."""
    envs = ProcessVectorEnv([Failing] * 4, 2)
    try:
        for seed, says in ((-1, "got -1"), ([0, 1, "2", 3], "got '2'"), ([0, 1, 2, 3.5], "got 3.5")):
            with pytest.raises((TypeError, ValueError), match=r"reset\(seed=\.\.\.\) takes a non-negative integer or None, " + says):
                envs.reset(seed=seed)
        with pytest.raises(TypeError, match=r"reset\(options=\.\.\.\) takes a dict or None"):
            envs.reset(seed=0, options="fast")
        assert not envs.closed
        assert envs.reset(seed=0)[0].shape[0] == 4 and envs.step([0, 1, 0, 1])[1].shape == (4,)
    finally:
        envs.close()


def test_envs_of_unlike_spaces_are_refused_when_built() -> None:
    """As SyncVectorEnv refuses them; the workers' batches would not join (numpy's error at the first reset), and the
    spaces are named in a few words, not their bounds."""
    def numeric(**config):
        return lambda: gymnasium.make("teamenvs/DayTrader-v0", obs_type="vector", action_type="discrete", **config)

    for fns in ([numeric(), numeric(n_agents=6)], [numeric(), numeric(), numeric(n_agents=6), numeric(n_agents=6)]):
        with pytest.raises(ValueError, match=r"must all have the same observation and action spaces, as SyncVectorEnv's: "
                                             r"env \d's observation space is Dict\(action_mask: Box\(14,\), observation: Box\(96,\)\), "
                                             r"the first env's Dict\(action_mask: Box\(14,\), observation: Box\(51,\)\)"):
            ProcessVectorEnv(fns, 2)
    envs = ProcessVectorEnv([numeric()] * 4, 2)  # like spaces, built apart, are alike
    try:
        assert envs.reset(seed=0)[0]["observation"].shape == (4, 51)
    finally:
        envs.close()


class Counting(Failing):
    """An env that says how many objects its process's garbage collector has frozen."""

    def frozen(self) -> int:
        import gc

        return gc.get_freeze_count()


def test_process_vector_env_workers_freeze_what_they_hold_and_the_parent_does_not() -> None:
    """Each worker takes what it inherited and built out of the collector's full collections (`gc.freeze`), which
    otherwise walk the parent's whole heap (copied into the worker) again and again; the parent is left alone."""
    import gc

    before = gc.get_freeze_count()
    envs = ProcessVectorEnv([Counting] * 3, workers=2)
    try:
        counts = envs.call("frozen")
        assert len(counts) == 3 and all(count > 1000 for count in counts), counts
        assert gc.get_freeze_count() == before
        envs.reset(seed=0)
        envs.step(np.zeros(3, dtype=np.int64))  # and the envs still play
    finally:
        envs.close()


@pytest.mark.parametrize("pin", [True, False])
def test_async_vector_env_workers_freeze_what_they_hold_and_the_parent_does_not(pin) -> None:
    """`make_async`'s env functions (`worker_fns`) freeze what a worker holds once its env is built, pinned or not;
    `AsyncVectorEnv` also builds one env in the parent, which they leave alone."""
    import gc

    from teamenvs.wrappers.vector import worker_fns

    before = gc.get_freeze_count()
    envs = gymnasium.vector.AsyncVectorEnv(worker_fns(Counting, 2, pin=pin))
    try:
        counts = envs.call("frozen")
        assert len(counts) == 2 and all(count > 1000 for count in counts), counts
        assert gc.get_freeze_count() == before
    finally:
        envs.close()


def test_call_get_attr_and_set_attr_reach_every_env_in_order() -> None:
    envs = make_async("commons_v0", 3, workers=2, obs_type="vector", action_type="discrete")
    try:
        envs.reset(seed=0)
        assert envs.get_attr("agent") == ("fisher_1",) * 3
        envs.set_attr("skip_idle", [True, False, True])
        assert envs.get_attr("skip_idle") == (True, False, True)
        briefings = envs.call("briefing")
        assert len(briefings) == 3 and all(isinstance(b, str) and "fisher_1" in b for b in briefings)
        with pytest.raises(ValueError, match=r"one value per env \(3\)"):
            envs.set_attr("skip_idle", [True])
        with pytest.raises(RuntimeError, match="worker 0 .* failed: AttributeError"):
            envs.get_attr("no_such_attribute")
        with pytest.raises(RuntimeError, match="worker 0 .* failed: AttributeError"):
            envs.call("no_such_method", 1)
        # a name that is not there changes nothing: the vector env stays open, its envs where they were
        assert not envs.closed and envs.get_attr("skip_idle") == (True, False, True)
        assert envs.step([0, 0, 0])[1].shape == (3,)
    finally:
        envs.close()


def test_teammate_objects_that_the_envs_of_one_worker_would_share_are_refused() -> None:
    """make_async(..., workers=2) with a mapping of teammate objects: each worker's envs shared one copy of them (refused
    by the view at the first reset, as a worker's error); now refused when the vector env is made, saying what works."""
    team = teamenvs.core.policy.make_policies(teamenvs.make("day_trader_v0"), "tit_for_tat", seed=0)
    mates = {a: team[a] for a in ("trader_2", "trader_3")}
    with pytest.raises(ValueError, match="teammate policy objects cannot be shared by the 2 or more envs of a worker"):
        make_async("day_trader_v0", 4, workers=2, agent="trader_1", teammates=mates, obs_type="vector", action_type="discrete")
    for ok in (make_async("day_trader_v0", 2, agent="trader_1", teammates=mates, obs_type="vector", action_type="discrete"),
               make_async("day_trader_v0", 4, workers=2, agent="trader_1", teammates={"trader_2": "defector"},
                          obs_type="vector", action_type="discrete")):
        try:
            ok.reset(seed=0)
            assert ok.step(np.zeros(ok.num_envs, np.int64))[0]["observation"].shape[0] == ok.num_envs
        finally:
            ok.close()
