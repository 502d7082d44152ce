"""The figures of a bench report, drawn from each group's episode rows (`benchmarks.report`).

Per group, each written as PNG (which report.md links), SVG and PDF (`write_figures(..., formats)`: those asked for):

- `headline`: the group's headline metric (`headline_metric`) per condition and policy: the mean
  with its 95% Student-t CI over seeds (from `MIN_PAIRS` seeds on), each seed a dot. Conditions that differ by one number of
  their config (team size, map width: `ordered_conditions`) are drawn as lines over that number,
  one per policy, with CI bands; other conditions as bars;
- `metrics`: the mean return and the first five metrics with a direction that vary in the group, drawn the same way;
- `series`: the paradigm's per-round quantity (`report.SERIES`: cooperation per round, fish stock
  per month, ...), one panel per condition, one line per policy with its CI band;
- `agents`: each agent's return per condition and policy, with CIs;
- `actions`: accepted actions per agent by command (as VIRT-LAB Fig. 9);
- `survival`: survival curves, where episodes report `survival_time` (the commons).

The files are the same byte for byte on every rebuild (no dates in the SVG and PDF, a fixed SVG
id salt), whether drawn in one process or in several (`write_figures(..., workers)`).
"""

from __future__ import annotations

import io
import json
import math
import textwrap
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import matplotlib
from matplotlib.figure import Figure

from benchmarks.report import MAX_MONTHS, MIN_PAIRS, PLOT_FORMATS, SERIES, EpisodeRow, GroupReport, Series, _is_number, _team_return, constant_metrics, survival_curve, values
from benchmarks.suite import slug
from teamenvs.core.files import write_whole
from teamenvs.core.metrics import flatten, mean_ci
from teamenvs.core.text import printable

FORMATS = PLOT_FORMATS
DPI = 110  # PNG resolution: sharp on screen, small files; SVG and PDF are the ones for print
CI_TEXT = f"mean and 95% CI over seeds (Student t, drawn from {MIN_PAIRS} seeds on, within the values a metric can take)"
STYLE = {
    "text.parse_math": False,  # labels are plain text: "$5 vs $10", "\\x" must not parse as TeX
    "svg.hashsalt": "teamenvs",  # SVG element ids from a fixed salt, not a random one: the same file on every rebuild
    "pdf.fonttype": 42,  # TrueType fonts in the PDF, as journals ask
    "svg.fonttype": "none",  # text in the SVG as text: editable, smaller, and quicker to write than glyph outlines
    "font.size": 9, "axes.titlesize": 9.5, "axes.labelsize": 9, "xtick.labelsize": 8, "ytick.labelsize": 8,
    "legend.fontsize": 8, "legend.title_fontsize": 8.5, "figure.titlesize": 10.5,
    "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True, "axes.axisbelow": True,
    "grid.alpha": 0.35, "grid.linewidth": 0.5,
}
# the headline metrics of paradigms whose first metric is the same in most groups (every victim rescued):
# tried first, in order; every other metric in the order the paradigm's `metric_goals` lists them
HEADLINES = {"search_rescue_v0": ("victims_rescued", "steps"), "job_fair_v0": ("overall_success",)}
UNITS = {"return": "mean per agent", "mean_final_wealth": "$", "mean_wealth": "$", "mean_group_pool": "$", "collabsim_group_pool": "$", "group_pool_per_round": "$", "survival_time": "months",
         "total_gain": "tons", "steps": "env steps", "points": "points"}
MAX_SERIES_POINTS = 100  # a step-by-step curve is drawn at this many steps at most
TEAM_SIZE = "team size"  # the number of agents in a log's header, as a config value


# ---------------------------------------------------------------------- numbers
@dataclass(frozen=True)
class Estimate:
    """A cell's mean over seeds, its 95% CI (NaN, not drawn, from fewer than `MIN_PAIRS` seeds), and the seeds' values."""

    mean: float
    lo: float
    hi: float
    points: tuple[float, ...]


def estimate(xs: Sequence[Any], bounds: tuple[float, float] | None = None) -> Estimate | None:
    """Mean and 95% CI (`mean_ci`, as the report's paired comparison) of the finite numbers in `xs`; None if none. With
    `bounds` (the least and most a value can be: `metric_bounds`), the interval is cut to them, where the mean lies: the
    t interval of a rate from five seeds, four 1s and a 0, runs from 0.24 to 1.36, and the true rate is at most 1."""
    finite = [float(x) for x in xs if _is_number(x) and math.isfinite(float(x))]
    if not finite:
        return None
    # From 2 seeds a t interval is 12.7 standard errors wide each way: drawn, it ran a rate in [0, 1] down to -1 and
    # set the axis by it. Below MIN_PAIRS seeds (where the report marks no difference either) the dots show the spread.
    lo, hi = mean_ci(finite) if len(finite) >= MIN_PAIRS else (math.nan, math.nan)
    if bounds is not None and not math.isnan(lo):
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return Estimate(sum(finite) / len(finite), lo, hi, tuple(finite))


def cell_values(rows: Sequence[EpisodeRow], metric: str) -> list[float]:
    return [_team_return(r) for r in rows] if metric == "return" else values(rows, metric)


MAX_METRIC_PANELS = 6  # the metrics figure's panels: every panel costs drawing time in three formats; report.md has them all


def plotted_metrics(g: GroupReport) -> list[str]:
    """The mean return per agent and the first metrics with a direction (↑ / ↓, in the paradigm's order) that vary in the
    group, less any that says what one before it says (`_same_story`: the job fair's identification, workflow,
    assignment and overall success, 1/0/0 alike in every episode, had taken five panels and left out the metrics that
    told the policies apart)."""
    constant = constant_metrics(g)
    directed = [m for m in g.goals if m in g.metrics and m not in constant and cell_values(g.rows, m)]
    chosen: list[str] = []
    for metric in directed:
        if not any(_same_story(g.rows, metric, other) for other in chosen):
            chosen.append(metric)
    return ["return", *chosen][:MAX_METRIC_PANELS]


def _same_story(rows: Sequence[EpisodeRow], a: str, b: str) -> bool:
    """Whether metrics `a` and `b` are given in the same episodes and one is a linear function of the other over them
    (a correlation of +-1: the same panel, rescaled or flipped)."""
    pairs = [(r.metrics.get(a), r.metrics.get(b)) for r in rows]
    if any(_is_number(x) != _is_number(y) for x, y in pairs):
        return False
    given = [(float(x), float(y)) for x, y in pairs if _is_number(x)]
    if len(given) < 2:
        return False
    xs, ys = [x for x, _ in given], [y for _, y in given]
    mx, my = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx, syy = math.fsum((x - mx) ** 2 for x in xs), math.fsum((y - my) ** 2 for y in ys)
    return sxx > 0 and syy > 0 and abs(sxy) >= (1 - 1e-9) * math.sqrt(sxx * syy)


def headline_metric(g: GroupReport) -> str:
    """The group's headline: of its paradigm's metrics with a direction (`HEADLINES` first, then the paradigm's order),
    the first that varies over the group's episodes; else the first it has; else the mean return per agent."""
    ranked = [m for m in dict.fromkeys([*HEADLINES.get(g.env, ()), *g.goals]) if m in g.metrics and cell_values(g.rows, m)]
    varying = [m for m in ranked if len(set(cell_values(g.rows, m))) > 1]
    return (varying or ranked or ["return"])[0]


def metric_label(metric: str, goal: str | None, long: bool = False) -> str:
    """A metric in words, with its unit and direction: 'mean final wealth ($) ↑ (higher is better)'."""
    unit = UNITS.get(metric)
    arrow = {"max": " ↑", "min": " ↓"}.get(goal or "", "")
    better = {"max": " (higher is better)", "min": " (lower is better)"}.get(goal or "", "") if long else ""
    return f"{metric.replace('_', ' ')}{f' ({unit})' if unit else ''}{arrow}{better}"


def wrap(text: str, width: int = 16) -> str:
    """A condition's or agent's name on short lines: broken after '+', then at '_' or spaces (control characters
    shown as escapes: titles and labels come from suite files)."""
    parts = printable(text).replace("+", "+\n").split("\n")
    return "\n".join(p if len(p) <= width else textwrap.fill(p.replace("_", "_ "), width).replace("_ ", "_") for p in parts)


# ---------------------------------------------------------------------- ordered conditions
@dataclass(frozen=True)
class Ordering:
    """Conditions that differ by one number of their config: x positions, and the line each condition is on."""

    key: str  # the config value on the x axis
    x: dict[str, float]  # condition -> its value
    series: dict[str, str]  # condition -> the name of its line (conditions alike in every other setting share one)

    @property
    def lines(self) -> list[str]:
        return list(dict.fromkeys(self.series.values()))

    @property
    def label(self) -> str:
        words = {"n_agents": "team size (agents)", TEAM_SIZE: "team size (agents)", "width": "map width (cells)", "height": "map height (cells)"}
        return words.get(self.key, self.key.replace("_", " "))


def condition_settings(g: GroupReport) -> dict[str, dict[str, Any]]:
    """Per condition, its config as the logs' headers give it (flattened), plus the team size."""
    out = {}
    for c in g.conditions:
        row = next((r for p in g.policies for r in g.cells.get((c, p), [])), None)
        settings = flatten(row.config) if row is not None else {}
        settings[TEAM_SIZE] = len(row.agents) if row is not None and row.agents else None
        out[c] = settings
    return out


def _plain_number(v: Any) -> bool:
    return _is_number(v) and not isinstance(v, bool) and math.isfinite(v)


def _one_to_one(text: dict[str, dict[str, str]], conditions: Sequence[str], a: str, b: str) -> bool:
    pairs = {(text[c][a], text[c][b]) for c in conditions}
    return len(pairs) == len({p[0] for p in pairs}) == len({p[1] for p in pairs})


# Settings that are one dimension together: a companion of the x axis in one of these goes with it whatever the number of
# conditions (a map's height with its width; a team list with the team size)
COMPANIONS = (frozenset({"n_agents", TEAM_SIZE, "team"}), frozenset({"width", "height", "complexity", "map_seed"}))


def _goes_with(text: dict[str, dict[str, str]], conditions: Sequence[str], key: str, other: str) -> bool:
    """Whether `other` changes with the x axis `key` as part of it: one to one with it, and either of its dimension
    (`COMPANIONS`) or so over at least three values of `key` (a shape factory's shapes and orders with its group size). Over
    two values any setting that differs is one to one with the x, and drawing them as one line would show a change of
    communication, say, as an effect of the team's size."""
    if not _one_to_one(text, conditions, key, other):
        return False
    return (any(key in group and other in group for group in COMPANIONS)
            or len({text[c][key] for c in conditions}) >= 3)


def _line_name(conditions: Sequence[str]) -> str:
    """A line's name: what its conditions' names share ('easy' of easy+transporters_2..5), else the names."""
    tokens = [c.split("+") for c in conditions]
    common = [t for t in tokens[0] if all(t in other for other in tokens[1:])]
    return "+".join(common) if common and len(conditions) > 1 else " / ".join(conditions)


def ordered_conditions(g: GroupReport) -> Ordering | None:
    """How to draw the group's conditions as lines, or None (bars).

    The x axis is a config value that is a number in every condition and differs between them (the team
    size first, then in config order; never a seed). Values that change with it as part of it (`_goes_with`: a map's
    height with its width) go with it; conditions alike in every other value form one line. Lines are
    drawn when no line has two conditions at one x and some line has two or more conditions.
    """
    if len(g.conditions) < 2:
        return None
    settings = condition_settings(g)
    keys = list(dict.fromkeys(k for s in settings.values() for k in s))
    text = {c: {k: json.dumps(settings[c].get(k), sort_keys=True, default=str) for k in keys} for c in g.conditions}
    varying = [k for k in keys if len({text[c][k] for c in g.conditions}) > 1]
    numeric = [k for k in varying if "seed" not in k and all(_plain_number(settings[c].get(k)) for c in g.conditions)]
    numeric.sort(key=lambda k: k not in ("n_agents", TEAM_SIZE))  # stable: team size first, then config order
    for key in numeric:
        rest = [k for k in varying if k != key and not _goes_with(text, g.conditions, key, k)]
        lines: dict[tuple[str, ...], list[str]] = {}
        for c in g.conditions:
            lines.setdefault(tuple(text[c][k] for k in rest), []).append(c)
        xs = [[settings[c][key] for c in members] for members in lines.values()]
        if all(len(set(x)) == len(x) for x in xs) and any(len(x) > 1 for x in xs):
            names = {c: _line_name(members) for members in lines.values() for c in members}
            return Ordering(key, {c: float(settings[c][key]) for c in g.conditions}, names)
    return None


# ---------------------------------------------------------------------- drawing helpers
def _figure(width: float, height: float) -> Figure:
    """A matplotlib Figure drawn off-screen without pyplot, so a notebook's own backend is left alone."""
    # at the PNG's resolution, so the PNG reuses the text measured for the layout
    return Figure(figsize=(min(width, 18.0), min(height, 30.0)), dpi=DPI, layout="constrained")


def _colour(i: int) -> Any:
    return matplotlib.colormaps["tab10"](i % 10)


def _grid(n: int, cols: int) -> tuple[int, int]:
    cols = max(1, min(cols, n))
    return -(-n // cols), cols


def _spread(n: int, width: float) -> list[float]:
    """Fixed horizontal offsets for n seed dots, so they do not sit on each other (no random jitter: same files every time)."""
    return [0.0] if n == 1 else [width * (i / (n - 1) - 0.5) for i in range(n)]


def _errors(es: Sequence[Estimate]) -> list[list[float]]:
    """Error bar lengths below and above each mean; NaN (no bar) where the estimate has no interval."""
    return [[max(0.0, e.mean - e.lo) if e.lo == e.lo else math.nan for e in es],
            [max(0.0, e.hi - e.mean) if e.hi == e.hi else math.nan for e in es]]


def _finish(fig: Figure, title: str, axes: Sequence[Any], legend_title: str | None = None, handles: Sequence[Any] = (),
            labels: Sequence[str] = ()) -> None:
    """The title, wrapped to the figure's width, and one legend under the axes (outside the data), each label once."""
    from matplotlib.ticker import MaxNLocator

    for ax in fig.axes:
        ax.yaxis.set_major_locator(MaxNLocator(nbins=5))  # fewer tick labels: enough to read, less to draw three times
    width = fig.get_figwidth()
    fig.suptitle("\n".join(textwrap.fill(line, max(40, int(width * 12))) for line in printable(title).split("\n")))
    seen: dict[str, Any] = dict(zip(map(printable, labels), handles))
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(printable(label), handle)
    if seen:
        longest = max(len(t) for t in seen)
        ncol = max(1, min(len(seen), int(width * 72 / (longest * 5.2 + 40))))
        fig.legend(list(seen.values()), list(seen), loc="outside lower center", ncol=ncol, title=legend_title, frameon=False)


def _bottom_labels(axes: Any, n: int, label: str) -> None:
    """In a grid sharing its x axis, the tick labels and the axis label under the lowest panel of each column."""
    nrows, ncols = axes.shape
    for i, ax in enumerate(axes.flat[:n]):
        lowest = i + ncols >= n  # no panel drawn below this one
        ax.xaxis.set_tick_params(labelbottom=lowest)
        ax.set_xlabel(label if lowest else "")


TICK_CHAR_INCHES = 0.075  # the width of a tick label's character at the figures' font size, about


def _condition_ticks(ax: Any, conditions: Sequence[str]) -> None:
    """Condition names under the bars, slanted where there are many or where, side by side, their longest lines would
    not fit the panel (the hidden profile's "communication_" beside "generated" had read as one word)."""
    labels = [wrap(c) for c in conditions]
    longest = max((len(line) for label in labels for line in label.split("\n")), default=0)
    panel = ax.get_position().width * ax.figure.get_figwidth()  # inches
    many = len(conditions) > 4 or len(conditions) * (longest + 2) * TICK_CHAR_INCHES > panel
    ax.set_xticks(range(len(conditions)), labels, rotation=30 if many else 0, ha="right" if many else "center")
    ax.grid(False, axis="x")


def draw_bars(ax: Any, g: GroupReport, metric: str, dots: bool = True) -> None:
    """Conditions on the x axis, a bar per policy: the mean with its CI as error bar, the seeds as dots (with `dots`
    False, only for a cell whose estimate has no interval, so its spread still shows)."""
    width = 0.8 / len(g.policies)
    for j, p in enumerate(g.policies):
        xs, es = [], []
        for i, c in enumerate(g.conditions):
            e = estimate(cell_values(g.cells.get((c, p), []), metric), g.bounds.get(metric))
            if e is not None:
                xs.append(i - 0.4 + width * (j + 0.5))
                es.append(e)
        if not es:
            continue
        ax.bar(xs, [e.mean for e in es], width * 0.92, color=_colour(j), alpha=0.85, label=p,
               yerr=_errors(es), capsize=2.5, error_kw={"elinewidth": 1.0, "ecolor": "0.15"})
        for x, e in zip(xs, es):
            if dots or math.isnan(e.lo):
                ax.scatter([x + d for d in _spread(len(e.points), width * 0.5)], e.points, s=7, color="0.1", alpha=0.45,
                           linewidths=0, zorder=3)
    _condition_ticks(ax, g.conditions)


@dataclass(frozen=True)
class Line:
    label: str
    colour: Any
    points: list[tuple[float, Estimate]]


def line_points(g: GroupReport, metric: str, order: Ordering, policy: str, series: str) -> list[tuple[float, Estimate]]:
    """(x, estimate) of one policy on one line of conditions, in x order."""
    out = []
    for c in g.conditions:
        if order.series[c] == series:
            e = estimate(cell_values(g.cells.get((c, policy), []), metric), g.bounds.get(metric))
            if e is not None:
                out.append((order.x[c], e))
    return sorted(out, key=lambda p: p[0])


LINE_STYLES = ("-", "--", ":", "-.")
"""Dash patterns of the lines of one panel, in order (the survival figure's conditions use them too)."""


def draw_lines(ax: Any, lines: Sequence[Line], dots: bool = True, span: float = 1.0) -> None:
    """Each line: the means joined, the CI as a band (an error bar where it has one point), the seeds as dots (with
    `dots` False, only at points whose estimate has no interval).
    Each line has its own dash pattern as well as its colour, so a line drawn over an equal one (two policies
    that both rescue no one) still shows the one beneath."""
    for k, line in enumerate(lines):
        if not line.points:
            continue
        xs = [x for x, _ in line.points]
        es = [e for _, e in line.points]
        ax.plot(xs, [e.mean for e in es], marker="o", markersize=4, linewidth=1.6, color=line.colour, label=line.label,
                linestyle=LINE_STYLES[k % len(LINE_STYLES)])
        if len(xs) > 1:
            ax.fill_between(xs, [e.lo for e in es], [e.hi for e in es], color=line.colour, alpha=0.15, linewidth=0)
        else:
            ax.errorbar(xs, [e.mean for e in es], yerr=_errors(es), color=line.colour, capsize=3, linewidth=1.2)
        shift = span * 0.025 * (k - (len(lines) - 1) / 2)  # each line's dots a little aside, so lines' seeds do not hide each other
        for x, e in zip(xs, es):
            if dots or math.isnan(e.lo):
                ax.scatter([x + shift + d for d in _spread(len(e.points), span * 0.02)], e.points, s=7, color=line.colour,
                           alpha=0.5, linewidths=0, zorder=3)


def _line_panels(g: GroupReport, metric: str, order: Ordering) -> list[tuple[str, list[Line]]]:
    """(panel title, its lines): one panel with a line per policy or per line of conditions, or, when there
    are several of both, a panel per line of conditions with a line per policy."""
    if len(g.policies) == 1:
        p = g.policies[0]
        return [("", [Line(s, _colour(i), line_points(g, metric, order, p, s)) for i, s in enumerate(order.lines)])]
    return [(s if len(order.lines) > 1 else "", [Line(p, _colour(j), line_points(g, metric, order, p, s)) for j, p in enumerate(g.policies)])
            for s in order.lines]


def _x_ticks(ax: Any, order: Ordering, conditions: Sequence[str]) -> None:
    """Ticks at the x values; with the condition's name where one condition sits at each."""
    xs = sorted({order.x[c] for c in conditions})
    named = len(xs) == len(conditions)
    labels = [f"{x:g}" + (f"\n{wrap(next(c for c in conditions if order.x[c] == x))}" if named else "") for x in xs]
    ax.set_xticks(xs, labels)
    if len(xs) == 1:
        ax.set_xlim(xs[0] - 1, xs[0] + 1)


# ---------------------------------------------------------------------- the figures
def headline_figure(g: GroupReport) -> Figure:
    metric = headline_metric(g)
    goal = g.goals.get(metric)
    order = ordered_conditions(g)
    title = f"{g.title}\n{metric_label(metric, goal)}: {CI_TEXT}; dots: single seeds"
    if order is None:
        fig = _figure(max(6.5, 1.2 + 0.32 * len(g.conditions) * len(g.policies)), 4.8)
        ax = fig.subplots()
        draw_bars(ax, g, metric)
        ax.set_xlabel("condition")
        ax.set_ylabel(wrap(metric_label(metric, goal, long=True), 40))
    else:
        panels = _line_panels(g, metric, order)
        nrows, ncols = _grid(len(panels), 3)
        fig = _figure(6.5 if ncols == 1 else 4.0 * ncols + 0.4, 1.5 + 3.4 * nrows)
        axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
        for ax, (name, lines) in zip(axes.flat, panels):
            members = [c for c in g.conditions if not name or order.series[c] == name]
            xs = [order.x[c] for c in members]
            draw_lines(ax, lines, span=max(xs) - min(xs) or 2.0)  # a panel of one x is 2 wide (_x_ticks)
            _x_ticks(ax, order, members)
            ax.set_title(wrap(name, 44))
            ax.set_xlabel(order.label)
        for ax in axes[:, 0]:
            ax.set_ylabel(wrap(metric_label(metric, goal, long=True), 40))
        for ax in list(axes.flat)[len(panels):]:
            ax.set_visible(False)
    _finish(fig, title, fig.axes, "policy" if len(g.policies) > 1 or order is None else "conditions")
    return fig


def metrics_figure(g: GroupReport) -> Figure:
    """Every metric that varies, a panel each: lines where the conditions are ordered and fit one panel, else bars."""
    metrics = plotted_metrics(g)
    order = ordered_conditions(g)
    as_lines = order is not None and (len(g.policies) == 1 or len(order.lines) == 1)
    nrows, ncols = _grid(len(metrics), 3)
    panel_width = 3.4 if as_lines else max(3.4, 0.9 + 0.13 * len(g.conditions) * len(g.policies))
    fig = _figure(panel_width * ncols + 0.4, 2.9 * nrows + 1.4)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, metric in zip(axes.flat, metrics):
        if as_lines and order is not None:
            (_, lines), = _line_panels(g, metric, order)
            draw_lines(ax, lines, dots=False)
            if len(order.lines) == 1:
                _x_ticks(ax, order, g.conditions)
            else:
                ax.set_xticks(sorted(set(order.x.values())))
            ax.set_xlabel(order.label)
        else:
            draw_bars(ax, g, metric, dots=False)
        ax.set_title(wrap(metric_label(metric, g.goals.get(metric)), 40))
    for ax in list(axes.flat)[len(metrics):]:
        ax.set_visible(False)
    _finish(fig, f"{g.title}: the mean return and the metrics with a direction (↑ / ↓: higher / lower is better)\n{CI_TEXT}", [axes.flat[0]],
            "policy" if len(g.policies) > 1 or not as_lines else "conditions")
    return fig


def series_horizon(g: GroupReport, spec: Series) -> int:
    return min(max((len(r.series.get(spec.name) or []) for r in g.rows), default=0), 100 * MAX_MONTHS)


def series_points(g: GroupReport, spec: Series, condition: str, policy: str) -> list[tuple[int, Estimate]]:
    """(round, estimate over the seeds) of one cell's series, at up to MAX_SERIES_POINTS rounds (1-based).

    An episode that ended sooner counts, after its end, by `spec.after_end`: its last value, or not at all.
    """
    horizon = series_horizon(g, spec)
    curves = []
    for r in g.cells.get((condition, policy), []):
        curve = list(r.series.get(spec.name) or [])
        if spec.after_end == "last" and curve:
            curve += [curve[-1]] * (horizon - len(curve))
        curves.append(curve)
    step = max(1, math.ceil(horizon / MAX_SERIES_POINTS))
    ts = sorted(set(range(0, horizon, step)) | ({horizon - 1} if horizon else set()))
    out = []
    for t in ts:
        e = estimate([c[t] for c in curves if t < len(c) and c[t] is not None], spec.bounds)
        if e is not None:
            out.append((t + 1, e))
    return out


def series_figure(g: GroupReport) -> Figure:
    spec = SERIES[g.env]
    cells = [c for c in g.conditions if any((c, p) in g.cells for p in g.policies)]
    nrows, ncols = _grid(len(cells), 3)
    fig = _figure(max(6.5, 4.0 * ncols + 0.4), 3.0 * nrows + 1.5)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    horizon = series_horizon(g, spec)
    for ax, c in zip(axes.flat, cells):
        lines = [Line(p, _colour(j), [(float(t), e) for t, e in series_points(g, spec, c, p)]) for j, p in enumerate(g.policies)]
        draw_lines(ax, lines, dots=False)
        for line in ax.get_lines():
            if len(line.get_xdata()) > 12:
                line.set_marker("")  # a long curve: markers would be a thick smear
        ax.set_title(wrap(c, 44))
        if spec.ticks and horizon <= len(spec.ticks):
            ax.set_xticks(range(1, horizon + 1), spec.ticks[:horizon])
            ax.set_xlim(0.7, horizon + 0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel(wrap(spec.title, 36))
    for ax in list(axes.flat)[len(cells):]:
        ax.set_visible(False)
    _bottom_labels(axes, len(cells), spec.x_label)
    _finish(fig, f"{g.title}: {spec.title}, per {spec.x_label}\n{CI_TEXT} as band", list(axes.flat), "policy")
    return fig


def _agents(rows: Sequence[EpisodeRow]) -> list[str]:
    return list(dict.fromkeys(a for r in rows for a in r.returns))


def agent_returns(g: GroupReport, condition: str, policy: str) -> dict[str, Estimate]:
    """Each agent's return in one cell: the mean over seeds with its 95% CI."""
    rows = g.cells.get((condition, policy), [])
    out = {}
    for a in _agents(rows):
        e = estimate([r.returns[a] for r in rows if a in r.returns])
        if e is not None:
            out[a] = e
    return out


def agents_figure(g: GroupReport) -> Figure:
    """Per condition, each agent's return: a bar per policy with its CI."""
    cells = [c for c in g.conditions if any((c, p) in g.cells for p in g.policies)]
    most = max((len(_agents([r for p in g.policies for r in g.cells.get((c, p), [])])) for c in cells), default=1)
    panel_width = max(3.6, 0.8 + 0.16 * most * len(g.policies))
    nrows, ncols = _grid(len(cells), max(1, min(3, int(13 // panel_width))))
    fig = _figure(max(6.5, panel_width * ncols + 0.4), 3.0 * nrows + 1.5)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)  # one scale: the conditions compare at a glance
    width = 0.8 / len(g.policies)
    for ax, c in zip(axes.flat, cells):
        agents = _agents([r for p in g.policies for r in g.cells.get((c, p), [])])
        for j, p in enumerate(g.policies):
            per_agent = agent_returns(g, c, p)
            shown = [(i, per_agent[a]) for i, a in enumerate(agents) if a in per_agent]
            if shown:
                ax.bar([i - 0.4 + width * (j + 0.5) for i, _ in shown], [e.mean for _, e in shown], width * 0.92, color=_colour(j),
                       alpha=0.85, label=p, yerr=_errors([e for _, e in shown]), capsize=2, error_kw={"elinewidth": 0.9, "ecolor": "0.15"})
        many = len(agents) > 4
        ax.set_xticks(range(len(agents)), [printable(a) for a in agents], rotation=45 if many else 0, ha="right" if many else "center")
        ax.grid(False, axis="x")
        ax.set_title(wrap(c, 44))
    for ax in axes[:, 0]:
        ax.set_ylabel("return per episode")
    for ax in list(axes.flat)[len(cells):]:
        ax.set_visible(False)
    _finish(fig, f"{g.title}: return per agent\n{CI_TEXT}", list(axes.flat), "policy")
    return fig


def actions_figure(g: GroupReport) -> Figure:
    """Per cell, accepted actions per agent by command (mean per episode), stacked: VIRT-LAB Fig. 9's breakdown."""
    from matplotlib.patches import Rectangle

    cells = [(c, p) for c in g.conditions for p in g.policies if (c, p) in g.cells]
    commands = sorted({cmd for r in g.rows for counts in r.actions.values() for cmd in counts})
    most = max((len(_agents(g.cells[cell])) for cell in cells), default=1)
    panel_width = max(3.2, 0.8 + 0.3 * most)
    nrows, ncols = _grid(len(cells), max(1, min(4, int(14 // panel_width))))
    fig = _figure(max(6.5, panel_width * ncols + 0.4), 2.8 * nrows + 1.6)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
    colours = matplotlib.colormaps["tab20"]
    top = 1.0
    for ax, (c, p) in zip(axes.flat, cells):
        cell = g.cells[(c, p)]
        agents = _agents(cell)
        bottom = [0.0] * len(agents)
        for k, cmd in enumerate(commands):
            heights = [sum(r.actions.get(a, Counter())[cmd] for r in cell) / len(cell) for a in agents]
            drawn = [i for i, h in enumerate(heights) if h > 0]  # no empty bars: they cost drawing time and show nothing
            if drawn:
                ax.bar(drawn, [heights[i] for i in drawn], bottom=[bottom[i] for i in drawn], color=colours(k % 20), width=0.75)
            bottom = [b + h for b, h in zip(bottom, heights)]
        top = max(top, *bottom)
        ax.set_title(wrap(f"{c} · {p}", 40))
        many = len(agents) > 4
        ax.set_xticks(range(len(agents)), [printable(a) for a in agents], rotation=45 if many else 0, ha="right" if many else "center")
        ax.grid(False, axis="x")
    axes[0, 0].set_ylim(0, top * 1.05)  # (shared) bars' sticky edges would otherwise pin the top to the tallest stack
    for ax in axes[:, 0]:
        ax.set_ylabel("actions per episode")
    for ax in list(axes.flat)[len(cells):]:
        ax.set_visible(False)
    # a team whose every action was rejected has no commands, and no legend
    _finish(fig, f"{g.title}: accepted actions per agent by command (mean per episode)", [], "command",
            [Rectangle((0, 0), 1, 1, color=colours(k % 20)) for k in range(len(commands))], commands)
    return fig


def survival_figure(g: GroupReport) -> Figure:
    fig = _figure(7.5, 5.0)
    ax = fig.subplots()
    horizon = max(int(max(values(g.rows, "survival_time"), default=0)), max((r.months or 0 for r in g.rows), default=0))
    horizon = min(horizon, MAX_MONTHS)
    drawn = 0
    for i, c in enumerate(g.conditions):
        for j, p in enumerate(g.policies):
            cell = [r for r in g.cells.get((c, p), []) if _is_number(r.metrics.get("survival_time"))]
            if cell:
                curve = survival_curve([r.metrics["survival_time"] for r in cell], [r.metrics.get("survived") if isinstance(r.metrics.get("survived"), bool) else None for r in cell], horizon)
                # each line drawn thinner than the ones under it: curves that coincide (two policies whose fisheries
                # all last) show as nested lines, not as one line hiding the other
                width = max(1.0, 6.0 * 0.5 ** drawn)
                ax.step(range(horizon + 1), curve, where="post", linestyle=LINE_STYLES[i % len(LINE_STYLES)], color=_colour(j),
                        linewidth=width, zorder=2 + drawn, label=f"{p} · {c}")
                drawn += 1
    ax.set_xlabel("month")
    ax.set_ylabel("share of runs with fish left after the month")
    ax.set_ylim(-0.03, 1.03)
    _finish(fig, f"{g.title}: survival\ncolour: policy; line style: condition", [ax], "policy · condition")
    return fig


DRAW: dict[str, Callable[[GroupReport], Figure]] = {
    "headline": headline_figure, "metrics": metrics_figure, "series": series_figure, "agents": agents_figure,
    "actions": actions_figure, "survival": survival_figure,
}


def figure_kinds(g: GroupReport) -> list[str]:
    """The figures a group gets: a series where its paradigm has one and its logs gave it, survival where episodes report it."""
    kinds = ["headline", "metrics"]
    spec = SERIES.get(g.env)
    if spec is not None and any(r.series.get(spec.name) for r in g.rows):
        kinds.append("series")
    kinds += ["agents", "actions"]
    if "survival_time" in g.metrics:
        kinds.append("survival")
    return kinds


def caption(g: GroupReport, kind: str) -> str:
    """What a figure shows, for report.md: 'Headline metric: mean final wealth ($) ↑ (higher is better) ...'."""
    if kind == "headline":
        metric = headline_metric(g)
        order = ordered_conditions(g)
        how = f"over {order.label}" if order else "per condition"
        return f"Headline metric: {metric_label(metric, g.goals.get(metric), long=True)} {how} and policy; {CI_TEXT}; dots: single seeds."
    if kind == "series":
        spec = SERIES[g.env]
        return f"Per {spec.x_label}: {spec.title}, per condition and policy; {CI_TEXT} as band."
    return {
        "metrics": f"Metrics: the mean return per agent and up to {MAX_METRIC_PANELS - 1} metrics with a direction (↑ / ↓) that vary in "
                   f"the group, each telling something the ones before it do not (the table has them all); {CI_TEXT}.",
        "agents": f"Per agent: return per episode, per condition and policy; {CI_TEXT}.",
        "actions": "Per agent: accepted actions by command (mean per episode).",
        "survival": "Survival: share of runs with fish left after each month, per condition and policy.",
    }[kind]


# ---------------------------------------------------------------------- writing
def save(fig: Figure, base: Path, formats: Sequence[str] = FORMATS) -> None:
    """The figure as base.png, base.svg and base.pdf (those of them in `formats`), with no dates in them."""
    fig.draw_without_rendering()  # the constrained layout once, not once per format
    fig.set_layout_engine(None)  # no engine at all ("none" leaves a placeholder that makes each savefig draw twice)
    metadata = {"png": None, "svg": {"Date": None}, "pdf": {"CreationDate": None}}
    for fmt in formats:
        image = io.BytesIO()
        fig.savefig(image, format=fmt, metadata=metadata[fmt])
        write_whole(base.parent / f"{base.name}.{fmt}", image.getvalue())


_GROUPS: list[GroupReport] = []  # the groups a worker process draws from (set by _share)


def _share(groups: list[GroupReport]) -> None:
    global _GROUPS
    _GROUPS = groups


def _draw(task: tuple[int, str, str, tuple[str, ...]]) -> None:
    index, kind, base, formats = task
    with matplotlib.rc_context(STYLE):
        save(DRAW[kind](_GROUPS[index]), Path(base), formats)


def write_figures(groups: Sequence[GroupReport], folder: Path, workers: int = 1,
                  formats: Sequence[str] = FORMATS) -> dict[str, dict[str, str]]:
    """Every group's figures in `folder` in `formats`, drawn in `workers` processes; returns group title -> kind -> the file
    report.md links (the first of `formats`, in `FORMATS` order), relative to the report. A figure's files in the other
    formats are removed (they would be left from an earlier report); with no formats, nothing is drawn and {} returned."""
    formats = tuple(f for f in FORMATS if f in formats)
    kinds = {g.title: figure_kinds(g) for g in groups}
    if folder.is_dir():
        for g in groups:
            for kind in kinds[g.title]:
                for fmt in FORMATS:
                    if fmt not in formats:
                        (folder / f"{slug(g.title)}_{kind}.{fmt}").unlink(missing_ok=True)
    if not formats:
        return {}
    folder.mkdir(parents=True, exist_ok=True)
    made = {g.title: {kind: f"{folder.name}/{slug(g.title)}_{kind}.{formats[0]}" for kind in kinds[g.title]} for g in groups}
    tasks = [(i, kind, str(folder / f"{slug(g.title)}_{kind}"), formats) for i, g in enumerate(groups) for kind in made[g.title]]
    tasks.sort(key=lambda t: -len(groups[t[0]].cells))  # the biggest first, so no worker is left drawing one alone at the end
    if workers > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(max_workers=min(workers, len(tasks)), initializer=_share, initargs=(list(groups),)) as pool:
            list(pool.map(_draw, tasks))
    else:
        _share(list(groups))
        for task in tasks:
            _draw(task)
    return made
