"""Does a calibration hold on runs it was not fitted on? For the small-buffer cells of the fidelity
matrix (scripts/fidelity.py: every variant mix, buffers 2, 5 and 10% of the BDP, 10 flows at
100 Mb/s and 1 Gb/s, RTTs spread 1:3), `lossync calibrate` fits `burst_per_sqrt_buffer` or `event_threshold`
to the utilization on seeds 1-2 of 60 s runs (lengthened by `calibrate`, doubling, until the packet engine's utilization has agreed with
runs half as long within a point twice in a row, at most to 960 s: column fit_s); the calibrated fluid engine is then compared with
packet runs of seeds 3-4 twice as long as those it was fitted on, at the buffer it was fitted on
and at twice that buffer. The packet runs are the fidelity matrix's reference, `packet:jitter`:
each packet waits up to one bottleneck packet time before it is sent (Floyd & Jacobson's remedy
for phase effects), so the seeds differ. (With --deterministic they do not: with equal start
times and fixed RTTs the seed changes nothing, so "other seeds" adds no variety; the longer runs
and the other buffer do.) Rows "with the sync rate" (columns synced_*) are `calibrate --fit-sync-rate` on
the same packet reference: after the headroom, `event_threshold` fitted to the packet engine's
synchronization rate too. Columns u_* are utilizations, s_* synchronization rates (mean share of
the flows that lose per congestion event).

Writes docs/validation/calibration.md, or with --deterministic docs/validation/calibration-deterministic.md.

    python scripts/calibration.py [--workers 2] [--deterministic]
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import fidelity  # scripts/fidelity.py: the matrix's cells
import pandas as pd

from lossync.comparison import with_send_jitter

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "validation" / "calibration.md"
FIT = {"duration": "60s", "warmup": "20s"}
CHECK_SEEDS = [3, 4]


def cells(jitter: bool = True) -> list[tuple[dict, dict]]:
    """The cells, with the reference's send jitter, or with none (`send_jitter = 0`, which
    `calibrate` keeps instead of adding its own)."""
    return [(k, with_send_jitter(d) if jitter else dict(d, flows=[dict(g, send_jitter=0) for g in d["flows"]]))
            for k, d in fidelity.cells()
            if k["variant"] in fidelity.VARIANTS and k["buffer"] <= 0.1 and k["flows"] == 10 and k["capacity"] in ("100Mbps", "1Gbps") and k["rtt"] == "spread"]


def one(key: dict, doc: dict) -> dict:
    from lossync import calibrate
    from lossync.calibration import seed_means  # the means calibrate itself fits on

    fit = {**doc, "run": {**doc["run"], **FIT}}
    cal = calibrate(fit, seeds=2)
    f = cal["fitted"]
    fitted_s, warmup_s = f["duration_s"], f["warmup_s"]
    # The same fit with the synchronization rate (--fit-sync-rate), on the same packet reference.
    settled = {**fit, "run": {**fit["run"], "duration": fitted_s, "warmup": warmup_s}}
    synced = calibrate(settled, seeds=2, fit_sync_rate=True, reference_utilization=f["packet_utilization"],
                       reference_sync_rate=f["packet_sync_rate"])
    check = {**doc, "run": {**doc["run"], "duration": 2 * fitted_s, "warmup": 2 * warmup_s}}
    # The same calibrations at twice the buffer (a cell they were not fitted on).
    double = {**check, "dumbbell": {**check["dumbbell"], "buffer": {"bdp_fraction": 2 * key["buffer"]}}}
    row = {**key, "fit_s": fitted_s, "burst_per_sqrt_buffer": cal["burst_per_sqrt_buffer"], "event_threshold": cal["event_threshold"], "note": f["note"],
           "synced_burst_per_sqrt_buffer": synced["burst_per_sqrt_buffer"], "synced_event_threshold": synced["event_threshold"]}
    loss = {name: {"model": "tcp", "burst_per_sqrt_buffer": c["burst_per_sqrt_buffer"], "event_threshold": c["event_threshold"]}
            for name, c in (("calibrated", cal), ("synced", synced))}
    for suffix, d in (("", check), ("_2b", double)):
        for name, run_doc in (("packet", {**d, "engine": "packet"}), ("fluid", {**d, "engine": "fluid"}),
                              *((name, {**d, "engine": "fluid", "loss": lo}) for name, lo in loss.items())):
            row[f"u_{name}{suffix}"], row[f"s_{name}{suffix}"] = seed_means(run_doc, CHECK_SEEDS, None)
    return row


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--deterministic", action="store_true", help="packet runs without send jitter (with their phase effects)")
    a = p.parse_args()
    doc, data = (DOC.with_name("calibration-deterministic.md"), "calibration-deterministic.json") if a.deterministic else (DOC, "calibration.json")
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.workers) as pool:
        rows = list(pool.map(one, *zip(*cells(not a.deterministic))))
    wall = time.perf_counter() - t0
    df = pd.DataFrame(rows)
    for suffix in ("", "_2b"):
        for name in ("fluid", "calibrated", "synced"):
            df[f"du_{name}{suffix}"] = df[f"u_{name}{suffix}"] - df[f"u_packet{suffix}"]
            df[f"ds_{name}{suffix}"] = df[f"s_{name}{suffix}"] - df[f"s_packet{suffix}"]
    within = lambda col, tol: f"{(df[col].abs() <= tol).mean():.0%}"  # noqa: E731
    lines = ["# Calibrated fluid engine on runs it was not fitted on", "", __doc__.split("\n\n")[0].replace("\n", " "), "",
             *(["These packet runs have no send jitter: the deterministic engine, with its phase effects. The reference is "
                "the jittered engine: [calibration.md](calibration.md).", ""] if a.deterministic else []),
             f"{len(df)} cells, {wall / 60:.1f} min on {a.workers} workers. Regenerate: `python scripts/calibration.py{' --deterministic' if a.deterministic else ''}`.", "",
             "| | within 2 points | within 3 points | median abs dU | max abs dU | median abs d(sync rate) |", "|---|---|---|---|---|---|"]
    for name, col in [("uncalibrated (tcp)", "du_fluid"), ("calibrated", "du_calibrated"), ("calibrated with the sync rate", "du_synced"),
                      ("uncalibrated, twice the buffer", "du_fluid_2b"), ("calibrated, twice the buffer", "du_calibrated_2b"),
                      ("calibrated with the sync rate, twice the buffer", "du_synced_2b")]:
        ds = df["ds" + col.removeprefix("du")].abs().median()
        lines.append(f"| {name} | {within(col, 0.02)} | {within(col, 0.03)} | {df[col].abs().median():.3f} | {df[col].abs().max():.3f} | {ds:.3f} |")
    lines += ["", fidelity.markdown(df.round(4), index=False), ""]
    doc.write_text("\n".join(lines) + "\n")
    (ROOT / "docs" / "validation" / "data" / data).write_text(json.dumps(rows, indent=1) + "\n")
    print("\n".join(lines[:10]))


if __name__ == "__main__":
    main()
