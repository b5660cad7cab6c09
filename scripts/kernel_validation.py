"""The packet engine against real Linux TCP (issue 13, acceptance 2): Reno and CUBIC, 8 flows with
base RTTs spread 10-100 ms, 40 Mb/s, buffers of 10, 25, 50 and 100% of the BDP (of the mean RTT),
in the kernel engine and the packet engine from one scenario; utilization, Jain's index and the
synchronization rate, each engine's summary from the same metrics code. Writes
docs/validation/kernel.md. Needs root (the kernel engine); runs one cell at a time (the kernel
engine needs the machine's cores for clean emulation).

    sudo python scripts/kernel_validation.py [--seconds 60]
    python scripts/kernel_validation.py --report-only   # the page from the stored runs

Runs: docs/validation/data/kernel.jsonl (one line per run, rewritten by a full run).

`--linux` runs issue 34's grid instead (kernel_linux.py): Reno and CUBIC, 2, 10 and 50 flows,
buffers of 5-100% of the BDP, two seeds, against the packet engine's RFC 6675 and PRR recovery
and its RACK-TLP loss detection.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd

import lossync

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "validation" / "kernel.md"
DATA = ROOT / "docs" / "validation" / "data" / "kernel.jsonl"
BUFFERS = [0.1, 0.25, 0.5, 1.0]
VARIANTS = ["reno", "cubic"]


def cell(variant: str, buffer: float, seconds: float) -> dict:
    return {
        "dumbbell": {"capacity": "40Mbps", "buffer": {"bdp_fraction": buffer}},
        "flows": [{"count": 8, "cc": variant, "rtt": "10ms..100ms", "start": {"uniform": ["0s", "1s"]},
                   "slow_start": False}],  # docs/kernel.md's grid: no slow start
        "run": {"duration": f"{seconds}s", "warmup": f"{seconds / 4}s"},
    }


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--report-only", action="store_true", help="write the page from the stored runs")
    p.add_argument("--linux", action="store_true", help="issue 34's grid (kernel_linux.py)")
    p.add_argument("--only", nargs="*", help="with --linux: run these cells (variant:flows:buffer:seed) again")
    p.add_argument("--packet-only", action="store_true", help="with --linux: add the packet engine's missing ways to the stored cells")
    a = p.parse_args()
    if a.linux:
        import kernel_linux

        return kernel_linux.main(a.seconds, a.report_only, a.only, a.packet_only)
    if a.report_only:
        stored = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
        meta, rows = stored[0], stored[1:]
        return report(rows, meta["seconds"], meta["wall_s"])
    rows = []
    t0 = time.perf_counter()
    for variant in VARIANTS:
        for buffer in BUFFERS:
            for engine in ("kernel", "packet", "packet:jitter"):
                doc = cell(variant, buffer, a.seconds)
                if engine == "packet:jitter":  # one packet time (300 µs at 40 Mb/s) of send jitter per flow
                    doc["flows"][0]["send_jitter"] = "300us"
                s = lossync.run(doc, [f'engine="{engine.partition(":")[0]}"']).summary
                rows.append({"variant": variant, "buffer": buffer, "engine": engine, "utilization": s["utilization"],
                             "jain": s["jain"], "sync_rate": s["sync_rate_mean"], "loss": s["loss_rate"],
                             "warnings": len(s.get("warnings", []))})
                print(rows[-1], flush=True)
    wall = time.perf_counter() - t0
    DATA.write_text("\n".join(json.dumps(r) for r in [{"seconds": a.seconds, "wall_s": wall}, *rows]) + "\n")
    report(rows, a.seconds, wall)


def report(rows: list[dict], seconds: float, wall: float) -> None:
    df = pd.DataFrame(rows).pivot_table(index=["variant", "buffer"], columns="engine",
                                        values=["utilization", "jain", "sync_rate", "loss"], sort=False)
    lines = [
        "# Packet engine against Linux TCP (the kernel engine)",
        "",
        "Reno and CUBIC, 8 flows with base RTTs 10-100 ms (evenly spread), starts in [0, 1] s, 40 Mb/s, buffers of",
        f"10-100% of the BDP (mean RTT), {seconds:g} s with a quarter as warm-up, one run per cell; both engines'",
        "summaries come from the core's metrics. The kernel engine's synchronization rate is estimated from the",
        "senders' retransmissions (docs/kernel.md). \"Jittered\": the packet engine with one packet time of send",
        "jitter per flow (Floyd & Jacobson's remedy for a deterministic simulation's phase effects).",
        "Regenerate (as root): `python scripts/kernel_validation.py`",
        f"({len(rows)} runs, {wall:.0f} s). Targets (issue 13): utilization within 3 points at 25-100% BDP, Jain",
        "within 0.1, synchronization rate within 0.1.",
        "",
        "| variant | buffer (BDP) | U kernel | U packet | dU (points) | Jain kernel | Jain packet | Jain jittered "
        "| sync kernel | sync packet | sync jittered | loss kernel | loss packet |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (variant, buffer), c in df.iterrows():
        uk, up = c[("utilization", "kernel")], c[("utilization", "packet")]
        lines.append(f"| {variant} | {buffer:g} | {uk:.3f} | {up:.3f} | {100 * (up - uk):+.1f} | {c[('jain', 'kernel')]:.3f} | "
                     f"{c[('jain', 'packet')]:.3f} | {c[('jain', 'packet:jitter')]:.3f} | {c[('sync_rate', 'kernel')]:.3f} | "
                     f"{c[('sync_rate', 'packet')]:.3f} | {c[('sync_rate', 'packet:jitter')]:.3f} | "
                     f"{c[('loss', 'kernel')]:.2e} | {c[('loss', 'packet')]:.2e} |")
    big = df[df.index.get_level_values("buffer") >= 0.25]
    du = (100 * (big[("utilization", "packet")] - big[("utilization", "kernel")])).abs()
    dj = (df[("jain", "packet")] - df[("jain", "kernel")]).abs()
    ds = (df[("sync_rate", "packet")] - df[("sync_rate", "kernel")]).abs()
    dj_jit = (df[("jain", "packet:jitter")] - df[("jain", "kernel")]).abs()
    ds_jit = (df[("sync_rate", "packet:jitter")] - df[("sync_rate", "kernel")]).abs()
    du_all = (100 * (df[("utilization", "packet")] - df[("utilization", "kernel")])).abs()
    lines += ["", f"At 25-100% BDP, utilization within 3 points in {(du <= 3).sum()} of {len(du)} cells (all buffers: largest "
              f"gap {du_all.max():.1f} points); Jain within 0.1 in {(dj <= 0.1).sum()} of {len(dj)} (jittered packet engine: "
              f"{(dj_jit <= 0.1).sum()} of {len(dj_jit)}); synchronization rate within 0.1 in {(ds <= 0.1).sum()} of {len(ds)} "
              f"(jittered: {(ds_jit <= 0.1).sum()} of {len(ds_jit)}).", "",
              "Where the deterministic packet engine misses: its drop-tail queue decides which flow finds the one free "
              "slot by the exact phase of each flow's packets against the departures (Floyd & Jacobson, \"On traffic "
              "phase effects in packet-switched gateways\", 1992), so a few flows keep losing and others keep winning "
              "for the whole run: lower Jain at large buffers, and its own synchronization pattern. Linux has that "
              "randomness built in (scheduling, interrupts, timers). One packet time of send jitter in the packet "
              "engine, which models it, brings Jain and the synchronization rate within 0.1 of Linux in the cells "
              "counted above. The 10% BDP cells' utilization (largest gap above) is reported, outside the target's "
              "25-100%.", ""]
    DOC.write_text("\n".join(lines))
    print(f"wrote {DOC} ({wall:.0f} s)")


if __name__ == "__main__":
    main()
