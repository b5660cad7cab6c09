"""The engines in the Rust core, `fluid` and `packet`: one `Simulation` advanced in chunks of
simulated time sized to take about a quarter of a second of wall time each, so that the GIL is
released within a chunk and Ctrl-C and the progress bar are served between chunks whatever the
engine's speed. Results do not depend on where the run is cut (tests/test_api.py)."""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _core
from ..errors import LossyncError
from ..progress import Deadline, RunTimeout, stopped_warning
from ..progress import bar as progress_bar
from ..results import Result
from ..scenario import Prepared
from .registry import Engine

#: Wall time per chunk: Ctrl-C is answered within about this long.
CHUNK_WALL_S = 0.25
#: The first chunk's share of the run, before its speed is known.
FIRST_CHUNK = 1e-6
#: Typical costs on one core, for the estimate said before a long run (docs/validation/bench.md,
#: `lossync bench --suite`): the fluid engine 13-14 ns per flow and step while a step's state
#: stays in cache (up to FLUID_CACHED_FLOWS flows), then more as it spills to memory: 30, 41 and
#: 79 ns at 10^4, 10^5 and 10^6 Reno flows: about FLUID_S_PER_FLOW_STEP_PER_DECADE more per
#: tenfold flows (and 105 ns at 10^6 over 1 s, docs/fluid.md); its set-up about 6 µs per flow
#: at 10^5-10^6. The packet engine 6-9 million data packets per second through a dumbbell,
#: 7.4 million packet-hops per second on parking-lot-4.
FLUID_S_PER_FLOW_STEP = 14e-9
FLUID_S_PER_FLOW_STEP_PER_DECADE = 19e-9
FLUID_CACHED_FLOWS = 1_000
FLUID_SETUP_S_PER_FLOW = 6e-6
#: From this many flows the fluid `tcp` model steps on every thread of the run (fluid/workers.rs),
#: each further thread adding FLUID_THREAD_GAIN of one's speed (1.68-1.83 on two at 10^5-10^6
#: flows, docs/validation/bench.md; measured on 2 cores only), and each step paying about
#: FLUID_S_PER_THREADED_STEP in hand-offs (docs/fluid.md, "Threads").
FLUID_MIN_PARALLEL_FLOWS = 8192
FLUID_THREAD_GAIN = 0.8
FLUID_S_PER_THREADED_STEP = 30e-6
PACKET_S_PER_PACKET_HOP = 1.5e-7
#: What a packet-hop costs beyond that once many connections' state falls out of cache, reached
#: half-way at PACKET_CACHE_CONNECTIONS (measured on 2 cores: 0.29 µs per arrival at 1,000 flows,
#: 2.1-3.3 µs at 10^5 flows sharing 0.1-10 Gb/s).
PACKET_S_PER_PACKET_HOP_UNCACHED = 2.5e-6
PACKET_CACHE_CONNECTIONS = 20_000
#: A packet trace keeps at most this many packets unless told otherwise: about 60 MB of pcap.
PCAP_PACKETS = 1_000_000


@dataclass(frozen=True)
class Pcap:
    """A packet trace to write: the packets crossing `link` (both its directions, where the
    scenario models the other), the first `packets` of them, to `file` (docs/packet.md, "Packet traces")."""

    link: str
    file: Path
    packets: int = PCAP_PACKETS


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run; `result` holds the metrics of the part simulated, marked partial
    (`summary["partial"]` is true and a warning says how far it got), or of the whole run if the
    interrupt came after its last step (`summary["partial"]` false)."""

    def __init__(self, result: Result) -> None:
        super().__init__()
        self.result = result


def next_chunk(span: float, wall: float, last_cost: float, left_s: float | None) -> tuple[float, float]:
    """The next chunk's simulated span after one of `span` seconds took `wall` (the one before
    cost `last_cost` wall seconds per simulated second, 0 if none), and the cost of this one. It
    aims at CHUNK_WALL_S, or what is left of a wall-time limit (`left_s`), at most doubling the
    span at a time, and assumes the cost per simulated second keeps growing as it just did: in
    slow start it doubles every RTT, and a chunk sized on the last one's speed alone ran three
    times past a limit."""
    cost = max(wall, 1e-6) / max(span, 1e-12)
    growth = max(1.0, cost / last_cost) if last_cost > 0 else 1.0
    aim = CHUNK_WALL_S if left_s is None else min(CHUNK_WALL_S, max(left_s, 0.01))
    return min(2.0 * span, max(0.25 * span, aim / (cost * growth))), cost


def run_core(p: Prepared, progress: bool | None = None, timeout_s: float | None = None, pcap: Pcap | None = None) -> Result:
    """Runs a prepared scenario on the core engine it names. Ctrl-C raises `Interrupted` with the partial result (or a plain
    KeyboardInterrupt if nothing was measured yet). `timeout_s`: stop between chunks once that
    much wall time has passed and return the part simulated, marked partial. With `pcap`, writes
    that packet trace (of the part simulated) and describes it in `summary["pcap"]`."""
    deadline = Deadline(timeout_s)
    # The binding hands the results over as numpy arrays. Import numpy here, before the run, where
    # a Ctrl-C is answered: imported by the binding at the end of the run instead, an interrupt
    # landing during that import panics in PyO3's numpy (tests/test_interrupts.py saw it).
    import numpy  # noqa: F401

    sim = _core.Simulation(p.core)
    if pcap is not None:
        sim.trace_link(pcap.link, pcap.packets)
    duration = sim.duration_s
    bar = progress_bar(round(duration, 6), "simulating", "sim s", progress)
    step = duration * FIRST_CHUNK
    until, last_cost = 0.0, 0.0
    try:
        # On `until`, not the engine's clock: a step that does not divide the duration leaves
        # the clock a fraction of a step short of it.
        while until < duration:
            if deadline.expired():
                now, warmup = sim.now_s, p.resolved["run"]["warmup_s"]
                so_far = _result_so_far(p, sim, duration, stopped_warning(now, duration, deadline.elapsed_s(), warmup), pcap)
                if so_far is None or now <= 0:
                    raise RunTimeout("timeout: the wall-time limit ran out before anything was simulated")
                return so_far
            span = min(duration, until + step) - until
            until += span
            started = time.perf_counter()
            sim.advance(until)
            wall = time.perf_counter() - started
            step, last_cost = next_chunk(span, wall, last_cost, deadline.remaining_s())
            if bar is not None:
                bar.update(round(sim.now_s - bar.n, 6))
    except KeyboardInterrupt:
        so_far = _result_so_far(p, sim, duration, pcap=pcap)
        if so_far is None:
            raise
        raise Interrupted(so_far) from None
    finally:
        if bar is not None:
            bar.close()
    traced = _write_pcap(sim, pcap)
    drops = sim.drops()
    finished = sim.finish()
    result = Result.from_core(finished, p.resolved, drops, sim.fct(), core=p.core)
    if traced is not None:
        result.summary["pcap"] = traced
    return result


def _write_pcap(sim: _core.Simulation, pcap: Pcap | None) -> dict[str, Any] | None:
    """Writes the trace (whole or not at all), and says what it holds: the link, the file, the
    packets written and those that crossed the link, and whether the cap left some out."""
    if pcap is None:
        return None
    from ..io import atomic_write

    counts: list[tuple[int, int]] = []
    pcap.file.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(pcap.file, lambda tmp: counts.append(sim.write_pcap(str(tmp))))
    written, seen = counts[0]
    return {"link": pcap.link, "file": str(pcap.file), "packets": written, "crossed": seen,
            "capped": seen > written, "max_packets": pcap.packets}


def _result_so_far(p: Prepared, sim: _core.Simulation, duration: float, why: str | None = None, pcap: Pcap | None = None) -> Result | None:
    """The result of what was simulated before a Ctrl-C (or the wall-time limit `why` says):
    marked partial, unless the stop came after the last step (then the run is whole, and says
    nothing of a stop); None if nothing was measured yet."""
    now, done = sim.now_s, sim.done
    try:
        traced = _write_pcap(sim, pcap)
        drops = sim.drops()
        finished = sim.finish()
        result = Result.from_core(finished, p.resolved, drops, sim.fct(), core=p.core)
        if traced is not None:
            result.summary["pcap"] = traced
    except LossyncError:
        return None
    if done:
        return result
    result.summary["partial"] = True
    result.summary.setdefault("warnings", []).append(
        why or f"interrupted: {now:g} s of {duration:g} s simulated; every metric covers the part simulated only")
    return result


def _engine_run(p: Prepared, progress, force, timeout_s=None, pcap: Pcap | None = None) -> Result:
    return run_core(p, progress, timeout_s, pcap)


def _engine_check(p: Prepared, force: bool) -> None:
    """Nothing beyond resolution: `prepare` runs the core engine's own check."""


def _estimate_fluid(sc: dict) -> float:
    """Each flow-update at its cost for the run's flows (FLUID_S_PER_FLOW_STEP, rising by
    FLUID_S_PER_FLOW_STEP_PER_DECADE per tenfold flows beyond FLUID_CACHED_FLOWS), shared among
    the run's threads where the `tcp` model uses them, plus the set-up."""
    n, run = len(sc["flows"]), sc["run"]
    steps = run["duration_s"] / run["step_s"]
    per_update = FLUID_S_PER_FLOW_STEP + FLUID_S_PER_FLOW_STEP_PER_DECADE * max(0.0, math.log10(max(n, 1) / FLUID_CACHED_FLOWS))
    stepping = n * steps * per_update
    threads = run.get("threads") or os.cpu_count() or 1
    if threads > 1 and sc["loss"]["model"] == "tcp" and n >= FLUID_MIN_PARALLEL_FLOWS:
        stepping = stepping / (1 + FLUID_THREAD_GAIN * (threads - 1)) + steps * FLUID_S_PER_THREADED_STEP
    return stepping + n * FLUID_SETUP_S_PER_FLOW


def _estimate_packet(sc: dict) -> float:
    """Every link that carries data full for the whole run (an upper bound on what it serves),
    plus each connection's first window and a retransmission a second (what a share of less than a
    packet per RTT costs in timeouts, where the queue drops most arrivals), each packet-hop at
    PACKET_S_PER_PACKET_HOP, rising towards PACKET_S_PER_PACKET_HOP_UNCACHED with the connections."""
    flows, duration = sc["flows"], sc["run"]["duration_s"]
    crossed = {i for f in flows for i in f["path"]}
    pkts = sum(link["capacity_pps"] for i, link in enumerate(sc["links"]) if i in crossed) * duration
    pkts += sum(f["initial_window_pkts"] + duration for f in flows)
    n = len(flows)
    return pkts * (PACKET_S_PER_PACKET_HOP + PACKET_S_PER_PACKET_HOP_UNCACHED * n / (n + PACKET_CACHE_CONNECTIONS))


_ESTIMATES = {"fluid": _estimate_fluid, "packet": _estimate_packet}


def core_engines() -> list[Engine]:
    """The core's engines, as its registry lists them (`_core.engines()`)."""
    return [Engine(name=e["name"], about=e["about"], capabilities=e["capabilities"], run=_engine_run, check=_engine_check,
                   estimate=_ESTIMATES.get(e["name"], _estimate_packet))
            for e in json.loads(_core.engines())]
