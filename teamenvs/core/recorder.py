"""Episode recorder: one JSONL line per step, flushed as it goes, replayable and diff-able.

Line 1 is the header (env id, config, preset, seed, package version, agents); line 2 the
reset (first observations); then one line per step holding, per agent, the observation it
received, its raw action, the parsed action or the error, its reward and its events, plus
the step's global events. The step loop may add per-agent extras (a policy's rationale,
model usage) with `annotate` before the step is written, and an `end` line with the
metrics. The file is flushed after every line, so a crash loses nothing already written.
Nothing time-dependent is written by the env, so the same seed and actions give a
byte-identical log. A path ending in `.gz` is written gzip-compressed (still flushed per
line, so a killed run keeps every line written before it); `read_log` reads both.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from pathlib import Path
from typing import Any, Iterator

MAX_LOGGED_ACTION_CHARS = 20_000


def _default(obj: Any) -> Any:
    if hasattr(obj, "to_json"):
        return obj.to_json()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    if hasattr(obj, "items"):
        return dict(obj)
    return str(obj)


# Characters that JSON leaves raw inside strings (with ensure_ascii=False) but that
# `str.splitlines` and many JSONL readers treat as line breaks: written escaped instead.
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def dumps(record: dict[str, Any]) -> str:
    """The one JSON spelling used in logs: one physical line per record, whatever the text inside."""
    text = json.dumps(record, ensure_ascii=False, default=_default)
    for raw, escaped in _LINE_BREAKS.items():
        if raw in text:
            text = text.replace(raw, escaped)
    return text


def clip_raw_action(raw: Any) -> Any:
    """A raw action as it is logged: strings longer than the log limit are cut, with a marker."""
    if isinstance(raw, str) and len(raw) > MAX_LOGGED_ACTION_CHARS:
        return raw[:MAX_LOGGED_ACTION_CHARS] + f"...[cut: {len(raw):,} characters in all]"
    if raw is None or isinstance(raw, (str, int, float, bool)):
        return raw
    return repr(raw)[:MAX_LOGGED_ACTION_CHARS]


class EpisodeRecorder:
    """Collects an episode's records in memory and, given a path, writes them as JSONL."""

    def __init__(self, path: str | Path | None = None, *, keep: bool = True, run: dict[str, Any] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.keep = keep
        self.run = run  # who ran the episode and why (a benchmark's suite, condition, policy): the header's "run"
        self.records: list[dict[str, Any]] = []
        self._extras: dict[str, dict[str, Any]] = {}
        self._file = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open_log(self.path, "w")

    def annotate(self, agent: str, **extra: Any) -> None:
        """Attach extra fields (e.g. rationale, usage) to `agent`'s entry of the next step line."""
        self._extras.setdefault(agent, {}).update(extra)

    def write(self, record: dict[str, Any]) -> None:
        if self.run is not None and record.get("type") == "header":
            record = {**record, "run": self.run}
        if self._extras and record.get("type") == "step":
            for agent, extra in self._extras.items():
                if agent in record["agents"]:
                    record["agents"][agent].update(extra)
            self._extras = {}
        if self.keep:
            self.records.append(record)
        if self._file is not None:
            self._file.write(dumps(record) + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> "EpisodeRecorder":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def open_log(path: str | Path, mode: str = "r") -> Any:
    """A log file opened as text, gzip-compressed when its name ends in `.gz`."""
    if str(path).endswith(".gz"):
        if mode == "w":  # no time stamp in the gzip header, so the same episode gives the same bytes
            return io.TextIOWrapper(gzip.GzipFile(path, "wb", mtime=0), encoding="utf-8")
        return gzip.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSONL episode log (or `.jsonl.gz`); a truncated end (a crash mid-write) is skipped."""
    records = []
    with open_log(path) as f:
        try:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    records.append(json.loads(line))
                except ValueError:
                    break
        except (EOFError, zlib.error, gzip.BadGzipFile):
            pass  # a compressed log cut off mid-stream: keep the lines before the cut
    return records


def step_records(records: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The step lines of an episode log."""
    return (r for r in records if r.get("type") == "step")


def header_record(env: Any, seed: int | None) -> dict[str, Any]:
    """A log's first line: env id, package version, preset, seed, resolved config, agents."""
    from teamenvs._version import __version__
    from teamenvs.core.config import config_to_json

    return {"type": "header", "env_id": env.env_id, "version": __version__, "preset": env.preset, "seed": seed,
            "config": config_to_json(env.config), "agents": list(env.possible_agents)}


def step_record(env: Any, texts: dict[str, str], actions: Any, rewards: dict[str, float], done: bool) -> dict[str, Any]:
    """A log's line for one step: per agent the observation text, raw and parsed action, reward and events."""
    return {
        "type": "step",
        "step": env.step_count,
        "agents": {
            a: {"observation": texts[a], "raw_action": clip_raw_action(actions.get(a)), "action": env._last_action[a],
                "reward": rewards[a], "events": env._events[a]}
            for a in rewards
        },
        "events": env.global_events,
        "done": done,
    }
