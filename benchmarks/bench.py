"""`teamenvs bench`: run every episode of a suite, in parallel and resumably, then write the report.

The output folder holds `suite.json` (the suite as run), `logs/<episode>.jsonl.gz` (one log
per episode, written step by step, its header carrying the episode's suite, group,
condition, policy and seed), and what `benchmarks.report` builds from the logs:
`results.csv`, `report.md` and `plots/`.

Scripted episodes run in worker processes; LLM episodes run on one asyncio loop, sharing
one client whose concurrency bound caps the model calls in flight over all episodes.
An episode whose log is complete (it has its `end` line and the same run header) is skipped
on the next run, so a killed run loses only the episodes it was in the middle of;
`force=True` reruns everything. An episode that fails is reported and the run goes on; its
log never replaces a finished one (that is kept, and the summary says so).

An llm episode's run header holds the model and the other settings that change its results
(`recorded_settings`: the endpoint without credentials, temperature, output limit, budgets,
context window). Resuming a folder whose finished llm logs have other settings is refused
before anything runs, naming them: results of different settings are never mixed silently.

A damaged log (a checksum mismatch, a mis-edited line: `read_log` raises `LogError`) is not
complete: it is rerun, and the summary says so. Each process writes its logs in its own
`logs/.tmp-<pid>/` and moves each into `logs/` when the episode is over (ended, or with its
error line), so `logs/` never holds a half-written log; the temp folders of processes that
are gone are removed at the start and end of a run. Worker processes exit (dropping their
half-written logs) as soon as the bench process that started them is gone, even if it was
killed with SIGKILL.

`--out` must be a new or empty folder, or one that `teamenvs bench` wrote for the same suite
(which resumes it): a folder holding another suite's run, or files bench did not write, is
refused before anything is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import math
import os
import shutil
import sys
import threading
import time
import zlib
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence, TextIO
from urllib.parse import urlsplit, urlunsplit

from benchmarks.report import PLOT_FORMATS
from benchmarks.suite import Episode, Suite
from teamenvs.core.config import ConfigError
from teamenvs.core.files import write_whole
from teamenvs.core.recorder import LogError, dumps, read_log, unscored
from teamenvs.core.text import excerpt, printable

LOGS = "logs"
TEMP_PREFIX = ".tmp-"  # logs/.tmp-<pid>/: the logs process <pid> is writing
REPORT_FILES = ("results.csv", "report.md")
FIGURE_SUFFIXES = tuple(f".{f}" for f in PLOT_FORMATS)  # what `benchmarks.figures` writes in plots/
MAX_WORKERS = 1_024  # --workers: processes, each running episodes (and reading logs and drawing figures for the report)


@dataclass
class Outcome:
    """What running one episode gave: its key, and an error text if it failed."""

    key: str
    error: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    kept: bool = False  # it failed, and the finished log an earlier run left is kept


@dataclass
class BenchOutcome:
    suite: Suite
    out: Path
    ran: int
    skipped: int
    failed: list[Outcome]
    seconds: float
    report: Any = None
    damaged: list[str] = field(default_factory=list)  # why each damaged log found at the start was rerun
    report_seconds: float | None = None  # building the report after the episodes (None: not built)
    report_error: str | None = None  # why the report could not be written (a full disk, say); the episodes' logs are kept

    def summary(self) -> str:
        lines = [
            f"suite {_shown(self.suite.name)}: {self.ran} episode(s) run, {self.skipped} already complete (skipped), "
            f"{len(self.failed)} failed, in {self.seconds:.1f} s"
            + (f"; then the report in {self.report_seconds:.1f} s" if self.report_seconds is not None else ""),
        ]
        for why in self.damaged[:10]:
            lines.append(f"  damaged log, rerun: {why}")
        if len(self.damaged) > 10:
            lines.append(f"  ... and {len(self.damaged) - 10} more damaged logs, rerun")
        for f in self.failed[:10]:
            lines.append(f"  failed: {_shown(f.key)}: {_shown(f.error)}" + ("; its finished log from before is kept" if f.kept else ""))
        if len(self.failed) > 10:
            lines.append(f"  ... and {len(self.failed) - 10} more (rerun the same command to retry them)")
        if self.report is not None:
            lines.append(self.report.summary())
        if self.report_error is not None:
            lines.append(f"report not written: {_shown(self.report_error)}; the logs are kept: `teamenvs report "
                         f"{_shown(self.out)}` builds it from them")
        return "\n".join(lines)


def _shown(text: Any) -> str:
    """Outside text (suite names, error messages, file names) as one terminal-safe line."""
    return printable(text, keep_newlines=False)


def log_path(out: Path, episode: Episode) -> Path:
    return out / LOGS / f"{episode.key}.jsonl.gz"


def finished_run(path: Path) -> tuple[Any, str | None]:
    """(the header's `run` entry of the finished log at `path`, None when there is none or it is not finished or
    damaged; why it is damaged, or None)."""
    if not path.is_file():
        return None, None
    try:
        records = read_log(path)
    except LogError as exc:
        return None, str(exc)
    if not records:
        return None, f"{path}: the log is empty"
    if records[-1].get("type") == "error" or records[0].get("type") != "header":  # a failed attempt's log: run again
        return None, None
    if records[-1].get("type") != "end":  # (a log is moved into logs/ when it has ended, or failed)
        return None, f"{path}:{len(records)}: the log stops there, without its end line (cut short)"
    why = unscored(path, records)
    if why is not None:
        return None, str(why)
    return records[0].get("run") or {}, None


def check_log(path: Path, episode: Episode, model: str | None = None,
              settings: Mapping[str, Any] | None = None) -> tuple[bool, str | None]:
    """(whether `path` is a finished log of exactly this episode, why it is damaged or None).

    Finished: the same run header (model and settings included), and an `end` line.
    """
    run, why = finished_run(path)
    return run is not None and _same(run, episode.run_meta(model, settings)), why


def is_complete(path: Path, episode: Episode, model: str | None = None, settings: Mapping[str, Any] | None = None) -> bool:
    """True when `path` is a finished, undamaged log of exactly this episode."""
    return check_log(path, episode, model, settings)[0]


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON, so tuples and lists (and number types) count as the same."""
    return dumps(a) == dumps(b)


# ---------------------------------------------------------------------- the settings an llm episode ran under
BUILTIN_ENDPOINT = "built-in offline server"


def recorded_endpoint(base_url: str | None) -> str:
    """The endpoint as the logs record it: the built-in server (its port changes every run), or the URL
    without credentials, query or fragment, written one way (scheme and host in lower case, no default port,
    no trailing slash), so that two spellings of one endpoint are one endpoint."""
    url = base_url or os.environ.get("OPENAI_BASE_URL")  # as `agents.llm.server.resolve_endpoint` picks it
    if not url:
        return BUILTIN_ENDPOINT
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # not a URL (or a bad port): the client refuses it before any episode runs
        return "not a URL"
    scheme, host = parts.scheme.lower(), parts.hostname or ""
    host = f"[{host}]" if ":" in host else host  # an IPv6 address
    if port is not None and port != {"http": 80, "https": 443}.get(scheme):
        host += f":{port}"
    return urlunsplit((scheme, host, parts.path.rstrip("/"), "", ""))


def recorded_settings(base_url: str | None, temperature: float, max_output_tokens: int, max_calls: int | None,
                      token_budget: int | None, context_window: int | str | None) -> dict[str, Any]:
    """The settings besides the model that change an llm episode's results, for its log header (the policy's
    own options, personas to memory, are in the header's policy entry)."""
    return {"base_url": recorded_endpoint(base_url), "temperature": float(temperature), "max_output_tokens": max_output_tokens,
            "max_calls": max_calls, "token_budget": token_budget, "context_window": context_window}


NOT_RECORDED = "not recorded"


def setting_changes(found: Any, expected: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """(setting, its value in the `found` run header, in `expected`) for each setting that differs, where the headers
    are of the same llm episode; [] when they agree, or are of different episodes."""
    if not isinstance(found, dict) or "model" not in expected:
        return []
    rest = ("model", "settings")
    if not _same({k: v for k, v in found.items() if k not in rest}, {k: v for k, v in expected.items() if k not in rest}):
        return []
    if not isinstance(found.get("settings"), dict):  # written before the settings were recorded
        there = {"model": found.get("model"), "settings": f"{NOT_RECORDED} (a log of an older teamenvs)"}
        here = {"model": expected["model"], "settings": "recorded"}
    else:
        there = {"model": found.get("model"), **found["settings"]}
        here = {"model": expected["model"], **expected.get("settings", {})}
    return [(k, there.get(k, NOT_RECORDED), here.get(k, NOT_RECORDED)) for k in dict.fromkeys([*here, *there])
            if not _same(there.get(k, NOT_RECORDED), here.get(k, NOT_RECORDED))]


def settings_conflict(out: Path, changed: Sequence[list[tuple[str, Any, Any]]]) -> ConfigError:
    """The error refusing to resume a folder whose finished llm logs were run under other settings."""
    seen = list(dict.fromkeys(f"{name} {excerpt(there)} there, {excerpt(here)} here" for changes in changed for name, there, here in changes))
    shown = "; ".join(seen[:6]) + (f"; and {len(seen) - 6} more" if len(seen) > 6 else "")
    return ConfigError(f"--out {_shown(out)} holds {len(changed)} finished llm episode log(s) run under other settings than "
                       f"this command's ({_shown(shown)}): resuming would mix their results with this run's. Give a new --out "
                       "for these settings, or add --force to rerun every episode there (a finished log is replaced only "
                       "when its new run finishes)")


# ---------------------------------------------------------------------- where logs are written
def temp_dir(out: Path) -> Path:
    """This process's folder for the logs it is writing: inside logs/, so moving one into place is a rename."""
    return out / LOGS / f"{TEMP_PREFIX}{os.getpid()}"


def place_log(out: Path, episode: Episode, failed: bool = False) -> bool:
    """Move the episode's log, now over (ended or with its error line), from this process's temp folder into logs/.

    The log of a `failed` attempt never replaces a finished log: that one is kept (True is returned) and the
    failed one dropped.
    """
    final = log_path(out, episode)
    temp = temp_dir(out) / final.name
    if failed and finished_run(final)[0] is not None:
        temp.unlink(missing_ok=True)
        return True
    try:
        os.replace(temp, final)
    except FileNotFoundError:  # the episode failed before its log was opened
        pass
    return False


def _alive(pid: int) -> bool:
    if os.name != "posix":
        return True  # on Windows os.kill(pid, 0) would end the process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clear_temp_dirs(out: Path) -> None:
    """Remove this process's temp folder in logs/ and those of processes that are gone (a killed run's partial logs)."""
    for folder in (out / LOGS).glob(f"{TEMP_PREFIX}*"):
        pid = folder.name.removeprefix(TEMP_PREFIX)
        if folder.is_dir() and pid.isdigit() and (int(pid) == os.getpid() or not _alive(int(pid))):
            shutil.rmtree(folder, ignore_errors=True)


PARENT_POLL_S = 0.2


def _watch_parent(bench_pid: int, out: str) -> None:
    """Worker initializer: once the bench process is gone (even by SIGKILL), drop this worker's partial logs and exit.

    Polling works with every start method: after fork or spawn the parent is the bench process,
    after forkserver it is the fork server, which ends with it.
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent and (parent == bench_pid or _alive(bench_pid)):
            time.sleep(PARENT_POLL_S)
        shutil.rmtree(temp_dir(Path(out)), ignore_errors=True)
        os._exit(1)

    threading.Thread(target=watch, name="bench-parent-watch", daemon=True).start()


# ---------------------------------------------------------------------- the output folder
def _suite_of_folder(out: Path) -> str | None:
    """The suite name in `out/suite.json` (None: no such file); ValueError when it is not one bench wrote."""
    path = out / "suite.json"
    if not path.exists():
        return None
    try:
        name = json.loads(path.read_text(encoding="utf-8")).get("name")
    except (OSError, ValueError, AttributeError):
        name = None
    if not isinstance(name, str):
        raise ValueError("suite.json (not one `teamenvs bench` wrote)")
    return name


def _suite_of_log(path: Path) -> str | None:
    """The suite a log's header names ('' for a log of no suite; None when its first line cannot be read)."""
    try:
        with gzip.open(path, "rb") as f:
            head = json.loads(f.readline(1 << 20))
    except (OSError, EOFError, ValueError, RecursionError, zlib.error):
        return None
    run = head.get("run") if isinstance(head, dict) else None
    suite = run.get("suite") if isinstance(run, dict) else ""
    return suite if isinstance(suite, str) else ""


def _foreign_logs(logs: Path, suite: Suite) -> list[str]:
    keys = {e.key for e in suite.episodes()}
    found = []
    for path in sorted(logs.iterdir()):
        name = path.name
        if name.startswith("."):  # temp folders, hidden files
            continue
        if path.is_symlink():  # bench writes no links, and a log it replaces would be written at the link's target
            found.append(f"{LOGS}/{name} (a link)")
        elif not (path.is_file() and name.endswith(".jsonl.gz")):
            found.append(f"{LOGS}/{name}" + ("/" if path.is_dir() else ""))
        elif name.removesuffix(".jsonl.gz") not in keys:
            other = _suite_of_log(path)
            if other not in (None, suite.name):  # an unreadable one is the report's to list as damaged
                found.append(f"{LOGS}/{name} (a log of {f'suite {other!r}' if other else 'no bench suite'})")
    return found


def foreign_files(out: Path, suite: Suite, resumable: bool) -> list[str]:
    """What in `out` a bench run of `suite` would overwrite or count without having written it.

    `resumable`: `out/suite.json` names this suite, so its report files and plots are this suite's.
    """
    found = []
    for path in sorted(out.iterdir()):
        name = path.name
        if name.startswith(".") or name == "suite.json":
            continue
        if path.is_symlink() and path.is_dir():  # (a link to a file is replaced by the file bench writes, not written through)
            found.append(f"{name} (a link to a folder: bench would write into that folder)")
        elif name == LOGS and path.is_dir():
            found += _foreign_logs(path, suite)
        elif resumable and name in REPORT_FILES and path.is_file():
            continue
        elif resumable and name == "plots" and path.is_dir():
            found += [f"plots/{p.name}" for p in sorted(path.iterdir()) if not (p.name.startswith(".") or p.name.endswith(FIGURE_SUFFIXES))]
        else:
            found.append(name + ("/" if path.is_dir() else ""))
    return found


def check_out_folder(out: Path, suite: Suite) -> None:
    """Refuse an `--out` folder holding another suite's run or files bench did not write; a new, empty or same-suite one is fine."""
    where = _shown(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {where} is a file, not a folder: choose a new folder")
    if not out.exists():
        return
    try:
        other = _suite_of_folder(out)
    except ValueError as exc:
        other, foreign = None, [str(exc)]
    else:
        foreign = []
    if other is not None and other != suite.name:
        raise ConfigError(f"--out {where} holds a run of suite {_shown(repr(other))}, not {_shown(repr(suite.name))}: "
                          f"choose a new folder for this suite, or remove {where} to start over "
                          "(the same command with that suite resumes its run)")
    foreign += foreign_files(out, suite, resumable=other is not None)
    if foreign:
        shown = ", ".join(_shown(f) for f in foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise ConfigError(f"--out {where} holds files `teamenvs bench` did not write for suite {_shown(repr(suite.name))} "
                          f"({shown}), which it would overwrite or count as episodes: choose a new folder, or move them out")


# ---------------------------------------------------------------------- progress
def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else f"{seconds // 60}:{seconds % 60:02d}"


class Progress:
    """A one-line progress bar on a terminal (a line per tenth of the run elsewhere): episodes
    done, failures, elapsed time, ETA and, for LLM runs, tokens and estimated cost so far.

    Scripted episodes run first, then the `llm_total` LLM episodes, which take far longer: the
    ETA times each kind on its own (the LLM part from its own finished episodes; "?" with the
    number left while none has finished yet), never LLM episodes at the scripted pace."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None, enabled: bool = True, llm_total: int = 0) -> None:
        self.total = total
        self.llm_total = llm_total
        self.llm_start: float | None = None  # when the LLM episodes began (start_llm)
        self.scripted_end: float | None = None
        self.label = _shown(label)
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = self.failed = 0
        self.tokens = 0
        self.cost: float | None = None
        self.start = time.perf_counter()
        self._shown_tenth = -1

    def start_llm(self) -> None:
        """The scripted episodes are done; the LLM ones begin (their pace is timed from here)."""
        self.llm_start = time.perf_counter()
        self.scripted_end = self.llm_start

    def eta(self, now: float) -> str:
        scripted_total = self.total - self.llm_total
        if self.llm_start is None:  # still in the scripted part
            scripted_done = self.done
            left = (now - self.start) / scripted_done * (scripted_total - scripted_done) if scripted_done else None
            if self.llm_total:
                return (_clock(left) if left is not None else "?") + f" + {self.llm_total} LLM episodes (not timed yet)"
            return _clock(left) if left is not None else "?"
        llm_done = self.done - scripted_total
        if llm_done <= 0:
            return f"? ({self.llm_total} LLM episodes, not timed yet)"
        return _clock((now - self.llm_start) / llm_done * (self.llm_total - llm_done))

    def line(self) -> str:
        now = time.perf_counter()
        elapsed = now - self.start
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        eta = self.eta(now)
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

    error: str | None = "interrupted"
    try:
        env = episode.make_env()
        policies = make_policies(env, episode.policy.policy, seed=episode.seed)
        run_episode(env, policies, seed=episode.seed, log_dir=temp_dir(Path(out)), log_name=episode.key,
                    max_steps=episode.group.max_steps, compress=True, run=episode.run_meta(), time_limit=time_limit)
        error = None
    except Exception as exc:  # the log keeps its error line; the run goes on with the other episodes
        error = f"{type(exc).__name__}: {exc}"
    finally:
        kept = place_log(Path(out), episode, failed=error is not None)
    return Outcome(episode.key, error, kept=kept)


def _run_scripted_all(episodes: Sequence[Episode], out: Path, workers: int, progress: Progress,
                      time_limit: float | None = DEFAULT_EPISODE_TIMEOUT) -> list[Outcome]:
    outcomes: list[Outcome] = []
    if not episodes:  # (every episode an LLM team's, or already complete)
        return outcomes
    if workers == 1 or len(episodes) == 1:
        for episode in episodes:
            outcomes.append(run_scripted(episode, str(out), time_limit))
            progress.update(1, int(outcomes[-1].error is not None))
        return outcomes
    # no more processes than episodes: the pool starts every worker it may use at once (--workers 10**30 never got past that)
    with ProcessPoolExecutor(max_workers=min(workers, len(episodes)), initializer=_watch_parent,
                             initargs=(os.getpid(), str(out))) as pool:
        futures = [pool.submit(run_scripted, e, str(out), time_limit) for e in episodes]
        try:
            for future in as_completed(futures):
                outcomes.append(future.result())
                progress.update(1, int(outcomes[-1].error is not None))
        except KeyboardInterrupt:
            # Ctrl-C: the episodes not yet started are dropped (leaving the block would wait for every one of them);
            # those in progress end with the workers' own interrupt and are rerun on resume
            pool.shutdown(wait=True, cancel_futures=True)
            raise
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
    token_budget: int | None = None  # prompt + completion tokens per episode
    price: tuple[float, float] | None = None
    episode_timeout: float | None = DEFAULT_EPISODE_TIMEOUT
    timeout: float = 60.0  # seconds per model call
    max_output_tokens: int = 512  # each call's output limit (the API's max_tokens)
    context_window: int | str | None = None  # tokens, or "auto" (as the server states it): prompts are fitted into it
    cache: bool | None = None  # the client's response cache (None: at temperature 0); off for a built-in server started for the run
    recorded: Mapping[str, Any] | None = None  # what each log header records of these settings (`recorded_settings`)


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
                             token_budget=settings.token_budget, personas=personas, theory=theory, constrain=spec.constrain,
                             memory=spec.memory, context_window=settings.context_window)


async def _run_llm_all(episodes: Sequence[Episode], out: Path, settings: ModelSettings, progress: Progress) -> list[Outcome]:
    from agents.llm.client import LLMClient
    from agents.loop import arun_episode, usage_summary
    from agents.probes import Prober

    prices = {settings.model.partition("+")[0]: settings.price} if settings.price else None
    client = LLMClient(settings.model, base_url=settings.base_url, concurrency=settings.concurrency,
                       temperature=settings.temperature, prices=prices, timeout=settings.timeout,
                       max_tokens=settings.max_output_tokens, cache=settings.cache)
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
            error: str | None = "cancelled"
            try:
                env = episode.make_env()
                policies = _llm_policies(env, episode, client, settings)
                live[episode.key] = policies
                spec = episode.policy
                await arun_episode(env, policies, seed=episode.seed, log_dir=temp_dir(out), log_name=episode.key,
                                   max_steps=episode.group.max_steps, compress=True,
                                   run=episode.run_meta(settings.model, settings.recorded),
                                   probes=Prober.for_env(episode.group.env, spec.probes_every) if spec.probes_every else None,
                                   interview=spec.interview, time_limit=settings.episode_timeout)
                error = None
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
            finally:
                kept = place_log(out, episode, failed=error is not None)
                policies = live.pop(episode.key, {})
                usage = usage_summary(policies).get("total", {})
                finished_tokens += usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
                finished_cost += usage.get("cost_usd", 0.0)
            tally()
            progress.update(1, int(error is not None))
            return Outcome(episode.key, error, usage, kept)

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
def _episodes_to_run(out: Path, episodes: Sequence[Episode], model: str | None,
                     recorded: Mapping[str, Any] | None) -> tuple[list[Episode], list[str]]:
    """(the episodes without a finished log of exactly theirs in `out`, why each damaged log found is damaged).

    ConfigError when finished llm logs there were run under other settings (a model, endpoint, temperature, ...):
    resuming would mix results of different settings.
    """
    todo, damaged, changed = [], [], []
    for e in episodes:
        run, why = finished_run(log_path(out, e))
        expected = e.run_meta(model, recorded)
        if why is not None:
            damaged.append(why)
        if run is None or not _same(run, expected):
            todo.append(e)
            changes = setting_changes(run, expected)
            if changes:
                changed.append(changes)
    if changed:
        raise settings_conflict(out, changed)
    return todo, damaged


def parse_price(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    parts = text.split(",")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 2 or not all(0 <= v < math.inf for v in values):  # NaN, inf and negative prices are refused
        raise ConfigError(f"--price expects IN,OUT: USD per 1M prompt and completion tokens, e.g. 0.15,0.60; got {excerpt(text)}")
    return values  # type: ignore[return-value]


def check_token_options(max_output_tokens: Any, context_window: Any) -> None:
    """ConfigError unless the output limit is a positive whole number and the context window is None,
    "auto" or a whole number of tokens with room for a prompt beside that limit."""
    if not isinstance(max_output_tokens, int) or isinstance(max_output_tokens, bool) or max_output_tokens < 1:
        raise ConfigError(f"--max-output-tokens must be a whole number of tokens >= 1, got {excerpt(max_output_tokens)}")
    if context_window is None or context_window == "auto":
        return
    if not isinstance(context_window, int) or isinstance(context_window, bool) or context_window < 256:
        raise ConfigError(f"--context-window must be 'auto' or a whole number of tokens >= 256, got {excerpt(context_window)}")
    if context_window - max_output_tokens < 128:  # (agents.llm.policy.MIN_PROMPT_TOKENS: the same rule for a window stated)
        raise ConfigError(f"--context-window {context_window} leaves no room for a prompt beside --max-output-tokens "
                          f"{max_output_tokens}: lower the output limit or raise the window")


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
    token_budget: int | None = None,
    price: str | tuple[float, float] | None = None,
    stream: TextIO | None = None,
    report: bool = True,
    episode_timeout: float | None = DEFAULT_EPISODE_TIMEOUT,
    timeout: float = 60.0,
    plots: bool | str | Sequence[str] = True,
    max_output_tokens: int = 512,
    context_window: int | str | None = None,
) -> BenchOutcome:
    """Run the suite's episodes that are not complete in `out` yet, then build the report there.

    The report reads the logs and draws the figures in `workers` processes too; `plots` picks their formats
    ("png,svg,pdf" by default; "png" draws a third of the files, quicker); `plots=False` (or "none") leaves
    the figures out (`teamenvs report` on the folder draws them later, from the logs alone).

    An episode that runs longer than `episode_timeout` seconds of wall-clock time (None: no
    limit) is stopped and reported as failed; the next run retries it. `timeout` bounds each
    model call (seconds; a slow local server answering one request at a time needs more).
    `max_calls` and `token_budget` bound each episode's model calls and tokens; `max_output_tokens`
    bounds each reply; `context_window` (tokens, or "auto": as the server states it) fits every
    prompt and its reply into the model's window.
    """
    from benchmarks.report import build_report, plot_formats

    out = Path(out)
    plots = plot_formats(plots)  # a bad format is refused before any episode runs
    if suite.needs_model and not model:
        raise ConfigError(f"suite {suite.name!r} has llm policies: give --model (e.g. --model gpt-4o-mini --base-url URL, "
                          "or --model random-valid for the built-in offline server)")
    if not suite.needs_model and (model or base_url):
        raise ConfigError(f"suite {suite.name!r} has no llm policies, so --model and --base-url would not be used")
    workers = workers if workers is not None else os.cpu_count() or 1
    if episode_timeout is not None and not (isinstance(episode_timeout, (int, float)) and episode_timeout > 0):
        raise ConfigError(f"--episode-timeout must be a positive number of seconds, got {excerpt(episode_timeout)}")
    if workers < 1 or concurrency < 1:
        raise ConfigError(f"--workers and --concurrency must be at least 1, got {excerpt(workers)} and {excerpt(concurrency)}")
    if workers > MAX_WORKERS:
        raise ConfigError(f"--workers must be at most {MAX_WORKERS:,} (processes on this machine), got {excerpt(workers)}")
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ConfigError(f"--timeout must be a positive number of seconds, got {excerpt(timeout)}")
    check_token_options(max_output_tokens, context_window)
    price = parse_price(price) if isinstance(price, str) or price is None else price
    check_out_folder(out, suite)
    with _holding(out):
        check_out_folder(out, suite)  # again, now that no other run can be writing there
        recorded = recorded_settings(base_url, temperature, max_output_tokens, max_calls, token_budget, context_window) if model else None
        episodes = suite.episodes()
        todo, damaged = (list(episodes), []) if force else _episodes_to_run(out, episodes, model, recorded)
        (out / LOGS).mkdir(parents=True, exist_ok=True)
        clear_temp_dirs(out)
        write_whole(out / "suite.json", dumps(suite.to_json()) + "\n")
        skipped = len(episodes) - len(todo)
        scripted = [e for e in todo if not e.policy.is_llm]
        llm = [e for e in todo if e.policy.is_llm]
        bar = Progress(len(todo), f"bench {suite.name}", stream=stream, enabled=progress, llm_total=len(llm))
        start = time.perf_counter()
        outcomes: list[Outcome] = []
        try:
            outcomes += _run_scripted_all(scripted, out, workers, bar, episode_timeout)
            if llm:
                from agents.llm.server import resolve_endpoint
                from agents.loop import run_blocking

                assert model is not None
                url, server = resolve_endpoint(model, base_url)
                # the built-in server started here listens on a new port each run, so its replies (test doubles,
                # instant) could never be served from the cache again: they are not written to it
                settings = ModelSettings(model, url, concurrency, temperature, max_calls, token_budget, price, episode_timeout, timeout,
                                         max_output_tokens, context_window, cache=False if server is not None else None,
                                         recorded=recorded)
                bar.start_llm()
                try:
                    outcomes += run_blocking(_run_llm_all(llm, out, settings, bar))  # also from a notebook
                finally:
                    if server is not None:
                        server.stop()
        finally:
            bar.close()
            clear_temp_dirs(out)
        failed = [o for o in outcomes if o.error is not None]
        result = BenchOutcome(suite, out, len(todo), skipped, failed, time.perf_counter() - start, damaged=damaged)
        if report:
            start = time.perf_counter()
            try:
                result.report = build_report(out, plots=plots, workers=workers)
            except OSError as exc:  # (what the episodes did is said all the same, and their logs are whole)
                result.report_error = f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
            result.report_seconds = time.perf_counter() - start
        return result


LOCK = ".bench.lock"  # in an --out folder: held by the bench run writing there


@contextlib.contextmanager
def _holding(out: Path) -> Iterator[None]:
    """Hold `out` for this process: a second bench run into the same folder at once is refused, as its finished logs
    and the first run's would replace each other (whatever their settings), and each would clear the other's temporary
    folders. Where the platform has no `fcntl` (Windows) nothing is held."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    try:
        out.mkdir(parents=True, exist_ok=True)
        # never through a link planted in the folder: the holder's pid would be written over whatever it points at
        handle = os.fdopen(os.open(out / LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644), "r+",
                           encoding="utf-8")
    except OSError as exc:
        link = " (it is a link: remove it)" if (out / LOCK).is_symlink() else ""
        raise ConfigError(f"--out {_shown(out)} cannot be written: {_shown(LOCK)}: {exc.strerror or exc}{link}") from None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read(40).strip()
            raise ConfigError(f"--out {_shown(out)} is being written by another `teamenvs bench` run"
                              f"{f' (process {_shown(holder)})' if holder else ''}: wait for it to end, or choose another "
                              "folder (two runs into one folder would replace each other's logs)") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


