"""The standard agent-env step loop: `run_episode` / `arun_episode`.

Each step the loop asks only the agents whose `info["needs_action"]` is true, awaits all of
them concurrently (so an episode with N LLM agents takes about as long as one agent's
calls), steps the env, and records the step. Every episode is recorded; with `log_dir` the
record is a JSONL file flushed per step, and only what the metrics read stays in memory (the
records less their observation texts, packed; `EpisodeResult.records` reads the log back when
asked).
Metrics come from the paradigm's metric function over the recorded log, the same function
`teamenvs` uses on a log read from disk.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping, Sequence, TypeVar

from teamenvs.core.config import check_int, check_number
from teamenvs.core.metrics import episode_metrics
from teamenvs.core.policy import check_own_policies
from teamenvs.core.recorder import EpisodeRecorder, claim_log_name, read_log
from teamenvs.core.text import excerpt

T = TypeVar("T")


def _seen(future: asyncio.Future) -> None:
    """Mark a finished future's exception as seen: `asyncio.wait_for` cancels the step's calls at the deadline or
    at Ctrl-C and never reads what they ended with, and asyncio then prints "exception was never retrieved" and
    the cancelled calls' tracebacks after the run has stopped (the stop itself is reported by the caller)."""
    if not future.cancelled():
        future.exception()


class EpisodeTimeout(Exception):
    """An episode ran past its wall-clock limit (`time_limit`); its log ends with an error line."""


class _Records:
    """`EpisodeResult.records`: the records given; none given (None), the log at `log_path` read back
    on first use (an episode logged to a file keeps no records in memory), else []."""

    slot = "_records"

    def __get__(self, result: Any, owner: type | None = None) -> Any:
        if result is None:
            return None  # the field's default
        records = result.__dict__.get(self.slot)
        if records is None:
            records = read_log(result.log_path) if result.log_path is not None else []
            result.__dict__[self.slot] = records
        return records

    def __set__(self, result: Any, records: Any) -> None:
        result.__dict__[self.slot] = None if isinstance(records, _Records) else records


@dataclass
class EpisodeResult:
    """What one episode produced. `records` of an episode logged to a file is its log, read back when first used."""

    env_id: str
    seed: int | None
    steps: int
    returns: dict[str, float]
    metrics: dict[str, Any]
    log_path: Path | None
    records: list[dict[str, Any]] = field(repr=False, default=_Records())  # type: ignore[assignment]
    usage: dict[str, Any] = field(default_factory=dict)
    status: str = "done"  # "done", or "budget": the model-call or token budget stopped it (metrics so far)
    warning: str = ""


def usage_summary(policies: Mapping[str, Any]) -> dict[str, Any]:
    """Model usage of the episode per agent and in total, from policies that keep a `usage` ledger (LLM policies)."""
    from agents.llm.client import Usage

    per_agent = {a: p.usage for a, p in policies.items() if isinstance(getattr(p, "usage", None), Usage)}
    if not per_agent:
        return {}
    total = Usage()
    for u in per_agent.values():
        total.add(u)
    return {"total": total.to_json(), "agents": {a: u.to_json() for a, u in per_agent.items()}}


def mark_budgets(policies: Mapping[str, Any]) -> None:
    """A step boundary for the policies' budgets (`Budget.mark`: the token budget is decided there)."""
    budgets = {id(b): b for b in (getattr(p, "budget", None) for p in policies.values()) if hasattr(b, "mark")}
    for budget in budgets.values():
        budget.mark()


async def close_policies(policies: Mapping[str, Any]) -> None:
    """Let policies that hold connections (LLM clients) close them before the event loop ends."""
    for policy in {id(p): p for p in policies.values()}.values():
        closer = getattr(policy, "aclose", None)
        if closer is not None:
            await closer()


async def arun_episode(
    env: Any,
    policies: Mapping[str, Any],
    seed: int | None = None,
    log_dir: str | Path | None = None,
    log_name: str | None = None,
    max_steps: int | None = None,
    probes: Any | None = None,
    interview: bool = False,
    embedder: Any | None = None,
    compress: bool = False,
    run: Mapping[str, Any] | None = None,
    time_limit: float | None = None,
    on_step: Callable[[int, Mapping[str, Any]], None] | None = None,
) -> EpisodeResult:
    """Run one episode of `env` with one policy per agent; see `run_episode`."""
    if time_limit is not None:
        check_number("time_limit", time_limit, 0, above=True)  # (seconds)
    if max_steps is not None:
        max_steps = check_int("max_steps", max_steps, 1)
    deadline = None if time_limit is None else time.monotonic() + time_limit

    def remaining() -> float | None:
        if deadline is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            raise EpisodeTimeout(f"the episode ran past its wall-clock limit of {time_limit:g} s after {steps} step(s)")
        return left

    async def bounded(awaitable: Awaitable[T]) -> T:
        """`awaitable` within the episode's time limit: EpisodeTimeout once it is past."""
        if deadline is None:
            return await awaitable
        try:
            return await asyncio.wait_for(awaitable, remaining())
        except asyncio.TimeoutError:
            remaining()  # the deadline has passed: raises EpisodeTimeout
            raise

    base = env.unwrapped
    missing = [a for a in env.possible_agents if a not in policies]
    if missing:
        raise ValueError(f"no policy for agents {missing}")
    check_own_policies(policies, env.possible_agents, base)
    path = None
    if log_dir is not None:
        suffix = ".jsonl.gz" if compress else ".jsonl"
        if log_name is None:  # a default name never replaces a log (another policy on the same seed, a rerun)
            log_name = claim_log_name(log_dir, f"{base.env_id}_seed{seed}", suffix)
        path = Path(log_dir) / f"{log_name}{suffix}"
    # with a log file, only what the metrics read is kept in memory (no observation texts, packed)
    recorder = EpisodeRecorder(path, keep=True if path is None else "metrics", run=dict(run) if run is not None else None)
    kept = recorder.records if path is None else None  # the result's records (None: the log file's, read when asked)
    from agents.llm.client import BudgetExceeded

    returns = {a: 0.0 for a in env.possible_agents}
    steps = 0
    stopped: BudgetExceeded | None = None
    with base.recording(recorder):
        try:
            observations, infos = env.reset(seed=seed)
            for agent in env.agents:
                policies[agent].reset(agent, base.briefing(agent))
                bind = getattr(policies[agent], "bind_rules", None)
                if bind is not None:  # constrained decoding may ask the rules, as an RL action mask does
                    bind(functools.partial(base.accepts, agent))
            while env.agents and (max_steps is None or steps < max_steps):
                asking = [a for a in env.agents if infos[a]["needs_action"]]
                mark_budgets(policies)
                # every agent's call runs to its end (so its usage is counted) before a failure is raised
                calls = asyncio.gather(*(policies[a].aact(observations[a], infos[a]) for a in asking), return_exceptions=True)
                calls.add_done_callback(_seen)
                actions = await bounded(calls)
                failures = [a for a in actions if isinstance(a, BaseException)]
                other = next((f for f in failures if not isinstance(f, BudgetExceeded)), None)
                if other is not None:
                    raise other
                if failures:  # the budget is spent: a clean stop, the steps played so far are the episode
                    stopped = failures[0]
                    break
                for agent in asking:
                    extras = getattr(policies[agent], "last_extras", None)
                    if extras:
                        recorder.annotate(agent, **extras)
                if probes is not None and probes.due(steps):
                    mark_budgets(policies)
                    answered, failure = await bounded(probes.answers(policies, asking))
                    if failure is not None and not isinstance(failure, BudgetExceeded):
                        raise failure
                    if failure is not None:  # spent at the probe: the answers given and the step's actions are recorded, then a clean stop
                        stopped = failure
                    for agent, answers in answered.items():
                        recorder.annotate(agent, probe=answers)
                observations, rewards, _, _, infos = env.step(dict(zip(asking, actions)))
                for agent, reward in rewards.items():
                    returns[agent] += reward
                steps += 1
                if on_step is not None:
                    on_step(steps, usage_summary(policies).get("total", {}))
                if stopped is not None:
                    break
            records = recorder.records  # with a log file: unpacked metrics views, read once
            metrics = episode_metrics(records)
            extra: dict[str, Any] = {}
            if probes is not None or interview:
                from agents import probes as probing

                if probes is not None:
                    if embedder is None:
                        from agents.embedders import HashingEmbedder

                        embedder = HashingEmbedder()
                    metrics["probes"] = probing.probe_metrics(records, embedder)
                if interview and stopped is None:
                    outcome = f"Your team's returns: {', '.join(f'{a} {r:g}' for a, r in returns.items())}."
                    mark_budgets(policies)
                    try:
                        extra["interview"] = await bounded(probing.interview(policies, outcome))
                        metrics["interview"] = probing.interview_summary(extra["interview"])
                    except BudgetExceeded as exc:  # the episode is whole and counted; its interview is left out
                        extra["warning"] = f"no interview: {exc}"
            usage = usage_summary(policies)
            if usage:
                extra["usage"] = usage
            if stopped is not None:
                extra.update(status="budget", warning=f"stopped after {steps} step(s): {stopped}")
            recorder.write({"type": "end", "steps": steps, "returns": returns, "metrics": metrics, **extra})
        except BaseException as exc:
            usage = usage_summary(policies)
            recorder.write({"type": "error", "step": steps, "error": f"{type(exc).__name__}: {exc}", **({"usage": usage} if usage else {})})
            raise
        finally:
            recorder.close()
    if stopped is not None:
        return EpisodeResult(base.env_id, seed, steps, returns, metrics, path, kept, usage, "budget",
                             f"stopped after {steps} step(s): {stopped}")
    return EpisodeResult(base.env_id, seed, steps, returns, metrics, path, kept, usage)


def run_episode(
    env: Any,
    policies: Mapping[str, Any],
    seed: int | None = None,
    log_dir: str | Path | None = None,
    log_name: str | None = None,
    max_steps: int | None = None,
    probes: Any | None = None,
    interview: bool = False,
    embedder: Any | None = None,
    compress: bool = False,
    run: Mapping[str, Any] | None = None,
    time_limit: float | None = None,
    on_step: Callable[[int, Mapping[str, Any]], None] | None = None,
) -> EpisodeResult:
    """Run one episode and return its `EpisodeResult` (`.metrics`, `.returns`, `.log_path`).

    `probes` (an `agents.probes.Prober`) asks agents that can answer (LLM policies) the
    CollabSim probe questions every k steps; `interview=True` runs the post-episode
    interview; their results join the metrics (`probes`, `interview`), embedded with
    `embedder` (default: the offline hashing embedder). With `log_dir` the log is
    `<log_name>.jsonl`, or without `log_name` `<env_id>_seed<N>.jsonl` or, where that is taken,
    the next free `..._seed<N>-2.jsonl`, `-3`, ... (`claim_log_name`: a default name never
    replaces a log). `compress=True` writes the log as `.jsonl.gz`; `run` (e.g. a benchmark's suite, condition and policy labels) goes into the
    log's header line as `"run"`. `time_limit` (seconds of wall-clock time) ends an episode
    that runs past it with `EpisodeTimeout`, recorded as the log's error line; it is checked
    before each step and bounds the wait for the agents' actions, the probes' answers and the
    interview. `on_step(steps, usage)` is
    called after every step with the steps so far and the model usage so far (progress
    displays). When an LLM policy's
    call or token budget is spent (`BudgetExceeded`), the episode stops cleanly: its `end`
    line has `"status": "budget"` and a `warning`, the metrics cover the steps played, and
    the result's `status` is `"budget"`.

    Works from plain scripts and from inside a running event loop (e.g. Jupyter), where
    the episode runs on a helper thread with its own loop.
    """
    async def episode() -> EpisodeResult:
        try:
            return await arun_episode(env, policies, seed=seed, log_dir=log_dir, log_name=log_name, max_steps=max_steps,
                                      probes=probes, interview=interview, embedder=embedder, compress=compress, run=run,
                                      time_limit=time_limit, on_step=on_step)
        finally:
            await close_policies(policies)  # this call owns the event loop, so it closes the connections

    return run_blocking(episode())


def run_blocking(coro: Awaitable[T]) -> T:
    """Run a coroutine to completion from synchronous code, also where an event loop is already running
    (a Jupyter notebook): there it runs on a loop of its own in a helper thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    box: dict[str, Any] = {}

    def runner() -> None:
        try:
            box["result"] = asyncio.run(coro)  # type: ignore[arg-type]
        except BaseException as exc:  # re-raised on the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=runner)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["result"]


def check_jobs(jobs: Any) -> None:
    """A ValueError saying which job is wrong and how, unless `jobs` is a sequence of mappings each holding an `env` and
    its `policies` and nothing `arun_episode` does not take."""
    if isinstance(jobs, (str, bytes)) or not isinstance(jobs, Sequence):
        raise ValueError(f"jobs must be a list of dicts of arun_episode's arguments (env, policies, seed, ...), got {excerpt(jobs)}")
    known = set(inspect.signature(arun_episode).parameters)
    for i, job in enumerate(jobs):
        if not isinstance(job, Mapping):
            raise ValueError(f"jobs[{i}] must be a dict of arun_episode's arguments, got {excerpt(job)}")
        missing = [k for k in ("env", "policies") if k not in job]
        unknown = [k for k in job if k not in known]
        if missing or unknown:
            raise ValueError(f"jobs[{i}]: " + "; ".join(
                ([f"needs {' and '.join(missing)}"] if missing else []) +
                ([f"arun_episode takes no {', '.join(map(excerpt, unknown))} (it takes {', '.join(sorted(known))})"] if unknown else [])))
    # episodes run at once interleave their steps: one env, or one policy (its recent messages, memory, step count), or
    # one policy's memory, in two of them would mix both episodes' states without a word
    owner: dict[int, int] = {}
    for i, job in enumerate(jobs):
        policies = job["policies"]
        owned = [("env", job["env"])]
        for agent, policy in (policies.items() if isinstance(policies, Mapping) else ()):
            owned.append((f"policy of {excerpt(agent)}", policy))
            if getattr(policy, "memory", None) is not None:
                owned.append((f"memory of the policy of {excerpt(agent)}", policy.memory))
        for what, obj in owned:
            first = owner.setdefault(id(obj), i)
            if first != i:
                raise ValueError(f"jobs[{i}]'s {what} is also in jobs[{first}]: episodes run at once each need their own env, "
                                 f"policies and memories (make them again for each job)")


async def arun_episodes(jobs: Sequence[Mapping[str, Any]], parallel: int = 16) -> list[EpisodeResult]:
    """Run many episodes at once on one event loop, at most `parallel` at a time.

    Each job is the keyword arguments of `arun_episode` (env, policies, seed, ...); each
    episode needs its own env. Policies sharing one `LLMClient` share its concurrency bound.
    Results come back in the order of `jobs`. The caller owns the loop: close clients with
    `close_policies` when done (`run_episodes` does).
    """
    parallel = check_int("parallel", parallel, 1)
    check_jobs(jobs)  # all of them before any episode starts: a bad tenth job would have stopped the batch midway
    gate = asyncio.Semaphore(parallel)

    async def one(job: Mapping[str, Any]) -> EpisodeResult:
        async with gate:
            return await arun_episode(**job)

    return list(await asyncio.gather(*(one(job) for job in jobs)))


def run_episodes(jobs: Sequence[Mapping[str, Any]], parallel: int = 16) -> list[EpisodeResult]:
    """`arun_episodes` from synchronous code (closing the policies' connections at the end)."""

    async def all_jobs() -> list[EpisodeResult]:
        try:
            return await arun_episodes(jobs, parallel)
        finally:
            for job in jobs if isinstance(jobs, Sequence) else ():
                if isinstance(job, Mapping) and "policies" in job:  # (jobs refused by `check_jobs` too)
                    await close_policies(job["policies"])

    return run_blocking(all_jobs())
