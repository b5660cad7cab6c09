"""The fluid form of optical burst switching against the packet engine's bursts (issue 12, items 5
and 7): one OBS edge (the obs-sync study's: Reno flows of 20 ms, a 1 ms assembler, 2% Bernoulli
burst loss at a 10 Gb/s wavelength, 1000-byte segments), over assembly policies, numbers of flows
and access rates, 300 s after 60 s of warm-up, one seed. Per cell: mean per-flow throughput, the
mean flows per lost burst (m_k, what the fluid engine must reproduce to carry burst assembly's
synchronization) and the aggregate Σ cwnd/RTT's coefficient of variation, for the packet engine,
the fluid engine, and the fluid engine driven by the packet run's m_k (`assembler.m_distribution`
= the packet run's `--sync-out`).
Writes docs/validation/obs.md.

    python scripts/obs_validation.py [--workers 2]
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "validation" / "obs.md"
POLICIES = [("per_flow", 1), ("mixed", 1), ("random", 2), ("random", 4)]
#: (flows, aggregate access bandwidth): the obs-sync study's 1 Gb/s shared by 10 and 25 flows,
#: and 10 flows at 20 Mb/s and at 1 Gb/s each (slow and fast access against the 1 ms timer).
LOADS = [(10, 1e9), (25, 1e9), (10, 2e8), (10, 1e10)]


def one(policy: str, queues: int, flows: int, total_bps: float) -> list[dict]:
    """The cell in the packet engine, the fluid engine, and the fluid engine driven by the packet
    run's distribution of flows per lost burst."""
    import tempfile

    import lossync
    from lossync.studies.obs import long_lived, obs_edge

    assembler = {"timer": "1ms", "policy": policy}
    if policy == "random":
        assembler["queues"] = queues
    doc = obs_edge(assembler, long_lived(flows), 300.0, 60.0)
    doc["flows"][0]["access_capacity"] = f"{total_bps / flows:.6g}bps"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        m_file = Path(tmp) / "m.csv"
        # Per-flow bursts hold one flow by construction: nothing to drive there.
        for engine in ("packet", "fluid") if policy == "per_flow" else ("packet", "fluid", "fluid:m"):
            doc["engine"] = engine.partition(":")[0]
            if engine == "fluid:m":
                doc["links"][0]["assembler"] = dict(assembler, m_distribution=str(m_file))
            t0 = time.perf_counter()
            r = lossync.run(doc)
            if engine == "packet":
                r.sync_distribution().to_csv(m_file, index=False)
            s = r.summary
            rows.append({"policy": policy if policy != "random" else f"random {queues}", "flows": flows,
                         "access_mbps": total_bps / flows / 1e6, "engine": engine, "wall_s": time.perf_counter() - t0,
                         "throughput_mbps": r.flows["throughput_bps"].mean() / 1e6,
                         "m_k": s["links"][0]["bursts"]["mean_flows_per_lost_burst"], "cv": s["aggregate"]["cv"]})
    return rows


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=2)
    a = p.parse_args()
    jobs = [(pol, q, n, tot) for pol, q in POLICIES for n, tot in LOADS]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.workers) as ex:
        rows = pd.DataFrame([row for cell in ex.map(one, *zip(*jobs)) for row in cell])
    wall = time.perf_counter() - t0
    keys = ["policy", "flows", "access_mbps"]
    cells = rows.pivot_table(index=keys, columns="engine", values=["throughput_mbps", "m_k", "cv"], sort=False)
    lines = [
        "# Optical burst switching: the fluid form against the packet engine",
        "",
        "One OBS edge (the `obs-sync` study's: Reno flows of 20 ms, a 1 ms assembler, 2% Bernoulli burst loss at",
        "a 10 Gb/s wavelength, 1000-byte segments; 300 s after a 60 s warm-up, one seed), the packet engine's",
        "bursts against the fluid engine's form of them (docs/fluid.md, \"Optical burst switching\").",
        f"Regenerate with `python scripts/obs_validation.py` ({len(rows)} runs, {wall:.0f} s on {a.workers} workers).",
        "",
        "Columns: per-flow throughput (Mb/s) and the aggregate's CV in the packet engine, the fluid engine (its own",
        "flows per lost burst) and the fluid engine driven by the packet run's m_k (\"fluid, m\"); m_k of each.",
        "",
        "| policy | flows | access (Mb/s) | throughput packet | fluid | fluid, m | fluid/packet | fluid, m/packet "
        "| m_k packet | fluid | fluid, m | CV packet | fluid | fluid, m |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    ratios, driven = [], []
    for key, c in cells.iterrows():
        tp, tf, tm = (c[("throughput_mbps", e)] for e in ("packet", "fluid", "fluid:m"))
        ratios.append(tf / tp)
        if tm == tm:  # not NaN: a driven run exists
            driven.append(tm / tp)
        f = lambda x, d: "-" if x != x else f"{x:.{d}f}"  # noqa: E731
        m = " | ".join(f(c[("m_k", e)], 2) for e in ("packet", "fluid", "fluid:m"))
        cv = " | ".join(f(c[("cv", e)], 3) for e in ("packet", "fluid", "fluid:m"))
        lines.append(f"| {key[0]} | {key[1]} | {key[2]:g} | {tp:.2f} | {tf:.2f} | {f(tm, 2)} | {tf / tp:.2f} | {f(tm / tp, 2)} | {m} | {cv} |")
    med = lambda x: pd.Series(x).median()  # noqa: E731
    lines += [
        "",
        f"Fluid over packet throughput: {min(ratios):.2f} to {max(ratios):.2f} (median {med(ratios):.2f}); driven by the "
        f"packet run's m_k: {min(driven):.2f} to {max(driven):.2f} (median {med(driven):.2f}).",
        "",
        "**Reading.** Both engines put one flow in each lost per-flow burst, and order the policies alike (mixed-flow",
        "above randomized queues above per-flow) in flows per lost burst and in the aggregate's variation. The fluid",
        "form's throughput is mostly above the packet engine's. Part of it is the fluid `tcp` sender's own: with",
        "per-packet random loss instead of bursts (4 Reno flows of 20 ms at 100 Mb/s, loss 0.2% to 2%) the fluid is",
        "6% to 10% above the packet engine (5% at 0.1% and 0.03% with 10 flows at 1 Gb/s); the rest comes with",
        "bursts (a batch of segments lost at once), and we have not found it. Flows per",
        "lost mixed-flow burst agree within a factor 1.6 either way: they depend on how the flows' ACK-clocked",
        "clumps line up, which the fluid carries but smooths.",
        "",
        "**Driven by the packet run's m_k** (`assembler.m_distribution`): the fluid's flows per lost burst follow the",
        "packet run's (by construction) and the aggregate's variation comes closer to the packet engine's in most",
        "cells, but throughput does not improve: a lost burst that must hold more flows than the fluid put in it",
        "takes the rest at random among the queue's senders, which lose a window without having sent into the",
        "burst; in the mixed-flow cells of 10 flows at 100 Mb/s and 1 Gb/s per-flow throughput falls to 0.55 and",
        "0.83 of the packet engine's. The measured m_k is the packet engine's answer to \"how synchronized\", not a",
        "substitute for which flows a burst holds.",
        "",
    ]
    DOC.write_text("\n".join(lines))
    print(f"wrote {DOC} ({wall:.0f} s)")


if __name__ == "__main__":
    main()
