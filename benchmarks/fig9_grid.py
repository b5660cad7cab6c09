"""Times the paper's Fig. 9 grid on all cores: 4 variants × 3 synchronization levels × 8 buffer
fractions × 10 seeds, 3000 s each, 10 flows at 10 Gbps (the default scenario with overrides;
`lossync.bench.fig9_grid`, which `lossync bench --suite` times too).

    python benchmarks/fig9_grid.py [--seeds 10] [--duration 3000] [--step 0.001] [--csv FILE]
"""

import argparse
import os

from lossync.bench import FIG9_BUFFERS, FIG9_VARIANTS, FIG9_XS, fig9_grid


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--duration", type=float, default=3000.0)
    p.add_argument("--step", type=float, default=0.001)
    p.add_argument("--workers", type=int, default=os.cpu_count())
    p.add_argument("--csv", help="write per-run utilization here")
    a = p.parse_args()
    g = fig9_grid(a.seeds, a.duration, a.step, a.workers)
    rows = g["rows"]
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("variant,x,bdp_fraction,seed,utilization\n")
            f.writelines(f"{v},{x},{b},{s},{u!r}\n" for v, x, b, s, u in rows)
    print(f"{g['runs']} runs of {a.duration:g} s at step {a.step:g} s on {g['workers']} workers: "
          f"{g['wall_s']:.1f} s wall, {g['flow_updates'] / g['wall_s']:.3e} flow-updates/s")
    for v in FIG9_VARIANTS:
        for x in FIG9_XS:
            us = [sum(r[4] for r in rows if r[:3] == (v, x, f)) / a.seeds for f in FIG9_BUFFERS]
            print(f"{v:<10} X={x:<4}" + " ".join(f"{u:.3f}" for u in us))


if __name__ == "__main__":
    main()
