"""Replay an episode log: step-by-step frames in the terminal, and a self-contained HTML viewer.

    teamenvs replay runs/search_rescue_v0_seed0.jsonl              # terminal frames, step by step
    teamenvs replay runs/search_rescue_v0_seed0.jsonl --html ep.html

A log holds what every agent read, did and was told, but not the world's geometry at each
step. The envs are deterministic, so `load_replay` re-simulates the episode: it rebuilds
the env from the header (env id, resolved config, seed), replays each step's joint action
(the raw actions of the agents that were asked), and checks that every observation equals
the logged one. Envs with a map (`frame()`: search and rescue, map task) give one drawing
per step. A log that does not reproduce (another version, a hand-drawn layout) still
replays from its text alone, with a warning saying where the re-simulation stopped.

The HTML viewer is one file with the log's data embedded as JSON and inline CSS and JS
(`replay_viewer.html`): no network, no external resources.

Terminal frames show every control character of the log's text (actions, rationales, events,
names, errors) escaped (`\x1b`), so a log cannot drive the terminal; only the replay's own
colour codes reach it.
"""

from __future__ import annotations

import gzip
import json
import sys
import time
import warnings
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Mapping, TextIO

from teamenvs._version import __version__
from teamenvs.core.config import check_flag, check_int
from teamenvs.core.env import UnknownAgentWarning
from teamenvs.core.files import write_whole
from teamenvs.core.metrics import flatten
from teamenvs.core.recorder import read_log
from teamenvs.core.text import excerpt, printable

FORMAT = 1  # version of the data the viewer embeds
DATA_MARK = "__TEAMENVS_REPLAY_DATA__"
TITLE_MARK = "__TEAMENVS_REPLAY_TITLE__"
QUIET_EVENTS = frozenset({"moved"})  # drawn on the map each step; left out of timelines
SUMMARY_CHARS = 240
MAX_DELAY = 3600.0  # seconds a terminal replay may hold each frame


@dataclass
class Resimulation:
    """What re-running a logged episode gave: a drawing and an ansi frame per reproduced step."""

    frames: list[dict[str, Any]] = field(default_factory=list)  # index 0: after reset; [] for envs without a map
    ansi: list[str] = field(default_factory=list)
    recipients: list[list[list[str]] | None] = field(default_factory=list)  # per step: who received each message event
    verified: int = -1  # last step index whose observations matched the log (-1: not even the reset)
    warning: str | None = None


@dataclass
class Replay:
    """An episode log split into its parts, with what re-simulation reproduced."""

    path: Path
    header: dict[str, Any]
    reset: dict[str, Any] | None
    steps: list[dict[str, Any]]
    end: dict[str, Any] | None  # the `end` line; None when the run stopped without one
    error: dict[str, Any] | None  # the `error` line of a run that crashed
    sim: Resimulation
    warnings: list[str] = field(default_factory=list)

    @property
    def env_id(self) -> str:
        return str(self.header.get("env_id"))

    @property
    def agents(self) -> list[str]:
        return list(self.header.get("agents") or [])

    @property
    def n_steps(self) -> int:
        return len(self.steps)

    @property
    def frames(self) -> list[dict[str, Any]]:
        return self.sim.frames


# ---------------------------------------------------------------------- reading
def split_log(records: list[dict[str, Any]], path: str | Path) -> tuple[dict, dict | None, list[dict], dict | None, dict | None]:
    """(header, reset, steps, end, error) of a log's records; ValueError when they are not an episode log."""
    if not records or not isinstance(records[0], dict) or records[0].get("type") != "header":
        raise ValueError(f"{path} is not a teamenvs episode log: its first line is not a header line")
    header = records[0]
    if "env_id" not in header:
        raise ValueError(f"{path} is not a teamenvs episode log: its header names no env_id")
    reset = next((r for r in records if r.get("type") == "reset"), None)
    steps = [r for r in records if r.get("type") == "step"]
    end = next((r for r in records if r.get("type") == "end"), None)
    error = next((r for r in records if r.get("type") == "error"), None)
    return header, reset, steps, end, error


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a log file, with clear errors for a missing file or one that is not text."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such episode log: {p}")
    if p.is_dir():
        raise IsADirectoryError(f"{p} is a folder; give one episode log (.jsonl or .jsonl.gz)")
    try:
        return read_log(p)
    except (UnicodeDecodeError, gzip.BadGzipFile, EOFError) as exc:
        raise ValueError(f"{p} is not a teamenvs episode log (not JSONL text or gzip: {exc})") from None


def joint_action(step: Mapping[str, Any]) -> dict[str, Any]:
    """The actions the step loop passed to `env.step` at a logged step: those of the agents it asked."""
    actions = {}
    for agent, entry in step.get("agents", {}).items():
        action = entry.get("action") or {}
        if action.get("ignored") or action.get("kind") == "missing":
            continue
        actions[agent] = entry.get("raw_action")
    return actions


def _first_difference(observations: Mapping[str, Any], logged: Mapping[str, Any]) -> str | None:
    """The first agent whose observation differs from the logged one (None when all agree)."""
    if set(observations) != set(logged):
        return f"the agents differ ({', '.join(sorted(observations))} vs {', '.join(sorted(logged))})"
    for agent, entry in logged.items():
        if str(observations[agent]) != entry.get("observation"):
            return f"{agent}'s observation differs"
    return None


def resimulate(header: Mapping[str, Any], reset: Mapping[str, Any] | None, steps: list[dict[str, Any]], *, ansi: bool = False) -> Resimulation:
    """Re-run the episode from its header and joint actions, checking each observation against the log."""
    from teamenvs.registry import make

    sim = Resimulation()
    if reset is None:
        sim.warning = "the log has no reset line, so the episode cannot be re-simulated"
        return sim
    if header.get("version") != __version__:
        versions = f"the log was written by teamenvs {header.get('version')}, this is {__version__}"
    else:
        versions = "an edited log, or reset options such as a hand-drawn layout"
    step_no, has_map = 0, False

    def shown(upto: int) -> str:
        if not has_map:
            return "The steps are shown from the log's text."
        return "No map is shown." if upto < 0 else f"The map is shown up to step {upto} only."

    try:
        env = make(header["env_id"], render_mode="ansi" if ansi else None, **dict(header.get("config") or {}))
        base = env.unwrapped
        draw = getattr(base, "frame", None)
        has_map = callable(draw)
        observations, _ = env.reset(seed=header.get("seed"))
        with warnings.catch_warnings():  # an edited log's unknown agent is the difference reported below
            warnings.simplefilter("ignore", UnknownAgentWarning)
            for index, logged in [(0, reset), *enumerate(steps, start=1)]:
                step_no = index
                if index:
                    observations, *_ = env.step(joint_action(logged))
                difference = _first_difference(observations, logged.get("agents", {}))
                if difference is not None:
                    where = "the episode's start" if index == 0 else f"step {index}"
                    sim.warning = f"re-simulation differs from the log at {where} ({difference}: {versions}). {shown(index - 1)}"
                    break
                sim.verified = index
                if index:
                    sim.recipients.append(_recipients(logged, base))
                if has_map:
                    sim.frames.append(draw())
                    if ansi:
                        sim.ansi.append(env.render() or "")
    except Exception as exc:  # a log from another version, a config this one rejects, ...
        sim.warning = f"re-simulation failed at step {step_no} ({type(exc).__name__}: {exc}; {versions}). {shown(len(sim.frames) - 1)}"
    return sim


def _recipients(step: Mapping[str, Any], env: Any) -> list[list[str]] | None:
    """Who received each message event of a step, from the env's messenger (None if they cannot be matched)."""
    sent = [e for e in step.get("events", []) if e.get("type") == "message"]
    messenger = getattr(env, "messenger", None)
    delivery = getattr(messenger, "last_delivery", None) if messenger is not None else None
    if delivery is None:
        return None
    if not sent and not delivery:
        return []
    if len(delivery) != len(sent) or any(m.sender != e.get("sender") for (m, _), e in zip(delivery, sent)):
        return None
    return [list(r) for _, r in delivery]


def load_replay(path: str | Path, *, ansi: bool = False, simulate: bool = True) -> Replay:
    """Read an episode log (.jsonl or .jsonl.gz, possibly cut off) and re-simulate it for its map frames."""
    header, reset, steps, end, error = split_log(read_records(path), path)
    sim = resimulate(header, reset, steps, ansi=ansi) if simulate else Resimulation()
    warnings = [sim.warning] if sim.warning else []
    if error is not None:
        warnings.append(f"the run stopped with an error at step {error.get('step')}: {error.get('error')}")
    elif end is None:
        warnings.append(f"the log has no end line: the run was cut off after step {len(steps)} (no metrics)")
    return Replay(Path(path), header, reset, steps, end, error, sim, warnings)


# ---------------------------------------------------------------------- text of events and actions
def _clip(text: Any, limit: int = SUMMARY_CHARS) -> str:
    one_line = " ".join(str(text).split())
    return one_line if len(one_line) <= limit else one_line[: limit - 3] + "..."


def _names(items: Iterable[Any]) -> str:
    return ", ".join(str(i) for i in items)


def event_line(ev: Mapping[str, Any]) -> str:
    """One readable line for a logged event (global or an agent's), in the paradigm's words."""
    kind = ev.get("type", "event")
    g = ev.get
    if kind == "message":
        return f"{g('sender')} -> {g('to') or 'everyone'}: {g('message', '')}"
    if ev.get("text"):
        return str(ev["text"])
    lines = {
        "moved": lambda: f"{g('agent')} moved to ({_names(g('cell') or [])})",
        "entered": lambda: f"{g('agent')} entered {g('room')}",
        "found": lambda: f"{g('agent')} found victim{'s' if len(g('victims') or []) != 1 else ''} {_names(g('victims') or [])} in {g('room')}",
        "thought": lambda: f"{g('recruiter')} ({g('company')}) thinks: {g('thought')}",
        "application": lambda: f"{g('name')} ({g('seeker')}) applied to {_names(g('companies') or []) or 'no company'}",
        "interview_start": lambda: f"interview begins: {g('recruiter')} ({g('company')}) with {g('seeker')}",
        "interview_end": lambda: f"interview over: {g('company')} with {g('seeker')} ({g('reason')})",
        "decision": lambda: f"{g('company')} decided: hire {_names(g('hire') or []) or 'nobody'}",
        "offer": lambda: f"{g('company')} offers {g('seeker')} a job",
        "offer_answer": lambda: f"{g('seeker')} {g('answer')} the offer of {g('company')}",
        "drawing": lambda: f"follower {g('action')}: {len(g('segments') or [])} segment(s) on the canvas, route accuracy {float(g('accuracy') or 0):.2f}",
    }
    if kind in lines:
        try:
            return lines[kind]()
        except (TypeError, ValueError):
            pass
    rest = {k: v for k, v in ev.items() if k not in ("type", "text")}
    return f"{kind}: {json.dumps(rest, ensure_ascii=False, default=str)}" if rest else str(kind)


def action_summary(entry: Mapping[str, Any]) -> tuple[str, str]:
    """(status, text) of an agent's logged action: status 'busy', 'ok' or 'invalid'."""
    action = entry.get("action") or {}
    if action.get("ignored"):
        return "busy", "not asked (busy, or not its turn)"
    raw = entry.get("raw_action")
    if action.get("ok"):
        return "ok", _clip(raw if isinstance(raw, str) and raw.strip() else action.get("text", ""))
    return "invalid", f"{action.get('kind', 'error')}: {_clip(action.get('error', ''))} (raw: {_clip(json.dumps(raw, ensure_ascii=False), 120)})"


def timeline(steps: list[dict[str, Any]]) -> list[list[Any]]:
    """[step, type, agent or None, line] for every event worth a look, and every invalid action."""
    out: list[list[Any]] = []
    for rec in steps:
        n = rec.get("step")
        for ev in rec.get("events", []):
            if ev.get("type") not in QUIET_EVENTS:
                out.append([n, ev.get("type", "event"), ev.get("sender") or ev.get("agent"), _clip(event_line(ev))])
        for agent, entry in rec.get("agents", {}).items():
            action = entry.get("action") or {}
            if action.get("ok") is False:
                out.append([n, "invalid", agent, _clip(f"{agent}: {action.get('kind', 'error')}: {action.get('error', '')}")])
    return out


# ---------------------------------------------------------------------- terminal replay
_CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35", "cyan": "36"}
DRAWING_MARK = "/*__TEAMENVS_DRAWING__*/"


def drawing_of(env_id: str | None) -> Any:
    """The paradigm's drawing module (`TERMINAL_COLOURS`, `is_map_row`, and `drawing.js` beside it), or None."""
    from teamenvs.core.paradigm import load_object
    from teamenvs.registry import list_envs, spec

    if env_id not in list_envs() or not spec(env_id).drawing:
        return None
    return load_object(spec(env_id).drawing)


def drawing_script(drawing: Any) -> str:
    """The viewer code of a drawing module: the `drawing.js` file beside it ('' when there is none)."""
    path = Path(drawing.__file__).with_name("drawing.js") if drawing is not None else None
    return path.read_text(encoding="utf-8") if path is not None and path.is_file() else ""


def _paint(text: str, style: str, color: bool) -> str:
    """`text` with its control characters escaped, in the colour `style` when `color`: the one way log text reaches the terminal."""
    text = printable(text)
    if not color or not text:
        return text
    codes = ";".join(_CODES[s] for s in style.split())
    return f"\x1b[{codes}m{text}\x1b[0m"


def _plain(text: str) -> str:
    return printable(text)


def colour_frame(text: str, drawing: Any, color: bool) -> str:
    """An env's ansi frame, control characters escaped, with its map characters coloured by its drawing module (map rows only)."""
    text = printable(text)
    palette = getattr(drawing, "TERMINAL_COLOURS", None)
    if not color or not palette:
        return text
    out = []
    for line in text.split("\n"):
        if drawing.is_map_row(line):
            line = "".join(_paint(ch, palette[ch], True) if ch in palette else ch for ch in line)
        out.append(line)
    return "\n".join(out)


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return _clip(json.dumps(value, ensure_ascii=False, default=str), 160)
    return str(value)


def format_header(replay: Replay, color: bool = False) -> str:
    """The lines printed before the first frame: which episode, and any warning."""
    h = replay.header
    lines = [
        _paint(f"episode log {replay.path}", "bold", color),
        _plain(f"env {replay.env_id} (teamenvs {h.get('version')}), seed {h.get('seed')}, preset {h.get('preset') or '-'}, "
               f"{replay.n_steps} steps, agents: {', '.join(map(str, replay.agents))}"),
    ]
    if h.get("run"):
        lines.append(_plain(_clip("run: " + ", ".join(f"{k}={_clip(_value(v), 60)}" for k, v in flatten(h["run"]).items()), 400)))
    if replay.sim.verified >= 0 and not replay.sim.warning:
        lines.append(f"re-simulated: every observation matches the log ({replay.n_steps} steps)")
    for warning in replay.warnings:
        lines.append(_paint(f"WARNING: {warning}", "yellow", color))
    return "\n".join(lines)


def format_step(replay: Replay, index: int, color: bool = False) -> str:
    """The terminal frame of step `index` (0: the start): the map when there is one, actions, events, rewards."""
    total = replay.n_steps
    lines = [_paint(f"== {'start (reset)' if index == 0 else f'step {index}/{total}'} " + "=" * 40, "bold", color)]
    if index < len(replay.sim.ansi):
        lines.append(colour_frame(replay.sim.ansi[index], drawing_of(replay.env_id), color))
    elif replay.frames:
        lines.append(_paint("(no map for this step: re-simulation stopped earlier, see the warning above)", "dim", color))
    if index == 0:
        lines.append(_plain(f"agents: {', '.join(map(str, replay.agents))}"))
        return "\n".join(lines)
    rec = replay.steps[index - 1]
    entries = rec.get("agents", {})
    width = max((len(printable(a)) for a in entries), default=5) + 2
    busy = []
    for agent, entry in entries.items():
        status, text = action_summary(entry)
        if status == "busy":
            busy.append(agent)
            continue
        mark = _paint(text, "red", color) if status == "invalid" else _plain(text)
        lines.append(f"{_paint(printable(agent).ljust(width), 'cyan', color)}{mark}")
        if entry.get("rationale"):
            lines.append(_paint(f"{'':{width}}rationale: {_clip(entry['rationale'])}", "dim", color))
    if busy:
        lines.append(_paint(f"busy (not asked): {', '.join(busy)}", "dim", color))
    said = {a: str(e.get("raw_action")) for a, e in entries.items()}
    events = [
        event_line(e) for e in rec.get("events", [])
        if e.get("type") not in QUIET_EVENTS and not (e.get("type") == "message" and str(e.get("message")) in said.get(e.get("sender"), ""))
    ]
    for agent, entry in entries.items():
        events.extend(f"({agent}) {e['text']}" for e in entry.get("events", []) if e.get("text"))
    for line in events:
        lines.append(_plain(f"  - {_clip(line, 300)}"))
    rewards = {a: e.get("reward", 0) for a, e in entries.items() if e.get("reward")}
    if rewards:
        lines.append(_plain("rewards: " + ", ".join(f"{a} {r:+g}" for a, r in rewards.items())))
    return "\n".join(lines)


def format_outcome(replay: Replay, color: bool = False) -> str:
    """The lines after the last step: returns and metrics, or why there are none."""
    if replay.end is None:
        why = replay.error.get("error") if replay.error else "the log has no end line"
        return _paint(f"== no end line: the run stopped after step {replay.n_steps} ({why})", "yellow", color)
    end = replay.end
    lines = [_paint(f"== end after {end.get('steps', replay.n_steps)} steps " + "=" * 30, "bold", color)]
    returns = end.get("returns") or {}
    if returns:
        lines.append(_plain("returns: " + ", ".join(f"{a} {_value(r)}" for a, r in returns.items())))
    rows = [(printable(k), _value(v)) for k, v in flatten(end.get("metrics") or {}).items()]
    width = max((len(k) for k, _ in rows), default=0) + 2
    lines.extend(_plain(f"  {k.ljust(width)}{v}") for k, v in rows)
    return "\n".join(lines)


def play(path: str | Path, stream: TextIO | None = None, delay: float = 0.0, start: int = 0, stop: int | None = None, color: bool = True) -> int:
    """Print an episode step by step (`start`..`stop`, inclusive; 0 is the start); returns the frames shown.

    With `delay` > 0 each frame stays that many seconds (on a terminal, the screen is redrawn).
    """
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not 0 <= delay <= MAX_DELAY:  # (NaN fails too)
        raise ValueError(f"--delay must be a number of seconds from 0 to {MAX_DELAY:g}, got {excerpt(delay)}")
    # checked before the log is read: start="2" from Python compared text with numbers and raised a bare TypeError
    start = check_int("--step (start)", start)
    stop = None if stop is None else check_int("--stop (stop)", stop)
    check_flag("color", color)
    out = stream if stream is not None else sys.stdout
    replay = load_replay(path, ansi=True)
    last = replay.n_steps if stop is None else stop
    if start < 0 or start > replay.n_steps:
        raise ValueError(f"--step {start} is outside the log, which has steps 0 to {replay.n_steps}")
    if last < start:
        raise ValueError(f"--stop {last} comes before --step {start}")
    last = min(last, replay.n_steps)
    redraw = delay > 0 and getattr(out, "isatty", lambda: False)()
    print(format_header(replay, color), file=out)
    shown = 0
    for index in range(start, last + 1):
        if redraw:
            out.write("\x1b[H\x1b[2J")
        print(format_step(replay, index, color), file=out, flush=True)
        shown += 1
        if delay > 0 and index < last:
            time.sleep(delay)
    if last == replay.n_steps:
        print(format_outcome(replay, color), file=out)
    return shown


# ---------------------------------------------------------------------- HTML viewer
def frame_deltas(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each frame as only the keys that changed since the one before (the first in full)."""
    out: list[dict[str, Any]] = []
    previous: dict[str, Any] = {}
    for frame in frames:
        out.append({k: v for k, v in frame.items() if k not in previous or previous[k] != v})
        previous = frame
    return out


def pack_observations(records: list[dict[str, Any] | None]) -> tuple[list[str], list[dict[str, Any] | None]]:
    """Observations as indices into one table of distinct lines (consecutive observations share most lines).

    Returns (lines, records) with each agent's `observation` replaced by its list of line indices;
    the records given are not changed.
    """
    table: dict[str, int] = {}
    packed: list[dict[str, Any] | None] = []
    for rec in records:
        if rec is None or not isinstance(rec.get("agents"), Mapping):
            packed.append(rec)
            continue
        agents = {}
        for agent, entry in rec["agents"].items():
            text = entry.get("observation")
            if isinstance(text, str):
                entry = {**entry, "observation": [table.setdefault(line, len(table)) for line in text.split("\n")]}
            agents[agent] = entry
        packed.append({**rec, "agents": agents})
    return list(table), packed


def unpack_observation(refs: Any, lines: list[str]) -> Any:
    """An observation packed by `pack_observations`, as text again."""
    return "\n".join(lines[i] for i in refs) if isinstance(refs, list) else refs


def viewer_data(replay: Replay) -> dict[str, Any]:
    """The JSON the viewer embeds: the log's records once (observations as line indices), map frames as deltas, timeline and status."""
    sim = replay.sim
    if sim.verified >= 0 and not sim.warning:
        status = f"re-simulated: every observation matches the log ({replay.n_steps} steps)"
    else:
        status = "not reproduced: shown from the log's text" + (f" (matches up to step {sim.verified})" if sim.verified >= 0 else "")
    lines, (reset, *steps) = pack_observations([replay.reset, *replay.steps])
    return {
        "format": FORMAT,
        "source": replay.path.name,
        "generator": f"teamenvs {__version__} replay",
        "header": replay.header,
        "lines": lines,
        "reset": reset,
        "steps": steps,
        "end": replay.end,
        "error": replay.error,
        "frames": frame_deltas(sim.frames),
        "recipients": sim.recipients,
        "timeline": timeline(replay.steps),
        "warnings": replay.warnings,
        "resim": {"verified": sim.verified, "status": status},
    }


def embed_json(data: Any) -> str:
    """JSON that is safe inside an HTML <script> element ('<' and '/' escaped, so no '</script>' and no URLs)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace("/", "\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def viewer_template() -> str:
    return resources.files("teamenvs").joinpath("replay_viewer.html").read_text(encoding="utf-8")


def _html_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render_html(replay: Replay) -> str:
    """The viewer page of one episode, as a self-contained HTML string."""
    title = f"{replay.env_id} seed {replay.header.get('seed')}: {replay.path.name}"
    page = viewer_template().replace(TITLE_MARK, _html_text(title))
    page = page.replace(DRAWING_MARK, drawing_script(drawing_of(replay.env_id)))
    return page.replace(DATA_MARK, embed_json(viewer_data(replay)))


HTML_SUFFIXES = (".html", ".htm")
GENERATOR_TAG = '<meta name="generator" content="teamenvs replay">'  # in the head of every page `render_html` writes


def write_html(path: str | Path, out: str | Path) -> Path:
    """Write the self-contained HTML viewer of the episode log `path` to `out`; returns `out`.

    `out` must end in `.html` or `.htm`, and may replace only a page this function wrote (one
    whose head holds `GENERATOR_TAG`), so that a slip of the command line cannot overwrite a log,
    a results table or any other file: ValueError, before anything is written.
    """
    target = Path(out)
    check_html_target(target)
    replay = load_replay(path)
    if target.parent and not target.parent.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
    # untrusted text (an action, a model's reply) may hold a lone surrogate, which has no UTF-8 form: it is written as the
    # escape it reads back from (in the page's data, a JSON string, `\ud800` is that character again)
    page = render_html(replay).encode("utf-8", "backslashreplace")
    # written whole: a write cut short (a full disk, Ctrl-C) leaves no part page, which would be neither the old page
    # nor one `check_html_target` lets the next run replace
    return write_whole(target, page)


def check_html_target(target: Path) -> None:
    """ValueError when `target` is no place for a replay page (see `write_html`)."""
    if not target.name.lower().endswith(HTML_SUFFIXES):
        raise ValueError(f"--html {target}: the page's name must end in .html or .htm (so that no log or table is overwritten)")
    if target.is_dir():
        raise ValueError(f"--html {target} is a folder; give the page's file name")
    if target.exists() and not _is_replay_page(target):
        raise ValueError(f"--html {target}: refusing to overwrite a file that is not a replay page; "
                         "pick another name, or remove the file first")


def _is_replay_page(path: Path) -> bool:
    """Whether `path` is a file whose head holds `GENERATOR_TAG`, as the pages `render_html` writes."""
    if not path.is_file():
        return False
    with open(path, "rb") as f:
        return GENERATOR_TAG.encode() in f.read(1024)
