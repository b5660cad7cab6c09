"""Sweeps: a base scenario, axes over any scenario field, seeds per point; run on a local process
pool or a Dask cluster; one Parquet file per finished (point, seed), so an interrupted sweep loses
nothing that finished and `resume=True` runs only what is missing.

A sweep file (TOML):

    base = "paper-10g"                 # a shipped example, a scenario file (relative to this file) or a [base] table
    seeds = 10                         # seeds 1..10 per point (or a list of seeds)
    mode = "cross"                     # "cross": every combination; "zip": axes side by side
    set = ["run.duration=600"]         # fixed overrides applied to every point

    [axes]
    "dumbbell.buffer.bdp_fraction" = [0.01, 0.05, 0.1, 0.2]
    "loss.sync.x" = { from = 0.3, to = 1.0, num = 3 }
    "flows.0.cc" = ["reno", "highspeed", "cubic", "htcp"]
"""
from .runner import load_results, run_point, sweep, swept_axes
from .spec import Range, SweepSpec, load_sweep, parse_spec

__all__ = ["Range", "SweepSpec", "load_results", "load_sweep", "parse_spec", "run_point", "swept_axes", "sweep"]
