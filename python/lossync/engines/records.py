"""The records an engine outside the core (ns-3, the kernel) hands to the metrics module, typed.

Each class mirrors one of crates/lossync-core/src/metrics/records.rs (`LinkRecord`,
`FlowRecord`, `Records`) field for field, and the core refuses a field it does not know, so a
driver that misnames a count fails at once. Everything here is a count or an integral over the
measurement window, never a ratio: `summarize` hands them to `_core.summarize`, the code that
turns the fluid and packet engines' records into rates, windows and ratios too.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .. import _core
from ..errors import LossyncError
from ..lazy import numpy as np
from ..results import Result
from ..scenario import Prepared


def _check_counts(obj: Any, where: str) -> None:
    """Every number of a record is a finite count at or above zero: a driver's estimate that is
    not (a counter that wrapped, a sample missed) is its defect, said here, not a wrong rate later."""
    for f in fields(obj):
        v = getattr(obj, f.name)
        if isinstance(v, (int, float, np.number)) and not isinstance(v, bool) and not (math.isfinite(v) and v >= 0):
            raise LossyncError(f"{where}.{f.name}: {v} is not a count (the engine's driver measured it wrongly; please report it)")


@dataclass
class LinkCounts:
    """A link over the measurement window (`LinkRecord`): data packets that arrived, left
    (`departed_pkts` the data sent, `departures_pkts` the packets that left the queue, each
    whole) and were dropped; ∫ queue dt over the window and its length (in one time unit);
    the largest queue; the queue at the window's start and end; of the drops, the discipline's
    early and overflow ones; CE marks; the sojourn histogram (`sojourn_histogram`)."""

    buffer_pkts: float
    arrived_pkts: float
    departed_pkts: float
    dropped_pkts: float
    queue_integral: float
    queue_integral_span: float
    max_queue_pkts: float
    departures_pkts: float
    queue_start_pkts: float
    queue_end_pkts: float
    dropped_early_pkts: float = 0.0
    dropped_overflow_pkts: float = 0.0
    marked_pkts: float = 0.0
    sojourn: dict[str, Any] | None = None


@dataclass
class FlowCounts:
    """A connection over the measurement window (`FlowRecord`): data packets sent, delivered
    (each once) and dropped, ∫ cwnd dt in packet·seconds, window reductions, CE-marked arrivals, retransmission timeouts."""

    sent_pkts: float
    delivered_pkts: float
    dropped_pkts: float
    cwnd_integral_pkt_s: float
    reductions: float
    marked_pkts: float = 0.0
    timeouts: float | None = None  # retransmission timeouts; None: the engine does not count them


@dataclass
class Samples:
    """The sampled series, in `Series::standard`'s order: per sample its time and the queue, and
    for the interval it closes the data packets the link sent; per flow its window and the
    packets it delivered in that interval (`add_flow`). Counts per interval, never rates: the
    metrics module divides them by the interval and the capacity."""

    time_s: np.ndarray
    queue_pkts: np.ndarray
    link_sent_pkts: np.ndarray
    flows: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)

    @staticmethod
    def per_interval(cumulative: np.ndarray) -> np.ndarray:
        """A cumulative counter's growth over the interval each sample closes (NaN for the first,
        whose interval the counter did not see begin)."""
        return np.diff(np.asarray(cumulative, dtype=np.float64), prepend=np.nan)

    def add_flow(self, cwnd_pkts: np.ndarray, delivered_pkts: np.ndarray) -> None:
        self.flows.append((cwnd_pkts, delivered_pkts))

    def columns(self) -> list[np.ndarray]:
        cols = [self.time_s, self.queue_pkts, self.link_sent_pkts]
        for cwnd, delivered in self.flows:
            cols += [cwnd, delivered]
        n = len(self.time_s)
        if any(len(c) != n for c in cols):
            raise LossyncError("engine records: the sampled series differ in length (the driver's defect; please report it)")
        return [np.ascontiguousarray(c, dtype=np.float64) for c in cols]


@dataclass
class DropLog:
    """The drops of the scenario's first link: times in seconds and flow indices, in time order
    (the core groups them into congestion events by the rule every engine shares)."""

    time_s: np.ndarray
    flow: np.ndarray

    @staticmethod
    def empty() -> DropLog:
        return DropLog(np.array([], dtype=np.float64), np.array([], dtype=np.uint32))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return (np.ascontiguousarray(self.time_s, dtype=np.float64), np.ascontiguousarray(self.flow, dtype=np.uint32))


@dataclass
class RunRecords:
    """A finished run (`Records`): the simulated time at its end, the measurement window's start
    and length, the work done (events processed), per link and per connection its counts, and what
    the engine knows may make its numbers wrong."""

    engine: str
    duration_s: float
    measured_from_s: float
    span_s: float
    flow_updates: int
    links: list[LinkCounts]
    flows: list[FlowCounts]
    warnings: list[str] = field(default_factory=list)

    def check(self) -> None:
        _check_counts(self, f"engine {self.engine}: records")
        for i, link in enumerate(self.links):
            _check_counts(link, f"engine {self.engine}: records.links[{i}]")
        for i, flow in enumerate(self.flows):
            _check_counts(flow, f"engine {self.engine}: records.flows[{i}]")


def packet_time_s(link: dict[str, Any]) -> float:
    """One packet's transmission time on a resolved link: the time step a packet-level engine
    reports (`Records.step_s`), a property of the scenario, not a measurement."""
    return 8.0 * link["packet_size_bytes"] / link["capacity_bps"]


def summarize(p: Prepared, records: RunRecords, samples: Samples, drops: DropLog) -> Result:
    """The run's Result: its records checked and handed to the core's metrics, the same code that
    summarizes the fluid and packet engines' runs."""
    records.check()
    resolved = p.resolved
    doc = {**asdict(records), "step_s": packet_time_s(resolved["links"][0])}
    times, flows = drops.arrays()
    finished = _core.summarize(p.core, json.dumps(doc), samples.columns(), times, flows)
    return Result.from_core(finished, dict(resolved, engine=records.engine), (times, flows), core=p.core)
