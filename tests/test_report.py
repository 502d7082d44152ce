"""`teamenvs report` (`benchmarks.report`): results.csv, report.md and plots rebuilt from episode logs alone.

Covers: a bench folder's report rebuilt byte for byte from its logs (in place after deleting the
outputs, and in a fresh folder holding only the logs; every figure in PNG, SVG and PDF); a folder of plain `teamenvs run --log-dir`
logs; clear errors for a missing or empty folder; and, on hand-written logs with hand-computed
numbers, the tables: mean ± population sd, the (k/n) note, the best value per condition (or per
group when it compares one policy) by the metric's direction, and episodes without a result
listed and left out. Plus the pure helpers: flatten with csv_value, mean_sd, _best, survival_curve, scalar_metrics.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from benchmarks.bench import run_bench
from benchmarks.report import (
    EpisodeRow,
    _best,
    build_report,
    csv_value,
    load_results,
    md_cell,
    md_code,
    md_text,
    mean_sd,
    read_episode,
    scalar_metrics,
    survival_curve,
)
from benchmarks.suite import load_suite
from teamenvs.cli import main
from teamenvs.core.config import ConfigError
from teamenvs.core.metrics import flatten
from teamenvs.core.recorder import dumps

SUITE = {
    "name": "rebuild",
    "description": "Two DayTrader conditions and a commons, for the report tests.",
    "seeds": 2,
    "groups": [
        {"title": "Trade", "env": "day_trader_v0", "conditions": ["baseline", "no_communication"],
         "policies": ["cooperator", "defector"], "max_steps": 20},
        {"title": "Fish", "env": "commons_v0", "conditions": ["baseline"], "policies": ["sustainable", "greedy"]},
    ],
}


@pytest.fixture(scope="module")
def bench_folder(tmp_path_factory):
    """A small bench run with its report: the folder."""
    root = tmp_path_factory.mktemp("bench")
    path = root / "rebuild.json"
    path.write_text(json.dumps(SUITE), encoding="utf-8")
    out = root / "out"
    outcome = run_bench(load_suite(path), out, workers=2, progress=False)
    assert outcome.ran == 12 and not outcome.failed
    return out


def outputs(folder: Path) -> tuple[bytes, bytes, list[str]]:
    return ((folder / "report.md").read_bytes(), (folder / "results.csv").read_bytes(),
            sorted(p.name for p in (folder / "plots").iterdir()))


# ---------------------------------------------------------------------------- rebuilding a bench folder


def figure_files(kinds: dict[str, tuple[str, ...]]) -> list[str]:
    return sorted(f"{group}_{kind}.{fmt}" for group, names in kinds.items() for kind in names for fmt in ("png", "svg", "pdf"))


def test_report_is_rebuilt_byte_for_byte_from_the_logs_alone(bench_folder, tmp_path):
    md, csv, plots = outputs(bench_folder)
    assert plots == figure_files({"Fish": ("actions", "agents", "headline", "metrics", "series", "survival"),
                                  "Trade": ("actions", "agents", "headline", "metrics", "series")})
    # a fresh folder with nothing but the logs
    fresh = tmp_path / "fresh"
    shutil.copytree(bench_folder / "logs", fresh / "logs")
    report = build_report(fresh)
    assert outputs(fresh) == (md, csv, plots)
    for name in plots:  # the figures too, SVG and PDF included
        assert (fresh / "plots" / name).read_bytes() == (bench_folder / "plots" / name).read_bytes(), name
    assert not (fresh / "suite.json").exists()
    assert len(report.rows) == 12 and [g.title for g in report.groups] == ["Trade", "Fish"]
    assert "report: 12 of 12 episodes complete, 2 group(s)" in report.summary()


def test_cli_report_rebuilds_the_deleted_outputs(bench_folder, tmp_path, capsys):
    md, csv, plots = outputs(bench_folder)
    folder = tmp_path / "copy"
    shutil.copytree(bench_folder, folder)
    for name in ("report.md", "results.csv", "suite.json"):
        (folder / name).unlink()
    shutil.rmtree(folder / "plots")
    assert main(["report", str(folder)]) == 0
    assert "report: 12 of 12 episodes complete, 2 group(s)" in capsys.readouterr().out
    assert outputs(folder) == (md, csv, plots)
    magic = {"png": b"\x89PNG\r\n\x1a\n", "svg": b"<?xml", "pdf": b"%PDF-"}
    for name in plots:
        assert (folder / "plots" / name).read_bytes().startswith(magic[name.rsplit(".", 1)[1]])


def test_cli_plots_picks_the_formats_of_report_and_bench(bench_folder, tmp_path, capsys):
    md, csv, plots = outputs(bench_folder)
    folder = tmp_path / "copy"
    shutil.copytree(bench_folder, folder)
    assert main(["report", str(folder), "--plots", "png"]) == 0
    assert "figure(s) (PNG) in" in capsys.readouterr().out
    assert sorted(p.name for p in (folder / "plots").iterdir()) == sorted(n for n in plots if n.endswith(".png"))
    assert main(["report", str(folder), "--plots", "jpg"]) == 2
    err = capsys.readouterr().err
    assert "error: plots: unknown format(s) 'jpg'; give a comma-separated list of png, svg, pdf, or none" in err
    assert "Traceback" not in err
    assert main(["bench", "--suite", "smoke", "--out", str(tmp_path / "smoke"), "--plots", "svg,jpeg", "--quiet"]) == 2
    assert "error: plots: unknown format(s) 'jpeg'" in capsys.readouterr().err
    assert not list((tmp_path / "smoke").glob("logs/*.jsonl*"))  # refused before any episode ran
    assert main(["report", str(folder)]) == 0  # every format again: the files of the bench's own report
    assert outputs(folder) == (md, csv, plots)


def test_report_of_the_bench_folder_has_the_suite_in_it(bench_folder):
    md = (bench_folder / "report.md").read_text(encoding="utf-8")
    assert md.startswith("# Benchmark report: rebuild\n")
    assert SUITE["description"] in md
    assert "## Trade (`day_trader_v0`)" in md and "## Fish (`commons_v0`)" in md
    assert md.index("## Trade") < md.index("## Fish")  # suite order, not file order
    trade = table(md, "## Trade")
    assert [(r["condition"], r["policy"], r["n"]) for r in trade] == [
        ("baseline", "cooperator", "2"), ("baseline", "defector", "2"),
        ("no_communication", "cooperator", "2"), ("no_communication", "defector", "2")]
    rows = load_results(bench_folder)
    assert len(rows) == 12 and {r["status"] for r in rows} == {"complete"}
    assert {r["preset"] for r in rows if r["env"] == "day_trader_v0"} == {"baseline", "no_communication"}
    assert all(r["env_steps"] == "20" for r in rows if r["env"] == "day_trader_v0")  # max_steps reached the episodes


def test_report_of_plain_run_logs(tmp_path, capsys):
    """Logs from `teamenvs run --log-dir` have no run header: grouped by env, preset and file name."""
    logs = tmp_path / "runs"
    assert main(["run", "day_trader_v0", "--policy", "cooperator", "--episodes", "2", "--log-dir", str(logs)]) == 0
    assert main(["run", "commons_v0", "--policy", "greedy", "--preset", "no_communication", "--log-dir", str(logs)]) == 0
    capsys.readouterr()
    assert main(["report", str(logs)]) == 0
    assert "3 of 3 episodes complete, 2 group(s)" in capsys.readouterr().out
    md = (logs / "report.md").read_text(encoding="utf-8")
    assert md.startswith("# Benchmark report: episode logs")
    trade = table(md, "## day_trader_v0 (`day_trader_v0`)")
    assert {r["condition"] for r in trade} == {"default"}
    assert sum(int(r["n"]) for r in trade) == 2
    assert all("±" in r["mean_final_wealth ↑"] for r in trade)
    fish = table(md, "## commons_v0 (`commons_v0`)")
    assert [(r["condition"], r["n"]) for r in fish] == [("no_communication", "1")]
    rows = load_results(logs)
    assert len(rows) == 3 and all(r["suite"] == "" and r["status"] == "complete" for r in rows)
    assert {r["seed"] for r in rows if r["env"] == "day_trader_v0"} == {"0", "1"}
    assert all(r["mean_final_wealth"] != "" for r in rows if r["env"] == "day_trader_v0")
    assert (logs / "plots" / "commons_v0_survival.png").is_file()


def test_missing_or_empty_folder_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(ConfigError, match=r"no folder '.*nowhere' \(give a folder written by `teamenvs bench --out`\)"):
        build_report(tmp_path / "nowhere")
    (tmp_path / "empty" / "logs").mkdir(parents=True)
    (tmp_path / "empty" / "logs" / "notes.txt").write_text("not a log", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"no episode logs \(\*\.jsonl, \*\.jsonl\.gz\) in '.*empty/logs'"):
        build_report(tmp_path / "empty")
    assert main(["report", str(tmp_path / "nowhere")]) == 2
    assert "error: no folder" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "empty")]) == 2
    assert "error: no episode logs" in capsys.readouterr().err
    assert not (tmp_path / "empty" / "report.md").exists()


# ---------------------------------------------------------------------------- hand-written logs

AGENTS = ["trader_1", "trader_2"]


def write_log(folder: Path, name: str, *, group: str, condition: str, policy: str, seed: int, index=(0, 0, 0),
              metrics=None, returns=None, end: str | None = "end", env: str = "day_trader_v0", config=None,
              suite: str = "hand", compress: bool = True, steps=(), run_extra=None, error: str = "RuntimeError: boom",
              usage=None) -> Path:
    """An episode log as `teamenvs bench` writes it: header with run meta, a reset, and an end (or error) line."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl{'.gz' if compress else ''}"
    run = {"suite": suite, "group": group, "env": env, "condition": {"name": condition, "preset": None, "set": {}},
           "policy": {"label": policy, "policy": "scripted"}, "seed": seed, "max_steps": None, "index": list(index),
           "description": "", **(run_extra or {})}
    lines = [{"type": "header", "env_id": env, "version": "0", "preset": None, "seed": seed, "config": config or {},
              "agents": AGENTS, "run": run},
             {"type": "reset", "observations": {}}]
    # an end line's returns are the sums of its step lines' rewards (else the log reads as edited): returns given with
    # no steps are paid in one step, and returns not given are the steps' sums
    if returns and any(returns.values()) and not steps:
        steps = ({a: {"reward": r} for a, r in returns.items()},)
    if returns is None:
        returns = {a: float(sum(step.get(a, {}).get("reward", 0.0) for step in steps)) for a in AGENTS}
    lines += [{"type": "step", "step": i + 1, "agents": agents} for i, agents in enumerate(steps)]
    if end == "end":
        lines.append({"type": "end", "steps": len(steps), "returns": returns, "metrics": metrics or {},
                      **({"usage": {"total": usage}} if usage is not None else {})})
    elif end == "error":
        lines.append({"type": "error", "step": 2, "error": error})
    text = "".join(dumps(r) + "\n" for r in lines).encode()
    path.write_bytes(gzip.compress(text) if compress else text)
    return path


def section(md: str, heading: str) -> str:
    start = md.index(heading)
    end = md.find("\n## ", start + 1)
    return md[start:] if end < 0 else md[start:end]


def table(md: str, heading: str) -> list[dict[str, str]]:
    """The first markdown table under `heading`, as rows of column -> cell."""
    lines = section(md, heading).splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith("|"))
    block = []
    for ln in lines[first:]:
        if not ln.startswith("|"):
            break
        block.append(ln)
    header = [c.strip() for c in block[0].strip("|").split("|")]
    return [dict(zip(header, (c.strip() for c in ln.strip("|").split("|")))) for ln in block[2:]]


@pytest.fixture
def hand_folder(tmp_path):
    """Two groups of hand-written DayTrader logs with hand-computed results.

    Group "Grid": conditions c1, c2 x policies p1, p2, seeds 0 and 1, plus an incomplete and a failed episode.
    Group "Solo": one policy over conditions d1, d2, d3.
    """
    logs = tmp_path / "hand" / "logs"
    grid = {
        # (condition, policy): [(mean_final_wealth, gini_wealth, cooperation_rate, total_messages, returns)] per seed
        ("c1", "p1"): [(100, 0.1, None, 1, (10, 20)), (200, 0.3, 0.5, 3, (30, 40))],
        ("c1", "p2"): [(300, 0.5, 1.0, 0, (0, 0)), (300, 0.5, 1.0, 0, (0, 0))],
        ("c2", "p1"): [(500, 0.4, 0.5, 9, (0, 0)), (300, 0.4, 0.5, 9, (0, 0))],
        ("c2", "p2"): [(0, 0.4, 0.0, 2, (0, 0)), (100, 0.4, 0.0, 2, (0, 0))],
    }
    for (c, p), seeds in grid.items():
        ci, pi = int(c[1]) - 1, int(p[1]) - 1
        for seed, (wealth, gini, coop, msgs, rets) in enumerate(seeds):
            write_log(logs, f"Grid__{c}__{p}__seed{seed}", group="Grid", condition=c, policy=p, seed=seed, index=(0, ci, pi),
                      metrics={"mean_final_wealth": wealth, "gini_wealth": gini, "cooperation_rate": coop, "total_messages": msgs,
                               "wealth": {"trader_1": wealth, "trader_2": wealth}, "survivors": ["trader_1"]},
                      returns=dict(zip(AGENTS, map(float, rets))))
    write_log(logs, "Grid__c1__p1__seed2", group="Grid", condition="c1", policy="p1", seed=2, end=None,
              metrics={"mean_final_wealth": 99999})
    write_log(logs, "Grid__c2__p2__seed2", group="Grid", condition="c2", policy="p2", seed=2, index=(0, 1, 1), end="error")
    for i, (c, values) in enumerate({"d1": (10, 10), "d2": (30, 10), "d3": (5, 5)}.items()):
        for seed, wealth in enumerate(values):
            write_log(logs, f"Solo__{c}__only__seed{seed}", group="Solo", condition=c, policy="only", seed=seed, index=(1, i, 0),
                      metrics={"mean_final_wealth": wealth})
    build_report(logs.parent, plots=False)
    return logs.parent


def test_cells_are_mean_and_population_sd_with_the_best_policy_per_condition_in_bold(hand_folder):
    md = (hand_folder / "report.md").read_text(encoding="utf-8")
    rows = {(r["condition"], r["policy"]): r for r in table(md, "## Grid (`day_trader_v0`)")}
    assert list(rows) == [("c1", "p1"), ("c1", "p2"), ("c2", "p1"), ("c2", "p2")]
    wealth = {k: r["mean_final_wealth ↑"] for k, r in rows.items()}
    # 0 decimals (values >= 100); p2 is best in c1, p1 in c2
    assert wealth == {("c1", "p1"): "150 ± 50", ("c1", "p2"): "**300 ± 0**", ("c2", "p1"): "**400 ± 100**", ("c2", "p2"): "50 ± 50"}
    gini = {k: r["gini_wealth ↓"] for k, r in rows.items()}
    # lower is better; in c2 both policies tie, so nothing is marked there
    assert gini == {("c1", "p1"): "**0.200 ± 0.100**", ("c1", "p2"): "0.500 ± 0.000", ("c2", "p1"): "0.400 ± 0.000", ("c2", "p2"): "0.400 ± 0.000"}
    coop = {k: r["cooperation_rate ↑"] for k, r in rows.items()}
    # defined in 1 of the 2 episodes of (c1, p1)
    assert coop == {("c1", "p1"): "0.50 ± 0.00 (1/2)", ("c1", "p2"): "**1.00 ± 0.00**", ("c2", "p1"): "**0.50 ± 0.00**", ("c2", "p2"): "0.00 ± 0.00"}
    # a metric with no direction is never marked
    assert "total_messages" in rows[("c1", "p1")] and not any(r["total_messages"].startswith("**") for r in rows.values())
    assert rows[("c2", "p1")]["total_messages"] == "9.00 ± 0.00"
    # return: mean per agent, then mean ± sd over seeds: (15, 35) -> 25 ± 10
    assert rows[("c1", "p1")]["return"] == "25.0 ± 10.0"
    # nested and list metrics are not table columns
    assert "wealth" not in rows[("c1", "p1")] and "survivors" not in rows[("c1", "p1")]
    # the n column counts complete episodes only
    assert [r["n"] for r in rows.values()] == ["2", "2", "2", "2"]
    assert "8 episodes; seeds 0, 1; conditions: c1, c2; policies: p1, p2." in section(md, "## Grid")


def test_one_policy_group_marks_the_best_condition(hand_folder):
    md = (hand_folder / "report.md").read_text(encoding="utf-8")
    rows = table(md, "## Solo (`day_trader_v0`)")
    assert [(r["condition"], r["policy"], r["mean_final_wealth ↑"]) for r in rows] == [
        ("d1", "only", "10.0 ± 0.0"), ("d2", "only", "**20.0 ± 10.0**"), ("d3", "only", "5.0 ± 0.0")]


def test_episodes_without_a_result_are_listed_and_left_out(hand_folder):
    md = (hand_folder / "report.md").read_text(encoding="utf-8")
    assert "14 of 16 episodes complete" in md
    tail = section(md, "## Episodes without a result")
    assert "- `Grid__c1__p1__seed2.jsonl.gz`: incomplete" in tail
    assert "- `Grid__c2__p2__seed2.jsonl.gz`: error (RuntimeError: boom)" in tail
    assert "99999" not in md  # the unfinished episode's numbers are nowhere in the tables
    rows = {(r["group"], r["condition"], r["policy"], r["seed"]): r for r in load_results(hand_folder)}
    assert len(rows) == 16
    unfinished = rows[("Grid", "c1", "p1", "2")]
    assert unfinished["status"] == "incomplete" and unfinished["env_steps"] == "" and unfinished["mean_final_wealth"] == ""
    assert rows[("Grid", "c2", "p2", "2")]["status"] == "error"
    done = rows[("Grid", "c1", "p1", "0")]
    assert done["status"] == "complete" and done["env_steps"] == "1"  # (a hand-written log: one step pays its returns)
    # flattened in results.csv: nested as a.b, lists as JSON, None empty
    assert done["wealth.trader_1"] == "100" and done["survivors"] == '["trader_1"]' and done["cooperation_rate"] == ""
    assert rows[("Grid", "c1", "p1", "1")]["cooperation_rate"] == "0.5"


def test_a_log_cut_mid_stream_counts_as_incomplete(tmp_path):
    logs = tmp_path / "logs"
    path = write_log(logs, "cut", group="G", condition="c", policy="p", seed=0, metrics={"mean_final_wealth": 1})
    write_log(logs, "whole", group="G", condition="c", policy="p", seed=1, metrics={"mean_final_wealth": 3}, compress=False)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 12])  # the gzip trailer and part of the stream are gone
    row = read_episode(path)
    assert row is not None and row.status in ("incomplete",) and row.metrics == {}
    report = build_report(tmp_path, plots=False)
    assert [r.status for r in report.rows] == ["incomplete", "complete"]
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "- `cut.jsonl.gz`: incomplete" in md and "1 of 2 episodes complete" in md
    assert table(md, "## G")[0]["n"] == "1"


def test_plots_when_no_action_was_accepted(hand_folder):
    # no accepted action in a group (here: logs without steps; in a real run, an LLM whose every reply is
    # invalid) still gives a report
    report = build_report(hand_folder)
    kinds = ("headline", "metrics", "agents", "actions")  # no series: these logs have no steps
    assert report.plots == {g: {k: f"plots/{g}_{k}.png" for k in kinds} for g in ("Grid", "Solo")}
    md = (hand_folder / "report.md").read_text(encoding="utf-8")
    assert "![metrics: Grid](plots/Grid_metrics.png)" in md
    for kinds in report.plots.values():
        for rel in kinds.values():
            assert (hand_folder / rel).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def fish(amount: int, ok: bool = True) -> dict:
    return {"action": {"ok": ok, "command": "fish", "args": {"amount": amount}}, "reward": amount}


def test_survival_plot_only_where_episodes_report_survival(tmp_path):
    logs = tmp_path / "logs"
    for seed, (t, ok) in enumerate([(3, False), (12, True)]):
        write_log(logs, f"fish{seed}", env="commons_v0", group="Fish", condition="c", policy="p", seed=seed, config={"months": 12},
                  metrics={"survival_time": t, "survived": ok}, steps=[{"trader_1": fish(5), "trader_2": fish(9, ok=False)}])
    write_log(logs, "trade", group="Trade", condition="c", policy="p", seed=0, metrics={"mean_final_wealth": 3},
              steps=[{"trader_1": {"action": {"ok": True, "command": "wait"}}}])
    report = build_report(tmp_path)
    assert set(report.plots["Fish"]) == {"headline", "metrics", "agents", "actions", "survival"}
    assert set(report.plots["Trade"]) == {"headline", "metrics", "agents", "actions"}
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == figure_files(
        {"Fish": ("actions", "agents", "headline", "metrics", "survival"), "Trade": ("actions", "agents", "headline", "metrics")})
    # the action breakdown counts accepted actions per agent and command
    row = next(r for r in report.rows if r.path.name == "fish0.jsonl.gz")
    assert row.actions == {"trader_1": {"fish": 1}}
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    # booleans are shown as rates
    assert table(md, "## Fish")[0]["survived ↑"] == "0.50 ± 0.50"
    assert table(md, "## Fish")[0]["survival_time ↑"] == "7.5 ± 4.5"


# ---------------------------------------------------------------------------- pure helpers


def test_flatten_and_csv_values():
    metrics = {"a": {"b": 1, "c": {"d": True}}, "e": None, "f": [1, "x"], "g": 2.5, "h": False, "i": "text", "j": ("é",)}
    cells = {k: csv_value(v) for k, v in flatten(metrics).items()}
    assert cells == {"a.b": 1, "a.c.d": 1, "e": "", "f": '[1, "x"]', "g": 2.5, "h": 0, "i": "text", "j": '["é"]'}
    assert flatten({}) == {}
    assert flatten({"x": {}}) == {}


def test_mean_sd_is_the_population_sd():
    assert mean_sd([1, 2, 3, 4]) == (2.5, math.sqrt(1.25))
    assert mean_sd([5.0]) == (5.0, 0.0)
    assert mean_sd([2, 4]) == (3.0, 1.0)  # the sample sd would be sqrt(2)


def test_student_t_quantiles_match_the_tables():
    from teamenvs.core.metrics import student_t_quantile

    table = {(0.975, 1): 12.7062, (0.975, 2): 4.3027, (0.975, 4): 2.7764, (0.975, 9): 2.2622, (0.975, 30): 2.0423,
             (0.995, 5): 4.0321, (0.95, 10): 1.8125, (0.975, 1000): 1.9623}
    for (p, df), value in table.items():
        assert student_t_quantile(p, df) == pytest.approx(value, abs=1e-4), (p, df)
    with pytest.raises(ValueError):
        student_t_quantile(0.4, 3)


def test_mean_ci_is_the_t_interval_and_covers_the_mean_as_often_as_it_says():
    """The paired comparison's interval: mean +- t(n-1) sd / sqrt(n). At the 5 and 10 seeds of a benchmark cell the
    percentile bootstrap it replaced covered a normal mean 84% and 89% of the time for a nominal 95%."""
    from teamenvs.core.metrics import mean_ci

    lo, hi = mean_ci([0, 1, 0, 0, 1, 0, 1, 0, 0, 0])  # mean 0.3, sd 0.4830, t(9) 2.2622: includes 0, p = 0.08
    assert (lo, hi) == (pytest.approx(-0.04555, abs=1e-5), pytest.approx(0.64555, abs=1e-5))
    assert mean_ci([4.0]) == (4.0, 4.0) and mean_ci([2.0, 2.0, 2.0]) == (2.0, 2.0)
    rng = np.random.default_rng(0)
    for n in (2, 5, 10):
        covered = sum(lo <= 0.0 <= hi for lo, hi in (mean_ci(rng.normal(0.0, 1.0, n).tolist()) for _ in range(4000)))
        assert 0.94 <= covered / 4000 <= 0.96, (n, covered / 4000)


def test_best():
    assert _best({"a": 1.0, "b": 2.0}, "max") == {"b"}
    assert _best({"a": 1.0, "b": 2.0}, "min") == {"a"}
    assert _best({"a": 2.0, "b": 2.0, "c": 1.0}, "max") == {"a", "b"}  # a tie for the best marks both
    assert _best({"a": 2.0, "b": 2.0, "c": 1.0}, "min") == {"c"}
    assert _best({"a": 2.0, "b": 2.0}, "max") == set()  # everyone ties: nothing to mark
    assert _best({"a": 1.0, "b": 2.0}, None) == set()  # no direction
    assert _best({"a": 1.0, "b": 2.0}, "other") == set()
    assert _best({"a": 1.0}, "max") == set()  # nothing to compare with
    assert _best({}, "max") == set()


def test_survival_curve():
    # collapsed in months 3 and 5, one survived all 12: alive after month m while t > m
    curve = survival_curve([3, 5, 12], [False, False, True], 12)
    assert len(curve) == 13
    assert curve[:3] == [1.0, 1.0, 1.0]
    assert curve[3:5] == [2 / 3, 2 / 3]
    assert curve[5:] == [1 / 3] * 8
    # a survivor counts as alive whatever its time says; a collapse at month 12 ends at 12
    assert survival_curve([2, 12], [True, False], 12) == [1.0] * 12 + [0.5]
    assert survival_curve([1], [False], 3) == [1.0, 0.0, 0.0, 0.0]



def test_survival_curve_counts_an_episode_cut_before_the_horizon_as_censored():
    """llm-smoke's 32 steps are 8 of the commons' 12 months: such an episode was seen alive for 8 months, no more.
    Drawn as surviving (it said survived=True), it lifted the curve to the horizon; drawn as collapsed it would
    sink it. Kaplan-Meier: after month 8 the share is the survivors among the episodes still seen."""
    # one cut at 8, one collapsed at 10, two survived 12
    curve = survival_curve([8, 10, 12, 12], [None, False, True, True], 12)
    assert curve[:10] == [1.0] * 10  # nobody collapsed before month 10
    assert curve[10:] == [2 / 3] * 3  # in month 10 one of the 3 still seen collapsed
    cut = survival_curve([8, 3], [None, False], 12)
    assert cut[3:9] == [0.5] * 6  # the cut one never collapsed while it was seen
    assert all(math.isnan(x) for x in cut[9:])  # after month 8 nobody knows: no line
    # without censoring, the plain share, to the bit
    assert survival_curve([3, 5, 12], [False, False, True], 12)[5:] == [1 / 3] * 8


def _row(metrics):
    return EpisodeRow(path=Path("x.jsonl"), suite="", group="g", env="day_trader_v0", condition="c", preset=None, overrides={},
                      policy="p", seed=0, order=(0, 0, 0), status="complete", metrics=metrics)


def test_scalar_metrics_are_top_level_numbers_and_booleans_in_first_seen_order():
    rows = [_row({"a": 1, "b": {"x": 1}, "c": None, "d": True, "e": "text", "f": float("nan"), "g": [1]}),
            _row({"c": 2.0, "h": 0})]
    assert scalar_metrics(rows) == ["a", "d", "c", "h"]
    assert scalar_metrics([]) == []


def test_constant_columns_drop_and_policies_are_paired_with_the_reference_on_the_same_seeds():
    from benchmarks.report import EpisodeRow, GroupReport, constant_metrics, paired_rows, reference_policy
    from teamenvs.core.metrics import mean_ci

    def row(policy, seed, gain, total=35):
        return EpisodeRow(path=Path(f"{policy}{seed}.jsonl"), suite="s", group="g", env="day_trader_v0", condition="c",
                          preset=None, overrides={}, policy=policy, seed=seed, order=(0, 0, 0), status="complete",
                          returns={"a": gain}, metrics={"gain": gain, "total": total})

    cells = {("c", "scripted"): [row("scripted", s, 10.0 + s) for s in range(6)],
             ("c", "llm"): [row("llm", s, 12.0 + s + (s % 2)) for s in range(1, 7)]}  # seed 6 has no pair
    g = GroupReport("g", "day_trader_v0", ["c"], ["llm", "scripted"], cells, ["gain", "total"], {"gain": "max"})
    assert constant_metrics(g) == {"total": 35}
    assert reference_policy(g) == "scripted"
    ((condition, policy, pairs, diff, (lo, hi)),) = paired_rows(g, "gain")
    diffs = [2.0 + (s % 2) for s in range(1, 6)]
    assert (condition, policy, pairs) == ("c", "llm", 5) and diff == pytest.approx(sum(diffs) / 5)
    assert (lo, hi) == mean_ci(diffs)
    # differences 3, 2, 3, 2, 3: mean 2.6, sample sd sqrt(0.3), t(4) = 2.776445 -> 2.6 +- 0.680087
    assert (lo, hi) == (pytest.approx(1.919913, abs=1e-6), pytest.approx(3.280087, abs=1e-6))


def _paired_group(reference_rows, policy_rows):
    from benchmarks.report import EpisodeRow, GroupReport

    def row(policy, seed, gain):
        return EpisodeRow(path=Path(f"{policy}{seed}{gain}.jsonl"), suite="s", group="g", env="day_trader_v0",
                          condition="c", preset=None, overrides={}, policy=policy, seed=seed, order=(0, 0, 0),
                          status="complete", returns={"a": gain}, metrics={"gain": gain})

    cells = {("c", "scripted"): [row("scripted", s, x) for s, x in reference_rows],
             ("c", "llm"): [row("llm", s, x) for s, x in policy_rows]}
    return GroupReport("g", "day_trader_v0", ["c"], ["llm", "scripted"], cells, ["gain"], {"gain": "max"})


def test_episodes_without_a_seed_are_not_paired():
    """Unseeded episodes share no draws: they were paired with each other as if `None` were a seed (every policy
    episode with the reference's last unseeded one)."""
    from benchmarks.report import paired_rows

    g = _paired_group([(None, 1.0), (None, 5.0), (3, 10.0)], [(None, 2.0), (None, 3.0), (3, 14.0)])
    assert paired_rows(g, "gain") == [("c", "llm", 1, 4.0, (4.0, 4.0))]
    assert paired_rows(_paired_group([(None, 1.0)], [(None, 2.0)]), "gain") == []


def test_a_seed_played_twice_pairs_its_episodes_in_order():
    from benchmarks.report import paired_rows

    g = _paired_group([(1, 10.0), (1, 20.0), (2, 0.0)], [(1, 11.0), (1, 23.0), (2, 5.0)])
    ((_, _, pairs, diff, _),) = paired_rows(g, "gain")
    assert pairs == 3 and diff == pytest.approx((1.0 + 3.0 + 5.0) / 3)


def test_equal_means_are_both_best_whatever_their_size():
    """Two cells with the same values summed in another order differ in the last bit; at 10^4 an absolute 1e-12
    tolerance bolded only one of them."""
    from benchmarks.report import _best

    xs = [10690.32 + 0.37 * i for i in range(10)]
    a, b = sum(xs) / 10, sum(reversed(xs)) / 10
    assert _best({"A": a, "B": b, "C": 0.0}, "max") == {"A", "B"}
    assert _best({"A": a, "B": b}, "max") == set()  # everyone ties
    assert _best({"A": 1.0, "B": 1.0 + 1e-6}, "max") == {"B"}


def test_action_sources_count_the_logged_sources_and_nothing_else_from_a_file():
    from collections import Counter

    from benchmarks.report import _action_sources

    def step(*sources):
        return {"type": "step", "step": 1, "agents": {f"a{i}": ({"source": s} if s is not None else {}) for i, s in enumerate(sources)}}

    records = [{"type": "header", "env_id": "commons_v0"}, step("action line", "echo", None), step("constrained json", "| <b>x</b> |", 7)]
    assert _action_sources(records) == Counter({"action line": 1, "echo": 1, "constrained json": 1, "other": 1})


# ---------------------------------------------------------------------------- duplicates, settings, outside text


def test_a_log_copied_or_gunzipped_beside_its_original_is_counted_once(bench_folder, tmp_path, capsys):
    folder = tmp_path / "copy"
    shutil.copytree(bench_folder / "logs", folder / "logs")
    logs = folder / "logs"
    original = logs / "Trade__baseline__cooperator__seed0.jsonl.gz"
    shutil.copyfile(original, logs / "A_copy_Trade__baseline__cooperator__seed0.jsonl.gz")
    (logs / "Trade__baseline__cooperator__seed1.jsonl").write_bytes(gzip.decompress((logs / "Trade__baseline__cooperator__seed1.jsonl.gz").read_bytes()))
    assert main(["report", str(folder), "--plots", "none"]) == 0
    printed = capsys.readouterr().out
    assert "report: 12 of 12 episodes complete" in printed
    assert "2 duplicate log(s) not counted" in printed
    assert "A_copy_Trade__baseline__cooperator__seed0.jsonl.gz: the same episode as Trade__baseline__cooperator__seed0.jsonl.gz" in printed
    md = (folder / "report.md").read_text(encoding="utf-8")
    assert "12 of 12 episodes complete" in md
    assert [r["n"] for r in table(md, "## Trade")] == ["2", "2", "2", "2"]
    duplicates = section(md, "## Duplicate logs (not counted)")
    assert "- `Trade__baseline__cooperator__seed1.jsonl`: the same episode as `Trade__baseline__cooperator__seed1.jsonl.gz`" in duplicates
    assert "- `A_copy_Trade__baseline__cooperator__seed0.jsonl.gz`: the same episode as `Trade__baseline__cooperator__seed0.jsonl.gz`" in duplicates
    assert (folder / "results.csv").read_bytes() == (bench_folder / "results.csv").read_bytes()  # each episode once


def test_llm_episodes_run_under_other_settings_are_never_one_cell(tmp_path):
    logs = tmp_path / "logs"

    def llm_log(seed, temperature):
        settings = {"base_url": "built-in offline server", "temperature": temperature, "max_output_tokens": 512}
        write_log(logs, f"G__c__llm__seed{seed}", group="G", condition="c", policy="llm", seed=seed,
                  metrics={"mean_final_wealth": 100 * (seed + 1)}, run_extra={"model": "random-valid", "settings": settings})

    llm_log(0, 0.0)
    llm_log(1, 0.0)
    llm_log(2, 0.9)
    report = build_report(tmp_path, plots=False)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    cells = [(r["policy"], r["n"]) for r in table(md, "## G")]
    assert cells == [("llm (temperature=0.0)", "2"), ("llm (temperature=0.9)", "1")]
    assert sorted(r["policy"] for r in load_results(tmp_path)) == ["llm (temperature=0.0)"] * 2 + ["llm (temperature=0.9)"]
    assert "3 of 3 episodes complete" in report.summary()


def test_markdown_escaping_of_outside_text():
    evil = "a|b\n<script>alert(1)</script> <img src=x onerror=alert(1)> &\x1b[2J\x07\\|"
    assert md_text(evil) == "a|b &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt; &amp;\\[2J\\\\|"
    assert md_cell(evil) == "a\\|b &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt; &amp;\\[2J\\\\\\|"
    assert md_text("# not a heading") == "\\# not a heading" and md_text("plain text_1 (x)") == "plain text_1 (x)"
    # no live link, image or code span from outside text
    assert md_text("![t](http://evil/p.png) [click](javascript:x) `code`") == "!\\[t\\](http\\://evil/p.png) \\[click\\](javascript:x) \\`code\\`"
    # found by review: GitHub's Markdown made a server's error text live links and emphasis; names stay as they read
    assert md_text("renew at https://evil.example or www.evil.example *now* _please_ ~~x~~ $5 and $6") == \
        "renew at https\\://evil.example or www\\.evil.example \\*now\\* \\_please\\_ \\~\\~x\\~\\~ \\$5 and \\$6"
    assert md_text("mean_final_wealth group_size_8+dashboard") == "mean_final_wealth group_size_8+dashboard"
    assert md_code("name.jsonl.gz") == "`name.jsonl.gz`" and md_code("a`b\x1b") == "`` a`b\\x1b ``"


def test_hostile_metric_names_and_errors_in_hand_written_logs_stay_in_their_cells(tmp_path):
    logs = tmp_path / "logs"
    for seed in (0, 1):
        write_log(logs, f"G__c__p__seed{seed}", group="G", condition="c", policy="p", seed=seed,
                  metrics={"x|y<b>\x1b[2J": seed, "mean_final_wealth": seed})
    write_log(logs, "G__c__p__seed2", group="G", condition="c", policy="p", seed=2, end="error",
              error="LLMError: HTTP 400: bad | thing\n<script>alert(1)</script>\x1b]0;PWNED\x07")
    build_report(tmp_path, plots=False)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "<script" not in md and "<b>" not in md and "\x1b" not in md and "\x07" not in md
    header = next(ln for ln in md.splitlines() if ln.startswith("| condition"))
    assert "| x\\|y&lt;b&gt;\\[2J |" in header
    assert "- `G__c__p__seed2.jsonl.gz`: error (LLMError: HTTP 400: bad | thing &lt;script&gt;alert(1)&lt;/script&gt;\\]0;PWNED)" in md
    csv_text = (tmp_path / "results.csv").read_text(encoding="utf-8")
    assert "\x1b" not in csv_text and ",x|y<b>\\x1b[2J," in csv_text  # control characters shown, not sent


def test_a_renamed_llm_label_never_takes_another_policys_name(tmp_path):
    """A suite may label a scripted policy 'llm (temperature=0.9)': the llm episodes at 0.9 get another name."""
    logs = tmp_path / "logs"
    for seed in (0, 1):
        write_log(logs, f"G__c__decoy__seed{seed}", group="G", condition="c", policy="llm (temperature=0.9)", seed=seed,
                  metrics={"mean_final_wealth": 7})
    for seed, temperature in ((0, 0.0), (1, 0.9)):
        write_log(logs, f"G__c__llm__seed{seed}", group="G", condition="c", policy="llm", seed=seed, metrics={"mean_final_wealth": 100},
                  run_extra={"model": "m", "settings": {"temperature": temperature}})
    build_report(tmp_path, plots=False)
    cells = [(r["policy"], r["n"]) for r in table((tmp_path / "report.md").read_text(encoding="utf-8"), "## G")]
    assert sorted(cells) == [("llm (temperature=0.0)", "1"), ("llm (temperature=0.9)", "2"), ("llm (temperature=0.9) #2", "1")]


def test_two_suites_in_one_folder_are_never_pooled(tmp_path):
    logs = tmp_path / "logs"
    for suite, wealth in (("short", 100), ("long", 300)):
        for seed in (0, 1):
            write_log(logs, f"{suite}_G__c__p__seed{seed}", suite=suite, group="G", condition="c", policy="p", seed=seed,
                      metrics={"mean_final_wealth": wealth})
    build_report(tmp_path, plots=False)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert [r["n"] for r in table(md, "## short: G")] == ["2"] and [r["n"] for r in table(md, "## long: G")] == ["2"]


def test_teamenvs_run_logs_renamed_when_taken_keep_their_policy(tmp_path, capsys):
    """`run` gives a taken name the next free one (`..._seed0-2`): the report still reads the policy from it."""
    folder = tmp_path / "runs"
    for preset in ("baseline", "group_size_6"):
        assert main(["run", "day_trader_v0", "--episodes", "2", "--preset", preset, "--log-dir", str(folder)]) == 0
    assert sorted(p.name for p in folder.iterdir())[:2] == ["day_trader_v0_scripted_seed0-2.jsonl", "day_trader_v0_scripted_seed0.jsonl"]
    build_report(folder, plots=False)
    md = (folder / "report.md").read_text(encoding="utf-8")
    assert "policies: scripted." in md and "seed0-2" not in md.split("## Episodes")[0]


def test_teamenvs_run_logs_of_other_set_values_are_never_one_cell(tmp_path, capsys):
    """`run --set months=6` and `--set months=12` (same preset, policy and seeds) were one cell, averaged: the
    header's config tells them apart, and each condition's name says how its config differs."""
    folder = tmp_path / "runs"
    for months in (6, 12):
        assert main(["run", "commons_v0", "--policy", "sustainable", "--episodes", "2", "--set", f"months={months}",
                     "--log-dir", str(folder)]) == 0
    capsys.readouterr()
    report = build_report(folder, plots=False)
    md = (folder / "report.md").read_text(encoding="utf-8")
    cells = [(r["condition"], r["policy"], r["n"], r["total_gain ↑"], r["survival_time ↑"]) for r in table(md, "## commons_v0")]
    assert sorted(cells) == [("default (months=12)", "sustainable", "2", "**600 ± 0**", "**12.0 ± 0.0**"),
                             ("default (months=6)", "sustainable", "2", "300 ± 0", "6.0 ± 0.0")]
    rows = load_results(folder)
    assert sorted((r["condition"], r["seed"], r["total_gain"]) for r in rows) == [
        ("default (months=12)", "0", "600"), ("default (months=12)", "1", "600"),
        ("default (months=6)", "0", "300"), ("default (months=6)", "1", "300")]
    assert "4 of 4 episodes complete, 1 group(s)" in report.summary()


def test_the_paired_comparison_never_pairs_episodes_of_other_configs(tmp_path, capsys):
    """Two policies run at months=6 and at months=12 on the same seeds: each is paired with the other at the same
    months only (the seed alone paired a months=12 episode with a months=6 one, or dropped one of them)."""
    folder = tmp_path / "runs"
    for months in (6, 12):
        for policy in ("sustainable", "greedy"):
            assert main(["run", "commons_v0", "--policy", policy, "--episodes", "2", "--set", f"months={months}",
                         "--log-dir", str(folder)]) == 0
    capsys.readouterr()
    report = build_report(folder, plots=False)
    (g,) = report.groups
    assert sorted(g.conditions) == ["default (months=12)", "default (months=6)"]
    for cell in g.cells.values():  # one config per cell
        assert len({dumps(r.config) for r in cell}) == 1 and len(cell) == 2
    for c in g.conditions:  # and per condition, which is what the pairing goes by
        assert len({dumps(r.config) for p in g.policies for r in g.cells[(c, p)]}) == 1
    md = (folder / "report.md").read_text(encoding="utf-8")
    paired = [r for r in table(md, "Paired with") if r["metric"] == "total_gain"]
    assert sorted((r["condition"], r["pairs"]) for r in paired) == [("default (months=12)", "2"), ("default (months=6)", "2")]


def test_a_config_difference_in_a_condition_name_is_escaped_and_kept_short(tmp_path):
    """Config keys and values of hand-edited logs reach report.md escaped, results.csv with control characters shown,
    and a condition name of a long value, or of many differing keys, stays short."""
    logs = tmp_path / "logs"
    hostile = "<b>x</b>|y\x1b[2J`z`" + "w" * 500
    configs = [{"months": 12, "mode": hostile, "a": 1, "b": 1, "c": 1}, {"months": 6, "mode": "plain", "a": 2, "b": 2, "c": 2}]
    for i, config in enumerate(configs):
        for seed in (0, 1):
            lines = [{"type": "header", "env_id": "commons_v0", "version": "0", "preset": None, "seed": seed, "config": config,
                      "agents": AGENTS},
                     {"type": "step", "step": 1, "agents": {a: {"reward": float(i)} for a in AGENTS}},
                     {"type": "end", "steps": 1, "returns": {a: float(i) for a in AGENTS}, "metrics": {"total_gain": 10 * i}}]
            (logs.mkdir(parents=True, exist_ok=True), (logs / f"commons_v0_p_seed{seed}{'-2' if i else ''}.jsonl").write_text(
                "".join(dumps(r) + "\n" for r in lines), encoding="utf-8"))
    build_report(tmp_path, plots=False)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    cells = [ln for ln in section(md, "## commons_v0").splitlines() if ln.startswith("| default")]
    assert len(cells) == 2 and cells[1] == "| default (months=6, mode='plain', a=2, +2 more) | p | 2 | 1.00 ± 0.00 | **10.0 ± 0.0** |"
    name = cells[0].split(" | p | ")[0]  # the cell's `|` is escaped: the table keeps its columns
    assert name.startswith("| default (months=12, mode='&lt;b&gt;x&lt;/b&gt;\\|y\\[2J\\`z\\`www") and name.endswith("...', a=1, +2 more)")
    assert len(name) < 150 and "<b>" not in md and "\x1b" not in md and "w" * 100 not in md
    csv_text = (tmp_path / "results.csv").read_text(encoding="utf-8")
    assert "\x1b" not in csv_text and "w" * 100 not in csv_text


def test_a_metric_no_episode_of_a_cell_defines_shows_a_dash_the_report_explains(tmp_path, capsys):
    """Commons episodes capped before the horizon have `survived` undefined (None): the cell shows –, and the
    report's opening says what – means."""
    folder = tmp_path / "runs"
    for policy in ("sustainable", "greedy"):  # greedy collapses in month 1: survived False, defined
        assert main(["run", "commons_v0", "--policy", policy, "--episodes", "2", "--max-steps", "10",
                     "--log-dir", str(folder)]) == 0
    capsys.readouterr()
    build_report(folder, plots=False)
    md = (folder / "report.md").read_text(encoding="utf-8")
    rows = {r["policy"]: r for r in table(md, "## commons_v0")}
    assert rows["sustainable"]["survived ↑"] == "–" and rows["greedy"]["survived ↑"].startswith("0.000")
    assert rows["sustainable"]["survival_time ↑"].startswith("**3.00")  # 10 steps (with discussions): 3 of 12 months
    assert "and – in none" in md


@pytest.mark.parametrize("seeds", [2, 5])
def test_a_paired_interval_is_given_from_5_pairs_and_a_cost_only_where_prices_were(tmp_path, seeds):
    """Below 5 pairs the t interval is "–" (2 pairs gave [-2.986, 1.325] for a difference bounded to -1..1, and zero
    widths for repeated episodes), as the figures draw none; a cell whose runs had no prices shows cost "–", not 0."""
    logs = tmp_path / "logs"
    for seed in range(seeds):
        for pi, policy in enumerate(("scripted", "llm")):
            usage = {"calls": 3, "prompt_tokens": 100, "completion_tokens": 10}
            if policy == "llm" and seeds == 5:
                usage["cost_usd"] = 0.002 * (seed + 1)
            write_log(logs, f"G__c__{policy}__seed{seed}", group="G", condition="c", policy=policy, seed=seed, index=(0, 0, pi),
                      metrics={"mean_final_wealth": 100 + seed + (seed % 2) * pi * 10}, returns={a: float(seed) for a in AGENTS},
                      usage=usage)
    build_report(tmp_path, plots=False)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    paired = {r["metric"]: r for r in table(md, "Paired with")}
    wealth = paired["mean_final_wealth"]
    assert wealth["pairs"] == str(seeds)
    if seeds < 5:
        assert wealth["95% CI"] == "–"
    else:
        assert re.fullmatch(r"\[-?[\d.,]+, [\d.,]+\]", wealth["95% CI"]), wealth
    usage = {r["policy"]: r for r in table(md, "Model usage per episode")}
    assert usage["scripted"]["cost_usd"] == "–" and usage["scripted"]["calls"] == "3.0"
    assert usage["llm"]["cost_usd"] == ("–" if seeds < 5 else "0.0060")


def test_a_difference_the_same_on_every_seed_gets_no_interval_and_no_star():
    """Found by review: deterministic cells gave intervals like `-1,967 [-1,967, -1,967] *`: five identical seeds read
    as strong evidence. A t interval of width 0 says nothing; the table says the difference is the same on every seed."""
    from benchmarks.report import paired_markdown

    same = _paired_group([(s, 10.0) for s in range(5)], [(s, 12.0) for s in range(5)])
    row = next(line for line in paired_markdown(same, ["gain"]) if line.startswith("| c | llm | gain |"))
    assert row.endswith("| 5 | +2.00 | the same on every seed |") and "*" not in row
    varied = _paired_group([(s, 10.0) for s in range(5)], [(s, 12.0 + s / 10) for s in range(5)])
    row = next(line for line in paired_markdown(varied, ["gain"]) if line.startswith("| c | llm | gain |"))
    assert row.endswith(" *|") or row.endswith(" * |")
