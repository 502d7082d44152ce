"""`benchmarks.compare_logs`: byte-identical episodes, the header's version set aside, and with `--ignore-timing`
the model calls' wall-clock times (`latency_s`, `queue_s`), which differ between any two llm runs, and nothing else."""

from __future__ import annotations

import json
import subprocess

import pytest

from benchmarks.compare_logs import ROOT, compare, log_bytes, main
from teamenvs.core.recorder import dumps


def write(folder, lines):
    (folder / "logs").mkdir(parents=True)
    (folder / "logs" / "ep.jsonl").write_text("".join(dumps(line) + "\n" for line in lines), encoding="utf-8")


def episode(version, latency, reward):
    usage = {"calls": 3, "prompt_tokens": 120, "latency_s": latency, "queue_s": latency / 10}
    return [{"type": "header", "env_id": "day_trader_v0", "version": version, "seed": 0},
            {"type": "step", "step": 1, "agents": {"trader_1": {"reward": reward, "usage": usage}}}]


def test_runs_that_differ_only_in_model_timings_compare_alike_with_ignore_timing(tmp_path, capsys):
    write(tmp_path / "a", episode("0.1.0", 0.1234, 48.0))
    write(tmp_path / "b", episode("0.2.0", 2.5e-05, 48.0))  # another release, other timings
    assert main([str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    assert "differs: ep.jsonl" in capsys.readouterr().out
    assert main(["--ignore-timing", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert "1 episode log(s) byte-identical, 0 difference(s)" in capsys.readouterr().out


def test_ignore_timing_still_finds_every_other_difference(tmp_path, capsys):
    write(tmp_path / "a", episode("0.1.0", 0.1234, 48.0))
    write(tmp_path / "b", episode("0.1.0", 0.9, 49.0))  # the reward differs too
    assert main(["--ignore-timing", str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    out = capsys.readouterr().out
    assert "differs: ep.jsonl" in out and "49.0" in out
    blanked = log_bytes(tmp_path / "b" / "logs" / "ep.jsonl", ignore_timing=True)
    assert b'"latency_s": null, "queue_s": null' in blanked and b"0.9" not in blanked and b'"prompt_tokens": 120' in blanked


def _in_git_checkout() -> bool:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, timeout=30).returncode == 0
    except OSError:
        return False


@pytest.mark.skipif(not _in_git_checkout(), reason="needs the project's git repository")
def test_rev_runs_a_suite_on_a_revision_and_on_the_working_tree_each_from_its_own_folder(tmp_path, capsys):
    """`--rev`: the revision is extracted and benched in a process started in its own folder, so it runs its own
    code (from this checkout, `PYTHONPATH=<before> python -m teamenvs.cli bench` imports this tree's: `python -m` puts
    the current folder first), and the verdict is the comparison of the two runs' logs and results.csv."""
    suite = tmp_path / "tiny.json"
    suite.write_text(json.dumps({"name": "tiny", "seeds": 1, "max_steps": 6, "groups": [
        {"title": "T", "env": "day_trader_v0", "conditions": ["baseline"], "policies": ["scripted", "random"]}]}))
    status = main(["--rev", "HEAD", "--suite", str(suite), "--out", str(tmp_path / "runs")])
    out = capsys.readouterr().out
    lines = {line.split(":", 1)[0]: line.split(" run with ", 1)[1] for line in out.splitlines() if " run with " in line}
    assert str(ROOT) not in lines["before"] and lines["before"].startswith("/") and lines["after"] == str(ROOT / "teamenvs")
    same, problems = compare(tmp_path / "runs" / "before", tmp_path / "runs" / "after")
    assert same + len(problems) == 2 and len(list((tmp_path / "runs" / "before" / "logs").iterdir())) == 2
    same_csv = (tmp_path / "runs" / "before" / "results.csv").read_bytes() == (tmp_path / "runs" / "after" / "results.csv").read_bytes()
    assert status == (0 if not problems and same_csv else 1)
    assert f"{same} episode log(s) byte-identical" in out


def test_rev_refuses_what_it_cannot_run(tmp_path, capsys):
    assert main(["--rev", "no-such-revision-anywhere", "--out", str(tmp_path / "runs")]) == 2
    assert "'no-such-revision-anywhere' is no commit" in capsys.readouterr().err
    for argv in ([], [str(tmp_path)], ["--rev", "HEAD", str(tmp_path), str(tmp_path)]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2 and "Traceback" not in capsys.readouterr().err
