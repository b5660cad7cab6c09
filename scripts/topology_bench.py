"""Packet engine cost on topologies (issue: packet-level networks). Two measurements, each a
whole run timed on this machine:

1. Chains of k = 1, 2, 5, 10, 20 links (1 Gb/s, 1 ms, 0.25 BDP at 100 ms each; RTTs 100 ms): one flow crosses all k links and one
   cross flow enters and leaves at each link (the parking lot grown to k hops). The cost per
   packet-hop (wall time over the packets served by all ports) should not grow with k.
2. NSFnet (examples/nsfnet.toml) with its flow groups scaled to about 700 long-lived flows:
   simulated seconds per wall second and packet-hops per wall second.
3. NSFnet as an OBS network (the obs-stats study's: burst assemblers per edge pair, Poisson
   transfers, 600-800 active flows): the same two figures.

Packet-hops are counted over the measurement window and scaled to the whole run.

    python scripts/topology_bench.py [--seconds 10]
"""

from __future__ import annotations

import argparse
import time

import lossync


def chain(k: int, seconds: float) -> dict:
    links = [{"name": f"l{i}", "capacity": "1Gbps", "delay": "1ms",
              "buffer": {"bdp_fraction": 0.25, "reference_rtt": "100ms"}} for i in range(k)]
    flows = [{"name": "long", "cc": "cubic", "rtt": "100ms", "path": [f"l{i}" for i in range(k)], "slow_start": True}]
    flows += [{"name": f"cross{i}", "cc": "cubic", "rtt": "100ms", "path": [f"l{i}"], "slow_start": True} for i in range(k)]
    return {"engine": "packet", "links": links, "flows": flows,
            "run": {"duration": seconds, "warmup": seconds / 4, "record_interval": 1.0, "from_first_congestion": False}}


def timed(doc, overrides=()) -> tuple[float, dict]:
    t0 = time.perf_counter()
    s = lossync.run(doc, list(overrides), progress=False).summary
    return time.perf_counter() - t0, s


def packet_hops(s: dict) -> float:
    """Packets served by all ports over the run (the window's, scaled to the whole run)."""
    window = sum(link["arrivals_pkts"] for link in s["links"])
    return window * s["duration_s"] / (s["duration_s"] - s["measured_from_s"])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=10.0, help="simulated seconds per run")
    a = p.parse_args()
    timed(chain(1, 1.0))  # loads the library, so the first row is not charged for it
    print(f"{'links':>6}{'wall s':>9}{'packet-hops':>14}{'ns per hop':>12}")
    base = None
    for k in (1, 2, 5, 10, 20):
        wall, s = timed(chain(k, a.seconds))
        hops = packet_hops(s)
        ns = 1e9 * wall / hops
        base = base or ns
        print(f"{k:>6}{wall:>9.2f}{hops:>14,.0f}{ns:>12.1f}   ({ns / base:.2f}x the one-link cost)")
    doc = lossync.load_scenario("nsfnet")
    scale = 35  # 20 flows in the example -> 700
    for g in doc["flows"]:
        g["count"] = g.get("count", 1) * scale
    doc["engine"] = "packet"
    doc["run"] = {"duration": a.seconds, "warmup": a.seconds / 4, "record_interval": 1.0, "from_first_congestion": False}
    wall, s = timed(doc)
    hops = packet_hops(s)
    print(f"NSFnet, {len(s['flows'])} flows, {len(s['links'])} links: {a.seconds:g} simulated s in {wall:.1f} s wall "
          f"({a.seconds / wall:.2f} simulated s per wall s), {hops / wall / 1e6:.1f} M packet-hops per wall s")
    from lossync.studies.obs import obs_nsfnet

    wall, s = timed(obs_nsfnet(1, duration_s=a.seconds))
    hops = packet_hops(s)
    active = sum(d["active_mean"] for d in s["dynamic"])
    print(f"OBS NSFnet (1 ms assemblers), {active:.0f} active flows on average, {len(s['links'])} links: "
          f"{a.seconds:g} simulated s in {wall:.1f} s wall ({a.seconds / wall:.2f} simulated s per wall s), "
          f"{hops / wall / 1e6:.1f} M packet-hops per wall s")


if __name__ == "__main__":
    main()
