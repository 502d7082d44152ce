"""Smoke test for `benchmarks/job_fair.py`: every section runs on a tiny number of seeds and prints its tables."""

from __future__ import annotations

import pytest

from benchmarks import job_fair


def test_paper_rows_honest_and_boastful() -> None:
    honest = job_fair.paper_rows("honest", 1)
    assert [r[0] for r in honest] == list(job_fair.SCENARIOS)
    assert all(len(r) == 1 + len(job_fair.METRICS) + 2 + 4 + 3 for r in honest)
    assert honest[0][-3] == "no redundant seeker"  # S1 has none
    assert all(r[1:6] == ["100"] * 5 for r in honest)  # honest agents meet every metric
    assert all(r[6:8] == ["0", "0"] for r in honest)  # and misplace nobody
    boastful = job_fair.paper_rows("boastful", 1)
    assert boastful[0][4] == "0" and boastful[0][6] == "100"  # S1: boastful seekers are misplaced, leaving steps uncovered (2.3)


def test_team_rows_table_2_layout() -> None:
    rows = job_fair.team_rows(1)
    assert [r[0] for r in rows] == ["Team 1 (software development)", "Team 2 (data analysis)", "Team 3 (advertising)"]
    assert all(len(r) == 1 + 2 * len(job_fair.POLICIES) + 2 for r in rows)
    assert all(r[1:5] == ["100"] * 4 for r in rows)  # honest and boastful recruiters propose the standard workflows
    assert [r[-2:] for r in rows] == [["96", "89"], ["81", "68"], ["86", "93"]]  # the paper's Table 2


def test_main_quick_prints_every_section(capsys: pytest.CaptureFixture[str]) -> None:
    job_fair.main(["--seeds", "1", "--scaling-seeds", "1", "--speed-episodes", "1", "--large-seeds", "1", "--only", "paper", "--only", "speed"])
    out = capsys.readouterr().out
    for title in ("policy `honest`", "policy `boastful`", "policy `random`", "MetaAgents reference", "Table 2 layout", "Speed:",
                  "Total benchmark time"):
        assert title in out
    assert "Scaling" not in out


def test_scaling_section_small(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(job_fair, "SCALING_SIZES", ((3, 10),))
    job_fair.section_scaling(1)
    out = capsys.readouterr().out
    assert out.count("| 3 | 10 |") == len(job_fair.SCALING_OVERLAPS)


def test_args() -> None:
    assert job_fair.parse_args([]).seeds == 50
    quick = job_fair.parse_args(["--quick", "--seeds", "7"])
    assert (quick.seeds, quick.scaling_seeds) == (7, job_fair.QUICK["scaling_seeds"])
    with pytest.raises(SystemExit):
        job_fair.parse_args(["--seeds", "0"])
