"""Smoke test for `benchmarks/perf.py`: the quick run prints one table with every row measured and plausible."""

from __future__ import annotations

import re

import gymnasium
import numpy as np
import pytest

import teamenvs
from benchmarks import perf
from teamenvs.wrappers.vector import worker_cpus


def table_rows(out: str) -> dict[tuple[str, str], list[str]]:
    """The printed markdown table's body as {(measurement, setting): [value, unit, notes]}; exactly one table."""
    lines = [line for line in out.splitlines() if line.startswith("|")]
    assert lines[0] == "| " + " | ".join(perf.HEADER) + " |"
    assert lines[1].startswith("|---")
    assert not any(line.startswith("|---") for line in lines[2:]), "more than one table"
    rows = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert len(cells) == len(perf.HEADER), line
        rows[cells[0], cells[1]] = cells[2:]
    return rows


def number(cell: str) -> float:
    return float(cell.replace(",", ""))


@pytest.mark.slow
def test_quick_run_prints_every_row(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    fresh, measure = [], perf.rows_in_fresh_process

    def in_fresh_process(name, *args, **kwargs):
        fresh.append(name)
        return measure(name, *args, **kwargs)

    monkeypatch.setattr(perf, "rows_in_fresh_process", in_fresh_process)
    perf.main(["--quick"])
    # the rows comparing two ways of doing the same work in processes of their own, not after the rows before in this
    # one (see `main`)
    assert {"recorder_rows", "numeric_rows", "vector_env_rows", "long_run_rows", "llm_client_rows"} <= set(fresh)
    out = capsys.readouterr().out
    assert "Command: python -m benchmarks.perf --quick" in out
    assert "Machine: " in out and "CPUs; Python 3." in out
    assert f"Engine: {teamenvs.compiled.engine()} " in out
    rows = table_rows(out)

    for env_id in teamenvs.list_envs():
        for kind in ("random", "scripted"):
            value, unit, notes = rows["env steps/s", f"{env_id}, {kind}"]
            assert number(value) > 0 and unit == "env steps/s (full loop)"
            assert "env.step alone" in notes

    efficiency = {s: v for (m, s), v in rows.items() if m == "step-loop efficiency"}
    assert [s.split(":")[0] for s in efficiency] == ["concurrent (agents.run_episode)", "one call after another"]
    for value, _, _ in efficiency.values():
        assert number(value) >= 1.0  # nothing beats the latency of the calls on the critical path

    for size in ("10,000", "100,000"):
        value, unit, _ = rows["memory retrieval", f"{size} memories, top-10"]
        assert number(value) > 0 and unit.startswith("ms")

    for env_id in teamenvs.list_envs():
        value, unit, notes = rows["numeric vs text", f"{env_id}, random valid actions"]
        assert number(value) > 0 and unit == "x text env steps/s" and "numeric" in notes
        value, unit, notes = rows["numeric vs text", f"{env_id}, single-agent view (scripted teammates)"]
        assert number(value) > 0 and unit == "x text learner steps/s" and "every agent's observation built every env step" in notes
        value, unit, notes = rows["step parts", env_id]
        text_step, rules, views = (number(re.search(pattern, notes).group(1))
                                   for pattern in (r"text step (\d+) us", r"rules (\d+)", r"views (\d+)"))
        assert 0 < rules + views < text_step and number(value) >= 1.0  # a part of the step takes less than the step
        kept = number(re.search(r"and masks all free: at most ([\d.]+)x", notes).group(1))
        without_views = number(re.search(r"bound without views ([\d.]+)x", notes).group(1))
        assert 1.0 <= kept <= without_views + 0.05  # keeping the shared step can only lower that bound (to rounding)
    value, unit, notes = rows["numeric vs text", "day_trader_v0 (9 traders), random valid actions"]
    assert number(value) > 0 and unit == "x text env steps/s" and "in lockstep" in notes
    vector = {s: v for (m, s), v in rows.items() if m == "vector env"}
    pinnable = worker_cpus() is not None
    assert len(vector) == (15 if pinnable else 11) + len(teamenvs.list_envs()) and all(number(v[0]) > 0 for v in vector.values())
    value, unit, notes = vector["day_trader_v0 single-agent view, 64 envs in 2 worker processes (make_async workers=2)"]
    assert unit == "x SyncVectorEnv steps/s" and "ProcessVectorEnv (64 envs in 2 processes)" in notes and "SyncVectorEnv of 64" in notes
    for env_id in teamenvs.list_envs():
        value, unit, notes = vector[f"{env_id} single-agent view, 32 envs in 2 worker processes (make_async workers=2)"]
        assert unit == "x SyncVectorEnv steps/s" and "ProcessVectorEnv (32 envs in 2 processes)" in notes and "SyncVectorEnv of 32" in notes
    for env_id in ("search_rescue_v0", "day_trader_v0"):
        value, unit, notes = vector[f"{env_id} single-agent view, 2 envs: the lockstep bound"]
        assert 1.0 <= number(value) <= 2.0 and unit == "x SyncVectorEnv steps/s at most" and "8 envs in 2 workers: at most" in notes
        with_exchange = number(re.search(r"a vector step\): at most ([\d.]+)x", notes).group(1))
        assert 0 < with_exchange < number(value)  # passing actions and results costs something
    for ms in ("0.3", "1"):
        assert re.search(r"exchange between processes [\d.]+ ms a vector step", vector[f"reference: an env whose steps are {ms} ms of busy CPU, 2 envs"][2])
    value, unit, notes = vector["day_trader_v0 single-agent view, 8 envs in 2 worker processes (make_async workers=2)"]
    assert unit == "x SyncVectorEnv steps/s" and "ProcessVectorEnv (8 envs in 2 processes)" in notes
    assert [s for s in vector if s.startswith("reference") and "pinned" not in s and "worker processes" not in s] == [
        "reference: an env whose steps are 0.3 ms of busy CPU, 2 envs", "reference: an env whose steps are 1 ms of busy CPU, 2 envs"]
    if pinnable:
        value, _, notes = vector["search_rescue_v0 single-agent view, 2 envs, workers pinned (make_async)"]
        assert "pinned to one CPU" in notes and "unpinned" in notes

    for env_id in teamenvs.list_envs():
        value, unit, notes = rows["recorder cost", f"{env_id}, scripted, .jsonl.gz log"]
        assert number(value) > 0 and unit == "x env steps/s without a recorder" and "CPU-time ratio" in notes

    built = bool(teamenvs.compiled.status().current)  # the compiled engine's rows measure it where it is built
    engine = {s: v for (m, s), v in rows.items() if m == "compiled engine"}
    if built:
        assert set(engine) == {f"{env_id}, random valid actions" for env_id in teamenvs.list_envs()}
        assert all(number(v[0]) > 0 and "modules loaded compiled" in v[2] for v in engine.values())
    else:
        assert list(engine) == ["every env"] and engine["every env"][:2] == ["n/a", "not measured"]
        assert "teamenvs compile" in engine["every env"][2]
    engine_peer = {s: v for (m, s), v in rows.items() if m == "peer ratio" and s.endswith(", compiled engine")}
    peer = {s: v for (m, s), v in rows.items() if m == "peer ratio" and s not in engine_peer}
    try:
        import textarena  # noqa: F401
    except ImportError:
        assert list(peer) == ["TextArena social dilemmas"] and "pip install" in peer["TextArena social dilemmas"][2]
    else:
        assert len(peer) == len(perf.PEER_ARMS) and all(0 < number(v[0]) for v in peer.values())
    assert len(engine_peer) == (len(peer) if built and "TextArena social dilemmas" not in peer else 0)
    scaling = {s: v for (m, s), v in rows.items() if m == "cost per agent-step"}
    assert set(scaling) == {"day_trader_v0, 3 / 9 / 30 traders, scripted", "job_fair_v0, 13 / 36 / 120 agents, scripted"}
    for value, _, notes in scaling.values():
        assert number(value) > 0 and len(re.findall(r"(\d+) us at (\d+)", notes)) == 3
    value, unit, _ = rows["map generation", "map_task_v0, default 20x20 map"]
    assert number(value) > 0 and unit.startswith("ms")
    value, _, notes = rows["reset on a new map", "search_rescue_v0, 100x100 over 30x30"]
    assert number(value) > 1.0 and "100x100" in notes  # a map with ten times the rooms takes longer to draw
    ((setting, (value, unit, notes)),) = [(s, v) for (m, s), v in rows.items() if m == "long run"]
    assert setting.startswith("commons_v0, random valid actions, one env for") and unit == "MB resident over the last two thirds"
    held, bound = (number(x) for x in re.search(r"holds ([\d,]+) memo entries \(at most ([\d,]+)\)", notes).groups())
    assert 0 < held <= bound and (value == "not measured" or abs(number(value)) < 1_000)
    client = {s: v for (m, s), v in rows.items() if m == "LLM client"}
    assert len(client) == 4 and all(number(v[0]) > 0 for v in client.values())
    for size in (8, 64):
        value, _, notes = client[f"full stack over a bare HTTP client, {size} concurrent episodes"]
        assert 0 < number(value) < 5 and "calls/s" in notes

    value, unit, notes = rows["scripted search and rescue", f"scripted search and rescue now over then ({perf.THEN}, when the speed issue was filed)"]
    if value == "n/a":  # a checkout without the commit (a shallow clone): the row says why
        assert unit == "not measured" and "git" in notes
    else:
        assert number(value) > 0 and "target at least 4x" in notes and re.search(r"now [\d,]+ env steps/s, then [\d,]+", notes)
    then_compiled = [v for (m, s), v in rows.items() if m == "scripted search and rescue" and "compiled engine" in s]
    assert len(then_compiled) == (1 if built and value != "n/a" else 0)

    assert len(rows) == (4 * len(teamenvs.list_envs()) + 2 * len(teamenvs.list_envs()) + len(perf.NUMERIC_TEAMS) + len(vector) + 2 + 2
                         + len(peer) + len(engine_peer) + len(engine) + len(scaling) + 2 + 1 + len(client) + 1
                         + len(then_compiled))  # ... generation rows, the long run, ...


def test_then_row_says_why_without_the_commit() -> None:
    rows = perf.then_rows(0.1, 1, ref="0" * 40)
    assert len(rows) == 1 and rows[0][2:4] == ["n/a", "not measured"]
    assert "git archive" in rows[0][4] and "0" * 40 in rows[0][4]


def test_timed_in_tree_runs_that_trees_code(tmp_path) -> None:
    """The timing driver imports teamenvs from the tree it is given, not from the installed package: a tree
    whose teamenvs is not the real one fails loudly instead of timing this code twice."""
    (tmp_path / "teamenvs").mkdir()
    (tmp_path / "teamenvs" / "__init__.py").write_text("raise ImportError('the tree under test')\n")
    with pytest.raises(RuntimeError, match="the tree under test"):
        perf.timed_in_tree(tmp_path, 0.1, seed=0)
    result = perf.timed_in_tree(perf.ROOT, 0.1, seed=0)
    assert result["steps"] > 0 and result["package"].startswith(str(perf.ROOT))


def test_then_row_says_why_when_the_old_code_does_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree that does not run (a dependency gone, say) gives a row saying why, one line, not a crash of the table."""
    monkeypatch.setattr(perf, "extract_tree", lambda ref, into: None)

    def fails(tree, seconds, seed, compiled_on=False):
        raise RuntimeError("the timing run failed:\nModuleNotFoundError | networkx")

    monkeypatch.setattr(perf, "timed_in_tree", fails)
    rows = perf.then_rows(0.1, 1)
    assert rows[0][2:4] == ["n/a", "not measured"]
    assert "ModuleNotFoundError / networkx" in rows[0][4] and "\n" not in rows[0][4]


def test_busy_env_steps_take_their_cost() -> None:
    """The vector reference env costs what it says per step, and nothing in its observation or info varies."""
    import time

    env = perf.BusyEnv(0.002)
    obs, info = env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(5):
        obs, reward, terminated, truncated, info = env.step(0)
    assert 0.010 <= time.perf_counter() - start < 0.1
    assert obs.shape == (16,) and info == {} and not (terminated or truncated)
    rates = perf.async_over_sync(lambda: perf.BusyEnv(0.0005), 0.2, masked=False)
    assert set(rates) == {"async", "sync"} | ({"pinned"} if worker_cpus() is not None else set())
    assert all(r > 0 for r in rates.values())


def test_lockstep_bound() -> None:
    """Equal steps gain the full 2x with 2 workers; a step that dwarfs the others leaves about 1x; more envs per
    worker average uneven steps out; the bound is of the times given, whatever their order."""
    rng = np.random.default_rng(0)
    assert perf.lockstep_bound(np.full(100, 0.001), 2, 2) == pytest.approx(2.0)
    assert perf.lockstep_bound(np.array([1.0] + [1e-6] * 99), 2, 2) < 1.01
    uneven = rng.exponential(0.001, 4000)
    two, eight = perf.lockstep_bound(uneven, 2, 2), perf.lockstep_bound(uneven, 8, 2)
    assert 1.2 < two < eight < 2.0  # two exponential steps: E[sum] / E[max] = 2 / 1.5
    assert two == pytest.approx(4 / 3, abs=0.05)
    assert perf.lockstep_bound(uneven[::-1].copy(), 2, 2) == pytest.approx(two, abs=0.05)
    assert perf.lockstep_bound(np.full(100, 0.001), 2, 2, exchange=0.001) == pytest.approx(1.0)  # exchange as long as a step
    assert perf.exchange_cost(0.001, 2.0) == pytest.approx(0.0) and perf.exchange_cost(0.001, 1.0) == pytest.approx(0.001)
    with pytest.raises(ValueError, match="at least 8 timed steps"):
        perf.lockstep_bound(uneven[:5], 8, 2)
    times = perf.learner_step_times(lambda: gymnasium.make(teamenvs.spec("day_trader_v0").gym_id, obs_type="vector",
                                                           action_type="discrete"), 0.05)
    assert len(times) > 10 and (times > 0).all()
    # however short the time, enough steps for the bounds (8 a vector step): a quick run once ended with 6
    times = perf.learner_step_times(lambda: gymnasium.make(teamenvs.spec("search_rescue_v0").gym_id, obs_type="vector",
                                                           action_type="discrete"), 1e-9)
    assert len(times) == perf.LEARNER_STEPS_AT_LEAST and perf.lockstep_bound(times, 8, 2) > 0


def test_the_single_agent_lockstep_times_enough_steps_however_short_the_time(monkeypatch) -> None:
    """A quick run under load once gave a single-agent row of 0.00: the resets had taken its time, and one or two steps
    were timed, the first filling the numeric view's caches. Now at least `SINGLE_AGENT_STEPS_AT_LEAST` steps are
    timed after one untimed step, however short the time."""
    calls = []
    make = gymnasium.make

    def counting(*args, **kwargs):
        env = make(*args, **kwargs)
        step = env.unwrapped.step

        def counted(action):
            calls.append(1)
            return step(action)

        env.unwrapped.step = counted
        return env

    monkeypatch.setattr(perf.gymnasium, "make", counting)
    rate = perf.single_agent_lockstep("shape_factory_v0", 1e-9, seed=1)
    assert rate["steps"] == perf.SINGLE_AGENT_STEPS_AT_LEAST
    assert len(calls) == 3 * (perf.SINGLE_AGENT_STEPS_AT_LEAST + 1)  # each of the three views: one untimed step, then the timed
    assert all(rate[kind] > 0 for kind in ("numeric", "every", "text"))


def test_critical_path_calls() -> None:
    records = [
        {"type": "reset", "agents": {}},
        {"type": "step", "agents": {"a": {"usage": {"calls": 1}}, "b": {"usage": {"calls": 3}}}},  # b repaired twice
        {"type": "step", "agents": {"a": {"usage": {"calls": 1}}, "b": {}}},  # b did not act
        {"type": "end"},
    ]
    assert perf.critical_path_calls(records, concurrent=True) == 3 + 1
    assert perf.critical_path_calls(records, concurrent=False) == 4 + 1


def test_args() -> None:
    assert perf.parse_args([]).seconds == perf.DEFAULTS["seconds"]
    quick = perf.parse_args(["--quick", "--steps", "3"])
    assert (quick.seconds, quick.steps) == (perf.QUICK["seconds"], 3)


def test_step_parts_leave_out_what_resets_spend(monkeypatch: pytest.MonkeyPatch) -> None:
    """`step_parts` splits `env.step`'s time; the views (and text, encoding) of the resets between episodes are
    not a step's. An env whose reset renders 50 slow views and whose step renders one, one step per episode:
    the views per step are one view's time, not fifty-one."""
    import time

    class Interface:
        def observe(self, env, agent, text, view, info):
            return text

    info = {"needs_action": False, "valid_actions": (), "action_mask": np.array([1], np.int8)}

    class OneStepEpisodes:
        env_id = "one_step_v0"

        def __init__(self) -> None:
            self.agents: list[str] = []
            self.interface = Interface()

        def _view(self, agent):
            time.sleep(0.002)
            return {}

        def _render_view(self, view):
            return ""

        def _apply(self, parsed):
            return {}

        def _encode(self, *args):
            return None

        def action_text(self, agent, index):
            return "wait"

        def reset(self, seed=None):
            self.agents = ["a"]
            for _ in range(50):
                self._view("a")
            return {"a": ""}, {"a": dict(info)}

        def step(self, actions):
            self._view("a")
            self.agents = []
            return {"a": ""}, {}, {}, {}, {"a": dict(info)}

    monkeypatch.setattr(perf.teamenvs, "make", lambda *a, **k: OneStepEpisodes())
    for parts in perf.step_parts("one_step_v0", seconds=0.2).values():  # numeric and text
        assert 0.002e6 <= parts["views"] <= parts["step"] < 0.02e6


def test_lockstep_plays_the_same_steps_in_both_modes() -> None:
    """`lockstep` times the numeric and the text env over the same states: it checks every step that both gave
    the same rewards and the same agents to act, and it raises when the two envs play apart."""
    numeric = teamenvs.make("day_trader_v0", obs_type="vector", action_type="discrete")
    text = teamenvs.make("day_trader_v0")
    steps, in_numeric, in_text = perf.lockstep(numeric, text, 0.3, seed=0)
    assert steps > 10 and in_numeric > 0 and in_text > 0
    # the text env is sent other commands than the numeric env's actions stand for: its traders never invest
    numeric.action_text = lambda agent, index: "wait"
    with pytest.raises(RuntimeError, match="played different steps"):
        perf.lockstep(numeric, text, 5.0, seed=0)


def test_single_agent_lockstep_plays_the_same_episodes_in_three_modes(monkeypatch: pytest.MonkeyPatch) -> None:
    rate = perf.single_agent_lockstep("commons_v0", 0.3)
    assert rate["steps"] > 5 and all(rate[k] > 0 for k in ("numeric", "every", "text"))
    # the text view sent other commands than the numeric actions stand for: the learner waits every month
    from teamenvs.core.env import TeamEnv

    monkeypatch.setattr(TeamEnv, "action_text", lambda self, agent, index: "wait")
    with pytest.raises(RuntimeError, match="single-agent views played different steps"):
        perf.single_agent_lockstep("commons_v0", 5.0)


def test_a_row_measured_in_a_new_process_comes_back_whole() -> None:
    """The long run's resident memory is measured in a process of its own (`rows_in_fresh_process`), so the rows
    before it do not count; a failure there says which rows failed, not a bare JSON error."""
    rows = perf.rows_in_fresh_process("long_run_rows", 0.6)
    assert len(rows) == 1 and rows[0][0] == "long run" and "MB" in rows[0][3]
    with pytest.raises(RuntimeError, match="no_such_rows in a new process failed"):
        perf.rows_in_fresh_process("no_such_rows")

