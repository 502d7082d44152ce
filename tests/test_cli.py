"""The `teamenvs` command line, including the exact commands the README shows."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from teamenvs.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


def test_list_names_every_env(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "day_trader_v0" in out and "commons_v0" in out and "teamenvs/DayTrader-v0" in out


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
    match = re.search(r"teamenvs run (job_fair_v0[^\n`]*)", README.read_text())
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
