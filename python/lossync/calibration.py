"""Calibrating the fluid engine against short packet-level runs (`lossync calibrate SCENARIO`).

The default `tcp` loss model has two quantities a calibration may set (docs/fluid.md,
"Burst headroom and calibration"): the burst headroom (a drop-tail queue fed by bursts overflows before its fluid
average reaches the buffer, so the fluid queue is held that far below it), fitted as
`burst_per_sqrt_buffer`, c packets per square root of the buffer (the queue's swings grow as the
square root of what it holds, so the fit carries to other buffers: c·√B at each), and
`event_threshold` (the scale of the drops a flow takes per loss event: above 1, fewer flows lose
per overflow). `calibrate` runs the scenario in the packet engine with send jitter (the reference of
docs/validation/fidelity.md: a flow group that sets no `send_jitter` gets one packet time of the
slowest link, which breaks the deterministic engine's phase effects; `send_jitter = 0` on a group
keeps it deterministic), then bisects the
one that moves the fluid engine's mean utilization over the same seeds toward the packet engine's:
the headroom if the fluid engine is too high (utilization falls as it grows), the threshold if too
low (utilization rises with it); with `--fit-sync-rate`, then `event_threshold` as well, to the packet
engine's synchronization rate. It writes a calibration file that a scenario names:

    loss = { model = "tcp", calibration = "cal.toml" }
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from . import _core
from .comparison import with_send_jitter
from .engines import estimate_wall_s, run
from .errors import ScenarioError
from .io import write_text
from .progress import Deadline, RunTimeout, duration_text
from .scenario import ScenarioLike, find_scenario, load_scenario

#: Where `event_threshold` is bisected: up to 100 (the scenario field's bound) to raise a too-low
#: fluid engine, and within 0.1 to 10 to match the packet engine's synchronization rate (where the
#: headroom can still match its utilization).
THRESHOLD_MAX = 100.0
SYNC_THRESHOLD_RANGE = (0.1, 10.0)


class Fit(NamedTuple):
    """One fluid evaluation: headroom c (None: the default), threshold scale e, and the mean
    utilization u and synchronization rate s it gave."""
    c: float | None
    e: float
    u: float
    s: float


class _OutOfTime(Exception):
    """The wall-time limit ran out during a run of the fit (it stopped short, or never started)."""


def seed_means(doc: dict[str, Any], seeds: list[int], base_dir: str | None, deadline: Deadline | None = None,
               bars: bool | None = False) -> tuple[float, float]:
    """Mean utilization and mean synchronization rate (share of a link's flows that lose per
    congestion event) over `seeds`; the rate's mean is over the runs that saw an event (a summary
    without one has none), NaN if none did. With a `deadline`, _OutOfTime once it has passed
    (a run it stops is not used)."""
    deadline = deadline or Deadline(None)
    summaries = []
    for s in seeds:
        if deadline.expired():
            raise _OutOfTime
        try:
            r = run({**doc, "run": {**doc["run"], "seed": s}}, progress=bars, base_dir=base_dir, warn=False, timeout_s=deadline.remaining_s())
        except RunTimeout:
            raise _OutOfTime from None
        if r.summary.get("partial"):
            raise _OutOfTime
        summaries.append(r.summary)
    rates = [x["sync_rate_mean"] for x in summaries if x["sync_rate_mean"] is not None]
    return sum(x["utilization"] for x in summaries) / len(summaries), sum(rates) / len(rates) if rates else math.nan


def calibrate(
    scenario: ScenarioLike,
    out: str | Path | None = None,
    seeds: int = 2,
    duration_s: float | None = None,
    tolerance: float = 0.002,
    progress: Callable[[str], None] | None = None,
    reference_utilization: float | None = None,
    fit_sync_rate: bool = False,
    reference_sync_rate: float | None = None,
    converged_within: float = 0.01,
    max_doublings: int = 4,
    sync_tolerance: float = 0.01,
    timeout_s: float | None = None,
    bars: bool | None = None,
) -> dict[str, Any]:
    """Fits the `tcp` loss model so that the fluid engine's mean utilization over seeds 1..`seeds`
    matches the packet engine's (within `tolerance`, or as close as the bisection gets in 20
    halvings): `burst_per_sqrt_buffer` if the fluid engine is too high, `event_threshold` if it is
    too low even without headroom (nothing if it is within `tolerance`). With `fit_sync_rate`,
    after the headroom `event_threshold` is fitted too, so that the synchronization rate (the
    share of a link's flows that lose per congestion event) matches within `sync_tolerance`:
    closer at the buffer fitted at, farther at twice it (docs/validation/calibration.md).
    `duration_s`: the runs' length (default: the scenario's), statistics after its first third.
    `reference_utilization` (and, with `fit_sync_rate`, `reference_sync_rate`): what to match,
    measured elsewhere (a test bed, the kernel, an earlier packet run), instead of running the
    packet engine. Writes the calibration file to `out` if given; returns its content.

    The packet runs must have settled, or the fit chases a transient: at 1 Gb/s a saw-tooth cycle
    lasts seconds, and 10 Reno flows at 5% BDP (RTTs 25..75 ms) measure 0.59 over 60 s, 0.66 over
    120 s and 0.64 over 480 s. So the packet runs are made twice as long, at most `max_doublings`
    times, until their mean utilization has agreed with the runs half as long within
    `converged_within` twice in a row (once can be chance: at 10% BDP the same flows measure
    0.890, 0.900, 0.927, 0.946 and 0.956 over 60 to 960 s); the fit uses the longest runs (packet
    and fluid). A reference that never settles is said in `fitted.note`. (Comparing the two
    halves of one run is not enough: 10 CUBIC flows at 100 Mb/s, 5% BDP, give halves 0.0006 apart
    over 60 s and 0.686 over 120 s.)

    `timeout_s`: a wall-time limit. Once it passes, the fit stops and keeps what it has: the
    last packet reference that finished (a longer one cut short is not used) and the closest fit
    tried so far, said in `fitted.note` and `fitted.partial`; RunTimeout if no packet reference or
    no fluid run finished. `bars`: each run's progress bar (None: where someone watches)."""
    deadline = Deadline(timeout_s, "--timeout")
    if seeds < 1:
        raise ScenarioError("--seeds", "must be at least 1")
    if reference_sync_rate is not None and (reference_utilization is None or not fit_sync_rate):
        raise ScenarioError("reference_sync_rate", "is matched with fit_sync_rate and reference_utilization: give all three, "
                                                   "or no reference to run the packet engine")
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
    try:  # before the packet runs: the fluid engine must run the scenario it fits
        _core.resolve(json.dumps({**doc, "engine": "fluid"}), "json", base_dir or ".")
    except ScenarioError as e:
        raise ScenarioError(e.field, f"{e.reason}; calibrate fits the fluid engine, so it cannot calibrate this scenario") from None
    # The headroom is a drop-tail buffer's (bursts overflow it early); an AQM signals by its own
    # rule before its buffer fills, and a headroom fitted there held RED's queue below max_th.
    for i, link in enumerate(sc["links"]):
        if link["queue"]["discipline"] != "droptail" and link["buffer_pkts"] > 0:
            field = "dumbbell.queue" if "dumbbell" in doc else f"links[{i}].queue"
            raise ScenarioError(field, f"{link['queue']['discipline']}: calibrate fits the burst headroom of drop-tail "
                                "buffers, and this discipline signals by its own rule before its buffer fills "
                                "(docs/fluid.md, \"Burst headroom and calibration\")")
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

    unsettled = stopped = ""
    s_packet = math.nan  # no synchronization reference for a given utilization
    if reference_utilization is None:
        u_shorter, s_shorter, agreed = None, math.nan, 0
        for doubling in range(max_doublings + 1):
            reference = with_send_jitter({**doc, "engine": "packet"}, (), base_dir)
            reference_name = _packet_reference(reference, base_dir)
            say(f"{reference_name}, {seeds} runs of {sc['run']['duration_s']:g} s: estimated "
                f"{duration_text(seeds * estimate_wall_s(reference, (), base_dir))}")
            try:
                u_packet, s_packet = seed_means(reference, seed_list, base_dir, deadline, bars)
            except _OutOfTime:
                if u_shorter is None:
                    raise RunTimeout(f"timeout: calibrate's {timeout_s:g} s wall-time limit ran out before the packet reference's first "
                                     f"runs ({seeds} of {sc['run']['duration_s']:g} s) finished: nothing to fit to") from None
                # The runs half as long are the reference, and the fluid runs match their length.
                u_packet, s_packet = u_shorter, s_shorter
                doc["run"].update(duration=sc["run"]["duration_s"] / 2, warmup=sc["run"]["warmup_s"] / 2)
                sc = json.loads(_core.resolve(json.dumps(doc), "json", base_dir or "."))
                unsettled = (f"; stopped by the {timeout_s:g} s wall-time limit during the packet runs of twice that length: the "
                             f"reference is the runs of {sc['run']['duration_s']:g} s, not known to have settled")
                break
            say(f"{reference_name}, {sc['run']['duration_s']:g} s: U {u_packet:.4f}, {_rate(s_packet)} (mean of {seeds} runs)")
            if u_shorter is not None:
                agreed = agreed + 1 if abs(u_packet - u_shorter) <= converged_within else 0
                if agreed == 2:
                    unsettled = ""
                    break
                unsettled = (f"; the packet reference had not settled (U {u_packet:.4f} over {sc['run']['duration_s']:g} s, "
                             f"{u_shorter:.4f} over runs half as long; {agreed} of the 2 agreements in a row it needs): "
                             "the fit is that uncertain")
            if doubling < max_doublings:
                u_shorter, s_shorter = u_packet, s_packet
                doc["run"].update(duration=2 * sc["run"]["duration_s"], warmup=2 * sc["run"]["warmup_s"])
                sc = json.loads(_core.resolve(json.dumps(doc), "json", base_dir or "."))
        if unsettled:
            say("warning: " + unsettled.removeprefix("; "))
    elif 0 < reference_utilization <= 1 + 1e-6:  # a measured 1 may carry rounding
        u_packet = min(reference_utilization, 1.0)
        if reference_sync_rate is not None:
            if not 0 <= reference_sync_rate <= 1:  # NaN too
                raise ScenarioError("reference_sync_rate", f"{reference_sync_rate} is not a share of flows in [0, 1]")
            s_packet = reference_sync_rate
    else:
        raise ScenarioError("reference_utilization", f"{reference_utilization} is not a utilization in (0, 1]")

    def fluid(c: float | None, e: float) -> Fit:
        loss: dict[str, Any] = {"model": "tcp", "event_threshold": e, **kept}
        if c is not None:  # None: the default headroom (docs/fluid.md)
            loss["burst_per_sqrt_buffer"] = c
        u, s = seed_means({**doc, "engine": "fluid", "loss": loss}, seed_list, base_dir, deadline, bars)
        say(f"fluid, burst_per_sqrt_buffer {'default' if c is None else f'{c:.4f}':>8}, event_threshold {e:7.3f}: U {u:.4f}, {_rate(s)}")
        tried.append(Fit(c, e, u, s))
        return tried[-1]

    def bisect(fit_of: Callable[[float], Fit], lo: float, hi: float, f_lo: Fit, f_hi: Fit) -> tuple[float, Fit]:
        """The x in [lo, hi] whose U is closest to the packet engine's, U monotone in x."""
        best = min([(lo, f_lo), (hi, f_hi)], key=lambda xf: abs(xf[1].u - u_packet))
        rising = f_hi.u > f_lo.u
        for _ in range(20):
            if abs(best[1].u - u_packet) <= tolerance:
                break
            mid = (lo + hi) / 2
            f = fit_of(mid)
            if abs(f.u - u_packet) < abs(best[1].u - u_packet):
                best = (mid, f)
            lo, hi = (mid, hi) if (f.u < u_packet) == rising else (lo, mid)
        return best

    hi = 0.95 * math.sqrt(smallest)  # the headroom's bound: c·√B = 0.95 B on the smallest buffer

    def headroom_for(e: float) -> Fit:
        """The headroom whose U matches the packet engine's at threshold scale `e` (none if the
        fluid engine is below it even without: then `e` is too small)."""
        zero = fluid(0.0, e)
        if zero.u < u_packet:
            return zero
        return bisect(lambda c: fluid(c, e), 0.0, hi, zero, fluid(hi, e))[1]

    tried: list[Fit] = []  # every fluid evaluation, for a fit a wall-time limit stops
    fitted_sync = False
    at_limit = False  # the fit stops at a bound, and its note already says how far it stays
    wants_sync = fit_sync_rate and math.isfinite(s_packet)
    try:
        before = fluid(None, 1.0)
        u_before = before.u
        after = before
        if abs(u_before - u_packet) <= tolerance:
            note = f"the fluid engine (default headroom) is within {tolerance} of the packet engine: nothing to fit"
            if wants_sync and smallest > 0 and abs(before.s - s_packet) > sync_tolerance:
                # The utilization needs no fit, the synchronization rate does.
                after, fitted_sync = _fit_sync(headroom_for, before, u_packet, s_packet, tolerance, sync_tolerance), True
                note = (f"the utilization needed no fit (within {tolerance}); fitted burst_per_sqrt_buffer and event_threshold "
                        "(the synchronization rate)" if after is not before else note)
        elif (zero := fluid(0.0, 1.0)).u >= u_packet and smallest == 0:
            after, at_limit = zero, True
            note = "no buffered link, so no headroom to fit: the fluid engine stays above the packet engine"
        elif zero.u >= u_packet:
            # The headroom moves utilization down as it grows (a smaller effective buffer drains
            # more often): bisect it between none and its bound. Then, with fit_sync_rate, if the
            # fluid engine misses the reference's synchronization rate, bisect event_threshold (on
            # its logarithm, within SYNC_THRESHOLD_RANGE) to match it, refitting the headroom at
            # each: U fixes the headroom only given how many flows lose per overflow.
            after = bisect(lambda c: fluid(c, 1.0), 0.0, hi, zero, fluid(hi, 1.0))[1]
            if wants_sync and abs(after.s - s_packet) > sync_tolerance:
                after = _fit_sync(headroom_for, after, u_packet, s_packet, tolerance, sync_tolerance)
                fitted_sync = True
            at_limit = after.c is not None and after.c >= hi
            note = ("fitted burst_per_sqrt_buffer" + (" and event_threshold (the synchronization rate)" if fitted_sync else "")
                    if not at_limit else "burst_per_sqrt_buffer at its limit (95% of the smallest buffer): the fluid engine stays above the packet engine")
        else:
            # Too low even without headroom: more flows lose per overflow than in packets; raise the
            # drops per loss event (bisection on its logarithm: the effect is multiplicative).
            e_hi = THRESHOLD_MAX

            def threshold_of(x: float) -> float:  # the value run is the value written: exp(log(100)) is 100.00000000000004
                return min(math.exp(x), e_hi)

            after = bisect(lambda x: fluid(0.0, threshold_of(x)), 0.0, math.log(e_hi), zero, fluid(0.0, e_hi))[1]
            at_limit = after.e >= e_hi
            note = "fitted event_threshold (no headroom)" if not at_limit else "event_threshold at its limit (100): the fluid engine stays below the packet engine"
            if wants_sync:
                note += ("; the synchronization rate is not fitted: event_threshold went to the utilization, the fluid engine "
                         "being below the packet engine even without headroom")
    except _OutOfTime:
        if not tried:
            raise RunTimeout(f"timeout: calibrate's {timeout_s:g} s wall-time limit ran out before the fluid engine's first runs "
                             "finished: nothing fitted") from None
        before, after = tried[0], min(tried, key=lambda f: abs(f.u - u_packet))
        u_before, fitted_sync, at_limit = before.u, False, False
        note = "the closest fit tried"
        stopped = f"; stopped by the {timeout_s:g} s wall-time limit after {len(tried)} fluid evaluations: a partial fit"
        say("warning: " + stopped.removeprefix("; "))
    burst = after.c  # None: the default headroom kept
    threshold, u_after = after.e, after.u
    if abs(u_after - u_packet) > tolerance and not at_limit:
        note += f" (closest reached: U {u_after:.4f} against the reference's {u_packet:.4f})"
    if fitted_sync and abs(after.s - s_packet) > sync_tolerance:
        note += f" (sync rate {after.s:.3f} against the reference's {s_packet:.3f}: the closest with U matched)"
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
            "reference": reference_name if reference_utilization is None else "given",
            "packet_utilization": u_packet,
            "fluid_utilization_uncalibrated": u_before,
            "fluid_utilization_calibrated": u_after,
            # NaN (no congestion event, or no packet reference) is left out: TOML has no NaN here.
            "packet_sync_rate": _finite(s_packet),
            "fluid_sync_rate_uncalibrated": _finite(before.s),
            "fluid_sync_rate_calibrated": _finite(after.s),
            "note": note + unsettled + stopped + other_model,
            "partial": bool(stopped) or "wall-time limit" in unsettled,
            "lossync_version": _core.__version__,
        },
    }
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_text(out, to_toml(result))
    return result


def _fit_sync(headroom_for: Callable[[float], Fit], first: Fit, u_packet: float, s_packet: float,
              tolerance: float, sync_tolerance: float, halvings: int = 6) -> Fit:
    """Bisects log(event_threshold) within SYNC_THRESHOLD_RANGE until the fluid engine's
    synchronization rate is within `sync_tolerance` of `s_packet`, with `headroom_for(e)` refitting
    the headroom to the utilization at each; `first` is the fit at 1. The rate falls as the
    threshold rises (a flow needs more drops to lose). The best fit keeps U matched first, then
    the rate closest."""
    def score(f: Fit) -> tuple[bool, float]:
        return abs(f.u - u_packet) > tolerance, abs(f.s - s_packet)

    best = first
    lo, hi = (math.log(SYNC_THRESHOLD_RANGE[0]), 0.0) if first.s < s_packet else (0.0, math.log(SYNC_THRESHOLD_RANGE[1]))
    for _ in range(halvings):
        x = (lo + hi) / 2
        f = headroom_for(math.exp(x))
        if score(f) < score(best):
            best = f
        if score(f) <= (False, sync_tolerance):
            break
        if f.u < u_packet - tolerance:  # too low without headroom: too many flows lose
            lo = x
        elif f.u > u_packet + tolerance or f.s < s_packet:  # too high at the headroom's bound, or too few lose
            hi = x
        else:
            lo = x
    return best


def _packet_reference(doc: dict[str, Any], base_dir: str | None) -> str:
    """The packet reference as it runs: with the send jitter of its flows, or without any."""
    flows = json.loads(_core.resolve(json.dumps(doc), "json", base_dir or "."))["flows"]
    jitter = sorted({f["send_jitter_s"] for f in flows})
    if jitter[-1] == 0:
        return "packet engine without send jitter (the scenario sets send_jitter = 0)"
    return f"packet engine with send jitter of {', '.join(f'{j * 1e6:.4g}' for j in jitter)} us"


def _rate(s: float) -> str:
    return f"sync rate {s:.3f}" if math.isfinite(s) else "no congestion event"


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


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
