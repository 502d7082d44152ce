"""The report's figures (`benchmarks.figures`), on a small bench run and on hand-made rows.

Covers: every figure of every group written as PNG, SVG and PDF and linked from report.md with its
caption, or in the formats asked for (older files of the others removed); the same files, byte for byte, whether drawn in one process or two; conditions drawn as
lines over the config value they differ by (team size) and as bars otherwise (and the rule on
hand-made configs: several lines of conditions, seeds never an axis, no line when a value repeats);
the per-round series (DayTrader cooperation per round, commons stock per month) equal to values
computed by hand from the logs, and each agent's return equal to the logs' returns; the headline
metric; the series read from hand-written records; and bad input (one policy, an all-NaN metric,
missing fields) drawn without an error.
"""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.bench import run_bench
from benchmarks.figures import (
    DRAW,
    _errors,
    agent_returns,
    caption,
    draw_bars,
    estimate,
    figure_kinds,
    headline_metric,
    ordered_conditions,
    series_points,
    write_figures,
)
from benchmarks.report import (
    MIN_PAIRS,
    SERIES,
    EpisodeRow,
    GroupReport,
    best_candidate_votes,
    build_report,
    cooperation_per_round,
    episode_series,
    group_rows,
    route_accuracy_per_step,
    stock_per_month,
)
from benchmarks.suite import load_suite, slug
from teamenvs.core.recorder import read_log

SUITE = {
    "name": "figures",
    "description": "A team-size comparison and a commons, for the figure tests.",
    "seeds": 2,
    "groups": [
        {"title": "Trade", "env": "day_trader_v0", "conditions": ["baseline", "group_size_6"],
         "policies": ["cooperator", "random"], "max_steps": 12},
        {"title": "Fish", "env": "commons_v0", "conditions": ["baseline", "no_communication"], "policies": ["sustainable", "greedy"]},
    ],
}
MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "svg": b"<?xml", "pdf": b"%PDF-"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The suite run once, its report built with figures drawn in one process and, on a copy, in two: (serial, parallel)."""
    root = tmp_path_factory.mktemp("figures")
    path = root / "figures.json"
    path.write_text(json.dumps(SUITE), encoding="utf-8")
    serial = root / "serial"
    outcome = run_bench(load_suite(path), serial, workers=2, progress=False, report=False)
    assert outcome.ran == 16 and not outcome.failed
    parallel = root / "parallel"
    shutil.copytree(serial, parallel)
    return build_report(serial, workers=1), build_report(parallel, workers=2)


def group(report, title: str) -> GroupReport:
    return next(g for g in report.groups if g.title == title)


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((folder / "plots").iterdir())}


# ---------------------------------------------------------------------------- the files


def test_every_figure_is_written_as_png_svg_and_pdf_and_linked_from_the_report(runs):
    report, _ = runs
    assert report.plots == {
        "Trade": {k: f"plots/Trade_{k}.png" for k in ("headline", "metrics", "series", "agents", "actions")},
        "Fish": {k: f"plots/Fish_{k}.png" for k in ("headline", "metrics", "series", "agents", "actions", "survival")},
    }
    expected = {f"{title}_{kind}.{fmt}" for title, kinds in report.plots.items() for kind in kinds for fmt in MAGIC}
    found = files(report.folder)
    assert set(found) == expected
    for name, data in found.items():
        assert data.startswith(MAGIC[name.rsplit(".", 1)[1]]), name
        assert len(data) > 5_000, name
    md = (report.folder / "report.md").read_text(encoding="utf-8")
    assert "![headline: Trade](plots/Trade_headline.png)\n\n*Headline metric: mean final wealth (\\$) ↑ (higher is better) over team " \
           "size (agents) and policy; mean and 95% CI over seeds (Student t, drawn from 5 seeds on, within the values a metric can take); dots: single seeds.*" in md
    assert "![series: Fish](plots/Fish_series.png)\n\n*Per month: fish stock at the start of the month (tons; 0 after a collapse)" in md
    assert "Figures (each also as SVG and PDF beside its PNG in `plots/`):" in md
    # the svg and pdf carry no date, so a rebuild is the same file
    assert b"<dc:date>" not in found["Trade_headline.svg"] and b"/CreationDate" not in found["Trade_headline.pdf"]


def test_figures_drawn_in_two_processes_are_the_files_drawn_in_one(runs):
    serial, parallel = runs
    assert serial.workers == 1 and parallel.workers == 2
    assert files(parallel.folder) == files(serial.folder)
    assert (parallel.folder / "report.md").read_bytes() == (serial.folder / "report.md").read_bytes()
    assert "figures" in serial.seconds and "reading logs" in serial.seconds
    assert "report time:" in serial.summary() and "1 worker(s)" in serial.summary()


def test_the_formats_asked_for_are_written_and_older_files_of_the_others_removed(runs):
    """`plots="png"` writes PNGs only (and removes the SVG and PDF an earlier report left beside them, which would
    show older logs); a report of PDFs alone links them (a Markdown viewer does not show a PDF as an image); `none`
    draws nothing and leaves none of the report's figures behind."""
    serial, _ = runs
    folder = serial.folder.parent / "formats"
    shutil.copytree(serial.folder, folder)
    full = files(folder)
    stray = folder / "plots" / "mine.pdf"  # a file the report did not write is the user's: kept
    stray.write_bytes(b"%PDF-")

    report = build_report(folder, plots="png", workers=1)
    assert report.formats == ("png",) and report.plots == serial.plots
    assert files(folder) == {name: data for name, data in full.items() if name.endswith(".png")} | {"mine.pdf": b"%PDF-"}
    md = (folder / "report.md").read_text(encoding="utf-8")
    assert "Figures (as PNG in `plots/`):" in md and "![headline: Trade](plots/Trade_headline.png)" in md
    assert "(PNG) in" in report.summary()

    report = build_report(folder, plots=" PDF,svg ", workers=1)
    assert report.formats == ("svg", "pdf") and report.plots["Trade"]["headline"] == "plots/Trade_headline.svg"
    assert {n for n in files(folder) if n != "mine.pdf"} == {n for n in full if not n.endswith(".png")}
    assert files(folder)["Trade_headline.pdf"] == full["Trade_headline.pdf"]  # the same file whatever else is drawn
    md = (folder / "report.md").read_text(encoding="utf-8")
    assert "Figures (each also as PDF beside its SVG in `plots/`):" in md and "![headline: Trade](plots/Trade_headline.svg)" in md

    build_report(folder, plots="pdf", workers=1)
    md = (folder / "report.md").read_text(encoding="utf-8")
    assert "\n[headline: Trade](plots/Trade_headline.pdf)\n" in md and "![headline" not in md

    report = build_report(folder, plots="none", workers=1)
    assert report.plots == {} and report.formats == () and files(folder) == {"mine.pdf": b"%PDF-"}
    assert "figure(s) (none drawn)" in report.summary() and "figures" not in report.seconds
    md = (folder / "report.md").read_text(encoding="utf-8")
    assert "No figures drawn (plots: none)" in md and "](plots/" not in md

    build_report(folder, workers=1)  # all three again: the same files as the first report
    assert {n: d for n, d in files(folder).items() if n != "mine.pdf"} == full


@pytest.mark.parametrize("plots, why", [("jpg", "unknown format(s) 'jpg'"), ("png,gif", "unknown format(s) 'gif'"),
                                        (",", "no format"), ("", "no format"), ("x" * 500, "...")])
def test_an_unknown_plot_format_is_refused_before_any_episode_runs(tmp_path, plots, why):
    from benchmarks.report import plot_formats
    from teamenvs.core.config import ConfigError

    with pytest.raises(ConfigError, match="plots: .*give a comma-separated list of png, svg, pdf, or none") as info:
        plot_formats(plots)
    assert why in str(info.value) and len(str(info.value)) < 300
    path = tmp_path / "figures.json"
    path.write_text(json.dumps(SUITE), encoding="utf-8")
    with pytest.raises(ConfigError, match="plots: "):
        run_bench(load_suite(path), tmp_path / "out", workers=1, progress=False, plots=plots)
    assert not (tmp_path / "out" / "logs").exists() or not list((tmp_path / "out" / "logs").glob("*.jsonl*"))


# ---------------------------------------------------------------------------- lines or bars


def test_team_sizes_are_drawn_as_lines_and_unordered_conditions_as_bars(runs):
    report, _ = runs
    trade, fish = group(report, "Trade"), group(report, "Fish")
    order = ordered_conditions(trade)
    assert order is not None and order.key == "n_agents" and order.x == {"baseline": 3.0, "group_size_6": 6.0}
    assert order.lines == ["baseline / group_size_6"] and order.label == "team size (agents)"
    fig = DRAW["headline"](trade)
    (ax,) = fig.axes
    lines = {line.get_label(): list(line.get_xdata()) for line in ax.get_lines()}
    assert lines == {"cooperator": [3.0, 6.0], "random": [3.0, 6.0]}  # one line per policy over the team size
    assert ax.get_xlabel() == "team size (agents)" and not ax.patches  # no bars
    # each policy's line has its own dash pattern, so one drawn over an equal one leaves it visible
    styles = {line.get_label(): line.get_linestyle() for line in ax.get_lines() if not line.get_label().startswith("_")}
    assert len(set(styles.values())) == len(styles) == 2, styles
    for g in (trade, fish):
        fig = DRAW["series"](g)
        for ax in fig.axes:
            styles = [line.get_linestyle() for line in ax.get_lines() if not line.get_label().startswith("_")]
            assert len(styles) == len(g.policies) and len(set(styles)) == len(styles), styles

    assert ordered_conditions(fish) is None  # communication on / off: no number between them
    fig = DRAW["headline"](fish)
    (ax,) = fig.axes
    assert not [line for line in ax.get_lines() if not line.get_label().startswith("_")]  # (error bars' caps only)
    assert len(ax.patches) == 4  # a bar per condition x policy
    assert [t.get_text() for t in ax.get_xticklabels()] == ["baseline", "no_communication"]


def settings_group(configs: dict[str, dict], agents: dict[str, int] | None = None, policies=("p",)) -> GroupReport:
    """A group whose conditions have the given configs (one complete episode each per policy)."""
    cells = {}
    for c, config in configs.items():
        n = (agents or {}).get(c, 3)
        for p in policies:
            cells[(c, p)] = [EpisodeRow(path=Path(f"{c}{p}.jsonl"), suite="s", group="g", env="search_rescue_v0", condition=c, preset=None,
                                        overrides={}, policy=p, seed=0, order=(0, 0, 0), status="complete", config=config,
                                        agents=[f"a{i}" for i in range(n)], returns={f"a{i}": 1.0 for i in range(n)},
                                        metrics={"victims_rescued": 35, "steps": 100 + n})]
    return GroupReport("g", "search_rescue_v0", list(configs), list(policies), cells, ["victims_rescued", "steps"],
                       {"victims_rescued": "max", "coverage_cells": "max", "steps": "min"})


def test_the_line_rule_on_hand_made_configs():
    maps = {"easy": {"width": 30, "height": 30, "map_seed": 30}, "hard": {"width": 50, "height": 50, "map_seed": 58}}
    # map x team size (VIRT-LAB Table 3): x = the team size, a line per map
    table3 = {f"{m}+transporters_{n}": dict(cfg, team=["transporter"] * n) for m, cfg in maps.items() for n in (2, 3, 4)}
    order = ordered_conditions(settings_group(table3, {c: int(c[-1]) for c in table3}))
    assert order is not None and order.key == "team size" and order.lines == ["easy", "hard"]
    assert order.x["hard+transporters_3"] == 3.0 and order.series["hard+transporters_3"] == "hard"
    # the map alone: its width (the height and map seed change with it); never the seed
    order = ordered_conditions(settings_group(maps))
    assert order is not None and order.key == "width" and order.label == "map width (cells)" and order.x == {"easy": 30.0, "hard": 50.0}
    # a value that repeats within a line (two scenarios of 13 agents) or that is not a number: bars
    scenarios = {"S2": {"scenario": "S2"}, "S3": {"scenario": "S3"}, "S4": {"scenario": "S4"}}
    assert ordered_conditions(settings_group(scenarios, {"S2": 6, "S3": 13, "S4": 13})) is None
    assert ordered_conditions(settings_group({"a": {"max_words": None}, "b": {"max_words": 15}})) is None
    assert ordered_conditions(settings_group({"a": {"seed_x": 1}, "b": {"seed_x": 2}})) is None
    assert ordered_conditions(settings_group({"only": {"n_agents": 3}})) is None
    # found by review: over two conditions any setting that differs is one to one with the team size, so a change of
    # communication (or of map) was drawn as one line over the team size, an effect of the team's size
    confounded = {"baseline": {"n_agents": 3, "communication": True}, "six, silent": {"n_agents": 6, "communication": False}}
    assert ordered_conditions(settings_group(confounded, {"baseline": 3, "six, silent": 6})) is None
    mixed = {"easy+transporters_5": dict(maps["easy"], team=["transporter"] * 5),
             "hard+transporters_3": dict(maps["hard"], team=["transporter"] * 3)}
    assert ordered_conditions(settings_group(mixed, {"easy+transporters_5": 5, "hard+transporters_3": 3})) is None
    # a setting designed to change with the team size (a shape factory's shapes and orders) goes with it over 3 or more
    sizes = {f"group_size_{n}": {"n_agents": n, "n_shapes": n // 2, "orders_per_agent": n // 2} for n in (4, 6, 8)}
    order = ordered_conditions(settings_group(sizes, {c: int(c.rsplit("_", 1)[1]) for c in sizes}))
    assert order is not None and order.key in ("n_agents", "team size") and len(order.lines) == 1
    # several lines and several policies: a panel per line of conditions
    two = settings_group(table3, {c: int(c[-1]) for c in table3}, policies=("p", "q"))
    fig = DRAW["headline"](two)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["easy", "hard"]
    assert all({line.get_label() for line in ax.get_lines()} >= {"p", "q"} for ax in visible)


def test_the_headline_is_the_first_directed_metric_that_varies():
    g = settings_group({"easy": {"width": 30}, "hard": {"width": 50}})
    g.cells[("hard", "p")][0].metrics["steps"] = 180
    # every victim rescued everywhere: the steps it took
    assert headline_metric(g) == "steps"
    assert caption(g, "headline").startswith("Headline metric: steps (env steps) ↓ (lower is better) over map width (cells) and policy; mean")
    g.cells[("hard", "p")][0].metrics["victims_rescued"] = 30
    assert headline_metric(g) == "victims_rescued"
    g.metrics, g.goals = [], {}
    assert headline_metric(g) == "return"


# ---------------------------------------------------------------------------- values from the logs


def logs_of(report, g: GroupReport, condition: str, policy: str) -> list[list[dict]]:
    return [read_log(r.path) for r in g.cells[(condition, policy)]]


def hand_mean(curves: list[list[float | None]], t: int) -> float | None:
    xs = [c[t] for c in curves if t < len(c) and c[t] is not None]
    return sum(xs) / len(xs) if xs else None


def test_cooperation_per_round_is_the_logs_group_investment_share(runs):
    report, _ = runs
    trade = group(report, "Trade")
    spec = SERIES["day_trader_v0"]
    for c in trade.conditions:
        for p in trade.policies:
            curves = []
            for records in logs_of(report, trade, c, p):
                per_round = []
                for step in records:
                    for e in step.get("events", []) if step["type"] == "step" else []:
                        if e["type"] == "round":
                            kinds = [choice["kind"] for choice in e["choices"].values()]
                            invested = [k for k in kinds if k != "wait"]
                            per_round.append(kinds.count("group") / len(invested) if invested else None)
                curves.append(per_round)
            assert max(len(x) for x in curves) >= 8  # 12 steps: 5 rounds, 3 discussion turns, 4 more rounds
            points = series_points(trade, spec, c, p)
            expected = [(t + 1, hand_mean(curves, t)) for t in range(max(len(x) for x in curves)) if hand_mean(curves, t) is not None]
            assert [(t, pytest.approx(e.mean)) for t, e in points] == expected
            if p == "cooperator":
                assert all(e.mean == 1.0 and (e.lo == e.hi == 1.0 if len(e.points) >= MIN_PAIRS else math.isnan(e.lo))
                           for _, e in points)
    random_means = {e.mean for c in trade.conditions for _, e in series_points(trade, spec, c, "random")}
    assert len(random_means) > 2  # the random traders' share moves from round to round


def test_fish_stock_per_month_is_the_logs_stock_and_zero_after_a_collapse(runs):
    report, _ = runs
    fish = group(report, "Fish")
    spec = SERIES["commons_v0"]
    for c in fish.conditions:
        for p in fish.policies:
            curves = []
            for records in logs_of(report, fish, c, p):
                months = [e for r in records if r["type"] == "step" for e in r.get("events", []) if e["type"] == "month"]
                stock = [float(m["stock_before"]) for m in months]
                if months[-1]["collapsed"]:
                    stock += [0.0] * (12 - len(stock))
                curves.append(stock)
            points = series_points(fish, spec, c, p)
            assert [(t, pytest.approx(e.mean)) for t, e in points] == [(t + 1, hand_mean(curves, t)) for t in range(12)]
    greedy = series_points(fish, spec, "baseline", "greedy")
    assert greedy[0][1].mean == 100 and greedy[-1][1].mean == 0  # the greedy fishers empty the lake
    assert all(e.mean == 100 for _, e in series_points(fish, spec, "baseline", "sustainable"))


def test_each_agents_return_is_the_logs_return(runs):
    report, _ = runs
    for g in report.groups:
        for (c, p), cell in g.cells.items():
            ends = [read_log(r.path)[-1]["returns"] for r in cell]
            got = agent_returns(g, c, p)
            assert list(got) == list(ends[0])
            for agent, e in got.items():
                assert e.mean == pytest.approx(sum(end[agent] for end in ends) / len(ends))
                assert e.points == tuple(end[agent] for end in ends)
                assert e.lo <= e.mean <= e.hi if len(ends) >= MIN_PAIRS else math.isnan(e.lo) and math.isnan(e.hi)
    trade = group(report, "Trade")
    fig = DRAW["agents"](trade)
    assert [ax.get_title() for ax in fig.axes if ax.get_visible()] == ["baseline", "group_size_6"]
    six = [ax for ax in fig.axes if ax.get_title() == "group_size_6"][0]
    assert len([t for t in six.get_xticklabels()]) == 6  # one place per trader


# ---------------------------------------------------------------------------- series from hand-written records


def step(*events, agents=None):
    return {"type": "step", "step": 1, "agents": agents or {}, "events": list(events)}


HEAD = {"type": "header", "env_id": "x", "config": {"months": 5}, "agents": ["a", "b"]}


def test_series_read_from_hand_written_records():
    rounds = [step({"type": "round", "choices": {"a": {"kind": "group"}, "b": {"kind": "individual"}, "c": {"kind": "wait"}}}),
              step({"type": "message"}),
              step({"type": "round", "choices": {"a": {"kind": "wait"}, "b": {"kind": "wait"}}}),
              step({"type": "round", "choices": {"a": {"kind": "group"}, "b": {"kind": "group"}}})]
    assert cooperation_per_round([HEAD, *rounds]) == [0.5, None, 1.0]
    months = [step({"type": "month", "stock_before": 100, "collapsed": False}), step({"type": "month", "stock_before": 60, "collapsed": True})]
    assert stock_per_month([HEAD, *months]) == [100.0, 60.0, 0.0, 0.0, 0.0]  # 5 months, collapsed in the second
    assert stock_per_month([HEAD, months[0]]) == [100.0]  # stopped early without a collapse: no months made up
    votes = [step({"type": "votes", "phase": "initial", "votes": {"a": "A", "b": "C", "c": "A"}, "best": "C"}),
             step({"type": "votes", "phase": "final", "votes": {"a": "C", "b": "C", "c": "C"}, "best": "C"})]
    assert best_candidate_votes([HEAD, *votes]) == [pytest.approx(1 / 3), 1.0]
    drawing = [step(), step({"type": "drawing", "accuracy": 0.25}), step(), step({"type": "drawing", "accuracy": 0.5})]
    assert route_accuracy_per_step([HEAD, *drawing]) == [0.0, 0.25, 0.25, 0.5]
    rescues = [step({"type": "rescued"}), step(), step({"type": "rescued"}, {"type": "rescued"}, {"type": "moved"})]
    assert episode_series("search_rescue_v0", [HEAD, *rescues]) == {"rescued": [1.0, 1.0, 3.0]}
    # fields missing or of the wrong kind: no series, no error
    assert episode_series("day_trader_v0", [HEAD, step({"type": "round", "choices": ["not", "a", "mapping"]})]) == {}
    assert episode_series("job_fair_v0", [HEAD]) == {}


# ---------------------------------------------------------------------------- bad input


def test_bad_input_is_drawn_without_an_error(tmp_path):
    def row(seed, metrics, returns, series):
        return EpisodeRow(path=Path(f"x{seed}.jsonl"), suite="", group="Odd", env="day_trader_v0", condition="c", preset=None, overrides={},
                          policy="only", seed=seed, order=(0, 0, 0), status="complete", metrics=metrics, returns=returns,
                          series=series, config={}, agents=[])

    rows = [row(0, {"gain": float("nan"), "flag": None, "rate": 0.5}, {}, {"cooperation": [None, 1.0]}),
            row(1, {"gain": float("nan"), "rate": float("inf")}, {"a": 2.0}, {"cooperation": []})]
    odd = GroupReport("Odd", "day_trader_v0", ["c"], ["only"], {("c", "only"): rows}, ["rate"], {"gain": "max", "rate": "max"})
    assert figure_kinds(odd) == ["headline", "metrics", "series", "agents", "actions"]
    assert headline_metric(odd) == "rate"
    made = write_figures([odd], tmp_path / "plots", workers=1)
    assert set(made["Odd"]) == set(figure_kinds(odd))
    for kind in made["Odd"]:
        for fmt in MAGIC:
            assert (tmp_path / "plots" / f"{slug('Odd')}_{kind}.{fmt}").read_bytes().startswith(MAGIC[fmt])
    (point,) = series_points(odd, SERIES["day_trader_v0"], "c", "only")
    assert point[0] == 2 and point[1].mean == 1.0  # round 1 had no investment in any seed: no point, not a zero
    assert estimate([float("nan"), None]) is None and estimate([1.0, float("inf")]).points == (1.0,)


def test_an_interval_is_drawn_from_as_many_seeds_as_the_report_marks_one():
    """From 2 seeds a t interval spans 12.7 standard errors each way: it drew a rate in [0, 1] down to -1 and set the
    axis by it. Below MIN_PAIRS seeds an estimate has no interval (NaN: no error bar, no band); the dots show the seeds."""
    from teamenvs.core.metrics import mean_ci

    few = estimate([0.0, 1.0])
    assert few.mean == 0.5 and math.isnan(few.lo) and math.isnan(few.hi) and few.points == (0.0, 1.0)
    assert [[math.isnan(x) for x in side] for side in _errors([few])] == [[True], [True]]
    enough = [0.0, 1.0, 0.0, 1.0, 1.0][:MIN_PAIRS]
    e = estimate(enough)
    assert (e.lo, e.hi) == mean_ci(enough) and _errors([e]) == [[e.mean - e.lo], [e.hi - e.mean]]
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    ax.bar([0], [few.mean], yerr=_errors([few]))
    assert ax.get_ylim()[0] >= 0.0  # no bar below the data


def error_bars(ax) -> list:
    """The (bottom, top) segments of the error bars drawn on `ax`."""
    from matplotlib.container import ErrorbarContainer

    return [seg for c in ax.containers if isinstance(c, ErrorbarContainer) for seg in c.lines[2][0].get_segments()]


def test_an_interval_is_drawn_within_the_values_the_metric_can_take():
    """A rate's t interval from four 1s and a 0 runs from 0.24 to 1.36: drawn as it is, it said the rate could be above
    1. The paradigm's `metric_bounds` (shares 0 to 1) cut it where the mean must lie; an unbounded metric keeps it."""
    from teamenvs.core.metrics import mean_ci, metric_bounds

    rates = [1.0, 1.0, 1.0, 1.0, 0.0]
    lo, hi = mean_ci(rates)
    assert lo < 0.25 and hi > 1.35
    bounds = metric_bounds("day_trader_v0")
    assert bounds["cooperation_rate"] == (0.0, 1.0) and "mean_final_wealth" not in bounds
    cells = {("c", "p"): [EpisodeRow(path=Path(f"{i}.jsonl"), suite="s", group="g", env="day_trader_v0", condition="c", preset=None,
                                     overrides={}, policy="p", seed=i, order=(0, 0, 0), status="complete", config={},
                                     agents=["a"], returns={"a": 1.0}, metrics={"cooperation_rate": r, "mean_final_wealth": r})
                          for i, r in enumerate(rates)]}
    (g,) = group_rows([row for cell in cells.values() for row in cell])
    assert g.bounds == bounds
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    draw_bars(ax, g, "cooperation_rate")
    (bar,) = error_bars(ax)
    assert [y for _, y in bar] == pytest.approx([lo, 1.0])  # cut at 1, the bottom as t gives it
    ax = Figure().subplots()
    draw_bars(ax, g, "mean_final_wealth")
    (bar,) = error_bars(ax)
    assert [y for _, y in bar] == pytest.approx([lo, hi])
    # a per-round share: the series' bounds; a return that is a share (the map task's route accuracy, the hidden profile's
    # 1 for the best candidate): the return panel's
    assert SERIES["day_trader_v0"].bounds == (0.0, 1.0) and estimate(rates, (0.0, 1.0)).hi == 1.0
    assert metric_bounds("map_task_v0")["return"] == metric_bounds("hidden_profile_v0")["return"] == (0.0, 1.0)
    assert "return" not in bounds


def test_control_characters_of_suite_text_are_drawn_as_escapes():
    """Titles and labels come from suite files: an ESC drew a missing-glyph box (and a warning per figure)."""
    from matplotlib.figure import Figure

    from benchmarks.figures import _finish, wrap

    fig = Figure()
    ax = fig.add_subplot()
    ax.bar([0], [1], label="co\x1b[31mop")
    ax.set_title(wrap("cond\x07ition"))
    _finish(fig, "Trade \x1b[31m red", [ax])
    assert fig._suptitle.get_text() == "Trade \\x1b[31m red" and ax.get_title() == "cond\\x07ition"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["co\\x1b[31mop"]


def test_agent_names_from_a_log_are_drawn_as_escapes():
    """Found by review: the agents and actions figures took agent names as tick labels unescaped, and a lone surrogate
    in a (foreign or edited) log's agent name made matplotlib raise, so `teamenvs report` stopped with a traceback."""
    from benchmarks.figures import actions_figure, agents_figure

    odd = "t\ud800\x1b[2J"
    rows = [EpisodeRow(path=Path(f"x{seed}.jsonl"), suite="", group="Odd", env="day_trader_v0", condition="c", preset=None,
                       overrides={}, policy="only", seed=seed, order=(0, 0, 0), status="complete", metrics={"rate": 0.5},
                       returns={odd: 1.0 + seed, "b": 2.0}, series={}, config={}, agents=[odd, "b"], actions={odd: Counter({"wait": 1})})
            for seed in (0, 1)]
    g = GroupReport("Odd", "day_trader_v0", ["c"], ["only"], {("c", "only"): rows}, ["rate"], {"rate": "max"})
    for draw in (agents_figure, actions_figure):
        ticks = [t.get_text() for ax in draw(g).axes for t in ax.get_xticklabels()]
        assert "t\\ud800\\x1b[2J" in ticks and not any("\x1b" in t for t in ticks), draw.__name__


def test_survival_curves_that_coincide_stay_visible():
    """Found by review: two policies whose fisheries all lasted drew one curve over the other, in the same style: the
    first was in the legend and nowhere in the figure. Each curve is now drawn thinner than those under it."""
    from benchmarks.figures import survival_figure

    cells = {("baseline", p): [EpisodeRow(path=Path(f"{p}{s}.jsonl"), suite="s", group="g", env="commons_v0",
                                          condition="baseline", preset=None, overrides={}, policy=p, seed=s, order=(0, 0, 0),
                                          status="complete", months=12, metrics={"survival_time": 12, "survived": True})
                                for s in range(3)] for p in ("llm", "scripted")}
    fig = survival_figure(GroupReport("Fish", "commons_v0", ["baseline"], ["llm", "scripted"], cells, ["survival_time"],
                                      {"survival_time": "max"}))
    lines = [line for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
    assert [line.get_label() for line in lines] == ["llm · baseline", "scripted · baseline"]
    assert list(lines[0].get_ydata()) == list(lines[1].get_ydata())  # the same curve ...
    assert lines[0].get_linewidth() > 2 * lines[1].get_linewidth() - 1e-9 and lines[0].get_zorder() < lines[1].get_zorder()


def test_the_metrics_figure_leaves_out_metrics_that_repeat_one_before_them():
    """Found by review: the job fair's identification, workflow, assignment and overall success (and its rate) were 1/0/0
    alike in every episode and took all five panels, leaving out misplacement and fill rate, which told the policies
    apart. A metric that is a linear function of one already drawn (the same panel rescaled or flipped) is left out."""
    from benchmarks.figures import plotted_metrics

    def row(policy, seed, m):
        return EpisodeRow(path=Path(f"{policy}{seed}.jsonl"), suite="s", group="g", env="job_fair_v0", condition="c",
                          preset=None, overrides={}, policy=policy, seed=seed, order=(0, 0, 0), status="complete",
                          returns={"a": 1.0}, metrics=m)

    cells = {("c", p): [row(p, s, {"found": ok, "success": ok, "rate": ok / 2, "failed": 1 - ok, "fill": fill})
                        for s, (ok, fill) in enumerate(values)]
             for p, values in (("llm", [(1, 0.2), (0, 0.9)]), ("random", [(0, 0.5), (1, 0.4)]))}
    goals = {"found": "max", "success": "max", "rate": "max", "failed": "min", "fill": "max"}
    g = GroupReport("g", "job_fair_v0", ["c"], ["llm", "random"], cells, list(goals), goals)
    assert plotted_metrics(g) == ["return", "found", "fill"]
