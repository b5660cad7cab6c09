"""Figures: a run's windows, queue and utilization against time."""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from .stats import summarize

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .results import Result


def figure(result: Result, max_flows: int = 20) -> Figure:
    """Three panels: per-flow congestion windows, queue, utilization; headline metrics in the title."""
    s = result.series
    summ = result.summary
    t = s["time_s"]
    fig, axes = plt.subplots(3, 1, figsize=(11, 8), sharex=True, height_ratios=[2, 1, 1])
    ax = axes[0]
    flows = result.summary["flows"]
    for flow in flows[:max_flows]:
        i = flow["flow"]
        ax.plot(t, s[f"cwnd_pkts.{i}"], lw=0.8, label=f"{i}: {flow['variant']} {flow['rtt_s'] * 1e3:.0f} ms")
    shown = f" (first {max_flows} of {len(flows)} flows)" if len(flows) > max_flows else ""
    ax.set_ylabel("cwnd (packets)" + shown)
    # Beside the panel, not over the curves.
    ax.legend(fontsize=7, ncol=1 if min(len(flows), max_flows) <= 12 else 2, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    for link in summ["links"]:
        axes[1].plot(t, s[f"queue_pkts.{link['name']}"], lw=0.8, label=link["name"])
        axes[2].plot(t, s[f"utilization.{link['name']}"], lw=0.8, label=link["name"])
    axes[1].set_ylabel("queue (packets)")
    axes[2].set_ylabel("utilization")
    axes[2].set_ylim(0, 1.05)
    axes[2].set_xlabel("time (s)")
    if len(summ["links"]) > 1:
        axes[1].legend(fontsize=7)
    start = summ["measured_from_s"]
    for a in axes:
        a.axvline(start, color="grey", ls=":", lw=0.8, label="_nolegend_")
        a.grid(alpha=0.3)
    axes[2].annotate(" statistics from here", (start, 0.02), fontsize=7, color="grey")
    sync = summ["sync_rate_mean"]
    sync_text = "n/a" if sync is None else f"{sync:.2f}"
    partial = "PARTIAL (interrupted) " if summ.get("partial") else ""
    fig.suptitle(
        f"{partial}{summ['scenario']}: utilization {summ['utilization']:.3f}, Jain {summ['jain']:.3f}, "
        f"loss {summ['loss_rate']:.2e}, {summ['congestion_events']} events, sync rate {sync_text}",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def sweep_figure(results, x: str, y: str, hue: str | None = None) -> Figure:
    """A line per `hue` value of the mean of `y` across seeds against `x`, with 95% confidence
    intervals as error bars."""
    table = summarize(results, [y])
    flat = table.reset_index()
    flat.columns = ["/".join(c for c in col if c) if isinstance(col, tuple) else col for col in flat.columns]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    groups = [(None, flat)] if hue is None else list(flat.groupby(hue, sort=True))
    for name, g in groups:
        g = g.groupby(x, sort=True).mean(numeric_only=True).reset_index()
        ax.errorbar(g[x], g[f"mean/{y}"], yerr=g[f"ci95/{y}"], marker="o", ms=3, capsize=3,
                    label=None if name is None else f"{hue} = {name}")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(alpha=0.3)
    if hue is not None:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
