"""Statistics of sweep results across seeds: mean, standard deviation, count and the 95%
confidence half-width per point (Student's t, from scipy); the columns a sweep row carries."""

from __future__ import annotations

import functools
import math

from .errors import LossyncError, ScenarioError
from .lazy import pandas as pd

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
#: Also in every row: the headline link's largest queue and drops over the whole run, and its queue
#: discipline's signals and sojourn times (docs/queues.md; NaN where none: the sojourn of a link
#: no packet left, the L4S sojourn where no packet arrived ECT(1) or CE).
LINK_METRICS = ["max_queue_pkts", "drops_pkts", "mark_rate", "early_drop_rate", "overflow_drop_rate",
                "sojourn_mean_s", "sojourn_p50_s", "sojourn_p99_s", "sojourn_l4s_mean_s", "sojourn_l4s_p99_s"]

#: The confidence level of every interval lossync reports.
CONFIDENCE = 0.95


@functools.lru_cache(maxsize=256)
def t975(df: int) -> float:
    """t_{0.975, df}, the two-sided 95% Student-t quantile (`scipy.stats.t.ppf`); NaN below one
    degree of freedom."""
    if df < 1:
        return math.nan
    from scipy.stats import t  # imported on first use: `import lossync` stays light

    return float(t.ppf(0.5 + CONFIDENCE / 2, df))


def ci_label(n: int | list[int] | set[int]) -> str:
    """What a `± ci95` is, in words: `95% CI (t, n=5)`; `n=3..5` where points have different
    seed counts."""
    counts = sorted({int(n)} if isinstance(n, int) else {int(k) for k in n})
    ns = f"n={counts[0]}" if len(counts) == 1 else f"n={counts[0]}..{counts[-1]}"
    return f"{CONFIDENCE:.0%} CI (t, {ns})"


#: What a half-width of exactly 0 from several seeds says, which no interval says by itself.
SEED_FREE = "± 0: every seed gave the same value (these runs do not depend on the seed; more seeds add nothing)"
SEED_FREE_SOME = ("± 0: every seed gave the same value of that metric at that point (the runs differ in other metrics: "
                  "they do depend on the seed)")


def zero_interval_note(table: pd.DataFrame, metrics: list[str]) -> str | None:
    """The note for half-widths of exactly 0 from several seeds in a `summarize` table: the runs
    do not depend on the seed only where every metric measured more than once is ± 0 at every
    point (utilization 1.0 on a saturated link is ± 0 beside a Jain's index that varies)."""
    several = pd.DataFrame({m: table[("n", m)] > 1 for m in metrics})
    zero = pd.DataFrame({m: table[("ci95", m)] == 0 for m in metrics}) & several
    if not zero.to_numpy().any():
        return None
    seed_free = (zero | ~several).all(axis=1)
    return SEED_FREE if seed_free[several.any(axis=1)].all() else SEED_FREE_SOME


def summarize(results: pd.DataFrame, metrics: list[str] | None = None, axes: list[str] | None = None) -> pd.DataFrame:
    """Mean, standard deviation, count and 95% confidence half-width across seeds, per point;
    and `warned_runs`, how many of the point's runs warned (their numbers may be wrong: the rows'
    `warnings` say why), where the rows carry warnings.
    axes: the columns a point is keyed by (default: every swept field, `axes_of`)."""
    metrics = metrics or METRICS
    unknown = [m for m in metrics if m not in results.columns]
    if unknown:
        raise ScenarioError("metrics", f"{unknown[0]!r} is not a column of these results")
    axes = axes_of(results) if axes is None else axes
    ok = hashable(results[results["status"] == "ok"], axes)  # a table-valued axis keys its points too
    if ok.empty:
        raise LossyncError("no successful runs to summarize")
    grouped = ok.groupby(axes, dropna=False, sort=True)[metrics]
    mean, std, n = grouped.mean(), grouped.std(ddof=1), grouped.count()
    table = pd.concat({"mean": mean, "std": std, "n": n}, axis=1)
    order = table.sort_index(key=by_quantity, kind="stable").index
    for m in metrics:
        half = [t975(int(k) - 1) * s / math.sqrt(k) if k > 1 else math.nan for s, k in zip(std[m], n[m])]
        table[("ci95", m)] = half
    if "warnings" in ok.columns:
        # A mean over runs of which some warned is as doubtful as they are: counted per point.
        warned = ok["warnings"].map(lambda w: w is not None and len(w) > 0).rename("warned_runs")
        counts = warned.groupby([ok[a] for a in axes], dropna=False, sort=True).sum()
        for m in metrics:
            table[("warned_runs", m)] = counts.to_numpy().astype(int)
    return table.reindex(order)


def by_quantity(values: pd.Index) -> pd.Index:
    """An axis of quantities written with their units ("2ms", "10ms"; "100Mbps", "1Gbps") keyed by
    what they mean, so that points follow their values, not their text ("10ms" before "2ms");
    any other axis as it is."""
    if not all(isinstance(v, str) for v in values):
        return values
    from . import _core

    keys = [_core.quantity(v) for v in values]
    return values if any(k is None for k in keys) else pd.Index(keys)


BOOKKEEPING = {"seed", "status", "error", "wall_s", "lossync_version", "scenario_hash", "flow_throughput_bps", "warnings", "key", "partial"}


def axes_of(results: pd.DataFrame) -> list[str]:
    """The swept fields: every column that is not a metric or bookkeeping."""
    return [c for c in results.columns if c not in set(METRICS) | set(LINK_METRICS) | BOOKKEEPING]


def axis_label(value: object) -> object:
    """A swept value as a key: a table or a list (a variant with parameters, an RTT range) as the
    TOML a sweep file writes it (`{beta = 0.5, variant = "cubic"}`); any other value as it is."""
    value = _plain(value)
    return _toml(value) if isinstance(value, (dict, list)) else value


def _plain(value: object) -> object:
    """Parquet's lists (arrays) as lists, recursively."""
    if hasattr(value, "tolist") and getattr(value, "ndim", 0) > 0:
        value = value.tolist()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _toml(value: object) -> str:
    if isinstance(value, dict):
        # Parquet keeps tables as structs: a key another row has and this one lacks reads None.
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in sorted(value.items()) if v is not None) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value).lower() if isinstance(value, bool) else str(value)


def hashable(results: pd.DataFrame, axes: list[str]) -> pd.DataFrame:
    """`results` with each table or list in the columns `axes` as its `axis_label`, so that points
    can be keyed by them (grouped, counted, drawn); the other columns as they are."""
    compound = [a for a in axes if a in results.columns and results[a].map(_is_compound).any()]
    if not compound:
        return results
    return results.assign(**{a: results[a].map(axis_label) for a in compound})


def _is_compound(value: object) -> bool:
    return isinstance(value, (dict, list, tuple)) or (hasattr(value, "tolist") and getattr(value, "ndim", 0) > 0)
