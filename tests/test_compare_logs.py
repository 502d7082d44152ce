"""`benchmarks.compare_logs`: byte-identical episodes, the header's version set aside, and with `--ignore-timing`
the model calls' wall-clock times (`latency_s`, `queue_s`), which differ between any two llm runs, and nothing else."""

from __future__ import annotations

from benchmarks.compare_logs import log_bytes, main
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
