"""The ns-3 engine: the scenario's dumbbell in ns-3 (the `ns3` wheel, 3.44), as a packet-level
yardstick for the packet and fluid engines.

`run_ns3(scenario) -> Result` translates a resolved scenario into the parameters of one C++
program (`ns3/dumbbell.cc`, compiled once per source, ns-3 version and compiler into
`~/.cache/lossync/ns3/<hash>/`, or under $LOSSYNC_CACHE_DIR), runs it, and computes the same
summary as the packet engine from its drop log, samples and totals. `run_ns3_with_stats` also
returns what the run cost (wall time, ns-3 events, data packets sent).

What is modelled (the packet engine's dumbbell, docs/packet.md):
- One bottleneck of capacity C; per flow a sender node on an access link of 10 C whose
  propagation delay makes the empty-network RTT equal the flow's `rtt` (one access and one
  bottleneck serialization of a data packet and of a 52-byte ACK included). One receiver node
  right behind the bottleneck, with a receiving socket per flow. ACKs return over the reverse
  directions of the same links, which never queue noticeably (ACKs are 52-72 bytes).
- IP packets of `packet_size` bytes: segment size = packet_size - 52 (IPv4 20, TCP 20,
  timestamps 12), 1448 for 1500. Point-to-point devices add 2 bytes of PPP header, so device
  rates are scaled by (packet_size + 2)/packet_size: a packet takes exactly packet_size*8/C.
- Exactly B = round(buffer) packets at the bottleneck, the one being serialized included (the
  packet engine's definition). Drop-tail: no queue disc and a device queue of B - 1 (a full,
  stopped device queue makes the traffic-control layer drop the arrival). An AQM: its ns-3 queue
  disc of B - 2 packets plus a device queue of 1. (The notes' FifoQueueDisc of B - 1 plus a
  device queue of 1 holds B + 1 with the packet on the wire.) Every other device has no queue
  disc and a queue no run fills; drops anywhere else are counted (Ns3Stats.other_drops, 0 in
  every run so far).
- Queue disciplines (`queue.discipline` -> ns-3 queue disc, parameters -> attributes):
  red -> RedQueueDisc (min_th/max_th lowered by 2: RED sees only the queue disc; max_p ->
  LInterm = 1/max_p, weight -> QW, gentle, ecn -> UseEcn with UseHardDrop = false, so marks
  replace drops above max_th too, as the packet engine's RED); codel -> CoDelQueueDisc (target,
  interval, ecn; MinBytes = one packet); pie -> PieQueueDisc (target -> QueueDelayReference,
  t_update -> Tupdate, alpha -> A, beta -> B, max_burst -> MaxBurstAllowance, ecn -> UseEcn,
  mark_ecnth -> MarkEcnThreshold; UseDequeueRateEstimator = false: the queue delay from
  timestamps; ns-3's defaults for the rest: cap-drop adjustment on, no derandomization);
  fq_codel -> FqCoDelQueueDisc (flows -> Flows, quantum -> SetQuantum, target, interval, ecn ->
  UseEcn; DropBatchSize = 1: one packet of the fattest queue per overflowing arrival, RFC 8290's
  rule and the packet engine's, where ns-3 and Linux drop a batch of up to 64). A parameter of these with no ns-3
  counterpart is refused naming it; step (DCTCP's marking at K) -> RedQueueDisc on the
  instantaneous queue (QW = 1, MinTh = MaxTh = K - 1, not gentle: every arrival finding more
  than K is marked, or dropped without ECN; K >= 3); other disciplines (xcp, dualpi2, ...) are refused
  naming `links[0].queue` (ns-3 3.44 has no such queue disc).
- Drops, marks and sojourns at the bottleneck: the queue disc's drop reasons sort its drops into
  early (RED's unforced and forced drops, CoDel's target-exceeded, PIE's unforced) and overflow
  (the queue limit: RED's internal-queue drop, CoDel's and FQ-CoDel's overlimit, PIE's forced
  drop; drop-tail's are all overflow); marks are the queue disc's CE marks (per flow too). A data
  packet's sojourn runs from its arrival at the bottleneck (queue disc, or device queue with
  drop-tail) to the start of its transmission, as the packet engine's, so it includes the wait
  in the one-packet device queue (ns-3's CoDel and PIE see only their own queue's, up to one
  packet time less); the histogram is the core's (`sojourn_bins`, metrics/sojourn.rs).
- TCP: SACK on, timestamps and window scaling on (ns-3 defaults), an ACK per segment
  (DelAckCount = 1) or the scenario's `delayed_ack` (DelAckCount, DelAckTimeout; ns-3 sets them
  for every socket, so all flow groups must agree), initial window from the scenario, RTO = SRTT + max(200 ms, 4 RTTVAR) as in
  Linux and the packet engine (ClockGranularity = MinRto = 200 ms), send buffer large enough
  never to limit the window, receive buffer never limiting (no `rwnd` support: refused).
- `slow_start = false` is translated, not ignored: the initial ssthresh is the initial window,
  so the flow is in congestion avoidance from its first ACK (after a timeout it slow-starts, as
  in the packet engine). With slow start on, ssthresh starts unlimited (or at
  `initial_ssthresh_pkts`).
- Pacing (`pacing`): ns-3's Linux-style pacing (TcpSocketState EnablePacing, PacingSsRatio and
  PacingCaRatio as percentages), rate = ratio x max(cwnd, bytes in flight) / srtt; the slow-start
  ratio applies while cwnd < ssthresh/2 (Linux's rule), the initial window is not paced.
- Persistent bulk flows: each flow's socket is created with its own congestion-control object
  (variant and parameters), connects at the flow's start time and keeps its send buffer full
  (BulkSendApplication's loop, written in the program so the socket can be configured first).
  Its receiver is its own listening socket with the same congestion-control type (ns-3's DCTCP
  receiver echoes CE through it) and ECN setting.
- ECN: a flow group's `ecn` sets the sockets' UseEcn (On: ECT(0) data, RFC 3168 echo and one
  reduction per window, CWR, no cwnd growth in CA_CWR: the packet engine's rule too); dctcp
  always runs with ECN in ns-3, so `ecn = false` is refused.
- DCTCP with `delayed_ack` (DelAckCount >= 2): ns-3 3.44's receiver loses about half the CE
  echoes. TcpDctcp::CeState0to1/CeState1to0 (tcp-dctcp.cc) run from TcpSocketBase::ForwardUp
  before the segment enters the receive buffer, so m_priorRcvNxt is rcv_nxt before the previous
  segment and the ACK forced at a CE-state change leaves that segment out: its ECE lands on a
  duplicate ACK, which ReceivedAck ignores (ECE counts only where ackNumber > oldHeadSequence),
  or on the unmarked segment before the CE one, and the CE segment is acknowledged without ECE.
  Measured (RED-ECN, DCTCP, 0.5 BDP, DelAckCount 2): 8326 CE marks, 8233 ECE ACKs of which 4019
  acknowledge nothing new; TcpDctcp counts 0.0249 of bytes marked against 0.0500. With an ACK
  per segment (the default here) its count is exact (0.0272 and 0.0272). No attribute changes
  this; the packet engine's receiver counts CE per ACK (exact either way).
- Variants: reno -> TcpLinuxReno (+1 segment per cwnd acked segments, cwnd/2 on loss; TcpNewReno
  grows by MSS^2/cwnd per ACK and halves bytes in flight), highspeed -> TcpHighSpeed, scalable ->
  TcpScalable (AIFactor = 1/a, MDFactor = b), cubic -> TcpCubic (C, Beta, FastConvergence,
  TcpFriendliness; HyStart off unless the group asks `hystart = "linux"`; its Reno-friendly
  slope stays 3(1 - beta)/(1 + beta), so `alpha_switch = true`, the default, runs with a warning), htcp -> TcpHtcp (DeltaL;
  adaptive_backoff = false -> ThroughputRatio = -1), bic -> TcpBic (all six parameters; ns-3's
  SmoothPart default is 5, Linux's and ours 20), dctcp -> TcpDctcp (g -> DctcpShiftG, the gain
  itself; alpha_init -> DctcpAlphaOnInit; ECT(0)), bbr -> TcpBbr (v1: high_gain -> HighGain,
  bw_window_rounds -> BwWindowLength, min_rtt_window -> RttWindowLength, probe_rtt_time ->
  ProbeRttDuration; drain_gain only 1/high_gain; pacing on, BBR sets the rate), prague refused
  (ns-3 3.44 has no Prague). A parameter ns-3 has no knob for accepts only
  its default value; anything else is refused with ScenarioError naming the field, as are more
  than one link, a modelled reverse direction (two-way traffic), `parallel` connections, random
  loss (`loss_rate`), `rwnd`, and buffers under 2 packets (3 with an AQM). `access_capacity` sets
  the flow's access link.
- `wall_limit_s` (benchmarks) and `timeout_s` (`--timeout`): the program stops itself, cleanly,
  at the first simulated millisecond after that much wall time, and the result covers the time
  simulated, marked partial; one that does not stop is killed (process.py). With a progress bar
  the program says how far it got on stderr every half second of wall time.
- Measurements as in the packet engine: utilization = departures / (capacity x measured time),
  goodput from in-order deliveries, Jain, loss, the queue's exact time average (the program
  integrates the occupancy at every arrival and departure; samples are only for the series),
  congestion events = clusters of drops with gaps under the mean base RTT, the sync histogram
  and rate over flows started, statistics from the warm-up or, with `from_first_congestion`,
  from the first drop after it. `flow_updates` = events ns-3's scheduler processed. The
  scenario's `loss` model does not apply (drops are real), as in the packet engine.

Known differences from the packet engine (they explain most gaps in docs/validation.md):
- Connection set-up: data starts one RTT after `start` (SYN, SYN-ACK).
- Loss recovery: ns-3 uses PRR (RFC 6937), spreading the reduction over the recovery RTT; ours
  sets cwnd at once and sends by RFC 6675's pipe. HighSpeed, Scalable and H-TCP (TcpNewReno
  subclasses) compute ssthresh from bytes in flight, which SACK has already lowered; Reno and
  CUBIC from cwnd.
- HighSpeed: Linux's integer a(w)/b(w) table, not RFC 3649's continuous formula.
- Scalable: ns-3 grows like Reno below 1/a = 100 segments (ours below low_window = 16), so
  flows with fair shares of ~60-250 segments grow faster in ns-3.
- H-TCP: ns-3 adds MSS^2/cwnd + alpha *bytes* per ACK (alpha segments per RTT intended: about
  W/MSS as much, a tenth for W = 140 segments); no RTT scaling (ours scales alpha by
  RTT_min/100 ms in [0.1, 2], the default rtt_scaling = true); beta = RTT_min/RTT_max, not
  clamped to [0.5, 0.8], only when the throughput between losses rose (by less than 100%, an
  integer division), otherwise 0.5 (Linux: 0.5 when it moved by more than 20% either way).
- CUBIC: ns-3's integer cnt-based growth (Linux's), HyStart off unless `hystart = "linux"`.
- RED: ns-3's is ns-2's, with count-based spacing and `Wait` (its default, kept: no early
  drop or mark until count x p_b >= 1, then p_b/(2 - count x p_b)), so drops or marks come about
  every 1.5/p_b arrivals; the packet engine drops or marks each arrival independently with p_b.
  Senders barely notice: their signal rate is set by their windows (RED-ECN with Reno or CUBIC
  agrees once the packet engine reduces once per window; DCTCP once it holds its window through
  CWR as ns-3 does: 0.027 vs 0.029 marks per packet at 10 flows, 100 Mb/s, 0.5 BDP, where it
  was 0.051 before).
- CoDel, PIE: ns-3 measures the sojourn in its own queue disc, without the one-packet device
  queue behind it (at most one packet time less than the sojourn reported here).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import _core
from ...errors import LossyncError, ScenarioError
from ...lazy import numpy as np
from ...lazy import pandas as pd
from ...progress import Deadline, RunTimeout, stopped_warning
from ...results import Result
from ...scenario import Prepared, ScenarioLike, prepare
from ..dumbbell import CUBIC_ALPHA_WARNING, DUMBBELL_ONLY, cubic_alpha_switch, refuse_beyond_a_dumbbell, resolved_of
from ..records import DropLog, FlowCounts, LinkCounts, RunRecords, Samples, summarize
from ..registry import Engine
from .build import build_program, ns3_root
from .process import run_program

#: IPv4 (20) + TCP (20) + timestamp option (10, padded to 12): IP packets are packet_size bytes.
HEADER_BYTES = 52
MAX_FLOWS = 60000  # one receiver port per flow

# Variant -> (ns-3 TypeId, {our parameter: translate}, fixed attributes). translate(value, default,
# field) returns a list of (ns-3 attribute, value as text) or raises ScenarioError naming the field.
# A parameter ns-3 has no knob for accepts only its default, which the core gives
# (`_core.variant_defaults`); the differences are listed in the module docstring.
Translate = Callable[[Any, Any, str], list[tuple[str, str]]]


def _fixed(v: Any, default: Any, field: str) -> list[tuple[str, str]]:
    if v != default:
        raise ScenarioError(field, f"{v!r} cannot be translated to ns-3 (only the default {default!r} is supported by the ns3 engine)")
    return []


def _any(v: Any, default: Any, field: str) -> list[tuple[str, str]]:
    return []


def _attr(name: str, kind: str = "float") -> Translate:
    def tr(v: Any, default: Any, field: str) -> list[tuple[str, str]]:
        if kind == "bool":
            return [(name, "true" if v else "false")]
        if kind == "uint":
            if float(v) != round(float(v)) or v < 0:
                raise ScenarioError(field, f"{v!r} cannot be translated to ns-3 (needs a whole number)")
            return [(name, str(int(round(v))))]
        if kind == "time":
            return [(name, f"{float(v)!r}s")]
        return [(name, repr(float(v)))]

    return tr


def _hystart(f: dict, field: str) -> list[tuple[str, str]]:
    """A flow group's `hystart = "linux"`: ns-3's TcpCubic HyStart, set to Linux 6.1's constants
    (both detectors, low window 16, 8 samples, ACK gap 2 ms, delay threshold min/8 within
    4–16 ms; ns-3's own ceiling is 1 s). ns-3 has no HyStart++ and no HyStart outside TcpCubic."""
    if f["hystart"] != "linux":
        raise ScenarioError(f"{field}.hystart", f"ns-3 has no {f['hystart']!r} slow-start exit (its TcpCubic has Linux's: hystart = \"linux\")")
    if f["variant"] != "cubic":
        raise ScenarioError(f"{field}.hystart", "ns-3 runs HyStart in TcpCubic only")
    return [("HyStart", "true"), ("HyStartLowWindow", "16"), ("HyStartMinSamples", "8"),
            ("HyStartAckDelta", "0.002s"), ("HyStartDelayMin", "0.004s"), ("HyStartDelayMax", "0.016s")]


def _scalable_a(v: Any, default: Any, field: str) -> list[tuple[str, str]]:
    # ns-3 adds one segment per min(cwnd, AIFactor) acked segments: a = 1/AIFactor per ACK.
    k = round(1.0 / float(v))
    if k < 1 or abs(k * float(v) - 1.0) > 1e-9:
        raise ScenarioError(field, f"{v!r} cannot be translated to ns-3 (TcpScalable needs a = 1/k for a whole k)")
    return [("AIFactor", str(k))]


def _htcp_adaptive(v: Any, default: Any, field: str) -> list[tuple[str, str]]:
    # ns-3 always adapts β unless the throughput test can never pass.
    return [] if v else [("ThroughputRatio", "-1")]


VARIANTS: dict[str, tuple[str, dict[str, Translate], list[tuple[str, str]]]] = {
    # TcpLinuxReno counts acked segments in congestion avoidance (+1 segment per cwnd acked)
    # and halves cwnd (TcpNewReno adds MSS²/cwnd per ACK and halves bytes in flight).
    "reno": ("ns3::TcpLinuxReno", {"a": _fixed, "b": _fixed}, []),
    "highspeed": ("ns3::TcpHighSpeed", {"low_window": _fixed, "high_window": _fixed, "high_p": _fixed, "high_decrease": _fixed}, []),
    "scalable": ("ns3::TcpScalable", {"a": _scalable_a, "b": _attr("MDFactor"), "low_window": _fixed}, []),
    "cubic": ("ns3::TcpCubic", {
        "c": _attr("C"), "beta": _attr("Beta"), "fast_convergence": _attr("FastConvergence", "bool"),
        "reno_friendly": _attr("TcpFriendliness", "bool"),
        "alpha_switch": _any,  # TcpCubic has no slope switch: run as its own, with a warning (run)
    }, [("HyStart", "false")]),  # the scenario's `hystart` switches it on (_hystart)
    "htcp": ("ns3::TcpHtcp", {"delta_l": _attr("DeltaL", "time"), "adaptive_backoff": _htcp_adaptive, "rtt_scaling": _fixed}, []),
    "bic": ("ns3::TcpBic", {
        "search_divisor": _attr("BinarySearchCoefficient", "uint"), "s_max": _attr("MaxIncr", "uint"),
        "low_window": _attr("LowWnd", "uint"), "beta": _attr("Beta"),
        "smooth_part": _attr("SmoothPart", "uint"), "fast_convergence": _attr("FastConvergence", "bool"),
    }, []),
}



def _dctcp_g(v: Any, default: Any, field: str) -> list[tuple[str, str]]:
    return [("DctcpShiftG", repr(float(v)))]


def _bbr_drain(v: Any, default: Any, field: str) -> list[tuple[str, str]]:
    return []  # checked against high_gain in _variant_attrs: ns-3 drains at 1/HighGain


VARIANTS.update({
    # ns-3's TcpDctcp: α ← (1 − g)·α + g·F per window (DctcpShiftG is g itself, not Linux's
    # shift), α starts at DctcpAlphaOnInit; it turns ECN on (ECT(0)) and answers a loss as Reno.
    "dctcp": ("ns3::TcpDctcp", {"g": _dctcp_g, "alpha_init": _attr("DctcpAlphaOnInit")}, [("UseEct0", "true")]),
    # ns-3's TcpBbr (v1): gains and filters it has knobs for; the rest are fixed in ns-3 at
    # Linux's values, so only those are accepted.
    "bbr": ("ns3::TcpBbr", {
        "high_gain": _attr("HighGain"), "drain_gain": _bbr_drain, "cwnd_gain": _fixed, "probe_gain": _fixed,
        "bw_window_rounds": _attr("BwWindowLength", "uint"), "min_rtt_window": _attr("RttWindowLength", "time"),
        "probe_rtt_time": _attr("ProbeRttDuration", "time"), "min_cwnd": _fixed, "full_bw_growth": _fixed,
        "full_bw_rounds": _fixed, "pacing_margin": _fixed,
    }, []),
})
#: Variants ns-3 3.44 does not have, and why (refused naming `flows[g].cc`).
NO_VARIANT = {
    "prague": "ns-3 3.44 has no TCP Prague (L4S)",
    "bbr3": "ns-3 3.44 has BBR v1 only (TcpBbr; cc = \"bbr\")",
    "ghstcp": "ns-3 has no counterpart",
    "xcp": "ns-3 has no XCP",
}

# Queue disciplines -> ns-3 queue discs on the bottleneck. Each gets a queue disc of B - 2 packets
# (with the device queue of 1 and the packet on the wire: B). The drop reasons ns-3 reports
# (QueueDisc::DropBeforeEnqueue/DropAfterDequeue; a child queue disc's carry a prefix) are
# sorted into the AQM's early drops and the overflow of a full queue; any other is an error.
CHILD_PREFIX = ("(Dropped by child queue disc) ", "(Marked by child queue disc) ")
FULL = "Dropped by internal queue"  # any queue disc whose internal queue refuses the arrival
DROP_REASONS: dict[str, dict[str, str]] = {
    "droptail": {"Device queue full": "overflow"},
    # RED: below max_th "Unforced drop", above it (or above 2 max_th, gentle) "Forced drop"; both
    # are RED's decision with room left (the packet engine's early drops); a full queue is its
    # internal queue's drop.
    "red": {"Unforced drop": "early", "Forced drop": "early", FULL: "overflow"},
    "step": {"Forced drop": "early", FULL: "overflow"},
    "codel": {"Target exceeded drop": "early", "Overlimit drop": "overflow", FULL: "overflow"},
    "pie": {"Unforced drop": "early", "Forced drop": "overflow", FULL: "overflow"},
    "fq_codel": {"Target exceeded drop": "early", "Overlimit drop": "overflow", FULL: "overflow"},
}
#: Disciplines ns-3 3.44 has no queue disc for.
NO_QUEUE_DISC = "ns-3 3.44 has no such queue disc (it runs droptail, red, step, codel, pie, fq_codel here)"


def _secs(v: Any) -> str:
    return f"{float(v)!r}s"


def _flag(v: Any) -> str:
    return "true" if v else "false"


def _queue_disc(link: dict[str, Any], b: int, ps: int) -> tuple[str, list[tuple[str, str]], list[tuple[str, str]]]:
    """(TypeId, its attributes, Config defaults) of the bottleneck's queue disc; ScenarioError
    naming `links[0].queue` for a discipline or parameter ns-3 cannot run."""
    queue = dict(link["queue"])
    name = queue.pop("discipline")
    field = "links[0].queue"
    size = [("MaxSize", f"{b - 2}p")]
    known: dict[str, Callable[[Any], list[tuple[str, str]]]]
    defaults: list[tuple[str, str]] = []
    if name == "red":
        # RED measures the queue disc, which holds the system occupancy minus the packet in
        # service and the one in the device queue: thresholds move down by 2.
        bn_bps = int(np.floor(link["capacity_bps"] * ((ps + 2) / ps) + 0.5))
        type_id = "ns3::RedQueueDisc"
        attrs = size + [("MeanPktSize", str(ps)), ("LinkBandwidth", f"{bn_bps}bps"), ("LinkDelay", "0s"),
                        ("UseHardDrop", "false")]
        known = {
            "min_th": lambda v: [("MinTh", repr(max(0.0, float(v) - 2)))],
            "max_th": lambda v: [("MaxTh", repr(max(1.0, float(v) - 2)))],
            "max_p": lambda v: [("LInterm", repr(1.0 / float(v)))],
            "weight": lambda v: [("QW", repr(float(v)))],
            "gentle": lambda v: [("Gentle", _flag(v))],
            "ecn": lambda v: [("UseEcn", _flag(v))],
        }
    elif name == "step":
        # DCTCP's step marking (mark an arrival that finds more than K packets, the one in service
        # counted) as ns-3's RED on the instantaneous queue: QW = 1, MinTh = MaxTh = K - 1 in
        # queue-disc terms (the device holds one packet more), not gentle, so every arrival at or
        # above it is a forced mark (or drop, without ECN). ns-3's RED acts only when its queue
        # holds more than one packet: K of at least 3.
        k = float(queue.pop("threshold", 0))
        if k < 3 or k != round(k):
            raise ScenarioError(f"{field}.threshold", f"{k!r}: the ns3 engine runs step marking as RED on a whole K of at least 3 packets")
        bn_bps = int(np.floor(link["capacity_bps"] * ((ps + 2) / ps) + 0.5))
        type_id = "ns3::RedQueueDisc"
        attrs = size + [("MeanPktSize", str(ps)), ("LinkBandwidth", f"{bn_bps}bps"), ("LinkDelay", "0s"),
                        ("UseHardDrop", "false"), ("QW", "1.0"), ("MinTh", repr(k - 1)), ("MaxTh", repr(k - 1)),
                        ("Gentle", "false"), ("LInterm", "1.0")]
        known = {"ecn": lambda v: [("UseEcn", _flag(v))]}
    elif name == "codel":
        type_id = "ns3::CoDelQueueDisc"
        # CoDel never drops from a queue of one packet or less (MinBytes: one of ours).
        attrs = size + [("MinBytes", str(ps))]
        known = {
            "target": lambda v: [("Target", _secs(v))],
            "interval": lambda v: [("Interval", _secs(v))],
            "ecn": lambda v: [("UseEcn", _flag(v))],
        }
    elif name == "pie":
        # RFC 8033 as ns-3 has it, the queue delay from timestamps (no departure-rate estimator).
        type_id = "ns3::PieQueueDisc"
        attrs = size + [("MeanPktSize", str(ps)), ("UseDequeueRateEstimator", "false")]
        known = {
            "target": lambda v: [("QueueDelayReference", _secs(v))],
            "t_update": lambda v: [("Tupdate", _secs(v))],
            "alpha": lambda v: [("A", repr(float(v)))],
            "beta": lambda v: [("B", repr(float(v)))],
            "max_burst": lambda v: [("MaxBurstAllowance", _secs(v))],
            "ecn": lambda v: [("UseEcn", _flag(v))],
            "mark_ecnth": lambda v: [("MarkEcnThreshold", repr(float(v)))],
        }
    elif name == "fq_codel":
        type_id = "ns3::FqCoDelQueueDisc"
        # The per-flow CoDel queue discs it creates take MinBytes from the defaults. Overflow
        # drops one packet from the fattest queue per overflowing arrival (RFC 8290 §4.1.3, as
        # the packet engine; ns-3 and Linux default to a batch of up to 64).
        attrs = size + [("DropBatchSize", "1")]
        defaults = [("ns3::CoDelQueueDisc::MinBytes", str(ps))]
        known = {
            "flows": lambda v: [("Flows", str(int(v)))],
            "quantum": lambda v: [("@quantum", str(int(v)))],
            "target": lambda v: [("Target", _secs(v))],
            "interval": lambda v: [("Interval", _secs(v))],
            "ecn": lambda v: [("UseEcn", _flag(v))],
        }
    else:
        raise ScenarioError(field, f"{name!r}: {NO_QUEUE_DISC}")
    for k, v in queue.items():
        if k not in known:
            raise ScenarioError(f"{field}.{k}", f"{name} parameter with no ns-3 counterpart")
        attrs += known[k](v)
    return type_id, attrs, defaults


@dataclass
class Ns3Stats:
    """What a run cost: wall time of the simulation (compilation excluded), events the ns-3
    scheduler processed, data segments sent (retransmissions included), drops outside the
    bottleneck (should be 0) and the largest packet seen at the bottleneck, on the wire; sim_s:
    how far the run got (short of the duration when a wall-time limit stopped it)."""

    wall_s: float
    sim_s: float
    events: int
    data_packets_sent: int
    other_drops: int
    max_wire_bytes: int


# ---------------------------------------------------------------------------------------------
# ---------------------------------------------------------------------------------------------
# Translating a scenario


def _resolve(scenario: ScenarioLike, overrides: list[str] | tuple[str, ...], base_dir: str | Path | None) -> dict[str, Any]:
    """The scenario resolved for this engine (`engine = "ns3"`), not the file's (the fluid engine
    by default, which has no codel and no ECN)."""
    return prepare(scenario, overrides, base_dir, engine="ns3").resolved


def translate(scenario: Prepared | dict[str, Any], initial_ssthresh_pkts: float | None = None, wall_limit_s: float | None = None) -> str:
    """The program's parameter file for a prepared (or resolved) scenario; ScenarioError names
    any field the ns3 engine cannot translate."""
    link = refuse_beyond_a_dumbbell(scenario, "ns3")
    sc = resolved_of(scenario)
    if sc["run"].get("aggregate_interval_s", 0) > 0:
        raise ScenarioError("run.aggregate_interval", "the ns3 engine does not sample the aggregate cwnd/RTT; use --engine packet or fluid")
    if link["loss_rate"] > 0:
        raise ScenarioError("links[0].loss_rate", "the ns3 engine does not model random loss")
    ps = int(round(link["packet_size_bytes"]))
    if ps != link["packet_size_bytes"] or ps - HEADER_BYTES < 64:
        raise ScenarioError("links[0].packet_size", f"the ns3 engine needs a whole number of bytes, at least {HEADER_BYTES + 64}")
    mss = ps - HEADER_BYTES
    b = _core.whole_buffer_pkts(link["buffer_pkts"])  # as every packet-level engine rounds it
    discipline = link["queue"]["discipline"]
    aqm = discipline != "droptail"
    if aqm:
        qd_type, qd_attrs, qd_defaults = _queue_disc(link, b, ps)
    if b < (3 if aqm else 2):
        raise ScenarioError("links[0].buffer", f"the ns3 engine needs at least {3 if aqm else 2} packets with {discipline} (one is always in service)")
    flows = sc["flows"]
    if len(flows) > MAX_FLOWS:
        raise ScenarioError("flows", f"the ns3 engine runs at most {MAX_FLOWS} flows")
    cap_pps = link["capacity_bps"] / (8.0 * ps)
    max_rtt = max(f["rtt_s"] for f in flows)
    lines = [
        f"capacity_bps {link['capacity_bps']!r}",
        f"packet_size {ps}",
        f"mss {mss}",
        f"buffer_pkts {b}",
        f"queue {'qdisc' if aqm else 'droptail'}",
    ]
    if aqm:
        lines.append(f"qdisc_type {qd_type}")
        lines += [f"qdisc_attr {k} {v}" for k, v in qd_attrs]
        lines += [f"default {k} {v}" for k, v in qd_defaults]
    run = sc["run"]
    delack = {json.dumps(f.get("delayed_ack"), sort_keys=True) for f in flows}
    if len(delack) > 1:
        raise ScenarioError("flows", "the ns3 engine needs the same delayed_ack for every flow group (ns-3 sets it globally here)")
    delack_count, delack_timeout = 1, 0.2
    if flows[0].get("delayed_ack"):
        delack_count, delack_timeout = flows[0]["delayed_ack"]["count"], flows[0]["delayed_ack"]["timeout_s"]
    # Send buffers hold any window the run can reach (a slow-start overshoot is below twice the
    # pipe plus the buffer); receive buffers never limit (window scaling caps them at 2^30).
    iw_max = max(f["initial_window_pkts"] for f in flows)
    snd_pkts = 2.0 * (cap_pps * max_rtt + b) + 2 * iw_max + 64
    snd = int(min(snd_pkts * mss, 2**31 - 1))
    lines += [
        f"duration {run['duration_s']!r}",
        f"warmup {run['warmup_s']!r}",
        f"from_first_congestion {1 if run['from_first_congestion'] else 0}",
        f"record_interval {run['record_interval_s']!r}",
        f"seed {int(run['seed']) % (2**32 - 1) or 1}",
        f"sndbuf_bytes {snd}",
        f"rcvbuf_bytes {min(snd, 2**30 - 1)}",
        f"ack_bytes {HEADER_BYTES}",
        f"delack_count {delack_count}",
        f"delack_timeout {delack_timeout!r}",
        f"wall_limit {float(wall_limit_s or 0)!r}",
    ]
    for i, f in enumerate(flows):
        field = f"flows[{f['group']}]"
        if f["logical"] != i:
            raise ScenarioError(f"{field}.parallel", "the ns3 engine runs no parallel connections in this version")
        if f["rwnd_pkts"] is not None:
            raise ScenarioError(f"{field}.rwnd", "the ns3 engine does not model receive-window caps")
        if f["variant"] in NO_VARIANT:
            raise ScenarioError(f"{field}.cc", f"variant {f['variant']!r}: {NO_VARIANT[f['variant']]}")
        if f["variant"] not in VARIANTS:
            raise ScenarioError(f"{field}.cc", f"variant {f['variant']!r} has no ns-3 counterpart (known: {', '.join(VARIANTS)})")
        ecn = bool(f.get("ecn"))
        if f["variant"] == "dctcp" and not ecn:
            raise ScenarioError(f"{field}.ecn", "ns-3's TcpDctcp always negotiates ECN: dctcp needs ecn = true in the ns3 engine")
        type_id, table, extra = VARIANTS[f["variant"]]
        attrs: list[tuple[str, str]] = []
        defaults = json.loads(_core.variant_defaults(f["variant"]))
        given = {**defaults, **(f.get("params") or {})}
        for name in given:
            if name not in table:
                raise ScenarioError(f"{field}.cc.{name}", "no ns-3 counterpart")
        for name, tr in table.items():
            attrs += tr(given[name], defaults[name], f"{field}.cc.{name}")
        if f["variant"] == "bbr" and abs(given["drain_gain"] * given["high_gain"] - 1.0) > 1e-9:
            raise ScenarioError(f"{field}.cc.drain_gain", "ns-3's TcpBbr drains at 1/high_gain: only that value is supported by the ns3 engine")
        if f.get("undo"):
            raise ScenarioError(f"{field}.undo", "ns-3 3.44 does not undo spurious timeouts (no Eifel or F-RTO response)")
        if f.get("loss_detection", "dupthresh") != "dupthresh":
            raise ScenarioError(f"{field}.loss_detection", "ns-3 3.44 finds losses by the duplicate-ACK threshold only (no RACK or TLP)")
        attrs += _hystart(f, field) if f.get("hystart", "off") != "off" else extra
        attrs.insert(0, ("@ecn", "On" if ecn else "Off"))
        iw = f["initial_window_pkts"]
        if iw != round(iw) or iw < 1:
            raise ScenarioError(f"{field}.initial_window", "the ns3 engine needs a whole number of packets")
        if not f["slow_start"]:
            # Congestion avoidance from the initial window: ssthresh = the initial window.
            ssthresh = iw
        elif initial_ssthresh_pkts is not None:
            ssthresh = max(float(initial_ssthresh_pkts), 2.0)
        else:
            ssthresh = 0.0  # unlimited
        pacing = f.get("pacing")
        pace = "0 200 120"
        if f["variant"] == "bbr":
            pace = "1 200 120"  # BBR sets its own pacing rate (ns-3 needs pacing on for it)
        elif pacing:
            pct = {k: float(pacing[k]) * 100 for k in ("ss_ratio", "ca_ratio")}
            for k, v in pct.items():
                if abs(v - round(v)) > 1e-6 or not 1 <= round(v) <= 65535:
                    raise ScenarioError(f"{field}.pacing.{k}", f"{pacing[k]!r} cannot be translated to ns-3 (a whole percentage)")
            pace = f"1 {round(pct['ss_ratio'])} {round(pct['ca_ratio'])}"
        if f.get("send_jitter_s"):
            raise ScenarioError(f"{field}.send_jitter", "the ns3 engine does not model a per-packet send delay; use --engine packet")
        if f.get("access_capacity_bps"):
            attrs.insert(0, ("@access_bps", repr(float(f["access_capacity_bps"]))))
        attr_text = " ".join(f"{k}={v}" for k, v in attrs)
        lines.append(f"flow {type_id} {f['rtt_s']!r} {f['start_s']!r} {int(iw)} {ssthresh!r} {pace} {attr_text}".rstrip())
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Running and measuring


def _read_totals(path: Path) -> tuple[dict[str, float], np.ndarray, list[tuple[str, int, int, str]]]:
    """The program's totals: scalars, per-flow rows (end, then measurement start) and the queue
    disc's drop and mark reasons as (kind, count at the end, count at the start, reason)."""
    scalars: dict[str, float] = {}
    flows = []
    reasons = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "flow":
            flows.append([float(x) for x in parts[2:]])
        elif parts[0] == "reason":
            kind, end, start, why = line.split(maxsplit=4)[1:]
            reasons.append((kind, int(end), int(start), why))
        else:
            scalars[parts[0]] = float(parts[1])
    return scalars, np.array(flows, dtype=float).reshape(len(flows), 12), reasons


# The core's sojourn histogram (crates/lossync-core/src/metrics/sojourn.rs): exact below 32 ps,
# then 16 bins per octave (the value's top five bits).
SOJOURN_EXACT = 32
SOJOURN_SUB = 16


def sojourn_bins(ps: np.ndarray) -> np.ndarray:
    """`bin_of` of metrics/sojourn.rs for an array of sojourns in picoseconds (int64, >= 0)."""
    ps = np.asarray(ps, dtype=np.int64)
    out = ps.copy()
    big = ps >= SOJOURN_EXACT
    v = ps[big].astype(np.uint64)
    e = np.zeros(len(v), dtype=np.int64)
    w = v.copy()
    while True:  # e = floor(log2(v)), exactly (no floating point)
        more = w > 1
        if not more.any():
            break
        e += more
        w = np.where(more, w >> np.uint64(1), w)
    sub = (v >> (e - 4).astype(np.uint64)) & np.uint64(SOJOURN_SUB - 1)
    out[big] = SOJOURN_EXACT + (e - 5) * SOJOURN_SUB + sub.astype(np.int64)
    return out


def sojourn_histogram(ps: np.ndarray) -> dict[str, Any]:
    """The JSON form of the core's SojournHistogram for sojourns in picoseconds."""
    ps = np.maximum(np.asarray(ps, dtype=np.int64), 0)
    idx, counts = np.unique(sojourn_bins(ps), return_counts=True)
    return {"count": int(len(ps)), "sum_ps": int(ps.sum(dtype=np.int64)) if len(ps) else 0,
            "bins": [[int(i), int(c)] for i, c in zip(idx, counts)]}


def _split_drops(discipline: str, reasons: list[tuple[str, int, int, str]]) -> tuple[int, int, int]:
    """(early drops, overflow drops, marks) over the measurement window from the queue disc's
    reasons; LossyncError on a drop reason the discipline should not give."""
    table = DROP_REASONS[discipline]
    early = overflow = marks = 0
    for kind, end, start, why in reasons:
        n = end - start
        if kind == "mark":
            marks += n
            continue
        base = why
        for prefix in CHILD_PREFIX:
            base = base.removeprefix(prefix)
        if base not in table:
            raise LossyncError(f"engine ns3: {discipline} dropped packets for a reason this engine does not know: {why!r}")
        if table[base] == "early":
            early += n
        else:
            overflow += n
    return early, overflow, marks


def run_ns3_with_stats(
    scenario: ScenarioLike | Prepared,
    overrides: list[str] | tuple[str, ...] = (),
    base_dir: str | Path | None = None,
    *,
    initial_ssthresh_pkts: float | None = None,
    timeout_s: float | None = None,
    wall_limit_s: float | None = None,
    progress: bool | None = False,
) -> tuple[Result, Ns3Stats]:
    """`run_ns3`, and what the run cost (Ns3Stats). wall_limit_s: stop the simulation (cleanly,
    at its next simulated millisecond) after this much wall time of simulation; timeout_s: the
    same, counting from this call (compilation included). A run stopped short is marked
    partial, with a warning saying how far it got."""
    deadline = Deadline(timeout_s)
    p = prepare(scenario, overrides, base_dir, engine="ns3")
    sc = p.resolved
    translate(p, initial_ssthresh_pkts)  # refusals before the compilation
    exe = build_program()
    left = deadline.remaining_s()
    if left is not None and left <= 0:
        raise RunTimeout(f"timeout: the {timeout_s:g} s wall-time limit ran out while ns-3's program was compiled; nothing was simulated")
    limits = [x for x in (left, wall_limit_s) if x is not None]
    limit = min(limits) if limits else None
    params = translate(p, initial_ssthresh_pkts, limit)
    with tempfile.TemporaryDirectory(prefix="lossync-ns3-") as tmp:
        out = Path(tmp)
        wall = run_program(exe, params, out, sc["run"]["duration_s"], limit, progress)
        scalars, fl, reasons = _read_totals(out / "totals.txt")
        sojourn = np.fromfile(out / "sojourn.bin", dtype="<i8")
        drops_file = out / "drops.txt"
        if drops_file.stat().st_size > 0:
            d = pd.read_csv(drops_file, sep=" ", header=None, names=["time_s", "flow"], dtype={"time_s": "f8", "flow": "u4"})
            drops = DropLog(d["time_s"].to_numpy(), d["flow"].to_numpy())
        else:
            drops = DropLog.empty()
        raw = pd.read_csv(out / "series.txt", sep=" ", header=None, dtype="f8")
    result = _measure(p, scalars, fl, drops, raw, reasons, sojourn)
    if cubic_alpha_switch(sc["flows"]):
        result.summary["warnings"].append(CUBIC_ALPHA_WARNING.format(engine="ns3 engine", cubic="ns-3's TcpCubic", cubic_short="ns-3"))
    end, duration = float(scalars["end_s"]), sc["run"]["duration_s"]
    if end < duration - 1e-9:
        result.summary["partial"] = True
        result.summary["warnings"].append(stopped_warning(end, duration, wall, sc["run"]["warmup_s"]))
    stats = Ns3Stats(
        wall_s=wall, sim_s=end, events=int(scalars["events"]), data_packets_sent=int(fl[:, 1].sum()),
        other_drops=int(scalars["other_drops"]), max_wire_bytes=int(scalars["max_wire_bytes"]),
    )
    return result, stats


def run_ns3(
    scenario: ScenarioLike | Prepared,
    overrides: list[str] | tuple[str, ...] = (),
    base_dir: str | Path | None = None,
    *,
    initial_ssthresh_pkts: float | None = None,
    timeout_s: float | None = None,
    progress: bool | None = False,
) -> Result:
    """Runs a scenario (a TOML file name or a dict) in ns-3 and returns its Result, with the
    same summary, series, events and drops as the packet engine (`engine` = "ns3").

    initial_ssthresh_pkts: with slow start on, the initial slow-start threshold in packets
        (default: unlimited, as in the scenario); capping it near the fair share avoids the
        slow-start overshoot that makes ns-3 slow at high speed.
    timeout_s: stop after this much wall time; the result covers the time simulated, marked
        partial.
    progress: a bar of the simulated time (None: where someone watches, `progress.watched`).
    """
    return run_ns3_with_stats(scenario, overrides, base_dir, initial_ssthresh_pkts=initial_ssthresh_pkts, timeout_s=timeout_s,
                              progress=progress)[0]


def _measure(
    p: Prepared, s: dict[str, float], fl: np.ndarray, drops: DropLog, raw: pd.DataFrame, reasons: list[tuple[str, int, int, str]],
    sojourn: np.ndarray,
) -> Result:
    """The run's records (counters at the window's start and at the end, samples, the drop
    log) as the window's counts, handed to the core's metrics (records.summarize)."""
    sc = p.resolved
    link_spec = sc["links"][0]
    n = len(sc["flows"])
    mss = link_spec["packet_size_bytes"] - HEADER_BYTES
    end, start = s["end_s"], s["measured_from_s"]
    early, overflow, marks = _split_drops(link_spec["queue"]["discipline"], reasons)
    # Arrivals: those the bottleneck accepted and those it refused (a drop after acceptance, by
    # CoDel at dequeue or FQ-CoDel's fat-flow rule, is counted once, as accepted).
    link = LinkCounts(
        buffer_pkts=_core.whole_buffer_pkts(link_spec["buffer_pkts"]),
        arrived_pkts=(s["accepted"] + s["dropped_before"]) - (s["start_accepted"] + s["start_dropped_before"]),
        departed_pkts=s["departed"] - s["start_departed"],
        dropped_pkts=s["dropped"] - s["start_dropped"],
        queue_integral=s["queue_area"] - s["start_queue_area"],
        queue_integral_span=end - start,
        max_queue_pkts=s["queue_max"],
        # The window's accounting: the queue at its start is what was accepted and not yet sent.
        departures_pkts=s["departed"] - s["start_departed"],
        queue_start_pkts=s["start_accepted"] - s["start_departed"] - (s["start_dropped"] - s["start_dropped_before"]),
        queue_end_pkts=s["queue_end"],
        dropped_early_pkts=early,
        dropped_overflow_pkts=overflow,
        marked_pkts=marks,
        sojourn=sojourn_histogram(sojourn),
    )
    flows = []
    for i in range(n):
        rx, sent, dr, red, area, mk, rx0, sent0, dr0, red0, area0, mk0 = fl[i]
        flows.append(FlowCounts(sent_pkts=sent - sent0, delivered_pkts=(rx - rx0) / mss, dropped_pkts=dr - dr0,
                                cwnd_integral_pkt_s=(area - area0) / mss, reductions=float(red - red0), marked_pkts=mk - mk0))
    records = RunRecords(engine="ns3", duration_s=end, measured_from_s=start, span_s=end - start, flow_updates=int(s["events"]),
                         links=[link], flows=flows)
    # Samples: time, queue, departed (cumulative), then per flow cwnd bytes, delivered bytes.
    a = raw.to_numpy()
    samples = Samples(time_s=a[:, 0], queue_pkts=a[:, 1], link_sent_pkts=Samples.per_interval(a[:, 2]))
    for i in range(n):
        samples.add_flow(a[:, 3 + 2 * i] / mss, Samples.per_interval(a[:, 4 + 2 * i]) / mss)
    return summarize(p, records, samples, drops)


__all__ = ["Ns3Stats", "build_program", "run_ns3", "run_ns3_with_stats", "translate"]


def _engine_check(p: Prepared, force: bool) -> None:
    """What `run_ns3` refuses before running: a field it cannot translate, then a missing extra."""
    translate(p)
    ns3_root()


def _engine_run(p: Prepared, progress, force, timeout_s=None) -> Result:
    return run_ns3(p, timeout_s=timeout_s, progress=progress)


#: ns-3's speed through a dumbbell, data packets per wall second (docs/validation/bench.txt): 23,000
#: at 100 Mb/s; at 1 and 10 Gb/s with slow start, 183 and 1,549 (its SACK scoreboard after the
#: slow-start overshoot). Rough either way: the bar's live figure is ns-3's own.
NS3_PKTS_PER_S, NS3_OVERSHOOT_PKTS_PER_S = 2.0e4, 1.0e3


def _estimate(sc: dict[str, Any]) -> float:
    link = sc["links"][0]
    overshoot = link["capacity_bps"] >= 1e9 and any(f["slow_start"] for f in sc["flows"])
    return link["capacity_pps"] * sc["run"]["duration_s"] / (NS3_OVERSHOOT_PKTS_PER_S if overshoot else NS3_PKTS_PER_S)


ENGINE = Engine(
    name="ns3", about="ns-3's TCP on the scenario's dumbbell (pip install 'lossync[ns3]')",
    # pie and fq_codel: translated as soon as the core resolves them (same JSON shape).
    capabilities={**DUMBBELL_ONLY, "queues": ["droptail", "red", "step", "codel", "pie", "fq_codel"], "ecn": True},
    run=_engine_run, check=_engine_check, estimate=_estimate,
)
