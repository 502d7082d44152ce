"""`teamenvs report`: results.csv, report.md and plots of a bench folder, rebuilt from its episode logs alone.

Each log's header says which suite, group, condition, policy and seed the episode was (the
`run` entry `teamenvs bench` writes); its `end` line holds the returns, the paradigm's
metrics and the model usage. Logs without a `run` entry (e.g. from `teamenvs run
--log-dir`) are grouped by env, preset and file name. Logs without an `end` line are
counted as incomplete and left out of the tables. A damaged log, or a file that is not an
episode log (`read_log` raises `LogError`), is left out of everything and listed, with its
line, field and why, in report.md and the summary. Two logs of one episode (`episode_identity`: a copy,
a gunzipped twin) count once, the others listed as duplicates; an llm policy's episodes run under
different settings are shown apart (`split_by_settings`), and so are a condition's episodes run under different
configs (`split_by_config`: logs of `teamenvs run` with other `--set` values). Outside text reaches report.md through
`md_text`, `md_cell` and `md_code` (one line, no control characters, HTML and `|` escaped).

- `results.csv`: one row per episode, in suite order: suite, group, env, condition, preset,
  overrides, policy, model, seed, status, env_steps, returns, every metric (nested ones flattened as `a.b.c`,
  booleans as 0/1) and the model usage; a text cell that a spreadsheet would run as a formula
  (starting with =, +, -, @, tab or CR) is prefixed with `'` (numbers stay numbers);
- `report.md`: per group, mean ± sd (population sd over seeds) of every scalar metric for
  each condition x policy, the best policy of each condition in bold (best condition when
  a group compares one policy), by the metric's direction (↑ / ↓, from the paradigm);
- `plots/`: per group, the figures `benchmarks.figures` draws (a headline metric with 95%
  Student-t CIs and the seeds, the metrics with a direction, per-round series, per-agent
  returns and actions, survival curves), each as PNG (linked from report.md), SVG and PDF by
  default (`plots`: the formats to write, or none).

Logs are read, and figures drawn, in `workers` processes; the output is the same byte for byte
whatever their number.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from teamenvs.core.config import ConfigError
from teamenvs.core.files import write_whole
from teamenvs.core.metrics import SHARE, flatten, mean_ci, mean_sd
from teamenvs.core.recorder import LogError, dumps, read_log, step_records, unscored
from teamenvs.core.text import clean_text, excerpt, printable

USAGE_KEYS = ("calls", "retries", "cached", "prompt_tokens", "completion_tokens", "cost_usd")
PLOT_FORMATS = ("png", "svg", "pdf")  # the figure files `benchmarks.figures` can write, in the order report.md prefers to link them


def plot_formats(plots: bool | str | Sequence[str] | None) -> tuple[str, ...]:
    """The figure formats to write: True or None: all of `PLOT_FORMATS`; False or "none": none; else a comma-separated
    string (or a sequence) of them, in any order (ConfigError naming an unknown one)."""
    if plots is None or plots is True:
        return PLOT_FORMATS
    if plots is False or (not isinstance(plots, str) and not plots):  # False, or an empty sequence of formats
        return ()
    names = plots.split(",") if isinstance(plots, str) else list(plots)
    chosen = {str(n).strip().lower() for n in names} - {""}
    if chosen == {"none"}:
        return ()
    unknown = sorted(chosen - set(PLOT_FORMATS))
    if unknown or not chosen:
        got = f"unknown format(s) {', '.join(excerpt(u) for u in unknown)}" if unknown else "no format"
        raise ConfigError(f"plots: {got}; give a comma-separated list of {', '.join(PLOT_FORMATS)}, or none")
    return tuple(f for f in PLOT_FORMATS if f in chosen)


@dataclass
class EpisodeRow:
    """One episode as the report sees it."""

    path: Path
    suite: str
    group: str
    env: str
    condition: str
    preset: str | None
    overrides: Mapping[str, Any]
    policy: str
    seed: int | None
    order: tuple[int, int, int]
    status: str  # complete | budget (stopped by the model-call budget: not counted) | error | incomplete
    model: str = ""  # for LLM policies
    steps: int = 0
    returns: dict[str, float] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    actions: dict[str, Counter] = field(default_factory=dict)  # agent -> accepted commands
    sources: Counter = field(default_factory=Counter)  # where the model's actions were read (agents.llm.policy.SOURCES)
    months: int | None = None
    description: str = ""
    error: str = ""
    config: dict[str, Any] = field(default_factory=dict)  # the header's resolved config
    agents: list[str] = field(default_factory=list)
    series: dict[str, list[float | None]] = field(default_factory=dict)  # per-round quantities (SERIES), index 0 = round 1
    identity: str = ""  # which episode this is (`episode_identity`): two logs of one identity are one episode
    settings: dict[str, Any] = field(default_factory=dict)  # an llm policy's model and the settings its header records


def log_files(folder: Path) -> list[Path]:
    """The episode logs in `folder`; hidden files are not (bench's temporary files, and what bench's check of a folder
    passes over, as it does every hidden name)."""
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".") and p.is_file()
                  and (p.name.endswith(".jsonl") or p.name.endswith(".jsonl.gz")))


def _accepted_actions(records: Sequence[dict[str, Any]]) -> dict[str, Counter]:
    counts: dict[str, Counter] = defaultdict(Counter)
    for step in step_records(records):
        for agent, entry in step["agents"].items():
            action = entry.get("action") or {}
            if action.get("ok") and not action.get("ignored") and action.get("command"):
                counts[agent][action["command"]] += 1
    return dict(counts)


def _action_sources(records: Sequence[dict[str, Any]]) -> Counter:
    """How many of a model's actions were read from each part of its replies (the log's `source`:
    "json", "action line", "single line", "prose", "echo" (none), prefixed "constrained" when constrained)."""
    counts: Counter = Counter()
    for step in step_records(records):
        for entry in step["agents"].values():
            source = entry.get("source")
            if isinstance(source, str):  # from a file: anything but a few plain words is counted as "other"
                counts[source if _SOURCE_NAME.fullmatch(source) else "other"] += 1
    return counts


_SOURCE_NAME = re.compile(r"[a-z]+(?: [a-z]+){0,3}")


# ---------------------------------------------------------------------- per-round series
@dataclass(frozen=True)
class Series:
    """A quantity a paradigm's episodes have per round (month, vote, step), read from a log's steps."""

    name: str
    title: str  # the y axis, in words with units
    x_label: str
    read: Callable[[Sequence[dict[str, Any]]], list[float | None]]
    after_end: str = "gap"  # an episode that ended sooner counts after its end as: "gap" (not at all) or "last" (its last value)
    ticks: tuple[str, ...] = ()  # names of the x positions, where they are not numbers
    bounds: tuple[float, float] = (-math.inf, math.inf)  # the least and most a round's value can be (a share: SHARE)


def _events(records: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for step in step_records(records) for e in step.get("events", ()) if isinstance(e, dict) and e.get("type") == kind]


def _number_or_none(value: Any) -> float | None:
    return float(value) if _is_number(value) and not isinstance(value, bool) else None


def cooperation_per_round(records: Sequence[dict[str, Any]]) -> list[float | None]:
    """DayTrader: per round, the share of investments that went into the group pool (None: nobody invested)."""
    out: list[float | None] = []
    for event in _events(records, "round"):
        kinds = [c.get("kind") for c in (event.get("choices") or {}).values() if isinstance(c, dict)]
        invested = [k for k in kinds if k != "wait"]
        out.append(sum(k == "group" for k in invested) / len(invested) if invested else None)
    return out


def stock_per_month(records: Sequence[dict[str, Any]]) -> list[float | None]:
    """Commons: the fish in the lake at the start of each month (tons); after a collapse, 0 for the months left."""
    months = _events(records, "month")
    out = [_number_or_none(m.get("stock_before")) for m in months]
    horizon = (records[0].get("config") or {}).get("months")
    if months and months[-1].get("collapsed") and isinstance(horizon, int) and 0 < horizon <= MAX_MONTHS:
        out += [0.0] * (horizon - len(out))  # the fishery is closed: no fish to count, not an unknown
    return out


def best_candidate_votes(records: Sequence[dict[str, Any]]) -> list[float | None]:
    """Hidden profile: per vote (initial, final), the share of members voting for the best candidate."""
    out: list[float | None] = []
    for event in _events(records, "votes"):
        votes = [v for v in (event.get("votes") or {}).values()]
        out.append(sum(v == event.get("best") for v in votes) / len(votes) if votes else None)
    return out


def _cumulative(records: Sequence[dict[str, Any]], kind: str) -> list[float | None]:
    """Per step, how many `kind` events happened up to and including it."""
    out: list[float | None] = []
    total = 0
    for step in step_records(records):
        total += sum(isinstance(e, dict) and e.get("type") == kind for e in step.get("events", ()))
        out.append(float(total))
    return out


def route_accuracy_per_step(records: Sequence[dict[str, Any]]) -> list[float | None]:
    """Map task: after each step, the accuracy of the follower's route as drawn so far (0 before any drawing)."""
    out: list[float | None] = []
    accuracy = 0.0
    for step in step_records(records):
        for e in step.get("events", ()):
            if isinstance(e, dict) and e.get("type") == "drawing" and _number_or_none(e.get("accuracy")) is not None:
                accuracy = float(e["accuracy"])
        out.append(accuracy)
    return out


MAX_MONTHS = 10_000  # an edited log's month count must not make a curve endless

COUNT = (0.0, math.inf)  # the bounds of a count or a stock

SERIES: dict[str, Series] = {
    "day_trader_v0": Series("cooperation", "cooperation (share of investments into the group pool)", "round", cooperation_per_round,
                            bounds=SHARE),
    "commons_v0": Series("stock", "fish stock at the start of the month (tons; 0 after a collapse)", "month", stock_per_month,
                         bounds=COUNT),
    "hidden_profile_v0": Series("votes", "share of members voting for the best candidate", "vote", best_candidate_votes,
                                ticks=("initial vote", "final vote"), bounds=SHARE),
    "search_rescue_v0": Series("rescued", "victims rescued so far", "step", lambda r: _cumulative(r, "rescued"), after_end="last",
                               bounds=COUNT),
    "shape_factory_v0": Series("fulfilled", "orders fulfilled so far", "step", lambda r: _cumulative(r, "fulfilled"), after_end="last",
                               bounds=COUNT),
    "map_task_v0": Series("route", "route accuracy of the drawing so far", "step", route_accuracy_per_step, after_end="last",
                          bounds=SHARE),
}


def episode_series(env: str, records: Sequence[dict[str, Any]]) -> dict[str, list[float | None]]:
    """The paradigm's per-round series of one episode ({} for a paradigm without one, or a log missing its fields)."""
    spec = SERIES.get(env)
    if spec is None:
        return {}
    try:
        return {spec.name: spec.read(records)}
    except (AttributeError, KeyError, TypeError, ValueError, ZeroDivisionError):  # an edited log: no series, still a report
        return {}


def read_episode(path: Path) -> EpisodeRow:
    """The report's view of one log; `LogError` for a damaged log or a file that is not an episode log."""
    records = read_log(path)
    if not records:  # killed before its header was written
        return EpisodeRow(path, "", "", "", "", None, {}, "", None, (0, 0, 0), "incomplete", identity=f"file {path.name}")
    head = records[0]
    if head.get("type") != "header" or "env_id" not in head:
        raise LogError(path, None, "header", "the first line is not a header naming an env_id: not a teamenvs episode log")
    run = head.get("run") or {}
    condition = run.get("condition") or {}
    policy = run.get("policy") or {}
    # a plain `teamenvs run` log is named <env id>_<policy>_seed<N>
    # (or <env id>_<policy>_seed<N>-<k> where that name was taken: `agents.claim_log_name`)
    stem = re.sub(r"_seed\d+(?:-\d+)?$", "", path.name.split(".jsonl")[0]).removeprefix(f"{head['env_id']}_")
    last = records[-1]
    status = {"end": "complete", "error": "error"}.get(last.get("type"), "incomplete")
    if status == "complete":
        why = unscored(path, records)
        if why is not None:  # an end line with its steps or returns taken out, or a header without its agents: damage
            raise why
    if status == "complete" and last.get("status") == "budget":
        status = "budget"  # a partial episode: its metrics cover only the steps played, so it is not counted
    row = EpisodeRow(
        path=path,
        suite=run.get("suite", ""),
        group=run.get("group", head["env_id"]),
        env=head["env_id"],
        condition=condition.get("name") or head.get("preset") or "default",
        preset=condition.get("preset", head.get("preset")),
        overrides=condition.get("set", {}),
        policy=policy.get("label") or stem,
        seed=head.get("seed"),
        order=tuple(run.get("index", (0, 0, 0))),  # type: ignore[arg-type]
        status=status,
        model=run.get("model") or "",
        description=run.get("description", ""),
        months=(head.get("config") or {}).get("months"),
        config=dict(head.get("config") or {}),
        agents=[a for a in head.get("agents") or [] if isinstance(a, str)],
        identity=episode_identity(head, stem),
        settings=_llm_settings(run),
    )
    if status == "error":
        row.error = last.get("error", "")
    if status == "budget":
        row.error = str(last.get("warning", "the model-call budget was spent"))
    if status == "complete":
        row.steps = last.get("steps", 0)
        row.returns = dict(last.get("returns", {}))
        row.metrics = dict(last.get("metrics", {}))
        row.usage = dict((last.get("usage") or {}).get("total", {}))
        row.actions = _accepted_actions(records)
        row.sources = _action_sources(records)
        row.series = episode_series(row.env, records)
    return row


def episode_identity(head: Mapping[str, Any], stem: str) -> str:
    """Which episode a log is of: its header's env, preset, config and seed, with its whole `run` entry (suite, group,
    condition, policy, seed, model, settings) for a bench log, or the policy in its file name for a plain one."""
    episode = [head.get("env_id"), head.get("preset"), head.get("config"), head.get("seed")]
    run = head.get("run")
    return dumps(["run", run, *episode] if run else ["plain", stem, *episode])


def _llm_settings(run: Mapping[str, Any]) -> dict[str, Any]:
    """An llm episode's model and recorded settings ({} for other policies)."""
    if "model" not in run:
        return {}
    settings = run.get("settings")  # (not in the logs of an older teamenvs)
    return {"model": run.get("model"), **(settings if isinstance(settings, dict) else {})}


NOT_RECORDED = "not recorded"


def sources_markdown(g: Any, cells: Sequence[tuple[str, str]]) -> list[str]:
    """Where the model's actions were read from, as shares of its decisions per cell: a free reply's
    command found only in its prose is a weaker signal than one on an `ACTION:` line or in a JSON object,
    and "echo" replies (nothing but lines copied from the prompt) gave no action at all."""
    totals = {cell: sum((r.sources for r in g.cells[cell]), Counter()) for cell in cells}
    kinds = sorted({k for t in totals.values() for k in t}, key=lambda k: (k.startswith("constrained"), k))
    if not kinds:
        return []
    lines = ["Where the model's actions were read from (share of its decisions; \"echo\": only lines copied from the prompt, no action):", "",
             "| condition | policy | decisions | " + " | ".join(kinds) + " |",
             "|---|---|---:|" + "---:|" * len(kinds)]
    for (c, p), total in totals.items():
        n = sum(total.values())
        lines.append(f"| {md_cell(c)} | {md_cell(p)} | {n:,} | " + " | ".join(f"{total[k] / n:.0%}" if n else "-" for k in kinds) + " |")
    return lines + [""]


def _read_or_error(path: Path) -> EpisodeRow | tuple[Path, int | None, str, str]:
    try:
        return read_episode(path)
    except LogError as exc:  # returned as its fields: a LogError does not survive pickling between processes
        return exc.path, exc.line, exc.field, exc.why


MIN_LOGS_PER_WORKER = 16  # below this, starting processes costs more than reading in one


def read_episodes(paths: Sequence[Path], workers: int = 1) -> tuple[list[EpisodeRow], list[LogError]]:
    """Every log's row, in `paths` order, and the logs left out (damaged, or not episode logs); in `workers` processes."""
    workers = max(1, min(workers, len(paths) // MIN_LOGS_PER_WORKER))
    if workers == 1:
        results = [_read_or_error(p) for p in paths]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(_read_or_error, paths, chunksize=8))
    rows = [r for r in results if isinstance(r, EpisodeRow)]
    return rows, [LogError(*r) for r in results if not isinstance(r, EpisodeRow)]


STATUS_RANK = {"complete": 0, "budget": 1, "error": 2, "incomplete": 3}  # which of two logs of one episode counts


def _counted_first(row: EpisodeRow) -> tuple[Any, ...]:
    """The order in which logs of one episode are preferred: the furthest run, then the log under bench's own name."""
    from benchmarks.suite import log_stem

    own = row.seed is not None and row.path.name == f"{log_stem(row.group, row.condition, row.policy, row.seed)}.jsonl.gz"
    return STATUS_RANK.get(row.status, 4), not own, row.path.name


def drop_duplicates(rows: Sequence[EpisodeRow]) -> tuple[list[EpisodeRow], list[tuple[EpisodeRow, EpisodeRow]]]:
    """(one row per episode and outcome, complete or not, in `rows` order; (row not counted, the row counted) for each
    other log of an episode with that outcome, such as a copy of a log or its gunzipped twin)."""
    counted: dict[tuple[str, bool], EpisodeRow] = {}
    for row in sorted(rows, key=_counted_first):
        counted.setdefault(_episode_outcome(row), row)
    kept = [r for r in rows if counted[_episode_outcome(r)] is r]
    return kept, [(r, counted[_episode_outcome(r)]) for r in rows if counted[_episode_outcome(r)] is not r]


def _episode_outcome(row: EpisodeRow) -> tuple[str, bool]:
    return row.identity, row.status == "complete"


def split_by_settings(rows: Sequence[EpisodeRow]) -> None:
    """Where episodes of one llm policy of a group ran under different settings (model, endpoint, temperature, ...),
    name each apart by the settings that differ, e.g. `llm (temperature=0.9)`, so no cell mixes them."""
    _name_apart(rows, "policy", lambda r: r.settings or None,
                lambda recorded, differ: ", ".join(f"{k}={recorded.get(k, NOT_RECORDED)}" for k in differ))


SHOWN_CONFIG_KEYS = 3  # at most this many differing config keys in a condition's name (then "+N more")


def split_by_config(rows: Sequence[EpisodeRow]) -> None:
    """Where episodes of one condition of a group ran under different configs (the header's `config`: logs of
    `teamenvs run` with other `--set` values), name each apart by the config keys that differ, e.g.
    `default (months=12)`, so no cell, and no paired comparison (which pairs within a condition), mixes them. A bench
    condition has one config, so bench logs keep their names."""
    def shown(recorded: Mapping[str, Any], differ: Sequence[str]) -> str:
        parts = [f"{clean_text(str(k), 40)}={excerpt(recorded.get(k, NOT_RECORDED))}" for k in differ[:SHOWN_CONFIG_KEYS]]
        more = len(differ) - SHOWN_CONFIG_KEYS
        return ", ".join(parts) + (f", +{more} more" if more > 0 else "")

    _name_apart(rows, "condition", lambda r: r.config if r.env else None, shown)


def _name_apart(rows: Sequence[EpisodeRow], attribute: str, recorded: Callable[[EpisodeRow], Mapping[str, Any] | None],
                shown: Callable[[Mapping[str, Any], Sequence[str]], str]) -> None:
    """Where rows of a group (suite and group) share a name in `attribute` ("policy", "condition") but what `recorded`
    gives differs between them (rows it gives None for are left alone), rename each `NAME (shown)`, `shown` given the
    row's record and the keys that differ; rows alike in those keys share a name, and a new name is never one the
    group already has (`NAME (...) #2` instead)."""
    by_name: dict[tuple[str, str, str], list[EpisodeRow]] = defaultdict(list)
    for r in rows:
        if recorded(r) is not None:
            by_name[(r.suite, r.group, getattr(r, attribute))].append(r)
    for (suite, group, _), members in by_name.items():
        records = [recorded(r) or {} for r in members]
        keys = list(dict.fromkeys(k for record in records for k in record))
        differ = [k for k in keys if len({dumps(record.get(k, NOT_RECORDED)) for record in records}) > 1]
        if not differ:
            continue
        # a new name must not be one the group already has (a suite may label another policy so)
        inside = {id(r) for r in members}
        taken = {getattr(r, attribute) for r in rows if (r.suite, r.group) == (suite, group) and id(r) not in inside}
        names: dict[str, str] = {}
        for r, record in zip(members, records):
            which = dumps([record.get(k, NOT_RECORDED) for k in differ])  # two records alike in what differs share a name
            if which not in names:
                label = f"{getattr(r, attribute)} ({shown(record, differ)})"
                name, k = label, 2
                while name in taken:
                    name, k = f"{label} #{k}", k + 1
                names[which] = name
                taken.add(name)
            setattr(r, attribute, names[which])


# ---------------------------------------------------------------------- numbers
def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v))


def csv_value(value: Any) -> Any:
    """A metric as a CSV cell: booleans 0/1, lists as JSON, None empty."""
    if isinstance(value, bool):
        return int(value)
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return json.dumps(value, ensure_ascii=False)
    return value


def scalar_metrics(rows: Sequence[EpisodeRow]) -> list[str]:
    """Top-level metrics that are numbers or booleans in at least one episode, in first-seen order."""
    names: dict[str, None] = {}
    for r in rows:
        for key, value in r.metrics.items():
            if _is_number(value):
                names.setdefault(key)
    return list(names)


def values(rows: Sequence[EpisodeRow], metric: str) -> list[float]:
    return [float(r.metrics[metric]) for r in rows if _is_number(r.metrics.get(metric))]


def _digits(xs: Iterable[float]) -> int:
    biggest = max((abs(x) for x in xs), default=0.0)
    return 0 if biggest >= 100 else 1 if biggest >= 10 else 2 if biggest >= 1 else 3


def _team_return(row: EpisodeRow) -> float:
    return sum(row.returns.values()) / len(row.returns) if row.returns else 0.0


# ---------------------------------------------------------------------- results.csv
FIXED = ("suite", "group", "env", "condition", "preset", "overrides", "policy", "model", "seed", "status", "env_steps", "return_mean")


def suite_order(r: EpisodeRow) -> tuple[Any, ...]:
    return (r.order, r.group, r.condition, r.policy, r.seed if r.seed is not None else -1, r.path.name)


def csv_rows(rows: Sequence[EpisodeRow]) -> tuple[list[str], list[dict[str, Any]]]:
    """One row per episode, in suite order (group, condition, policy, seed)."""
    table = []
    columns: dict[str, None] = dict.fromkeys(FIXED)
    for r in sorted(rows, key=suite_order):
        line: dict[str, Any] = {
            "suite": r.suite, "group": r.group, "env": r.env, "condition": r.condition, "preset": r.preset or "",
            "overrides": json.dumps(dict(r.overrides), sort_keys=True) if r.overrides else "", "policy": r.policy, "model": r.model,
            "seed": "" if r.seed is None else r.seed, "status": r.status, "env_steps": r.steps if r.status == "complete" else "",
            "return_mean": _team_return(r) if r.status == "complete" else "",
        }
        line.update({f"return.{a}": v for a, v in r.returns.items()})
        line.update({k: csv_value(v) for k, v in flatten(r.metrics).items()})
        line.update({f"usage.{k}": r.usage[k] for k in USAGE_KEYS if k in r.usage})
        columns.update(dict.fromkeys(line))
        table.append(line)
    return list(columns), table


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A cell a spreadsheet shows and never runs: text that would start a formula gets a leading `'`
    (OWASP's advice for CSV injection); numbers, negative ones included, stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _csv_text(value: Any) -> Any:
    """A cell of results.csv: control characters in text shown as escapes (`\\x1b`), and `csv_cell`."""
    return csv_cell(printable(value) if isinstance(value, str) else value)


def write_csv(path: Path, rows: Sequence[EpisodeRow]) -> None:
    columns, table = csv_rows(rows)
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow([_csv_text(c) for c in columns])
    writer.writerows([_csv_text(line.get(c, "")) for c in columns] for line in table)
    write_whole(path, text.getvalue())


def load_results(folder: str | Path) -> list[dict[str, str]]:
    """The rows of a bench folder's `results.csv` (strings, as the csv module reads them)."""
    with open(Path(folder) / "results.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------------- report.md
MARKDOWN_ESCAPES = str.maketrans({"\\": "\\\\", "&": "&amp;", "<": "&lt;", ">": "&gt;", "[": "\\[", "]": "\\]", "`": "\\`"})


# What GitHub's Markdown would still make of escaped text: a bare URL (`https://...`, `www.`) a live link, `*`, `~` and
# a `_` at a word's edge emphasis (one inside a word, as in `mean_final_wealth`, is none), `$` math. (A mail address
# stays a `mailto:` link: no escape stops GitHub's extension from linking one.)
_MARKDOWN_LIVE = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*(?=://)|\bwww(?=\.)|[*~$]|(?<![a-z0-9])_|_(?![a-z0-9])")


def _inert(match: re.Match[str]) -> str:
    found = match.group(0)
    if len(found) > 1 or found.isalpha():  # a URL's scheme or `www`: escape what follows it
        return found + "\\"
    return "\\" + found


def md_text(text: Any) -> str:
    """Outside text (suite, group, condition, policy and metric names, descriptions, errors) as Markdown prose: one
    line, no control characters, HTML escaped, no link, image or code span (`[`, `]` and backticks escaped, bare URLs
    kept from linking), no emphasis or math (`*`, `~`, `$` and `_` at a word's edge escaped), a leading `#` not a
    heading."""
    line = _MARKDOWN_LIVE.sub(_inert, clean_text(str(text)).translate(MARKDOWN_ESCAPES))
    return "\\" + line if line.startswith("#") else line


def md_cell(text: Any) -> str:
    """Outside text as one Markdown table cell: `md_text`, and `|` escaped so the cell stays one."""
    return md_text(text).replace("|", "\\|")


def md_code(text: Any) -> str:
    """Outside text (a file name) as one Markdown code span: on one line, control characters shown as escapes
    (`\\x1b`), fenced by more backticks than it holds in a row (`name` when it holds none)."""
    line = printable(text, keep_newlines=False)
    longest = max(map(len, re.findall("`+", line)), default=0)
    fence, pad = "`" * (longest + 1), " " if longest else ""
    return f"{fence}{pad}{line}{pad}{fence}"


@dataclass
class GroupReport:
    title: str
    env: str
    conditions: list[str]
    policies: list[str]
    cells: dict[tuple[str, str], list[EpisodeRow]]
    metrics: list[str]
    goals: dict[str, str]
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)  # the paradigm's `metric_bounds`

    @property
    def rows(self) -> list[EpisodeRow]:
        return [r for cell in self.cells.values() for r in cell]


def group_rows(rows: Sequence[EpisodeRow]) -> list[GroupReport]:
    """Complete episodes by group, conditions and policies in suite order."""
    from teamenvs.core.metrics import metric_bounds, metric_goals

    complete = sorted((r for r in rows if r.status == "complete"), key=suite_order)
    suites = {r.suite for r in complete}
    groups: dict[str, list[EpisodeRow]] = {}
    for r in complete:  # two suites in one folder may share a group title: never pooled
        groups.setdefault(f"{r.suite}: {r.group}" if len(suites) > 1 and r.suite else r.group, []).append(r)
    reports = []
    for title, members in groups.items():
        conditions = list(dict.fromkeys(r.condition for r in sorted(members, key=lambda r: (r.order[1], r.condition))))
        policies = list(dict.fromkeys(r.policy for r in sorted(members, key=lambda r: (r.order[2], r.policy))))
        cells: dict[tuple[str, str], list[EpisodeRow]] = {}
        for r in members:
            cells.setdefault((r.condition, r.policy), []).append(r)
        try:
            goals, bounds = metric_goals(members[0].env), metric_bounds(members[0].env)
        except (KeyError, ValueError):
            goals, bounds = {}, {}
        reports.append(GroupReport(title, members[0].env, conditions, policies, cells, scalar_metrics(members), goals, bounds))
    return reports


def _tie(a: float, b: float) -> bool:
    """Equal means, up to the rounding of summing the same values in another order (relative, so large values too)."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _best(means: dict[Any, float], goal: str | None) -> set[Any]:
    if goal not in ("max", "min") or len(means) < 2:
        return set()
    target = max(means.values()) if goal == "max" else min(means.values())
    if all(_tie(m, target) for m in means.values()):
        return set()  # everyone ties: nothing to mark
    return {k for k, m in means.items() if _tie(m, target)}


def _seeds_text(seeds: Sequence[int | None]) -> str:
    known = sorted({s for s in seeds if s is not None})
    if len(known) > 2 and known[-1] - known[0] == len(known) - 1:  # distinct whole numbers: a run without gaps
        return f"{known[0]}-{known[-1]}"
    return ", ".join(map(str, known)) or "none"


def constant_metrics(g: GroupReport) -> dict[str, float]:
    """Metrics with one value in every episode of a group that compares several cells (e.g. the number of
    victims): shown once under the table, not as a column."""
    out: dict[str, float] = {}
    if len(g.cells) < 2:
        return out  # one condition and one policy: every column is the result
    for metric in g.metrics:
        xs = values(g.rows, metric)
        if len(xs) == len(g.rows) and len(set(xs)) == 1 and len(g.rows) > 1:
            out[metric] = xs[0]
    return out


MIN_PAIRS = 5  # seeds both policies played, below which an interval is not marked (too few to check t's assumption)


def reference_policy(g: GroupReport) -> str:
    """The policy the others are compared with: the scripted baseline when the group has it, else its first policy."""
    return "scripted" if "scripted" in g.policies else g.policies[0]


def paired_rows(g: GroupReport, metric: str) -> list[tuple[str, str, int, float, tuple[float, float]]]:
    """(condition, policy, pairs, mean difference policy - reference, its 95% CI: `mean_ci`, the paired t interval) on the
    seeds both played. An episode without a seed pairs with none (it shares no draws with any other); a seed played
    more than once in a cell pairs its k-th episode with the reference's k-th of that seed."""
    reference = reference_policy(g)
    out = []
    for c in g.conditions:
        base = _by_seed(g.cells.get((c, reference), []))
        for p in g.policies:
            if p == reference:
                continue
            diffs = []
            for key, r in _by_seed(g.cells.get((c, p), [])).items():
                other = base.get(key)
                if other is None:
                    continue
                a, b = (_team_return(r), _team_return(other)) if metric == "return" else (r.metrics.get(metric), other.metrics.get(metric))
                if _is_number(a) and _is_number(b):
                    diffs.append(float(a) - float(b))
            if diffs:
                out.append((c, p, len(diffs), sum(diffs) / len(diffs), mean_ci(diffs)))
    return out


def _by_seed(rows: Sequence[EpisodeRow]) -> dict[tuple[int, int], EpisodeRow]:
    """A cell's seeded episodes by (seed, how many of that seed came before it in the cell)."""
    seen: dict[int, int] = {}
    out = {}
    for r in rows:
        if r.seed is None:
            continue
        k = seen.get(r.seed, 0)
        seen[r.seed] = k + 1
        out[(r.seed, k)] = r
    return out


def paired_markdown(g: GroupReport, metrics: Sequence[str]) -> list[str]:
    """The paired comparison with the reference policy: mean differences with their 95% paired t intervals over seeds."""
    reference = reference_policy(g)
    table = {m: paired_rows(g, m) for m in ["return", *metrics]}
    if not any(table.values()):
        return []
    lines = [f"Paired with {md_code(reference)} on the same seeds: mean difference (policy - {md_text(reference)}) and its 95% "
             f"confidence interval (Student t over the seeds' differences); * marks an interval that excludes 0 (the paired "
             f"t-test at 5%, one comparison at a time: no correction for the table's many); the interval is given from "
             f"{MIN_PAIRS} pairs on (\"–\" below: too few seeds to check the t interval's assumption, as in the figures; "
             f"\"the same on every seed\": no seed-to-seed variation, so no interval and no test).", "",
             "| condition | policy | metric | pairs | difference | 95% CI |", "|---|---|---|---:|---:|---|"]
    for metric, rows in table.items():
        d = _digits([abs(x) for _, _, _, x, _ in rows] or [1.0])
        for c, p, n, diff, (lo, hi) in rows:
            if n < MIN_PAIRS:
                interval = "–"
            elif lo == hi:  # every seed's difference the same: a t interval of width 0 says nothing, and earns no *
                interval = "the same on every seed"
            else:
                interval = f"[{lo:,.{d}f}, {hi:,.{d}f}]" + ("" if lo <= 0 <= hi else " *")
            lines.append(f"| {md_cell(c)} | {md_cell(p)} | {md_cell(metric)} | {n} | {diff:+,.{d}f} | {interval} |")
    lines.append("")
    return lines


def group_markdown(g: GroupReport, plots: Mapping[str, str], formats: Sequence[str] = PLOT_FORMATS) -> list[str]:
    arrow = {"max": " ↑", "min": " ↓"}
    full = g
    constant = constant_metrics(g)
    g = GroupReport(g.title, g.env, g.conditions, g.policies, g.cells, [m for m in g.metrics if m not in constant], g.goals,
                    g.bounds)
    lines = [f"## {md_text(g.title)} ({md_code(g.env)})", ""]
    seeds = _seeds_text([r.seed for r in g.rows])
    lines.append(f"{len(g.rows)} episodes; seeds {seeds}; conditions: "
                 + ", ".join(md_text(c) for c in g.conditions) + "; policies: " + ", ".join(map(md_text, g.policies)) + ".")
    lines.append("")
    by_policy = len(g.policies) > 1
    best: dict[tuple[str, str, str], bool] = {}
    for metric in g.metrics:
        goal = g.goals.get(metric)
        blocks = [[(c, p) for p in g.policies] for c in g.conditions] if by_policy else [[(c, g.policies[0]) for c in g.conditions]]
        for block in blocks:
            means = {cell: mean_sd(values(g.cells[cell], metric))[0] for cell in block if cell in g.cells and values(g.cells[cell], metric)}
            for cell in _best(means, goal):
                best[(cell[0], cell[1], metric)] = True
    header = ["condition", "policy", "n", "return"] + [f"{md_cell(m)}{arrow.get(g.goals.get(m) or '', '')}" for m in g.metrics]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(["---", "---"] + ["---:"] * (len(header) - 2)) + "|")
    for c in g.conditions:
        for p in g.policies:
            cell = g.cells.get((c, p))
            if not cell:
                continue
            returns = [_team_return(r) for r in cell]
            ret_mean, ret_sd = mean_sd(returns)
            digits = _digits(returns)
            row = [md_cell(c), md_cell(p), str(len(cell)), f"{ret_mean:,.{digits}f} ± {ret_sd:,.{digits}f}"]
            for metric in g.metrics:
                xs = values(cell, metric)
                if not xs:
                    row.append("–")
                    continue
                m, s = mean_sd(xs)
                d = _digits(values(g.rows, metric))
                text = f"{m:,.{d}f} ± {s:,.{d}f}" + (f" ({len(xs)}/{len(cell)})" if len(xs) < len(cell) else "")
                row.append(f"**{text}**" if best.get((c, p, metric)) else text)
            lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    if constant:
        lines.append("The same in every episode: " + ", ".join(f"{md_text(k)} = {v:g}" for k, v in constant.items()) + ".")
        lines.append("")
    if len(g.policies) > 1:
        lines += paired_markdown(g, [m for m in g.metrics if g.goals.get(m) in ("max", "min")])
    usage_cells = [(c, p) for c in g.conditions for p in g.policies if any(r.usage for r in g.cells.get((c, p), []))]
    if usage_cells:
        lines.append("Model usage per episode (mean):")
        lines.append("")
        lines.append("| condition | policy | " + " | ".join(USAGE_KEYS) + " |")
        lines.append("|---|---|" + "---:|" * len(USAGE_KEYS))
        for c, p in usage_cells:
            cell = g.cells[(c, p)]
            shown = [f"{sum(float(r.usage.get(k, 0)) for r in cell) / len(cell):,.1f}" for k in USAGE_KEYS if k != "cost_usd"]
            # a cost is known only where the run was given prices (--price): a cell without is "–", not free
            costs = [float(r.usage["cost_usd"]) for r in cell if r.usage.get("cost_usd") is not None]
            shown.append(f"{sum(costs) / len(costs):,.4f}" if costs else "–")
            lines.append(f"| {md_cell(c)} | {md_cell(p)} | " + " | ".join(shown) + " |")
        lines.append("")
        lines += sources_markdown(g, usage_cells)
    lines += probes_markdown(g)
    if plots:
        from benchmarks.figures import caption

        linked = Path(next(iter(plots.values()))).suffix[1:]
        others = [f.upper() for f in formats if f != linked]
        also = f"each also as {' and '.join(others)} beside its {linked.upper()} in `plots/`" if others else f"as {linked.upper()} in `plots/`"
        lines += [f"Figures ({also}):", ""]
        for kind, name in plots.items():
            # a PDF is not an image a Markdown viewer shows: linked, not embedded
            alt = md_text(g.title)
            lines += [f"{'' if linked == 'pdf' else '!'}[{kind}: {alt}]({name})", "", f"*{md_text(caption(full, kind))}*", ""]
    return lines


def _at(metrics: Mapping[str, Any], path: Sequence[str]) -> Any:
    """The value at `path` in nested metrics (None where the path does not lead anywhere)."""
    value: Any = metrics
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def probes_markdown(g: GroupReport) -> list[str]:
    """Where agents were probed or interviewed (LLM policies with `probes_every`, `interview`): per cell, the probed
    steps, mean confidence, alignment of each probe question (mean pairwise similarity of the agents' answers) and
    each interview dimension's mean rating, over the episodes that have it."""
    cells = [(c, p) for c in g.conditions for p in g.policies
             if any(isinstance(r.metrics.get(k), Mapping) for r in g.cells.get((c, p), []) for k in ("probes", "interview"))]
    if not cells:
        return []
    rows = [r for cell in cells for r in g.cells[cell]]
    def keys(path: tuple[str, ...]) -> list[str]:
        return sorted({k for r in rows if isinstance(found := _at(r.metrics, path), Mapping) for k in found})

    questions, dimensions = keys(("probes", "alignment")), keys(("interview", "dimensions"))
    columns = [("probed steps", ("probes", "probed_steps")), ("confidence", ("probes", "confidence", "all"))]
    columns += [(f"alignment: {q}", ("probes", "alignment", q, "all")) for q in questions]
    columns += [(f"interview: {d}", ("interview", "dimensions", d)) for d in dimensions]
    lines = ["Probes and interview per episode (mean ± sd; alignment: mean cosine similarity of the agents' answers, -1 to 1; "
             "ratings 1-10):", "", "| condition | policy | " + " | ".join(md_cell(name) for name, _ in columns) + " |",
             "|---|---|" + "---:|" * len(columns)]
    for c, p in cells:
        cell = g.cells[(c, p)]
        shown = []
        for _, path in columns:
            xs = [float(x) for x in (_at(r.metrics, path) for r in cell) if _is_number(x) and math.isfinite(x)]
            m, sd = mean_sd(xs) if xs else (None, None)
            shown.append("–" if m is None else f"{m:,.2f} ± {sd:,.2f}" + (f" ({len(xs)}/{len(cell)})" if len(xs) < len(cell) else ""))
        lines.append(f"| {md_cell(c)} | {md_cell(p)} | " + " | ".join(shown) + " |")
    return lines + [""]


def report_markdown(rows: Sequence[EpisodeRow], groups: Sequence[GroupReport], plots: Mapping[str, Mapping[str, str]], plot_note: str = "",
                    left_out: Sequence[LogError] = (), formats: Sequence[str] = PLOT_FORMATS,
                    duplicates: Sequence[tuple[EpisodeRow, EpisodeRow]] = ()) -> str:
    suites = sorted({r.suite for r in rows if r.suite})
    complete = sum(r.status == "complete" for r in rows)
    lines = [f"# Benchmark report: {', '.join(map(md_text, suites)) or 'episode logs'}", ""]
    descriptions = sorted({r.description for r in rows if r.description})
    for d in descriptions:
        lines += [md_text(d), ""]
    lines.append(f"{complete} of {len(rows)} episodes complete. Cells show mean ± sd over seeds (population sd); "
                 "↑ / ↓ say which way a metric is better; **bold** marks the best policy within each condition "
                 "(the best condition, where a group compares one policy). `return` is the mean return per agent. "
                 "Booleans are shown as rates; (k/n) means the metric was defined in k of n episodes, and – in none (a vote or "
                 "a horizon the capped episodes never reached, say).")
    lines.append("")
    if plot_note:
        lines += [plot_note, ""]
    for g in groups:
        lines += group_markdown(g, plots.get(g.title, {}), formats)
    unfinished = [r for r in rows if r.status != "complete"]
    if unfinished:
        lines.append("## Episodes without a result")
        lines.append("")
        if any(r.status != "budget" for r in unfinished):
            lines.append("Rerun the same `teamenvs bench` command to run the failed and incomplete ones again.")
        if any(r.status == "budget" for r in unfinished):
            lines.append("Those stopped by the budget (`--max-calls`, `--token-budget`) stop at the same place when rerun "
                         "with it: to finish them, raise the budget and rerun into a new `--out` (or with `--force`, "
                         "which runs the whole suite again).")
        lines.append("")
        for r in unfinished:
            lines.append(f"- {md_code(r.path.name)}: {r.status}" + (f" ({md_text(r.error)})" if r.error else ""))
        lines.append("")
    if left_out:
        lines += ["## Logs left out", "", "Damaged, or not episode logs: nothing of them is counted above.", ""]
        lines += [f"- {md_code(e.path.name)}{f' line {e.line}' if e.line else ''}: {md_text(e.field)}: {md_text(e.why)}" for e in left_out]
        lines.append("")
    if duplicates:
        lines += ["## Duplicate logs (not counted)", "",
                  "Logs of an episode another log holds too (the same suite, group, condition, policy, seed and settings): "
                  "the episode is counted once, from the log named.", ""]
        lines += [f"- {md_code(r.path.name)}: the same episode as {md_code(kept.path.name)}" for r, kept in duplicates]
        lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------- survival
def survival_curve(survival_times: Sequence[float], survived: Sequence[bool | None], horizon: int) -> list[float]:
    """Share of episodes whose resource is still alive after month m, for m = 0..horizon.

    An episode that collapsed in month t (`survived` False) is alive after months 0..t-1; one that survived (True),
    after all of them. One cut after t months without a collapse (None: a step cap, a budget) was seen alive that
    long and no longer: it is censored, and the share is the Kaplan-Meier estimate (each month, the collapses among
    the episodes still seen in it); after the last month any episode was seen alive, it is unknown (NaN: no line is drawn).
    Without censored episodes that is the plain share, to the last bit.
    """
    alive, out = Fraction(1), []
    for m in range(horizon + 1):
        if m:
            seen = sum(ok is True or t >= m for t, ok in zip(survival_times, survived))
            if not seen:  # every episode collapsed (0, known) or was cut (unknown)
                out.append(0.0 if alive == 0 else math.nan)
                continue
            collapsed = sum(ok is False and t == m for t, ok in zip(survival_times, survived))
            alive *= Fraction(seen - collapsed, seen)
        out.append(float(alive))
    return out


# ---------------------------------------------------------------------- the whole report
@dataclass
class Report:
    folder: Path
    rows: list[EpisodeRow]
    groups: list[GroupReport]
    plots: dict[str, dict[str, str]]  # group title -> figure kind -> the file report.md links (its PNG by default), relative to the folder
    left_out: list[LogError] = field(default_factory=list)  # damaged logs and files that are not episode logs
    seconds: dict[str, float] = field(default_factory=dict)  # reading the logs, the tables (results.csv, report.md), the figures
    workers: int = 1
    formats: tuple[str, ...] = PLOT_FORMATS  # the figure files written of each figure
    duplicates: list[tuple[EpisodeRow, EpisodeRow]] = field(default_factory=list)  # (log not counted, the log of its episode counted)

    def summary(self) -> str:
        complete = sum(r.status == "complete" for r in self.rows)
        n_plots = sum(len(p) for p in self.plots.values())
        shown = {name: printable(self.folder / name, keep_newlines=False) for name in ("results.csv", "report.md", "plots")}
        lines = [f"report: {complete} of {len(self.rows)} episodes complete, {len(self.groups)} group(s); wrote "
                 f"{shown['results.csv']}, {shown['report.md']} and {n_plots} figure(s) ({', '.join(f.upper() for f in self.formats) or 'none drawn'}) "
                 f"in {shown['plots']}"]
        if self.seconds:
            lines.append(f"report time: {sum(self.seconds.values()):.1f} s ({', '.join(f'{k} {v:.1f} s' for k, v in self.seconds.items())}; "
                         f"{self.workers} worker(s))")
        if self.left_out:
            lines.append(f"{len(self.left_out)} log(s) left out, damaged or not episode logs (listed in report.md):")
            lines += [f"  {e}" for e in self.left_out[:10]]
        if self.duplicates:
            lines.append(f"{len(self.duplicates)} duplicate log(s) not counted, each of an episode another log holds (listed in report.md):")
            lines += [f"  {printable(r.path, keep_newlines=False)}: the same episode as {printable(kept.path.name, keep_newlines=False)}"
                      for r, kept in self.duplicates[:10]]
        return "\n".join(lines)


def build_report(folder: str | Path, plots: bool | str | Sequence[str] = True, workers: int | None = None) -> Report:
    """Read every episode log of a bench folder (`logs/`, or the folder itself) and write results.csv, report.md, plots/.

    `workers` processes (default: one per CPU) read the logs and draw the figures; the files are the same whatever their number.
    `plots` picks the figure formats (`plot_formats`: all three by default, e.g. "png" for a quicker report, or
    False / "none"); files of the report's figures in a format not drawn are removed, so none is left from older logs.
    """
    formats = plot_formats(plots)
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"no folder {str(folder)!r} (give a folder written by `teamenvs bench --out`)")
    workers = max(1, workers if workers is not None else os.cpu_count() or 1)
    logs_dir = folder / "logs" if (folder / "logs").is_dir() else folder
    clock = time.perf_counter()
    rows, left_out = read_episodes(log_files(logs_dir), workers)
    rows, duplicates = drop_duplicates(rows)
    split_by_config(rows)
    split_by_settings(rows)
    seconds = {"reading logs": time.perf_counter() - clock}
    if not rows:
        why = f": every one is damaged or not an episode log, e.g. {left_out[0]}" if left_out else ""
        raise ConfigError(f"no {'readable ' if left_out else ''}episode logs (*.jsonl, *.jsonl.gz) in {str(logs_dir)!r}{why}")
    groups = group_rows(rows)
    clock = time.perf_counter()
    write_csv(folder / "results.csv", rows)
    seconds["tables"] = time.perf_counter() - clock
    made: dict[str, dict[str, str]] = {}
    note = ""
    clock = time.perf_counter()
    try:
        from benchmarks.figures import write_figures

        made = write_figures(groups, folder / "plots", workers, formats)
    except ImportError:
        if formats:
            note = "No plots: they need matplotlib (pip install matplotlib), then run `teamenvs report` on this folder."
    if formats:
        seconds["figures"] = time.perf_counter() - clock
    elif not note:
        note = "No figures drawn (plots: none): `teamenvs report` on this folder draws them from the logs."
    clock = time.perf_counter()
    write_whole(folder / "report.md", report_markdown(rows, groups, made, note, left_out, formats, duplicates))
    seconds["tables"] += time.perf_counter() - clock
    return Report(folder, rows, groups, made, left_out, seconds, workers, formats if made else (), duplicates)
