"""The buffer-sizing advisor: the smallest bottleneck buffer that reaches each target utilization,
found by bisection over simulations, beside the classic rules (docs/model.md §4.1–4.2).

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

from .compare import with_send_jitter
from .engines import estimate_wall_s
from .errors import LossyncError, ScenarioError
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


#: Packet-engine runs that check a fluid answer (`verify`): seeds and run length.
VERIFY_SEEDS, VERIFY_DURATION_S, VERIFY_WARMUP_S = 2, 120.0, 40.0


def size_buffer(
    scenario: ScenarioLike,
    targets: tuple[float, ...] = (0.9, 0.95, 0.99),
    seeds: int = 5,
    max_fraction: float = 2.0,
    tolerance: float = 0.002,
    workers: int | None = None,
    engine: str | None = None,
    verify: bool = False,
    progress: Callable[[str], None] | None = None,
    bars: bool | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """For each target utilization, the smallest buffer (as a fraction of the dumbbell's BDP at its
    reference RTT) whose mean utilization over `seeds` runs reaches it, found by bisection to within
    `tolerance` (relative, or 1e-4 of the BDP absolute). Returns (table, rules of thumb); the rules
    also say which engine and loss model answered (`engine`, `loss_model`).

    engine: the scenario's own (default fluid), or "fluid" / "packet".
    The packet engine runs with one packet time of send jitter unless the scenario sets it: the
    reference of docs/validation/fidelity.md, whose seeds differ.
    verify: also run the packet engine at each buffer found (VERIFY_SEEDS runs of
        VERIFY_DURATION_S) and report its utilization beside the answer (`packet_utilization`).
    progress: called with one line per probed buffer size (the CLI prints them to stderr), and
        first with what a probe will take, roughly (the engine's `estimate`).
    bars: a bar of the runs (None: where someone watches, `progress.watched`).
    """
    for t in targets:
        if not 0 < t <= 1:
            raise ScenarioError("--target", f"{t} is not a utilization in (0, 1]")
    if seeds < 1:
        raise ScenarioError("--seeds", "must be at least 1")
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
    sc = resolve(doc)
    link, flows = sc["links"][0], sc["flows"]
    bdp = link["buffer_pkts"]  # the buffer at bdp_fraction = 1
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

        def probe(f: float) -> Probe:
            if f not in cache:
                cache[f] = p = _probe(pool, doc, base_dir, f, list(range(1, seeds + 1)), bar)
                if progress:
                    ci = "" if math.isnan(p.ci95) else f" ± {p.ci95:.4f}"
                    progress(f"probe {len(cache):>2}: buffer {f:.4f} BDP ({f * bdp:,.0f} packets): U {p.utilization:.4f}{ci}")
            return cache[f]

        for target in sorted(targets):
            if probe(0.0).utilization >= target:
                found = probe(0.0)
            elif probe(max_fraction).utilization < target:
                found = None
            else:
                lo, hi = 0.0, max_fraction
                while hi - lo > max(tolerance * hi, 1e-4):
                    mid = (lo + hi) / 2
                    lo, hi = (lo, mid) if probe(mid).utilization >= target else (mid, hi)
                found = probe(hi)
            if found is None:
                r = probe(max_fraction).rows
                rows.append({"target": target, "bdp_fraction": math.nan, "buffer_pkts": math.nan,
                             "utilization": probe(max_fraction).utilization, "note": f"not reached at {max_fraction} BDP",
                             # An answer from runs that never left slow start's ramp says so too.
                             "uncongested_runs": sum(x["congestion_events"] == 0 for x in r),
                             "warnings": _warnings(r)})
                continue
            r = found.rows
            rows.append({
                "target": target,
                "bdp_fraction": found.fraction,
                "buffer_pkts": found.fraction * bdp,
                "utilization": found.utilization,
                "utilization_ci95": found.ci95,
                "mean_queueing_delay_s": sum(x["mean_queueing_delay_s"] for x in r) / len(r),
                "loss_rate": sum(x["loss_rate"] for x in r) / len(r),
                "jain": sum(x["jain"] for x in r) / len(r),
                # Runs that saw no congestion event after the warm-up measured a transient (the
                # end of slow start), not the buffer's steady state: said beside the answer.
                "uncongested_runs": sum(x["congestion_events"] == 0 for x in r),
                "warnings": _warnings(r),
                "note": "",
            })
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
        "rule_of_thumb_pkts": bdp,
        "appenzeller_pkts": bdp / math.sqrt(n),
        "retained_gamma": gamma,
        "closed_form": {t: closed_form_buffer(t, gamma) for t in sorted(targets)},
        "closed_form_full_utilization": (1 - gamma) / gamma,
        "engine": sc["engine"],
        "loss_model": sc["loss"]["model"] if sc["engine"] == "fluid" else "packets (real drops, send jitter one packet time unless the scenario sets it)",
    }
    return pd.DataFrame(rows), rules


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
        groups.append({"count": count, "cc": parts[1], "rtt": parts[2]})
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
        loss = {"model": "sync", "sync": {"kind": "fixed", "m": int(_number(value, "--loss m"))}}
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
