"""Calibrating the fluid engine against short packet-level runs (`lossync calibrate SCENARIO`).

The default `tcp` loss model has one free quantity where it is weakest, small buffers: the burst
headroom `burst_pkts` (docs/fluid.md, "Calibration"). A drop-tail queue fed by the bursts of ACK
clocking and slow start overflows before its fluid average reaches the buffer, so the fluid queue is
held `burst_pkts` below it. `calibrate` runs the scenario in the packet engine (the reference),
then finds by bisection the headroom at which the fluid engine's mean utilization over the same
seeds matches, and writes a calibration file that a scenario names:

    loss = { model = "tcp", calibration = "cal.toml" }

The fluid utilization falls as the headroom grows (a smaller effective buffer drains more often),
so the bisection converges; where the fluid engine is not above the packet engine with no
headroom, none is fitted (0) and the file says so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import _core
from .engines import run
from .errors import ScenarioError
from .io import write_text
from .scenario import ScenarioLike, find_scenario, load_scenario


def _mean_utilization(doc: dict[str, Any], seeds: list[int], base_dir: str | None) -> float:
    u = [run({**doc, "run": {**doc["run"], "seed": s}}, progress=False, base_dir=base_dir).summary["utilization"] for s in seeds]
    return sum(u) / len(u)


def calibrate(
    scenario: ScenarioLike,
    out: str | Path | None = None,
    seeds: int = 2,
    duration_s: float | None = None,
    tolerance: float = 0.002,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Fits `burst_pkts` of the `tcp` loss model so that the fluid engine's mean utilization over
    seeds 1..`seeds` matches the packet engine's (within `tolerance`, or as close as the bisection
    gets in 20 halvings). `duration_s`: the runs' length (default: the scenario's), statistics
    after its first third. Writes the calibration file to `out` if given; returns its content."""
    if seeds < 1:
        raise ScenarioError("--seeds", "must be at least 1")
    if isinstance(scenario, dict):
        doc, base_dir = json.loads(json.dumps(scenario)), None
    else:
        doc, base_dir = load_scenario(scenario), str(find_scenario(scenario).resolve().parent)
    doc.setdefault("run", {})
    if duration_s is not None:
        if not (math.isfinite(duration_s) and duration_s > 0):
            raise ScenarioError("--duration", f"must be a positive number of seconds, got {duration_s}")
        doc["run"].update(duration=duration_s, warmup=duration_s / 3, from_first_congestion=False)
    sc = json.loads(_core.resolve(json.dumps(doc), "json", base_dir or "."))
    smallest = min(link["buffer_pkts"] for link in sc["links"])
    seed_list = list(range(1, seeds + 1))
    say = progress or (lambda _line: None)

    u_packet = _mean_utilization({**doc, "engine": "packet"}, seed_list, base_dir)
    say(f"packet engine: U {u_packet:.4f} (mean of {seeds} runs)")

    def fluid(b: float) -> float:
        u = _mean_utilization({**doc, "engine": "fluid", "loss": {"model": "tcp", "burst_pkts": b}}, seed_list, base_dir)
        say(f"fluid, burst_pkts {b:8.3f}: U {u:.4f}")
        return u

    u_before = fluid(0.0)
    lo, hi = 0.0, 0.95 * smallest
    if u_before <= u_packet + tolerance:
        burst, u_after = 0.0, u_before
        note = "the fluid engine is not above the packet engine without headroom: nothing to fit (burst_pkts = 0)"
    elif (u_hi := fluid(hi)) > u_packet:
        burst, u_after = hi, u_hi
        note = "the fit reached its limit (95% of the smallest buffer): the fluid engine stays above the packet engine"
    else:
        burst, u_after = hi, u_hi
        for _ in range(20):
            mid = (lo + hi) / 2
            u = fluid(mid)
            if abs(u - u_packet) < abs(u_after - u_packet):
                burst, u_after = mid, u
            if abs(u - u_packet) <= tolerance:
                break
            lo, hi = (mid, hi) if u > u_packet else (lo, mid)
        note = "fitted"
    result = {
        "burst_pkts": round(burst, 4),
        "fitted": {
            "scenario": sc["name"] if isinstance(scenario, dict) else str(scenario),
            "seeds": seeds,
            "duration_s": sc["run"]["duration_s"],
            "warmup_s": sc["run"]["warmup_s"],
            "smallest_buffer_pkts": smallest,
            "packet_utilization": u_packet,
            "fluid_utilization_uncalibrated": u_before,
            "fluid_utilization_calibrated": u_after,
            "note": note,
            "lossync_version": _core.__version__,
        },
    }
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_text(out, to_toml(result))
    return result


def to_toml(cal: dict[str, Any]) -> str:
    lines = ["# lossync calibration (lossync calibrate): the tcp loss model's burst headroom, fitted against",
             "# packet-engine runs. Name it in a scenario: loss = { model = \"tcp\", calibration = \"<this file>\" }",
             f"burst_pkts = {cal['burst_pkts']!r}", "", "[fitted]  # what it was fitted on; not read by the engines"]
    for k, v in cal["fitted"].items():
        lines.append(f"{k} = {json.dumps(v)}")
    return "\n".join(lines) + "\n"
