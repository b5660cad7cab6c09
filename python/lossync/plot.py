"""Figures: a run's windows, queue and utilization against time; a sweep's metric against an axis,
a line per `hue` value and a panel per facet value, never averaged over a swept value it does not
show (sweep_figure)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib
import numpy as np
import pandas as pd

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import NullFormatter

from .errors import ScenarioError
from .stats import axes_of, hashable, summarize

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .results import Result


def distinct_colours(n: int) -> list:
    """n colours, none repeated: matplotlib's tab10, then tab20, then n even steps of a
    perceptually uniform map (the default cycle repeats after 10 lines)."""
    if n <= 10:
        return list(plt.get_cmap("tab10").colors[:n])
    if n <= 20:
        return list(plt.get_cmap("tab20").colors[:n])
    return [tuple(c) for c in plt.get_cmap("viridis")(np.linspace(0, 0.95, n))]


#: Rows per column of a run figure's legends, to fit beside its panels at their font size: the
#: flows' beside the windows, the links' beside the queue and utilization.
FLOW_LEGEND_ROWS = 12
LINK_LEGEND_ROWS = 16


def figure(result: Result, max_flows: int = 20) -> Figure:
    """Three panels: per-flow congestion windows, queue, utilization; headline metrics in the title."""
    s = result.series
    summ = result.summary
    t = s["time_s"]
    # Constrained layout makes room for the legends beside the panels; tight_layout could not (a
    # network's 41 links: "Tight layout not applied", the legend over the panels and off the page).
    # The panels are a subfigure so that its legends sit below the figure's title, not over it.
    fig = plt.figure(figsize=(11, 8), layout="constrained")
    panels = fig.subfigures()
    axes = panels.subplots(3, 1, sharex=True, height_ratios=[2, 1, 1])
    ax = axes[0]
    flows = result.summary["flows"]
    # The series has windows for the flows `run.series_flows` records (all, up to 1,000).
    shown_flows = list(itertools.islice((f for f in flows if f"cwnd_pkts.{f['flow']}" in s), max_flows))
    colours = distinct_colours(len(shown_flows))
    for flow, colour in zip(shown_flows, colours):
        i = flow["flow"]
        ax.plot(t, s[f"cwnd_pkts.{i}"], lw=0.8, color=colour,
                label=f"{flow['group']} #{i}: {flow['variant']} {flow['rtt_s'] * 1e3:.0f} ms")
    shown = f" ({len(shown_flows)} of {len(flows)} flows)" if len(shown_flows) < len(flows) else ""
    ax.set_ylabel("cwnd (packets)" + shown)
    links = summ["links"]
    # One colour per link, the same in both panels (the default cycle repeats after 10).
    for link, colour in zip(links, distinct_colours(len(links))):
        axes[1].plot(t, s[f"queue_pkts.{link['name']}"], lw=0.8, color=colour, label=link["name"])
        axes[2].plot(t, s[f"utilization.{link['name']}"], lw=0.8, color=colour, label=link["name"])
    axes[1].set_ylabel("queue (packets)")
    axes[2].set_ylabel("utilization")
    axes[2].set_ylim(0, 1.05)
    axes[2].set_xlabel("time (s)")
    # Beside the panels, not over the curves: the flows' at the top, the links' (one legend for
    # both of their panels) at the bottom.
    if shown_flows:  # none with run.series_flows = 0
        panels.legend(*axes[0].get_legend_handles_labels(), loc="outside right upper", fontsize=7, title="flows", title_fontsize=7,
                   ncol=-(-len(shown_flows) // FLOW_LEGEND_ROWS))
    if len(links) > 1:
        panels.legend(*axes[1].get_legend_handles_labels(), loc="outside right lower", fontsize=7, title="links", title_fontsize=7,
                   ncol=-(-len(links) // LINK_LEGEND_ROWS))
    start = summ["measured_from_s"]
    for a in axes:
        a.axvline(start, color="grey", ls=":", lw=0.8, label="_nolegend_")
        a.grid(alpha=0.3)
    axes[2].annotate(" statistics from here", (start, 0.02), fontsize=7, color="grey")
    sync = summ["sync_rate_mean"]
    sync_text = "n/a" if sync is None else f"{sync:.2f}"
    partial = "PARTIAL (interrupted) " if summ.get("partial") else ""
    fig.suptitle(
        f"{partial}{summ['scenario']}: utilization {summ['utilization']:.3f}, "
        f"Jain {'n/a' if summ['jain'] is None else format(summ['jain'], '.3f')}, "
        f"loss {summ['loss_rate']:.2e}, {summ['congestion_events']} events, sync rate {sync_text}",
        fontsize=10,
    )
    return fig


#: The metrics of a sweep row in words, with their units (stats.METRICS, stats.LINK_METRICS).
METRIC_LABELS = {
    "utilization": "utilization (fraction of capacity)",
    "jain": "Jain's fairness index",
    "loss_rate": "loss rate (drops / arrivals)",
    "congestion_events": "congestion events",
    "sync_rate_mean": "synchronization rate (share of flows losing per event)",
    "mean_queue_pkts": "mean queue (packets)",
    "mean_queueing_delay_s": "mean queueing delay (s)",
    "measured_from_s": "statistics from (s)",
    "max_queue_pkts": "largest queue (packets)",
    "drops_pkts": "drops (packets)",
    "mark_rate": "CE mark rate (marks / arrivals)",
    "early_drop_rate": "early drop rate (AQM drops / arrivals)",
    "overflow_drop_rate": "overflow drop rate (drops / arrivals)",
    "sojourn_mean_s": "mean sojourn time (s)",
    "sojourn_p50_s": "median sojourn time (s)",
    "sojourn_p99_s": "99th-percentile sojourn time (s)",
    "sojourn_l4s_mean_s": "L4S mean sojourn time (s)",
    "sojourn_l4s_p99_s": "L4S 99th-percentile sojourn time (s)",
    "wall_s": "wall time (s)",
}
#: Scenario fields by their last name, in words, with what a bare number means (docs/scenario.md).
FIELD_LABELS = {
    "bdp_fraction": ("buffer", "fraction of the BDP"),
    "packets": ("buffer", "packets"),
    "bytes": ("buffer", "bytes"),
    "capacity": ("capacity", "bit/s"),
    "packet_size": ("packet size", "bytes"),
    "x": ("synchronization X", "least share of flows losing per event"),
    "m": ("flows losing per event (m)", None),
    "count": ("flow count", None),
    "cc": ("congestion control", None),
    "rtt": ("base RTT", "s"),
    "delay": ("one-way delay", "s"),
    "duration": ("duration", "s"),
    "warmup": ("warm-up", "s"),
    "seed": ("seed", None),
    # Queue disciplines' parameters (docs/queues.md); `target` is a delay for CoDel, PIE and
    # DualPI2 but a share of the capacity for XCP, so it carries no unit here.
    "discipline": ("queue discipline", None),
    "threshold": ("marking threshold K", "packets"),
    "min_th": ("RED min_th", "packets"),
    "max_th": ("RED max_th", "packets"),
    "max_p": ("RED max_p", None),
    "weight": ("RED queue weight", None),
    "interval": ("CoDel interval", "s"),
    "t_update": ("update interval", "s"),
    "max_burst": ("PIE burst allowance", "s"),
    "step_thresh": ("DualPI2 step threshold", "s"),
    "quantum": ("FQ-CoDel quantum", "bytes"),
    "target": ("AQM target (delay; XCP: share of capacity)", None),
}
#: Units that column names end with.
SUFFIXES = {"_pkts": "packets", "_bps": "bit/s", "_bytes": "bytes", "_s": "s"}


def label(column: str, numeric: bool = True) -> str:
    """A column in words, with its unit; a field given as text ("10Gbps", numeric=False) carries its
    unit in its values."""
    if column in METRIC_LABELS:
        return METRIC_LABELS[column]
    parts = column.split(".")
    name, unit = FIELD_LABELS.get(parts[-1], (None, None))
    if name is None:
        name = parts[-1]
        for suffix, u in SUFFIXES.items():
            if name.endswith(suffix):
                name, unit = name.removesuffix(suffix), u
                break
        name = name.replace("_", " ")
    if len(parts) > 2 and parts[0] in ("flows", "links") and parts[1].isdigit():  # which group or link
        name = f"{name}, {parts[0]}[{parts[1]}]"
    return f"{name} ({unit})" if unit and numeric else name


def check_axes(results: pd.DataFrame, x: str, y: str, hue: str | None = None, col: str | None = None, row: str | None = None) -> None:
    """Refuses (ScenarioError naming the option) a column the results lack, a metric that is not a
    number, or a column drawn twice."""
    chosen = [("--x", x), ("--hue", hue), ("--col", col), ("--row", row)]
    for option, name in chosen:
        if name is not None and name not in results.columns:
            raise ScenarioError(option, f"{name!r} is not an axis of this sweep")
    if y not in results.columns:
        raise ScenarioError("--y", f"{y!r} is not a column of these results")
    if not pd.api.types.is_numeric_dtype(results[y]) or pd.api.types.is_bool_dtype(results[y]):
        raise ScenarioError("--y", f"{y!r} is not a numeric metric (its mean cannot be drawn)")
    seen: dict[str, str] = {}
    for option, name in chosen:
        if name == y:
            raise ScenarioError(option, f"{name!r} is the metric --y draws, not an axis")
        if name is not None and name in seen:
            raise ScenarioError(option, f"{name!r} is drawn by {seen[name]} already")
        if name is not None:
            seen[name] = option


def hidden_axes(results: pd.DataFrame, y: str, shown: list[str], axes: list[str] | None = None) -> list[str]:
    """The swept columns that a figure keyed by `shown` would average over: those taking more than
    one value within one drawn point. An axis that follows the shown ones (a zipped sweep's) is
    not hidden. axes: the sweep's axes (`swept_axes`; default: every column but the metrics and
    bookkeeping, `axes_of`, which counts a study's extra columns as axes too)."""
    axes = axes_of(results) if axes is None else axes
    others = [c for c in axes if c in results.columns and c not in shown and c != y]
    ok = hashable(results[results["status"] == "ok"], [*others, *shown])
    if ok.empty or not others:
        return []
    within = ok.groupby(shown, dropna=False)[others].nunique(dropna=False).max()
    return [c for c in others if within[c] > 1]


def _refuse_hidden(hidden: list[str]) -> ScenarioError:
    return ScenarioError("--col/--row", f"these results also vary along {', '.join(hidden)}, which the figure would average away: "
                                        "draw each as --hue, --col or --row")


def facets(results: pd.DataFrame, x: str, y: str, hue: str | None = None, col: str | None = None,
           row: str | None = None, axes: list[str] | None = None) -> tuple[str | None, str | None, str | None]:
    """The panels to draw, (col, row, note): as given, or, when exactly one swept column would be
    averaged away and a panel option is free, panels of that column, and a line saying so. More
    than one is refused (ScenarioError naming them): a mean over them is no point of the sweep.
    axes: the sweep's axes, as for `hidden_axes`."""
    check_axes(results, x, y, hue, col, row)
    hidden = hidden_axes(results, y, [a for a in (x, hue, col, row) if a is not None], axes)
    if not hidden:
        return col, row, None
    if len(hidden) > 1 or (col is not None and row is not None):
        raise _refuse_hidden(hidden)
    option = "--col" if col is None else "--row"
    note = f"one panel per {hidden[0]} ({option}): otherwise each point drawn would average over its values"
    return (hidden[0], row, note) if col is None else (col, hidden[0], note)


def log_spaced(results_dir: str | Path, axis: str) -> bool:
    """Whether the sweep whose results are in `results_dir` spaced `axis` logarithmically."""
    try:
        spec = json.loads((Path(results_dir) / "sweep.json").read_text())["spec"]
        return spec["axes"][axis]["scale"] == "log"
    except (OSError, ValueError, KeyError, TypeError):  # no such file, or a list of values
        return False


#: The legend entry of the rings around points some of whose runs warned.
WARNED = "includes runs that warned"


def _is(column: pd.Series, value) -> pd.Series:
    return column.isna() if pd.isna(value) else column == value


def _levels(points: pd.DataFrame, key: str | None) -> list:
    return [None] if key is None else list(pd.unique(points[key]))


def sweep_figure(results: pd.DataFrame, x: str, y: str, hue: str | None = None, col: str | None = None,
                 row: str | None = None, logx: bool = False, logy: bool = False, axes: list[str] | None = None) -> Figure:
    """The mean of `y` across seeds against `x` with 95% confidence intervals (Student t), a line
    per `hue` value, a panel per (`row`, `col`) value; a ring marks a point some of whose runs
    warned. Each point is one combination of the swept values: a swept column not drawn is refused
    (`facets` chooses panels for one). axes: the sweep's axes, as for `hidden_axes`."""
    check_axes(results, x, y, hue, col, row)
    shown = [a for a in (row, col, hue, x) if a is not None]
    hidden = hidden_axes(results, y, shown, axes)
    if hidden:
        raise _refuse_hidden(hidden)
    table = summarize(results, [y], axes=shown)
    points = table.index.to_frame(index=False)
    for stat in ("mean", "ci95", "n", "warned_runs"):
        points[stat] = table[(stat, y)].to_numpy() if (stat, y) in table.columns else 0
    numeric_x = pd.api.types.is_numeric_dtype(points[x]) and not pd.api.types.is_bool_dtype(points[x])
    if logx and (not numeric_x or (points[x] <= 0).any()):
        why = ("is written with units, drawn as categories" if not numeric_x and points[x].map(lambda v: isinstance(v, str)).all()
               else "has values that are not positive numbers")
        raise ScenarioError("--logx", f"{x!r} {why}, which a log axis cannot place")
    if logy and (points["mean"] <= 0).any():
        raise ScenarioError("--logy", f"{(points['mean'] <= 0).sum()} points have a mean {y} of 0 or less, which a log axis cannot place")
    rows, cols, hues = _levels(points, row), _levels(points, col), _levels(points, hue)
    colours = distinct_colours(len(hues))
    fig, axes = plt.subplots(len(rows), len(cols), figsize=(1.5 + 4.5 * len(cols), 1.0 + 3.4 * len(rows)), sharex=True, sharey=True,
                             squeeze=False, layout="constrained")
    for (i, r), (j, c) in ((a, b) for a in enumerate(rows) for b in enumerate(cols)):
        ax = axes[i][j]
        mask = pd.Series(True, index=points.index)
        for key, value in ((row, r), (col, c)):
            if key is not None:
                mask &= _is(points[key], value)
        panel = points[mask]
        for h, colour in zip(hues, colours):
            line = panel[_is(panel[hue], h)] if hue else panel
            assert not line[x].duplicated().any(), "one point per x"  # never a mean over swept values
            if line.empty:
                continue
            ax.errorbar(line[x], line["mean"], yerr=line["ci95"], marker="o", ms=3, capsize=3, color=colour,
                        label="all runs" if hue is None else str(h))
            warned = line[line["warned_runs"] > 0]
            if not warned.empty:
                ax.scatter(warned[x], warned["mean"], s=90, facecolors="none", edgecolors="red", linewidths=1.2, label=WARNED, zorder=3)
        ax.set_title(", ".join(f"{label(k, False)} = {v}" for k, v in ((row, r), (col, c)) if k), fontsize=9)
        ax.grid(alpha=0.3)
        if logx:
            ax.set_xscale("log")
            xs = sorted(pd.unique(points[x]))
            if len(xs) <= 12:  # the swept values themselves, not crowded minor-tick labels
                ax.set_xticks(xs, [f"{v:.3g}" for v in xs])
                ax.xaxis.set_minor_formatter(NullFormatter())
        if logy:
            ax.set_yscale("log")
        if i == len(rows) - 1:
            ax.set_xlabel(label(x, numeric_x))
        if j == 0:
            ax.set_ylabel(label(y))
    handles: dict[str, object] = {}
    for ax in axes.flat:
        for handle, text in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(text, handle)
    if WARNED in handles:  # last, after the lines
        handles[WARNED] = handles.pop(WARNED)
    if hue is not None or WARNED in handles:
        fig.legend(handles.values(), handles.keys(), title=None if hue is None else label(hue, False), loc="outside right center", fontsize=8)
    fig.suptitle(_caption(points, y), fontsize=10)
    return fig


def _caption(points: pd.DataFrame, y: str) -> str:
    """What the error bars are, over how many seeds; points left out or doubtful."""
    n = points["n"][points["n"] > 0]
    seeds = f"{n.min()}" if len(n) and n.min() == n.max() else f"{n.min()}–{n.max()}"
    if not len(n):
        text = f"no run measured {y}"
    elif n.max() == 1:
        text = "mean of one seed per point: no confidence interval"
    else:
        text = f"mean ± 95% CI (Student t) over {seeds} seeds per point" + ("; no bar where one seed" if (n == 1).any() else "")
    missing = int((points["n"] == 0).sum())
    if missing:
        text += f"; {missing} point{'s' if missing > 1 else ''} with no value not drawn"
    warned = int((points["warned_runs"] > 0).sum())
    if warned:
        text += f"\n{warned} point{'s' if warned > 1 else ''} (ringed) include runs that warned: lossync summarize lists why"
    return text
