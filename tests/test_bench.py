"""`teamenvs bench` (`benchmarks.bench.run_bench`) end to end.

The smoke suite runs once per module (about 6 s with its plots); tests that damage the output
folder work on copies of it. Covers: the files written (one gzip JSONL log per episode with its
run header and end line, results.csv, report.md with filled tables and marked best values,
real PNG plots); resuming (a complete folder runs nothing, a killed run reruns only the episodes
it lost, a log of another episode does not count, more seeds run only the new ones, --force
reruns all); a failing episode (reported, the others complete, exit code 1, listed in the
report); the progress line; the LLM path against the built-in server (usage and cost in the
logs, results.csv and report, one concurrency bound over all episodes); and the errors a bench
command gives before running anything.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import agents
from agents.policy import SyncPolicy
from benchmarks.bench import Progress, _clock, is_complete, log_path, parse_price, recorded_endpoint, run_bench
from benchmarks.report import load_results
from benchmarks.suite import load_suite, slug
from teamenvs.cli import main
from teamenvs.core.config import ConfigError
from teamenvs.core.recorder import dumps, read_log
from teamenvs.registry import list_envs

ROOT = Path(__file__).resolve().parents[1]
SMOKE = 4 * len(list_envs())  # every env: its smoke condition x (scripted, random) x 2 seeds
PNG = b"\x89PNG\r\n\x1a\n"

# one metric per env that must be filled in every complete row of that env
KEY_METRIC = {
    "day_trader_v0": "mean_final_wealth",
    "commons_v0": "survival_time",
    "search_rescue_v0": "victims_rescued",
    "map_task_v0": "route_accuracy",
    "job_fair_v0": "overall_success",
    "hidden_profile_v0": "final_vote_accuracy",
    "shape_factory_v0": "mean_wealth",
}


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """The smoke suite run once: (suite, output folder, outcome)."""
    suite = load_suite("smoke")
    out = tmp_path_factory.mktemp("smoke") / "out"
    outcome = run_bench(suite, out, workers=2, progress=False)
    return suite, out, outcome


def copy_of(smoke, tmp_path) -> Path:
    dest = tmp_path / "copy"
    shutil.copytree(smoke[1], dest)
    return dest


def log_text(path: Path) -> bytes:
    with gzip.open(path, "rb") as f:
        return f.read()


def mtimes(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in sorted((folder / "logs").iterdir())}


def write_suite(tmp_path: Path, raw: dict, name: str = "suite.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def section(md: str, heading: str) -> str:
    """The text of a report section, from its `## heading` to the next one."""
    start = md.index(heading)
    end = md.find("\n## ", start + 1)
    return md[start:] if end < 0 else md[start:end]


def table(text: str) -> list[dict[str, str]]:
    """The first markdown table in `text` as rows of column -> cell."""
    all_lines = text.splitlines()
    first = next(i for i, ln in enumerate(all_lines) if ln.startswith("|"))
    lines = []
    for ln in all_lines[first:]:
        if not ln.startswith("|"):
            break
        lines.append(ln)
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert set(lines[1].replace("|", "").replace("-", "").replace(":", "")) <= {""}, lines[1]
    return [dict(zip(header, (c.strip() for c in ln.strip("|").split("|")))) for ln in lines[2:]]


# ---------------------------------------------------------------------------- the smoke run


def test_smoke_run_completes_every_episode(smoke):
    suite, out, outcome = smoke
    assert len(suite.episodes()) == SMOKE
    assert (outcome.ran, outcome.skipped, outcome.failed) == (SMOKE, 0, [])
    assert outcome.report is not None and len(outcome.report.groups) == len(list_envs())
    summary = outcome.summary()
    assert f"suite smoke: {SMOKE} episode(s) run, 0 already complete (skipped), 0 failed" in summary
    assert f"report: {SMOKE} of {SMOKE} episodes complete, {len(list_envs())} group(s)" in summary
    assert json.loads((out / "suite.json").read_text(encoding="utf-8")) == json.loads(json.dumps(suite.to_json()))


def test_smoke_logs_one_gzip_jsonl_per_episode_with_run_header_and_end(smoke):
    suite, out, _ = smoke
    files = sorted((out / "logs").iterdir())
    assert len(files) == SMOKE and all(p.name.endswith(".jsonl.gz") for p in files)
    assert {p.name for p in files} == {f"{e.key}.jsonl.gz" for e in suite.episodes()}
    for episode in suite.episodes():
        path = log_path(out, episode)
        assert path.read_bytes()[:2] == b"\x1f\x8b"  # really gzip
        records = read_log(path)
        head, end = records[0], records[-1]
        assert head["type"] == "header" and head["env_id"] == episode.group.env and head["seed"] == episode.seed
        assert head["run"] == json.loads(json.dumps(episode.run_meta()))
        assert head["run"]["suite"] == "smoke" and head["run"]["policy"]["label"] == episode.policy.label
        assert end["type"] == "end" and end["steps"] > 0 and end["metrics"]
        assert KEY_METRIC[episode.group.env] in end["metrics"]
        assert sum(r["type"] == "step" for r in records) == end["steps"]
        assert is_complete(path, episode)


def test_smoke_results_csv_one_row_per_episode_with_metrics(smoke):
    suite, out, _ = smoke
    rows = load_results(out)
    assert len(rows) == SMOKE
    assert {(r["env"], r["policy"], int(r["seed"])) for r in rows} == {
        (e.group.env, e.policy.label, e.seed) for e in suite.episodes()}
    by_key = {f"{slug(r['group'])}__{slug(r['condition'])}__{slug(r['policy'])}__seed{r['seed']}": r for r in rows}
    for episode in suite.episodes():
        row = by_key[episode.key]
        end = read_log(log_path(out, episode))[-1]
        assert row["suite"] == "smoke" and row["status"] == "complete"
        assert row["group"] == episode.group.title and row["condition"] == episode.condition.name
        assert row["preset"] == episode.condition.preset
        assert int(row["env_steps"]) == end["steps"] > 0
        metric = KEY_METRIC[episode.group.env]
        assert row[metric] != "" and float(row[metric]) == pytest.approx(float(end["metrics"][metric]))
        assert float(row["return_mean"]) == pytest.approx(sum(end["returns"].values()) / len(end["returns"]))
        for agent, value in end["returns"].items():
            assert float(row[f"return.{agent}"]) == pytest.approx(value)
        assert not any(k.startswith("usage.") and v for k, v in row.items())  # no model, no usage
    # the numbers are the envs' real outcomes: the scripted team beats random where it should
    def mean(env, policy, metric):
        xs = [float(r[metric]) for r in rows if r["env"] == env and r["policy"] == policy]
        return sum(xs) / len(xs)

    assert mean("search_rescue_v0", "scripted", "victims_rescued") > mean("search_rescue_v0", "random", "victims_rescued")
    assert mean("day_trader_v0", "scripted", "mean_final_wealth") > mean("day_trader_v0", "random", "mean_final_wealth")
    assert mean("commons_v0", "scripted", "survival_time") > mean("commons_v0", "random", "survival_time")


def test_smoke_report_has_a_filled_table_per_group(smoke):
    suite, out, _ = smoke
    md = (out / "report.md").read_text(encoding="utf-8")
    assert md.startswith("# Benchmark report: smoke")
    assert suite.description in md
    assert f"{SMOKE} of {SMOKE} episodes complete" in md
    assert "Episodes without a result" not in md
    for g in suite.groups:
        text = section(md, f"## {g.title} (`{g.env}`)")
        assert "4 episodes; seeds 0, 1; conditions: " + g.conditions[0].name + "; policies: scripted, random." in text
        rows = table(text)
        assert [(r["condition"], r["policy"], r["n"]) for r in rows] == [(g.conditions[0].name, "scripted", "2"), (g.conditions[0].name, "random", "2")]
        metric = KEY_METRIC[g.env]
        column = next(c for c in rows[0] if c.split(" ")[0] == metric)
        for r in rows:
            assert "±" in r["return"] and "±" in r[column]
            assert all("±" in cell for col, cell in r.items() if col not in ("condition", "policy", "n")), r
        assert f"![metrics: {g.title}](plots/{slug(g.title)}_metrics.png)" in text
        assert f"![actions: {g.title}](plots/{slug(g.title)}_actions.png)" in text
    # best values in bold, by the metric's direction
    trade = table(section(md, "## DayTrader"))
    assert "mean_final_wealth ↑" in trade[0] and "gini_wealth ↓" in trade[0]
    assert trade[0]["mean_final_wealth ↑"].startswith("**") and not trade[1]["mean_final_wealth ↑"].startswith("**")
    assert trade[0]["gini_wealth ↓"].startswith("**")  # the scripted team is the more equal one
    commons = table(section(md, "## Commons"))
    assert commons[0]["survival_time ↑"] == "**12.0 ± 0.0**" and commons[1]["survival_time ↑"] == "1.0 ± 0.0"
    assert "![survival: Commons](plots/Commons_survival.png)" in md


def test_every_smoke_group_marks_its_best_values(smoke):
    # every paradigm's env class exposes its metric goals, so every table gets ↑/↓ and bold best values
    suite, out, _ = smoke
    md = (out / "report.md").read_text(encoding="utf-8")
    for g in suite.groups:
        rows = table(section(md, f"## {g.title} (`{g.env}`)"))
        assert any("↑" in col for col in rows[0]), f"{g.title}: no metric marked as higher-is-better"
        assert any(cell.startswith("**") for r in rows for cell in r.values()), f"{g.title}: no best value in bold"


def png_check(path: Path) -> None:
    import matplotlib.image as mpimg

    data = path.read_bytes()
    assert data[:8] == PNG, path
    assert len(data) > 5_000, f"{path.name} is only {len(data)} bytes"
    image = mpimg.imread(path)
    assert image.ndim == 3 and image.shape[0] >= 200 and image.shape[1] >= 400, image.shape
    rgb = image[..., :3]
    assert float(rgb.std()) > 0.05, f"{path.name} looks blank"
    coloured = (rgb.max(-1) - rgb.min(-1)) > 0.25  # bars and curves are drawn in colour
    assert int(coloured.sum()) > 1_000, f"{path.name} has no coloured marks"


def test_smoke_plots_are_real_images(smoke):
    suite, out, _ = smoke
    names = {p.name for p in (out / "plots").iterdir()}
    kinds = lambda g: ("headline", "metrics", "agents", "actions") + (() if g.env == "job_fair_v0" else ("series",))  # noqa: E731
    expected = {f"{slug(g.title)}_{kind}.{fmt}" for g in suite.groups for kind in kinds(g) for fmt in ("png", "svg", "pdf")}
    expected |= {f"Commons_survival.{fmt}" for fmt in ("png", "svg", "pdf")}
    assert names == expected  # a series where the paradigm has rounds; survival curves only for the commons
    for name in sorted(names):
        if name.endswith(".png"):
            png_check(out / "plots" / name)
        else:
            head = (out / "plots" / name).read_bytes()[:200]
            assert head.startswith(b"%PDF-") if name.endswith(".pdf") else b"<svg" in head or b"<?xml" in head


def test_cli_bench_smoke_end_to_end_reproduces_the_run(smoke, tmp_path, capsys):
    _, first, _ = smoke
    out = tmp_path / "cli"
    assert main(["bench", "--suite", "smoke", "--out", str(out), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert f"suite smoke: {SMOKE} episode(s) run, 0 already complete (skipped), 0 failed" in captured.out
    assert "episodes" not in captured.err  # --quiet: no progress bar
    # same seeds, same episodes: the logs' contents, results.csv and report.md are identical
    assert sorted(p.name for p in (out / "logs").iterdir()) == sorted(p.name for p in (first / "logs").iterdir())
    for path in (first / "logs").iterdir():
        assert log_text(out / "logs" / path.name) == log_text(path), path.name
    assert (out / "results.csv").read_bytes() == (first / "results.csv").read_bytes()
    assert (out / "report.md").read_bytes() == (first / "report.md").read_bytes()
    assert sorted(p.name for p in (out / "plots").iterdir()) == sorted(p.name for p in (first / "plots").iterdir())


# ---------------------------------------------------------------------------- resuming


def test_rerun_of_a_complete_folder_runs_nothing(smoke, tmp_path):
    out = copy_of(smoke, tmp_path)
    before = mtimes(out)
    outcome = run_bench(load_suite("smoke"), out, workers=2, progress=False, report=False)
    assert (outcome.ran, outcome.skipped, outcome.failed) == (0, SMOKE, [])
    assert mtimes(out) == before
    assert f"0 episode(s) run, {SMOKE} already complete (skipped)" in outcome.summary()


def test_a_killed_run_reruns_exactly_the_episodes_it_lost(smoke, tmp_path):
    suite = load_suite("smoke")
    out = copy_of(smoke, tmp_path)
    episodes = {e.key: e for e in suite.episodes()}
    cut, unended, gone = (log_path(out, episodes[k]) for k in sorted(episodes)[3:6])
    originals = {p.name: log_text(p) for p in (cut, unended, gone)}
    # killed mid-write of the compressed stream: the file is cut in half
    data = cut.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    # killed between two steps: a valid log without its end line
    lines = originals[unended.name].splitlines(keepends=True)
    assert json.loads(lines[-1])["type"] == "end"
    with gzip.open(unended, "wb") as f:
        f.write(b"".join(lines[:-1]))
    # killed before the episode started
    gone.unlink()
    assert read_log(cut) and read_log(cut)[-1]["type"] != "end"
    damaged = {cut.name, unended.name, gone.name}
    before = {k: v for k, v in mtimes(out).items() if k not in damaged}
    assert len(before) == SMOKE - 3

    outcome = run_bench(suite, out, workers=2, progress=False, report=False)
    assert (outcome.ran, outcome.skipped, outcome.failed) == (3, SMOKE - 3, [])
    # a log in logs/ has ended or failed: one cut short is damage, and said (found by review: rerun without a word)
    assert sorted(Path(why.split(":")[0]).name for why in outcome.damaged) == sorted([cut.name, unended.name])
    assert all("without its end line (cut short)" in why for why in outcome.damaged)
    assert outcome.summary().count("damaged log, rerun: ") == 2
    after = mtimes(out)
    assert {k: after[k] for k in before} == before  # the finished ones were not touched
    for path in (cut, unended, gone):
        assert is_complete(path, episodes[path.name.removesuffix(".jsonl.gz")])
        assert log_text(path) == originals[path.name]  # rerun from scratch, same episode


def test_an_empty_log_is_damage_and_a_failed_attempts_log_is_not(tmp_path):
    from benchmarks.bench import finished_run

    empty = tmp_path / "empty.jsonl.gz"
    empty.write_bytes(b"")
    assert finished_run(empty) == (None, f"{empty}: the log is empty")
    failed = tmp_path / "failed.jsonl"
    failed.write_text(dumps({"type": "header", "env_id": "day_trader_v0"}) + "\n" + dumps({"type": "error", "error": "x"}) + "\n",
                      encoding="utf-8")
    assert finished_run(failed) == (None, None)  # (run again, as a failure, not as damage)


def test_a_log_of_another_episode_does_not_count_as_complete(smoke, tmp_path):
    suite = load_suite("smoke")
    out = copy_of(smoke, tmp_path)
    first, second = suite.episodes()[:2]
    shutil.copyfile(log_path(out, first), log_path(out, second))
    assert not is_complete(log_path(out, second), second)
    outcome = run_bench(suite, out, workers=2, progress=False, report=False)
    assert (outcome.ran, outcome.skipped) == (1, SMOKE - 1)
    assert read_log(log_path(out, second))[0]["seed"] == second.seed


def test_more_seeds_run_only_the_new_episodes(smoke, tmp_path):
    out = copy_of(smoke, tmp_path)
    before = mtimes(out)
    outcome = run_bench(load_suite("smoke", seeds=3), out, workers=2, progress=False, report=False)
    assert (outcome.ran, outcome.skipped, outcome.failed) == (SMOKE // 2, SMOKE, [])
    after = mtimes(out)
    assert len(after) == SMOKE * 3 // 2 and {k: after[k] for k in before} == before
    assert all(name.endswith("__seed2.jsonl.gz") for name in set(after) - set(before))


def test_force_reruns_every_episode(smoke, tmp_path):
    out = copy_of(smoke, tmp_path)
    before = mtimes(out)
    time.sleep(0.01)
    outcome = run_bench(load_suite("smoke"), out, workers=2, progress=False, report=False, force=True)
    assert (outcome.ran, outcome.skipped, outcome.failed) == (SMOKE, 0, [])
    after = mtimes(out)
    assert after.keys() == before.keys() and all(after[k] > before[k] for k in before)


def test_a_real_kill_loses_only_the_episode_in_progress(tmp_path):
    """SIGKILL a `teamenvs bench` process mid-run; the rerun runs only what had not finished."""
    raw = {"name": "slow", "seeds": 4, "groups": [{"title": "SAR", "env": "search_rescue_v0", "conditions": ["easy"], "policies": ["random"]}]}
    path = write_suite(tmp_path, raw)
    suite = load_suite(path)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "teamenvs.cli", "bench", "--suite", str(path), "--out", str(out), "--workers", "1", "--quiet"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if any(is_complete(log_path(out, e), e) for e in suite.episodes()):
                break
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    complete = [e for e in suite.episodes() if is_complete(log_path(out, e), e)]
    assert 1 <= len(complete) < 4, "the kill should land mid-run"
    started = [e for e in suite.episodes() if log_path(out, e).exists() and e not in complete]
    if started:  # the episode it was in the middle of: listed, not tabulated
        report = load_report_text(out)
        assert "## Episodes without a result" in report and f"`{started[0].key}.jsonl.gz`: incomplete" in report
    before = {log_path(out, e).name: log_path(out, e).stat().st_mtime_ns for e in complete}
    outcome = run_bench(suite, out, workers=2, progress=False, report=False)
    assert (outcome.ran, outcome.skipped, outcome.failed) == (4 - len(complete), len(complete), [])
    assert {n: (out / "logs" / n).stat().st_mtime_ns for n in before} == before
    assert all(is_complete(log_path(out, e), e) for e in suite.episodes())


def test_ctrl_c_stops_a_parallel_bench_at_once(tmp_path):
    """SIGINT to the process group (a terminal's Ctrl-C) of `teamenvs bench --workers 2`: it stops within seconds
    and runs no more episodes (before, the workers went on through every queued episode), and a rerun finishes."""
    raw = {"name": "many", "seeds": 30, "groups": [{"title": "SAR", "env": "search_rescue_v0", "conditions": ["easy"], "policies": ["random"]}]}
    path = write_suite(tmp_path, raw)
    suite = load_suite(path)
    # Each try waits for the first complete episode, then sends Ctrl-C; a try in which every episode's log was already in
    # place before the signal (the poll for a complete log lagging behind a loaded machine: nothing left to stop) is
    # made again, not counted.
    for attempt in range(3):
        out = tmp_path / f"out{attempt}"
        # started as from a terminal, with Ctrl-C's default action: a child inherits an ignored SIGINT, and pytest run as a
        # background job of a non-interactive shell (`bash .ci/run &`) has it ignored: the bench then ran on, exit 0
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            proc = subprocess.Popen([sys.executable, "-m", "teamenvs.cli", "bench", "--suite", str(path), "--out", str(out), "--workers", "2",
                                     "--quiet", "--plots", "none"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True)
        finally:
            signal.signal(signal.SIGINT, previous)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not any(is_complete(log_path(out, e), e) for e in suite.episodes()):
                time.sleep(0.05)
            if proc.poll() is not None:
                continue
            over = sum(log_path(out, e).exists() for e in suite.episodes())  # a log is moved into logs/ when its episode ends
            os.killpg(proc.pid, signal.SIGINT)
            stopped_at = time.monotonic()
            code = proc.wait(timeout=30)
            if code == 0 and over == len(suite.episodes()):
                continue
            assert code == 130, f"exit {code} after Ctrl-C with {over} of {len(suite.episodes())} episodes over"
            assert time.monotonic() - stopped_at < 10
            break
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    else:
        pytest.fail("the bench ended before Ctrl-C could be sent, three times")
    complete = [e for e in suite.episodes() if is_complete(log_path(out, e), e)]
    assert 1 <= len(complete) < 15, f"{len(complete)} of 30 episodes ran after Ctrl-C"
    outcome = run_bench(suite, out, workers=2, progress=False, report=False)
    assert outcome.skipped == len(complete) and outcome.failed == []


def load_report_text(out: Path) -> str:
    from benchmarks.report import build_report

    build_report(out, plots=False)
    return (out / "report.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------- failures and progress

SMALL = {"name": "small", "seeds": 2, "groups": [
    {"title": "Trade", "env": "day_trader_v0", "conditions": ["baseline"], "policies": ["cooperator", "defector"], "max_steps": 6}]}


class Boom(SyncPolicy):
    """Acts like its inner policy, then raises on its third action."""

    def __init__(self, inner):
        super().__init__()
        self.inner, self.calls = inner, 0

    def reset(self, agent_id, briefing):
        super().reset(agent_id, briefing)
        self.inner.reset(agent_id, briefing)

    def act(self, observation, info):
        self.calls += 1
        if self.calls == 3:
            raise RuntimeError("boom on the third action")
        return self.inner.act(observation, info)


@pytest.fixture
def one_failing_episode(monkeypatch):
    """The defector team of seed 1 crashes mid-episode (in-process episodes only: workers=1)."""
    real = agents.make_policies

    def make_policies(env, kind="scripted", seed=None):
        policies = real(env, kind, seed=seed)
        if kind == "defector" and seed == 1:
            first = env.possible_agents[0]
            policies[first] = Boom(policies[first])
        return policies

    monkeypatch.setattr(agents, "make_policies", make_policies)
    return "Trade__baseline__defector__seed1"


def test_a_failing_episode_is_reported_and_the_others_complete(tmp_path, one_failing_episode):
    suite = load_suite(write_suite(tmp_path, SMALL))
    out = tmp_path / "out"
    buf = io.StringIO()
    outcome = run_bench(suite, out, workers=1, progress=True, stream=buf)
    assert outcome.ran == 4 and outcome.skipped == 0
    assert [(f.key, f.error) for f in outcome.failed] == [(one_failing_episode, "RuntimeError: boom on the third action")]
    assert f"failed: {one_failing_episode}: RuntimeError: boom on the third action" in outcome.summary()
    assert "1 failed" in buf.getvalue() and "4/4 episodes" in buf.getvalue()
    # the failed episode's log keeps what it did and the error
    records = read_log(out / "logs" / f"{one_failing_episode}.jsonl.gz")
    assert records[0]["type"] == "header" and records[-1]["type"] == "error"
    assert records[-1]["error"] == "RuntimeError: boom on the third action" and records[-1]["step"] == 2
    others = [e for e in suite.episodes() if e.key != one_failing_episode]
    assert all(is_complete(log_path(out, e), e) for e in others)
    # results.csv: the row is there, marked; report.md: listed, not in the table
    rows = {r["policy"] + r["seed"]: r for r in load_results(out)}
    assert rows["defector1"]["status"] == "error" and rows["defector1"]["env_steps"] == "" and rows["defector1"]["mean_final_wealth"] == ""
    assert rows["defector0"]["status"] == "complete" and rows["defector0"]["env_steps"] == "6"
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "3 of 4 episodes complete" in md
    tail = section(md, "## Episodes without a result")
    assert f"- `{one_failing_episode}.jsonl.gz`: error (RuntimeError: boom on the third action)" in tail
    assert [(r["policy"], r["n"]) for r in table(section(md, "## Trade"))] == [("cooperator", "2"), ("defector", "1")]


def test_a_rerun_retries_the_failed_episode(tmp_path, one_failing_episode, monkeypatch):
    suite = load_suite(write_suite(tmp_path, SMALL))
    out = tmp_path / "out"
    assert len(run_bench(suite, out, workers=1, progress=False, report=False).failed) == 1
    monkeypatch.undo()  # the crash is gone
    outcome = run_bench(suite, out, workers=1, progress=False, report=False)
    assert (outcome.ran, outcome.skipped, outcome.failed) == (1, 3, [])


def test_cli_exit_code_1_when_an_episode_fails(tmp_path, one_failing_episode, capsys):
    path = write_suite(tmp_path, SMALL)
    out = tmp_path / "out"
    assert main(["bench", "--suite", str(path), "--out", str(out), "--quiet", "--workers", "1"]) == 1
    printed = capsys.readouterr().out
    assert "4 episode(s) run, 0 already complete (skipped), 1 failed" in printed
    assert one_failing_episode in printed
    assert (out / "report.md").is_file()


def test_progress_shows_episodes_eta_and_the_final_count(tmp_path):
    raw = dict(SMALL, seeds=5)
    suite = load_suite(write_suite(tmp_path, raw))
    buf = io.StringIO()
    outcome = run_bench(suite, tmp_path / "out", workers=2, progress=True, stream=buf, report=False)
    assert outcome.ran == 10
    lines = buf.getvalue().splitlines()
    assert 1 <= len(lines) <= 11  # not a terminal: a line per tenth of the run
    assert all(ln.startswith("bench small [") and "episodes" in ln and "ETA" in ln and "elapsed" in ln for ln in lines)
    assert "10/10 episodes" in lines[-1] and "[########################]" in lines[-1]
    assert "tokens" not in buf.getvalue()  # no model, no token count
    # nothing to do: no progress output at all
    buf = io.StringIO()
    run_bench(suite, tmp_path / "out", workers=2, progress=True, stream=buf, report=False)
    assert buf.getvalue() == ""


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_on_a_terminal_redraws_one_line_with_tokens_and_cost():
    term = Terminal()
    bar = Progress(4, "bench x", stream=term)
    bar.update(1)
    bar.tokens, bar.cost = 12345, 0.0421
    bar.update(1, 1)
    bar.close()
    text = term.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and "\n" not in text[:-1]
    last = text.split("\r")[-1]
    assert "2/4 episodes, 1 failed" in last and "ETA 0:00" in last
    assert "| 12,345 tokens, $0.0421" in last
    assert "[############............]" in last
    assert _clock(65) == "1:05" and _clock(3725) == "1:02:05"
    # before the first episode ends the ETA is unknown
    assert "ETA ?" in Progress(3, "y", stream=io.StringIO()).line()


# ---------------------------------------------------------------------------- LLM policies

LLM_SUITE = {"name": "tiny_llm", "seeds": 2, "groups": [
    {"title": "Trade", "env": "day_trader_v0", "conditions": [{"name": "short", "set": {"rounds": 2}}], "policies": ["scripted", "llm"]}]}


def test_llm_suite_against_the_builtin_server(tmp_path, server):
    suite = load_suite(write_suite(tmp_path, LLM_SUITE))
    assert suite.needs_model
    out = tmp_path / "out"
    buf = io.StringIO()
    sent = server.requests
    outcome = run_bench(suite, out, model="random-valid", base_url=server.url, price=(0.15, 0.6), progress=True, stream=buf, workers=1)
    assert (outcome.ran, outcome.failed) == (4, [])
    assert server.requests > sent  # the model was really asked, over HTTP
    # logs: usage per step and in total
    paid = {}
    for episode in suite.episodes():
        records = read_log(log_path(out, episode))
        end = records[-1]
        if episode.policy.is_llm:
            total = end["usage"]["total"]
            assert total["calls"] == 6 and total["prompt_tokens"] > 0 and total["cost_usd"] >= 0  # 3 traders x 2 rounds
            steps = [r for r in records if r["type"] == "step"]
            assert all("usage" in entry for entry in steps[0]["agents"].values())
            # a reply served from the cache (the seeds' prompts are alike at temperature 0) counts its tokens, costs nothing
            calls = [e["usage"] for r in steps for e in r["agents"].values() if "usage" in e]
            assert all(u["cached"] in (0, u["calls"]) for u in calls)
            paid[episode.seed] = sum(u["prompt_tokens"] * 0.15 + u["completion_tokens"] * 0.6 for u in calls if not u["cached"]) / 1e6
        else:
            assert "usage" not in end
    # results.csv: usage columns for the llm rows, empty for the scripted ones
    rows = load_results(out)
    assert len(rows) == 4
    for row in rows:
        if row["policy"] == "llm":
            assert int(row["usage.calls"]) > 0 and int(row["usage.prompt_tokens"]) > 0
            assert float(row["usage.cost_usd"]) == pytest.approx(paid[int(row["seed"])], abs=2e-6)
            assert row["mean_final_wealth"] != ""
        else:
            assert row["usage.calls"] == "" and row["usage.cost_usd"] == ""
    assert sum(paid.values()) > 0
    # report.md: llm beside the baseline in one table, and a model usage table for the llm cells only
    md = (out / "report.md").read_text(encoding="utf-8")
    text = section(md, "## Trade")
    assert [(r["condition"], r["policy"], r["n"]) for r in table(text)] == [("short", "scripted", "2"), ("short", "llm", "2")]
    usage = table(text[text.index("Model usage per episode (mean):"):])
    assert [(r["condition"], r["policy"]) for r in usage] == [("short", "llm")]
    assert float(usage[0]["calls"]) == 6.0 and float(usage[0]["cost_usd"]) > 0
    # where the model's actions were read: the test double answers with an ACTION line, 3 traders x 2 rounds x 2 seeds
    sources = table(text[text.index("Where the model's actions were read from"):])
    assert sources == [{"condition": "short", "policy": "llm", "decisions": "12", "action line": "100%"}]
    # progress: tokens and the estimated cost so far
    progress = buf.getvalue()
    assert "4/4 episodes" in progress and " tokens, $" in progress


def count_in_flight(monkeypatch):
    """Wrap the built-in server's chat handler to record the most requests it served at once."""
    import threading

    from agents.llm import server as server_module

    state = {"now": 0, "peak": 0, "total": 0}
    lock = threading.Lock()
    real = server_module._Handler._chat

    def chat(self, body):
        with lock:
            state["now"] += 1
            state["total"] += 1
            state["peak"] = max(state["peak"], state["now"])
        try:
            return real(self, body)
        finally:
            with lock:
                state["now"] -= 1

    monkeypatch.setattr(server_module._Handler, "_chat", chat)
    return state


def test_one_concurrency_bound_over_all_llm_episodes(tmp_path, server, monkeypatch):
    # three episodes whose prompts differ (the seeds of one DayTrader condition would ask the same
    # questions, and the response cache would answer the later ones)
    conditions = [{"name": f"money {m}", "set": {"rounds": 2, "starting_money": m}} for m in (200, 210, 220)]
    raw = {"name": "wide", "seeds": 1, "groups": [{"title": "Trade", "env": "day_trader_v0", "conditions": conditions, "policies": ["llm"]}]}
    suite = load_suite(write_suite(tmp_path, raw))
    state = count_in_flight(monkeypatch)
    # 3 episodes x 3 traders could send 9 calls at once; each takes 50 ms at the server
    outcome = run_bench(suite, tmp_path / "bounded", model="random-valid+latency=50", base_url=server.url, concurrency=2,
                        progress=False, report=False)
    assert (outcome.ran, outcome.failed) == (3, [])
    assert state["total"] == 18 and state["peak"] == 2, state
    # the same run with a wider bound does overlap more calls (so the count above means something)
    monkeypatch.setenv("TEAMENVS_CACHE", str(tmp_path / "other-cache"))
    state.update(now=0, peak=0, total=0)
    run_bench(suite, tmp_path / "wide", model="random-valid+latency=50", base_url=server.url, concurrency=9, progress=False, report=False)
    assert state["total"] == 18 and state["peak"] > 2, state


def logs_of(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "logs").glob("*.jsonl.gz"))}


def test_a_different_model_is_refused_and_force_replaces_the_llm_episodes(tmp_path, server):
    # the model is part of an llm episode's run header: another --model neither reuses nor overwrites them
    suite = load_suite(write_suite(tmp_path, LLM_SUITE))
    out = tmp_path / "out"
    assert run_bench(suite, out, model="random-valid", base_url=server.url, progress=False, report=False).ran == 4
    before = logs_of(out)
    with pytest.raises(ConfigError, match=r"holds 2 finished llm episode log\(s\) run under other settings than this command's "
                                          r"\(model 'random-valid' there, 'echo' here\).*a new --out.*--force"):
        run_bench(suite, out, model="echo", base_url=server.url, progress=False, report=False)
    assert logs_of(out) == before
    again = run_bench(suite, out, model="echo", base_url=server.url, progress=False, report=False, force=True)
    assert (again.ran, again.failed) == (4, [])
    assert {read_log(log_path(out, e))[0]["run"]["model"] for e in suite.episodes() if e.policy.is_llm} == {"echo"}


def test_resuming_under_other_llm_settings_is_refused_naming_them(tmp_path, server):
    suite = load_suite(write_suite(tmp_path, LLM_SUITE))
    out = tmp_path / "out"
    assert run_bench(suite, out, model="random-valid", base_url=server.url, progress=False, report=False).ran == 4
    llm = [e for e in suite.episodes() if e.policy.is_llm]
    settings = read_log(log_path(out, llm[0]))[0]["run"]["settings"]
    assert settings == {"base_url": server.url.rstrip("/"), "temperature": 0.0, "max_output_tokens": 512, "max_calls": None,
                        "token_budget": None, "context_window": None}
    log_path(out, llm[0]).unlink()
    before = logs_of(out)
    with pytest.raises(ConfigError) as caught:
        run_bench(suite, out, model="random-valid", base_url=server.url, temperature=0.9, max_output_tokens=7, progress=False)
    message = str(caught.value)
    assert "holds 1 finished llm episode log(s) run under other settings" in message
    assert "temperature 0.0 there, 0.9 here; max_output_tokens 512 there, 7 here" in message
    assert "Give a new --out for these settings, or add --force" in message
    with pytest.raises(ConfigError, match=r"base_url '.*' there, 'http://127.0.0.1:9/v1' here"):
        run_bench(suite, out, model="random-valid", base_url="http://127.0.0.1:9/v1", progress=False, report=False)
    with pytest.raises(ConfigError, match=r"max_calls None there, 50 here; token_budget None there, 9000 here"):
        run_bench(suite, out, model="random-valid", base_url=server.url, max_calls=50, token_budget=9000, progress=False)
    assert logs_of(out) == before and not (out / "logs" / f"{llm[0].key}.jsonl.gz").exists()
    # the same settings resume: only the missing episode runs
    again = run_bench(suite, out, model="random-valid", base_url=server.url, progress=False, report=False)
    assert (again.ran, again.skipped, again.failed) == (1, 3, [])
    # a log from before the settings were recorded is not counted as this run's either
    path = log_path(out, llm[1])
    records = read_log(path)
    del records[0]["run"]["settings"]
    path.write_bytes(gzip.compress("".join(dumps(r) + "\n" for r in records).encode()))
    with pytest.raises(ConfigError, match=r"settings 'not recorded \(a log of an older teamenvs\)' there, 'recorded' here"):
        run_bench(suite, out, model="random-valid", base_url=server.url, progress=False, report=False)


@pytest.mark.skipif(sys.platform == "win32", reason="folders are held with fcntl")
def test_a_second_run_into_a_folder_being_written_is_refused(tmp_path, server):
    """Found by review: two bench runs into one --out at once (one at temperature 0.5, one at 0) both reported 20
    episodes run, and every finished log held the settings of whichever moved its logs in last; the settings check ran
    at start-up only. A run now holds the folder while it writes (`.bench.lock`)."""
    from benchmarks.bench import _holding

    suite = load_suite(write_suite(tmp_path, LLM_SUITE))
    out = tmp_path / "out"
    with _holding(out):  # another process's hold reads the same: a flock is held per open file
        with pytest.raises(ConfigError, match=r"is being written by another `teamenvs bench` run \(process \d+\): wait for it"):
            run_bench(suite, out, model="random-valid", base_url=server.url, progress=False, report=False)
    assert not (out / "logs").exists()
    assert run_bench(suite, out, model="random-valid", base_url=server.url, progress=False, report=False).ran == 4  # released
    assert (out / ".bench.lock").read_text(encoding="utf-8").strip() == str(os.getpid())


def test_the_endpoint_is_recorded_without_credentials(monkeypatch):
    assert recorded_endpoint("https://user:sk-secret@api.example.com:8443/v1/?api-key=sk-x#frag") == "https://api.example.com:8443/v1"
    assert recorded_endpoint(None) == "built-in offline server"  # its port changes every run
    # one endpoint, however it is spelt
    same = {recorded_endpoint(u) for u in ("http://localhost:8765/v1", "HTTP://LocalHost:8765/v1/", "http://localhost:8765/v1?x=1")}
    assert same == {"http://localhost:8765/v1"}
    assert recorded_endpoint("https://api.example.com:443/v1") == recorded_endpoint("https://API.example.com/v1") == "https://api.example.com/v1"
    assert recorded_endpoint("http://[::1]:80/v1") == "http://[::1]/v1" and recorded_endpoint("http://h:99999/v1") == "not a URL"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1")
    assert recorded_endpoint(None) == "http://localhost:8000/v1"


def test_a_failed_attempt_never_replaces_a_finished_log(tmp_path, server):
    # --force over a finished run, every attempt failing (here: past a tiny wall-clock limit; an unreachable
    # endpoint alike): the finished logs stay as they were, and the summary says so
    suite = load_suite(write_suite(tmp_path, LLM_SUITE))
    out = tmp_path / "out"
    assert run_bench(suite, out, model="random-valid", base_url=server.url, workers=1, progress=False, report=False).ran == 4
    before = logs_of(out)
    outcome = run_bench(suite, out, model="random-valid", base_url=server.url, workers=1, progress=False, force=True,
                        episode_timeout=1e-9, plots=False)
    assert (outcome.ran, len(outcome.failed)) == (4, 4) and all(f.kept for f in outcome.failed)
    assert "EpisodeTimeout" in outcome.summary() and outcome.summary().count("its finished log from before is kept") == 4
    assert logs_of(out) == before and list((out / "logs").glob(".tmp-*")) == []
    assert "report: 4 of 4 episodes complete" in outcome.report.summary()
    # a finished attempt does replace a log, a failed one where there was no finished log takes its place
    log_path(out, suite.episodes()[0]).unlink()
    partial = run_bench(suite, out, model="random-valid", base_url=server.url, workers=1, progress=False, report=False,
                        episode_timeout=1e-9)
    assert [f.kept for f in partial.failed] == [False] and read_log(log_path(out, suite.episodes()[0]))[-1]["type"] == "error"


def test_a_model_whose_every_reply_is_invalid_still_gets_a_report(tmp_path, server):
    # a group without a single accepted action still gets its results.csv and report.md
    raw = {"name": "invalid", "seeds": 1, "groups": [
        {"title": "Trade", "env": "day_trader_v0", "conditions": [{"name": "short", "set": {"rounds": 2}}], "policies": ["llm"]}]}
    out = tmp_path / "out"
    outcome = run_bench(load_suite(write_suite(tmp_path, raw)), out, model="random-valid+malformed", base_url=server.url, progress=False)
    assert (outcome.ran, outcome.failed) == (1, [])
    rows = load_results(out)
    assert rows[0]["status"] == "complete" and float(rows[0]["invalid_action_rate"]) == 1.0
    assert "## Trade" in (out / "report.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------- errors before anything runs


def test_an_llm_suite_needs_a_model(tmp_path, capsys):
    with pytest.raises(ConfigError, match=r"suite 'llm' has llm policies: give --model"):
        run_bench(load_suite("llm"), tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()
    assert main(["bench", "--suite", "llm", "--out", str(tmp_path / "out")]) == 2
    assert "give --model" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_model_needs_a_suite_with_llm_policies(tmp_path, capsys):
    with pytest.raises(ConfigError, match=r"suite 'smoke' has no llm policies, so --model and --base-url would not be used"):
        run_bench(load_suite("smoke"), tmp_path / "out", model="random-valid", progress=False)
    with pytest.raises(ConfigError, match=r"has no llm policies"):
        run_bench(load_suite("smoke"), tmp_path / "out", base_url="http://127.0.0.1:9/v1", progress=False)
    assert main(["bench", "--suite", "smoke", "--out", str(tmp_path / "out"), "--model", "random-valid"]) == 2
    assert "has no llm policies" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_malformed_suite_file_names_the_bad_field_and_runs_nothing(tmp_path, capsys):
    raw = json.loads(json.dumps(SMALL))
    raw["groups"][0]["conditions"] = ["baseline", {"name": "crowd", "set": {"n_agents": "lots"}}]
    path = write_suite(tmp_path, raw, "bad.json")
    out = tmp_path / "out"
    assert main(["bench", "--suite", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: suite '") and "bad.json'.groups[0].conditions[1] (crowd): n_agents" in err
    assert not out.exists()
    path.write_text("name: x\n", encoding="utf-8")
    assert main(["bench", "--suite", str(path), "--out", str(out)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert main(["bench", "--suite", "smoke", "--out", str(out), "--seeds", "0"]) == 2
    assert "--seeds must be a whole number >= 1" in capsys.readouterr().err


def test_bad_workers_concurrency_and_price(tmp_path):
    for kwargs in ({"workers": -1}, {"concurrency": 0}):
        with pytest.raises(ConfigError, match="--workers and --concurrency must be at least 1"):
            run_bench(load_suite("smoke"), tmp_path / "out", progress=False, **kwargs)
    for workers, shown in ((1_025, "1025"), (10**30, "1000000000000000000000000000000"), (10**300, "a 997-bit integer")):
        # (a process pool on Linux starts all its workers at once: 10**30 never got past starting them)
        with pytest.raises(ConfigError, match=f"--workers must be at most 1,024 \\(processes on this machine\\), got {shown}$"):
            run_bench(load_suite("smoke"), tmp_path / "out", progress=False, workers=workers)
    assert not (tmp_path / "out" / "logs").exists() or not list((tmp_path / "out" / "logs").glob("*.jsonl*"))
    assert parse_price("0.15,0.60") == (0.15, 0.6) and parse_price(None) is None
    for bad in ("1", "a,b", "-1,2", "1,2,3", "nan,1", "1,inf", "1e400,1", "1," + "9" * 100_000):
        with pytest.raises(ConfigError, match="--price expects IN,OUT") as info:
            parse_price(bad)
        assert len(str(info.value)) < 300  # the value quoted cut short


def test_a_bench_starts_no_more_worker_processes_than_episodes(tmp_path, monkeypatch):
    import benchmarks.bench as bench

    started = []

    class Recording(bench.ProcessPoolExecutor):
        def __init__(self, max_workers=None, **kwargs):
            started.append(max_workers)
            super().__init__(max_workers=max_workers, **kwargs)

    monkeypatch.setattr(bench, "ProcessPoolExecutor", Recording)
    outcome = run_bench(load_suite(write_suite(tmp_path, SMALL)), tmp_path / "out", workers=64, progress=False, report=False)
    assert outcome.ran == 4 and not outcome.failed and started == [4]


def test_bench_help_lists_the_options(capsys):
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = capsys.readouterr().out
    for option in ("--suite", "--out", "--seeds", "--workers", "--force", "--quiet", "--model", "--base-url", "--concurrency", "--price"):
        assert option in text


def test_episodes_past_the_wall_clock_limit_fail_and_a_rerun_completes_them(tmp_path, capsys):
    suite = load_suite(write_suite(tmp_path, SMALL))
    out = tmp_path / "out"
    timed_out = run_bench(suite, out, workers=1, progress=False, report=False, episode_timeout=1e-9)
    assert timed_out.ran == 4 and len(timed_out.failed) == 4
    assert all("EpisodeTimeout: the episode ran past its wall-clock limit" in f.error for f in timed_out.failed)
    assert not any(is_complete(log_path(out, e), e) for e in suite.episodes())
    again = run_bench(suite, out, workers=1, progress=False, report=False)
    assert (again.ran, again.failed) == (4, [])
    with pytest.raises(SystemExit) as exited:  # refused by the option's type
        main(["bench", "--suite", str(write_suite(tmp_path, SMALL, "b.json")), "--out", str(tmp_path / "o2"),
              "--quiet", "--episode-timeout", "-5"])
    assert exited.value.code == 2 and "--episode-timeout" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="--episode-timeout must be a positive number of seconds"):
        run_bench(suite, tmp_path / "o3", progress=False, episode_timeout=-5)


def test_the_llm_smoke_suite_compares_an_llm_team_with_the_baselines_offline_by_default(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    suite = load_suite("llm-smoke")
    assert {g.env for g in suite.groups} == set(list_envs())
    assert all([p.label for p in g.policies] == ["llm", "scripted", "random"] for g in suite.groups)
    assert main(["bench", "--suite", "llm-smoke", "--out", str(tmp_path / "out"), "--seeds", "1", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "built-in offline server" in captured.out + captured.err
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert report.count("| llm") >= len(suite.groups) and "random-valid" in (tmp_path / "out" / "results.csv").read_text()
    # the built-in server started for the run has a new port each time: nothing is written to the response cache
    cache = tmp_path / "default-cache"  # TEAMENVS_CACHE (tests/conftest.py)
    assert not cache.exists() or not any(cache.rglob("*.json"))


def test_the_eta_times_llm_episodes_on_their_own_pace(monkeypatch):
    import benchmarks.bench as bench

    clock = iter([0.0, 10.0, 10.0, 10.0, 130.0]).__next__
    monkeypatch.setattr(bench.time, "perf_counter", clock)
    bar = Progress(6, "bench x", stream=io.StringIO(), llm_total=4)  # 2 scripted episodes, then 4 LLM ones
    bar.done = 2
    assert bar.eta(10.0) == "0:00 + 4 LLM episodes (not timed yet)"  # the scripted part is done at a scripted pace
    bar.start_llm()  # t = 10
    assert "4 LLM episodes, not timed yet" in bar.eta(10.0)
    bar.done = 3  # one LLM episode took 120 s: three more will take 6 minutes, not the scripted pace's seconds
    assert bar.eta(130.0) == bench._clock(360.0)


def test_an_llm_bench_runs_where_an_event_loop_is_already_running(tmp_path):
    """As in a Jupyter notebook: run_bench with an LLM policy, called while a loop runs, completes its episodes."""
    import asyncio

    suite_file = tmp_path / "tiny.json"
    suite_file.write_text(json.dumps({"name": "tiny", "seeds": 2, "groups": [
        {"title": "DayTrader", "env": "day_trader_v0", "conditions": ["baseline"], "policies": ["llm", "scripted"],
         "max_steps": 6}]}), encoding="utf-8")

    async def notebook_cell():
        return run_bench(load_suite(suite_file), tmp_path / "out", model="random-valid", progress=False, plots=False)

    outcome = asyncio.run(notebook_cell())
    assert not outcome.failed
    assert len(list((tmp_path / "out" / "logs").glob("*llm*.jsonl.gz"))) == 2


# ---------------------------------------------------------------------------- outside text in report.md

EVIL = {"name": "ev|il <b>x</b>",
        "description": "one | two\n# Injected heading\n<script>alert(1)</script> <img src=x onerror=alert(1)> \x1b[2J\x07 & done",
        "seeds": 1, "groups": [
            {"title": "T|1 <script>x</script>\n\x1b]0;PWNED\x07", "env": "day_trader_v0",
             "conditions": [{"name": "c|<img src=x onerror=alert(1)>\x07", "set": {"rounds": 1}}],
             "policies": [{"label": "p|\n<b>x</b>\x1b", "policy": "scripted"}, "llm"]}]}
ENDPOINT_ERROR = "bad | thing\n<script>alert(1)</script>"


@pytest.fixture
def refusing_endpoint():
    """An OpenAI-compatible endpoint answering every request 400 with a hostile message: its base URL."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Refuse(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = json.dumps({"error": {"message": ENDPOINT_ERROR}}).encode()
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def cells(line: str) -> list[str]:
    """A markdown table row's cells, split where GFM splits them: at each `|` not escaped."""
    import re

    return re.split(r"(?<!\\)\|", line.strip())[1:-1]


def test_suite_text_and_endpoint_errors_reach_report_md_escaped(tmp_path, refusing_endpoint):
    out = tmp_path / "out"
    outcome = run_bench(load_suite(write_suite(tmp_path, EVIL)), out, model="m", base_url=refusing_endpoint, workers=1,
                        progress=False, plots=False)
    assert len(outcome.failed) == 1 and "bad | thing" in outcome.failed[0].error
    md = (out / "report.md").read_text(encoding="utf-8")
    assert not any(bad in md for bad in ("<script", "<img", "<b>", "\x1b", "\x07", "\n# Injected")), md
    assert md.startswith("# Benchmark report: ev|il &lt;b&gt;x&lt;/b&gt;\n")
    assert "one | two # Injected heading &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt; \\[2J &amp; done" in md
    assert "## T|1 &lt;script&gt;x&lt;/script&gt; \\]0;PWNED (`day_trader_v0`)" in md
    # every row of the results table has as many cells as its header
    rows = [ln for ln in md.splitlines() if ln.startswith("|")]
    assert rows and all(len(cells(ln)) == len(cells(rows[0])) for ln in rows[:3])
    assert cells(rows[2])[:2] == [" c\\|&lt;img src=x onerror=alert(1)&gt; ", " p\\| &lt;b&gt;x&lt;/b&gt; "]
    failed = section(md, "## Episodes without a result")
    assert "HTTP 400: bad | thing &lt;script&gt;alert(1)&lt;/script&gt;)" in failed and failed.count("\n- ") == 1


def test_labels_of_200_characters_run_into_bounded_file_names(tmp_path):
    raw = {"name": "long", "seeds": 1, "groups": [{"title": "a" * 200, "env": "day_trader_v0", "max_steps": 3,
                                                   "conditions": [{"name": "b" * 200, "set": {"rounds": 1}}],
                                                   "policies": [{"label": "c" * 199 + "d", "policy": "cooperator"},
                                                                {"label": "c" * 199 + "e", "policy": "defector"}]}]}
    suite = load_suite(write_suite(tmp_path, raw))
    outcome = run_bench(suite, tmp_path / "out", workers=1, progress=False, plots="png")
    assert (outcome.ran, outcome.failed) == (2, [])
    names = [p.name for p in (tmp_path / "out" / "logs").iterdir()] + [p.name for p in (tmp_path / "out" / "plots").iterdir()]
    assert len(names) == 2 + 5 and max(map(len, names)) <= 255
    assert "2 of 2 episodes complete" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")


TINY_SUITE = {"name": "tiny", "seeds": 1, "groups": [
    {"title": "Trade", "env": "day_trader_v0", "conditions": [{"name": "short", "set": {"rounds": 2}}], "policies": ["scripted"]}]}


@pytest.mark.skipif(sys.platform == "win32", reason="links and fcntl")
def test_links_planted_in_the_out_folder_are_never_written_through(tmp_path):
    """Found by review: bench wrote its pid through a link named .bench.lock, and results.csv, report.md and figures
    through links in their place, onto whatever file the links pointed at; a link to a folder took the logs there."""
    suite = load_suite(write_suite(tmp_path, TINY_SUITE))
    out = tmp_path / "out"
    precious = tmp_path / "precious.txt"
    precious.write_text("precious", encoding="utf-8")
    out.mkdir()
    (out / ".bench.lock").symlink_to(precious)
    with pytest.raises(ConfigError, match=r"\.bench\.lock: .*\(it is a link: remove it\)"):
        run_bench(suite, out, workers=1, progress=False)
    (out / ".bench.lock").unlink()
    assert run_bench(suite, out, workers=1, progress=False, plots="png").ran == 1
    for name in ("results.csv", "report.md", f"plots/{next((out / 'plots').glob('*.png')).name}"):
        (out / name).unlink()
        (out / name).symlink_to(precious)
    run_bench(suite, out, workers=1, progress=False, plots="png")
    assert precious.read_text(encoding="utf-8") == "precious"
    assert not (out / "results.csv").is_symlink() and "tiny" in (out / "results.csv").read_text(encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "plots").rename(tmp_path / "old_plots")
    (out / "plots").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(ConfigError, match=r"plots \(a link to a folder: bench would write into that folder\)"):
        run_bench(suite, out, workers=1, progress=False)
    assert list(elsewhere.iterdir()) == []


def test_a_hidden_log_is_neither_checked_nor_counted(tmp_path):
    """Found by review: bench's check of a folder passes over hidden names, but the report read a hidden foreign log
    in logs/ and counted its episode."""
    suite = load_suite(write_suite(tmp_path, TINY_SUITE))
    out = tmp_path / "out"
    run_bench(suite, out, workers=1, progress=False, plots=False)
    log = next((out / "logs").glob("*.jsonl.gz"))
    (out / "logs" / ".backup.jsonl.gz").write_bytes(log.read_bytes())
    again = run_bench(suite, out, workers=1, progress=False, plots=False)
    assert "1 of 1 episodes complete" in again.report.summary()


def test_a_report_that_cannot_be_written_leaves_the_episodes_summary_and_exit_status(tmp_path, monkeypatch, capsys):
    """Found by review: a full disk while writing the report lost the run's summary (28 episodes, 25 failed) behind one
    'No space left on device' that named no file, and left results.csv empty beside the old report."""
    import errno

    import benchmarks.report as report_module
    from teamenvs.cli import main

    path = write_suite(tmp_path, TINY_SUITE)
    out = tmp_path / "out"

    def full(target, data):
        raise OSError(errno.ENOSPC, "No space left on device", str(target))

    monkeypatch.setattr(report_module, "write_whole", full)
    assert main(["bench", "--suite", str(path), "--out", str(out), "--quiet", "--plots", "none", "--workers", "1"]) == 1
    printed = capsys.readouterr().out
    assert "suite tiny: 1 episode(s) run, 0 already complete (skipped), 0 failed" in printed
    assert f"report not written: No space left on device: {out / 'results.csv'}" in printed
    assert "the logs are kept: `teamenvs report" in printed
    assert len(list((out / "logs").glob("*.jsonl.gz"))) == 1 and not (out / "results.csv").exists()


def test_model_options_for_a_suite_without_llm_policies_are_refused(tmp_path, capsys):
    """Found by review: bench ran a suite of scripted policies with --temperature, --max-calls, --price ... and said
    nothing, as if they applied (run refuses them without --policy llm)."""
    from teamenvs.cli import main

    path = write_suite(tmp_path, TINY_SUITE)
    for option, value in (("--temperature", "1.5"), ("--max-calls", "3"), ("--price", "1,1"), ("--timeout", "5"),
                          ("--concurrency", "2"), ("--max-output-tokens", "7"), ("--context-window", "4096")):
        assert main(["bench", "--suite", str(path), "--out", str(tmp_path / "out"), "--quiet", option, value]) == 2
        assert f"has no llm policies, so {option} would not be used" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
