"""Times the paper's Fig. 9 grid on all cores: 4 variants × 3 synchronization levels × 8 buffer
fractions × 10 seeds, 3000 s each, 10 flows at 10 Gbps (the default scenario with overrides).

    python benchmarks/fig9_grid.py [--seeds 10] [--duration 3000] [--step 0.001] [--csv FILE]
"""

import argparse
import itertools
import os
import time
from concurrent.futures import ProcessPoolExecutor

import lossync

VARIANTS = ["reno", "highspeed", "cubic", "htcp"]
XS = [0.3, 0.6, 1.0]
BUFFERS = [0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.7, 1.0]


def one(args):
    variant, x, frac, seed, duration, step = args
    r = lossync.run(
        lossync.default_scenario_path(),
        [
            f'flows.0.cc="{variant}"',
            f"loss.sync.x={x}",
            f"dumbbell.buffer.bdp_fraction={frac}",
            f"run.seed={seed}",
            f"run.duration={duration}",
            f"run.step={step}",
            "run.record_interval=10",
        ],
        progress=False,
    )
    return variant, x, frac, seed, r.summary["utilization"], r.summary["flow_updates"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--duration", type=float, default=3000.0)
    p.add_argument("--step", type=float, default=0.001)
    p.add_argument("--workers", type=int, default=os.cpu_count())
    p.add_argument("--csv", help="write per-run utilization here")
    a = p.parse_args()
    jobs = [(*c, a.duration, a.step) for c in itertools.product(VARIANTS, XS, BUFFERS, range(1, a.seeds + 1))]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.workers) as pool:
        rows = list(pool.map(one, jobs, chunksize=4))
    wall = time.perf_counter() - t0
    updates = sum(r[5] for r in rows)
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("variant,x,bdp_fraction,seed,utilization\n")
            f.writelines(f"{v},{x},{b},{s},{u!r}\n" for v, x, b, s, u, _ in rows)
    print(f"{len(rows)} runs of {a.duration:g} s at step {a.step:g} s on {a.workers} workers: "
          f"{wall:.1f} s wall, {updates / wall:.3e} flow-updates/s")
    for v in VARIANTS:
        for x in XS:
            us = [sum(r[4] for r in rows if r[:3] == (v, x, f)) / a.seeds for f in BUFFERS]
            print(f"{v:<10} X={x:<4}" + " ".join(f"{u:.3f}" for u in us))


if __name__ == "__main__":
    main()
