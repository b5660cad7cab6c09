"""Calibrating the fluid engine against short packet-level runs (`lossync calibrate SCENARIO`).

The default `tcp` loss model has two quantities a calibration may set (docs/fluid.md,
"Burst headroom and calibration"): the burst headroom (a drop-tail queue fed by bursts overflows before its fluid
average reaches the buffer, so the fluid queue is held that far below it), fitted as
`burst_per_sqrt_buffer`, c packets per square root of the buffer (the queue's swings grow as the
square root of what it holds, so the fit carries to other buffers: c·√B at each), and
`event_threshold` (the scale of the drops a flow takes per loss event: above 1, fewer flows lose
per overflow). `calibrate` runs the scenario in the packet engine (the reference), then bisects the
one that moves the fluid engine's mean utilization over the same seeds toward the packet engine's:
the headroom if the fluid engine is too high (utilization falls as it grows), the threshold if too
low (utilization rises with it). It writes a calibration file that a scenario names:

    loss = { model = "tcp", calibration = "cal.toml" }
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
    reference_utilization: float | None = None,
    converged_within: float = 0.01,
    max_doublings: int = 4,
) -> dict[str, Any]:
    """Fits `burst_per_sqrt_buffer` or `event_threshold` of the `tcp` loss model so that the fluid engine's mean
    utilization over seeds 1..`seeds` matches the packet engine's (within `tolerance`, or as close
    as the bisection gets in 20 halvings). `duration_s`: the runs' length (default: the scenario's), statistics
    after its first third. `reference_utilization`: the utilization to match, measured elsewhere
    (a test bed, the kernel, an earlier packet run), instead of running the packet engine. Writes
    the calibration file to `out` if given; returns its content.

    The packet runs must have settled, or the fit chases a transient: at 1 Gb/s a saw-tooth cycle
    lasts seconds, and 10 Reno flows at 5% BDP (RTTs 25..75 ms) measure 0.59 over 60 s, 0.66 over
    120 s and 0.64 over 480 s. So the packet runs are made twice as long, at most `max_doublings`
    times, until their mean utilization has agreed with the runs half as long within
    `converged_within` twice in a row (once can be chance: at 10% BDP the same flows measure
    0.890, 0.900, 0.927, 0.946 and 0.956 over 60 to 960 s); the fit uses the longest runs (packet
    and fluid). A reference that never settles is said in `fitted.note`. (Comparing the two
    halves of one run is not enough: 10 CUBIC flows at 100 Mb/s, 5% BDP, give halves 0.0006 apart
    over 60 s and 0.686 over 120 s.)"""
    if seeds < 1:
        raise ScenarioError("--seeds", "must be at least 1")
    if max_doublings < 0:
        raise ScenarioError("max_doublings", f"must be 0 or more, got {max_doublings}")
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
    say = progress or (lambda _line: None)
    # It fits the tcp model (the default), whatever model the scenario names (the shipped
    # examples name the paper's sync module), and says so; the scenario's tcp fields other than
    # those fitted (growth_share) are kept.
    other_model = ""
    if sc["loss"]["model"] != "tcp":
        other_model = (f"; the scenario names loss.model = {sc['loss']['model']!r}: this calibrates the \"tcp\" model, "
                       "for a scenario that names it")
        say("warning: " + other_model.removeprefix("; "))
    kept = {k: v for k, v in sc["loss"].items() if k == "growth_share"}
    # The headroom is c·√B on each link, none on a bufferless one: the smallest buffer bounds c.
    smallest = min((link["buffer_pkts"] for link in sc["links"] if link["buffer_pkts"] > 0), default=0.0)
    seed_list = list(range(1, seeds + 1))

    unsettled = ""
    if reference_utilization is None:
        u_shorter, agreed = None, 0
        for doubling in range(max_doublings + 1):
            u_packet = _mean_utilization({**doc, "engine": "packet"}, seed_list, base_dir)
            say(f"packet engine, {sc['run']['duration_s']:g} s: U {u_packet:.4f} (mean of {seeds} runs)")
            if u_shorter is not None:
                agreed = agreed + 1 if abs(u_packet - u_shorter) <= converged_within else 0
                if agreed == 2:
                    unsettled = ""
                    break
                unsettled = (f"; the packet reference had not settled (U {u_packet:.4f} over {sc['run']['duration_s']:g} s, "
                             f"{u_shorter:.4f} over runs half as long; {agreed} of the 2 agreements in a row it needs): "
                             "the fit is that uncertain")
            if doubling < max_doublings:
                u_shorter = u_packet
                doc["run"].update(duration=2 * sc["run"]["duration_s"], warmup=2 * sc["run"]["warmup_s"])
                sc = json.loads(_core.resolve(json.dumps(doc), "json", base_dir or "."))
        if unsettled:
            say("warning: " + unsettled.removeprefix("; "))
    elif 0 < reference_utilization <= 1 + 1e-6:  # a measured 1 may carry rounding
        u_packet = min(reference_utilization, 1.0)
    else:
        raise ScenarioError("reference_utilization", f"{reference_utilization} is not a utilization in (0, 1]")

    def fluid(c: float | None, e: float) -> float:
        loss: dict[str, Any] = {"model": "tcp", "event_threshold": e, **kept}
        if c is not None:  # None: the default headroom (docs/fluid.md)
            loss["burst_per_sqrt_buffer"] = c
        u = _mean_utilization({**doc, "engine": "fluid", "loss": loss}, seed_list, base_dir)
        say(f"fluid, burst_per_sqrt_buffer {'default' if c is None else f'{c:.4f}':>8}, event_threshold {e:7.3f}: U {u:.4f}")
        return u

    def bisect(u_of: Callable[[float], float], lo: float, hi: float, u_lo: float, u_hi: float) -> tuple[float, float]:
        """The x in [lo, hi] whose U is closest to the packet engine's, U monotone in x."""
        best = min([(lo, u_lo), (hi, u_hi)], key=lambda xu: abs(xu[1] - u_packet))
        rising = u_hi > u_lo
        for _ in range(20):
            if abs(best[1] - u_packet) <= tolerance:
                break
            mid = (lo + hi) / 2
            u = u_of(mid)
            if abs(u - u_packet) < abs(best[1] - u_packet):
                best = (mid, u)
            lo, hi = (mid, hi) if (u < u_packet) == rising else (lo, mid)
        return best

    u_before = fluid(None, 1.0)
    burst: float | None = None
    threshold, u_after = 1.0, u_before
    at_limit = False  # the fit stops at a bound, and its note already says how far it stays
    if abs(u_before - u_packet) <= tolerance:
        note = f"the fluid engine (default headroom) is within {tolerance} of the packet engine: nothing to fit"
    elif (u_zero := fluid(0.0, 1.0)) >= u_packet and smallest == 0:
        burst, u_after, at_limit = 0.0, u_zero, True
        note = "no buffered link, so no headroom to fit: the fluid engine stays above the packet engine"
    elif u_zero >= u_packet:
        # The headroom moves utilization down as it grows (a smaller effective buffer drains
        # more often): bisect it between none and 95% of the smallest buffer (c·√B = 0.95 B).
        hi = 0.95 * math.sqrt(smallest)
        burst, u_after = bisect(lambda c: fluid(c, 1.0), 0.0, hi, u_zero, fluid(hi, 1.0))
        at_limit = burst >= hi
        note = "fitted burst_per_sqrt_buffer" if not at_limit else "burst_per_sqrt_buffer at its limit (95% of the smallest buffer): the fluid engine stays above the packet engine"
    else:
        # Too low even without headroom: more flows lose per overflow than in packets; raise the
        # drops per loss event (bisection on its logarithm: the effect is multiplicative).
        e_hi = 100.0

        def threshold_of(x: float) -> float:  # the value run is the value written: exp(log(100)) is 100.00000000000004
            return min(math.exp(x), e_hi)

        x, u_after = bisect(lambda x: fluid(0.0, threshold_of(x)), 0.0, math.log(e_hi), u_zero, fluid(0.0, e_hi))
        burst, threshold = 0.0, threshold_of(x)
        at_limit = threshold >= e_hi
        note = "fitted event_threshold (no headroom)" if not at_limit else "event_threshold at its limit (100): the fluid engine stays below the packet engine"
    if abs(u_after - u_packet) > tolerance and not at_limit:
        note += f" (closest reached: U {u_after:.4f} against the reference's {u_packet:.4f})"
    result = {
        # Unrounded: a short run is sensitive enough that a 4-digit rounding moved it 2 points
        # away from the utilization the fit reports.
        "burst_per_sqrt_buffer": burst,
        "event_threshold": threshold,
        "fitted": {
            "scenario": sc["name"] if isinstance(scenario, dict) else str(scenario),
            "seeds": seeds,
            "duration_s": sc["run"]["duration_s"],
            "warmup_s": sc["run"]["warmup_s"],
            "smallest_buffer_pkts": smallest,
            "burst_pkts_at_smallest_buffer": None if burst is None else round(burst * math.sqrt(smallest), 4),
            "reference": "packet engine" if reference_utilization is None else "given",
            "packet_utilization": u_packet,
            "fluid_utilization_uncalibrated": u_before,
            "fluid_utilization_calibrated": u_after,
            "note": note + unsettled + other_model,
            "lossync_version": _core.__version__,
        },
    }
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_text(out, to_toml(result))
    return result


def to_toml(cal: dict[str, Any]) -> str:
    lines = ["# lossync calibration (lossync calibrate): the tcp loss model's parameters, fitted against packet-engine",
             "# runs; the headroom is burst_per_sqrt_buffer·√B packets on a link of B packets (none given: the default).",
             "# Name it in a scenario: loss = { model = \"tcp\", calibration = \"<this file>\" }",
             *([] if cal["burst_per_sqrt_buffer"] is None else [f"burst_per_sqrt_buffer = {cal['burst_per_sqrt_buffer']!r}"]),
             f"event_threshold = {cal['event_threshold']!r}", "",
             "[fitted]  # what it was fitted on; the engines read smallest_buffer_pkts only, to warn when used at another buffer"]
    for k, v in cal["fitted"].items():  # TOML has no null: a value not fitted is a comment
        lines.append(f"# {k}: none" if v is None else f"{k} = {json.dumps(v)}")
    return "\n".join(lines) + "\n"
