"""Whether a kernel-engine run emulated its scenario cleanly: the `health` block of its summary.

The kernel engine's network is software on this machine's cores, and it degrades quietly: a
delay box that falls behind releases frames late and in bursts, a saturated core delays
softirqs, a full backlog drops frames before they reach the bottleneck. None of this shows in
the TCP metrics, so each run measures it (docs/kernel.md, "Health", states and justifies every
threshold below):

- the RTT of each target, measured with ICMP before the run (rttprobe.py);
- the delay box's lateness (release time minus due time, per frame) and stalls (delaybox.py);
- CPU: each core's busy fraction over the run (/proc/stat, sampled) and the delay box's own;
- drops outside the bottleneck: softnet backlog drops (/proc/net/softnet_stat), every veth's
  rx/tx drops, and frames the delay box lost.

`evaluate(...)` is a pure function of these measurements, so its verdicts are tested on
synthetic inputs too.
"""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

RTT_TOLERANCE_S = 1e-3  # the ICMP check's resolution on an idle network is ~0.1 ms
LATENESS_EDGES_S = (1e-4, 5e-4, 1e-3, 5e-3)  # the bins reported: <0.1, <0.5, <1, <5, >=5 ms
LATENESS_P99_FRACTION = 0.1  # of the smallest one-way delay: 1% of the frames see an RTT 10% off
STALLED_FRACTION = 0.05  # of the run: the box held due frames back this share of the time
BUSY_SATURATED = 0.95  # a core this busy in a sample has no slack for softirqs
SATURATED_SAMPLES = 0.5  # ... in more than this fraction of the run's samples: a saturated core
BOX_CPU_MAX = 0.9  # of one core: the delay box (one thread) has no slack left
CPU_INTERVAL_S = 0.25
PROC_STAT = Path("/proc/stat")
SOFTNET_STAT = Path("/proc/net/softnet_stat")


def _core_times() -> list[tuple[int, int]]:
    """(busy, total) jiffies per core (proc(5): user nice system idle iowait irq softirq steal;
    guest time is already in user)."""
    out = []
    for line in PROC_STAT.read_text().splitlines():
        name, *fields = line.split()
        if name.startswith("cpu") and name != "cpu":
            t = [int(x) for x in fields[:8]]
            total = sum(t)
            out.append((total - t[3] - t[4], total))
    return out


class CpuMonitor:
    """Samples every core's busy fraction every CPU_INTERVAL_S in a thread, between `with`'s
    entry and exit; `.report()` is the `cpu` block (without the delay box's share)."""

    def __init__(self, interval_s: float = CPU_INTERVAL_S) -> None:
        self.interval_s = interval_s
        self.samples: list[list[float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> CpuMonitor:
        self._first = self._last = _core_times()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._end = _core_times()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            now = _core_times()
            self.samples.append([_busy(a, b) for a, b in zip(self._last, now)])
            self._last = now

    def report(self) -> dict[str, Any]:
        return cpu_block([_busy(a, b) for a, b in zip(self._first, self._end)], self.samples)


def _busy(before: tuple[int, int], after: tuple[int, int]) -> float:
    total = after[1] - before[1]
    return (after[0] - before[0]) / total if total > 0 else 0.0


def cpu_block(busy_fraction: list[float], samples: list[list[float]]) -> dict[str, Any]:
    """The `cpu` block from each core's busy fraction over the run and per sample."""
    saturated = [c for c in range(len(busy_fraction))
                 if samples and sum(s[c] > BUSY_SATURATED for s in samples) > SATURATED_SAMPLES * len(samples)]
    return {"cores": len(busy_fraction), "busy_fraction": [round(b, 4) for b in busy_fraction],
            "samples": len(samples), "saturated_cores": saturated}


def softnet_drops() -> int:
    """Frames dropped because a core's input backlog was full, summed over cores (the second,
    hexadecimal, column of /proc/net/softnet_stat; one machine-wide counter, not per namespace)."""
    try:
        return sum(int(line.split()[1], 16) for line in SOFTNET_STAT.read_text().splitlines() if line.strip())
    except (OSError, IndexError, ValueError):
        return 0


def device_drops(namespaces: dict[str, str]) -> dict[str, dict[str, int]]:
    """rx and tx drops of every device but lo in each namespace: {"role/dev": {"rx": n, "tx": n}}."""
    out = {}
    for role, ns in namespaces.items():
        r = subprocess.run(["ip", "-n", ns, "-s", "-j", "link", "show"], capture_output=True, text=True)
        if r.returncode != 0:
            continue
        for dev in json.loads(r.stdout or "[]"):
            if dev.get("ifname") != "lo" and "stats64" in dev:
                s = dev["stats64"]
                out[f"{role}/{dev['ifname']}"] = {"rx": int(s["rx"]["dropped"]), "tx": int(s["tx"]["dropped"])}
    return out


def drops_between(before: dict[str, dict[str, int]], after: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    return {dev: {k: v - before.get(dev, {}).get(k, 0) for k, v in counts.items()} for dev, counts in after.items()}


def lateness_block(box: dict[str, Any]) -> dict[str, Any]:
    """Bins and percentiles of the delay box's lateness histogram (delaybox.py's stats)."""
    res_s = float(box.get("lateness_res_s", 1e-5))
    counts = sorted((int(i), int(c)) for i, c in box.get("lateness_counts", {}).items())
    n = sum(c for _, c in counts)
    labels = [f"<{e * 1e3:g}ms" for e in LATENESS_EDGES_S] + [f">={LATENESS_EDGES_S[-1] * 1e3:g}ms"]
    bins = dict.fromkeys(labels, 0)
    for i, c in counts:
        low_s = i * res_s  # a bin [low, low + res) lies wholly under an edge that is a multiple of res
        k = next((j for j, e in enumerate(LATENESS_EDGES_S) if low_s < e - res_s / 2), len(LATENESS_EDGES_S))
        bins[labels[k]] += c

    def percentile(p: float) -> float:
        # The upper edge of the bin holding the p-th frame: never an underestimate.
        seen = 0
        for i, c in counts:
            seen += c
            if seen >= p * n:
                return min((i + 1) * res_s, float(box.get("lateness_max_s", (i + 1) * res_s)))
        return 0.0

    return {"frames": n, "lateness_bins": bins, "lateness_p50_s": percentile(0.5) if n else 0.0,
            "lateness_p99_s": percentile(0.99) if n else 0.0, "lateness_max_s": float(box.get("lateness_max_s", 0.0))}


def evaluate(rtt_check: list[dict[str, Any]], box: dict[str, Any], cpu: dict[str, Any], softnet: int,
             devices: dict[str, dict[str, int]], min_rtt_s: float, buffer_drain_s: float, duration_s: float) -> dict[str, Any]:
    """The `health` block: the measurements, `problems` (one sentence each) and `healthy`.

    rtt_check: [{"target_s", "measured_s", "flows"}]; box: the delay box's stats (delaybox.py);
    cpu: `cpu_block(...)`; softnet: softnet drops during the run; devices: veth drops during the
    run ({"role/dev": {"rx", "tx"}}); min_rtt_s: the smallest target RTT; buffer_drain_s: the
    time the bottleneck takes to send a full buffer (B / C); duration_s: the run's length."""
    problems = []
    for c in rtt_check:
        if abs(c["measured_s"] - c["target_s"]) > RTT_TOLERANCE_S:
            problems.append(f"RTT {c['target_s'] * 1e3:g} ms measured {c['measured_s'] * 1e3:.2f} ms before the run (ICMP, idle network)")
    late = lateness_block(box)
    # Late by more than the buffer's drain time, a frame can reach the bottleneck in one burst
    # with frames that should have been spread over a full buffer's worth of time.
    limit_s = min(LATENESS_P99_FRACTION * min_rtt_s / 2, buffer_drain_s)
    if late["lateness_p99_s"] > limit_s:
        problems.append(f"the delay box released 1% of the frames more than {late['lateness_p99_s'] * 1e3:.2f} ms late "
                        f"(limit {limit_s * 1e3:.2f} ms): it could not keep up")
    longest, stalled = float(box.get("longest_stall_s", 0.0)), float(box.get("stalled_s", 0.0))
    if stalled > STALLED_FRACTION * duration_s or longest > buffer_drain_s:
        problems.append(f"the delay box stalled {box.get('stalls', 0)} times for {stalled:.2f} s in all, up to {longest * 1e3:.1f} ms "
                        f"(limits: {STALLED_FRACTION:.0%} of the run, and the buffer's drain time {buffer_drain_s * 1e3:.1f} ms for one stall): "
                        "it released the frames held meanwhile in bursts (the kernel woke it up as much as "
                        f"{float(box.get('woken_late_max_s', 0.0)) * 1e3:.1f} ms after its timer)")
    box_cpu = float(box.get("cpu_s", 0.0)) / max(float(box.get("lifetime_s", 0.0)), 1e-9)
    if box_cpu > BOX_CPU_MAX:
        problems.append(f"the delay box used {box_cpu:.0%} of a core (it runs on one)")
    for c in cpu.get("saturated_cores", []):
        problems.append(f"core {c} was more than {BUSY_SATURATED:.0%} busy for most of the run")
    if softnet > 0:
        problems.append(f"{softnet} frames dropped by full softnet backlogs (/proc/net/softnet_stat), outside the bottleneck")
    for dev, d in sorted(devices.items()):
        if d["rx"] or d["tx"]:
            problems.append(f"{dev} dropped {d['rx']} received and {d['tx']} sent frames, outside the bottleneck")
    box_lost = int(box.get("dropped", 0)) + int(box.get("send_failed", 0))
    if box_lost:
        problems.append(f"the delay box lost {box_lost} frames (socket buffer full or send failed), outside the bottleneck")
    return {
        "healthy": not problems,
        "problems": problems,
        "rtt_check": rtt_check,
        "delay_box": {**late, "lateness_limit_s": limit_s, "stalls": int(box.get("stalls", 0)),
                      "stalled_s": float(box.get("stalled_s", 0.0)), "longest_stall_s": longest,
                      "forwarded": int(box.get("forwarded", 0)), "cpu_fraction": round(box_cpu, 4),
                      "realtime": bool(box.get("realtime", False)), "woken_late_max_s": float(box.get("woken_late_max_s", 0.0))},
        "cpu": cpu,
        "drops_outside_bottleneck": {"softnet": softnet, "devices": devices, "delay_box_dropped": int(box.get("dropped", 0)),
                                     "delay_box_send_failed": int(box.get("send_failed", 0))},
    }


def unhealthy_warning(health: dict[str, Any]) -> str | None:
    """The summary's warning for an unhealthy run, or None."""
    if health["healthy"]:
        return None
    return "kernel engine: the emulation was unhealthy (summary['health'], docs/kernel.md): " + "; ".join(health["problems"])
