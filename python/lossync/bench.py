"""`lossync bench --suite`: what the engines cost, in one table for docs/validation/bench.md.

Each case runs in a fresh Python process of its own (`python -m lossync.bench`), so its peak
memory (VmHWM) is its own, and is timed in three parts: set-up (reading and resolving the
scenario, building the engine), the simulation, and the summary. The cases:

- packet engine: 10 Reno flows on dumbbells of 1, 10, 100 and 400 Gb/s (RTT 100 ms, buffer 25% of
  the BDP) loaded from the first RTT (`dumbbell`), and at 10 Gb/s with slow start; NSFnet with its flow groups scaled to 700 flows; NSFnet as an OBS
  network (the obs-stats study's); on one thread (the serial scheduler), and 100 Reno flows at
  1 Gb/s, NSFnet with 700 flows and the 400 Gb/s dumbbell on the partitioned scheduler at one
  thread and at every core;
- fluid engine (`tcp` model): 10 to 10^6 Reno flows on a 100 Gb/s dumbbell (RTT 100 ms, buffer
  10% of the BDP), each on one thread and, from 10^4 flows, on every core;
- the seed paper's Fig. 9 grid at its protocol (960 runs of 3000 s) on every core;
- the buffer advisor's answer (`lossync size-buffer --flows 10:highspeed:80ms..260ms`).

The packet engine uses `run.threads` under its partitioned scheduler only (docs/packet.md).
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

FIG9_VARIANTS = ("reno", "highspeed", "cubic", "htcp")
FIG9_XS = (0.3, 0.6, 1.0)
FIG9_BUFFERS = (0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.7, 1.0)
FLUID_FLOWS = (10, 100, 1_000, 10_000, 100_000, 1_000_000)
#: Flow-updates per fluid case (fewer for the largest, whose set-up alone takes seconds).
FLUID_UPDATES = 2e8


def dumbbell(capacity_gbps: float, seconds: float, loaded: bool = True) -> dict[str, Any]:
    """10 Reno flows, RTT 100 ms, buffer 25% of the BDP. `loaded`: the link full from the first
    RTT to the end, without a loss: each flow starts in congestion avoidance with its window at,
    and capped at, 1.2 × a tenth of the BDP, behind an access link of a tenth of the capacity
    (so the ten windows leave at the bottleneck's rate and queue a fifth of the BDP). Otherwise
    slow start from 10 packets and no cap (losses, recovery, Reno's saw-tooth)."""
    bdp_pkts = capacity_gbps * 1e9 * 0.1 / (8 * 1500)
    flows: dict[str, Any] = {"count": 10, "cc": "reno", "rtt": "100ms"}
    if loaded:
        window = round(1.2 * bdp_pkts / 10)
        flows.update(slow_start=False, initial_window=window, rwnd={"packets": window},
                     access_capacity=f"{capacity_gbps / 10:g}Gbps")
    return {"engine": "packet", "dumbbell": {"capacity": f"{capacity_gbps:g}Gbps", "buffer": {"bdp_fraction": 0.25}},
            "flows": [flows], "run": {"duration": seconds, "record_interval": seconds / 10}}


def nsfnet_700(seconds: float) -> dict[str, Any]:
    """NSFnet (examples/nsfnet.toml) with its flow groups scaled from 20 to 700 flows."""
    from .scenario import load_scenario

    doc = load_scenario("nsfnet")
    for g in doc["flows"]:
        g["count"] = g.get("count", 1) * 35
    doc["engine"] = "packet"
    doc["run"] = {"duration": seconds, "warmup": seconds / 4, "record_interval": 1.0, "from_first_congestion": False}
    return doc


def fluid_dumbbell(flows: int, seconds: float) -> dict[str, Any]:
    """`flows` Reno flows on a 100 Gb/s dumbbell, RTT 100 ms, buffer 10% of the BDP, the default
    `tcp` loss model."""
    return {"engine": "fluid", "dumbbell": {"capacity": "100Gbps", "buffer": {"bdp_fraction": 0.1}},
            "flows": [{"count": flows, "cc": "reno", "rtt": "100ms"}], "run": {"duration": seconds, "record_interval": seconds / 2}}


def packet_cases(quick: bool) -> list[tuple[str, dict[str, Any]]]:
    from .studies.obs import obs_nsfnet

    scale = 0.1 if quick else 1.0
    return [
        ("dumbbell 1 Gb/s, loaded", dumbbell(1, 20 * scale)),
        ("dumbbell 10 Gb/s, loaded", dumbbell(10, 5 * scale)),
        ("dumbbell 10 Gb/s, slow start", dumbbell(10, 10 * scale, loaded=False)),
        ("dumbbell 100 Gb/s, loaded", dumbbell(100, 1 * scale)),
        ("dumbbell 400 Gb/s, loaded", dumbbell(400, 0.5 * scale)),
        ("NSFnet, 700 flows", nsfnet_700(10 * scale)),
        ("OBS NSFnet (1 ms assemblers)", obs_nsfnet(1, duration_s=10 * scale)),
    ]


def fluid_cases(quick: bool) -> list[tuple[int, dict[str, Any]]]:
    flows = FLUID_FLOWS[:5] if quick else FLUID_FLOWS
    updates = FLUID_UPDATES / (20 if quick else 1)
    return [(n, fluid_dumbbell(n, min(3000.0, max(0.3, updates / (n * 1000))))) for n in flows]


def threads_cases(quick: bool) -> list[tuple[str, dict[str, Any]]]:
    """The packet cases timed on the partitioned scheduler."""
    scale = 0.1 if quick else 1.0
    many = {"engine": "packet", "dumbbell": {"capacity": "1Gbps", "buffer": {"bdp_fraction": 0.25}},
            "flows": [{"count": 100, "cc": "reno", "rtt": "50ms..150ms", "start": {"uniform": ["0s", "1s"]}}],
            "run": {"duration": 30 * scale, "warmup": 2 * scale}}
    return [("dumbbell 1 Gb/s, 100 flows", many), ("NSFnet, 700 flows", nsfnet_700(30 * scale)),
            ("dumbbell 400 Gb/s, loaded", dumbbell(400, 0.5 * scale))]


def measure(doc: dict[str, Any], threads: int | None = None, scheduler: str | None = None) -> dict[str, Any]:
    """Runs `doc` in a fresh process (on `threads`, under `scheduler` when given); its set-up,
    simulation and summary times, peak memory and summary figures."""
    case = json.dumps({"doc": doc, "threads": threads, "scheduler": scheduler})
    r = subprocess.run([sys.executable, "-m", "lossync.bench"], input=case, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"bench case failed: {r.stderr.strip()[-2000:]}")
    return json.loads(r.stdout)


def _child() -> None:
    """One case, in this process: read it from stdin, print its figures as JSON."""
    from . import _core
    from .results import Result
    from .scenario import prepare

    case = json.loads(sys.stdin.read())
    threads, scheduler = case["threads"], case.get("scheduler")
    t0 = time.perf_counter()
    p = prepare(case["doc"], ([f"run.threads={threads}"] if threads else []) + ([f'run.scheduler="{scheduler}"'] if scheduler else []))
    sim = _core.Simulation(p.core)
    t1 = time.perf_counter()
    sim.advance(sim.duration_s)
    t2 = time.perf_counter()
    drops = sim.drops()
    result = Result.from_core(sim.finish(), p.resolved, drops, sim.fct(), core=p.core)
    t3 = time.perf_counter()
    s = result.summary
    print(json.dumps({
        "setup_s": t1 - t0, "simulate_s": t2 - t1, "summary_s": t3 - t2, "sim_s": s["duration_s"],
        "flow_updates": s["flow_updates"], "flows": len(s["flows"]), "utilization": s["utilization"],
        "arrivals_pkts": sum(link["arrivals_pkts"] for link in s["links"]),
        "bottleneck_arrivals_pkts": next(link["arrivals_pkts"] for link in s["links"] if link["name"] == s["bottleneck"]),
        "measured_from_s": s["measured_from_s"],
        "max_rss_bytes": _peak_rss_bytes(),
    }))


def _peak_rss_bytes() -> int:
    """This process's peak resident memory: VmHWM, whose count starts at its exec (`ru_maxrss`
    keeps the parent's from before the exec, proc(5), getrusage(2))."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))


def _fig9_one(args: tuple[str, float, float, int, float, float]) -> tuple[float, int]:
    from . import run
    from .scenario import default_scenario_path

    variant, x, fraction, seed, duration, step = args
    r = run(default_scenario_path(), [f'flows.0.cc="{variant}"', f"loss.sync.x={x}", f"dumbbell.buffer.bdp_fraction={fraction}",
                                      f"run.seed={seed}", f"run.duration={duration}", f"run.step={step}", "run.record_interval=10"],
            progress=False, warn=False)
    return r.summary["utilization"], r.summary["flow_updates"]


def fig9_grid(seeds: int = 10, duration_s: float = 3000.0, step_s: float = 0.001, workers: int | None = None) -> dict[str, Any]:
    """The seed paper's Fig. 9 grid: 4 variants × 3 synchronization levels × 8 buffers × `seeds`
    runs of `duration_s` (the default scenario's 10 Gb/s, 10 flows), on a process pool. Returns
    the wall time, the flow-updates, and each run's (variant, x, buffer fraction, seed,
    utilization) in `rows`."""
    grid = list(itertools.product(FIG9_VARIANTS, FIG9_XS, FIG9_BUFFERS, range(1, seeds + 1)))
    workers = workers or os.cpu_count() or 1
    t0 = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        done = list(pool.map(_fig9_one, [(*c, duration_s, step_s) for c in grid], chunksize=4))
    return {"runs": len(done), "workers": workers, "wall_s": time.perf_counter() - t0,
            "flow_updates": sum(u for _, u in done), "duration_s": duration_s,
            "rows": [(*c, u) for c, (u, _) in zip(grid, done)]}


def advisor_s() -> float:
    """Wall time of `lossync size-buffer --flows 10:highspeed:80ms..260ms` (the whole command)."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "lossync", "size-buffer", "--flows", "10:highspeed:80ms..260ms"],
                   capture_output=True, check=True)
    return time.perf_counter() - t0


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        with open("/proc/meminfo") as f:
            mem = f"{int(f.readline().split()[1]) / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        mem = "unknown memory"
    return f"{cpu}, {os.cpu_count()} cores, {mem}, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def suite(quick: bool = False, say=print) -> str:
    """Runs every case and returns the tables as Markdown; `say` hears each row as it is done."""
    from . import _core

    cores = os.cpu_count() or 1
    lines = [f"lossync {_core.__version__}, {time.strftime('%Y-%m-%d')}; {machine()}." + (" `--quick`." if quick else ""), ""]
    lines += ["## Packet engine (one thread)", "",
              "Packet-hops: packets served by the ports of the scenario's links over the run (a loaded dumbbell's",
              "access links are simulated, as ports of their own, but not counted). Dumbbells: the packets the",
              "bottleneck served per wall second, and the simulated seconds per wall second that makes at full",
              "load (over its capacity in packets per second).", "",
              "| case | sim s | wall s | sim s / wall s | M packet-hops / wall s | M bottleneck packets / wall s "
              "| sim s / wall s at full load | utilization | peak MB |",
              "|---|---|---|---|---|---|---|---|---|"]
    for name, doc in packet_cases(quick):
        m = measure(doc)
        to_run = m["sim_s"] / (m["sim_s"] - m["measured_from_s"])  # the window's counts, scaled to the run
        hops = m["arrivals_pkts"] * to_run / m["simulate_s"]
        bottleneck = m["bottleneck_arrivals_pkts"] * to_run / m["simulate_s"]
        wall = m["setup_s"] + m["simulate_s"] + m["summary_s"]
        if "dumbbell" in doc:
            capacity_pps = float(doc["dumbbell"]["capacity"][:-4]) * 1e9 / (8 * 1500)
            at_bottleneck = f"{bottleneck / 1e6:.2f} | {bottleneck / capacity_pps:.3g}"
        else:
            at_bottleneck = "– | –"
        lines.append(f"| {name} | {m['sim_s']:g} | {wall:.2f} | {m['sim_s'] / m['simulate_s']:.3g} | {hops / 1e6:.2f} | "
                     f"{at_bottleneck} | {m['utilization']:.3f} | {m['max_rss_bytes'] / 1e6:.0f} |")
        say(lines[-1])
    lines += ["", f"## Packet engine on every core (the partitioned scheduler, {cores} threads)", "",
              "Simulation wall time under the serial scheduler, and under the partitioned one on one thread and",
              f"on {cores}; its results are the same for every thread count. Speed-up and efficiency (speed-up over",
              "threads) are against the partitioned scheduler on one thread.", "",
              "| case | sim s | serial s | partitioned, 1 thread s | partitioned, all threads s | speed-up | efficiency "
              "| sim s / wall s | peak MB, all threads |",
              "|---|---|---|---|---|---|---|---|---|"]
    for name, doc in threads_cases(quick):
        serial, one, every = measure(doc), measure(doc, 1, "partitioned"), measure(doc, cores, "partitioned")
        speedup = one["simulate_s"] / every["simulate_s"]
        lines.append(f"| {name} | {every['sim_s']:g} | {serial['simulate_s']:.2f} | {one['simulate_s']:.2f} | "
                     f"{every['simulate_s']:.2f} | {speedup:.2f} | {speedup / cores:.2f} | "
                     f"{every['sim_s'] / every['simulate_s']:.3g} | {every['max_rss_bytes'] / 1e6:.0f} |")
        say(lines[-1])
    base = measure(fluid_dumbbell(1, 0.3))["max_rss_bytes"]

    def per_flow(extra_bytes: float, flows: int) -> str:
        # Below 10 MB above the one-flow run the difference is the allocator's noise, not flows.
        return f"{extra_bytes / flows / 1e3:.2f}" if extra_bytes >= 10e6 else "–"

    lines += ["", "## Fluid engine (`tcp` model, Reno, 100 Gb/s)", "",
              f"kB / flow: the peak above that of a one-flow run ({base / 1e6:.0f} MB: Python, the library, the"
              " summary), per flow.", "",
              "| flows | threads | sim s | set-up s | simulate s | flow-updates / s | ns / flow-update | peak MB | kB / flow |",
              "|---|---|---|---|---|---|---|---|---|"]
    for n, doc in fluid_cases(quick):
        for threads in (1, cores) if n >= 10_000 and cores > 1 else (1,):
            m = measure(doc, threads)
            rate = m["flow_updates"] / m["simulate_s"]
            lines.append(f"| {n:,} | {threads} | {m['sim_s']:g} | {m['setup_s']:.2f} | {m['simulate_s']:.2f} | {rate:.3g} | "
                         f"{1e9 / rate:.1f} | {m['max_rss_bytes'] / 1e6:.0f} | {per_flow(m['max_rss_bytes'] - base, n)} |")
            say(lines[-1])
    g = fig9_grid(seeds=1 if quick else 10)
    lines += ["", "## Studies", "",
              f"- The seed paper's Fig. 9 grid, {g['runs']} runs of {g['duration_s']:g} s on {g['workers']} workers: "
              f"{g['wall_s']:.1f} s wall ({g['flow_updates'] / g['wall_s']:.3g} flow-updates / s).",
              f"- The buffer advisor (`lossync size-buffer --flows 10:highspeed:80ms..260ms`): {advisor_s():.1f} s wall."]
    say("\n".join(lines[-2:]))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    _child()
