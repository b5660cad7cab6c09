"""ns-3 as a yardstick: the 10-flow 100 Mb/s grid (variant × buffer) in the packet engine, in
ns-3, and in the fluid engine driven by the packet engine's measured loss synchronization
(loss.model = "sync", kind = "empirical"), side by side. Writes OUT/table.md (the Markdown
table), OUT/cells.csv (every number) and OUT/cells/*.json (every summary). Needs the ns3 extra.

    python scripts/validate_ns3.py [--out DIR] [--duration 300s] [--warmup 60s] [--workers 2]
                                   [--variants reno,highspeed,...] [--buffers 0.1,0.25,...]
                                   [--rtt-jitter-ms 1]

RTTs are 80, 100, ..., 260 ms exactly unless --rtt-jitter-ms moves each flow's RTT by a seeded
uniform draw in [0, X) ms: deterministic drop-tail simulations have strong phase effects (which
flow's packets meet a full queue depends on sub-millisecond timing), and Jain's index moves far
more with such a jitter than between the engines.

Cells run in parallel, one process per cell (each runs the three engines in turn); keep
--workers at or below the cores you may use.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import pandas as pd

VARIANTS = ["reno", "highspeed", "cubic", "htcp", "scalable"]
NAMES = {"reno": "NewReno (Reno)", "highspeed": "HighSpeed", "cubic": "Cubic", "htcp": "H-TCP", "scalable": "Scalable"}
BUFFERS = [0.1, 0.25, 0.5, 1.0]


def scenario(variant: str, frac: float, duration: str, warmup: str, jitter_ms: float = 0.0) -> dict:
    rtt: str | list[str] = "80ms..260ms"
    if jitter_ms > 0:
        import numpy as np

        rng = np.random.default_rng(1)
        rtt = [f"{80 + 20 * i + rng.uniform(0, jitter_ms):.6f}ms" for i in range(10)]
    return {
        "name": f"grid-{variant}-{frac:g}",
        # Reference RTT for the BDP: 170 ms, the mean of the unjittered RTTs.
        "dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": frac, "reference_rtt": "170ms"}},
        "flows": [{"count": 10, "cc": variant, "rtt": rtt, "slow_start": True}],
        "run": {"duration": duration, "warmup": warmup},
    }


def run_cell(variant: str, frac: float, duration: str, warmup: str, out: str, timeout_s: float, jitter_ms: float = 0.0) -> dict:
    import lossync
    from lossync.ns3_engine import run_ns3_with_stats

    cell = Path(out) / "cells"
    cell.mkdir(parents=True, exist_ok=True)
    tag = f"{variant}-{frac:g}"
    doc = scenario(variant, frac, duration, warmup, jitter_ms)
    row: dict = {"variant": variant, "buffer": frac}

    t0 = time.perf_counter()
    packet = lossync.run(dict(doc, engine="packet"), progress=False)
    row["packet_wall_s"] = time.perf_counter() - t0
    m_csv = cell / f"{tag}-m.csv"
    dist = packet.sync_distribution()
    dist.to_csv(m_csv, index=False)
    results = {"packet": packet}

    try:
        ns3, stats = run_ns3_with_stats(doc, timeout_s=timeout_s)
        results["ns3"] = ns3
        row["ns3_wall_s"] = stats.wall_s
        row["ns3_sched_events"] = stats.events
        row["ns3_data_packets"] = stats.data_packets_sent
        row["ns3_other_drops"] = stats.other_drops
    except lossync.LossyncError as e:
        row["ns3_error"] = str(e).splitlines()[0]

    if len(dist):
        fluid_doc = dict(doc, engine="fluid", loss={"model": "sync", "sync": {"kind": "empirical", "file": m_csv.name}})
        results["fluid"] = lossync.run(fluid_doc, progress=False, base_dir=cell)

    for engine, r in results.items():
        s = r.summary
        (cell / f"{tag}-{engine}.json").write_text(json.dumps(s, indent=1))
        row[f"{engine}_util"] = s["utilization"]
        row[f"{engine}_jain"] = s["jain"]
        row[f"{engine}_loss"] = s["loss_rate"]
        row[f"{engine}_events"] = s["congestion_events"]
        row[f"{engine}_sync"] = s["sync_rate_mean"]
        row[f"{engine}_queue"] = s["mean_queue_pkts"]
    row["buffer_pkts"] = packet.summary["links"][0]["buffer_pkts"]
    return row


def fmt(v, digits=3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v:.{digits}f}"


def table(df: pd.DataFrame, duration: str, warmup: str, jitter_ms: float = 0.0) -> str:
    rtt = "80–260 ms" + (f" (each + U[0, {jitter_ms:g}) ms, seed 1)" if jitter_ms > 0 else "")
    lines = [
        f"10 flows, 100 Mb/s, RTT {rtt}, slow start on, {warmup} warm-up, {duration} runs. Buffer as a fraction of the BDP at the",
        "mean RTT (170 ms: 1417 packets). U: utilization; J: Jain's index; sync: mean fraction of flows losing per",
        "congestion event (events: drop clusters with gaps under the mean base RTT, 170 ms). Fluid: loss model `sync`",
        "with the packet engine's measured m distribution (`kind = \"empirical\"`).",
        "",
        "| variant | buffer | B (pkts) | U packet | U ns-3 | U fluid | ΔU ns-3 − packet | J packet | J ns-3 | J fluid | sync packet | sync ns-3 | events packet | events ns-3 | loss packet | loss ns-3 | ns-3 wall (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for _, r in df.iterrows():
        du = r.get("ns3_util", float("nan")) - r["packet_util"]
        lines.append(
            f"| {NAMES[r['variant']]} | {r['buffer']:g} | {r['buffer_pkts']:.0f} | {fmt(r['packet_util'])} | {fmt(r.get('ns3_util'))} | "
            f"{fmt(r.get('fluid_util'))} | {fmt(du * 100, 1)} pt | {fmt(r['packet_jain'])} | {fmt(r.get('ns3_jain'))} | {fmt(r.get('fluid_jain'))} | "
            f"{fmt(r['packet_sync'], 2)} | {fmt(r.get('ns3_sync'), 2)} | {r['packet_events']:.0f} | {fmt(r.get('ns3_events'), 0)} | "
            f"{fmt(r['packet_loss'] * 100, 2)}% | {fmt(r.get('ns3_loss', float('nan')) * 100, 2)}% | {fmt(r.get('ns3_wall_s'), 0)} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="validate-ns3-out")
    p.add_argument("--duration", default="300s")
    p.add_argument("--warmup", default="60s")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--buffers", default=",".join(f"{b:g}" for b in BUFFERS))
    p.add_argument("--timeout", type=float, default=3600.0, help="per ns-3 run, wall seconds")
    p.add_argument("--rtt-jitter-ms", type=float, default=0.0, help="add a seeded U[0, X) ms to each flow's RTT")
    a = p.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    cells = [(v, float(b)) for v in a.variants.split(",") for b in a.buffers.split(",")]
    rows = []
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=a.workers) as pool:
        futures = {pool.submit(run_cell, v, b, a.duration, a.warmup, str(out), a.timeout, a.rtt_jitter_ms): (v, b) for v, b in cells}
        for fut in as_completed(futures):
            row = fut.result()
            rows.append(row)
            print(f"{row['variant']:>9} {row['buffer']:<5g} U packet {row['packet_util']:.3f} ns-3 {row.get('ns3_util', float('nan')):.3f} "
                  f"fluid {row.get('fluid_util', float('nan')):.3f}  J {row['packet_jain']:.3f} / {row.get('ns3_jain', float('nan')):.3f}  "
                  f"ns-3 {row.get('ns3_wall_s', float('nan')):.0f} s {row.get('ns3_error', '')}", flush=True)
    order = {v: i for i, v in enumerate(VARIANTS)}
    df = pd.DataFrame(rows).sort_values(["variant", "buffer"], key=lambda c: c.map(order) if c.name == "variant" else c)
    df.to_csv(out / "cells.csv", index=False)
    (out / "table.md").write_text(table(df, a.duration, a.warmup, a.rtt_jitter_ms))
    print(f"wrote {out / 'table.md'} and {out / 'cells.csv'} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
