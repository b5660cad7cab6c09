"""Seed 001: the test bed of the same authors' slides (CRON, 8 Gb/s, 30 ms, 2 and 4 flows, queue
0..100% of BDP)."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import atomic_write
from ..plot import plt
from .framework import (
    CROSS_ENGINES,
    VARIANT_NAMES,
    Claim,
    CrossCheck,
    Study,
    cell_means,
    deep_merge,
    engine_doc,
    fidelity_overrides,
    register,
    run_sweep,
)

TESTBED_FRACTIONS = [0.0, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0]


#: The test bed in the paper's model. A real test bed: Linux TCP with slow start (unlike the
#: paper's fluid runs).
BASE = {
    "dumbbell": {"capacity": "8Gbps", "buffer": {"bdp_fraction": 0.1}},
    "flows": [{"count": 2, "cc": "reno", "rtt": "30ms", "slow_start": True}],
    "loss": {"model": "sync", "sync": {"kind": "all"}},
    "run": {"duration": "3000s", "from_first_congestion": True, "record_interval": "1s"},
}
VARIANTS = ["reno", "highspeed", "cubic"]
RENAMED = {"flows.0.cc": "variant", "flows.0.count": "flows", "dumbbell.buffer.bdp_fraction": "buffer_fraction"}

#: The packet engine at the test bed's 8 Gb/s: one seed, (run, warm-up) in seconds, at four of the
#: queue sizes. 600 s holds two or more Reno cycles of 2 flows (W/2 ≈ 5,000 RTTs of 30 ms at most).
PACKET_RUN = {False: (600.0, 100.0), True: (20.0, 5.0)}
PACKET_FRACTIONS = {False: [0.0, 0.1, 0.4, 1.0], True: [0.1, 1.0]}
#: Linux at 40 Mb/s, under the kernel engine's clean limit on two cores (docs/kernel.md), the
#: other parameters the test bed's: Reno and CUBIC (this kernel has no HSTCP), 30 s, 10 s warm-up.
KERNEL_CAPACITY = "40Mbps"
KERNEL_RUN = (30.0, 10.0)
KERNEL_FRACTIONS = [0.1, 0.4, 1.0]


def _axes(fractions: list[float], variants: list[str] = VARIANTS) -> dict:
    """The test bed's grid: variant × 2 and 4 flows × queue size (a fraction of the BDP)."""
    return {"flows.0.cc": variants, "flows.0.count": [2, 4], "dumbbell.buffer.bdp_fraction": fractions}


def _sweep(out: Path, base: dict, axes: dict, seeds: int, fixed: list[str], engine: str, **kw) -> pd.DataFrame:
    rows = run_sweep(out / "sweep", base, axes, seeds, fixed, engine, **kw).rename(columns=RENAMED)
    atomic_write(out / "results.parquet", lambda p: rows.to_parquet(p, index=False))
    return rows


def _run_testbed(out: Path, quick: bool, engine: str) -> pd.DataFrame:
    seeds, fixed = fidelity_overrides(quick)
    return _sweep(out, BASE, _axes(TESTBED_FRACTIONS), seeds, fixed, engine)


def _run_cross(out: Path, quick: bool, engine: str) -> pd.DataFrame | str:
    if engine == "fluid:tcp":
        seeds, fixed = fidelity_overrides(quick)
        return _sweep(out, engine_doc(BASE, engine), _axes(TESTBED_FRACTIONS), seeds, fixed, "fluid")
    if engine == "packet:jitter":
        duration, warmup = PACKET_RUN[quick]
        base = deep_merge(BASE, {"run": {"duration": duration, "warmup": warmup, "from_first_congestion": False}})
        return _sweep(out, engine_doc(base, engine), _axes(PACKET_FRACTIONS[quick]), 1, [], "packet")
    if quick:
        return "Linux runs in real time, at full fidelity only"
    if os.geteuid() != 0:
        return "Linux needs root (`sudo lossync reproduce testbed`)"
    duration, warmup = KERNEL_RUN
    base = deep_merge(BASE, {"dumbbell": {"capacity": KERNEL_CAPACITY},
                             "run": {"duration": duration, "warmup": warmup, "from_first_congestion": False}})
    # One run at a time: a second would compete for the cores the kernel engine measures.
    return _sweep(out, engine_doc(base, engine), _axes(KERNEL_FRACTIONS, ["reno", "cubic"]), 1, [], "kernel", workers=1)


def _testbed_figure(rows: pd.DataFrame):
    cells = cell_means(rows)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, n in zip(axes, [2, 4]):
        for v, g in cells[cells["flows"] == n].groupby("variant"):
            ax.errorbar(100 * g["buffer_fraction"], g["mean/utilization"], yerr=g["ci95/utilization"], marker="o", ms=3, label=VARIANT_NAMES[v])
        ax.set_title(f"{n} flows, 8 Gbps, 30 ms", fontsize=10)
        ax.set_xlabel("queue size (% of BDP)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("link utilization")
    fig.tight_layout()
    return fig


def _engines_figure(model: pd.DataFrame, runs: dict[str, pd.DataFrame | str]):
    """Per variant and flow count, utilization against the queue size in every engine that ran."""
    fig, axes = plt.subplots(2, 3, figsize=(12, 6.5), sharey=True, sharex=True)
    engines = {"paper's model": model, **{CROSS_ENGINES[e]: r for e, r in runs.items() if not isinstance(r, str)}}
    for (i, n), (j, v) in itertools.product(enumerate([2, 4]), enumerate(VARIANTS)):
        ax = axes[i, j]
        for (label, rows), marker in zip(engines.items(), "sov^"):
            cells = cell_means(rows)
            g = cells[(cells["flows"] == n) & (cells["variant"] == v)].sort_values("buffer_fraction")
            if len(g):
                ax.plot(100 * g["buffer_fraction"], g["mean/utilization"], marker=marker, ms=4, label=label)
        ax.set_title(f"{VARIANT_NAMES[v]}, {n} flows", fontsize=10)
        ax.axhline(0.8, color="grey", ls=":", lw=0.8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes[1]:
        ax.set_xlabel("queue size (% of BDP)")
    for ax in axes[:, 0]:
        ax.set_ylabel("link utilization")
    fig.suptitle("Seed 001's test bed in every engine (Linux at 40 Mb/s, the others at 8 Gb/s; 30 ms)", fontsize=11)
    fig.tight_layout()
    return fig


def _below_08(rows):
    cells = cell_means(rows)
    top = cells.loc[cells["mean/utilization"].idxmax()]
    return (f"highest U {top['mean/utilization']:.3f} ({VARIANT_NAMES[top['variant']]}, {top['flows']} flows, "
            f"{100 * top['buffer_fraction']:.0f}% BDP)", bool(top["mean/utilization"] <= 0.8))


def _testbed_claim(rows):
    cells = cell_means(rows)
    worst = min(float(np.min(np.diff(g.sort_values("buffer_fraction")["mean/utilization"].to_numpy())))
                for _, g in cells.groupby(["variant", "flows"]))
    u0 = cells[cells["buffer_fraction"] == 0.0]["mean/utilization"]
    at0 = f"; at 0% BDP U in [{u0.min():.3f}, {u0.max():.3f}]" if len(u0) else ""
    return f"largest drop between neighbouring queue sizes {worst:+.4f}{at0}", worst > -0.005


register(Study(
    "testbed", "Seed 001 test bed: 8 Gbps, 30 ms, 2 and 4 flows",
    "Reno, HSTCP, CUBIC; 2 and 4 flows; RTT 30 ms; 8 Gbps; queue 0..100% of BDP; slow start on (real TCP); full "
    "synchronization (our choice: a few flows on a drop-tail queue tend to lose together).",
    _run_testbed, _testbed_figure,
    [Claim("Utilization rises with the queue size (the slides' plots; values not legible in our copy)", _testbed_claim),
     Claim("Utilization stays at or below 0.8 at every queue size, 2 and 4 flows (our reading of the slides' plots, whose "
           "axes end at 0.8)", _below_08)],
    cross=CrossCheck(
        _run_cross,
        {"fluid:tcp": ("10 seeds × 3000 s", "2 seeds × 300 s"),
         "packet:jitter": (f"queue {', '.join(f'{100 * b:.0f}' for b in PACKET_FRACTIONS[False])}% of BDP, one seed × "
                           f"{PACKET_RUN[False][0]:.0f} s, {PACKET_RUN[False][1]:.0f} s warm-up",
                           f"queue {', '.join(f'{100 * b:.0f}' for b in PACKET_FRACTIONS[True])}% of BDP, one seed × "
                           f"{PACKET_RUN[True][0]:.0f} s"),
         "kernel": (f"Reno and CUBIC at {KERNEL_CAPACITY} (the engine's clean limit; this kernel has no HSTCP), queue "
                    f"{', '.join(f'{100 * b:.0f}' for b in KERNEL_FRACTIONS)}% of BDP, one seed × {KERNEL_RUN[0]:.0f} s, "
                    f"{KERNEL_RUN[1]:.0f} s warm-up, as root", "not run")},
        [_testbed_claim, _below_08],
        _engines_figure),
))