"""Statistics of sweep results across seeds: mean, standard deviation, count and the 95%
confidence half-width per point; the columns a sweep row carries."""

from __future__ import annotations

import math

import pandas as pd

from .errors import LossyncError

#: Summary metrics kept per run (scalar columns of the results).
METRICS = [
    "utilization",
    "jain",
    "loss_rate",
    "congestion_events",
    "sync_rate_mean",
    "mean_queue_pkts",
    "mean_queueing_delay_s",
    "measured_from_s",
]
#: Also in every row: the headline link's largest queue and drops over the whole run.
LINK_METRICS = ["max_queue_pkts", "drops_pkts"]



#: Two-sided 95% Student-t quantiles t_{0.975, df} for df = 1..30 (standard tables, e.g. NIST/
#: SEMATECH e-Handbook of Statistical Methods, §1.3.6.7.2).
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df: int) -> float:
    """t_{0.975, df}; beyond 30 degrees of freedom the normal 1.960 plus the first correction term
    (Cornish–Fisher: z + (z³ + z)/(4·df))."""
    if df < 1:
        return math.nan
    if df <= 30:
        return _T975[df - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * df)


def summarize(results: pd.DataFrame, metrics: list[str] | None = None, axes: list[str] | None = None) -> pd.DataFrame:
    """Mean, standard deviation, count and 95% confidence half-width across seeds, per point;
    and `warned_runs`, how many of the point's runs warned (their numbers may be wrong: the rows'
    `warnings` say why), where the rows carry warnings.
    axes: the columns a point is keyed by (default: every swept field, `axes_of`)."""
    metrics = metrics or METRICS
    ok = results[results["status"] == "ok"]
    axes = axes_of(results) if axes is None else axes
    if ok.empty:
        raise LossyncError("no successful runs to summarize")
    grouped = ok.groupby(axes, dropna=False, sort=True)[metrics]
    mean, std, n = grouped.mean(), grouped.std(ddof=1), grouped.count()
    table = pd.concat({"mean": mean, "std": std, "n": n}, axis=1)
    for m in metrics:
        half = [t975(int(k) - 1) * s / math.sqrt(k) if k > 1 else math.nan for s, k in zip(std[m], n[m])]
        table[("ci95", m)] = half
    if "warnings" in ok.columns:
        # A mean over runs of which some warned is as doubtful as they are: counted per point.
        warned = ok["warnings"].map(lambda w: w is not None and len(w) > 0).rename("warned_runs")
        counts = warned.groupby([ok[a] for a in axes], dropna=False, sort=True).sum()
        for m in metrics:
            table[("warned_runs", m)] = counts.to_numpy().astype(int)
    return table


BOOKKEEPING = {"seed", "status", "error", "wall_s", "lossync_version", "scenario_hash", "flow_throughput_bps", "warnings", "key"}


def axes_of(results: pd.DataFrame) -> list[str]:
    """The swept fields: every column that is not a metric or bookkeeping."""
    return [c for c in results.columns if c not in set(METRICS) | set(LINK_METRICS) | BOOKKEEPING]
