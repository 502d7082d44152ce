"""`teamenvs replay`: terminal frames, the self-contained HTML viewer, and re-simulation of logged episodes."""

from __future__ import annotations

import gzip
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
import teamenvs
from teamenvs import replay
from teamenvs.cli import main
from teamenvs.core.recorder import read_log

# One log per paradigm; search and rescue is cut short where the full mission is not needed.
EPISODES = {
    "day_trader_v0": ({}, True),
    "commons_v0": ({}, False),
    "search_rescue_v0": ({"max_steps": 150}, True),
    "map_task_v0": ({}, False),
    "job_fair_v0": ({}, True),
}
GRID_ENVS = ("search_rescue_v0", "map_task_v0")


def run_logged(env_id: str, folder: Path, compress: bool, **config) -> Path:
    env = teamenvs.make(env_id, **config)
    result = agents.run_episode(env, agents.make_policies(env, "scripted", seed=0), seed=0, log_dir=folder, compress=compress)
    return Path(result.log_path)


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("replay_logs")
    return {env_id: run_logged(env_id, folder, compress, **config) for env_id, (config, compress) in EPISODES.items()}


def sections(text: str) -> dict[int, str]:
    """The printed frames by step (0: the start)."""
    parts = re.split(r"^== (start \(reset\)|step (\d+)/\d+) =+$", text, flags=re.MULTILINE)
    out = {}
    for i in range(1, len(parts), 3):
        out[int(parts[i + 1]) if parts[i + 1] else 0] = parts[i + 2]
    return out


def steps_of(path: Path) -> list[dict]:
    return [r for r in read_log(path) if r["type"] == "step"]


def embedded_data(html: str) -> dict:
    match = re.search(r'<script id="replay-data" type="application/json">(.*?)</script>', html, re.DOTALL)
    assert match, "the viewer must embed the episode as JSON"
    return json.loads(match.group(1))


def unpacked(data: dict, records: list[dict | None]) -> list[dict | None]:
    """Embedded records with their observations as text again."""
    out = []
    for rec in records:
        if rec is not None:
            rec = {**rec, "agents": {a: {**e, "observation": replay.unpack_observation(e["observation"], data["lines"])} for a, e in rec["agents"].items()}}
        out.append(rec)
    return out


# ---------------------------------------------------------------------- terminal replay
@pytest.mark.parametrize("env_id", list(EPISODES))
def test_play_prints_every_step_with_its_actions(logs, env_id):
    path = logs[env_id]
    assert path.name.endswith(".jsonl.gz" if EPISODES[env_id][1] else ".jsonl")
    steps = steps_of(path)
    out = io.StringIO()
    shown = replay.play(path, stream=out, color=False)
    text = out.getvalue()
    assert shown == len(steps) + 1
    frames = sections(text)
    assert sorted(frames) == list(range(len(steps) + 1))
    acted = 0
    for rec in steps:
        for agent, entry in rec["agents"].items():
            if entry["action"].get("ok"):
                line = next(line for line in frames[rec["step"]].splitlines() if line.startswith(agent + " "))
                assert " ".join(entry["raw_action"].split())[:150] in line
                acted += 1
            elif entry["action"].get("ignored"):
                assert agent in next(line for line in frames[rec["step"]].splitlines() if line.startswith("busy (not asked)"))
    assert acted > 0
    end = read_log(path)[-1]
    assert end["type"] == "end"
    first_metric = next(iter(end["metrics"]))
    assert re.search(rf"^== end after {end['steps']} steps", text, re.MULTILINE) and f"  {first_metric} " in text
    if env_id == "search_rescue_v0":
        grid = frames[10].splitlines()
        assert grid[1].startswith("Search and rescue step 10/150")
        assert sum(1 for line in grid if re.fullmatch(r"#[#.+XhsCcMET]+#", line)) == 30  # the 30 rows of the map
    elif env_id == "map_task_v0":
        assert "Map Task step 5/120 | route accuracy" in frames[5]
    else:
        assert "Search and rescue" not in text and "Map Task step" not in text


def test_play_shows_rewards_events_and_a_range_of_steps_in_colour(logs):
    path = logs["day_trader_v0"]
    out = io.StringIO()
    assert replay.play(path, stream=out, start=1, stop=3, color=True) == 3
    text = out.getvalue()
    assert "\x1b[" in text
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert sorted(sections(plain)) == [1, 2, 3]
    assert "round 1 settled: pool $300" in plain and re.search(r"^rewards: trader_1 \+\d+", plain, re.MULTILINE)
    assert "== end after" not in plain  # the outcome comes only with the last step
    with pytest.raises(ValueError, match="outside the log"):
        replay.play(path, stream=io.StringIO(), start=999)
    with pytest.raises(ValueError, match="comes before"):
        replay.play(path, stream=io.StringIO(), start=5, stop=2)
    # from Python, a step given as text compared text with numbers (a bare TypeError); a flag given as text was truthy
    for given, says in (({"start": "2"}, r"--step \(start\) must be an integer, got '2'"),
                        ({"stop": 1.5}, r"--stop \(stop\) must be an integer, got 1\.5"),
                        ({"color": "no"}, "color must be true or false, got 'no'")):
        with pytest.raises(ValueError, match=says):
            replay.play(path, stream=io.StringIO(), **given)
    out = io.StringIO()  # a numpy step index is the number it holds
    assert replay.play(path, stream=out, start=np.int64(2), stop=np.int64(3), color=False) == 2


def test_compressed_and_plain_logs_replay_alike(logs, tmp_path):
    gz = logs["search_rescue_v0"]
    plain = tmp_path / "plain.jsonl"
    with gzip.open(gz, "rt", encoding="utf-8") as f:
        plain.write_text(f.read(), encoding="utf-8")
    a, b = io.StringIO(), io.StringIO()
    replay.play(gz, stream=a, color=False)
    replay.play(plain, stream=b, color=False)
    assert a.getvalue().split("\n", 1)[1] == b.getvalue().split("\n", 1)[1]  # all but the file name


# ---------------------------------------------------------------------- re-simulation and frames
@pytest.mark.parametrize("env_id", list(EPISODES))
def test_resimulation_reproduces_every_logged_observation(logs, env_id):
    rp = replay.load_replay(logs[env_id])
    assert rp.sim.warning is None and rp.warnings == []
    assert rp.sim.verified == rp.n_steps == len(steps_of(logs[env_id]))
    assert len(rp.sim.recipients) == rp.n_steps
    assert len(rp.frames) == (rp.n_steps + 1 if env_id in GRID_ENVS else 0)
    json.dumps(rp.frames)  # drawing data is JSON-ready


def test_search_rescue_frames_follow_the_agents_and_victims(logs):
    rp = replay.load_replay(logs["search_rescue_v0"])
    world = rp.reset["world"]
    first = rp.frames[0]
    assert first["kind"] == "search_rescue" and (first["width"], first["height"]) == (30, 30)
    assert [r["name"] for r in first["rooms"]] == [r["name"] for r in world["rooms"]]
    assert first["rubble"] == world["rubble"]
    assert [v["cell"] for v in first["victims"]] == [v["cell"] for v in world["victims"]]
    for index, frame in enumerate(rp.frames):
        entries = rp.reset["agents"] if index == 0 else rp.steps[index - 1]["agents"]
        for agent, entry in entries.items():
            x, y = map(int, re.search(r"at \((\d+),(\d+)\)", entry["observation"]).groups())
            assert frame["agents"][agent]["cell"] == [x, y]
            assert frame["agents"][agent]["role"] == agent.split("_")[0]
    rescued = {e["victim"] for rec in rp.steps for e in rec["events"] if e["type"] == "rescued"}
    assert rescued and {v["id"] for v in rp.frames[-1]["victims"] if v["rescued"]} == rescued


def test_map_task_frames_hold_both_maps_the_route_and_the_drawing(logs):
    rp = replay.load_replay(logs["map_task_v0"])
    maps = rp.reset["maps"]
    assert rp.frames[0]["kind"] == "map_task" and rp.frames[0]["maps"] == maps and rp.frames[0]["drawing"] == []
    drawing: list = []
    for index, rec in enumerate(rp.steps, start=1):
        for ev in rec["events"]:
            if ev["type"] == "drawing":
                drawing = ev["segments"]
        assert rp.frames[index]["drawing"] == drawing
    assert drawing and rp.frames[-1]["route_accuracy"] == pytest.approx(rp.end["metrics"]["route_accuracy"])


def test_a_log_that_does_not_reproduce_falls_back_to_its_text(logs, tmp_path):
    records = read_log(logs["search_rescue_v0"])
    target = next(r for r in records if r["type"] == "step" and r["step"] > 20 and any(not e["action"].get("ignored") for e in r["agents"].values()))
    agent = next(a for a, e in target["agents"].items() if not e["action"].get("ignored"))
    target["agents"][agent]["raw_action"] = "wait" if target["agents"][agent]["raw_action"] != "wait" else "move north"
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    rp = replay.load_replay(edited)
    k = target["step"]
    assert rp.sim.verified == k - 1 and len(rp.frames) == k
    assert f"differs from the log at step {k}" in rp.warnings[0] and f"up to step {k - 1} only" in rp.warnings[0]
    out = io.StringIO()
    assert replay.play(edited, stream=out, color=False) == rp.n_steps + 1
    text = out.getvalue()
    assert "WARNING: re-simulation differs" in text and "(no map for this step" in sections(text)[k]
    data = embedded_data(replay.render_html(rp))
    assert len(data["frames"]) == k and len(data["steps"]) == rp.n_steps

    records[0]["seed"] = 12345  # another seed: not even the start reproduces
    reseeded = tmp_path / "reseeded.jsonl"
    reseeded.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    rp = replay.load_replay(reseeded)
    assert rp.frames == [] and "at the episode's start" in rp.warnings[0] and "No map is shown" in rp.warnings[0]
    assert replay.play(reseeded, stream=io.StringIO(), color=False) == rp.n_steps + 1

    records[0]["config"]["no_such_key"] = 1  # a config this version rejects
    other = tmp_path / "other_version.jsonl"
    other.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    rp = replay.load_replay(other)
    assert rp.frames == [] and "re-simulation failed" in rp.warnings[0] and "no_such_key" in rp.warnings[0]


# ---------------------------------------------------------------------- the HTML viewer
EXTERNAL = re.compile(r"https?://|src\s*=|<link\b|@import|url\(", re.IGNORECASE)


@pytest.mark.parametrize("env_id", list(EPISODES))
def test_write_html_writes_one_self_contained_file(logs, env_id, tmp_path):
    out = replay.write_html(logs[env_id], tmp_path / "view" / "episode.html")
    assert out == tmp_path / "view" / "episode.html" and [p.name for p in out.parent.iterdir()] == ["episode.html"]
    html = out.read_text(encoding="utf-8")
    assert not EXTERNAL.search(html), EXTERNAL.search(html)
    assert html.count("<script") == 2 and html.count("</script>") == 2
    data = embedded_data(html)
    records = read_log(logs[env_id])
    assert data["header"] == records[0] and unpacked(data, data["steps"]) == [r for r in records if r["type"] == "step"]
    assert unpacked(data, [data["reset"]]) == [records[1]]
    assert data["end"] == records[-1] and data["warnings"] == []
    assert data["resim"]["verified"] == len(data["steps"])
    full = []
    for delta in data["frames"]:  # deltas rebuild exactly the re-simulated frames
        full.append({**(full[-1] if full else {}), **delta})
    assert full == replay.load_replay(logs[env_id]).frames
    assert bool(full) == (env_id in GRID_ENVS)
    assert data["timeline"] and all(isinstance(e[0], int) and e[3] for e in data["timeline"])
    assert all(e[1] != "moved" for e in data["timeline"])


def html_of_a_raw_action(logs, tmp_path, name: str, raw_action: str) -> str:
    """The HTML page of the DayTrader log with trader_1's first raw action replaced (the log written ASCII-escaped)."""
    records = read_log(logs["day_trader_v0"])
    step = next(r for r in records if r["type"] == "step")
    step["agents"]["trader_1"]["raw_action"] = raw_action
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return replay.write_html(path, tmp_path / f"{name}.html").read_text(encoding="utf-8")


def test_embedded_data_cannot_break_out_of_its_script_element(logs, tmp_path):
    nasty = "say </script><script>alert(1)</script> see http://example.com/x <!-- \u2028"
    html = html_of_a_raw_action(logs, tmp_path, "nasty", nasty)
    assert html.count("</script>") == 2 and "http://" not in html and "<!--" not in html
    data = embedded_data(html)
    assert data["steps"][0]["agents"]["trader_1"]["raw_action"] == nasty
    assert "differs from the log at step 1" in data["warnings"][0]


def test_a_lone_surrogate_in_a_log_replays_as_html(logs, tmp_path):
    """A raw action holding a lone surrogate (no UTF-8 form) is written into the page as the JSON escape it reads back from."""
    odd = "say hi \ud800 there"
    assert embedded_data(html_of_a_raw_action(logs, tmp_path, "odd", odd))["steps"][0]["agents"]["trader_1"]["raw_action"] == odd


def test_a_page_write_cut_short_leaves_the_old_page_and_no_part(logs, tmp_path, monkeypatch):
    """A write that fails midway (a full disk, Ctrl-C) left an empty or part page, which the next run then refused to
    replace (it is no replay page): the page is written to a file of its own and renamed when whole."""
    page = replay.write_html(logs["commons_v0"], tmp_path / "episode.html")
    before = page.read_bytes()

    def full_disk(self, data):
        self.open("wb").write(data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full_disk)
    with pytest.raises(OSError, match="No space"):
        replay.write_html(logs["day_trader_v0"], page)
    monkeypatch.undo()
    assert page.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["episode.html"]
    assert replay.write_html(logs["day_trader_v0"], page).read_bytes() != before  # the next run replaces it


def test_html_of_a_large_episode_stays_small(tmp_path):
    path = run_logged("search_rescue_v0", tmp_path, True)  # the full mission: hundreds of steps
    html = replay.write_html(path, tmp_path / "sr.html").read_text(encoding="utf-8")
    data = embedded_data(html)
    assert len(data["steps"]) > 400 and len(data["frames"]) == len(data["steps"]) + 1
    logged = [r for r in read_log(path) if r["type"] == "step"]
    assert unpacked(data, data["steps"]) == logged
    text_size = sum(len(json.dumps(e["observation"])) for r in logged for e in r["agents"].values())
    assert len(json.dumps(data["lines"])) < 0.3 * text_size  # observations share most lines from step to step
    assert len(json.dumps(data["frames"])) < 0.3 * len(json.dumps(logged))  # the map's changes, not a copy per step
    assert len(html) < 0.7 * len(json.dumps(logged)) and len(html) < 2_000_000


# ---------------------------------------------------------------------- cut-off logs and bad input
def test_a_cut_off_log_still_replays(logs, tmp_path):
    with gzip.open(logs["search_rescue_v0"], "rt", encoding="utf-8") as f:
        lines = f.read().splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:42]) + "\n" + lines[42][:300], encoding="utf-8")  # a crash mid-line: 40 steps
    raw = gzip.compress("\n".join(lines).encode("utf-8"))
    cut_gz = tmp_path / "cut.jsonl.gz"
    cut_gz.write_bytes(raw[: len(raw) // 3])  # a compressed log cut off mid-stream
    for path in (cut, cut_gz):
        rp = replay.load_replay(path)
        assert rp.end is None and rp.n_steps > 0 and rp.sim.verified == rp.n_steps
        assert any("no end line" in w for w in rp.warnings)
        out = io.StringIO()
        assert replay.play(path, stream=out, color=False) == rp.n_steps + 1
        assert f"== no end line: the run stopped after step {rp.n_steps}" in out.getvalue()
        data = embedded_data(replay.write_html(path, tmp_path / f"{path.name}.html").read_text(encoding="utf-8"))
        assert data["end"] is None and len(data["steps"]) == rp.n_steps
    assert replay.load_replay(cut).n_steps == 40

    crashed = tmp_path / "crashed.jsonl"
    crashed.write_text("\n".join(lines[:12] + [json.dumps({"type": "error", "step": 10, "error": "RuntimeError: boom"})]) + "\n", encoding="utf-8")
    rp = replay.load_replay(crashed)
    assert rp.error is not None and "error at step 10: RuntimeError: boom" in rp.warnings[-1]
    out = io.StringIO()
    replay.play(crashed, stream=out, color=False)
    assert "RuntimeError: boom" in out.getvalue()

    header_only = tmp_path / "header_only.jsonl"
    header_only.write_text(lines[0] + "\n", encoding="utf-8")
    rp = replay.load_replay(header_only)
    assert rp.n_steps == 0 and rp.frames == [] and "no reset line" in rp.warnings[0]
    assert replay.play(header_only, stream=io.StringIO(), color=False) == 1
    assert embedded_data(replay.write_html(header_only, tmp_path / "h.html").read_text(encoding="utf-8"))["steps"] == []


def test_bad_input_gives_a_clear_error_and_exit_code_2(tmp_path, capsys):
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not a log\n", encoding="utf-8")
    jsonl = tmp_path / "other.jsonl"
    jsonl.write_text('{"type": "step", "step": 1}\n', encoding="utf-8")
    binary = tmp_path / "image.jsonl"
    binary.write_bytes(bytes(range(256)) * 4)
    fake_gz = tmp_path / "fake.jsonl.gz"
    fake_gz.write_text("not gzip at all\n", encoding="utf-8")
    cases = [
        (tmp_path / "missing.jsonl", "no such episode log"),
        (tmp_path, "is a folder"),
        (text, "is not a teamenvs episode log"),
        (jsonl, "its first line is not a header line"),
        (binary, "is not a teamenvs episode log"),
        (fake_gz, "is not a teamenvs episode log"),
    ]
    for path, message in cases:
        for extra in ([], ["--html", str(tmp_path / "out.html")]):
            assert main(["replay", str(path), *extra]) == 2, path
            err = capsys.readouterr().err
            assert err.startswith("error: ") and message in err, err
    assert not (tmp_path / "out.html").exists()


def test_cli_replay_in_the_terminal_and_as_html(logs, tmp_path, capsys):
    assert main(["replay", str(logs["map_task_v0"]), "--no-color", "--step", "2", "--stop", "4"]) == 0
    out = capsys.readouterr().out
    assert sorted(sections(out)) == [2, 3, 4] and "\x1b[" not in out
    assert main(["replay", str(logs["map_task_v0"]), "--step", "99999"]) == 2
    assert "outside the log" in capsys.readouterr().err
    target = tmp_path / "mt.html"
    assert main(["replay", str(logs["map_task_v0"]), "--html", str(target)]) == 0
    assert f"wrote {target}" in capsys.readouterr().out and target.stat().st_size > 10_000


def test_cli_replay_colours_only_a_terminal(logs, capsys, monkeypatch):
    """Piped into a file or `less`, ANSI escape codes are noise: colour on a terminal only, and never with NO_COLOR."""
    args = ["replay", str(logs["map_task_v0"]), "--stop", "1"]
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert main(args) == 0 and "\x1b[" not in capsys.readouterr().out  # captured: not a terminal
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(args) == 0 and "\x1b[" in capsys.readouterr().out
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(args) == 0 and "\x1b[" not in capsys.readouterr().out


def test_cli_replay_stops_quietly_when_the_reader_goes(logs):
    """`teamenvs replay LOG | head` printed `error: [Errno 32] Broken pipe` and exited 2 when head closed the pipe."""
    proc = subprocess.Popen([sys.executable, "-m", "teamenvs", "replay", str(logs["search_rescue_v0"])],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.read(100)  # the reader takes a little, then goes away
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and err == "", err


def test_cli_replay_html_never_overwrites_a_log_or_a_table(logs, tmp_path, capsys):
    """Found by an audit: `replay LOG --html LOG` replaced the episode log with the page and exited 0."""
    log = tmp_path / "victim.jsonl"
    log.write_bytes(logs["commons_v0"].read_bytes())
    other = tmp_path / "other.jsonl.gz"
    other.write_bytes(logs["day_trader_v0"].read_bytes())
    notes = tmp_path / "notes.html"
    notes.write_text("<!DOCTYPE html><p>my notes</p>\n", encoding="utf-8")
    (tmp_path / "folder.html").mkdir()
    files = [log, other, notes]
    for name in ("results.csv", "report.md", "summary.json", "suite.yaml", "page"):
        files.append(tmp_path / name)
        files[-1].write_text("kept\n", encoding="utf-8")
    before = {p: p.read_bytes() for p in files}
    for target, why in [*((p, "must end in .html or .htm") for p in files if p != notes),
                        (notes, "refusing to overwrite a file that is not a replay page"),
                        (tmp_path / "folder.html", "is a folder"), (tmp_path / "new.jsonl", "must end in .html or .htm")]:
        assert main(["replay", str(log), "--html", str(target)]) == 2, target
        err = capsys.readouterr().err
        assert err.startswith(f"error: --html {target}") and why in err, err
    assert {p: p.read_bytes() for p in files} == before and not (tmp_path / "new.jsonl").exists()
    page = tmp_path / "view" / "Episode.HTM"
    for _ in range(2):  # a replay page, new or written before, is (re)written
        assert main(["replay", str(log), "--html", str(page)]) == 0
        assert f"wrote {page}" in capsys.readouterr().out and replay.GENERATOR_TAG in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("delay", ["1e400", "inf", "nan", "-1", "3601"])
def test_cli_replay_refuses_a_delay_it_cannot_keep(logs, capsys, delay):
    """Found by `benchmarks.fuzz --only cli`: `--delay 1e400` raised OverflowError from time.sleep, and a negative one
    said only "sleep length must be non-negative"."""
    assert main(["replay", str(logs["map_task_v0"]), "--stop", "1", "--delay", delay]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --delay must be a number of seconds from 0 to 3600, got ") and "Traceback" not in err
    with pytest.raises(ValueError, match="--delay must be"):
        replay.play(logs["map_task_v0"], stream=io.StringIO(), delay="0.1")


def test_an_llm_log_shows_each_rationale(server, tmp_path):
    from agents.llm.policy import make_llm_policies

    env = teamenvs.make("map_task_v0", max_steps=6)
    result = agents.run_episode(env, make_llm_policies(env, "random-valid", server.url), seed=0, log_dir=tmp_path)
    steps = steps_of(result.log_path)
    rationales = [(rec["step"], a, e["rationale"]) for rec in steps for a, e in rec["agents"].items() if e.get("rationale")]
    assert len(rationales) == 12
    out = io.StringIO()
    replay.play(result.log_path, stream=out, color=False)
    frames = sections(out.getvalue())
    for step, agent, rationale in rationales:
        lines = frames[step].splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith(agent + " "))
        assert lines[at + 1].strip().startswith(f"rationale: {' '.join(rationale.split())[:100]}")
    data = embedded_data(replay.write_html(result.log_path, tmp_path / "llm.html").read_text(encoding="utf-8"))
    assert data["steps"][0]["agents"]["guide"]["rationale"] == steps[0]["agents"]["guide"]["rationale"]
    assert data["resim"]["verified"] == 6


# ---------------------------------------------------------------------- pure helpers
def test_joint_action_holds_only_the_agents_that_were_asked():
    step = {
        "agents": {
            "a": {"raw_action": "wait", "action": {"ok": True, "command": "wait"}},
            "b": {"raw_action": None, "action": {"ok": None, "ignored": True}},
            "c": {"raw_action": None, "action": {"ok": False, "kind": "missing", "error": "no action"}},
            "d": {"raw_action": "fly", "action": {"ok": False, "kind": "unknown_command", "error": "unknown"}},
        }
    }
    assert replay.joint_action(step) == {"a": "wait", "d": "fly"}


def test_event_lines_read_in_the_paradigms_words():
    assert replay.event_line({"type": "message", "text": "x sent a message", "sender": "medic", "to": None, "message": "hi"}) == "medic -> everyone: hi"
    assert replay.event_line({"type": "message", "text": "", "sender": "guide", "to": "follower", "message": "go"}) == "guide -> follower: go"
    assert replay.event_line({"type": "found", "text": "", "agent": "medic", "victims": [3, 10], "room": "Side Kitchen"}) == "medic found victims 3, 10 in Side Kitchen"
    assert replay.event_line({"type": "rescued", "text": "transporter delivered victim 26"}) == "transporter delivered victim 26"
    assert replay.event_line({"type": "drawing", "text": "", "action": "draw", "segments": [[[1, 1], [1, 2]]], "accuracy": 0.5}) == (
        "follower draw: 1 segment(s) on the canvas, route accuracy 0.50"
    )
    assert replay.event_line({"type": "custom", "text": "", "n": 3}) == 'custom: {"n": 3}'


def test_frame_deltas_keep_only_what_changed():
    frames = [{"a": 1, "b": [1]}, {"a": 1, "b": [1, 2]}, {"a": 2, "b": [1, 2]}]
    assert replay.frame_deltas(frames) == [{"a": 1, "b": [1]}, {"b": [1, 2]}, {"a": 2}]


def test_observations_are_packed_as_shared_lines():
    records = [
        {"type": "reset", "agents": {"a": {"observation": "Step 0\nRooms: A\nNow: wait"}}},
        {"type": "step", "agents": {"a": {"observation": "Step 1\nRooms: A\nNow: wait", "reward": 1}}},
        None,
    ]
    lines, packed = replay.pack_observations(records)
    assert lines == ["Step 0", "Rooms: A", "Now: wait", "Step 1"]
    assert packed[1] == {"type": "step", "agents": {"a": {"observation": [3, 1, 2], "reward": 1}}} and packed[2] is None
    assert replay.unpack_observation(packed[0]["agents"]["a"]["observation"], lines) == records[0]["agents"]["a"]["observation"]
    assert records[0]["agents"]["a"]["observation"].startswith("Step 0")  # the input is left alone


def test_embed_json_is_valid_json_without_markup():
    text = replay.embed_json({"s": "</script><!-- a/b \u2028 <b>"})
    assert "<" not in text and "/" not in text.replace("\\/", "")
    assert json.loads(text) == {"s": "</script><!-- a/b \u2028 <b>"}


@pytest.mark.parametrize("env_id", GRID_ENVS)
def test_frame_is_the_true_world_as_json(env_id):
    env = teamenvs.make(env_id)
    env.reset(seed=3)
    frame = env.unwrapped.frame()
    assert json.loads(json.dumps(frame)) == frame
    state = env.state()
    assert frame["kind"] == env_id.removesuffix("_v0") and frame["step"] == state["step"] == 0
    if env_id == "search_rescue_v0":
        assert frame["victims"] == state["victims"] and frame["rubble"] == state["rubble"]
        assert frame["hospital"] == "Hospital" and any(r["name"] == "Hospital" for r in frame["rooms"])
        assert all(info["cell"] == state["agents"][a]["cell"] for a, info in frame["agents"].items())
    else:
        assert frame["maps"] == state["maps"] and frame["drawing"] == [] and frame["max_steps"] == 120
