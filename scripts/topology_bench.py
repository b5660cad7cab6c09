"""Packet engine cost on topologies (issue: packet-level networks). Three measurements, each a
whole run timed on this machine (CPU seconds of the process, so other load on the machine
counts less):

1. Chains of k = 1, 2, 5, 10, 20 links (1 Gb/s, 1 ms, 0.25 BDP at 100 ms each; RTTs 100 ms): one
   flow crosses all k links and one cross flow enters and leaves at each link (the parking lot
   grown to k hops). The cost per packet-hop (CPU time over the packets served by all ports)
   should not grow with k. Each chain runs 20/k times the given seconds, so every run serves
   about the same packet-hops; the median of --repeats runs, taken in turns. Beside it, the
   same k + 1 flows on one link of k Gb/s, each behind a 1 Gb/s access link (the chain's
   traffic without its topology): what the flows alone cost.
2. NSFnet (examples/nsfnet.toml) with its flow groups scaled to about 700 long-lived flows:
   simulated seconds per wall second and packet-hops per wall second.
3. NSFnet as an OBS network (the obs-stats study's: burst assemblers per edge pair, Poisson
   transfers, 600-800 active flows): the same two figures.

Packet-hops are counted over the measurement window and scaled to the whole run.

    python scripts/topology_bench.py [--seconds 10] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import lossync


def chain(k: int, seconds: float) -> dict:
    links = [{"name": f"l{i}", "capacity": "1Gbps", "delay": "1ms",
              "buffer": {"bdp_fraction": 0.25, "reference_rtt": "100ms"}} for i in range(k)]
    flows = [{"name": "long", "cc": "cubic", "rtt": "100ms", "path": [f"l{i}" for i in range(k)], "slow_start": True}]
    flows += [{"name": f"cross{i}", "cc": "cubic", "rtt": "100ms", "path": [f"l{i}"], "slow_start": True} for i in range(k)]
    return {"engine": "packet", "links": links, "flows": flows,
            "run": {"duration": seconds, "warmup": seconds / 4, "record_interval": 1.0, "from_first_congestion": False}}


def one_link(k: int, seconds: float) -> dict:
    """The chain's k + 1 flows on one link of k Gb/s, each paced by a 1 Gb/s access link."""
    doc = chain(1, seconds)
    doc["links"][0]["capacity"] = f"{k}Gbps"
    doc["flows"] = [dict(doc["flows"][1], name=f"f{i}", access_capacity="1Gbps") for i in range(k + 1)]
    return doc


def timed(doc, overrides=()) -> tuple[float, dict]:
    t0 = time.perf_counter()
    s = lossync.run(doc, list(overrides), progress=False).summary
    return time.perf_counter() - t0, s


def cpu_ns_per_hop(doc) -> float:
    t0 = time.process_time()
    s = lossync.run(doc, [], progress=False).summary
    return 1e9 * (time.process_time() - t0) / packet_hops(s)


def packet_hops(s: dict) -> float:
    """Packets served by all ports over the run (the window's, scaled to the whole run)."""
    window = sum(link["arrivals_pkts"] for link in s["links"])
    return window * s["duration_s"] / (s["duration_s"] - s["measured_from_s"])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=10.0, help="simulated seconds of the 20-link chain and NSFnet runs")
    p.add_argument("--repeats", type=int, default=3, help="runs per chain, median reported")
    a = p.parse_args()
    timed(chain(1, 1.0))  # loads the library, so the first row is not charged for it
    ks = (1, 2, 5, 10, 20)
    runs: dict[tuple[str, int], list[float]] = {}
    for _ in range(a.repeats):
        for k in ks:
            for name, make in (("chain", chain), ("one link", one_link)):
                runs.setdefault((name, k), []).append(cpu_ns_per_hop(make(k, a.seconds * 20 / k)))
    ns = {key: statistics.median(v) for key, v in runs.items()}
    print(f"{'links':>6}{'ns per hop':>12}{'vs 1 link':>11}{'same flows, one link':>23}{'chain / that':>14}")
    for k in ks:
        c, o = ns[("chain", k)], ns[("one link", k)]
        print(f"{k:>6}{c:>12.1f}{c / ns[('chain', 1)]:>10.2f}x{o:>22.1f}{c / o:>13.2f}x")
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
