"""The buffer-sizing advisor: for each target utilization, a bracket of bottleneck buffers (the
smallest probed whose confidence interval over seeds clears the target, the largest below it that
does not), narrowed by bisection over simulations only as far as the noise allows, beside the
classic rules (docs/model.md §4.1–4.2).

    lossync size-buffer --capacity 10Gbps --flows 10:highspeed:80ms..260ms --verify
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .comparison import with_send_jitter
from .engines import estimate_wall_s
from .errors import LossyncError, ScenarioError, emit_warnings
from .progress import bar as progress_bar
from .progress import duration_text
from .scenario import ScenarioLike, find_scenario, load_scenario, resolve
from .stats import METRICS, t975
from .sweeps import run_point


def retained_fraction(variant: str, params: dict[str, Any], w: float) -> float:
    """γ, the fraction of its window a flow keeps after one loss event, for the synchronized closed
    form (docs/model.md §4.2 table), from the flow's resolved parameters: Reno and Scalable 1 − b
    (RFC 5681; Kelly 2003), CUBIC and BIC β (RFC 9438 §4.6; Linux tcp_bic.c), H-TCP the largest β
    of its adaptive backoff, 0.8 (Leith & Shorten), HighSpeed 1 − b(w) at window w (RFC 3649 §5);
    any other variant 1/2."""
    if variant in ("reno", "scalable"):
        return 1.0 - params["b"]
    if variant in ("cubic", "bic"):
        return params["beta"]
    if variant == "htcp":
        return 0.8
    if variant == "highspeed":
        return hstcp_retained(w, params["low_window"], params["high_window"], params["high_decrease"])
    return 0.5


def hstcp_retained(w: float, low_window: float = 38.0, high_window: float = 83000.0, high_decrease: float = 0.1) -> float:
    """1 − b(w), RFC 3649 §5: b falls log-linearly from 0.5 at low_window to high_decrease at
    high_window."""
    if w <= low_window:
        return 0.5
    b = (high_decrease - 0.5) * (math.log(w) - math.log(low_window)) / (math.log(high_window) - math.log(low_window)) + 0.5
    return 1 - b


def closed_form_utilization(rho: float, gamma: float) -> float:
    """Synchronized AIMD aggregate (docs/model.md §4.2): U = [(1+ρ)² − g²]/[2(1−g) + (1+ρ)² − 1], g = γ(1+ρ)."""
    g = gamma * (1 + rho)
    if g >= 1:
        return 1.0
    return ((1 + rho) ** 2 - g**2) / (2 * (1 - g) + (1 + rho) ** 2 - 1)


def closed_form_buffer(target: float, gamma: float) -> float:
    """The smallest ρ = B/BDP with closed-form utilization ≥ target (bisection; U rises with ρ)."""
    if closed_form_utilization(0.0, gamma) >= target:
        return 0.0
    lo, hi = 0.0, (1 - gamma) / gamma
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if closed_form_utilization(mid, gamma) >= target else (mid, hi)
    return hi


@dataclass
class Probe:
    fraction: float
    utilization: float
    ci95: float
    rows: list[dict[str, Any]]

    def low(self) -> float:
        """The bottom of the 95% interval (one seed has none: the mean)."""
        return self.utilization - (0.0 if math.isnan(self.ci95) else self.ci95)

    def high(self) -> float:
        return self.utilization + (0.0 if math.isnan(self.ci95) else self.ci95)

    def clears(self, target: float) -> bool:
        """Whether the whole 95% interval lies at or above `target`."""
        return self.low() >= target


def _probe(pool, base: dict, base_dir: str, fraction: float, seeds: list[int], bar=None) -> Probe:
    point = {"dumbbell.buffer.bdp_fraction": fraction}
    rows = []
    for row in pool.map(run_point, *zip(*[(base, base_dir, [], point, s) for s in seeds])):
        rows.append(row)
        if bar is not None:
            bar.update(1)
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        raise LossyncError(bad[0]["error"])
    u = [r["utilization"] for r in rows]
    mean = sum(u) / len(u)
    ci = math.nan
    if len(u) > 1:
        sd = math.sqrt(sum((x - mean) ** 2 for x in u) / (len(u) - 1))
        ci = t975(len(u) - 1) * sd / math.sqrt(len(u))
    return Probe(fraction, mean, ci, rows)


@dataclass
class Bracket:
    """Where a target utilization is crossed: `high` is the smallest buffer probed whose 95%
    interval clears the target, `low` the largest below it that does not (None: no buffer
    needed, or none up to the largest tried clears). `steps` is the search, one entry per probe
    with the bracket after it; `stopped_by` why it ended: "noise" (the two ends' intervals
    overlap: a probe between them could not be told from either), "resolution" (narrower than
    `tolerance`), "no buffer needed", "not reached"."""

    target: float
    low: Probe | None
    high: Probe | None
    stopped_by: str
    steps: list[dict[str, Any]]


def search_bracket(probe: Callable[[float], Probe], target: float, max_fraction: float, tolerance: float,
                   known: dict[float, Probe] | None = None, finest: float = 0.0) -> Bracket:
    """Narrows [low, high] around the buffer where `target` is crossed. Every probe lies strictly
    inside the bracket of the moment and replaces one of its ends, so the bracket only shrinks: the
    search cannot oscillate, whatever the noise. A probe whose interval clears the target becomes
    the top, any other the bottom. Probes already made (`known`, for another target) narrow the
    starting bracket for free. `finest`: the smallest buffer above none (one packet, as a
    fraction): no probe falls between none and it, so the search ends one packet above none."""
    steps: list[dict[str, Any]] = []

    def step(p: Probe, low: float, high: float) -> None:
        steps.append({"bdp_fraction": p.fraction, "utilization": p.utilization, "ci95": p.ci95,
                      "clears": p.clears(target), "low": low, "high": high})

    zero = probe(0.0)
    if zero.clears(target):
        step(zero, 0.0, 0.0)
        return Bracket(target, None, zero, "no buffer needed", steps)
    top = probe(max_fraction)
    if not top.clears(target):
        step(top, max_fraction, max_fraction)
        return Bracket(target, top, None, "not reached", steps)
    # The starting bracket: the smallest probe known to clear, the largest below it that does not.
    seen = {0.0: zero, max_fraction: top, **(known or {})}
    high = min((p for p in seen.values() if p.clears(target) and 0 < p.fraction <= max_fraction), key=lambda p: p.fraction)
    low = max((p for p in seen.values() if not p.clears(target) and p.fraction < high.fraction), key=lambda p: p.fraction)
    step(high, low.fraction, high.fraction)
    while True:
        if high.fraction - low.fraction <= max(tolerance * high.fraction, 1e-4):
            return Bracket(target, low, high, "resolution", steps)
        if low.high() >= high.low():
            return Bracket(target, low, high, "noise", steps)
        at = max((low.fraction + high.fraction) / 2, finest)
        if at >= high.fraction:
            return Bracket(target, low, high, "resolution", steps)
        p = probe(at)
        if p.clears(target):
            high = p
        else:
            low = p
        step(p, low.fraction, high.fraction)


def round_outward(low: float, high: float, finest: float = 0.0, by_width: bool = True) -> tuple[float, float]:
    """[low, high] widened outward to a round unit, so it is still a bracket: the decade of its
    width (0.52..0.71 → 0.5..0.8), but never finer than two significant figures of `high`
    (0.6992..0.7031 → 0.69..0.71; 51,666..55,000 packets → 51,000..55,000) nor than `finest` (1
    for packets); with `by_width` false, two significant figures of `high` alone (67..167
    packets → 60..170). Two figures, because a third is not a claim the models back: the engines
    agree with one another to points of utilization (docs/validation/fidelity.md), and the fluid
    engine with the closed form of docs/model.md §4.2 to within 2% of the buffer (one Reno flow
    at 100 Mb/s, U ≥ 0.9: 0.2627 BDP against 0.2679; U ≥ 0.99: 0.7012 against 0.7035)."""
    width = high - low
    if not width > 0 or not high > 0:
        return low, high
    figures = 10.0 ** (math.floor(math.log10(high)) - 1)
    unit = max(10.0 ** math.floor(math.log10(width)) if by_width else figures, figures, finest)
    # The 1e-9 keeps an end already on the grid (0.7 / 0.1 = 6.999…) where it is; 12 digits drop
    # the binary residue (35 × 0.01 = 0.35000000000000003).
    return (float(f"{math.floor(low / unit + 1e-9) * unit:.12g}"), float(f"{math.ceil(high / unit - 1e-9) * unit:.12g}"))


#: Packet-engine runs that check a fluid answer (`verify`): seeds and run length.
VERIFY_SEEDS, VERIFY_DURATION_S, VERIFY_WARMUP_S = 2, 120.0, 40.0


def size_buffer(
    scenario: ScenarioLike,
    targets: tuple[float, ...] = (0.9, 0.95, 0.99),
    seeds: int = 5,
    max_fraction: float = 2.0,
    tolerance: float = 0.01,
    workers: int | None = None,
    engine: str | None = None,
    verify: bool = False,
    progress: Callable[[str], None] | None = None,
    bars: bool | None = None,
    warn: bool = True,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """For each target utilization, a bracket of buffers (as fractions of the dumbbell's BDP at
    its reference RTT): `probed_high`, the smallest buffer probed whose 95% confidence interval
    over `seeds` runs lies at or above the target, and `probed_low`, the largest probed below it
    whose interval does not. Each probe halves the bracket (`search_bracket`: it never leaves
    it); the search stops where the two ends' intervals overlap, since the noise then cannot
    order a probe between them, or where the bracket is narrower than `tolerance` (relative, or
    1e-4 of the BDP absolute). The bracket as reported (`bdp_fraction_low`/`_high`,
    `buffer_pkts_low`/`_high`) is rounded outward to its width or two significant figures (`round_outward`).
    Returns (table, rules of thumb); the rules also say which engine and loss model answered.

    Table columns per target: the bracket; `bdp_fraction` and `buffer_pkts`, the exact top of
    the bracket, whose runs give `utilization`, `utilization_ci95`, delay, loss, Jain's index,
    `uncongested_runs` and `warnings`; `low_utilization`, `low_ci95` at the bottom; `stopped_by`
    ("noise", "resolution", "no buffer needed", "not reached"); `search`, the probes in order,
    each with the bracket after it; `note`, why there is no answer.

    engine: the scenario's own (default fluid), or "fluid" / "packet".
    The packet engine runs with one packet time of send jitter unless the scenario sets it: the
    reference of docs/validation/fidelity.md, whose seeds differ.
    verify: also run the packet engine at the top of each bracket (VERIFY_SEEDS runs of
        VERIFY_DURATION_S) and report its utilization beside the answer (`packet_utilization`).
    progress: called with one line per probed buffer size (the CLI prints them to stderr), and
        first with what a probe will take, roughly (the engine's `estimate`).
    bars: a bar of the runs (None: where someone watches, `progress.watched`).
    warn: also emit each distinct warning of the answers' runs as a `LossyncWarning` (the command
    line, which prints its own, turns it off).
    """
    for t in targets:
        if not 0 < t <= 1:
            raise ScenarioError("--target", f"{t} is not a utilization in (0, 1]")
    if seeds < 1:
        raise ScenarioError("--seeds", "must be at least 1")
    # Python's arguments, which the command line does not expose: a bad one named, not a domain error.
    if not (isinstance(tolerance, (int, float)) and 0 < tolerance < 1):
        raise ScenarioError("tolerance", f"{tolerance!r} is not a relative width in (0, 1)")
    if not (isinstance(max_fraction, (int, float)) and 0 < max_fraction <= 1e6):
        raise ScenarioError("max_fraction", f"{max_fraction!r} is not a buffer in BDPs in (0, 1e6]")
    if isinstance(scenario, dict):
        doc, base_dir = json.loads(json.dumps(scenario)), os.getcwd()
    else:
        doc, base_dir = load_scenario(scenario), str(find_scenario(scenario).resolve().parent)
    if "dumbbell" not in doc:
        raise ScenarioError("dumbbell", "the advisor sizes the buffer of a dumbbell's bottleneck")
    if engine is not None:
        if engine not in ("fluid", "packet"):
            raise ScenarioError("--engine", f"{engine!r}: the advisor runs the fluid or the packet engine")
        doc["engine"] = engine
    doc["dumbbell"].setdefault("buffer", {})
    doc["dumbbell"]["buffer"] = {"bdp_fraction": 1.0, **{k: v for k, v in doc["dumbbell"]["buffer"].items() if k == "reference_rtt"}}
    if doc.get("engine") == "packet":  # the reference; the deterministic engine reruns one run on every seed
        doc = with_send_jitter(doc, (), base_dir)
    try:
        sc = resolve(doc)
    except ScenarioError as e:
        if e.field != "dumbbell.buffer":
            raise
        # The buffer is the advisor's own (1 BDP): what it refuses is a BDP below one packet.
        raise ScenarioError("dumbbell.capacity", "the BDP at the reference RTT is less than one packet: there is no buffer to size") from None
    link, flows = sc["links"][0], sc["flows"]
    bdp = link["buffer_pkts"]  # the buffer at bdp_fraction = 1
    dynamic = next((f for f in flows if f.get("arrivals")), None)
    if dynamic is not None:
        raise ScenarioError(f"flows[{dynamic['group']}].arrivals", "the advisor sizes a buffer for long-lived flows; flows that come and "
                            "go bound the utilization by their offered load, which no buffer raises")
    if bdp * max_fraction < 1:
        raise ScenarioError("dumbbell.capacity", f"the BDP is {bdp:.3g} packets at the reference RTT: no buffer up to "
                            f"{max_fraction:g} BDP holds a packet")
    for end in (0.0, max_fraction):  # the search's ends: a buffer the scenario refuses is said now
        try:
            resolve({**doc, "dumbbell": {**doc["dumbbell"], "buffer": {"bdp_fraction": end}}})
        except ScenarioError as e:
            raise ScenarioError(e.field, f"{e.reason}; size-buffer probes buffers from 0 to {max_fraction:g} BDP, and this "
                                f"fails at {end:g} BDP ({end * bdp:,.0f} packets)") from None
    rtt_ref = bdp / link["capacity_pps"]
    n = len(flows)

    ctx = multiprocessing.get_context("spawn")
    rows = []
    workers = workers or os.cpu_count() or 1
    # The largest buffer probed: the slowest runs of the packet engine (the fluid's do not depend on it).
    per_run = estimate_wall_s({**doc, "dumbbell": {**doc["dumbbell"], "buffer": {"bdp_fraction": max_fraction}}}, (), base_dir)
    # A bisection to `tolerance` of max_fraction, plus its two ends, per target at most.
    per_target = math.ceil(math.log2(1 / tolerance)) + 2
    if progress:
        progress(f"each probe: {seeds} runs of {sc['run']['duration_s']:g} s on the {sc['engine']} engine, estimated "
                 f"{duration_text(per_run * math.ceil(seeds / workers))} on {workers} workers; at most about {per_target} probes per target")
    bar = progress_bar(None, "size-buffer", "run", bars)
    if progress and bar is not None:  # a line above the bar, not through it
        say = progress

        def progress(line: str) -> None:
            bar.clear()
            say(line)
            bar.refresh()

    with bar if bar is not None else nullcontext(), ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        cache: dict[float, Probe] = {}

        def probe(f: float, target: float) -> Probe:
            if f not in cache:
                cache[f] = p = _probe(pool, doc, base_dir, f, list(range(1, seeds + 1)), bar)
                if progress:
                    ci = "" if math.isnan(p.ci95) else f" ± {p.ci95:.4f}"
                    verdict = "clears" if p.clears(target) else "does not clear"
                    progress(f"probe {len(cache):>2}: buffer {f:.4f} BDP ({f * bdp:,.0f} packets): U {p.utilization:.4f}{ci}, "
                             f"{verdict} {target:g}")
            return cache[f]

        for target in sorted(targets):
            b = search_bracket(lambda f, t=target: probe(f, t), target, max_fraction, tolerance, cache, finest=1 / bdp)
            rows.append(_answer(b, bdp, max_fraction))
            if progress and b.high is not None and b.low is not None:
                progress(f"U≥{target:g}: between {b.low.fraction:.4f} and {b.high.fraction:.4f} BDP (stopped by {b.stopped_by})")
        if verify:
            _verify(pool, doc, base_dir, rows, progress)
    # The rules, at the same reference RTT and capacity (docs/model.md §4.1).
    fair_w = bdp / n
    gammas = [retained_fraction(f["variant"], f["params"], fair_w) for f in flows]
    gamma = min(gammas)
    rules = {
        "bdp_pkts": bdp,
        "reference_rtt_s": rtt_ref,
        "flows": n,
        "seeds": seeds,
        "rule_of_thumb_pkts": bdp,
        "appenzeller_pkts": bdp / math.sqrt(n),
        "retained_gamma": gamma,
        "closed_form": {t: closed_form_buffer(t, gamma) for t in sorted(targets)},
        "closed_form_full_utilization": (1 - gamma) / gamma,
        "engine": sc["engine"],
        "loss_model": sc["loss"]["model"] if sc["engine"] == "fluid" else "packets (real drops, send jitter one packet time unless the scenario sets it)",
    }
    if warn:
        emit_warnings(dict.fromkeys(w for row in rows for w in row.get("warnings", [])))
    return pd.DataFrame(rows), rules


def _answer(b: Bracket, bdp: float, max_fraction: float) -> dict[str, Any]:
    """One table row from a bracket (size_buffer's columns)."""
    nan = math.nan
    row: dict[str, Any] = {"target": b.target, "stopped_by": b.stopped_by, "search": b.steps, "note": ""}
    if b.high is None:  # not reached: the largest buffer tried, and what it measured
        r = b.low.rows
        row.update(bdp_fraction=nan, buffer_pkts=nan, bdp_fraction_low=max_fraction, bdp_fraction_high=nan,
                   buffer_pkts_low=max_fraction * bdp, buffer_pkts_high=nan, probed_low=max_fraction, probed_high=nan,
                   utilization=b.low.utilization, utilization_ci95=b.low.ci95,
                   note=f"not reached at {max_fraction} BDP" if b.low.high() < b.target
                   else f"not shown at {max_fraction} BDP: its 95% interval reaches below the target")
    else:
        low = 0.0 if b.low is None else b.low.fraction
        lo, hi = round_outward(low, b.high.fraction)
        # In packets: the reported bracket, itself rounded to two figures (so it holds it), not a
        # second one; by the decade of its width, 0.2-0.5 of a 333-packet BDP gave 0-200 packets.
        lo_pkts, hi_pkts = round_outward(lo * bdp, hi * bdp, finest=1.0, by_width=False)
        r = b.high.rows
        row.update(bdp_fraction=b.high.fraction, buffer_pkts=b.high.fraction * bdp, bdp_fraction_low=lo, bdp_fraction_high=hi,
                   buffer_pkts_low=lo_pkts, buffer_pkts_high=hi_pkts, probed_low=low, probed_high=b.high.fraction,
                   utilization=b.high.utilization, utilization_ci95=b.high.ci95,
                   low_utilization=nan if b.low is None else b.low.utilization, low_ci95=nan if b.low is None else b.low.ci95,
                   mean_queueing_delay_s=sum(x["mean_queueing_delay_s"] for x in r) / len(r),
                   loss_rate=sum(x["loss_rate"] for x in r) / len(r), jain=sum(x["jain"] for x in r) / len(r))
    # Runs that saw no congestion event after the warm-up measured a transient (the end of slow
    # start), not the buffer's steady state: said beside the answer.
    row["uncongested_runs"] = sum(x["congestion_events"] == 0 for x in r)
    row["warnings"] = _warnings(r)
    # Seeds that agree exactly (or one seed) measure no error at all: the bracket then stopped at
    # the search's resolution, and a finite run's own error is not in it.
    ends = [p for p in (b.low, b.high) if p is not None]
    if b.high is not None and all(len({x["utilization"] for x in p.rows}) == 1 for p in ends):
        row["warnings"].append(
            f"U≥{b.target:g}: the runs measured no error (their seeds agree exactly, or one seed), so this bracket "
            "is the search's resolution and leaves out the error of a finite run: lengthen --duration to check "
            "(dumbbell-reno, U≥0.95: 0.41-0.42 BDP from 600 s runs, 0.42-0.43 from 12,000 s; its closed form 0.4313)")
    return row


def _warnings(rows: list[dict[str, Any]]) -> list[str]:
    """The distinct warnings of the runs behind an answer, in the order first seen."""
    return list(dict.fromkeys(w for r in rows for w in r.get("warnings", [])))


def _verify(pool, doc: dict, base_dir: str, rows: list[dict[str, Any]], progress: Callable[[str], None] | None) -> None:
    """Adds each answer's packet-engine utilization (`packet_utilization`, `packet_ci95`,
    `packet_uncongested_runs`)."""
    packet = with_send_jitter(json.loads(json.dumps(doc)), (), base_dir)  # the reference, as in compare
    packet["engine"] = "packet"
    packet["run"] = dict(packet.get("run", {}), duration=VERIFY_DURATION_S, warmup=VERIFY_WARMUP_S, from_first_congestion=False)
    for row in rows:
        if math.isnan(row["bdp_fraction"]):
            continue
        p = _probe(pool, packet, base_dir, row["bdp_fraction"], list(range(1, VERIFY_SEEDS + 1)))
        row["packet_utilization"], row["packet_ci95"] = p.utilization, p.ci95
        row["packet_uncongested_runs"] = sum(x["congestion_events"] == 0 for x in p.rows)
        if progress:
            progress(f"verify: buffer {row['bdp_fraction']:.4f} BDP: packet engine U {p.utilization:.4f}")


def build_scenario(capacity: str, flows: list[str], sync: str = "tcp", duration: str = "3000s", packet_size: int = 1500) -> dict[str, Any]:
    """A dumbbell from command-line words: flows as COUNT:VARIANT:RTT (RTT may be a range
    80ms..260ms); the fluid loss model as `tcp` (the default, docs/fluid.md), `proportional`, or
    the paper's synchronization module: `all`, `x=0.3`, `m=3`, `file=m.csv`."""
    groups = []
    for item in flows:
        parts = item.split(":")
        if len(parts) != 3:
            raise ScenarioError(f"--flows {item}", "expected COUNT:VARIANT:RTT, e.g. 10:highspeed:80ms..260ms")
        try:
            count = int(parts[0])
        except ValueError:
            raise ScenarioError(f"--flows {item}", "COUNT must be a whole number") from None
        # The steady state the closed forms above describe, from the first window: no slow start
        # (whose overshoot and long recovery a finite run would measure as part of the answer).
        groups.append({"count": count, "cc": parts[1], "rtt": parts[2], "slow_start": False})
    if not groups:
        raise ScenarioError("--flows", "give at least one COUNT:VARIANT:RTT")
    kind, _, value = sync.partition("=")
    if sync in ("tcp", "proportional"):
        loss: dict[str, Any] = {"model": sync}
    elif sync == "all":
        loss = {"model": "sync", "sync": {"kind": "all"}}
    elif kind == "x":
        loss = {"model": "sync", "sync": {"kind": "normal", "x": _number(value, "--loss x")}}
    elif kind == "m":
        m = _number(value, "--loss m")  # passed on as given: the core refuses a fraction of a flow
        loss = {"model": "sync", "sync": {"kind": "fixed", "m": int(m) if m.is_integer() else m}}
    elif kind == "file":
        loss = {"model": "sync", "sync": {"kind": "empirical", "file": value}}
    else:
        raise ScenarioError(f"--loss {sync}", "use tcp, proportional, all, x=0.3, m=3 or file=m.csv")
    return {
        "dumbbell": {"capacity": capacity, "packet_size": packet_size, "buffer": {"bdp_fraction": 1.0}},
        "flows": groups,
        "loss": loss,
        "run": {"duration": duration, "from_first_congestion": True, "record_interval": "10s"},
    }


def _number(text: str, field: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ScenarioError(field, f"{text!r} is not a number") from None


__all__ = ["METRICS", "build_scenario", "closed_form_buffer", "closed_form_utilization", "size_buffer"]
