"""Seed 001: the test bed of the same authors' slides (CRON, 8 Gb/s, 30 ms, 2 and 4 flows, queue
0..100% of BDP)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..io import atomic_write
from ..plot import plt
from .framework import VARIANT_NAMES, Claim, Study, cell_means, fidelity_overrides, register, run_sweep

TESTBED_FRACTIONS = [0.0, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0]


def _run_testbed(out: Path, quick: bool, engine: str) -> pd.DataFrame:
    seeds, fixed = fidelity_overrides(quick)
    # A real test bed: Linux TCP with slow start (unlike the paper's fluid runs).
    base = {
        "dumbbell": {"capacity": "8Gbps", "buffer": {"bdp_fraction": 0.1}},
        "flows": [{"count": 2, "cc": "reno", "rtt": "30ms", "slow_start": True}],
        "loss": {"model": "sync", "sync": {"kind": "all"}},
        "run": {"duration": "3000s", "from_first_congestion": True, "record_interval": "1s"},
    }
    axes = {"flows.0.cc": ["reno", "highspeed", "cubic"], "flows.0.count": [2, 4], "dumbbell.buffer.bdp_fraction": TESTBED_FRACTIONS}
    rows = run_sweep(out / "sweep", base, axes, seeds, fixed, engine)
    rows = rows.rename(columns={"flows.0.cc": "variant", "flows.0.count": "flows", "dumbbell.buffer.bdp_fraction": "buffer_fraction"})
    atomic_write(out / "results.parquet", lambda p: rows.to_parquet(p, index=False))
    return rows


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


def _testbed_claim(rows):
    cells = cell_means(rows)
    worst = min(float(np.min(np.diff(g.sort_values("buffer_fraction")["mean/utilization"].to_numpy())))
                for _, g in cells.groupby(["variant", "flows"]))
    u0 = cells[cells["buffer_fraction"] == 0.0]["mean/utilization"]
    return f"largest drop between neighbouring queue sizes {worst:+.4f}; at 0% BDP U in [{u0.min():.3f}, {u0.max():.3f}]", worst > -0.005


register(Study(
    "testbed", "Seed 001 test bed: 8 Gbps, 30 ms, 2 and 4 flows",
    "Reno, HSTCP, CUBIC; 2 and 4 flows; RTT 30 ms; 8 Gbps; queue 0..100% of BDP; slow start on (real TCP); full "
    "synchronization (our choice: a few flows on a drop-tail queue tend to lose together).",
    _run_testbed, _testbed_figure,
    [Claim("Utilization rises with the queue size (the slides' plots; values not legible in our copy)", _testbed_claim)],
))