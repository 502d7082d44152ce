"""The `teamenvs` command line, including the exact commands the README shows."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import teamenvs
from teamenvs.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


def test_list_names_every_env(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "day_trader_v0" in out and "commons_v0" in out and "teamenvs/DayTrader-v0" in out
    rows = out.splitlines()
    assert len({row.index("teamenvs/") for row in rows}) == 1, "the Gymnasium ids start in one column"
    assert len({re.match(r"\S+\s+\S+\s+", row).end() for row in rows}) == 1, "so do the summaries"


def test_run_prints_returns_and_metrics_and_writes_logs(tmp_path, capsys):
    code = main(["run", "day_trader_v0", "--policy", "cooperator", "--seed", "4", "--episodes", "2", "--set", "n_agents=6", "--log-dir", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "2 episode(s), seeds 4, 5" in out
    assert re.search(r"cooperation_rate\s+1\.000", out)
    assert "trader_6" in out
    logs = sorted(tmp_path.glob("*.jsonl"))
    assert [p.name for p in logs] == ["day_trader_v0_cooperator_seed4.jsonl", "day_trader_v0_cooperator_seed5.jsonl"]
    head = json.loads(logs[0].read_text().splitlines()[0])
    assert head["env_id"] == "day_trader_v0" and head["seed"] == 4 and head["config"]["n_agents"] == 6


def test_run_with_preset_and_mixed_team(tmp_path, capsys):
    assert main(["run", "day_trader_v0", "--preset", "no_communication", "--policy", "cooperator,defector,tit_for_tat", "--log-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"total_messages\s+0\.000", out)


def test_bad_input_gives_a_specific_error_and_exit_code_2(capsys):
    assert main(["run", "day_trader_v0", "--set", "n_agent=6"]) == 2
    assert "Did you mean 'n_agents'" in capsys.readouterr().err
    assert main(["run", "day_trader_v1"]) == 2
    assert "Did you mean 'day_trader_v0'" in capsys.readouterr().err
    assert main(["run", "day_trader_v0", "--policy", "coop"]) == 2
    assert "unknown baseline 'coop'" in capsys.readouterr().err
    assert main(["run", "day_trader_v0", "--set", "rounds=0"]) == 2
    assert "rounds must be" in capsys.readouterr().err
    for episodes, shown in (("0", "0"), ("100001", "100001"), ("9" * 80, "a 266-bit integer")):
        # (each episode writes a log: 10**15 episodes ran until the disk filled)
        assert main(["run", "day_trader_v0", "--episodes", episodes, "--log-dir", "/nonexistent"]) == 2
        assert f"--episodes must be from 1 to 100,000 (a bench suite's limit too), got {shown}" in capsys.readouterr().err


def test_readme_run_command_works(tmp_path):
    """The main-job command of the README, run as a user would (console script in this venv)."""
    text = README.read_text()
    match = re.search(r"teamenvs run (day_trader_v0[^\n`]*)", text)
    assert match, "README must show a `teamenvs run day_trader_v0 ...` command"
    args = match.group(1).split()
    script = Path(sys.executable).with_name("teamenvs")
    proc = subprocess.run([str(script), "run", *args, "--log-dir", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "mean_final_wealth" in proc.stdout


def test_readme_job_fair_command_works(tmp_path, capsys):
    """The job fair card's command line (boastful seekers in Scenario 2) runs and reports the MetaAgents metrics."""
    card = README.parent / "docs" / "envs" / "job_fair_v0.md"
    match = re.search(r"teamenvs run (job_fair_v0[^\n`]*)", card.read_text())
    assert match, "the job fair card must show a `teamenvs run job_fair_v0 ...` command"
    assert main(["run", *match.group(1).split(), "--log-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for metric in ("company_identification", "identification", "workflow", "assignment", "overall_success"):
        assert re.search(rf"^{metric} +[0-9]", out, re.MULTILINE), metric
    assert len(list(tmp_path.glob("*.jsonl"))) == 5


def test_ci_runs_the_readme_test_command():
    ci = (README.parent / ".ci" / "run").read_text()
    test_line = next(line for line in README.read_text().splitlines() if "pytest" in line and "pip install" in line)
    assert test_line.strip().strip("`") in ci


def test_version_and_python_dash_m(capsys):
    import subprocess
    import sys

    from teamenvs._version import __version__

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0 and capsys.readouterr().out.strip() == f"teamenvs {__version__}"
    done = subprocess.run([sys.executable, "-m", "teamenvs", "list"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "commons_v0" in done.stdout


@pytest.mark.parametrize("env_id", teamenvs.list_envs())
def test_info_lists_agents_presets_baselines_config_and_metrics(env_id, capsys):
    assert main(["info", env_id]) == 0
    out = capsys.readouterr().out
    env = teamenvs.make(env_id)
    assert all(a in out for a in env.possible_agents)
    assert all(p in out for p in type(env).presets)
    assert "baselines: scripted (= " in out
    import dataclasses

    assert all(f"  {f.name} = " in out for f in dataclasses.fields(env.config))
    assert all(k in out for k in type(env).metric_goals)


def test_info_states_each_range_as_the_config_checks_it(capsys):
    """One-sided ranges read ">= N" (an unbounded side was shown as "to (depends on the config)"), a bound that
    is another key reads as its name, and one worked out from the config says so."""
    assert main(["info", "day_trader_v0"]) == 0
    out = capsys.readouterr().out
    assert "  n_agents = 3 from 2 to 100: " in out and "  min_steps_between_messages = 0 >= 0: " in out
    assert "  max_investment = 100 from min_investment to 1000000000000000000: " in out and "  message_history = 8 from 0 to 1000000: " in out
    assert "depends" not in out
    assert main(["info", "map_task_v0"]) == 0
    assert "  n_landmarks = 12 from 2 to (a number that depends on other keys): " in capsys.readouterr().out


def test_options_that_only_apply_to_llm_policies_are_refused(capsys):
    assert main(["run", "day_trader_v0", "--temperature", "0.5", "--max-calls", "3"]) == 2
    err = capsys.readouterr().err
    assert "--temperature, --max-calls go with --policy llm, not --policy scripted" in err


def test_a_misspelt_policy_gets_the_nearest_name(capsys):
    assert main(["run", "day_trader_v0", "--policy", "scriptd"]) == 2
    assert "Did you mean 'scripted'?" in capsys.readouterr().err


def test_ctrl_c_ends_with_a_resume_hint_and_exit_130(monkeypatch, capsys):
    import teamenvs.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_cmd_bench", interrupted)
    assert main(["bench", "--suite", "smoke", "--out", "unused"]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "rerun the same command to resume" in err
    # found by review: every command spoke of resuming bench; the others say they were interrupted, no more
    monkeypatch.setattr(cli, "_cmd_list", interrupted)
    assert main(["list"]) == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_run_shows_progress_in_place_on_a_terminal_and_as_periodic_lines_when_redirected():
    import io

    from teamenvs.cli import RunProgress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    redirected = RunProgress(io.StringIO(), every=10.0)
    redirected.label = "commons_v0 episode 1/1 (seed 0)"
    redirected._clock = iter([0.0, 1.0, 11.0]).__next__
    for step in (1, 2, 3):
        redirected(step, {"calls": 5 * step, "prompt_tokens": 100 * step, "completion_tokens": 10 * step})
    lines = redirected.stream.getvalue().splitlines()
    assert lines == ["commons_v0 episode 1/1 (seed 0): step 1, 5 calls, 110 tokens",
                     "commons_v0 episode 1/1 (seed 0): step 3, 15 calls, 330 tokens"]  # step 2 came within 10 s
    terminal = RunProgress(Terminal())
    terminal.label = "x\x1b]0;t\x07"
    terminal(4, {})
    terminal.done()
    out = terminal.stream.getvalue()
    assert out.startswith("\rx\\x1b]0;t\\x07: step 4") and out.endswith("\r\x1b[K") and "\n" not in out


def test_run_never_overwrites_a_log(tmp_path, capsys):
    """Another preset with the same seeds, or the same command again, gets the next free log name (the first run's logs
    were silently replaced); names that are free stay as they were."""
    common = ["run", "commons_v0", "--policy", "random", "--log-dir", str(tmp_path)]
    assert main([*common, "--episodes", "2"]) == 0
    first = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert sorted(first) == ["commons_v0_random_seed0.jsonl", "commons_v0_random_seed1.jsonl"]
    assert "note:" not in capsys.readouterr().err
    assert main([*common, "--episodes", "2", "--preset", "universalization"]) == 0
    assert "note: 2 log name(s) were already taken" in capsys.readouterr().err
    assert main([*common, "--episodes", "3"]) == 0
    assert f"(first: {tmp_path / 'commons_v0_random_seed0-3.jsonl'})" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "commons_v0_random_seed0-2.jsonl", "commons_v0_random_seed0-3.jsonl", "commons_v0_random_seed0.jsonl",
        "commons_v0_random_seed1-2.jsonl", "commons_v0_random_seed1-3.jsonl", "commons_v0_random_seed1.jsonl",
        "commons_v0_random_seed2.jsonl"]
    assert all((tmp_path / name).read_bytes() == data for name, data in first.items())
    header = json.loads((tmp_path / "commons_v0_random_seed0-2.jsonl").read_text().splitlines()[0])
    assert header["preset"] == "universalization"


BAD_NUMBERS = [
    ("run", "--max-calls", "-1", "a whole number >= 1"),
    ("run", "--max-calls", "0", "a whole number >= 1"),
    ("run", "--token-budget", "-100", "a whole number >= 1"),
    ("run", "--max-output-tokens", "0", "a whole number >= 1"),
    ("run", "--concurrency", "0", "a whole number >= 1"),
    ("run", "--max-steps", "0", "a whole number >= 1"),
    ("run", "--temperature", "-1", "a finite number from 0 to 2"),
    ("run", "--temperature", "2.5", "a finite number from 0 to 2"),
    ("run", "--temperature", "nan", "a finite number from 0 to 2"),
    ("run", "--temperature", "1e400", "a finite number from 0 to 2"),
    ("run", "--timeout", "0", "a finite number > 0"),
    ("run", "--timeout", "inf", "a finite number > 0"),
    ("run", "--seed", "-5", "a whole number >= 0"),
    ("run", "--seed", "1.5", "a whole number >= 0"),
    ("bench", "--temperature", "nan", "a finite number from 0 to 2"),
    ("bench", "--temperature", "-0.5", "a finite number from 0 to 2"),
    ("bench", "--max-calls", "-1", "a whole number >= 1"),
    ("bench", "--token-budget", "0", "a whole number >= 1"),
    ("bench", "--max-output-tokens", "-3", "a whole number >= 1"),
    ("bench", "--concurrency", "0", "a whole number >= 1"),
    ("bench", "--timeout", "nan", "a finite number > 0"),
    ("bench", "--episode-timeout", "1e400", "a finite number >= 0"),
    ("bench", "--episode-timeout", "-1", "a finite number >= 0"),
    ("serve-llm", "--seed", "-1", "a whole number >= 0"),
]


@pytest.mark.parametrize("command,option,value,expected", BAD_NUMBERS, ids=[" ".join(b[:3]) for b in BAD_NUMBERS])
def test_bad_numeric_options_are_refused_naming_the_option(tmp_path, capsys, command, option, value, expected):
    """A negative budget ran an episode of 0 steps and exited 0; a NaN temperature reached the server (every bench
    episode failed); a negative seed said only "expected non-negative integer" (numpy's words, no option named)."""
    argv = {"run": ["run", "commons_v0", "--policy", "llm", "--model", "random-valid", "--log-dir", str(tmp_path)],
            "bench": ["bench", "--suite", "llm-smoke", "--out", str(tmp_path / "b")], "serve-llm": ["serve-llm"]}[command]
    with pytest.raises(SystemExit) as exited:
        main([*argv, f"{option}={value}"])
    assert exited.value.code == 2
    assert f"error: argument {option}: expected {expected}, got '{value}'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_good_numeric_options_are_kept():
    from teamenvs.cli import build_parser

    args = build_parser().parse_args(["run", "x", "--seed", "0", "--temperature", "2", "--timeout", "0.5", "--max-calls", "1"])
    assert (args.seed, args.temperature, args.timeout, args.max_calls) == (0, 2.0, 0.5, 1)
    assert build_parser().parse_args(["bench", "--suite", "s", "--out", "o", "--episode-timeout", "0"]).episode_timeout == 0.0


def test_run_summary_counts_complete_episodes_only_and_says_how_many_the_budget_stopped(tmp_path):
    """An episode stopped by the budget played only part of its steps: the summary left it in its means (the bench
    report leaves it out), so `run` and `report` gave other numbers for the same logs."""
    from agents.loop import EpisodeResult
    from teamenvs.cli import format_summary

    def result(seed, gain, status="done"):
        return EpisodeResult("commons_v0", seed, 12, {"fisher_1": float(gain)}, {"total_gain": gain}, tmp_path / f"s{seed}.jsonl",
                             status=status, warning="stopped" if status == "budget" else "")

    text = format_summary("commons_v0", "llm-m", [result(0, 1000, "budget"), result(1, 10), result(2, 30), result(3, 2000, "budget")])
    assert "4 episode(s), seeds 0, 1, 2, 3" in text
    assert ("2 stopped by the budget, not counted (their returns and metrics cover only the steps played); "
            "the numbers below cover the 2 complete episode(s), seeds 1, 2") in text
    assert re.search(r"fisher_1\s+20\.000 \+- 10\.000", text) and re.search(r"total_gain\s+20\.000 \+- 10\.000", text)
    assert "1000" not in text and "2000" not in text
    # with none complete: no numbers, and why
    text = format_summary("commons_v0", "llm-m", [result(0, 1000, "budget")])
    assert ("1 stopped by the budget, not counted (their returns and metrics cover only the steps played); no episode is "
            "complete, so there are no returns or metrics to show") in text
    assert "fisher_1" not in text and "total_gain" not in text and "1000" not in text
    # all complete: as before, no such line
    text = format_summary("commons_v0", "scripted", [result(1, 10), result(2, 30)])
    assert "budget" not in text and re.search(r"total_gain\s+20\.000 \+- 10\.000", text)


def test_run_whose_every_episode_the_budget_stopped_prints_no_statistics(tmp_path, capsys):
    code = main(["run", "day_trader_v0", "--policy", "llm", "--model", "random-valid", "--max-calls", "2", "--episodes", "2",
                 "--log-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0
    assert "2 stopped by the budget, not counted" in out and "no episode is complete" in out
    assert "agent " not in out and "metric " not in out and "mean_final_wealth" not in out
    assert "model usage (all episodes): calls 4" in out  # the calls were made all the same
    assert "warning: seed 0: stopped after 0 step(s)" in err and "warning: seed 1: stopped after 0 step(s)" in err


def test_run_llm_logs_record_their_settings_so_the_report_never_mixes_them(tmp_path, capsys):
    """`run --policy llm` at two temperatures into one folder: the logs' headers had no settings, so `report` put both
    runs in one cell and averaged them. The header now records what changes an llm episode's results, as bench does."""
    from benchmarks.report import build_report

    folder = tmp_path / "runs"
    for temperature in ("0", "0.7"):
        assert main(["run", "day_trader_v0", "--policy", "llm", "--model", "random-valid", "--episodes", "1",
                     "--max-steps", "4", "--temperature", temperature, "--log-dir", str(folder)]) == 0
    capsys.readouterr()
    headers = [json.loads(p.read_text(encoding="utf-8").splitlines()[0]) for p in sorted(folder.glob("*.jsonl"))]
    assert sorted(h["run"]["settings"]["temperature"] for h in headers) == [0.0, 0.7]
    assert all(h["run"]["model"] == "random-valid" and h["run"]["settings"]["constrain"] == "off" for h in headers)
    cells = sorted({r.policy for r in build_report(folder, plots=False).rows})
    assert cells == ["llm-random-valid (temperature=0.0)", "llm-random-valid (temperature=0.7)"]


@pytest.mark.parametrize("argv", [
    ["run", "day_trader_v0", "--log-dir", ""], ["bench", "--suite", "smoke", "--out", " "], ["report", ""],
    ["replay", "x.jsonl", "--html", ""], ["replay", ""], ["compile", "--status", "--dir", ""],
])
def test_an_empty_path_is_refused_not_read_as_the_current_folder(argv, tmp_path, monkeypatch, capsys):
    """Found by review: `run --log-dir ''` wrote its log into the current folder and `replay --html ''` printed the
    terminal replay instead of a page, both without a word."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2 and "expected a path" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_empty_only_compiles_no_module(capsys, tmp_path):
    """Found by review: `compile --only ''` compiled all 77 modules (minutes of CPU), as if --only were not given."""
    assert main(["compile", "--only", "", "--dir", str(tmp_path)]) == 2
    assert "--only names no module the engine compiles" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_misspelt_option_gets_the_nearest_option(capsys):
    """Found by review: a misspelt env id, preset or key got a 'did you mean', a misspelt option only argparse's
    'unrecognized arguments'."""
    with pytest.raises(SystemExit) as exited:
        main(["run", "day_trader_v0", "--polciy", "scripted"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and "(did you mean '--policy' for '--polciy'?)" in err
    with pytest.raises(SystemExit):
        main(["list", "--zzzzzz"])
    assert "did you mean" not in capsys.readouterr().err
