"""`teamenvs bench`: run every episode of a suite, in parallel and resumably, then write the report.

The output folder holds `suite.json` (the suite as run), `logs/<episode>.jsonl.gz` (one log
per episode, written step by step, its header carrying the episode's suite, group,
condition, policy and seed), and what `benchmarks.report` builds from the logs:
`results.csv`, `report.md` and `plots/`.

Scripted episodes run in worker processes; LLM episodes run on one asyncio loop, sharing
one client whose concurrency bound caps the model calls in flight over all episodes.
An episode whose log is complete (it has its `end` line and the same run header) is skipped
on the next run, so a killed run loses only the episodes it was in the middle of;
`force=True` reruns everything. An episode that fails is reported and the run goes on.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence, TextIO

from benchmarks.suite import Episode, Suite
from teamenvs.core.config import ConfigError
from teamenvs.core.recorder import dumps, read_log

LOGS = "logs"


@dataclass
class Outcome:
    """What running one episode gave: its key, and an error text if it failed."""

    key: str
    error: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass
class BenchOutcome:
    suite: Suite
    out: Path
    ran: int
    skipped: int
    failed: list[Outcome]
    seconds: float
    report: Any = None

    def summary(self) -> str:
        lines = [
            f"suite {self.suite.name}: {self.ran} episode(s) run, {self.skipped} already complete (skipped), "
            f"{len(self.failed)} failed, in {self.seconds:.1f} s",
        ]
        for f in self.failed[:10]:
            lines.append(f"  failed: {f.key}: {f.error}")
        if len(self.failed) > 10:
            lines.append(f"  ... and {len(self.failed) - 10} more (rerun the same command to retry them)")
        if self.report is not None:
            lines.append(self.report.summary())
        return "\n".join(lines)


def log_path(out: Path, episode: Episode) -> Path:
    return out / LOGS / f"{episode.key}.jsonl.gz"


def is_complete(path: Path, episode: Episode, model: str | None = None) -> bool:
    """True when `path` is a finished log of exactly this episode (same run header and model, an `end` line)."""
    if not path.is_file():
        return False
    records = read_log(path)
    if not records or records[-1].get("type") != "end":
        return False
    head = records[0]
    # compare through JSON, so tuples and lists (and number types) count as the same
    return head.get("type") == "header" and dumps(head.get("run")) == dumps(episode.run_meta(model))


# ---------------------------------------------------------------------- progress
def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else f"{seconds // 60}:{seconds % 60:02d}"


class Progress:
    """A one-line progress bar on a terminal (a line per tenth of the run elsewhere): episodes
    done, failures, elapsed time, ETA and, for LLM runs, tokens and estimated cost so far."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = total
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = self.failed = 0
        self.tokens = 0
        self.cost: float | None = None
        self.start = time.perf_counter()
        self._shown_tenth = -1

    def line(self) -> str:
        elapsed = time.perf_counter() - self.start
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        eta = _clock(elapsed / self.done * (self.total - self.done)) if self.done else "?"
        text = (f"{self.label} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} episodes"
                f"{f', {self.failed} failed' if self.failed else ''}, {_clock(elapsed)} elapsed, ETA {eta}")
        if self.tokens:
            text += f" | {self.tokens:,} tokens" + (f", ${self.cost:.4f}" if self.cost is not None else "")
        return text

    def update(self, done: int = 0, failed: int = 0) -> None:
        self.done += done
        self.failed += failed
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\r" + self.line() + "\x1b[K")
            self.stream.flush()
            return
        tenth = 10 * self.done // self.total
        if tenth != self._shown_tenth:
            self._shown_tenth = tenth
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


# ---------------------------------------------------------------------- scripted episodes
DEFAULT_EPISODE_TIMEOUT = 3600.0


def run_scripted(episode: Episode, out: str, time_limit: float | None = DEFAULT_EPISODE_TIMEOUT) -> Outcome:
    """One scripted episode, logged under `out` (runs in a worker process)."""
    from agents import make_policies, run_episode

    try:
        env = episode.make_env()
        policies = make_policies(env, episode.policy.policy, seed=episode.seed)
        run_episode(env, policies, seed=episode.seed, log_dir=Path(out) / LOGS, log_name=episode.key,
                    max_steps=episode.group.max_steps, compress=True, run=episode.run_meta(), time_limit=time_limit)
    except Exception as exc:  # the log keeps its error line; the run goes on with the other episodes
        return Outcome(episode.key, f"{type(exc).__name__}: {exc}")
    return Outcome(episode.key)


def _run_scripted_all(episodes: Sequence[Episode], out: Path, workers: int, progress: Progress,
                      time_limit: float | None = DEFAULT_EPISODE_TIMEOUT) -> list[Outcome]:
    outcomes = []
    if workers == 1 or len(episodes) == 1:
        for episode in episodes:
            outcomes.append(run_scripted(episode, str(out), time_limit))
            progress.update(1, int(outcomes[-1].error is not None))
        return outcomes
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run_scripted, e, str(out), time_limit) for e in episodes]
        for future in as_completed(futures):
            outcomes.append(future.result())
            progress.update(1, int(outcomes[-1].error is not None))
    return outcomes


# ---------------------------------------------------------------------- LLM episodes
@dataclass(frozen=True)
class ModelSettings:
    """How the suite's `llm` policies reach their model."""

    model: str
    base_url: str
    concurrency: int = 16
    temperature: float = 0.0
    max_calls: int | None = None
    max_tokens: int | None = None
    price: tuple[float, float] | None = None
    episode_timeout: float | None = DEFAULT_EPISODE_TIMEOUT


def _llm_policies(env: Any, episode: Episode, client: Any, settings: ModelSettings) -> dict[str, Any]:
    from agents.llm.policy import make_llm_policies
    from agents.personas import COLLABORATION_THEORY, persona_prompt, sample_personas

    spec = episode.policy
    personas = None
    if spec.personas:
        drawn = sample_personas(len(env.possible_agents), episode.seed)
        personas = {a: persona_prompt(p, theory=spec.theory) for a, p in zip(env.possible_agents, drawn)}
    theory = COLLABORATION_THEORY if spec.theory and not spec.personas else None
    return make_llm_policies(env, settings.model, client=client, max_calls=settings.max_calls,
                             max_tokens=settings.max_tokens, personas=personas, theory=theory)


async def _run_llm_all(episodes: Sequence[Episode], out: Path, settings: ModelSettings, progress: Progress) -> list[Outcome]:
    from agents.llm.client import LLMClient
    from agents.loop import arun_episode, usage_summary
    from agents.probes import Prober

    prices = {settings.model.partition("+")[0]: settings.price} if settings.price else None
    client = LLMClient(settings.model, base_url=settings.base_url, concurrency=settings.concurrency,
                       temperature=settings.temperature, prices=prices)
    gate = asyncio.Semaphore(settings.concurrency)
    live: dict[str, dict[str, Any]] = {}
    finished_tokens = 0
    finished_cost = 0.0

    def tally() -> None:
        tokens, cost = finished_tokens, finished_cost
        for policies in live.values():
            total = usage_summary(policies).get("total", {})
            tokens += total.get("prompt_tokens", 0) + total.get("completion_tokens", 0)
            cost += total.get("cost_usd", 0.0)
        progress.tokens, progress.cost = tokens, (cost if settings.price else None)

    async def one(episode: Episode) -> Outcome:
        nonlocal finished_tokens, finished_cost
        async with gate:
            usage: dict[str, Any] = {}
            try:
                env = episode.make_env()
                policies = _llm_policies(env, episode, client, settings)
                live[episode.key] = policies
                spec = episode.policy
                await arun_episode(env, policies, seed=episode.seed, log_dir=out / LOGS, log_name=episode.key,
                                   max_steps=episode.group.max_steps, compress=True, run=episode.run_meta(settings.model),
                                   probes=Prober(spec.probes_every) if spec.probes_every else None, interview=spec.interview,
                                   time_limit=settings.episode_timeout)
                error = None
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
            finally:
                policies = live.pop(episode.key, {})
                usage = usage_summary(policies).get("total", {})
                finished_tokens += usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
                finished_cost += usage.get("cost_usd", 0.0)
            tally()
            progress.update(1, int(error is not None))
            return Outcome(episode.key, error, usage)

    async def ticker() -> None:
        while True:
            await asyncio.sleep(0.5)
            tally()
            progress.update()

    tick = asyncio.ensure_future(ticker())
    try:
        return list(await asyncio.gather(*(one(e) for e in episodes)))
    finally:
        tick.cancel()
        await client.aclose()


# ---------------------------------------------------------------------- the whole run
def parse_price(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    parts = text.split(",")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 2 or any(v < 0 for v in values):
        raise ConfigError(f"--price expects IN,OUT: USD per 1M prompt and completion tokens, e.g. 0.15,0.60; got {text!r}")
    return values  # type: ignore[return-value]


def run_bench(
    suite: Suite,
    out: str | Path,
    *,
    model: str | None = None,
    base_url: str | None = None,
    workers: int | None = None,
    concurrency: int = 16,
    force: bool = False,
    progress: bool = True,
    temperature: float = 0.0,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    price: str | tuple[float, float] | None = None,
    stream: TextIO | None = None,
    report: bool = True,
    episode_timeout: float | None = DEFAULT_EPISODE_TIMEOUT,
) -> BenchOutcome:
    """Run the suite's episodes that are not complete in `out` yet, then build the report there.

    An episode that runs longer than `episode_timeout` seconds of wall-clock time (None: no
    limit) is stopped and reported as failed; the next run retries it.
    """
    from benchmarks.report import build_report

    out = Path(out)
    if suite.needs_model and not model:
        raise ConfigError(f"suite {suite.name!r} has llm policies: give --model (e.g. --model gpt-4o-mini --base-url URL, "
                          "or --model random-valid for the built-in offline server)")
    if not suite.needs_model and (model or base_url):
        raise ConfigError(f"suite {suite.name!r} has no llm policies, so --model and --base-url would not be used")
    workers = workers if workers is not None else os.cpu_count() or 1
    if episode_timeout is not None and not (isinstance(episode_timeout, (int, float)) and episode_timeout > 0):
        raise ConfigError(f"--episode-timeout must be a positive number of seconds, got {episode_timeout!r}")
    if workers < 1 or concurrency < 1:
        raise ConfigError(f"--workers and --concurrency must be at least 1, got {workers} and {concurrency}")
    price = parse_price(price) if isinstance(price, str) or price is None else price
    (out / LOGS).mkdir(parents=True, exist_ok=True)
    (out / "suite.json").write_text(dumps(suite.to_json()) + "\n", encoding="utf-8")

    episodes = suite.episodes()
    todo = [e for e in episodes if force or not is_complete(log_path(out, e), e, model)]
    skipped = len(episodes) - len(todo)
    bar = Progress(len(todo), f"bench {suite.name}", stream=stream, enabled=progress)
    start = time.perf_counter()
    outcomes: list[Outcome] = []
    scripted = [e for e in todo if not e.policy.is_llm]
    llm = [e for e in todo if e.policy.is_llm]
    try:
        outcomes += _run_scripted_all(scripted, out, workers, bar, episode_timeout)
        if llm:
            from agents.llm.server import resolve_endpoint

            assert model is not None
            url, server = resolve_endpoint(model, base_url)
            settings = ModelSettings(model, url, concurrency, temperature, max_calls, max_tokens, price, episode_timeout)
            try:
                outcomes += asyncio.run(_run_llm_all(llm, out, settings, bar))
            finally:
                if server is not None:
                    server.stop()
    finally:
        bar.close()
    failed = [o for o in outcomes if o.error is not None]
    result = BenchOutcome(suite, out, len(todo), skipped, failed, time.perf_counter() - start)
    if report:
        result.report = build_report(out)
    return result
