"""What `teamenvs bench` writes and prints, under hostile conditions (hardening issue, items 4, 7 and 8).

- kill -9 of a bench: its workers exit within seconds, and no half-written log ever sits under
  a log's final name; the temp files of a killed run do not count and do not break the rerun;
- `--out` on a folder holding another suite's run or files bench did not write is refused
  before anything is written, with a message saying what to do; the same suite's folder resumes;
- labels that a spreadsheet would run as formulas reach results.csv neutralised (numbers stay
  numbers), and control characters in names and errors reach the terminal escaped.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks import bench
from benchmarks.bench import Outcome, is_complete, log_path, run_bench
from benchmarks.report import build_report, csv_cell, load_results
from benchmarks.suite import load_suite
from teamenvs.cli import main
from teamenvs.core.config import ConfigError
from teamenvs.core.recorder import LogError, dumps, read_log

ROOT = Path(__file__).resolve().parents[2]
TINY = {"name": "tiny", "seeds": 1, "groups": [
    {"title": "Trade", "env": "day_trader_v0", "conditions": ["baseline"], "policies": ["scripted"], "max_steps": 4}]}


def write_suite(folder: Path, raw: dict, name: str = "suite.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A finished bench folder of the one-episode suite `tiny`, with its report and plots: (suite file, folder)."""
    root = tmp_path_factory.mktemp("tiny")
    path = write_suite(root, TINY)
    out = root / "out"
    assert run_bench(load_suite(path), out, workers=1, progress=False).ran == 1
    return path, out


@pytest.fixture
def folder(tiny_run, tmp_path):
    """A copy of the tiny run's folder to damage."""
    return Path(shutil.copytree(tiny_run[1], tmp_path / "out"))


# ---------------------------------------------------------------------------- kill -9


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rpartition(")")[2].split()  # state, ppid, ...


def children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat_fields(int(entry.name))) and int(fields[1]) == pid:
            kids.append(int(entry.name))
    return kids


def running(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def started_logs(out: Path) -> list[Path]:
    """Logs (final or temp) that already hold something."""
    found = []
    for path in (out / "logs").rglob("*.jsonl.gz*") if (out / "logs").is_dir() else []:
        try:
            if path.stat().st_size > 0:
                found.append(path)
        except OSError:  # moved or removed meanwhile
            pass
    return found


SLOW = {"name": "slow", "seeds": 2, "groups": [
    {"title": "SAR", "env": "search_rescue_v0", "conditions": ["easy"], "policies": ["random"], "max_steps": 500}]}  # 0.5 s an episode


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the worker processes in /proc")
def test_kill_9_of_bench_ends_its_workers_and_leaves_no_partial_log(tmp_path):
    path = write_suite(tmp_path, SLOW)
    suite = load_suite(path)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "teamenvs.cli", "bench", "--suite", str(path), "--out", str(out),
                             "--workers", "2", "--quiet"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            workers = children(proc.pid)
            if len(workers) >= 2 and started_logs(out):
                break
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert len(workers) >= 2 and started_logs(out), "the kill should land while the workers write their logs"
    assert not any(is_complete(log_path(out, e), e) for e in suite.episodes()), "the kill should land mid-episode"
    deadline = time.monotonic() + 5
    while any(running(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [w for w in workers if running(w)], "worker processes outlived the killed bench"
    time.sleep(0.3)  # nothing is written any more
    # A worker polls for its bench every PARENT_POLL_S, so one may finish its episode in that window
    # and move the whole log into place: kept, it is a finished result. Half of one never is.
    placed = [e for e in suite.episodes() if log_path(out, e).exists()]
    assert len(list((out / "logs").glob("*.jsonl.gz"))) == len(placed), "a log not named for an episode of the suite"
    assert all(is_complete(log_path(out, e), e) for e in placed), "a half-written log sits under its final name"
    assert list((out / "logs").glob(".tmp-*")) == [], "the workers left their temp folders"
    # the rerun runs every episode without a finished log, from scratch, into place
    outcome = run_bench(suite, out, workers=2, progress=False, report=False)
    assert (outcome.ran, outcome.skipped, outcome.failed) == (2 - len(placed), len(placed), [])
    assert all(is_complete(log_path(out, e), e) for e in suite.episodes())


def test_stale_temp_logs_of_a_killed_run_do_not_count_or_break_the_rerun(folder, tiny_run):
    suite = load_suite(tiny_run[0])
    episode = suite.episodes()[0]
    final = log_path(folder, episode)
    complete = final.read_bytes()
    final.unlink()
    gone = subprocess.Popen([sys.executable, "-c", ""])
    gone.wait()  # a process id that no longer runs: a killed bench (workers=1) writes in its own temp folder
    stale = folder / "logs" / f".tmp-{gone.pid}"
    stale.mkdir()
    (stale / final.name).write_bytes(complete[: len(complete) // 2])
    (folder / "logs" / ".DS_Store").write_bytes(b"\0")  # hidden files are nobody's episodes
    with pytest.raises(ConfigError, match="no episode logs"):  # the half-written one is not counted
        build_report(folder, plots=False)
    outcome = run_bench(suite, folder, workers=1, progress=False, report=False)
    assert (outcome.ran, outcome.failed) == (1, [])
    assert final.read_bytes() == complete and not stale.exists()
    assert [r.status for r in build_report(folder, plots=False).rows] == ["complete"]


def test_a_failed_episode_log_is_moved_into_place_with_its_error_line(tmp_path):
    out = tmp_path / "out"
    suite = load_suite(write_suite(tmp_path, TINY))
    outcome = run_bench(suite, out, workers=1, progress=False, report=False, episode_timeout=1e-9)
    assert len(outcome.failed) == 1
    records = read_log(log_path(out, suite.episodes()[0]))
    assert records[0]["type"] == "header" and records[-1]["type"] == "error"
    assert list((out / "logs").glob(".tmp-*")) == []


# ---------------------------------------------------------------------------- --out


def test_the_folder_of_another_suite_is_refused_and_left_alone(folder, tmp_path, capsys):
    before = snapshot(folder)
    other = write_suite(tmp_path, dict(TINY, name="other"), "other.json")
    with pytest.raises(ConfigError, match=r"holds a run of suite 'tiny', not 'other': choose a new folder for this suite, "
                                          r"or remove .* to start over"):
        run_bench(load_suite(other), folder, workers=1, progress=False)
    assert main(["bench", "--suite", str(other), "--out", str(folder), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --out {folder} holds a run of suite 'tiny'"), err
    assert snapshot(folder) == before  # results.csv, report.md, suite.json and the logs untouched


FOREIGN = {
    "notes.txt": lambda out: (out / "notes.txt").write_text("mine", encoding="utf-8"),
    "logs/commons_v0_scripted_seed0.jsonl": lambda out: (out / "logs" / "commons_v0_scripted_seed0.jsonl").write_text(
        '{"type": "header", "env_id": "commons_v0"}\n', encoding="utf-8"),
    "logs/Other__x__y__seed0.jsonl.gz (a log of suite 'other')": lambda out: (out / "logs" / "Other__x__y__seed0.jsonl.gz").write_bytes(
        gzip.compress(b'{"type": "header", "env_id": "commons_v0", "run": {"suite": "other"}}\n')),
    "logs/archive/": lambda out: (out / "logs" / "archive" / "x").mkdir(parents=True),
    "plots/data.csv": lambda out: (out / "plots" / "data.csv").write_text("x", encoding="utf-8"),
}


@pytest.mark.parametrize("name", list(FOREIGN))
def test_a_folder_with_files_bench_did_not_write_is_refused(folder, tiny_run, capsys, name):
    FOREIGN[name](folder)
    before = snapshot(folder)
    with pytest.raises(ConfigError) as caught:
        run_bench(load_suite(tiny_run[0]), folder, workers=1, progress=False)
    message = str(caught.value)
    assert f"holds files `teamenvs bench` did not write for suite 'tiny' ({name})" in message, message
    assert "choose a new folder, or move them out" in message
    assert main(["bench", "--suite", str(tiny_run[0]), "--out", str(folder), "--quiet"]) == 2
    assert capsys.readouterr().err.startswith("error: --out ")
    assert snapshot(folder) == before


def test_report_files_without_a_suite_json_are_not_bench_s(tmp_path, tiny_run):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.csv").write_text("someone's,table\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"did not write for suite 'tiny' \(results.csv\)"):
        run_bench(load_suite(tiny_run[0]), out, workers=1, progress=False)
    (out / "suite.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"suite.json \(not one `teamenvs bench` wrote\)"):
        run_bench(load_suite(tiny_run[0]), out, workers=1, progress=False)
    assert (out / "results.csv").read_text(encoding="utf-8") == "someone's,table\n"
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        run_bench(load_suite(tiny_run[0]), afile, workers=1, progress=False)


def test_the_same_suite_s_folder_and_an_empty_one_still_run(folder, tiny_run, tmp_path):
    (folder / ".DS_Store").write_bytes(b"\0")
    outcome = run_bench(load_suite(tiny_run[0]), folder, workers=1, progress=False, report=False)
    assert (outcome.ran, outcome.skipped) == (0, 1)
    more = run_bench(load_suite(tiny_run[0], seeds=2), folder, workers=1, progress=False, report=False)
    assert (more.ran, more.skipped) == (1, 1)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_bench(load_suite(tiny_run[0]), empty, workers=1, progress=False, report=False).ran == 1


# ---------------------------------------------------------------------------- results.csv and the terminal


def test_csv_cells_that_would_run_as_formulas_are_neutralised():
    for text in ("=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", '=HYPERLINK("http://x","y")'):
        assert csv_cell(text) == "'" + text
    for value in ("plain", "a=b", "", -3.5, -2, 0, 1e-9, None):
        assert csv_cell(value) == value


def test_hostile_labels_and_model_reach_results_csv_as_text_and_numbers_as_numbers(folder, tiny_run):
    episode_log = next((folder / "logs").glob("*.jsonl.gz"))
    records = read_log(episode_log)
    head, end = records[0], records[-1]
    head["run"].update(suite="=cmd|' /C calc'!A0", group="@SUM(1+1) $\\x{$", model='=HYPERLINK("http://x","click")',
                       condition={"name": "+1+2", "preset": "-x", "set": {}}, policy={"label": "-2+3", "policy": "scripted"})
    agent = head["agents"][0]
    end["returns"][agent] = -3.5
    paid = [r["agents"][agent] for r in records if r["type"] == "step" and agent in r["agents"]]
    for entry in paid:  # (a return is its step rewards' sum: else the log reads as edited, and is left out)
        entry["reward"] = 0.0
    paid[0]["reward"] = -3.5
    end["metrics"].update({"gini_wealth": -0.25, "note": "=evil()", "=evil": 1})
    episode_log.write_bytes(gzip.compress("".join(dumps(r) + "\n" for r in records).encode()))
    report = build_report(folder)  # plots too: a label is not TeX, "$\\x{$" draws as written
    assert report.plots["@SUM(1+1) $\\x{$"].keys() == {"headline", "metrics", "series", "agents", "actions"}
    with open(folder / "results.csv", newline="", encoding="utf-8") as f:
        header, row = list(csv.reader(f))
    cells = dict(zip(header, row))
    assert cells["suite"] == "'=cmd|' /C calc'!A0" and cells["group"] == "'@SUM(1+1) $\\x{$"
    assert cells["condition"] == "'+1+2" and cells["preset"] == "'-x" and cells["policy"] == "'-2+3"
    assert cells["model"] == '\'=HYPERLINK("http://x","click")' and cells["note"] == "'=evil()"
    assert "'=evil" in header and "=evil" not in header
    assert cells[f"return.{agent}"] == "-3.5" and cells["gini_wealth"] == "-0.25" and cells["seed"] == "0"
    assert not any(c.startswith(("=", "+", "-", "@", "\t", "\r")) for c in row if not _number(c)), row
    assert load_results(folder)[0]["env_steps"] == str(end["steps"])


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


EVIL = "\x1b]0;PWNED\x07\x1b[2J"


def test_control_characters_reach_the_terminal_escaped(tmp_path, monkeypatch, capsys):
    raw = dict(TINY, name=f"evil{EVIL}")
    path = write_suite(tmp_path, raw)
    out = tmp_path / f"out{EVIL}"
    monkeypatch.setattr(bench, "run_scripted", lambda e, o, t=None: Outcome(e.key, f"RuntimeError: model said {EVIL}"))
    progress = io.StringIO()
    outcome = run_bench(load_suite(path), out, workers=1, progress=True, stream=progress, report=False)
    summary = outcome.summary()
    assert "\x1b" not in summary and "\x07" not in summary
    assert "suite evil\\x1b]0;PWNED\\x07\\x1b[2J:" in summary and "model said \\x1b]0;PWNED" in summary
    assert "\x1b" not in progress.getvalue() and "bench evil\\x1b]0;PWNED" in progress.getvalue()
    monkeypatch.undo()
    # the CLI's whole output: bench, then report of a folder holding a log with a hostile name
    assert main(["bench", "--suite", str(path), "--out", str(out), "--quiet"]) == 0
    (out / "logs" / f"x{EVIL}.jsonl").write_text('{"type": "header", "env_id": 5}\n', encoding="utf-8")
    assert main(["report", str(out)]) == 0
    printed = capsys.readouterr()
    assert "\x1b" not in printed.out + printed.err and "\x07" not in printed.out + printed.err
    assert "x\\x1b]0;PWNED\\x07\\x1b[2J.jsonl:1: env_id: expected a string, got a number" in printed.out
    with pytest.raises(LogError) as caught:
        read_log(out / "logs" / f"x{EVIL}.jsonl")
    assert "\x1b" not in str(caught.value)
